#!/usr/bin/env bash
# The paper-size 5x5 pair (Dotsformer and ResNet) fitted at equal budget on the teacher data, on one GPU,
# while the spare cores extend data/teach5-a. Written for one run of under ten minutes on a GPU machine
# with 16 cores:
#
#     OUT=some/folder bash research/scripts/gpu5.sh
#
# The fits run side by side on the GPU. A short probe measures their speed first and sets the number of
# steps (the same for both) so that they end by END seconds after the start. What comes back lies in $OUT:
# both networks as playing weights, the fits' metrics and configs (fits.tar), the new teacher shards with the
# dataset's manifest (teach5-a.tar.*, to unpack into data/teach5-a) and the log.
set -u
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
: "${OUT:?set OUT to the folder for the results}"
PY=${PY:-python3}
DEVICE=${DEVICE:-cuda}
END=${END:-520}                  # seconds after the start by which both fits are done
TEACH_WORKERS=${TEACH_WORKERS:-8}
BATCH=${BATCH:-1024}
PROBE=${PROBE:-200}              # probe steps (constant learning rate, thrown away)
MAXSTEPS=${MAXSTEPS:-20000}
WORKERS=${WORKERS:-5}            # processes encoding each fit's data before its first step
FITS=${FITS:-runs/gpu}
T0=$(date +%s)
el() { echo $(($(date +%s) - T0)); }
mkdir -p "$OUT" "$FITS"
exec > >(tee "$OUT/log.txt") 2>&1

echo "== setup ($(el) s)"
nvidia-smi -L 2>/dev/null
$PY -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available())"
if ! $PY -c "from dnb_env import native; assert native.available()" 2>/dev/null; then
    for so in .devcarry/_native.*.so; do [ -f "$so" ] && cp "$so" dnb_env/; done
fi
if ! $PY -c "from dnb_env import native; assert native.available()" 2>/dev/null; then
    $PY setup.py build_ext --inplace -j 8 > /tmp/build.log 2>&1 || tail -20 /tmp/build.log
fi
$PY -c "from dnb_env import native; assert native.available(); print('native engine ok')" || exit 1
[ -f data/teach5-greedy/manifest.json ] || tar xJf .devcarry/teach5-greedy.tar.xz || exit 1

echo "== teacher data on $TEACH_WORKERS workers ($(el) s)"
GEN=/tmp/teach5-a
rm -rf "$GEN" && cp -r data/teach5-a "$GEN"
CUDA_VISIBLE_DEVICES= timeout -s INT $((END - $(el))) nice -n 10 $PY -m registry.cli teach --board 5x5 --undrawn 26-35 \
    --positions 500000 --per-game 4 --seed 0 --exclude data/teach5-held --exclude data/teach5-far-held \
    --exclude data/teach5-greedy-held --out "$GEN" --workers "$TEACH_WORKERS" --no-progress > /tmp/teach.log 2>&1 &
TEACH=$!

COMMON=(--board 5x5 --preset paper --encoder chainloop6_safe --data data/teach5-a --data data/teach5-greedy
        --data data/teach5-far --batch-size "$BATCH" --device "$DEVICE" --workers "$WORKERS" --no-progress)
DF=(dotsformer)
RS=(--model resnet --set model.paper_heads=true)

echo "== probe, $PROBE steps side by side ($(el) s)"
rm -rf /tmp/probe-df /tmp/probe-rs
P0=$(el)
$PY -m registry.cli fit "${DF[@]}" "${COMMON[@]}" --steps "$PROBE" --eval-every $((PROBE / 4)) \
    --lr-schedule constant --out /tmp/probe-df > /tmp/probe-df.log 2>&1 &
A=$!
$PY -m registry.cli fit "${RS[@]}" "${COMMON[@]}" --steps "$PROBE" --eval-every $((PROBE / 4)) \
    --lr-schedule constant --out /tmp/probe-rs > /tmp/probe-rs.log 2>&1 &
B=$!
wait $A $B
STEPS=$($PY - "$P0" "$(el)" "$END" "$MAXSTEPS" <<'EOF'
import json, sys
p0, now, end, cap = (float(a) for a in sys.argv[1:])
rates = []
for name in ("df", "rs"):
    rows = [json.loads(l) for l in open(f"/tmp/probe-{name}/metrics.jsonl") if l.strip()]
    rows = [r for r in rows if r.get("agent") == "network"]
    per_step = (rows[-1]["seconds"] - rows[0]["seconds"]) / (rows[-1]["step"] - rows[0]["step"])
    startup = (now - p0) - rows[-1]["seconds"]
    print(f"probe {name}: {per_step * 1000:.1f} ms a step, {startup:.0f} s before the first step", file=sys.stderr)
    rates.append((per_step, startup))
per_step = max(r[0] for r in rates)
startup = max(r[1] for r in rates) + 5  # the probe loads and encodes the same data
left = end - now - startup - 20
steps = int(0.93 * left / per_step) // 500 * 500
print(max(500, min(int(cap), steps)))
EOF
)
[ -n "$STEPS" ] || { echo "probe failed"; tail -30 /tmp/probe-df.log /tmp/probe-rs.log; STEPS=2000; }
echo "== fits, $STEPS steps of $BATCH each ($(el) s)"
PIDS=()
for n in df rs; do
    if [ $n = df ]; then FAM=("${DF[@]}"); else FAM=("${RS[@]}"); fi
    timeout -s INT $((END + 30 - $(el))) $PY -m registry.cli fit "${FAM[@]}" "${COMMON[@]}" --held data/teach5-held \
        --steps "$STEPS" --eval-every 500 --out "$FITS/$n-paper-mix" > "$FITS/$n-paper-mix.log" 2>&1 &
    PIDS+=($!)
done
wait "${PIDS[@]}"
tail -n 4 "$FITS"/df-paper-mix.log "$FITS"/rs-paper-mix.log
wait "$TEACH"
pkill -INT -f "registry.cli teach" 2>/dev/null
tail -n 3 /tmp/teach.log

echo "== results ($(el) s)"
for n in df rs; do
    $PY -m registry.cli export "$FITS/$n-paper-mix" "$OUT/$n-paper-mix.pt"
done
tar cf "$OUT/fits.tar" "$FITS"/*-paper-mix/metrics.jsonl "$FITS"/*-paper-mix/config.json "$FITS"/*-paper-mix.log \
    /tmp/probe-*.log /tmp/teach.log
NEW=$(comm -13 <(ls data/teach5-a | sort) <(ls "$GEN" | sort) | grep '^shard-')
(cd "$GEN" && tar cf - manifest.json $NEW) | split -b 15m - "$OUT/teach5-a.tar."
$PY -c "import json; m = json.load(open('$GEN/manifest.json')); print('teach5-a now', m['positions'], 'positions,', m['counts'])"
ls -la "$OUT"
echo "== done ($(el) s)"
