#!/usr/bin/env bash
# What the networks and their searches know at 39-42 undrawn edges, on positions of the matches' kind
# (data/teach5-nfar-held, research/scripts/vfar.sh nheld): the raw value heads of the shipped pair and of the pair shipped
# before it, then the shipped pair's raw and searched (200 simulations, solver zones on) values.
#   research/scripts/eval-nfar.sh [raw|searched]...     (into runs/nfar-eval/)
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
mkdir -p runs/nfar-eval
parts=("$@"); [[ ${#parts[@]} -gt 0 ]] || parts=(raw searched)
for part in "${parts[@]}"; do
  case $part in
    raw) python benchmarks/teacher_score.py --held data/teach5-nfar-held --json runs/nfar-eval/nfar-held.json \
           df-paper-mix=runs/exports/df-paper-mix.pt rs-paper-mix=runs/exports/rs-paper-mix.pt \
           df-s1600=runs/exports/df-v42-10000-s1600.pt rs-s1600=runs/exports/rs-v42-10000-s1600.pt ;;
    searched) python benchmarks/searched_value.py --held data/teach5-nfar-held --workers 2 \
           --json runs/nfar-eval/searched.json df-raw=dotsformer:simulations=0 rs-raw=alphazero:simulations=0 \
           df-s200=dotsformer rs-s200=alphazero ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
