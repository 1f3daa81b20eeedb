"""Speed cells: a prompt length and a generation length, measured as the field publishes speed.

    cells = parse_cells("field")          # p512/g128, p2048/g128, p8192/g128, p2048/g1, p8192/g1
    cells = parse_cells("p256/g32,p512/g1")
    Cell(2048, 1).measures                  # "cold input": prompt tokens / TTFT
    Cell(512, 128).measures                 # "decode": the conventional 99-interval rate (speed/figures.py)
    hay = haystack_ids(tokenize, units)     # the haystack text as token ids, tokenized once
    ids = cell_prompt(cell, prefix_text, tokenize=tok, haystack=hay)   # exactly cell.prompt_tokens ids

Every prompt opens with its own entropy-first prefix (the request's own random hex, then the run's nonce, the cell
and the repeat, before any shared text): no two requests share even their first token block, so every repeat is cold by construction (the
server's counters still prove it, compare/evidence.py). The rest is the haystack's token ids, cycled and cut to the
token: the prompt's length is exact whatever the tokenizer, because ids are concatenated, never text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

__all__ = ["COLD_INPUT", "DECODE", "FIELD", "FIELD_CELLS", "MIN_PROMPT_TOKENS", "Cell", "cell_prompt",
           "entropy_prefix", "haystack_ids", "parse_cells"]

FIELD = "field"  # the preset: the field note's matrix
FIELD_CELLS = "p512/g128,p2048/g128,p8192/g128,p2048/g1,p8192/g1"
COLD_INPUT, DECODE = "cold input", "decode"
MIN_PROMPT_TOKENS = 32  # room for the entropy-first prefix
MAX_TOKENS = 1_000_000
_CELL = re.compile(r"p(\d+)/g(\d+)")


@dataclass(frozen=True)
class Cell:
    prompt_tokens: int
    gen_tokens: int

    @property
    def name(self) -> str:
        return f"p{self.prompt_tokens}/g{self.gen_tokens}"

    @property
    def measures(self) -> str:
        """g1: cold input (prompt tokens / TTFT); longer: decode (client post-first rate)."""
        return COLD_INPUT if self.gen_tokens == 1 else DECODE


def parse_cells(text: str) -> tuple[Cell, ...]:
    """`field`, or comma-separated pN/gM cells; ValueError naming the fix."""
    value = text.strip()
    if value == FIELD:
        value = FIELD_CELLS
    cells: list[Cell] = []
    for part in (p.strip() for p in value.split(",")):
        m = _CELL.fullmatch(part)
        if not m:
            raise ValueError(f"--speed-cells {text!r}: {part!r} is not a cell; write pPROMPT/gGENERATED token counts, "
                             f"e.g. --speed-cells p512/g128,p2048/g1, or --speed-cells {FIELD} ({FIELD_CELLS})")
        cell = Cell(int(m[1]), int(m[2]))
        if not MIN_PROMPT_TOKENS <= cell.prompt_tokens <= MAX_TOKENS or not 1 <= cell.gen_tokens <= MAX_TOKENS:
            raise ValueError(f"--speed-cells {text!r}: {part} needs a prompt of {MIN_PROMPT_TOKENS} to {MAX_TOKENS} "
                             f"tokens (room for the unique prefix) and 1 to {MAX_TOKENS} generated tokens, e.g. p512/g128")
        if cell in cells:
            raise ValueError(f"--speed-cells {text!r}: {part} is listed twice; list each cell once")
        cells.append(cell)
    return tuple(cells)


def entropy_prefix(entropy: str, nonce: str, cell: Cell, repeat: str) -> str:
    """The text that opens one request's prompt: the request's own random entropy first (its first tokens are
    shared with no other request, so no cache block can match), then the run's nonce, the cell and the repeat."""
    return f"[{entropy} {nonce} {cell.name} {repeat}] "


def haystack_ids(tokenize: Callable[[str], list[int]], units: Sequence[str]) -> list[int]:
    """The haystack's text as token ids, in one tokenizer call."""
    ids = list(tokenize("".join(units)))
    if not ids:
        raise ValueError("the haystack tokenizes to no tokens: give --haystack a text file with paragraphs")
    return ids


def cell_prompt(cell: Cell, prefix: str, *, tokenize: Callable[[str], list[int]], haystack: Sequence[int]) -> list[int]:
    """The prefix's ids, then the haystack's ids (cycled) to exactly `cell.prompt_tokens` ids."""
    head = list(tokenize(prefix))
    room = cell.prompt_tokens - len(head)
    if room < 0:
        raise ValueError(f"{cell.name}: its unique prefix alone is {len(head)} tokens; give a longer prompt")
    body: list[int] = []
    while len(body) < room:
        body.extend(haystack[:room - len(body)])
    return head + body
