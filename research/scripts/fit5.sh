#!/usr/bin/env bash
# the 5x5 pair at equal budget: 100,000 teacher positions, 10,000 steps of 128, safe-phase input
set -u
cd "$(dirname "$0")/../.."
source .venv/bin/activate
R=${1:-}
dnb fit dotsformer --board 5x5 --encoder chainloop6_safe --data data/teach5-a --positions 100000 \
    --held data/teach5-held --steps 10000 --batch-size 128 --eval-every 1000 --out runs/fit/df-100k-pair --no-progress $R \
    > runs/fit/df-100k-pair.log 2>&1 &
dnb fit --model resnet --set model.blocks=4 --set model.paper_heads=true --board 5x5 --encoder chainloop6_safe \
    --data data/teach5-a --positions 100000 --held data/teach5-held --steps 10000 --batch-size 128 --eval-every 1000 \
    --out runs/fit/rs-100k-pair --no-progress $R > runs/fit/rs-100k-pair.log 2>&1 &
wait
