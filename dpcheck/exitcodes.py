"""Exit codes and the user-input error of the command line, below every layer that reports them.

``dpcheck.cli`` re-exports these names (commands import them from there); library code that also
serves a command (e.g. ``dpcheck.audit.runners.onerun.run_cli``) imports them from here, never from the CLI.
"""
from __future__ import annotations

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    """Bad input from the user: printed without a traceback, exit 2."""
