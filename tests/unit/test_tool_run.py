"""The tools' one run wrapper (`oracle.tool_run`): each stop in the tool's own words, the tool's stop code
returned, its servers stopped either way, and an error it does not name left to surface."""

from __future__ import annotations

import pytest

from oracle.backends import RequestFailed
from oracle.run.prompts import PromptMismatch
from oracle.targets import TargetError
from oracle.tool_run import StopWords, run_stopping

WORDS = StopWords(server="the candidate's server did not start")


def _run(error: BaseException, words: StopWords = WORDS) -> tuple[int, list[str]]:
    said = []

    def body() -> int:
        raise error

    code = run_stopping(body, stop=lambda why: said.append(why) or 2, cleanup=lambda: said.append("cleaned"),
                        words=words)
    return code, said


@pytest.mark.parametrize("error, why", [
    (KeyboardInterrupt(), "interrupted by Ctrl-C"),
    (TargetError("port 8080 is in use"), "the candidate's server did not start: port 8080 is in use"),
    (RequestFailed("the server answered HTTP 500"), "a request failed (never retried): the server answered HTTP 500"),
])
def test_each_stop_is_said_in_the_tools_words_and_its_servers_are_stopped(error, why):
    assert _run(error) == (2, [why, "cleaned"])


def test_a_finished_run_returns_its_own_code_and_still_cleans_up():
    said = []
    code = run_stopping(lambda: 0, stop=lambda why: 9, cleanup=lambda: said.append("cleaned"), words=WORDS)
    assert (code, said) == (0, ["cleaned"])


def test_a_failure_the_tool_does_not_name_surfaces_after_the_cleanup():
    """repro names no PromptMismatch (bisect does): it is not turned into a stop."""
    with pytest.raises(PromptMismatch):
        _run(PromptMismatch("prompt ids differ"))
    bisect = StopWords(failures=(RequestFailed, PromptMismatch))
    assert _run(PromptMismatch("prompt ids differ"), bisect) == \
        (2, ["a request failed (never retried): prompt ids differ", "cleaned"])
