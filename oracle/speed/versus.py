"""Candidate vs reference speed: the paired per-prompt speed-up of the conventional decode rate, with a
bootstrap 95% interval over prompts, when both runs ran on the same hardware.

    hw = hardware(identity)                                   # accelerator + driver, host CPU, model sha256
    result = compare_cards(candidate_card, reference_card, candidate_hw=hw, reference_hw=ref_hw)
    result["label"], result["median"], result["ci95"]

Different hardware or a side without token times: "not comparable", with the reason, and never a number; a side
whose timestamps are not credible (`credible.py`): "not credible", with its reasons, and never a number either; a
side that was not alone on its device (`isolation.py`): "not isolated", its number shown but never a headline; a
reference recorded so makes every comparison with it `not headline`, the reason in `not_headline` (card, headline).
`launch` (from `launch_match.py`) says what the two launch commands held equal.
"""

from __future__ import annotations

import numpy as np

from oracle.speed.interleave import WITHIN_RUN
from oracle.speed.validity import HEADLINE, INSUFFICIENT, MIN_PROMPTS, NOT_COMPARABLE, NOT_CREDIBLE, NOT_ISOLATED

__all__ = ["BOOTSTRAP_RESAMPLES", "RECORDED_ELSEWHERE", "compare_cards", "hardware", "hardware_differences", "paired_ratio"]

BOOTSTRAP_RESAMPLES = 10_000
# The reference's speed comes from its own recording: another run, maybe another boot or thermal state. Its
# interval covers the prompt-to-prompt spread within the two runs, not the drift between them.
RECORDED_ELSEWHERE = "reference measured in another run"
BOOTSTRAP_SEED = 20261203  # fixed: the same two runs always give the same interval


def hardware(identity: dict) -> dict:
    """What a speed comparison must share: the accelerator and its driver, the host CPU, the model file."""
    accel = dict(identity.get("accelerator") or {})
    host = identity.get("host") or {}
    return {"accelerator": accel or None, "cpu": host.get("cpu"), "cpu_count": host.get("cpu_count"),
            "model_sha256": (identity.get("model") or {}).get("sha256")}


def hardware_differences(a: dict, b: dict) -> list[str]:
    """What keeps two runs' speeds apart, in words: the hardware, then the model file (the field compares speed
    for the same target model and quantization only)."""
    out = []
    hw = [f"{key}: {_short(b.get(key))} (reference) vs {_short(a.get(key))} (candidate)"
          for key in ("accelerator", "cpu", "cpu_count") if a.get(key) != b.get(key)]
    if hw:
        out.append("different hardware: " + "; ".join(hw))
    if a.get("model_sha256") != b.get("model_sha256"):
        out.append(f"a different model file (speed is compared for the same target model and quantization): "
                   f"sha256 {_short(b.get('model_sha256'))} (reference) vs {_short(a.get('model_sha256'))} "
                   "(candidate)")
    return out


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def paired_ratio(candidate: dict[str, float], reference: dict[str, float], *,
                 resamples: int = BOOTSTRAP_RESAMPLES) -> dict | None:
    """Median of the per-prompt ratios candidate / reference, its bootstrap 95% interval (percentile, prompts
    resampled with replacement), min and max; None with fewer than 2 shared prompts."""
    shared = [k for k in candidate if k in reference]
    if len(shared) < 2:
        return None
    ratios = np.asarray([candidate[k] / reference[k] for k in shared], dtype=np.float64)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    picks = rng.integers(0, ratios.size, size=(resamples, ratios.size))
    medians = np.median(ratios[picks], axis=1)
    lo, hi = np.percentile(medians, [2.5, 97.5])
    return {"median": round(float(np.median(ratios)), 4), "ci95": [round(float(lo), 4), round(float(hi), 4)],
            "min": round(float(ratios.min()), 4), "max": round(float(ratios.max()), 4), "prompts": len(shared),
            "per_prompt": {k: round(float(r), 4) for k, r in zip(shared, ratios)}}


def _rates(card: dict) -> dict[str, float]:
    return {k: v["conventional_tok_s"] for k, v in card["prompts"].items() if v.get("conventional_tok_s")}


def compare_cards(candidate: dict | None, reference: dict | None, *, candidate_hw: dict, reference_hw: dict,
                  reference_missing: str | None = None, launch: dict | None = None) -> dict:
    """The comparison's label (the worse of the two cards', or not comparable / not credible), its reasons, the
    ratio, and the launch label (`matched`, `matched_except_speculation: ...`) when given."""
    out = {"label": NOT_COMPARABLE, "reasons": [], "median": None, "ci95": None, "min": None, "max": None,
           "prompts": 0, "notes": [], "interval": WITHIN_RUN, "measured": RECORDED_ELSEWHERE}
    if launch is not None:
        out["launch"] = launch["label"]
        out["launch_changes"] = {"speculation": launch["speculation"], "other": launch["other"]}
    if reference is None or candidate is None:
        out["reasons"].append(reference_missing or "the candidate has no speed card")
        return out
    diffs = hardware_differences(candidate_hw, reference_hw)
    if diffs:
        out["reasons"].extend(diffs)
        return out
    out["notes"] = list(reference.get("notes") or [])
    if NOT_CREDIBLE in (candidate["label"], reference["label"]):  # no number: it would time the wrong thing
        out["label"] = NOT_CREDIBLE
        out["reasons"] = ([f"candidate: {r}" for r in (candidate.get("credible") or {}).get("reasons") or []]
                          + [f"reference: {r}" for r in (reference.get("credible") or {}).get("reasons") or []])
        return out
    ratio = paired_ratio(_rates(candidate), _rates(reference))
    out["candidate_median"] = (candidate["summary"].get("conventional_tok_s") or {}).get("median")
    out["reference_median"] = (reference["summary"].get("conventional_tok_s") or {}).get("median")
    if ratio is not None:
        out.update(ratio)
    labels = [candidate["label"], reference["label"]]
    out["reasons"] = ([f"candidate: {r}" for r in candidate["reasons"]]
                      + [f"reference: {r}" for r in reference["reasons"]])
    iso = reference.get("isolation") or {}
    if iso.get("verdict") == NOT_ISOLATED:  # whatever this run measures, the number it is divided by was shared
        why = iso.get("reason", "").removeprefix("not isolated: ")
        out["not_headline"] = f"the reference was recorded not isolated ({why})"
        out["reasons"].insert(0, f"not headline: {out['not_headline']}")
    if ratio is None or ratio["prompts"] < MIN_PROMPTS:
        shared = ratio["prompts"] if ratio else 0
        out["reasons"].append(f"{shared} prompt(s) have a conventional rate on both sides; a headline needs "
                              f"{MIN_PROMPTS}")
        out["label"] = (NOT_ISOLATED if NOT_ISOLATED in labels else INSUFFICIENT
                        if all(x in (HEADLINE, INSUFFICIENT) for x in labels) else "diagnostic")
        return out
    out["label"] = next((x for x in (NOT_ISOLATED, "diagnostic", INSUFFICIENT) if x in labels), HEADLINE)
    return out
