"""Sampled decoding on the real llama-server: one sampled reference (--temperature 0.8 --oracle-seed 1 --seeds 3, 2 prompts
x 24 tokens) recorded on the shared server, then seeded identity at c1 and across a boot, a gate with other settings
refused, and the distribution check: the same config consistent, a logit-biased candidate shifted, an n-gram
speculative candidate with its verdict and power statement. Scoring goes to the shared server (the reference's model
and config).

Three seeds, not two: 2 prompts x 2 seeds are 4 sequences a side, and the smallest p-value of a permutation test on
4 + 4 sequences is 2/70 = 0.029, above the 0.025 each of the two tests runs at: such a run can only be
`insufficient`. With 6 + 6 it is 2/924.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

from oracle.store.reference import load_reference
from conftest import NO_WARMUP, gate_argv, gate_env, tiny_rows, write_suite

pytestmark = pytest.mark.slow

SETTINGS = ("--temperature=0.8", "--oracle-seed=1", "--seeds=3")
TOKENS = 24


@pytest.fixture(scope="module")
def sampled(shared_server, tmp_path_factory):
    """(suite, reference) of the sampled reference, recorded once on the shared server."""
    folder = tmp_path_factory.mktemp("sampled-reference")
    (folder / "pytest.ini").write_text("[pytest]\n")
    suite = write_suite(folder, "two", tiny_rows()[:2])
    ref = folder / "ref"
    cmd = gate_argv("-q", f"--oracle-url={shared_server.url}", f"--oracle-suite={suite}", f"--max-tokens={TOKENS}",
                    "--canaries=none", *NO_WARMUP, *SETTINGS, f"--record={ref}", f"--report-dir={folder / 'rec'}")
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=600, env=gate_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return suite, ref


def _gate(pytester, sampled, report: str, *extra: str):
    suite, ref = sampled
    folder = pytester.path / report
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", f"--oracle-suite={suite}",
                                f"--max-tokens={TOKENS}", "--canaries=none", *NO_WARMUP, f"--reference={ref}",
                                f"--report-dir={folder}", *extra)
    result.report = json.loads((folder / "identity.json").read_text()) if (folder / "identity.json").exists() else None
    return result


def test_same_settings_are_seed_exact_at_c1_and_across_a_boot(pytester, sampled):
    suite, ref = sampled
    manifest = json.loads((ref / "manifest.json").read_text())
    assert manifest["run"]["sampling"] == {"temperature": 0.8, "top_p": 1.0, "seeds": [1, 2, 3], "top_k": 0,
                                           "min_p": 0.0}
    seeds = [load_reference(ref).record(f"code-palindrome~s{s}").completion_ids for s in (1, 2, 3)]
    assert len({tuple(s) for s in seeds}) == 3  # really sampled: each seed its own tokens
    result = _gate(pytester, sampled, "boots", *SETTINGS, "--boots=2")  # the embedded default: restartable
    assert result.ret == 0, result.stdout.str()[-3000:]
    rep = result.report
    assert rep["token_match"]["c1"]["vs_reference"]["k"] == rep["token_match"]["c1"]["vs_reference"]["n"] == 6 * TOKENS
    assert rep["token_match"]["boot 2"]["vs_c1"]["rate"] == 1.0 and rep["boots"]["2"]["verdict"] == "exact"
    assert rep["token_match"]["c1"]["vs_reference"]["wilson95"][0] > 0.97
    assert "near-tie classification does not apply under sampling" in rep["sampling"]["near_ties"]
    assert "Near-tie classification does not apply" in (pytester.path / "boots" / "identity.md").read_text()


def test_other_settings_are_refused_naming_both(pytester, sampled, shared_server):
    result = _gate(pytester, sampled, "refused", f"--oracle-url={shared_server.url}", "--temperature=0.9", "--oracle-seed=1",
                   "--seeds=3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*recorded with --temperature 0.8 --top-p 1 --oracle-seed 1 --seeds 3 and this gate asks "
                                 "for --temperature 0.9 --top-p 1 --oracle-seed 1 --seeds 3*"])


def _distribution(pytester, sampled, report: str, url: str, score_url: str, *extra: str):
    return _gate(pytester, sampled, report, f"--oracle-url={url}", *SETTINGS, "--sampling-check=distribution",
                 f"--score-url={score_url}", *extra)


def _audited_from_its_figures(pytester, same, capsys) -> None:
    """#52: the ledger re-derives the item from its stored p-values and detectable shift: the report as written is
    added; its p-value edited to a shifted run's (seal hash made to match) is refused, naming the item."""
    from forged_report import reseal
    from oracle.cli import main

    folder = pytester.path / "same"
    assert main(["ledger", "add", str(folder), "--ledger", str(pytester.path / "a.sqlite")]) == 0
    edited = pytester.path / "same-edited"
    shutil.copytree(folder, edited)
    data = json.loads((edited / "identity.json").read_text())
    data["sampling"]["distribution"]["p_value_loglik"] = 0.001
    (edited / "identity.json").write_text(json.dumps(reseal(data)))
    capsys.readouterr()
    assert main(["ledger", "add", str(edited), "--ledger", str(pytester.path / "b.sqlite")]) == 2
    assert "sampling-distribution: field verdict is 'consistent', but its p-values (0.001" in capsys.readouterr().err


def test_distribution_check_same_config_consistent_biased_shifted_ngram_with_power(pytester, sampled, shared_server,
                                                                                 llama_server, capsys):
    same = _distribution(pytester, sampled, "same", shared_server.url, shared_server.url, "--max-shift=2")
    assert same.ret == 0, same.stdout.str()[-3000:]
    dist = same.report["sampling"]["distribution"]
    assert dist["verdict"] == "consistent" and dist["p_value_loglik"] == 1.0
    assert dist["detectable_shift"] < 2 and dist["sequences"] == {"reference": 6, "candidate": 6}
    _audited_from_its_figures(pytester, same, capsys)
    # A candidate whose sampler favours "." and "," (+10 nats on their logits): its tokens are less likely under the
    # reference model. (+4 on ",", "." and " the" moved 24-token code answers by -0.04 nats/token, +6 by -0.5 with
    # p 0.09: 6 + 6 sequences detect about 0.6-0.7 nats/token.)
    biased = llama_server("--logit-bias 30+10 --logit-bias 28+10")
    shifted = _distribution(pytester, sampled, "biased", biased.url, shared_server.url, "--max-shift=2")
    assert shifted.ret == 1
    dist = shifted.report["sampling"]["distribution"]
    assert dist["verdict"] == "shifted" and dist["effect_nats_per_token"] < 0
    shifted.stdout.fnmatch_lines(["*sampling-distribution: shifted: mean per-token log-likelihood*"])
    ngram = llama_server("--spec-type ngram-simple")
    spec = _distribution(pytester, sampled, "ngram", ngram.url, shared_server.url, "--max-shift=2")
    dist = spec.report["sampling"]["distribution"]
    assert dist["verdict"] in ("consistent", "shifted", "insufficient")
    assert re.match(r"with 2 prompts x 3 seeds x \d+ tokens this run can detect a shift of [0-9.]+ nats/token in "
                    r"mean per-token log-likelihood at 95% with 80% power$", dist["power_statement"]), dist
    assert dist["detectable_shift"] > 0 and dist["p_value_loglik"] is not None
    check = next(c for c in spec.report["checks"] if c["id"] == "sampling-distribution")
    assert dist["power_statement"] in check["detail"]
