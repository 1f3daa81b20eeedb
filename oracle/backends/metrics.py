"""A server's /metrics (Prometheus text, read with `prometheus_client`'s parser) as oracle's `Counters`.

One place for every engine's counter names: llama-server's `llamacpp:` and vLLM's `vllm:`.

    metrics = Metrics.parse(text); metrics.counters(); metrics.running()
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from oracle.backends.base import Counters

__all__ = ["Metrics"]

# (Counters field, sample name) per engine; the engine is told by its prefix in /metrics.
_COUNTER_NAMES = {
    "llamacpp:": {"prompt_tokens_cached": "llamacpp:prompt_tokens_cached_total",
                  "drafts": "llamacpp:spec_decode_num_drafts_total",
                  "draft_tokens": "llamacpp:spec_decode_num_draft_tokens_total",
                  "accepted_tokens": "llamacpp:spec_decode_num_accepted_tokens_total",
                  "tokens_generated": "llamacpp:tokens_predicted_total"},
    "vllm:": {"prefix_cache_hits": "vllm:prefix_cache_hits_total",
              "prefix_cache_queries": "vllm:prefix_cache_queries_total",
              "drafts": "vllm:spec_decode_num_drafts_total",
              "draft_tokens": "vllm:spec_decode_num_draft_tokens_total",
              "accepted_tokens": "vllm:spec_decode_num_accepted_tokens_total",
              "tokens_generated": "vllm:generation_tokens_total",
              "preemptions": "vllm:num_preemptions_total"},
}
_ACCEPTED_PER_POSITION = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
_RUNNING = ("vllm:num_requests_running", "llamacpp:requests_processing")  # requests generating right now
_SPEC_PREFIX = "vllm:spec_decode_num_drafts"  # registered by vLLM only with a speculative config


@dataclass(frozen=True)
class Metrics:
    """Samples of one /metrics answer: summed per sample name (labels folded), and as labelled rows."""

    totals: dict[str, float]
    labelled: tuple[tuple[str, tuple[tuple[str, str], ...], float], ...]

    @classmethod
    def parse(cls, text: str) -> "Metrics":
        totals: dict[str, float] = {}
        rows = []
        try:
            families = list(text_string_to_metric_families(text))
        except ValueError:  # not Prometheus text (an HTML error page, a proxy's answer): no counters
            families = []
        for family in families:
            for sample in family.samples:
                totals[sample.name] = totals.get(sample.name, 0.0) + float(sample.value)
                if sample.labels:
                    rows.append((sample.name, tuple(sorted(sample.labels.items())), float(sample.value)))
        return cls(totals, tuple(rows))

    def by_label(self, name: str, label: str) -> dict[str, float]:
        """One metric's samples keyed by one label's value (other labels folded), e.g. per draft position."""
        out: dict[str, float] = {}
        for sample, labels, value in self.labelled:
            key = dict(labels).get(label)
            if sample == name and key is not None:
                out[key] = out.get(key, 0.0) + value
        return out

    def engine(self) -> str | None:
        return next((p for p in _COUNTER_NAMES if any(k.startswith(p) for k in self.totals)), None)

    def counters(self) -> Counters:
        """The known counters of whichever engine this is (all None for a server with other metrics)."""
        prefix = self.engine()
        if prefix is None:
            return Counters()
        values = {field: self.totals.get(name) for field, name in _COUNTER_NAMES[prefix].items()}
        per_pos = self.by_label(_ACCEPTED_PER_POSITION, "position")
        if per_pos:
            values["accepted_per_position"] = tuple(per_pos[k] for k in sorted(per_pos, key=int))
        return Counters(**values)

    def running(self) -> int | None:
        value = next((self.totals[n] for n in _RUNNING if n in self.totals), None)
        return None if value is None else int(value)

    def speculative(self) -> bool:
        return any(k.startswith(_SPEC_PREFIX) for k in self.totals)
