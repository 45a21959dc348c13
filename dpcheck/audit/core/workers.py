"""Worker processes that run foreign code and cannot take dpcheck down with them.

Each worker is a spawned process serving calls over its own pipe. The parent waits on every
busy worker's pipe and process sentinel at once, so it learns which call a worker was running
when it died (a signal, ``os._exit``, a crash in native code) and can kill a call that runs
past its deadline. Workers ignore SIGINT (the parent decides), and die with the parent: on
Linux through ``PR_SET_PDEATHSIG``, elsewhere through a thread that watches the parent's pid;
a worker waiting for work also leaves when the parent's end of its pipe closes.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

#: seconds a worker gets to leave on its own before it is killed
_GRACE = 2.0
#: seconds a new worker may take to start (spawn, imports) before it counts as dead
_STARTUP = 300.0


class WorkerError(RuntimeError):
    """A worker process could not be started."""


@dataclass(frozen=True)
class Failure:
    """A call that returned nothing: its worker died or it ran out of time."""
    message: str


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        else:
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(1)
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="dpcheck-parent-watch").start()


def _serve(conn: Any, parent: int, initializer: Callable[[], None] | None) -> None:
    """Worker main loop: (function, argument) in, ("ok", result) or ("raised", text) out."""
    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer()
    conn.send(("ready", None))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        function, argument = message
        try:
            reply: tuple[str, Any] = ("ok", function(argument))
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which names the call
            from dpcheck.audit.core.usercode import describe

            reply = ("raised", describe(exc))
        conn.send(reply)


def exit_description(exitcode: int | None) -> str:
    if exitcode is None:
        return "stopped responding"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"was killed by {name}"
    return f"exited with status {exitcode} before returning (os._exit, or a crash in native code)"


class _Worker:
    def __init__(self, context: Any, initializer: Callable[[], None] | None) -> None:
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, os.getpid(), initializer),
                                       name="dpcheck-worker")
        self.process.start()
        child.close()
        self.item: Any = None
        self.limit: float | None = None
        self.deadline: float | None = None

    def ready(self) -> bool:
        """Wait until the worker has imported what it needs (its start-up is no run's time)."""
        from multiprocessing.connection import wait

        wait([self.conn, self.process.sentinel], _STARTUP)
        try:
            return self.conn.poll() and self.conn.recv()[0] == "ready"
        except (EOFError, OSError):
            return False

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(_GRACE)
        self.conn.close()

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(_GRACE)
        self.kill()


class WorkerPool:
    """Up to ``size`` spawned workers, started when first needed and replaced when one dies."""

    def __init__(self, size: int, initializer: Callable[[], None] | None = None) -> None:
        import multiprocessing

        self.size = size
        self.initializer = initializer
        self.context = multiprocessing.get_context("spawn")
        self.idle: list[_Worker] = []
        self.busy: list[_Worker] = []

    def map_unordered(self, function: Callable[[Any], Any], items: Iterable[Any],
                      timeout: Callable[[Any], float | None]) -> Iterator[tuple[Any, Any]]:
        """(item, function(item)) as calls finish; a :class:`Failure` instead of the result when the
        worker died or the call outlived ``timeout(item)`` seconds. Calls still running when the
        consumer stops are killed with their workers."""
        from multiprocessing.connection import wait

        pending = deque(items)
        try:
            while pending or self.busy:
                self._start(min(len(pending), self.size - len(self.busy)) - len(self.idle))
                while pending and self.idle:
                    worker = self.idle.pop()
                    item = pending.popleft()
                    limit = timeout(item)
                    worker.item, worker.limit = item, limit
                    worker.deadline = time.monotonic() + limit if limit else None
                    worker.conn.send((function, item))
                    self.busy.append(worker)
                deadlines = [w.deadline for w in self.busy if w.deadline is not None]
                wait_for = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
                handles = [w.conn for w in self.busy] + [w.process.sentinel for w in self.busy]
                ready = set(wait(handles, wait_for))
                for worker in list(self.busy):
                    yield from self._collect(worker, ready)
        finally:
            for worker in self.busy:
                worker.kill()
            self.busy.clear()

    def _start(self, count: int) -> None:
        """``count`` new idle workers, started together; one that dies starting up is an error."""
        fresh = [_Worker(self.context, self.initializer) for _ in range(max(0, count))]
        for worker in fresh:
            if not worker.ready():
                code = worker.process.exitcode
                for other in fresh:
                    other.kill()
                raise WorkerError(f"a worker process {exit_description(code)} while starting")
            self.idle.append(worker)

    def _collect(self, worker: _Worker, ready: set[Any]) -> Iterator[tuple[Any, Any]]:
        item = worker.item
        if worker.conn in ready:
            try:
                status, value = worker.conn.recv()
            except (EOFError, OSError):
                status, value = "died", None
            if status != "died":
                self.busy.remove(worker)
                self.idle.append(worker)
                yield item, (value if status == "ok" else Failure(str(value)))
                return
        elif worker.process.sentinel not in ready:
            if worker.deadline is None or time.monotonic() < worker.deadline:
                return
            self.busy.remove(worker)
            worker.kill()
            yield item, Failure(f"did not finish within {worker.limit:g} s (the worker was killed)")
            return
        self.busy.remove(worker)
        worker.kill()
        yield item, Failure(f"its worker process {exit_description(worker.process.exitcode)}")

    def close(self) -> None:
        for worker in self.busy:
            worker.kill()
        for worker in self.idle:
            worker.stop()
        self.busy.clear()
        self.idle.clear()
