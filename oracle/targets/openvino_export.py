"""The embedded OpenVINO models: SmolLM2 exported to OpenVINO IR (fp32, int8, int4; fp16 on demand).

The GGUF becomes a Hugging Face folder through the project's own transformers (the export venv's 5.5.4 turns
every space of the SmolLM2 tokenizer into `<|endoftext|>`); optimum-cli exports that folder once to the fp32
IR in its own venv (optimum-intel pins a transformers that conflicts with the hf extra's); the other formats
are made from the fp32 IR by NNCF's data-free weight compression in the same venv (what optimum-cli's
`--weight-format int8|int4` runs, without tracing the model again). Everything lives in the user cache dir
(see `cache.cache_dir`), keyed by version:

    openvino-export-2026.4.1/venv/                          (optimum-intel, nncf, openvino; `.oracle-ready`)
    models/<gguf stem>-hf-transformers-<version>/          (the GGUF as a float32 Hugging Face folder)
    models/<gguf stem>-openvino-<format>-2026.4.1/         (openvino_model.xml/.bin, tokenizer IRs)

    ir = openvino_model("int4")        # builds once (venv ~1 min, fp32 export ~40 s, int8/int4 ~10 s each)
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from oracle.targets.cache import EmbeddedError, build_lock, cache_dir, default_model
from oracle.targets.gguf_to_hf import gguf_to_hf
from oracle.targets.tool_venv import READY, clean_env, tool_venv

__all__ = ["BUILT_BY_DEFAULT", "OPENVINO_VERSION", "WEIGHT_FORMATS", "export_python", "hf_folder",
           "openvino_model"]

OPENVINO_VERSION = "2026.4.1"
# fp16 is made only when asked for: no test needs it.
WEIGHT_FORMATS = ("fp32", "fp16", "int8", "int4")
BUILT_BY_DEFAULT = ("fp32", "int8", "int4")
# torch pinned to the CPU build found on PyPI here (an unpinned one pulls a CUDA build of several GB).
_REQUIREMENTS = ("optimum-intel==2.2.0", "nncf==3.4.0", f"openvino=={OPENVINO_VERSION}",
                 f"openvino-tokenizers=={OPENVINO_VERSION}.0", "torch==2.13.0")

# Run in the export venv: the fp32 IR compressed the way optimum-cli's --weight-format does it (data-free, every
# weight; int4 asymmetric in groups of 64: SmolLM2-135M rows are 576 wide and the default 128 fails with
# InvalidGroupSizeError), the tokenizer IRs and configs copied beside it.
_COMPRESS = '''"""An fp32 OpenVINO IR as fp16, int8 or int4 (written by oracle)."""
import shutil
import sys
from pathlib import Path

import nncf
import openvino as ov

source, out, fmt = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
model = ov.Core().read_model(source / "openvino_model.xml")
if fmt == "int8":
    model = nncf.compress_weights(model, mode=nncf.CompressWeightsMode.INT8_ASYM)
elif fmt == "int4":
    model = nncf.compress_weights(model, mode=nncf.CompressWeightsMode.INT4_ASYM, group_size=64, ratio=1.0)
out.mkdir(parents=True)
ov.save_model(model, out / "openvino_model.xml", compress_to_fp16=fmt == "fp16")
for f in source.iterdir():
    if f.is_file() and f.name not in ("openvino_model.xml", "openvino_model.bin", ".oracle-ready"):
        shutil.copy2(f, out / f.name)
'''


def export_python(*, log=print) -> Path:
    """The export venv's python, built on first use (pip, ~1 min on 2 cores with a warm pip cache)."""
    root = cache_dir() / f"openvino-export-{OPENVINO_VERSION}" / "venv"
    return tool_venv(root, _REQUIREMENTS, what="the OpenVINO export", stamp=OPENVINO_VERSION, log=log,
                     fix="it needs the torch==2.13.0 CPU wheel; or export your own IR and pass --oracle-model")


def hf_folder(gguf: Path | None = None) -> Path:
    """The GGUF (default: the embedded SmolLM2 Q4_1) as a float32 Hugging Face folder, converted by the
    project's own transformers (the hf extra)."""
    try:
        import transformers
    except ImportError as exc:
        raise EmbeddedError("converting the GGUF for the OpenVINO export needs transformers: "
                            "pip install 'oracle[hf]'") from exc
    gguf = gguf or default_model()
    out = cache_dir() / "models" / f"{gguf.stem.lower()}-hf-transformers-{transformers.__version__}"
    return gguf_to_hf(["nice", "-n", "10", sys.executable], gguf, out, env=clean_env())


def _ir_folder(weight_format: str) -> Path:
    return cache_dir() / "models" / f"{default_model().stem.lower()}-openvino-{weight_format}-{OPENVINO_VERSION}"


def openvino_model(weight_format: str = "fp32", *, log=print) -> Path:
    """The embedded SmolLM2 as OpenVINO IR in `weight_format`, made once and then returned at once."""
    if weight_format not in WEIGHT_FORMATS:
        raise EmbeddedError(f"OpenVINO weight format {weight_format!r}: choose one of {', '.join(WEIGHT_FORMATS)}")
    out = _ir_folder(weight_format)
    if (out / READY).is_file():
        return out
    with build_lock(out):  # another run exporting it now: wait, then take its IR
        if (out / READY).is_file():
            return out
        return _export(weight_format, out, log=log)


def _export(weight_format: str, out: Path, *, log) -> Path:
    if weight_format == "fp32":
        source = hf_folder()
        python = export_python(log=log)
        cmd = ["nice", "-n", "10", str(python.parent / "optimum-cli"), "export", "openvino", "-m", str(source),
               "--task", "text-generation-with-past", "--weight-format", "fp32"]
        log(f"oracle: exporting the fp32 OpenVINO IR to {out} (once, ~40 s)")
    else:
        source = openvino_model("fp32", log=log)
        python = export_python(log=log)
        script = cache_dir() / f"openvino-export-{OPENVINO_VERSION}" / "compress_ir.py"
        script.write_text(_COMPRESS)
        cmd = ["nice", "-n", "10", str(python), str(script), str(source)]
        log(f"oracle: compressing the fp32 OpenVINO IR to {weight_format} in {out} (once, ~10 s)")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    cmd += [str(tmp)] + ([weight_format] if weight_format != "fp32" else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=clean_env(HF_HUB_OFFLINE="1"))
    if r.returncode != 0 or not (tmp / "openvino_model.xml").is_file():
        raise EmbeddedError(f"`{shlex.join(cmd)}` failed:\n{r.stderr[-2000:]}\nremove {python.parent.parent} to "
                            "rebuild the export venv")
    (tmp / READY).write_text(f"{weight_format} {OPENVINO_VERSION} from {source}\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


if __name__ == "__main__":  # python -m oracle.targets.openvino_export [FORMAT ...]: build the IRs (CI does this once)
    for fmt in sys.argv[1:] or BUILT_BY_DEFAULT:
        print(fmt, openvino_model(fmt))
