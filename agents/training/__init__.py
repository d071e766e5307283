"""Self-play training for every model family (AlphaZero's ResNet, Dotsformer).

``config`` (nested, frozen settings), ``samples`` (columnar samples), ``selfplay`` (games and the worker
pool), ``replay`` (buffer, weighting, batches), ``losses``, ``curriculum`` (backward training),
``evaluation`` (exact-label accuracy, games against opponents passed in), ``store`` (the run folder,
committed one iteration at a time), ``plots`` and ``loop`` (the iteration loop)."""
