#!/usr/bin/env bash
# The 500,000-position point of the scaling curve for both families at equal budget: data/teach5-a grown to
# 500,000 positions (the same command and seed that made its first 225,741), then the Dotsformer (cpu preset)
# and the 4-block ResNet fitted side by side on it, safe-phase input, 20,000 steps of 128, one core each.
# Every step resumes: `research/scripts/scale500.sh data`, then `research/scripts/scale500.sh fit` (run again after a kill), then
# `research/scripts/scale500.sh h2h-raw h2h-search` (the exported pair head to head, 400 games each, raw and searched).
set -u
cd "$(dirname "$0")/../.."
source .venv/bin/activate
case "${1:-}" in
data)
    dnb teach --board 5x5 --undrawn 26-35 --positions 500000 --per-game 4 --seed 0 --exclude data/teach5-held \
        --out data/teach5-a --workers 2 --no-progress ;;
fit)
    resume() { [ -f "runs/fit/$1/checkpoint.pt" ] && echo --resume; }
    dnb fit dotsformer --board 5x5 --encoder chainloop6_safe --data data/teach5-a --positions 500000 \
        --held data/teach5-held --steps 20000 --batch-size 128 --eval-every 1000 --out runs/fit/df-500k-pair \
        --no-progress $(resume df-500k-pair) >> runs/fit/df-500k-pair.log 2>&1 &
    dnb fit --model resnet --set model.blocks=4 --set model.paper_heads=true --board 5x5 --encoder chainloop6_safe \
        --data data/teach5-a --positions 500000 --held data/teach5-held --steps 20000 --batch-size 128 \
        --eval-every 1000 --out runs/fit/rs-500k-pair --no-progress $(resume rs-500k-pair) \
        >> runs/fit/rs-500k-pair.log 2>&1 &
    wait ;;
h2h-raw|h2h-search)
    pair=(dotsformer:checkpoint=runs/exports/df-500k-pair.pt alphazero:checkpoint=runs/exports/rs-500k-pair.pt)
    [ "$1" = h2h-raw ] && pair=("${pair[0]},simulations=0" "${pair[1]},simulations=0")
    dnb tournament --board 5x5 --agents "${pair[0]},${pair[1]}" --games 400 --openings 15:guided --seed 0 \
        --workers ${WORKERS:-2} --no-progress --out runs/scale500-eval/$1 ;;
*)
    echo "usage: research/scripts/scale500.sh data|fit|h2h-raw|h2h-search" >&2; exit 2 ;;
esac
