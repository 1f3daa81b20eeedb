"""The candidate's distributions along the reference's token path, compared with the reference's.

    row = compare_prompt(backend, reference_record, candidate_record, logprobs=20)   # path, positions, summary
    report = logits_report({"p": row}, ...); check = suite_check(report, kld_max=0.05, same_top1_min=95.0)

Up to and including its first split, the candidate's gated generation already ran on the
reference's path (same context), so its own top-k logprobs are used there. From the split on,
the backend's teacher-forced method (`teacher_forced`: llama.cpp one-token steps, hf one forward
pass, vLLM prompt_logprobs) scores the reference's tokens. It runs after the gated generation and
apart from it, so whatever cache it uses never touches the cache-zero evidence; the method and
the cache it used are reported. A backend without such a method (`TeacherForcing`: its capabilities declare
`teacher_forcing` and it implements this protocol; no method of `Backend`) is compared up to its split only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from oracle.backends import RequestFailed
from oracle.backends.base import TeacherForced
from oracle.logits.stats import PositionLogits, compare_position, summarize
from oracle.store.records import Record
from oracle.compare.verdicts import FAIL, INFO, NOT_RUN, PASS, Check

__all__ = ["CandidatePath", "PromptLogits", "candidate_path", "compare_path", "compare_prompt", "greedy_split",
           "logits_check", "logits_report", "overall_summary", "position_summary", "precision_floor",
           "shared_prefix", "suite_check", "summary_line", "TeacherForcing"]


@runtime_checkable
class TeacherForcing(Protocol):
    """What the logits check needs of a backend beyond its completions: the reference's tokens forced, the
    top-k read at the positions asked (decode vs prefill's one-pass scorers build on it too:
    `OnePassPrefill`)."""

    def teacher_forced(self, prompt_ids: list[int], completion_ids: list[int], *, logprobs: int,
                       seed: int = 1234, positions: list[int] | None = None) -> TeacherForced: ...


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
    logit_shift: dict[int, float] = field(default_factory=dict)  # position -> raw logit = logprob + shift, when known

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
                if i < len(candidate.logit_shift):
                    path.logit_shift[i] = candidate.logit_shift[i]
                path.from_generation += 1
    wanted = [i for i in range(n) if not rows_ids[i]]
    if wanted and backend.capabilities.teacher_forcing and isinstance(backend, TeacherForcing):
        result = backend.teacher_forced(reference.prompt_ids, reference.completion_ids, logprobs=logprobs, seed=seed,
                                        positions=wanted)
        for i, ids, lps in zip(wanted, result.top_ids, result.top_logprobs):
            rows_ids[i], rows_lps[i] = ids, lps
        path.logit_shift |= dict(zip(wanted, result.logit_shift))
        path.teacher_forced = len(wanted)
        path.method, path.requests = result.method, result.requests
        path.cached_prompt_tokens = result.cached_prompt_tokens
    path.missing = [i for i in range(n) if not rows_ids[i]]
    return path


def _f32(values) -> list[float]:
    # References keep logprobs as float32: both sides go through it, so equal runs compare exactly equal.
    return np.asarray(values, dtype=np.float32).astype(np.float64).tolist()


def compare_path(reference: Record, path: CandidatePath) -> list[PositionLogits]:
    """Per-position figures wherever both sides have top-k logprobs (and the raw logit cosine where both kept the
    logit shift)."""
    out = []
    for i, token in enumerate(reference.completion_ids):
        if i >= len(reference.top_ids) or not reference.top_ids[i] or not path.top_ids[i]:
            continue
        ref_shift = reference.logit_shift[i] if i < len(reference.logit_shift) else None
        out.append(compare_position(i, reference.top_ids[i], _f32(reference.top_logprobs[i]), path.top_ids[i],
                                    _f32(path.top_logprobs[i]), reference_token=token, reference_shift=ref_shift,
                                    candidate_shift=path.logit_shift.get(i)))
    return out


def summary_line(s: dict) -> str:
    if not s.get("positions"):
        return "no position with top-k logprobs on both sides"
    cos = f", logprob cosine {s['logprob_cosine']:.5f}" if s.get("logprob_cosine") is not None else ""
    if s.get("logit_cosine") is not None:
        cos += f", logit cosine (centered) {s['logit_cosine']:.6f} over {s['logit_cosine_ids']}+ ids"
    if s.get("logit_cosine_raw") is not None:
        cos += f", logit cosine (raw) {s['logit_cosine_raw']:.6f}"
    return (f"Mean KLD {s['mean_kld']:.6f} ± {s['mean_kld_uncertainty']:.6f} (lower bound over the shared top-k + "
            f"tail), Same top p {100 * s['same_top1']:.3f} ± {100 * s['same_top1_uncertainty']:.3f} %, "
            f"RMS Δp {100 * s['rms_delta_p']:.3f} %{cos}; {s['positions']} positions")


def logits_check(check_id: str, summary: dict, *, kld_max: float | None, same_top1_min: float | None,
                 lines: list[str] | None = None, evidence: dict | None = None, gating: bool = True) -> Check:
    """PASS / FAIL against the thresholds (Same top p in percent); INFO when no threshold is set or the
    check only reports (gating=False). A check with no comparable position fails."""
    evidence = {"statistics": summary, **(evidence or {})}
    lines = list(lines or [])
    if not summary.get("positions"):
        return Check(check_id, "logits", FAIL, "no position could be compared: neither side returned top-k "
                     "logprobs there (ask the server for --logprobs)", lines, evidence)
    detail = summary_line(summary)
    if not gating:
        return Check(check_id, "logits", INFO, detail, lines, evidence)
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


def greedy_split(reference: Record, candidate: Record | None) -> int | None:
    """Where the candidate's greedy tokens first leave the reference's (None: identical arrays, or no candidate)."""
    if candidate is None:
        return None
    same = shared_prefix(candidate.completion_ids, reference.completion_ids)
    equal = same == len(candidate.completion_ids) == len(reference.completion_ids)
    return None if equal else same


@dataclass
class PromptLogits:
    """One prompt's comparison: the reference record, the candidate path, the per-position figures."""

    reference: Record
    candidate: Record | None
    path: CandidatePath | None = None
    positions: list[PositionLogits] = field(default_factory=list)
    summary: dict = field(default_factory=dict)
    error: str | None = None

    def check(self, check_id: str) -> Check:
        if self.error:
            return Check(check_id, "logits", NOT_RUN, self.error)
        split = greedy_split(self.reference, self.candidate)
        check = logits_check(check_id, self.summary, kld_max=None, same_top1_min=None, gating=False,
                             evidence={"path": self.path.evidence(), "greedy_split": split})
        check.detail += ("; greedy path identical to the reference's" if split is None
                         else f"; greedy path splits from the reference at token {split}")
        return check


