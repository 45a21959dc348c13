"""Where shadow runs execute: in-process, a local process pool, or a Dask cluster.

Every executor maps the same pure function :func:`run_one` over tasks and yields outcomes as
they finish (any order); results are keyed by (world, index), so the executor and the number of
workers cannot change them.
"""
from __future__ import annotations

import os
import socket
import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.audit.spec import run_seed

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS")


@dataclass(frozen=True)
class Task:
    generation: dict[str, Any]
    world: int
    index: int


@dataclass
class Outcome:
    world: int
    index: int
    seed: int
    rows_requested: int
    synth: np.ndarray | None
    seconds: float
    worker: str
    error: str | None = None
    #: a real-library target raised in this run: the run counts, as "failed" (empty output)
    failed: str | None = None


def run_one(task: Task) -> Outcome:
    """Fit the implementation on the task's world and sample; a pure function of the task."""
    from dpcheck.audit import datasets
    from dpcheck.audit.mechanisms import get_impl

    gen = task.generation
    seed = run_seed(gen, task.world, task.index)
    worker = f"{socket.gethostname()}:{os.getpid()}"
    start = time.perf_counter()
    requested = -1
    try:
        data = datasets.load(gen["dataset"], gen["target"], gen.get("data"))
        requested = int(gen["synth_rows"] or data.default_synth_rows)
        if _is_target(gen["impl"]):
            return _run_target(task, data, seed, requested, worker, start)
        impl = get_impl(gen["impl"])
        hyper = dict(gen["hyperparams"])
        impl.fit(data.world(task.world).copy(), epsilon=gen["epsilon"], delta=gen["delta"], seed=seed,
                 bounds=data.bounds, **hyper)
        synth = np.asarray(impl.sample(requested), dtype=np.float64)
        release = getattr(impl, "release", None)
        if callable(release):  # output left in a scaled space: back to input units as its users must
            synth = np.asarray(release(synth), dtype=np.float64)
        if synth.ndim == 1:
            synth = synth.reshape(-1, len(data.columns))
        return Outcome(task.world, task.index, seed, requested, synth, time.perf_counter() - start, worker)
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which stops the audit
        return Outcome(task.world, task.index, seed, requested, None, time.perf_counter() - start, worker,
                       error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=6)}")


def _is_target(name: str) -> bool:
    if ":" not in name:
        return False
    from dpcheck.targets import registry

    return registry.is_target(name)


def _run_target(task: Task, data: Any, seed: int, requested: int, worker: str, start: float) -> Outcome:
    """One shadow run of a real-library target; an exception from the library is a *failed* run."""
    import warnings

    from dpcheck.targets import registry
    from dpcheck.targets.base import TargetError, shadow_release

    gen = task.generation
    info = registry.get(gen["impl"])
    schema = data.get_schema()
    if info.kind == "mechanism":
        requested = 1
    frame = schema.decode(data.world(task.world))
    if info.env == "main":
        release = shadow_release
    else:
        from dpcheck.targets.remote import remote_shadow_release as release
    try:
        with warnings.catch_warnings():  # e.g. PrivacyLeakWarning once per run: stated in the report instead
            warnings.simplefilter("ignore")
            out = release(info, frame, schema, gen["epsilon"], gen["delta"], seed, requested,
                          dict(gen["hyperparams"]))
    except (TargetError, ImportError):
        raise  # set-up problems (library or env missing, worker dead) stop the audit with their message
    except Exception as exc:  # noqa: BLE001 - the library raised: recorded as a failed run
        width = 0 if info.kind == "mechanism" else len(schema.names)
        return Outcome(task.world, task.index, seed, requested, np.empty((0, width)),
                       time.perf_counter() - start, worker, failed=f"{type(exc).__name__}: {exc}")
    out = np.asarray(out, dtype=np.float64)
    synth = out.reshape(1, -1) if info.kind == "mechanism" else out.reshape(-1, len(schema.names))
    return Outcome(task.world, task.index, seed, requested, synth, time.perf_counter() - start, worker)


def _limit_threads() -> None:
    for var in THREAD_VARS:
        os.environ.setdefault(var, "1")


class InlineExecutor:
    description = "in-process"

    def imap(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        for task in tasks:
            yield run_one(task)

    def close(self) -> None:
        pass


class ProcessExecutor:
    def __init__(self, workers: int) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self.description = f"local process pool, {workers} worker(s)"
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_limit_threads)

    def imap(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        from concurrent.futures import as_completed

        futures = [self.pool.submit(run_one, t) for t in tasks]
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            for f in futures:
                f.cancel()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    def __init__(self, scheduler: str | None = None, *, local_workers: int | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - dask is in the 'distributed' extra
            raise RuntimeError("Dask is not installed: pip install 'dpcheck[distributed]'") from exc
        self.cluster = None
        if scheduler:
            self.client = Client(scheduler, timeout="30s")
            self.description = f"dask scheduler {scheduler}"
        else:
            _limit_threads()
            self.cluster = LocalCluster(n_workers=local_workers or os.cpu_count() or 1, threads_per_worker=1,
                                        processes=True, dashboard_address=None)
            self.client = Client(self.cluster)
            self.description = f"dask LocalCluster, {local_workers or os.cpu_count()} worker(s)"

    def imap(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        from distributed import as_completed

        futures = self.client.map(run_one, list(tasks), pure=False)
        try:
            for future in as_completed(futures):
                yield future.result()
        finally:
            self.client.cancel(futures)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(*, workers: int | None = None, scheduler: str | None = None,
                  cluster: str | None = None) -> Any:
    if scheduler:
        return DaskExecutor(scheduler)
    if cluster == "local":
        return DaskExecutor(local_workers=workers)
    if cluster is not None:
        raise ValueError(f"unknown cluster kind {cluster!r}; only 'local' is built in")
    workers = workers if workers is not None else (os.cpu_count() or 1)
    return InlineExecutor() if workers <= 1 else ProcessExecutor(workers)
