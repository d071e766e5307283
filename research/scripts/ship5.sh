#!/usr/bin/env bash
# whole-game self-play of the 5x5 pair from their teacher fits, teacher batches mixed in (one core each)
# usage: research/scripts/ship5.sh df|rs [--resume]
set -u
cd "$(dirname "$0")/../.."
source .venv/bin/activate
which=$1; shift
common=(--board 5x5 --preset cpu --encoder chainloop6_safe --iterations 400 --no-progress
        --set teacher.data=data/teach5-a --set teacher.fraction=0.5)
if [ "$which" = df ]; then
    exec dnb train dotsformer "${common[@]}" --out runs/ship5/df --set init=runs/fit/df-100k-pair/checkpoint.pt "$@" >> runs/ship5/df.log 2>&1
else
    exec dnb train alphazero "${common[@]}" --out runs/ship5/rs --set model.blocks=4 --set model.paper_heads=true \
        --set init=runs/fit/rs-100k-pair/checkpoint.pt "$@" >> runs/ship5/rs.log 2>&1
fi
