"""The primary run (boot 1, c1, every prompt once, after the warm-up): the run that the check kinds observe
(each its `Producers.observe`) and judge in their items (oracle/checks/).

    primary = PrimaryRun(plan, recorder, prompts, state, speed, observers=observers)
    findings = primary.ensure()   # the report's findings of the run: its log, speed card, each check's
"""

from __future__ import annotations

from oracle.checks.descriptor import not_run
from oracle.run.runner import RunResult, one_at_a_time
from oracle.store.records import PRIMARY

__all__ = ["PrimaryRun", "not_run"]


class PrimaryRun:
    def __init__(self, plan, recorder, prompts, state, *, owned: set[str] | None = None, observers=(),
                 watches=()) -> None:
        self.plan, self.recorder, self.prompts, self.state = plan, recorder, prompts, state
        self.observers = observers  # each check kind's observe(result): what it keeps of this run
        self.watches = watches  # each check kind's watch(backend): what it measures around this run
        self.owned = owned
        self.result: RunResult | None = None
        self.ran = False
        self._warmed, self.warmup = False, None  # the warm-up row (None: failed), sent once, before the plan

    @property
    def backend(self):
        return self.recorder.backend

    def ensure(self) -> dict:
        """Run every owned prompt once (the first item does it); returns the report's findings."""
        if self.ran:
            return {}
        self.ran = True
        mine = [p for p in self.prompts.rendered if self.owned is None or p.id in self.owned]
        warmup = self.warm_up()
        if warmup is None:
            return {}
        watches = [watch(self.backend) for watch in self.watches]  # the speed card's power window (--oracle-power)
        for watch in watches:
            watch.start()
        try:
            self.result = self.recorder.run(PRIMARY, one_at_a_time(mine))
        finally:
            for watch in watches:
                watch.close()
        if self.result is None:
            return {}
        findings: dict = {"runs": [self.result.log_row()], "notes": []}
        fingerprints = self.backend.system_fingerprints()
        if fingerprints:
            findings["identity"] = {"server": self.state.identity.get("server", {})
                                    | {"system_fingerprint": ", ".join(fingerprints)}}
        for watch in watches:
            findings |= watch.findings(self.result, warmup)
        for observe in self.observers:
            observed = dict(observe(self.result))
            findings["notes"] += observed.pop("notes", [])  # every check's notes, in the order of CHECKS
            findings |= observed
        findings["complete"] = True
        return findings

    def warm_up(self) -> dict | None:
        """The warm-up requests, sent once (the run plan measures the server's rates on them)."""
        if not self._warmed:
            self._warmed = True
            self.warmup = self.recorder.warm_up(self.prompts, self.plan.options.warmup)
        return self.warmup

