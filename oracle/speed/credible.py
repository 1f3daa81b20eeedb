"""Are the card's timestamps credible: did each completion arrive as a stream, does the server's own clock agree
with the client's, did the server's own counter generate the tokens the client received?

A buffering reverse proxy (nginx with proxy buffering, an ingress) delivers a whole completion at once: the
client's clock then times the proxy, and a 92 tok/s server reads as 800x faster. Three pieces of evidence:

    stream     arrival spread (t_n - t_1) / (t_n - prompt_s): the share of the request's time, after the server's
               own prompt time where it reports one, over which the tokens arrived; a real stream spreads its tokens
               over ~all of it (measured 0.9999), a one-burst delivery over ~nothing (measured 0.0). Below
               MIN_SPREAD: burst.
    timings    the server's own decode rate (llama.cpp `timings.predicted_per_second`) against the client's
               after-TTFT rate (n-1)/(t_n-t_1): the client may not see tokens faster than the server made them
               (beyond RATE_TOLERANCE). One-sided: a slower client (a network, a pacing proxy) measures what it gets.
    counters   the server's generated-token counter (llama.cpp `tokens_predicted_total`, vLLM
               `generation_tokens_total`) moved by at least the tokens the client received in the run.

    rows = {key: {**prompt_figures(times), **timestamp_figures(times, record.server_timings)}, ...}
    block = credibility(rows, counters=counter_evidence(received, delta.tokens_generated, counter=...),
                        counters_missing="why there are none")      # identity.json's speed.credible
    block["verdict"], block["reasons"], block["not_checked"]

Missing evidence (no server timings, no counters) is said ("not checked: ..."), never invented.
"""

from __future__ import annotations

import math
from typing import Sequence

__all__ = ["CREDIBLE", "MIN_SPREAD", "MIN_SPREAD_TOKENS", "NOT_CREDIBLE", "RATE_TOLERANCE", "arrival_spread",
           "client_server_ratio", "counter_evidence", "counters_of", "credibility", "merge_credibility", "server_decode_rate",
           "timestamp_figures"]

CREDIBLE, NOT_CREDIBLE = "credible", "not credible"
MIN_SPREAD = 0.1  # measured on the embedded llama-server: real streams 0.9999-1.0, one-burst delivery 0.0
MIN_SPREAD_TOKENS = 16  # a shorter completion is not judged: a few tokens can arrive in one piece on any server
RATE_TOLERANCE = 0.10  # the client's after-TTFT rate may exceed the server's own by at most 10% (measured: 1.00)


def arrival_spread(times: Sequence[float], *, prompt_s: float | None = None) -> float | None:
    """(t_n - t_1) / (t_n - p), p the server's own prompt time when known (not past t_1), else 0; None for a
    completion under MIN_SPREAD_TOKENS tokens."""
    if len(times) < MIN_SPREAD_TOKENS or times[-1] <= 0:
        return None
    span = times[-1] - times[0]
    base = times[-1] - min(max(prompt_s or 0.0, 0.0), times[0])
    return round(span / base, 4) if span > 0 and base > 0 else 0.0


def server_decode_rate(timings: dict | None) -> float | None:
    """The server's own generation rate in tokens/s (llama.cpp `predicted_per_second`, else predicted_n over
    predicted_ms); None when it reported no timings."""
    if not timings:
        return None
    rate = timings.get("predicted_per_second")
    if rate is None and timings.get("predicted_ms") and timings.get("predicted_n"):
        rate = timings["predicted_n"] * 1000.0 / timings["predicted_ms"]
    return float(rate) if isinstance(rate, (int, float)) and math.isfinite(rate) and rate > 0 else None


def client_server_ratio(times: Sequence[float], timings: dict | None) -> float | None:
    """Client after-TTFT rate / the server's own rate: ~1 on a direct stream, >> 1 when tokens reached the client
    faster than the server made them (a span under 1 ms counts as 1 ms: one instant stays a finite JSON number);
    None without server timings or enough tokens."""
    server = server_decode_rate(timings)
    if server is None or len(times) < MIN_SPREAD_TOKENS:
        return None
    span = max(times[-1] - times[0], 1e-3)
    return round((len(times) - 1) / span / server, 4)


def counter_evidence(received: int, generated: float | None, *, counter: str | None) -> dict | None:
    """The counter check: None when the server has no generated-token counter; else received, generated, and
    whether the counter contradicts the client (it generated fewer tokens than the client received)."""
    if generated is None:
        return None
    generated = int(round(generated))
    out = {"counter": counter, "received": received, "generated": generated, "contradicts": generated < received}
    if generated > received:
        out["note"] = (f"the server generated {generated - received} token(s) more than this run received: another "
                       "client shared the server during the run")
    return out


