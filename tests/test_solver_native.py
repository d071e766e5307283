"""The native exact solver (dnb_env/csrc/solver.hpp through dnb_env.solver): exact values against the
retrograde reference, each pruning rule checked exhaustively and switched off, the win query, the node
budget and input checks."""

from __future__ import annotations

import random
import textwrap
import threading
import time

import pytest

from baselines.solver import SolverAgent
from conftest import random_state
from dnb_env.analysis import realistic_position
from dnb_env.core import GameState, geometry
from dnb_env.solver import Solver, SolverBudgetExceeded, SolverTooLarge, beyond_native, native_available
from dnb_env.symmetry import symmetries, transform_state

pytestmark = pytest.mark.skipif(not native_available(), reason="the C++ extension dnb_env._native is not built")

if native_available():
    from dnb_env import _native

    RULES = dict(_native.SOLVER_RULES)
    ALL = _native.SOLVER_ALL_RULES


def exact(state: GameState, rules: int | None = None) -> "_native.ExactSolver":
    return _native.ExactSolver(state.rows, state.cols, rules=ALL if rules is None else rules)


# ---------------------------------------------------------------- exact values
@pytest.mark.parametrize("board, margin", [("1x1", -1), ("1x2", 0), ("2x2", 2), ("2x3", -2), ("2x4", 2),
                                           ("3x3", -3), ("2x5", -2)])
def test_known_first_player_margins(board, margin):
    s = GameState.new(board)
    assert Solver(engine="alphabeta").value(s) == margin
    assert exact(s).value(s.edges) == (margin, margin)


@pytest.mark.parametrize("board, undrawn, count", [("3x3", 20, 6), ("4x4", 20, 6), ("5x5", 18, 5), ("5x5", 20, 5),
                                                   ("3x4", 16, 4), ("2x6", 18, 3)])
def test_values_and_move_values_match_the_retrograde_solver(board, undrawn, count):
    rng = random.Random(f"{board}-{undrawn}")
    ab, ref = Solver(engine="alphabeta"), Solver(engine="retrograde")
    for _ in range(count):
        s = realistic_position(board, undrawn, rng)
        assert ab.value(s) == ref.value(s), str(s)
        assert ab.move_values(s) == ref.move_values(s), str(s)
        assert ab.game_value(s) == ref.game_value(s)


def test_values_match_brute_force_on_random_small_positions(brute):
    # uniformly random play reaches odd positions (several opened chains, loops cut twice)
    rng = random.Random(11)
    solver = Solver(engine="alphabeta")
    for rows, cols, moves in [(2, 2, 3), (2, 3, 6), (1, 5, 4), (3, 3, 10), (2, 4, 8)]:
        for _ in range(6):
            s = GameState.new(rows, cols)
            for _ in range(moves):
                s = s.apply(rng.choice(s.legal_actions()))
            assert solver.value(s) == brute.value(s), str(s)
            assert solver.move_values(s) == brute.move_values(s), str(s)


def test_symmetric_positions_share_table_entries():
    rng = random.Random(3)
    s = realistic_position("4x4", 30, rng)
    ex = exact(s)
    v = ex.value(s.edges)
    first = ex.stats()["nodes"]
    assert first > 50  # a real search, not a table hit
    for sym in symmetries(4, 4):
        ex.reset_stats()
        assert ex.value(transform_state(sym, s).edges) == v
        assert ex.stats()["nodes"] <= 3  # the canonical key finds the stored bounds at the root


def test_midgame_5x5_is_in_reach():
    # a well-mixed 5x5 position with 32 undrawn edges: far beyond the 2^k retrograde table
    rng = random.Random(8)
    solver = Solver(engine="alphabeta")
    for _ in range(3):
        s = realistic_position("5x5", 32, rng)
        lo, hi = solver.bounds(s)
        assert lo == hi
        mv = solver.move_values(s)
        assert max(mv.values()) == lo


