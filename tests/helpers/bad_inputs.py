"""A fixed list of bad inputs, each with the one answer oracle owes it: the gate refuses it before any request
(exit 4), an `oracle` command refuses it (exit 2), the message names the value, no traceback, no input folder
changed. Unlike the generated cases of fuzz.py, each case here is one a user writes by mistake: bad option values
and combinations, suite files in every format, damaged references, reports, ledgers and servers files, folders
that are missing, files, symlinked, nested; `oracle diff`, `history`, `ledger add`, `repro`, `bisect`, `seal`,
`html`, `models` with bad arguments. Every case runs without a server (http://127.0.0.1:9 answers nothing: a
gate that took its input would say so, which counts as a silent acceptance).

    for case in CASES: found = run_case(case, tmp, gate)   # [] when every property held
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from fuzz import (COMMAND_BAD_INPUT, GATE_BAD_INPUT, NO_SERVER, REFUSED_AT_THE_SERVER, SHIPPED_REFERENCE, Outcome,
                  oracle_command, problems, tree_digest)

__all__ = ["CASES", "Case", "inputs", "run_case"]

ROW = {"id": "p1", "class": "chat", "messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8}


@dataclass(frozen=True)
class Case:
    name: str
    command: str  # "gate" (pytest with --backend) or "oracle" (the CLI)
    args: Callable[[Path], list[str]]  # argv, given the inputs folder
    says: str = ""  # what the message must hold (the value, or the fix), besides the right exit code
    expected: int | None = None  # default: 4 for the gate, 2 for an oracle command
    setup: Callable[[Path], None] | None = field(default=None, repr=False)  # more inputs the case needs

    def exit_code(self) -> int:
        return self.expected if self.expected is not None else (GATE_BAD_INPUT if self.command == "gate"
                                                                 else COMMAND_BAD_INPUT)


def _suite(rows: list, name: str = "s.jsonl") -> Callable[[Path], None]:
    def make(inp: Path) -> None:
        (inp / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    return make


def _bytes(name: str, data: bytes) -> Callable[[Path], None]:
    def make(inp: Path) -> None:
        (inp / name).write_bytes(data)
    return make


def _text(name: str, text: str) -> Callable[[Path], None]:
    return _bytes(name, text.encode())


def _ref_with(change: Callable[[Path], None]) -> Callable[[Path], None]:
    """A second copy of the reference, `bad`, changed by `change`."""
    def make(inp: Path) -> None:
        shutil.copytree(inp / "ref", inp / "bad")
        change(inp / "bad")
    return make


def _report_with(change: Callable[[Path], None]) -> Callable[[Path], None]:
    def make(inp: Path) -> None:
        shutil.copytree(inp / "planted" / "gate", inp / "badrep")
        change(inp / "badrep")
    return make


def _write(rel: str, data: bytes) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        (folder / rel).write_bytes(data)
    return change


def _first_record(folder: Path, suffix: str) -> Path:
    return sorted((folder / "records").rglob(f"*{suffix}"))[0]


def _record_bytes(suffix: str, data: bytes) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        _first_record(folder, suffix).write_bytes(data)
    return change


def _record_truncated(suffix: str) -> Callable[[Path], None]:
    def change(folder: Path) -> None:
        p = _first_record(folder, suffix)
        p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])
    return change


def _record_gone(folder: Path) -> None:
    _first_record(folder, ".npz").unlink()


def _manifest_truncated(folder: Path) -> None:
    p = folder / "manifest.json"
    p.write_bytes(p.read_bytes()[:200])


def _manifest_utf16(folder: Path) -> None:
    p = folder / "manifest.json"
    p.write_bytes(p.read_text().encode("utf-16"))


def _identity_change(change: Callable[[dict], object]) -> Callable[[Path], None]:
    def edit(folder: Path) -> None:
        p = folder / "identity.json"
        data = json.loads(p.read_text())
        new = change(data)
        p.write_text(json.dumps(data if new is None else new))
    return edit


_STARTED = _identity_change(lambda d: d.update(started_utc="2026-12-01T06:00:00Z", mode="gate"))


def _symlink(name: str, target: str) -> Callable[[Path], None]:
    def make(inp: Path) -> None:
        (inp / name).symlink_to(inp / target)
    return make


def _dir(name: str) -> Callable[[Path], None]:
    def make(inp: Path) -> None:
        (inp / name).mkdir()
    return make


def _gate(*args: str, **kw) -> Callable[[Path], list[str]]:
    return lambda inp: [a.replace("IN/", f"{inp}/") for a in args]


G = lambda name, *args, says="", setup=None, expected=None: Case(  # noqa: E731
    name, "gate", _gate(*args), says, expected, setup)
O = lambda name, *args, says="", setup=None, expected=None: Case(  # noqa: E731
    name, "oracle", _gate(*args), says, expected, setup)
REF, REP = "--reference=IN/ref", "IN/planted/gate"

CASES: list[Case] = [
    # -- option values ---------------------------------------------------------------------------------------
    G("max-tokens-zero", "--max-tokens=0", says="--max-tokens"),
    G("max-tokens-negative", "--max-tokens=-3", says="-3"),
    G("max-tokens-word", "--max-tokens=lots", says="lots"),
    G("max-tokens-float", "--max-tokens=2.5", says="2.5"),
    G("max-tokens-huge", "--max-tokens=99999999999999999999", says="99999999999999999999"),
    G("max-tokens-empty", "--max-tokens=", says="--max-tokens"),
    G("seed-negative", "--oracle-seed=-1", says="-1"),
    G("seed-word", "--oracle-seed=abc", says="abc"),
    G("oracle-machine-two-words", "--oracle-machine=two words", says="two words"),
    G("oracle-machine-empty", "--oracle-machine=", says="--oracle-machine"),
    G("seed-huge", "--oracle-seed=99999999999999999999999", says="99999999999999999999999"),
    G("request-timeout-zero", "--request-timeout=0", says="--request-timeout"),
    G("request-timeout-negative", "--request-timeout=-5", says="-5"),
    G("request-timeout-nan", "--request-timeout=nan", says="nan"),
    G("request-timeout-inf", "--request-timeout=inf", says="inf"),
    G("launch-timeout-zero", "--launch-timeout=0", says="--launch-timeout"),
    G("launch-timeout-word", "--launch-timeout=soon", says="soon"),
    G("boots-zero", "--boots=0", says="--boots"),
    G("boots-word", "--boots=two", says="two"),
    G("logprobs-negative", "--logprobs=-1", says="-1"),
    G("logprobs-huge", "--logprobs=1000000", says="1000000"),  # 100000 is a whole-vocabulary top-k for some models
    G("warmup-negative", "--warmup=-1", says="-1"),
    G("repeats-zero", "--repeats=0", says="--repeats"),
    G("temperature-negative", "--temperature=-1", says="-1"),
    G("temperature-word", "--temperature=hot", says="hot"),
    G("temperature-nan", "--temperature=nan", says="nan"),
    G("top-p-above-one", "--temperature=0.7", "--top-p=2", says="2"),
    G("top-p-zero", "--temperature=0.7", "--top-p=0", says="--top-p"),
    G("top-p-without-temperature", "--top-p=0.9", says="--temperature"),
    G("near-tie-negative", "--near-tie-nats=-1", says="-1"),
    G("ladder-word", "--ladder=a,b", says="a,b"),
    G("ladder-zero", "--ladder=0,2", says="0"),
    G("ladder-empty", "--ladder=", says="--ladder"),
    G("canaries-unknown", "--canaries=nosuch", says="nosuch"),
    G("needle-lengths-word", "--needle-lengths=long", says="long"),
    G("needle-depths-above-100", "--needle-depths=150", says="150"),
    G("context-zero", "--oracle-context=0", says="--oracle-context"),
    G("speed-cells-word", "--speed-cells=fast", says="fast"),
    G("backend-unknown-family", "--backend=nosuch", says="nosuch"),
    G("backend-unknown-platform", "--backend=llamacpp-tpu9", says="llamacpp-x-tpu9"),
    G("backend-empty", "--backend=", says="--backend"),
    G("reference-kind-unknown", "--reference-kind=weird", says="weird"),
    G("ladder-mode-unknown", "--ladder-mode=sideways", says="sideways"),
    G("ladder-arrivals-unknown", "--ladder-arrivals=random", says="random"),
    # -- URLs and launch commands ----------------------------------------------------------------------------
    G("url-ftp", "--oracle-url=ftp://127.0.0.1:9", says="ftp://"),
    G("url-no-scheme", "--oracle-url=127.0.0.1:9", says="127.0.0.1:9"),
    G("url-broken-ipv6", "--oracle-url=http://[::1", says="http://[::1"),
    G("url-port-too-big", "--oracle-url=http://127.0.0.1:99999", says="99999"),
    G("url-empty", "--oracle-url=", says="--oracle-url"),
    G("url-spaces", "--oracle-url=http://local host:8080", says="local host"),
    G("url-and-launch", NO_SERVER, "--launch=srv --port {port}", says="--launch"),
    G("launch-empty", "--launch=", says="--launch"),
    G("launch-without-port", "--launch=llama-server -m m.gguf", says="{port}"),
    G("launch-unbalanced-quote", "--launch=llama-server --port {port} -m 'm.gguf", says="quot"),
    G("server-args-with-url", "--server-args=-np 4", says="--server-args"),
    G("dtype-on-llamacpp", "--dtype=float16", says="--dtype"),
    G("ov-config-on-llamacpp", '--ov-config={"A": 1}', says="--ov-config"),
    G("servers-missing-file", "--servers=IN/nope.txt", says="nope.txt"),
    G("servers-a-folder", "--servers=IN/folder", says="folder", setup=_dir("folder")),
    G("servers-binary", "--servers=IN/servers.txt", says="servers.txt", setup=_bytes("servers.txt", b"\xff\xfe\x00")),
    G("servers-empty", "--servers=IN/servers.txt", says="servers.txt", setup=_text("servers.txt", "# none\n")),
    G("servers-not-urls", "--servers=IN/servers.txt", says="not a url", setup=_text("servers.txt", "not a url\n")),
    G("servers-json", "--servers=IN/servers.txt", says="servers.txt",
      setup=_text("servers.txt", '{"servers": ["http://127.0.0.1:9"]}\n')),
    # -- folders ---------------------------------------------------------------------------------------------
    G("reference-missing", "--reference=IN/nope", says="nope"),
    G("reference-a-file", "--reference=IN/file.txt", says="file.txt", setup=_text("file.txt", "x")),
    G("reference-empty-folder", "--reference=IN/folder", says="folder", setup=_dir("folder")),
    G("reference-a-report", "--reference=IN/planted/gate", says="gate"),
    G("reference-symlink-loop", "--reference=IN/loop", says="loop", setup=_symlink("loop", "loop")),
    G("record-and-reference", "--record=IN/new", REF, says="--record"),
    G("record-into-the-reference", "--record=IN/ref", says="ref"),
    G("record-inside-the-reference", "--record=IN/ref/sub", says="ref"),
    G("record-a-file", "--record=IN/file.txt", says="file.txt", setup=_text("file.txt", "x")),
    G("report-dir-is-the-reference", REF, "--report-dir=IN/ref", says="ref"),
    G("report-dir-inside-the-reference", REF, "--report-dir=IN/ref/records", says="ref"),
    G("report-dir-symlink-to-the-reference", REF, "--report-dir=IN/link", says="link", setup=_symlink("link", "ref")),
    G("report-dir-an-earlier-report", REF, "--report-dir=IN/planted/gate", says="gate"),
    G("report-dir-a-file", REF, "--report-dir=IN/file.txt", says="file.txt", setup=_text("file.txt", "x")),
    G("report-dir-too-long", REF, "--report-dir=IN/" + "d" * 300, says="d" * 40),
    G("report-dir-holds-the-reference", "--reference=IN/outer/ref", "--report-dir=IN/outer", says="outer",
      setup=lambda inp: shutil.copytree(inp / "ref", inp / "outer" / "ref")),
    G("suite-is-the-report-dir", REF, "--oracle-suite=IN/s.jsonl", "--report-dir=IN/s.jsonl", says="s.jsonl",
      setup=_suite([ROW])),
    # -- suites ----------------------------------------------------------------------------------------------
    G("suite-missing", "--oracle-suite=IN/nope.jsonl", says="nope.jsonl"),
    G("suite-unknown-name", "--oracle-suite=nosuchsuite", says="nosuchsuite"),
    G("suite-a-folder", "--oracle-suite=IN/folder", says="folder", setup=_dir("folder")),
    G("suite-empty", "--oracle-suite=IN/s.jsonl", says="s.jsonl", setup=_text("s.jsonl", "")),
    G("suite-blank-lines", "--oracle-suite=IN/s.jsonl", says="s.jsonl", setup=_text("s.jsonl", "\n\n\n")),
    G("suite-unknown-format", "--oracle-suite=IN/s.txt", says=".txt", setup=_text("s.txt", json.dumps(ROW))),
    G("suite-latin1", "--oracle-suite=IN/s.jsonl", says="UTF-8",
      setup=_bytes("s.jsonl", json.dumps(ROW | {"id": "caf\u00e9"}, ensure_ascii=False).encode("latin-1"))),
    G("suite-utf16", "--oracle-suite=IN/s.jsonl", says="s.jsonl", setup=_bytes("s.jsonl", json.dumps(ROW).encode("utf-16"))),
    G("suite-truncated-line", "--oracle-suite=IN/s.jsonl", says="s.jsonl:2",
      setup=_text("s.jsonl", json.dumps(ROW) + "\n" + json.dumps(ROW | {"id": "p2"})[:30])),
    G("suite-a-json-array", "--oracle-suite=IN/s.jsonl", says="s.jsonl", setup=_text("s.jsonl", json.dumps([ROW]))),
    G("suite-json-object-file", "--oracle-suite=IN/s.json", says="s.json", setup=_text("s.json", json.dumps({"p": ROW}))),
    G("suite-duplicate-ids", "--oracle-suite=IN/s.jsonl", says="p1", setup=_suite([ROW, ROW])),
    G("suite-max-tokens-zero", "--oracle-suite=IN/s.jsonl", says="max_tokens", setup=_suite([ROW | {"max_tokens": 0}])),
    G("suite-max-tokens-string", "--oracle-suite=IN/s.jsonl", says="max_tokens", setup=_suite([ROW | {"max_tokens": "8"}])),
    G("suite-max-tokens-bool", "--oracle-suite=IN/s.jsonl", says="max_tokens", setup=_suite([ROW | {"max_tokens": True}])),
    G("suite-messages-empty", "--oracle-suite=IN/s.jsonl", says="messages", setup=_suite([ROW | {"messages": []}])),
    G("suite-messages-a-string", "--oracle-suite=IN/s.jsonl", says="messages", setup=_suite([ROW | {"messages": "hi"}])),
    G("suite-role-unknown", "--oracle-suite=IN/s.jsonl", says="robot",
      setup=_suite([ROW | {"messages": [{"role": "robot", "content": "x"}]}])),
    G("suite-content-a-number", "--oracle-suite=IN/s.jsonl", says="content",
      setup=_suite([ROW | {"messages": [{"role": "user", "content": 5}]}])),
    G("suite-id-a-path", "--oracle-suite=IN/s.jsonl", says="a/b", setup=_suite([ROW | {"id": "a/b"}])),
    G("suite-id-dotdot", "--oracle-suite=IN/s.jsonl", says="'..'", setup=_suite([ROW | {"id": ".."}])),
    G("suite-id-empty", "--oracle-suite=IN/s.jsonl", says="id", setup=_suite([ROW | {"id": ""}])),
    G("suite-id-a-number", "--oracle-suite=IN/s.jsonl", says="id", setup=_suite([ROW | {"id": 5}])),
    G("suite-class-missing", "--oracle-suite=IN/s.jsonl", says="class",
      setup=_suite([{k: v for k, v in ROW.items() if k != "class"}])),
    G("suite-seed-a-string", "--oracle-suite=IN/s.jsonl", says="seed", setup=_suite([ROW | {"seed": "x"}])),
    G("suite-a-line-a-list", "--oracle-suite=IN/s.jsonl", says="s.jsonl:1", setup=_text("s.jsonl", "[1, 2]\n")),
    G("suite-a-line-null", "--oracle-suite=IN/s.jsonl", says="s.jsonl:1", setup=_text("s.jsonl", "null\n")),
    G("suite-csv-no-columns", "--oracle-suite=IN/s.csv", says="s.csv", setup=_text("s.csv", "a,b\n1,2\n")),
    G("suite-csv-empty", "--oracle-suite=IN/s.csv", says="s.csv", setup=_text("s.csv", "")),
    G("suite-csv-messages-not-json", "--oracle-suite=IN/s.csv", says="messages",
      setup=_text("s.csv", "id,class,messages,max_tokens\np1,chat,[{oops,8\n")),
    G("suite-csv-binary", "--oracle-suite=IN/s.csv", says="s.csv", setup=_bytes("s.csv", b"\x00\xff\xfe" * 40)),
    G("suite-parquet-garbage", "--oracle-suite=IN/s.parquet", says="s.parquet", setup=_bytes("s.parquet", b"PAR1garbage")),
    G("suite-parquet-empty", "--oracle-suite=IN/s.parquet", says="s.parquet", setup=_bytes("s.parquet", b"")),
    G("suite-arrow-garbage", "--oracle-suite=IN/s.arrow", says="s.arrow", setup=_bytes("s.arrow", b"ARROW1\x00garbage")),
    G("suite-parquet-is-jsonl", "--oracle-suite=IN/s.parquet", says="s.parquet",
      setup=_text("s.parquet", json.dumps(ROW) + "\n")),
    G("haystack-a-folder", "--haystack=IN/folder", "--canaries=needle", says="folder", setup=_dir("folder")),
    G("haystack-binary", "--haystack=IN/h.txt", "--canaries=needle", says="h.txt",
      setup=_bytes("h.txt", b"\xff\xfe\x00\x01" * 100)),
    G("haystack-missing", "--haystack=IN/nope.txt", "--canaries=needle", says="nope.txt"),
    G("code-set-not-json", "--code-set=IN/c.json", "--canaries=code", says="c.json", setup=_text("c.json", "{oops")),
    G("code-set-missing", "--code-set=IN/nope.json", "--canaries=code", says="nope.json"),
    G("code-set-a-list-of-numbers", "--code-set=IN/c.json", "--canaries=code", says="c.json",
      setup=_text("c.json", "[1, 2, 3]")),
    G("sweep-empty", "--sweep=", says="--sweep"),
    G("sweep-no-values", "--sweep=-ctk", says="-ctk"),
    G("sweep-without-launch", "--sweep=-ctk=f16,q8_0", says="--sweep"),
    G("tokenizer-missing", "--tokenizer=IN/nope.json", says="nope.json"),
    # -- options without effect in their combination (#52): each names the option it needs ------------------------
    G("sweep-no-repro-without-sweep", "--sweep-no-repro", REF, says="add --sweep"),
    G("canary-strict-with-no-canaries", "--canary-strict", "--canaries=none", says="--canaries with the kinds"),
    G("allow-mixed-servers-one-url", "--allow-mixed-servers", says="--allow-mixed-servers has no effect with one"),
    # -- damaged references (the gate) ----------------------------------------------------------------------
    G("manifest-truncated", "--reference=IN/bad", says="manifest.json", setup=_ref_with(_manifest_truncated)),
    G("manifest-utf16", "--reference=IN/bad", says="manifest.json", setup=_ref_with(_manifest_utf16)),
    G("manifest-a-list", "--reference=IN/bad", says="manifest.json", setup=_ref_with(_write("manifest.json", b"[]"))),
    G("manifest-empty", "--reference=IN/bad", says="manifest.json", setup=_ref_with(_write("manifest.json", b""))),
    G("manifest-missing", "--reference=IN/bad", says="manifest.json",
      setup=_ref_with(lambda f: (f / "manifest.json").unlink())),
    G("record-json-garbage", "--reference=IN/bad", says=".json", setup=_ref_with(_record_bytes(".json", b"{x"))),
    G("record-npz-truncated", "--reference=IN/bad", says=".npz", setup=_ref_with(_record_truncated(".npz"))),
    G("record-npz-missing", "--reference=IN/bad", says=".npz", setup=_ref_with(_record_gone)),
    G("records-folder-a-file", "--reference=IN/bad", says="records", setup=_ref_with(
        lambda f: (shutil.rmtree(f / "records"), (f / "records").write_text("x")))),
]


def _oracle_cases() -> list[Case]:
    bad_ref = "IN/bad"
    return [
        O("diff-missing", "diff", "IN/nope", REP, says="nope"),
        O("diff-a-file", "diff", "IN/file.txt", REP, says="file.txt", setup=_text("file.txt", "x")),
        O("diff-empty-folder", "diff", "IN/folder", REP, says="folder", setup=_dir("folder")),
        O("diff-tampered-reference", "diff", REP, bad_ref, says="bad", setup=_ref_with(_record_bytes(".npz", b"x"))),
        O("diff-identity-truncated", "diff", "IN/badrep", "IN/ref", says="identity.json",
          setup=_report_with(_write("identity.json", b'{"verdict": "fa'))),
        O("diff-identity-latin1", "diff", "IN/badrep", "IN/ref", says="identity.json",
          setup=_report_with(_write("identity.json", '{"verdict": "caf\u00e9"}'.encode("latin-1")))),
        O("diff-identity-a-list", "diff", "IN/badrep", "IN/ref", says="identity.json",
          setup=_report_with(_write("identity.json", b"[1]"))),
        O("diff-json-missing", "diff", "--json", "IN/nope", REP, says="nope"),
        O("diff-identity-empty-object", "diff", "IN/badrep", "IN/ref", says="missing key mode",
          setup=_report_with(_write("identity.json", b"{}"))),
        O("html-identity-empty-object", "html", "IN/badrep", says="missing key mode",
          setup=_report_with(_write("identity.json", b"{}"))),
        O("repro-identity-empty-object", "repro", "IN/badrep", "--out=IN/../repro", says="missing key mode",
          setup=_report_with(_write("identity.json", b"{}"))),
        O("html-missing", "html", "IN/nope", says="nope"),
        O("html-empty-folder", "html", "IN/folder", says="folder", setup=_dir("folder")),
        O("html-identity-a-list", "html", "IN/badrep", says="identity.json",
          setup=_report_with(_write("identity.json", b"[]"))),
        O("html-identity-verdict-a-number", "html", "IN/badrep", says="identity.json",
          setup=_report_with(_identity_change(lambda d: d.update(verdict=5)))),
        O("html-identity-utf16", "html", "IN/badrep", says="identity.json",
          setup=_report_with(lambda f: (f / "identity.json").write_bytes(
              (f / "identity.json").read_text().encode("utf-16")))),
        O("seal-missing", "seal", "IN/nope", says="nope"),
        O("seal-a-report", "seal", REP, says="gate"),
        O("seal-manifest-truncated", "seal", bad_ref, says="manifest.json", setup=_ref_with(_manifest_truncated)),
        O("seal-record-changed", "seal", bad_ref, says="bad", setup=_ref_with(_record_bytes(".json", b"{}"))),
        O("ledger-add-missing", "ledger", "add", "--ledger=IN/l.sqlite", "IN/nope", says="nope"),
        O("ledger-add-empty-folder", "ledger", "add", "--ledger=IN/l.sqlite", "IN/folder", says="folder",
          setup=_dir("folder")),
        O("ledger-add-a-reference", "ledger", "add", "--ledger=IN/l.sqlite", "IN/ref", says="ref"),
        O("ledger-add-identity-garbage", "ledger", "add", "--ledger=IN/l.sqlite", "IN/badrep", says="identity.json",
          setup=_report_with(_write("identity.json", b"\xff\xfe"))),
        O("ledger-add-ledger-not-sqlite", "ledger", "add", "--ledger=IN/l.sqlite", "IN/badrep", says="l.sqlite",
          setup=lambda inp: (_text("l.sqlite", "not a database")(inp), _report_with(_STARTED)(inp))),
        O("ledger-add-ledger-url-unknown", "ledger", "add", "--ledger=mysql://u@h/db", "IN/badrep", says="mysql",
          setup=_report_with(_STARTED)),
        O("ledger-add-no-folder", "ledger", "add", "--ledger=IN/l.sqlite", says="REPORT_DIR"),
        O("history-ledger-missing", "history", "--ledger=IN/nope.sqlite", "--out=IN/../h.html", says="nope.sqlite"),
        O("history-ledger-not-sqlite", "history", "--ledger=IN/l.sqlite", "--out=IN/../h.html", says="l.sqlite",
          setup=_text("l.sqlite", "not a database")),
        O("history-ledger-a-folder", "history", "--ledger=IN/folder", "--out=IN/../h.html", says="folder",
          setup=_dir("folder")),
        O("history-audit-ledger-missing", "history", "--audit", "--ledger=IN/nope.sqlite", says="nope.sqlite"),
        O("history-audit-and-check", "history", "--audit", "--check", "--ledger=IN/l.sqlite", says="give one",
          setup=_text("l.sqlite", "")),
        O("history-since-not-a-date", "history", "--ledger=IN/nope.sqlite", "--since=yesterday", says="yesterday"),
        O("history-since-month-13", "history", "--ledger=IN/nope.sqlite", "--since=2026-13-01", says="2026-13-01"),
        O("history-out-a-folder", "history", "--ledger=IN/nope.sqlite", "--out=IN/folder", says="folder",
          setup=_dir("folder")),
        O("fleet-ledger-missing", "fleet", "--ledger=IN/nope.sqlite", "--out=IN/../f.html", says="nope.sqlite"),
        O("fleet-ledger-not-sqlite", "fleet", "--ledger=IN/l.sqlite", "--out=IN/../f.html", says="l.sqlite",
          setup=_text("l.sqlite", "not a database")),
        O("fleet-since-not-a-date", "fleet", "--ledger=IN/nope.sqlite", "--since=yesterday", says="yesterday"),
        O("repro-missing", "repro", "IN/nope", says="nope"),
        O("repro-a-reference", "repro", "IN/ref", says="ref"),
        O("repro-unknown-prompt", "repro", REP, "--prompt=nosuch", "--out=IN/../repro", says="nosuch"),
        O("repro-max-probes-zero", "repro", REP, "--max-probes=0", "--out=IN/../repro", says="--max-probes"),
        O("repro-max-probes-word", "repro", REP, "--max-probes=many", says="many"),
        O("repro-launch-without-port", "repro", REP, "--launch=srv -m m.gguf", "--out=IN/../repro", says="{port}"),
        O("repro-launch-empty", "repro", REP, "--launch=", "--out=IN/../repro", says="--launch"),
        O("repro-out-is-the-report", "repro", REP, f"--out={REP}", says="gate"),
        O("repro-out-is-the-reference", "repro", REP, "--out=IN/ref", says="ref"),
        O("repro-reference-missing", "repro", REP, "--reference=IN/nope", "--out=IN/../repro", says="nope"),
        O("repro-reference-tampered", "repro", REP, f"--reference={bad_ref}", "--out=IN/../repro", says="bad",
          setup=_ref_with(_record_bytes(".npz", b"x"))),
        O("bisect-good-without-port", "bisect", "--backend=llamacpp", "--good=srv -m a", "--bad=srv -m b {port}",
          "--report-dir=IN/../bisect", says="{port}"),
        O("bisect-good-empty", "bisect", "--backend=llamacpp", "--good=", "--bad=srv {port}",
          "--report-dir=IN/../bisect", says="--good"),
        O("bisect-backend-unknown", "bisect", "--backend=nosuch", "--good=srv {port}", "--bad=srv -x {port}",
          "--report-dir=IN/../bisect", says="nosuch"),
        O("bisect-max-tokens-zero", "bisect", "--backend=llamacpp", "--good=srv {port}", "--bad=srv -x {port}",
          "--max-tokens=0", "--report-dir=IN/../bisect", says="--max-tokens"),
        O("bisect-trials-zero", "bisect", "--backend=llamacpp", "--good=srv {port}", "--bad=srv -x {port}",
          "--trials=0", "--report-dir=IN/../bisect", says="--trials"),
        O("bisect-suite-missing", "bisect", "--backend=llamacpp", "--good=srv {port}", "--bad=srv -x {port}",
          "--suite=IN/nope.jsonl", "--report-dir=IN/../bisect", says="nope.jsonl"),
        O("bisect-prompts-unknown", "bisect", "--backend=llamacpp", "--good=srv {port}", "--bad=srv -x {port}",
          "--prompts=nosuch", "--report-dir=IN/../bisect", says="nosuch"),
        O("bisect-same-commands", "bisect", "--backend=llamacpp", "--good=srv {port}", "--bad=srv {port}",
          "--report-dir=IN/../bisect", says="the same command", expected=0),  # documented: nothing to bisect
        O("bisect-report-dir-a-file", "bisect", "--backend=llamacpp", "--good=srv {port}", "--bad=srv -x {port}",
          "--report-dir=IN/file.txt", says="file.txt", setup=_text("file.txt", "x")),
        O("bisect-report-dir-the-reference", "bisect", "--backend=llamacpp", "--good=srv {port}",
          "--bad=srv -x {port}", "--report-dir=IN/ref", says="ref"),
        O("bisect-request-timeout-negative", "bisect", "--backend=llamacpp", "--good=srv {port}",
          "--bad=srv -x {port}", "--request-timeout=-1", "--report-dir=IN/../bisect", says="-1"),
        O("models-unknown", "models", "--path", "nosuch", says="nosuch"),
        O("unknown-command", "frobnicate", says="frobnicate"),
        O("no-command", says="oracle"),
    ]


CASES += _oracle_cases()


def inputs(folder: Path) -> Path:
    """The inputs every case may name: `ref` (a real reference), `planted/gate` (a gate report beside its own
    reference `planted/ref`), and whatever the case's setup adds."""
    from planted_report import planted_report

    inp = folder / "in"
    inp.mkdir(parents=True)
    shutil.copytree(SHIPPED_REFERENCE, inp / "ref")
    planted_report(inp / "planted", splits={"b": 3})  # planted/gate, which names planted/ref
    return inp


