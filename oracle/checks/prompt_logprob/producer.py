"""The prompt-logprob check's producer, the `prompt-logprob` item: the mean log-prob a runner gives the prompts' own tokens (teacher-forced over each
prompt, `Record.prompt_logprobs`) against the reference's, as the field's f16-graph check does (-0.659 vs -0.655).
Collected for a backend whose capabilities declare `prompt_logprobs` (python runners); the producer returns a Finding.

    checks = PromptLogprobChecks(plan, recorder, prompts, state)
    checks.check().check.verdict   # "pass" / "fail" against --prompt-logprob-max-delta, "info" without one
"""

from __future__ import annotations

import numpy as np

from oracle.checks.descriptor import Finding, not_run
from oracle.compare.verdicts import FAIL, INFO, NOT_RUN, PASS, Check

__all__ = ["DEFINITION", "PromptLogprobChecks"]

DEFINITION = ("mean over every prompt token after the first of log p(token | the prompt before it), the prompt fed "
              "as a prefill (teacher forcing over the prompt); per prompt and over the suite (each token counted once)")


def _mean(values) -> float | None:
    return float(np.mean(values)) if len(values) else None


class PromptLogprobChecks:
    def __init__(self, plan, recorder, prompts, state) -> None:
        self.plan, self.recorder, self.prompts, self.state = plan, recorder, prompts, state

    def check(self) -> Finding:
        cid = "prompt-logprob"
        if not self.state.complete or self.state.interruption:
            return not_run(self.state, cid, "logits")
        reference, bar = self.plan.reference, self.plan.options.check("prompt_logprob").max_delta
        per_prompt, cand_all, ref_all = {}, [], []
        for p in self.prompts.rendered:
            rec = self.recorder.records.get(p.id)
            if rec is None:
                continue
            row = {"tokens": len(rec.prompt_logprobs), "candidate": _mean(rec.prompt_logprobs)}
            cand_all += rec.prompt_logprobs
            if reference is not None:
                ref = reference.record(p.id).prompt_logprobs
                row["reference"] = _mean(ref)
                if ref and rec.prompt_logprobs:
                    row["delta"] = row["candidate"] - row["reference"]
                    ref_all += ref
            per_prompt[p.id] = row
        report = {"definition": DEFINITION, "tolerance_nats": bar, "per_prompt": per_prompt,
                  "candidate": _mean(cand_all), "reference": _mean(ref_all) if ref_all else None}
        finding = {"prompt_logprob": report}
        if report["candidate"] is None:
            return Finding(Check(cid, "logits", NOT_RUN, "the run's records hold no prompt log-probs (each prompt "
                                 "needs at least 2 tokens)", [], report), finding)
        head = f"mean prompt log-prob {report['candidate']:.5f} over {len(cand_all)} prompt tokens"
        if reference is None:
            return Finding(Check(cid, "logits", INFO, f"{head} (no reference to compare with)", [], report), finding)
        if report["reference"] is None:
            return Finding(Check(cid, "logits", INFO, f"{head}; the reference holds no prompt log-probs (record it "
                                 "with a backend that scores the prompt, e.g. a python runner)", [], report), finding)
        delta = report["candidate"] - report["reference"]
        report["delta"] = delta
        head += f" vs the reference's {report['reference']:.5f} (Δ {delta:+.5f} nats)"
        lines = [f"{pid}: {r['candidate']:.5f} vs {r['reference']:.5f}" for pid, r in per_prompt.items()
                 if r.get("delta") is not None][:8]
        if bar is None:
            return Finding(Check(cid, "logits", INFO, f"{head}; no tolerance given (--prompt-logprob-max-delta)",
                                 lines, report), finding)
        verdict = FAIL if abs(delta) > bar else PASS
        words = "exceeds" if verdict == FAIL else "within"
        return Finding(Check(cid, "logits", verdict, f"{head}; |Δ| {words} --prompt-logprob-max-delta {bar:g}",
                             lines, report), finding)
