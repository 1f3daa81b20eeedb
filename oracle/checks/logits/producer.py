"""The logits check's producers: logits against the reference (teacher-forced along its path) and, when recording an f16 reference in
process, the reference's own precision floor. Producers return Findings and never write the report.

    logits = LogitsChecks(plan, recorder, prompts, state, target)
    logits.suite_check().check.verdict   # "pass" / "fail" against --kld-max and --same-top1-min
"""

from __future__ import annotations

from oracle.checks.descriptor import Finding, not_run
from oracle.compare.verdicts import FAIL, Check
from oracle.logits.path import PromptLogits, compare_prompt, logits_check, logits_report, precision_floor, suite_check
from oracle.targets import TargetError

__all__ = ["LogitsChecks"]


class LogitsChecks:
    def __init__(self, plan, recorder, prompts, state, target) -> None:
        self.plan, self.recorder, self.prompts, self.state, self.target = plan, recorder, prompts, state, target
        self.rows: dict[str, PromptLogits] = {}
        self.report: dict | None = None  # identity.json's `logits`, once collected
        self.floor: dict | None = None  # record mode: the reference's own precision floor
        self._done = False
        self.settings = plan.options.check("logits")

    def _collect(self) -> None:
        """Every prompt's candidate distributions along the reference path, once, after the gated run."""
        if self._done or not self.state.complete or self.state.interruption:
            return
        self._done = True
        o, reference, progress = self.plan.options, self.plan.reference, self.recorder.progress
        progress.start("teacher-forced", len(self.prompts.rendered))
        try:
            for p in self.prompts.rendered:
                row = compare_prompt(self.recorder.backend, reference.record(p.id), self.recorder.records.get(p.id),
                                     logprobs=o.logprobs, seed=o.seed)
                self.rows[p.id] = row
                progress.record(row.path.teacher_forced if row.path else 0)
        finally:
            progress.end()
        stored = reference.manifest.get("logits") or {"top_k": reference.manifest.get("run", {}).get("logprobs")}
        self.report = logits_report(
            self.rows, family=self.plan.family, candidate_top_k=o.logprobs, reference_kind=reference.kind,
            reference_logits=stored, thresholds={"kld_max": self.settings.kld_max,
                                                 "same_top1_min_percent": self.settings.same_top1_min},
            decode=self.prompts.decode)

    def prompt_check(self, pid: str) -> Finding:
        self._collect()
        row = self.rows.get(pid)
        if row is None:
            return not_run(self.state, f"logits[{pid}]", "logits")
        return Finding(row.check(f"logits[{pid}]"), {"logits": self.report})

    def suite_check(self) -> Finding:
        self._collect()
        if self.report is None:
            return not_run(self.state, "logits", "logits")
        bars = self.settings
        return Finding(suite_check(self.report, kld_max=bars.kld_max, same_top1_min=bars.same_top1_min),
                       {"logits": self.report})

    def floor_check(self) -> Finding:
        """Record mode: the reference path scored by the same weights in --floor-dtype (what precision alone does)."""
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, "logits-floor", "logits")
        o = self.plan.options
        try:
            floor_backend = self.target.load(o.floor_dtype)
        except TargetError as exc:
            return Finding(Check("logits-floor", "logits", FAIL, f"could not load the floor model: {exc}"))
        rows, progress = {}, self.recorder.progress
        progress.start(f"floor-{o.floor_dtype}", len(self.recorder.records))
        try:
            for pid, rec in self.recorder.records.items():
                rows[pid] = compare_prompt(floor_backend, rec, None, logprobs=o.logprobs, seed=o.seed)
                progress.record(len(rows[pid].positions))
        finally:
            progress.end()
            del floor_backend
        self.floor = precision_floor(rows, dtype=o.floor_dtype, reference_dtype=o.dtype)
        check = logits_check("logits-floor", self.floor["overall"], kld_max=None, same_top1_min=None,
                             gating=False, evidence={"floor": self.floor})
        check.detail = f"precision floor, {o.floor_dtype} vs {o.dtype} on the same weights: {check.detail}"
        return Finding(check, {"logits": {"floor": self.floor}})
