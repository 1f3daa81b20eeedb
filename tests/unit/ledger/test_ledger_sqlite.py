"""The ledger on a real SQLite file: the committed example reports (report schemas 1 and 2) imported once each,
the migrations giving exactly the schema, history's table and exit code, what changed between the last pass and
the first fail (a package, an environment variable, a launch flag), --check, and bad input."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select

from oracle.cli import main
from oracle.ledger.connect import open_ledger, upgrade
from oracle.ledger.schema import HEAD, metadata, prompts, runs

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = sorted(p.parent for p in (REPO / "examples").rglob("identity.json"))
CAMPAIGN = REPO / "examples" / "gpu-campaign" / "run-2" / "reports"


def _oracle(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _count(ledger: Path, table=runs) -> int:
    with create_engine(f"sqlite:///{ledger}").connect() as c:
        return c.execute(select(func.count()).select_from(table)).scalar()


def _copy(src: Path, dst: Path, **edit) -> Path:
    """A copy of a report folder with its identity.json edited: started_utc, verdict, mode, identity fields."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("records", "servers", "*.log"))
    data = json.loads((dst / "identity.json").read_text())
    for key, value in edit.items():
        if key.startswith("identity."):
            *path, last = key.split(".")[1:]
            node = data["identity"]
            for part in path:
                node = node.setdefault(part, {})
            node[last] = value
        else:
            data[key] = value
    (dst / "identity.json").write_text(json.dumps(data, indent=1))
    return dst


def test_every_committed_example_imports_once(tmp_path, capsys):
    """Report schema 1 (examples/gpu-h200, cross-engine-cpu) and 2 (the rest) read; a second add adds nothing."""
    assert {json.loads((p / "identity.json").read_text())["schema_version"] for p in EXAMPLES} == {1, 2}
    ledger = tmp_path / "ledger.sqlite"
    code, out, _ = _oracle(capsys, "ledger", "add", *map(str, EXAMPLES), "--ledger", str(ledger))
    assert code == 0 and f"{len(EXAMPLES)} run(s) added, 0 already there, in {ledger}" in out
    code, out, _ = _oracle(capsys, "ledger", "add", *map(str, EXAMPLES[:2]), "--ledger", str(ledger))
    assert code == 0 and "0 run(s) added, 2 already there" in out
    assert _count(ledger) == len(EXAMPLES)
    assert _count(ledger, prompts) > 100  # each prompt's verdict of each run (12 prompts in most)
    with create_engine(f"sqlite:///{ledger}").connect() as c:
        row = c.execute(select(runs).where(runs.c.report_dir == str(CAMPAIGN / "3-spec-draft"))).one()
    assert (row.verdict, row.mode, row.schema_version) == ("fail", "gate", 2)
    assert (row.prompts_exact, row.prompts_total) == (0, 12)
    assert row.machine == "vm" and row.accelerator.startswith("NVIDIA H100") and row.driver == "nvidia 580.159.04"
    assert row.tok_s == pytest.approx(278.0, abs=1) and row.joules_per_token is not None
    assert row.speedup is not None and row.speedup_low < row.speedup < row.speedup_high


