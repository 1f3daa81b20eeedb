"""`oracle localize` on OpenVINO: the embedded fp32 IR's layer ends (the residual adds of each decoder layer) added as
outputs and matched by layer index. One layer's MLP weights scaled in the fp32 IR is localized to that layer, for
several layers; the IR against itself names no layer; `oracle localize` of an openvino-cpu fp32 reference against
the int8 IR names a first layer; the example runner (examples/custom-runner/ov_runner.py) shows the same layers
through the runner protocol's layer_outputs. One 9-token path."""

from __future__ import annotations

import json
import re

import numpy as np
import openvino as ov  # imported before any in-process run (a native module is imported once)
import pytest
from conftest import REPO
from planted_localize import COMPLETION_IDS, PROMPT_IDS, planted_localize

from oracle.cli import main
from oracle.localize import compare_layers
from oracle.localize.openvino_layers import layer_ends, openvino_capture
from oracle.targets.openvino_export import openvino_model

pytestmark = pytest.mark.slow
PATH = PROMPT_IDS + COMPLETION_IDS[:3]
F32 = {"INFERENCE_PRECISION_HINT": "f32"}
OV_RUNNER = f"python:{REPO / 'examples' / 'custom-runner' / 'ov_runner.py'}:make_runner"


@pytest.fixture(scope="module")
def fp32():
    return openvino_model("fp32")


@pytest.fixture(scope="module")
def reference(fp32):
    return [openvino_capture(fp32, PATH, config=F32) for _ in range(2)]


def _scaled(fp32, k: int):
    """The fp32 IR read into memory with layer k's MLP down projection weights scaled by 1.05."""
    model = ov.Core().read_model(str(fp32 / "openvino_model.xml"))
    matmuls = [op for op in model.get_ordered_ops() if op.get_type_name() == "MatMul"
               and re.search(rf"layers\.{k}\.mlp\.down_proj\b", op.get_friendly_name())]
    assert len(matmuls) == 1, [op.get_friendly_name() for op in matmuls]
    weight = matmuls[0].input_value(1).get_node()
    assert weight.get_type_name() == "Constant"
    scaled = ov.op.Constant(np.asarray(weight.get_data(), dtype=np.float32) * 1.05)
    matmuls[0].input(1).replace_source_output(scaled.output(0))
    return model


def test_the_ir_shows_every_decoder_layer_by_index(fp32):
    rows = layer_ends(ov.Core().read_model(str(fp32 / "openvino_model.xml")))
    whole = [name for name, _, is_whole, _ in rows if is_whole]
    assert whole == [f"layers.{i}" for i in range(30)]


@pytest.mark.parametrize("k", [0, 12, 29])
def test_one_layer_s_weights_scaled_in_the_fp32_ir_is_localized_to_that_layer(fp32, reference, k):
    result = compare_layers(*reference, openvino_capture(_scaled(fp32, k), PATH, config=F32))
    assert result.first_layer_out_of_band.name == f"layers.{k}"
    assert not any(r.out_of_band for r in result.rows if r.layer < k or r.name == f"layers.{k}.attn")


def test_the_ir_against_itself_names_no_layer(fp32, reference):
    assert compare_layers(*reference, openvino_capture(fp32, PATH, config=F32)).first_out_of_band is None


def test_oracle_localize_of_fp32_against_int8_names_a_first_layer(fp32, tmp_path):
    ir = lambda folder: {"backend": "openvino-cpu", "model": {"path": str(folder)},  # noqa: E731
                         "server": {"ov_config": F32}}
    report = planted_localize(tmp_path, reference=ir(fp32), candidate=ir(openvino_model("int8")))
    assert main(["localize", str(report), "--out", str(tmp_path / "loc")]) == 0
    data = json.loads((tmp_path / "loc" / "localize.json").read_text())
    assert data["localize"]["first_layer_out_of_band"] is not None and data["localize"]["lens"] is None


def test_the_example_runner_shows_its_layers_and_names_the_int8_one(tmp_path):
    runner = lambda ir: {"backend": OV_RUNNER, "server": {"runner_args": {"ir": ir}}}  # noqa: E731
    report = planted_localize(tmp_path, reference=runner("fp32"), candidate=runner("int8"))
    assert main(["localize", str(report), "--out", str(tmp_path / "loc")]) == 0
    rows = json.loads((tmp_path / "loc" / "localize.json").read_text())["localize"]["rows"]
    assert [r["name"] for r in rows] == [f"layers.{i}" for i in range(30)]
