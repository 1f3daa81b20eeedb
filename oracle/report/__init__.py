"""The identity report: its state, identity.json / identity.md / identity.html, and `oracle diff`."""
