"""Decode vs prefill: the candidate's own generated path, its decode-time top-k against the same path scored
as a prompt (one pass, and fed in chunks). Pure: rows in, figures out, never asserts.

    row = compare_rows(tokens, decode_ids, decode_lps, prefill_ids, prefill_lps)
    figures = summarize_rows({"p1": row, ...})   # bit-identical positions, max |Δlogprob|, Same top p, KLD
    check = dvp_check(report, max_delta=0.0)

While a server decodes, each completion position after the first is one new token on top of the KV cache
(a batch of one); scored as a prompt, the same position is one row of a prefill batch. Position 0 is left out:
its decode-time distribution already comes from the prompt's own prefill. Logprobs on both sides go through
float32 (what the server computes and what records keep), so "bit-identical" means equal float32 values at
the same top-k ids in the same order. KLD is KL(prefill || decode) over the shared top-k plus one tail bucket
(`stats.top_k_kld`): a lower bound of the full-vocabulary KLD, labelled so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from oracle.compare.verdicts import FAIL, INFO, NOT_RUN, PASS, Check
from oracle.logits.stats import compare_position, summarize

__all__ = ["DvpRow", "MAX_LINES", "ONE_PASS", "compare_rows", "dvp_check", "mode_name", "summarize_rows"]

ONE_PASS = "one-pass"
MAX_LINES = 8  # per-prompt lines in the check's message (the report keeps every prompt)


def mode_name(chunk: int | None) -> str:
    return ONE_PASS if chunk is None else f"chunks-{chunk}"


def _f32(values: Sequence[float]) -> list[float]:
    return np.asarray(values, dtype=np.float32).astype(np.float64).tolist()


@dataclass
class DvpRow:
    """One prompt in one mode: per-position figures over the positions both sides scored."""

    positions: int = 0
    bit_identical: int = 0
    max_abs_delta: float = 0.0
    worst: dict | None = None  # {"position", "token", "decode", "prefill"} where max |Δ| was found
    same_top1: int = 0
    klds: list[float] = field(default_factory=list)
    stats: list = field(default_factory=list)  # stats.PositionLogits, for summarize()

    def as_json(self) -> dict:
        n = self.positions
        kld = np.asarray(self.klds) if self.klds else np.zeros(0)
        return {"positions": n, "bit_identical": self.bit_identical, "max_abs_delta": self.max_abs_delta,
                "worst": self.worst, "same_top1": self.same_top1 / n if n else None,
                "mean_kld": float(kld.mean()) if n else None, "max_kld": float(kld.max()) if n else None}


def compare_rows(tokens: Sequence[int], decode_ids: Sequence[Sequence[int]],
                 decode_lps: Sequence[Sequence[float]],
                 prefill_ids: Sequence[Sequence[int]], prefill_lps: Sequence[Sequence[float]],
                 positions: Sequence[int] | None = None) -> DvpRow:
    """Row i of each side is the distribution before tokens[i]; positions default to 1..n-1 where both have a
    top-k (position 0 is a prefill on both sides)."""
    n = min(len(tokens), len(decode_ids), len(prefill_ids))
    wanted = range(1, n) if positions is None else [i for i in positions if 0 <= i < n]
    row = DvpRow()
    for i in wanted:
        if not decode_ids[i] or not prefill_ids[i]:
            continue
        d_ids, p_ids = [int(t) for t in decode_ids[i]], [int(t) for t in prefill_ids[i]]
        d_lps, p_lps = _f32(decode_lps[i]), _f32(prefill_lps[i])
        row.positions += 1
        row.bit_identical += d_ids == p_ids and d_lps == p_lps
        decode, prefill = dict(zip(d_ids, d_lps)), dict(zip(p_ids, p_lps))
        for t in d_ids:
            if t in prefill:
                delta = abs(decode[t] - prefill[t])
                if delta > row.max_abs_delta or row.worst is None:
                    row.max_abs_delta = max(row.max_abs_delta, delta)
                    row.worst = {"position": i, "token": t, "decode": decode[t], "prefill": prefill[t]}
        pos = compare_position(i, p_ids, p_lps, d_ids, d_lps, reference_token=int(tokens[i]))
        row.same_top1 += pos.same_top1
        row.klds.append(pos.kld)
        row.stats.append(pos)
    return row


def summarize_rows(rows: dict[str, DvpRow]) -> dict:
    """One mode over every prompt: the per-prompt figures, the overall ones (llama.cpp's names from
    `stats.summarize` beside them) and where the largest |Δ| is."""
    per_prompt = {pid: r.as_json() for pid, r in rows.items()}
    n = sum(r.positions for r in rows.values())
    worst_pid = max((pid for pid, r in rows.items() if r.worst), key=lambda p: rows[p].max_abs_delta,
                    default=None)
    klds = [k for r in rows.values() for k in r.klds]
    overall = {"positions": n, "bit_identical": sum(r.bit_identical for r in rows.values()),
               "max_abs_delta": max((r.max_abs_delta for r in rows.values()), default=0.0),
               "worst": ({"prompt": worst_pid, **rows[worst_pid].worst} if worst_pid else None),
               "same_top1": sum(r.same_top1 for r in rows.values()) / n if n else None,
               "mean_kld": float(np.mean(klds)) if klds else None,
               "max_kld": float(np.max(klds)) if klds else None}
    every = [p for r in rows.values() for p in r.stats]
    if every:
        s = summarize(every)
        overall |= {"mean_kld_uncertainty": s["mean_kld_uncertainty"],
                    "same_top1_uncertainty": s["same_top1_uncertainty"], "rms_delta_p": s["rms_delta_p"]}
    return {"overall": overall, "per_prompt": per_prompt}


def _figure_line(name: str, o: dict) -> str:
    if not o.get("positions"):
        return f"{name}: no position compared"
    return (f"{name}: bit-identical at {o['bit_identical']}/{o['positions']} positions, max |Δlogprob| "
            f"{o['max_abs_delta']:.3g} nats, Same top p {100 * o['same_top1']:.2f} %, "
            f"Mean KLD {o['mean_kld']:.3g} (lower bound)")


def dvp_check(report: dict, *, max_delta: float | None) -> Check:
    """The `decode-vs-prefill` item over the report's modes: FAIL when a realised mode's max |Δlogprob|
    exceeds max_delta (naming prompt, position, token, both values), INFO without a tolerance, NOT_RUN when
    nothing could be compared or a prompt's requests failed."""
    cid = "decode-vs-prefill"
    modes = report.get("modes") or {}
    lines, broken, compared, errors = [], [], 0, 0
    for name, mode in modes.items():
        if mode.get("not_offered"):
            lines.append(f"{name}: not offered: {mode['not_offered']}")
            continue
        if mode.get("not_reached"):
            lines.append(f"{name}: not reached: {mode['not_reached']}")
            continue
        o = mode["overall"]
        compared += o.get("positions") or 0
        lines.append(_figure_line(name, o))
        for pid, err in (mode.get("errors") or {}).items():
            lines.append(f"{name} {pid}: not compared: {err}")
            errors += 1
        w = o.get("worst")
        if max_delta is not None and o.get("positions") and o["max_abs_delta"] > max_delta and w:
            broken.append(f"{name}: |Δlogprob| {o['max_abs_delta']:.3g} > --dvp-max-delta {max_delta:g} at "
                          f"{w['prompt']} position {w['position']} (token {w['token']}: "
                          f"decode {w['decode']!r}, "
                          f"prefill {w['prefill']!r})")
            over = [(pid, s) for pid, s in mode["per_prompt"].items() if s["positions"] and
                    s["max_abs_delta"] > max_delta]
            lines += [f"  {name} {pid}: max |Δ| {s['max_abs_delta']:.3g} at position {s['worst']['position']}"
                      for pid, s in over[:MAX_LINES]]
            if len(over) > MAX_LINES:
                lines.append(f"  ... {len(over) - MAX_LINES} more prompts in identity.json")
    evidence = {"modes": {name: m.get("overall") or {k: m.get(k) for k in ("not_offered", "not_reached")}
                          for name, m in modes.items()}}
    if broken:
        return Check(cid, "logits", FAIL, "; ".join(broken), lines, evidence)
    if errors:
        return Check(cid, "logits", NOT_RUN, f"{errors} prompt(s) not compared: " + "; ".join(lines), lines,
                     evidence)
    if not compared:
        why = "; ".join(lines) or "no mode was run"
        return Check(cid, "logits", NOT_RUN, f"no position compared: {why}", lines, evidence)
    one = (modes.get(ONE_PASS) or {}).get("overall") or next(
        (m["overall"] for m in modes.values() if m.get("overall")), {})
    head = _figure_line(ONE_PASS if modes.get(ONE_PASS, {}).get("overall") else "first mode", one)
    if max_delta is None:
        return Check(cid, "logits", INFO, f"{head}; no tolerance given (--dvp-max-delta)", lines, evidence)
    return Check(cid, "logits", PASS, f"{head}; within --dvp-max-delta {max_delta:g}", lines, evidence)
