#!/usr/bin/env bash
# Fine-tunes of the paper-size 5x5 pair on the zone where backward training starts (35-40 undrawn edges of
# greedy openings, data/teach5-gfar) mixed with the greedy-opening set, scored on data/teach5-gfar-held.
#   research/scripts/value35.sh df|rs NGFAR [TAG]     (one core; NGFAR: how many data/teach5-gfar positions)
#   STEPS=400 VW=4 research/scripts/value35.sh df 29000 df-v35-vw4     (fewer steps, value loss weight 4)
#   VFAR=N HELD=DIR EVAL=K: the first N result-only positions of data/teach5-vfar in front of the mix,
#   scored on the first K positions of DIR (research/scripts/value42.sh)
#   ENCODER=chainloop6_nim: another input (its first channels those of chainloop6_safe: the init weights are
#   widened, the new channels starting at zero)
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
fam=$1; n=$2; tag=${3:-$fam-v35-$n}
case $fam in
  df) model=(dotsformer); init=runs/exports/df-paper-mix.pt ;;
  rs) model=(--model resnet --set model.paper_heads=true); init=runs/exports/rs-paper-mix.pt ;;
esac
data=(--data data/teach5-gfar --data data/teach5-greedy)
total=$((n + 25000))
if [[ -n ${VFAR:-} ]]; then data=(--data data/teach5-vfar "${data[@]}"); total=$((total + VFAR)); fi
mkdir -p runs/fit
exec dnb fit "${model[@]}" --board 5x5 --preset paper --encoder ${ENCODER:-chainloop6_safe} --init "$init" \
    "${data[@]}" --positions $total \
    --held ${HELD:-data/teach5-gfar-held} --eval-positions ${EVAL:-1000} --steps ${STEPS:-800} --batch-size 128 --lr 3e-4 \
    --eval-every 200 --out runs/fit/$tag --no-progress ${VW:+--set loss.value_weight=$VW} ${RESUME:+--resume} >> runs/fit/$tag.log 2>&1
