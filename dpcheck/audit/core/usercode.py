"""Telling the user's code apart from signals: exits, interrupts and timeouts as plain errors.

An implementation is foreign code: it may call ``sys.exit(0)``, raise ``KeyboardInterrupt`` or
hang. None of that may end dpcheck with exit 0. While :func:`signals_handled` is active, a real
SIGINT or SIGTERM sets a flag before its exception is raised, so a ``KeyboardInterrupt`` seen
without the flag was raised by code, not by the user at the terminal.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

_received: list[int] = []
_owner = [0]  # the process that installed the handlers


class Terminated(BaseException):
    """SIGTERM arrived: unwind (closing workers and the store) and exit 143."""


class RunTimeout(BaseException):
    """A run exceeded ``--run-timeout`` (in-process runs, raised from SIGALRM)."""


def signal_received() -> int | None:
    """The SIGINT/SIGTERM this process received while :func:`signals_handled` was active."""
    return _received[-1] if _received else None


def _on_signal(signum: int, _frame: Any) -> None:
    if os.getpid() != _owner[0]:  # a forked child (e.g. a scan worker) keeps Python's usual behaviour
        if signum == signal.SIGINT:
            raise KeyboardInterrupt()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _received.append(signum)
    if signum == signal.SIGTERM:
        raise Terminated()
    raise KeyboardInterrupt()


@contextlib.contextmanager
def signals_handled() -> Iterator[None]:
    """SIGINT and SIGTERM recorded, then raised as KeyboardInterrupt / :class:`Terminated`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _owner[0] = os.getpid()
    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def is_ours(exc: BaseException) -> bool:
    """True for what must keep unwinding: a real signal or a run timeout, not the user's code."""
    if isinstance(exc, (Terminated, RunTimeout)):
        return True
    return isinstance(exc, KeyboardInterrupt) and signal_received() is not None


def describe(exc: BaseException) -> str:
    """One line: what the user's code raised, spelled for exits and interrupts."""
    if isinstance(exc, SystemExit):
        return f"the code called sys.exit({exc.code!r}) (SystemExit)"
    if isinstance(exc, KeyboardInterrupt):
        return "the code raised KeyboardInterrupt (no interrupt signal was received)"
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno})"
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def where(exc: BaseException) -> str:
    """" (at FILE:LINE in FUNCTION)" of the innermost frame that raised ``exc``, or ""."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    last = frames[-1]
    return f" (at {last.filename}:{last.lineno} in {last.name})"


@contextlib.contextmanager
def alarm(seconds: float | None) -> Iterator[None]:
    """Raise :class:`RunTimeout` after ``seconds`` (main thread, where SIGALRM exists and no other
    alarm is pending; else no limit)."""
    if not seconds or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread() \
            or signal.getitimer(signal.ITIMER_REAL)[0]:  # someone else's alarm is pending: leave it alone
        yield
        return

    def fire(_signum: int, _frame: Any) -> None:
        raise RunTimeout()

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