def compare_prompt(backend, reference: Record, candidate: Record | None, *, logprobs: int,
                   seed: int = 1234) -> PromptLogits:
    """The candidate (or, with candidate None, the backend alone) along one reference record's path."""
    row = PromptLogits(reference, candidate)
    try:
        row.path = candidate_path(backend, reference, candidate, logprobs=logprobs, seed=seed)
    except RequestFailed as exc:  # never retried: this prompt is reported as not compared
        row.error = f"teacher-forced request failed: {exc}"
        return row
    row.positions = compare_path(reference, row.path)
    row.summary = position_summary(row.positions, reference)
    return row


def overall_summary(rows: dict[str, PromptLogits]) -> dict:
    every = [pos for r in rows.values() for pos in r.positions]
    ref_lp = [float(r.reference.logprobs[pos.position]) for r in rows.values() for pos in r.positions
              if pos.position < len(r.reference.logprobs)]
    return summarize(every, reference_logprobs=ref_lp)


def logits_report(rows: dict[str, PromptLogits], *, family: str, candidate_top_k: int, reference_kind: str,
                  reference_logits: dict, thresholds: dict, decode: Callable[[list[int]], str]) -> dict:
    """identity.json's `logits`: figures overall and per prompt, the method, the floor, the largest KLDs."""
    done = {pid: r for pid, r in rows.items() if not r.error}
    paths = [r.path for r in done.values()]
    cached = [p.cached_prompt_tokens for p in paths if p.cached_prompt_tokens is not None]
    top = sorted(((pid, pos) for pid, r in done.items() for pos in r.positions), key=lambda x: -x[1].kld)[:10]
    return {
        "reference_kind": reference_kind,
        "reference_dtype": reference_logits.get("dtype"),
        "reference_top_k": reference_logits.get("top_k"),
        "candidate_top_k": candidate_top_k,
        "kld_is_lower_bound": True,
        "kld_definition": "KL(reference || candidate) over the tokens in both top-k sets, the rest of each "
                          "distribution in one tail bucket: a lower bound of the full-vocabulary KLD",
        "thresholds": thresholds,
        "method": {"backend": family,
                   "teacher_forced": next((p.method for p in paths if p.method), None),
                   "positions_from_generation": sum(p.from_generation for p in paths),
                   "positions_teacher_forced": sum(p.teacher_forced for p in paths),
                   "positions_missing": sum(len(p.missing) for p in paths),
                   "requests": sum(p.requests for p in paths),
                   "cached_prompt_tokens": sum(cached) if cached else None,
                   "apart_from_gated_run": True},
        "overall": overall_summary(done),
        "per_prompt": {pid: r.summary | {"greedy_split": greedy_split(r.reference, r.candidate)}
                       for pid, r in done.items()},
        "errors": {pid: r.error for pid, r in rows.items() if r.error},
        "top_positions": [_top_position(pid, pos, done[pid].reference, decode) for pid, pos in top],
        "floor": reference_logits.get("floor"),
    }


