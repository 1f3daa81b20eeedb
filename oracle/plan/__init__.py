"""The run plan: what a gate will send and what it will cost, before it sends anything."""
