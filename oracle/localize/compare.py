"""The per-layer comparison of two configurations on one token path: pure numpy, arrays in, a result out.

    result = compare_layers(reference, repeat, candidate)   # three LayerCaptures of the same path
    result.first_out_of_band, result.first_layer_out_of_band, result.first_lens_change

Each row of a capture is one layer's (or one part's) output at the localized position. Per row: the relative
error ||c - r|| / ||r||, the cosine, the largest |c - r|, and the band: the same relative error between the
reference and its own repeat. A row is out of band when its relative error exceeds BAND_FACTOR times the band
plus BAND_FLOOR (a deterministic reference repeats bit for bit, band 0: then any difference past float32
rounding of the norm is out). The logit lens (the model's own final norm and head on a layer's output) is
compared where the family gives one: the first row whose lens top-1 differs from the reference's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["BAND_FACTOR", "BAND_FLOOR", "LayerCapture", "LayerMismatch", "LayerOutput", "LayerRow",
           "Localization", "compare_layers"]

BAND_FACTOR = 2.0  # a candidate moves a layer when it moves it more than twice as far as the reference's own repeat
BAND_FLOOR = 1e-6  # a few float32 roundings of a norm: below this, two outputs are the same number


class LayerMismatch(ValueError):
    """The two captures do not show the same layers (names or sizes); the message says which."""


@dataclass(frozen=True)
class LayerOutput:
    """One row of a capture: `layer` the decoder layer's index (-1 before the first), `whole` True for a whole
    layer's output (the curve's points), False for a part inside it (attention, MLP)."""

    name: str
    layer: int
    whole: bool
    vector: np.ndarray
    lens_top1: int | None = None


@dataclass(frozen=True)
class LayerCapture:
    """Every row one configuration shows for one path, in model order, at one position."""

    rows: tuple[LayerOutput, ...]
    lens: str = ""  # how the logit lens was read ("" where the family has none)

    def names(self) -> list[str]:
        return [r.name for r in self.rows]


@dataclass(frozen=True)
class LayerRow:
    name: str
    layer: int
    whole: bool
    relative_error: float
    cosine: float
    max_abs_diff: float
    band: float  # the reference repeat's relative error at this row
    out_of_band: bool
    lens_reference: int | None
    lens_candidate: int | None

    @property
    def lens_changed(self) -> bool:
        return None not in (self.lens_reference, self.lens_candidate) and self.lens_reference != self.lens_candidate

    @property
    def limit(self) -> float:
        return BAND_FACTOR * self.band + BAND_FLOOR

    def as_json(self) -> dict:
        return {"name": self.name, "layer": self.layer, "whole": self.whole,
                "relative_error": _number(self.relative_error), "cosine": _number(self.cosine),
                "max_abs_diff": _number(self.max_abs_diff), "band": _number(self.band), "limit": _number(self.limit),
                "out_of_band": self.out_of_band,
                "lens_reference": self.lens_reference, "lens_candidate": self.lens_candidate,
                "lens_changed": self.lens_changed}


@dataclass(frozen=True)
class Localization:
    rows: tuple[LayerRow, ...]
    lens: str = ""
    notes: tuple[str, ...] = field(default=())

    @property
    def first_out_of_band(self) -> LayerRow | None:
        """The first row (layer or part, in model order) out of band."""
        return next((r for r in self.rows if r.out_of_band), None)

    @property
    def first_layer_out_of_band(self) -> LayerRow | None:
        """The first whole layer's output out of band."""
        return next((r for r in self.rows if r.whole and r.out_of_band), None)

    @property
    def first_lens_change(self) -> LayerRow | None:
        return next((r for r in self.rows if r.lens_changed), None)

    def answer(self) -> str:
        first, op, lens = self.first_layer_out_of_band, self.first_out_of_band, self.first_lens_change
        if first is None and op is None:
            words = (f"no layer leaves the band of the reference's own repeat ({len(self.rows)} rows compared): "
                     "the two configurations compute the same thing at every layer on this path")
        else:
            named = first or op
            words = f"first layer out of band: {named.name} (relative error {named.relative_error:.3g}, band " \
                    f"{named.band:.3g})"
            if op is not None and op is not named:
                words += f"; first part out of band: {op.name}"
        if lens is not None:
            words += f"; the logit lens first changes its top-1 at {lens.name}"
        elif any(r.lens_reference is not None for r in self.rows):
            words += "; the logit lens picks the same top-1 at every layer"
        return words

    def as_json(self) -> dict:
        pick = lambda r: r.name if r else None  # noqa: E731
        return {"answer": self.answer(), "band_rule": {"factor": BAND_FACTOR, "floor": BAND_FLOOR},
                "first_out_of_band": pick(self.first_out_of_band),
                "first_layer_out_of_band": pick(self.first_layer_out_of_band),
                "first_lens_change": pick(self.first_lens_change), "lens": self.lens or None,
                "notes": list(self.notes), "rows": [r.as_json() for r in self.rows]}


def _number(v: float) -> float | str:
    """A float for JSON: inf and NaN as the words "inf" and "nan" (JSON has no such numbers)."""
    return v if np.isfinite(v) else str(v)


def _check_same_layers(reference: LayerCapture, other: LayerCapture, what: str) -> None:
    if reference.names() != other.names():
        a, b = reference.names(), other.names()
        where = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        raise LayerMismatch(f"the {what} shows other layers than the reference ({len(b)} rows vs {len(a)}; first "
                            f"difference at row {where}: {b[where] if where < len(b) else '(none)'} vs "
                            f"{a[where] if where < len(a) else '(none)'}): localize compares one model's layers "
                            "in two configurations")
    for r, o in zip(reference.rows, other.rows):
        if r.vector.shape != o.vector.shape:
            raise LayerMismatch(f"{r.name}: the {what}'s output has shape {o.vector.shape}, the reference's "
                                f"{r.vector.shape}")


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a))
    diff = float(np.linalg.norm(b - a))
    return diff / norm if norm > 0 else (0.0 if diff == 0 else float("inf"))


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    den = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b) / den if den > 0 else (1.0 if not a.any() and not b.any() else 0.0)


def compare_layers(reference: LayerCapture, repeat: LayerCapture, candidate: LayerCapture,
                   *, notes: tuple[str, ...] = ()) -> Localization:
    """Each row of `candidate` against `reference`, with the band from `reference` against its `repeat`."""
    _check_same_layers(reference, repeat, "reference's repeat")
    _check_same_layers(reference, candidate, "candidate")
    rows = []
    for r, again, c in zip(reference.rows, repeat.rows, candidate.rows):
        ref, rep, cand = (np.asarray(v, dtype=np.float64).ravel() for v in (r.vector, again.vector, c.vector))
        if not (np.isfinite(ref).all() and np.isfinite(cand).all()):
            # A NaN or inf is out of every band: name it as such rather than compare numbers that are not
            rel, cos, top, band = float("inf"), float("nan"), float("inf"), 0.0
        else:
            rel, cos = _relative(ref, cand), _cosine(ref, cand)
            top = float(np.abs(cand - ref).max()) if ref.size else 0.0
            band = _relative(ref, rep) if np.isfinite(rep).all() else float("inf")
        limit = BAND_FACTOR * band + BAND_FLOOR
        rows.append(LayerRow(name=r.name, layer=r.layer, whole=r.whole, relative_error=rel, cosine=cos,
                             max_abs_diff=top, band=band, out_of_band=not rel <= limit,
                             lens_reference=r.lens_top1, lens_candidate=c.lens_top1))
    return Localization(tuple(rows), lens=reference.lens, notes=notes)
