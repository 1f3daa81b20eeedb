"""Bad suite files are usage errors before any request: the file, the line and the field named, with the fix, and
nothing written (no report folder, no reference). No server needed: the suite is read before one is touched."""

import json

import pytest

GOOD = {"id": "a", "class": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


@pytest.mark.parametrize("name, text, message", [
    ("not-json.jsonl", json.dumps(GOOD) + "\n{id: b}\n",
     "*not-json.jsonl:2: not valid JSON (Expecting property name enclosed in double quotes); each line must be one "
     "JSON object*"),
    ("no-field.jsonl", json.dumps(GOOD) + "\n" + json.dumps({k: v for k, v in GOOD.items() if k != "max_tokens"}
                                                             | {"id": "b"}) + "\n",
     "*no-field.jsonl:2: missing field(s) max_tokens; each prompt needs id, class, messages and max_tokens*"),
    ("array.jsonl", "[1, 2]\n", "*array.jsonl:1: a JSON list, not an object; each line must be one JSON object*"),
    ("empty.jsonl", "\n\n", "*empty.jsonl: the suite has no prompts; add one JSON object per line*"),
    ("latin1.jsonl", None, "*latin1.jsonl: not UTF-8 text (byte *); save the suite as UTF-8 JSONL*"),
    ("messages.csv", 'id,class,messages,max_tokens\nq1,chat,"[{""role"": ""user"", ""content"": ""hi""}]",16\n'
                     "q2,chat,not json,16\n",
     "*messages.csv:3: the messages field is not JSON (Expecting value); write it as a JSON list such as*"),
])
def test_a_bad_suite_file_is_refused_naming_file_line_and_field(pytester, name, text, message):
    suite = pytester.path / name
    if text is None:
        suite.write_bytes(json.dumps(GOOD).encode() + b"\n" + '{"id": "caf\u00e9"}'.encode("latin-1") + b"\n")
    else:
        suite.write_text(text)
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--url=http://127.0.0.1:9",
                                f"--suite={suite}", "--report-dir=report", "--record=ref")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (pytester.path / "report").exists() and not (pytester.path / "ref").exists()
    assert not list(pytester.path.glob(".ref.lock"))  # refused before the record folder was claimed
