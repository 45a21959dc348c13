"""Issue 25: user code, signals, absurd values and an unlucky disk never give a clean result.

Adapters are written to ``tmp_path`` at test time; audits are a few runs of the worst case.
Permission tests drop to uid 65534 in a subprocess when run as root (root ignores file modes).
"""
from __future__ import annotations

import errno
import json
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dpcheck.audit.core.store import Store, StoreError
from dpcheck.cli import main

ADAPTERS = '''
import os, signal, sys, time
from pathlib import Path
import numpy as np

class Base:
    name = "hostile"; framework = "numpy"; upstream = "tests"
    def fit(self, data, *, epsilon, delta, seed, probe=None, **hp):
        self.cols = np.asarray(data).shape[1]
        self.rng = np.random.default_rng(seed)
        return self
    def sample(self, n):
        return self.rng.integers(0, 2, size=(n, self.cols)).astype(float)

class ExitZero(Base):
    def fit(self, data, **kw): sys.exit(0)

class Interrupt(Base):
    def fit(self, data, **kw): raise KeyboardInterrupt

class OsExit(Base):
    def fit(self, data, **kw): os._exit(0)

class Killed(Base):
    def fit(self, data, **kw): os.kill(os.getpid(), signal.SIGKILL)

class Hang(Base):
    def fit(self, data, **kw):
        Path(os.environ["HOSTILE_FLAG"]).touch()
        time.sleep(10**6)

class NaN(Base):
    def sample(self, n): return np.full((n, self.cols), np.nan)

class Inf(Base):
    def sample(self, n): return np.full((n, self.cols), -np.inf)

class Empty(Base):
    def sample(self, n): return np.zeros((0, self.cols))

class WrongColumns(Base):
    def sample(self, n): return np.zeros((n, self.cols + 1))
'''


