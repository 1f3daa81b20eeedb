"""What a failed generation request says: the server's own words, whatever shape its error body has."""

from __future__ import annotations

import httpx
import pytest

from oracle.backends.faults import broken, error_event, refused, server_message


@pytest.mark.parametrize("body, words", [
    (b'{"error": {"code": 500, "message": "out of memory", "type": "server_error"}}', "out of memory (server_error)"),
    (b'{"error": {"message": "bad logprobs"}}', "bad logprobs"),
    (b'{"error": "slot unavailable"}', "slot unavailable"),
    (b'{"detail": "Not Found"}', "Not Found"),
    (b"upstream connect error", "upstream connect error"),
    (b"", "(empty body)"),
    ({"error": {"code": 500, "message": "crashed", "type": "server_error"}}, "crashed (server_error)"),
])
def test_the_servers_own_message_is_quoted(body, words):
    assert server_message(body) == words


def test_4xx_and_5xx_say_who_failed():
    assert str(refused(503, b'{"error": {"message": "Loading model"}}', route="/completion")) == \
        "the server answered HTTP 503 on POST /completion (the server failed): Loading model"
    assert str(refused(400, b'{"error": {"message": "too long"}}', route="/v1/completions")) == \
        "the server answered HTTP 400 on POST /v1/completions (the request was refused): too long"
    assert str(error_event({"error": {"message": "boom"}}, route="/completion", after=4)) == \
        "the server sent an error inside the stream of POST /completion after 4 tokens: boom"


def test_a_hang_names_request_timeout_and_a_reset_says_so():
    hang = broken(httpx.ReadTimeout("timed out"), url="http://s/completion", after=5, read_timeout_s=30.0)
    assert str(hang) == ("POST http://s/completion: the server sent nothing for 30 s after 5 tokens "
                         "(--request-timeout 30): it hangs, or needs a longer --request-timeout (ReadTimeout: timed out)")
    reset = broken(httpx.ReadError(""), url="http://s/completion", after=2, read_timeout_s=30.0)
    assert str(reset) == ("POST http://s/completion: the connection broke after 2 tokens: reset or closed by the "
                          "server (ReadError)")
    gone = broken(httpx.ConnectError("refused"), url="http://s/completion", after=0, read_timeout_s=30.0)
    assert str(gone) == "POST http://s/completion: could not connect: the server is gone (ConnectError: refused)"


def test_a_deadline_reached_in_silence_is_named_a_hang():
    """The total deadline comes first for a server that stopped sending: the words say it hangs, not that it streams."""
    from oracle.backends.faults import overdue
    hang = overdue(url="http://s/completion", after=5, total_s=20, silent_s=19.4)
    assert str(hang).startswith("POST http://s/completion: the server sent no token for 19 s after 5 tokens "
                                "(keep-alive comments are not tokens), and the request reached --request-timeout "
                                "20 s in all: it hangs")
    endless = overdue(url="http://s/completion", after=450, total_s=20, silent_s=0.01)
    assert "the server streams without end, or is slow" in str(endless)