# ---------------------------------------------------------------- the pruning rules
@pytest.mark.parametrize("rows, cols", [(2, 2), (1, 5), (2, 3), (2, 4)])
def test_every_rule_keeps_an_optimal_move_on_every_position(rows, cols):
    """Exhaustive: on every edge set of the board the searched moves contain an optimal one and the
    simple-endgame leaves are exact (the same check passes on 3x3 and 2x5, 16.8M and 134M positions)."""
    report = _native.solver_verify_rules(rows, cols)
    assert report["violations"] == 0, report["examples"]
    assert report["positions"] == 2 ** GameState.new(rows, cols).num_actions - 1
    fired = report["rules"]
    assert fired["free_captures"] > 0 and fired["run_captures"] > 0 and fired["double_deal_choices"] > 0
    assert fired["equivalent_pruned"] > 0 and fired["simple_endgames"] > 0 and fired["border_pruned"] > 0


def test_the_exhaustive_check_catches_an_unsound_rule():
    # "always take the box, never double-deal" is the classic wrong reduction: the check must see it
    report = _native.solver_verify_rules(2, 3, drop_double_deal=True)
    assert report["violations"] > 100
    mask = report["examples"][0]
    s = GameState.new(2, 3)
    for a in range(s.num_actions):
        if mask >> a & 1:
            s = s.apply(a)
    mv = Solver(engine="retrograde").move_values(s)
    # in the first counterexample the double-dealing move is strictly better than any capture
    captures = [a for a in mv if s.apply(a).current_player == s.current_player]
    assert captures and max(mv.values()) > max(mv[a] for a in captures)


