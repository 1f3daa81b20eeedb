"""On a real reference and a real server: a report folder that is, holds or lies inside the reference is refused
before anything is written or sent (the reference byte-identical, no identity.* dropped into it); a prompt beyond
the context the server states is refused at start, before any completion request."""

from __future__ import annotations

import json
import shutil

import httpx
import pytest

from conftest import tiny_rows, tree_digest, write_suite


def _prompt_tokens_total(url: str) -> float:
    """llama-server's own count of the prompt tokens it has processed (its --metrics)."""
    text = httpx.get(f"{url}/metrics", timeout=30).text
    return float(next(line.split()[-1] for line in text.splitlines()
                      if line.startswith("llamacpp:prompt_tokens_total")))


@pytest.fixture
def reference(shared_reference, tmp_path):
    """A copy of the shared reference (a bug here must not touch the one every other test gates against)."""
    ref = tmp_path / "given" / "ref"
    shutil.copytree(shared_reference, ref)
    (tmp_path / "given" / "link").symlink_to(ref, target_is_directory=True)
    return ref


@pytest.mark.parametrize("report, message", [
    ("ref", "*--report-dir */given/ref and --reference */given/ref are the same folder (*): oracle would write "
            "with --report-dir where it reads --reference; nothing was written or sent; give --report-dir a folder "
            "apart from */given/ref*"),
    ("ref/report", "*--report-dir */given/ref/report lies inside --reference */given/ref (*)*"),
    ("link", "*--report-dir */given/link and --reference */given/ref are the same folder*"),
    (".", "*--reference */given/ref lies inside --report-dir */given (*)*"),
])
def test_a_report_folder_over_the_reference_is_refused_and_the_reference_is_untouched(
        pytester, shared_server, reference, tiny_suite, report, message):
    given = reference.parent
    before = tree_digest(given)
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", f"--oracle-url={shared_server.url}",
                                f"--oracle-suite={tiny_suite}", "--max-tokens=32", "--canaries=none",
                                f"--reference={reference}", f"--report-dir={given / report}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert tree_digest(given) == before  # no identity.*, no records, no probe file in the reference or beside it
    assert not (reference / "report").exists()


def test_a_prompt_beyond_the_servers_context_is_refused_before_any_completion(pytester, shared_server, tmp_path):
    """The shared server states 8192 tokens a slot; a prompt of ~10,000 tokens is never sent."""
    long = {"id": "long-doc", "class": "chat", "max_tokens": 16,
            "messages": [{"role": "user", "content": "Summarise: " + "word " * 10_000}]}
    suite = write_suite(tmp_path, "long", [tiny_rows()[0], long])
    before = _prompt_tokens_total(shared_server.url)
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", f"--oracle-url={shared_server.url}",
                                f"--oracle-suite={suite}", "--canaries=none", "--report-dir=report")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*prompt 'long-doc' needs 100* prompt tokens + 16 max_tokens = 100*, beyond the "
                                 "server's context of 8192 tokens per request; nothing was sent; shorten the prompt "
                                 "or its max_tokens (--max-tokens N), or start the server with a larger context*"])
    rep = json.loads((pytester.path / "report" / "identity.json").read_text())
    assert rep["verdict"] == "partial" and rep["interruption"].startswith("refused before any request: prompt "
                                                                          "'long-doc' needs")
    assert not (pytester.path / "report" / "records").exists()
    assert _prompt_tokens_total(shared_server.url) == before  # the server processed no prompt of this run
