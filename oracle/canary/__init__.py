"""Canaries: options and planning, requests and judging, the code, needle and repeats sets."""
