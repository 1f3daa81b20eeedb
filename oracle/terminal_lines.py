"""Progress lines of the long-running subcommands (`oracle bisect`, `oracle repro`, a `--sweep`): a line opened
before a step ("probe 2/24: ... ") and closed with its verdict once the step ends; every word through
`redaction.public_text`, so no secret reaches the terminal. A leaf, like `redaction.py`.

    class Session(TerminalLines):         # sets self.lines_out to a text stream
        self._start_line("probe 1/24 ... "); ...; self._end_line("exact 3.1 s")
"""

from __future__ import annotations

from typing import TextIO

from oracle.redaction import public_text

__all__ = ["TerminalLines"]


class TerminalLines:
    lines_out: TextIO
    _pending = False  # a line is open and waits for its verdict

    def _start_line(self, text: str) -> None:
        self._pending = True
        self.lines_out.write(public_text(text))
        self.lines_out.flush()

    def _end_line(self, text: str) -> None:
        """Close the open line with `text` (nothing when none is open: its step already said why it stopped)."""
        if self._pending:
            self._say(text)
        self._pending = False

    def _say(self, text: str) -> None:
        self.lines_out.write(public_text(text) + "\n")
        self.lines_out.flush()
