"""The tokens check's part of the report: which evidence the server gave in the primary run (identity.json
`evidence`: token ids or text, logprobs, cached-token counts, counters), and, for sampled runs, the token match
rate against the reference per condition (`token_match`: c1 from the tokens items, each ladder level and boot
from its own item).

    state = TokensState(); state.apply("evidence", sources); state.apply("token_match", {"c1": rate})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from oracle.compare.near_ties import CONFIDENT, TIE, UNMEASURED, flip_kind
from oracle.compare.sampled import match_rate_json
from oracle.compare.verdicts import DIVERGENT, EXACT, NEAR_TIE, NOT_RUN, WITHIN_NOISE

__all__ = ["TokensState"]


@dataclass
class TokensState:
    KEYS = ("evidence", "token_match", "near_tie_density")
    # Where its keys go in identity.json (report/state.py's PLACES)
    PLACES = {"evidence": 30, "token_match": 150, "summary.exact": 10, "summary.near_tie": 30, "summary.divergent": 40,
              "summary.within_reference_noise": 50, "summary.splits": 60, "summary.not_run": 80}

    evidence: dict | None = None  # which evidence the server gave (compare/sources.py)
    token_match: dict[str, dict] = field(default_factory=dict)  # sampled: condition (c1, c4, boot 2) -> match rate
    # The primary run's positions whose top-2 margin is below --near-tie-nats (compare/near_ties.py; no flips)
    near_tie_density: dict | None = None

    def apply(self, key: str, value) -> None:
        current = getattr(self, key)
        if isinstance(current, dict) and isinstance(value, dict):
            current.update(value)
        else:
            setattr(self, key, value)

    def to_json(self) -> dict:
        return {"evidence": self.evidence, "token_match": self.token_match, "near_tie_density": self.near_tie_density}

    @classmethod
    def from_json(cls, data: Mapping) -> "TokensState":
        return cls(data.get("evidence"), dict(data.get("token_match") or {}), data.get("near_tie_density"))

    @staticmethod
    def summary(report) -> dict:
        """The report summary's counts of the prompts' verdicts (`ReportState.summary`): exact of all prompts in a
        gate, else of the items that ran."""
        tokens = [c for c in report.checks if c.kind == "tokens"]
        count = lambda v: sum(c.verdict == v for c in tokens)  # noqa: E731
        # Against an f16 reference the gate is on logits: no token item, so no "0/N exact".
        tokens_gated = bool(tokens) or not any(c.kind == "logits" for c in report.checks)
        exact = [count(EXACT), len(report.prompt_ids) if report.mode == "gate" and tokens_gated else len(tokens)]
        out = {"exact": exact, "near_tie": count(NEAR_TIE), "divergent": count(DIVERGENT),
               "within_reference_noise": count(WITHIN_NOISE), "not_run": count(NOT_RUN)}
        density = report.states["tokens"].near_tie_density if "tokens" in report.states else None
        if density is not None and report.mode == "gate" and tokens:
            out["splits"] = _flips(density, tokens)
        return out

    @classmethod
    def merge(cls, own: "TokensState", parts: list[tuple[str, "TokensState"]]) -> "TokensState":
        merged = cls._merge(own, parts)
        densities = [state.near_tie_density for _, state in parts if state.near_tie_density]
        if densities:  # each server's primary run holds its own prompts: their positions add up
            merged.near_tie_density = {k: (sum(d[k] for d in densities) if k != "near_tie_nats" else v)
                                       for k, v in densities[0].items()}
        return merged

    @classmethod
    def _merge(cls, own: "TokensState", parts: list[tuple[str, "TokensState"]]) -> "TokensState":
        """The evidence: the controller's own, else the first server's (one configuration). Each condition ran on
        one server; c1 ran on all of them, each its own prompts: their counts added up."""
        evidence = own.evidence or next((state.evidence for _, state in parts if state.evidence), None)
        match = {label: v for _, state in parts for label, v in state.token_match.items()}
        c1 = [state.token_match["c1"]["vs_reference"] for _, state in parts if "c1" in state.token_match]
        if c1:
            match["c1"] = {"vs_reference": match_rate_json([(p["k"], p["n"]) for p in c1])
                           | {"records": sum(p["records"] for p in c1),
                              "exact_records": sum(p["exact_records"] for p in c1)}}
        return cls(evidence, match)


def _flips(density: dict, tokens: list) -> dict:
    """The tokens summary's split density: the primary run's near-tie positions, and its splits against the
    reference as tie or confident flips by the reference's margin at the split."""
    kinds = [flip_kind(c.evidence.get("margin_nats"), c.evidence.get("reason", ""), density["near_tie_nats"])
             for c in tokens if c.verdict != EXACT and (c.evidence or {}).get("first_divergence") is not None]
    return density | {"flips": len(kinds), "tie_flips": kinds.count(TIE), "confident_flips": kinds.count(CONFIDENT),
                      "unmeasured_flips": kinds.count(UNMEASURED)}
