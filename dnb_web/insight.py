"""What the insight view shows: move classes, chains and loops (:mod:`dnb_env.analysis`), the exact value
and winning moves (:class:`dnb_env.solver.Solver` under a node budget) and an agent's own view of the
position (its own ``analyse``: move probabilities, visit counts or exact move values, and its evaluation
where it exposes one; "none" for an agent that exposes nothing, e.g. ``greedy`` and ``prsboxes``).

Every function takes a :class:`GameState` and returns plain JSON-ready data; nothing here holds state.
"""

from __future__ import annotations

import math

from dnb_env import analysis
from dnb_env.agent import Analysable, Probabilistic
from dnb_env.core import GameState
from dnb_env.solver import Solver, SolverBudgetExceeded, SolverTooLarge, native_available

__all__ = ["structure", "solve", "agent_view", "make_solver"]

#: Names the page shows for :class:`dnb_env.analysis.MoveClass` (Dotsformer Definition 3).
CLASS_NAMES = {analysis.MoveClass.SAFE: "safe", analysis.MoveClass.CONCEDING: "sacrifice",
               analysis.MoveClass.SCORING: "capture"}


def structure(state: GameState) -> dict:
    """Move class of each legal move, the chains and loops (long ones flagged), the long-chain count, the
    simple-endgame value where the position is one, and the initiative label of the last move."""
    classes = analysis.move_classes(state)
    comps = []
    for c in analysis.components(state):
        comps.append({"kind": c.kind, "boxes": list(c.boxes), "length": c.length, "opened": c.opened,
                      "long": c.kind == "loop" or c.length >= 3})
    out = {
        "move_classes": {str(a): CLASS_NAMES[analysis.MoveClass(int(classes[a]))] for a in state.legal_actions()},
        "components": comps,
        "long_chains": analysis.long_chain_count(state),
        "simple_endgame": analysis.is_simple_endgame(state) and not state.is_terminal(),
        "endgame_value": None,
        "last_move": None,
    }
    if out["simple_endgame"]:
        out["endgame_value"] = analysis.endgame_value(state)
    if state.history:
        before = GameState.from_actions(state.rows, state.cols, state.history[:-1])
        label = analysis.initiative_label(before, state.history[-1])
        out["last_move"] = {"action": state.history[-1], "initiative": label.name.lower()}
    return out


#: Transposition table of the insight view's solver in megabytes: one per game, so kept small.
SOLVER_TT_MB = 8.0


def make_solver(node_limit: int):
    """A solver that answers within ``node_limit`` alpha-beta nodes per query (the retrograde engine, when
    the extension is not built, only up to 18 undrawn edges so that it stays quick), with a transposition
    table of at most :data:`SOLVER_TT_MB` megabytes."""
    return Solver(max_undrawn=None if native_available() else 18, node_limit=node_limit, tt_mb=SOLVER_TT_MB)


def solve(solver, state: GameState) -> dict:
    """The exact value of ``state`` for the player to move and the moves that keep the best result, or
    why not (``status``: "solved", "out_of_reach" with bounds, "too_large", "over")."""
    if state.is_terminal():
        return {"status": "over"}
    mover = state.current_player
    owned = state.scores[mover] - state.scores[1 - mover]
    try:
        values = solver.move_values(state)
    except SolverBudgetExceeded as exc:
        return {"status": "out_of_reach", "message": str(exc), "bounds": list(exc.bounds) if exc.bounds else None}
    except SolverTooLarge as exc:
        return {"status": "too_large", "message": str(exc)}
    best = max(values.values())
    final = owned + best
    return {
        "status": "solved",
        "player": mover,
        "value": best,  # margin of the remaining boxes for the player to move
        "final_margin": final,
        "outcome": "win" if final > 0 else ("draw" if final == 0 else "loss"),
        "move_values": {str(a): v for a, v in values.items()},
        "best_moves": sorted(a for a, v in values.items() if v == best),
        "winning_moves": sorted(a for a, v in values.items() if owned + v > 0),
    }


def _finite(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


#: How far (relative) a legal move's share of the probabilities or visits may stray from the uniform share
#: 1/n while the agent still counts as having no preference: 10%, e.g. 24 moves at 4.17% +- 0.42%, or visit
#: counts of 41 and 42 from 1000 simulations.
UNIFORM_TOLERANCE = 0.1

#: Views whose values are shares of one whole (probabilities, a policy, visit counts); exact values and
#: alpha-beta's search are not, and equal ones say something ("every move draws").
SHARE_KINDS = ("probabilities", "policy", "visits")


def uniform(values, legal, tolerance: float = UNIFORM_TOLERANCE) -> bool:
    """Whether the shares ``values[a] / sum`` of the legal moves ``legal`` are all within ``tolerance``
    (relative) of 1/n, n = len(legal) >= 2: the agent has no preference among them. False with fewer than
    two legal moves, a legal move without a value, or nothing to share (a sum of 0)."""
    vals = [values[a] for a in legal]
    if len(vals) < 2 or any(v is None for v in vals):
        return False
    total = sum(vals)
    if not total > 0:
        return False
    n = len(vals)
    return all(abs(v / total - 1 / n) <= tolerance / n for v in vals)


def _preferred(values, legal) -> int | None:
    """The legal move with the largest value, or None when every legal move has the same value."""
    vals = {a: values[a] for a in legal if values[a] is not None}
    if not vals or len(set(vals.values())) == 1:
        return None
    return max(vals, key=vals.get)


def agent_view(agent, state: GameState, deadline: float | None = None) -> dict:
    """The agent's view of ``state``, from its own ``analyse(state, deadline)`` (:mod:`agents.base`): ``kind``
    "visits" (a tree search: root visit counts, and its Q where it has one), "policy" (a network's raw
    policy and value head), "values" (an exact solver's value of each move), "search" (alpha-beta: its move
    and the value of its deepest search finished before ``deadline``), "probabilities" (an agent without
    ``analyse``: its ``action_probabilities``) or "none" (the agent exposes no evaluation). ``values`` has one
    number per action (None where there is none); ``value`` is for the player to move in ``unit``; ``move``
    is the agent's own move where its view has one, else the one its values prefer (None when they prefer
    none). ``uniform`` is True when the values are shares (probabilities, a policy, visit counts) spread
    evenly over the legal moves within :data:`UNIFORM_TOLERANCE` (:func:`uniform`): the agent has no
    preference, ``move`` is None and the page draws no numbers (``random``'s probabilities, a search that
    visited every move alike)."""
    mover = state.current_player
    legal = state.legal_actions()
    out = {"kind": "none", "values": None, "value": None, "unit": None, "player": mover, "move": None,
           "uniform": False}
    if isinstance(agent, Analysable):
        view = agent.analyse(state, deadline=deadline)
    elif isinstance(agent, Probabilistic):
        view = {"kind": "probabilities", "values": agent.action_probabilities(state)}
    else:
        return out
    values = view.get("values")
    if values is not None:
        values = [None if x is None else _finite(x) for x in values]
    value = view.get("value")
    move = view.get("move")
    flat = values is not None and view["kind"] in SHARE_KINDS and uniform(values, legal)
    out.update(kind=view["kind"], values=values, value=None if value is None else _finite(value),
               unit=view.get("unit"), uniform=flat,
               move=None if flat else int(move) if move is not None else
               (None if values is None else _preferred(values, legal)))
    if "message" in view:
        out["message"] = view["message"]
    return out
