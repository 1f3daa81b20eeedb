"""The search for the smallest diverging request, on planted probe outcomes (no server): the target alone first,
ddmin over the prompts sent before it only when it needs them, then the shortest max_tokens, within a budget."""

from __future__ import annotations

from oracle.repro.search import search, split_within


def planted(rule):
    """A probe whose outcome is rule(prompts, max_tokens) -> split or None; `calls` lists what was probed."""
    calls = []

    def probe(prompts, max_tokens):
        calls.append((prompts, max_tokens))
        return rule(prompts, max_tokens)

    probe.calls = calls
    return probe


def at(split):
    """The target diverges at `split` whenever max_tokens shows that position."""
    return lambda prompts, m: split if m > split else None


def test_the_target_alone_then_split_plus_one():
    probe = planted(at(3))
    r = search("b", context=("a",), max_tokens=8, probe=probe, budget=24)
    assert r.reproduced and r.proven and r.prompts == ("b",) and r.max_tokens == 4 and r.split == 3
    assert probe.calls == [(("b",), 8), (("b",), 4)]
    assert [p.step for p in r.probes] == ["alone", "length"] and r.probes[1].as_json()["verdict"] == "diverged"


def test_a_split_at_the_last_token_needs_no_length_probe():
    probe = planted(at(7))
    r = search("b", context=(), max_tokens=8, probe=probe, budget=24)
    assert r.max_tokens == 8 and probe.calls == [(("b",), 8)]


def test_ddmin_finds_the_one_earlier_prompt_the_divergence_needs():
    """b diverges only after c was sent on the same server."""
    probe = planted(lambda prompts, m: 2 if "c" in prompts and m > 2 else None)
    r = search("b", context=("a", "c", "d", "e"), max_tokens=8, probe=probe, budget=24)
    assert r.reproduced and r.proven and r.prompts == ("c", "b") and r.max_tokens == 3 and r.split == 2
    steps = [p.step for p in r.probes]
    assert steps[:2] == ["alone", "context"] and set(steps[2:-1]) == {"prompts"} and steps[-1] == "length"
    assert all(p.prompts[-1] == "b" for p in r.probes)  # the target is always sent, last


def test_a_length_that_shows_the_split_only_later_is_found_by_bisection():
    """Shorter requests do not diverge below 6 tokens although the split is at 2 (the server's behaviour
    changes with max_tokens): the search keeps 6, the shortest that still diverges."""
    probe = planted(lambda prompts, m: 2 if m >= 6 else None)
    r = search("b", context=(), max_tokens=8, probe=probe, budget=24)
    assert r.max_tokens == 6 and r.proven
    assert [m for _, m in probe.calls] == [8, 3, 5, 6]  # 3 exact, then between 3 and 8: 5 exact, 6 diverged


def test_not_reproduced_alone_nor_after_the_prompts_before_it():
    probe = planted(lambda prompts, m: None)
    r = search("b", context=("a",), max_tokens=8, probe=probe, budget=24)
    assert not r.reproduced and r.split is None and [p.step for p in r.probes] == ["alone", "context"]


def test_the_first_prompt_not_reproduced_alone_has_no_context_to_try():
    probe = planted(lambda prompts, m: None)
    r = search("a", context=(), max_tokens=8, probe=probe, budget=24)
    assert not r.reproduced and len(probe.calls) == 1


def test_a_spent_budget_keeps_the_smallest_diverging_request_seen():
    probe = planted(at(3))
    r = search("b", context=("a",), max_tokens=8, probe=probe, budget=1)
    assert r.reproduced and not r.proven and r.prompts == ("b",) and r.max_tokens == 8 and r.split == 3
    assert len(probe.calls) == 1


def test_a_budget_spent_inside_ddmin_is_not_proven():
    probe = planted(lambda prompts, m: 1 if {"c", "e"} <= set(prompts) and m > 1 else None)
    r = search("b", context=("a", "c", "d", "e"), max_tokens=8, probe=probe, budget=3)
    assert r.reproduced and not r.proven and len(r.probes) == 3 and r.split == 1
    assert r.prompts[-1] == "b" and {"c", "e"} <= set(r.prompts)


def test_split_within_counts_only_the_first_max_tokens():
    assert split_within([1, 2, 3, 4], [1, 2, 9, 4], 4) == 2
    assert split_within([1, 2, 3, 4], [1, 2, 9, 4], 2) is None
    assert split_within([1, 2, 3, 4], [1, 2], 4) == 2  # ended early
    assert split_within([1, 2, 3, 4], [1, 2, 3, 4, 5], 4) is None


def test_a_budget_spent_while_shrinking_keeps_the_shortest_length_seen():
    probe = planted(lambda prompts, m: 2 if m >= 6 else None)
    r = search("b", context=(), max_tokens=16, probe=probe, budget=3)
    assert [m for _, m in probe.calls] == [16, 3, 9] and not r.proven and r.max_tokens == 9 and r.split == 2
