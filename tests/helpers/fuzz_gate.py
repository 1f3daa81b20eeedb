"""Generated gate options and suite files, and their checks (the fuzz tests and benchmarks/fuzz_inputs.py
share them): every gate runs against http://127.0.0.1:9, where nothing answers, so each must end in exit 4.

    args = draw(option_args(gate_option_names()))
    check_options(args, folder, gate)   # [] when every property held (tests/helpers/fuzz.py: problems)
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import strategies as st

from fuzz import GATE_BAD_INPUT, NO_SERVER, _accepted, byte_damage, json_values, problems, tree_digest

PATH_OPTIONS = {"--report-dir", "--record", "--reference", "--oracle-suite", "--tokenizer", "--oracle-model", "--servers",
                "--haystack", "--code-set", "--rootdir", "--basetemp"}
# Options that start a process or reach another host: their values come from a list, never from free text.
LISTED_VALUES = {
    "--oracle-url": ["http://[::1", "127.0.0.1:9", "", "-", "http://user:pw@127.0.0.1:9", "http://127.0.0.1:99999",
              "http://127.0.0.1:9/" + "x" * 300],
    "--launch": ["", "-", "llama-server", "echo {port", "'unclosed"],
    "--reference-launch": ["", "recorded", "-", "'unclosed"],
    "--score-url": ["", "http://[::1", "ftp://127.0.0.1:9"],
}
ODD_VALUES = ["", "-", "--", "-1", "-np 4", "-ctk=f16,q8_0", "0", "nan", "inf", "1e309", "x" * 5000, "\udcff\udcfe",
              "\x00", "a\nb", "..", "/", "1,2,,3", "=", "-" * 3 + "backend"]


def gate_option_names() -> list[str]:
    """Every gate option that takes a value (from the plugin's own declarations)."""
    import pytest

    from oracle.gate.declarations import add_options

    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    return sorted(name for group in parser._groups for opt in group.options for name in opt.names()
                  if name.startswith("--") and opt.attrs().get("action") not in ("store_true", "store_false"))


def _relative(value: str) -> str:
    """A path option's value kept inside the test's own folder."""
    value = value.replace("..", "__").lstrip("/") or "x"
    return value


@st.composite
def option_args(draw, names: list[str]) -> list[str]:
    """One to three options with generated values, each as --opt=value or as two words; half of them the options
    that name a path, a URL or a command (where a value goes furthest), most values from the odd ones."""
    out = []
    pointed = sorted((PATH_OPTIONS | set(LISTED_VALUES)) & set(names))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        name = draw(st.one_of(st.sampled_from(pointed), st.sampled_from(names)))
        if name in LISTED_VALUES:
            value = draw(st.sampled_from(LISTED_VALUES[name]))
        else:
            value = draw(st.one_of(st.sampled_from(ODD_VALUES), st.sampled_from(ODD_VALUES), st.text(max_size=30)))
        if name in PATH_OPTIONS:
            value = _relative(value)
        out += [f"{name}={value}"] if draw(st.booleans()) else [name, value]
    return out


SUITE_ROW = {"id": "p1", "class": "chat", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}
ODD_IDS = ["", "a\nb", "x" * 300, "../up", "a/b", "@", "a~b", "nul\x00", " ", ".hidden"]  # "é" * 40 is a fine id


@st.composite
def suite_files(draw) -> tuple[str, bytes]:
    """(what, the bytes of a suite file) that no gate may run: wrong types, missing keys, odd ids, bytes."""
    kind = draw(st.sampled_from(["missing", "wrong-type", "odd-id", "bytes", "duplicate", "odd-max-tokens"]))
    row = json.loads(json.dumps(SUITE_ROW))
    if kind == "missing":
        key = draw(st.sampled_from(sorted(row)))
        del row[key]
        what = f"a row without {key}"
    elif kind == "wrong-type":
        key = draw(st.sampled_from(sorted(row)))
        row[key] = draw(json_values().filter(lambda v: type(v) is not type(SUITE_ROW[key])))
        what = f"{key} = {row[key]!r}"
    elif kind == "odd-id":
        row["id"] = draw(st.one_of(st.sampled_from(ODD_IDS), st.none(), st.integers(), st.lists(st.text(), max_size=2)))
        what = f"id = {row['id']!r}"
    elif kind == "odd-max-tokens":
        row["max_tokens"] = draw(st.sampled_from([True, False, 0, -1, 2 ** 70, 1.5, "8", None, [8]]))
        what = f"max_tokens = {row['max_tokens']!r}"
    elif kind == "duplicate":
        return "the same id twice", (json.dumps(row) + "\n" + json.dumps(row) + "\n").encode()
    else:
        name, damage = draw(byte_damage())
        return f"suite bytes {name}", damage((json.dumps(row) + "\n").encode())
    return what, (json.dumps(row) + "\n").encode()


def check_options(args: list[str], folder: Path, gate) -> list[str]:
    """Gate options with generated values: exit 4 (a bad value, or no server), the suite folder untouched."""
    suite = folder / "suites" / "tiny.jsonl"
    suite.parent.mkdir(parents=True)
    suite.write_text(json.dumps(SUITE_ROW) + "\n")
    before = tree_digest(suite.parent)
    outcome = gate([NO_SERVER, f"--oracle-suite={suite}", "--canaries=none", f"--report-dir={folder / 'report'}", *args])
    return problems(outcome, expected={GATE_BAD_INPUT}, before=before, after=tree_digest(suite.parent))


def check_suite(payload: bytes, folder: Path, gate) -> list[str]:
    """A bad suite file: refused naming it (4) before the gate turns to the server; the file untouched."""
    suite = folder / "suites" / "fuzz.jsonl"
    suite.parent.mkdir(parents=True)
    suite.write_bytes(payload)
    before = tree_digest(suite.parent)
    outcome = gate([NO_SERVER, f"--oracle-suite={suite}", "--canaries=none", f"--report-dir={folder / 'report'}"])
    return problems(outcome, expected={GATE_BAD_INPUT}, before=before, after=tree_digest(suite.parent)) + \
        _accepted(outcome)


# -- option combinations (#52) ---------------------------------------------------------------------------------

# Options that mean nothing without another: given without it, the gate refuses (4) naming what it needs, before
# it turns to the server. Each: the flag, the words its refusal holds, and whether the args give what it needs.
WITHOUT_EFFECT = {
    "--sweep-no-repro": ("has no effect without --sweep", lambda args: any(a.startswith("--sweep=") for a in args)),
    "--canary-strict": ("has no effect with --canaries none", lambda args: "--canaries=none" not in args),
    "--allow-mixed-servers": ("has no effect with one server", lambda args: False),  # the cases give one --oracle-url
}
COMPANIONS = ["--canaries=none", "--canaries=code", "--sweep=OMP_NUM_THREADS=1,2", "--allow-near-ties",
              "--record-overwrite", "--logits", "--oracle-plan"]


def gate_flag_names() -> list[str]:
    """Every gate option that takes no value."""
    import pytest

    from oracle.gate.declarations import add_options

    parser = pytest.Parser(_ispytest=True)
    add_options(parser)
    return sorted(name for group in parser._groups for opt in group.options for name in opt.names()
                  if name.startswith("--") and opt.attrs().get("nargs") == 0)


@st.composite
def option_combinations(draw, flags: list[str]) -> list[str]:
    """One to three flags (one of them, most often, an option that needs another) with companions that may or
    may not give what it needs."""
    picked = draw(st.lists(st.sampled_from(sorted(WITHOUT_EFFECT)), min_size=1, max_size=2, unique=True))
    picked += draw(st.lists(st.sampled_from(flags), max_size=1))
    picked += draw(st.lists(st.sampled_from(COMPANIONS), max_size=2, unique=True))
    return list(dict.fromkeys(draw(st.permutations(picked))))


def check_combination(args: list[str], folder: Path, gate) -> list[str]:
    """Exit 4 with no traceback; an option without effect in its combination refused before the server is asked,
    its message naming what it needs; nothing written in the case's folder."""
    before = tree_digest(folder)
    outcome = gate([NO_SERVER, "--canaries=none" if not any(a.startswith("--canaries") for a in args) else "",
                    f"--report-dir={folder / 'report'}", *args])
    found = problems(outcome, expected={GATE_BAD_INPUT}, before=before, after=tree_digest(folder))
    for flag, (words, needed) in WITHOUT_EFFECT.items():
        if flag in args and not needed(args):
            found += _accepted(outcome)
    if (folder / "report" / "identity.json").exists():
        found.append("a report was written for a run that was refused")
    return found
