"""oracle: a quality and determinism oracle for LLM inference servers, as a pytest plugin."""

from __future__ import annotations

from oracle.backends import Backend, Completion, CompletionRequest, Counters, RequestFailed, make_backend, parse_backend
from oracle.compare.tokens import TokenComparison, TokenSide, compare_tokens, first_divergence
from oracle.compare.evidence import cache_zero_check, speculation_check, speculation_summary
from oracle.store.records import Condition, Record, load_record, save_record
from oracle.store.reference import Reference, ReferenceError, load_reference, write_reference
from oracle.run.suite import Prompt, Suite, SuiteError, load_suite
from oracle.compare.verdicts import Check

__all__ = sorted([
    "Backend", "Check", "Completion", "CompletionRequest", "Condition", "Counters", "Prompt", "Record",
    "Reference", "ReferenceError", "RequestFailed", "Suite", "SuiteError", "TokenComparison", "TokenSide",
    "cache_zero_check", "compare_tokens", "first_divergence", "load_record", "load_reference", "load_suite",
    "make_backend", "parse_backend", "save_record", "speculation_check", "speculation_summary", "write_reference",
])
