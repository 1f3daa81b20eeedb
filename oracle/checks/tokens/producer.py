"""The tokens check's producer: each prompt's item of the primary run, `tokens[ID]` against the reference (exact,
near-tie, divergent, within the reference's own noise; text compared where the server gave no ids), or
`record[ID]` / `run[ID]` when recording or running without a reference; and which evidence the server gave.

    checks = TokenChecks(plan, recorder, prompts, state)
    checks.observe(result)                             # {"evidence": {...}, "notes": [...]}
    checks.prompt_check("code-hashmap").check.verdict  # "exact" (gate), "pass" (record, run)
"""

from __future__ import annotations

from oracle.backends.base import IDS_FROM_TEXT
from oracle.checks.descriptor import Finding, not_run
from oracle.compare.near_ties import split_density
from oracle.compare.prompt_verdict import judge_prompt
from oracle.compare.sampled import match_rate_json, token_match
from oracle.compare.sources import evidence_sources
from oracle.compare.verdicts import PASS, Check
from oracle.run.runner import RunResult
from oracle.store.records import PRIMARY

__all__ = ["TokenChecks"]


class TokenChecks:
    def __init__(self, plan, recorder, prompts, state) -> None:
        self.plan, self.recorder, self.prompts, self.state = plan, recorder, prompts, state

    def observe(self, result: RunResult, **run) -> dict:
        """Of the primary run: which evidence the server gave, and a note where it gave less."""
        if result.condition != PRIMARY:
            return {}
        records, notes = result.records, []
        positions = sum(len(r.completion_ids) for r in records)
        bare = sum(1 for r in records for t in r.top_ids if not t)
        if bare and self.plan.options.logprobs:
            gaps = self.recorder.backend.capabilities.top_logprobs_gaps
            why = f" ({gaps})" if gaps else ""
            notes.append(f"the server returned no top-k logprobs at {bare} of {positions} completion "
                         f"positions{why}; near-tie verdicts at those positions rest on the reference's "
                         "margin alone")
        evidence = evidence_sources(records, result.counters_delta, self.plan.family)
        if evidence.get("downgrade"):
            notes.append(evidence["downgrade"])
        density = split_density([r.top_logprobs for r in records], [], near_tie_nats=self.plan.options.near_tie_nats)
        return {"evidence": evidence, "notes": notes, "near_tie_density": density.as_json()}

    def prompt_check(self, pid: str) -> Finding:
        """The prompt's item: judged against the reference in a gate, else what was recorded."""
        return self.tokens_check(pid) if self.plan.mode == "gate" else self.record_check(pid)

    def record_check(self, pid: str) -> Finding:
        rec = self.recorder.records.get(pid)
        if rec is None:
            return not_run(self.state, f"record[{pid}]", "record")
        if rec.ids_source == IDS_FROM_TEXT:
            return Finding(Check(f"record[{pid}]", "record", PASS, f"{len(rec.text)} characters of text, finish "
                                 f"{rec.finish_reason} (the server returned no token ids: text only)"))
        return Finding(Check(f"record[{pid}]", "record", PASS, f"{len(rec.completion_ids)} tokens, finish "
                             f"{rec.finish_reason}, sha256 {rec.completion_sha256[:12]}"))

    def tokens_check(self, pid: str) -> Finding:
        rec = self.recorder.records.get(pid)
        if rec is None:
            return not_run(self.state, f"tokens[{pid}]", "tokens")
        o = self.plan.options
        check = judge_prompt(pid, self.plan.reference.record(pid), rec, near_tie_nats=o.near_tie_nats,
                             sampled=o.sampling is not None, envelope=self.plan.envelope,
                             distribution=o.sampling_check == "distribution", decode=self.prompts.decode,
                             logprobs=o.compare == "logprobs")
        if o.sampling is None:
            return Finding(check)
        return Finding(check, {"token_match": {"c1": self._c1_match()}})

    def _c1_match(self) -> dict:
        """Sampled: the c1 run's token match rate against the reference, over every record the run has."""
        pairs = [token_match(self.plan.reference.record(pid).completion_ids, rec.completion_ids)
                 for pid, rec in self.recorder.records.items() if pid in self.plan.reference.case_ids]
        return {"vs_reference": match_rate_json(pairs)}
