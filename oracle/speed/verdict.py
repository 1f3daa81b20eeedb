"""The `speed` item's verdict (--min-speedup X) from the card's comparison: the interval against the bar, inside
the noise band the run measured (`noise.py`), or why the speed was not judged.

    verdict, detail, evidence = speed_verdict(card, bar=1.2, floor=0.05)
    evidence["not_judged"]     # the headline's reason when the item is inconclusive
"""

from __future__ import annotations

from oracle.speed.interleave import BETWEEN_RUN
from oracle.speed.noise import judge, noise_band
from oracle.speed.report import speed_words
from oracle.speed.validity import HEADLINE

__all__ = ["speed_verdict"]


def speed_verdict(card: dict, bar: float, floor: float) -> tuple[str, str, dict]:
    """(pass / fail / inconclusive, the item's detail, its evidence). The band is the A/A control's when the
    comparison is the interleaved one and --speed-control ran, else the floor (--speed-noise-floor)."""
    versus = card.get("vs_reference") or {}
    control = (card.get("interleave") or {}).get("control") if versus.get("interval") == BETWEEN_RUN else None
    band = noise_band(control, floor)
    evidence = {"min_speedup": bar, "label": versus.get("label"), "median": versus.get("median"),
                "ci95": versus.get("ci95"), "prompts": versus.get("prompts"), "launch": versus.get("launch"),
                "interval": versus.get("interval"), "rounds": versus.get("rounds"), "noise": band}
    if versus.get("label") != HEADLINE:
        reasons = versus.get("reasons") or []
        why = f"speed comparison {versus.get('label')}: {reasons[0] if reasons else 'no comparison'}"
        evidence["not_judged"] = why
        return "inconclusive", f"{why}; --min-speedup {bar:g} not judged", evidence
    said = f"{speed_words(versus)}; --min-speedup {bar:g}"
    verdict, why = judge(versus, bar=bar, band=band)
    if verdict != "inconclusive":
        return verdict, f"{said}: {why}", evidence
    if why.startswith("inconclusive: "):
        evidence["not_judged"] = why.split(": the interval")[0].removeprefix("inconclusive: ")
        return verdict, f"{said}: {why}", evidence
    lo, hi = versus["ci95"]
    evidence["not_judged"] = f"{bar:g} lies inside the interval [{lo:.2f}, {hi:.2f}]"
    more = "rounds (--speed-rounds)" if versus.get("interval") == BETWEEN_RUN else "prompts"
    return verdict, (f"{said}: it lies inside the interval (more {more}, or a clearer difference, would settle "
                     "it)"), evidence
