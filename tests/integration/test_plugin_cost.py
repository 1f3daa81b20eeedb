"""oracle costs a pytest session that does not use it no more than its option declarations (issue #51): its
`pytest11` entry point loads it in every session of an environment where it is installed, so without --backend it
imports no HTTP client, numpy, parser or ledger, and none of the gate; `pytest --help` neither.

Each session runs as a fresh process in an unrelated project (pytester's in-process runs share this process's
modules); its modules are compared with the same session's under `-p no:oracle`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# What such a session must not import (the top-level names).
HEAVY = {"numpy", "aiohttp", "httpx", "msgspec", "sqlalchemy", "pydantic", "orjson", "jinja2", "tokenizers", "gguf",
         "prometheus_client", "matplotlib", "alembic", "psycopg", "datasets", "torch"}

# Every oracle module such a session may import: the thin plugin, the option declarations and the light leaves they
# read (a name, a default, a validating type). A module added here is a cost added to every pytest session.
LIGHT = {"oracle", "oracle.plugin", "oracle.gate", "oracle.gate.declarations", "oracle.gate.renames",
         "oracle.validators", "oracle.redaction", "oracle.checks", "oracle.checks.canaries.inputs",
         "oracle.backends", "oracle.backends.options", "oracle.backends.hf_options", "oracle.backends.openvino_options",
         "oracle.backends.python_runner_options", "oracle.plan", "oracle.plan.options", "oracle.ledger",
         "oracle.ledger.options", "oracle.sweep.options", "oracle.compare", "oracle.compare.modes",
         "oracle.run.sampling_options",
         "oracle.canary", "oracle.canary.kinds", "oracle.run", "oracle.run.plan_estimate", "oracle.speed",
         "oracle.speed.cells", "oracle.speed.noise", "oracle.speed.sequential_defaults", "oracle.sweep",
         "oracle.sweep.grid", "oracle.store", "oracle.store.machine",
         "oracle.checks.conditions.widths", "oracle.checks.cache_zero", "oracle.checks.tokens",
         *(f"oracle.checks.{kind}{part}" for kind in ("canaries", "conditions", "coverage", "decode_vs_prefill",
                                                       "logits", "neighbours", "prompt_logprob", "sampling_distribution",
                                                       "speculation", "speed", "speed_ab", "speed_cells")
           for part in ("", ".options"))}

_PROBE = ("import sys, pytest\ncode = pytest.main(sys.argv[1:])\nsys.stdout.flush()\n"
          "print('\\nMODULES', ' '.join(sorted(sys.modules)))\nsys.exit(code)\n")


def _project(root: Path, conftest: str = "") -> Path:
    (root / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    (root / "pytest.ini").write_text("[pytest]\n")  # its own root: the repository's pyproject is not read
    if conftest:
        (root / "conftest.py").write_text(conftest)
    return root


def session_modules(project: Path, *args: str) -> set[str]:
    """The modules a pytest session in `project` (a fresh process) has imported when it ends."""
    done = subprocess.run([sys.executable, "-c", _PROBE, "-p", "no:cacheprovider", *args], cwd=project,
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTEST_ADDOPTS": ""})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return set(done.stdout.rsplit("\nMODULES ", 1)[1].split())


def oracles_cost(project: Path, *args: str) -> tuple[set[str], set[str]]:
    """(the heavy modules, the oracle modules) a session with oracle imports beyond the same session without it."""
    added = session_modules(project, *args) - session_modules(project, *args, "-p", "no:oracle")
    assert "oracle.plugin" in added, "the session did not load oracle's entry point"
    return {m for m in added if m.split(".")[0] in HEAVY}, {m for m in added if m.split(".")[0] == "oracle"}


def test_a_session_without_backend_imports_only_the_declarations(tmp_path):
    heavy, own = oracles_cost(_project(tmp_path), "-q")
    assert heavy == set(), sorted(heavy)
    assert own <= LIGHT, f"oracle modules beyond the light ones: {sorted(own - LIGHT)}"


def test_help_imports_only_the_declarations(tmp_path):
    heavy, own = oracles_cost(_project(tmp_path), "--help")
    assert heavy == set(), sorted(heavy)
    assert own <= LIGHT, f"oracle modules beyond the light ones: {sorted(own - LIGHT)}"


def test_the_check_finds_a_heavy_import(tmp_path):
    """The check can fail: a project whose conftest imports the gate's session pulls the HTTP clients and numpy in,
    and the comparison names them (they come with oracle only where oracle is loaded)."""
    project = _project(tmp_path, "import pytest\n\ndef pytest_configure(config):\n"
                                 "    if config.pluginmanager.has_plugin('oracle'):\n"
                                 "        import oracle.gate.session\n")
    heavy, own = oracles_cost(project, "-q")
    assert {"httpx", "aiohttp", "numpy"} <= heavy
    assert "oracle.gate.session" in own - LIGHT
