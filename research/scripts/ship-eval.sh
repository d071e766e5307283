#!/usr/bin/env bash
# The ship gate of the paper-size 5x5 pair (runs/exports/{df,rs}-paper-mix.pt), at the play defaults
# (200 simulations, the solver's zones on). Every tournament resumes from its folder.
# The weights shipped before them are kept as runs/exports/df5-selfplay.pt and az5-selfplay.pt.
# usage: [WORKERS=N] research/scripts/ship-eval.sh PART...
#   (PART: h2h, old-df, old-rs, base-df, base-rs, raw-old, old-base, v35-df, TAG-h2h, TAG-raw, TAG-ship, TAG-shipraw, TAG-base)
# v35-df: the Dotsformer fine-tuned on the zone where backward training starts (research/scripts/value35.sh df 29000,
# exported by research/scripts/eval-v35.sh) against the shipped ResNet, searched, 400 games (the schedule of h2h); v35-h2h: both fine-tunes
# against each other, searched, 200 games. TAG-h2h: runs/exports/df-TAG.pt against runs/exports/rs-TAG.pt on that
# schedule: v35-h2h, v42-h2h (the fine-tunes that also saw result-only positions at 39-42 undrawn edges,
# research/scripts/value42.sh, exported by research/scripts/eval-v42.sh), v42-N-h2h (the same with N of those positions). GAMES=400 extends
# a TAG-h2h match to 400 games. TAG-raw: the same two networks' raw policies (simulations=0), 200 games.
# TAG-ship: df-TAG.pt against the shipped Dotsformer and rs-TAG.pt against the shipped ResNet, searched, 200
# games each (runs/ship-eval/TAG-ship-df, TAG-ship-rs); TAG-shipraw: the same with the raw policies.
# TAG-base: both against the baselines, searched, 50 games a pair (runs/ship-eval/TAG-base-df, TAG-base-rs).
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
DF=dotsformer:checkpoint=runs/exports/df-paper-mix.pt
RS=alphazero:checkpoint=runs/exports/rs-paper-mix.pt
OLD_DF=dotsformer:checkpoint=runs/exports/df5-selfplay.pt
OLD_AZ=alphazero:checkpoint=runs/exports/az5-selfplay.pt
OLD="$OLD_DF,$OLD_AZ"
RAW=simulations=0
BASE="random,greedy,alphabeta:depth=4,mcts,prsboxes"
common=(--board 5x5 --openings 15:guided --seed 0 --workers ${WORKERS:-2} --no-progress)
for p in "$@"; do
  case $p in
    h2h) dnb tournament "${common[@]}" --agents "$DF,$RS" --games 400 --out runs/ship-eval/h2h-search ;;
    old-df) dnb tournament "${common[@]}" --mode gauntlet --agents "$DF,$OLD" --games 100 --out runs/ship-eval/old-df ;;
    old-rs) dnb tournament "${common[@]}" --mode gauntlet --agents "$RS,$OLD" --games 100 --out runs/ship-eval/old-rs ;;
    base-df) dnb tournament "${common[@]}" --mode gauntlet --agents "$DF,$BASE" --games 50 --out runs/ship-eval/base-df ;;
    base-rs) dnb tournament "${common[@]}" --mode gauntlet --agents "$RS,$BASE" --games 50 --out runs/ship-eval/base-rs ;;
    raw-old) dnb tournament "${common[@]}" --agents "$DF,$RAW,$RS,$RAW,$OLD_DF,$RAW,$OLD_AZ,$RAW" --games 100 \
               --out runs/ship-eval/raw-old ;;
    v35-df) dnb tournament "${common[@]}" --agents "dotsformer:checkpoint=runs/exports/df-v35.pt,$RS" --games 400 \
               --out runs/ship-eval/v35-df ;;
    *-h2h) t=${p%-h2h}; dnb tournament "${common[@]}" --games ${GAMES:-200} --out runs/ship-eval/$p \
               --agents "dotsformer:checkpoint=runs/exports/df-$t.pt,alphazero:checkpoint=runs/exports/rs-$t.pt" ;;
    *-ship) t=${p%-ship}   # each fine-tune against the shipped network of its family, searched
            dnb tournament "${common[@]}" --games ${GAMES:-200} --out runs/ship-eval/$t-ship-df \
               --agents "dotsformer:checkpoint=runs/exports/df-$t.pt,$DF"
            dnb tournament "${common[@]}" --games ${GAMES:-200} --out runs/ship-eval/$t-ship-rs \
               --agents "alphazero:checkpoint=runs/exports/rs-$t.pt,$RS" ;;
    *-shipraw) t=${p%-shipraw}   # the same with the raw policies
            dnb tournament "${common[@]}" --games ${GAMES:-200} --out runs/ship-eval/$t-shipraw-df \
               --agents "dotsformer:checkpoint=runs/exports/df-$t.pt,$RAW,$DF,$RAW"
            dnb tournament "${common[@]}" --games ${GAMES:-200} --out runs/ship-eval/$t-shipraw-rs \
               --agents "alphazero:checkpoint=runs/exports/rs-$t.pt,$RAW,$RS,$RAW" ;;
    *-base) t=${p%-base}   # each fine-tune against the baselines, searched (the base-df / base-rs gauntlets)
            dnb tournament "${common[@]}" --mode gauntlet --agents "dotsformer:checkpoint=runs/exports/df-$t.pt,$BASE" \
               --games 50 --out runs/ship-eval/$t-base-df
            dnb tournament "${common[@]}" --mode gauntlet --agents "alphazero:checkpoint=runs/exports/rs-$t.pt,$BASE" \
               --games 50 --out runs/ship-eval/$t-base-rs ;;
    *-raw) t=${p%-raw}; dnb tournament "${common[@]}" --games ${GAMES:-200} --out runs/ship-eval/$p \
               --agents "dotsformer:checkpoint=runs/exports/df-$t.pt,$RAW,alphazero:checkpoint=runs/exports/rs-$t.pt,$RAW" ;;
    old-base) dnb tournament "${common[@]}" --mode gauntlet --agents "prsboxes,$OLD" --games 50 --out runs/ship-eval/old-base ;;
    *) echo "unknown part $p" >&2; exit 2 ;;
  esac
done
