"""A gate report folder and its reference on disk, written without a server, for `oracle repro`'s unit tests.

    report = planted_report(tmp_path, splits={"b": 3})   # prompt b's gate record leaves the reference at token 3

Three prompts a, b, c of 8 tokens; the reference's records carry top-k logprobs, so margins can be computed.
"""

from __future__ import annotations

import json
from pathlib import Path

from oracle.store.records import PRIMARY, Record, save_record
from oracle.store.reference import write_reference

PROMPTS = ("a", "b", "c")
LAUNCH = "srv -m m.gguf --port {port} -ctk q8_0"
REFERENCE_LAUNCH = "srv -m m.gguf --port {port}"


def expected_ids(pid: str) -> list[int]:
    base = 100 * (PROMPTS.index(pid) + 1)
    return [base + i for i in range(8)]


def record(pid: str, ids: list[int]) -> Record:
    # top-k at each position: the chosen token, then token+50 (a near tie), then token+60
    top_ids = [[t, t + 50, t + 60] for t in ids]
    top_lp = [[-1.0, -1.2, -3.0] for _ in ids]
    return Record(id=pid, condition=PRIMARY, prompt_ids=[1, 2, 3 + PROMPTS.index(pid)], completion_ids=ids,
                  finish_reason="length", text=" ".join(map(str, ids)), logprobs=[-1.0] * len(ids),
                  top_ids=top_ids, top_logprobs=top_lp)


def planted_report(tmp_path: Path, *, splits: dict[str, int], target: str = "launch", launch: str = LAUNCH,
                   mode: str = "gate", reference_path: str | None = None) -> Path:
    """splits: prompt -> the position where its gate record takes the reference's second choice (token + 50)."""
    ref = tmp_path / "ref"
    write_reference(ref, [record(p, expected_ids(p)) for p in PROMPTS], kind="mtp0",
                    identity={"launch_command": REFERENCE_LAUNCH, "server": {"server": "srv", "build": "b1"}},
                    run={"max_tokens": 8, "seed": 1234, "logprobs": 3})
    report = tmp_path / "gate"
    checks = []
    for p in PROMPTS:
        ids = expected_ids(p)
        if p in splits:
            i = splits[p]
            ids = ids[:i] + [ids[i] + 50] + [900 + k for k in range(7 - i)]
        save_record(report / "records", record(p, ids))
        verdict = "near-tie" if p in splits else "exact"
        evidence = {"first_divergence": splits.get(p), "margin_nats": 0.2 if p in splits else None}
        checks.append({"id": f"tokens[{p}]", "kind": "tokens", "verdict": verdict, "evidence": evidence})
    identity = {"backend": "llamacpp", "target": target, "launch_command": launch if target == "launch" else
                "exec srv -m m.gguf --port {port}", "server_args": None,
                "server": {"server": "srv", "build": "b2"}, "model": {"path": "m.gguf", "sha256": "ab" * 32},
                "host": {"cpu": "x"}, "request": {"seed": 1234, "logprobs": 3}}
    data = {"schema_version": 2, "mode": mode, "backend": "llamacpp", "identity": identity, "prompts": list(PROMPTS),
            "reference": {"path": reference_path or str(ref)}, "checks": checks,
            "summary": {"exact": [3 - len(splits), 3]}}
    (report / "identity.json").write_text(json.dumps(data))
    return report
