#!/usr/bin/env bash
# The 3x3 pair of the teacher page's section "The 3x3 pair from the teacher" again with the Nimstring input
# (chainloop6_nim: on 3x3 every position is within the Nimstring search's reach): the same data, schedule and
# seeds as the shipped 3x3 pair (chainloop6_safe), only the input changed.
#   research/scripts/nim3.sh PART...   (into data/teach3-*, runs/fit/{df,rs}3-nim, runs/exports/, runs/nim3-eval/)
#   data: the teacher sets, rebuilt as they were made (the agent mix of then: its raw policies are the 3x3
#         weights shipped before the teacher pair, taken from git into runs/old3/)
#   fit: the Dotsformer and the 4x32 ResNet side by side, one core each (3,000 steps of 128)
#   export: the fits to runs/exports/{df,rs}3-nim.pt
#   held: benchmarks/teacher_score.py on data/teach3-held, the two beside the shipped pair
#   midgame: raw policies on benchmarks/midgame.py (100 winning positions a step)
#   raw-h2h / h2h: the nim pair raw / searched with the solver off against each other (400 games)
#   ship: each nim network raw against the network of its family it replaces as the shipped weights (400 games)
#   shipsearch: the same searched with the solver off (200 games)
set -eu
cd "$(dirname "$0")/../.."
source .venv/bin/activate
out=runs/nim3-eval
mkdir -p $out runs/fit runs/exports
DF=runs/exports/df3-nim.pt; RS=runs/exports/rs3-nim.pt
# the pair they replace as the shipped 3x3 weights, named by its copies (agents/checkpoints/ holds the nim pair now)
DFS=runs/exports/df3-teach.pt; RSS=runs/exports/rs3-teach.pt
RAW=simulations=0; SOFF=simulations=50,solve_root=0,solve_leaf=0
common=(--board 3x3 --openings 4:guided --seed 0 --workers ${WORKERS:-2} --no-progress)
fit() {  # fit FAMILY ENCODER TAG
  local model=(dotsformer)
  [ "$1" = rs ] && model=(--model resnet --set model.blocks=4 --set model.paper_heads=true)
  dnb fit "${model[@]}" --board 3x3 --encoder "$2" --data data/teach3-a --held data/teach3-held \
    --steps 3000 --batch-size 128 --eval-every 500 --out runs/fit/$3 --no-progress > runs/fit/$3.log 2>&1
}
for part in "$@"; do
  case $part in
    data) mkdir -p runs/old3
          for f in dotsformer alphazero; do git show 7b0dc8a^:agents/checkpoints/$f-3x3.pt > runs/old3/$f-3x3.pt; done
          P="greedy,alphabeta:depth=2,prsboxes,alphazero:checkpoint=runs/old3/alphazero-3x3.pt,$RAW,dotsformer:checkpoint=runs/old3/dotsformer-3x3.pt,$RAW"
          dnb teach --board 3x3 --undrawn 1-23 --positions 2000 --per-game 4 --seed 1 --players "$P" --out data/teach3-held --no-progress
          dnb teach --board 3x3 --undrawn 1-23 --positions 15000 --per-game 4 --seed 0 --players "$P" \
            --exclude data/teach3-held --out data/teach3-a --no-progress ;;
    fit) fit df chainloop6_nim df3-nim & fit rs chainloop6_nim rs3-nim; wait ;;
    export) for t in df3-nim rs3-nim; do dnb export runs/fit/$t runs/exports/$t.pt; done ;;
    held) python benchmarks/teacher_score.py --held data/teach3-held df-shipped=$DFS rs-shipped=$RSS df3-nim=$DF rs3-nim=$RS --json $out/held.json > $out/held.txt ;;
    midgame) python benchmarks/midgame.py --board 3x3 --positions 100 \
               --agents "greedy,dotsformer:checkpoint=$DF,$RAW,alphazero:checkpoint=$RS,$RAW" > $out/midgame.txt ;;
    raw-h2h) dnb tournament "${common[@]}" --games 400 --agents "dotsformer:checkpoint=$DF,$RAW,alphazero:checkpoint=$RS,$RAW" --out $out/raw-h2h ;;
    h2h) dnb tournament "${common[@]}" --games 400 --agents "dotsformer:checkpoint=$DF,$SOFF,alphazero:checkpoint=$RS,$SOFF" --out $out/h2h ;;
    ship) dnb tournament "${common[@]}" --games 400 --agents "dotsformer:checkpoint=$DF,$RAW,dotsformer:checkpoint=$DFS,$RAW" --out $out/ship-df
          dnb tournament "${common[@]}" --games 400 --agents "alphazero:checkpoint=$RS,$RAW,alphazero:checkpoint=$RSS,$RAW" --out $out/ship-rs ;;
    shipsearch) dnb tournament "${common[@]}" --games 200 --agents "dotsformer:checkpoint=$DF,$SOFF,dotsformer:checkpoint=$DFS,$SOFF" --out $out/shipsearch-df
                dnb tournament "${common[@]}" --games 200 --agents "alphazero:checkpoint=$RS,$SOFF,alphazero:checkpoint=$RSS,$SOFF" --out $out/shipsearch-rs ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
