"""The tokens check's part of the report: which evidence the server gave in the primary run (identity.json
`evidence`: token ids or text, logprobs, cached-token counts, counters), and, for sampled runs, the token match
rate against the reference per condition (`token_match`: c1 from the tokens items, each ladder level and boot
from its own item).

    state = TokensState(); state.apply("evidence", sources); state.apply("token_match", {"c1": rate})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from oracle.compare.sampled import match_rate_json
from oracle.compare.verdicts import DIVERGENT, EXACT, NEAR_TIE, NOT_RUN, WITHIN_NOISE

__all__ = ["TokensState"]


@dataclass
class TokensState:
    KEYS = ("evidence", "token_match")

    evidence: dict | None = None  # which evidence the server gave (compare/sources.py)
    token_match: dict[str, dict] = field(default_factory=dict)  # sampled: condition (c1, c4, boot 2) -> match rate

    def apply(self, key: str, value) -> None:
        current = getattr(self, key)
        if isinstance(current, dict) and isinstance(value, dict):
            current.update(value)
        else:
            setattr(self, key, value)

    def to_json(self) -> dict:
        return {"evidence": self.evidence, "token_match": self.token_match}

    @classmethod
    def from_json(cls, data: Mapping) -> "TokensState":
        return cls(data.get("evidence"), dict(data.get("token_match") or {}))

    @staticmethod
    def summary(report) -> dict:
        """The report summary's counts of the prompts' verdicts (`ReportState.summary`): exact of all prompts in a
        gate, else of the items that ran."""
        tokens = [c for c in report.checks if c.kind == "tokens"]
        count = lambda v: sum(c.verdict == v for c in tokens)  # noqa: E731
        # Against an f16 reference the gate is on logits: no token item, so no "0/N exact".
        tokens_gated = bool(tokens) or not any(c.kind == "logits" for c in report.checks)
        exact = [count(EXACT), len(report.prompt_ids) if report.mode == "gate" and tokens_gated else len(tokens)]
        return {"exact": exact, "near_tie": count(NEAR_TIE), "divergent": count(DIVERGENT),
                "within_reference_noise": count(WITHIN_NOISE), "not_run": count(NOT_RUN)}

    @classmethod
    def merge(cls, own: "TokensState", parts: list[tuple[str, "TokensState"]]) -> "TokensState":
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
