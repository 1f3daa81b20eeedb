"""The speculation check's producer: the primary run's drafted and accepted tokens (from the responses or the
server's counters) kept for the report, and the `speculation` item (one per server under pytest -n) that proves a
speculative candidate really speculated.

    checks = SpeculationChecks(plan, recorder, prompts, state)
    checks.observe(result)                        # {"speculation": {"drafted": 96, "accepted": 71, ...}}
    checks.speculation_check().check.verdict      # "pass", "info" (nothing to prove) or "inconclusive"
"""

from __future__ import annotations

from oracle.checks.descriptor import Finding, not_run
from oracle.checks.per_server import PrimaryEvidence
from oracle.compare.evidence import speculation_check, speculation_summary
from oracle.compare.verdicts import INFO, Check
from oracle.run.runner import RunResult

__all__ = ["SpeculationChecks"]


class SpeculationChecks(PrimaryEvidence):
    def __init__(self, plan, recorder, prompts, state) -> None:
        super().__init__(plan, prompts, state)
        self.recorder = recorder

    def findings(self, result: RunResult) -> dict:
        return {"speculation": speculation_summary(result.records, result.counters_delta)}

    def speculation_check(self, server: int | None = None) -> Finding:
        cid = self.item_id("speculation", server)
        if not self.state.complete:
            return not_run(self.state, cid, "speculation")
        if (idle := self.idle(cid, "speculation", server)) is not None:
            return idle
        # The report's summary is completed in place: what was declared and what the server says it runs.
        summary = self.state.states["speculation"].report or {}
        configured = self.recorder.backend.speculative_config()
        declared = self.plan.options.check("speculation").declared
        summary["declared"] = declared
        summary["server_config"] = configured
        if not (declared or configured or summary.get("drafted")):
            return Finding(Check(cid, "speculation", INFO, "no speculation to prove: not declared "
                                 "(--speculative), no speculative setting reported by the server, no draft counts; "
                                 "declare a speculative candidate with --speculative", [], summary))
        return Finding(speculation_check(summary, check_id=cid))
