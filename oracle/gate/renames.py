"""The options renamed so that they cannot clash with another plugin's (issue #51): pytest has one namespace of
options, and a second plugin declaring `--url` stops every pytest session at start. An old name given on the
command line is answered with a usage error naming the new one, read from the raw arguments (the old names are not
declared: declaring them would be the clash), unless another plugin or a conftest declares that name itself.

    refusal = renamed_refusal(["--url=http://127.0.0.1:8080"], declared=set())   # "--url is now --oracle-url ..."
"""

from __future__ import annotations

__all__ = ["RENAMED", "renamed_refusal"]

# old -> new, as docs/options.md lists them.
RENAMED = {
    "--url": "--oracle-url",
    "--seed": "--oracle-seed",
    "--model": "--oracle-model",
    "--suite": "--oracle-suite",
    "--plan": "--oracle-plan",
    "--budget": "--oracle-budget",
    "--power": "--oracle-power",
    "--context": "--oracle-context",
}


def renamed_refusal(args, declared: set[str]) -> str | None:
    """The usage error for the first old name among command-line words `args` (`--url X` or `--url=X`) that no
    option in `declared` (every name pytest knows now) holds; None when there is none."""
    for word in map(str, args):
        if word == "--":  # after it every word is a file or a test
            break
        name = word.split("=", 1)[0]
        if name in RENAMED and name not in declared:
            new = RENAMED[name]
            value = word[len(name):]  # "=X" or ""
            return (f"{name}: oracle's option is now {new} (renamed so that it cannot clash with another pytest "
                    f"plugin's); write {new}{value}{' ...' if not value and name != '--plan' else ''} "
                    "(docs/options.md lists every renamed option)")
    return None
