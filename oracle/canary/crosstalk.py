"""Crosstalk (contamination) canary: concurrent requests each copy their own random marker; a completion that
holds another concurrent request's content is `contaminated`.

    markers = wave_markers(4, seed=1234, level=4)          # 4 markers, no word shared between two of them
    messages, suffix = marker_prompt(markers[0])           # the chat message and the assistant's opening
    found = find_contamination(outputs, baselines, prompts)  # completions at once, alone (c1), prompt ids
    found[0].describe(decode, names=["r1", "r2", "r3", "r4"])
    # "r2 holds r3's content at token 1: it holds r3's text ' river candle maple'"

Why this prompt: measured on the embedded SmolLM2-135M-Instruct Q4_1 (llama-server, greedy, c1, 20 seeded
markers per shape), a plain "Repeat this text exactly" copies 1-5/20 back, an opening of two lines of the
marker 17-20/20, and the numbered list used here 20/20 for four words, 12 hex digits and three digit groups
alike (canaries/README.md has the table). Words, drawn without replacement across a wave, make every
marker's tokens its own, so whose content a completion holds is unambiguous (hex and digits share tokens).

Detection works on token ids. For requests i (the victim) and j (the source), a piece of j's prompt (which
holds its marker as the model reads it) is *distinctive* when no other request's prompt or c1 completion and
not i's own prompt nor i's own c1 completion holds it (so the shared chat template is nobody's, and neither is
the numbered list's scaffolding that j's c1 completion may reach and i's not). Two signs, each naming both
requests and a position in i's completion:

- a distinctive k-gram of j (k = KGRAM) anywhere in i's completion;
- i's first divergence from its own c1 completion starts a distinctive n-gram of j (n = 1..KGRAM): the
  completion left its own path for another request's.

A request that merely fails to copy its marker (its c1 completion fails the same way) holds nothing of another
request's text, so it is never contaminated.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Sequence

from oracle.compare.tokens import first_divergence
from oracle.compare.verdicts import CONTAMINATED, INCONCLUSIVE, PASS
from oracle.run.overlap import unproven_overlap

__all__ = ["KGRAM", "MARKER_WORDS", "MARKER_WORDS_POOL", "MAX_TOKENS", "Contamination", "find_contamination",
           "level_verdict", "marker_prompt", "request_names", "wave_markers"]

KGRAM = 3  # tokens in a distinctive piece found anywhere in a completion
MARKER_WORDS = 4  # words per marker
MAX_TOKENS = 32  # the copy (about 8 tokens a line) three times and more: room for another's content to show

# Common, concrete English words; each a whole word so that the model copies it as written.
_WORDS = tuple("""
apple river candle marble forest pepper silver garden rocket violet tiger piano lemon harbor castle meadow
orbit falcon cactus velvet anchor bamboo comet dragon ember glacier honey island jungle kettle lantern maple
nectar oyster pebble quartz raven saddle thunder umbrella walnut yogurt zebra basket cobalt denim fossil
goblet hammer igloo jacket koala ladder mango needle olive parrot quiver ribbon salmon tulip vessel wagon
bridge cherry donkey engine feather ginger helmet insect jigsaw kitten lizard magnet noodle orange pillow
rabbit sponge tomato unicorn valley window anvil beacon cotton desert eagle fabric gravel hollow iris
jasmine kernel lobster mirror nickel onion puzzle quilt rhubarb shovel timber turnip vapor willow yarn
zipper acorn button carrot dolphin elbow fiddle gopher hazel ivory jelly kayak locket muffin nutmeg otter
panther radish summit teapot tunnel vanilla walrus badger copper dagger fern granite hornet icicle juniper
lagoon mitten nugget opal pickle rooster satin thistle trumpet velcro wizard almond blanket cricket daisy
emerald flannel gecko harp indigo jewel lilac moss napkin ostrich pumpkin sardine tractor urchin viper
whistle bison canyon drizzle fig gutter hatchet ink jaguar kiwi lettuce marsh nylon orchid pistol radar
scooter tangerine beetle clover domino
""".split())
MARKER_WORDS_POOL = tuple(dict.fromkeys(_WORDS))


def wave_markers(count: int, *, seed: int, level: int) -> list[str]:
    """`count` markers for one wave, reproducible from (seed, level); no word is in two markers while the pool
    lasts (beyond it, words repeat but no two markers are equal)."""
    rng = random.Random(f"oracle-crosstalk-{seed}-c{level}")
    pool = list(MARKER_WORDS_POOL)
    rng.shuffle(pool)
    markers: list[str] = []
    seen: set[str] = set()
    while len(markers) < count:
        if len(pool) < MARKER_WORDS:
            pool = list(MARKER_WORDS_POOL)
            rng.shuffle(pool)
        marker = " ".join(pool.pop() for _ in range(MARKER_WORDS))
        if marker not in seen:
            seen.add(marker)
            markers.append(marker)
    return markers


def marker_prompt(marker: str) -> tuple[list[dict], str]:
    """(chat messages, the assistant's opening) that make the model write `marker` line after line: a numbered
    list it has begun, so that the next tokens continue item 3 with the marker."""
    return ([{"role": "user", "content": f"Write the code {marker} five times, numbered."}],
            f"1. {marker}\n2. {marker}\n3.")


def _grams(seq: Sequence[int], n: int) -> set[tuple[int, ...]]:
    return {tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)}


def _grams_of(seqs: Sequence[Sequence[int]], n: int) -> set[tuple[int, ...]]:
    out: set[tuple[int, ...]] = set()
    for s in seqs:
        out |= _grams(s, n)
    return out


@dataclass(frozen=True)
class Contamination:
    victim: int  # the request (0-based in the wave) whose completion holds another's content
    source: int  # the request whose content it is
    position: int  # token index in the victim's completion where that content starts
    piece: tuple[int, ...]  # the tokens found
    sign: str  # "k-gram" (found anywhere) or "divergence" (the first split from the victim's c1 starts it)

    def describe(self, decode=None, names: Sequence[str] | None = None) -> str:
        victim, source = ((names[self.victim], names[self.source]) if names
                          else (f"request {self.victim + 1}", f"request {self.source + 1}"))
        shown = repr(decode(list(self.piece))) if decode else str(list(self.piece))
        where = ("its first divergence from its own c1 output continues " if self.sign == "divergence"
                 else "it holds ")
        return f"{victim} holds {source}'s content at token {self.position}: {where}{source}'s text {shown}"

    def as_dict(self) -> dict:
        return asdict(self) | {"piece": list(self.piece)}


def find_contamination(outputs: Sequence[Sequence[int]], baselines: Sequence[Sequence[int]],
                       prompts: Sequence[Sequence[int]], *, k: int = KGRAM) -> list[Contamination]:
    """Every request whose completion (`outputs[i]`) holds another request's distinctive content, at most
    one finding per victim (its earliest). `baselines[i]` is request i's own c1 completion, `prompts[i]` its
    prompt ids (which hold its marker, as the model reads and writes it)."""
    n = len(outputs)
    if not (len(baselines) == len(prompts) == n):
        raise ValueError("outputs, baselines and prompts must have one entry per request")
    sizes = range(1, k + 1)
    # Content is j's when its prompt (its marker) holds it. Its c1 completion counts against others only: past
    # the marker it is the list's own scaffolding ("6."), which a request may reach on its own.
    marker = {size: [_grams(prompts[j], size) for j in range(n)] for size in sizes}
    held = {size: [_grams_of([prompts[j], baselines[j]], size) for j in range(n)] for size in sizes}
    found = []
    for i in range(n):
        def distinctive(piece: tuple[int, ...], j: int) -> bool:
            size = len(piece)
            return (piece in marker[size][j] and piece not in held[size][i]
                    and not any(piece in held[size][m] for m in range(n) if m not in (i, j)))

        def source_of(piece: tuple[int, ...]) -> int | None:
            return next((j for j in range(n) if j != i and distinctive(piece, j)), None)

        hits = []
        out = list(outputs[i])
        d = first_divergence(list(baselines[i]), out)
        if d is not None and d < len(out):
            for size in range(1, min(k, len(out) - d) + 1):
                piece = tuple(out[d:d + size])
                if (source := source_of(piece)) is not None:
                    hits.append(Contamination(i, source, d, piece, "divergence"))
                    break
        for pos in range(len(out) - k + 1):
            if (source := source_of(tuple(out[pos:pos + k]))) is not None:
                # A piece may begin with the victim's own last tokens (a newline both write): the content is
                # another's from the first divergence on, so that is the position named.
                at = pos if d is None else max(pos, d)
                hits.append(Contamination(i, source, at, tuple(out[at:pos + k]), "k-gram"))
                break
        if hits:
            found.append(min(hits, key=lambda h: h.position))
    return found


def request_names(level: int) -> list[str]:
    """The requests of a level's wave, as messages and the report name them: r1 .. rN in send order."""
    return [f"r{i + 1}" for i in range(level)]


def level_verdict(level: int, reached: int, findings: Sequence[Contamination], *, names: Sequence[str],
                  decode=None) -> tuple[str, str, list[str], str]:
    """(verdict, detail, lines, inconclusive kind) of one ladder level's wave: contaminated whenever a
    completion holds another's content (whatever the overlap: the content got there); else inconclusive
    (kind overlap) when fewer than `level` requests generated at once; else pass."""
    overlap = f"overlap reached {reached} of {level}"
    if findings:
        said = [f.describe(decode, names) for f in findings]
        detail = (f"c{level}: {len(findings)} of {level} completions hold another request's content; "
                  f"{said[0]}; {overlap}")
        return CONTAMINATED, detail, said[:10], ""
    if reached < level:
        return (INCONCLUSIVE, f"c{level}: no completion holds another's content, but {overlap}",
                [unproven_overlap(level, reached)], "overlap")
    return PASS, f"c{level}: none of {level} completions holds another request's content; {overlap}", [], ""
