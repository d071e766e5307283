#!/usr/bin/env bash
# The shipped recipe with the chainloop6_nim input (runs/value42.sh with ENCODER=chainloop6_nim STEPS=1600, fits
# runs/fit/{df,rs}-nim42-10000-s1600) against the shipped pair, the same recipe with chainloop6_safe.
#   runs/eval-nim.sh PART...   (into runs/nim-eval/; tournaments resume from their folders)
#   export: the fits to runs/exports/{df,rs}-nim42.pt
#   held: benchmarks/teacher_score.py on the held-out teacher sets
#   midgame: raw policies on benchmarks/midgame.py (100 winning positions a step)
#   raw-h2h: the two nim42 raw policies against each other, 200 games
#   raw-ship: each nim42 raw policy against the shipped network of its family, raw, 200 games
set -eu
cd "$(dirname "$0")/.."
source .venv/bin/activate
out=runs/nim-eval
mkdir -p $out
NETS="df-ship=agents/checkpoints/dotsformer-5x5.pt rs-ship=agents/checkpoints/alphazero-5x5.pt df-nim42=runs/exports/df-nim42.pt rs-nim42=runs/exports/rs-nim42.pt"
DFN=dotsformer:checkpoint=runs/exports/df-nim42.pt; RSN=alphazero:checkpoint=runs/exports/rs-nim42.pt
RAW=simulations=0
common=(--board 5x5 --openings 15:guided --seed 0 --workers ${WORKERS:-2} --no-progress)
for part in "$@"; do
  case $part in
    export) for r in df rs; do dnb export runs/fit/$r-nim42-10000-s1600 runs/exports/$r-nim42.pt; done ;;
    held) for h in nfar-held gfar-held; do
            python benchmarks/teacher_score.py --held data/teach5-$h $NETS --json $out/$h.json > $out/$h.txt; done
          python benchmarks/teacher_score.py --held data/teach5-held --positions 2000 $NETS --json $out/held.json > $out/held.txt
          python benchmarks/teacher_score.py --held data/teach5-vfar-held $NETS --json $out/vfar-held.json > $out/vfar-held.txt ;;
    midgame) python benchmarks/midgame.py --board 5x5 --positions 100 --agents \
               "greedy,$DFN,$RAW,$RSN,$RAW,dotsformer,$RAW,alphazero,$RAW" > $out/midgame.txt ;;
    raw-h2h) dnb tournament "${common[@]}" --games 200 --agents "$DFN,$RAW,$RSN,$RAW" --out $out/raw-h2h ;;
    raw-ship) dnb tournament "${common[@]}" --games 200 --agents "$DFN,$RAW,dotsformer,$RAW" --out $out/raw-ship-df
              dnb tournament "${common[@]}" --games 200 --agents "$RSN,$RAW,alphazero,$RAW" --out $out/raw-ship-rs ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
