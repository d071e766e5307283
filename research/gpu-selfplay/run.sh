#!/usr/bin/env bash
# One GPU session of the study (research/gpu-selfplay/README.md), run in one call from the checkout's root:
#
#     bash research/gpu-selfplay/run.sh [--cpu] [--quick] [--skip-bench] [--alphavit] [--seconds S]
#
# 1. installs .whl/*.whl (prepare.sh) into $SITE and builds dnb_env._native (compiled in parallel);
# 2. benchmarks/selfplay_gpu.py for each family (single process against 15 actors + 1 inference process);
# 3. continues the two paper-protocol runs runs/gpu-selfplay-resnet and runs/gpu-selfplay-dotsformer
#    (paper preset, 5x5, from scratch, backward training; --set workers=15 --set inference=shared), the one
#    behind first, to the same iteration count, each time-boxed (a run stopped mid-iteration resumes from
#    its last commit). A run folder missing here is first restored from its lean archive, runs/NAME.tar.xz
#    (carried) or else research/runs/NAME.tar.xz (tracked), when there is one; else the run starts;
# 4. a head-to-head of the two runs' current networks (dnb tournament, 200 simulations, on the device).
#
# --alphavit: steps 1, then in place of 2-4 the AlphaViT board-size run runs/gpu-selfplay-alphavit: multi-size
# self-play (boards 5x5:2,6x6:1,7x7:1, cpu-preset model, from the shipped agents/checkpoints/alphavit.pt)
# continued for the whole time left on the same path (--device cuda --set workers=15: inference auto, so
# shared), then its network against the shipped one on 7x7 (20 games, 200 simulations). Files:
# log, gpu-selfplay-alphavit.tar.xz (lean), h2h.tar.xz.
#
# Everything printed goes to $OUT/log. Files under $OUT (8 at most, 16 MiB each, come back from the GPU
# machine): log, selfplay_gpu.json (both families' benchmark), gpu-selfplay-resnet.tar.xz and
# gpu-selfplay-dotsformer.tar.xz (lean resumable run folders: state.py), h2h.tar.xz (the tournament folder).
# The whole run stays within --seconds (default 540, --quick 170; the device runs a command for at most 600).
#
# --cpu: the same steps on the CPU (no GPU needed), workers = cores less one; --quick: tiny sizes (2x2 board,
# cpu preset, few games; the quick benchmark) in runs named gpu-selfplay-quick-*, for checking the script end
# to end in about a minute:
#     OUT=$(mktemp -d) bash research/gpu-selfplay/run.sh --cpu --quick
# Environment: OUT (required), PYTHON (default python3; with --cpu .venv/bin/python when there),
# SITE (where the wheels go; default /tmp/site, with --cpu a temporary folder), RUNS (default runs).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
CPU=0 QUICK=0 BENCH=1 AVIT=0 SECONDS_ALL=
while [ $# -gt 0 ]; do
    case $1 in
        --cpu) CPU=1 ;;
        --quick) QUICK=1 ;;
        --skip-bench) BENCH=0 ;;
        --alphavit) AVIT=1 BENCH=0 ;;
        --seconds) SECONDS_ALL=$2; shift ;;
        *) echo "run.sh: unknown option $1 (--cpu, --quick, --skip-bench, --alphavit, --seconds S)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$SECONDS_ALL" ] || { [ $QUICK = 1 ] && SECONDS_ALL=170 || SECONDS_ALL=540; }
[ -n "${OUT:-}" ] && mkdir -p "$OUT" || { echo "run.sh: set OUT to the folder for the results" >&2; exit 2; }
OUT=$(cd "$OUT" && pwd)
exec > >(tee -a "$OUT/log") 2>&1
START=$(date +%s)
elapsed() { echo $(( $(date +%s) - START )); }
say() { echo "== [$(elapsed) s] $*"; }

if [ $CPU = 1 ]; then
    DEVICE=cpu
    [ -x .venv/bin/python ] && PY=${PYTHON:-$ROOT/.venv/bin/python} || PY=${PYTHON:-python3}
    SITE=${SITE:-$(mktemp -d)}
