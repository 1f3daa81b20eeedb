"""`oracle fleet` on a real SQLite ledger of report folders (copies of a committed example, each edited into one
machine of a lab): one config across machines (the reference's manifest sha256, wherever it was copied), the
classes of machines whose outputs are identical, the machine that stands apart (outputs; speed by residual), what
differs between machines that disagree, the exit codes and bad input."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from oracle.cli import main
from oracle.ledger.connect import open_ledger
from oracle.ledger.fingerprints import fingerprint
from oracle.ledger.fleet import read_fleet

REPO = Path(__file__).resolve().parents[3]
BASE = REPO / "examples" / "gpu-campaign" / "run-2" / "reports" / "3-spec-draft"
MANIFEST = "ab" * 32
MODEL = "NVIDIA H100 80GB HBM3"


def _oracle(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _machine(tmp_path: Path, name: str, *, verdict: str = "pass", speed: float = 1.0, split: str | None = None,
             server_args: str | None = None, reference: str = "/srv/ref", driver: str = "580.159.04",
             manifest: str = MANIFEST, started: str = "2026-12-07T04:00:00Z") -> Path:
    """One machine's latest run: BASE as if gated on `name` (the same reference copied to `reference`)."""
    folder = tmp_path / "reports" / f"{name}-{started[:10]}"
    shutil.copytree(BASE, folder, ignore=shutil.ignore_patterns("records", "servers", "*.log"))
    data = json.loads((folder / "identity.json").read_text())
    data.update(verdict=verdict, started_utc=started)
    data["reference"] = {"path": reference, "kind": "mtp0", "manifest_sha256": manifest}
    identity = data["identity"]
    identity["host"]["hostname"] = "runner"  # every runner's container says the same: the name is the fleet's
    identity["server_args"] = server_args
    identity["accelerator"]["nvidia-smi"] = f"{MODEL}, {driver}, 81559 MiB"
    identity["machine"] = {"name": name, "accelerator": MODEL, "driver": f"nvidia {driver}",
                           "runtime": "llama-server b7000"}
    stats = data["speed"]["summary"]["conventional_tok_s"]
    stats.update({k: v * speed for k, v in stats.items() if isinstance(v, (int, float))})
    if split:  # a planted other output: the prompt's tokens differ
        data["records"]["finished"][f"{split}@boot1-c1"]["completion_sha256"] = "0" * 64
    (folder / "identity.json").write_text(json.dumps(data, indent=1))
    return folder


def _ledger(tmp_path: Path, capsys, *folders: Path) -> str:
    ledger = str(tmp_path / "ledger.sqlite")
    code, out, err = _oracle(capsys, "ledger", "add", *map(str, folders), "--ledger", ledger)
    assert code == 0, out + err
    return ledger


def test_classes_the_odd_machine_and_the_flag_that_differs(tmp_path, capsys):
    folders = [_machine(tmp_path, "h100-a"), _machine(tmp_path, "h100-b", reference="/home/ci/ref"),
               _machine(tmp_path, "h100-c", verdict="fail", split="code-hashmap", server_args="-ctk q8_0",
                        driver="590.10.01"),
               _machine(tmp_path, "h100-d", speed=0.5),
               # An older run of h100-c that passed: the latest run is the one the page holds.
               _machine(tmp_path, "h100-c", started="2026-12-06T04:00:00Z")]
    ledger = _ledger(tmp_path, capsys, *folders)
    code, out, err = _oracle(capsys, "fleet", "--ledger", ledger)
    assert code == 1, out + err
    # One config although the reference sits at two paths: it is named by its manifest sha256.
    assert out.startswith(f"llamacpp-cuda vs reference {MANIFEST[:16]}  (reference: /home/ci/ref, /srv/ref)")
    assert "class A: h100-a, h100-b, h100-d (identical outputs on 12 prompt(s); top-k logprobs not recorded)" in out
    assert "class B: h100-c (identical outputs on 12 prompt(s)" in out
    assert re.search(r"h100-c +B +fail ", out) and re.search(r"h100-a +A +pass +0/12 +\d+\.\d tok/s "
                                                            r"conventional_tok_s \(headline\)", out)
    assert ("stands apart (outputs): h100-c: class B, while the other NVIDIA H100 80GB HBM3 machines mostly say "
            "class A") in out
    speed = next(line for line in out.splitlines() if "stands apart (speed)" in line)
    assert "h100-d:" in speed and "slower than the other NVIDIA H100 80GB HBM3 machines (residual -" in speed
    assert "h100-a vs h100-c: 1 prompt(s) differ: code-hashmap" in out
    pair = out.split("h100-a vs h100-c:")[1].split(" vs ")[0]
    assert "flag: server_args: None -> -ctk q8_0" in pair
    assert "driver: accelerator.nvidia-smi: NVIDIA H100 80GB HBM3, 580.159.04" in pair and "590.10.01" in pair
    assert "machine." not in pair  # the machine's own name is not a difference of configuration
    assert "h100-a vs h100-b" not in out  # one class: nothing differs that matters
    assert "1 of 4 machine x config fail in their latest run: h100-c · llamacpp-cuda vs reference" in out
    page = (tmp_path / "fleet.html").read_text()  # beside the ledger file
    assert "h100-c" in page and "class B" in page and "flag: server_args: None -&gt; -ctk q8_0" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page) and "<script" not in page


