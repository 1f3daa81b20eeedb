"""What a speed comparison held equal: the launch differences between reference and candidate, as the field labels
them (`matched`, `matched_except_speculation: --spec-type ngram-simple`, `matched_except: -c 4096 (was 8192)`).

    launch_match(candidate_command, reference_command)["label"]

The commands are taken apart by `oracle.launch_command` (bisect's parser); a difference is speculation when its flag
is a speculative-decoding flag (llama.cpp `--spec-*`, `-md` / `--model-draft`, `--draft*` and the draft model's
own `-*d` settings; vLLM `--speculative-config`), anything else is listed under `matched_except`. The commands'
wrappers (`env`, `taskset`, `numactl`, `nice`) are not the program: `exec env GGML_CUDA_DISABLE_GRAPHS=1
llama-server ...` against `llama-server ...` is `matched_except: GGML_CUDA_DISABLE_GRAPHS=1 (was unset)`, and a
wrapper's options are named as one change (`taskset -c 0-3 (added)`).
"""

from __future__ import annotations

import re

from oracle.launch_command import Change, LaunchError, differences, parse_launch

__all__ = ["MATCHED", "SPECULATION_FLAG", "change_words", "is_speculation", "launch_match"]

MATCHED = "matched"
# llama.cpp: --spec-type / --spec-replace / --spec-ngram-*, --draft / --draft-max / --draft-min / --draft-p-min, the
# draft model and its context, devices, layers, threads and KV types; vLLM: --speculative-config (older releases:
# --speculative-model, --num-speculative-tokens).
SPECULATION_FLAG = re.compile(r"--spec-[\w-]+|--draft[\w-]*|--[\w-]*-draft|--speculative[\w-]*|--num-speculative[\w-]*"
                              r"|-md|-cd|-devd|-ngld|-td|-tbd|-ctkd|-ctvd")


def is_speculation(change: Change) -> bool:
    return change.kind == "flag" and bool(SPECULATION_FLAG.fullmatch(str(change.key)))


def change_words(change: Change) -> str:
    """The change as the card names it: bisect's label, and a variable the reference did not set `(was unset)`."""
    if change.kind == "env" and change.a is None:
        return f"{change.label} (was unset)"
    return change.label


def launch_match(candidate: str | None, reference: str | None) -> dict:
    """{"label", "speculation": [...], "other": [...]}: the label as the card shows it and each difference in
    words; "launch not compared: <why>" when a side's command is unknown (a server given by --oracle-url) or unreadable."""
    missing = [side for side, cmd in (("the reference", reference), ("the candidate", candidate)) if not cmd]
    if missing:
        return {"label": f"launch not compared: {' and '.join(missing)} gave no launch command (a server given "
                         "by --oracle-url)", "speculation": [], "other": []}
    try:
        changes = differences(parse_launch(reference), parse_launch(candidate))
    except LaunchError as exc:
        return {"label": f"launch not compared: {exc}", "speculation": [], "other": []}
    spec = [change_words(c) for c in changes if is_speculation(c)]
    other = [change_words(c) for c in changes if not is_speculation(c)]
    parts = ([f"matched_except_speculation: {', '.join(spec)}"] if spec else []) + (
        [f"matched_except: {', '.join(other)}"] if other else [])
    return {"label": "; ".join(parts) or MATCHED, "speculation": spec, "other": other}
