"""oracle lives beside widely used pytest plugins (issue #51): in one environment with pytest-cov, pytest-benchmark,
pytest-randomly, pytest-html, pytest-base-url, pytest-timeout and pytest-asyncio, `pytest --help` lists every
plugin's options with no clash, and a gate runs (against the session's shared llama-server: one prompt, 4 tokens).
A project's own `--url` (the generic name oracle gave up) now lives beside oracle too; an oracle name taken twice
is still the clash pytest stops at, which shows the check can fail.

The environment is a venv made once per test session that sees this interpreter's site-packages (oracle and its
dependencies, as installed) through a .pth file, with the plugins installed into it from PyPI at the versions
below."""

from __future__ import annotations

import json
import os
import re
import site
import subprocess
import sys
from pathlib import Path

import pytest

from oracle_tests_conftest import NO_WARMUP, REPO, tiny_rows, write_suite

pytestmark = pytest.mark.slow

PLUGINS = ("pytest-cov==7.1.0", "pytest-benchmark==5.3.1", "pytest-randomly==5.1.0", "pytest-html==4.2.0",
           "pytest-base-url==2.1.0", "pytest-timeout==2.4.0", "pytest-asyncio==1.5.0")
# One option of each, as its --help shows it.
THEIR_OPTIONS = ("--cov=", "--benchmark-skip", "--randomly-seed", "--html=", "--base-url=", "--timeout=",
                 "--asyncio-mode=")


@pytest.fixture(scope="session")
def plugins_python(tmp_path_factory) -> Path:
    """The venv's python: the plugins installed, oracle and the rest seen from this interpreter's site-packages."""
    venv = tmp_path_factory.mktemp("plugins-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    own = subprocess.run([str(python), "-c", "import site; print(site.getsitepackages()[0])"], check=True,
                         capture_output=True, text=True).stdout.strip()
    # addsitedir, not a plain path: the host's own .pth files run too (an editable oracle's finder among them).
    Path(own, "oracle_host.pth").write_text("".join(f"import site; site.addsitedir({d!r})\n"
                                                    for d in site.getsitepackages()))
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *PLUGINS],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"pip could not install the plugins:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return python


def _pytest(python: Path, folder: Path, *args: str) -> subprocess.CompletedProcess:
    # PYTHONPATH as this run has it: the oracle under test wins over an installed one, as in every gate of the tests.
    env = {**os.environ, "PYTEST_ADDOPTS": "", "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH", "")]))}
    return subprocess.run([str(python), "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=600)


def _project(folder: Path, conftest: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    if conftest:
        (folder / "conftest.py").write_text(conftest)
    return folder


# A project's own option under a name oracle used to declare: it clashed with oracle's --url before issue #51.
OWN_URL = "def pytest_addoption(parser):\n    parser.addoption('--url', default=None, help='the own URL')\n"


def test_help_shows_every_plugins_options_and_oracles_without_a_clash(plugins_python, tmp_path):
    done = _pytest(plugins_python, _project(tmp_path, OWN_URL), "--help")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for option in (*THEIR_OPTIONS, "--backend=NAME", "--oracle-url=URL", "--oracle-seed=N", "--url=URL"):
        assert option in done.stdout, f"{option} is not in --help"
    plugins = _pytest(plugins_python, tmp_path, "--co", "-q").stdout + _pytest(plugins_python, tmp_path, "-VV").stdout
    for name in ("cov", "benchmark", "randomly", "html", "base-url", "timeout", "asyncio", "oracle"):
        assert name in plugins, f"the plugin {name} was not loaded:\n{plugins}"


def test_an_oracle_name_taken_twice_is_the_clash_pytest_stops_at(plugins_python, tmp_path):
    """The check can fail: a conftest that declares --oracle-url stops the session, as a plugin declaring --url
    stopped every session beside oracle before the rename."""
    taken = "def pytest_addoption(parser):\n    parser.addoption('--oracle-url', default=None)\n"
    done = _pytest(plugins_python, _project(tmp_path, taken), "--help")
    assert done.returncode != 0
    # pytest 8 names the option ("option names {'--oracle-url'} already added"), pytest 9 its dest first.
    assert re.search(r"option names \{'--oracle-url'\} already added|dest 'oracle_url' already used", done.stderr), \
        done.stderr[-3000:]


def test_a_gate_runs_beside_them(plugins_python, shared_server, tmp_path):
    project = _project(tmp_path / "project", OWN_URL)
    suite = write_suite(tmp_path, "one", tiny_rows()[:1])
    report = tmp_path / "report"
    done = _pytest(plugins_python, project, "-p", "no:hypothesispytest", "--backend=llamacpp",
                   f"--oracle-url={shared_server.url}", "--url=http://the-projects-own.example",
                   f"--oracle-suite={suite}", "--max-tokens=4", "--canaries=none", *NO_WARMUP,
                   f"--report-dir={report}", "--timeout=300")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Using --randomly-seed=" in done.stdout  # pytest-randomly took part, and the gate passed all the same
    identity = json.loads((report / "identity.json").read_text())
    assert identity["verdict"] == "pass" and identity["summary"]["records"] == [1, 1], identity["summary"]
