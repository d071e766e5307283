#!/usr/bin/env bash
# The four-sacrifice feature (chainloop6_sac4), 5x5: the 100k sac2 pair's weights read it in place of the
# two-sacrifice values (no retraining), beside the same weights with chainloop6_sac2 and _sac2_deep.
#   midgame  the raw policies on the midgame benchmark, 300 winning positions a step (steps 22-30)
#   held     the same networks scored on the held-out teacher sets (26-35 and 35-40 undrawn edges)
#   rules    the search alone as a move rule on those sets, with four sacrifices, within 2M positions
#   h2h      whole games, raw policies: each network with the four-sacrifice input against itself with the deep
#            two-sacrifice input, 400 games (resumable)
#   raw-rr   the pair with the four-sacrifice input against the shipped paper-size networks, raw policies,
#            200 games a pair (resumable)
# Each part can run alone: research/scripts/eval-sac4.sh [midgame|held|rules|h2h|raw-rr]...
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
mkdir -p runs/exports runs/sac4-eval
parts=${*:-midgame held rules h2h raw-rr}
# the same weights with another encoder name
for n in df rs; do
  for enc in chainloop6_sac2_deep:deep chainloop6_sac4:sac4; do
    [ -f runs/exports/$n-100k-sac2-${enc#*:}.pt ] || python research/scripts/relabel.py runs/exports/$n-100k-sac2.pt "${enc%:*}" "runs/exports/$n-100k-sac2-${enc#*:}.pt"
  done
done
for part in $parts; do
  case $part in
    midgame)
      agents="greedy"
      for n in df-100k-sac2 df-100k-sac2-deep df-100k-sac2-sac4 rs-100k-sac2 rs-100k-sac2-deep rs-100k-sac2-sac4; do
          family=dotsformer; case $n in rs-*) family=alphazero ;; esac
          agents="$agents,$family:checkpoint=runs/exports/$n.pt,simulations=0"
      done
      python benchmarks/midgame.py --board 5x5 --positions 300 --agents "$agents" > runs/sac4-eval/midgame-raw.txt 2>&1 ;;
    held)
      for held in teach5-held teach5-gfar-held; do
        python benchmarks/teacher_score.py --held data/$held --json runs/sac4-eval/$held.json \
            df-sac4=runs/exports/df-100k-sac2-sac4.pt rs-sac4=runs/exports/rs-100k-sac2-sac4.pt \
            > runs/sac4-eval/$held.txt 2>&1
      done ;;
    rules)
      for held in teach5-held teach5-gfar-held; do
        python benchmarks/teacher_rules.py --held data/$held --positions 1000 --sacrifices 4 --nodes 2000000 \
            > runs/sac4-eval/rules-$held.txt 2>&1
      done ;;
    h2h)
      for n in df rs; do
        family=dotsformer; case $n in rs) family=alphazero ;; esac
        dnb tournament --board 5x5 --games 400 --openings 15:guided --seed 0 --workers 1 \
            --agents "$family:checkpoint=runs/exports/$n-100k-sac2-sac4.pt,simulations=0,$family:checkpoint=runs/exports/$n-100k-sac2-deep.pt,simulations=0" \
            --out runs/sac4-eval/h2h-raw-$n > runs/sac4-eval/h2h-raw-$n.log 2>&1
      done ;;
    raw-rr)
      dnb tournament --board 5x5 --games 200 --openings 15:guided --seed 0 --workers 1 \
          --agents "dotsformer:checkpoint=runs/exports/df-100k-sac2-sac4.pt,simulations=0,alphazero:checkpoint=runs/exports/rs-100k-sac2-sac4.pt,simulations=0,dotsformer:simulations=0,alphazero:simulations=0" \
          --out runs/sac4-eval/raw-rr > runs/sac4-eval/raw-rr.log 2>&1 ;;
    *) echo "unknown part $part (midgame, held, rules, h2h, raw-rr)"; exit 2 ;;
  esac
done
