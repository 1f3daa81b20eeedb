"""The primary run (boot 1, c1, every prompt once) and the checks it answers: record, tokens, cache-zero,
speculation. Producers return a Finding and never write the report.

    primary = PrimaryRun(plan, recorder, prompts, state); primary.ensure()
    primary.tokens_check("code-hashmap").check.verdict   # "exact"
"""

from __future__ import annotations

from oracle.backends.base import IDS_FROM_TEXT
from oracle.compare.sampled import match_rate_json, token_match
from oracle.compare.evidence import cache_zero_check, speculation_check, speculation_summary
from oracle.compare.sources import evidence_sources
from oracle.compare.splits import describe_split, split_view
from oracle.compare.text import text_check
from oracle.compare.tokens import TokenSide, compare_tokens
from oracle.compare.verdicts import EXACT, INFO, PASS, WITHIN_NOISE, Check
from oracle.gate.placement import server_label
from oracle.checks.descriptor import not_run
from oracle.gate.registry import Finding
from oracle.run.runner import RunResult, one_at_a_time
from oracle.store.records import PRIMARY

__all__ = ["PrimaryRun", "not_run", "run_log"]


def run_log(result: RunResult, **extra) -> dict:
    """The report's row for one condition's run: wall time, requests, the counters around it."""
    def counters(c):
        return c.as_dict() if c is not None else None

    return {"condition": result.condition.key, "wall_s": round(result.wall_s, 3), "requests": len(result.records),
            **extra, "counters_before": counters(result.counters_before),
            "counters_after": counters(result.counters_after)}


class PrimaryRun:
    def __init__(self, plan, recorder, prompts, state, speed, *, server_index: int = 0,
                 owned: set[str] | None = None, observers=()) -> None:
        self.plan, self.recorder, self.prompts, self.state, self.speed = plan, recorder, prompts, state, speed
        self.observers = observers  # each check kind's observe(result): what it keeps of this run
        self.server_index, self.owned = server_index, owned
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
        window = self.speed.window(self.backend)  # --power: the meters and the isolation probe over the run
        window.start()
        try:
            self.result = self.recorder.run(PRIMARY, one_at_a_time(mine))
        finally:
            window.close()
        if self.result is None:
            return {}
        records, delta = self.result.records, self.result.counters_delta
        findings: dict = {"runs": [run_log(self.result)], "speculation": speculation_summary(records, delta),
                          "notes": []}
        positions = sum(len(r.completion_ids) for r in records)
        bare = sum(1 for r in records for t in r.top_ids if not t)
        if bare and self.plan.options.logprobs:
            gaps = self.backend.capabilities.top_logprobs_gaps
            why = f" ({gaps})" if gaps else ""
            findings["notes"].append(f"the server returned no top-k logprobs at {bare} of {positions} completion "
                                     f"positions{why}; near-tie verdicts at those positions rest on the reference's "
                                     "margin alone")
        findings["evidence"] = evidence_sources(records, delta, self.plan.family)
        if findings["evidence"].get("downgrade"):
            findings["notes"].append(findings["evidence"]["downgrade"])
        fingerprints = self.backend.system_fingerprints()
        if fingerprints:
            findings["identity"] = {"server": self.state.identity.get("server", {})
                                    | {"system_fingerprint": ", ".join(fingerprints)}}
        findings["speed"] = self.speed.card_findings(self.result, warmup, self.backend, window)
        for observe in self.observers:
            findings |= observe(self.result)
        findings["complete"] = True
        return findings

    def warm_up(self) -> dict | None:
        """The warm-up requests, sent once (the run plan measures the server's rates on them)."""
        if not self._warmed:
            self._warmed = True
            self.warmup = self.recorder.warm_up(self.prompts, self.plan.options.warmup)
        return self.warmup

    # -- per prompt ---------------------------------------------------------------------------
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
            return Finding(Check(cid, "tokens", EXACT, f"{len(rec.completion_ids)}/{len(ref.completion_ids)} tokens "
                                 f"identical, finish {rec.finish_reason}", [], evidence))
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

    # -- the run's evidence ---------------------------------------------------------------------
    def _server_item(self, name: str, server: int | None) -> str:
        return name if server is None else f"{name}[{server_label(server)}]"

    def _idle(self, cid: str, kind: str) -> Finding | None:
        if self.result is not None and not self.result.records and self.owned is not None:
            return Finding(Check(cid, kind, INFO, f"{server_label(self.server_index)} ran no prompt at c1: "
                                 f"{len(self.prompts.rendered)} prompt(s) for {self.plan.options.workers} workers"))
        return None

    def cache_check(self, server: int | None = None) -> Finding:
        cid = self._server_item("cache-zero", server)
        if not self.state.complete:
            return not_run(self.state, cid, "cache")
        if (idle := self._idle(cid, "cache")) is not None:
            return idle
        records = self.result.records
        if self.backend.capabilities.in_process:
            check = Check(cid, "cache", PASS, f"in-process backend: no server and no cache shared between "
                          f"requests; each of the {len(records)} requests ran with a fresh KV cache",
                          [], {"requests": len(records), "in_process": True})
        else:
            check = cache_zero_check(records, self.result.counters_delta, check_id=cid,
                                     cache=self.backend.capabilities.cache)
        return Finding(check, {"cache": check.evidence | {"verdict": check.verdict}})

    def speculation_check(self, server: int | None = None) -> Finding:
        cid = self._server_item("speculation", server)
        if not self.state.complete:
            return not_run(self.state, cid, "speculation")
        if (idle := self._idle(cid, "speculation")) is not None:
            return idle
        summary = self.state.speculation or {}
        configured = self.backend.speculative_config()
        summary["declared"] = self.plan.options.speculative
        summary["server_config"] = configured
        if not (self.plan.options.speculative or configured or summary.get("drafted")):
            return Finding(Check(cid, "speculation", INFO, "no speculation to prove: not declared "
                                 "(--speculative), no speculative setting reported by the server, no draft counts; "
                                 "declare a speculative candidate with --speculative", [], summary))
        return Finding(speculation_check(summary, check_id=cid))
