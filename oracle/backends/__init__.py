"""Backends registered by protocol family; `--backend family[-platform]` picks one.

    backend = make_backend("llamacpp-sycl", "http://127.0.0.1:8080")
    backend = make_in_process_backend("hf-cpu", Path("model.gguf"), settings={"dtype": "float32"})
    family_of("vllm-cpu").capabilities       # what the family's backend offers, read before one is built

Each family is its module (protocol, `Capabilities`, and its `FamilyDescriptor` at the end) registered in
`FAMILIES`, the one place that lists them. Server families talk to a URL; in-process families (their
capabilities say `in_process`) load the model themselves. What oracle starts or loads for a family without
--oracle-url / --launch is the target layer's (`oracle.targets.families`).
"""

from __future__ import annotations

__all__ = ["Backend", "BackendSpec", "CacheEvidence", "Capabilities", "Completion", "CompletionRequest", "Counters",
           "FAMILIES", "FamilyDescriptor", "PLATFORMS", "RequestFailed", "TeacherForced", "backend_help",
           "check_platform", "family_of", "is_in_process", "make_backend", "make_in_process_backend",
           "parse_backend", "server_families"]


def __getattr__(name: str):
    # The registry and every family's client load on first use (registry.py): a family's light options module
    # (oracle/backends/<family>_options.py) is read by the plugin in every pytest session, without them.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from oracle.backends import registry

    return getattr(registry, name)
