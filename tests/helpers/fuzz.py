"""Generated bad input for oracle, and the properties every answer to it must have (the fuzz tests and
benchmarks/fuzz_inputs.py share them).

    case = draw(reference_cases())               # a mutated copy of a real recorded reference, and how
    outcome = Outcome(code, output)              # from the gate (pytester, or a process) or `oracle` (cli.main)
    problems(outcome, expected={4}, before=tree_digest(folder), after=tree_digest(folder))   # [] when it held

The properties: no Python traceback reaches the user (no "Traceback", no "INTERNALERROR"), the exit code is the
one docs/faults.md gives for the class (bad input to the gate 4, to an `oracle` command 2), and every folder
given as input is byte-identical afterwards. Every generated input here is bad by construction (or refused for
want of a server: the gates run against http://127.0.0.1:9, where nothing answers), so no case may exit 0.
Gate options and suites: fuzz_gate.py; server answers: fuzz_answers.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
SHIPPED_REFERENCE = REPO / "references" / "smollm2-135m-q4_1-llamacpp-cpu"
NO_SERVER = "--oracle-url=http://127.0.0.1:9"  # nothing answers there: a gate that accepts its input stops with 4
GATE_BAD_INPUT, COMMAND_BAD_INPUT = 4, 2
TRACE_MARKS = ("Traceback (most recent call last)", "INTERNALERROR")
# pytest's own form of a traceback (an exception that escaped into a test item): "path/x.py:240: TypeError".
PYTEST_TRACE = re.compile(r"^\S+\.py:\d+: [A-Z]\w*(Error|Exception|Exit)$", re.M)


@dataclass(frozen=True)
class Outcome:
    code: int
    output: str


def problems(outcome: Outcome, *, expected: set[int], before: dict | None = None,
             after: dict | None = None) -> list[str]:
    """What broke a property: "traceback", "exit N (expected ...)", "input folder changed"; [] when all held."""
    out = []
    if any(mark in outcome.output for mark in TRACE_MARKS) or PYTEST_TRACE.search(outcome.output):
        out.append("traceback")
    if int(outcome.code) not in expected:
        out.append(f"exit {int(outcome.code)} (expected {' or '.join(map(str, sorted(expected)))})")
    if before is not None and before != after:
        changed = sorted(k for k in set(before) | set(after or {}) if before.get(k) != (after or {}).get(k))
        out.append(f"input folder changed ({', '.join(changed[:3])})")
    return out


def tree_digest(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()}


def oracle_command(*argv: str) -> Outcome:
    """`oracle ARGV...` in this process (cli.main), its stdout and stderr together; an exception that escapes
    main() is what a user would see as a traceback."""
    from oracle.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            code = main(list(argv))
        except BaseException as exc:  # noqa: BLE001 - exactly what the property is about
            import traceback

            buf.write("Traceback (most recent call last):\n" + "".join(traceback.format_exception(exc)))
            code = 1
    return Outcome(code, buf.getvalue())


# -- bytes and JSON values -------------------------------------------------------------------------------------

def json_values(max_leaves: int = 6):
    """Any JSON value (strings with odd characters, huge and negative numbers, nested lists and objects)."""
    scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2 ** 70, max_value=2 ** 70),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12))
    return st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                        max_leaves=max_leaves)


def byte_damage():
    """A function bytes -> bytes that damages a file: truncated, a byte flipped, bytes that are not UTF-8
    put in, emptied, replaced by another JSON kind, or nested too deep to read."""
    return st.one_of(
        st.integers(min_value=0, max_value=200).map(lambda n: ("truncated", lambda b: b[: min(n, len(b) - 1)])),
        st.integers(min_value=0, max_value=10 ** 6).map(
            lambda i: ("flipped", lambda b: b[: i % len(b)] + bytes([b[i % len(b)] ^ 0xA5]) + b[i % len(b) + 1:]
                       if b else b"\xa5")),
        st.binary(min_size=1, max_size=8).map(
            lambda junk: ("not-utf8", lambda b: b[:20] + b"\xff\xfe" + junk + b[20:])),
        st.just(("empty", lambda b: b"")),
        st.sampled_from([b"[]", b"null", b"42", b'"text"', b"[1, 2]"]).map(lambda j: ("other-kind", lambda b: j)),
        st.just(("deep", lambda b: b"[" * 100_000 + b"]" * 100_000)),
    )


# -- references ----------------------------------------------------------------------------------------------

# Keys the readers use, each with values of a type oracle never writes there.
MANIFEST_WRONG = {
    ("schema_version",): ["1", None, 1.5, [1]],
    ("kind",): [None, 0, ["mtp0"]],
    ("cases",): [None, [], "cases", 3],
    ("cases", 0): [None, [], "x", 7],
    ("cases", 0, "completion_sha256"): [None, 5, ["ab"]],
    ("files",): [None, [], "files"],
    ("files", 0): [None, 5, []],
    ("conditions",): ["boot1-c1", [1], ["not-a-condition"], {}],
    ("run",): [[], "run", 5],
    ("run", "sampling"): [[], "greedy", {"temperature": "hot", "seeds": [1]}, {"seeds": [1]}],
    ("run", "max_tokens"): ["32", [32], 1.5],
    ("identity",): [[], "me", 3],
    ("identity", "launch_command"): [3, ["llama-server"], {}],
    ("canaries",): [[], "none", 3],
    ("noise",): [[], "low", {"varies": []}],
}
RECORD_WRONG = {
    "id": [None, 3, []], "condition": [None, 3, "the first boot"], "finish_reason": [None, 1, []],
    "completion_sha256": [None, 5], "text": [None, 5, []], "ttft_s": ["fast", []], "repeat": ["0", None, 1.5],
    "server_timings": [[], "slow", 3], "cached_prompt_tokens": ["0", 1.5],
}


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def npz_garbage():
    """An ID.npz oracle never writes: other bytes, arrays missing, of another kind or another shape."""
    ok = {"prompt_ids": np.arange(3, dtype=np.int64), "completion_ids": np.arange(4, dtype=np.int64),
          "logprobs": np.zeros(4, np.float32), "top_ids": np.zeros((4, 2), np.int64),
          "top_logprobs": np.zeros((4, 2), np.float32), "token_times_s": np.zeros(4)}
    return st.sampled_from([
        ("random bytes", b"PK\x03\x04 not really a zip"),
        ("no completion_ids", _npz(**{k: v for k, v in ok.items() if k != "completion_ids"})),
        ("float completion_ids", _npz(**dict(ok, completion_ids=np.linspace(0, 1, 4)))),
        ("text completion_ids", _npz(**dict(ok, completion_ids=np.array(["a", "b"])))),
        ("2-D completion_ids", _npz(**dict(ok, completion_ids=np.zeros((2, 2), np.int64)))),
        ("ragged top-k", _npz(**dict(ok, top_logprobs=np.zeros((3, 2), np.float32)))),
        ("a .npy", (lambda b: (np.save(b, np.arange(3)), b.getvalue())[1])(io.BytesIO())),
    ])


@dataclass(frozen=True)
class ReferenceCase:
    kind: str  # record-bytes, manifest-bytes, manifest-shape, record-shape, npz, case-hash, unsealed
    what: str  # the mutation in words (the minimal example a failure report quotes)
    apply: object  # Path -> None: mutate a copy of the reference in place

    def __repr__(self) -> str:
        return f"ReferenceCase({self.kind}: {self.what})"


def _set(data, path: tuple, value):
    """Set data at path; an int in the path is the n-th key of an object (cases' first id, say)."""
    *head, last = path
    for key in head:
        data = data[list(data)[key]] if isinstance(key, int) else data[key]
    if isinstance(last, int):
        last = list(data)[last]
    data[last] = value


def _reseal(ref: Path, manifest: dict, *, seal: bool = True) -> None:
    from oracle.store.reference import SELF_HASH, sealed_manifest

    if seal:
        (ref / "manifest.json").write_bytes(sealed_manifest(manifest))
    else:
        manifest.pop(SELF_HASH, None)
        (ref / "manifest.json").write_text(json.dumps(manifest, indent=1))


def _record_files(ref: Path, suffix: str) -> list[Path]:
    return sorted((ref / "records" / "boot1-c1").glob(f"*{suffix}"))


def _rehash(ref: Path, manifest: dict, path: Path) -> None:
    manifest["files"][str(path.relative_to(ref))] = hashlib.sha256(path.read_bytes()).hexdigest()


@st.composite
def reference_cases(draw) -> ReferenceCase:
    kind = draw(st.sampled_from(["record-bytes", "manifest-bytes", "manifest-shape", "record-shape", "npz",
                                 "case-hash", "unsealed"]))
    pick = draw(st.integers(min_value=0, max_value=10 ** 6))
    if kind in ("record-bytes", "manifest-bytes"):
        name, damage = draw(byte_damage())

        def apply(ref: Path) -> None:
            files = _record_files(ref, "") if kind == "record-bytes" else [ref / "manifest.json"]
            target = files[pick % len(files)]
            target.write_bytes(damage(target.read_bytes()))

        return ReferenceCase(kind, f"{name} ({'a record file' if kind == 'record-bytes' else 'manifest.json'})",
                             apply)
    if kind in ("manifest-shape", "unsealed"):
        path = draw(st.sampled_from(sorted(MANIFEST_WRONG, key=str)))
        value = draw(st.sampled_from(MANIFEST_WRONG[path]))

        def apply(ref: Path) -> None:
            manifest = json.loads((ref / "manifest.json").read_text())
            _set(manifest, path, value)
            _reseal(ref, manifest, seal=kind == "manifest-shape")

        return ReferenceCase(kind, f"manifest.json {'.'.join(map(str, path))} = {value!r}", apply)
    if kind == "record-shape":
        key = draw(st.sampled_from(sorted(RECORD_WRONG)))
        value = draw(st.sampled_from(RECORD_WRONG[key]))

        def apply(ref: Path) -> None:
            files = _record_files(ref, ".json")
            target = files[pick % len(files)]
            meta = json.loads(target.read_text())
            meta[key] = value
            target.write_text(json.dumps(meta))
            manifest = json.loads((ref / "manifest.json").read_text())
            _rehash(ref, manifest, target)
            _reseal(ref, manifest)

        return ReferenceCase(kind, f"a record's {key} = {value!r} (manifest resealed)", apply)
    if kind == "npz":
        name, payload = draw(npz_garbage())

        def apply(ref: Path) -> None:
            files = _record_files(ref, ".npz")
            target = files[pick % len(files)]
            target.write_bytes(payload)
            manifest = json.loads((ref / "manifest.json").read_text())
            _rehash(ref, manifest, target)
            _reseal(ref, manifest)

        return ReferenceCase(kind, f"an ID.npz with {name} (manifest resealed)", apply)

    def apply(ref: Path) -> None:
        manifest = json.loads((ref / "manifest.json").read_text())
        case = list(manifest["cases"])[pick % len(manifest["cases"])]
        manifest["cases"][case]["completion_sha256"] = "0" * 64
        _reseal(ref, manifest)

    return ReferenceCase(kind, "a case's completion_sha256 not its record's (manifest resealed)", apply)


def reference_copy(folder: Path, case: ReferenceCase, source: Path = SHIPPED_REFERENCE) -> Path:
    ref = folder / "ref"
    shutil.copytree(source, ref)
    case.apply(ref)
    return ref


# -- reports -------------------------------------------------------------------------------------------------

REPORT_WRONG = {
    ("mode",): [1, [], {}], ("checks",): ["x", {}, 3], ("checks", 0): [5, "tokens[a]", []],
    ("checks", 0, "verdict"): [3, None, []], ("checks", 0, "id"): [None, 4], ("prompts",): [{}, "a", 3],
    ("prompts", 0): [1, None], ("identity",): [[], "me"], ("identity", "request"): [[], "x"],
    ("identity", "request", "seed"): ["x", 1.5, []], ("reference",): [[], "ref"], ("reference", "path"): [3, []],
    ("records",): [[], "x"], ("canaries",): [[], "x"], ("identity", "launch_command"): [3, []],
}


@dataclass(frozen=True)
class ReportCase:
    kind: str  # bytes (damaged identity.json), shape (a key the readers use, of a wrong type), other (any key)
    what: str
    apply: object  # Path (the report folder) -> None

    def __repr__(self) -> str:
        return f"ReportCase({self.kind}: {self.what})"


def _set_in_list_or_dict(data, path: tuple, value) -> None:
    *head, last = path
    for key in head:
        data = data[key]
    data[last] = value


@st.composite
def report_cases(draw) -> ReportCase:
    kind = draw(st.sampled_from(["bytes", "shape", "other"]))
    if kind == "bytes":
        name, damage = draw(byte_damage())

        def apply(report: Path) -> None:
            p = report / "identity.json"
            p.write_bytes(damage(p.read_bytes()))

        return ReportCase(kind, f"identity.json {name}", apply)
    if kind == "shape":
        path = draw(st.sampled_from(sorted(REPORT_WRONG, key=str)))
        value = draw(st.sampled_from(REPORT_WRONG[path]))
    else:
        path = (draw(st.sampled_from(["summary", "speed", "verdict", "notes", "written_utc", "schema_version",
                                      "backend", "complete", "interruption", "coverage", "logits"])),)
        value = draw(json_values())

    def apply(report: Path) -> None:
        p = report / "identity.json"
        data = json.loads(p.read_text())
        _set_in_list_or_dict(data, path, value)
        p.write_text(json.dumps(data))

    return ReportCase(kind, f"identity.json {'.'.join(map(str, path))} = {value!r}", apply)


# -- the checks, one per kind of input (the tests and the benchmark run the same) ----------------------------

REFUSED_AT_THE_SERVER = "does not answer its health check"  # the gate took its input and turned to the server


def _accepted(outcome: Outcome) -> list[str]:
    return ["accepted: the gate went on to the server"] if REFUSED_AT_THE_SERVER in outcome.output else []


def check_reference(case: ReferenceCase, folder: Path, gate) -> dict[str, list[str]]:
    """A damaged copy of a real reference through the gate, `oracle diff`, `seal` and `repro`: each refuses it
    (4 / 2) before any request; the reference and the report beside it stay byte-identical."""
    from planted_report import planted_report

    ref = reference_copy(folder, case)
    report = planted_report(folder / "planted", splits={"b": 3})
    before, report_before = tree_digest(ref), tree_digest(report)
    outcome = gate([NO_SERVER, f"--reference={ref}", "--canaries=none", f"--report-dir={folder / 'report'}"])
    found = {
        "gate": problems(outcome, expected={GATE_BAD_INPUT}) + _accepted(outcome),
        "diff": problems(oracle_command("diff", str(report), str(ref)), expected={COMMAND_BAD_INPUT}),
        "seal": problems(oracle_command("seal", str(ref)), expected={COMMAND_BAD_INPUT}),
        "repro": problems(oracle_command("repro", str(report), "--reference", str(ref)),
                          expected={COMMAND_BAD_INPUT}),
        "folders": problems(Outcome(0, ""), expected={0}, before=before | {"report/" + k: v for k, v in
                                                                            report_before.items()},
                            after=tree_digest(ref) | {"report/" + k: v for k, v in tree_digest(report).items()}),
    }
    return {k: v for k, v in found.items() if v}


def check_report(case: ReportCase, folder: Path) -> dict[str, list[str]]:
    """A gate report with identity.json damaged (bytes), of the wrong shape at a key the readers use (shape), or
    with any value under another key (other), through `oracle html`, `diff` and (for refusals) `repro`: bytes and
    shape are refused (2) with the folder untouched; html that renders adds identity.html and nothing else."""
    from planted_report import planted_report

    report = planted_report(folder, splits={"b": 3})
    case.apply(report)
    before = tree_digest(report)
    bad = case.kind in ("bytes", "shape")
    html = oracle_command("html", str(report))
    after = tree_digest(report)
    if html.code == 0:
        after.pop("identity.html", None)
    found = {"html": problems(html, expected={COMMAND_BAD_INPUT} if bad else {0, COMMAND_BAD_INPUT}, before=before,
                              after=after),
             "diff": problems(oracle_command("diff", str(report), str(folder / "ref")),
                              expected={COMMAND_BAD_INPUT} if bad else {0, 1, COMMAND_BAD_INPUT})}
    if bad:  # a report repro would act on starts a server: only refusals are tried
        found["repro"] = problems(oracle_command("repro", str(report)), expected={COMMAND_BAD_INPUT},
                                  before=before, after=tree_digest(report))
    return {k: v for k, v in found.items() if v}
