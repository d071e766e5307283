#!/usr/bin/env bash
# Fine-tunes of the paper-size 5x5 pair on the zone where searched games are decided before the solver takes
# over: the result-only positions at 39-42 undrawn edges (data/teach5-vfar, research/scripts/vfar.sh) added in front of
# the research/scripts/value35.sh mix (29,000 + 25,000 positions), scored on data/teach5-vfar-held; same recipe otherwise.
#   research/scripts/value42.sh df|rs NVFAR [TAG]     (one core; NVFAR: how many data/teach5-vfar positions)
set -eu
VFAR=$2 HELD=data/teach5-vfar-held EVAL=2000 exec "$(dirname "$0")/value35.sh" "$1" 29000 "${3:-$1-v42-$2}"
