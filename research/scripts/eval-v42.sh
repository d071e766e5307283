#!/usr/bin/env bash
# Scores of the research/scripts/value42.sh fine-tunes beside the research/scripts/value35.sh ones and the networks both started from.
#   research/scripts/eval-v42.sh NVFAR [TAG]   (exports runs/fit/{df,rs}-v42-NVFAR to runs/exports/{df,rs}-TAG.pt, TAG v42 by
#   default; writes runs/TAG-eval; the networks whose export is missing are left out with a note)
#   research/scripts/eval-v42.sh 10000-s1600 v42-10000-s1600   (the fits of STEPS=1600 research/scripts/value42.sh df|rs 10000 df|rs-v42-10000-s1600)
set -u
cd "$(dirname "$0")/../.."
source .venv/bin/activate
n=${1:-4780}; tag=${2:-v42}; out=runs/$tag-eval
mkdir -p $out
for r in df rs; do dnb export runs/fit/$r-v42-$n runs/exports/$r-$tag.pt; done
NETS="df-paper-mix=runs/exports/df-paper-mix.pt rs-paper-mix=runs/exports/rs-paper-mix.pt df-v35=runs/exports/df-v35.pt rs-v35=runs/exports/rs-v35.pt df-v42=runs/exports/df-v42.pt rs-v42=runs/exports/rs-v42.pt"
if [[ $tag != v42 ]]; then NETS="$NETS df-$tag=runs/exports/df-$tag.pt rs-$tag=runs/exports/rs-$tag.pt"; fi
kept=""; for net in $NETS; do [[ -f ${net#*=} ]] && kept="$kept $net" || echo "skipped ${net%%=*}: no ${net#*=}" >&2; done; NETS=$kept
python benchmarks/teacher_score.py --held data/teach5-vfar-held $NETS --json $out/vfar-held.json > $out/vfar-held.txt
python benchmarks/teacher_score.py --held data/teach5-gfar-held $NETS --json $out/gfar-held.json > $out/gfar-held.txt
python benchmarks/teacher_score.py --held data/teach5-held --positions 2000 $NETS --json $out/held.json > $out/held.txt
