"""Crosstalk canary: at each ladder level of c >= 2, c requests at once each copy their own random marker; a
completion holding another concurrent request's content is `contaminated` (always fails, never excused).

Each request is first sent alone (its c1 completion on this server), then all c at once. The wave must overlap
as a ladder level must (run/overlap.py): fewer than c generating at once, with no contamination found, is
`inconclusive` (kind overlap).
"""

from __future__ import annotations

import pytest

from oracle.backends import RequestFailed
from oracle.canary.crosstalk import (MAX_TOKENS, find_contamination, level_verdict, marker_prompt,
                                     request_names, wave_markers)
from oracle.canary.plan import crosstalk_levels
from oracle.canary.run import canary_result, complete_many, complete_wave, not_run, render_ids
from oracle.compare.verdicts import MAX_MESSAGE_LINES, PASS, Check
from oracle.gate.options import options_of
from oracle.run.overlap import max_overlap


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "crosstalk_level" in metafunc.fixturenames:
        levels = crosstalk_levels(options_of(metafunc.config))
        metafunc.parametrize("crosstalk_level", levels, ids=[f"c{c}" for c in levels])


def test_crosstalk(oracle_gate, request, crosstalk_level) -> None:
    level = crosstalk_level
    item_id = f"crosstalk[c{level}]"
    markers = wave_markers(level, seed=oracle_gate.options.seed, level=level)
    names = request_names(level)
    max_tokens = oracle_gate.options.max_tokens or MAX_TOKENS
    try:
        prompts = [render_ids(oracle_gate, messages, suffix=opening)
                   for messages, opening in map(marker_prompt, markers)]
        alone = complete_many(oracle_gate, prompts, max_tokens=max_tokens, at_once=False)
        wave = complete_wave(oracle_gate, prompts, max_tokens=max_tokens)
    except RequestFailed as exc:
        not_run(oracle_gate, item_id, "crosstalk", str(exc))
        return
    outputs = [c.completion_ids for _, c in wave]
    baselines = [c.completion_ids for c in alone]
    reached = max_overlap((t0 + c.token_times_s[0], t0 + c.token_times_s[-1])
                          for t0, c in wave if c.token_times_s)
    findings = find_contamination(outputs, baselines, prompts)
    decode = oracle_gate.prompts.decode
    verdict, detail, lines, inconclusive_kind = level_verdict(level, reached, findings, names=names,
                                                              decode=decode)
    contamination = [f.as_dict() | {"victim": names[f.victim], "source": names[f.source],
                                    "text": decode(list(f.piece)), "described": f.describe(decode, names)}
                     for f in findings]
    row = {"family": "crosstalk", "ok": verdict == PASS, "level": level, "verdict": verdict, "why": detail,
           "expected": f"{level}/{level} without another's content",
           "extracted": f"{level - len(findings)}/{level} without another's content",
           "overlap": {"asked": level, "reached": reached},
           "requests": [{"id": name, "marker": marker, "copied_c1": marker in c1.text,
                         "copied": marker in c.text, "same_as_c1": c1.completion_ids == c.completion_ids,
                         "text": c.text}
                        for name, marker, c1, (_, c) in zip(names, markers, alone, wave)],
           "contamination": contamination}
    canary_result(oracle_gate, item_id, row)
    check = Check(item_id, "canary", verdict, detail, lines,
                  {"overlap": row["overlap"], "contamination": contamination},
                  inconclusive_kind=inconclusive_kind)
    request.node.user_properties.append(("oracle_verdict", verdict))
    if not oracle_gate.judge(check):
        msg = [f"{item_id}: {verdict}: {check.detail}"] + [f"  {line}" for line in check.lines]
        pytest.fail("\n".join(msg[:MAX_MESSAGE_LINES]), pytrace=False)
