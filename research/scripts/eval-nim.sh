#!/usr/bin/env bash
# The shipped recipe with a Nimstring input (research/scripts/value42.sh with ENCODER=chainloop6_nim or chainloop6_nim38,
# STEPS=1600: fits runs/fit/{df,rs}-TAG-10000-s1600) against each other, the pair they replace as the shipped
# weights (runs/exports/{df,rs}-v42-10000-s1600.pt) and the baselines: the ship gate of the section "Nimstring"
# of the teacher page.
#   research/scripts/eval-nim.sh TAG PART...   (TAG nim42 or nim38; into runs/nim-eval/TAG-*; tournaments resume from
#   their folders; WORKERS=N, default 2; GAMES=N overrides a part's number of games)
#   export: the fits to runs/exports/{df,rs}-TAG.pt
#   held: benchmarks/teacher_score.py on the held-out teacher sets
#   midgame: raw policies on benchmarks/midgame.py (100 winning positions a step)
#   midsearch: the same searched, 50 simulations with the solver off (the two side by side)
#   raw-h2h / h2h: the two raw / searched (play defaults) against each other, 400 games
#   ship / shipraw: each against the replaced network of its family, searched / raw, 200 games
#   base: each against the baselines, searched, 50 games a pair
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
tag=$1; shift
out=runs/nim-eval; p=$out/$tag
mkdir -p $out
NETS="df-ship=runs/exports/df-v42-10000-s1600.pt rs-ship=runs/exports/rs-v42-10000-s1600.pt df-$tag=runs/exports/df-$tag.pt rs-$tag=runs/exports/rs-$tag.pt"
DFN=dotsformer:checkpoint=runs/exports/df-$tag.pt; RSN=alphazero:checkpoint=runs/exports/rs-$tag.pt
# the pair shipped before the Nimstring input, named by its copies (agents/checkpoints/ now holds the nim38 pair)
DFS=dotsformer:checkpoint=runs/exports/df-v42-10000-s1600.pt; RSS=alphazero:checkpoint=runs/exports/rs-v42-10000-s1600.pt
RAW=simulations=0
BASE="random,greedy,alphabeta:depth=4,mcts,prsboxes"
common=(--board 5x5 --openings 15:guided --seed 0 --workers ${WORKERS:-2} --no-progress)
for part in "$@"; do
  case $part in
    export) for r in df rs; do dnb export runs/fit/$r-$tag-10000-s1600 runs/exports/$r-$tag.pt; done ;;
    held) for h in nfar-held gfar-held vfar-held; do
            python benchmarks/teacher_score.py --held data/teach5-$h $NETS --json $p-$h.json > $p-$h.txt; done
          python benchmarks/teacher_score.py --held data/teach5-held --positions 2000 $NETS --json $p-held.json > $p-held.txt ;;
    midgame) python benchmarks/midgame.py --board 5x5 --positions 100 --agents "greedy,$DFN,$RAW,$RSN,$RAW" > $p-midgame.txt ;;
    midsearch) S=simulations=50,solve_root=0,solve_leaf=0
               python benchmarks/midgame.py --board 5x5 --positions 100 --agents "$DFN,$S" > $p-midsearch-df.txt &
               python benchmarks/midgame.py --board 5x5 --positions 100 --agents "$RSN,$S" > $p-midsearch-rs.txt
               wait ;;
    raw-h2h) dnb tournament "${common[@]}" --games ${GAMES:-400} --agents "$DFN,$RAW,$RSN,$RAW" --out $p-raw-h2h ;;
    h2h) dnb tournament "${common[@]}" --games ${GAMES:-400} --agents "$DFN,$RSN" --out $p-h2h ;;
    ship) dnb tournament "${common[@]}" --games ${GAMES:-200} --agents "$DFN,$DFS" --out $p-ship-df
          dnb tournament "${common[@]}" --games ${GAMES:-200} --agents "$RSN,$RSS" --out $p-ship-rs ;;
    shipraw) dnb tournament "${common[@]}" --games ${GAMES:-200} --agents "$DFN,$RAW,$DFS,$RAW" --out $p-shipraw-df
             dnb tournament "${common[@]}" --games ${GAMES:-200} --agents "$RSN,$RAW,$RSS,$RAW" --out $p-shipraw-rs ;;
    base) dnb tournament "${common[@]}" --mode gauntlet --games ${GAMES:-50} --agents "$DFN,$BASE" --out $p-base-df
          dnb tournament "${common[@]}" --mode gauntlet --games ${GAMES:-50} --agents "$RSN,$BASE" --out $p-base-rs ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
