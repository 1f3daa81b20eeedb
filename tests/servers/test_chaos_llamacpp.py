"""The chaos run on the embedded llama-server: a ladder-and-boots gate (3 prompts x 32 tokens, `--ladder
1,2 --boots 2`) against the shared reference, one fault per round at a seeded moment (tests/helpers/chaos.py),
each fault kind once. After each: the documented exit code, every record on disk intact and listed, the cause
named, no server left, the reference byte-identical, no traceback; and a clean gate passes afterwards.
benchmarks/chaos.py runs more rounds. docs/faults.md lists the faults."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil

import pytest

from chaos import FAULTS, Chaos, Outcome
from conftest import tiny_rows, write_suite

pytestmark = pytest.mark.slow

SEED = 1  # a round that fails prints its fault, seed and moment: Chaos.round(fault, seed=SEED, ...) again


@pytest.fixture(scope="module")
def chaos(shared_reference, tmp_path_factory) -> Chaos:
    work = tmp_path_factory.mktemp("chaos")
    return Chaos(work, suite=write_suite(work, "tiny", tiny_rows()), reference=shared_reference)


@pytest.fixture(scope="module")
def plan(chaos):
    """The gate without a fault (it must pass): the order its records finish in, where faults are placed."""
    return chaos.clean("baseline")


# A freeze between two conditions too: the administration requests keep --request-timeout. The freeze round's
# --request-timeout is sized from the clean gate's slowest request (Plan.freeze_timeout): a loaded host's first
# request must not reach it before the fault is planted.
CASES = list(FAULTS)


def test_the_freeze_rounds_deadline_grows_with_a_slow_host(plan):
    assert plan.slowest_s > 0
    assert plan.freeze_timeout(10) == max(10, math.ceil(3 * plan.slowest_s))
    slow = dataclasses.replace(plan, slowest_s=12.2)
    assert slow.freeze_timeout(10) == 37 and slow.freeze_timeout(60) == 60


@pytest.mark.parametrize("fault", CASES)
def test_a_fault_at_a_seeded_moment_stops_the_run_cleanly(chaos, plan, fault):
    outcome = chaos.round(fault, seed=SEED, plan=plan)
    assert outcome.problems == [], outcome.describe()
    assert outcome.exit_code == {"oracle-kill": -9}.get(fault, pytest.ExitCode.INTERRUPTED)


def test_the_next_run_after_the_faults_passes(chaos, plan):
    again = chaos.clean("after")
    assert sorted(again.keys) == sorted(plan.keys)


def test_the_judge_sees_a_lost_record_a_wrong_exit_code_and_a_silent_report(chaos, plan, tmp_path):
    """The checks of a round can fail: a passing report judged as a server kill breaks each promise."""
    report = chaos.workdir / "planted"
    shutil.copytree(chaos.workdir / "baseline", report)
    npz = sorted((report / "records").glob("boot1-c1/*.npz"))[0]
    npz.write_bytes(npz.read_bytes()[:100])  # a record cut short
    identity = report / "identity.json"
    rep = json.loads(identity.read_text())
    rep["records"]["finished"].pop(plan.keys[-1])  # a record on disk the report does not list
    identity.write_text(json.dumps(rep))
    outcome = Outcome("server-kill", SEED, "planted", exit_code=0,
                      output="Traceback (most recent call last):")
    chaos._judge(outcome, report, marker="no-such-run", before={})
    problems = "\n".join(outcome.problems)
    assert "exit code 0, documented 2" in problems
    assert "a traceback reached the user" in problems
    assert f"the reference {chaos.reference} changed" in problems
    assert f"{npz.relative_to(report).with_suffix('.json')} does not parse" in problems
    assert "identity.json verdict 'pass', expected 'partial'" in problems
    assert f"records on disk missing from identity.json's records.finished: ['{plan.keys[-1]}']" in problems
    assert "the report does not say what stopped the run: ''" in problems
    assert outcome.lost and not outcome.stopped_cleanly
