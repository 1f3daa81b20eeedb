"""ddmin is pure: a test callable in, the minimal failing set out, each outcome memoised, the budget kept."""

from __future__ import annotations

from oracle.bisect.ddmin import ddmin, split


def counting(culprits):
    """A test that fails when every member of any one culprit group is present, and the subsets it was given."""
    seen = []

    def bad(subset):
        seen.append(subset)
        return any(all(c in subset for c in group) for group in culprits)

    return bad, seen


def test_split_covers_in_order():
    assert split([0, 1, 2, 3, 4], 2) == [[0, 1, 2], [3, 4]]
    assert split([0, 1, 2], 3) == [[0], [1], [2]]


def test_one_culprit_of_four_in_two_probes():
    bad, seen = counting([{"ctk"}])
    result = ddmin(["ctk", "fa", "t", "ub"], bad, budget=32)
    assert result.minimal == ("ctk",) and result.proven and result.probes == 2
    assert seen == [("ctk", "fa"), ("ctk",)]


def test_a_culprit_at_the_end():
    bad, _ = counting([{"h"}])
    result = ddmin(list("abcdefgh"), bad, budget=32)
    assert result.minimal == ("h",) and result.proven


def test_an_interaction_is_found_as_a_set():
    bad, _ = counting([{"np4", "ladder4"}])
    result = ddmin(["a", "np4", "b", "c", "ladder4", "d"], bad, budget=64)
    assert set(result.minimal) == {"np4", "ladder4"} and result.proven


def test_no_subset_is_tested_twice():
    bad, seen = counting([{"x", "y", "z"}])
    ddmin(list("abxcdyzq"), bad, budget=200)
    assert len(seen) == len(set(seen))


def test_a_single_change_needs_no_probe():
    bad, seen = counting([{"m"}])
    result = ddmin(["m"], bad, budget=32)
    assert result.minimal == ("m",) and result.proven and seen == []


def test_budget_spent_returns_the_best_set_so_far_unproven():
    bad, seen = counting([{"g"}])
    result = ddmin(list("abcdefgh"), bad, budget=2)
    assert not result.proven and result.probes == 2 and len(seen) == 2
    assert result.minimal == tuple("efgh")  # [a-d] passed, [e-h] failed: the smallest failing set seen


def test_the_whole_set_is_returned_when_no_part_fails_alone():
    bad, _ = counting([{"a", "b"}])
    result = ddmin(["a", "b"], bad, budget=32)
    assert result.minimal == ("a", "b") and result.proven