@pytest.fixture
def adapters(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The module name of the hostile adapters, importable here and in spawned workers."""
    (tmp_path / "hostile_adapters.py").write_text(ADAPTERS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "hostile_adapters"


def audit(tmp_path: Path, impl: str, *extra: str) -> int:
    return main(["audit", "--impl", impl, "--runs", "5", "--workers", "1", "--no-progress",
                 "--store", str(tmp_path / "s.sqlite"), *extra])


def stored_runs(path: Path) -> int:
    return sqlite3.connect(path).execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("dpcheck:")]
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    return lines[0]


# --- user code that exits, interrupts or dies -------------------------------------------------

@pytest.mark.parametrize("adapter, says", [
    ("ExitZero", "sys.exit(0)"),
    ("Interrupt", "raised KeyboardInterrupt"),
    ("OsExit", "exited with status 0"),
    ("Killed", "killed by SIGKILL"),
])
def test_user_code_that_exits_or_dies_is_an_error_naming_the_run(adapters, tmp_path, capsys, adapter, says):
    code = audit(tmp_path, f"{adapters}:{adapter}")
    line = one_error_line(capsys.readouterr().err)
    assert code == 2
    assert f"{adapters}:{adapter}: shadow run 0 of world" in line and says in line


def test_dying_workers_in_a_pool_are_errors_too(adapters, tmp_path, capsys):
    code = audit(tmp_path, f"{adapters}:OsExit", "--workers", "2")
    assert code == 2 and "exited with status 0" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("adapter, says", [("ExitZero", "sys.exit(0)"), ("Killed", "killed by SIGKILL")])
def test_one_run_audits_of_user_code_that_exits_are_errors(adapters, tmp_path, capsys, adapter, says):
    code = main(["audit", "--impl", f"{adapters}:{adapter}", "--one-run", "20"])
    line = one_error_line(capsys.readouterr().err)
    assert code == 2 and f"one-run audit of {adapters}:{adapter} failed" in line and says in line


def test_a_hanging_fit_is_stopped_by_the_run_timeout(adapters, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HOSTILE_FLAG", str(tmp_path / "started"))
    code = audit(tmp_path, f"{adapters}:Hang", "--run-timeout", "1")
    line = one_error_line(capsys.readouterr().err)
    assert code == 2 and "did not finish within 1 s" in line and "shadow run 0 of world" in line


def test_an_in_process_run_is_stopped_by_the_run_timeout(tmp_path):
    from dpcheck.audit.core.spec import AuditSpec
    from dpcheck.audit.runners.engine import AuditRunError, run_audit
    from dpcheck.audit.runners.executor import InlineExecutor

    spec = AuditSpec("ref-laplace", runs=5, hyperparams={"delay": 600})  # dpcheck's own: runs in this process
    with Store(tmp_path / "s.sqlite") as store, pytest.raises(AuditRunError, match="did not finish within 0.5 s"):
        run_audit(spec, store=store, executor=InlineExecutor(run_timeout=0.5))


def test_sys_exit_while_importing_the_users_module_is_an_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "exits_at_import.py").write_text("import sys\nsys.exit(0)\n")
    (tmp_path / "broken_at_import.py").write_text("x = (\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert audit(tmp_path, "exits_at_import:A") == 2
    assert "your module 'exits_at_import'" in one_error_line(capsys.readouterr().err)
    assert audit(tmp_path, "broken_at_import:A") == 2
    line = one_error_line(capsys.readouterr().err)
    assert "your module 'broken_at_import'" in line and "SyntaxError" in line


@pytest.mark.parametrize("adapter, says", [("ExitZero", "sys.exit(0)"), ("OsExit", "exited with status 0")])
def test_dpcheck_test_reports_user_code_that_exits_as_an_error(adapters, tmp_path, adapter, says):
    out = tmp_path / "t.json"
    code = main(["test", "--impl", f"{adapters}:{adapter}", "--category", "data_partition", "--quiet",
                 "--json", str(out)])
    (result,) = json.loads(out.read_text())["results"]
    assert code == 2 and result["status"] == "error" and says in result["summary"]


# --- signals to dpcheck itself -------------------------------------------------------------------

def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(c) for c in (task / "children").read_text().split()}
    return found


def _alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def _wait_for(condition, seconds: float = 120.0) -> bool:
    """Poll ``condition`` (a hang guard, not a timing assertion)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@pytest.fixture
def hanging_audit(adapters, tmp_path) -> Iterator[tuple[subprocess.Popen, set[int]]]:
    """``dpcheck audit`` with two workers stuck in fit(); yields it and its child processes."""
    flag = tmp_path / "started"
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "HOSTILE_FLAG": str(flag)}
    proc = subprocess.Popen([sys.executable, "-m", "dpcheck", "audit", "--impl", f"{adapters}:Hang", "--runs", "5",
                             "--workers", "2", "--no-progress", "--store", str(tmp_path / "s.sqlite")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    children: set[int] = set()
    try:
        assert _wait_for(flag.exists), "no worker reached fit()"
        children |= _children(proc.pid)
        assert len(children) >= 2  # the workers (and multiprocessing's resource tracker)
        yield proc, children
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)
        for pid in children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("signum, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_terminating_dpcheck_stops_its_workers(hanging_audit, signum, code):
    proc, children = hanging_audit
    proc.send_signal(signum)
    assert proc.wait(timeout=120) == code
    assert _wait_for(lambda: not any(_alive(c) for c in children), 60)


def test_killing_dpcheck_leaves_no_worker_running(hanging_audit):
    proc, children = hanging_audit
    proc.kill()
    proc.wait(timeout=60)
    _wait_for(lambda: not any(_alive(c) for c in children), 60)
    assert [c for c in children if _alive(c)] == []


# --- releases and values ----------------------------------------------------------------------

@pytest.mark.parametrize("adapter, says", [
    ("NaN", "non-finite values"), ("Inf", "non-finite values"), ("Empty", "no rows"),
    ("WrongColumns", "expected (rows, 3)"),
])
def test_meaningless_releases_are_refused_at_the_first_run(adapters, tmp_path, capsys, adapter, says):
    code = audit(tmp_path, f"{adapters}:{adapter}")
    line = one_error_line(capsys.readouterr().err)
    assert code == 2 and "invalid release: sample()" in line and says in line
    assert f"{adapters}:{adapter}: shadow run 0 of world" in line
    assert stored_runs(tmp_path / "s.sqlite") == 0


@pytest.mark.parametrize("flags, says", [
    (["--synth-rows", "0"], "synthetic rows"), (["--epsilon", "inf"], "epsilon"), (["--epsilon", "0"], "epsilon"),
    (["--epsilon", "-1"], "epsilon"), (["--epsilon", "1e308"], "epsilon"), (["--epsilon", "1e-320"], "epsilon"),
    (["--epsilon", "nan"], "epsilon"), (["--delta", "1e-320"], "delta"), (["--runs", "1000000000"], "runs"),
    (["--seed", "-1"], "seed"), (["--run-timeout", "-1"], "--run-timeout"), (["--run-timeout", "nan"], "--run-timeout"),
])
def test_absurd_values_are_refused_before_any_run(tmp_path, capsys, flags, says):
    code = main(["audit", "--impl", "ref-laplace", "--workers", "1", "--store", str(tmp_path / "s.sqlite"), *flags])
    assert code == 2 and says in one_error_line(capsys.readouterr().err)
    assert not (tmp_path / "s.sqlite").exists()


# --- the store and the output files -------------------------------------------------------------

def test_a_healthy_read_only_store_is_called_read_only(tmp_path, capsys, monkeypatch):
    assert audit(tmp_path, "ref-laplace") == 0
    capsys.readouterr()
    connect = sqlite3.connect

    def read_only(path: str, **kwargs):  # root ignores file modes; SQLite's read-only mode does not
        return connect(f"file:{path}?mode=ro", uri=True, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    code = audit(tmp_path, "ref-laplace", "--runs", "6")
    line = one_error_line(capsys.readouterr().err)
    assert code == 2 and "the store is read-only" in line and "damaged" not in line and "move it away" not in line


def test_a_store_whose_folder_cannot_be_created(tmp_path, capsys, monkeypatch):
    (tmp_path / "a-file").write_text("")
    assert audit(tmp_path, "ref-laplace", "--store", str(tmp_path / "a-file" / "new" / "s.sqlite")) == 2
    assert "cannot create the folder" in one_error_line(capsys.readouterr().err)

    def read_only_parent(self: Path, *args, **kwargs) -> None:  # what a non-root user gets under a 0555 folder
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))

    monkeypatch.setattr(Path, "mkdir", read_only_parent)
    assert audit(tmp_path, "ref-laplace", "--store", str(tmp_path / "ro" / "new" / "s.sqlite")) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "cannot create the folder" in line and "Permission denied" in line


def test_a_device_as_store_is_not_called_damaged(capsys):
    assert main(["audit", "--impl", "ref-laplace", "--runs", "5", "--workers", "1", "--store", os.devnull]) == 2
    assert "not a regular file" in one_error_line(capsys.readouterr().err)


def test_a_full_disk_while_storing_runs_says_so(tmp_path, capsys, monkeypatch):
    pragmas = Store._pragmas

    def tiny_disk(self: Store) -> None:  # SQLite reports SQLITE_FULL exactly as on a full disk
        pragmas(self)
        self.db.execute("PRAGMA max_page_count=12")

    monkeypatch.setattr(Store, "_pragmas", tiny_disk)
    code = main(["audit", "--impl", "ref-laplace", "--runs", "500", "--workers", "1", "--no-progress",
                 "--store", str(tmp_path / "s.sqlite")])
    line = one_error_line(capsys.readouterr().err)
    assert code == 2 and "the disk is full" in line and "damaged" not in line


def test_json_on_a_full_disk_is_one_line_and_leaves_no_tmp(tmp_path, capsys, monkeypatch):
    out = tmp_path / "r.json"
    out.write_text("previous results")

    def full(self: Path, text: str, *args, **kwargs) -> int:
        with open(self, "w") as f:
            f.write(text[:10])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_text", full)
    code = main(["audit", "--impl", "ref-laplace", "--runs", "5", "--workers", "1", "--no-progress",
                 "--store", str(tmp_path / "s.sqlite"), "--json", str(out)])
    line = one_error_line(capsys.readouterr().err)
    monkeypatch.undo()
    assert code == 2 and "cannot write --json" in line and "No space left on device" in line
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("r.")) == ["r.json"]
    assert out.read_text() == "previous results"


