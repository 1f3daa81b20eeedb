"""Classes of a sweep: the points whose complete token arrays are identical, as groups, and which group equals the
reference.

    sig = signature(point_folder / "records")       # {prompt id: (token ids, ...)} of its primary run
    found = token_classes({1: s1, 2: s2, 3: s3}, reference=signature(reference / "records"))
    [(c.name, c.points, c.equals_reference) for c in found]   # [("A", (1, 2), True), ("B", (3,), False)]

A signature is every completion of the primary run (boot1-c1) as the records on disk hold it, each array whole:
two points are one class only when every prompt's every token is the same, not merely when the first divergence
from the reference falls at the same place. Classes are named A, B, ... in the order of their first point.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from oracle.store.records import PRIMARY

__all__ = ["TokenClass", "equals_reference", "signature", "token_classes"]

Signature = dict[str, tuple[int, ...]]


def signature(records: Path) -> Signature:
    """The primary run's completions under a records folder (a point's report, or a reference): {} when none."""
    folder = records / PRIMARY.key
    out: Signature = {}
    for npz in sorted(folder.glob("*.npz")) if folder.is_dir() else ():
        with np.load(npz) as arrays:
            out[npz.stem] = tuple(int(t) for t in arrays["completion_ids"])
    return out


def equals_reference(sig: Signature, reference: Signature) -> bool:
    """Every prompt the point ran has the reference's completion, token for token (a point run with -k on some
    prompts is judged on those)."""
    return bool(sig) and all(reference.get(rid) == ids for rid, ids in sig.items())


@dataclass(frozen=True)
class TokenClass:
    name: str  # A, B, ...
    points: tuple[int, ...]  # point numbers, in grid order
    prompts: int  # completions compared
    equals_reference: bool

    def as_json(self) -> dict:
        return {"name": self.name, "points": list(self.points), "prompts": self.prompts,
                "equals_reference": self.equals_reference}


def _name(k: int) -> str:
    letters = string.ascii_uppercase
    return letters[k] if k < len(letters) else f"{letters[k // len(letters) - 1]}{letters[k % len(letters)]}"


def token_classes(signatures: dict[int, Signature], reference: Signature) -> list[TokenClass]:
    """Points grouped by identical signatures (points without a completion are left out), in grid order."""
    groups: dict[tuple, list[int]] = {}
    for index in sorted(signatures):
        sig = signatures[index]
        if sig:
            groups.setdefault(tuple(sorted(sig.items())), []).append(index)
    return [TokenClass(_name(k), tuple(points), len(key), equals_reference(dict(key), reference))
            for k, (key, points) in enumerate(groups.items())]
