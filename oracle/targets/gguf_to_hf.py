"""A GGUF as a float32 Hugging Face folder, converted by transformers (for vLLM and for the OpenVINO export).

Which transformers converts matters: vLLM's folder is converted in vLLM's venv, the OpenVINO export's by the
project's own transformers (5.5.4, the export venv's, turns every space of the SmolLM2 tokenizer into
`<|endoftext|>`). The folder is written beside its final name and renamed when complete:

    folder = gguf_to_hf(python, gguf, cache_dir() / "models" / "name-hf-...", env=clean_env())
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from oracle.targets.cache import EmbeddedError, build_lock
from oracle.targets.tool_venv import READY

__all__ = ["CONVERT_SCRIPT", "gguf_to_hf"]

CONVERT_SCRIPT = '''"""GGUF -> Hugging Face folder, dequantized to float32 (written by oracle)."""
import sys
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

gguf, out = Path(sys.argv[1]), sys.argv[2]
tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, torch_dtype=torch.float32)
if getattr(model, "hf_quantizer", None) is not None:
    # Otherwise save_pretrained writes a GGUF quantization config that vLLM then refuses.
    model.hf_quantizer.remove_quantization_config(model)
model.save_pretrained(out)
tokenizer.save_pretrained(out)
'''


def gguf_to_hf(python: list[str], gguf: Path, out: Path, *, env: dict[str, str], timeout: float = 1200) -> Path:
    """`out`, converted from `gguf` by the interpreter command `python` unless it is there already."""
    with build_lock(out):  # another run converting it now: wait, then take its folder
        if (out / "config.json").is_file() and (out / READY).is_file():
            return out
        return _convert(python, gguf, out, env=env, timeout=timeout)


def _convert(python: list[str], gguf: Path, out: Path, *, env: dict[str, str], timeout: float) -> Path:
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    script = tmp.parent / f".{out.name}.convert_gguf.py"
    script.write_text(CONVERT_SCRIPT)
    try:
        r = subprocess.run([*python, str(script), str(gguf), str(tmp)], capture_output=True, text=True,
                           timeout=timeout, env=dict(env, HF_HUB_OFFLINE="1"))
    finally:
        script.unlink(missing_ok=True)
    if r.returncode != 0 or not (tmp / "config.json").is_file():
        raise EmbeddedError(f"converting {gguf} to a Hugging Face folder failed:\n{r.stderr[-2000:]}")
    (tmp / READY).write_text(str(gguf) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out