def _rule_positions(board: str, undrawn: int, count: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    return [realistic_position(board, undrawn, rng) for _ in range(count)]


@pytest.mark.parametrize("rule, counter", [
    ("free_capture", "free_captures"),
    ("double_dealing", "double_deal_choices"),
    ("equivalent_sacrifices", "equivalent_pruned"),
    ("simple_endgame", "simple_endgames"),
    ("border_edges", "border_pruned"),
])
def test_each_rule_fires_and_switching_it_off_keeps_the_value(rule, counter):
    off = ALL & ~RULES[rule]
    if rule == "free_capture":
        off &= ~RULES["double_dealing"]  # the all-but-two rule assumes free boxes are taken first
    fired_somewhere = False
    for s in _rule_positions("4x4", 22, 6, seed=len(rule)) + _rule_positions("5x5", 22, 4, seed=len(rule)):
        with_rule, without = exact(s), exact(s, off)
        v = with_rule.value(s.edges)
        assert without.value(s.edges) == v, str(s)
        on_stats, off_stats = with_rule.stats(), without.stats()
        assert off_stats["rules"][counter] == 0
        if on_stats["rules"][counter] > 0:
            fired_somewhere = True
    assert fired_somewhere, f"rule {rule} never fired on the test positions"


def test_capture_choices_cut_by_their_lower_bound_keep_every_answer():
    # a run of 2 (or an opened loop of 4) on offer is worth >= 0 to the mover: taking it all and the
    # double-deal reach the same edge set with the turn on opposite sides, so a window at or below 0 is cut
    # without search; the value, every threshold query and the move values stay the retrograde solver's
    rng = random.Random(23)
    ref = Solver(engine="retrograde")
    cuts = 0
    for board, undrawn in [("3x3", 16), ("3x3", 20), ("4x4", 20), ("2x5", 18)]:
        for _ in range(5):
            s = realistic_position(board, undrawn, rng)
            mover, opponent = s.scores if s.current_player == 0 else s.scores[::-1]
            v = ref.game_value(s) - (mover - opponent)
            e = exact(s)
            for t in range(v - 2, v + 3):
                assert e.at_least(s.edges, t) == (v >= t), (str(s), t)
            assert e.value(s.edges)[0] == v
            assert Solver(engine="alphabeta").move_values(s) == ref.move_values(s)
            cuts += e.stats()["rules"]["choice_cuts"]
    assert cuts > 0


def test_positions_differing_in_which_corner_side_is_drawn_share_table_entries():
    # the two border sides of a corner box tie the same coin to the ground: drawing either gives the same
    # strings-and-coins graph, so the second position is answered from the first one's entry
    rng = random.Random(5)
    for _ in range(20):
        s = realistic_position("4x4", 28, rng)
        a, b = sorted(_border_sides_of_box(s, 0))
        if not (s.edges >> a & 1) and not (s.edges >> b & 1) and s.apply(a).current_player != s.current_player:
            break
    else:
        pytest.fail("no test position with both border sides of the corner box undrawn")
    first, second = s.apply(a), s.apply(b)
    assert first.edges != second.edges
    ex = exact(first)
    v = ex.value(first.edges)
    assert ex.stats()["nodes"] > 20
    ex.reset_stats()
    assert ex.value(second.edges) == v
    assert ex.stats()["nodes"] <= 3
    # without the rule the second position is searched again, to the same value
    off = exact(first, ALL & ~RULES["border_edges"])
    off.value(first.edges)
    off.reset_stats()
    assert off.value(second.edges) == v
    assert off.stats()["nodes"] > 20


def _border_sides_of_box(state: GameState, box: int) -> set[int]:
    g = geometry(state.rows, state.cols)
    return {e for e in g.box_sides[box] if len(g.action_boxes[e]) == 1}


def test_rules_shrink_the_search():
    s = _rule_positions("5x5", 30, 1, seed=4)[0]
    on, off = exact(s), exact(s, RULES["simple_endgame"])
    assert on.value(s.edges) == off.value(s.edges)
    assert on.stats()["nodes"] * 5 < off.stats()["nodes"]


def test_double_dealing_move_is_found():
    # top row: an opened 3-chain (box (0, 0) capturable); bottom row: a closed 3-chain. Best: take one box,
    # hand the last two back with the double-dealing move v(0, 3), then take the whole bottom chain:
    # 1 - 2 + 3 = +2 (taking all three first gives 3 - 3 = 0)
    s = GameState.from_text(textwrap.dedent(
        """
        +---+---+---+
        |
        +---+---+---+

        +---+---+---+
        """
    ))
    g = s.geometry
    solver = Solver(engine="alphabeta")
    assert solver.value(s) == 2
    assert solver.move_values(s) == Solver(engine="retrograde").move_values(s)
    s = s.apply(g.parse_action("v 0 1"))  # take the first box
    mv = solver.move_values(s)
    assert mv[g.parse_action("v 0 3")] == 1 == max(mv.values())  # the double deal
    assert mv[g.parse_action("v 0 2")] == -1  # taking on


# ---------------------------------------------------------------- win / draw queries
def test_win_query_agrees_with_the_sign_of_the_value():
    rng = random.Random(6)
    solver = Solver(engine="alphabeta")
    seen = set()
    for board, undrawn in [("3x3", 16), ("4x4", 22), ("5x5", 26), ("5x5", 30)]:
        for _ in range(6):
            s = realistic_position(board, undrawn, rng)
            final = solver.game_value(s)
            sign = (final > 0) - (final < 0)
            seen.add(sign)
            assert solver.can_win(s) == (final > 0)
            assert solver.outcome(s) == sign
            v = solver.value(s)
            for t in (v - 1, v, v + 1):
                assert solver.at_least(s, t) == (v >= t)
    assert seen >= {-1, 1}


# ---------------------------------------------------------------- budget, engines and inputs
def test_node_budget_raises_with_bounds():
    s = _rule_positions("5x5", 40, 1, seed=1)[0]
    solver = Solver(engine="alphabeta", node_limit=200)
    with pytest.raises(SolverBudgetExceeded, match="node_limit=200") as info:
        solver.value(s)
    assert isinstance(info.value, SolverTooLarge)
    lo, hi = info.value.bounds
    assert -25 <= lo < hi <= 25
    with pytest.raises(SolverBudgetExceeded):
        solver.move_values(s)
    with pytest.raises(SolverBudgetExceeded):
        solver.can_win(s)
    assert _native.ExactSolver(5, 5).at_least(s.edges, 0, node_limit=50) is None


def test_a_deadline_stops_a_query_as_a_spent_node_budget_would():
    hard = _rule_positions("5x5", 44, 1, seed=3)[0]  # far beyond a second of search
    easy = _rule_positions("5x5", 20, 1, seed=3)[0]
    solver = Solver(60, engine="alphabeta", node_limit=0)
    want = solver.best_moves(easy)
    solver.set_deadline(0.0)  # already past: every query stops at its first node
    for query in (solver.value, solver.move_values, solver.best_moves, solver.can_win):
        with pytest.raises(SolverBudgetExceeded, match="deadline"):
            query(easy)
    assert solver.past_deadline()
    solver.set_deadline(0.05)
    with pytest.raises(SolverBudgetExceeded, match="deadline"):  # unlimited nodes: only the clock stops it
        solver.move_values(hard)
    solver.set_deadline(None)
    assert not solver.past_deadline() and solver.best_moves(easy) == want
    solver.set_deadline(3600.0)  # a far deadline changes nothing
    assert solver.best_moves(easy) == want
    fresh = Solver(engine="alphabeta")
    fresh.set_deadline(0.0)  # set before the board's native solver exists: it gets the deadline too
    with pytest.raises(SolverBudgetExceeded, match="deadline"):
        fresh.value(easy)
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="seconds"):
            fresh.set_deadline(bad)
    with pytest.raises(SolverBudgetExceeded, match="deadline"):  # a refused setting changed nothing
        fresh.value(easy)
    native = _native.ExactSolver(5, 5, threads=2)  # helper threads stop too
    native.set_deadline(0.05)
    assert native.move_values(hard.edges, node_limit=0) is None