def credibility(rows: dict[str, dict], *, counters: dict | None, counters_missing: str) -> dict:
    """The card's `credible` block from its per-prompt rows (each with `arrival_spread` and `client_vs_server`,
    None where not judged) and the counter evidence (None: not checked, for the reason counters_missing)."""
    reasons, not_checked, notes = [], [], []
    spreads = {k: v.get("arrival_spread") for k, v in rows.items() if v.get("arrival_spread") is not None}
    bursts = sorted((k for k, s in spreads.items() if s < MIN_SPREAD), key=lambda k: spreads[k])
    if bursts:
        reasons.append(f"burst delivery: {len(bursts)} of {len(spreads)} completion(s) arrived within less than "
                       f"{MIN_SPREAD:.0%} of their time (arrival spread {spreads[bursts[0]]:.3g} at {bursts[0]}): "
                       "the client timed something between it and the server (a buffering proxy?), not the stream")
    elif not spreads:
        not_checked.append(f"stream: no completion reached {MIN_SPREAD_TOKENS} tokens")
    ratios = {k: v["client_vs_server"] for k, v in rows.items() if v.get("client_vs_server") is not None}
    fast = sorted((k for k, r in ratios.items() if r > 1 + RATE_TOLERANCE), key=lambda k: -ratios[k])
    if fast:
        reasons.append(f"the server's own timings contradict the client's clock: {len(fast)} of {len(ratios)} "
                       f"completion(s) reached the client faster than the server generated them (client / server "
                       f"decode rate {ratios[fast[0]]:.3g} at {fast[0]}; tolerance {1 + RATE_TOLERANCE:.2f})")
    elif not ratios:
        not_checked.append("server timings: the server reported no per-request timings (llama.cpp's `timings`)")
    if counters is None:
        not_checked.append(f"counters: {counters_missing}")
    else:
        if counters["contradicts"]:
            reasons.append(f"the server's own counter ({counters['counter']}) moved by {counters['generated']} "
                           f"token(s) while the client received {counters['received']}: the client was sent tokens "
                           "this server did not generate in the run (a cache or replay between them?)")
        if counters.get("note"):
            notes.append(counters["note"])
    low = min(spreads.values()) if spreads else None
    high = max(ratios.values()) if ratios else None
    return {"verdict": NOT_CREDIBLE if reasons else CREDIBLE, "reasons": reasons, "not_checked": not_checked,
            "notes": notes, "min_spread": MIN_SPREAD, "rate_tolerance": RATE_TOLERANCE,
            "stream": {"judged": len(spreads), "lowest_spread": low, "bursts": bursts},
            "timings": {"judged": len(ratios), "highest_ratio": high,
                        "faster_than_server": fast},
            "counters": counters}


def merge_credibility(blocks: list[dict | None]) -> dict | None:
    """Several servers' blocks as one: not credible when any is; reasons, gaps and notes of each, in order."""
    blocks = [b for b in blocks if b]
    if not blocks:
        return None
    if len(blocks) == 1:
        return blocks[0]
    first = dict(blocks[0])
    for key in ("reasons", "not_checked", "notes"):
        first[key] = list(dict.fromkeys(x for b in blocks for x in b[key]))
    first["verdict"] = NOT_CREDIBLE if first["reasons"] else CREDIBLE
    first["servers"] = blocks
    return first


def timestamp_figures(times: Sequence[float], timings: dict | None) -> dict:
    """A prompt row's evidence: its arrival spread, the server's own decode rate, and client / server."""
    prompt_ms = (timings or {}).get("prompt_ms")
    rate = server_decode_rate(timings)
    return {"arrival_spread": arrival_spread(times, prompt_s=prompt_ms / 1000 if prompt_ms is not None else None),
            "server_decode_tok_s": None if rate is None else round(rate, 3),
            "client_vs_server": client_server_ratio(times, timings)}


def counters_of(result, backend) -> dict:
    """The counter evidence of a c1 pass: the server's generated-token counter around it against the tokens the
    client received; or why it was not checked."""
    if backend.capabilities.in_process:
        return {"counters": None, "counters_missing": "in process: no server, no counters"}
    delta = result.counters_delta
    generated = delta.tokens_generated if delta is not None else None
    if generated is None:
        return {"counters": None, "counters_missing": "the server exposes no generated-token counter "
                                                      f"({backend.capabilities.cache.counters_hint})"}
    received = sum(len(r.completion_ids) for r in result.records)
    return {"counters": counter_evidence(received, generated, counter="generated tokens in /metrics"),
            "counters_missing": ""}
