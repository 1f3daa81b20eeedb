"""The backend families' registry, `FAMILIES`, and what is read through it (loaded on first use of these names
from `oracle.backends`, whose package is light).

    backend = make_backend("llamacpp-sycl", "http://127.0.0.1:8080")
    family_of("vllm-cpu").capabilities
"""

from __future__ import annotations

import difflib

import httpx

from oracle.backends import hf, llamacpp, openai, openvino, python_runner, vllm
from oracle.backends.base import (Backend, CacheEvidence, Capabilities, Completion, CompletionRequest,
                                  Counters, RequestFailed, TeacherForced)
from oracle.backends.family import FamilyDescriptor

__all__ = ["Backend", "BackendSpec", "CacheEvidence", "Capabilities", "Completion", "CompletionRequest",
           "Counters", "FAMILIES", "FamilyDescriptor", "PLATFORMS", "RequestFailed",
           "TeacherForced", "backend_help", "check_platform", "family_of", "is_in_process", "make_backend",
           "make_in_process_backend", "parse_backend", "server_families"]

# The registry: name -> descriptor, in the order the docs' table and --backend's help list them.
FAMILIES: dict[str, FamilyDescriptor] = {d.name: d for d in (llamacpp.FAMILY, vllm.FAMILY, openai.FAMILY,
                                                              hf.FAMILY, openvino.FAMILY,
                                                              python_runner.FAMILY)}


class BackendSpec(tuple):
    """(family, platform, locator) parsed from `--backend`; locator: what follows `family:` (python's
    MODULE:FACTORY), "" for the families that take none."""

    @property
    def family(self) -> str:
        return self[0]

    @property
    def platform(self) -> str:
        return self[1]

    @property
    def locator(self) -> str:
        return self[2]


def parse_backend(name: str) -> BackendSpec:
    """Split 'family[-platform]' or 'family:LOCATOR'; raise ValueError listing the known families."""
    head, colon, locator = name.strip().partition(":")
    family, _, platform = head.partition("-")
    if family not in FAMILIES:
        raise ValueError(f"--backend {name!r}: unknown family {family!r}; known families: "
                         f"{', '.join(sorted(FAMILIES))} (write family-platform, e.g. llamacpp-sycl)")
    wants = FAMILIES[family].locator
    if wants and not locator.strip(":"):
        raise ValueError(f"--backend {name!r}: the {family} family needs {family}:{wants}, e.g. "
                         f"{family}:examples/custom-runner/ov_runner.py:make_runner")
    if colon and not wants:
        raise ValueError(f"--backend {name!r}: the {family} family takes no ':' part; write family-platform, "
                         "e.g. llamacpp-sycl")
    if platform and not all(part.isalnum() for part in platform.split("-")):
        raise ValueError(f"--backend {name!r}: the platform tag must be letters and digits, e.g. llamacpp-cuda")
    return BackendSpec((family, platform, locator.strip()))


# The platform tags oracle knows: the accelerator stacks inference servers are built for. The tag is the label a
# report records (and picks the embedded default, a CPU build), so a misspelt one is refused rather than recorded;
# a platform of your own is written x-NAME (`llamacpp-x-myboard`) and recorded as given.
PLATFORMS = ("cpu", "cuda", "rocm", "hip", "xpu", "sycl", "vulkan", "metal", "opencl", "openvino", "musa", "cann",
             "npu", "gpu", "tpu", "neuron", "hpu", "mps", "kompute", "blas")
OWN_PLATFORM = "x-"


def check_platform(name: str) -> None:
    """ValueError for a `--backend` whose platform tag is neither known nor written x-NAME; the nearest known tag
    and the x- form are named."""
    spec = parse_backend(name)
    tag = spec.platform
    if not tag or tag in PLATFORMS or tag.startswith(OWN_PLATFORM):
        return
    near = difflib.get_close_matches(tag, PLATFORMS, n=1, cutoff=0.6)
    hint = f"did you mean {spec.family}-{near[0]}? " if near else ""
    raise ValueError(f"--backend {name!r}: unknown platform tag {tag!r}; {hint}known tags: {', '.join(PLATFORMS)}; "
                     f"a platform of your own: {spec.family}-{OWN_PLATFORM}{tag}")


def family_of(name: str) -> FamilyDescriptor:
    """The descriptor of `--backend family[-platform]`; ValueError for an unknown family."""
    return FAMILIES[parse_backend(name).family]


def backend_help() -> str:
    """Every registered family with its few words, for --backend's help."""
    return "; ".join(f"{d.name} ({d.help})" for d in FAMILIES.values())


def server_families() -> list[str]:
    """The families that talk to a server (a URL or a launched command), in the registry's order."""
    return [d.name for d in FAMILIES.values() if not d.in_process]


def make_backend(name: str, base_url: str, *, transport: httpx.BaseTransport | None = None,
                 async_transport: httpx.AsyncBaseTransport | None = None, timeout_s: float | None = None) -> Backend:
    spec, family = parse_backend(name), family_of(name)
    if family.in_process:
        raise ValueError(f"--backend {name}: runs the model in this process, not behind a URL")
    return family.backend(base_url, platform=spec.platform, transport=transport,
                          async_transport=async_transport, timeout_s=timeout_s)


def is_in_process(name: str) -> bool:
    """True for a family that loads the model in this process (no server, no URL)."""
    return family_of(name).in_process


def make_in_process_backend(name: str, model, *, settings: dict | None = None, default_model=None) -> Backend:
    """`settings`: the family's load keywords (its `FamilyDescriptor.settings`, e.g. {"dtype": "float32"} for hf),
    its backend's alone. `default_model` (a family with a locator): what the runner's tokenizer is read from when
    neither `model` nor the runner names one."""
    spec, family = parse_backend(name), family_of(name)
    if not family.in_process:
        raise ValueError(f"--backend {name}: a server family; give its URL (make_backend)")
    runner = {"locator": spec.locator, "default_model": default_model} if family.locator else {}
    return family.backend(model, platform=spec.platform, **(settings or {}), **runner)
