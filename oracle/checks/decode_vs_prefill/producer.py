"""The decode-vs-prefill check's producers. The `decode-vs-prefill` item: the candidate's own primary-run path (its decode-time top-k, as streamed)
against the same path scored as a prompt through the backend's `prefill_forced`, in one pass and in chunks
(`--prefill-chunks`; `served` is the server's prefill chunk, `Backend.prefill_chunk`, read at start). Diagnostic requests:
they run after the gated run and its cache evidence, apart from both. The producer returns a Finding.

The `chunked-prefill` item (a backend whose capabilities declare `chunked_prefill`: python runners) reads the same
scored modes: each chunk size against the one pass, top-1 equal at every prefix length and the largest |Δlogprob|;
and scores the ladder (`--prefill-lengths`, up to the backend's context) of one long prompt built from the haystack
text in one pass and in chunks of each size (logits/prefill_ladder.py).

    dvp = DecodePrefillChecks(plan, recorder, prompts, state)
    dvp.check().check.verdict   # "pass" / "fail" against --dvp-max-delta
    dvp.chunked_check().check.verdict   # "pass" / "fail": a chunk size changed a top-1 token
"""

from __future__ import annotations

import time

from oracle.canary.kinds import CANARY_CHECK
from oracle.backends.base import PrefillChunk, RequestFailed
from oracle.checks.decode_vs_prefill.scorer import PrefillScorer, offers_prefill_scoring
from oracle.checks.descriptor import Finding, not_run
from oracle.compare.verdicts import INFO, Check
from oracle.logits.chunked import chunked_check, chunked_report
from oracle.logits.decode_prefill import ONE_PASS, compare_rows, dvp_check, mode_name, summarize_rows
from oracle.logits.prefill_ladder import ladder_lengths, ladder_prompt, ladder_report
from oracle.checks.decode_vs_prefill.options import SERVED_BATCH

__all__ = ["DEFINITION", "DecodePrefillChecks"]

DEFINITION = ("at each completion position after the first (position 0 is a prefill on both sides), the "
              "top-k the server streamed while decoding the candidate's own path against the same path "
              "scored as a prompt (every position from a prefill, none from a decode step); max |Δlogprob| over the "
              "top-k ids both sides hold; Same top p; KLD is "
              "KL(prefill || decode) over the shared top-k plus one tail bucket, a lower bound of the "
              "full-vocabulary KLD; bit-identical: the same top-k ids in the same order with equal float32 "
              "logprobs")


