#!/usr/bin/env bash
# Scores of the runs/value42.sh fine-tunes beside the runs/value35.sh ones and the networks both started from.
#   runs/eval-v42.sh NVFAR
set -u
cd "$(dirname "$0")/.."
source .venv/bin/activate
n=${1:-4780}
mkdir -p runs/v42-eval
for r in df rs; do dnb export runs/fit/$r-v42-$n runs/exports/$r-v42.pt; done
NETS="df-paper-mix=runs/exports/df-paper-mix.pt rs-paper-mix=runs/exports/rs-paper-mix.pt df-v35=runs/exports/df-v35.pt rs-v35=runs/exports/rs-v35.pt df-v42=runs/exports/df-v42.pt rs-v42=runs/exports/rs-v42.pt"
python benchmarks/teacher_score.py --held data/teach5-vfar-held $NETS --json runs/v42-eval/vfar-held.json > runs/v42-eval/vfar-held.txt
python benchmarks/teacher_score.py --held data/teach5-gfar-held $NETS --json runs/v42-eval/gfar-held.json > runs/v42-eval/gfar-held.txt
python benchmarks/teacher_score.py --held data/teach5-held --positions 2000 $NETS --json runs/v42-eval/held.json > runs/v42-eval/held.txt
