"""Tournaments: any agents, alternating first player, shared random openings, resumable results, Elo.

```python
from agents.arena import TournamentConfig
from registry.tournaments import run_tournament     # the arena's run_tournament with the registry's names
cfg = TournamentConfig(board="5x5", agents=("random", "greedy", "alphabeta:depth=3"), games=100,
                       openings=10, opening_mode="guided", workers=2, seed=0)
report = run_tournament(cfg, out="results/5x5")     # prints the table; writes JSONL, CSV, PNG
```

One module per job:

=====================  ==================================================================================
:mod:`.play`           openings (:func:`make_opening`), one game (:func:`play_game`), the games of a run
                       (``GamePlayer``: one agent per entry, reseeded per game)
:mod:`.schedule`       :class:`TournamentConfig` and its limits, the games and their seeds
:mod:`.runners`        where games run: this process, spawned processes, Ray tasks
:mod:`.results`        ``results.jsonl`` (append, resume, validation, read-only reading), ``config.json``,
                       the folder lock
:mod:`.ratings`        Wilson intervals, Bradley-Terry Elo with bootstrap intervals, :class:`TournamentReport`
:mod:`.output`         the printed table, ``pairs.csv``, ``elo.csv``, ``tournament.png``
:mod:`.tournament`     the driver: :func:`run_tournament`, :func:`gauntlet`
=====================  ==================================================================================

* Agents are ``(label, factory)`` pairs where ``factory()`` returns an Agent (an SB3 model wrapped by
  :class:`agents.base.SB3Agent`, say; with ``workers > 1`` it must be picklable), or spec strings
  ``name[:key=value,...]`` built inside each worker by the ``build(spec, board, seed) -> Agent`` the caller
  passes (a module-level function, so that it pickles). The arena knows no names: the registry's
  :func:`registry.tournaments.run_tournament` checks the specs and passes
  :func:`registry.specs.agent_from_spec`, so any registered agent, OpenSpiel's MCTSBot as
  ``openspiel_mcts`` included, runs in parallel. It passes :func:`registry.specs.describe_spec` too: a
  spec's label in the table, the records, the CSV files and the plot (an engine's ``name=``; else the
  spec) and its identity on resume (the spec without options that do not change play, an engine's
  ``log=``). Two agents with one label are refused. Before any game each spec is built once and an agent
  with ``check_board`` may refuse the board (an engine that declares other boards).
* Each pair plays ``games`` games. Game g uses opening ``g // 2`` and the first seat alternates, so both
  colour assignments see the same opening (Dotsformer Appendix C): the first ``openings`` moves are random,
  "pure" (any legal move) or "guided" (safe moves only while there are any).
* Every finished game is appended to ``results.jsonl`` as one line, flushed and fsynced; a killed run
  resumes with the games it has and plays only the missing ones. A line that is not a game of this
  tournament (a torn last line, bad JSON, a record of the wrong shape) is moved to ``results.jsonl.rejected``
  with a warning; every valid game is kept. The config is saved beside the results (``config.json``) and a
  resume with a different config is refused (``workers``, ``threads`` and ``bootstrap`` may change). An
  ``out`` that cannot be written is an error before any game is played.
* With ``workers > 1`` the games run in spawned processes whose numpy/BLAS and torch use ``threads`` threads
  each (set in their environment before numpy loads there). With one worker the games run in the calling
  process with torch (and any library loaded during the run) at ``threads`` threads, restored after.
* ``backend="ray"``: every game is a Ray task (``threads`` CPUs each, retried by Ray if its worker dies) on
  the cluster at ``ray_address`` (``auto``: the one this machine joined) or, without an address, on a local
  Ray instance of ``workers`` CPUs started for the run. The driver appends each finished game to the same
  ``results.jsonl``, so the results file, standings and resume are those of the local pool, and the same
  seeds give the same games (each game's opening and agent seeds depend only on its id). ``backend`` and
  ``ray_address`` may change on resume. Needs ``pip install 'dnb-env[ray]'``; an address that does not answer
  or a task larger than the cluster is an error before any game is played or file written.
* Every move is timed (``move_s`` in each record, each player's total ``think_s``, ``moves_by`` and
  ``max_s``); getting ready for a game (an agent's ``prepare``: an engine's start-up and ``isready``) is
  timed apart (``ready_s``), before the first move's clock starts. A config's ``time_control``
  (:class:`~dnb_env.clock.TimeControl`, or its settings given flat) gives every agent the same clock: with
  ``time_per_move`` agents with ``set_move_time`` think to it, and a move over ``time_per_move + time_margin`` loses the game
  on time (``overrun="lose"``) or is listed in the record (``"warn"``). ``time_per_game`` (with
  ``increment``) gives each side a game clock instead: the mover is told its clock before each move
  (``set_clock`` for engines, else ``set_move_time`` of :meth:`~dnb_env.clock.TimeControl.move_time`),
  a move past its clock plus ``time_margin`` is an overrun, and each record holds both clocks after every
  move (``clock_s``). An agent that cannot move
  (:class:`agents.base.AgentFailure`: an engine program that crashed, hung, answered an illegal move or
  garbage) loses that game with the reason in the record (``forfeit``), and the run goes on.
* The report: win/draw/loss matrix, score rates with Wilson 95% intervals, Elo by maximum likelihood
  (Bradley-Terry, draws as half wins, one virtual draw per pair so that unbeaten agents stay finite,
  anchored so that the mean is 0, or ``random`` = 0 when present) with bootstrap 95% intervals, each
  agent's mean and longest seconds a move and games lost by forfeit; printed, and written as
  ``pairs.csv``, ``elo.csv`` and ``tournament.png``.

Agents see game states only, never each other.
"""

from agents.arena.output import format_results
from agents.arena.play import make_opening, play_game
from agents.arena.ratings import TournamentReport, bradley_terry_elo, summarise, wilson_interval
from agents.arena.schedule import MAX_GAMES, MAX_WORKERS, TournamentConfig
from agents.arena.tournament import gauntlet, run_tournament

__all__ = [
    "TournamentConfig",
    "play_game",
    "make_opening",
    "run_tournament",
    "gauntlet",
    "wilson_interval",
    "bradley_terry_elo",
    "summarise",
    "format_results",
    "TournamentReport",
    "MAX_GAMES",
    "MAX_WORKERS",
]
