"""The conditions' producers, `ladder[cN]` and `boot[N]`: each runs its condition, compares every record with
its prompt's c1 record (and the reference), proves the overlap it asked for, and answers its item. Its findings go
to the report through the session; the rows against c1 are kept in its own state (`ConditionsState.rows`).

    conditions = ConditionChecks(plan, recorder, prompts, state, target, own=state.states["conditions"])
    conditions.ladder_check(8).report["ladder"]["c8"]["overlap"]["reached"]
"""

from __future__ import annotations

from oracle.compare.conditions import (compare_condition, condition_check, condition_confidence, first_split,
                                      required_exact)
from oracle.compare.evidence import cache_zero_check, speculation_summary
from oracle.compare.near_ties import split_density
from oracle.compare.noise import determinism_of
from oracle.compare.sampled import rows_match
from oracle.compare.splits import split_view
from oracle.compare.verdicts import DIVERGENT, EXACT, FAIL, INCONCLUSIVE, LOGPROBS_MOVED, NOT_RUN, Check
from oracle.checks.conditions.state import ConditionsState
from oracle.checks.descriptor import Finding, not_run
from oracle.run.ladder import ladder_condition, ladder_waves
from oracle.run.overlap import unproven_overlap
from oracle.run.runner import RunResult, one_at_a_time
from oracle.speed.card import level_speed
from oracle.store.records import PRIMARY, Condition, Record
from oracle.targets import TargetError

__all__ = ["ConditionChecks"]

_NO_SPLIT = 1 << 30  # sorts rows without a token split last


