#!/bin/bash
# One config against itself on the embedded llama-server (SmolLM2-135M Q4_1, -t 1), one server at a time (a fresh
# boot per pass, the default), in the fixed design so that every pass is kept in order: the pass rates that
# benchmarks/aa_calibrate.py forms into A/A sessions of the sequential test (docs/speed.md, "One server at a time").
#   bash examples/cpu-aa/run.sh [OUT]          RUNS="1 2 3 4 5" ROUNDS=70 by default; each run ~4 min on 2 cores
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-/tmp/oracle-cpu-aa}
mkdir -p "$OUT" && cd "$OUT" || exit 2
head -2 "$REPO/prompts/default.jsonl" > two.jsonl   # 2 prompts x 24 tokens, as tests/servers/test_interleave_llamacpp.py
L=$(python - <<'PY'
import shlex
from oracle.targets.embedded import embedded_command, llama_cpp_tools
from oracle.targets.cache import default_model
tools = llama_cpp_tools()
env = " ".join(f"{k}={shlex.quote(v)}" for k, v in tools.env.items())
print(env, embedded_command(tools, default_model(), "-t 1").removeprefix("exec "))
PY
) || exit 2
PT="python -m pytest -p no:cacheprovider --backend=llamacpp --canaries=none --oracle-suite two.jsonl --max-tokens 24 --ledger off"
[ -d ref ] || $PT --launch "$L" --record ref --report-dir rec > rec.log 2>&1 || { echo "record failed: $OUT/rec.log"; exit 1; }
for i in ${RUNS:-1 2 3 4 5}; do
  s=$(date +%s)
  $PT --launch "$L" --reference ref --reference-launch recorded --interleave-servers one-at-a-time \
      --speed-rounds "${ROUNDS:-70}" --min-speedup 1.0 --report-dir "aa-$i" > "aa-$i.log" 2>&1
  echo "run $i rc=$? $(( $(date +%s) - s ))s"
done
python "$REPO/benchmarks/aa_calibrate.py" aa-*/identity.json