else
    DEVICE=cuda PY=${PYTHON:-python3} SITE=${SITE:-/tmp/site}
fi
RUNS=${RUNS:-runs}
WORKERS=$(( $(nproc) - 1 )); [ $WORKERS -gt 15 ] && WORKERS=15; [ $WORKERS -lt 1 ] && WORKERS=1
if [ $QUICK = 1 ]; then
    NAME=gpu-selfplay-quick BOARD=2x2 PRESET=cpu H2H_GAMES=4 H2H_SIMS=16 H2H_RESERVE=40 BENCH_ARGS="--quick --actors $WORKERS"
    TRAIN_ARGS="--games 4 --simulations 16 --set eval_games=4 --set eval_positions=20" MAXSTEP=3
    AVIT_BOARD=3x3 AVIT_BOARDS=2x2:1,3x3:1 AVIT_ARGS="--games 4 --simulations 16 --set eval_games=2 --set eval_positions=10"
else
    NAME=gpu-selfplay BOARD=5x5 PRESET=paper H2H_GAMES=20 H2H_SIMS=200 H2H_RESERVE=75
    BENCH_ARGS="--simulations 100,800 --games 64 --moves 8 --actors $WORKERS --seconds 80"
    TRAIN_ARGS="" MAXSTEP=10000
    AVIT_BOARD=7x7 AVIT_BOARDS=5x5:2,6x6:1,7x7:1 AVIT_ARGS="--games $(( WORKERS * 4 )) --simulations 200"
fi
STARTUP=30   # seconds a dnb train call spends before its first iteration (processes, CUDA), a guess
[ $QUICK = 1 ] && STARTUP=10
PACK_RESERVE=25