def run_case(case: Case, folder: Path, gate: Callable[[list[str]], Outcome]) -> list[str]:
    """The case in a fresh `folder`: [] when its answer held every property, else what broke ("traceback", "exit
    N (expected M)", "input folder changed", "accepted", "message lacks ...")."""
    inp = inputs(folder)
    if case.setup is not None:
        case.setup(inp)
    before = tree_digest(inp)
    args = case.args(inp)
    if case.command == "gate":
        if not any(a.startswith("--backend") for a in args):
            args.insert(0, "--backend=llamacpp")
        if not any(a.startswith(("--oracle-url", "--launch", "--servers")) for a in args):
            args.append(NO_SERVER)
        if not any(a.startswith("--report-dir") for a in args):
            args.append(f"--report-dir={folder / 'out'}")
        if not any(a.startswith("--canaries") for a in args):
            args.append("--canaries=none")
        outcome = gate(args)
    else:
        outcome = oracle_command(*args)
    found = problems(outcome, expected={case.exit_code()}, before=before, after=tree_digest(inp))
    if REFUSED_AT_THE_SERVER in outcome.output:
        found.append("accepted: the gate went on to the server")
    if case.says and case.says not in outcome.output:
        found.append(f"message lacks {case.says!r}: {outcome.output.strip()[-300:]!r}")
    return found
