#!/usr/bin/env bash
# The frontier benchmark's 5x5 position sets (benchmarks/frontier.py make), most valuable first: steps 20 and
# 18, then a first part of 16 and a few positions of 14, then both grown. Every make resumes its file, so
# running this script again after a stop continues where it was (finished parts cost nothing).
#   nohup nice -n 10 bash research/frontier/make-sets.sh > /tmp/frontier-make.log 2>&1 &
set -euo pipefail
cd "$(dirname "$0")/../.."
# this checkout's packages, not an install of another checkout (a script's folder, not the current one, is on
# the path): the agents' games that give the positions are this checkout's agents
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python}
frontier_make() { "$PY" benchmarks/frontier.py make --kinds agents,alphabeta-greedy,guided --seed 1 --threads 1 --tt-mb 1024 "$@"; }
S=${SETS:-research/frontier/sets}
frontier_make --out $S/5x5-s20.json --step 20 --per-kind 20 --node-limit 300000000
frontier_make --out $S/5x5-s18.json --step 18 --per-kind 20 --node-limit 300000000
frontier_make --out $S/5x5-s16.json --step 16 --per-kind 10 --node-limit 300000000
frontier_make --out $S/5x5-s14.json --step 14 --per-kind 2 --node-limit 1000000000
frontier_make --out $S/5x5-s16.json --step 16 --per-kind 20 --node-limit 300000000
frontier_make --out $S/5x5-s14.json --step 14 --per-kind 5 --node-limit 1000000000