def test_max_undrawn_and_engine_choice():
    with pytest.raises(SolverTooLarge, match="60 undrawn"):
        Solver().value(GameState.new(5, 5))
    assert Solver().engine == "auto" and Solver().max_undrawn == 40
    assert Solver(engine="retrograde").max_undrawn == 24
    with pytest.raises(ValueError, match="engine"):
        Solver(engine="minimax")
    with pytest.raises(ValueError, match="max_undrawn"):
        Solver(40, engine="retrograde")
    with pytest.raises(SolverTooLarge, match="at most 12x12"):
        Solver(engine="alphabeta").value(GameState.new(13, 1))
    s = GameState.new(13, 1)  # auto: beyond the native engine, the retrograde table takes it
    for a in s.legal_actions()[:18]:
        s = s.apply(a)
    assert Solver().value(s) == Solver(engine="retrograde").value(s)
    # a position past the retrograde table's limit on such a board is refused, not a 2^30-entry table
    big = GameState.new(13, 13)
    for a in big.legal_actions()[:334]:
        big = big.apply(a)
    with pytest.raises(SolverTooLarge, match="30 undrawn.*at most 24"):
        Solver().move_values(big)
    with pytest.raises(SolverTooLarge, match="at most 26"):
        Solver(26).value(big)


def test_retrograde_engine_still_reuses_its_table():
    solver = Solver(engine="retrograde")
    s = GameState.new(2, 3)
    solver.value(s)
    table = solver._table
    assert table is not None
    rng = random.Random(0)
    while not s.is_terminal():
        s = s.apply(rng.choice(s.legal_actions()))
        solver.value(s)
        assert solver._table is table


def test_solver_agent_plays_optimally_with_alphabeta():
    agent = SolverAgent(seed=0, engine="alphabeta")
    ref = Solver(engine="retrograde")
    s = GameState.new(3, 3)
    for _ in range(4):
        s = s.apply(s.legal_actions()[0])
    while not s.is_terminal():
        a = agent.select_action(s)
        assert ref.move_values(s)[a] == ref.value(s)
        s = s.apply(a)


def test_edges_as_int_or_words_and_bad_inputs():
    s = _rule_positions("5x5", 30, 1, seed=2)[0]
    words = [(s.edges >> (64 * w)) & (2 ** 64 - 1) for w in range(3)]
    ex = _native.ExactSolver(5, 5)
    assert ex.value(s.edges) == ex.value(words)
    import numpy as np

    assert ex.value(np.array(words, dtype=np.uint64)) == ex.value(s.edges)
    with pytest.raises(ValueError, match="beyond the 60 edges of a 5x5 board"):
        ex.value(s.edges | 1 << 60)
    with pytest.raises(ValueError, match="beyond the 60 edges"):
        ex.value([0, 1, 0])
    with pytest.raises(ValueError, match="beyond bit 191"):
        ex.value(1 << 200)
    with pytest.raises(ValueError, match=">= 0"):
        ex.value(-1)
    with pytest.raises(ValueError, match="length 2"):
        ex.value([0, 0])
    with pytest.raises(TypeError, match="must be an int"):
        ex.value(1.5)
    with pytest.raises(ValueError, match="1..9 rows"):
        _native.ExactSolver(10, 3)
    with pytest.raises(ValueError, match="1..9 rows"):
        _native.ExactSolver(0, 3)
    with pytest.raises(ValueError, match="rules has unknown bits"):
        _native.ExactSolver(3, 3, rules=1 << 10)
    with pytest.raises(ValueError, match="tt_mb"):
        _native.ExactSolver(3, 3, tt_mb=0)
    with pytest.raises(ValueError, match="at most 27 edges"):
        _native.solver_verify_rules(3, 4)


