"""Condition coverage: which of the conditions where serving bugs live a run really produced.

Each run (the primary run, a ladder level, a boot) is read after it finished, from the server's own settings
and counters and oracle's timestamps; nothing is assumed from what was asked for:

- `chunked-prefill`: a prompt had more tokens than the server computes in one step (`PrefillChunk`, read by
  the backend: llama.cpp's min(-b, -ub), vLLM's --max-num-batched-tokens), so it was prefilled in chunks;
- `mixed-batch`: a request's prefill ran while another request was decoding: B was sent after A's first token
  and B's first token came before A's last (B's whole prefill lies inside A's decode), the server's
  running-request gauge beside it where it has one;
- `preemption`: the server's preemption counter moved during the run (vLLM's vllm:num_preemptions_total);
- `overlap`: a ladder level reached the concurrency it asked for (`run/overlap.py`).

    row = run_coverage(records, chunk=PrefillChunk(512, "-ub 512", "-ub"), preemptions=0.0)
    row["chunked-prefill"]["held"]   # True when a prompt had more than 512 tokens
"""

from __future__ import annotations

from typing import Sequence

from oracle.backends.base import PrefillChunk
from oracle.store.records import Record

__all__ = ["CHUNKED_PREFILL", "CONDITIONS", "MIXED_BATCH", "OVERLAP", "PREEMPTION", "held_anywhere",
           "mixed_pairs", "run_coverage"]

CHUNKED_PREFILL, MIXED_BATCH, PREEMPTION, OVERLAP = "chunked-prefill", "mixed-batch", "preemption", "overlap"
CONDITIONS = (CHUNKED_PREFILL, MIXED_BATCH, PREEMPTION, OVERLAP)
_SHOWN_PAIRS = 3


def _condition(held: bool, detail: str, how: str = "", **evidence) -> dict:
    """One condition of one run: held or not, what shows it, and (when not) how to cause it."""
    return {"held": held, "detail": detail, "how": "" if held else how, **evidence}


def chunked_prefill(records: Sequence[Record], chunk: PrefillChunk) -> dict:
    """Held when a prompt had more tokens than the server's chunk size."""
    if not records:
        return _condition(False, "no request in this run", "send the suite")
    longest = max(records, key=lambda r: len(r.prompt_ids))
    tokens = len(longest.prompt_ids)
    if chunk.tokens is None:
        return _condition(False, f"the server's prefill chunk size is unknown ({chunk.source})",
                          "let oracle read the server's batch size (see the reason)", longest=longest.id,
                          longest_tokens=tokens, chunk=None)
    over = sorted({r.id for r in records if len(r.prompt_ids) > chunk.tokens})
    setting = f"{chunk.flag} {chunk.tokens}".strip()
    if over:
        named = ", ".join(over[:_SHOWN_PAIRS]) + (", ..." if len(over) > _SHOWN_PAIRS else "")
        words = f"{len(over)} prompt(s) longer than {setting} ({named}; longest {tokens} tokens)"
        return _condition(True, words, longest=longest.id, longest_tokens=tokens, chunk=chunk.tokens,
                          prompts=over)
    return _condition(False, f"no prompt exceeded {setting} (longest: {longest.id}, {tokens} tokens)",
                      f"add a prompt longer than {chunk.tokens} tokens (e.g. --oracle-suite coverage) or lower "
                      f"{chunk.flag} below {tokens}", longest=longest.id, longest_tokens=tokens,
                      chunk=chunk.tokens)


def _decoding(record: Record) -> tuple[float, float] | None:
    """(first token, last token) on the wall clock: the request is decoding in between."""
    if len(record.token_times_s) < 2:
        return None
    return record.started_at + record.token_times_s[0], record.started_at + record.token_times_s[-1]


