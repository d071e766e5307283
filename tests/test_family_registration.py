"""A model family is one file and one registry line: a tiny family registered at run time (this file only)
trains with ``dnb train --model tiny``, fits a teacher dataset with ``dnb fit``, plays as the agent ``tiny``
through ``registry.make_agent``, is listed by ``dnb agents`` and by the web app, and plays a tournament."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

torch = pytest.importorskip("torch", reason="model families need torch")

from torch import nn  # noqa: E402

from agents import models  # noqa: E402
from agents.models import OUTPUTS, Family, register_family  # noqa: E402
from agents.models.common import check_common, input_shape  # noqa: E402
from dnb_env.core import GameState, geometry  # noqa: E402


@dataclass(frozen=True)
class TinyConfig:
    """The fields every family config has (``board``, ``encoder``, ``value``, ``aux_heads``) and one of its own."""

    board: str = "2x2"
    encoder: str = "alphazero4"
    value: str = "win"
    aux_heads: bool = False
    hidden: int = 8

    def __post_init__(self):
        check_common(self)


class TinyNet(nn.Module):
    """One hidden layer: ``x [B, C, H, W]`` -> ``policy_logits [B, A]``, ``value [B]`` in (-1, 1)."""

    def __init__(self, config: TinyConfig):
        super().__init__()
        self.config = config
        c, h, w = input_shape(config)
        self.body = nn.Sequential(nn.Flatten(), nn.Linear(c * h * w, config.hidden), nn.ReLU())
        self.policy = nn.Linear(config.hidden, geometry(config.board).num_actions)
        self.value = nn.Sequential(nn.Linear(config.hidden, 1), nn.Tanh())

    def forward(self, x):
        z = self.body(x)
        return {"policy_logits": self.policy(z), "value": self.value(z).reshape(-1)}


TINY = Family(name="tiny", config=TinyConfig, build=TinyNet, presets={"cpu": {"hidden": 8}}, agent="tiny")


@pytest.fixture
def tiny_family(monkeypatch):
    """The family registered for one test: the registry line a new family adds, undone after."""
    monkeypatch.setattr(models, "_MODULES", dict(models._MODULES))
    register_family(TINY)
    yield TINY


def test_the_tiny_family_meets_the_outputs_contract(tiny_family):
    net = models.build_model(models.make_model_config("tiny", board="2x2"))
    out = net(torch.zeros(3, *input_shape(net.config)))
    assert set(out) <= set(OUTPUTS) and out["policy_logits"].shape == (3, 12) and out["value"].shape == (3,)
    with pytest.raises(ValueError, match="already registered"):
        register_family(TINY)


def test_a_registered_family_trains_plays_is_listed_and_plays_a_tournament(tiny_family, tmp_path, capsys):
    from agents.arena import TournamentConfig
    from agents.checkpoint import load_checkpoint
    from registry import list_agents, make_agent
    from registry.cli import main as cli
    from registry.tournaments import run_tournament

    # dnb train --model tiny: one tiny iteration
    run = tmp_path / "run"
    assert cli(["train", "--model", "tiny", "--board", "2x2", "--iterations", "1", "--games", "2", "--simulations",
                "4", "--out", str(run), "--no-progress", "--set", "eval_positions=0", "--set", "eval_games=0",
                "--set", "model.hidden=6"]) == 0
    checkpoint = str(run / "checkpoint.pt")
    saved = load_checkpoint(checkpoint)["model"]
    assert saved["family"] == "tiny" and saved["hidden"] == 6
    # the family's agent, through the registry: search and raw policy
    assert "tiny" in list_agents()
    state = GameState.new("2x2")
    for simulations in (4, 0):
        agent = make_agent("tiny", board="2x2", seed=0, checkpoint=checkpoint, simulations=simulations)
        assert agent.select_action(state) in state.legal_actions()
    assert make_agent("tiny", board="2x2", seed=0, checkpoint=checkpoint).analyse(state)["kind"] == "visits"
    with pytest.raises(ValueError, match="holds a tiny model, not a resnet model"):  # another family's agent
        make_agent("alphazero", board="2x2", checkpoint=checkpoint)
    # dnb agents
    capsys.readouterr()
    assert cli(["agents"]) == 0
    assert "tiny" in capsys.readouterr().out.split()
    # a 2-game tournament
    spec = f"tiny:checkpoint={checkpoint},simulations=4"
    report = run_tournament(TournamentConfig(board="2x2", agents=(spec, "random"), games=2, bootstrap=0),
                            out=str(tmp_path / "t"), progress=False, echo=None)
    assert report.games == 2
    records = [json.loads(line) for line in (tmp_path / "t" / "results.jsonl").read_text().splitlines()]
    assert {r["first"] for r in records} == {spec, "random"}


def test_a_registered_family_is_offered_by_the_web_app(tiny_family, tmp_path):
    pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed")
    pytest.importorskip("httpx", reason="FastAPI's test client needs httpx")
    from fastapi.testclient import TestClient

    from agents.checkpoint import save_checkpoint
    from dnb_web import WebConfig, create_app

    net = models.build_model(models.make_model_config("tiny", board="2x2"))
    (tmp_path / "ckpt").mkdir()
    path = str(tmp_path / "ckpt" / "tiny.pt")
    save_checkpoint(path, net)
    config = WebConfig(results_roots=(str(tmp_path),), checkpoint_roots=(str(tmp_path / "ckpt"),))
    with TestClient(create_app(config), base_url="http://127.0.0.1") as client:
        listed = client.get("/api/agents?board=2x2").json()
        assert "tiny" in listed["names"]
        offered = [a["spec"] for a in listed["agents"]]
        assert f"tiny:checkpoint={path}" in offered and f"alphazero:checkpoint={path}" not in offered


def test_dnb_fit_trains_a_registered_family(tiny_family, tmp_path):
    from agents.checkpoint import load_checkpoint
    from agents.training.teacher import TeachConfig, generate
    from registry.cli import main as cli
    from registry.specs import agent_from_spec

    data = str(tmp_path / "teach")
    generate(TeachConfig(board="2x2", undrawn_min=3, undrawn_max=7, margin_max=7, positions=12, shard_size=12,
                         per_game=3, players=("greedy", "random"), seed=1), data, agent_from_spec, progress=False)
    out = tmp_path / "fit"
    assert cli(["fit", "--model", "tiny", "--board", "2x2", "--data", data, "--steps", "2", "--eval-every", "2",
                "--batch-size", "4", "--out", str(out), "--no-progress"]) == 0
    assert load_checkpoint(str(out / "checkpoint.pt"))["model"]["family"] == "tiny"
