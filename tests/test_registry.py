"""Agent registry and the dnb command line."""

from __future__ import annotations

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


def test_cli_train_settings_are_typed_and_checked():
    from agents.training.config import parse_settings

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
