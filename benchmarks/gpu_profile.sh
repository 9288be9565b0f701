#!/usr/bin/env bash
# One GPU session, one script (issue 7): the CUDA checks of the FLOP and memory formulas, then
# `sizing profile` for each planned run (sizing/inputs/planned_runs.py PLANNED_RUNS), then the report
# page with the measured figures. Under 8 minutes in all: every step has its own timeout and
# the whole script a budget (GPU_PROFILE_BUDGET_S, default 465 s); a step that would start
# with too little time left is skipped and says so.
#
#   bash benchmarks/gpu_profile.sh          # from the repository root, on a machine with one CUDA GPU
#
# Writes to $OUT when set (the device `run` tool's output folder), else ./gpu_out/:
#   gpu_profile.log            everything printed, with elapsed seconds
#   pytest-gpu.txt             the CUDA checks (pytest -m gpu)
#   serving-measured.json      TTFT and decode tokens/s (reference_model/profile/serve_bench.py): copy to reports/
#   <run>.json, <run>.md       each profile: every figure (JSON) and its markdown section
#   gpu-profile.md             the report page with the measured figures: commit it as reports/gpu-profile.md
#
# Needs torch with CUDA, click, pytest. fvcore is optional: if ./wheels exists (built elsewhere with
#   pip wheel --no-deps fvcore iopath yacs portalocker termcolor tqdm -w wheels
# and carried along), its wheels are installed with no network, for the fvcore FLOP check
# (fvcore.nn imports tqdm, numpy and tabulate too; numpy and tabulate come with pandas).
set -u -o pipefail
cd "$(dirname "$0")/.."

OUT_DIR="${OUT:-gpu_out}"
mkdir -p "$OUT_DIR"
LOG="$OUT_DIR/gpu_profile.log"
BUDGET_S="${GPU_PROFILE_BUDGET_S:-465}"
START=$(date +%s)
exec > >(tee -a "$LOG") 2>&1

log() { echo "[$(( $(date +%s) - START ))s] $*"; }
left() { echo $(( BUDGET_S - ($(date +%s) - START) )); }
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # works even if the editable install below fails
export PYTHONUNBUFFERED=1

log "gpu_profile.sh: $(git rev-parse --short HEAD 2>/dev/null || echo 'no git') in $PWD, output to $OUT_DIR"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv 2>&1 | head -5
if ! python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda); assert torch.cuda.is_available()"; then
  log "no CUDA device (or no torch): nothing to measure; this script is for a GPU session"
  exit 2
fi

# ---- (a) install: fvcore from carried wheels (no network), this package without its dependencies
if [ -n "${GPU_PROFILE_SKIP_INSTALL:-}" ]; then
  log "GPU_PROFILE_SKIP_INSTALL set: no pip install"
else
  if [ -d wheels ] && ls wheels/*.whl > /dev/null 2>&1; then
    # --no-deps: only what was carried (fvcore's Pillow/pyyaml are not needed by fvcore.nn; tqdm is)
    timeout 60 pip install --quiet --no-index --no-deps wheels/*.whl \
      || log "wheels did not install: the fvcore FLOP check will use the torch counter only"
    python -c "from fvcore.nn import FlopCountAnalysis" 2>/dev/null && log "fvcore importable" \
      || log "fvcore not importable (missing tqdm?): the FLOP check will use the torch counter only"
  fi
  timeout 60 pip install --quiet --no-deps --no-build-isolation -e . \
    || log "editable install failed: using PYTHONPATH=$PWD and python -m sizing"
fi

# ---- (b) the CUDA checks of the FLOP and memory formulas (every test marked gpu)
step_limit() {  # min(wanted, time left); 0 when less than 30 s would be left
  local want=$1 remaining
  remaining=$(left)
  if [ "$remaining" -lt 30 ]; then echo 0; elif [ "$want" -gt "$remaining" ]; then echo "$remaining"; else echo "$want"; fi
}

limit=$(step_limit 140)
if [ "$limit" -gt 0 ]; then
  log "pytest -m gpu (timeout ${limit}s)"
  timeout --kill-after=10 "$limit" python -m pytest -m gpu tests/ -q -rs -p no:cacheprovider \
    --continue-on-collection-errors 2>&1 | tee "$OUT_DIR/pytest-gpu.txt" | tail -40
  log "pytest -m gpu finished: exit ${PIPESTATUS[0]} (124 = timed out)"
else
  log "skipped pytest -m gpu: budget spent"
fi

# ---- (b2) serving (issue 14): TTFT and decode tokens/s of the ~1B reference model, bf16, batch 1/8/64
limit=$(step_limit 90)
if [ "$limit" -gt 0 ]; then
  log "reference_model.profile.serve_bench (timeout ${limit}s)"
  timeout --kill-after=10 "$limit" python -m reference_model.profile.serve_bench --device cuda \
    --out "$OUT_DIR/serving-measured.json" \
    && log "wrote $OUT_DIR/serving-measured.json: copy it to reports/serving-measured.json, run sizing report, commit" \
    || log "serve_bench failed or timed out (exit $?)"
else
  log "skipped serve_bench: budget spent"
fi

# ---- (c) the planned profiles, most important first (names as in sizing/inputs/planned_runs.py PLANNED_RUNS)
run_profile() {
  local name=$1 want=$2 limit rc
  limit=$(step_limit "$want")
  if [ "$limit" -eq 0 ]; then log "skipped $name: budget spent"; return; fi
  log "sizing profile --planned $name (timeout ${limit}s)"
  timeout --kill-after=10 "$limit" python -m sizing profile --planned "$name" --out "$OUT_DIR/$name.md" \
    --format json > "$OUT_DIR/$name.json.part"
  rc=$?
  if [ "$rc" -eq 0 ]; then
    mv "$OUT_DIR/$name.json.part" "$OUT_DIR/$name.json"
    python - "$OUT_DIR/$name.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
mfu, mem = d["mfu"], d["memory"]
pct = lambda x: "n/a" if x is None else f"{x * 100:.1f}%"
print(f"  {d['model']}: step {d['step_time_s']['median'] * 1e3:.1f} ms, {d['tokens_per_second']:,.0f} tokens/s, "
      f"{d['achieved_tflops']['full']:.1f} TFLOP/s (full), MFU full {pct(mfu['full'])}, causal {pct(mfu['causal'])}, "
      f"peak {mem['measured_peak_bytes'] / 2**30:.2f} GiB vs formula {mem['predicted_bytes'] / 2**30:.2f} GiB")
EOF
  else
    rm -f "$OUT_DIR/$name.json.part"
    log "$name failed (exit $rc; 124 = timed out)"
  fi
}
run_profile gpt-1.3b 190
run_profile llama-1b-gqa 150
run_profile gpt2-124m 60

# ---- the report page with whatever was measured
python -m sizing profile --plan-report "$OUT_DIR/gpu-profile.md" --results "$OUT_DIR" \
  && log "wrote $OUT_DIR/gpu-profile.md: review, then copy to reports/gpu-profile.md and commit"
log "done in $(( $(date +%s) - START ))s"
