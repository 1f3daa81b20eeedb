"""`--sweep`: one reference, a grid of candidate settings, each point a gate run; the classes of identical outputs
and the fastest point whose outputs equal the reference (see docs/sweep.md)."""
