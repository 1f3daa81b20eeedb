"""The fixed list of bad inputs (tests/helpers/bad_inputs.py), each the mistake a user makes, with the answer
oracle owes it: refused with the documented exit code (an `oracle` command 2, the gate 4), the message naming the
value, no traceback, every input folder byte-identical, never taken to a server. Every `oracle` command case runs
here (in process, no server); the gate cases, each its own process, with a few here and all of them in
`python benchmarks/bad_inputs.py`."""

from __future__ import annotations

import pytest

from bad_inputs import CASES, run_case
from fuzz import Outcome

COMMANDS = [c for c in CASES if c.command == "oracle"]
# A few gate cases, one of each kind (a URL, a suite format, folders, an empty command, a value): each is a process
# of its own, seconds apiece; the benchmark runs them all.
GATES = [c for c in CASES if c.command == "gate" and c.name in {
    "url-broken-ipv6", "suite-parquet-garbage", "record-and-reference", "report-dir-is-the-reference",
    "launch-empty", "seed-negative", "seed-huge", "url-port-too-big", "url-spaces", "url-empty",
    "max-tokens-huge", "suite-seed-a-string", "record-inside-the-reference", "logprobs-huge", "servers-json",
    "oracle-machine-two-words",
    "sweep-no-repro-without-sweep", "canary-strict-with-no-canaries", "allow-mixed-servers-one-url"}]


@pytest.mark.parametrize("case", COMMANDS, ids=[c.name for c in COMMANDS])
def test_an_oracle_command_refuses_bad_input_naming_the_value(case, tmp_path):
    assert run_case(case, tmp_path, gate=None) == []


@pytest.mark.parametrize("case", GATES, ids=[c.name for c in GATES])
def test_the_gate_refuses_bad_input_before_any_request(case, tmp_path, pytester):
    def gate(args: list[str]) -> Outcome:
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
        return Outcome(result.ret, result.stdout.str() + result.stderr.str())

    assert run_case(case, tmp_path, gate) == []
