"""The ``dnb`` command line as a user meets it: its version, each command's own usage line, the description of
every ``--set`` key, and the extra a command names when its library is missing."""

from __future__ import annotations

import re

import pytest

import registry.agents
import registry.cli
from registry.cli import main as cli
from registry.extras import EXTRAS, MissingExtra, missing_extra


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        cli([*argv, "--help"])
    assert exit_.value.code == 0
    return capsys.readouterr().out


def _commands(capsys) -> list[list[str]]:
    """Every command and subcommand, read from the help of the commands above it."""
    def choices(argv):
        found = re.search(r"^positional arguments:\n +\{([\w,]+)\}", _help(argv, capsys), re.M)
        return found.group(1).split(",") if found else []

    out = []
    for command in choices([]):
        out.append([command])
        out += [[command, sub] for sub in choices([command])]
    return out


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli(["--version"])
    version = registry.cli.version()
    assert exit_.value.code == 0 and capsys.readouterr().out == f"dnb {version}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+)?", version)


def test_every_command_has_its_own_usage(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    commands = _commands(capsys)
    assert ["plot", "attention"] in commands and ["train"] in commands and len(commands) >= 10
    for argv in commands:
        usage = _help(argv, capsys).splitlines()[0]
        assert usage.startswith(f"usage: dnb {' '.join(argv)}"), usage


def test_plot_attention_errors_name_the_command(tmp_path, capsys):
    pytest.importorskip("torch")
    with pytest.raises(SystemExit) as exit_:
        cli(["plot", "attention", "--board", "2x2", "--moves", "h 9 9", "--out", str(tmp_path / "a.png")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "dnb plot attention: error:" in err and not (tmp_path / "a.png").exists()


def test_every_set_key_has_a_description():
    """A setting added to the training config, to the search settings or to a model family's config needs
    its ``help`` in the field's metadata: one line, no full stop at the end."""
    pytest.importorskip("torch")  # the model families' configs live beside their networks
    import dataclasses

    from agents.models import get_family, list_families
    from agents.search import SearchSettings
    from agents.training.config import setting_fields

    fields = dict(setting_fields())
    fields |= {f"search.{f.name}": f for f in dataclasses.fields(SearchSettings)}  # value too: the agents' option
    for name in list_families():
        config = get_family(name).config
        if config.__module__.startswith("agents.models."):  # the package's families, not ones registered by tests
            fields |= {f"model.{f.name} [{name}]": f for f in dataclasses.fields(config)}
    texts = {key: f.metadata.get("help", "") for key, f in fields.items()}
    assert sorted(key for key, text in texts.items() if not text.strip()) == [], "settings without a description"
    assert [key for key, text in texts.items() if text.endswith(".") or "\n" in text] == []


def test_train_help_describes_each_key(capsys, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv("COLUMNS", "200")
    out = _help(["train"], capsys)
    assert "search.simulations (int): cpu 100, paper 800\n      leaf evaluations (or exact leaves) per search" in out
    assert "model.dim [dotsformer]: cpu 32, paper 84\n      embedding width D" in out


def test_extras_are_the_packages():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    import pathlib

    pyproject = tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    extras = pyproject["optional-dependencies"]
    assert {extra for _, extra in EXTRAS.values()} <= set(extras)
    assert set(extras) - {"all", "dev"} == set(re.search(r"\[(.*)\]", extras["all"][0]).group(1).split(","))


def test_a_missing_extra_is_named(tmp_path, capsys, monkeypatch):
    def needs(module):
        def command(args):
            raise ModuleNotFoundError(f"No module named {module!r}", name=module)
        return command

    monkeypatch.setattr(registry.commands.train, "run", needs("torch"))
    assert cli(["train", "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err == ("dnb: error: dnb train needs PyTorch: pip install 'dnb-env[torch]' (on Linux "
                                       "this installs the CUDA build of torch; for the CPU build first run pip install "
                                       "torch --index-url https://download.pytorch.org/whl/cpu)\n")
    monkeypatch.setattr(registry.commands.train, "run", needs("open_spiel.python"))
    assert cli(["train", "--out", str(tmp_path / "run")]) == 2
    assert "needs OpenSpiel: pip install 'dnb-env[spiel]'" in capsys.readouterr().err
    monkeypatch.setattr(registry.commands.train, "run", needs("agents.no_such_module"))  # not an extra: a real error
    with pytest.raises(ModuleNotFoundError):
        cli(["train", "--out", str(tmp_path / "run")])
    error = missing_extra(ModuleNotFoundError(name="fastapi"), "dnb serve")
    assert isinstance(error, MissingExtra) and isinstance(error, ValueError)
    assert str(error) == "dnb serve needs FastAPI: pip install 'dnb-env[web]'"


def test_without_torch_the_registry_has_the_other_agents(capsys, monkeypatch):
    def no_torch():
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(registry.agents, "family_agents", no_torch)
    assert cli(["agents"]) == 0
    captured = capsys.readouterr()
    listed = {line.split()[0]: line for line in captured.out.splitlines() if line and not line.startswith("`")}
    assert {"random", "greedy", "alphabeta"} <= set(listed) and "[needs" not in listed["random"]
    assert "PyTorch: pip install 'dnb-env[torch]'" in listed["alphazero"]  # listed, with the extra it needs
    with pytest.raises(ValueError, match=r"unknown agent 'alphazero'.*pip install 'dnb-env\[torch\]'"):
        registry.agents.make_agent("alphazero", board="3x3")


def test_teach_without_torch_plays_the_default_players_it_has(tmp_path, capsys, monkeypatch):
    """The core install (no PyTorch) makes a teacher dataset from the default mix less its network players, and
    says so in one line naming the extra that would add them."""
    import json

    def no_torch():
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(registry.agents, "family_agents", no_torch)
    out = tmp_path / "d"
    assert cli(["teach", "--board", "2x2", "--undrawn", "3-6", "--positions", "4", "--shard-size", "4",
                "--out", str(out), "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ("dnb teach: the default players leave out alphazero:simulations=0, "
                            "dotsformer:simulations=0: the network agents need PyTorch: pip install "
                            "'dnb-env[torch]' (on Linux this installs the CUDA build of torch; for the CPU build "
                            "first run pip install torch --index-url https://download.pytorch.org/whl/cpu)\n")
    assert "4 positions" in captured.out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["players"] == ["greedy", "alphabeta:depth=2", "prsboxes"]
    # a network player named on purpose is refused at once, the extra named, and no folder is made
    assert cli(["teach", "--board", "2x2", "--players", "greedy,alphazero", "--out", str(tmp_path / "e")]) == 2
    err = capsys.readouterr().err
    assert "'alphazero'" in err and "pip install 'dnb-env[torch]'" in err and not (tmp_path / "e").exists()


def test_teach_with_torch_keeps_the_whole_default_mix(capsys):
    pytest.importorskip("torch")
    from agents.training.teacher import DEFAULT_PLAYERS

    assert registry.commands.teach.default_players() == DEFAULT_PLAYERS and capsys.readouterr().err == ""


def test_teach_help_says_what_the_default_mix_needs(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    out = " ".join(_help(["teach"], capsys).split())
    assert "without PyTorch the two network players are left out with a notice" in out


def test_a_tournament_without_matplotlib_writes_its_csv_files(tmp_path, capsys, monkeypatch):
    import agents.arena.output

    def no_matplotlib(report, path):
        raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")

    monkeypatch.setattr(agents.arena.output, "plot", no_matplotlib)
    out = tmp_path / "t"
    assert cli(["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--workers", "1",
                "--bootstrap", "0", "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "tournament.png skipped: the plot needs matplotlib: pip install 'dnb-env[plot]'" in printed
    assert printed.rstrip().endswith(f"results: {out}/results.jsonl, pairs.csv, elo.csv")
    assert (out / "pairs.csv").is_file() and (out / "elo.csv").is_file() and not (out / "tournament.png").exists()
