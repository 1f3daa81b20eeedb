"""Two runs that start at once build a cache product once (`cache.build_lock`): `-n 2` workers launching the
embedded vLLM both ask for its converted model, and two users may start oracle at the same moment.

The converter here is a real interpreter running a stand-in script: it counts its runs in a file, takes a second,
and writes the folder; two processes ask for the folder at the same time."""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

from oracle.targets.cache import build_lock
from oracle.targets.gguf_to_hf import gguf_to_hf

# Run as `python stand_in.py CONVERT_SCRIPT GGUF OUT`, as gguf_to_hf runs its interpreter command.
STAND_IN = """import os, sys, time
from pathlib import Path
with open(os.environ["RUNS"], "a") as runs:
    runs.write("converted\\n")
time.sleep(1.0)
Path(sys.argv[3], "config.json").write_text("{}")
"""


def _convert(tmp: str, results) -> None:
    tmp_path = Path(tmp)
    python = [sys.executable, str(tmp_path / "stand_in.py")]
    out = gguf_to_hf(python, tmp_path / "model.gguf", tmp_path / "models" / "model-hf",
                     env={"RUNS": str(tmp_path / "runs.txt")})
    results.put(str(out))


def test_two_processes_asking_at_once_convert_the_model_once(tmp_path):
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    (tmp_path / "stand_in.py").write_text(STAND_IN)
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=_convert, args=(str(tmp_path), results)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    outs = {results.get(timeout=5) for _ in procs}
    assert outs == {str(tmp_path / "models" / "model-hf")}
    assert (tmp_path / "runs.txt").read_text() == "converted\n"  # the second found the first's folder
    assert (tmp_path / "models" / "model-hf" / "config.json").is_file()
    assert not (tmp_path / "models" / "model-hf.tmp").exists()


def test_the_lock_is_let_go_when_its_holder_fails(tmp_path):
    product = tmp_path / "venv"
    try:
        with build_lock(product):
            raise RuntimeError("pip failed")
    except RuntimeError:
        pass
    with build_lock(product):  # not held any more: taken at once
        assert (tmp_path / ".venv.lock").is_file()
