"""The embedded OpenVINO models: SmolLM2 exported to OpenVINO IR (fp32, int8, int4; fp16 on demand).

The export runs in its own venv (optimum-intel pins a transformers that conflicts with the hf extra's),
and the GGUF is converted to a Hugging Face folder with the project's own transformers first (the
export venv's transformers 5.5.4 converts the SmolLM2 tokenizer wrongly: every space becomes
`<|endoftext|>`). Everything lives in the user cache dir (see `cache.cache_dir`), keyed by version:

    openvino-export-2026.4.1/venv/                          (optimum-intel, nncf, openvino; `.oracle-ready`)
    models/<gguf stem>-hf-transformers-<version>/          (the GGUF as a float32 Hugging Face folder)
    models/<gguf stem>-openvino-<format>-2026.4.1/         (openvino_model.xml/.bin, tokenizer IRs)

    ir = openvino_model("int4")        # builds once (venv ~2 min, each export ~1 min), then returns at once
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

from oracle.targets.cache import EmbeddedError, cache_dir, default_model
from oracle.targets.vllm_cpu import _CONVERT as CONVERT_SCRIPT, _clean_env

__all__ = ["BUILT_BY_DEFAULT", "OPENVINO_VERSION", "WEIGHT_FORMATS", "ExportTools", "export_tools", "hf_folder",
           "openvino_model"]

OPENVINO_VERSION = "2026.4.1"
# fp16 is exported only when asked for: no test needs it and each export costs about a minute.
WEIGHT_FORMATS = ("fp32", "fp16", "int8", "int4")
BUILT_BY_DEFAULT = ("fp32", "int8", "int4")
# torch pinned to the CPU build found locally (an unpinned one pulls a CUDA build of several GB).
_REQUIREMENTS = ("optimum-intel==2.2.0", "nncf==3.4.0", f"openvino=={OPENVINO_VERSION}",
                 f"openvino-tokenizers=={OPENVINO_VERSION}.0", "torch==2.13.0")
# pip brings a CUDA torchvision with optimum's dependencies; it breaks transformers' imports on CPU torch.
_CUDA_EXTRAS = ("torchvision", "torchaudio", "torchcodec")
# SmolLM2-135M rows are 576 wide: int4's default group size 128 fails with InvalidGroupSizeError.
_FORMAT_ARGS = {"int4": ("--group-size", "64")}


@dataclass(frozen=True)
class ExportTools:
    root: Path

    @property
    def optimum_cli(self) -> Path:
        return self.root / "venv" / "bin" / "optimum-cli"


def export_tools(*, log=print) -> ExportTools:
    """The export venv, built on first use (pip, ~2 min on 2 cores) and reused after."""
    tools = ExportTools(root=cache_dir() / f"openvino-export-{OPENVINO_VERSION}")
    ready = tools.root / "venv" / ".oracle-ready"
    if ready.is_file() and tools.optimum_cli.exists():
        return tools
    tools.root.mkdir(parents=True, exist_ok=True)
    log(f"oracle: building the OpenVINO export venv in {tools.root / 'venv'} (once, ~2 min)")
    venv.EnvBuilder(with_pip=True, clear=True).create(tools.root / "venv")
    python = str(tools.root / "venv" / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet", *_REQUIREMENTS]
    r = subprocess.run(pip, capture_output=True, text=True, env=_clean_env())
    if r.returncode != 0:
        raise EmbeddedError(f"`{shlex.join(pip)}` failed:\n{r.stderr[-2000:]}\nthe OpenVINO export needs PyPI "
                            "and the torch==2.13.0 CPU wheel; or export your own IR and pass --model")
    subprocess.run([python, "-m", "pip", "uninstall", "--quiet", "-y", *_CUDA_EXTRAS],
                   capture_output=True, text=True, env=_clean_env())
    ready.write_text(OPENVINO_VERSION + "\n")
    return tools


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
    if (out / ".oracle-ready").is_file():
        return out
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    script = tmp / "convert_gguf.py"
    script.write_text(CONVERT_SCRIPT)
    r = subprocess.run(["nice", "-n", "10", sys.executable, str(script), str(gguf), str(tmp)],
                       capture_output=True, text=True, timeout=1200, env=dict(_clean_env(), HF_HUB_OFFLINE="1"))
    script.unlink()
    if r.returncode != 0 or not (tmp / "config.json").is_file():
        raise EmbeddedError(f"converting {gguf} to a Hugging Face folder failed:\n{r.stderr[-2000:]}")
    (tmp / ".oracle-ready").write_text(str(gguf) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def openvino_model(weight_format: str = "fp32", *, log=print) -> Path:
    """The embedded SmolLM2 as OpenVINO IR in `weight_format`, exported once with optimum-cli."""
    if weight_format not in WEIGHT_FORMATS:
        raise EmbeddedError(f"OpenVINO weight format {weight_format!r}: choose one of {', '.join(WEIGHT_FORMATS)}")
    gguf = default_model()
    out = cache_dir() / "models" / f"{gguf.stem.lower()}-openvino-{weight_format}-{OPENVINO_VERSION}"
    if (out / ".oracle-ready").is_file():
        return out
    source = hf_folder(gguf)
    tools = export_tools(log=log)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    cmd = ["nice", "-n", "10", str(tools.optimum_cli), "export", "openvino", "-m", str(source),
           "--task", "text-generation-with-past", "--weight-format", weight_format,
           *_FORMAT_ARGS.get(weight_format, ()), str(tmp)]
    log(f"oracle: exporting the {weight_format} OpenVINO IR to {out} (once, ~1 min)")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=dict(_clean_env(), HF_HUB_OFFLINE="1"))
    if r.returncode != 0 or not (tmp / "openvino_model.xml").is_file():
        raise EmbeddedError(f"`{shlex.join(cmd)}` failed:\n{r.stderr[-2000:]}\nremove {tools.root} to rebuild "
                            "the export venv")
    (tmp / ".oracle-ready").write_text(f"{weight_format} {OPENVINO_VERSION} from {source}\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


if __name__ == "__main__":  # python -m oracle.targets.openvino_export [FORMAT ...]: build the IRs (CI does this once)
    for fmt in sys.argv[1:] or BUILT_BY_DEFAULT:
        print(fmt, openvino_model(fmt))