def test_store_and_json_on_one_path_are_refused(tmp_path, capsys):
    store = tmp_path / "s.sqlite"
    assert audit(tmp_path, "ref-laplace") == 0
    before = store.read_bytes()
    capsys.readouterr()
    assert audit(tmp_path, "ref-laplace", "--json", str(store)) == 2
    assert "--store and --json name the same file" in one_error_line(capsys.readouterr().err)
    assert store.read_bytes() == before


def _create_together(paths: list[str], barrier, results) -> None:
    out = []
    for path in paths:
        barrier.wait()
        try:
            with Store(path) as s:
                s.register("spec", {"impl": "x"})
            out.append("ok")
        except StoreError as exc:
            out.append(str(exc))
    results.put(out)


def test_four_processes_creating_one_store_all_succeed(tmp_path):
    context = multiprocessing.get_context("fork")
    paths = [str(tmp_path / f"s{i}.sqlite") for i in range(30)]
    barrier, results = context.Barrier(4), context.Queue()
    procs = [context.Process(target=_create_together, args=(paths, barrier, results)) for _ in range(4)]
    for p in procs:
        p.start()
    outcomes = [o for _ in procs for o in results.get(timeout=300)]
    for p in procs:
        p.join(timeout=60)
    assert [o for o in outcomes if o != "ok"] == [] and len(outcomes) == 120


def test_json_results_still_parse_after_the_refusals(tmp_path):
    out = tmp_path / "r.json"
    assert audit(tmp_path, "ref-laplace", "--json", str(out)) == 0
    assert json.loads(out.read_text())["results"][0]["impl"] == "ref-laplace"
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []
