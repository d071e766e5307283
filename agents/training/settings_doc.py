"""What each training setting means: the one description of every ``--set`` key of ``dnb train`` (and of
the ``model.*`` / ``loss.*`` keys of ``dnb fit``), shown by ``dnb train --help`` beside its type and its
defaults under the ``cpu`` and ``paper`` presets (:func:`agents.training.config.settings_help`).

The keys are the dotted paths of :class:`agents.training.config.TrainConfig` (``search.simulations``,
``epochs``) and ``model.FIELD`` for the fields of the model families' configs (shared fields such as
``model.encoder`` have one description for every family). A setting added without a description here fails
``tests/test_cli.py``.
"""

from __future__ import annotations

import textwrap

__all__ = ["DESCRIPTIONS", "describe"]

DESCRIPTIONS: dict[str, str] = {
    # search.*: the self-play search (agents.search.SearchSettings under agents.search.settings.SELF_PLAY)
    "search.simulations": "search simulations per move (leaf evaluations or exact leaves)",
    "search.c_puct": "exploration weight of PUCT selection",
    "search.temperature": "searched moves are drawn from N^(1/T) over the root visits N",
    "search.temperature_moves": "searched moves per game drawn at the temperature; later moves take the most "
                                "visited child",
    "search.dirichlet_alpha": "alpha of the Dirichlet noise on the root priors",
    "search.dirichlet_epsilon": "weight of the Dirichlet noise in the root priors",
    "search.batch": "leaves per network call per game (kept apart by virtual loss)",
    "search.prune": "BoxesZero's pruning: exact simple-endgame leaves, forced captures in opened chains",
    "search.solve_leaf": "leaves with at most this many undrawn edges get the exact solver's value (-1 auto, "
                         "0 off; needs the C++ extension)",
    "search.solve_root": "positions with at most this many undrawn edges are not searched: their policy is "
                         "uniform over the moves of best margin (-1 auto, 0 off)",
    "search.solve_nodes": "solver node budget per leaf",
    # replay.*
    "replay.buffer_iterations": "samples of the last N iterations are kept in the replay",
    "replay.gamma_decay": "Dotsformer's experience decay: a sample is drawn with weight "
                          "gamma^(iteration - its iteration)",
    "replay.augment": "each drawn batch is mapped by a random symmetry of the board",
    # loss.*
    "loss.value_weight": "weight of the value loss (MSE) beside the policy cross-entropy",
    "loss.initiative_weight": "weight of the initiative loss (focal), for models with aux heads",
    "loss.move_class_weight": "weight of the move-class loss (cross-entropy over the edge cells), for models "
                              "with aux heads",
    "loss.future_weight": "weight of the future head's loss, for models with it",
    "loss.l2": "L2 regularisation (lambda_reg of Dotsformer Table A1), applied as Adam weight decay",
    "loss.focal_gamma": "focusing exponent gamma of the focal initiative loss: (1 - p)^gamma",
    "loss.focal_alpha": "class weights of the initiative loss: balanced (inverse class frequency in the batch) "
                        "or none",
    # curriculum.*: backward training (BoxesZero 4.2, Dotsformer Appendix B.3)
    "curriculum.rule": "when the start step S moves earlier: dotsformer (accuracy thresholds), boxeszero "
                       "(mqr/nvr thresholds) or none (S stays)",
    "curriculum.start_step": "first searched move S at the start of training (None: 32 of 60 moves on 5x5, "
                             "scaled to the board; 0: ordinary AlphaZero self-play)",
    "curriculum.step_size": "moves S goes back at each rollback",
    "curriculum.min_gap": "dotsformer rule: fewest iterations between two rollbacks",
    "curriculum.epsilon": "dotsformer rule: a prediction is right when Q has the result's sign and |Q| >= epsilon "
                          "(None: 0.7 in win units, half a box in margin units)",
    "curriculum.tau_root": "dotsformer rule: root accuracy needed for a rollback",
    "curriculum.tau_step": "dotsformer rule: step accuracy needed for a rollback",
    "curriculum.step_interval": "dotsformer rule: the step positions are those at S + k * step_interval",
    "curriculum.mq_threshold": "boxeszero rule: |Q| above which a searched position counts in mqr",
    "curriculum.nv_threshold": "boxeszero rule: |v| from which a position counts in nvr (with v * Q >= 0)",
    "curriculum.mqr_threshold": "boxeszero rule: mqr needed for a rollback",
    "curriculum.nvr_threshold": "boxeszero rule: nvr needed for a rollback",
    "curriculum.max_gap": "boxeszero rule: a rollback after this many iterations whatever the ratios",
    "curriculum.opening_random": "probability of a random legal move instead of the greedy policy before S",
    "curriculum.extra_nodes": "while S > 0, well-visited internal tree nodes off the played move become samples "
                              "too (BoxesZero 4.3)",
    "curriculum.node_visits": "extra samples: fewest visits of a node, as a share of the simulations",
    "curriculum.node_q": "extra samples: smallest |Q| of a node",
    "curriculum.q_mix": "value target (1 - q_mix) z + q_mix Q of searched positions (z: the game's result)",
    # teacher.*: teacher samples (dnb teach) in the batches
    "teacher.data": "teacher dataset folder (dnb teach) whose samples are mixed into the batches; several "
                    "folders joined by commas",
    "teacher.fraction": "share of every batch drawn from the teacher dataset, in [0, 1)",
    "teacher.temperature": "policy target of teacher samples: 0 uniform over the best moves, else a softmax of "
                           "the move labels",
    # the run
    "iterations": "training iterations (each: self-play games, then epochs over the replay)",
    "games_per_iteration": "self-play games per iteration",
    "batch_size": "samples per gradient step",
    "epochs": "passes over the replay per iteration",
    "lr": "Adam learning rate",
    "lr_halving": "halve the learning rate every N iterations (0: never)",
    "seed": "seed of the network, the self-play games and the batches",
    "init": "checkpoint whose weights start a new run (a dnb fit on teacher data, a run's export); its model "
            "config must equal the run's (a family that plays every board: but for its board); empty: random weights",
    "boards": "multi-size training (a family that plays every board, alphavit): each iteration's games split "
              "over the boards by weight, e.g. 2x2:1,3x3:2,5x5:4; each board its own search settings, start step "
              "and evaluation; empty: --board alone",
    "device": "device of the learner: cpu or cuda",
    "workers": "self-play processes (or Ray actors with --backend ray), each with its own copy of the network",
    "threads": "torch threads of the training process and of every self-play process",
    "backend": "where self-play runs: local (processes here) or ray (workers Ray actors)",
    "inference": "local (each self-play process or Ray actor its own network) or shared (one inference process, "
                 "or Ray actor, batches every self-play process's leaves)",
    "selfplay_cache": "self-play's evaluation cache, one per iteration: off, exact (a position's planes evaluated "
                      "once) or canonical (once per symmetry class, evaluated in its canonical image)",
    "selfplay_runtime": "what runs self-play's forward passes: auto (nnpack for a resnet on the CPU, else eager), "
                        "eager, jit (a frozen TorchScript copy), nnpack "
                        "(batch norms folded, 3x3 convolutions by NNPACK's Winograd), int8 (linear layers "
                        "quantised; changes the outputs) or onnx (ONNX Runtime; pip install 'dnb-env[onnx]')",
    "eval_every": "iterations between evaluations (games against the opponents, search accuracy)",
    "eval_positions": "solver-labelled positions for the accuracy metrics (boards the solver covers)",
    "eval_games": "raw-policy games against each evaluation opponent, random and greedy (0: none)",
    # model.*: the fields of the model families' configs
    "model.encoder": "input encoder (dnb_env.observations), e.g. alphazero4, chainloop6",
    "model.value": "unit of the value head: win (results +1/-1/0) or margin (final box margin / boxes)",
    "model.aux_heads": "the initiative and move-class heads (Dotsformer 4.3)",
    "model.paper_heads": "Dotsformer Table 3's policy and value heads (resnet: instead of the AlphaZero heads, "
                         "needs a grid encoder; dotsformer: always)",
    "model.future_head": "the head of an auxiliary target per move (model.future_target)",
    "model.future_target": "what the future head learns: safe_phase (each move's safe-phase value) or nimstring "
                           "(whether each move wins Nimstring, that is gets control)",
    "model.blocks": "residual blocks of the tower",
    "model.width": "channels of the tower",
    "model.value_hidden": "hidden units of the AlphaZero value head",
    "model.dim": "embedding width D (a multiple of heads; dotsformer: also of the qkv kernel count)",
    "model.heads": "attention heads per transformer block",
    "model.order": "block order: TR (T R R repeated), RT (R R T), TT (transformers only) or baseline "
                   "(residual blocks only)",
    "model.layers": "blocks of the trunk (dotsformer: a multiple of the order's unit; alphavit: encoder layers, "
                    "None: 4 for vit, 1 for vid and vda)",
    "model.qkv": "Q, K, V projections: multiscale4 (kernels 1, 3, 5, 7), multiscale2 (1, 3) or linear",
    "model.topo_bias": "the topological attention bias (the four edges of a box are strongly related)",
    "model.rel_pos_bias": "Swin Transformer's relative position bias",
    "model.mlp_ratio": "hidden width of the transformer MLP, as a multiple of dim",
    "model.variant": "alphavit: vit (encoder, a policy logit per edge token), vid (+ a decoder over the encoder's "
                     "outputs) or vda (+ a decoder over learnable action embeddings)",
    "model.patch": "alphavit: kernel of the patch-embedding convolution (odd; stride 1, one token per grid cell)",
    "model.pos_embedding": "alphavit: learned (a table resized to each board's grid) or sincos (fixed 2D "
                           "sine-cosine of the grid coordinates)",
    "model.pos_size": "alphavit: side of the learned position table (11: the 5x5 grid)",
    "model.pos_interp": "alphavit: how the learned position table is resized to the board: bilinear or bicubic",
    "model.decoder_dim": "alphavit vid/vda: embedding width of the decoder",
    "model.decoder_heads": "alphavit vid/vda: attention heads per decoder layer",
    "model.decoder_layers": "alphavit vid/vda: transformer decoder layers",
    "model.decoder_input": "alphavit vid: decoder inputs resized from the encoder's outputs to the action count "
                           "(resize) or taken at the edge cells (edges)",
    "model.action_embeddings": "alphavit vda: learnable action embeddings, resized to the action count",
    "model.dropout": "alphavit: dropout in the transformer layers",
}


def describe(key: str, indent: str = "    ", width: int = 100) -> str:
    """The description of ``key`` wrapped to ``width`` columns, each line after ``indent``; ``""`` for a key
    without one (e.g. a field of a model family registered at run time)."""
    text = DESCRIPTIONS.get(key)
    if not text:
        return ""
    return "\n".join(textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent))
