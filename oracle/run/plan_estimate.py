"""The run plan's arithmetic: the server's prefill and decode rates as the warm-up measured them, and what each
part of the run (its requests, prompt and generated tokens) should take at those rates.

    rates = Rates.from_warmup(warmup_row)     # prefill: prompt tokens / time to first token; decode: the rest
    part = Part.of("primary prompts (c1)", [(412, 128), (96, 128)], rates)
    plan = RunPlan(rates, [part], budget_s=300.0); plan.total_s; plan.as_json()

How the rates are measured: the warm-up requests run one after another, so the time to each one's first token is
its prefill (the request's overhead included) and the rest of its wall time is its decode. prefill = prompt tokens
sent / summed time to first token; decode = tokens generated after the first / the summed time after the first.
An item's estimate is prompt / prefill + generated / decode: linear in the prompt, so a long prompt whose attention
costs more than linearly is estimated low; the ETA corrects itself by what the parts already took.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["EMBEDDED_CPU_BUDGET", "Part", "Rates", "RunPlan", "duration_words", "parse_duration", "plan_words"]

# --oracle-budget when none is given, for the embedded llama-server default on its own model (oracle.targets.families);
# here, beside the durations it is read with, so that `--help` states it without the targets.
EMBEDDED_CPU_BUDGET = "5m"  # record and gate give a first verdict in about 10 minutes on 2 cores

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h)?\s*$")
_UNIT_S = {None: 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(flag: str, value: str) -> float | None:
    """Seconds of a duration ('10m', '600s', '1.5h', '90'); None for 'off'; ValueError naming the fix."""
    if value.strip().lower() in ("off", "none"):
        return None
    m = _DURATION.match(value.lower())
    if m is None or float(m.group(1)) <= 0:
        raise ValueError(f"{flag} {value!r}: expected a duration above 0 such as 10m, 600s or 1h (or off: no "
                         f"budget), e.g. {flag} 10m")
    return float(m.group(1)) * _UNIT_S[m.group(2)]


def duration_words(seconds: float | None) -> str:
    """'95 s', '4.2 min', '1.3 h'; '?' when unknown."""
    if seconds is None:
        return "?"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


@dataclass(frozen=True)
class Rates:
    prefill_tps: float | None  # prompt tokens a second (None: not measured)
    decode_tps: float | None  # generated tokens a second after the first
    source: str  # how they were measured, or why they were not

    @classmethod
    def from_warmup(cls, row: dict | None) -> "Rates":
        """The rates of the warm-up requests (the report's `warmup` row); unknown without one."""
        if not row or not row.get("requests"):
            return cls(None, None, "no warm-up request (--warmup 0): the server's rates were not measured")
        ttfts = [t for t in row.get("ttft_s") or [] if t]
        generated = row.get("completion_tokens") or []
        if not ttfts or len(ttfts) != len(generated):
            return cls(None, None, "the warm-up streamed no first token: the server's rates were not measured")
        prefill_s = sum(ttfts)
        decode_s = row["wall_s"] - prefill_s  # one request after another: the rest of the wall time is decode
        after_first = sum(max(n - 1, 0) for n in generated)
        prefill = row["prompt_tokens"] * len(ttfts) / prefill_s
        decode = after_first / decode_s if after_first and decode_s > 0 else None
        return cls(prefill, decode, f"{len(ttfts)} warm-up request(s) of {row['prompt_tokens']} prompt tokens and "
                                    f"{sum(generated)} generated: prompt tokens / time to first token, tokens after "
                                    "the first / the time after it")

    @property
    def known(self) -> bool:
        return self.prefill_tps is not None and self.decode_tps is not None

    def seconds(self, prompt_tokens: int, generated_tokens: int) -> float | None:
        if not self.known:
            return None
        return prompt_tokens / self.prefill_tps + generated_tokens / self.decode_tps

    def as_json(self) -> dict:
        return {"prefill_tok_s": _round(self.prefill_tps), "decode_tok_s": _round(self.decode_tps),
                "source": self.source}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 1)


@dataclass
class Part:
    """One part of the run: its requests' (prompt, generated) token counts and the estimate at the rates."""

    name: str
    requests: int
    prompt_tokens: int
    generated_tokens: int
    estimate_s: float | None
    note: str = ""  # what the estimate leaves out, or why there is none
    actual_s: float | None = None  # filled as the run goes

    @classmethod
    def of(cls, name: str, shapes: list[tuple[int, int]], rates: Rates, *, note: str = "",
           extra_s: float = 0.0) -> "Part":
        seconds = [rates.seconds(p, g) for p, g in shapes]
        total = None if any(s is None for s in seconds) else sum(seconds) + extra_s
        return cls(name, len(shapes), sum(p for p, _ in shapes), sum(g for _, g in shapes), total, note)

    def as_json(self) -> dict:
        return {"name": self.name, "requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "generated_tokens": self.generated_tokens, "estimate_s": _round(self.estimate_s),
                "actual_s": _round(self.actual_s), "note": self.note}

    def line(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return (f"  {self.name}: {self.requests} requests, {self.prompt_tokens} prompt + {self.generated_tokens} "
                f"generated tokens, ~{duration_words(self.estimate_s)}{note}")


@dataclass
class RunPlan:
    rates: Rates
    parts: list[Part]
    budget_s: float | None = None
    budget_source: str = ""  # "--oracle-budget", or why the default applies
    dropped: list[dict] = field(default_factory=list)  # {"item", "estimate_s", "reason"}
    notes: list[str] = field(default_factory=list)

    @property
    def total_s(self) -> float | None:
        known = [p.estimate_s for p in self.parts if p.estimate_s is not None]
        return sum(known) if known and self.rates.known else None

    def as_json(self) -> dict:
        return {"rates": self.rates.as_json(), "parts": [p.as_json() for p in self.parts],
                "estimate_s": _round(self.total_s), "budget_s": self.budget_s, "budget_source": self.budget_source,
                "dropped": list(self.dropped), "notes": list(self.notes)}

    def lines(self) -> list[str]:
        """The plan as the terminal prints it."""
        r = self.rates
        rates = (f"prefill {r.prefill_tps:.0f} tok/s, decode {r.decode_tps:.1f} tok/s (from the warm-up)"
                 if r.known else r.source)
        budget = (f"; budget {duration_words(self.budget_s)} ({self.budget_source})" if self.budget_s is not None
                  else "")
        out = [f"oracle plan: {rates}{budget}"] + [p.line() for p in self.parts]
        out += [f"  dropped: {d['reason']}" for d in self.dropped]
        out += [f"  note: {n}" for n in self.notes]
        out.append(f"oracle plan: about {duration_words(self.total_s)} in all")
        return out


def plan_words(plan: dict | None) -> str | None:
    """identity.json's `plan` in a line for the reports: estimate, actual, rates, budget and what it dropped."""
    if not plan:
        return None
    rates = plan.get("rates") or {}
    actual = [p["actual_s"] for p in plan.get("parts") or [] if p.get("actual_s") is not None]
    took = f", the planned parts took {duration_words(sum(actual))}" if actual else ""
    said = (f"~{duration_words(plan.get('estimate_s'))} estimated{took} (prefill {rates.get('prefill_tok_s')} tok/s, "
            f"decode {rates.get('decode_tok_s')} tok/s, from the warm-up)")
    if plan.get("budget_s") is not None:
        said += f"; budget {duration_words(plan['budget_s'])} ({plan.get('budget_source')})"
    for d in plan.get("dropped") or []:
        said += f"; dropped: {d['reason']}"
    return said
