"""`oracle models`: the embedded models by name; a name it does not know is refused with the names it knows."""

import pytest

from oracle.cli import main
from oracle.targets.cache import EmbeddedError
from oracle.targets.models import LISTED, MODELS, model_path
from oracle.targets.openvino_export import openvino_model


def test_every_listed_model_has_a_name_and_fp16_is_built_only_when_named():
    assert set(LISTED) <= set(MODELS)
    assert LISTED == ("smollm2-gguf", "openvino-fp32", "openvino-int8", "openvino-int4")
    assert "openvino-fp16" in MODELS and "openvino-fp16" not in LISTED


def test_an_unknown_name_is_refused_with_the_known_ones(capsys):
    with pytest.raises(EmbeddedError, match="no embedded model 'openvino-int3': choose one of smollm2-gguf, "
                                            "openvino-fp32, openvino-fp16, openvino-int8, openvino-int4"):
        model_path("openvino-int3")
    with pytest.raises(EmbeddedError, match="OpenVINO weight format 'int2': choose one of fp32, fp16, int8, int4"):
        openvino_model("int2")
    assert main(["models", "--path", "openvino-int3"]) == 2
    assert "invalid choice: 'openvino-int3'" in capsys.readouterr().err
