"""A condition's records (a ladder level, a later boot) against the level-1 oracle and the reference.

Pure: records in, rows and a Check out. Each record is compared with its prompt's c1 record
of the same run and, when a reference is given, with the reference record too; its verdict
is the worse of the two, and a split inside the reference's noise envelope counts as
`within-reference-noise`. With logprobs=True (`--oracle-compare logprobs`), a side whose tokens are equal but
whose returned logprobs are not bit-identical is `logprobs-moved` (compare/logprobs.py).

    rows = compare_condition(level_records, c1_records, reference_records, envelope, near_tie_nats=0.5)
    check = condition_check("ladder[c8]", "ladder", "c8", rows, required=8, recording=False)
"""

from __future__ import annotations

from math import ceil
from typing import Mapping, Sequence

from oracle.compare.confidence import count_json
from oracle.compare.logprobs import compare_logprobs
from oracle.compare.tokens import TokenSide, compare_tokens
from oracle.compare.noise import NoiseEnvelope
from oracle.store.records import Record
from oracle.compare.verdicts import DIVERGENT, EXACT, INFO, LOGPROBS_MOVED, NEAR_TIE, PASS, WITHIN_NOISE, Check

__all__ = ["boots_agreeing", "compare_condition", "condition_check", "condition_confidence", "condition_counts",
           "first_split", "headline_counts", "headline_parts", "required_exact", "verdict_rank", "worst"]

_RANK = {EXACT: 0, WITHIN_NOISE: 1, LOGPROBS_MOVED: 2, NEAR_TIE: 3, DIVERGENT: 4}


def verdict_rank(verdict: str) -> int:
    """exact 0 < within-reference-noise 1 < logprobs-moved 2 < near-tie 3 < divergent 4."""
    return _RANK[verdict]


def worst(*verdicts: str) -> str:
    return max(verdicts, key=verdict_rank)


def _side(oracle: Record, record: Record, prompt: str, envelope: NoiseEnvelope | None, *, near_tie_nats: float,
          sampled: bool, logprobs: bool) -> dict:
    ours, theirs = TokenSide.of(oracle), TokenSide.of(record)
    result = compare_tokens(ours, theirs, near_tie_nats=near_tie_nats, sampled=sampled)
    verdict = result.verdict
    if verdict != EXACT and envelope is not None:
        if envelope.covers(prompt, result.split_position):
            verdict = WITHIN_NOISE
    side = {"verdict": verdict, "first_divergence": result.first_divergence, "margin_nats": result.margin_nats,
            "reference_length": result.reference_length, "candidate_length": result.candidate_length,
            "reason": result.reason}
    if logprobs and verdict == EXACT:
        moved = compare_logprobs(ours, theirs)
        side["logprobs"] = moved.as_json()
        if not moved.equal:
            side["verdict"], side["reason"] = LOGPROBS_MOVED, moved.describe()
    return side


def compare_condition(records: Sequence[Record], oracle: Mapping[str, Record], reference: Mapping[str, Record] | None,
                      envelope: NoiseEnvelope | None, *, near_tie_nats: float, sampled: bool = False,
                      logprobs: bool = False) -> list[dict]:
    """One row per record: its verdict against the c1 record (vs_c1) and the reference (vs_reference); sampled:
    every split divergent (compare_tokens); logprobs: equal tokens with moved logprobs are logprobs-moved."""
    rows = []
    how = dict(near_tie_nats=near_tie_nats, sampled=sampled, logprobs=logprobs)
    for rec in records:
        vs_c1 = _side(oracle[rec.id], rec, rec.id, envelope, **how)
        row = {"record": rec.key, "prompt": rec.id, "vs_c1": vs_c1, "vs_reference": None,
               "completion_sha256": rec.completion_sha256, "c1_sha256": oracle[rec.id].completion_sha256}
        verdict = vs_c1["verdict"]
        if reference is not None:
            row["vs_reference"] = _side(reference[rec.id], rec, rec.id, envelope, **how)
            verdict = worst(verdict, row["vs_reference"]["verdict"])
        row["verdict"] = verdict
        rows.append(row)
    return rows


def required_exact(level: int, n_records: int, minimums: Sequence[tuple[int, int, int]]) -> int:
    """Records that must match at this level: all, or the --ladder-min share (c32=29/32) of them."""
    for c, k, m in minimums:
        if c == level:
            return ceil(n_records * k / m)
    return n_records


def condition_counts(rows: Sequence[dict]) -> dict[str, int]:
    """Records per verdict; logprobs-moved only where some record has it (--oracle-compare logprobs)."""
    counts = {v: sum(r["verdict"] == v for r in rows) for v in (EXACT, WITHIN_NOISE, NEAR_TIE, DIVERGENT)}
    moved = sum(r["verdict"] == LOGPROBS_MOVED for r in rows)
    return counts | {LOGPROBS_MOVED: moved} if moved else counts


def condition_confidence(rows: Sequence[dict]) -> dict:
    """A condition's counts with their Wilson 95% intervals: exact overall, and against c1 and the reference
    apart (the latter only when there is one)."""
    n = len(rows)
    out = {"exact": count_json(sum(r["verdict"] == EXACT for r in rows), n),
           "vs_c1": count_json(sum(r["vs_c1"]["verdict"] == EXACT for r in rows), n)}
    if rows and rows[0]["vs_reference"] is not None:
        out["vs_reference"] = count_json(sum(r["vs_reference"]["verdict"] == EXACT for r in rows), n)
    return out


