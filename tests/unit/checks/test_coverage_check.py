"""The coverage item: pass when every required condition held in some run, else inconclusive (kind coverage)
naming why in each run and how to cause it (from the latest run, a ladder level saying it best)."""

from __future__ import annotations

from types import SimpleNamespace

from oracle.backends.base import PrefillChunk
from oracle.compare.verdicts import passed
from oracle.checks.coverage import CoverageChecks, CoverageSettings, CoverageState
from oracle.report.state import ReportState
from oracle.compare.coverage import run_coverage
from oracle.store.records import Condition, Record


def rec(pid: str, sent: float, first: float, last: float, *, prompt: int = 60) -> Record:
    times = [first - sent + (last - first) * k / 7 for k in range(8)]
    return Record(id=pid, condition=Condition(boot=1, concurrency=2), prompt_ids=list(range(prompt)),
                  completion_ids=[1] * 8, finish_reason="length", token_times_s=times, started_at=sent)


def checks(required: tuple[str, ...], coverage: dict) -> CoverageChecks:
    plan = SimpleNamespace(options=SimpleNamespace(check=lambda name: CoverageSettings(required)))
    state = ReportState(mode="run", backend="llamacpp", complete=True, states={"coverage": CoverageState(coverage)})
    return CoverageChecks(plan, state, PrefillChunk(512, "-ub 512", "-ub"))


CHUNK = PrefillChunk(512, "llama.cpp's default -ub 512", "-ub")
C1 = run_coverage([rec("a", 0, 1, 2), rec("b", 3, 4, 5)], chunk=CHUNK, preemptions=None)
AT_ONCE = run_coverage([rec("a", 0, 1, 5), rec("b", 0, 1.1, 5)], chunk=CHUNK, preemptions=None, asked=2, reached=2)
STAGGERED = run_coverage([rec("a", 0, 1, 5), rec("b", 2, 2.5, 6)], chunk=CHUNK, preemptions=None, asked=2,
                         reached=2, staggered=True)


def test_missing_conditions_are_inconclusive_of_kind_coverage_naming_why_and_how():
    check = checks(("chunked-prefill", "mixed-batch"), {"boot1-c1": C1, "boot1-c2": AT_ONCE}).coverage_check().check
    assert check.verdict == "inconclusive" and check.inconclusive_kind == "coverage"
    assert check.detail == ("chunked-prefill, mixed-batch did not happen; chunked-prefill: no prompt exceeded -ub 512 "
                            "(longest: a, 60 tokens): add a prompt longer than 512 tokens (e.g. --oracle-suite coverage) or "
                            "lower -ub below 60")
    assert check.lines[3].startswith("mixed-batch did not happen in any of 2 run(s): add --ladder-arrivals staggered")
    assert check.evidence["missing"] == ["chunked-prefill", "mixed-batch"]
    assert not passed(check, allow_near_ties=False, allow_inconclusive=())
    assert passed(check, allow_near_ties=False, allow_inconclusive=("coverage",))


def test_conditions_held_in_some_run_pass():
    check = checks(("mixed-batch", "overlap"), {"boot1-c1": C1, "boot1-c2": STAGGERED}).coverage_check().check
    assert check.verdict == "pass"
    assert check.detail == "every required condition happened: mixed-batch in boot1-c2; overlap in boot1-c2"


def test_under_pytest_n_each_servers_runs_are_kept_apart_in_the_merged_report(tmp_path):
    from oracle.checks import fresh_states
    from oracle.gate.merge import merge_workers
    from oracle.gate.placement import server_label

    def payload(index: int) -> dict:
        state = ReportState(mode="run", backend="llamacpp", complete=True, closed=True, states=fresh_states())
        state.apply({"coverage": {"boot1-c1": C1}})
        return {"url": f"http://127.0.0.1:{9000 + index}", "owned": None, "state": state.as_json(),
                "carried": {}}

    controller = ReportState(mode="run", backend="llamacpp", states=fresh_states())
    merge_workers(controller, {0: payload(0), 1: payload(1)}, workers=2, root=tmp_path, allow_mixed=False)
    assert controller.states["coverage"].runs == {f"boot1-c1@{server_label(0)}": C1, f"boot1-c1@{server_label(1)}": C1}
    assert controller.as_json()["coverage"] == controller.states["coverage"].runs
