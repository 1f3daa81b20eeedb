"""A gate report of an in-process family and its reference on disk, written without a run, for `oracle localize`:
the two identities say which configurations load; the reference's record gives the path up to the split.

    report = planted_localize(tmp_path, reference={"backend": "hf-cpu", "server": {"dtype": "float32"}},
                              candidate={"backend": "hf-cpu", "server": {"dtype": "float16"}}, split=3)
"""

from __future__ import annotations

import json
from pathlib import Path

from oracle.store.records import PRIMARY, Record, save_record
from oracle.store.reference import write_reference

PROMPT_IDS = [1, 9690, 28, 2683, 30, 198]  # SmolLM2's ids; any ids of the vocabulary make a path
COMPLETION_IDS = [504, 3937, 282, 4649, 314, 7042, 30, 2]


def _record(ids: list[int]) -> Record:
    return Record(id="p", condition=PRIMARY, prompt_ids=PROMPT_IDS, completion_ids=ids, finish_reason="length",
                  text="", logprobs=[-1.0] * len(ids), top_ids=[[t] for t in ids], top_logprobs=[[-1.0] for _ in ids])


def planted_localize(tmp_path: Path, *, reference: dict, candidate: dict, split: int | None = 3,
                     mode: str = "gate") -> Path:
    """split None: the gate's tokens were exact (nothing to localize)."""
    ref = tmp_path / "ref"
    write_reference(ref, [_record(COMPLETION_IDS)], kind="f16", identity=reference,
                    run={"max_tokens": len(COMPLETION_IDS), "seed": 1234, "logprobs": 1})
    report = tmp_path / "gate"
    ids = list(COMPLETION_IDS)
    if split is not None:
        ids[split] += 1
    save_record(report / "records", _record(ids))
    evidence = {"first_divergence": split, "candidate_token": ids[split] if split is not None else None}
    checks = [{"id": "tokens[p]", "kind": "tokens", "verdict": "exact" if split is None else "divergent",
               "evidence": evidence}]
    data = {"schema_version": 2, "mode": mode, "backend": candidate["backend"], "identity": candidate,
            "prompts": ["p"], "reference": {"path": str(ref)}, "checks": checks,
            "summary": {"exact": [int(split is None), 1]}}
    (report / "identity.json").write_text(json.dumps(data))
    return report
