"""Delta debugging (Zeller and Hildebrandt's ddmin): the smallest set of changes that still fails, with a budget.

    result = ddmin(changes, bad, budget=32)    # bad(subset) -> True when that subset reproduces the failure
    result.minimal, result.proven, result.probes

The whole set is known to fail and the empty set to pass (they are not tested). Every outcome is memoised, so
no subset is tested twice. When the budget runs out the smallest failing set found so far comes back with
proven False. Pure: the test is a callable; nothing here starts a server.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, Sequence, TypeVar

__all__ = ["DDResult", "ddmin", "split"]

T = TypeVar("T")


@dataclass
class DDResult(Generic[T]):
    minimal: tuple[T, ...]  # the smallest failing set found (1-minimal when proven)
    proven: bool  # every subset with one change fewer was seen to pass
    probes: int  # tests run (memoised repeats not counted)
    outcomes: dict[frozenset[int], bool] = field(default_factory=dict)  # change indices -> failed


class _Spent(Exception):
    pass


def split(indices: Sequence[int], n: int) -> list[list[int]]:
    """indices in n contiguous parts of near-equal size (the larger parts first)."""
    size, extra = divmod(len(indices), n)
    parts, start = [], 0
    for k in range(n):
        end = start + size + (1 if k < extra else 0)
        parts.append(list(indices[start:end]))
        start = end
    return [p for p in parts if p]


def ddmin(changes: Sequence[T], bad: Callable[[tuple[T, ...]], bool], *, budget: int) -> DDResult[T]:
    outcomes: dict[frozenset[int], bool] = {frozenset(range(len(changes))): True, frozenset(): False}
    probes = 0

    def fails(subset: list[int]) -> bool:
        nonlocal probes
        key = frozenset(subset)
        if key not in outcomes:
            if probes >= budget:
                raise _Spent
            probes += 1
            outcomes[key] = bool(bad(tuple(changes[i] for i in sorted(subset))))
        return outcomes[key]

    current, n = list(range(len(changes))), 2
    proven = True
    try:
        while len(current) >= 2:
            current, n, done = _step(current, n, fails)
            if done:
                break
    except _Spent:
        proven = False
    return DDResult(tuple(changes[i] for i in current), proven, probes, outcomes)


def _step(current: list[int], n: int, fails) -> tuple[list[int], int, bool]:
    """One round of ddmin: (the next set, its granularity, whether current is 1-minimal)."""
    parts = split(current, n)
    for part in parts:
        if fails(part):
            return part, 2, False
    if len(parts) > 2:  # with two parts each one's complement is the other, tested above
        for part in parts:
            rest = [i for i in current if i not in part]
            if fails(rest):
                return rest, max(n - 1, 2), False
    if n >= len(current):
        return current, n, True
    return current, min(len(current), 2 * n), False