@pytest.mark.parametrize("how", ["migrations", "new ledger"])
def test_the_migrations_give_exactly_the_schema(tmp_path, how):
    """Alembic's own comparison with the tables in schema.py finds nothing to add, both for a database built by
    the migrations and for a new ledger (made from schema.py and stamped HEAD, which Alembic reads as its own)."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    if how == "migrations":
        upgrade(create_engine(f"sqlite:///{tmp_path / 'l.sqlite'}"))
    ledger = open_ledger(tmp_path / "l.sqlite")
    with ledger.engine.connect() as c:
        assert MigrationContext.configure(c).get_current_revision() == HEAD
        assert compare_metadata(MigrationContext.configure(c), metadata) == []
    upgrade(ledger.engine)  # Alembic finds it at HEAD: nothing to do, nothing fails


def test_history_names_the_package_and_the_variable_that_changed(tmp_path, capsys):
    """record (pass), gate (pass), then the same with a package version and an environment variable changed
    (fail): history names the first failing run, both changes, and exits 1; filtered away, it exits 0."""
    rec = _copy(CAMPAIGN / "1-record-mtp0", tmp_path / "r1-record")
    same = _copy(CAMPAIGN / "1-record-mtp0", tmp_path / "r2-same", mode="gate", started_utc="2026-12-06T01:00:00Z",
                 reference={"path": "/root/keep/ref"}, recorded_reference=None)
    bad = _copy(CAMPAIGN / "1-record-mtp0", tmp_path / "r3-bad", mode="gate", started_utc="2026-12-07T01:00:00Z",
                verdict="fail", reference={"path": "/root/keep/ref"}, recorded_reference=None,
                **{"identity.packages.torch": "9.9.9", "identity.environment.GGML_SCHED_MAX_COPIES": "1"})
    ledger = tmp_path / "ledger.sqlite"
    assert _oracle(capsys, "ledger", "add", str(rec), str(same), str(bad), "--ledger", str(ledger))[0] == 0
    code, out, _ = _oracle(capsys, "history", "--ledger", str(ledger))
    assert code == 1, out
    torch = json.loads((rec / "identity.json").read_text())["identity"]["packages"].get("torch", "absent")
    assert f"first fail: 2026-12-07T01:00:00Z (fail (unverified)) {bad}" in out  # copies of a report without a seal
    assert f"last pass:  2026-12-06T01:00:00Z {same}" in out
    assert f"package: packages.torch: {torch} -> 9.9.9" in out
    assert "environment variable: environment.GGML_SCHED_MAX_COPIES: absent -> 1" in out
    assert "1 of 1 config(s) fail in their latest run: vm · llamacpp-cuda vs /root/keep/ref" in out
    page = (tmp_path / "history.html").read_text()
    assert "packages.torch" in page and "GGML_SCHED_MAX_COPIES" in page and page.count("<svg") == 2
    assert not re.search(r"(src|href)=\"https?:|url\((?!#)", page) and "<script" not in page  # self-contained
    code, out, _ = _oracle(capsys, "history", "--ledger", str(ledger), "--since", "2026-12-06T12:00",
                           "--out", str(tmp_path / "h2.html"))
    assert code == 1 and "r3-bad" in out and "r2-same" not in out
    code, out, _ = _oracle(capsys, "history", "--ledger", str(ledger), "--machine", "elsewhere",
                           "--out", str(tmp_path / "h3.html"))
    assert code == 0 and "the ledger holds no run that these filters keep" in out
    code, out, _ = _oracle(capsys, "history", "--ledger", str(ledger), "--backend", "llamacpp-cuda",
                           "--out", str(tmp_path / "h4.html"))
    assert code == 1


def test_history_names_the_launch_flag_and_the_bisect_line(tmp_path, capsys):
    """The campaign's record (pass) then the draft-speculation gate (fail): the flags that differ and the
    `oracle bisect` line over the two launch commands."""
    ledger = tmp_path / "ledger.sqlite"
    assert _oracle(capsys, "ledger", "add", str(CAMPAIGN / "1-record-mtp0"), str(CAMPAIGN / "3-spec-draft"),
                   "--ledger", str(ledger))[0] == 0
    code, out, _ = _oracle(capsys, "history", "--ledger", str(ledger))
    assert code == 1
    assert "flag: --spec-type draft-simple" in out and "flag: -ngld 99" in out
    assert ("bisect the launch differences: oracle bisect --backend llamacpp-cuda --good 'exec /root/keep/"
            "llama.cpp/build/bin/llama-server -m /root/keep/model.gguf -ngl 99 -np 1 -c 16384") in out
    speed = (tmp_path / "history.html").read_text().split('<figure class="speed">')[1]
    for label in ("tok/s", "× reference", "J/token", "energy per token", "p10–max over prompts",
                  "95% interval between-run", "speed over time (conventional_tok_s)"):
        assert f">{label}</text>" in speed, label


def test_history_of_a_ledger_that_is_not_there_is_refused(tmp_path, capsys):
    code, _, err = _oracle(capsys, "history", "--ledger", str(tmp_path / "typo.sqlite"))
    assert code == 2 and f"--ledger {tmp_path / 'typo.sqlite'}: no ledger there" in err
    assert not (tmp_path / "typo.sqlite").exists()


def test_a_folder_as_the_ledger_is_its_ledger_sqlite_for_add_and_history_alike(tmp_path, capsys):
    """`ledger add --ledger DIR` writes DIR/ledger.sqlite; `history --ledger DIR` reads the same file (it was refused
    as "no ledger there"); a folder without one is refused naming what it lacks, and stays empty."""
    folder = tmp_path / "ledgers"
    folder.mkdir()
    code, _, err = _oracle(capsys, "history", "--ledger", str(folder))
    assert code == 2 and f"--ledger {folder}: no ledger there (no ledger.sqlite in that folder)" in err, err
    assert list(folder.iterdir()) == []
    assert _oracle(capsys, "ledger", "add", str(CAMPAIGN / "1-record-mtp0"), str(CAMPAIGN / "3-spec-draft"),
                   "--ledger", str(folder))[0] == 0
    assert [p.name for p in folder.iterdir()] == ["ledger.sqlite"]
    code, out, _ = _oracle(capsys, "history", "--ledger", str(folder))
    assert code == 1 and "flag: --spec-type draft-simple" in out, out


@pytest.mark.parametrize("command", [["history"], ["history", "--audit"], ["history", "--check"], ["fleet"]])
def test_an_empty_file_as_the_ledger_is_refused_and_left_empty(tmp_path, capsys, command):
    """A read of an empty file (`touch`ed, or a typo naming another one) once made it a ledger, exit 0."""
    empty = tmp_path / "notes.txt"
    empty.touch()
    code, _, err = _oracle(capsys, *command, "--ledger", str(empty))
    assert code == 2 and f"--ledger {empty}: an empty file, not a ledger" in err, err
    assert empty.stat().st_size == 0


def test_history_exits_0_when_every_latest_run_passes(tmp_path, capsys):
    ledger = tmp_path / "ledger.sqlite"
    assert _oracle(capsys, "ledger", "add", str(CAMPAIGN / "1-record-mtp0"), "--ledger", str(ledger))[0] == 0
    code, out, _ = _oracle(capsys, "history", "--ledger", str(ledger))
    assert code == 0 and "0 of 1 config(s) fail in their latest run" in out


def test_check_lists_missing_and_changed_reports_and_deletes_nothing(tmp_path, capsys):
    kept = _copy(CAMPAIGN / "1-record-mtp0", tmp_path / "kept")
    moved = _copy(CAMPAIGN / "3-spec-draft", tmp_path / "moved")
    edited = _copy(CAMPAIGN / "3-spec-draft", tmp_path / "edited", started_utc="2026-12-06T00:00:00Z")
    ledger = tmp_path / "ledger.sqlite"
    assert _oracle(capsys, "ledger", "add", str(kept), str(moved), str(edited), "--ledger", str(ledger))[0] == 0
    code, out, _ = _oracle(capsys, "history", "--check", "--ledger", str(ledger))
    assert code == 0 and "3 run(s), 0 missing or changed" in out
    moved.rename(tmp_path / "elsewhere")
    (edited / "identity.json").write_text((edited / "identity.json").read_text().replace('"fail"', '"pass"', 1))
    code, out, _ = _oracle(capsys, "history", "--check", "--ledger", str(ledger))
    assert code == 1
    assert f"missing    {moved} (run of " in out and f"changed    {edited} (run of 2026-12-06T00:00:00Z)" in out
    assert "3 run(s), 2 missing or changed; nothing was deleted" in out
    assert _count(ledger) == 3 and (tmp_path / "elsewhere" / "identity.json").is_file()


def test_bad_input_is_named_with_the_fix(tmp_path, capsys):
    code, _, err = _oracle(capsys, "ledger", "add", str(tmp_path), "--ledger", str(tmp_path / "l.sqlite"))
    assert code == 2 and f"oracle ledger: {tmp_path}: no identity.json there; give a report folder written by " \
                          "oracle" in err
    assert not (tmp_path / "l.sqlite").exists()  # every folder is read before the ledger is opened
    code, _, err = _oracle(capsys, "history", "--ledger", "mysql://u:hunter2secret@db/x")
    assert code == 2 and "--ledger mysql://u:***@db/x: not a ledger" in err and "hunter2secret" not in err
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "identity.json").write_text("{not json")
    code, _, err = _oracle(capsys, "ledger", "add", str(tmp_path / "bad"))
    assert code == 2 and "identity.json: cannot be read as JSON" in err and "the report is damaged" in err
