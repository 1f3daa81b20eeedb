"""The embedded OpenVINO IRs on the real OpenVINO runtime (CPU): exported from the embedded SmolLM2 GGUF in their
own venv (`python -m oracle.targets.openvino_export`, cached by version)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _weight_types(xml: Path) -> set[str]:
    """The element types of the IR's weight constants (the MatMul weights of an int4 IR are u4/i4)."""
    import openvino as ov

    model = ov.Core().read_model(xml)
    return {op.get_output_element_type(0).get_type_name() for op in model.get_ops() if op.get_type_name() == "Constant"}


def test_oracle_models_path_names_the_int4_ir_whose_weights_are_int4():
    r = subprocess.run([sys.executable, "-m", "oracle.cli", "models", "--path", "openvino-int4"],
                       capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stderr
    folder = Path(r.stdout.strip().splitlines()[-1])
    assert (folder / "openvino_model.xml").is_file() and (folder / "openvino_tokenizer.xml").is_file()
    types = _weight_types(folder / "openvino_model.xml")
    assert types & {"u4", "i4"}, types
    fp32 = subprocess.run([sys.executable, "-m", "oracle.cli", "models", "--path", "openvino-fp32"],
                          capture_output=True, text=True, timeout=1800)
    assert fp32.returncode == 0, fp32.stderr
    assert not _weight_types(Path(fp32.stdout.strip().splitlines()[-1]) / "openvino_model.xml") & {"u4", "i4"}
