"""What every comparison holds equal (`--oracle-compare`): the complete token arrays, or those and every returned
top-k logprob bit for bit. Light: the option's validating type is read by the plugin in every pytest session.

    g.addoption("--oracle-compare", type=compare_mode, default=COMPARE_MODES[0], ...)
"""

from __future__ import annotations

import pytest

__all__ = ["COMPARE_MODES", "compare_mode"]

COMPARE_MODES = ("tokens", "logprobs")  # the first is the default


def compare_mode(value: str) -> str:
    if value not in COMPARE_MODES:
        raise pytest.UsageError(f"--oracle-compare {value!r}: must be tokens (complete token arrays equal) or "
                                "logprobs (tokens equal and every returned top-k logprob bit-identical as float32)")
    return value
