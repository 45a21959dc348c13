"""Where shadow runs execute: in-process, a local process pool, or a Dask cluster.

Every executor maps the same pure function :func:`run_one` over tasks and yields outcomes as
they finish (any order); results are keyed by (world, index), so the executor and the number of
workers cannot change them.
"""
from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcheck.audit.core.spec import run_seed

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


class InvalidRelease(ValueError):
    """An output no attack may count: not a finite numeric table with the dataset's columns."""


def check_release(output: Any, width: int, requested: int, what: str) -> np.ndarray:
    """``output`` as a (rows, width) float array, or :class:`InvalidRelease` naming what is wrong."""
    try:
        array = np.asarray(output, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidRelease(f"{what} returned {type(output).__name__}, not a numeric array ({exc})") from None
    if array.ndim == 1 and array.size and array.size % width == 0:
        array = array.reshape(-1, width)
    if array.ndim != 2 or array.shape[1] != width:
        raise InvalidRelease(f"{what} returned an array of shape {array.shape}; expected (rows, {width}): "
                             f"one row per record with the dataset's {width} columns")
    if array.shape[0] == 0:
        raise InvalidRelease(f"{what} returned no rows (asked for {requested})")
    bad = ~np.isfinite(array)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise InvalidRelease(f"{what} returned {int(bad.sum())} non-finite values of {array.size} "
                             f"(first {array[row, col]} at row {row}, column {col}); a release must be finite "
                             "numbers in the input's units")
    return array


def _failure_text(exc: BaseException) -> str:
    """One line: what was raised and, for the user's code, the innermost frame."""
    from dpcheck.audit.core.usercode import describe, where

    if isinstance(exc, InvalidRelease):
        return f"invalid release: {exc}"
    return describe(exc) + where(exc)


def run_one(task: Task) -> Outcome:
    """Fit the implementation on the task's world and sample; a pure function of the task."""
    from dpcheck.audit.core.usercode import is_ours
    from dpcheck.audit.reference.mechanisms import get_impl
    from dpcheck.audit.worlds import datasets

    gen = task.generation
    seed = run_seed(gen, task.world, task.index)
    worker = f"{socket.gethostname()}:{os.getpid()}"
    start = time.perf_counter()
    requested = -1
    try:
        data = datasets.load(gen["dataset"], gen["target"], gen.get("data"))
        requested = int(gen["synth_rows"] or data.default_synth_rows)
        if _is_target(gen["impl"]):
            if _releases_model(gen):
                raise ValueError(f"{gen['impl']} is a real-library target: it releases no model (release_model())")
            return _run_target(task, data, seed, requested, worker, start)
        impl = get_impl(gen["impl"])
        from dpcheck.audit.attacks.dpsgd import world_input  # the gradient canary: D′ + an adversary-set gradient

        rows, hyper = world_input(data, task.world, dict(gen["hyperparams"]))
        impl.fit(rows.copy(), epsilon=gen["epsilon"], delta=gen["delta"], seed=seed,
                 bounds=data.bounds, **hyper)
        if _releases_model(gen):  # white-box: the features of the released model, computed before it is dropped
            from dpcheck.audit.attacks.whitebox import model_features

            return Outcome(task.world, task.index, seed, 1, model_features(impl, data.target),
                           time.perf_counter() - start, worker)
        synth = impl.sample(requested)
        what = "sample()"
        release = getattr(impl, "release", None)
        if callable(release):  # output left in a scaled space: back to input units as its users must
            synth = release(check_release(synth, len(data.columns), requested, what))
            what = "release(sample())"
        synth = check_release(synth, len(data.columns), requested, what)
        return Outcome(task.world, task.index, seed, requested, synth, time.perf_counter() - start, worker)
    except BaseException as exc:  # noqa: BLE001 - the user's exit or interrupt too: reported, the audit stops
        if is_ours(exc):
            raise
        return Outcome(task.world, task.index, seed, requested, None, time.perf_counter() - start, worker,
                       error=_failure_text(exc))


#: suffix of ``Outcome.worker`` naming the path a run took (no suffix: the plain path)
FAST_TAG, FALLBACK_TAG = "+fast", "+fallback"


def run_path_of(worker: str) -> str:
    """"fast", "fallback" (plain after a failed fast batch) or "plain", from a stored worker string."""
    if worker.endswith(FAST_TAG):
        return "fast"
    if worker.endswith(FALLBACK_TAG):
        return "fallback"
    return "plain"


def run_group(tasks: list[Task], path: str = "auto") -> list[Outcome]:
    """Run tasks of one generation and world: on the fast path as one batch when ``path`` chooses
    it for the implementation, else one by one on the plain path.

    A failed fast batch falls back to the plain path only for implementations the equivalence
    test covers (:data:`dpcheck.audit.runners.fastpath.COVERED`); otherwise every run of the batch is
    returned with the error, which stops the audit.
    """
    from dpcheck.audit.runners import fastpath
    from dpcheck.audit.worlds import datasets

    if not tasks:
        return []
    gen = tasks[0].generation
    if fastpath.chosen_path(gen["impl"], path) == "plain" or _releases_model(gen):
        return [run_one(t) for t in tasks]
    if any(t.generation != gen or t.world != tasks[0].world for t in tasks):
        raise ValueError("a fast batch needs tasks of one generation and one world")
    worker = f"{socket.gethostname()}:{os.getpid()}"
    seeds = [run_seed(gen, t.world, t.index) for t in tasks]
    start = time.perf_counter()
    requested = -1
    try:
        data = datasets.load(gen["dataset"], gen["target"], gen.get("data"))
        requested = int(gen["synth_rows"] or data.default_synth_rows)
        outs = fastpath.fit_sample_batch(gen["impl"], data.world(tasks[0].world), seeds, requested,
                                         epsilon=gen["epsilon"], delta=gen["delta"], bounds=data.bounds,
                                         hyperparams=dict(gen["hyperparams"]))
    except Exception as exc:  # noqa: BLE001 - fast-path failures are decided below
        if gen["impl"] in fastpath.COVERED:
            outcomes = [run_one(t) for t in tasks]
            for o in outcomes:
                o.worker += FALLBACK_TAG
            return outcomes
        seconds = (time.perf_counter() - start) / len(tasks)
        message = (f"{type(exc).__name__}: {exc} (fast path; no fallback: the equivalence test does not cover "
                   f"{gen['impl']})")
        return [Outcome(t.world, t.index, s, requested, None, seconds, worker + FAST_TAG, error=message)
                for t, s in zip(tasks, seeds)]
    seconds = (time.perf_counter() - start) / len(tasks)
    width = len(data.columns)
    outcomes = []
    for t, s, o in zip(tasks, seeds, outs):
        try:
            outcomes.append(Outcome(t.world, t.index, s, requested, check_release(o, width, requested, "the fast path"),
                                    seconds, worker + FAST_TAG))
        except InvalidRelease as exc:
            outcomes.append(Outcome(t.world, t.index, s, requested, None, seconds, worker + FAST_TAG,
                                    error=_failure_text(exc)))
    return outcomes


def group_tasks(tasks: Iterable[Task], path: str, size: int) -> list[list[Task]]:
    """Tasks cut into fast batches (same generation and world, at most ``size``) where the fast
    path is chosen, single tasks otherwise; the order of first appearance is kept."""
    from dpcheck.audit.core.spec import spec_hash
    from dpcheck.audit.runners import fastpath

    groups: dict[tuple[str, int], list[list[Task]]] = {}
    order: list[list[Task]] = []
    for task in tasks:
        if fastpath.chosen_path(task.generation["impl"], path) == "plain" or _releases_model(task.generation):
            order.append([task])
            continue
        chunks = groups.setdefault((spec_hash(task.generation), task.world), [])
        if not chunks or len(chunks[-1]) >= size:
            chunks.append([])
            order.append(chunks[-1])
        chunks[-1].append(task)
    return order


def _releases_model(generation: dict[str, Any]) -> bool:
    """White-box runs (dpcheck.audit.attacks.whitebox): the plain path only, which keeps the fitted model."""
    return generation.get("release") == "model"


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


def _batch_size(tasks: list[Task], workers: int) -> int:
    """Fast batches small enough that every worker gets one, at most ``BATCH_SIZE``."""
    from dpcheck.audit.runners import fastpath

    per_world = max(1, -(-len(tasks) // (2 * max(workers, 1))))
    return max(1, min(fastpath.BATCH_SIZE, per_world))


#: default --run-timeout: seconds one shadow run may take (a fast batch of k runs gets k times this)
DEFAULT_RUN_TIMEOUT = 600.0


def _trusted(impl: str) -> bool:
    """dpcheck's own implementations and registered library targets; anything else is the user's code."""
    from dpcheck.audit.reference.mechanisms import known_names

    return impl in known_names() or _is_target(impl)


def users_code(impl: str) -> bool:
    """A ``package.module:Factory`` adapter: run it where an exit or a kill cannot end dpcheck."""
    return not _trusted(impl)


def _failed_group(group: list[Task], message: str) -> list[Outcome]:
    return [Outcome(t.world, t.index, run_seed(t.generation, t.world, t.index), -1, None, 0.0, "", error=message)
            for t in group]


class _Isolating:
    """Runs groups in worker processes: an exit, a signal or a hang there is a failed run, named."""

    pool: Any = None
    path = "auto"
    run_timeout: float | None = DEFAULT_RUN_TIMEOUT

    def _limit(self, group: list[Task]) -> float | None:
        return self.run_timeout * len(group) if self.run_timeout else None

    def _isolated(self, groups: list[list[Task]], size: int) -> Iterator[Outcome]:
        import functools

        from dpcheck.audit.core.workers import Failure, WorkerPool

        if not groups:
            return
        if self.pool is None:
            self.pool = WorkerPool(size, initializer=_limit_threads)
        call = functools.partial(run_group, path=self.path)
        for group, result in self.pool.map_unordered(call, groups, self._limit):
            if isinstance(result, Failure):
                limit = self._limit(group)
                hint = f" (--run-timeout {self.run_timeout:g} s per run)" if "did not finish" in result.message \
                    and limit else ""
                yield from _failed_group(group, result.message + hint)
            else:
                yield from result

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None


class InlineExecutor(_Isolating):
    """Runs in this process; with ``isolate`` (what ``make_executor`` and the CLI use), the user's
    adapters run in one worker process instead, where an exit or a kill cannot end dpcheck."""

    description = "in-process"

    def __init__(self, path: str = "auto", run_timeout: float | None = DEFAULT_RUN_TIMEOUT,
                 isolate: bool = False) -> None:
        from dpcheck.audit.runners.fastpath import check_path

        self.path = check_path(path)
        self.run_timeout = run_timeout
        self.isolate = isolate

    def imap(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        from dpcheck.audit.core.usercode import RunTimeout, alarm

        tasks = list(tasks)
        groups = group_tasks(tasks, self.path, _batch_size(tasks, 1))
        isolated = [g for g in groups if self.isolate and not _trusted(g[0].generation["impl"])]
        for group in groups:
            if any(group is g for g in isolated):
                continue
            limit = self._limit(group)
            try:
                with alarm(limit):
                    outcomes = run_group(group, self.path)
            except RunTimeout:
                outcomes = _failed_group(group, f"did not finish within {limit:g} s "
                                                f"(--run-timeout {self.run_timeout:g} s per run)")
            yield from outcomes
        yield from self._isolated(isolated, 1)


class ProcessExecutor(_Isolating):
    def __init__(self, workers: int, path: str = "auto", run_timeout: float | None = DEFAULT_RUN_TIMEOUT) -> None:
        from dpcheck.audit.runners.fastpath import check_path

        self.path = check_path(path)
        self.workers = workers
        self.run_timeout = run_timeout
        self.description = f"local process pool, {workers} worker(s)"

    def imap(self, tasks: Iterable[Task]) -> Iterator[Outcome]:
        tasks = list(tasks)
        yield from self._isolated(group_tasks(tasks, self.path, _batch_size(tasks, self.workers)), self.workers)


class DaskExecutor:
    def __init__(self, scheduler: str | None = None, *, local_workers: int | None = None,
                 path: str = "auto") -> None:
        from dpcheck.audit.runners.fastpath import check_path

        self.path = check_path(path)
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

        tasks = list(tasks)
        workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        groups = group_tasks(tasks, self.path, _batch_size(tasks, workers))
        futures = self.client.map(run_group, groups, [self.path] * len(groups), pure=False)
        try:
            for future in as_completed(futures):
                yield from future.result()
        finally:
            self.client.cancel(futures)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(*, workers: int | None = None, scheduler: str | None = None,
                  cluster: str | None = None, path: str = "auto",
                  run_timeout: float | None = DEFAULT_RUN_TIMEOUT) -> Any:
    """``path``: "auto" (fast path for implementations the equivalence test covers), "fast"
    (wherever one exists) or "plain" (see :mod:`dpcheck.audit.runners.fastpath`). ``run_timeout``
    (seconds per run, None = no limit) applies to local execution; a Dask cluster uses its own."""
    if scheduler:
        return DaskExecutor(scheduler, path=path)
    if cluster == "local":
        return DaskExecutor(local_workers=workers, path=path)
    if cluster is not None:
        raise ValueError(f"unknown cluster kind {cluster!r}; only 'local' is built in")
    workers = workers if workers is not None else (os.cpu_count() or 1)
    if workers <= 1:
        return InlineExecutor(path, run_timeout, isolate=True)
    return ProcessExecutor(workers, path, run_timeout)
