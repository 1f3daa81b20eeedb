"""The HTTP families' clients: --request-timeout bounds the administration requests as it bounds a generation."""

from __future__ import annotations

from oracle.backends.base import DEFAULT_TIMEOUT
from oracle.backends.http import HttpClients


def _clients(timeout_s):
    clients = HttpClients()
    clients._connect("http://127.0.0.1:1", transport=None, async_transport=None, timeout_s=timeout_s)
    return clients


def test_the_administration_client_keeps_the_request_timeout():
    """A server frozen between two conditions (its /metrics read) stops the run after --request-timeout, not 600 s."""
    clients = _clients(7)
    assert clients._client.timeout.read == 7
    assert clients.async_client().timeout.read == 7


def test_without_a_request_timeout_both_keep_the_default():
    clients = _clients(None)
    assert clients._client.timeout == DEFAULT_TIMEOUT
    assert clients.async_client().timeout == DEFAULT_TIMEOUT
