#!/usr/bin/env bash
# The 10,000-position Nimstring pair (runs/fit/{df,rs}-10k-nim-b, trained at 26-35 undrawn edges) searched: the
# same weights read chainloop6_nim38 (the Nimstring planes only up to 38 undrawn edges: the same input on their
# training positions, milliseconds a position inside a search), at the play defaults (200 simulations, the
# solver's zones on). Tournaments resume from their folders.
#   research/scripts/nim38.sh h2h|ship...    (h2h: the two against each other; ship: each against the shipped network of
#   its family, the weights shipped from 2026-11-28 named by their copies in runs/exports; GAMES=N games a
#   pair, default 100; WORKERS=N)
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
for n in df rs; do
  [ -f runs/exports/$n-10k-nim38.pt ] || python research/scripts/relabel.py runs/exports/$n-10k-nim-b.pt chainloop6_nim38 runs/exports/$n-10k-nim38.pt
done
DF=dotsformer:checkpoint=runs/exports/df-10k-nim38.pt
RS=alphazero:checkpoint=runs/exports/rs-10k-nim38.pt
common=(--board 5x5 --openings 15:guided --seed 0 --workers ${WORKERS:-1} --no-progress)
for part in "$@"; do
  case $part in
    h2h) dnb tournament "${common[@]}" --games ${GAMES:-100} --agents "$DF,$RS" --out runs/nim-eval/10k-nim38-h2h ;;
    ship) dnb tournament "${common[@]}" --games ${GAMES:-100} --agents "$DF,dotsformer:checkpoint=runs/exports/df-v42-10000-s1600.pt" --out runs/nim-eval/10k-nim38-ship-df
          dnb tournament "${common[@]}" --games ${GAMES:-100} --agents "$RS,alphazero:checkpoint=runs/exports/rs-v42-10000-s1600.pt" --out runs/nim-eval/10k-nim38-ship-rs ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