class ConditionChecks:
    def __init__(self, plan, recorder, prompts, state, target, *, own: ConditionsState, observers=()) -> None:
        self.plan, self.recorder, self.prompts, self.state, self.target = plan, recorder, prompts, state, target
        self.observers = observers  # each check kind's observe(result, ...): what it keeps of each run
        self.settings = plan.options.check("conditions")
        self.own = own
        self.rows = own.rows  # condition key -> rows vs c1 (ladder levels, boots), kept in the state
        self._baseline: RunResult | None = None  # a c1 run of other servers' prompts, not yet in a check
        self._references: dict[str, Record] | None = None

    def _reference_records(self) -> dict[str, Record] | None:
        # Against an f16 reference, conditions are compared with c1 only: its greedy tokens are not the
        # candidate's to match (its logits are compared instead); so under --sampling-check distribution.
        if self.plan.reference is None or self.plan.f16_gate or self.plan.distribution_gate:
            return None
        if self._references is None:
            self._references = {p.id: self.plan.reference.record(p.id) for p in self.prompts.rendered}
        return self._references

    def _ready(self, cid: str, kind: str) -> Finding | None:
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, cid, kind)
        return self._ensure_baseline(cid, kind)

    def _ensure_baseline(self, cid: str, kind: str) -> Finding | None:
        """Conditions compare with c1 on the same server: under xdist this server first runs, at c1, the
        prompts that other servers ran (once). Its cache evidence goes with the next condition's check."""
        missing = [p for p in self.prompts.rendered if p.id not in self.recorder.records]
        if not missing:
            return None
        result = self.recorder.run(PRIMARY, one_at_a_time(missing))
        if result is None:
            return not_run(self.state, cid, kind)
        self._baseline = result
        return None

    def _compare(self, result: RunResult) -> list[dict]:
        references = self._reference_records()
        c1 = self.recorder.records
        rows = compare_condition(result.records, c1, references, self.plan.envelope,
                                 near_tie_nats=self.plan.options.near_tie_nats,
                                 sampled=self.plan.options.sampling is not None,
                                 logprobs=self.plan.options.compare == "logprobs")
        # One split view per prompt and condition (its earliest split) for the report's split viewer.
        by_key = {r.key: r for r in result.records}
        shown: set[str] = set()
        for row in sorted(rows, key=lambda r: _NO_SPLIT if first_split(r) is None else first_split(r)):
            if row["verdict"] in (EXACT, LOGPROBS_MOVED) or row["prompt"] in shown:  # moved: no token split
                continue
            shown.add(row["prompt"])
            against, side = ((c1, row["vs_c1"]) if row["vs_c1"]["verdict"] not in (EXACT, LOGPROBS_MOVED)
                             else (references, row["vs_reference"]))
            row["split"] = split_view(against[row["prompt"]], by_key[row["record"]], side["first_divergence"],
                                      self.prompts.decode) | {"against": "c1" if against is c1 else "reference"}
        self.rows[result.condition.key] = rows
        return rows

    def ladder_check(self, level: int) -> Finding:
        cid = f"ladder[c{level}]"
        if (early := self._ready(cid, "ladder")) is not None:
            return early
        waves = ladder_waves(self.prompts.rendered, level, self.settings.mode)
        staggered = self.settings.arrivals == "staggered" and level > 1
        result = self.recorder.run(ladder_condition(level), waves, staggered=staggered)
        if result is None:
            return not_run(self.state, cid, "ladder")
        rows = self._compare(result)
        check = condition_check(cid, "ladder", f"c{level}", rows, recording=self.plan.mode == "record",
                                required=required_exact(level, len(rows), self.settings.minimums))
        reached = min(result.wave_overlap) if result.wave_overlap else 0
        overlap = {"asked": level, "reached": reached, "per_wave": result.wave_overlap,
                   "server_peak": result.server_peak, "waves": len(waves)}
        if staggered:
            overlap["arrivals"] = "staggered"
        check.evidence["overlap"] = overlap
        check.detail += f"; overlap reached {reached} of {level}"
        if result.server_peak is not None:
            check.detail += f" (server saw up to {result.server_peak} running)"
        if reached < level and check.verdict != DIVERGENT:
            check.verdict, check.inconclusive_kind = INCONCLUSIVE, "overlap"
            check.lines.insert(0, unproven_overlap(level, reached, server_peak=result.server_peak))
        runs = self._evidence(check, result)
        speed = level_speed(result.records, result.wall_s)
        row = _summary(check, rows) | dict(overlap=overlap, speed=speed, splits=self._density(result, rows))
        self.own.ladder[f"c{level}"] = row  # the width map reads this level's overlap proof
        width_map = self.own.map_widths(ladder=self.settings.preset or ",".join(map(str, self.settings.ladder)),
                                        never_tried=self.settings.never_tried,
                                        near_tie_nats=self.plan.options.near_tie_nats)
        return Finding(check, {"runs": runs, "ladder": {f"c{level}": row}, "width_map": width_map,
                               "determinism": determinism_of(self.rows), **self._match(f"c{level}", rows),
                               **self._observed(result, asked=level, reached=reached, staggered=staggered)})

    def _observed(self, result: RunResult, **run) -> dict:
        out: dict = {}
        for observe in self.observers:
            out |= observe(result, **run)
        return out

    def _restart(self) -> None:
        """A new boot: a new server (a new URL) for every later request, the prompts' server-side tokenizing
        (a canary's text) included."""
        backend = self.target.restart()
        self.recorder.backend = backend
        self.prompts.use_backend(backend)

    def boot_check(self, boot: int) -> Finding:
        cid = f"boot[{boot}]"
        if (early := self._ready(cid, "boot")) is not None:
            return early
        try:
            self._restart()
        except TargetError as exc:
            stopped = f"boot {boot}: {exc}"
            return Finding(Check(cid, "boot", NOT_RUN, f"not run: {stopped}"), {"interruption": stopped})
        boots = dict(self.state.identity.get("boots") or {})
        boots[str(boot)] = {"server": self.recorder.backend.server_identity(), "url": self.recorder.backend.base_url}
        identity = {"boots": boots}
        result = self.recorder.run(Condition(boot=boot), one_at_a_time(self.prompts.rendered))
        if result is None:
            return Finding(not_run(self.state, cid, "boot").check, {"identity": identity})
        rows = self._compare(result)
        check = condition_check(cid, "boot", f"boot {boot}", rows, required=len(rows),
                                recording=self.plan.mode == "record")
        runs = self._evidence(check, result)
        summary = _summary(check, rows) | {"splits": self._density(result, rows)}
        return Finding(check, {"identity": identity, "runs": runs, "boots": {str(boot): summary},
                               "determinism": determinism_of(self.rows), **self._observed(result),
                               **self._match(f"boot {boot}", rows)})

    def _density(self, result: RunResult, rows: list[dict]) -> dict:
        """Beside the condition's flip counts: the near-tie density of its records' positions, and its splits
        as tie or confident flips by the margin at the split (compare/near_ties.py)."""
        splits = []
        for row in rows:
            sides = [s for s in (row["vs_c1"], row["vs_reference"]) if s and s["verdict"] != EXACT
                     and s["first_divergence"] is not None]
            if sides:
                side = min(sides, key=lambda s: s["first_divergence"])
                splits.append((side["margin_nats"], side["reason"]))
        return split_density([r.top_logprobs for r in result.records], splits,
                             near_tie_nats=self.plan.options.near_tie_nats).as_json()

    def _match(self, label: str, rows: list[dict]) -> dict:
        """Sampled runs: the condition's token match rate (compare/sampled.py) under the report's `token_match`."""
        return {"token_match": {label: rows_match(rows)}} if self.plan.options.sampling is not None else {}

    def _evidence(self, check: Check, result: RunResult) -> list[dict]:
        """Cache reuse under any condition fails it; its speculation counts are kept beside it. Returns the
        report's run log rows (the c1 baseline this condition needed first, then the condition)."""
        runs = []
        baseline, self._baseline = self._baseline, None
        if baseline is not None:  # the c1 baseline this condition needed: its cache use counts here too
            runs.append(baseline.log_row(baseline=True))
            self._fold_cache(check, baseline, "baseline_cache", "c1 baseline on this server: ")
        runs.append(result.log_row(overlap=check.evidence.get("overlap")))
        self._fold_cache(check, result, "cache", "")
        check.evidence["speculation"] = speculation_summary(result.records, result.counters_delta)
        return runs

    def _fold_cache(self, check: Check, result: RunResult, key: str, prefix: str) -> None:
        """The run's cache-zero evidence under check.evidence[key]; reuse fails the check, named first."""
        cache = cache_zero_check(result.records, result.counters_delta, check_id=check.id,
                                 cache=self.recorder.backend.capabilities.cache)
        check.evidence[key] = cache.evidence | {"verdict": cache.verdict}
        if cache.verdict == FAIL:
            check.verdict = FAIL
            check.detail = f"{prefix}{cache.detail}; {check.detail}"
            check.lines = cache.lines + check.lines


def _summary(check: Check, rows: list[dict]) -> dict:
    return {"verdict": check.verdict, "detail": check.detail, "counts": check.evidence["counts"],
            "records": len(rows), "required": check.evidence["required"], "confidence": condition_confidence(rows),
            "first_divergences": sorted(r["vs_c1"]["first_divergence"] for r in rows
                                        if r["vs_c1"]["first_divergence"] is not None)}
