#!/usr/bin/env bash
# Fine-tunes of the paper-size 5x5 pair on the zone where searched games are decided before the solver takes
# over: the result-only positions at 39-42 undrawn edges (data/teach5-vfar, runs/vfar.sh) added in front of
# the runs/value35.sh mix (35-40 undrawn of data/teach5-gfar, then data/teach5-greedy); scored on
# data/teach5-vfar-held. Same recipe as runs/value35.sh otherwise (800 steps of 128, Adam 3e-4 cosine).
#   runs/value42.sh df|rs NVFAR [TAG]     (one core; NVFAR: how many data/teach5-vfar positions)
set -eu
cd "$(dirname "$0")/.."
source .venv/bin/activate
fam=$1; n=$2; tag=${3:-$fam-v42-$n}
case $fam in
  df) model=(dotsformer); init=runs/exports/df-paper-mix.pt ;;
  rs) model=(--model resnet --set model.paper_heads=true); init=runs/exports/rs-paper-mix.pt ;;
esac
mkdir -p runs/fit
exec dnb fit "${model[@]}" --board 5x5 --preset paper --encoder chainloop6_safe --init "$init" \
    --data data/teach5-vfar --data data/teach5-gfar --data data/teach5-greedy --positions $((n + 54000)) \
    --held data/teach5-vfar-held --steps ${STEPS:-800} --batch-size 128 --lr 3e-4 \
    --eval-every 200 --out runs/fit/$tag --no-progress ${RESUME:+--resume} >> runs/fit/$tag.log 2>&1