def condition_check(check_id: str, kind: str, label: str, rows: Sequence[dict], *, required: int,
                    recording: bool) -> Check:
    """exact / within-reference-noise / pass (threshold met) / logprobs-moved / near-tie / divergent; INFO when
    recording."""
    n = len(rows)
    counts = condition_counts(rows)
    strict = counts[EXACT] + counts[WITHIN_NOISE]
    moved = counts.get(LOGPROBS_MOVED, 0)
    splits = [r for r in rows if r["verdict"] != EXACT]
    firsts = sorted(f for f in map(first_split, splits) if f is not None)
    detail = f"{label}: {counts[EXACT]}/{n} exact"
    if rows and rows[0]["vs_reference"] is not None:
        same_c1 = sum(r["vs_c1"]["verdict"] == EXACT for r in rows)
        same_ref = sum(r["vs_reference"]["verdict"] == EXACT for r in rows)
        detail += f" ({same_c1}/{n} vs c1, {same_ref}/{n} vs the reference)"
    if counts[WITHIN_NOISE]:
        detail += f", {counts[WITHIN_NOISE]} within reference noise"
    if moved:
        detail += f", {moved} logprobs-moved (tokens equal)"
    if counts[NEAR_TIE]:
        detail += f", {counts[NEAR_TIE]} near-tie"
    if firsts:
        detail += f"; first divergences at tokens {', '.join(map(str, firsts[:8]))}{' ...' if len(firsts) > 8 else ''}"
    lines = [_row_line(r) for r in splits[:16]]
    evidence = {"counts": counts, "records": n, "required": required, "rows": list(rows)}
    if recording:
        verdict = EXACT if counts[EXACT] == n else INFO
        if verdict == INFO:
            detail += " (recorded as the reference's own variability)"
    elif strict == n and counts[EXACT] == n:
        verdict = EXACT
    elif strict == n:
        verdict = WITHIN_NOISE
    elif strict >= required:
        verdict, detail = PASS, detail + f" (at least {required} required)"
    elif strict + moved >= required:
        verdict, detail = LOGPROBS_MOVED, detail + f" (at least {required} required; met only with logprobs moved)"
    elif strict + moved + counts[NEAR_TIE] >= required:
        verdict, detail = NEAR_TIE, detail + f" (at least {required} required; met only with the near-ties)"
    else:
        verdict, detail = DIVERGENT, detail + f" (at least {required} required)"
    return Check(check_id, kind, verdict, detail, lines, evidence)


def first_split(row: dict) -> int | None:
    """A row's earliest first divergence, against c1 or the reference (None: no token split)."""
    positions = [s["first_divergence"] for s in (row["vs_c1"], row["vs_reference"]) if s and s["verdict"] != EXACT]
    positions = [p for p in positions if p is not None]
    return min(positions) if positions else None


def _row_line(row: dict) -> str:
    parts = []
    for name, side in (("c1", row["vs_c1"]), ("reference", row["vs_reference"])):
        if side is None or side["verdict"] == EXACT:
            continue
        if side["verdict"] == LOGPROBS_MOVED:
            parts.append(f"vs {name}: {side['reason']}")
            continue
        where = f"token {side['first_divergence']}" if side["first_divergence"] is not None else "finish reason"
        margin = f", margin {side['margin_nats']:.3f} nats" if side["margin_nats"] is not None else ""
        parts.append(f"vs {name}: {side['verdict']} at {where}{margin}")
    return f"{row['record']}: " + "; ".join(parts)


def boots_agreeing(boots: Mapping[str, dict]) -> tuple[int, int]:
    """(boots whose every record matched boot 1, all boots): boot 1 counts as agreeing with itself."""
    same = sum(v["counts"]["exact"] == v["records"] for v in boots.values())
    return same + 1, len(boots) + 1


def headline_parts(ladder: Mapping[str, dict], boots: Mapping[str, dict]) -> list[tuple[str, tuple[int, int]]]:
    """Each headline part with the count it states: ("c8 1/16 (412 tok/s)", (1, 16)), ..., ("boots 2/2", (2, 2))."""
    def tput(v):
        t = (v.get("speed") or {}).get("throughput_tok_s")
        return f" ({t:.0f} tok/s)" if t else ""

    parts = [(f"{level} {v['counts']['exact']}/{v['records']}{tput(v)}", (v["counts"]["exact"], v["records"]))
             for level, v in ladder.items()]
    if boots:
        same, all_boots = boots_agreeing(boots)
        parts.append((f"boots {same}/{all_boots}", (same, all_boots)))
    return parts


def headline_counts(ladder: Mapping[str, dict], boots: Mapping[str, dict]) -> list[str]:
    """["c1 12/12 (98 tok/s)", "c8 1/16 (412 tok/s)", ..., "boots 2/2"] for a report's headline (boot 1 counts as
    agreeing); a level's tok/s is its aggregate throughput (tokens / wall time of its waves)."""
    return [text for text, _ in headline_parts(ladder, boots)]
