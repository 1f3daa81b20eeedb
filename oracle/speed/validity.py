"""Validity labels of a speed card, computed from what the run proves, never typed by hand.

    headline       the primary c1 run: every prompt once, cold (cache-zero proven for every request), after
                   the warm-up, at least 5 prompts of >= 101 tokens, no history-based speculation
    diagnostic     measured, but outside those rules (the reasons say which), e.g. n-gram speculation
    insufficient   fewer than 5 prompts generated >= 101 tokens
    not comparable (a comparison only) different hardware, or a side without token times
    not credible   the timestamps describe something else than the server's stream: a burst delivery, or the
                   server's own timings or counters contradict the client's clock (`credible.py`); before any other
    not isolated   another process ran on the server's device during the timed run (`isolation.py`): a compute
                   process on its GPU, or a process using CPU_SHARE of a core on a CPU run; after not credible

Repeats, ladder levels, later boots and canaries never make a headline card: the card is built from
the primary run alone.
"""

from __future__ import annotations

import re

from oracle.speed.credible import NOT_CREDIBLE
from oracle.speed.isolation import NOT_ISOLATED

__all__ = ["DIAGNOSTIC", "HEADLINE", "INSUFFICIENT", "LABELS", "MIN_PROMPTS", "NOT_COMPARABLE", "NOT_CREDIBLE",
           "NOT_ISOLATED", "SPLIT_OVER_SERVERS", "diagnostics",
           "diagnostics_of_old_reference",
           "history_speculation", "label_of"]

HEADLINE, DIAGNOSTIC, INSUFFICIENT, NOT_COMPARABLE = "headline", "diagnostic", "insufficient", "not comparable"
LABELS = (HEADLINE, DIAGNOSTIC, INSUFFICIENT, NOT_COMPARABLE, NOT_CREDIBLE, NOT_ISOLATED)
MIN_PROMPTS = 5  # prompts of >= 101 tokens a headline needs
SPLIT_OVER_SERVERS = "the prompts were split over {servers} servers running at the same time"

# History-based speculation drafts from tokens already seen (the prompt, earlier output, earlier requests):
# llama.cpp's ngram-* speculative types and lookup decoding, vLLM's ngram / prompt-lookup / suffix methods.
_HISTORY = re.compile(r"ngram[-\w]*|prompt[-_ ]lookup|--lookup[-\w]*|\"suffix\"", re.I)


def history_speculation(*sources: tuple[str, str | None]) -> str | None:
    """The first history-based speculation named in (where, text) sources, as a reason; None when none is."""
    for where, text in sources:
        m = _HISTORY.search(text or "")
        if m:
            return (f"history-based speculation ({m.group(0)} in {where}): it drafts from tokens already seen, "
                    "so its speed depends on the suite's repetition")
    return None


def diagnostics(*, cache_verdict: str | None, warmup_requests: int, history: str | None, text_only: int,
                servers: int = 1) -> list[str]:
    """Why a primary run's card cannot be a headline (empty: it can, given enough long prompts)."""
    reasons = []
    if history:
        reasons.append(history)
    if cache_verdict != "pass":
        reasons.append(f"cache-zero not proven for every request (cache-zero {cache_verdict or 'not measured'})")
    if warmup_requests < 1:
        reasons.append("no warm-up request before the timed run (--warmup 0)")
    if text_only:
        reasons.append(f"{text_only} request(s) returned text without token ids: their times are per text piece, "
                       "not per token")
    if servers > 1:
        reasons.append(SPLIT_OVER_SERVERS.format(servers=servers))
    return reasons


def diagnostics_of_old_reference() -> list[str]:
    """A reference recorded before speed cards: no warm-up is known to have run."""
    return ["recorded by an older oracle, before warm-ups and speed cards: re-record it for a headline comparison"]


def label_of(reasons: list[str], long_prompts: int) -> tuple[str, list[str]]:
    """The card's label and every reason it is not a headline (diagnostic reasons first)."""
    reasons = list(reasons)
    if long_prompts < MIN_PROMPTS:
        reasons.append(f"{long_prompts} prompt(s) generated >= 101 tokens; a headline needs at least {MIN_PROMPTS}")
    if not reasons:
        return HEADLINE, []
    return (DIAGNOSTIC if len(reasons) > (long_prompts < MIN_PROMPTS) else INSUFFICIENT), reasons
