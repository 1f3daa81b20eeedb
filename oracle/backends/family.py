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

from oracle.backends.base import Capabilities

__all__ = ["FamilyDescriptor"]


@dataclass(frozen=True)
class FamilyDescriptor:
    """One backend family: how it is built and what it declares.

    A server family's backend is built from a URL (`backend(base_url, platform=, transport=, async_transport=,
    timeout_s=)`), an in-process family's (`capabilities.in_process`) from a model (`backend(model, platform=,
    dtype=, ov_config=)`, and `locator=, runner_args=, default_model=` where it takes a locator); `load_errors`
    are what that load raises, each message naming the fix (e.g. pip install 'oracle[hf]').
    """

    name: str  # the `family` of `--backend family[-platform]`
    help: str  # a few words for --backend's help: what the family talks to
    backend: type  # the Backend class (its `capabilities` are read before anything is built)
    load_errors: tuple[type[Exception], ...] = ()  # in process: what a failed load raises
    # What follows `family:` in --backend (python's MODULE:FACTORY, the runner to load); None: nothing may follow.
    locator: str | None = None
    # The options its in-process load honours (--dtype, --ov-config); any other family refuses them.
    load_options: tuple[str, ...] = ()
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
