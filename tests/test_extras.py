"""Every optional import names its extra: each module, agent and plot that needs an extra's library, imported or
used with that library missing (simulated by ``sys.modules[name] = None``), raises ``MissingExtra`` whose message
says which extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest

from registry.extras import MissingExtra, extra_hint, missing_extra, requires_extra

TORCH = ("PyTorch: pip install 'dnb-env[torch]' (on Linux this installs the CUDA build of torch; for the CPU "
         "build first run pip install torch --index-url https://download.pytorch.org/whl/cpu)")


def _without(monkeypatch, missing: str, *fresh: str) -> None:
    """``missing`` cannot be imported, and the modules ``fresh`` are imported afresh (their old entries come
    back after the test)."""
    monkeypatch.setitem(sys.modules, missing, None)
    for name in fresh:
        monkeypatch.delitem(sys.modules, name, raising=False)


@pytest.mark.parametrize("module, missing, message", [
    ("dnb_env.gym_env", "gymnasium", "dnb_env.gym_env needs Gymnasium: pip install 'dnb-env[gym]'"),
    ("dnb_env.pettingzoo_env", "pettingzoo", "dnb_env.pettingzoo_env needs PettingZoo: pip install 'dnb-env[gym]'"),
    ("dnb_env.pettingzoo_env", "gymnasium", "dnb_env.pettingzoo_env needs Gymnasium: pip install 'dnb-env[gym]'"),
    ("dnb_env.openspiel_game", "pyspiel", "dnb_env.openspiel_game needs OpenSpiel: pip install 'dnb-env[spiel]'"),
    ("dnb_web", "fastapi", "dnb_web needs FastAPI: pip install 'dnb-env[web]'"),
    ("agents.network_agent", "torch", f"agents.network_agent needs {TORCH}"),
    ("agents.training.loop", "torch", f"agents.training.loop needs {TORCH}"),
    ("agents.training.supervised", "torch", f"agents.training.supervised needs {TORCH}"),
])
def test_importing_a_module_without_its_extra_names_the_extra(monkeypatch, module, missing, message):
    _without(monkeypatch, missing, module)
    with pytest.raises(MissingExtra) as error:
        importlib.import_module(module)
    assert str(error.value) == message and error.value.name == missing
    # code that handles a missing module, or a bad value, handles it too
    assert isinstance(error.value, ModuleNotFoundError) and isinstance(error.value, ValueError)
    assert module not in sys.modules  # nothing half-imported is left behind


def test_the_openspiel_agent_without_openspiel_names_the_extra(monkeypatch):
    from registry import make_agent

    _without(monkeypatch, "pyspiel")
    with pytest.raises(MissingExtra, match=r"^agent 'openspiel_mcts' needs OpenSpiel: pip install 'dnb-env\[spiel\]'$"):
        make_agent("openspiel_mcts", board="2x2", seed=0)


def test_human_rendering_without_pygame_names_the_extra(monkeypatch):
    from dnb_env.core import GameState
    from dnb_env.render import HumanWindow, render_rgb

    _without(monkeypatch, "pygame")
    state = GameState.new("2x2")
    assert render_rgb(state).ndim == 3  # the other render modes need no pygame
    with pytest.raises(MissingExtra, match=r"^render_mode='human' needs pygame: pip install 'dnb-env\[gym\]'$"):
        HumanWindow().show(state)


def test_the_training_plot_without_matplotlib_names_the_extra(monkeypatch, tmp_path):
    from agents.training.plots import plot_training

    _without(monkeypatch, "matplotlib")
    with pytest.raises(MissingExtra, match=r"^the training plot needs matplotlib: pip install 'dnb-env\[plot\]'$"):
        plot_training([], str(tmp_path / "training.png"))
    assert not (tmp_path / "training.png").exists()


def test_registration_skips_the_libraries_that_are_missing(monkeypatch):
    """``import dnb_env`` registers the environments where their library is installed and skips the others."""
    for missing in ("gymnasium", "pettingzoo", "pyspiel", "pygame", "torch", "matplotlib", "fastapi"):
        monkeypatch.setitem(sys.modules, missing, None)
    from dnb_env.registration import register_all

    assert register_all() == {"gymnasium": False, "pettingzoo": False, "openspiel": False}


def test_hints_name_the_distribution_and_the_extra():
    assert extra_hint("gymnasium") == "Gymnasium: pip install 'dnb-env[gym]'"
    assert extra_hint("open_spiel.python.algorithms") == "OpenSpiel: pip install 'dnb-env[spiel]'"
    assert extra_hint("onnxruntime") == "ONNX Runtime: pip install 'dnb-env[onnx]'"
    assert extra_hint("torch") == TORCH
    assert extra_hint("numpy") is None and extra_hint("") is None


def test_missing_extra_names_the_outer_thing_and_keeps_the_module():
    inner = missing_extra(ModuleNotFoundError("No module named 'pyspiel'", name="pyspiel"), "agent 'openspiel_mcts'")
    outer = missing_extra(inner, "dnb tournament")
    assert str(outer) == "dnb tournament needs OpenSpiel: pip install 'dnb-env[spiel]'" and outer.name == "pyspiel"
    assert missing_extra(ModuleNotFoundError("No module named 'agents.nope'", name="agents.nope"), "x") is None


def test_requires_extra_leaves_other_errors_as_they_are():
    real = ModuleNotFoundError("No module named 'agents.nope'", name="agents.nope")
    with pytest.raises(ModuleNotFoundError) as error:
        with requires_extra("x"):
            raise real
    assert error.value is real
    with pytest.raises(MissingExtra) as error:
        with requires_extra("x"):
            raise ModuleNotFoundError("No module named 'ray'", name="ray")
    assert str(error.value) == "x needs Ray: pip install 'dnb-env[ray]'"
    assert isinstance(error.value.__cause__, ModuleNotFoundError) and error.value.__cause__.name == "ray"
