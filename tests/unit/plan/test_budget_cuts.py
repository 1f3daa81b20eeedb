"""--oracle-budget's cuts in the run plan, under the real canaries check's rule (no server): the smallest needle
lengths kept while the run fits, from the first that does not every larger one left out with its reason, each of its
depths' tests given the row it reports; lengths the user gave run whatever the budget."""

from __future__ import annotations

from types import SimpleNamespace

from oracle.checks import CHECKS
from oracle.checks.descriptor import Droppable
from oracle.plan.run_plan import _budget_cuts, _by_check
from oracle.run.plan_estimate import Part, Rates, RunPlan

CANARIES = next(c for c in CHECKS if c.name == "canaries")
RATES = Rates(100.0, 50.0, "measured")  # 100 prompt tokens a second: a needle of N tokens takes N / 100 s


def _plan(lengths: tuple[int, ...], depths: int = 2):
    parts = [Part("primary prompts (c1)", 2, 100, 48, 10.0)]
    cuttable = {}
    for length in lengths:
        parts.append(Part(f"needles {length}", depths, length * depths, 0, length * depths / 100.0))
        for depth in range(depths):
            d = Droppable(length, f"needle[{length}-d{depth}]", "needle", {"length": length, "depth": depth},
                          {"length": length})
            cuttable[f"canaries/test_needle.py::test_needle[{length}-d{depth}]"] = (CANARIES, d, f"needles {length}")
    return RunPlan(RATES, parts, budget_s=None, budget_source="--oracle-budget 40s"), cuttable


def _options(budget: float, lengths=None):
    settings = SimpleNamespace(needle_lengths=lengths, lengths_from="given with --needle-lengths")
    return SimpleNamespace(budget=budget, check=lambda name: settings)


def test_the_smallest_lengths_are_kept_while_the_run_fits_and_every_larger_one_is_left_out():
    plan, cuttable = _plan((1024, 2048, 4096))  # 10 s of the rest; 20.5 s, 41 s, 82 s of needles
    drops = {}
    _budget_cuts(plan, _by_check(plan, cuttable), _options(40.0), drops)
    assert [p.name for p in plan.parts] == ["primary prompts (c1)", "needles 1024"]
    assert [(d["item"], d["length"], d["estimate_s"]) for d in plan.dropped] == [
        ("needles 2048", 2048, 41.0), ("needles 4096", 4096, 81.9)]
    assert plan.dropped[0]["reason"] == (
        "needle 2048 would take ~41 s (2 depth(s)) at 100 tok/s prefill, beyond the budget of 40 s (--oracle-budget "
        "40s; the rest of the run is ~30 s); --needle-lengths 1024,2048 to run it")
    assert sorted(drops) == [f"canaries/test_needle.py::test_needle[{n}-d{d}]" for n in (2048, 4096) for d in (0, 1)]
    item, family, reason, row = drops["canaries/test_needle.py::test_needle[4096-d1]"]
    assert (item, family, row) == ("needle[4096-d1]", "needle", {"length": 4096, "depth": 1, "budget": True})
    assert reason == plan.dropped[1]["reason"]


def test_a_length_that_fits_after_one_that_did_not_is_left_out_too():
    """Sizes are kept smallest first: once one is left out every larger one goes, whatever it costs."""
    plan, cuttable = _plan((512, 8192), depths=1)
    plan.parts[1].estimate_s = 100.0  # the 512 costs more than the budget (a slow prefill at that length)
    drops = {}
    _budget_cuts(plan, _by_check(plan, cuttable), _options(40.0), drops)
    assert [d["length"] for d in plan.dropped] == [512, 8192]


def test_lengths_the_user_gave_run_whatever_the_budget():
    plan, cuttable = _plan((1024, 2048, 4096))
    drops = {}
    _budget_cuts(plan, _by_check(plan, cuttable), _options(1.0, lengths=(1024, 2048, 4096)), drops)
    assert not plan.dropped and not drops and len(plan.parts) == 4
    assert plan.notes == ["needle lengths 1024, 2048, 4096 are run whatever the budget: given with --needle-lengths"]
