"""The pure per-layer comparison: the band from the reference's own repeat, the first row out of band, the first
logit-lens change, shapes refused, NaN out of every band."""

from __future__ import annotations

import numpy as np
import pytest

from oracle.localize.compare import (BAND_FACTOR, BAND_FLOOR, LayerCapture, LayerMismatch, LayerOutput,
                                     compare_layers)

RNG = np.random.default_rng(0)
BASE = [RNG.standard_normal(8) for _ in range(5)]


def _capture(vectors, lens=None, names=None) -> LayerCapture:
    names = names or [f"layers.{k}" for k in range(len(vectors))]
    return LayerCapture(tuple(LayerOutput(name=n, layer=k, whole=True, vector=np.asarray(v),
                                          lens_top1=None if lens is None else lens[k])
                              for k, (n, v) in enumerate(zip(names, vectors))), lens="lens" if lens else "")


def _moved(k: int, by: float = 1e-2):
    """BASE with layer k and every later one moved (a change at k carries down the residual stream)."""
    return [v + by * (i >= k) * np.ones_like(v) for i, v in enumerate(BASE)]


@pytest.mark.parametrize("k", [0, 2, 4])
def test_a_change_at_layer_k_is_localized_to_k_and_no_layer_before(k):
    result = compare_layers(_capture(BASE), _capture(BASE), _capture(_moved(k)))
    assert result.first_layer_out_of_band.name == f"layers.{k}"
    assert [r.out_of_band for r in result.rows] == [i >= k for i in range(5)]
    assert all(r.relative_error == 0 and r.cosine == pytest.approx(1) for r in result.rows[:k])
    assert f"first layer out of band: layers.{k}" in result.answer()


def test_the_same_configuration_against_itself_names_no_layer():
    result = compare_layers(_capture(BASE), _capture(BASE), _capture(BASE))
    assert result.first_out_of_band is None and result.first_layer_out_of_band is None
    assert "no layer leaves the band" in result.answer()


def test_a_difference_inside_the_reference_repeat_band_is_not_named():
    """The reference's own repeat moves every layer by 1e-3; a candidate moving them as far stays in band, one
    moving layer 3 ten times as far is named."""
    noisy = [v * (1 + 1e-3) for v in BASE]
    same = compare_layers(_capture(BASE), _capture(noisy), _capture(noisy))
    assert same.first_out_of_band is None
    assert same.rows[0].band == pytest.approx(1e-3) and same.rows[0].limit == pytest.approx(BAND_FACTOR * 1e-3
                                                                                           + BAND_FLOOR)
    far = [v * (1 + (1e-2 if k >= 3 else 1e-3)) for k, v in enumerate(BASE)]
    assert compare_layers(_capture(BASE), _capture(noisy), _capture(far)).first_layer_out_of_band.name == "layers.3"


def test_the_first_logit_lens_change_is_named_apart_from_the_band():
    result = compare_layers(_capture(BASE, lens=[5, 5, 7, 9, 9]), _capture(BASE, lens=[5, 5, 7, 9, 9]),
                            _capture(_moved(1), lens=[5, 5, 7, 8, 9]))
    assert result.first_lens_change.name == "layers.3"
    assert result.as_json()["first_lens_change"] == "layers.3"
    assert "logit lens first changes its top-1 at layers.3" in result.answer()


def test_a_part_inside_a_layer_is_named_before_the_layer():
    rows = lambda vs: LayerCapture((LayerOutput("layers.0", 0, True, vs[0]),  # noqa: E731
                                    LayerOutput("layers.1.mlp", 1, False, vs[1]),
                                    LayerOutput("layers.1", 1, True, vs[2])))
    result = compare_layers(rows(BASE), rows(BASE), rows([BASE[0], BASE[1] + 1, BASE[2] + 1]))
    assert result.first_out_of_band.name == "layers.1.mlp" and result.first_layer_out_of_band.name == "layers.1"
    assert "first part out of band: layers.1.mlp" in result.answer()


def test_nan_is_out_of_every_band_and_written_as_a_word():
    bad = [v.copy() for v in BASE]
    bad[2][0] = np.nan
    result = compare_layers(_capture(BASE), _capture(BASE), _capture(bad))
    assert result.first_layer_out_of_band.name == "layers.2"
    assert result.as_json()["rows"][2]["relative_error"] == "inf"


def test_captures_of_other_layers_are_refused_naming_the_row():
    with pytest.raises(LayerMismatch, match=r"candidate shows other layers than the reference \(4 rows vs 5; first "
                                            r"difference at row 4"):
        compare_layers(_capture(BASE), _capture(BASE), _capture(BASE[:4]))
    with pytest.raises(LayerMismatch, match=r"layers.0: the candidate's output has shape \(4,\)"):
        compare_layers(_capture(BASE), _capture(BASE), _capture([v[:4] for v in BASE]))
