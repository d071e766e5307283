#!/usr/bin/env bash
# Result-only teacher data at 39-42 undrawn edges (moves 18-21 of 5x5, where searched games are decided
# before the solver takes over): held-out set, then the training set. Resumable: run again.
#   research/scripts/vfar.sh [held|train|nheld] [WORKERS]
# nheld: 500 held-out positions of the same kind from the raw policies' games of the shipped pair after 15
# random opening moves (the kind of games the matches play), data/teach5-nfar-held.
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
part=${1:-both}; w=${2:-2}
common=(--board 5x5 --undrawn 39-42 --margin-max 36 --move-labels-max 38 --per-game 2 --shard-size 10
        --players greedy --opening 0 --explore 0.05 --node-limit 40000000 --workers "$w" --no-progress)
if [[ $part == held || $part == both ]]; then
  dnb teach "${common[@]}" --positions 500 --seed 17 --exclude data/teach5-gfar-held --out data/teach5-vfar-held
fi
if [[ $part == nheld ]]; then
  dnb teach "${common[@]/greedy/dotsformer:simulations=0,alphazero:simulations=0}" --opening 15 --positions 500 \
      --seed 31 --exclude data/teach5-vfar-held --exclude data/teach5-gfar-held --out data/teach5-nfar-held
fi
if [[ $part == train || $part == both ]]; then
  dnb teach "${common[@]}" --positions ${N:-100000} --seed 18 --exclude data/teach5-vfar-held \
      --exclude data/teach5-gfar-held --out data/teach5-vfar
fi
