"""Sampled decoding: the settings a run samples with, and the suite expanded to one record per prompt and seed.

    sampling = Sampling(temperature=0.8, top_p=1.0, seeds=(1, 2))
    suite = sampling.expand(suite)          # ids "code-hashmap~s1", "code-hashmap~s2", ...; each prompt its seed
    refusal = settings_refusal(reference_settings, sampling)   # None, or the message naming both settings

Only the stated settings apply: every request also sends top_k 0 and min_p 0, so a server's own sampler defaults
(llama-server: top_k 40, min_p 0.05) never shape the distribution. Greedy runs have no `Sampling` (None).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from oracle.run.suite import Suite

__all__ = ["SEED_MARK", "Sampling", "prompt_of", "settings_refusal", "settings_words"]

SEED_MARK = "~s"  # a sampled record's id: the prompt's id, the mark, the seed ("code-hashmap~s1")


@dataclass(frozen=True)
class Sampling:
    temperature: float
    top_p: float = 1.0
    seeds: tuple[int, ...] = (1234,)

    def record_id(self, prompt_id: str, seed: int) -> str:
        return f"{prompt_id}{SEED_MARK}{seed}"

    def expand(self, suite: Suite) -> Suite:
        """One prompt per (prompt, seed), in prompt order, each with its seed; the suite's hash is kept (the file
        is the same), the settings are recorded apart (`as_json`)."""
        prompts = tuple(dataclasses.replace(p, id=self.record_id(p.id, seed), seed=seed)
                        for p in suite.prompts for seed in self.seeds)
        return dataclasses.replace(suite, prompts=prompts)

    def as_json(self) -> dict:
        # top_k / min_p: what every request sends beside the stated settings (nothing else shapes the sampler).
        return {"temperature": self.temperature, "top_p": self.top_p, "seeds": list(self.seeds), "top_k": 0,
                "min_p": 0.0}

    @classmethod
    def from_json(cls, data: dict | None) -> "Sampling | None":
        if not data:
            return None
        return cls(float(data["temperature"]), float(data.get("top_p", 1.0)), tuple(int(s) for s in data["seeds"]))


def prompt_of(record_id: str) -> str:
    """The suite prompt a record id belongs to ("code-hashmap~s1" -> "code-hashmap")."""
    return record_id.rsplit(SEED_MARK, 1)[0] if SEED_MARK in record_id else record_id


def settings_words(sampling: Sampling | None) -> str:
    """"greedy" or "--temperature 0.8 --top-p 1 --oracle-seed 1 --seeds 2" (the options that give these settings)."""
    if sampling is None:
        return "greedy (no --temperature)"
    seeds = sampling.seeds
    consecutive = list(seeds) == list(range(seeds[0], seeds[0] + len(seeds)))
    seed_words = f"--oracle-seed {seeds[0]} --seeds {len(seeds)}" if consecutive else f"seeds {', '.join(map(str, seeds))}"
    return f"--temperature {sampling.temperature:g} --top-p {sampling.top_p:g} {seed_words}"


def settings_refusal(reference: Sampling | None, gate: Sampling | None) -> str | None:
    """None when a gate samples as its reference did; else the message naming both settings and the fix."""
    if reference == gate:
        return None
    return (f"the reference was recorded with {settings_words(reference)} and this gate asks for "
            f"{settings_words(gate)}: sampled tokens are compared only under the same settings; gate with the "
            "reference's settings, or record a reference with these")
