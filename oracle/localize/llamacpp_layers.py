"""The llamacpp family's layers, through llama.cpp's own `llama-eval-callback` (`llamacpp_tool.py` builds it).

    (reference, repeat, candidate), notes = eval_callback_captures(ref_config, cand_config, path_ids, out=folder)

The tool reads text, not ids: the path's ids are decoded with the GGUF's own vocabulary, the tool tokenizes that
text (special tokens parsed) and prints the ids it got; a path that does not come back as the same ids is said in
the capture's notes. For every graph node it prints the name, op and shape, the first and last 3 values of the
first and last 3 positions (`%12.4f`) and the sum over the whole tensor. That is all localize sees: each row's
vector is those printed numbers and the sum, a coarse comparison (a difference below 1e-4 in the values not
printed is not seen), labelled so. Tensors are matched by name (`attn_norm-N`, `kqv_out-N`, `ffn_out-N`,
`l_out-N`, ...): only names printed once, with values, in both runs, with the same op and shape; `l_out-N` is a
whole layer's output (the curve's points). No logit lens.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from oracle.localize.compare import LayerCapture, LayerOutput
from oracle.localize.llamacpp_tool import TOOL, eval_callback
from oracle.localize.runner_layers import NoLayers

__all__ = ["COARSE", "PrintedTensor", "align_printed", "eval_callback_captures", "parse_printed", "printed_ids",
           "tool_args"]

COARSE = (f"coarse: llama.cpp's {TOOL} prints per tensor the first and last 3 values of the first and last 3 "
          "positions (4 decimals) and the whole tensor's sum; each row compares those printed statistics, not the "
          "whole tensor; no logit lens")
_HEADER = re.compile(r"^common_debug_cb_eval:\s+(?P<name>.+?) = \((?P<type>\w+)\)\s+(?P<op>\S+)\(.*\) = "
                     r"\{(?P<shape>[^}]*)\}\s*$")
_NUMBER = re.compile(r"-?(?:nan|inf|\d+\.\d+)", re.IGNORECASE)
_LAYER = re.compile(r"-(\d+)$")
_GENERIC = re.compile(r"^(node_\d+|leaf_\d+)$|[()]")  # graph-order names and views: they shift between graphs
_SERVER_ONLY = {"--metrics": 0, "-np": 1, "--parallel": 1, "--host": 1, "--port": 1, "--no-webui": 0, "--slots": 0}


@dataclass(frozen=True)
class PrintedTensor:
    name: str
    op: str
    shape: str
    numbers: tuple[float, ...]  # the printed values, then each printed sum
    count: int  # how many times the name was printed


def parse_printed(text: str) -> dict[str, PrintedTensor]:
    """Every tensor the tool printed with values, by name, in graph order (a repeated name keeps its count)."""
    seen: dict[str, PrintedTensor] = {}
    name = op = shape = None
    numbers: list[float] = []

    def close():
        if name is None:
            return
        before = seen.get(name)
        seen[name] = PrintedTensor(name, op, shape, tuple(numbers), (before.count if before else 0) + 1)

    for line in text.splitlines():
        head = _HEADER.match(line)
        if head:
            close()
            name, op, shape, numbers = head["name"].strip(), head["op"], head["shape"], []
        elif name is not None and line.startswith("    "):
            numbers += [float(x) for x in _NUMBER.findall(line.replace("sum =", ""))]
        elif name is not None and line.strip():
            close()
            name = None
    close()
    return {k: v for k, v in seen.items() if v.numbers}


def printed_ids(log: str) -> list[int]:
    """The token ids the tool says it tokenized the text to (its "number of input tokens = N" and N lines)."""
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"number of input tokens = (\d+)", line)
        if m:
            n = int(m[1])
            return [int(x.split()[-1]) for x in lines[i + 1:i + 1 + n]]
    return []


def _layer(name: str, last: int) -> int:
    m = _LAYER.search(name)
    if m:
        return int(m[1])
    return -1 if name.startswith(("inp", "embd")) else last + 1


def align_printed(*runs: dict[str, PrintedTensor]) -> tuple[list[LayerCapture], list[str]]:
    """The tensors every run printed once, with the same op and shape, as captures in the first run's order; and
    notes on what was left out."""
    first = runs[0]
    names, dropped = [], []
    for name, t in first.items():
        if _GENERIC.search(name):
            continue
        if all(name in r and r[name].count == 1 and (r[name].op, r[name].shape, len(r[name].numbers))
               == (t.op, t.shape, len(t.numbers)) for r in runs):
            names.append(name)
        else:
            dropped.append(name)
    last = max((int(m[1]) for n in names if (m := _LAYER.search(n))), default=0)
    captures = [LayerCapture(tuple(LayerOutput(name=n, layer=_layer(n, last), whole=n.startswith("l_out-"),
                                               vector=np.array(r[n].numbers, dtype=np.float64)) for n in names))
                for r in runs]
    notes = [f"{len(names)} tensors matched by name; {len(dropped)} printed more than once, or not in every run, or "
             f"with another op or shape, left out ({', '.join(dropped[:6])}{', ...' if len(dropped) > 6 else ''})"]
    return captures, notes


def tool_args(server_args: str, *, tokens: int = 0) -> list[str]:
    """The launch flags the tool takes: llama-server's own (-np, --metrics, --host, ...) left out; a context of the
    path's length in 256s (at least 512: the KV cells a pass reads are the path's whatever the context, and a small
    one loads in half the time) and the embedded server's `--no-repack`, unless the flags say otherwise."""
    given, out = shlex.split(server_args or ""), []
    i = 0
    while i < len(given):
        flag = given[i].split("=", 1)[0]
        if flag in _SERVER_ONLY:
            i += 1 + (_SERVER_ONLY[flag] if "=" not in given[i] else 0)
            continue
        out.append(given[i])
        i += 1
    if not {"-c", "--ctx-size"} & set(out):
        out += ["-c", str(max(512, -(-(tokens + 1) // 256) * 256))]
    if not {"--repack", "--no-repack", "-nr"} & set(out):
        out.append("--no-repack")  # as the embedded llama-server (oracle/targets/embedded.py says why)
    return out


def run_eval_callback(gguf: Path, server_args: str, text: str, keep: Path, *, tokens: int = 0) -> tuple[str, str]:
    """The tool on `text` with the launch flags; its stdout (the tensors) and stderr (the log), both kept in
    `keep`.out.txt / .log.txt."""
    tool, tools = eval_callback()
    keep.parent.mkdir(parents=True, exist_ok=True)
    prompt = keep.with_name(keep.name + ".prompt.txt")
    prompt.write_text(text, encoding="utf-8")
    cmd = [str(tool), "-m", str(gguf), "-f", str(prompt), *tool_args(server_args, tokens=tokens)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **tools.env), timeout=600)
    keep.with_name(keep.name + ".out.txt").write_text(done.stdout, encoding="utf-8")
    keep.with_name(keep.name + ".log.txt").write_text(shlex.join(cmd) + "\n" + done.stderr, encoding="utf-8")
    if done.returncode != 0:
        raise NoLayers(f"{TOOL} exited {done.returncode} on {gguf.name} with `{server_args}`: "
                       f"{done.stderr.strip()[-400:]} (its log: {keep.name}.log.txt)")
    return done.stdout, done.stderr


def decode_path(gguf: Path, path_ids: list[int]) -> str:
    """The path's text by the GGUF's own vocabulary (special tokens written out, for the tool to parse back)."""
    from oracle.backends.gguf import GGUFError, tokenizer_from_gguf

    try:
        return tokenizer_from_gguf(gguf).decode(list(path_ids), skip_special_tokens=False)
    except (GGUFError, ValueError) as exc:
        raise NoLayers(f"{gguf}: the path's ids cannot be written as text for {TOOL} ({exc})") from None


def tokenization_note(path_ids: list[int], got: list[int]) -> str:
    if list(got) == list(path_ids):
        return f"the path's text tokenizes back to the same {len(got)} ids in {TOOL}"
    at = next((i for i, (a, b) in enumerate(zip(path_ids, got)) if a != b), min(len(path_ids), len(got)))
    return (f"NOT the same ids: the path's text tokenizes to {len(got)} ids in {TOOL}, the path has "
            f"{len(path_ids)}; first difference at position {at}; the tool's last position is not the split's")


def eval_callback_captures(reference, candidate, path_ids: list[int], *, out: Path) -> tuple[list[LayerCapture],
                                                                                          list[str]]:
    """The reference's configuration twice and the candidate's once through the tool, on the path's text; the
    three captures (matched by name across the three printouts) and the notes (coarse, the tokenization check).
    The tool's own output is kept in `out` (llamacpp-reference-1.out.txt, ...)."""
    runs, notes, texts = [], [COARSE], {}
    for side, config in (("reference-1", reference), ("reference-2", reference), ("candidate", candidate)):
        gguf = Path(config.model) if config.model else None
        if gguf is None:
            from oracle.targets.cache import default_model

            gguf = default_model()
        text = texts[gguf] = texts.get(gguf) or decode_path(gguf, path_ids)
        stdout, log = run_eval_callback(gguf, config.server_args, text, out / f"llamacpp-{side}",
                                        tokens=len(path_ids))
        note = tokenization_note(path_ids, printed_ids(log))
        if note not in notes:
            notes.append(note)
        runs.append(parse_printed(stdout))
    if not runs[0]:
        raise NoLayers(f"{TOOL} printed no tensor with values (its output: {out / 'llamacpp-reference-1.out.txt'})")
    captures, matched = align_printed(*runs)
    return captures, notes + matched
