"""Property-based fuzzing of server answers: a server on 127.0.0.1 (tests/helpers/garbage_server.py) answers one
route with generated garbage or a valid-looking but wrong answer, and forwards the rest to the shared real
llama-server; a gate runs through it against the shared reference.

The properties: no Python traceback reaches the user, the exit code is the documented one (a start-up probe of
the wrong shape, or a /props chat template that is not Jinja or does not render the reference's prompts: refused
before any request, 4; a generation answered with garbage: the run stops, 2; never 0,
never 1 (garbage is no regression), never 3), the garbage was sent once (never retried), and the reference is
byte-identical afterwards.
"""

from __future__ import annotations

import itertools
import json

import pytest
import httpx
from hypothesis import HealthCheck, Phase, example, given, settings

from conftest import NO_WARMUP, tree_digest
from fuzz import Outcome, problems
from fuzz_answers import chat_templates, completion_answers, probe_answers
from garbage_server import GarbageServer

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore")]


def budget(n: int):
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    phases=(Phase.explicit, Phase.generate),
                    suppress_health_check=(HealthCheck.function_scoped_fixture, HealthCheck.too_slow))


_CASES = itertools.count(1)


def _gate(gate_run, server: GarbageServer, reference, report: str) -> Outcome:
    """The gate through the garbage server, into a report folder of its own (one per example)."""
    result = gate_run(*NO_WARMUP, f"--oracle-url={server.url}", f"--reference={reference}",
                      report=f"{report}-{next(_CASES)}")
    return Outcome(int(result.ret), "\n".join(result.outlines + result.errlines))


@budget(8)
@given(answer=completion_answers(max_tokens=32))
def test_a_generation_answered_with_garbage_stops_the_run_with_exit_2(gate_run, shared_server, shared_reference,
                                                                       answer):
    what, body = answer
    before = tree_digest(shared_reference)
    with GarbageServer(shared_server.url, route="/completion", status=200, body=body) as server:
        outcome = _gate(gate_run, server, shared_reference, "garbage")
    found = problems(outcome, expected={2}, before=before, after=tree_digest(shared_reference))
    if server.answered > 1:
        found.append(f"sent {server.answered} times (retried)")
    assert not found, f"{what}: {found}\n{outcome.output[-2500:]}"


@budget(6)
@given(answer=probe_answers())
def test_a_start_up_probe_of_the_wrong_shape_is_refused_before_any_request(gate_run, shared_server,
                                                                          shared_reference, answer):
    route, what, body = answer
    before = tree_digest(shared_reference)
    with GarbageServer(shared_server.url, route=route, status=200, body=body,
                       content_type="application/json") as server:
        outcome = _gate(gate_run, server, shared_reference, "probe")
    found = problems(outcome, expected={4}, before=before, after=tree_digest(shared_reference))
    assert not found, f"{what}: {found}\n{outcome.output[-2500:]}"


@budget(6)
@given(template=chat_templates())
@example(template="{% if %}")  # #52: not valid Jinja was an INTERNALERROR with a Jinja traceback (exit 3)
def test_a_chat_template_that_does_not_render_is_refused_before_any_request(gate_run, shared_server,
                                                                           shared_reference, template):
    """/props answered as the real server answers it, its chat_template replaced."""
    props = httpx.get(f"{shared_server.url}/props", timeout=30).json()
    body = json.dumps(props | {"chat_template": template}).encode()
    before = tree_digest(shared_reference)
    with GarbageServer(shared_server.url, route="/props", status=200, body=body,
                       content_type="application/json") as server:
        outcome = _gate(gate_run, server, shared_reference, "template")
    found = problems(outcome, expected={4}, before=before, after=tree_digest(shared_reference))
    if template == "{% if %}" and "the server's chat template is not valid Jinja" not in outcome.output:
        found.append("the message does not say the chat template is not valid Jinja")
    assert not found, f"chat template {template!r}: {found}\n{outcome.output[-2500:]}"
