"""repro.json / repro.md from a planted search and verify (no server): the curl command carries the exact body,
the commands are redacted, the split is shown with ids, texts and margins, and the summary names the facts."""

from __future__ import annotations

import json
import shlex

from oracle.repro.render import around_split, curl_command, write_repro
from oracle.repro.search import Probe, SearchResult, Verified
from oracle.repro.source import read_source
from planted_report import expected_ids, planted_report

SECRET = "hf_abcdefgh12345678"
BODY = {"prompt": [1, 2, 4], "n_predict": 4, "temperature": 0.0, "top_k": 1, "seed": 1234, "stream": False,
        "note": "it's"}


def written(tmp_path, *, status="reproduced", verified=True, monkeypatch=None):
    source = read_source(planted_report(tmp_path, splits={"b": 3}))
    result = SearchResult(True, ("b",), 4, 3, True, [Probe(1, "alone", ("b",), 8, 3), Probe(2, "length", ("b",), 4, 3)])
    observed = expected_ids("b")[:3] + [253]
    check = Verified([("/completion", BODY)], [observed, observed], ["x", "x"],
                     {t: f"<{t}>" for t in expected_ids("b") + [253]},
                     f"HF_TOKEN={SECRET} srv -m m.gguf --port {{port}} -ctk q8_0", None) if verified else None
    out = tmp_path / "gate" / "repro"
    data = write_repro(out, source, result, check, status=status, exit_code=0 if status == "reproduced" else 1,
                       answer="" if status == "reproduced" else "not reproduced: b matched", server_starts=3,
                       wall_s=1.5)
    return data, (out / "repro.md").read_text(), json.loads((out / "repro.json").read_text())


def test_the_curl_command_carries_the_exact_body_and_port():
    words = shlex.split(curl_command("/completion", BODY, port=8123))
    assert words[:3] == ["curl", "-s", "http://127.0.0.1:8123/completion"]
    assert json.loads(words[words.index("-d") + 1]) == BODY
    keyed = curl_command("/completion", BODY, api_key=True)
    assert '-H "Authorization: Bearer $ORACLE_API_KEY"' in keyed and "{port}" in keyed


def test_repro_json_and_md_hold_the_split_the_commands_and_the_margins(tmp_path):
    data, md, on_disk = written(tmp_path)
    assert on_disk == json.loads(json.dumps(data)) and data["status"] == "reproduced"
    assert data["launch"]["candidate"] == "HF_TOKEN=*** srv -m m.gguf --port {port} -ctk q8_0"
    assert data["launch"]["reference"] == "srv -m m.gguf --port {port}"
    assert SECRET not in md and SECRET not in json.dumps(on_disk)
    assert data["curl"] == [curl_command("/completion", BODY)] and data["requests"] == [{"route": "/completion",
                                                                                          "body": BODY}]
    assert data["expected"]["token_at_split"] == {"id": 203, "text": "<203>"}
    assert data["observed"]["token_at_split"] == {"id": 253, "text": "<253>"} and data["observed"]["identical"]
    split_row = next(r for r in data["around_split"] if r["split"])
    assert split_row == {"position": 3, "expected_id": 203, "observed_id": 253, "split": True,
                         "expected_text": "<203>", "observed_text": "<253>"}
    assert data["margins"]["reference_nats"] == 0.2 and data["margins"]["gate_margin_nats"] == 0.2
    assert data["margins"]["reference_top"][0] == [203, -1.0]
    assert data["margins"]["candidate_top"][0] == [253, -1.0]  # the gate's record took the observed path
    assert data["search"]["prompts"] == ["b"] and data["search"]["max_tokens"] == 4
    # repro.md: the commands and the curl with the example port filled in, so each runs as pasted
    assert "HF_TOKEN=*** srv -m m.gguf --port 8080 -ctk q8_0" in md and "http://127.0.0.1:8080/completion" in md
    assert "| 3 **split** | 203 | `<203>` | 253 | `<253>` |" in md
    assert "## Margins (nats)" in md and "0.2000" in md and "| 2 | length | b | 4 | diverged at 3 |" in md


def test_the_summary_is_one_paragraph_with_the_facts(tmp_path):
    data, md, _ = written(tmp_path)
    s = data["summary"]
    assert "\n" not in s and s in md
    for words in ("srv build b2", "greedy request (temperature 0, top_k 1, seed 1234) of a 3-token prompt (b)",
                  "at completion token 3 of max_tokens 4", "token 203 '<203>' where this server gives 253 '<253>'",
                  "margin there: 0.2000 nats", "1 of the suite's 3 prompts", "HF_TOKEN=***"):
        assert words in s, (words, s)


def test_a_divergence_not_reproduced_says_so_without_a_request(tmp_path):
    data, md, _ = written(tmp_path, status="not-reproduced", verified=False)
    assert data["curl"] == [] and data["summary"] == "" and data["exit_code"] == 1
    assert "**not reproduced: b matched**" in md and "## The request" not in md


def test_around_split_stops_the_observed_side_at_max_tokens():
    rows = around_split([1, 2, 3, 4, 5, 6], [1, 2, 9], 2, 3, window=2)
    assert [(r["position"], r["expected_id"], r["observed_id"]) for r in rows] == \
        [(0, 1, 1), (1, 2, 2), (2, 3, 9), (3, 4, None), (4, 5, None)]
