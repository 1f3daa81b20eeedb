"""The coverage check's producer: every run's conditions kept for the report, and the `coverage` item that
fails closed on the conditions `--require-conditions` names.

    coverage = CoverageChecks(plan, state, chunk)
    findings = coverage.observe(result, asked=4, reached=4)   # {"coverage": {"boot1-c4": {...}}}
    coverage.coverage_check().check.verdict                    # "pass", or "inconclusive" (kind coverage)
"""

from __future__ import annotations

from oracle.backends.base import PrefillChunk
from oracle.checks.descriptor import Finding, not_run
from oracle.compare.coverage import held_anywhere, run_coverage
from oracle.compare.verdicts import INCONCLUSIVE, PASS, Check
from oracle.run.runner import RunResult

__all__ = ["CoverageChecks"]

_MAX_REASONS = 3  # runs named per missing condition in the item's message


class CoverageChecks:
    def __init__(self, plan, state, chunk: PrefillChunk, *, preemption_counter: str | None = None) -> None:
        self.plan, self.state, self.chunk = plan, state, chunk
        self.preemption_counter = preemption_counter

    def observe(self, result: RunResult, *, asked: int = 1, reached: int | None = None,
                staggered: bool = False) -> dict:
        """The report's findings for one finished run: which conditions it produced."""
        delta = result.counters_delta
        row = run_coverage(result.records, chunk=self.chunk, preemptions=delta.preemptions if delta else None,
                           preemption_counter=self.preemption_counter, asked=asked, reached=reached,
                           staggered=staggered, server_peak=result.server_peak)
        return {"coverage": {result.condition.key: row}}

    def coverage_check(self) -> Finding:
        """Pass when every required condition held in some run; else inconclusive (kind coverage), naming for
        each missing condition why it did not happen in each run and how to cause it."""
        cid = "coverage"
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, cid, "coverage")
        runs = self.state.states["coverage"].runs
        required = self.plan.options.check("coverage").require
        held = {name: held_anywhere(runs, name) for name in required}
        missing = [name for name in required if not held[name]]
        evidence = {"required": list(required), "held_in": held, "runs": list(runs)}
        shown = "; ".join(f"{name} in {', '.join(where)}" for name, where in held.items() if where)
        if not missing:
            return Finding(Check(cid, "coverage", PASS, f"every required condition happened: {shown}", [],
                                 evidence))
        lines = []
        for name in missing:
            rows = [(run, runs[run][name]) for run in runs if name in runs[run]]
            how = next((row["how"] for _, row in reversed(rows) if row.get("how")), "")  # the latest run's
            lines.append(f"{name} did not happen in any of {len(rows)} run(s): {how}" if how
                         else f"{name} did not happen in any of {len(rows)} run(s)")
            lines += [f"  {run}: {row['detail']}" for run, row in rows[:_MAX_REASONS]]
            if len(rows) > _MAX_REASONS:
                lines.append(f"  ... {len(rows) - _MAX_REASONS} more run(s) in identity.json coverage")
        # The latest run (a ladder level or boot) says best how to cause it.
        first = next((row[missing[0]] for row in reversed(list(runs.values())) if missing[0] in row), {})
        why = first.get("detail", "no run recorded it")
        detail = (f"{', '.join(missing)} did not happen; {missing[0]}: {why}"
                  + (f": {first['how']}" if first.get("how") else "") + (f"; held: {shown}" if shown else ""))
        evidence["missing"] = missing
        check = Check(cid, "coverage", INCONCLUSIVE, detail, lines, evidence)
        check.inconclusive_kind = "coverage"
        return Finding(check)
