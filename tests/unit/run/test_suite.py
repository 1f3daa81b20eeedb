import json

import pytest

from oracle.run.suite import SuiteError, load_suite


def test_default_suite_has_twelve_prompts_in_six_classes():
    s = load_suite("default")
    assert len(s.prompts) == 12
    classes = {}
    for p in s.prompts:
        classes[p.klass] = classes.get(p.klass, 0) + 1
    assert sorted(classes.values()) == [2] * 6
    assert sum(p.max_tokens >= 256 for p in s.prompts) >= 10
    # each prompt starts with its own high-entropy system prefix
    firsts = [p.messages[0]["content"][:32] for p in s.prompts]
    assert all(p.messages[0]["role"] == "system" for p in s.prompts) and len(set(firsts)) == 12


def test_unknown_suite_names_the_fix():
    with pytest.raises(SuiteError, match="built-in suites: .*default"):
        load_suite("nope")


@pytest.mark.parametrize("row, message", [
    ({"id": "a", "class": "c", "messages": []}, "missing field"),
    ({"id": "a", "class": "c", "messages": [], "max_tokens": 8}, "non-empty list"),
    ({"id": "a b", "class": "c", "messages": [{"role": "user", "content": "x"}], "max_tokens": 8}, "without spaces"),
    ({"id": "a", "class": "c", "messages": [{"role": "bot", "content": "x"}], "max_tokens": 8}, "role must be"),
    ({"id": "a", "class": "c", "messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "positive integer"),
])
def test_bad_rows_are_refused_with_line_and_fix(tmp_path, row, message):
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps(row) + "\n")
    with pytest.raises(SuiteError, match=message):
        load_suite(str(f))


def test_duplicate_ids_refused(tmp_path):
    row = {"id": "a", "class": "c", "messages": [{"role": "user", "content": "x"}], "max_tokens": 8}
    f = tmp_path / "s.jsonl"
    f.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(SuiteError, match="appears twice"):
        load_suite(str(f))


def test_csv_suite_through_datasets(tmp_path):
    f = tmp_path / "s.csv"
    f.write_text('id,class,messages,max_tokens\nq1,chat,"[{""role"": ""user"", ""content"": ""hi""}]",16\n')
    s = load_suite(str(f))
    assert s.prompts[0].messages[0]["content"] == "hi" and s.prompts[0].max_tokens == 16
