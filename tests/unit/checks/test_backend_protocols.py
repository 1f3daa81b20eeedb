"""What a check needs of a backend is a small protocol it names, not a method of `Backend`: each family's
backend implements a check's protocol exactly where its capabilities declare what the check needs, and a
backend that declares it yet lacks the protocol gets the check's own answer (compared up to its split, not
offered, not run), never an AttributeError."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from oracle.backends import make_backend
from oracle.backends.base import Backend
from oracle.checks.decode_vs_prefill import DecodePrefillChecks, DecodePrefillSettings
from oracle.checks.decode_vs_prefill.scorer import PrefillScorer
from oracle.checks.sampling_distribution import SamplingChecks
from oracle.checks.sampling_distribution.options import DistributionSettings
from oracle.checks.sampling_distribution.scorer import PathScorer
from oracle.compare.verdicts import INFO, NOT_RUN
from oracle.logits.path import TeacherForcing, candidate_path
from oracle.store.records import Condition, Record

URL = "http://127.0.0.1:9"  # nothing listens: no request may be sent
# Each check's protocol, the capability that declares it, and the methods it names (none of them on Backend).
PROTOCOLS = [(TeacherForcing, "teacher_forcing", ("teacher_forced",)),
             (PrefillScorer, "prefill_scoring", ("prefill_forced", "prefill_chunking")),
             (PathScorer, "sampling", ("scored_path",))]


@pytest.mark.parametrize("family", ["llamacpp", "openai", "vllm-cpu"])
@pytest.mark.parametrize("protocol, capability, methods", PROTOCOLS, ids=[p[1] for p in PROTOCOLS])
def test_a_backend_implements_a_checks_protocol_where_its_capabilities_declare_it(family, protocol,
                                                                                 capability, methods):
    backend = make_backend(family, URL)
    assert isinstance(backend, protocol) == bool(getattr(backend.capabilities, capability)), family


@pytest.mark.parametrize("protocol, capability, methods", PROTOCOLS, ids=[p[1] for p in PROTOCOLS])
def test_no_check_protocol_is_a_method_of_backend(protocol, capability, methods):
    assert not any(name in vars(Backend) for name in methods)


def _declaring(capability: str, value: str = "declared"):
    """The openai backend (which has none of the protocols) with its capabilities saying it has this one."""
    backend = make_backend("openai", URL)
    backend.capabilities = dataclasses.replace(backend.capabilities, **{capability: value})
    return backend


def _record(completion: list[int]) -> Record:
    return Record(id="p", condition=Condition(), prompt_ids=[1, 2, 3], completion_ids=completion,
                  finish_reason="length", top_ids=[[t] for t in completion],
                  top_logprobs=[[-0.1] for _ in completion])


def test_logits_without_teacher_forcing_compares_up_to_the_split_only():
    backend = _declaring("teacher_forcing")
    assert not isinstance(backend, TeacherForcing)
    path = candidate_path(backend, _record([5, 6, 7, 8]), _record([5, 9, 7, 8]), logprobs=2)
    assert path.from_generation == 2 and path.teacher_forced == 0 and path.missing == [2, 3]


def _ran_state():
    return SimpleNamespace(complete=True, interruption=None)


def test_decode_vs_prefill_without_a_prefill_scorer_is_not_offered_saying_why():
    backend = _declaring("prefill_scoring")
    assert not isinstance(backend, PrefillScorer)
    plan = SimpleNamespace(options=SimpleNamespace(check=lambda name: DecodePrefillSettings()))
    checks = DecodePrefillChecks(plan, SimpleNamespace(backend=backend), None, _ran_state())
    for finding in (checks.check(), checks.chunked_check()):
        assert finding.check.verdict == INFO
        assert finding.check.detail == "not offered: openai: it cannot score a path as a prompt"


def test_sampling_distribution_without_a_path_scorer_is_not_run_saying_why():
    settings = DistributionSettings(score_url=URL)
    options = SimpleNamespace(backend="openai", request_timeout=5, check=lambda name: settings)
    checks = SamplingChecks(SimpleNamespace(options=options, reference=None), SimpleNamespace(records={}),
                            SimpleNamespace(rendered=[]), _ran_state())
    check = checks.distribution_check().check
    assert check.verdict == NOT_RUN
    assert check.detail == (f"not run: scoring on --score-url {URL} failed (the openai backend cannot score "
                            "a sampled path's own tokens); nothing was retried")
