"""The width map: per width (requests the server held in flight at once), the class of its outputs. Widths whose
complete token arrays are equal for every prompt share a class; class A is the c1 run every width is compared
with. A verdict per level says whether c8 matched c1; the map says which widths form classes among themselves
(does c3 equal c2? c5..c8?), which width first parts from c1, and where each class splits.

Pure: the ladder's rows against c1 (compare/conditions.compare_condition, each row with its record's and its c1
record's completion sha256) in, a `WidthMap` out.

    wm = width_map({3: rows_c3, 4: rows_c4}, proven={3: True, 4: True}, near_tie_nats=0.5, ladder="every:4")
    wm.first_parting            # 3
    wm.as_json()["widths"][2]   # {"width": 3, "class": "B", "proven": True, "tie_flips": 0, ...}
    outputs_of(rows_beside_9, near_tie_nats=0.5)   # a neighbour run's outputs: {"outputs": "3f9a...", ...}

Each class carries `outputs`, a digest of its prompts' complete token arrays, so another run of the same prompts
(a neighbour length: oracle/checks/neighbours) that gives the same arrays is shown in the same class.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from string import ascii_uppercase
from typing import Mapping, Sequence

from oracle.compare.near_ties import CONFIDENT, TIE, flip_kind

__all__ = ["WidthClass", "WidthEntry", "WidthMap", "class_label", "outputs_of", "width_map", "width_words"]

C1_RUN = "c1 run"  # width 1 when the ladder has no level 1: the run every level is compared with


@dataclass(frozen=True)
class WidthEntry:
    width: int
    klass: str  # "A": the c1 run's outputs
    proven: bool  # the server held this many in flight (the overlap proof); False: inconclusive, kind overlap
    records: int
    split_records: int  # records whose arrays differ from their prompt's c1 record
    tie_flips: int  # of those splits, margin at the split (vs c1) below --near-tie-nats
    confident_flips: int
    source: str = "ladder"  # or "c1 run"

    def as_json(self) -> dict:
        return {"width": self.width, "class": self.klass, "proven": self.proven, "records": self.records,
                "split_records": self.split_records, "tie_flips": self.tie_flips,
                "confident_flips": self.confident_flips, "source": self.source}


@dataclass(frozen=True)
class WidthClass:
    label: str
    widths: tuple[int, ...]
    first_splits: dict[str, int | None] = field(default_factory=dict)  # prompt -> first split vs c1 (None: finish)
    outputs: str = ""  # digest of its prompts' completion sha256s (_digest)

    def as_json(self) -> dict:
        return {"class": self.label, "widths": list(self.widths), "prompts": dict(self.first_splits),
                "outputs": self.outputs}


@dataclass(frozen=True)
class WidthMap:
    ladder: str  # the --ladder value as given ("every:8", "1,2,4")
    entries: tuple[WidthEntry, ...]
    classes: tuple[WidthClass, ...]
    never_tried: tuple[int, ...] = ()

    @property
    def first_parting(self) -> int | None:
        """The smallest width whose outputs are not the c1 run's."""
        return next((e.width for e in self.entries if e.klass != "A"), None)

    def as_json(self) -> dict:
        return {"ladder": self.ladder, "widths": [e.as_json() for e in self.entries],
                "classes": [c.as_json() for c in self.classes], "first_parting": self.first_parting,
                "never_tried": list(self.never_tried)}


def class_label(i: int) -> str:
    """A, B, ..., Z, then C27, C28, ..."""
    return ascii_uppercase[i] if i < len(ascii_uppercase) else f"C{i + 1}"


def _signature(rows: Sequence[dict], prompts: set[str]) -> tuple:
    arrays: dict[str, set[str]] = {}
    for r in rows:
        if r["prompt"] in prompts:
            arrays.setdefault(r["prompt"], set()).add(r["completion_sha256"])
    return tuple(sorted((p, tuple(sorted(s))) for p, s in arrays.items()))


def _digest(signature: tuple) -> str:
    """16 hex digits naming a signature (prompt -> its arrays' sha256s): equal outputs, equal digest."""
    return hashlib.sha256(json.dumps(signature).encode()).hexdigest()[:16]


