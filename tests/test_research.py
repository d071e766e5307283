"""The research's place in the repository: research/data.py packs, unpacks and restores its data without
losing or overwriting anything; the tree stays a product with one research folder beside it."""

from __future__ import annotations

import pathlib
import subprocess
import tarfile

import numpy as np
import pytest

from conftest import load_script, research_data_module

ROOT = pathlib.Path(__file__).resolve().parents[1]
data = research_data_module()


def _tracked() -> list[str]:
    return subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True,
                          check=True).stdout.splitlines()


def _folder(root: pathlib.Path, kind: str, name: str) -> pathlib.Path:
    folder = root / kind / name
    (folder / "sub").mkdir(parents=True)
    (folder / "results.jsonl").write_text('{"game": 0}\n')
    (folder / "sub" / "shard.npy").write_bytes(b"\x00\x01" * 100)
    (folder / "checkpoint.pt").write_bytes(b"weights")            # left out of a run folder's archive
    (folder / "sub" / "curve.png").write_bytes(b"png")
    (folder / ".lock").write_text("pid 1")                         # a run's lock file and its holder
    (folder / ".lock.json").write_text("{}")
    (folder / "elo.csv.tmp42").write_text("half")                   # a killed run's temporary file
    return folder


def test_a_packed_folder_unpacks_to_the_same_files_and_packs_to_the_same_bytes(tmp_path):
    _folder(tmp_path, "runs", "study")
    out = data.pack("runs/study", tmp_path)
    assert out == tmp_path / "research" / "runs" / "study.tar.xz"
    first = out.read_bytes()
    with tarfile.open(out) as tar:
        assert sorted(tar.getnames()) == ["study/results.jsonl", "study/sub/shard.npy"]
    with pytest.raises(data.DataError, match="exists"):
        data.pack("runs/study", tmp_path)                          # no silent replacement
    assert data.pack("runs/study", tmp_path, force=True).read_bytes() == first
    dest = data.unpack("runs/study", tmp_path, into=tmp_path / "elsewhere")
    assert (dest / "results.jsonl").read_text() == '{"game": 0}\n'
    assert (dest / "sub" / "shard.npy").read_bytes() == b"\x00\x01" * 100
    assert not (dest / "checkpoint.pt").exists()
    assert data.archives(tmp_path) == ["runs/study"]


def test_unpack_refuses_what_it_would_overwrite_or_cannot_find(tmp_path):
    _folder(tmp_path, "data", "set")
    data.pack("data/set", tmp_path)
    with pytest.raises(data.DataError, match="exists"):
        data.unpack("data/set", tmp_path)                          # the working folder is there already
    assert (tmp_path / "data" / "set" / "checkpoint.pt").exists()  # and was left as it was
    with pytest.raises(data.DataError, match="no archive for data/other"):
        data.unpack("data/other", tmp_path)
    for bad in ("set", "data", "data/a/b", "../data/x", "elsewhere/set", "data/.hidden"):
        with pytest.raises(data.DataError, match="expected data/NAME or runs/NAME"):
            data.unpack(bad, tmp_path)


def test_an_archive_with_a_stray_member_is_refused_and_nothing_is_written(tmp_path):
    (tmp_path / "research" / "datasets").mkdir(parents=True)
    payload = tmp_path / "payload"
    payload.write_text("x")
    with tarfile.open(tmp_path / "research" / "datasets" / "set.tar.xz", "w:xz") as tar:
        tar.add(payload, arcname="set/ok.txt")
        tar.add(payload, arcname="other/evil.txt")
    with pytest.raises(data.DataError, match="one folder 'set'"):
        data.unpack("data/set", tmp_path)
    assert not (tmp_path / "data" / "set").exists() and not (tmp_path / "data" / "other").exists()
    assert [p.name for p in (tmp_path / "data").iterdir()] == []   # no temporary folder left behind


