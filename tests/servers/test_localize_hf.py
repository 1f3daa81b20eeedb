"""`oracle localize` on the hf family: forward hooks on every decoder layer (and its attention and MLP) of the
embedded SmolLM2 loaded in process (the GGUF's cached float32 Hugging Face folder: a load in a third of the
GGUF's time). One float32 model for the module: one layer's MLP weights scaled is localized to
that layer's MLP (and to no row before it) for several layers; the model against itself names no layer; float32
against float16 on the CPU, through `oracle localize` on a gate report, names a first layer with the band (0 here:
the CPU repeats bit for bit). One prompt, a 9-token path."""

from __future__ import annotations

import json

import pytest
from planted_localize import COMPLETION_IDS, PROMPT_IDS, planted_localize

from oracle.cli import main
from oracle.localize import compare_layers
from oracle.localize.hf_layers import hf_capture
from oracle.targets.openvino_export import hf_folder

pytestmark = pytest.mark.slow
PATH = PROMPT_IDS + COMPLETION_IDS[:3]


@pytest.fixture(scope="module")
def smol():
    import torch  # the hf backend's (pip install 'oracle[hf]'); a missing torch fails here, never skips

    from oracle.backends.hf import HfBackend

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # the machine is shared
    yield HfBackend(hf_folder(), dtype="float32").model
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def reference(smol):
    return hf_capture(smol, PATH), hf_capture(smol, PATH)


@pytest.mark.parametrize("k", [0, 7, 29])
def test_one_layer_s_mlp_scaled_is_localized_to_that_layer(smol, reference, k):
    import torch

    weight = smol.model.layers[k].mlp.down_proj.weight
    kept = weight.detach().clone()
    with torch.no_grad():
        weight.mul_(1.05)
    try:
        result = compare_layers(*reference, hf_capture(smol, PATH))
    finally:
        with torch.no_grad():
            weight.copy_(kept)
    assert result.first_out_of_band.name == f"layers.{k}.mlp"
    assert result.first_layer_out_of_band.name == f"layers.{k}"
    before = [r for r in result.rows if r.layer < k or r.name == f"layers.{k}.attn"]
    assert before and not any(r.out_of_band for r in before)
    assert all(r.band == 0 for r in result.rows)  # the CPU repeats bit for bit


def test_the_model_against_itself_names_no_layer(smol, reference):
    result = compare_layers(*reference, hf_capture(smol, PATH))
    assert result.first_out_of_band is None and result.first_lens_change is None
    assert len(result.rows) == 1 + 3 * 30  # embed, then attn, mlp and the layer's output for 30 layers
    # the logit lens of the last layer is the model's own prediction
    assert result.rows[-1].lens_reference is not None


def test_float32_against_float16_names_a_first_layer_with_the_band(tmp_path):
    folder = str(hf_folder())
    hf = lambda dtype: {"backend": "hf-cpu", "server": {"dtype": dtype}, "model": {"path": folder}}  # noqa: E731
    report = planted_localize(tmp_path, reference=hf("float32"), candidate=hf("float16"))
    assert main(["localize", str(report), "--out", str(tmp_path / "loc")]) == 0
    data = json.loads((tmp_path / "loc" / "localize.json").read_text())
    loc = data["localize"]
    assert data["reference"]["label"] == "hf-cpu float32" and data["candidate"]["label"] == "hf-cpu float16"
    assert loc["first_out_of_band"] is not None and loc["first_layer_out_of_band"] is not None
    first = next(r for r in loc["rows"] if r["name"] == loc["first_out_of_band"])
    assert first["band"] == 0 and 1e-6 < first["relative_error"] < 0.1
    assert loc["lens"].startswith("the model's own final norm and lm_head")
    assert "<svg" in (tmp_path / "loc" / "localize.html").read_text()
