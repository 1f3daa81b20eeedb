"""Needle in a haystack (RULER style), built from token ids to an exact total prompt length.

    hay = load_haystack()                                   # sentences, through `datasets`
    p = build_needle_prompt(total=2048, depth=50, tokenize=tok, template=t, special_tokens=s,
                            haystack=hay, seed=1234)
    len(p.ids) == 2048                                      # template, question and answer prefix included
    score_needle(completion_text, p.value)                  # exact match of the 7-digit value

The prompt is [chat prefix][haystack units ... needle ... units][question + generation prompt +
answer prefix]. Each piece is tokenized once and the ids are concatenated, so the total is
exact whatever the tokenizer; the last haystack unit is cut to fill the budget to the token.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

from oracle.canary.kinds import DEFAULT_DEPTHS
from oracle.run.prompting import render_text

__all__ = ["ANSWER_TOKENS", "DEFAULT_DEPTHS", "HAYSTACK", "NeedlePrompt", "NeedleScore", "build_needle_prompt",
           "default_lengths", "load_haystack", "needle_for", "score_needle",
           "split_lengths"]

HAYSTACK = Path(str(resources.files("oracle.canaries"))) / "haystack.txt"
ANSWER_TOKENS = 16  # max_tokens of a needle request; a length fits when length + ANSWER_TOKENS <= context
_SLOT = "\u0000HAYSTACK\u0000"
_WORDS = ("amber", "basalt", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo", "juniper",
          "kestrel", "lantern", "meadow", "nimbus", "orchid", "pebble", "quartz", "raven", "saffron", "thistle",
          "umber", "violet", "willow", "yarrow", "zephyr")
_VALUE = re.compile(r"(?<!\d)\d{7}(?!\d)")


@dataclass(frozen=True)
class NeedlePrompt:
    ids: tuple[int, ...]
    key: str
    value: str
    depth: int  # percent requested
    needle_at: int  # token index where the needle starts (-1: no needle)
    total: int


@dataclass(frozen=True)
class NeedleScore:
    extracted: str | None
    verdict: str  # "correct", "wrong" or "extraction"
    reason: str


def load_haystack(path: str | Path | None = None) -> list[str]:
    """Sentences of the haystack file (one paragraph a line; '#' lines are notes), loaded with `datasets`."""
    from datasets import Dataset

    p = Path(path) if path else HAYSTACK
    if not p.is_file():
        raise FileNotFoundError(f"--haystack {p}: no such file; give a UTF-8 text file, one paragraph a line")
    rows = Dataset.from_text(str(p), keep_in_memory=True)["text"]
    units: list[str] = []
    for line in rows:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        units += [s.strip() + " " for s in re.split(r"(?<=[.!?])\s+", line) if s.strip()]
    if not units:
        raise ValueError(f"--haystack {p}: holds no text")
    return units


def needle_for(seed: int, total: int, depth: int) -> tuple[str, str]:
    """The seeded random key (two words) and 7-digit value for one (length, depth) item."""
    rng = random.Random(f"{seed}-{total}-{depth}")
    key = f"{rng.choice(_WORDS)}-{rng.choice(_WORDS)}"
    return key, str(rng.randrange(1_000_000, 10_000_000))


def _chat_pieces(template: str | None, key: str, special_tokens: dict[str, str]) -> tuple[str, str]:
    question = (f"What is the special magic number for {key} mentioned in the text above? "
                "Answer with the number only.")
    content = f"Some special magic numbers are hidden in the following text. Memorize them.\n\n{_SLOT}\n\n{question}"
    messages = [{"role": "user", "content": content}]
    text = render_text(template, messages, special_tokens)
    before, after = text.split(_SLOT)
    return before, after + f"The special magic number for {key} mentioned in the text is"


def build_needle_prompt(*, total: int, depth: int, tokenize: Callable[[str], list[int]], template: str | None,
                        special_tokens: dict[str, str], haystack: list[str], seed: int = 1234,
                        with_needle: bool = True) -> NeedlePrompt:
    """A prompt of exactly `total` token ids with the needle at `depth` percent of the haystack."""
    key, value = needle_for(seed, total, depth)
    before, after = _chat_pieces(template, key, special_tokens)
    head, tail = tokenize(before), tokenize(after)
    needle = tokenize(f"One of the special magic numbers for {key} is: {value}. ") if with_needle else []
    budget = total - len(head) - len(tail) - len(needle)
    if budget < 0:
        raise ValueError(f"needle length {total}: the template, question and needle alone take "
                         f"{total - budget} tokens")
    cache: dict[str, list[int]] = {}
    units: list[list[int]] = []
    used, i = 0, 0
    while used < budget:
        text = haystack[i % len(haystack)]
        ids = cache.setdefault(text, tokenize(text))[: budget - used]
        units.append(ids)
        used += len(ids)
        i += 1
    bounds = [0]
    for u in units:
        bounds.append(bounds[-1] + len(u))
    target = round(budget * depth / 100)
    cut = min(range(len(bounds)), key=lambda k: (abs(bounds[k] - target), k))
    hay = [t for u in units for t in u]
    body = hay[: bounds[cut]] + needle + hay[bounds[cut]:]
    ids = tuple(head + body + tail)
    assert len(ids) == total, (len(ids), total)
    return NeedlePrompt(ids, key, value, depth, len(head) + bounds[cut] if with_needle else -1, total)


def score_needle(text: str, value: str) -> NeedleScore:
    """Exact match: the first 7-digit number in the completion must be the value."""
    m = _VALUE.search(text)
    if m is None:
        return NeedleScore(None, "extraction" if value in text else "wrong",
                           "no 7-digit number in the answer")
    if m.group(0) == value:
        return NeedleScore(value, "correct", f"returned {value}")
    return NeedleScore(m.group(0), "wrong", f"returned {m.group(0)}, the needle holds {value}")


def default_lengths(context: int) -> list[int]:
    """1K, 2K, 4K and the largest length that fits the context (with room for the answer)."""
    largest = context - ANSWER_TOKENS
    return sorted({n for n in (1024, 2048, 4096) if n <= largest} | {largest})


def split_lengths(lengths: list[int], context: int) -> tuple[list[int], list[int]]:
    """(lengths that fit, lengths dropped because length + answer tokens exceed the context)."""
    fit = [n for n in lengths if n + ANSWER_TOKENS <= context]
    return fit, [n for n in lengths if n + ANSWER_TOKENS > context]
