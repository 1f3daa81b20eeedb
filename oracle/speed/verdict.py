"""The `speed` item's verdict (--min-speedup X) from the card's comparison: the sequential test's decision (the
interleaved default), or the interval against the bar outside the noise band the run measured (`noise.py`: the fixed
design, a recorded reference), or why the speed was not judged.

    verdict, detail, evidence = speed_verdict(card, bar=1.2, floor=0.05)
    evidence["not_judged"]     # the headline's reason when the item is inconclusive
"""

from __future__ import annotations

from oracle.speed.interleave import BETWEEN_RUN
from oracle.speed.noise import judge, noise_band, percent, same_speed
from oracle.speed.report import speed_words
from oracle.speed.sequential import verdict_words
from oracle.speed.validity import HEADLINE

__all__ = ["BOTH_UP_CAVEAT", "speed_verdict"]

# A pass measured with both servers up and no A/A control: what two instances of one config differ by is in the
# ratio, and no round of the session can tell it from the config's (docs/speed.md, "On one H100").
BOTH_UP_CAVEAT = ("; both servers up without --speed-control: two servers of one config differ too (up to 3% on "
                  "an H100, docs/speed.md), and this session cannot tell that from the config's speed-up; "
                  "--interleave-servers one-at-a-time or --speed-control N can")


def _sequential(versus: dict, said: str, bar: float, band: dict, evidence: dict) -> tuple[str, str, dict]:
    """Accepting H1 passes, accepting H0 fails (`same speed` when the point lies within the band of 1.0), the cap is
    inconclusive with its rounds and LLR."""
    seq = versus["sequential"]
    evidence["sequential"] = {k: seq[k] for k in ("decision", "rounds", "llr", "bounds", "path")}
    words = verdict_words(seq)
    if seq["decision"] == "pass":
        return "pass", f"{said}: {words}", evidence
    if seq["decision"] == "fail":
        if same_speed(versus["median"], band):
            return "fail", (f"{said}: same speed (within the measured noise +-{percent(band['fraction'])} of 1.0: "
                            f"{band['source']}); {words}"), evidence
        return "fail", f"{said}: {words}", evidence
    evidence["not_judged"] = (f"the sequential test reached its cap of {seq['rounds_max']} rounds undecided (LLR "
                              f"{seq['llr']:.2f}, bounds [{seq['bounds'][0]:.2f}, {seq['bounds'][1]:.2f}])"
                              if seq["llr"] is not None else "the sequential test had too few rounds")
    return "inconclusive", (f"{said}: {words} (more rounds, --speed-rounds-max, or a clearer difference would settle "
                            "it)"), evidence


def speed_verdict(card: dict, bar: float, floor: float) -> tuple[str, str, dict]:
    """(pass / fail / inconclusive, the item's detail, its evidence). The band is the comparison's own (the A/A
    points, or the session's pass-to-pass spread) when it has one, else the floor (--speed-noise-floor)."""
    versus = card.get("vs_reference") or {}
    control = (card.get("interleave") or {}).get("control") if versus.get("interval") == BETWEEN_RUN else None
    band = versus.get("noise") or noise_band(control, floor)
    evidence = {"min_speedup": bar, "label": versus.get("label"), "median": versus.get("median"),
                "ci95": versus.get("ci95"), "prompts": versus.get("prompts"), "launch": versus.get("launch"),
                "interval": versus.get("interval"), "rounds": versus.get("rounds"), "noise": band}
    if versus.get("label") != HEADLINE:
        reasons = versus.get("reasons") or []
        why = f"speed comparison {versus.get('label')}: {reasons[0] if reasons else 'no comparison'}"
        evidence["not_judged"] = why
        return "inconclusive", f"{why}; --min-speedup {bar:g} not judged", evidence
    said = f"{speed_words(versus)}; --min-speedup {bar:g}"
    judged = _sequential if versus.get("sequential") else _interval
    verdict, detail, evidence = judged(versus, said, bar, band, evidence)
    twins = (card.get("interleave") or {}).get("servers") == "both-up" and not control
    return verdict, detail + (BOTH_UP_CAVEAT if twins and verdict == "pass" else ""), evidence


def _interval(versus: dict, said: str, bar: float, band: dict, evidence: dict) -> tuple[str, str, dict]:
    """The fixed design or a recorded reference: the interval against the bar, outside the noise band."""
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
