"""The canary options are read once, typed, into the canaries' settings (`GateOptions.check("canaries")`,
also `GateOptions.check(CANARY_CHECK)`; lists as tuples, never joined back into strings), and the canary plan reads them
there; a canary kind's module is found by its name."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import oracle.canary.plan as plan
from oracle.canary.kinds import CANARY_CHECK
from oracle.canary.needle import DEFAULT_DEPTHS
from oracle.canary.plan import canary_kind, needle_plan
from oracle.canary.plan import CANARY_KINDS
from oracle.checks.canaries import CanarySettings
from oracle.gate.options import gate_options

URL = "--oracle-url=http://127.0.0.1:9"


def test_canary_options_are_typed_once_and_lists_stay_tuples(pytester):
    config = pytester.parseconfig("--backend=llamacpp", URL, "--canaries=needle,none,needle",
                                  "--needle-lengths=1K,96", "--needle-depths=0,50", "--repeats=3",
                                  "--canary-strict", "--oracle-context=2048", "--allow-inconclusive=cache,speed")
    options = gate_options(config)
    assert options.check(CANARY_CHECK) == options.check("canaries") == CanarySettings(
        kinds=("needle",), needle_lengths=(1024, 96), needle_depths=(0, 50), context=2048, repeats=3,
        strict=True, haystack=None, code_set=None)
    assert options.allow_inconclusive == ("cache", "speed")
    defaults = gate_options(pytester.parseconfig("--backend=llamacpp", URL)).check(CANARY_CHECK)
    assert defaults == CanarySettings()
    assert defaults.kinds == CANARY_KINDS and defaults.needle_depths == DEFAULT_DEPTHS
    assert gate_options(pytester.parseconfig("--backend=llamacpp", URL, "--canaries=none")).check(CANARY_CHECK).kinds == ()


def test_needle_plan_reads_the_typed_options(pytester):
    options = gate_options(pytester.parseconfig("--backend=llamacpp", URL, "--needle-lengths=1K,4K",
                                                "--needle-depths=25", "--oracle-context=2048"))
    assert needle_plan(options) == ([1024], [4096], [25], 2048, "--oracle-context")
    canary = dataclasses.replace(options.check(CANARY_CHECK), needle_lengths=None, context=None)
    unsized = dataclasses.replace(options, checks=tuple((name, canary if name == "canaries" else settings)
                                                        for name, settings in options.checks))
    fit, dropped, depths, ctx, source = needle_plan(unsized)  # a --oracle-url server: the default context, said so
    assert (fit, dropped, ctx) == ([1024, 2048, 4096, 8176], [], 8192) and "give --oracle-context N" in source


@pytest.mark.parametrize("module, kind", [("test_code_result.py", "code"), ("test_needle.py", "needle"),
                                          ("test_repeats.py", "repeats"), ("test_crosstalk.py", "crosstalk"),
                                          ("test_needles.py", None),
                                          ("conftest.py", None)])
def test_a_canary_module_is_found_by_its_kind(module, kind):
    assert canary_kind(Path("canaries") / module) == kind


def test_a_new_canary_kind_is_its_name_in_the_tuple(monkeypatch):
    assert canary_kind(Path("test_perplexity.py")) is None
    monkeypatch.setattr(plan, "CANARY_KINDS", CANARY_KINDS + ("perplexity",))
    assert canary_kind(Path("test_perplexity.py")) == "perplexity"


def test_every_canary_option_is_carried_in_canary_settings():
    """A new canary option fails this until `CanarySettings` has its field (read by the option's dest)."""
    from oracle.checks.canaries.options import CANARY_OPTION, NOT_OPTIONS
    from oracle.gate.declarations import add_options

    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    group = next(g for g in parser._groups if g.name == "oracle-canaries")
    carried = {CANARY_OPTION.get(f.name, f.name) for f in dataclasses.fields(CanarySettings)
               if f.name not in NOT_OPTIONS}
    assert {opt.dest for opt in group.options} == carried