say "setup: device $DEVICE, board $BOARD, preset $PRESET, $WORKERS workers, python $PY, out $OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl \
        || { echo "run.sh: installing .whl/*.whl failed" >&2; exit 1; }
fi
export PYTHONPATH="$SITE:$ROOT" PYTHONUNBUFFERED=1
# 5x5 only here: the compact build alone (the wide one, for boards past 9x9, would double the build's minutes)
DNB_BUILD_WIDE=0 "$PY" - <<'EOF' || exit 1
import sys
from pybind11.setup_helpers import ParallelCompile
ParallelCompile(default=0).install()   # the extension's four sources compiled at once
sys.argv = ["setup.py", "build_ext", "--inplace"]
exec(compile(open("setup.py").read(), "setup.py", "exec"), {"__name__": "__main__", "__file__": "setup.py"})
EOF
"$PY" -c "
import torch, dnb_env, agents, registry, dnb_env.native as native
print('torch', torch.__version__, '| cuda', torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else '', '| native extension', native.available())
" || exit 1
if [ $DEVICE = cuda ]; then nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv || true; fi
dnb() { "$PY" -m registry.cli "$@"; }
# archives by Python's tarfile (the machine may have no xz program): untar ARCHIVE DEST; tarxz ARCHIVE DIR
untar() { "$PY" -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2], filter='data')" "$@"; }
tarxz() {
    "$PY" -c "
import pathlib, sys, tarfile
keep = lambda t: None if t.name.endswith('.pt') or pathlib.PurePath(t.name).name.startswith('.lock') else t
with tarfile.open(sys.argv[1], 'w:xz') as tar:
    tar.add(sys.argv[2], arcname=pathlib.Path(sys.argv[2]).name, filter=keep)
" "$@"
}

# 2. the benchmark, one call per family (each its own time budget)
if [ $BENCH = 1 ]; then
    for fam in resnet dotsformer; do
        say "benchmark: $fam"
        "$PY" benchmarks/selfplay_gpu.py --device $DEVICE --families $fam $BENCH_ARGS --json "$OUT/bench-$fam.json" \
            || echo "run.sh: the $fam benchmark failed (exit $?)"
    done
    "$PY" - "$OUT" <<'EOF'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
parts = sorted(out.glob("bench-*.json"))
merged = {p.stem[len("bench-"):]: json.loads(p.read_text()) for p in parts}
(out / "selfplay_gpu.json").write_text(json.dumps(merged, indent=1))
for p in parts:
    p.unlink()
EOF
fi

# restore RUN: the run folder from its lean archive when it is missing here ($RUNS/NAME.tar.xz, carried, first)
restore() {
    local run=$1 archive
    for archive in "$run.tar.xz" "research/runs/$(basename "$run").tar.xz"; do
        if [ ! -d "$run" ] && [ -f "$archive" ]; then
            say "restoring $run from $archive"
            mkdir -p "$RUNS" && untar "$archive" "$RUNS" || exit 1
        fi
    done
}
# head_to_head BOARD FOLDER AGENTS WHAT: a tournament of AGENTS in FOLDER until the time is up, into h2h.tar.xz
head_to_head() {
    local left=$(( SECONDS_ALL - $(elapsed) - 10 ))
    say "head-to-head on $1: $4, $H2H_GAMES games, at most ${left} s"
    timeout -k 10 $left "$PY" -m registry.cli tournament --board $1 --games $H2H_GAMES --workers $WORKERS \
        --agents "$3" --out "$2" --no-progress || echo "run.sh: the head-to-head stopped (exit $?); run again to finish it"
    tarxz "$OUT/h2h.tar.xz" "$2"
}
finish() {
    say "done; files under $OUT:"
    ls -l "$OUT"
    sleep 1  # tee writes the last lines to $OUT/log
    exit 0
}

# 2-4 with --alphavit: the AlphaViT board-size run, all the time left, then against the shipped network
if [ $AVIT = 1 ]; then
    run=$RUNS/$NAME-alphavit
    restore "$run"
    have=$("$PY" research/gpu-selfplay/state.py done "$run") || exit 1
    box=$(( SECONDS_ALL - $(elapsed) - H2H_RESERVE - PACK_RESERVE ))
    resume=""; [ -f "$run/manifest.json" ] && resume="--resume"
    say "alphavit: from iteration $have, boards $AVIT_BOARDS, at most ${box} s"
    timeout -s INT -k 30 $box "$PY" -m registry.cli train --model alphavit --preset cpu --board $AVIT_BOARD \
        --out "$run" --iterations $(( have + MAXSTEP )) --device $DEVICE --set workers=$WORKERS \
        --set boards=$AVIT_BOARDS --set init=agents/checkpoints/alphavit.pt --set model.encoder=chainloop6_nim38 \
        $AVIT_ARGS --no-progress $resume
    rc=$?
    [ $rc = 124 ] && echo "run.sh: alphavit stopped at its time box; it resumes from its last commit"
    [ $rc != 0 ] && [ $rc != 124 ] && echo "run.sh: dnb train alphavit exited $rc"
    n=$("$PY" research/gpu-selfplay/state.py done "$run")
    if [ $n -gt 0 ]; then
        "$PY" research/gpu-selfplay/state.py lean "$run" "$OUT/$NAME-alphavit.tar.xz" >/dev/null \
            && say "alphavit: iteration $n, $(du -h "$OUT/$NAME-alphavit.tar.xz" | cut -f1) lean archive"
        h2h=$RUNS/$NAME-alphavit-h2h-i$n
        mkdir -p "$h2h"
        dnb export "$run" "$h2h/alphavit.pt" >/dev/null || exit 1
        head_to_head $AVIT_BOARD "$h2h" \
            "alphavit:checkpoint=$h2h/alphavit.pt,simulations=$H2H_SIMS,device=$DEVICE,alphavit:simulations=$H2H_SIMS,device=$DEVICE" \
            "iteration $n against the shipped alphavit"
    fi
    finish
fi

# 3. the two runs, the one behind first, to one target iteration
STATE="$PY research/gpu-selfplay/state.py"
for fam in resnet dotsformer; do
    restore "$RUNS/$NAME-$fam"
done
R=$RUNS/$NAME-resnet D=$RUNS/$NAME-dotsformer
a=$($STATE done $R) b=$($STATE done $D) || exit 1
pa=$($STATE pace $R) pd=$($STATE pace $D)
lead=$(( a > b ? a : b ))
budget=$(( SECONDS_ALL - $(elapsed) - H2H_RESERVE - PACK_RESERVE ))
# target: with both paces known, the most iterations both reach in the budget; else as many as time allows
target=$("$PY" -c "
a, b, lead, budget, pa, pd, s = $a, $b, $lead, $budget, $pa, $pd, $STARTUP
if pa > 0 and pd > 0:
    k = int((budget - 2 * s - (lead - a) * pa - (lead - b) * pd) // (pa + pd))
    print(lead + min(max(k, 0), $MAXSTEP))
else:
    print(lead + $MAXSTEP)
")
say "runs at iterations resnet $a, dotsformer $b (seconds an iteration: $pa, $pd); training budget ${budget} s, target $target"
if [ $a -le $b ]; then order="resnet dotsformer"; else order="dotsformer resnet"; fi
first=1
for fam in $order; do
    run=$RUNS/$NAME-$fam
    have=$($STATE done "$run")
    left=$(( SECONDS_ALL - $(elapsed) - H2H_RESERVE - PACK_RESERVE ))
    if [ $first = 1 ]; then
        other=$([ $fam = resnet ] && echo $D || echo $R)
        share=$("$PY" -c "
mine, theirs = ($pa if '$fam' == 'resnet' else $pd), ($pd if '$fam' == 'resnet' else $pa)
n, m = $target - $have, $target - $($STATE done $other)
work = n * mine + m * theirs
print(0.5 if mine <= 0 or theirs <= 0 or work <= 0 else min(0.9, max(0.1, n * mine / work)))
")
        box=$("$PY" -c "print(int($STARTUP + $share * ($left - 2 * $STARTUP)))")  # each call starts up once
    else
        box=$left
    fi
    resume=""; [ -f "$run/manifest.json" ] && resume="--resume"
    ran=0
    if [ $have -ge $target ] || [ $box -le $STARTUP ]; then
        say "$fam: at iteration $have (target $target), ${box} s: not run"
    else
        say "$fam: iteration $have -> $target, at most ${box} s"
        ran=1
        timeout -s INT -k 30 $box "$PY" -m registry.cli train --model $fam --preset $PRESET --board $BOARD --out "$run" \
            --iterations $target --device $DEVICE --set workers=$WORKERS --set inference=shared $TRAIN_ARGS \
            --no-progress $resume
        rc=$?
        [ $rc = 124 ] && echo "run.sh: $fam stopped at its time box; it resumes from its last commit"
        [ $rc != 0 ] && [ $rc != 124 ] && echo "run.sh: dnb train $fam exited $rc"
    fi
    if [ $first = 1 ]; then  # the second run goes as far as the first got, no further
        target=$($STATE done "$run")
        # the first ran but committed nothing (an iteration longer than its box): the second still does one,
        # so that both paces are known to the next call, which runs the one behind first
        [ $ran = 1 ] && [ $target = $have ] && target=$(( $($STATE done $other) + 1 ))
        first=0
    fi
done
for fam in resnet dotsformer; do
    run=$RUNS/$NAME-$fam
    [ -f "$run/manifest.json" ] && $STATE lean "$run" "$OUT/$NAME-$fam.tar.xz" >/dev/null \
        && say "$fam: iteration $($STATE done "$run"), $(du -h "$OUT/$NAME-$fam.tar.xz" | cut -f1) lean archive"
done

# 4. head-to-head of the two current networks (each game process its own copy of both on $DEVICE)
a=$($STATE done $R) b=$($STATE done $D)
if [ $a -gt 0 ] && [ $b -gt 0 ]; then
    h2h=$RUNS/$NAME-h2h-r$a-d$b
    mkdir -p "$h2h"
    dnb export $R "$h2h/resnet.pt" >/dev/null && dnb export $D "$h2h/dotsformer.pt" >/dev/null || exit 1
    head_to_head $BOARD "$h2h" \
        "alphazero:checkpoint=$h2h/resnet.pt,simulations=$H2H_SIMS,device=$DEVICE,dotsformer:checkpoint=$h2h/dotsformer.pt,simulations=$H2H_SIMS,device=$DEVICE" \
        "resnet iteration $a against dotsformer iteration $b"
fi
finish
