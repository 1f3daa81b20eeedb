"""The candidate's distributions along the reference's token path, compared with the reference's.

    path = candidate_path(backend, reference_record, candidate_record, logprobs=20)
    positions = compare_path(reference_record, path)
    check = logits_check("logits", summarize(positions), kld_max=0.05, same_top1_min=95.0)

Up to and including its first split, the candidate's gated generation already ran on the
reference's path (same context), so its own top-k logprobs are used there. From the split on,
the backend's teacher-forced method (`teacher_forced`: llama.cpp one-token steps, hf one forward
pass, vLLM prompt_logprobs) scores the reference's tokens. It runs after the gated generation and
apart from it, so whatever cache it uses never touches the cache-zero evidence; the method and
the cache it used are reported. A backend without such a method is compared up to its split only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .logit_stats import PositionLogits, compare_position, summarize
from .records import Record
from .verdicts import FAIL, INFO, PASS, Check

__all__ = ["CandidatePath", "candidate_path", "compare_path", "logits_check", "position_summary", "shared_prefix",
           "summary_line"]


@dataclass
class CandidatePath:
    """The candidate's top-k at each reference completion position (empty row: not obtained)."""

    top_ids: list[list[int]]
    top_logprobs: list[list[float]]
    from_generation: int = 0  # positions taken from the gated generation (on the reference path up to its split)
    teacher_forced: int = 0
    method: str | None = None
    requests: int = 0
    cached_prompt_tokens: int | None = None
    missing: list[int] = field(default_factory=list)

    def evidence(self) -> dict:
        return {"from_generation": self.from_generation, "teacher_forced": self.teacher_forced,
                "method": self.method, "requests": self.requests, "cached_prompt_tokens": self.cached_prompt_tokens,
                "missing_positions": len(self.missing)}


def shared_prefix(a: list[int], b: list[int]) -> int:
    """Length of the common prefix of two token arrays."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def candidate_path(backend, reference: Record, candidate: Record | None, *, logprobs: int,
                   seed: int = 1234) -> CandidatePath:
    n = len(reference.completion_ids)
    rows_ids: list[list[int]] = [[] for _ in range(n)]
    rows_lps: list[list[float]] = [[] for _ in range(n)]
    path = CandidatePath(rows_ids, rows_lps)
    if candidate is not None and candidate.prompt_ids == reference.prompt_ids:
        # Position i is on the reference path while the tokens before it agree: through the first split itself.
        same = shared_prefix(candidate.completion_ids, reference.completion_ids)
        for i in range(min(same + 1, n, len(candidate.top_ids))):
            if candidate.top_ids[i]:
                rows_ids[i], rows_lps[i] = list(candidate.top_ids[i]), list(candidate.top_logprobs[i])
                path.from_generation += 1
    wanted = [i for i in range(n) if not rows_ids[i]]
    forced = getattr(backend, "teacher_forced", None)
    if wanted and forced is not None:
        result = _teacher_forced(forced, reference, wanted, logprobs=logprobs, seed=seed)
        for i, ids, lps in zip(wanted, result.top_ids, result.top_logprobs):
            rows_ids[i], rows_lps[i] = ids, lps
        path.teacher_forced = len(wanted)
        path.method, path.requests = result.method, result.requests
        path.cached_prompt_tokens = result.cached_prompt_tokens
    path.missing = [i for i in range(n) if not rows_ids[i]]
    return path


def _teacher_forced(forced, reference: Record, wanted: list[int], *, logprobs: int, seed: int):
    return forced(reference.prompt_ids, reference.completion_ids, logprobs=logprobs, seed=seed, positions=wanted)


def _f32(values) -> list[float]:
    # References keep logprobs as float32: both sides go through it, so equal runs compare exactly equal.
    return np.asarray(values, dtype=np.float32).astype(np.float64).tolist()


def compare_path(reference: Record, path: CandidatePath) -> list[PositionLogits]:
    """Per-position figures wherever both sides have top-k logprobs."""
    out = []
    for i, token in enumerate(reference.completion_ids):
        if i >= len(reference.top_ids) or not reference.top_ids[i] or not path.top_ids[i]:
            continue
        out.append(compare_position(i, reference.top_ids[i], _f32(reference.top_logprobs[i]), path.top_ids[i],
                                    _f32(path.top_logprobs[i]), reference_token=token))
    return out


def summary_line(s: dict) -> str:
    if not s.get("positions"):
        return "no position with top-k logprobs on both sides"
    cos = f", logprob cosine {s['logprob_cosine']:.5f}" if s.get("logprob_cosine") is not None else ""
    return (f"Mean KLD {s['mean_kld']:.6f} ± {s['mean_kld_uncertainty']:.6f} (lower bound over the shared top-k + "
            f"tail), Same top p {100 * s['same_top1']:.3f} ± {100 * s['same_top1_uncertainty']:.3f} %, "
            f"RMS Δp {100 * s['rms_delta_p']:.3f} %{cos}; {s['positions']} positions")


def logits_check(check_id: str, summary: dict, *, kld_max: float | None, same_top1_min: float | None,
                 lines: list[str] | None = None, evidence: dict | None = None) -> Check:
    """PASS / FAIL against the thresholds (Same top p in percent); INFO when no threshold is set."""
    evidence = {"statistics": summary, **(evidence or {})}
    lines = list(lines or [])
    if not summary.get("positions"):
        return Check(check_id, "logits", FAIL, "no position could be compared: neither side returned top-k "
                     "logprobs there (ask the server for --logprobs)", lines, evidence)
    detail = summary_line(summary)
    broken = []
    if kld_max is not None and summary["mean_kld"] > kld_max:
        broken.append(f"Mean KLD {summary['mean_kld']:.6f} > --kld-max {kld_max:g}")
    if same_top1_min is not None and 100 * summary["same_top1"] < same_top1_min:
        broken.append(f"Same top p {100 * summary['same_top1']:.3f} % < --same-top1-min {same_top1_min:g} %")
    if broken:
        return Check(check_id, "logits", FAIL, "; ".join(broken) + f" ({detail})", lines, evidence)
    if kld_max is None and same_top1_min is None:
        return Check(check_id, "logits", INFO, f"{detail}; no threshold given (--kld-max, --same-top1-min)",
                     lines, evidence)
    return Check(check_id, "logits", PASS, detail, lines, evidence)


def position_summary(positions: list[PositionLogits], reference: Record) -> dict:
    """summarize() with the reference's own logprobs of its tokens at the compared positions."""
    at = {p.position for p in positions}
    ref_lp = [float(x) for i, x in enumerate(reference.logprobs) if i in at and np.isfinite(x)]
    return summarize(positions, reference_logprobs=ref_lp)