def _top_position(pid: str, pos: PositionLogits, reference: Record, decode: Callable[[list[int]], str]) -> dict:
    start = max(0, pos.position - 12)
    return {"prompt": pid, **pos.as_json(), "context": decode(reference.completion_ids[start:pos.position]),
            "reference_text": decode([pos.reference_token]), "candidate_top1_text": decode([pos.candidate_top1])}


def suite_check(report: dict, *, kld_max: float | None, same_top1_min: float | None) -> Check:
    """The `logits` item: the whole suite against the thresholds, each prompt and the floor in its lines."""
    lines = [f"{pid}: Mean KLD {s['mean_kld']:.6f}, Same top p {100 * s['same_top1']:.2f} %, "
             f"RMS Δp {100 * s['rms_delta_p']:.2f} %" for pid, s in report["per_prompt"].items() if s.get("positions")]
    floor = report.get("floor") or {}
    if (floor.get("overall") or {}).get("positions"):
        lines.append(f"reference floor ({floor['dtype']} vs {floor['reference_dtype']}): Mean KLD "
                     f"{floor['overall']['mean_kld']:.6f}, Same top p {100 * floor['overall']['same_top1']:.2f} %")
    lines += [f"{pid}: {err}" for pid, err in report["errors"].items()]
    check = logits_check("logits", report["overall"], kld_max=kld_max, same_top1_min=same_top1_min, lines=lines,
                         evidence={"method": report["method"]})
    if report["errors"] and check.verdict != FAIL:
        check.verdict, check.detail = NOT_RUN, f"{len(report['errors'])} prompt(s) not compared; {check.detail}"
    return check


def precision_floor(rows: dict[str, PromptLogits], *, dtype: str, reference_dtype: str) -> dict:
    """The reference's own floor: its path scored by the same weights in another dtype."""
    done = {pid: r for pid, r in rows.items() if not r.error}
    return {"dtype": dtype, "reference_dtype": reference_dtype,
            "method": next((r.path.method for r in done.values() if r.path and r.path.method), None),
            "overall": overall_summary(done), "per_prompt": {pid: r.summary for pid, r in done.items()},
            "errors": {pid: r.error for pid, r in rows.items() if r.error}}


def position_summary(positions: list[PositionLogits], reference: Record) -> dict:
    """summarize() with the reference's own logprobs of its tokens at the compared positions."""
    at = {p.position for p in positions}
    ref_lp = [float(x) for i, x in enumerate(reference.logprobs) if i in at and np.isfinite(x)]
    return summarize(positions, reference_logprobs=ref_lp)
