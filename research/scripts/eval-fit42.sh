#!/usr/bin/env bash
# The research/scripts/fit42.sh fits scored on their own training positions (the first 2,000 of data/teach5-vfar) and on
# the matches' kind of held-out positions (data/teach5-nfar-held), beside the shipped pair they started from.
#   research/scripts/eval-fit42.sh SUFFIX     (SUFFIX: 2000-800 or 2000-lr3; into runs/fit42-eval/)
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
t=$1
mkdir -p runs/fit42-eval
nets=(df-s1600=runs/exports/df-v42-10000-s1600.pt rs-s1600=runs/exports/rs-v42-10000-s1600.pt
      df-fit42-$t=runs/fit/df-fit42-$t/checkpoint.pt rs-fit42-$t=runs/fit/rs-fit42-$t/checkpoint.pt)
python benchmarks/teacher_score.py --held data/teach5-vfar --positions 2000 --json runs/fit42-eval/train-$t.json "${nets[@]}" \
    > runs/fit42-eval/train-$t.txt
python benchmarks/teacher_score.py --held data/teach5-nfar-held --json runs/fit42-eval/nfar-held-$t.json "${nets[@]}" \
    > runs/fit42-eval/nfar-held-$t.txt
