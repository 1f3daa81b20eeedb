"""A gate run in the repository's root, as a newcomer runs the README's main job, loads tests/conftest.py: pytest
loads the conftest of its testpaths before the gate names its own items. There the package may be installed
without the test extra (the README's install line), so that file must load without it and leave the gate as it is.
"""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

from oracle_tests_conftest import REPO, SLOWEST, gate_env, pytest_configure

# As an install without the test extra: hypothesis cannot be imported (nor is its pytest plugin there: -p no:...).
WITHOUT_HYPOTHESIS = """
import sys

class NoHypothesis:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] == "hypothesis":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoHypothesis)
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def test_a_gate_in_the_repository_root_runs_without_the_test_extra(tmp_path):
    """Nothing answers on the --oracle-url: the gate itself must say so (its usage error, exit 4; docs/faults.md), not
    pytest that the tests' conftest failed to load ('ImportError while loading conftest', exit 4 too)."""
    argv = [sys.executable, "-c", WITHOUT_HYPOTHESIS, "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
            "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9", "--canaries=none", f"--report-dir={tmp_path / 'r'}"]
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, env=gate_env())
    out = done.stdout + done.stderr
    assert "ImportError while loading conftest" not in out, out[-3000:]
    assert "--oracle-url http://127.0.0.1:9: the server does not answer its health check" in out, out[-3000:]
    assert done.returncode == 4, (done.returncode, out[-3000:])


def test_the_tests_slowest_list_is_theirs_not_a_gates():
    """tests/conftest.py's pytest_configure: the project's test runs end with their slowest tests; a gate run in
    the repository's root (which loads that file too) keeps the durations it was given."""
    def config(backend):
        return SimpleNamespace(option=SimpleNamespace(backend=backend, durations=None, durations_min=None))

    tests, gate = config(None), config("llamacpp-cpu")
    pytest_configure(tests)
    pytest_configure(gate)
    assert tests.option.durations == SLOWEST and gate.option.durations is None
