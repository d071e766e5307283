"""Agent registry and the dnb command line."""

from __future__ import annotations

import sys

import pytest

from agents.base import Agent, FunctionAgent
from dnb_env.core import GameState
from registry import list_agents, make_agent, register_agent
from registry.cli import main as cli_main


def test_make_random_agent_is_seeded():
    a, b = make_agent("random", board="3x3", seed=4), make_agent("random", board="3x3", seed=4)
    assert isinstance(a, Agent) and "random" in list_agents()
    s = GameState.new(3, 3)
    moves_a, moves_b = [], []
    for _ in range(10):
        moves_a.append(a.select_action(s))
        moves_b.append(b.select_action(s))
    assert moves_a == moves_b and all(s.is_legal(m) for m in moves_a)


def test_unknown_agent_and_option():
    with pytest.raises(ValueError, match="known agents: .*random"):
        make_agent("nobody")
    with pytest.raises(ValueError, match="no option"):
        make_agent("random", depth=3)
    with pytest.raises(ValueError, match="RxC"):
        make_agent("random", board="3by3")


def test_register_agent_and_duplicates():
    def factory(*, board, seed, move=0):
        return FunctionAgent(lambda s: s.legal_actions()[move], name="first")

    register_agent("first_legal_test", factory)
    agent = make_agent("first_legal_test", board="2x2", move=1)
    assert agent.select_action(GameState.new(2, 2)) == 1
    with pytest.raises(ValueError, match="already registered"):
        register_agent("first_legal_test", factory)


