"""Every number a command takes is checked against its documented range before anything is written or
started: one ``dnb: error:`` line naming the option, exit code 2, no run folder made. Counts of processes
and threads are capped by the CPUs of the machine."""

from __future__ import annotations

import pytest

from dnb_env.limits import MAX_SEED, check_cpus, check_int, check_number, check_seed, machine_cpus
from registry.cli import main as cli

TOO_MANY = str(machine_cpus() + 1)
HUGE = "99999999999999999999999"

BASE = {
    "tournament": ["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--workers", "1",
                   "--no-progress"],
    "train": ["train", "--board", "2x2", "--iterations", "1", "--games", "2", "--simulations", "4", "--no-progress"],
    "solve": ["solve", "2x2", "--tt-mb", "1", "--no-progress"],
    "teach": ["teach", "--board", "3x3", "--undrawn", "8-10", "--positions", "20", "--players", "greedy",
              "--no-progress"],
    "fit": ["fit", "--board", "3x3", "--steps", "2", "--no-progress"],
}

# (command, option, value, what the message names)
CASES = [
    *[("tournament", "--games", v, "games") for v in ("0", "-1", "10000000")],
    *[("tournament", "--workers", v, "workers") for v in ("0", "-2", TOO_MANY, "100000")],
    *[("tournament", "--threads", v, "threads") for v in ("0", TOO_MANY, "4096")],
    *[("tournament", "--bootstrap", v, "bootstrap") for v in ("-1", "100000000")],
    *[("tournament", "--time-per-move", v, "--time-per-move") for v in ("nan", "inf", "-1", "0", "1e308")],
    *[("tournament", "--time-margin", v, "--time-margin") for v in ("nan", "-1", "inf")],
    *[("tournament", "--seed", v, "seed") for v in ("-1", HUGE)],
    *[("tournament", "--openings", v, "openings") for v in ("-1", "12", "1e9")],
    *[("train", "--iterations", v, "iterations") for v in ("0", "-1")],
    *[("train", "--games", v, "games_per_iteration") for v in ("0", "-3")],
    *[("train", "--simulations", v, "simulations") for v in ("0", "100000000")],
    *[("train", "--seed", v, "seed") for v in ("-1", HUGE)],
    *[("train", "--set", f"lr={v}", "lr") for v in ("nan", "inf", "-1", "0")],
    *[("train", "--set", f"workers={v}", "workers") for v in ("0", TOO_MANY, "100000")],
    *[("train", "--set", f"threads={v}", "threads") for v in ("0", TOO_MANY)],
    *[("train", "--set", f"{k}=0", k) for k in ("epochs", "batch_size")],
    *[("solve", "--tt-mb", v, "--tt-mb") for v in ("0", "-1", "nan", "inf", "1e12")],
    *[("solve", "--slice-nodes", v, "--slice-nodes") for v in ("0", "-1", "200")],
    *[("solve", "--save-every", v, "--save-every") for v in ("-1", "nan", "inf")],
    *[("solve", "--threads", v, "--threads") for v in ("0", "-1", TOO_MANY)],
    *[("teach", "--positions", v, "positions") for v in ("0", "-1")],
    *[("teach", "--workers", v, "--workers") for v in ("0", TOO_MANY, "100000")],
    *[("teach", "--shard-size", v, "shard_size") for v in ("0", "-1")],
    *[("teach", "--per-game", v, "per_game") for v in ("0", "-1")],
    *[("teach", "--explore", v, "explore") for v in ("nan", "-0.1", "1.5", "inf")],
    *[("teach", "--undrawn", v, "undrawn") for v in ("0-1000", "10-5", "-1")],
    *[("teach", "--seed", v, "seed") for v in ("-1", HUGE)],
    *[("teach", "--opening", v, "opening") for v in ("-5", "1000")],
    *[("fit", "--steps", v, "steps") for v in ("0", "-1")],
    *[("fit", "--batch-size", v, "batch_size") for v in ("0", "-1", "100000000")],
    *[("fit", "--lr", v, "lr") for v in ("nan", "inf", "-1", "0")],
    *[("fit", "--temperature", v, "temperature") for v in ("nan", "-1", "inf")],
    *[("fit", "--eval-every", v, "eval_every") for v in ("0", "-1")],
    ("fit", "--eval-positions", "-1", "eval_positions"),
    ("fit", "--positions", "-1", "positions"),
    *[("fit", "--threads", v, "--threads") for v in ("0", TOO_MANY, "4096")],
    *[("fit", "--workers", v, "--workers") for v in ("0", TOO_MANY, "100000")],
    *[("fit", "--seed", v, "seed") for v in ("-1", HUGE)],
]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    out = tmp_path_factory.mktemp("data") / "teach"
    assert cli(BASE["teach"] + ["--out", str(out)]) == 0
    return str(out)


@pytest.mark.parametrize("command,option,value,named", CASES,
                         ids=[f"{c}{o}={v}" for c, o, v, _ in CASES])
def test_a_number_out_of_range_is_refused_before_anything_is_written(command, option, value, named, dataset,
                                                                      tmp_path, capsys):
    out = tmp_path / "run"
    extra = ["--data", dataset] if command == "fit" else []
    assert cli(BASE[command] + extra + [option, value, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dnb: error:") and "Traceback" not in err, err
    assert named in lines[0], lines[0]
    assert not out.exists()


def test_the_range_checks():
    check_cpus(machine_cpus(), "--workers")
    with pytest.raises(ValueError, match=r"--workers must be at most .* \(the CPUs of this machine\)"):
        check_cpus(machine_cpus() + 1, "--workers")
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="--workers"):
            check_cpus(bad, "--workers")
    check_seed(0)
    check_seed(MAX_SEED)
    for bad in (-1, MAX_SEED + 1, 2.0):
        with pytest.raises(ValueError, match="seed"):
            check_seed(bad)
    check_number(1e-9, "lr", low=0, open_low=True)
    for bad in (0, -1, float("nan"), float("inf"), "1", None):
        with pytest.raises(ValueError, match="lr"):
            check_number(bad, "lr", low=0, open_low=True)
    check_int(5, "n", 5, 5)
    with pytest.raises(ValueError, match=r"n must be at most 4 \(why\), got 5"):
        check_int(5, "n", 1, 4, "why")
