"""Backends registered by protocol family; `--backend family[-platform]` picks one.

    backend = make_backend("llamacpp-sycl", "http://127.0.0.1:8080")
    backend = make_in_process_backend("hf-cpu", Path("model.gguf"), dtype="float32")

Server families talk to a URL; in-process families (`hf`, `openvino`) load the model themselves.
"""

from __future__ import annotations

from typing import Callable

import httpx

from oracle.backends.base import (Backend, CacheEvidence, Capabilities, Completion, CompletionRequest, Counters, RequestFailed,
                                 TeacherForced)
from oracle.backends.llamacpp import LlamaCppBackend
from oracle.backends.openai import OpenAIBackend
from oracle.backends.vllm import VLLMBackend

__all__ = ["Backend", "BackendSpec", "CacheEvidence", "Capabilities", "Completion", "CompletionRequest", "Counters",
           "FAMILIES", "IN_PROCESS_FAMILIES", "RequestFailed", "TeacherForced", "in_process_capabilities",
           "is_in_process", "make_backend",
           "make_in_process_backend", "parse_backend"]

FAMILIES: dict[str, Callable[..., Backend]] = {
    "llamacpp": LlamaCppBackend,
    "openai": OpenAIBackend,
    "vllm": VLLMBackend,
}


def _hf(model, **kw) -> Backend:
    from oracle.backends.hf import HfBackend  # imports torch: only when asked for

    return HfBackend(model, **kw)


def _openvino(model, **kw) -> Backend:
    from oracle.backends.openvino import OpenVINOBackend  # imports the OpenVINO runtime: only when asked for

    return OpenVINOBackend(model, **kw)


IN_PROCESS_FAMILIES: dict[str, Callable[..., Backend]] = {
    "hf": _hf,
    "openvino": _openvino,
}


def in_process_capabilities(name: str) -> Capabilities:
    """What an in-process family declares, read before it loads anything (its module imports no runtime)."""
    if parse_backend(name).family == "hf":
        from oracle.backends.hf import HfBackend as cls
    else:
        from oracle.backends.openvino import OpenVINOBackend as cls
    return cls.capabilities


class BackendSpec(tuple):
    """(family, platform) parsed from `--backend`."""

    @property
    def family(self) -> str:
        return self[0]

    @property
    def platform(self) -> str:
        return self[1]


def parse_backend(name: str) -> BackendSpec:
    """Split 'family[-platform]'; raise ValueError listing the known families."""
    family, _, platform = name.strip().partition("-")
    if family not in FAMILIES and family not in IN_PROCESS_FAMILIES:
        raise ValueError(f"--backend {name!r}: unknown family {family!r}; known families: "
                         f"{', '.join(sorted([*FAMILIES, *IN_PROCESS_FAMILIES]))} (write family-platform, "
                         "e.g. llamacpp-sycl)")
    if platform and not all(part.isalnum() for part in platform.split("-")):
        raise ValueError(f"--backend {name!r}: the platform tag must be letters and digits, e.g. llamacpp-cuda")
    return BackendSpec((family, platform))


def make_backend(name: str, base_url: str, *, transport: httpx.BaseTransport | None = None,
                 async_transport: httpx.AsyncBaseTransport | None = None, timeout_s: float | None = None) -> Backend:
    spec = parse_backend(name)
    return FAMILIES[spec.family](base_url, platform=spec.platform, transport=transport,
                                 async_transport=async_transport, timeout_s=timeout_s)


def is_in_process(name: str) -> bool:
    """True for a family that loads the model in this process (no server, no URL)."""
    return parse_backend(name).family in IN_PROCESS_FAMILIES


def make_in_process_backend(name: str, model, *, dtype: str = "float32", ov_config: dict | None = None) -> Backend:
    spec = parse_backend(name)
    return IN_PROCESS_FAMILIES[spec.family](model, platform=spec.platform, dtype=dtype, ov_config=ov_config)
