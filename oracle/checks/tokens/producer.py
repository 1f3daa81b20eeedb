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
from oracle.compare.sampled import match_rate_json, token_match
from oracle.compare.sources import evidence_sources
from oracle.compare.splits import describe_split, split_view
from oracle.compare.text import text_check
from oracle.compare.logprobs import compare_logprobs
from oracle.compare.tokens import TokenSide, compare_tokens
from oracle.compare.verdicts import EXACT, INFO, LOGPROBS_MOVED, PASS, WITHIN_NOISE, Check
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
        finding = self._tokens_check(pid)
        if self.plan.options.sampling is None or pid not in self.recorder.records:
            return finding
        check = finding.check
        if self.plan.options.sampling_check == "distribution" and check.verdict != EXACT:
            # Tokens may differ by design (speculation under sampling): the sampling-distribution item judges.
            check.verdict, check.detail = INFO, check.detail + " (reported only: --sampling-check distribution)"
        return Finding(check, finding.report | {"token_match": {"c1": self._c1_match()}})

    def _c1_match(self) -> dict:
        """Sampled: the c1 run's token match rate against the reference, over every record the run has."""
        pairs = [token_match(self.plan.reference.record(pid).completion_ids, rec.completion_ids)
                 for pid, rec in self.recorder.records.items() if pid in self.plan.reference.case_ids]
        return {"vs_reference": match_rate_json(pairs)}

    def _tokens_check(self, pid: str) -> Finding:
        cid = f"tokens[{pid}]"
        rec = self.recorder.records.get(pid)
        if rec is None:
            return not_run(self.state, cid, "tokens")
        ref = self.plan.reference.record(pid)
        if IDS_FROM_TEXT in (rec.ids_source, ref.ids_source):
            return Finding(text_check(cid, ref, rec))
        result = compare_tokens(TokenSide.of(ref), TokenSide.of(rec), near_tie_nats=self.plan.options.near_tie_nats,
                                sampled=self.plan.options.sampling is not None)
        evidence = {"first_divergence": result.first_divergence, "reference_length": result.reference_length,
                    "candidate_length": result.candidate_length, "reference_token": result.reference_token,
                    "candidate_token": result.candidate_token, "margin_nats": result.margin_nats,
                    "reason": result.reason, "condition": rec.condition.key}
        if result.verdict == EXACT:
            same = f"{len(rec.completion_ids)}/{len(ref.completion_ids)} tokens identical, finish {rec.finish_reason}"
            if self.plan.options.compare == "logprobs":  # tokens equal: are the returned logprobs too?
                moved = compare_logprobs(TokenSide.of(ref), TokenSide.of(rec))
                evidence["logprobs"] = moved.as_json()
                if not moved.equal:
                    return Finding(Check(cid, "tokens", LOGPROBS_MOVED, f"{same}; {moved.describe()}",
                                         [f"{pid}: {moved.describe()}"], evidence))
                same += f"; {moved.describe()}"
            return Finding(Check(cid, "tokens", EXACT, same, [], evidence))
        where = ("finish reason" if result.first_divergence is None
                 else f"first divergence at token {result.first_divergence}")
        detail = f"{where} of {len(ref.completion_ids)} ({result.reason})"
        decode = self.prompts.decode
        lines = describe_split(ref, rec, result, decode)
        evidence["split"] = split_view(ref, rec, result.first_divergence, decode)
        envelope = self.plan.envelope
        if envelope and envelope.covers(pid, result.split_position):
            varies = envelope.varies[pid]
            return Finding(Check(cid, "tokens", WITHIN_NOISE, f"{detail}; the reference itself varies on this prompt "
                                 f"from token {varies['first_position']} ({', '.join(varies['conditions'])})",
                                 lines, evidence))
        return Finding(Check(cid, "tokens", result.verdict, detail, lines, evidence))
