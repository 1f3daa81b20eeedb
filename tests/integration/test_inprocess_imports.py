"""An in-process session (pytester, as the tests' gates run) does not import hypothesis again: pytester drops the
modules each session imported when it ends, so a module every session loads belongs in the test run itself."""

from __future__ import annotations

import sys

# What the inner session's modules are, read when it ends (its conftest; pytester drops them after the run).
RECORDER = """
import sys
def pytest_unconfigure(config):
    (config.rootpath / "modules.txt").write_text("\\n".join(sorted(sys.modules)))
"""


def test_an_in_process_session_imports_hypothesis_no_more(pytester):
    """Hypothesis's pytest plugin imports hypothesis in every session's terminal summary: ~1 s of imports and
    assertion rewriting a session, unless the test run loaded it first (tests/conftest.py does)."""
    pytester.makeconftest(RECORDER)
    pytester.makepyfile("def test_nothing():\n    pass\n")
    before = set(sys.modules)
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    fresh = set((pytester.path / "modules.txt").read_text().split()) - before
    assert not {m for m in fresh if m.split(".")[0] == "hypothesis"}, sorted(fresh)
