#!/usr/bin/env bash
# Scores of the 5x5 fits with the safe-phase search with two sacrifices (chainloop6_sac2) beside the same
# recipe with chainloop6_safe (df/rs-100k-pair): held-out sets of three zones, the midgame benchmark, and
# whole games of the raw policies. Each part can run alone: research/scripts/eval-sac2.sh [held|midgame|raw]...
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
mkdir -p runs/exports runs/sac2-eval
parts=${*:-held midgame raw}
for n in df-100k-sac2 rs-100k-sac2; do
    [ -f runs/exports/$n.pt ] || dnb export runs/fit/$n runs/exports/$n.pt
done
NETS="df-100k-sac2=runs/exports/df-100k-sac2.pt rs-100k-sac2=runs/exports/rs-100k-sac2.pt \
df-100k-pair=runs/exports/df-100k-pair.pt rs-100k-pair=runs/exports/rs-100k-pair.pt"
for part in $parts; do
  case $part in
    held)
      for h in teach5-held teach5-far-held teach5-gfar-held; do
        python benchmarks/teacher_score.py --held data/$h --json runs/sac2-eval/$h.json $NETS \
            > runs/sac2-eval/$h.txt 2>&1
      done ;;
    midgame)
      python benchmarks/midgame.py --board 5x5 --positions 100 --agents "greedy,\
dotsformer:checkpoint=runs/exports/df-100k-sac2.pt,simulations=0,alphazero:checkpoint=runs/exports/rs-100k-sac2.pt,simulations=0,\
dotsformer:checkpoint=runs/exports/df-100k-pair.pt,simulations=0,alphazero:checkpoint=runs/exports/rs-100k-pair.pt,simulations=0,\
dotsformer:simulations=0,alphazero:simulations=0" > runs/sac2-eval/midgame-raw.txt 2>&1 ;;
    raw)
      dnb tournament --board 5x5 --agents "dotsformer:checkpoint=runs/exports/df-100k-sac2.pt,simulations=0,\
alphazero:checkpoint=runs/exports/rs-100k-sac2.pt,simulations=0,\
dotsformer:checkpoint=runs/exports/df-100k-pair.pt,simulations=0,alphazero:checkpoint=runs/exports/rs-100k-pair.pt,simulations=0,\
dotsformer:simulations=0,alphazero:simulations=0" --games 100 --openings 15:guided --seed 0 --workers 2 \
          --out runs/sac2-eval/raw-rr ;;
    *) echo "unknown part $part (held, midgame, raw)"; exit 2 ;;
  esac
done
