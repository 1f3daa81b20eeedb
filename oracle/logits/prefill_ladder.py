"""The chunked-prefill ladder: one long prompt built from the haystack text to an exact token count, scored at a
ladder of prefix lengths (1, 7, 64, ... up to the model's context) in one prefill pass and fed in chunks of each
`--prefill-chunks` size; at each length the top-1 token and the largest |Δlogprob| against the one pass. Pure: ids
and scored rows in, figures out, never asserts.

    lengths, beyond = ladder_lengths((1, 7, 64, 8192, 16384), context=8192)   # (1, 7, 64, 8192), (16384,)
    ids = ladder_prompt(haystack_ids, prefix_ids, lengths[-1])                  # exactly 8192 ids
    report = ladder_report(lengths, scored, chunks=(256, 64))   # scored: mode -> length -> (top ids, top logprobs)

The row of length L is the distribution after the first L tokens of the prompt. Each mode feeds the longest length
once (in one prefill call, or in chunks of C from position 0) and reads every length's row from that feed, so the
chunk boundaries before L are those of feeding L tokens alone; a runner that gives only the last position is fed
each length on its own. A length of at most C tokens fits in one chunk: it is not chunked and not counted for C.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from oracle.logits.decode_prefill import ONE_PASS, mode_name

__all__ = ["DEFAULT_LENGTHS", "DEFINITION", "ladder_lengths", "ladder_prompt", "ladder_report"]

DEFAULT_LENGTHS = (1, 7, 64, 256, 1024, 2048, 4096, 8192)
DEFINITION = ("one prompt built from the haystack text, scored at each ladder length L (the distribution after its "
              "first L tokens) in one prefill call and fed in chunks of each size from position 0: top-1 equal and "
              "the largest |Δlogprob| over the top-k ids both hold; a length of at most C tokens is not chunked")


def ladder_lengths(asked: Sequence[int], context: int | None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the lengths within the context, those beyond it: not tested), each sorted."""
    lengths = sorted(set(asked))
    if context is None:
        return tuple(lengths), ()
    return tuple(n for n in lengths if n <= context), tuple(n for n in lengths if n > context)


def ladder_prompt(haystack: Sequence[int], prefix: Sequence[int], total: int) -> list[int]:
    """The prefix's ids (the chat template's start, so the model sees a plausible text), then the haystack's ids
    cycled, to exactly `total` ids (a prefix longer than that is cut)."""
    if not haystack:
        raise ValueError("the haystack tokenizes to no tokens: give --haystack a text file with paragraphs")
    ids = list(prefix)[:total]
    while len(ids) < total:
        ids.extend(haystack[:total - len(ids)])
    return ids


def _top1(ids) -> int | None:
    return int(ids[0]) if len(ids) else None


def _compare(one: tuple, chunked: tuple) -> dict:
    """One length: the one pass's top-k against the chunked feed's."""
    (o_ids, o_lps), (c_ids, c_lps) = one, chunked
    o32 = np.asarray(o_lps, dtype=np.float32).astype(np.float64).tolist()
    c32 = np.asarray(c_lps, dtype=np.float32).astype(np.float64).tolist()
    mine = dict(zip(map(int, c_ids), c32))
    deltas = [abs(lp - mine[t]) for t, lp in zip(map(int, o_ids), o32) if t in mine]
    return {"one_pass_top1": _top1(o_ids), "chunked_top1": _top1(c_ids),
            "top1_equal": _top1(o_ids) == _top1(c_ids), "max_abs_delta": max(deltas, default=None),
            "bit_identical": list(map(int, o_ids)) == list(map(int, c_ids)) and o32 == c32}


def ladder_report(lengths: Sequence[int], scored: dict[str, dict[int, tuple]], *, chunks: Sequence[int]) -> dict:
    """Each chunk size against the one pass at every length longer than the chunk."""
    one = scored.get(ONE_PASS, {})
    modes = {}
    for chunk in chunks:
        name, rows = mode_name(chunk), scored.get(mode_name(chunk), {})
        tested = [n for n in lengths if n > chunk and n in one and n in rows]
        per_length = [{"tokens": n, **_compare(one[n], rows[n])} for n in tested]
        deltas = [r["max_abs_delta"] for r in per_length if r["max_abs_delta"] is not None]
        modes[name] = {"chunk": chunk, "lengths": per_length, "tested": len(per_length),
                       "not_chunked": [n for n in lengths if n <= chunk],
                       "top1_differs": [r["tokens"] for r in per_length if not r["top1_equal"]],
                       "max_abs_delta": max(deltas, default=None),
                       "bit_identical": sum(r["bit_identical"] for r in per_length)}
    return {"definition": DEFINITION, "modes": modes}