def test_search_releases_the_gil():
    s = _rule_positions("5x5", 38, 1, seed=5)[0]
    ex = _native.ExactSolver(5, 5)
    done = []
    worker = threading.Thread(target=lambda: done.append(ex.value(s.edges, node_limit=3_000_000)))
    worker.start()
    ticks = 0
    start = time.perf_counter()
    while worker.is_alive():
        ticks += 1
    worker.join()
    elapsed = time.perf_counter() - start
    assert done
    if elapsed > 0.05:  # the search ran long enough for the main thread to get work done meanwhile
        assert ticks > 1000


def test_winning_moves_keep_the_win_by_the_brute_force_oracle(brute):
    """Solver.winning_moves against the tests' own negamax: a move keeps the win when the mover's final
    margin after it (boxes taken included) stays positive."""
    rng = random.Random(8)
    checked = 0
    for _ in range(40):
        s = GameState.new(2, 3)
        for _ in range(rng.randrange(0, 9)):
            s = s.apply(rng.choice(s.legal_actions()))
        if s.is_terminal():
            continue
        mover = s.current_player
        have = s.scores[mover] - s.scores[1 - mover]
        values = brute.move_values(s)
        want = frozenset(a for a, v in values.items() if have + v > 0) if have + max(values.values()) > 0 else frozenset()
        for engine in ("alphabeta", "retrograde"):
            assert Solver(engine=engine).winning_moves(s) == want, (engine, s.history)
        checked += bool(want)
    assert checked > 10


def test_solver_agent_falls_back_beyond_its_reach_and_budget():
    from baselines.prsboxes import PRsBoxesAgent
    from registry import make_agent

    agent = make_agent("solver", board="5x5", seed=0)  # the registry composes fallback="prsboxes"
    s = GameState.new(5, 5)  # 60 undrawn > max_undrawn 40
    assert agent.select_action(s) in s.legal_actions() and agent.fallbacks == 1
    assert isinstance(agent._fallback_agent, PRsBoxesAgent) and agent._fallback_agent.board == (5, 5)
    with pytest.raises(SolverTooLarge, match="60 undrawn"):
        make_agent("solver", board="5x5", seed=0, fallback="none").select_action(s)
    with pytest.raises(SolverTooLarge, match="60 undrawn"):
        SolverAgent(seed=0).select_action(s)  # built directly: no fallback unless one is handed in
    mid = _rule_positions("5x5", 34, 1, seed=3)[0]
    tight = make_agent("solver", board="5x5", seed=0, node_limit=50)
    assert tight.select_action(mid) in mid.legal_actions() and tight.fallbacks == 1
    given = SolverAgent(seed=0, node_limit=50, fallback=PRsBoxesAgent(seed=0))  # an Agent in hand
    assert given.select_action(mid) in mid.legal_actions() and given.fallbacks == 1
    with pytest.raises(ValueError, match="fallback"):
        make_agent("solver", fallback="random")
    with pytest.raises(ValueError, match="fallback"):
        SolverAgent(fallback="random")


