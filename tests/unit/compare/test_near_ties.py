"""Near-tie density beside a flip count: positions below the margin, tie flips apart from confident ones."""

from __future__ import annotations

import numpy as np

from oracle.compare.near_ties import density_words, flip_kind, split_density, top2_margins
from oracle.compare.tokens import OUTSIDE_REFERENCE_TOP_K


def test_top2_margin_per_position_whatever_the_order_of_the_top_k():
    margins = top2_margins([[-0.1, -0.3, -2.0], [-3.0, -0.05], [-0.2], []])
    assert np.allclose(margins[:2], [0.2, 2.95]) and np.isnan(margins[2]) and np.isnan(margins[3])


def test_flips_are_sorted_by_the_margin_at_the_split():
    assert flip_kind(0.1, "", 0.5) == "tie" and flip_kind(0.0, "", 0.5) == "tie"
    assert flip_kind(0.5, "", 0.5) == "confident" and flip_kind(3.0, "", 0.5) == "confident"
    assert flip_kind(None, OUTSIDE_REFERENCE_TOP_K, 0.5) == "confident"  # beyond the top-k: not a tie
    assert flip_kind(None, "the reference has no logprobs at the split", 0.5) == "unmeasured"


def test_density_counts_every_record_and_the_flips_apart():
    records = [[[-0.1, -0.2], [-0.01, -5.0]], [[-0.7, -0.8], [-0.3], [-1.0, -1.6]]]
    d = split_density(records, [(0.1, ""), (2.0, ""), (None, OUTSIDE_REFERENCE_TOP_K), (None, "no logprobs")],
                      near_tie_nats=0.5)
    assert (d.positions, d.near_tie_positions, d.unmeasured_positions) == (4, 2, 1)
    assert (d.flips, d.tie_flips, d.confident_flips, d.unmeasured_flips) == (4, 1, 2, 1) and d.share == 0.5
    assert density_words(d.as_json()) == ("flips: 1 tie, 2 confident, 1 unmeasured; near-tie density 2/4 positions "
                                          "(50.0%) < 0.5 nats")
    tighter = split_density(records, [(0.1, "")], near_tie_nats=0.05)
    assert tighter.near_tie_positions == 0 and tighter.confident_flips == 1


def test_a_run_without_top_k_says_its_density_is_not_measured():
    d = split_density([[[], []]], [], near_tie_nats=0.5)
    assert d.positions == 0 and d.share is None
    assert density_words(d.as_json()).endswith("near-tie density not measured (no top-k logprobs)")
