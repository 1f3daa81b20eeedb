"""Near-tie density beside a flip count: how many positions of a run had a top-2 margin below `--near-tie-nats`
(the chance that a harmless numeric change flips a token there), and the run's splits sorted into tie flips (the
margin at the split below it) and confident flips (at or above it, or the other token outside the top-k).

A flip count alone says little (llama.cpp #28768): 3 flips over 10 near-ties is another finding than 3 flips
over none. Pure: arrays in, a dataclass out.

    density = split_density([r.top_logprobs for r in records], [(row_margin, row_reason), ...], near_tie_nats=0.5)
    density.as_json()   # {"positions": 96, "near_tie_positions": 7, "tie_flips": 1, "confident_flips": 2, ...}
    density_words(density.as_json())  # "flips: 1 tie, 2 confident; near-tie density 7/96 positions (7.3%) < 0.5 nats"
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

import numpy as np

from oracle.compare.tokens import OUTSIDE_REFERENCE_TOP_K

__all__ = ["CONFIDENT", "TIE", "UNMEASURED", "SplitDensity", "density_words", "flip_kind", "split_density",
           "top2_margins"]

TIE, CONFIDENT, UNMEASURED = "tie", "confident", "unmeasured"


@dataclass(frozen=True)
class SplitDensity:
    near_tie_nats: float
    positions: int  # completion positions with at least two top-k logprobs
    near_tie_positions: int  # of them, top-1 minus top-2 below near_tie_nats
    unmeasured_positions: int  # positions without two top-k logprobs (the server gave fewer)
    flips: int  # splits at a token position
    tie_flips: int  # margin at the split below near_tie_nats
    confident_flips: int  # margin at or above it, or the other token outside the reference's top-k
    unmeasured_flips: int  # no logprobs at the split, or one side ended there

    @property
    def share(self) -> float | None:
        return self.near_tie_positions / self.positions if self.positions else None

    def as_json(self) -> dict:
        return asdict(self)


def top2_margins(top_logprobs: Sequence[Sequence[float]]) -> np.ndarray:
    """Per position, the largest top-k logprob minus the second (NaN where fewer than two were given)."""
    out = np.full(len(top_logprobs), np.nan)
    for i, row in enumerate(top_logprobs):
        if len(row) >= 2:
            a = np.partition(np.asarray(row, dtype=float), -2)
            out[i] = a[-1] - a[-2]
    return out


def flip_kind(margin_nats: float | None, reason: str, near_tie_nats: float) -> str:
    """"tie" / "confident" / "unmeasured": one split by the reference's margin at it, in nats."""
    if margin_nats is not None:
        return TIE if margin_nats < near_tie_nats else CONFIDENT
    return CONFIDENT if reason == OUTSIDE_REFERENCE_TOP_K else UNMEASURED


def split_density(top_logprobs: Iterable[Sequence[Sequence[float]]], splits: Iterable[tuple[float | None, str]], *,
                  near_tie_nats: float) -> SplitDensity:
    """top_logprobs: each record's rows of top-k logprobs; splits: (margin at the split, reason) of each split at a
    token position (compare_tokens' `margin_nats`, `reason`)."""
    positions = near = unmeasured = 0
    for rows in top_logprobs:
        margins = top2_margins(rows)
        measured = ~np.isnan(margins)
        positions += int(measured.sum())
        unmeasured += int((~measured).sum())
        near += int((margins[measured] < near_tie_nats).sum())
    kinds = [flip_kind(m, r, near_tie_nats) for m, r in splits]
    return SplitDensity(near_tie_nats, positions, near, unmeasured, len(kinds), kinds.count(TIE),
                        kinds.count(CONFIDENT), kinds.count(UNMEASURED))


def density_words(d: dict | None) -> str:
    """One line for a table cell or a summary: the flips by kind, then the density they stand in."""
    if not d:
        return "-"
    flips = f"flips: {d['tie_flips']} tie, {d['confident_flips']} confident"
    if d.get("unmeasured_flips"):
        flips += f", {d['unmeasured_flips']} unmeasured"
    if not d["positions"]:
        return f"{flips}; near-tie density not measured (no top-k logprobs)"
    share = 100 * d["near_tie_positions"] / d["positions"]
    return (f"{flips}; near-tie density {d['near_tie_positions']}/{d['positions']} positions ({share:.1f}%) "
            f"< {d['near_tie_nats']:g} nats")
