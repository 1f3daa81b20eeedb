#!/bin/bash
# Device call 1 of 2 (see commands.txt): install the carried wheels, keep model half 1, unpack the trimmed
# llama.cpp source and build llama-server with CUDA for sm_90. Everything lands in $KEEP (/root/keep), which
# lives only while the machine stays warm (30 s after a call): call 2 (b.sh) must follow at once.
#   ORACLE_KIT_LOCAL=1  validation on a machine without a GPU: KEEP=/tmp/kitkeep, configure (GGML_CUDA=$KIT_CUDA,
#                       default OFF) and build only the llama-ui library, not llama-server
set -u
T0=$(date +%s)
KIT=$(cd "$(dirname "$0")" && pwd)
LOCAL=${ORACLE_KIT_LOCAL:-0}
if [ "$LOCAL" = 1 ]; then KEEP=${KEEP:-/tmp/kitkeep}; else KEEP=${KEEP:-/root/keep}; fi
JOBS=${JOBS:-16}
if [ "$LOCAL" = 1 ]; then CUDA=${KIT_CUDA:-OFF}; else CUDA=ON; fi   # KIT_CUDA=ON locally needs cuBLAS
OUT=${OUT:-$KEEP/out-a}
mkdir -p "$KEEP/site" "$OUT"
log() { echo "[a.sh +$(( $(date +%s) - T0 ))s] $*"; }

log "kit $KIT -> $KEEP (local=$LOCAL, jobs=$JOBS)"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
nvcc --version 2>&1 | tail -2
python3 --version; nproc

log "wheels"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$KEEP/site" \
    "$KIT"/*.whl || { log "FAIL wheel install"; exit 11; }
ls "$KEEP/site"

log "model half 1"
cp "$KIT/model.part1" "$KEEP/model.part1" || { log "FAIL copy model.part1"; exit 12; }
ls -l "$KEEP/model.part1"

log "unpack source"
rm -rf "$KEEP/llama.cpp"
tar xzf "$KIT/llama.cpp-src.tar.gz" -C "$KEEP" || { log "FAIL unpack"; exit 13; }
cd "$KEEP/llama.cpp" || exit 13

log "configure (GGML_CUDA=$CUDA)"
cmake -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=$CUDA -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_USE_PREBUILT_UI=OFF > "$OUT/configure.log" 2>&1
rc=$?
grep -iE "CUDA Toolkit found|Using CUDA architectures|Including CUDA backend|CMAKE_BUILD_TYPE|error" "$OUT/configure.log" | head -20
[ $rc = 0 ] || { tail -40 "$OUT/configure.log"; log "FAIL configure rc=$rc"; exit 14; }

if [ "$LOCAL" = 1 ]; then
  log "local: configure passed; building only the embedded-UI library (no llama-server build here)"
  timeout 300 cmake --build build --target llama-ui -j2 > "$OUT/build.log" 2>&1; echo "llama-ui rc=$?"
  tail -3 "$OUT/build.log"
  log "done (local)"; exit 0
fi

log "build llama-server -j$JOBS"
timeout -k 5 480 cmake --build build --target llama-server -j"$JOBS" > "$OUT/build.log" 2>&1
rc=$?
tail -5 "$OUT/build.log"
[ $rc = 0 ] || { grep -m5 -B2 -A8 -E "error|FAILED" "$OUT/build.log" | head -60; log "FAIL build rc=$rc"; exit 15; }
ls -l build/bin/llama-server
build/bin/llama-server --version 2>&1 | tail -6
log "done: $KEEP/llama.cpp/build/bin/llama-server built; run call 2 (b.sh) now, within 30 s"
