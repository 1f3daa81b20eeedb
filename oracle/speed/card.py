"""The speed card of a run: per prompt figures of the primary (boot 1, c1) run, their spread over prompts, and
the card's validity label. Built from rows, so the cards of several servers merge and a reference's card is
rebuilt from its records.

    rows = prompt_rows(records)                              # {prompt: figures}
    card = speed_card(rows, reasons=diagnostics(...))        # identity.json's `speed`
    card["label"], card["summary"]["conventional_tok_s"]["median"]
"""

from __future__ import annotations

from oracle.speed.figures import EVENT_RATE_LABEL, MIN_TOKENS, prompt_figures, spread
from oracle.speed.validity import MIN_PROMPTS, SPLIT_OVER_SERVERS, diagnostics_of_old_reference, label_of

__all__ = ["FIGURES", "TIMES_AFTER_PARSING", "level_speed", "merge_cards", "prompt_rows", "reference_card", "speed_card"]

# The spread of each figure over prompts; the conventional rate only over prompts of >= 101 tokens.
FIGURES = ("conventional_tok_s", "ttft_s", "after_ttft_tok_s", "full_output_tok_s", "event_rate")
TIMES_AFTER_PARSING = "after-parsing"  # token times of runs recorded before times were taken on bytes arrival


def prompt_rows(records) -> dict[str, dict]:
    """Each record's figures, by record key, in the order given."""
    return {r.key: prompt_figures(r.token_times_s) for r in records}


def speed_card(rows: dict[str, dict], *, reasons: list[str], clock: str, condition: str = "boot1-c1",
               warmup: dict | None = None) -> dict:
    """The card: rows, their spread, the prompts left out of the conventional rate, and the label."""
    long_rows = {k: v for k, v in rows.items() if v["conventional_tok_s"] is not None}
    excluded = {k: v["tokens"] for k, v in rows.items() if v["tokens"] < MIN_TOKENS}
    one_piece = [k for k, v in rows.items() if v["tokens"] >= MIN_TOKENS and v["conventional_tok_s"] is None]
    label, why = label_of(reasons, len(long_rows))
    summary = {name: spread([v[name] for v in (long_rows if name == "conventional_tok_s" else rows).values()
                             if v[name] is not None]) for name in FIGURES}
    card = {"label": label, "reasons": why, "diagnostics": list(reasons), "condition": condition, "token_times": clock,
            "min_tokens": MIN_TOKENS, "min_prompts": MIN_PROMPTS, "summary": summary,
            "excluded": excluded, "event_rate_label": EVENT_RATE_LABEL, "prompts": rows, "warmup": warmup}
    if one_piece:
        card["one_piece"] = one_piece  # tokens 1..100 arrived in one streamed piece: no rate
    if clock == TIMES_AFTER_PARSING:
        card["notes"] = ["token times taken after parsing each event (recorded by an older oracle)"]
    return card


def merge_cards(cards: list[dict], *, servers: int) -> dict | None:
    """The merged run's card: every server's rows; never a headline (the servers ran at once)."""
    if not cards:
        return None
    rows = {k: v for c in cards for k, v in c["prompts"].items()}
    reasons = [r for c in cards for r in c["diagnostics"]]
    reasons = list(dict.fromkeys(reasons + [SPLIT_OVER_SERVERS.format(servers=servers)]))
    return speed_card(rows, reasons=reasons, clock=cards[0]["token_times"], warmup=cards[0].get("warmup"))


def level_speed(records, wall_s: float) -> dict:
    """A ladder level's speed: aggregate throughput (its tokens over the wall time of its waves) and the median
    per-request conventional rate (requests of >= 101 tokens)."""
    tokens = sum(len(r.completion_ids) for r in records)
    rates = [v["conventional_tok_s"] for v in prompt_rows(records).values() if v["conventional_tok_s"] is not None]
    per_request = spread(rates)
    return {"tokens": tokens, "wall_s": round(wall_s, 3),
            "throughput_tok_s": round(tokens / wall_s, 1) if wall_s > 0 else None,
            "median_conventional_tok_s": per_request["median"] if per_request else None,
            "requests_timed": len(rates), "requests": len(records)}


def reference_card(reference, prompt_ids: list[str]) -> tuple[dict | None, str | None]:
    """The reference's card, rebuilt from its records' token times (its manifest keeps why it is not a headline);
    (None, why) when it holds no token times."""
    records = [reference.record(pid) for pid in prompt_ids if pid in reference.case_ids]
    timed = [r for r in records if r.token_times_s]
    if not timed:
        return None, ("the reference holds no token times (a text-only or hand-made reference): re-record it "
                      "with this oracle on the candidate's hardware")
    meta = reference.manifest.get("speed")
    if meta:
        reasons, clock, warmup = list(meta.get("diagnostics") or []), meta.get("token_times"), meta.get("warmup")
    else:
        reasons, clock, warmup = diagnostics_of_old_reference(), TIMES_AFTER_PARSING, None
    return speed_card(prompt_rows(timed), reasons=reasons, clock=clock, warmup=warmup), None
