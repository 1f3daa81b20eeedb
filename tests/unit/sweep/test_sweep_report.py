"""The sweep report from its points' identity reports: figures per point, classes, the promotion answer and the exit
code (no server). A point is promoted only on its interleaved between-run comparison with the reference config."""

from __future__ import annotations

import json

from oracle.sweep.grid import grid, parse_axis
from oracle.sweep.pages import markdown
from oracle.sweep.report import point_json, sweep_json, write_report

REF = {"a": (1, 2, 3), "b": (4, 5)}
OTHER = {"a": (1, 2, 9), "b": (4, 5)}
AXES = (parse_axis("-ctk=f16,q8_0"), parse_axis("-t=1,2"))
POINTS = grid(AXES)


def identity(exact=(2, 2), near=0, divergent=0, after=100.0, ref_after=100.0, conventional=None, vs=None,
             spec=None) -> dict:
    summary = {"after_ttft_tok_s": {"median": after, "prompts": 2},
               "conventional_tok_s": {"median": conventional, "prompts": 5} if conventional else None}
    card = {"label": "diagnostic", "summary": summary, "vs_reference": vs or {"median": None, "label": "insufficient"},
            "reference": {"summary": {"after_ttft_tok_s": {"median": ref_after}}}}
    return {"verdict": "pass" if exact[0] == exact[1] else "fail", "complete": True, "speed": card,
            "summary": {"exact": list(exact), "near_tie": near, "divergent": divergent, "contaminated": 0},
            "speculation": spec or {"drafted": 0, "accepted": 0}}


def inter(median: float, ci95: list[float], label: str = "headline") -> dict:
    """A point's interleaved comparison with the reference config (--reference-launch), as its card holds it."""
    return {"median": median, "ci95": ci95, "label": label, "interval": "between-run", "rounds": 4,
            "reasons": [] if label == "headline" else ["candidate round 1: cache-zero not proven"],
            "noise": {"fraction": 0.05, "measured": False, "source": "--speed-noise-floor"}}


def point(k: int, sig: dict, status="finished", **kw) -> dict:
    return point_json(POINTS[k - 1], status=status, folder=f"points/{POINTS[k - 1].folder}", command="srv",
                      exit_code=0 if status == "finished" else 4, wall_s=1.0, why="" if status == "finished" else "x",
                      identity=identity(**kw) if status == "finished" else {}, sig=sig if status == "finished" else {},
                      reference=REF)


def sweep(points: list[dict], *, final=True, interruption=None, code=None) -> dict:
    return sweep_json(backend="llamacpp", reference="ref", launch="srv {port}", server_args="", axes=AXES,
                      points=points, reference_sig=REF, sweep_max=None, interruption=interruption, repro=None,
                      started="t0", written="t1", final=final, code=code)


def test_the_fastest_point_equal_to_the_reference_and_judged_faster_is_promoted_with_exit_0():
    data = sweep([point(1, REF, after=80.0, vs=inter(1.12, [1.08, 1.16])), point(2, REF, after=120.0,
                                                                                    vs=inter(1.20, [1.10, 1.31])),
                  point(3, OTHER, exact=(1, 2), near=1), point(4, OTHER, exact=(1, 2), near=1)])
    assert data["exit_code"] == 0 and data["status"] == "complete"
    assert [(c["name"], c["points"], c["equals_reference"]) for c in data["classes"]] == [
        ("A", [1, 2], True), ("B", [3, 4], False)]
    assert data["reference_class"] == "A" and [p["class"] for p in data["points"]] == ["A", "A", "B", "B"]
    assert data["promotion"]["point"] == 2 and data["promotion"]["decision"] == "promote"
    assert data["answer"] == ("promote point 2 (-ctk f16, -t 2): outputs equal the reference, exact 2/2 (0.34–1.00); "
                              "decode 120.0 tok/s (after-TTFT median: under 101 tokens), 1.20x faster [1.10, 1.31] "
                              "(interleaved with the reference config, 4 rounds, between-run (headline)); the fastest "
                              "of 2 faster equal points")
    p3 = data["points"][2]
    assert p3["exact"] == {"k": 1, "n": 2, "wilson95": [0.0945, 0.9055]} and p3["near_tie"] == 1
    assert p3["equals_reference"] is False and "_sig" not in p3


def test_identical_points_none_faster_keep_the_reference_with_exit_1():
    """Identical and not faster: the reference's own configuration at 0.998x, and a point whose interval excludes 1.0
    by luck but whose point lies within the noise band (+-5%): keep the reference, promote nothing."""
    data = sweep([point(1, REF, vs=inter(0.998, [0.97, 1.03])), point(2, REF, vs=inter(1.03, [1.01, 1.05]))])
    assert data["exit_code"] == 1 and data["promotion"]["decision"] == "keep the reference"
    assert data["promotion"]["point"] is None
    assert [p["speed"]["judged"] for p in data["points"]] == ["not faster", "not faster"]
    assert data["answer"].startswith("identical, not faster: keep the reference (equal point(s) 1 (-ctk f16, -t 1), "
                                     "2 (-ctk f16, -t 2); point 1: same speed (0.998x) [0.97, 1.03] (interleaved ")
    assert "point 2: 1.03x faster [1.01, 1.05]" in data["answer"]
    assert data["points"][1]["speed"]["judged_why"].startswith("inconclusive: within the measured noise (+-5%)")


