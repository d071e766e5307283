#!/usr/bin/env bash
# The two-sacrifice feature at ten times its budget (chainloop6_sac2_deep), 5x5:
#   held     the fits on the 35-40 zone's data (runs/fit/df-gfar-*) and the 100k sac2 pair with its own and
#            with the deep feature, scored on the held-out set of that zone
#   midgame  the same networks' raw policies on the midgame benchmark
# Each part can run alone: research/scripts/eval-deep.sh [held|midgame]...
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
mkdir -p runs/exports runs/deep-eval
parts=${*:-held midgame}
for enc in chainloop6_sac2_deep chainloop6_sac2 chainloop6_safe; do
    [ -f runs/exports/df-gfar-$enc.pt ] || dnb export runs/fit/df-gfar-$enc runs/exports/df-gfar-$enc.pt
done
# the 100k sac2 pair with the deep feature: the same weights, the encoder name changed
for n in df rs; do
    [ -f runs/exports/$n-100k-sac2-deep.pt ] || python research/scripts/relabel.py runs/exports/$n-100k-sac2.pt chainloop6_sac2_deep runs/exports/$n-100k-sac2-deep.pt
done
NETS="df-gfar-deep=runs/exports/df-gfar-chainloop6_sac2_deep.pt df-gfar-sac2=runs/exports/df-gfar-chainloop6_sac2.pt \
df-gfar-safe=runs/exports/df-gfar-chainloop6_safe.pt df-100k-sac2=runs/exports/df-100k-sac2.pt \
df-100k-sac2-deep=runs/exports/df-100k-sac2-deep.pt rs-100k-sac2=runs/exports/rs-100k-sac2.pt \
rs-100k-sac2-deep=runs/exports/rs-100k-sac2-deep.pt"
for part in $parts; do
  case $part in
    held)
      python benchmarks/teacher_score.py --held data/teach5-gfar-held --json runs/deep-eval/teach5-gfar-held.json \
          $NETS > runs/deep-eval/teach5-gfar-held.txt 2>&1 ;;
    midgame)
      agents="greedy"
      for n in df-100k-sac2 df-100k-sac2-deep rs-100k-sac2 rs-100k-sac2-deep df-gfar-chainloop6_sac2_deep df-gfar-chainloop6_sac2; do
          family=dotsformer; case $n in rs-*) family=alphazero ;; esac
          agents="$agents,$family:checkpoint=runs/exports/$n.pt,simulations=0"
      done
      python benchmarks/midgame.py --board 5x5 --positions 100 --agents "$agents" > runs/deep-eval/midgame-raw.txt 2>&1 ;;
    *) echo "unknown part $part (held, midgame)"; exit 2 ;;
  esac
done