def test_alphabeta_and_prsboxes_take_exact_values_in_the_solver_zone():
    """A depth-1 alpha-beta with solver leaves gets the exact value of the position; prsboxes plays a move
    of best margin in its zone (auto 38 with the C++ solver) and falls back to its rules when the budget
    runs out."""
    from baselines.alphabeta import AlphaBetaAgent
    from baselines.prsboxes import PRsBoxesAgent

    exact = Solver()
    for seed, undrawn in enumerate((24, 26, 28)):
        s = _rule_positions("5x5", undrawn, 1, seed=seed)[0]
        ab = AlphaBetaAgent(depth=1, solve_leaf=undrawn, seed=0)
        move, v = ab.search_root(s, 1)
        assert v == exact.value(s) and exact.move_values(s)[move] == v
    p = PRsBoxesAgent(seed=0)
    assert p.solver_edges == 38 and p.searcher.solve_leaf == 38
    s = _rule_positions("5x5", 30, 1, seed=5)[0]
    mv = exact.move_values(s)
    assert mv[p.select_action(s)] == max(mv.values())
    starved = PRsBoxesAgent(seed=0, solver_nodes=20)
    assert starved.select_action(s) in s.legal_actions()
    with pytest.raises(ValueError, match="solve_leaf"):
        AlphaBetaAgent(solve_leaf=-1)


def _undrawn_left(board: str, undrawn: int, seed: int) -> GameState:
    """A random position of ``board`` with ``undrawn`` edges left."""
    rng, s = random.Random(seed), GameState.new(board)
    while s.num_actions - s.edges.bit_count() > undrawn:
        s = s.apply(rng.choice(s.legal_actions()))
    return s


def test_the_solvers_callers_play_a_whole_game_on_a_board_beyond_the_native_solver():
    """Over 12x12 boxes the alpha-beta solver refuses the board: prsboxes and the alpha-beta search solve no
    leaf there and prsboxes plays its last 20 edges by the retrograde table; the solver agent's fallback plays
    until the table's reach (24 undrawn edges), the table after."""
    from agents.arena.play import play_game
    from baselines.alphabeta import AlphaBetaAgent
    from baselines.greedy import GreedyAgent
    from baselines.prsboxes import PRsBoxesAgent

    def prsboxes(seed=0):
        return PRsBoxesAgent(seed=seed, search_nodes=2000, search_depth=4)

    solver = SolverAgent(seed=0, fallback=prsboxes)
    for agent in (prsboxes(), AlphaBetaAgent(depth=2, solve_leaf=30, seed=0), solver):
        rec = play_game("13x3", agent, GreedyAgent(seed=1))
        assert "forfeit" not in rec and sum(rec["scores"]) == 39
    assert 0 < solver.fallbacks < rec["moves_by"][0]
    assert prsboxes().retrograde_edges == 20 and PRsBoxesAgent(solver_edges=30).retrograde_edges == 24


def test_the_native_solver_takes_boards_up_to_12x12_by_undrawn_count():
    """On 10x10 to 12x12 (the wide build) the alpha-beta solver solves by undrawn edges, as on 5x5: its values
    equal the retrograde table's at 18 undrawn, on square and long boards, and of every move; realistic
    positions at 36 undrawn are solved; the auto solver zones of the search are those of the undrawn count."""
    from agents.search.settings import PLAY, settings_for
    from dnb_env import native

    if native.MAX_SIZE < 12:
        pytest.skip("the wide build dnb_env._native_wide is not built")
    ab, table = Solver(engine="alphabeta"), Solver(engine="retrograde")
    for k, board in enumerate(["10x10", "12x12", "11x4", "12x1"]):
        s = _undrawn_left(board, 18, seed=k)
        assert ab.value(s) == table.value(s), board
        assert ab.move_values(s) == table.move_values(s), board
    rng = random.Random(4)
    for board in ("10x10", "12x11"):
        s = realistic_position(board, 36, rng)
        left = s.geometry.num_boxes - sum(s.scores)
        assert -left <= Solver(node_limit=20_000_000).value(s) <= left
    assert not beyond_native(geometry("12x12")) and beyond_native(geometry("13x2"))
    assert settings_for(geometry("12x12"), PLAY).solve_leaf == settings_for(geometry("9x9"), PLAY).solve_leaf > 0


