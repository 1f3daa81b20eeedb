"""The localize run: the reference's configuration twice on the path (its own repeat gives the band), the
candidate's once, every layer compared at the split position, the answer written as localize.json / .md / .html.

    code = localize(source, out=Path("reports/...-localize"))   # 0 a layer named, 1 every layer within band

A configuration is loaded, read and let go before the next one is loaded: two copies of a model never share
memory at once.
"""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

from oracle.localize.compare import LayerMismatch, compare_layers
from oracle.localize.readers import load_reader
from oracle.localize.report import write_report
from oracle.localize.source import EVAL_CALLBACK, LocalizeSource
from oracle.store.stamps import utc_now

__all__ = ["LOCALIZED", "WITHIN_BAND", "localize"]

LOCALIZED, WITHIN_BAND = 0, 1


def _read(config, path_ids: list[int], times: int) -> list:
    read = load_reader(config)
    captures = [read(path_ids) for _ in range(times)]
    del read
    gc.collect()  # the model goes before the next configuration loads
    return captures


def localize(source: LocalizeSource, *, out: Path, stream=None) -> int:
    stream = stream or sys.stdout
    started, t0 = utc_now(), time.perf_counter()
    path = list(source.path_ids)
    print(f"oracle localize: prompt {source.prompt}, {len(path)} token ids up to the split at completion token "
          f"{source.split}", file=stream)
    print(f"reference ({source.reference.label()}): two passes (its own repeat gives the band) ...", file=stream)
    notes = []
    if source.reference.layers == source.candidate.layers == EVAL_CALLBACK:
        # llama.cpp's tool prints tensors by name: the three printouts are matched together, then compared.
        # Imported here: `python -m oracle.localize.llamacpp_tool` (the build) must not find it imported already.
        from oracle.localize.llamacpp_layers import eval_callback_captures

        print(f"candidate ({source.candidate.label()}): one pass ...", file=stream)
        (reference, repeat, candidate), notes = eval_callback_captures(source.reference, source.candidate, path,
                                                                       out=out)
    elif EVAL_CALLBACK in (source.reference.layers, source.candidate.layers):
        raise LayerMismatch(f"the reference is {source.reference.backend}, the candidate {source.candidate.backend}: "
                            "llama.cpp's printed tensors and another family's layers are not matched; localize "
                            "two llamacpp configurations, or two of one in-process family")
    else:
        reference, repeat = _read(source.reference, path, 2)
        print(f"candidate ({source.candidate.label()}): one pass ...", file=stream)
        (candidate,) = _read(source.candidate, path, 1)
    if source.reference == source.candidate:
        notes.append("the reference and the candidate are the same configuration: a control that names no layer")
    result = compare_layers(reference, repeat, candidate, notes=tuple(notes))
    named = result.first_out_of_band is not None
    code = LOCALIZED if named else WITHIN_BAND
    data = {"schema_version": 1, "tool": "localize", "status": "localized" if named else "within-band",
            "exit_code": code, "answer": result.answer(), "report": str(source.report_dir),
            "reference_dir": str(source.reference_dir), "reference": source.reference.as_json(),
            "candidate": source.candidate.as_json(), "prompt": source.prompt, "split": source.split,
            "path_tokens": len(path), "position": len(path) - 1, "reference_token": source.reference_token,
            "candidate_token": source.candidate_token, "localize": result.as_json(),
            "started_utc": started, "written_utc": utc_now(), "wall_s": round(time.perf_counter() - t0, 2)}
    write_report(out, data)
    print(f"oracle localize: {result.answer()}", file=stream)
    print(f"report: {out / 'localize.md'} (and localize.json, localize.html)", file=stream)
    return code
