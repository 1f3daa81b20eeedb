"""The openvino family's options, on its own `--help` group: `--ov-config`, the OpenVINO properties of its
in-process pipeline. Light (no openvino): the plugin declares it in every pytest session.

    kwargs = settings_of(config.option)     # {"ov_config": {"INFERENCE_PRECISION_HINT": "f32"}}
"""

from __future__ import annotations

import pytest

__all__ = ["add_options", "given", "refusal", "ov_config", "settings_of"]



def ov_config(value: str) -> tuple[tuple[str, str], ...]:
    """--ov-config KEY=VALUE,...: OpenVINO properties, e.g. INFERENCE_PRECISION_HINT=f32,KV_CACHE_PRECISION=f32."""
    pairs = []
    for part in filter(None, value.split(",")):
        key, eq, val = part.partition("=")
        if not eq or not key.strip() or not val.strip():
            raise pytest.UsageError(f"--ov-config {value!r}: write KEY=VALUE,..., e.g. INFERENCE_PRECISION_HINT=f32,"
                                    "KV_CACHE_PRECISION=f32,DYNAMIC_QUANTIZATION_GROUP_SIZE=0")
        pairs.append((key.strip(), val.strip()))
    return tuple(pairs)


def add_options(group) -> None:
    group.addoption("--ov-config", metavar="KEY=VALUE,...", type=ov_config, default=(),
                    help="OpenVINO properties of the in-process openvino backend's pipeline (recorded in identity), "
                         "e.g. INFERENCE_PRECISION_HINT=f32,KV_CACHE_PRECISION=f32,DYNAMIC_QUANTIZATION_GROUP_SIZE=0 "
                         "(default: the device's own)")


def given(option) -> tuple[str, ...]:
    """Its options given on this command line (another family refuses them)."""
    return ("--ov-config",) if option.ov_config else ()


def settings_of(option) -> dict:
    """Its backend's load keywords."""
    return {"ov_config": dict(option.ov_config) or None}


def refusal(flag: str, backend: str) -> str:
    """The refusal of its option `flag` given with another family's `--backend`."""
    return (f"{flag} means nothing for --backend {backend}: only --backend openvino loads the model with it (a "
            "server's own settings go in its command); drop it")
