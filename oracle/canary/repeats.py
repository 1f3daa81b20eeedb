"""Repeats: the same request N times must give N identical complete token arrays.

    s = summarize_repeats([[1, 2, 3], [1, 2, 3], [1, 2, 4]])
    s.unique == 2; s.identical == 2; s.outliers == [Outlier(index=2, first_divergence=2, ...)]

The modal output (the most frequent array; on a tie, the earliest) is the baseline; every
other output is an outlier, reported with its first divergence from the baseline.
"""

from __future__ import annotations

from oracle.compare.confidence import count_json
from oracle.compare.tokens import first_divergence

from collections import Counter
from dataclasses import asdict, dataclass, field

__all__ = ["Outlier", "RepeatSummary", "summarize_repeats"]


@dataclass(frozen=True)
class Outlier:
    index: int  # which request (0-based, in send order)
    first_divergence: int  # token index, or the shorter length when one is a prefix of the other
    baseline_token: int | None
    outlier_token: int | None
    length: int
    baseline_length: int


@dataclass
class RepeatSummary:
    n: int
    unique: int
    identical: int  # how many outputs equal the modal one
    baseline_index: int
    outliers: list[Outlier] = field(default_factory=list)

    @property
    def all_identical(self) -> bool:
        return self.unique == 1

    def as_dict(self) -> dict:
        return {"n": self.n, "unique": self.unique, "identical": self.identical,
                "baseline_index": self.baseline_index, "outliers": [asdict(o) for o in self.outliers],
                "confidence": {"identical": count_json(self.identical, self.n)}}

    def describe(self) -> str:
        if self.all_identical:
            return f"{self.n}/{self.n} identical"
        parts = [f"request {o.index + 1}: first divergence at token {o.first_divergence} "
                 f"({o.baseline_token} -> {o.outlier_token})" for o in self.outliers[:5]]
        more = f"; {len(self.outliers) - 5} more" if len(self.outliers) > 5 else ""
        return (f"{self.identical}/{self.n} identical, {self.unique} unique outputs; " + "; ".join(parts) + more)


def summarize_repeats(outputs: list[list[int]], finish_reasons: list[str] | None = None) -> RepeatSummary:
    """Unique count and outliers of N complete token arrays (finish reasons, if given, must agree too)."""
    if not outputs:
        raise ValueError("no outputs to compare")
    reasons = finish_reasons or [""] * len(outputs)
    keys = [(tuple(o), r) for o, r in zip(outputs, reasons)]
    counts = Counter(keys)
    top = max(counts.values())
    base_key = next(k for k in keys if counts[k] == top)
    base_index = keys.index(base_key)
    base = list(base_key[0])
    outliers = []
    for i, k in enumerate(keys):
        if k == base_key:
            continue
        out = list(k[0])
        d = first_divergence(base, out)
        d = min(len(base), len(out)) if d is None else d  # same tokens, other finish reason
        outliers.append(Outlier(i, d, base[d] if d < len(base) else None, out[d] if d < len(out) else None,
                                len(out), len(base)))
    return RepeatSummary(len(outputs), len(counts), top, base_index, outliers)
