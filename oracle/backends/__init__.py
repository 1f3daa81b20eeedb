"""Backends registered by protocol family; `--backend family[-platform]` picks one.

    backend = make_backend("llamacpp-sycl", "http://127.0.0.1:8080")
"""

from __future__ import annotations

from typing import Callable

import httpx

from .base import Backend, Completion, CompletionRequest, Counters, RequestFailed
from .llamacpp import LlamaCppBackend
from .openai import OpenAIBackend
from .vllm import VLLMBackend

__all__ = ["Backend", "BackendSpec", "Completion", "CompletionRequest", "Counters", "FAMILIES",
           "RequestFailed", "make_backend", "parse_backend"]

FAMILIES: dict[str, Callable[..., Backend]] = {
    "llamacpp": LlamaCppBackend,
    "openai": OpenAIBackend,
    "vllm": VLLMBackend,
}


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
    if family not in FAMILIES:
        raise ValueError(f"--backend {name!r}: unknown family {family!r}; known families: "
                         f"{', '.join(sorted(FAMILIES))} (write family-platform, e.g. llamacpp-sycl)")
    if platform and not all(part.isalnum() for part in platform.split("-")):
        raise ValueError(f"--backend {name!r}: the platform tag must be letters and digits, e.g. llamacpp-cuda")
    return BackendSpec((family, platform))


def make_backend(name: str, base_url: str, *, transport: httpx.BaseTransport | None = None,
                 async_transport: httpx.AsyncBaseTransport | None = None, timeout_s: float | None = None) -> Backend:
    spec = parse_backend(name)
    return FAMILIES[spec.family](base_url, platform=spec.platform, transport=transport,
                                 async_transport=async_transport, timeout_s=timeout_s)
