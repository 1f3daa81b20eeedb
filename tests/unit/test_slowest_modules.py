"""Every run of the project's tests ends with its ten slowest modules (tests/conftest.py), each test's setup, call
and teardown summed into its module: CI's log shows where the suite's budget goes (docs/architecture.md)."""

from __future__ import annotations

import pytest

from oracle_tests_conftest import SLOWEST_MODULES, module_times


def _report(nodeid: str, when: str, seconds: float) -> pytest.TestReport:
    return pytest.TestReport(nodeid, ("x.py", 1, "t"), {}, "passed", None, when, [], duration=seconds)


def test_module_times_sum_every_phase_of_a_modules_tests_slowest_first():
    stats = {"passed": [_report("tests/a.py::t1", "call", 2.0), _report("tests/b.py::t[x]", "call", 1.0)],
             "": [_report("tests/a.py::t1", "setup", 0.5), _report("tests/b.py::t[x]", "teardown", 4.0),
                  _report("tests/c.py::K::t", "setup", 0.1)],
             "warnings": [object()]}  # not a test report: left out
    assert module_times(stats) == [("tests/b.py", 5.0), ("tests/a.py", 2.5), ("tests/c.py", 0.1)]


def test_a_run_of_the_projects_tests_lists_its_slowest_modules(pytester):
    """The hook itself, in a pytester run that loads tests/conftest.py's summary as a plugin."""
    pytester.makepyfile(test_fast="def test_a():\n    pass\n",
                        test_slow="import time\n\ndef test_b():\n    time.sleep(0.2)\n")
    pytester.makeconftest("from oracle_tests_conftest import pytest_terminal_summary\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stdout.re_match_lines([r"=+ slowest 2 modules =+", r"^ +0\.[2-9]\d*s test_slow\.py$",
                                  r"^ +\d+\.\d+s test_fast\.py$"])
    assert SLOWEST_MODULES == 10
