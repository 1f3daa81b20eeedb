"""Size and browser render time of identity.html for a large report: 64 prompts x 1,024 tokens.

    python benchmarks/html_report_size.py [--prompts 64] [--tokens 1024] [--levels 1,2,4,8,16,32,64]

Builds the report data of a gate with that many prompts, every ladder level and a second
boot, a quarter of the records split (each with its split view), renders identity.html,
prints its size, then opens it in headless Chromium (network off) and prints the page's
load time (navigation start to load event end) over 5 loads. Chromium and chromedriver
come from Debian: apt-get install -y chromium chromium-driver.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from oracle.checks import SECTIONS, fresh_states
from oracle.report.html import render_html
from oracle.report.state import ReportState
from oracle.compare.verdicts import Check

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "helpers"))  # the browser helper


def split(rng: random.Random, position: int) -> dict:
    def side():
        ids = [rng.randrange(49152) for _ in range(12)]
        return {"ids": ids, "text": " ".join(f"w{t}" for t in ids), "finish": "length", "length": 1024,
                "top": [[rng.randrange(49152), -rng.random() * 5, f"w{k}"] for k in range(5)]}
    shared = [rng.randrange(49152) for _ in range(12)]
    return {"position": position, "shared_ids": shared, "shared_text": " ".join(f"w{t}" for t in shared),
            "reference": side(), "candidate": side()}


def build(prompts: int, tokens: int, levels: list[int]) -> dict:
    rng = random.Random(7)
    ids = [f"prompt-{i:03d}" for i in range(prompts)]
    s = ReportState(mode="gate", backend="llamacpp-cuda", prompt_ids=ids, states=fresh_states())
    for pid in ids:
        if rng.random() < 0.25:
            fd = rng.randrange(tokens)
            s.checks.append(Check(f"tokens[{pid}]", "tokens", "divergent", f"first divergence at token {fd}",
                                  evidence={"first_divergence": fd, "split": split(rng, fd)}, outcome="failed"))
        else:
            s.checks.append(Check(f"tokens[{pid}]", "tokens", "exact", f"{tokens}/{tokens}",
                                  evidence={"first_divergence": None}, outcome="passed"))
    conditions = [(f"ladder[c{c}]", "ladder", c) for c in levels] + [("boot[2]", "boot", 1)]
    for cid, kind, c in conditions:
        n = c * -(-prompts // c)
        rows, shown = [], set()
        for k in range(n):
            pid = ids[k % prompts]
            bad = rng.random() < 0.25
            fd = rng.randrange(tokens) if bad else None
            side = {"verdict": "divergent" if bad else "exact", "first_divergence": fd, "margin_nats": 1.2,
                    "reference_length": tokens, "candidate_length": tokens, "reason": ""}
            row = {"record": f"{pid}~{k}", "prompt": pid, "verdict": side["verdict"], "vs_c1": side,
                   "vs_reference": side, "completion_sha256": "0" * 64}
            if bad and pid not in shown:
                shown.add(pid)
                row["split"] = split(rng, fd) | {"against": "c1"}
            rows.append(row)
        exact = sum(r["verdict"] == "exact" for r in rows)
        ev = {"rows": rows, "counts": {"exact": exact}, "required": n, "records": n}
        if kind == "ladder":
            ev["overlap"] = {"asked": c, "reached": c}
            s.apply({"ladder": {f"c{c}": {"counts": {"exact": exact}, "records": n, "overlap": ev["overlap"],
                                          "first_divergences": [], "verdict": "divergent", "required": n}}})
        s.checks.append(Check(cid, kind, "divergent", f"{exact}/{n} exact", evidence=ev, outcome="failed"))
    s.apply({"boots": {"2": {"counts": {"exact": 40}, "records": prompts}}})
    s.complete = s.closed = True
    return s.as_json()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--levels", default="1,2,4,8,16,32,64")
    a = ap.parse_args()
    data = build(a.prompts, a.tokens, [int(x) for x in a.levels.split(",")])
    t0 = time.perf_counter()
    page = render_html(data, SECTIONS)
    render_s = time.perf_counter() - t0
    print(f"{a.prompts} prompts x {a.tokens} tokens, ladder {a.levels} + boot 2: identity.html "
          f"{len(page.encode()) / 1e6:.2f} MB, written in {render_s:.2f} s")
    from browser import headless_chromium

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "identity.html"
        path.write_text(page)
        loads = []
        with headless_chromium() as browser:
            for _ in range(5):
                browser.get(path.resolve().as_uri())
                loads.append(browser.execute_script("const n = performance.getEntriesByType('navigation')[0];"
                                                    "return n.loadEventEnd - n.startTime;"))
    print(f"headless Chromium load (navigation start to load event end) over 5 loads: "
          f"min {min(loads):.0f} ms, median {statistics.median(loads):.0f} ms, max {max(loads):.0f} ms")


if __name__ == "__main__":
    main()
