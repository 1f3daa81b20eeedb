"""The whole run's progress against its plan: which part each item belongs to, what the finished parts took,
and an ETA that is corrected as it goes (the plan's remaining estimate times what the done parts took over what
they were estimated to take).

    eta = RunEta(plan, {"oracle::tokens[p1]": 0, "canaries/test_needle.py::test_needle[1024-d0]": 3})
    eta.started(nodeid); line = eta.finished(nodeid)   # a line when the item closed its part, else None
    eta.suffix()                                        # " · run 40% of ~6.2 min, ETA 3.6 min" for the live line
"""

from __future__ import annotations

import time

from oracle.run.plan_estimate import RunPlan, duration_words

__all__ = ["RunEta"]

_CORRECTION = (0.2, 5.0)  # how far the measured pace may move the estimate of what remains


class RunEta:
    def __init__(self, plan: RunPlan, part_of: dict[str, int]) -> None:
        self.plan = plan
        self.part_of = part_of  # item nodeid -> index of its part in plan.parts
        self.left = {i: sum(1 for p in part_of.values() if p == i) for i in range(len(plan.parts))}
        self.spent = {i: 0.0 for i in range(len(plan.parts))}
        self.done: set[int] = {i for i, part in enumerate(plan.parts) if part.actual_s is not None}
        self._t0: float | None = None  # when the running item started (None: none of the plan's is running)
        self._running: int | None = None  # its part

    def started(self, nodeid: str) -> None:
        self._running = self.part_of.get(nodeid)
        self._t0 = time.perf_counter() if self._running is not None else None

    def finished(self, nodeid: str) -> str | None:
        """Count the item's time to its part; the part's line once its last item finished."""
        i = self.part_of.get(nodeid)
        if i is None or self._t0 is None:
            return None
        self.spent[i] += time.perf_counter() - self._t0
        self._t0, self._running = None, None
        self.left[i] -= 1
        if self.left[i] > 0:
            return None
        part = self.plan.parts[i]
        part.actual_s = self.spent[i]
        self.done.add(i)
        return (f"oracle run: {part.name} took {duration_words(part.actual_s)} (estimated "
                f"{duration_words(part.estimate_s)}){self.suffix()}")

    def correction(self) -> float:
        planned = [(p.estimate_s, p.actual_s) for i, p in enumerate(self.plan.parts)
                   if i in self.done and p.estimate_s and p.actual_s is not None]
        est = sum(e for e, _ in planned)
        if est <= 0:
            return 1.0
        low, high = _CORRECTION
        return min(max(sum(a for _, a in planned) / est, low), high)

    def remaining_s(self) -> float | None:
        if self.plan.total_s is None:
            return None
        running = time.perf_counter() - self._t0 if self._t0 is not None else 0.0
        left = 0.0
        for i, part in enumerate(self.plan.parts):
            if i in self.done or part.estimate_s is None:
                continue
            spent = self.spent[i] + (running if i == self._running else 0.0)
            left += max(part.estimate_s * self.correction() - spent, 0.0)
        return left

    def suffix(self) -> str:
        """The run-wide words for a progress line: how far along, and the corrected ETA."""
        left = self.remaining_s()
        if left is None:
            return ""
        total = sum(self.spent.values()) + left
        pct = 100 * (1 - left / total) if total > 0 else 100
        return f" · run {pct:.0f}% of ~{duration_words(total)}, ETA {duration_words(left)}"
