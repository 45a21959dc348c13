"""SIGKILL an audit half-way, run the same command again: nothing lost, nothing repeated."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

from dpcheck.cli import main

RUNS = 40


def _args(store, out):
    return ["audit", "--impl", "ref-laplace", "--runs", str(RUNS), "--hp", "delay=0.05", "--workers", "1",
            "--store", str(store), "--json", str(out), "--no-progress"]


def _stored(path):
    db = sqlite3.connect(path, timeout=30)
    try:
        return {(w, i): (s, f) for w, i, s, f in db.execute("SELECT world, idx, session, finished FROM runs")}
    except sqlite3.OperationalError:  # tables not created yet
        return {}
    finally:
        db.close()


def test_killed_audit_resumes_without_losing_or_repeating_runs(tmp_path):
    store, out = tmp_path / "audit.sqlite", tmp_path / "resumed.json"
    proc = subprocess.Popen([sys.executable, "-m", "dpcheck", *_args(store, out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    deadline = time.time() + 120
    while len(_stored(store) if store.exists() else {}) < 15:
        assert proc.poll() is None, "the audit finished before it could be killed"
        assert time.time() < deadline
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = _stored(store)
    assert 15 <= len(before) < 2 * RUNS and not out.exists()

    assert main(_args(store, out)) in (0, 1)
    after = _stored(store)
    assert len(after) == 2 * RUNS
    assert {k: after[k] for k in before} == before  # finished runs kept as they were
    resumed = json.loads(out.read_text())["results"][0]
    assert resumed["runs_executed"] == 2 * RUNS - len(before)
    assert resumed["runs_reused"] == len(before)

    fresh_out = tmp_path / "fresh.json"
    main(_args(tmp_path / "fresh.sqlite", fresh_out))
    fresh = json.loads(fresh_out.read_text())["results"][0]
    for key in ("spec_hash", "eps_cp", "eps_bayes", "auc", "fp", "fn", "threshold", "verdict"):
        assert resumed[key] == fresh[key], key
