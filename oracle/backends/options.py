"""The families' options, light: `--backend` (its validating type and its help's list of families) and each
family's own options module (`<family>_options.py`: `add_options`, `settings_of`, `given`), which its
`FamilyDescriptor` names too; the plugin declares them in every pytest session without loading any family's client.

    add_backend_option(group); add_family_options(group)   # --backend, each family's options: the target's group
    refusal = foreign_options_refusal(option, family, "llamacpp")   # a family option given to another, else None
"""

from __future__ import annotations

import pytest

from oracle.backends import hf_options, openvino_options, python_runner_options

__all__ = ["BACKEND_FAMILIES", "FAMILY_OPTION_MODULES", "add_backend_option", "add_family_options", "backend_name",
           "foreign_options_refusal"]

# The backend families with their few words (oracle.backends.backend_help(), which imports every family's client:
# a test keeps the two equal).
BACKEND_FAMILIES = ("llamacpp (llama-server's native /completion); "
                    "vllm (vLLM's OpenAI API with its ids, salts and counters); openai (any OpenAI-compatible server); "
                    "hf (transformers in this process); openvino (an OpenVINO IR on GenAI's pipeline in this process); "
                    "python (your own runner object in this process (python:MODULE:FACTORY, docs/runner.md))")

# Each family's options module, in the order of FAMILIES (a test keeps them the descriptors' own).
FAMILY_OPTION_MODULES = (hf_options, openvino_options, python_runner_options)


def backend_name(value: str) -> str:
    from oracle.backends import check_platform  # with the registry: only when --backend is given

    try:
        check_platform(value)  # parses it, then the platform tag
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return value



def add_backend_option(group) -> None:
    group.addoption("--backend", metavar="NAME", type=backend_name, default=None,
                    help=f"family[-platform] of what is gated, e.g. llamacpp-sycl, vllm-xpu, hf-cpu; the "
                         f"families: {BACKEND_FAMILIES}; turns the gate on (default: off, the project's own tests "
                         "run)")


def add_family_options(group) -> None:
    """Each family's own options, on the target's group."""
    for module in FAMILY_OPTION_MODULES:
        module.add_options(group)


def foreign_options_refusal(option, family, backend: str) -> str | None:
    """Why a family option given with another family's --backend is refused (it would be ignored without a word),
    in the words of the family that takes it; None when every family option given is `family`'s own."""
    for module in FAMILY_OPTION_MODULES:
        if module.add_options is family.add_options:
            continue
        for flag in module.given(option):
            return module.refusal(flag, backend)
    return None
