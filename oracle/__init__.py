"""oracle: a quality and determinism oracle for LLM inference servers, as a pytest plugin.

The public API below loads on first use (`oracle.load_suite` imports oracle.run.suite then): pytest imports this
package in every session of an environment where oracle is installed (its `pytest11` entry point), and a session
without --backend imports nothing else of oracle's beyond the option declarations (docs/architecture.md).
"""

from __future__ import annotations

import importlib

# Each public name and the module that defines it.
_PUBLIC: dict[str, str] = {
    **dict.fromkeys(("Backend", "Completion", "CompletionRequest", "Counters", "RequestFailed", "make_backend",
                     "parse_backend"), "oracle.backends"),
    **dict.fromkeys(("TokenComparison", "TokenSide", "compare_tokens", "first_divergence"), "oracle.compare.tokens"),
    **dict.fromkeys(("cache_zero_check", "speculation_check", "speculation_summary"), "oracle.compare.evidence"),
    **dict.fromkeys(("Condition", "Record", "load_record", "save_record"), "oracle.store.records"),
    **dict.fromkeys(("Reference", "ReferenceError", "load_reference", "write_reference"), "oracle.store.reference"),
    **dict.fromkeys(("Prompt", "Suite", "SuiteError", "load_suite"), "oracle.run.suite"),
    "Check": "oracle.compare.verdicts",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'oracle' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
