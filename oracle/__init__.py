"""oracle: a quality and determinism oracle for LLM inference servers, as a pytest plugin."""

from __future__ import annotations

from .backends import Backend, Completion, CompletionRequest, Counters, RequestFailed, make_backend, parse_backend
from .compare import TokenComparison, TokenSide, compare_tokens, first_divergence
from .evidence import cache_zero_check, speculation_check, speculation_summary
from .records import Condition, Record, load_record, save_record
from .reference import Reference, ReferenceError, load_reference, write_reference
from .suite import Prompt, Suite, SuiteError, load_suite
from .verdicts import Check

__all__ = sorted([
    "Backend", "Check", "Completion", "CompletionRequest", "Condition", "Counters", "Prompt", "Record",
    "Reference", "ReferenceError", "RequestFailed", "Suite", "SuiteError", "TokenComparison", "TokenSide",
    "cache_zero_check", "compare_tokens", "first_divergence", "load_record", "load_reference", "load_suite",
    "make_backend", "parse_backend", "save_record", "speculation_check", "speculation_summary", "write_reference",
])
