"""oracle repro's orchestration and exit codes with the server starts planted (Replayer.probe / verify replaced):
0 written, 1 not reproduced (in the search, or not both times in the verify), 2 a server that does not start."""

from __future__ import annotations

import io
import json

import pytest

from oracle.repro import ReproInput, run_repro
from oracle.repro.search import Replayer, Verified
from oracle.targets import TargetError
from planted_report import expected_ids, planted_report


@pytest.fixture
def plant(monkeypatch):
    def install(split_at, verify_observed):
        def probe(self, prompts, max_tokens):
            self.starts += 1
            return split_at if split_at is not None and max_tokens > split_at else None

        def verify(self, prompts, max_tokens, *, repeats=2, shown=lambda ids: ids):
            self.starts += 1
            if isinstance(verify_observed, Exception):
                raise verify_observed
            shown(verify_observed[0])
            return Verified([("/completion", {"prompt": [1, 2, 4], "n_predict": max_tokens})], verify_observed,
                            ["t"] * len(verify_observed), {}, "srv --port {port}", None)

        monkeypatch.setattr(Replayer, "probe", probe)
        monkeypatch.setattr(Replayer, "verify", verify)

    return install


def run(tmp_path, **kw):
    out = io.StringIO()
    md = run_repro(planted_report(tmp_path, splits={"b": 3}), stream=out, **kw)
    assert md == tmp_path / "gate" / "repro" / "repro.md" and md.is_file()
    data = json.loads((md.parent / "repro.json").read_text())
    return data["exit_code"], out.getvalue(), data


def test_reproduced_exits_0_with_the_request_written(tmp_path, plant):
    diverged = expected_ids("b")[:3] + [253]
    plant(3, [diverged, diverged])
    code, out, data = run(tmp_path)
    assert code == 0 and data["status"] == "reproduced" and data["exit_code"] == 0
    assert "probe 1/24: 1 prompt(s), max_tokens 8 ... diverged at token 3" in out
    assert "oracle repro: b diverges at token 3 with 1 of 3 prompt(s) and max_tokens 4 (reproduced twice" in out
    assert data["server_starts"] == 3 and len(data["curl"]) == 1


def test_not_reproduced_in_the_search_exits_1_and_says_so(tmp_path, plant):
    plant(None, None)
    code, out, data = run(tmp_path)
    assert code == 1 and data["status"] == "not-reproduced"
    assert data["answer"] == ("not reproduced: b matched the reference in 2 fresh server(s) (the prompt alone, and "
                              "after the 1 sent before it); the gate's divergence did not come back")
    assert f"oracle repro: {data['answer']}" in out and data["curl"] == []


def test_a_divergence_the_verify_sees_once_only_is_not_reported_as_reproduced(tmp_path, plant):
    plant(3, [expected_ids("b")[:3] + [253], expected_ids("b")[:4]])
    code, _, data = run(tmp_path)
    assert code == 1 and "only 1 of 2 times in the verify" in data["answer"]


def test_a_server_that_does_not_start_exits_2_with_a_partial_report(tmp_path, plant):
    plant(3, TargetError("oracle could not start the target: exited with code 1"))
    code, out, data = run(tmp_path)
    assert code == 2 and data["status"] == "interrupted"
    assert data["answer"].startswith("interrupted: the candidate's server did not start: oracle could not start")
    assert [p["step"] for p in data["search"]["probes"]] == ["alone", "length"]  # the finished search is kept


def test_a_search_stopped_midway_keeps_its_finished_probes(tmp_path, monkeypatch):
    def probe(self, prompts, max_tokens):
        self.starts += 1
        if self.starts == 2:
            raise KeyboardInterrupt
        return 3

    monkeypatch.setattr(Replayer, "probe", probe)
    code, out, data = run(tmp_path)
    assert code == 2 and data["answer"] == "interrupted: interrupted by Ctrl-C" and "stopped" in out
    assert [(p["step"], p["verdict"]) for p in data["search"]["probes"]] == [("alone", "diverged")]


def test_bad_input_raises_before_any_start(tmp_path, plant):
    plant(3, None)
    with pytest.raises(ReproInput, match="nothing to reproduce"):
        run_repro(planted_report(tmp_path, splits={}))
    with pytest.raises(ReproInput, match="--max-probes 0: give at least 1"):
        run_repro(planted_report(tmp_path / "x", splits={"b": 3}), max_probes=0)


def test_out_in_the_reference_or_over_the_report_is_refused_before_any_start(tmp_path, plant):
    plant(3, None)
    report = planted_report(tmp_path, splits={"b": 3})
    ref = tmp_path / "ref"
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(ReproInput, match=r"--out .*/ref/repro lies inside --reference .*/ref .*give --out a folder "
                                         r"apart from"):
        run_repro(report, out=ref / "repro")
    with pytest.raises(ReproInput, match=r"--out .*/gate and REPORT_DIR .*/gate are the same folder"):
        run_repro(report, out=report)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before  # nothing written
