"""Which machine stands apart from its accelerator model's others (fishtest's residual, for outputs and speed)."""

from __future__ import annotations

import pytest

from oracle.ledger.residuals import RESIDUAL_LIMIT, outputs_apart, speed_residuals


def test_the_machine_outside_the_majority_class_stands_apart():
    assert outputs_apart({"m1": "A", "m2": "A", "m3": "B"}) == {"m3": "A"}
    assert outputs_apart({"m1": "A", "m2": "A", "m3": "A"}) == {}


@pytest.mark.parametrize("classes", [{"m1": "A", "m2": "B"},  # two machines: no family to be out of
                                     {"m1": "A", "m2": "A", "m3": "B", "m4": "B"},  # no majority
                                     {"m1": "A", "m2": "B", "m3": "C"}])
def test_no_majority_names_no_odd_one(classes):
    assert outputs_apart(classes) == {}


def test_a_slow_machine_has_a_residual_past_the_limit_and_its_peers_do_not():
    residuals = speed_residuals({"m1": 100.0, "m2": 102.0, "m3": 99.0, "m4": 60.0})
    assert residuals["m4"] < -RESIDUAL_LIMIT
    assert all(abs(residuals[m]) <= RESIDUAL_LIMIT for m in ("m1", "m2", "m3")), residuals


def test_speeds_within_a_few_percent_are_one_family():
    """The spread's floor (5% in log speed): three machines 3% apart are not told apart, however tight."""
    residuals = speed_residuals({"m1": 100.0, "m2": 100.0, "m3": 103.0})
    assert all(abs(r) <= RESIDUAL_LIMIT for r in residuals.values()), residuals


def test_two_machines_give_no_residual():
    assert speed_residuals({"m1": 100.0, "m2": 10.0}) == {}
