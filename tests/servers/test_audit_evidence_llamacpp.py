"""#52's audit on real reports of the embedded llama-server: the canaries and the logits, decode-vs-prefill items
re-derived from what the report stores, not taken from its stated fields.

One module pair of runs on the shared server, each its own process: a reference recorded with the small canaries
(two code items, one 512-token needle, both repeat canaries; schema 2, their completions kept), and a gate against
it with --logits and bars on Mean KLD, Same top p and decode vs prefill. Each test copies the gate's folder, edits
one stated field, gives the edit a matching seal hash (a careful forger: only re-deriving finds it) and checks that
`oracle ledger add` refuses it (exit 2) naming the item and the field, and that `oracle history --audit` of a
ledger that took the report before the edit flags it (exit 1). The untouched report is added and audits clean.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import (NO_WARMUP, SMALL_CANARIES, SMALL_CANARY_KEYWORDS, gate_argv, gate_env, oracle_cli, tiny_rows,
                      write_suite)
from forged_report import reseal

pytestmark = pytest.mark.slow

TOKENS = 8
PROMPT = tiny_rows()[0]["id"]
KEEP = f"{PROMPT} or logits or prefill or {SMALL_CANARY_KEYWORDS}"
BARS = ("--logits", "--kld-max=5", "--same-top1-min=10", "--dvp-max-delta=50", "--prefill-chunks=none")


def _run(folder: Path, *args: str) -> tuple[int, str]:
    done = subprocess.run(gate_argv("-q", f"--oracle-suite={folder / 'one.jsonl'}", f"--max-tokens={TOKENS}",
                                    *NO_WARMUP, *SMALL_CANARIES, "-k", KEEP, *args),
                          cwd=folder, capture_output=True, text=True, timeout=600, env=gate_env())
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def runs(shared_server, tmp_path_factory) -> Path:
    """The folder holding ref/ (the reference, with its canaries' completions) and gate/ (the gate's report)."""
    folder = tmp_path_factory.mktemp("audit-evidence")
    (folder / "pytest.ini").write_text("[pytest]\n")
    write_suite(folder, "one", tiny_rows()[:1])
    code, out = _run(folder, f"--oracle-url={shared_server.url}", "--record=ref", "--report-dir=rec")
    assert code == 0, out[-4000:]
    code, out = _run(folder, f"--oracle-url={shared_server.url}", "--reference=ref", "--report-dir=gate", *BARS)
    assert code == 0, out[-4000:]
    return folder


def test_the_untouched_report_is_added_and_audits_clean(runs, tmp_path):
    report = json.loads((runs / "gate" / "identity.json").read_text())
    ids = {c["id"] for c in report["checks"]}
    assert {"logits", "decode-vs-prefill", "needle[512-d50]", "needle[512-d50]:tokens", "code[mul-7-2]",
            "repeats[sequential]", "code-fresh"} <= ids, ids
    ledger = tmp_path / "ledger.sqlite"
    code, out = oracle_cli(runs, "ledger", "add", "gate", "--ledger", str(ledger))
    assert code == 0 and "1 run(s) added" in out and "unverified" not in out, out
    code, out = oracle_cli(runs, "history", "--audit", "--ledger", str(ledger))
    assert code == 0 and out.startswith("verified") and "0 fail their audit, 0 unverified" in out, out


NEEDLE, CODE, SEQUENTIAL = "needle[512-d50]", "code[mul-7-2]", "repeats[sequential]"


def _needle_ids_changed_after_its_digits(report: dict) -> None:
    """The needle's last token (after its digits: its text still answers right) changed, its hash made to match:
    only comparing its tokens with the reference's again finds it."""
    from oracle.store.records import token_sha256

    kept = report["canary_completions"][NEEDLE]
    kept["completion_ids"][-1] += 1
    report["canaries"][NEEDLE]["completion_sha256"] = token_sha256(kept["completion_ids"])


def _code_answered_wrong(report: dict) -> None:
    """A wrong answer kept as it was, stated right: its text says 15."""
    report["canary_completions"][CODE]["text"] = report["canaries"][CODE]["raw_text"] = " 15"


def _put(path: str, value):
    def edit(report: dict) -> None:
        node = report
        *head, last = path.split("/")
        for part in head:
            node = next(c for c in node if c["id"] == part) if isinstance(node, list) else node[part]
        node[last] = value
    return edit


def _both(*edits):
    def edit(report: dict) -> None:
        for e in edits:
            e(report)
    return edit


