#!/usr/bin/env bash
# Can the shipped 5x5 networks fit the result at 39-42 undrawn edges at all? Each fine-tuned on the first N
# result-only positions of data/teach5-vfar alone (value loss only: those rows have no policy target) for
# STEPS steps of 128, scored on data/teach5-vfar-held; then research/scripts/eval-fit42.sh scores the fit on its own
# training positions beside the held-out ones.
#   research/scripts/fit42.sh df|rs N [STEPS] [TAG]     (one core)
#   LR=1e-3 SCHEDULE=constant research/scripts/fit42.sh rs 2000 1600 rs-fit42-2000-lr3     (another learning rate)
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
fam=$1; n=$2; steps=${3:-800}; tag=${4:-$fam-fit42-$n-$steps}
case $fam in
  df) model=(dotsformer); init=runs/exports/df-v42-10000-s1600.pt ;;
  rs) model=(--model resnet --set model.paper_heads=true); init=runs/exports/rs-v42-10000-s1600.pt ;;
  *) echo "family: df or rs" >&2; exit 2 ;;
esac
mkdir -p runs/fit
exec dnb fit "${model[@]}" --board 5x5 --preset paper --encoder chainloop6_safe --init "$init" \
    --data data/teach5-vfar --positions "$n" --held data/teach5-vfar-held --eval-positions 500 \
    --steps "$steps" --batch-size 128 --lr ${LR:-3e-4} --lr-schedule ${SCHEDULE:-cosine} --eval-every 200 --out runs/fit/$tag --no-progress \
    ${RESUME:+--resume} >> runs/fit/$tag.log 2>&1
