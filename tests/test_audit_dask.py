"""The distributed path for real: a `dask scheduler` and two `dask worker` processes on loopback."""
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit.core.spec import AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners.engine import run_audit
from dpcheck.audit.runners.executor import InlineExecutor
from dpcheck.cli import main

DASK = str(Path(sys.executable).with_name("dask"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def cluster(tmp_path):
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = [open(tmp_path / f"{name}.log", "w") for name in ("scheduler", "w1", "w2")]
    procs = [subprocess.Popen([DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=logs[0], stderr=subprocess.STDOUT, cwd=tmp_path)]
    try:
        for i in (1, 2):
            procs.append(subprocess.Popen(
                [DASK, "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
                 "--no-nanny", "--name", f"w{i}", "--host", "127.0.0.1"],
                stdout=logs[i], stderr=subprocess.STDOUT, cwd=tmp_path))
        from distributed import Client

        deadline = time.time() + 90
        while True:
            try:
                with Client(address, timeout="5s") as client:
                    client.wait_for_workers(2, timeout=max(1, deadline - time.time()))
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        deadline = time.time() + 5
        for p in procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        for log in logs:
            log.close()


def test_dask_scheduler_with_two_workers_matches_the_local_result(cluster, tmp_path):
    out = tmp_path / "dask.json"
    store_path = tmp_path / "dask.sqlite"
    code = main(["audit", "--impl", "ref-broken", "--runs", "40", "--hp", "delay=0.02", "--scheduler", cluster,
                 "--store", str(store_path), "--json", str(out), "--no-progress"])
    distributed = json.loads(out.read_text())["results"][0]

    spec = AuditSpec("ref-broken", runs=40, hyperparams={"delay": 0.02})
    with Store(tmp_path / "local.sqlite") as store:
        local = run_audit(spec, store=store, executor=InlineExecutor())
        local_runs = store.load(spec.generation_hash(), 40)
    assert code == (1 if local.violation else 0)
    assert distributed["spec_hash"] == local.spec_hash
    for key in ("eps_cp", "eps_bayes", "auc", "fp", "fn", "verdict"):
        assert distributed[key] == getattr(local, key), key

    with Store(store_path) as store:
        remote_runs = store.load(spec.generation_hash(), 40)
    assert len({r.worker for r in remote_runs}) == 2  # both workers did work
    assert all(np.array_equal(a.synth, b.synth) and a.seed == b.seed for a, b in zip(local_runs, remote_runs))


def test_local_dask_cluster_matches_inline(tmp_path):
    from dpcheck.audit.runners.executor import make_executor

    spec = AuditSpec("ref-laplace", runs=10)
    executor = make_executor(cluster="local", workers=2)
    try:
        with Store(tmp_path / "dask.sqlite") as store:
            run_audit(spec, store=store, executor=executor)
            remote = store.load(spec.generation_hash(), 10)
    finally:
        executor.close()
    with Store(tmp_path / "local.sqlite") as store:
        run_audit(spec, store=store, executor=InlineExecutor())
        local = store.load(spec.generation_hash(), 10)
    assert [(r.world, r.index, r.seed) for r in remote] == [(r.world, r.index, r.seed) for r in local]
    assert all(np.array_equal(a.synth, b.synth) for a, b in zip(local, remote))