def test_cli_demo_prints_a_whole_game(capsys):
    assert cli_main(["demo", "--board", "2x2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("draws") == 12 and "game over" in out


def test_cli_bad_board(capsys):
    assert cli_main(["demo", "--board", "5x"]) == 2
    assert "RxC" in capsys.readouterr().err


@pytest.mark.parametrize("command, shown", [
    ("demo", ["board as RxC boxes (default: 5x5)", "(default: 0)"]),
    ("tournament", ["(default: 5x5)", "(default: 20)", "(default: 0)", "(default: round_robin)", "--threads",
                    "(default: 1)", "(default: 200)", "(default: one per CPU"]),
    ("train", ["iterations (int): cpu 60, paper 100", "curriculum.epsilon (float | None): cpu None, paper None",
               "model.dim [dotsformer]: cpu 32, paper 84", "model.blocks [resnet]", "(default: the preset's"]),
])
def test_cli_help_shows_defaults(command, shown, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # one line per option
    with pytest.raises(SystemExit) as exit_:
        cli_main([command, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and all(text in out for text in shown), out
    assert "(default: None)" not in out and "(default: False)" not in out


def test_cli_train_settings_are_typed_and_checked():
    from agents.training.overrides import parse_settings

    assert parse_settings("resnet", ["epochs=3", "value=margin", "prune=false", "lr=0.01", "model.width=16",
                                     "curriculum.start_step=none", "start_step=4"]) == {
        "epochs": 3, "model.value": "margin", "search.prune": False, "lr": 0.01, "model.width": 16,
        "curriculum.start_step": 4}
    assert parse_settings("dotsformer", ["dim=16", "qkv=linear"]) == {"model.dim": 16, "model.qkv": "linear"}
    with pytest.raises(ValueError, match="unknown training option 'nonsense'"):
        parse_settings("resnet", ["nonsense=1"])
    with pytest.raises(ValueError, match="unknown training option 'dim'"):
        parse_settings("resnet", ["dim=16"])  # a dotsformer field
    with pytest.raises(ValueError, match="expected an integer"):
        parse_settings("resnet", ["epochs=many"])
    with pytest.raises(ValueError, match="true or false"):
        parse_settings("resnet", ["prune=maybe"])
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_settings("resnet", ["epochs"])


@pytest.mark.parametrize("game", ["python", "cpp"])
def test_openspiel_mcts_plays_on_either_spiel_game(game):
    agent = make_agent("openspiel_mcts", board="2x2", seed=0, simulations=20, game=game)
    assert agent.game.get_type().short_name == {"python": "python_dots_and_boxes", "cpp": "dots_and_boxes"}[game]
    s = GameState.new(2, 2)
    while not s.is_terminal():
        s = s.apply(agent.select_action(s))  # GameState.apply rejects an illegal move
    assert sum(s.scores) == 4
    with pytest.raises(ValueError, match="game must be one of"):
        make_agent("openspiel_mcts", board="2x2", game="java")


# ---------------------------------------------------------------- option types, agent input, spiel extra

def test_agent_options_are_type_checked():
    with pytest.raises(ValueError, match="agent 'alphabeta': option chain_eval must be true or false, got 'no'"):
        make_agent("alphabeta", board="3x3", chain_eval="no")
    with pytest.raises(ValueError, match="option depth must be an integer, got 2.9"):
        make_agent("alphabeta", board="3x3", depth=2.9)
    with pytest.raises(ValueError, match="option time_limit must be a number or None, got 'soon'"):
        make_agent("alphabeta", board="3x3", time_limit="soon")
    with pytest.raises(ValueError, match="option simulations must be an integer, got True"):
        make_agent("mcts", board="3x3", simulations=True)
    with pytest.raises(ValueError, match="option game must be one of 'python', 'cpp', got 'java'"):
        make_agent("openspiel_mcts", board="3x3", game="java")
    with pytest.raises(ValueError, match="option prune must be true or false, got 'maybe'"):
        make_agent("alphazero", board="3x3", prune="maybe")
    # spec strings from the command line: typed by the spec parser, or given as text
    from registry.specs import check_spec, parse_agent_spec

    name, kwargs = parse_agent_spec("alphabeta:depth=3,chain_eval=true,time_limit=1")
    agent = make_agent(name, board="3x3", **kwargs)
    assert (agent.depth, agent.chain_eval, agent.time_limit) == (3, True, 1.0) and type(agent.time_limit) is float
    agent = make_agent("alphabeta", board="3x3", depth="2", extend_captures="False")
    assert (agent.depth, agent.extend_captures) == (2, False)
    with pytest.raises(ValueError, match="option depth must be an integer"):
        check_spec(*parse_agent_spec("alphabeta:depth=deep"))


def _tiny_dotsformer_checkpoint(path):
    from agents.checkpoint import save_checkpoint
    from agents.models import build_model, make_model_config

    net = build_model(make_model_config("dotsformer", board="3x3", dim=8, heads=2, mlp_ratio=1.0, layers=3))
    save_checkpoint(str(path), net)
    return str(path)


CHEAP = {"mcts": dict(simulations=5), "openspiel_mcts": dict(simulations=5), "alphazero": dict(simulations=2),
         "dotsformer": dict(simulations=2), "alphavit": dict(simulations=2), "alphabeta": dict(depth=1),
         "engine": dict(cmd=f"{sys.executable} -m registry.cli engine random")}


@pytest.mark.parametrize("name", list_agents())
def test_every_agent_refuses_other_boards_and_finished_games(name, tmp_path):
    from agents.base import AgentInputError

    kwargs = dict(CHEAP.get(name, {}))
    if name == "dotsformer":  # a tiny untrained net keeps it fast (the shipped 3x3 weights are tested elsewhere)
        kwargs["checkpoint"] = _tiny_dotsformer_checkpoint(tmp_path / "dotsformer-3x3.pt")
    agent = make_agent(name, board="3x3", seed=0, **kwargs)
    s = GameState.from_actions(3, 3, [0, 5, 12])
    assert s.is_legal(agent.select_action(s))
    with pytest.raises(AgentInputError, match="built for a 3x3 board, got a 5x5 state"):
        agent.select_action(GameState.new(5, 5))
    finished = GameState.from_actions(3, 3, range(24))
    with pytest.raises(AgentInputError, match="finished game"):
        agent.select_action(finished)


def test_spiel_extra_runs_openspiel_pytorch_dqn_on_our_game():
    import pathlib

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert any(r.startswith("dm-tree") for r in pyproject["project"]["optional-dependencies"]["spiel"])
    pytest.importorskip("pyspiel")
    import tree  # noqa: F401  (dm-tree, from the spiel extra: OpenSpiel's PyTorch DQN imports it)
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn

    env = rl_environment.Environment("python_dots_and_boxes", num_rows=2, num_cols=2)
    size, n = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    agents = [dqn.DQN(p, state_representation_size=size, num_actions=n, hidden_layers_sizes=[16],
                      replay_buffer_capacity=100, min_buffer_size_to_learn=8, batch_size=8, learn_every=4)
              for p in range(2)]
    for _ in range(3):
        ts = env.reset()
        while not ts.last():
            ts = env.step([agents[ts.observations["current_player"]].step(ts).action])
        for a in agents:
            a.step(ts)
    assert agents[0].loss is not None


def test_factories_take_the_defaults_of_their_agent_classes():
    """An option that the agent's class takes has its default there alone (registry.agents.options_of):
    the factory's signature shows the class's, and the registry narrows a type where it checks more."""
    import inspect
    import typing

    from agents.engine import EngineAgent
    from baselines.alphabeta import AlphaBetaAgent
    from baselines.prsboxes import PRsBoxesAgent
    from baselines.solver import SolverAgent
    from registry.agents import _FACTORIES

    for name, cls, registry_only in (("alphabeta", AlphaBetaAgent, set()), ("solver", SolverAgent, {"fallback"}),
                                     ("prsboxes", PRsBoxesAgent, set()), ("engine", EngineAgent, {"cmd"})):
        options = dict(inspect.signature(_FACTORIES[name]).parameters)
        del options["board"], options["seed"]
        own = inspect.signature(cls).parameters
        taken = set(options) - registry_only  # e.g. the solver's fallback is a name here, an agent there
        assert taken <= set(own) and {n: options[n].default for n in taken} == {n: own[n].default for n in taken}
    engine = typing.get_type_hints(_FACTORIES["solver"])["engine"]
    assert typing.get_args(engine) == ("auto", "alphabeta", "retrograde")
