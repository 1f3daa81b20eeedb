"""Comparisons and verdicts: tokens, text, conditions, noise, splits, cache and speculation evidence."""
