"""Training settings: one frozen dataclass per job, nested in :class:`TrainConfig`.

    cfg = make_train_config("dotsformer", preset="cpu", board="3x3", **{"search.simulations": 64})
    cfg.model        # the model family's config (board, encoder, value unit, architecture)
    cfg.search       # self-play search: agents.search.SearchSettings, the defaults of agents.search.settings.SELF_PLAY
    cfg.replay       # buffer window, experience decay, augmentation
    cfg.loss         # loss weights (Dotsformer Appendix B.1)
    cfg.curriculum   # backward training: start step, rollback rule, extra internal-node samples
    cfg.teacher      # teacher samples (dnb teach) mixed into the batches
    cfg.boards       # multi-size training ("2x2:1,3x3:2"; a family that plays any board); "" = cfg.board alone

Defaults are the papers' (Dotsformer Table A1 and A2, BoxesZero Table 2 and A2). Overrides are given by
dotted path (``"search.simulations"``) or, where a name is unique across the sections, by the bare name
(``"simulations"``, ``"width"``). ``to_dict``/``from_dict`` round-trip a config through JSON
(``config.json`` in every run folder). Every setting's meaning is its field's ``help`` (metadata), which
``dnb train --help`` prints (:mod:`agents.training.overrides`, which also parses ``--set KEY=VALUE``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

from agents.models import config_from_dict, config_to_dict, family_of, get_family, make_model_config
from agents.search import SearchSettings
from agents.search.settings import SELF_PLAY
from dnb_env.core import geometry
from dnb_env.limits import INT_LIMIT, check_number, check_seed

__all__ = ["ReplayConfig", "LossConfig", "CurriculumConfig", "TeacherMixConfig", "TrainConfig", "PRESETS",
           "make_train_config", "to_dict", "from_dict", "setting_fields", "setting_types", "resolve_key", "RESUMABLE",
           "field_problems", "model_from_dict"]


@dataclass(frozen=True)
class ReplayConfig:
    buffer_iterations: int = field(default=10, metadata={
        "help": "samples of the last N iterations are kept in the replay"})
    gamma_decay: float = field(default=0.9, metadata={
        "help": "Dotsformer's experience decay: a sample is drawn with weight gamma^(iteration - its iteration)"})
    augment: bool = field(default=True, metadata={
        "help": "each drawn batch is mapped by a random symmetry of the board"})

    def __post_init__(self):
        if self.buffer_iterations < 1 or not 0 < self.gamma_decay <= 1:
            raise ValueError("replay: buffer_iterations must be >= 1 and gamma_decay in (0, 1]")


@dataclass(frozen=True)
class LossConfig:
    """``L = CE(pi) + value * MSE(v) + l2 * |theta|^2 + initiative * focal(I) + move_class * CE(cls)``,
    every sample weighted by its experience decay. Table A1 prints the value and initiative weights as
    "11" in our copy and the class weight as 10.0 (its class loss sums over the actions); ours averages
    the class loss over the edge cells, and the defaults are 1.0 for all three."""

    value_weight: float = field(default=1.0, metadata={
        "help": "weight of the value loss (MSE) beside the policy cross-entropy"})
    initiative_weight: float = field(default=1.0, metadata={
        "help": "weight of the initiative loss (focal), for models with aux heads"})
    move_class_weight: float = field(default=1.0, metadata={
        "help": "weight of the move-class loss (cross-entropy over the edge cells), for models with aux heads"})
    future_weight: float = field(default=1.0, metadata={"help": "weight of the future head's loss, for models with it"})
    l2: float = field(default=1e-4, metadata={
        "help": "L2 regularisation (lambda_reg of Dotsformer Table A1), applied as Adam weight decay"})
    focal_gamma: float = field(default=2.0, metadata={
        "help": "focusing exponent gamma of the focal initiative loss: (1 - p)^gamma"})
    focal_alpha: str = field(default="balanced", metadata={
        "help": "class weights of the initiative loss: balanced (inverse class frequency in the batch) or none"})

    def __post_init__(self):
        if min(self.value_weight, self.initiative_weight, self.move_class_weight, self.future_weight, self.l2,
               self.focal_gamma) < 0:
            raise ValueError("loss weights must be >= 0")
        if self.focal_alpha not in ("balanced", "none"):
            raise ValueError(f"focal_alpha must be 'balanced' or 'none', not {self.focal_alpha!r}")


@dataclass(frozen=True)
class CurriculumConfig:
    """Backward training (BoxesZero 4.2; Dotsformer Appendix B.3).

    Moves before the start step S are played by BoxesZero's greedy policy (a uniformly random legal
    move with probability ``opening_random``) and give no samples; MCTS plays from S to the end. S
    starts at ``start_step`` (default: 32 of 60 moves on 5x5, scaled to the board) and moves ``step_size``
    earlier when ``rule`` allows:

    * ``"dotsformer"`` (Table A2): at least ``min_gap`` iterations since the last rollback, and the
      iteration's root accuracy >= ``tau_root`` and step accuracy >= ``tau_step``. A root is the
      first searched position of a game (step S); step positions are those at S + k * ``step_interval``.
      A prediction is correct when the search's Q has the sign of the game's result and |Q| >=
      ``epsilon`` (in the model's value units; with ``value="margin"`` a result of 0 needs |Q| < epsilon).
      ``epsilon=None`` (the default) is 0.7 in win units (Table A2) and half a box in margin units
      (0.5 / boxes): a margin Q is the final box difference over the number of boxes, so a fixed epsilon
      such as 0.1 (2.5 boxes on 5x5) would count every correct call of a narrow win as wrong.
      ``epsilon=0`` is the sign alone (a drawn game then never counts as called right).
    * ``"boxeszero"`` (Table 2): ``mqr >= mqr_threshold`` and ``nvr >= nvr_threshold``, or ``max_gap``
      iterations since the last advance; mqr = share of searched positions with |Q| > ``mq_threshold``,
      nvr = share with |v| >= ``nv_threshold`` and v * Q >= 0 (v = the network's value of the root).
    * ``"none"``: S stays where it starts (``start_step=0``: ordinary AlphaZero self-play).

    Extra samples (BoxesZero 4.3, Dotsformer's N_thresh/Q_thresh): while S > 0 and ``extra_nodes``, every
    internal tree node off the played move with at least ``node_visits`` x simulations visits and
    |Q| >= ``node_q`` becomes a sample (its visit distribution, its Q as the value target).
    ``q_mix``: value target ``(1 - q_mix) z + q_mix Q`` for searched positions (BoxesZero: 0.25 once S = 0).
    """

    rule: str = field(default="dotsformer", metadata={
        "help": "when the start step S moves earlier: dotsformer (accuracy thresholds), boxeszero (mqr/nvr "
                "thresholds) or none (S stays)"})
    start_step: int | None = field(default=None, metadata={
        "help": "first searched move S at the start of training (None: 32 of 60 moves on 5x5, scaled to the "
                "board; 0: ordinary AlphaZero self-play)"})
    step_size: int = field(default=1, metadata={"help": "moves S goes back at each rollback"})
    min_gap: int = field(default=10, metadata={"help": "dotsformer rule: fewest iterations between two rollbacks"})
    epsilon: float | None = field(default=None, metadata={
        "help": "dotsformer rule: a prediction is right when Q has the result's sign and |Q| >= epsilon (None: "
                "0.7 in win units, half a box in margin units)"})
    tau_root: float = field(default=0.7, metadata={"help": "dotsformer rule: root accuracy needed for a rollback"})
    tau_step: float = field(default=0.7, metadata={"help": "dotsformer rule: step accuracy needed for a rollback"})
    step_interval: int = field(default=4, metadata={
        "help": "dotsformer rule: the step positions are those at S + k * step_interval"})
    mq_threshold: float = field(default=0.85, metadata={
        "help": "boxeszero rule: |Q| above which a searched position counts in mqr"})
    nv_threshold: float = field(default=0.75, metadata={
        "help": "boxeszero rule: |v| from which a position counts in nvr (with v * Q >= 0)"})
    mqr_threshold: float = field(default=0.75, metadata={"help": "boxeszero rule: mqr needed for a rollback"})
    nvr_threshold: float = field(default=0.85, metadata={"help": "boxeszero rule: nvr needed for a rollback"})
    max_gap: int = field(default=150, metadata={
        "help": "boxeszero rule: a rollback after this many iterations whatever the ratios"})
    opening_random: float = field(default=0.05, metadata={
        "help": "probability of a random legal move instead of the greedy policy before S"})
    extra_nodes: bool = field(default=True, metadata={
        "help": "while S > 0, well-visited internal tree nodes off the played move become samples too "
                "(BoxesZero 4.3)"})
    node_visits: float = field(default=0.125, metadata={  # 100 of 800 simulations
        "help": "extra samples: fewest visits of a node, as a share of the simulations"})
    node_q: float = field(default=0.8, metadata={"help": "extra samples: smallest |Q| of a node"})
    q_mix: float = field(default=0.0, metadata={
        "help": "value target (1 - q_mix) z + q_mix Q of searched positions (z: the game's result)"})

    def __post_init__(self):
        if self.rule not in ("dotsformer", "boxeszero", "none"):
            raise ValueError(f"curriculum rule must be 'dotsformer', 'boxeszero' or 'none', not {self.rule!r}")
        if self.start_step is not None and self.start_step < 0:
            raise ValueError(f"start_step must be >= 0, not {self.start_step}")
        if self.step_size < 1 or self.min_gap < 0 or self.step_interval < 1 or self.max_gap < 1:
            raise ValueError("step_size, step_interval and max_gap must be >= 1, min_gap >= 0")
        if not 0 <= self.q_mix <= 1 or not 0 <= self.opening_random <= 1:
            raise ValueError("q_mix and opening_random must be in [0, 1]")

    def first_step(self, board: str) -> int:
        """S at the start of training: ``start_step``, or 32/60 of the board's moves (32 on 5x5,
        :attr:`Geometry.start_step`)."""
        if self.start_step is not None:
            return self.start_step
        return geometry(board).start_step

    def epsilon_for(self, value: str, board: str) -> float:
        """``epsilon`` in the units of ``value`` ("win" or "margin") on ``board`` (margin: half a box,
        :attr:`Geometry.margin_epsilon`)."""
        if self.epsilon is not None:
            return self.epsilon
        g = geometry(board)
        return 0.7 if value == "win" else g.margin_epsilon


@dataclass(frozen=True)
class TeacherMixConfig:
    """Teacher samples in self-play training: ``fraction`` of every batch is drawn from the teacher dataset
    ``data`` (a folder of ``dnb teach``, or several joined by commas, e.g. the 26-35 and the 36-38 zones;
    its targets as in :func:`agents.training.teacher.to_samples` at ``temperature``), the rest from the
    replay. With a dataset and no ``curriculum.start_step``, backward training starts where the teacher
    zone ends: S = num_actions - the largest undrawn count of the datasets."""

    data: str = field(default="", metadata={
        "help": "teacher dataset folder (dnb teach) whose samples are mixed into the batches; several folders "
                "joined by commas"})
    fraction: float = field(default=0.0, metadata={
        "help": "share of every batch drawn from the teacher dataset, in [0, 1)"})
    temperature: float = field(default=0.0, metadata={
        "help": "policy target of teacher samples: 0 uniform over the best moves, else a softmax of the move "
                "labels"})

    def __post_init__(self):
        if not 0 <= self.fraction < 1:
            raise ValueError(f"teacher fraction must be in [0, 1), got {self.fraction}")
        if self.temperature < 0:
            raise ValueError(f"teacher temperature must be >= 0, got {self.temperature}")
        if self.fraction > 0 and not self.data:
            raise ValueError("teacher.fraction > 0 needs a teacher dataset (teacher.data)")
        if self.data and not all(self.folders):
            raise ValueError(f"teacher.data {self.data!r} names an empty folder (folders are joined by commas)")

    @property
    def folders(self) -> tuple[str, ...]:
        """The dataset folders of ``data``, in order (none for "")."""
        return tuple(f.strip() for f in self.data.split(",")) if self.data else ()


def _model_default():
    return make_model_config("resnet")


@dataclass(frozen=True)
class TrainConfig:
    """A training run. ``search`` is the self-play search (:class:`agents.search.SearchSettings`, the
    defaults of :data:`agents.search.settings.SELF_PLAY`: Dotsformer Table A1's 800 simulations, c_puct 1.0
    and temperature 0.4; pure AlphaZero: no pruning; root noise, no tree reuse); its value unit is the
    model's (set from ``model.value``), its solver zones ``solve_leaf`` / ``solve_root`` are in undrawn edges,
    -1 = auto (min(36, 60% of the edges) / min(38, two thirds of the edges)), 0 = off, resolved for the board
    by :meth:`mcts`; positions in the root zone are not searched: their label is uniform over the moves of
    best margin. Runs saved before the zones existed load with 0 (off). ``temperature_moves`` is self-play's
    own: searched moves played at ``search.temperature``, the most visited after that."""

    model: object = field(default_factory=_model_default)
    search: SearchSettings = SearchSettings(**SELF_PLAY)
    replay: ReplayConfig = ReplayConfig()
    loss: LossConfig = LossConfig()
    curriculum: CurriculumConfig = CurriculumConfig()
    teacher: TeacherMixConfig = TeacherMixConfig()
    iterations: int = field(default=100, metadata={
        "help": "training iterations (each: self-play games, then epochs over the replay)"})
    games_per_iteration: int = field(default=32, metadata={"help": "self-play games per iteration"})
    temperature_moves: int = field(default=8, metadata={
        "help": "searched moves per game drawn at the temperature; later moves take the most visited child"})
    batch_size: int = field(default=1024, metadata={"help": "samples per gradient step"})  # Table A1
    epochs: int = field(default=5, metadata={"help": "passes over the replay per iteration"})  # Table A1
    lr: float = field(default=1e-3, metadata={"help": "Adam learning rate"})
    lr_halving: int = field(default=0, metadata={  # Table A1's I_decay = 80
        "help": "halve the learning rate every N iterations (0: never)"})
    seed: int = field(default=0, metadata={"help": "seed of the network, the self-play games and the batches"})
    init: str = field(default="", metadata={
        "help": "checkpoint whose weights start a new run (a dnb fit on teacher data, a run's export); its model "
                "config must equal the run's (a family that plays every board: but for its board); empty: random "
                "weights"})
    device: str = field(default="cpu", metadata={"help": "device of the learner: cpu or cuda"})
    workers: int = field(default=1, metadata={
        "help": "self-play processes (or Ray actors with --backend ray), each with its own copy of the network"})
    threads: int = field(default=1, metadata={
        "help": "torch threads of the training process and of every self-play process"})
    backend: str = field(default="local", metadata={
        "help": "where self-play runs: local (processes here) or ray (workers Ray actors)"})
    inference: str = field(default="auto", metadata={
        "help": "local (each self-play process or Ray actor its own network), shared (one inference process, "
                "or Ray actor, batches every self-play process's leaves) or auto (shared when the device is cuda "
                "and self-play runs in workers >= 2 processes or on Ray, else local)"})
    selfplay_cache: str = field(default="exact", metadata={  # agents.search.cache
        "help": "self-play's evaluation cache, one per iteration: off, exact (a position's planes evaluated once) "
                "or canonical (once per symmetry class, evaluated in its canonical image)"})
    selfplay_runtime: str = field(default="auto", metadata={  # NetworkEvaluator
        "help": "what runs self-play's forward passes: auto (nnpack for a resnet on the CPU, else eager), eager, "
                "jit (a frozen TorchScript copy), nnpack (batch norms folded, 3x3 convolutions by NNPACK's "
                "Winograd), int8 (linear layers quantised; changes the outputs) or onnx (ONNX Runtime; pip "
                "install 'dnb-env[onnx]')"})
    eval_every: int = field(default=5, metadata={
        "help": "iterations between evaluations (games against the opponents, search accuracy)"})
    eval_positions: int = field(default=200, metadata={  # 5x5 and larger: the last 34 undrawn edges
        "help": "solver-labelled positions for the accuracy metrics (boards the solver covers)"})
    eval_games: int = field(default=20, metadata={
        "help": "raw-policy games against each evaluation opponent, random and greedy (0: none)"})
    boards: str = field(default="", metadata={  # agents.training.boards
        "help": "multi-size training (a family that plays every board, alphavit): each iteration's games split "
                "over the boards by weight, e.g. 2x2:1,3x3:2,5x5:4; each board its own search settings, start "
                "step and evaluation; empty: --board alone"})

    def __post_init__(self):
        family = family_of(self.model)  # a registered family's config
        object.__setattr__(self, "search", dataclasses.replace(self.search, value=self.model.value))
        self.search.for_board(0)  # validates the solver zones
        if self.boards:
            from agents.training.boards import BoardMix

            BoardMix.parse(self.boards)  # a ValueError naming the bad entry
            if not get_family(family).any_board:
                raise ValueError(f"boards={self.boards!r} needs a model family whose networks play every board "
                                 f"(alphavit); a {family} network is built for one board (use --board)")
            if self.teacher.data:
                raise ValueError("boards (multi-size training) takes no teacher dataset: a teacher dataset is of one "
                                 "board")
        if self.backend not in ("local", "ray"):
            raise ValueError(f"backend must be 'local' or 'ray', not {self.backend!r}")
        if self.inference not in ("local", "shared", "auto"):
            raise ValueError(f"inference must be 'local', 'shared' or 'auto', not {self.inference!r}")
        if self.selfplay_cache not in ("off", "exact", "canonical"):
            raise ValueError(f"selfplay_cache must be 'off', 'exact' or 'canonical', not {self.selfplay_cache!r}")
        from agents.models.evaluator import RUNTIMES

        if self.selfplay_runtime not in RUNTIMES:
            raise ValueError(f"selfplay_runtime must be one of {', '.join(RUNTIMES)}, not {self.selfplay_runtime!r}")
        if not 1 <= self.workers <= MAX_PROCESSES or not 1 <= self.threads <= MAX_PROCESSES:
            raise ValueError(f"workers and threads must be in 1..{MAX_PROCESSES}, not {self.workers} and {self.threads}")
        if self.iterations < 1 or self.games_per_iteration < 1 or self.batch_size < 1 or self.epochs < 1:
            raise ValueError("iterations, games_per_iteration, batch_size and epochs must be >= 1")
        check_number(self.lr, "lr", low=0, open_low=True)
        check_number(self.lr_halving, "lr_halving", low=0)
        if self.eval_every < 1:
            raise ValueError("eval_every must be >= 1")
        check_seed(self.seed)

    @property
    def board(self) -> str:
        return self.model.board

    @property
    def shared_inference(self) -> bool:
        """Whether one inference process (or Ray actor) evaluates every self-play process's leaves: ``inference``
        shared, or auto with the learner on a GPU and self-play in ``workers`` >= 2 processes or on Ray (the
        actors then keep the GPU busy between them; on the CPU each process's own network is as fast)."""
        if self.inference == "auto":
            return self.device.startswith("cuda") and (self.workers > 1 or self.backend == "ray")
        return self.inference == "shared"

    def board_mix(self):
        """The :class:`~agents.training.boards.BoardMix` of ``boards``, or None for a single-board run."""
        from agents.training.boards import BoardMix

        return BoardMix.parse(self.boards) if self.boards else None

    def for_board(self, board: str) -> "TrainConfig":
        """This config for one board of the mix: the model's ``board`` set to it, no ``boards`` (what self-play
        of that board's games reads: the board, its solver zones and curriculum defaults)."""
        return dataclasses.replace(self, model=dataclasses.replace(self.model, board=board), boards="")

    def mcts(self) -> SearchSettings:
        """The self-play search's settings, the auto solver zones resolved for the board."""
        return self.search.for_board(geometry(self.board))

    def lr_at(self, iteration: int) -> float:
        return self.lr * 0.5 ** ((iteration - 1) // self.lr_halving) if self.lr_halving else self.lr


_SECTIONS = {"search": SearchSettings, "replay": ReplayConfig, "loss": LossConfig, "curriculum": CurriculumConfig,
             "teacher": TeacherMixConfig}

# Training presets per model family: (model preset, overrides of the training defaults).
PRESETS = {
    "paper": ("paper", {}),  # Dotsformer Table A1 and A2, pure AlphaZero search
    # small nets and searches for 2 CPU cores: margin values and BoxesZero's pruning make the few
    # simulations count; rollbacks may come every 3 iterations
    "cpu": ("cpu", {"search.simulations": 100, "search.prune": True, "model.value": "margin", "games_per_iteration": 32,
                    "batch_size": 256, "epochs": 4, "iterations": 60, "replay.buffer_iterations": 8,
                    "curriculum.min_gap": 3, "curriculum.node_q": 0.2}),
}


#: Search settings that are no ``search.*`` keys: the value unit is the model's (``model.value``).
_FROM_MODEL = ("value",)

#: Keys of before their rename -> their keys now (``--set`` and the ``config.json`` of older runs).
RENAMED = {"search.batch": "search.batch_size", "search.temperature_moves": "temperature_moves"}


def _section_fields(name: str) -> list[dataclasses.Field]:
    """The settable fields of section ``name``."""
    return [f for f in dataclasses.fields(_SECTIONS[name]) if name != "search" or f.name not in _FROM_MODEL]


def setting_fields() -> dict[str, dataclasses.Field]:
    """Every settable path -> its dataclass field (its ``type``, and its ``help`` in the metadata); the model
    fields, which differ by family, are left out."""
    out = {}
    for f in dataclasses.fields(TrainConfig):
        if f.name == "model":
            continue
        if f.name in _SECTIONS:
            out.update({f"{f.name}.{g.name}": g for g in _section_fields(f.name)})
        else:
            out[f.name] = f
    return out


def setting_types() -> dict[str, type]:
    """Every settable path -> its type (model fields for the default family are under ``model.``)."""
    return {key: f.type for key, f in setting_fields().items()}


def resolve_key(key: str, model_fields: set[str]) -> str:
    """A dotted path for ``key`` (a path already, or a bare name unique across sections; a key of
    :data:`RENAMED` is its new one)."""
    key = RENAMED.get(key, key)
    paths = list(setting_types()) + [f"model.{n}" for n in model_fields]
    if key in paths:
        return key
    matches = [p for p in paths if p.rsplit(".", 1)[-1] == key]
    matches += [new for old, new in RENAMED.items() if old.rsplit(".", 1)[-1] == key and new not in matches]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValueError(f"training option {key!r} is ambiguous: say {' or '.join(matches)}")
    raise ValueError(f"unknown training option {key!r}; options: {', '.join(sorted(paths))}")


def make_train_config(model: str = "resnet", preset: str = "cpu", **overrides) -> TrainConfig:
    """``model``'s family with training ``preset`` and ``overrides`` (dotted paths or unique bare names;
    ``board=`` and ``encoder=`` go to the model). Unknown names raise ``ValueError``."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
    model_preset, base = PRESETS[preset]
    fam = get_family(model)
    model_fields = {f.name for f in dataclasses.fields(fam.config)}
    settings = dict(base)
    for key, value in overrides.items():
        if value is not None:
            settings[resolve_key(key, model_fields)] = value
    model_kw = {k[6:]: v for k, v in settings.items() if k.startswith("model.")}
    model_kw = {k: v for k, v in model_kw.items() if k in model_fields}  # preset keys other families lack
    model_cfg = make_model_config(model, preset=model_preset if model_preset in fam.presets else None, **model_kw)
    return _assemble(model_cfg, settings)


def _assemble(model_cfg, settings: dict) -> TrainConfig:
    sections = {name: {} for name in _SECTIONS}
    top = {}
    for key, value in settings.items():
        head, _, tail = key.partition(".")
        if head == "model":
            continue
        if tail:
            sections[head][tail] = value
        else:
            top[key] = value
    search = SearchSettings(**{**SELF_PLAY, **sections.pop("search")})
    return TrainConfig(model=model_cfg, search=search, **{n: _SECTIONS[n](**kw) for n, kw in sections.items()}, **top)


def to_dict(config: TrainConfig) -> dict:
    out = {"model": config_to_dict(config.model)}
    for f in dataclasses.fields(TrainConfig):
        if f.name != "model":
            value = getattr(config, f.name)
            out[f.name] = {g.name: getattr(value, g.name) for g in _section_fields(f.name)} if f.name in _SECTIONS \
                else value
    return out


# options whose default changed behaviour when they were added: a saved config without them keeps the old one
LEGACY_DEFAULTS = {"search.solve_leaf": 0, "search.solve_root": 0, "selfplay_cache": "off", "selfplay_runtime": "eager"}


#: The most worker processes (and threads each) a run takes (``dnb train`` caps them by the machine's CPUs).
MAX_PROCESSES = 1024


def _type_problem(kind: str, value) -> str | None:
    """Why ``value`` is not of the annotated type ``kind`` (``"int"``, ``"float"``, ``"bool"``, ``"str"``,
    ``"str | None"``), or None; a value of any other annotation is not checked."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "int" and not (isinstance(value, int) and not isinstance(value, bool)):
        return "not an integer"
    if kind == "float" and not number:
        return "not a number"
    if kind in ("int", "float") and isinstance(value, int) and abs(value) >= INT_LIMIT:
        return "out of range"
    if kind == "float" and isinstance(value, float) and not math.isfinite(value):
        return "not a finite number"
    if kind == "bool" and not isinstance(value, bool):
        return "not true or false"
    if kind == "str" and not isinstance(value, str):
        return "not a string"
    if kind == "str | None" and not (value is None or isinstance(value, str)):
        return "not a string or null"
    return None


def field_problems(cls, values: dict, prefix: str = "") -> list[str]:
    """What is wrong with the types of ``values`` (saved fields of the dataclass ``cls``, by name), one
    ``"PREFIXname is VALUE: not an integer"`` each: numbers must be finite and within 64 bits, true/false
    and strings what they say. Names ``cls`` lacks are left to its constructor."""
    kinds = {f.name: f.type for f in dataclasses.fields(cls)}
    problems = []
    for name, value in values.items():
        why = _type_problem(str(kinds.get(name)), value)
        if why is not None:
            problems.append(f"{prefix}{name} is {_shown(value)}: {why}")
    return problems


def _shown(value) -> str:
    """``value`` as an error message shows it (a long one cut short)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def model_from_dict(data) -> object:
    """A saved model section (:func:`agents.models.config_to_dict`) as its family's config, the type of
    every field checked first (:func:`field_problems`); a ValueError says what is wrong."""
    if not isinstance(data, dict) or not isinstance(data.get("family"), str):
        raise ValueError(f"the model section is {_shown(data)}, not a model config with its family")
    fields = {k: v for k, v in data.items() if k != "family"}
    problems = field_problems(get_family(data["family"]).config, fields, "model.")
    if problems:
        raise ValueError("; ".join(problems))
    return config_from_dict(data)


def from_dict(data: dict) -> TrainConfig:
    """Inverse of :func:`to_dict` (fields added since the file was written take their defaults, or the
    behaviour of before they existed where :data:`LEGACY_DEFAULTS` says so). The type of every setting is
    checked (:func:`field_problems`): a ValueError names each one that is wrong."""
    if not isinstance(data, dict) or "model" not in data:
        raise ValueError("a training config needs its 'model' section")
    settings = {}
    for key, value in data.items():
        if key == "model":
            continue
        if key in _SECTIONS:
            if not isinstance(value, dict):
                raise ValueError(f"training config section {key!r} must be a mapping")
            settings.update({RENAMED.get(f"{key}.{k}", f"{key}.{k}"): v for k, v in value.items()})
        else:
            settings[key] = value
    for key, value in LEGACY_DEFAULTS.items():
        settings.setdefault(key, value)
    known = set(setting_types())
    unknown = sorted(set(settings) - known)
    if unknown:
        raise ValueError(f"unknown training options {unknown}")
    types = setting_types()
    problems = [f"{key} is {_shown(value)}: {why}" for key, value in settings.items()
                if (why := _type_problem(str(types[key]), value)) is not None]
    if problems:
        raise ValueError("; ".join(problems))
    return _assemble(model_from_dict(data["model"]), settings)


# settings a resumed run may change: extend or anneal it, move it to another machine, evaluate differently,
# schedule its data (games per iteration, gradient passes, batch size) and the rollback rule's epsilon; every
# metrics row records the lr, games, epochs, batch_size and epsilon it ran with, so the run stays reproducible
RESUMABLE = ("iterations", "init", "lr", "lr_halving", "workers", "threads", "backend", "inference", "selfplay_cache",
             "selfplay_runtime", "device", "eval_every",
             "eval_games", "eval_positions", "games_per_iteration", "epochs", "batch_size", "curriculum.epsilon")
