"""Every family runs the whole flow (docs/families.md): the openai family on a llama-server that oracle launches,
and the in-process hf family, each in one small run that takes every capability the family offers.

The verdicts that fail live beside each capability's own tests (a changed token under load fails a ladder level,
a restart that changes a token fails its boot, a wrong stored answer fails a canary); these runs prove that the
capability is reached on the family at all and says what it saw."""

from __future__ import annotations

import re
import subprocess

import datasets  # noqa: F401  (imported here, outside pytester's in-process runs: pyarrow cannot load twice)
import pytest

from conftest import (SMALL_CANARIES, SMALL_CANARY_KEYWORDS, assert_small_canaries_ran, gate_argv, gate_env,
                      launch_line, tiny_rows, write_suite)

pytestmark = pytest.mark.slow

KEEP = ("-k", "code-palindrome or code-hashmap or math-derivative or cache or speculation or boot or "
              "ladder or " + SMALL_CANARY_KEYWORDS)

def test_openai_family_on_a_launched_speculative_llama_server_runs_ladder_boots_canaries_and_speed(
        gate_run, llama_tools, model_path, read_report):
    # A draft model (the same GGUF) drafts at every step, so the speculative path surely runs within 32 tokens.
    launch = launch_line(llama_tools, model_path, f"-np 2 --spec-type draft-simple -md {model_path}")
    result = gate_run("--backend=openai", f"--launch={launch}", "--speculative", "--ladder=2", "--boots=2",
                      *SMALL_CANARIES, *KEEP, report="openai-flow")
    assert result.ret == 0, result.stdout.str()[-3000:]
    rep = read_report(result.folder)
    checks = {c["id"]: c for c in rep["checks"]}
    level = rep["ladder"]["c2"]
    assert level["overlap"]["reached"] == 2 and checks["ladder[c2]"]["outcome"] == "passed"
    assert checks["boot[2]"]["outcome"] == "passed" and rep["boots"]["2"]["detail"].startswith("boot 2: ")
    # llama-server's OpenAI route gives no logprobs entry (so no id) for the drafted tokens it accepts: ids that
    # do not spell the text are never kept, and these answers are compared on their text, as the report says.
    assert re.fullmatch(r"none for (\d+) of \1 requests: text compared", rep["evidence"]["token_ids"]), rep["evidence"]
    spec = checks["speculation"]
    assert spec["outcome"] == "passed" and "drafted" in spec["detail"], spec
    assert_small_canaries_ran(rep)
    assert rep["speed"]["summary"]["ttft_s"]["prompts"] == 3 and rep["speed"]["token_times"] == "bytes-arrival"


def test_hf_family_in_process_runs_canaries_and_the_speed_card(tmp_path, read_report):
    """At its smallest (hf decodes about 5 tokens a second on this CPU): one prompt x 8 tokens, two repeats. In a
    process of its own: transformers imports parts of torch lazily, and after an in-process hf run has dropped them
    (pytester restores sys.modules) torch refuses to register them a second time."""
    folder = tmp_path / "hf-flow"
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    suite = write_suite(tmp_path, "one", tiny_rows()[:1])
    cmd = gate_argv("--backend=hf-cpu", f"--oracle-suite={suite}", f"--report-dir={folder}", "--max-tokens=8",
                    *SMALL_CANARIES, "--repeats=2", *KEEP)
    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600, env=gate_env())
    assert done.returncode == 0, done.stdout[-3000:]
    rep = read_report(folder)
    assert rep["identity"]["target"] == "in-process" and rep["verdict"] == "pass"
    assert_small_canaries_ran(rep, repeats=2)
    assert rep["speed"]["summary"]["ttft_s"]["prompts"] == 1 and rep["speed"]["label"] == "insufficient"
