"""Property-based fuzzing of what users hand oracle: gate option values, suite files, recorded references (a real
one, damaged), report folders for `oracle diff` / `html` / `repro` / `seal`, sealed report folders edited after
their run for every command that reads one (`diff`, `html`, `repro`, `ledger add`, `history --check`,
`history --audit`), and combinations of options where one has no effect without another. No server is needed: the gates run
against http://127.0.0.1:9, where nothing answers, so every gate here must end in a usage error (exit 4).

The properties (tests/helpers/fuzz.py, whose checks these run): no Python traceback reaches the user, the exit
code is the documented one (docs/faults.md: the gate 4, an `oracle` command 2 on bad input), every folder given
as input is byte-identical afterwards, and bad references and suites are refused as such (never taken to the
server). A small fixed budget here (derandomized: the same examples every run); a larger one is
`python benchmarks/fuzz_inputs.py --examples N`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from fuzz import Outcome, check_reference, check_report, reference_cases, report_cases
from fuzz_gate import (check_combination, check_options, check_suite, gate_flag_names, gate_option_names,
                       option_args, option_combinations, suite_files)
from fuzz_sealed import check_sealed_report, sealed_report_cases

pytestmark = pytest.mark.filterwarnings("ignore")


def budget(n: int):
    """n derandomized examples, no shrinking (a failure prints its example as it was generated), no time limit
    per example (a gate run takes a second), no example database written into the working folder."""
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=(HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large))


@pytest.fixture
def gate(pytester):
    """The gate in this process (pytester), its output in one string."""

    def run(args: list[str]) -> Outcome:
        result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", *args)
        return Outcome(int(result.ret), "\n".join(result.outlines + result.errlines))

    run.folder = lambda: Path(tempfile.mkdtemp(dir=pytester.path, prefix="case-"))
    return run


@budget(12)
@given(case=reference_cases())
def test_a_damaged_reference_is_refused_by_every_reader_and_left_as_it_was(gate, case):
    """A real recorded reference with one file damaged, or its manifest / a record of another shape (resealed, so
    that the shape itself is judged): the gate, `oracle diff`, `seal` and `repro` refuse it before any request."""
    found = check_reference(case, gate.folder(), gate)
    assert not found, f"{case}: {found}"


@budget(15)
@given(case=report_cases())
def test_a_damaged_report_folder_is_refused_cleanly_by_diff_html_and_repro(tmp_path_factory, case):
    found = check_report(case, tmp_path_factory.mktemp("report-case"))
    assert not found, f"{case}: {found}"


OPTION_NAMES = gate_option_names()


@budget(20)
@given(args=option_args(OPTION_NAMES))
def test_generated_option_values_end_in_a_clean_usage_error(gate, args):
    """One to three gate options with generated values (empty, starting with '-', huge, NUL, surrogates, odd
    URLs), as --opt=value or as two words."""
    found = check_options(args, gate.folder(), gate)
    assert not found, f"{args!r}: {found}"


@pytest.mark.parametrize("args", [["--oracle-url", "http://[::1"], [f"--report-dir={'x' * 300}"],
                                  ["--sweep", "-ctk=f16,q8_0"], ["--server-args", "-np 4"]],
                         ids=["url-unclosed-bracket", "report-dir-300-characters", "sweep-value-with-dash",
                              "server-args-with-dash"])
def test_option_values_users_gave_end_in_a_clean_usage_error(gate, args):
    """Values users gave that once ended in a traceback or in pytest's own parser, beside the generated ones."""
    found = check_options(args, gate.folder(), gate)
    assert not found, f"{args!r}: {found}"


@budget(12)
@given(case=suite_files())
def test_a_bad_suite_file_is_refused_before_the_server_is_asked(gate, case):
    what, payload = case
    found = check_suite(payload, gate.folder(), gate)
    assert not found, f"{what}: {found}"


@budget(15)
@given(case=sealed_report_cases())
def test_a_sealed_report_edited_after_its_run_is_refused_by_every_command(tmp_path_factory, case):
    """#52: identity.json edited (its seal names it), a record or log changed, removed or added, or a verdict
    edited with a matching seal hash (its verdicts re-derived name the field): diff, html, repro and ledger add
    exit 2; history --check and --audit of a ledger that took it before the edit exit 1."""
    found = check_sealed_report(case, tmp_path_factory.mktemp("sealed-case"))
    assert not found, f"{case}: {found}"


@budget(8)
@given(args=option_combinations(gate_flag_names()))
def test_an_option_without_effect_in_its_combination_is_refused(gate, args):
    """#52: --sweep-no-repro without --sweep, --canary-strict with --canaries none, --allow-mixed-servers with one
    server, among other flags and companions: exit 4 before the server is asked, no report written."""
    found = check_combination(args, gate.folder(), gate)
    assert not found, f"{args!r}: {found}"
