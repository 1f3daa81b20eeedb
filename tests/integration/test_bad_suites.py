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
    # Fields accepted loosely before: each row is now parsed into a declared shape.
    ("bool-tokens.jsonl", json.dumps(GOOD | {"max_tokens": True}) + "\n",
     "*bool-tokens.jsonl:1: max_tokens must be a positive integer (a whole number of tokens, 1 or more; not true, "
     "8.0 or \"8\"); got True (Expected `int`, got `bool` - at `$.max_tokens`)*"),
    ("null-id.jsonl", json.dumps(GOOD | {"id": None}) + "\n",
     "*null-id.jsonl:1: id must be a string; an id names files in references: 1 to 100 characters, without spaces*"
     "got None*"),
    ("newline-id.jsonl", json.dumps(GOOD | {"id": "a\nb"}) + "\n",
     "*newline-id.jsonl:1: id 'a\\nb' (3 characters): an id names files in references: 1 to 100 characters, "
     "without spaces, control characters or any of*"),
    ("long-id.jsonl", json.dumps(GOOD | {"id": "p" * 300}) + "\n",
     "*long-id.jsonl:1: id 'pppp*'... (300 characters): an id names files in references: 1 to 100 characters*"),
    ("slash-id.jsonl", json.dumps(GOOD | {"id": "../up"}) + "\n", "*slash-id.jsonl:1: id '../up' (5 characters)*"),
    ("role.jsonl", json.dumps(GOOD | {"messages": [{"role": "bot", "content": "hi"}]}) + "\n",
     "*role.jsonl:1: messages must be a non-empty list of {role, content} objects; role must be one of*"),
    ("broken.parquet", "PAR1 this is not a parquet file",
     "*broken.parquet: cannot be read as a parquet suite (*); check that the file is whole and of that format, or "
     "write the suite as JSONL*"),
    ("ragged.csv", 'id,class,messages,max_tokens\nq1,chat,"[]",16,extra,columns\n"unclosed\n',
     "*ragged.csv: cannot be read as a csv suite (*); check that the file is whole and of that format*"),
])
def test_a_bad_suite_file_is_refused_naming_file_line_and_field(pytester, name, text, message):
    suite = pytester.path / name
    if text is None:
        suite.write_bytes(json.dumps(GOOD).encode() + b"\n" + '{"id": "caf\u00e9"}'.encode("latin-1") + b"\n")
    else:
        suite.write_text(text)
    result = pytester.runpytest("-p", "no:cacheprovider", "--backend=llamacpp", "--oracle-url=http://127.0.0.1:9",
                                f"--oracle-suite={suite}", "--report-dir=report", "--record=ref")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (pytester.path / "report").exists() and not (pytester.path / "ref").exists()
    assert not list(pytester.path.glob(".ref.lock"))  # refused before the record folder was claimed