class DecodePrefillChecks:
    def __init__(self, plan, recorder, prompts, state, *, served: PrefillChunk | None = None) -> None:
        self.plan, self.recorder, self.prompts, self.state = plan, recorder, prompts, state
        self.served = served  # the server's prefill chunk as the session read it at start (the chunked-prefill size)
        self.report: dict | None = None
        self.scored: dict[str, dict[str, tuple]] = {}  # mode -> prompt -> (tokens, top ids, top logprobs)
        self.settings = plan.options.check("decode_vs_prefill")

    @property
    def backend(self) -> PrefillScorer:
        return self.recorder.backend

    def _chunks(self, backend) -> tuple[list[tuple[str, int | None, str | None]], dict | None]:
        """(mode name, chunk size or None, why not offered or None) per mode; the served batch as read."""
        chunk = self.served
        served = (chunk.tokens, chunk.source) if chunk is not None and chunk.tokens else None
        served_json = {"size": served[0], "source": served[1]} if served else None
        modes: list[tuple[str, int | None, str | None]] = [(ONE_PASS, None, None)]
        for asked in self.settings.chunks:
            if asked == SERVED_BATCH and served is None:
                why = chunk.source if chunk is not None else f"the {backend.family} backend cannot say"
                modes.append((f"chunks-{SERVED_BATCH}", None, f"the server's prefill chunk is unknown ({why}); "
                              "give it as a number in --prefill-chunks"))
                continue
            size = served[0] if asked == SERVED_BATCH else int(asked)
            if any(name == mode_name(size) for name, _, _ in modes):
                continue  # 64 and a served batch of 64 are one mode
            modes.append((mode_name(size), size, backend.prefill_chunking(size)))
        return modes, served_json

    def _mode(self, backend, chunk: int | None) -> dict:
        o, rows, errors, method, requests = self.plan.options, {}, {}, None, 0
        scored_rows = self.scored.setdefault(mode_name(chunk), {})
        longest = 0
        for p in self.prompts.rendered:
            rec = self.recorder.records.get(p.id)
            if rec is None or len(rec.completion_ids) < 2:
                continue
            longest = max(longest, len(rec.prompt_ids) + len(rec.completion_ids) - 1)
            positions = list(range(1, len(rec.completion_ids)))
            try:
                scored = backend.prefill_forced(list(rec.prompt_ids), list(rec.completion_ids),
                                                logprobs=o.logprobs, seed=o.seed, positions=positions,
                                                chunk=chunk)
            except RequestFailed as exc:  # never retried: this prompt is reported as not compared
                errors[p.id] = str(exc)
                continue
            method, requests = scored.method, requests + scored.requests
            pre_ids, pre_lps = [[]] + scored.top_ids, [[]] + scored.top_logprobs  # row i = position i
            scored_rows[p.id] = (list(rec.completion_ids), pre_ids, pre_lps)
            rows[p.id] = compare_rows(rec.completion_ids, rec.top_ids, rec.top_logprobs, pre_ids, pre_lps)
            self.recorder.progress.record(rows[p.id].positions)
        out = {"chunk": chunk, "method": method, "requests": requests, **summarize_rows(rows),
               "errors": errors, "longest_prefix_tokens": longest}
        if chunk is not None and not errors and not out["overall"]["positions"]:
            out["not_reached"] = (f"every prefix of the suite fits in one chunk of {chunk} tokens (longest "
                                  f"{longest}): give longer prompts or completions, or a smaller size")
        return out

    def check(self) -> Finding:
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, "decode-vs-prefill", "logits")
        backend = self.recorder.backend
        if not offers_prefill_scoring(backend):
            why = f"{backend.family}: {backend.prefill_refusal}"
            self.report = {"not_offered": why}
            return Finding(Check("decode-vs-prefill", "logits", INFO, f"not offered: {why}"),
                           {"decode_vs_prefill": self.report})
        report = self._scored_modes(backend)
        return Finding(dvp_check(report, max_delta=self.settings.max_delta), {"decode_vs_prefill": report})

    def chunked_check(self) -> Finding:
        """`chunked-prefill`: each chunk mode's top-k against the one pass's, over the same paths."""
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, "chunked-prefill", "logits")
        backend = self.recorder.backend
        if not offers_prefill_scoring(backend):
            why = f"{backend.family}: {backend.prefill_refusal}"
            return Finding(Check("chunked-prefill", "logits", INFO, f"not offered: {why}"),
                           {"chunked_prefill": {"not_offered": why}})
        report = chunked_report(self._scored_modes(backend), self.scored)
        if self.settings.lengths:
            report["ladder"] = self._ladder(backend)
        return Finding(chunked_check(report), {"chunked_prefill": report})

    def _ladder(self, backend) -> dict:
        """The long prompt's ladder lengths scored in one pass and in chunks of each numbered size (one feed of the
        longest length per mode), then compared (logits/prefill_ladder.py)."""
        from oracle.canary.needle import load_haystack

        o = self.plan.options
        context = backend.served_context()
        lengths, beyond = ladder_lengths(self.settings.lengths, context)
        chunks = [size for _, size, why in self._chunks(backend)[0] if size is not None and why is None]
        out = {"prompt": "the haystack text (--haystack), cycled", "context": context, "lengths": list(lengths),
               "beyond_context": list(beyond), "errors": {}, "requests": {}, "seconds": {}}
        if not lengths:
            return out | ladder_report((), {}, chunks=chunks)
        units = load_haystack(o.check(CANARY_CHECK).haystack)
        ids = ladder_prompt(self.prompts.tokenize("".join(units)), (), lengths[-1] + 1)
        positions = [n - 1 for n in lengths]  # row L-1 of the path: the distribution after its first L tokens
        scored: dict[str, dict[int, tuple]] = {}
        progress = self.recorder.progress
        progress.start("chunked-prefill ladder", len(lengths) * (1 + len(chunks)))
        try:
            for chunk in (None, *chunks):
                name, start = mode_name(chunk), time.perf_counter()
                try:
                    got = backend.prefill_forced(ids[:1], ids[1:], logprobs=o.logprobs, seed=o.seed,
                                                 positions=positions, chunk=chunk)
                except RequestFailed as exc:  # never retried: the mode is reported as not compared
                    out["errors"][name] = str(exc)
                    continue
                scored[name] = {n: (got.top_ids[i], got.top_logprobs[i]) for i, n in enumerate(lengths)}
                out["requests"][name] = got.requests
                out["seconds"][name] = round(time.perf_counter() - start, 2)
                progress.record(len(lengths))
        finally:
            progress.end()
        return out | ladder_report(lengths, scored, chunks=chunks)

    def _scored_modes(self, backend) -> dict:
        """Every mode scored once (the decode-vs-prefill report), whichever of the two items asks first."""
        if self.report is not None:
            return self.report
        o = self.plan.options
        modes, served = self._chunks(backend)
        report = {"definition": DEFINITION, "kld_is_lower_bound": True, "top_k": o.logprobs,
                  "tolerance_nats": self.settings.max_delta, "served_batch": served,
                  "scoring": backend.capabilities.prefill_scoring, "apart_from_gated_run": True, "modes": {}}
        progress = self.recorder.progress
        positions = sum(max(len(r.completion_ids) - 1, 0) for r in self.recorder.records.values())
        progress.start("decode-vs-prefill", positions * sum(why is None for _, _, why in modes))
        try:
            for name, chunk, why in modes:
                report["modes"][name] = ({"chunk": chunk, "not_offered": why} if why
                                         else self._mode(backend, chunk))
                if served and chunk == served["size"]:
                    report["modes"][name]["served_batch"] = True
        finally:
            progress.end()
        self.report = report
        return report
