#!/usr/bin/env bash
# One alphavit checkpoint on 6x6, 7x7 and 9x9 from 4 guided random opening moves, one process, one thread:
#   raw  (simulations=0) against greedy and alphabeta:depth=2, no clock (alphabeta would think to one);
#   searched at 0.2 s a move against greedy.
# usage: bash research/alphavit-distill/evaluate.sh NAME CHECKPOINT [GAMES] [PART...]   (PART: raw, searched)
# writes runs/avit-distill/eval-NAME-{raw,searched}-BOARD/ (results.jsonl, pairs.csv with Wilson intervals)
# Environment: BOARDS (default "6x6 7x7 9x9"), TIME (the searched part's seconds a move, default 0.2; another
# value adds -TIMEs to the folder's name), OPPONENTS (the searched part's, default greedy; comma-separated),
# WORKERS (games at once, default 1).
set -eu
cd "$(dirname "$0")/../.."
NAME=$1; CKPT=$2; GAMES=${3:-12}; shift $(( $# < 3 ? $# : 3 ))
PARTS=${*:-raw searched}
BOARDS=${BOARDS:-6x6 7x7 9x9} TIME=${TIME:-0.2} OPPONENTS=${OPPONENTS:-greedy} WORKERS=${WORKERS:-1}
SUFFIX=""; [ "$TIME" = 0.2 ] || SUFFIX="-${TIME}s"
[ "$OPPONENTS" = greedy ] || SUFFIX="$SUFFIX-$(echo "$OPPONENTS" | tr ',:=' '---')"
COMMON="--games $GAMES --openings 4:guided --mode gauntlet --workers $WORKERS --threads 1 --seed 0 --no-progress"
for PART in $PARTS; do
    for B in $BOARDS; do
        OUT=runs/avit-distill/eval-$NAME-$PART-$B
        if [ "$PART" = raw ]; then
            dnb tournament --board $B --agents "alphavit:checkpoint=$CKPT,simulations=0,greedy,alphabeta:depth=2" \
                $COMMON --out $OUT
        else
            dnb tournament --board $B --agents "alphavit:checkpoint=$CKPT,$OPPONENTS" --time-per-move $TIME $COMMON \
                --out $OUT$SUFFIX
        fi
    done
done