# (edit, what the refusal names): each a field a forger edits, the rest of the report as the run wrote it.
CANARY_EDITS = {
    "code ok": (_put(f"canaries/{CODE}/ok", False), f"canaries.{CODE}: field ok is False, but its answer ' 14'"),
    "code text": (_code_answered_wrong, f"canaries.{CODE}: field ok is True, but its answer ' 15' against '14' "
                                        "gives False"),
    "code verdict": (_put(f"canaries/{CODE}/verdict", "info"), f"canaries.{CODE}: field verdict is 'info', but its "
                                                               "answer (ok True) against the reference gives 'pass'"),
    "needle expected": (_put(f"canaries/{NEEDLE}/expected", "1234567"), f"canaries.{NEEDLE}: field expected is "
                                                                        "'1234567', but the needle of seed 1234"),
    "repeats counts": (_put(f"canaries/{SEQUENTIAL}/repeats/unique", 2), f"canaries.{SEQUENTIAL}: field ok is True, "
                                                                         "but its counts (2 unique of 3) gives False"),
    "set stale": (_put("canaries/code-fresh/stale", ["mul-7-2: stale"]), "canaries.code-fresh: field ok is True, but "
                                                                        "its stale list (1 item(s)) gives False"),
    "needle tokens exact": (_needle_ids_changed_after_its_digits,
                            f"canaries.{NEEDLE}: field tokens_vs_reference.verdict is 'exact', but its completion "
                            "against the reference's"),
    "tokens stated divergent": (_put(f"canaries/{SEQUENTIAL}/tokens_vs_reference/verdict", "divergent"),
                                f"canaries.{SEQUENTIAL}: field tokens_vs_reference.verdict is 'divergent', but its "
                                "completion against the reference's"),
    "item's copy": (_put(f"checks/{CODE}/evidence/answer", "wrong"), f"{CODE}: field evidence.answer is 'wrong', but "
                                                                   "its canary row says 'correct'"),
    "repeats text": (_put(f"canary_completions/{SEQUENTIAL}/text", " forged"),
                     f"canary_completions.{SEQUENTIAL}: field text is ' forged', but its token ids are the "
                     "reference's"),
}

# The logits and decode-vs-prefill items: a run that failed its bar, edited to pass (its figures are a failing run's,
# in every place the run writes them; the same config measured KLD 0), a bar or a figure edited in one place.
LOGITS_EDITS = {
    "kld figures": (_both(_put("logits/overall/mean_kld", 6.0), _put(f"logits/per_prompt/{PROMPT}/mean_kld", 6.0)),
                    "logits: field verdict is 'pass', but its figures (logits.overall) against the run's bars: Mean "
                    "KLD 6.000000 > --kld-max 5"),
    "kld bar one place": (_put("logits/thresholds/kld_max", 1e-9), "logits: field logits.thresholds.kld_max is 1e-09,"
                                                                   " but the run was judged under kld_max 5.0"),
    "overall figure": (_put("logits/overall/mean_kld", 0.5), "logits: field logits.overall.mean_kld is 0.5, but its "
                                                             "prompts' figures, weighted by their positions, give"),
    "prompt item": (_put(f"checks/logits[{PROMPT}]/verdict", "pass"), f"logits[{PROMPT}]: field verdict is 'pass', "
                                                                      f"but its figures (logits.per_prompt.{PROMPT})"
                                                                      " gives 'info'"),
    "dvp bar": (_both(_put("seal/judged_under/checks/decode_vs_prefill/max_delta", 0.001),
                      _put("decode_vs_prefill/tolerance_nats", 0.001)),
                "decode-vs-prefill: field verdict is 'pass', but its figures (decode_vs_prefill.modes): one-pass: "
                "|Δlogprob|"),
}


def _edited(runs: Path, to: Path, edit) -> Path:
    shutil.copytree(runs / "gate", to)
    path = to / "identity.json"
    report = json.loads(path.read_text())
    edit(report)
    path.write_text(json.dumps(reseal(report), indent=1))
    return to


def _cli(capsys, *argv: str) -> tuple[int, str]:
    """`oracle ...` in this process (the subprocess runs above show the same command as a user runs it)."""
    from oracle.cli import main

    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("name", [*CANARY_EDITS, *LOGITS_EDITS])
def test_an_edited_field_is_refused_and_flagged_naming_it(runs, tmp_path, capsys, name):
    """Refused by `oracle ledger add` (exit 2, nothing added); a ledger that took the report before the edit is
    flagged by `oracle history --audit` (exit 1), naming the same item and field."""
    edit, named = {**CANARY_EDITS, **LOGITS_EDITS}[name]
    folder = tmp_path / "report"
    shutil.copytree(runs / "gate", folder)
    ledger = str(tmp_path / "ledger.sqlite")
    assert _cli(capsys, "ledger", "add", str(folder), "--ledger", ledger)[0] == 0
    shutil.rmtree(folder)
    _edited(runs, folder, edit)
    code, out = _cli(capsys, "history", "--audit", "--ledger", ledger)
    assert code == 1 and named in out and "1 fail their audit" in out, out
    code, out = _cli(capsys, "ledger", "add", str(folder), "--ledger", str(tmp_path / "other.sqlite"))
    assert code == 2 and named in out and "nothing was added" in out, out


def test_a_passing_item_with_no_evidence_is_named_outcome_checked_only(runs, tmp_path, capsys):
    """An item the report keeps nothing to re-derive from (here a speculation item as a run without its counters
    writes it) is never silently trusted: the audit's line names it."""
    def add_item(report: dict) -> None:
        report["checks"].append({"id": "speculation", "kind": "speculation", "verdict": "pass", "detail": "",
                                 "lines": [], "evidence": {}, "outcome": "passed", "inconclusive_kind": None})
        report["summary"]["checks_passed"] = [len(report["checks"])] * 2

    folder = _edited(runs, tmp_path / "report", add_item)
    ledger = str(tmp_path / "ledger.sqlite")
    assert _cli(capsys, "ledger", "add", str(folder), "--ledger", ledger)[0] == 0
    code, out = _cli(capsys, "history", "--audit", "--ledger", ledger)
    assert code == 0 and out.startswith("verified"), out
    assert ("checked by outcome only (the report keeps no evidence to re-derive their verdicts from): speculation"
            in out), out