def test_margins_past_127_boxes_on_12x12_loony_endgames():
    """A 12x12 position without a safe move (the loony endgame the search's root solves whatever the undrawn
    count) has more boxes left than 8 bits of margin hold: its value lies within the boxes left, each best
    move keeps it and every other move gives less (each child solved on its own)."""
    from baselines.nimstring import safe_moves
    from dnb_env import native

    if native.MAX_SIZE < 12:
        pytest.skip("the wide build dnb_env._native_wide is not built")
    # from a game of prsboxes against alphavit at 0.2 s a move (random safe moves make harder endgames)
    drawn = 0xd2aaa06603301d807c87e47647a2bf0e68a8015ed19ae67fcfe67f0ff04e0fcd983e4181ff7fe8
    s = GameState.from_actions("12x12", actions=[a for a in range(312) if drawn >> a & 1])
    assert not safe_moves(s)
    left = s.geometry.num_boxes - sum(s.scores)
    assert left > 127
    solver = Solver(max_undrawn=s.num_actions)
    value, best = solver.best_moves(s)
    assert -left <= value <= left and best
    for a in s.legal_actions():
        child = s.apply(a)
        gained = sum(child.scores) - sum(s.scores)
        after = solver.value(child) if child.current_player == s.current_player else -solver.value(child)
        assert gained + after == value if a in best else gained + after < value, a


def test_the_searchs_exact_root_and_leaves_beyond_the_native_solver():
    """Over 12x12 boxes the auto solver zones are 0, a leaf is not solved and the root is, by the retrograde
    table, within its reach only."""
    from agents.search import SearchSettings
    from agents.search.exact import ExactRoot, exact_solver, final_value, solve_extra
    from agents.search.settings import PLAY, settings_for

    assert settings_for(geometry("13x3"), PLAY).solve_root == settings_for(geometry("13x3"), PLAY).solve_leaf == 0
    assert settings_for(geometry("9x9"), PLAY).solve_root > 0 and settings_for(geometry("12x12"), PLAY).solve_root > 0
    from agents.training.config import make_train_config

    for board, zones in (("13x3", (0, 0)), ("5x5", (36, 38))):  # self-play's search resolves them the same way
        search = make_train_config("alphavit", board=board).mcts()
        assert (search.solve_leaf, search.solve_root) == zones
    cfg = SearchSettings(solve_leaf=30, solve_root=30)
    root = ExactRoot(cfg)
    assert root.policy(_undrawn_left("13x3", 25, seed=0)) is None
    s = _undrawn_left("13x3", 20, seed=0)
    pi, value = root.policy(s)
    best = max(Solver().move_values(s).values())
    assert {a for a in range(s.num_actions) if pi[a] > 0} == set(Solver().best_moves(s)[1])
    assert value == final_value(s, "win", best)
    assert solve_extra(exact_solver(cfg, 1000), s, "margin") is None


# ---------------------------------------------------------------- best moves and saved tables
def test_best_moves_are_the_moves_of_best_margin(brute):
    rng = random.Random(21)
    solver = Solver(engine="alphabeta")
    for board, undrawn, count in [("2x3", 10, 6), ("3x3", 16, 6), ("4x4", 22, 4), ("5x5", 22, 3)]:
        for _ in range(count):
            s = realistic_position(board, undrawn, rng)
            mv = solver.move_values(s)
            best = max(mv.values())
            assert solver.best_moves(s) == (best, frozenset(a for a, v in mv.items() if v == best)), str(s)
    s = GameState.new(2, 2)
    assert Solver(engine="retrograde").best_moves(s) == solver.best_moves(s)
    assert solver.best_moves(s)[0] == brute.value(s)


def test_a_saved_table_answers_the_same_query_in_another_solver(tmp_path):
    s = _rule_positions("4x4", 28, 1, seed=8)[0]
    first = exact(s)
    v = first.value(s.edges)
    assert first.stats()["nodes"] > 50
    path = str(tmp_path / "t.bin")
    first.save_table(path)
    second = exact(s)
    second.load_table(path)
    assert second.value(s.edges) == v
    assert second.stats()["nodes"] <= 3
    assert second.stats()["table_used"] == first.stats()["table_used"] > 0


