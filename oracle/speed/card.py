"""The speed card of a run: per prompt figures of the primary (boot 1, c1) run, their spread over prompts, and
the card's validity label. Built from rows, so the cards of several servers merge and a reference's card is
rebuilt from its records.

    rows = prompt_rows(records)                              # {prompt: figures}
    card = speed_card(rows, reasons=diagnostics(...))        # identity.json's `speed`
    card["label"], card["summary"]["conventional_tok_s"]["median"]
"""

from __future__ import annotations

from oracle.speed.credible import NOT_CREDIBLE, credibility, merge_credibility, timestamp_figures
from oracle.speed.figures import EVENT_RATE_LABEL, MIN_TOKENS, prompt_figures, spread
from oracle.speed.isolation import NOT_ISOLATED, merge_isolation
from oracle.speed.validity import MIN_PROMPTS, SPLIT_OVER_SERVERS, diagnostics_of_old_reference, label_of

__all__ = ["FIGURES", "TIMES_AFTER_PARSING", "level_speed", "merge_cards", "prompt_rows", "reference_card", "speed_card"]

# The spread of each figure over prompts; the conventional rate only over prompts of >= 101 tokens.
FIGURES = ("conventional_tok_s", "ttft_s", "after_ttft_tok_s", "full_output_tok_s", "event_rate")
TIMES_AFTER_PARSING = "after-parsing"  # token times of runs recorded before times were taken on bytes arrival
COUNTERS_NOT_READ = "the run's generated-token counters were not read"
OLD_REFERENCE_COUNTERS = "the reference was recorded by an older oracle, which kept no counter evidence"


def prompt_rows(records) -> dict[str, dict]:
    """Each record's figures and timestamp evidence, by record key, in the order given."""
    return {r.key: {**prompt_figures(r.token_times_s), **timestamp_figures(r.token_times_s, r.server_timings)}
            for r in records}


def speed_card(rows: dict[str, dict], *, reasons: list[str], clock: str, condition: str = "boot1-c1",
               warmup: dict | None = None, credible: dict | None = None, isolation: dict | None = None,
               power: dict | None = None) -> dict:
    """The card: rows, their spread, the prompts left out of the conventional rate, whether its timestamps are
    credible (`credible`, from the rows when not given), whether the server was alone on its device (`isolation`)
    and its energy (`power`), and the label: `not credible` before any other, then `not isolated`."""
    long_rows = {k: v for k, v in rows.items() if v["conventional_tok_s"] is not None}
    excluded = {k: v["tokens"] for k, v in rows.items() if v["tokens"] < MIN_TOKENS}
    one_piece = [k for k, v in rows.items() if v["tokens"] >= MIN_TOKENS and v["conventional_tok_s"] is None]
    credible = credible or credibility(rows, counters=None, counters_missing=COUNTERS_NOT_READ)
    label, why = label_of(reasons, len(long_rows))
    if isolation and isolation.get("verdict") == NOT_ISOLATED:  # measured, but shared with another process
        label, why = NOT_ISOLATED, [isolation["reason"]] + why
    if credible["reasons"]:  # never a headline, never a speed-up verdict
        label, why = NOT_CREDIBLE, credible["reasons"] + why
    summary = {name: spread([v[name] for v in (long_rows if name == "conventional_tok_s" else rows).values()
                             if v[name] is not None]) for name in FIGURES}
    card = {"label": label, "reasons": why, "diagnostics": list(reasons), "condition": condition, "token_times": clock,
            "min_tokens": MIN_TOKENS, "min_prompts": MIN_PROMPTS, "summary": summary,
            "excluded": excluded, "event_rate_label": EVENT_RATE_LABEL, "prompts": rows, "warmup": warmup,
            "credible": credible}
    if isolation is not None:
        card["isolation"] = isolation
    if power is not None:
        card["power"] = power
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
    powers = [c["power"] for c in cards if c.get("power")]
    return speed_card(rows, reasons=reasons, clock=cards[0]["token_times"], warmup=cards[0].get("warmup"),
                      credible=merge_credibility([c.get("credible") for c in cards]),
                      isolation=merge_isolation([c.get("isolation") for c in cards]),
                      power=(powers[0] if len(powers) == 1 else {"servers": powers}) if powers else None)


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
    rows = prompt_rows(timed)
    # The stream and the server's timings are read again from the records; the counters only the run saw.
    kept = (meta or {}).get("credible") or {}
    missing = next((g.split(": ", 1)[1] for g in kept.get("not_checked") or [] if g.startswith("counters: ")),
                   OLD_REFERENCE_COUNTERS)
    credible = credibility(rows, counters=kept.get("counters"), counters_missing=missing)
    return speed_card(rows, reasons=reasons, clock=clock, warmup=warmup, credible=credible,
                      isolation=(meta or {}).get("isolation"), power=(meta or {}).get("power")), None
