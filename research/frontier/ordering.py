"""Where does the solver's win/loss test spend its nodes at 42 undrawn edges, and would another move order
make it cheaper?

`ordering.patch` (not kept in the solver) counts, by undrawn edges, the nodes of the search and how its cut nodes
cut (by the first move searched, or a later one), and takes settings that change the order (its preamble lists
them). This script labels the first N labelled positions of a frontier set with `Solver.can_win` under each
setting (`etc.py`'s solve: a fresh solver each, one thread, 512 MB, every answer checked against the set's
label), each setting in its own process, and prints time and nodes; with --stats, the patch's counts of the
first setting.

    git apply research/frontier/ordering.patch && make setup
    PYTHONPATH=. python research/frontier/ordering.py research/frontier/sets/5x5-s18.json 4 --stats \\
        DNB_KILLERS=0 DNB_KILLERS=1 DNB_KILLERS=2 DNB_SAC=1 DNB_SAC=2,DNB_SACG=1 DNB_SAC=2,DNB_SACG=2
    git apply -R research/frontier/ordering.patch && make setup

(`DNB_KILLERS=0` is the solver's own order.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ETC = Path(__file__).with_name("etc.py")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("set", help="a frontier set file")
    ap.add_argument("n", type=int, help="its first N labelled positions")
    ap.add_argument("settings", nargs="+", help="NAME=VALUE[,NAME=VALUE...] for each run")
    ap.add_argument("--stats", action="store_true", help="print the patch's counts of the first setting")
    args = ap.parse_args()
    for k, setting in enumerate(args.settings):
        env = dict(os.environ, **dict(kv.split("=", 1) for kv in setting.split(",")))
        r = subprocess.run([sys.executable, str(ETC), args.set, str(args.n), "--one"], env=env, capture_output=True,
                           text=True)
        if r.returncode:
            raise SystemExit(r.stderr)
        res = json.loads(r.stdout)
        print(f"{setting}: {sum(x[0] for x in res):.1f} s, {sum(x[1] for x in res) / 1e6:.1f}M nodes "
              f"({', '.join(f'{x[1] / 1e6:.1f}M' for x in res)})", flush=True)
        if args.stats and k == 0:
            print(r.stderr)


if __name__ == "__main__":
    main()
