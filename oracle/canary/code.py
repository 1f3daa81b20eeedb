"""The code-result canary set: small programs whose printed output the model must state.

The expected answer is never typed by hand. `python -m oracle.canary.code build` runs every
program in a sandboxed subprocess and stores its output with the program's sha256;
`python -m oracle.canary.code check` re-runs them and names any item whose stored answer is stale.

Extraction rule (strict, documented in canaries/README.md): the prompt ends with the fixed
answer prefix `Output:` and the model's answer is the FIRST integer (`-?[0-9]+`) of its
completion. No integer at all is an extraction failure, and so is a completion that contains
the expected integer but not first: both are reported as `extraction`, never as a wrong answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from oracle.store.json_files import read_json
from oracle.store.shapes import CodeSetShape

__all__ = ["ANSWER_PREFIX", "CODE_SET", "EXTRACTION_RULE", "MAX_TOKENS", "CodeItem", "Extraction", "PROGRAMS", "SandboxError", "build_set", "code_prompt",
           "extract_answer", "load_set", "run_sandboxed", "stale_items", "score_answer"]

CODE_SET = Path(str(resources.files("oracle.canaries"))) / "code_result.json"
SANDBOX_TIMEOUT_S = 5.0
ANSWER_PREFIX = "Output:"
MAX_TOKENS = 8
EXTRACTION_RULE = "first integer (-?[0-9]+) of the completion, which follows the answer prefix 'Output:'"
_INT = __import__("re").compile(r"-?\d+")

# (id, level, program). Every program prints exactly one integer. Levels: 1 easy ... 4 hard.
PROGRAMS: list[tuple[str, int, str]] = [
    ("mul-7-2", 1, "print(7 * 2)"),
    ("add-3-5", 1, "print(3 + 5)"),
    ("sub-10-4", 1, "print(10 - 4)"),
    ("var-add", 1, "x = 4\ny = 5\nprint(x + y)"),
    ("len-list", 2, "items = [3, 1, 4, 1, 5]\nprint(len(items))"),
    ("sum-range", 2, "print(sum(range(5)))"),
    ("max-list", 2, "print(max([2, 9, 4, 7]))"),
    ("loop-acc", 3, "total = 0\nfor i in range(1, 6):\n    total += i * i\nprint(total)"),
    ("str-count", 3, "s = 'banana'\nprint(s.count('a') * 10 + len(s))"),
    ("list-comp", 3, "xs = [n for n in range(20) if n % 3 == 0]\nprint(sum(xs) - len(xs))"),
    ("recursion", 4, "def f(n):\n    return 1 if n < 2 else f(n - 1) + f(n - 2)\nprint(f(10))"),
    ("dict-mutate", 4, "d = {}\nfor w in 'the cat and the hat and the bat'.split():\n"
                       "    d[w] = d.get(w, 0) + 1\nprint(d['the'] * 100 + d['and'] * 10 + len(d))"),
    ("closure", 4, "fs = [lambda x, i=i: x * i for i in range(4)]\nprint(sum(f(3) for f in fs) + fs[2](7))"),
    ("int-div-mod", 4, "a, b = divmod(-17, 5)\nprint(a * 100 + b)"),
]


class SandboxError(RuntimeError):
    """A canary program did not run cleanly in the sandbox."""


@dataclass(frozen=True)
class CodeItem:
    id: str
    level: int
    program: str
    program_sha256: str
    expected: str

    def as_dict(self) -> dict:
        return {"id": self.id, "level": self.level, "program": self.program,
                "program_sha256": self.program_sha256, "expected": self.expected}


@dataclass(frozen=True)
class Extraction:
    extracted: str | None  # the last integer in the text, or None
    verdict: str  # "correct", "wrong" or "extraction"
    reason: str


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _limits() -> None:  # runs in the child before exec
    os.setsid()
    for what, value in ((resource.RLIMIT_CPU, 2), (resource.RLIMIT_AS, 256 << 20),
                        (resource.RLIMIT_FSIZE, 1 << 20), (resource.RLIMIT_NOFILE, 32),
                        (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(what, (value, value))


# Used only when network namespaces are unavailable: the program cannot open sockets.
_NO_SOCKETS = ("import socket as _s\n"
               "def _deny(*a, **k):\n    raise OSError('network disabled in the canary sandbox')\n"
               "_s.socket = _deny; _s.create_connection = _deny; del _s, _deny\n")


def _has_netns() -> bool:
    unshare = shutil.which("unshare")
    if not unshare:
        return False
    try:
        return subprocess.run([unshare, "-rn", "true"], capture_output=True, timeout=5, env={}).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def run_sandboxed(program: str, *, timeout: float = SANDBOX_TIMEOUT_S) -> str:
    """Run a program in isolated Python (-I -S), empty environment, temp cwd, resource limits, no network.

    Returns its stripped stdout; raises SandboxError on a non-zero exit, a timeout or stderr output.
    """
    with tempfile.TemporaryDirectory(prefix="oracle-canary-") as tmp:
        netns = _has_netns()
        src = program if netns else _NO_SOCKETS + program
        path = Path(tmp) / "program.py"
        path.write_text(src)
        cmd = [sys.executable, "-I", "-S", "-B", str(path)]
        if netns:
            cmd = [shutil.which("unshare"), "-rn"] + cmd
        try:
            r = subprocess.run(cmd, cwd=tmp, env={}, capture_output=True, text=True, timeout=timeout,
                               preexec_fn=_limits, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise SandboxError(f"timed out after {timeout:g} s") from None
        if r.returncode != 0 or r.stderr.strip():
            raise SandboxError(f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
        return r.stdout.strip()


def build_set(path: Path = CODE_SET, programs: list[tuple[str, int, str]] = PROGRAMS) -> list[CodeItem]:
    """Run every program in the sandbox and write the set (answers + program hashes) to path."""
    items = []
    for pid, level, program in programs:
        out = run_sandboxed(program)
        if not _INT.fullmatch(out):
            raise SandboxError(f"{pid}: prints {out!r}, not one integer; the extraction rule needs an integer")
        items.append(CodeItem(pid, level, program, _sha256(program), out))
    data = {"schema_version": 1, "python": sys.version.split()[0],
            "extraction_rule": EXTRACTION_RULE,
            "items": [i.as_dict() for i in items]}
    path.write_text(json.dumps(data, indent=1) + "\n")
    return items


def load_set(path: Path = CODE_SET) -> list[CodeItem]:
    """The set's items; InputFileError naming the file and the fix when it is not a code set."""
    data = read_json(Path(path), CodeSetShape, fix="give --code-set a set built by `python -m oracle.canary.code "
                                                    "build`, or leave it out for the shipped one")
    return [CodeItem(d["id"], int(d["level"]), d["program"], d["program_sha256"], str(d["expected"]))
            for d in data["items"]]