def test_a_foreign_or_damaged_table_is_refused_and_changes_nothing(tmp_path):
    s = _rule_positions("4x4", 28, 1, seed=8)[0]
    first = exact(s)
    v = first.value(s.edges)
    path = str(tmp_path / "t.bin")
    first.save_table(path)
    other_board = _native.ExactSolver(3, 4)
    with pytest.raises(ValueError, match="4x4 board"):
        other_board.load_table(path)
    other_rules = exact(s, ALL & ~RULES["border_edges"])
    with pytest.raises(ValueError, match="rules"):
        other_rules.load_table(path)
    with open(path, "rb") as f:
        data = f.read()
    short = str(tmp_path / "short.bin")
    with open(short, "wb") as f:
        f.write(data[: len(data) // 2])
    keeper = exact(s)
    keeper.value(s.edges)
    with pytest.raises(ValueError, match="truncated"):
        keeper.load_table(short)
    keeper.reset_stats()
    assert keeper.value(s.edges) == v and keeper.stats()["nodes"] <= 3  # its own table is still there
    with pytest.raises(ValueError, match="cannot read"):
        keeper.load_table(str(tmp_path / "missing.bin"))


def test_threads_share_the_table_and_give_the_same_answers():
    rng = random.Random(17)
    one, two = Solver(engine="alphabeta"), Solver(engine="alphabeta", threads=2)
    for undrawn in (26, 28, 30):
        s = realistic_position("5x5", undrawn, rng)
        assert two.value(s) == one.value(s), str(s)
        assert two.best_moves(s) == one.best_moves(s), str(s)
        assert two.can_win(s) == one.can_win(s)
    assert two.stats()["nodes"] > 0
    with pytest.raises(SolverBudgetExceeded):
        Solver(engine="alphabeta", threads=2, node_limit=100).value(realistic_position("5x5", 34, rng))
    with pytest.raises(ValueError, match="threads"):
        Solver(threads=0)
    with pytest.raises(ValueError, match="threads"):
        _native.ExactSolver(3, 3, threads=65)


def test_winning_move_is_a_winning_move_and_none_when_the_position_is_not_won(brute):
    """Solver.winning_move (the move that proved the win in one null-window test) against winning_moves, on
    random 2x3 positions (captures on offer at the root among them) with both engines, and on realistic 4x4
    positions with a fresh solver and with one whose table other queries have filled."""
    rng = random.Random(31)
    won = 0
    for _ in range(40):
        s = random_state(rng, 2, 3, rng.randrange(0, 12))
        if s.is_terminal():
            continue
        for engine in ("alphabeta", "retrograde"):
            winning = Solver(engine=engine).winning_moves(s)
            move = Solver(engine=engine).winning_move(s)
            assert (move in winning) if winning else move is None, (engine, s.history)
        won += bool(winning)
    assert won > 10
    warm = Solver(engine="alphabeta")
    for _ in range(6):
        s = realistic_position("4x4", 22, rng)
        winning = Solver(engine="alphabeta").winning_moves(s)
        for solver in (Solver(engine="alphabeta"), warm):
            move = solver.winning_move(s)
            assert (move in winning) if winning else move is None, s.history
    with pytest.raises(SolverBudgetExceeded, match="winning move"):
        Solver(engine="alphabeta", node_limit=100).winning_move(realistic_position("5x5", 36, rng))


def test_proving_move_keeps_each_threshold_it_is_asked_for():
    """The native proving_move at every threshold of random 3x3 positions: -1 exactly when the value is below
    it, else a move whose value (boxes it takes included) reaches it."""
    rng = random.Random(32)
    for _ in range(25):
        s = random_state(rng, 3, 3, rng.randrange(4, 20))
        if s.is_terminal():
            continue
        native = _native.ExactSolver(3, 3)
        values = native.move_values(s.edges)
        best = max(values.values())
        for t in range(-9, 11):
            move = native.proving_move(s.edges, t)
            if best < t:
                assert move == -1, (s.history, t)
            else:
                assert values[move] >= t, (s.history, t, move)


def test_keeps_win_is_membership_in_winning_moves():
    rng = random.Random(9)
    solver = Solver(engine="alphabeta")
    for _ in range(4):
        s = realistic_position("4x4", 20, rng)
        winning = solver.winning_moves(s)
        if solver.can_win(s):
            assert {a for a in s.legal_actions() if solver.keeps_win(s, a)} == winning
        else:
            assert not winning and not any(solver.keeps_win(s, a) for a in s.legal_actions())
