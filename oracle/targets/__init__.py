"""Targets: the server under test (a URL, a launched command, the embedded defaults) and its life."""
