"""What oracle knows about a backend family beyond its protocol, in one frozen descriptor per family.

    FAMILY = FamilyDescriptor(name="llamacpp", help="llama-server's native /completion", backend=LlamaCppBackend)

Each family declares its descriptor at the end of its own module and `oracle.backends.FAMILIES` registers it;
everything else (the target, the plan, the options, the docs test) reads the descriptor, never a family name.
What the backend can do at run time stays in its `Capabilities`, which the descriptor reads from the class.
What oracle starts or loads for a family itself (its embedded server, the planned context, an in-process
family's default model) is the target layer's half of the family: `oracle.targets.families`, one floor up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from oracle.backends.base import Capabilities

__all__ = ["FamilyDescriptor"]


@dataclass(frozen=True)
class FamilyDescriptor:
    """One backend family: how it is built and what it declares.

    A server family's backend is built from a URL (`backend(base_url, platform=, transport=, async_transport=,
    timeout_s=)`), an in-process family's (`capabilities.in_process`) from a model (`backend(model, platform=,
    **settings)`, and `locator=, default_model=` where it takes a locator); `load_errors` are what that load raises,
    each message naming the fix (e.g. pip install 'oracle[hf]').

    Its options, like a check kind's: `add_options(group)` declares them (on the target's `--help` group) and
    `settings(option)` reads them into its backend's load keywords (hf: dtype, openvino: ov_config, python:
    runner_args), which reach its backend alone; both live in its light `<family>_options.py`, which
    oracle/backends/options.py lists for the plugin.
    """

    name: str  # the `family` of `--backend family[-platform]`
    help: str  # a few words for --backend's help: what the family talks to
    backend: type  # the Backend class (its `capabilities` are read before anything is built)
    load_errors: tuple[type[Exception], ...] = ()  # in process: what a failed load raises
    # What follows `family:` in --backend (python's MODULE:FACTORY, the runner to load); None: nothing may follow.
    locator: str | None = None
    add_options: Callable[[Any], None] | None = None  # its options on a `--help` group; None: it has none
    settings: Callable[[Any], dict] | None = None  # its options read: its backend's load keywords
    # How `oracle localize` reads its layers: "torch-module" (forward hooks), "runner" (the runner's own
    # layer_outputs), "ir" (an OpenVINO IR's layer ends as outputs), "eval-callback" (llama.cpp's own tool on the
    # embedded llama-server's model and flags, oracle/localize/llamacpp_layers.py); "": it shows none (a server).
    layers: str = ""

    @property
    def capabilities(self) -> Capabilities:
        return self.backend.capabilities

    @property
    def in_process(self) -> bool:
        return self.capabilities.in_process