def test_restore_writes_back_files_from_a_commit_and_refuses_what_it_cannot(tmp_path):
    repo = tmp_path / "repo"
    (repo / "runs" / "fit").mkdir(parents=True)
    (repo / "runs" / "fit" / "checkpoint.pt").write_bytes(b"old weights")
    (repo / "runs" / "fit" / "metrics.jsonl").write_text("{}\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "old layout"], check=True)
    commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(git + ["rm", "-rq", "runs"], check=True)
    subprocess.run(git + ["commit", "-qm", "moved"], check=True)
    assert not (repo / "runs").exists()
    assert sorted(data.restore("runs/fit", repo, commit=commit)) == ["runs/fit/checkpoint.pt", "runs/fit/metrics.jsonl"]
    assert (repo / "runs" / "fit" / "checkpoint.pt").read_bytes() == b"old weights"
    with pytest.raises(data.DataError, match="exist already"):
        data.restore("runs/fit/checkpoint.pt", repo, commit=commit)
    with pytest.raises(data.DataError, match="was not tracked"):
        data.restore("runs/fitx", repo, commit=commit)             # a prefix of a name is not that name
    with pytest.raises(data.DataError, match="not in this clone"):
        data.restore("runs/fit", repo, commit="0" * 40)
    with pytest.raises(data.DataError, match="inside the repository"):
        data.restore("../outside", repo, commit=commit)


def test_the_command_line_says_what_is_wrong_and_exits_2(capsys):
    assert data.main(["unpack", "data/no-such-set"]) == 2
    assert "no archive for data/no-such-set" in capsys.readouterr().err
    assert data.main(["list"]) == 0
    listed = capsys.readouterr().out
    assert "data/teach5-held" in listed and "runs/nim-eval" in listed


def test_the_kept_held_out_sets_load_as_teacher_datasets(held_set):
    from agents.training.teacher import TeacherData
    for name in ("teach5-held", "teach5-nfar-held", "teach3-held"):
        d = TeacherData.load(held_set(name))                        # each shard checked against its sha256
        boxes = 9 if name.startswith("teach3") else 25
        assert len(d) > 0 and np.abs(d.value.astype(int)).max() <= boxes


def test_the_tree_is_the_product_with_one_research_folder():
    files = _tracked()
    research = [f for f in files if f.startswith("research/")]
    assert len(research) < 300, len(research)
    for top in ("runs/", "data/"):
        assert not [f for f in files if f.startswith(top)], f"{top} holds tracked files"
    big = [f for f in files if (ROOT / f).is_file() and (ROOT / f).stat().st_size > 20 * 2**20]
    assert not big, f"tracked files over 20 MiB: {big}"
    # every archive under research/ is one the README's index names
    readme = (ROOT / "research" / "README.md").read_text()
    for path in data.archives():
        assert data.archive_path(path).name in readme, f"{path} is not in research/README.md"
    assert len((ROOT / ".gitignore").read_text().splitlines()) <= 30


def _gate():
    return load_script("research/gate.py")


SHIPPED3 = ["--net", f"df=dotsformer:{ROOT / 'agents/checkpoints/dotsformer-3x3.pt'}",
            "--net", f"rs=alphazero:{ROOT / 'agents/checkpoints/alphazero-3x3.pt'}"]


def test_the_gate_scores_and_plays_a_pair_and_resumes(tmp_path, held_set, capsys):
    gate = _gate()
    data_dir = held_set("teach3-held").parent
    args = ["--tag", "t", "--board", "3x3", *SHIPPED3, "--out", str(tmp_path), "--data-dir", str(data_dir),
            "--held-positions", "40", "--games", "2", "--workers", "1", "--openings", "2:guided"]
    assert gate.main(args + ["held", "raw-h2h"]) == 0
    scored = (tmp_path / "t-held-teach3-held.txt").read_text()
    assert "df" in scored and "rs" in scored
    lines = (tmp_path / "t-raw-h2h" / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert gate.main(args + ["raw-h2h"]) == 0                       # resumed: nothing more to play
    assert len((tmp_path / "t-raw-h2h" / "results.jsonl").read_text().splitlines()) == 2


def test_the_gate_refuses_what_it_cannot_run(tmp_path, capsys):
    gate = _gate()
    base = ["--tag", "t", "--board", "3x3", "--out", str(tmp_path)]
    with pytest.raises(SystemExit):
        gate.main(base + ["--net", "df=dotsformer", "h2h"])                      # no checkpoint
    with pytest.raises(SystemExit, match="needs two --net"):
        gate.main(base + SHIPPED3[:2] + ["h2h"])
    with pytest.raises(SystemExit, match="needs --ref df="):
        gate.main(base + SHIPPED3 + ["--dry-run", "ship"])
    with pytest.raises(SystemExit):
        gate.main(base + ["--net", "df=dotsformer:no/such.pt", "h2h"])           # a missing file, before any game
    err = capsys.readouterr().err
    assert "no checkpoint " in err and "no/such.pt" in err
    assert not any(tmp_path.iterdir())
