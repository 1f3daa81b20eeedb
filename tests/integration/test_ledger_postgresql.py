"""The shared ledger on a real PostgreSQL server (Debian's package, started once per test run): two oracle
processes writing at once into a fresh database (both migrating it), history read back from it, a ledger
that cannot be reached (a wrong password, a server that is down) named with its password hidden, and the audit
(#52) on a ledger migrated from 0001."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, func, select, text

from oracle.ledger.schema import HEAD, runs
from postgres import free_port

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(str(p.parent) for p in (REPO / "examples").rglob("identity.json"))


def _oracle(*args: str, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-m", "oracle", *args], cwd=cwd, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _done(proc: subprocess.Popen) -> tuple[int, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out + err


def test_two_processes_write_one_fresh_ledger_at_once(postgresql, tmp_path):
    url = postgresql.database("two_writers")
    half = len(EXAMPLES) // 2
    # Both start on an empty database: both find it behind, one migrates under the advisory lock, both append;
    # the example they share is added once.
    first = _oracle("ledger", "add", *EXAMPLES[:half + 1], "--ledger", url, cwd=tmp_path)
    second = _oracle("ledger", "add", *EXAMPLES[half:], "--ledger", url, cwd=tmp_path)
    (code1, out1), (code2, out2) = _done(first), _done(second)
    assert code1 == 0 and code2 == 0, out1 + out2
    assert postgresql.password not in out1 + out2 and "oracle:***@127.0.0.1" in out1
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    with engine.connect() as c:
        assert c.execute(select(func.count()).select_from(runs)).scalar() == len(EXAMPLES)
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
        stored = " ".join(str(v) for row in c.execute(select(runs)) for v in row)
    engine.dispose()
    assert postgresql.password not in stored
    code, out = _done(_oracle("history", "--ledger", url, "--out", str(tmp_path / "h.html"), cwd=tmp_path))
    assert code == 1 and "vm · llamacpp-cuda vs /root/keep/ref" in out and postgresql.password not in out
    page = (tmp_path / "h.html").read_text()
    assert "oracle history: postgresql://oracle:***@127.0.0.1" in page and postgresql.password not in page


def test_a_wrong_password_is_named_without_the_password(postgresql, tmp_path):
    wrong = "not-the-" + postgresql.password
    code, out = _done(_oracle("ledger", "add", EXAMPLES[0], "--ledger", postgresql.url(password=wrong),
                              cwd=tmp_path))
    assert code == 2, out
    assert f"the ledger postgresql://oracle:***@127.0.0.1:{postgresql.port}/postgres could not be opened" in out
    assert 'password authentication failed for user "oracle"' in out and wrong not in out


def test_a_server_that_is_down_is_named(postgresql, tmp_path):
    url = f"postgresql://oracle:{postgresql.password}@127.0.0.1:{free_port()}/ledger"
    code, out = _done(_oracle("history", "--ledger", url, cwd=tmp_path))
    assert code == 2, out
    assert "could not be opened (connection" in out and "refused" in out.lower()
    assert postgresql.password not in out and not (tmp_path / "history.html").exists()


def test_the_audit_on_a_shared_ledger_migrated_from_0001(postgresql, tmp_path):
    """#52 on PostgreSQL: a ledger at migration 0001 holding a run is migrated to HEAD (0003_audit) by the next `ledger
    add` (the old row reads `unverified`); a sealed report is added `verified`; `history --audit` re-derives every
    row (0), and flags the sealed report once it is edited with a matching seal hash (1, naming the field)."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import insert

    from forged_report import reseal
    from fuzz_sealed import sealed_planted
    from oracle.ledger.connect import MIGRATIONS
    from oracle.ledger.rows import run_row

    url = postgresql.database("audit")
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
    old = run_row(Path(EXAMPLES[0]), added_by="import")
    from sqlalchemy import inspect

    at_0001 = {c["name"] for c in inspect(engine).get_columns("runs")}  # a row as a ledger at 0001 held it
    columns = {k: v for k, v in old.run.items() if k in at_0001 and k != "identity_sha256"}
    with engine.begin() as c:
        c.execute(text("INSERT INTO runs (identity_sha256, " + ", ".join(columns) + ") VALUES (:identity_sha256, "
                       + ", ".join(f":{k}" for k in columns) + ")"), {"identity_sha256": old.identity_sha256,
                                                                     **columns})
    report = sealed_planted(tmp_path / "planted")
    code, out = _done(_oracle("ledger", "add", str(report), "--ledger", url, cwd=tmp_path))
    assert code == 0 and "1 run(s) added" in out and "unverified" not in out, out
    with engine.connect() as c:
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD
        audits = dict(c.execute(select(runs.c.report_dir, runs.c.audit)).all())
    engine.dispose()
    assert audits == {str(Path(EXAMPLES[0]).resolve()): "unverified", str(report.resolve()): "verified"}
    code, out = _done(_oracle("history", "--audit", "--ledger", url, cwd=tmp_path))
    assert code == 0 and "2 run(s), 0 fail their audit, 1 unverified" in out, out
    path = report / "identity.json"
    data = json.loads(path.read_text())
    data["checks"][1]["verdict"], data["checks"][1]["outcome"] = "exact", "passed"
    data["summary"]["exact"], data["verdict"] = [3, 3], "pass"
    data["summary"]["divergent"], data["summary"]["checks_passed"] = 0, [3, 3]
    path.write_text(json.dumps(reseal(data)))
    code, out = _done(_oracle("history", "--audit", "--ledger", url, cwd=tmp_path))
    assert code == 1 and "tokens[b]: field verdict is 'exact', but its record against the reference gives " \
                         "'divergent'" in out and "1 fail their audit" in out, out
    assert postgresql.password not in out