def stale_items(items: list[CodeItem]) -> list[str]:
    """Re-run every program; one line per item whose hash or stored answer disagrees (empty: fresh)."""
    out = []
    for it in items:
        if _sha256(it.program) != it.program_sha256:
            out.append(f"{it.id}: the program changed since the set was built (sha256 differs); "
                       "rebuild with `python -m oracle.canary.code build`")
            continue
        try:
            got = run_sandboxed(it.program)
        except SandboxError as exc:
            out.append(f"{it.id}: the program no longer runs: {exc}")
            continue
        if got != it.expected:
            out.append(f"{it.id}: stored answer {it.expected!r} but the program prints {got!r}; "
                       "rebuild with `python -m oracle.canary.code build`")
    return out


def code_prompt(item: CodeItem) -> list[dict]:
    """The chat messages for one item (the rendered prompt is then followed by ANSWER_PREFIX)."""
    return [{"role": "user", "content": f"Run this Python code and tell me what it prints.\n\n{item.program}"}]


def extract_answer(text: str) -> str | None:
    """The rule: the first integer in the completion (which follows the fixed answer prefix), or None."""
    m = _INT.search(text)
    return m.group(0) if m else None


def score_answer(text: str, expected: str) -> Extraction:
    """Apply the extraction rule and say whether the model, or the extraction, is at fault."""
    got = extract_answer(text)
    if got is None:
        return Extraction(None, "extraction", "no integer in the answer: the extraction rule found nothing")
    if got == expected:
        return Extraction(got, "correct", f"answered {got}")
    if expected in _INT.findall(text):
        return Extraction(got, "extraction", f"the text contains {expected} but its first integer is {got}: "
                                             "the strict rule does not credit it")
    return Extraction(got, "wrong", f"answered {got}, the program prints {expected}")


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else "check"
    path = Path(argv[1]) if len(argv) > 1 else CODE_SET
    if cmd == "build":
        items = build_set(path)
        print(f"wrote {len(items)} items to {path}")
        return 0
    if cmd == "check":
        stale = stale_items(load_set(path))
        for line in stale:
            print(f"STALE {line}")
        print(f"{len(stale)} stale item(s) in {path}" if stale else f"{path}: every stored answer is fresh")
        return 1 if stale else 0
    print("usage: python -m oracle.canary.code build|check [PATH]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
