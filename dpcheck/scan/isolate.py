"""Analyse files in forked worker processes with a time and a memory limit per file.

A file that makes libcst (native code) crash, allocate without bound or never return must not
take the scan down with it. Each worker is forked from the scanning process (so it already holds
the rules and the sources: only an index goes down the pipe and an ``Analysis`` comes back), caps
its address space with ``RLIMIT_AS`` and analyses one file at a time. The parent waits on every
worker's pipe and process sentinel:

* a file that used ``timeout`` seconds of CPU time (read from ``/proc``; wall-clock time where
  there is no ``/proc``), or ten times that in wall-clock time (a worker that hangs without
  computing): its worker is killed and the file is reported as over the time limit
  (``timed_out``). CPU time, so that a machine shared with other jobs does not stop legitimate
  large files;
* a worker that dies (signal, ``os._exit``, out of memory): its file is retried once in a fresh
  worker — the kernel may have killed it for another process's memory — and reported as
  ``died`` if it kills that one too.

Workers are replaced as they are killed, so the other files are analysed as usual.
"""
from __future__ import annotations

import multiprocessing
import os
import resource
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_POLL = 0.5


@dataclass
class Outcome:
    index: int
    #: the work's return value, or ``None`` when the file ``timed_out`` or its worker ``died``
    value: Any = None
    timed_out: bool = False
    died: str = ""


def available() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _child(conn: Connection, work: Callable[[int], Any], memory: int) -> None:
    if memory > 0:
        try:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        except (ValueError, OSError):
            pass
    try:
        while True:
            index = conn.recv()
            if index is None:
                break
            conn.send((index, work(index)))
    except (EOFError, KeyboardInterrupt, BrokenPipeError):
        pass
    finally:
        os._exit(0)  # never run the parent's atexit handlers or flush its buffers


class _Worker:
    def __init__(self, context: Any, work: Callable[[int], Any], memory: int) -> None:
        self.conn, child_conn = context.Pipe()
        self.process = context.Process(target=_child, args=(child_conn, work, memory), daemon=True)
        self.process.start()
        child_conn.close()
        self.index: int | None = None
        self.started = 0.0
        self.cpu_start = 0.0

    def give(self, index: int) -> None:
        self.index, self.started = index, time.monotonic()
        self.cpu_start = self.cpu() or 0.0
        self.conn.send(index)

    def cpu(self) -> float | None:
        """CPU seconds the worker has used so far, ``None`` where ``/proc`` cannot tell."""
        try:
            with open(f"/proc/{self.process.pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / _TICKS
        except (OSError, IndexError, ValueError):
            return None

    def over(self, timeout: float) -> bool:
        """The current file has used up its time: ``timeout`` s of CPU, or 10× that of wall clock."""
        wall = time.monotonic() - self.started
        used = self.cpu()
        if used is None:
            return wall >= timeout
        return used - self.cpu_start >= timeout or wall >= 10 * timeout

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                self.process.kill()
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()

    def cause(self) -> str:
        self.process.join(5)
        code = self.process.exitcode
        if code is not None and code < 0:
            import signal

            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with code {code}"


def run(work: Callable[[int], Any], count: int, jobs: int, timeout: float, memory: int) -> Iterator[Outcome]:
    """``work(i)`` for ``i`` in ``range(count)`` in up to ``jobs`` forked workers, in any order."""
    context = multiprocessing.get_context("fork")
    queue = list(range(count - 1, -1, -1))
    retried: set[int] = set()
    workers = [_Worker(context, work, memory) for _ in range(max(1, min(jobs, count)))]
    try:
        for worker in workers:
            if queue:
                worker.give(queue.pop())
        while any(w.index is not None for w in workers):
            busy = [w for w in workers if w.index is not None]
            # CPU time is polled: wake up at least every _POLL seconds while a limit applies
            wait_for = _POLL if timeout > 0 else None
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], wait_for)
            for worker in busy:
                index = worker.index
                assert index is not None
                replace = False
                if worker.conn in ready or worker.process.sentinel in ready:
                    try:
                        got, value = worker.conn.recv()
                    except (EOFError, OSError):
                        replace = True
                        if index in retried:
                            yield Outcome(index, died=worker.cause())
                        else:
                            retried.add(index)
                            queue.append(index)
                    else:
                        worker.index = None
                        yield Outcome(got, value)
                elif timeout > 0 and worker.over(timeout):
                    replace = True
                    yield Outcome(index, timed_out=True)
                if replace:
                    worker.stop(kill=True)
                    workers[workers.index(worker)] = worker = _Worker(context, work, memory)
                if worker.index is None and queue:
                    worker.give(queue.pop())
                elif replace:
                    worker.index = None
    finally:
        for worker in workers:
            worker.stop(kill=worker.index is not None)
