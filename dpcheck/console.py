"""One rich Console for tables: wide enough for evidence when output is not a terminal."""
from __future__ import annotations

import sys

from rich.console import Console


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    return Console(file=stream, width=None if stream.isatty() else 160)
