"""The reference's own variability (its noise envelope) and the determinism class of a target.

A record run with --ladder and/or --boots compares every extra condition with its own c1
records. Where the reference itself split (prompt p, from token j on, under some
condition), a later candidate split on p at token i >= j is `within-reference-noise`: the
reference never pinned those tokens down.

    env = NoiseEnvelope.from_rows({"boot1-c8": rows, "boot2-c1": rows}, determinism="within-boot-only")
    env.covers("code-hashmap", 40)  # True when the reference varied on that prompt at or before token 40
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from oracle.compare.verdicts import EXACT, LOGPROBS_MOVED
from oracle.store.records import REPEAT, Condition

__all__ = ["ACROSS_BOOTS", "NOT_WITHIN_BOOT", "UNMEASURED", "WITHIN_BOOT", "WITHIN_BOOT_ONLY", "NoiseEnvelope", "determinism_of",
           "classify_determinism", "DETERMINISM_WORDS"]

ACROSS_BOOTS = "across-boots"
WITHIN_BOOT_ONLY = "within-boot-only"
WITHIN_BOOT = "within-boot"  # repeats agree; no restart was measured
NOT_WITHIN_BOOT = "not-within-boot"
UNMEASURED = "unmeasured"

DETERMINISM_WORDS = {
    ACROSS_BOOTS: "deterministic across boots",
    WITHIN_BOOT_ONLY: "deterministic within a boot only",
    WITHIN_BOOT: "deterministic within a boot (no restart measured: add --boots 2)",
    NOT_WITHIN_BOOT: "not deterministic even within a boot",
    UNMEASURED: "determinism not measured (no repeat in the same boot)",
}


def determinism_of(rows_by_condition: Mapping[str, Sequence[dict]]) -> str:
    """The determinism class from a run's condition rows (keyed by condition key): its c1 repeat in boot 1
    and every later boot's rows against boot 1."""
    boots = [rows for key, rows in rows_by_condition.items() if Condition.from_key(key).boot > 1]
    return classify_determinism(rows_by_condition.get(REPEAT.key), boots)


def classify_determinism(repeat_rows: Sequence[dict] | None, boot_rows: Sequence[Sequence[dict]]) -> str:
    """From the c1 repeat in boot 1 and each later boot's rows against boot 1."""
    if repeat_rows is None:
        return UNMEASURED
    if any(r["vs_c1"]["verdict"] != EXACT for r in repeat_rows):
        return NOT_WITHIN_BOOT
    if any(r["vs_c1"]["verdict"] != EXACT for rows in boot_rows for r in rows):
        return WITHIN_BOOT_ONLY
    return ACROSS_BOOTS if boot_rows else WITHIN_BOOT


@dataclass
class NoiseEnvelope:
    # prompt id -> {"first_position": j, "conditions": {condition key: first divergence}}
    varies: dict[str, dict] = field(default_factory=dict)
    determinism: str = UNMEASURED
    conditions: list[str] = field(default_factory=list)  # what the reference run measured

    @classmethod
    def from_rows(cls, rows_by_condition: Mapping[str, Sequence[dict]], *, determinism: str) -> "NoiseEnvelope":
        env = cls(determinism=determinism, conditions=sorted(rows_by_condition))
        for key, rows in rows_by_condition.items():
            for r in rows:
                v = r["vs_c1"]
                if v["verdict"] in (EXACT, LOGPROBS_MOVED):  # the envelope holds token splits; equal tokens none
                    continue
                pos = v["first_divergence"] if v["first_divergence"] is not None else v["reference_length"]
                entry = env.varies.setdefault(r["prompt"], {"first_position": pos, "conditions": {}})
                entry["first_position"] = min(entry["first_position"], pos)
                prev = entry["conditions"].get(key)
                entry["conditions"][key] = pos if prev is None else min(prev, pos)
        return env

    def covers(self, prompt: str, position: int | None) -> bool:
        entry = self.varies.get(prompt)
        return entry is not None and position is not None and position >= entry["first_position"]

    def where(self, prompt: str) -> str:
        """Where the reference varied on this prompt: 'from token 40 (boot1-c8, boot2-c1)'."""
        entry = self.varies[prompt]
        return f"from token {entry['first_position']} ({', '.join(entry['conditions'])})"

    def as_json(self) -> dict:
        return {"determinism": self.determinism, "conditions": self.conditions, "varies": self.varies}

    @classmethod
    def from_json(cls, data: Mapping | None) -> "NoiseEnvelope | None":
        if not data:
            return None
        return cls(varies=dict(data.get("varies", {})), determinism=data.get("determinism", UNMEASURED),
                   conditions=list(data.get("conditions", [])))
