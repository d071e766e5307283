#!/usr/bin/env bash
# Scores of the research/scripts/value35.sh fine-tunes beside the networks they started from.
set -u
cd "$(dirname "$0")/../.."
source .venv/bin/activate
mkdir -p runs/v35-eval
for r in df rs; do dnb export runs/fit/$r-v35-29000 runs/exports/$r-v35.pt; done
NETS="df-paper-mix=runs/exports/df-paper-mix.pt df-v35=runs/exports/df-v35.pt rs-paper-mix=runs/exports/rs-paper-mix.pt rs-v35=runs/exports/rs-v35.pt"
python benchmarks/teacher_score.py --held data/teach5-gfar-held $NETS --json runs/v35-eval/gfar-held.json > runs/v35-eval/gfar-held.txt
python benchmarks/teacher_score.py --held data/teach5-greedy-held --positions 2000 $NETS --json runs/v35-eval/greedy-held.json > runs/v35-eval/greedy-held.txt
python benchmarks/teacher_score.py --held data/teach5-held --positions 2000 $NETS --json runs/v35-eval/held.json > runs/v35-eval/held.txt
for m in 21 23 25; do python benchmarks/value_sign.py --move $m --positions 60 $NETS > runs/v35-eval/value-sign-$m.txt; done
