"""One run's identity.json in a few lines for the campaign's summary.txt (c.sh): verdict, the speed card, power and
isolation, the comparison (interleaved and recorded), the interleaved session and its A/A control, every speed cell
(medians, ratios / intervals, energy), the speed and speculation items.

    python3 summarize.py reports/2-aa-control/identity.json

Read defensively: the speed package's fields are changing (cells interleaved, per-cell energy), so a key this script
does not know is printed as it is, never dropped, and a missing one is skipped.
"""

import json
import sys


def short(value, n=300) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= n else text[:n] + " ..."


def scalars(d: dict, skip=()) -> dict:
    return {k: v for k, v in d.items() if k not in skip and not isinstance(v, (list, dict))}


def figure(s) -> str:
    if not isinstance(s, dict):
        return short(s, 120)
    keys = [k for k in ("median", "p10", "mean", "min", "max") if s.get(k) is not None]
    head = " ".join(f"{k} {s[k]:g}" if isinstance(s[k], (int, float)) else f"{k} {s[k]}" for k in keys)
    n = s.get("prompts", s.get("repeats", s.get("n")))
    return head + (f" (n {n})" if n is not None else "")


def comparison(name: str, v) -> None:
    if not isinstance(v, dict):
        return
    launch = v.get("launch")
    launch = launch.get("label") if isinstance(launch, dict) else launch
    print(f"  {name}: {v.get('label')} {v.get('median')} ci95 {v.get('ci95')} interval {v.get('interval')}"
          f" | candidate {v.get('candidate_median')} vs reference {v.get('reference_median')}"
          f" | rounds {v.get('rounds')} prompts {v.get('prompts')} | launch {launch}")
    for key in ("reasons", "notes"):
        if v.get(key):
            print(f"    {key}: {short(v[key], 400)}")
    known = {"label", "median", "ci95", "interval", "candidate_median", "reference_median", "rounds", "prompts",
             "launch", "reasons", "notes", "per_prompt", "min", "max", "per_round", "figure"}
    rest = {k: v[k] for k in v if k not in known}
    if rest:
        print(f"    more: {short(rest, 500)}")


def power(name: str, p) -> None:
    if not isinstance(p, dict):
        print(f"  {name}: {short(p, 200)}")
        return
    print(f"  {name}: {p.get('device')} ({p.get('chosen')}) | {p.get('joules')} J over {p.get('window_s')} s, "
          f"{p.get('watts_mean')} W mean, {p.get('joules_per_token')} J/token ({p.get('generated_tokens')} tokens)"
          + (f" | {p['reason']}" if p.get("reason") else ""))
    for m in p.get("meters") or []:
        print(f"    meter: {short(scalars(m), 400)}")


def isolation(name: str, i) -> None:
    if not isinstance(i, dict):
        print(f"  {name}: {short(i, 200)}")
        return
    others = ", ".join(f"{o.get('name')} pid {o.get('pid')}"
                       + (f" {o['gpu_memory_mib']} MiB" if o.get("gpu_memory_mib") is not None else "")
                       + (f" {o['cpu_share']:.0%} core" if o.get("cpu_share") is not None else "")
                       for o in (i.get("others") or [])[:6])
    print(f"  {name}: {i.get('verdict')} | {i.get('method')} | others: {others or 'none'}"
          + (f" | {i['reason']}" if i.get("reason") else ""))
    ex = i.get("excluded") or {}
    if ex:
        print(f"    server pids {ex.get('server')} ({ex.get('server_found')})")


def interleave(block) -> None:
    if not isinstance(block, dict):
        return
    print(f"  interleave: servers {block.get('servers')}, rounds {block.get('rounds')}, figure {block.get('figure')},"
          f" order {block.get('order')}")
    print(f"    reference_launch: {block.get('reference_launch')}")
    passes = block.get("passes") or []
    for p in passes:
        print(f"    pass {p.get('session')} r{p.get('round')} {p.get('side'):<9} median {p.get('median')} "
              f"wall {p.get('wall_s')} tokens {p.get('tokens')} cache {p.get('cache')} boot {p.get('boot')}"
              + (f" NOT CREDIBLE {p.get('not_credible')}" if p.get("not_credible") else "")
              + (f" {short({k: p[k] for k in p if k in ('energy', 'power', 'cells')}, 300)}"
                 if any(k in p for k in ("energy", "power", "cells")) else ""))
    control = block.get("control")
    if control:
        print(f"  A/A control: {control.get('words') if isinstance(control, dict) else ''}")
        print(f"    {short(control, 700)}")
    rest = {k: block[k] for k in block if k not in ("servers", "rounds", "figure", "order", "reference_launch",
                                                    "passes", "control")}
    if rest:
        print(f"    interleave more: {short(rest, 800)}")


