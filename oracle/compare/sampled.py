"""Seeded identity under sampling: the token match rate of two sampled completions of one prompt and seed.

    matched, compared = token_match(reference_ids, candidate_ids)    # (17, 18): split at token 17
    match_rate_json([(17, 18), (24, 24)])                            # {"k": 41, "n": 42, "wilson95": [...], ...}

Token-DiFR's measure: of the tokens generated from the same prefix, the share that came out the same. Two sampled
completions share their prefix up to the first divergence; after it their contexts differ, so no later token is
compared. A record therefore counts its common prefix as matched and, when it splits, one token more as compared
(the split itself; a completion that ends where the other goes on splits at its end). The interval is the Wilson
95% score interval over those tokens (compare/confidence.py); tokens of one sequence are not independent trials,
so read it as the spread of the rate at this many tokens, not a guarantee (docs/sampling.md).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from oracle.compare.confidence import count_json
from oracle.compare.tokens import first_divergence

__all__ = ["match_rate_json", "rows_match", "side_match", "token_match"]


def token_match(reference: Sequence[int], candidate: Sequence[int]) -> tuple[int, int]:
    """(matched, compared) tokens of two completions sampled with one seed."""
    i = first_divergence(reference, candidate)
    if i is None:
        return len(reference), len(reference)
    return i, i + 1


def match_rate_json(pairs: Iterable[tuple[int, int]]) -> dict:
    """The summed counts as identity.json keeps them: k matched of n compared, the Wilson 95% interval, the rate."""
    pairs = list(pairs)
    k, n = sum(m for m, _ in pairs), sum(c for _, c in pairs)
    return count_json(k, n) | {"rate": round(k / n, 4) if n else None, "records": len(pairs),
                               "exact_records": sum(m == c for m, c in pairs)}


def side_match(side: dict) -> tuple[int, int]:
    """(matched, compared) of one side of a condition row (compare/conditions.py), from its first divergence."""
    first = side["first_divergence"]
    if first is None:
        return side["reference_length"], side["reference_length"]
    return first, first + 1


def rows_match(rows: Sequence[dict]) -> dict:
    """A condition's token match rate against c1 and, where there is one, against the reference."""
    out = {"vs_c1": match_rate_json(side_match(r["vs_c1"]) for r in rows)}
    if rows and rows[0]["vs_reference"] is not None:
        out["vs_reference"] = match_rate_json(side_match(r["vs_reference"]) for r in rows)
    return out