def test_identical_points_without_an_interleaved_comparison_are_not_judged_and_nothing_is_promoted():
    data = sweep([point(1, REF, after=80.0), point(2, REF, after=120.0)])
    assert data["exit_code"] == 1 and data["promotion"]["decision"] == "not judged"
    assert data["answer"] == ("identical, speed not judged: point(s) 1 (-ctk f16, -t 1), 2 (-ctk f16, -t 2) equal the "
                              "reference, but no interleaved comparison with the reference config (add "
                              "--reference-launch recorded); nothing promoted")
    # an interleaved comparison that is no headline does not judge either
    data = sweep([point(1, REF, vs=inter(1.5, [1.4, 1.6], label="diagnostic"))])
    assert data["exit_code"] == 1 and "the interleaved comparison is diagnostic: candidate round 1: cache-zero " \
                                      "not proven; nothing promoted" in data["answer"]


def test_no_point_equal_to_the_reference_answers_none_with_exit_1():
    data = sweep([point(1, OTHER, exact=(1, 2), divergent=1), point(2, OTHER, exact=(1, 2), divergent=1)])
    assert data["exit_code"] == 1 and data["promotion"] is None and data["reference_class"] is None
    assert data["answer"] == "none: no finished point's outputs equal the reference"
    assert [c["points"] for c in data["classes"]] == [[1, 2]]


def test_the_conventional_rate_and_the_cards_paired_interval_when_the_run_has_them():
    vs = {"median": 1.31, "ci95": [1.12, 1.5], "label": "headline", "launch": "matched_except: -t 2"}
    data = sweep([point(1, REF, conventional=50.0, vs=vs), point(2, REF, conventional=40.0)])
    speed = data["points"][0]["speed"]
    assert (speed["figure"], speed["ratio"], speed["ci95"]) == ("conventional_tok_s", 1.31, [1.12, 1.5])
    assert speed["ratio_how"] == "paired per-prompt ratio (headline)" and speed["judged"] == "not judged"
    assert data["exit_code"] == 1  # a recorded reference's speed was measured in another run: no promotion on it


def test_a_point_that_did_not_start_is_reported_and_the_rest_still_answers():
    data = sweep([point(1, {}, status="did not start"), point(2, REF, vs=inter(1.3, [1.2, 1.4]))])
    assert data["exit_code"] == 0 and data["promotion"]["point"] == 2
    assert data["points"][0]["class"] is None and data["points"][0]["equals_reference"] is None


def test_an_interrupted_or_capped_sweep_is_partial_with_exit_2_and_keeps_what_finished():
    data = sweep([point(1, REF), point(2, {}, status="interrupted")], interruption="interrupted (Ctrl-C)")
    assert data["exit_code"] == 2 and data["status"] == "partial"
    assert data["answer"].startswith("partial (1 of 2 points finished): identical, speed not judged: point(s) 1")
    capped = sweep([point(1, OTHER, exact=(1, 2)), point(2, {}, status="not run")])
    assert capped["exit_code"] == 2 and capped["answer"] == ("partial (1 of 2 points finished): none: no finished "
                                                             "point's outputs equal the reference")
    running = sweep([point(1, REF)], final=False)
    assert running["status"] == "running" and running["exit_code"] is None and running["answer"].startswith("running")


def test_a_refused_point_stops_the_sweep_with_exit_4():
    refused = point(1, {}, status="usage")
    refused["why"] = "ERROR: --oracle-suite nope: no such suite"
    data = sweep([refused], code=4)
    assert data["exit_code"] == 4 and "point 1's gate refused its options (exit 4): ERROR: --oracle-suite nope" in data["answer"]


def test_acceptance_and_mean_accepted_length_when_the_server_drafted():
    spec = {"drafted": 12, "accepted": 5, "rate": 5 / 12, "mean_accepted_length": 1.25}
    data = sweep([point(1, REF, spec=spec)])
    assert data["points"][0]["speculation"] == {"drafted": 12, "accepted": 5, "acceptance": 5 / 12,
                                                "mean_accepted_length": 1.25}
    assert "| 41.7%, mean accepted 1.25 |" in markdown(data)


def test_the_three_files_say_the_same_answer(tmp_path):
    data = sweep([point(1, REF), point(2, OTHER, exact=(1, 2), near=1)])
    write_report(tmp_path, data)
    assert json.loads((tmp_path / "sweep.json").read_text())["answer"] == data["answer"]
    md, html = (tmp_path / "sweep.md").read_text(), (tmp_path / "sweep.html").read_text()
    assert md.splitlines()[2] == f"**{data['answer']}**"
    assert "- class A: points 1 (-ctk f16, -t 1), equal to the reference" in md
    assert html.count("<tr data-point=") == 2 and "class B: points 2 (-ctk f16, -t 2), not the reference" in html