def mixed_pairs(records: Sequence[Record]) -> list[dict]:
    """Pairs (decoding A, prefilling B) where B was sent after A's first token and B's first token came before
    A's last: B's prefill ran while A was still decoding. Earliest B first."""
    pairs = []
    for a in records:
        decode = _decoding(a)
        if decode is None:
            continue
        for b in records:
            if b is a or not b.token_times_s:
                continue
            sent, first = b.started_at, b.started_at + b.token_times_s[0]
            if decode[0] < sent and first < decode[1]:
                pairs.append({"decoding": a.key, "prefilling": b.key,
                              "sent_after_first_token_s": round(sent - decode[0], 4),
                              "first_token_before_last_s": round(decode[1] - first, 4)})
    return sorted(pairs, key=lambda p: (-p["first_token_before_last_s"], p["prefilling"]))


def mixed_batch(records: Sequence[Record], *, staggered: bool, server_peak: int | None,
                asked: int = 1) -> dict:
    pairs = mixed_pairs(records)
    gauge = "" if server_peak is None else f"; the server's gauge saw up to {server_peak} running"
    if pairs:
        shown = ", ".join(f"{p['prefilling']} prefilled while {p['decoding']} decoded"
                          for p in pairs[:_SHOWN_PAIRS])
        return _condition(True, f"{len(pairs)} prefill(s) while another request decoded ({shown}){gauge}",
                          pairs=pairs[:_SHOWN_PAIRS], count=len(pairs), server_peak=server_peak)
    if len(records) < 2 or asked < 2:
        why = "one request at a time"
        how = ("run a ladder level with staggered arrivals (--ladder 2 --ladder-arrivals staggered) on a "
               "server with two slots or more")
    elif staggered:
        why = "no request's prefill ran while another decoded, although arrivals were staggered"
        how = ("give the server a slot per request (llama-server -np N) and requests of more tokens, so a "
               "request still decodes when the next one's first token comes")
    else:
        why = "no request's prefill ran while another decoded (every wave's requests were sent at once)"
        how = ("add --ladder-arrivals staggered (each request sent once the one before it has its first "
               "token) on a server with a slot per request (llama-server -np N)")
    return _condition(False, why + gauge, how, count=0, server_peak=server_peak)


def preemption(delta: float | None, counter: str | None) -> dict:
    if counter is None or delta is None:
        where = ("the server exposes no preemption counter" if counter is None
                 else f"{counter} was not readable")
        return _condition(False, where, "gate a server that counts preemptions (vLLM's /metrics); "
                          "llama-server never preempts: each slot keeps its context for the whole request",
                          preempted=None)
    if delta > 0:
        moved = int(delta)
        return _condition(True, f"{moved} preemption(s) ({counter} moved by {moved})", preempted=moved)
    return _condition(False, f"no request was preempted ({counter} did not move)",
                      "give the server a KV cache too small for the requests in flight (vLLM: "
                      "--num-gpu-blocks-override N or a small VLLM_CPU_KVCACHE_SPACE) and run a ladder level "
                      "of long requests", preempted=0)


def overlap(asked: int, reached: int | None) -> dict:
    if asked < 2 or reached is None:
        return _condition(False, "one request at a time", "run a ladder level of c >= 2 (--ladder 2,4)")
    if reached >= asked:
        return _condition(True, f"{reached} of {asked} requests generated at the same time", asked=asked,
                          reached=reached)
    return _condition(False, f"only {reached} of {asked} requests generated at the same time",
                      "give the server more slots (llama-server -np N)", asked=asked, reached=reached)


def run_coverage(records: Sequence[Record], *, chunk: PrefillChunk, preemptions: float | None,
                 preemption_counter: str | None = None, asked: int = 1, reached: int | None = None,
                 staggered: bool = False, server_peak: int | None = None) -> dict[str, dict]:
    """Every condition of one run: {condition: {"held": bool, "detail": ..., "how": ..., evidence...}}."""
    return {CHUNKED_PREFILL: chunked_prefill(records, chunk),
            MIXED_BATCH: mixed_batch(records, staggered=staggered, server_peak=server_peak, asked=asked),
            PREEMPTION: preemption(preemptions, preemption_counter),
            OVERLAP: overlap(asked, reached)}


def held_anywhere(coverage: dict[str, dict], condition: str) -> list[str]:
    """The runs (condition keys, e.g. boot1-c4) in which a condition held."""
    return [run for run, row in coverage.items() if (row.get(condition) or {}).get("held")]