def _flips(rows: Sequence[dict], near_tie_nats: float) -> tuple[int, int, int]:
    """(records split from c1, tie flips, confident flips) among rows; logprobs moved with the arrays equal is no
    split (--oracle-compare logprobs)."""
    split_rows = [r for r in rows if r["vs_c1"]["verdict"] not in ("exact", "logprobs-moved")]
    kinds = [flip_kind(r["vs_c1"]["margin_nats"], r["vs_c1"]["reason"], near_tie_nats) for r in split_rows
             if r["vs_c1"]["first_divergence"] is not None]
    return len(split_rows), kinds.count(TIE), kinds.count(CONFIDENT)


def outputs_of(rows: Sequence[dict], *, near_tie_nats: float) -> dict:
    """Another run of the suite's prompts beside c1 (a neighbour length): its outputs' digest (a width class with
    the same digest gave the same arrays), whether every array is its c1 record's, and its flips."""
    split, ties, confident = _flips(rows, near_tie_nats)
    return {"outputs": _digest(_signature(rows, {r["prompt"] for r in rows})),
            "same_as_c1": all(r["completion_sha256"] == r["c1_sha256"] for r in rows),
            "split_records": split, "tie_flips": ties, "confident_flips": confident}


def _splits(rows: Sequence[dict]) -> dict[str, int | None]:
    """prompt -> its earliest first divergence vs c1 over the rows that differ from c1."""
    out: dict[str, int | None] = {}
    for r in rows:
        if r["vs_c1"]["verdict"] in ("exact", "logprobs-moved"):  # arrays equal to c1
            continue
        first = r["vs_c1"]["first_divergence"]
        prior = out.get(r["prompt"], first)
        out[r["prompt"]] = first if prior is None else prior if first is None else min(prior, first)
    return dict(sorted(out.items()))


def width_map(levels: Mapping[int, Sequence[dict]], *, proven: Mapping[int, bool], near_tie_nats: float,
              ladder: str = "", never_tried: Sequence[int] = ()) -> WidthMap:
    """levels: width -> its rows against c1 (width 1: the ladder's c1 repeat, if it ran); each row carries
    `prompt`, `completion_sha256`, `c1_sha256` and `vs_c1`. Classes compare the prompts every width ran."""
    rows_all = [r for rows in levels.values() for r in rows]
    base = {r["prompt"]: r["c1_sha256"] for r in rows_all if r.get("c1_sha256")}
    common = set(base)
    for rows in levels.values():
        common &= {r["prompt"] for r in rows}
    base_sig = tuple(sorted((p, (sha,)) for p, sha in base.items() if p in common))
    labels: dict[tuple, str] = {base_sig: "A"}
    digests = {"A": _digest(base_sig)}
    members: dict[str, list[int]] = {"A": []}
    splits: dict[str, dict[str, int | None]] = {"A": {}}
    entries = []
    widths = sorted(levels)
    if 1 not in levels:
        members["A"].append(1)
        entries.append(WidthEntry(1, "A", True, len(base), 0, 0, 0, source=C1_RUN))
    for w in widths:
        rows = levels[w]
        sig = _signature(rows, common)
        if sig not in labels:
            labels[sig] = class_label(len(labels))
            digests[labels[sig]] = _digest(sig)
            members[labels[sig]] = []
            splits[labels[sig]] = {p: f for p, f in _splits(rows).items() if p in common}
        label = labels[sig]
        members[label].append(w)
        split, ties, confident = _flips(rows, near_tie_nats)
        entries.append(WidthEntry(w, label, bool(proven.get(w, True)), len(rows), split, ties, confident))
    entries.sort(key=lambda e: e.width)
    classes = tuple(WidthClass(label, tuple(sorted(members[label])), splits[label], digests[label]) for label in members
                    if members[label] or label == "A")
    return WidthMap(ladder, tuple(entries), classes, tuple(never_tried))


def width_words(widths) -> str:
    """"3, 5, 6, 7" / "3, 5, 6, 7, 9-15": runs of four or more widths written as a range."""
    widths = sorted(widths)
    out: list[str] = []
    i = 0
    while i < len(widths):
        j = i
        while j + 1 < len(widths) and widths[j + 1] == widths[j] + 1:
            j += 1
        if j - i >= 3:
            out.append(f"{widths[i]}-{widths[j]}")
        else:
            out.extend(str(w) for w in widths[i:j + 1])
        i = j + 1
    return ", ".join(out)
