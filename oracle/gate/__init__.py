"""The gate: plan, items, check registry, the session that orchestrates, the xdist controller."""