CELL_KNOWN = {"status", "measures", "metric", "summary", "samples", "warmup", "cache", "credible", "energy", "short",
              "prompt_tokens", "gen_tokens", "reason", "prompt_mismatch", "unique_prefixes"}


def cells(block) -> None:
    if not isinstance(block, dict):
        return
    print(f"  cells: {short(scalars(block), 400)}")
    for name, c in (block.get("cells") or {}).items():
        if not isinstance(c, dict):
            print(f"    {name}: {short(c, 200)}")
            continue
        samples = c.get("samples") or []
        cache = (c.get("cache") or {}).get("verdict") if isinstance(c.get("cache"), dict) else c.get("cache")
        cred = (c.get("credible") or {}).get("verdict") if isinstance(c.get("credible"), dict) else c.get("credible")
        print(f"    {name} {c.get('status')} {c.get('measures', '')}: {figure(c.get('summary'))} | "
              f"{len(samples)} samples, short {c.get('short')}, cache {cache}, credible {cred}"
              + (f" | {c['reason']}" if c.get("reason") else ""))
        if c.get("energy") is not None:
            e = c["energy"]
            print(f"      energy: {short(scalars(e) if isinstance(e, dict) else e, 400)}"
                  + (f" meters {short([scalars(m) for m in e.get('meters') or []], 400)}"
                     if isinstance(e, dict) and e.get("meters") else ""))
        rest = {k: c[k] for k in c if k not in CELL_KNOWN}
        if rest:  # the interleaved comparison, the reference side, anything added since
            print(f"      more: {short(rest, 900)}")
    for key in block:
        if key not in ("cells",) and isinstance(block[key], (dict, list)):
            print(f"    cells.{key}: {short(block[key], 900)}")


def main(path: str) -> None:
    try:
        d = json.load(open(path))
    except Exception as exc:  # no report written
        print("  no identity.json:", exc)
        return
    s = d.get("summary") or {}
    print(f"  verdict: {d.get('verdict')} | exact {s.get('exact')} near_tie {s.get('near_tie')} divergent "
          f"{s.get('divergent')} inconclusive {s.get('inconclusive')} checks_passed {s.get('checks_passed')}"
          + (f" | interruption: {d['interruption']}" if d.get("interruption") else ""))
    sp = d.get("speed")
    if isinstance(sp, dict):
        print(f"  card: {sp.get('label')} | reasons {short(sp.get('reasons'), 300)}")
        summ = sp.get("summary") or {}
        for k in ("conventional_tok_s", "after_ttft_tok_s", "ttft_s"):
            if k in summ:
                print(f"    {k}: {figure(summ[k])}")
        cred = sp.get("credible")
        if isinstance(cred, dict):
            print(f"  credible: {cred.get('verdict')} {short(cred.get('reasons'), 200)}")
        if "power" in sp:
            power("power", sp["power"])
        if "isolation" in sp:
            isolation("isolation", sp["isolation"])
        comparison("vs_reference", sp.get("vs_reference"))
        comparison("vs_recorded_reference", sp.get("vs_recorded_reference"))
        interleave(sp.get("interleave"))
        cells(sp.get("cells"))
        handled = {"label", "reasons", "summary", "credible", "power", "isolation", "vs_reference",
                   "vs_recorded_reference", "interleave", "cells", "prompts", "diagnostics", "condition",
                   "token_times", "min_tokens", "min_prompts", "excluded", "event_rate_label", "warmup", "reference"}
        for k in sp:
            if k not in handled:
                print(f"  speed.{k}: {short(sp[k], 600)}")
    for c in d.get("checks") or []:
        if isinstance(c, dict) and any(w in str(c.get("kind", "")) + str(c.get("id", ""))
                                       for w in ("speed", "spec", "cache")):
            print(f"  {c.get('id')}: {c.get('verdict')} - {str(c.get('detail'))[:400]}")
            for line in (c.get("lines") or [])[:6]:
                print(f"      {str(line)[:300]}")
    for n in (d.get("notes") or [])[:8]:
        print(f"  note: {str(n)[:300]}")


if __name__ == "__main__":
    main(sys.argv[1])
