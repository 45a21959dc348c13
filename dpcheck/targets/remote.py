"""Shadow runs of targets that live in their own virtualenv, behind a process boundary.

One persistent worker process per env (``ENV/bin/python -m dpcheck.targets.worker``) answers
length-prefixed frames (:mod:`dpcheck.targets.wire`); data goes as JSON columns, results come back
as ``.npy`` bytes. Whatever the library prints goes to the worker's stderr, never into the
protocol. A worker that dies or times out raises :class:`TargetError` (with the worker's last
stderr lines) and is started afresh on the next call. A library that raises comes back as a
:class:`RemoteError` (a failed run, as the exception itself would be in-process); a
``TargetError`` or ``ImportError`` inside the worker as :class:`RemoteTargetError`; both carry the
worker's traceback.
"""
from __future__ import annotations

import atexit
import collections
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import dpcheck
from dpcheck.targets import envs, wire
from dpcheck.targets.base import Schema, TargetError, TargetInfo

#: seconds one shadow run may take before the worker is killed (override: DPCHECK_REMOTE_TIMEOUT)
DEFAULT_TIMEOUT = 1800.0
START_TIMEOUT = 120.0
STDERR_LINES = 40
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


class _WithTraceback:
    remote_traceback: str
    error_type: str

    def __str__(self) -> str:
        return f"{self.args[0]}\n--- traceback in the worker ---\n{self.remote_traceback.rstrip()}"


class RemoteError(_WithTraceback, RuntimeError):
    """The library raised inside the worker: the run failed (the audit records it and goes on)."""

    def __init__(self, message: str, remote_traceback: str, error_type: str = "") -> None:
        super().__init__(message)
        self.remote_traceback = remote_traceback
        self.error_type = error_type


class RemoteTargetError(_WithTraceback, TargetError):
    """A set-up problem inside the worker (library missing, bad output): stops the audit, as in-process."""

    def __init__(self, message: str, remote_traceback: str, error_type: str = "") -> None:
        super().__init__(message)
        self.remote_traceback = remote_traceback
        self.error_type = error_type


#: exception types that mean "cannot run here" rather than "this run failed"
SETUP_ERRORS = {"TargetError", "ImportError", "ModuleNotFoundError"}


def python_for(env: str) -> Path:
    """The interpreter of ``env``; 'main' is this interpreter (a worker still isolates the run)."""
    if env == "main":
        return Path(sys.executable)
    python = envs.env_python(env)
    if not python.exists():
        raise TargetError(f"the {env!r} environment does not exist at {envs.env_path(env)}: "
                          f"create it with `dpcheck env create {env}`")
    return python