def test_every_machine_passing_exits_0_and_fingerprints_are_stored(tmp_path, capsys):
    ledger = _ledger(tmp_path, capsys, _machine(tmp_path, "m1"), _machine(tmp_path, "m2"))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step's summary\n")
    code, out, err = _oracle(capsys, "fleet", "--ledger", ledger, "--out", str(tmp_path / "p.html"),
                             "--markdown", str(summary))
    assert code == 0, out + err
    assert "class A: m1, m2" in out and "stands apart" not in out and " vs " not in out.split("\n", 1)[1]
    text = summary.read_text()
    assert text.startswith("earlier step's summary\n## oracle fleet\n")  # appended, as $GITHUB_STEP_SUMMARY wants
    assert "every machine's latest run of every config passes" in text and "class A: m1, m2" in text
    opened = open_ledger(ledger, existing=True)
    try:
        fleet = read_fleet(opened)
    finally:
        opened.close()
    run = fleet.configs[0].latest["m1"]
    report = json.loads((Path(run.row["report_dir"]) / "identity.json").read_text())
    meta = report["records"]["finished"]["code-hashmap@boot1-c1"]
    assert run.prompts["code-hashmap"]["fingerprint"] == fingerprint(meta["completion_sha256"], meta["finish_reason"])
    assert run.row["reference_sha256"] == MANIFEST and run.row["accelerator_model"] == MODEL
    assert run.row["runtime"] == "llama-server b7000" and run.row["driver"] == "nvidia 580.159.04"


def test_two_machines_that_differ_name_no_odd_one(tmp_path, capsys):
    """With two machines of one model, which one is out of family cannot be told: both classes, no 'apart'."""
    ledger = _ledger(tmp_path, capsys, _machine(tmp_path, "m1"), _machine(tmp_path, "m2", split="code-hashmap",
                                                                           speed=0.3))
    code, out, _ = _oracle(capsys, "fleet", "--ledger", ledger)
    assert code == 0 and "class A: m1" in out and "class B: m2" in out and "stands apart" not in out
    assert "m1 vs m2: 1 prompt(s) differ: code-hashmap" in out
    assert "no identity field differs: the same configuration said other tokens on these machines" in out


def test_another_reference_is_another_config(tmp_path, capsys):
    ledger = _ledger(tmp_path, capsys, _machine(tmp_path, "m1"), _machine(tmp_path, "m2", manifest="cd" * 32))
    code, out, _ = _oracle(capsys, "fleet", "--ledger", ledger)
    assert code == 0 and out.count("class A:") == 2 and f"reference {'cd' * 8}" in out


@pytest.mark.parametrize("args, says", [
    (["--since", "yesterday"], "--since 'yesterday': not a date; give a UTC date such as 2026-12-01"),
    (["--ledger", "nowhere.sqlite"], "--ledger nowhere.sqlite: no ledger there"),
    (["--out", "{file}/fleet.html"], "--out {file}/fleet.html: cannot be written ("),
    (["--markdown", "{file}/summary.md"], "--markdown {file}/summary.md: cannot be written ("),
])
def test_bad_input_exits_2_and_says_the_fix(tmp_path, capsys, monkeypatch, args, says):
    ledger = _ledger(tmp_path, capsys, _machine(tmp_path, "m1"))
    (tmp_path / "a-file").write_text("")
    monkeypatch.chdir(tmp_path)
    args = [a.replace("{file}", "a-file") for a in args]
    code, out, err = _oracle(capsys, "fleet", *(["--ledger", ledger] if "--ledger" not in args else []), *args)
    assert code == 2, out + err
    assert says.replace("{file}", "a-file") in err and err.startswith("oracle fleet: ")


def test_a_ledger_of_before_the_fleet_is_upgraded_and_its_runs_kept(tmp_path, capsys):
    """A ledger at migration 0001 holding a run (no machine model, no fingerprints): the first `ledger add` brings
    it to HEAD through 0002_fleet and 0003_audit, the old run stays, and the page says it has no fingerprints."""
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import create_engine, text

    from oracle.ledger.connect import MIGRATIONS
    from oracle.ledger.schema import HEAD

    path = tmp_path / "old.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as c:
        config.attributes["connection"] = c
        command.upgrade(config, "0001")
        c.execute(text("INSERT INTO runs (identity_sha256, report_dir, schema_version, started_utc, mode, verdict, "
                       "machine, backend, config, identity_json, added_utc, added_by) VALUES ('x', '/r', 2, "
                       "'2026-12-01T00:00:00Z', 'gate', 'pass', 'old-box', 'llamacpp-cuda', 'llamacpp-cuda vs /r', "
                       "'{}', '2026-12-01T00:00:00Z', 'import')"))
        c.execute(text("INSERT INTO prompts (run_id, prompt, verdict) VALUES (1, 'a', 'exact')"))
    engine.dispose()
    code, out, err = _oracle(capsys, "ledger", "add", str(_machine(tmp_path, "m1")), "--ledger", str(path))
    assert code == 0, out + err
    with create_engine(f"sqlite:///{path}").connect() as c:
        assert c.execute(text("SELECT version_num FROM alembic_version")).scalar() == HEAD == "0003_audit"
    code, out, _ = _oracle(capsys, "fleet", "--ledger", str(path))
    assert code == 0, out
    assert "llamacpp-cuda vs /r" in out
    assert "no fingerprints (appended before them, or a run without records): old-box" in out
