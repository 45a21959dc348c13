"""Progress reporting for shadow runs: runs done, rate and ETA on stderr."""
from __future__ import annotations

import sys
from typing import Any


class NullProgress:
    def begin(self, label: str, total: int, done: int) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def end(self) -> None:
        pass

    def note(self, message: str) -> None:
        pass


class TextProgress(NullProgress):
    """Plain lines, for logs and non-terminals."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.label, self.total, self.done, self._t0, self._fresh, self._next = "", 0, 0, 0.0, 0, 0

    def begin(self, label: str, total: int, done: int) -> None:
        import time

        self.label, self.total, self.done = label, total, done
        self._t0, self._fresh, self._next = time.perf_counter(), 0, done
        self.note(f"{label}: {done}/{total} runs already stored")

    def advance(self, n: int = 1) -> None:
        import time

        self.done += n
        self._fresh += n
        if self.done >= self._next or self.done == self.total:
            self._next = self.done + max(1, self.total // 10)
            rate = self._fresh / max(time.perf_counter() - self._t0, 1e-9)
            eta = (self.total - self.done) / rate if rate > 0 else float("inf")
            self.note(f"{self.label}: {self.done}/{self.total} runs, {60 * rate:.1f}/min, ETA {eta:.0f}s")

    def note(self, message: str) -> None:
        print(message, file=self.stream, flush=True)


class RichProgress(NullProgress):
    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self.console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("runs"), TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
            TextColumn("ETA"), TimeRemainingColumn(), console=self.console, transient=False)
        self.task: Any = None
        self._started = False
        self._fresh = 0
        self._t0 = 0.0

    def begin(self, label: str, total: int, done: int) -> None:
        import time

        if not self._started:
            self.progress.start()
            self._started = True
        self._fresh, self._t0 = 0, time.perf_counter()
        self.task = self.progress.add_task(label, total=total, completed=done, rate="")

    def advance(self, n: int = 1) -> None:
        import time

        self._fresh += n
        elapsed = max(time.perf_counter() - self._t0, 1e-9)
        self.progress.update(self.task, advance=n, rate=f"{60 * self._fresh / elapsed:.1f}/min")

    def end(self) -> None:
        if self._started:
            self.progress.stop()
            self._started = False

    def note(self, message: str) -> None:
        self.console.print(message)