class Worker:
    """One worker process for one interpreter; not thread-safe (the pool serialises calls)."""

    def __init__(self, env: str, python: Path) -> None:
        self.env = env
        self.python = python
        self.proc: subprocess.Popen | None = None
        self.reader: wire.FdReader | None = None
        self.stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self.hello: dict[str, Any] = {}
        self.echo = os.environ.get("DPCHECK_WORKER_STDERR") == "1"
        self.lock = threading.Lock()  # one request at a time per worker

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        self.stderr.clear()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        for var in THREAD_VARS:  # as the audit's own workers: one thread per run unless set
            env.setdefault(var, "1")
        self.proc = subprocess.Popen([str(self.python), "-m", "dpcheck.targets.worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, bufsize=0, close_fds=True)
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.reader = wire.FdReader(self.proc.stdout.fileno())
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()
        self.hello = self.call({"op": "hello"}, timeout=START_TIMEOUT, starting=True)[0]
        here = str(Path(dpcheck.__file__).resolve().parent)
        if self.env != "main" and self.hello.get("dpcheck_path") != here:
            there = self.hello.get("dpcheck_path")
            self.stop()
            raise TargetError(f"the {self.env!r} env runs dpcheck from {there}, this is {here}: "
                              f"run `dpcheck env create {self.env}` to point it here")

    def _drain(self, stream: Any) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.stderr.append(line)
            if self.echo:
                print(f"[{self.env} worker] {line}", file=sys.stderr, flush=True)

    def call(self, header: dict[str, Any], blob: bytes = b"", *, timeout: float | None = None,
             starting: bool = False) -> tuple[dict[str, Any], bytes]:
        if not starting and not self.alive:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None and self.reader is not None
        self.stderr.clear()  # the error message shows what this request printed
        what = header.get("op", "?") if header.get("op") != "run" else f"run of {header['info']['name']}"
        try:
            self.proc.stdin.write(wire.pack(header, blob))
            self.proc.stdin.flush()
            answer, out = self.reader.read_frame(timeout)
        except wire.TimeoutError_:
            self.stop(kill=True)
            raise TargetError(f"{self.env} worker: {what} took longer than {timeout:.0f} s; the worker was "
                              f"killed and will be restarted for the next run{self._tail()}") from None
        except (wire.FrameError, BrokenPipeError, OSError) as exc:
            code = self._exit_code()
            self.stop(kill=True)
            raise TargetError(f"{self.env} worker ({self.python}) died during {what} (exit code {code}): "
                              f"{exc}; it will be restarted for the next run{self._tail()}") from None
        if not answer.get("ok"):
            kind = answer.get("error_type", "")
            error = RemoteTargetError if kind in SETUP_ERRORS else RemoteError
            raise error(f"{header.get('info', {}).get('name', self.env)} failed in the {self.env} worker: "
                        f"{answer.get('error')}", answer.get("traceback", ""), kind)
        return answer, out

    def _exit_code(self) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def _tail(self) -> str:
        lines = [ln if len(ln) <= 300 else ln[:300] + " …" for ln in list(self.stderr) if ln.strip()][-12:]
        return ("\nlast stderr lines of the worker:\n  " + "\n  ".join(lines)) if lines else ""

    def stop(self, kill: bool = False) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if not kill and proc.poll() is None and proc.stdin is not None:
            try:
                proc.stdin.write(wire.pack({"op": "exit"}))
                proc.stdin.flush()
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


_workers: dict[tuple[int, str, str], Worker] = {}
_lock = threading.Lock()


def worker_for(env: str) -> Worker:
    """This process's worker for ``env`` (a forked child never reuses its parent's worker)."""
    python = python_for(env)
    key = (os.getpid(), env, str(python))
    with _lock:
        worker = _workers.get(key)
        if worker is None:
            worker = _workers[key] = Worker(env, python)
        return worker


def shutdown_workers() -> None:
    with _lock:
        mine = [key for key in _workers if key[0] == os.getpid()]
        workers = [_workers.pop(key) for key in mine]
    for worker in workers:
        worker.stop()


atexit.register(shutdown_workers)


def timeout_seconds() -> float:
    return float(os.environ.get("DPCHECK_REMOTE_TIMEOUT", DEFAULT_TIMEOUT))


def remote_shadow_release(info: TargetInfo, data: pd.DataFrame, schema: Schema, epsilon: float, delta: float,
                          seed: int, n_samples: int, knobs: dict[str, Any] | None = None,
                          *, timeout: float | None = None) -> np.ndarray:
    """:func:`dpcheck.targets.base.shadow_release` in the worker of ``info.env``."""
    worker = worker_for(info.env)
    request = {"op": "run", "info": info.to_dict(), "schema": schema.to_dict(),
               "data": wire.frame_to_json(data), "epsilon": float(epsilon), "delta": float(delta),
               "seed": int(seed), "n_samples": int(n_samples), "knobs": dict(knobs or {})}
    with worker.lock:
        _, blob = worker.call(request, timeout=timeout_seconds() if timeout is None else timeout)
    return wire.array_from_bytes(blob).astype(np.float64, copy=False)


def remote_call(env: str, function: str, mapping: dict[str, Any], cases: list[dict[str, Any]],
                *, timeout: float | None = None) -> list[dict[str, Any]]:
    """``function`` (MODULE:FUNCTION) on every case in the worker of ``env``, through the signature
    mapping: one ``{"value": …}`` or ``{"error": …}`` per case (:mod:`dpcheck.installed.mapping`).
    A module or function that cannot be imported there raises :class:`RemoteTargetError`."""
    worker = worker_for(env)
    request = {"op": "call", "function": function, "map": mapping, "cases": cases}
    with worker.lock:
        answer, _ = worker.call(request, timeout=timeout_seconds() if timeout is None else timeout)
    return list(answer["results"])


def missing_modules(info: TargetInfo) -> list[str]:
    """Import names of ``info.requires`` that the target's env lacks."""
    worker = worker_for(info.env)
    with worker.lock:
        answer, _ = worker.call({"op": "missing", "modules": list(info.requires)}, timeout=START_TIMEOUT)
    return list(answer["missing"])


def check_available(info: TargetInfo) -> None:
    """Raise :class:`TargetError` naming ``dpcheck env create`` when the env or library is missing."""
    python_for(info.env)
    missing = missing_modules(info)
    if missing:
        raise TargetError(f"{info.name} needs {', '.join(missing)}, which the {info.env!r} env lacks: "
                          f"recreate it with `dpcheck env create {info.env} --force`")


def library_version(info: TargetInfo) -> str | None:
    worker = worker_for(info.env)
    with worker.lock:
        answer, _ = worker.call({"op": "versions", "names": [info.library]}, timeout=START_TIMEOUT)
    return answer["versions"].get(info.library)
