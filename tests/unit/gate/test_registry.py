"""The check registry and the item specs: kinds answered by registered producers, items planned from the plan."""

from types import SimpleNamespace

import pytest

from oracle.checks import check_named
from oracle.checks.conditions import ConditionSettings
from oracle.checks.speed import SpeedSettings
from oracle.checks.speed_ab import InterleaveOptions
from oracle.checks.speed_cells import CellsSettings
from oracle.compare.verdicts import Check
from oracle.gate.items import item_specs
from oracle.gate.registry import CheckRegistry, Finding


def test_each_kind_is_answered_by_its_producer_with_its_key():
    registry = CheckRegistry()
    registry.register("tokens", lambda pid: Finding(Check(f"tokens[{pid}]", "tokens", "exact", "")))
    registry.register("cache", lambda server=None: Finding(Check("cache-zero", "cache", "pass", "")))
    assert registry.produce("tokens", "p").check.id == "tokens[p]"
    assert registry.produce("cache").check.verdict == "pass"
    with pytest.raises(KeyError, match="no producer registered for gate items of kind 'ladder'; known: cache, tokens"):
        registry.produce("ladder", 4)


class _Suite:
    def ids(self):
        return ["a", "b"]


class _Options:
    logits, workers = False, 1

    def __init__(self, **settings) -> None:
        self.settings = settings  # check kind -> its settings, where not its defaults

    def check(self, name):
        return self.settings.get(name, check_named(name).defaults)


_SPEED = {"speed": SpeedSettings(min_speedup=1.1)}


class _Plan:
    options, capabilities = _Options(), SimpleNamespace(prompt_logprobs=False, chunked_prefill=False)
    suite, mode, f16_gate, logits_gate, floor_wanted = _Suite(), "gate", False, False, False
    distribution_gate = False

    @classmethod
    def given(cls, settings: dict):
        """This plan with these check kinds' settings."""
        plan = cls()
        plan.options = _Options(**settings)
        plan.options.logits = cls.options.logits
        return plan


class _SampledPlan(_Plan):
    distribution_gate = True


def _on(plan, ladder: tuple[int, ...], boots: int, settings: dict | None = None, *, workers: int = 1):
    """The plan with these ladder levels and boots (the conditions' settings), these other check settings, and
    this many servers (pytest -n)."""
    plan = type(plan).given({"conditions": ConditionSettings(ladder, boots=boots), **(settings or {})})
    plan.options.workers = workers
    return plan


def test_the_distribution_item_runs_after_the_evidence_and_before_the_ladder():
    names = [s.name for s in item_specs(_on(_SampledPlan(), (2,), 1))]
    assert names == ["tokens[a]", "tokens[b]", "cache-zero", "speculation", "sampling-distribution", "ladder[c2]"]


class _DvpPlan(_Plan):
    mode, options = "run", SimpleNamespace(logits=True, workers=1, check=_Options().check)


class _RunnerPlan(_DvpPlan):
    capabilities = SimpleNamespace(prompt_logprobs=True, chunked_prefill=True)


def test_a_runner_plan_adds_chunked_prefill_and_prompt_logprob_after_decode_vs_prefill():
    names = [s.name for s in item_specs(_on(_RunnerPlan(), (), 1))]
    assert names[-3:] == ["decode-vs-prefill", "chunked-prefill", "prompt-logprob"]


def test_items_follow_the_plan_in_the_order_they_run():
    names = [(s.name, s.kind, s.key) for s in item_specs(_on(_Plan(), (1, 4), 2))]
    assert names == [("tokens[a]", "tokens", "a"), ("tokens[b]", "tokens", "b"), ("cache-zero", "cache_zero", None),
                     ("speculation", "speculation", None), ("ladder[c1]", "ladder", 1), ("ladder[c4]", "ladder", 4),
                     ("boot[2]", "boot", 2)]
    with_speed = [s.name for s in item_specs(_on(_Plan(), (8,), 1, _SPEED))]
    assert with_speed[2:] == ["cache-zero", "speculation", "speed", "ladder[c8]"]
    ab = _SPEED | {"speed_ab": InterleaveOptions("cmd")}
    interleaved = [s.name for s in item_specs(_on(_Plan(), (8,), 1, ab))]
    assert interleaved[2:] == ["cache-zero", "speculation", "speed-ab", "speed", "ladder[c8]"]  # measured, then judged
    cells_on = _SPEED | {"speed_cells": CellsSettings(((512, 1),))}
    cells = [s.name for s in item_specs(_on(_DvpPlan(), (4,), 1, cells_on))]
    assert cells[2:] == ["cache-zero", "speculation", "speed-cells", "decode-vs-prefill", "ladder[c4]"]
    run = [s.name for s in item_specs(_on(_DvpPlan(), (), 1, _SPEED | {"speed_ab": InterleaveOptions("cmd")}))]
    assert "speed" not in run and "speed-ab" not in run  # judged against a reference only
    dvp = [s.name for s in item_specs(_on(_DvpPlan(), (4,), 1))]  # diagnostic requests: before any ladder level
    assert dvp == ["run[a]", "run[b]", "cache-zero", "speculation", "decode-vs-prefill", "ladder[c4]"]
    two = [s.name for s in item_specs(_on(_Plan(), (), 1, workers=2))]
    assert two[2:] == ["cache-zero[server1]", "cache-zero[server2]", "speculation[server1]", "speculation[server2]"]


class _LogitsPlan(_Plan):
    logits_gate = True


def test_each_prompts_logits_item_follows_its_own_item_and_the_suites_logits_lead_the_diagnostics():
    names = [s.name for s in item_specs(_on(_LogitsPlan(), (2,), 1, _SPEED))]
    assert names == ["tokens[a]", "logits[a]", "tokens[b]", "logits[b]", "cache-zero", "speculation", "speed",
                     "logits", "ladder[c2]"]
