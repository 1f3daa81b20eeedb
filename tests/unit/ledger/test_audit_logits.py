"""The audit's rules for items judged on stored figures (ledger/audit_logits.py): each re-derives the verdict by the
gate's own function under the run's bars, and each can fail naming the item and the field (the real reports' cases:
tests/servers/test_audit_evidence_llamacpp.py and test_sampling_llamacpp.py)."""

from __future__ import annotations

import copy

import pytest

from oracle.ledger.audit_logits import logits_items

JUDGED = {"checks": {"logits": {"kld_max": 0.05, "same_top1_min": None},
                     "decode_vs_prefill": {"max_delta": 1.0}, "sampling_distribution": {"max_shift": 0.5}}}


def _check(cid: str, verdict: str) -> dict:
    return {"id": cid, "kind": "sampling" if cid.startswith("sampling") else "logits", "verdict": verdict,
            "outcome": "passed"}


def _report() -> dict:
    prompt = {"positions": 4, "mean_kld": 0.02, "same_top1": 1.0, "mean_kld_uncertainty": 0.0,
              "same_top1_uncertainty": 0.0, "rms_delta_p": 0.0}
    worst = {"prompt": "a", "position": 1, "token": 5, "decode": -1.0, "prefill": -1.2}
    return {"checks": [_check("logits", "pass"), _check("logits[a]", "info"), _check("decode-vs-prefill", "pass"),
                       _check("sampling-distribution", "consistent")],
            "logits": {"thresholds": {"kld_max": 0.05, "same_top1_min_percent": None}, "errors": {},
                       "overall": dict(prompt),
                       "per_prompt": {"a": prompt}, "method": {}},
            "decode_vs_prefill": {"tolerance_nats": 1.0, "modes": {"one-pass": {"overall": {
                "positions": 3, "max_abs_delta": 0.2, "worst": worst, "same_top1": 1.0, "mean_kld": 0.0,
                "bit_identical": 0}, "per_prompt": {}, "errors": {}}}},
            "sampling": {"distribution": {"verdict": "consistent", "p_value_loglik": 0.4, "p_value_ranks": 0.6,
                                          "alpha": 0.05, "detectable_shift": 0.3, "max_shift": 0.5}}}


def _set(path: str, value):
    def change(report: dict) -> None:
        *head, last = path.split("/")
        node = report
        for part in head:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(last) if isinstance(node, list) else last] = value
    return change



def test_the_report_as_written_follows_and_each_item_is_re_derived():
    derived: set[str] = set()
    assert logits_items(_report(), JUDGED, derived) is None
    assert derived == {"logits", "logits[a]", "decode-vs-prefill", "sampling-distribution"}


def test_items_without_their_figures_are_left_to_be_named_outcome_only():
    report = _report()
    for key in ("logits", "decode_vs_prefill", "sampling"):
        del report[key]
    derived: set[str] = set()
    assert logits_items(report, JUDGED, derived) is None and derived == set()


@pytest.mark.parametrize("change, named", [
    (_set("logits/per_prompt/a/mean_kld", 0.2), "logits: field logits.overall.mean_kld is 0.02, but its prompts'"),
    (_set("logits/thresholds/kld_max", 1.0), "logits: field logits.thresholds.kld_max is 1.0, but the run was judged"),
    (lambda r: (_set("logits/per_prompt/a/mean_kld", 0.2)(r), _set("logits/overall/mean_kld", 0.2)(r)),
     "logits: field verdict is 'pass', but its figures (logits.overall) against the run's bars: Mean KLD 0.200000 > "
     "--kld-max 0.05"),
    (_set("checks/1/verdict", "pass"), "logits[a]: field verdict is 'pass', but its figures (logits.per_prompt.a) "
                                       "gives 'info'"),
    (_set("decode_vs_prefill/modes/one-pass/overall/max_abs_delta", 2.0), "decode-vs-prefill: field verdict is "
                                                                          "'pass', but its figures"),
    (_set("decode_vs_prefill/tolerance_nats", 5.0), "decode-vs-prefill: field decode_vs_prefill.tolerance_nats is 5.0"),
    (_set("sampling/distribution/p_value_ranks", 0.01), "sampling-distribution: field verdict is 'consistent', but "
                                                        "its p-values (0.4, 0.01 at 0.025 each)"),
    (_set("sampling/distribution/detectable_shift", 0.9), "give 'insufficient'"),
    (_set("sampling/distribution/verdict", "shifted"), "field sampling.distribution.verdict is 'shifted'"),
    (_set("sampling/distribution/max_shift", 1.0), "field sampling.distribution.max_shift is 1.0"),
])
def test_each_edit_is_named(change, named):
    report = copy.deepcopy(_report())
    change(report)
    found = logits_items(report, JUDGED, set())
    assert found is not None and named in found, found


def test_figures_of_another_shape_are_named_not_a_traceback():
    report = _report()
    report["logits"]["overall"] = {"positions": 4, "mean_kld": "high"}
    report["logits"]["per_prompt"] = {}
    found = logits_items(report, JUDGED, set())
    assert found is not None and found.startswith("logits: its stored figures are not what a run writes"), found


def test_a_figure_within_its_rounding_of_the_bar_is_not_called_either_way():
    report = _report()
    report["sampling"]["distribution"]["p_value_ranks"] = 0.025  # written rounded: 0.0249996 reads 0.025
    report["checks"][3]["verdict"] = report["sampling"]["distribution"]["verdict"] = "shifted"
    assert logits_items(report, JUDGED, set()) is None
