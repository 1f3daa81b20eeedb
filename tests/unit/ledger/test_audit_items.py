"""The audit's rules for what a report states beside its prompts (ledger/audit_items.py): each can fail, naming the
item and the field; the same report as the run wrote it follows."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest

from oracle.ledger.audit_items import canary_items, evidence_items, stated_items

JUDGED = {"near_tie_nats": 0.5, "allow_near_ties": False, "allow_inconclusive": [],
          "checks": {"speed": {"min_speedup": 1.2, "noise_floor": 0.05}, "canaries": {"strict": False}}}


def _check(cid, kind, verdict, outcome, evidence=None):
    return {"id": cid, "kind": kind, "verdict": verdict, "detail": "", "lines": [], "evidence": evidence or {},
            "outcome": outcome, "inconclusive_kind": None}


def _report() -> dict:
    checks = [_check("tokens[a]", "tokens", "exact", "passed"), _check("tokens[b]", "tokens", "near-tie", "failed"),
              _check("cache-zero", "cache", "pass", "passed", {"cached_requests": {}, "counter_deltas":
                                                                {"prefix_cache_hits": 0.0}}),
              _check("ladder[c4]", "ladder", "exact", "passed", {"overlap": {"asked": 4, "reached": 4}}),
              _check("speed", "speed", "fail", "failed"),
              _check("code[x]", "canary", "fail", "failed", {"ok": False, "verdict": "fail"})]
    return {"mode": "gate", "verdict": "fail", "complete": True, "closed": True, "interruption": None,
            "checks": checks, "summary": {"exact": [1, 2], "near_tie": 1, "divergent": 0, "inconclusive": 0,
                                          "checks_passed": [3, 6]},
            "speed": {"vs_reference": {"label": "headline", "median": 0.8, "ci95": [0.7, 0.9], "prompts": 6,
                                       "candidate_median": 80.0, "reference_median": 100.0}},
            "canaries": {"code[x]": {"ok": False, "verdict": "fail"}}}


# The reference as canary_items reads it without completions to compare: its manifest's canary rows.
REFERENCE_CANARIES = SimpleNamespace(manifest={"canaries": {"code[x]": {"ok": True}}})


def test_the_report_as_written_follows():
    report = _report()
    assert stated_items(report, JUDGED) is None
    assert evidence_items(report, JUDGED) is None
    assert canary_items(report, JUDGED, REFERENCE_CANARIES) is None


def test_a_stale_code_set_fails_as_the_run_judged_it_without_a_reference():
    """code-fresh is finished strict (canaries/test_code_result.py): its `fail` follows, --canary-strict or not."""
    report = {"canaries": {"code-fresh": {"family": "code-fresh", "ok": False, "stale": ["x"], "verdict": "fail"}}}
    assert canary_items(report, JUDGED, None) is None
    report["canaries"]["code-fresh"]["verdict"] = "info"
    assert "canaries.code-fresh: field verdict is 'info'" in canary_items(report, JUDGED, None)


def _set(path: str, value):
    def change(report: dict) -> None:
        *head, last = path.split(".")
        node = report
        for part in head:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[last if not isinstance(node, list) else int(last)] = value
    return change


@pytest.mark.parametrize("change, rule, named", [
    (_set("verdict", "pass"), stated_items, "verdict: field verdict is 'pass', but its items give 'fail'"),
    (_set("checks.1.outcome", "passed"), stated_items, "tokens[b]: field outcome is 'passed'"),
    (_set("summary.exact", [2, 2]), stated_items, "summary: field exact is [2, 2]"),
    (_set("summary.checks_passed", [6, 6]), stated_items, "summary: field checks_passed"),
    (_set("checks.4.verdict", "pass"), evidence_items, "speed: field verdict is 'pass', but the speed card's"),
    (_set("checks.2.evidence.cached_requests", {"a@boot1-c1": 12}), evidence_items,
     "cache-zero: field verdict is 'pass', but evidence.cached_requests lists 1"),
    (_set("checks.2.evidence.counter_deltas.prefix_cache_hits", 3.0), evidence_items,
     "evidence.counter_deltas.prefix_cache_hits moved by 3"),
    (_set("checks.3.evidence.overlap.reached", 2), evidence_items, "ladder[c4]: field verdict is 'exact', but its "
                                                                   "evidence.overlap reached 2 of 4"),
    (_set("canaries.code[x].verdict", "info"), canary_items, "canaries.code[x]: field verdict is 'info'"),
])
def test_each_rule_names_the_item_and_the_field(change, rule, named):
    report = copy.deepcopy(_report())
    change(report)
    args = (report, JUDGED, REFERENCE_CANARIES) if rule is canary_items else (report, JUDGED)
    found = rule(*args)
    assert found is not None and named in found, found
