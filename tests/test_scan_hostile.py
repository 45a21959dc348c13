"""A CI gate that cannot be fooled or crashed (issue 25): hostile files, planted caches,
unlistable folders, symlink ladders, crafted file names. Every input is generated here.

The command-line scans run in a subprocess (``timeout=`` only guards against a hang): a file
that crashed the parser used to kill the whole process (SIGSEGV), so it must never run in pytest's.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from test_scan_support import LeakCall, project, scan, write

from dpcheck.scan import cache as cache_module
from dpcheck.scan.catalog import RuleCatalog
from dpcheck.scan.config import load_config
from dpcheck.scan.discovery import discover
from dpcheck.scan.engine import Engine

XOR = "import numpy as np\nsigma = np.sqrt(2 * np.log(1.25 * (10 ^ int(delta))))\n"
DPCHECK = [sys.executable, "-m", "dpcheck"]


def run_scan(cwd: Path, *args: str, as_nobody: bool = False) -> tuple[int, dict, str]:
    """``dpcheck scan --format json ARGS`` in a fresh process: (exit code, report, stderr).
    ``as_nobody``: with root's privileges dropped (uid and gid 65534, no groups)."""
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if as_nobody else []
    proc = subprocess.run(
        [*drop, *DPCHECK, "scan", "--format", "json", *args], cwd=cwd, capture_output=True, timeout=300,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, report, proc.stderr.decode(errors="replace")


def rules_at(report: dict) -> list[tuple[str, int, str]]:
    return [(f["path"], f["span"]["start"]["line"], f["rule"]) for f in report["findings"]]


# -- 1. the scanner survives any input ------------------------------------------------------

HOSTILE = {
    # 1,300 nested brackets: libcst's native parser overflowed the C stack (SIGSEGV)
    "brackets": ("x = " + "(" * 1300 + "1" + ")" * 1300 + "\n", "too many nested parentheses"),
    "lists": ("x = " + "[" * 1300 + "]" * 1300 + "\n", "too many nested parentheses"),
    # 50,000 unary operators: SIGSEGV
    "unary": ("x = " + "-" * 50_000 + "1\n", "CPython's parser gave up"),
    # 50,000 attribute dots: libcst ran for minutes (quadratic)
    "dots": ("x = a" + ".b" * 50_000 + "\n", "CPython's parser gave up"),
    # 8,000 chained conditional expressions: libcst took > 6 GB and was killed
    "ternary": ("x = " + " if c else ".join(["1"] * 8000) + "\n", "CPython's parser gave up"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_is_a_diagnostic_and_the_rest_is_reported(tmp_path, case):
    body, reason = HOSTILE[case]
    project(tmp_path)
    write(tmp_path, "hostile.py", "epsilon = 1.0\nnoise = 2\n" + body)
    write(tmp_path, "ok.py", XOR)
    code, report, err = run_scan(tmp_path, "--no-cache", ".")
    assert code == 1, err
    assert rules_at(report) == [("hostile.py", 3, "DP007"), ("ok.py", 2, "DP102"), ("ok.py", 2, "DP101")]
    assert reason in report["findings"][0]["message"]
    assert report["summary"]["files"] == 2 and not report["summary"]["internal_error"]


def test_nesting_above_max_depth_is_not_analysed_unless_the_limit_is_raised(tmp_path):
    project(tmp_path)
    write(tmp_path, "deep.py", XOR + "x = a" + ".b" * 600 + "\n")
    code, report, _ = run_scan(tmp_path, "--no-cache", "deep.py")
    assert code == 1 and rules_at(report) == [("deep.py", 3, "DP007")]
    assert "more than 400 levels" in report["findings"][0]["message"]
    code, report, _ = run_scan(tmp_path, "--no-cache", "--max-depth", "1000", "deep.py")
    assert code == 1 and rules_at(report) == [("deep.py", 2, "DP102"), ("deep.py", 2, "DP101")]


def test_valid_python_libcst_refuses_keeps_its_other_findings(tmp_path):
    project(tmp_path)
    write(tmp_path, "annotated.py", "(no_such_global): int\n" + XOR)
    code, report, _ = run_scan(tmp_path, "--no-cache", "annotated.py")
    assert code == 1
    assert rules_at(report) == [("annotated.py", 1, "DP007"), ("annotated.py", 3, "DP102"), ("annotated.py", 3, "DP101")]
    assert "libcst cannot parse this valid Python" in report["findings"][0]["message"]


def test_hundred_thousand_concatenated_strings_are_not_a_syntax_error(tmp_path):
    project(tmp_path)
    write(tmp_path, "strings.py", XOR + "\ntable = (\n" + " ".join(["'a'"] * 100_000) + "\n)\n")
    code, report, _ = run_scan(tmp_path, "--no-cache", "strings.py")
    assert code == 1
    assert rules_at(report) == [("strings.py", 2, "DP102"), ("strings.py", 2, "DP101"), ("strings.py", 4, "DP007")]


def test_a_real_syntax_error_is_dp000_at_cpythons_line(tmp_path):
    project(tmp_path)
    write(tmp_path, "broken.py", "x = 1\n\ndef f(:\n    pass\n")
    code, report, _ = run_scan(tmp_path, "--no-cache", "broken.py")
    assert code == 1 and rules_at(report) == [("broken.py", 3, "DP000")]


PARENT = os.getpid()


class SegfaultsInWorker(LeakCall):
    """Crashes the process analysing a file that calls ``crash()`` — only a forked worker."""

    id = "DP995"

    def visit_Call(self, node) -> None:
        if os.getpid() != PARENT and "crash" in self.ctx.source:
            ctypes.string_at(0)  # SIGSEGV
        super().visit_Call(node)


class Stalls(LeakCall):
    """Never finishes a file that calls ``stall()``: computing (``busy``) or blocked (``sleep``)."""

    id = "DP996"

    def visit_Call(self, node) -> None:
        if "stall(" in self.ctx.source:
            end = time.monotonic() + 120
            while time.monotonic() < end:
                if "sleep" in self.ctx.source:
                    time.sleep(1)
        super().visit_Call(node)


def isolated(root: Path, rules: tuple, **overrides) -> object:
    config = load_config(root).with_overrides(**overrides)
    return Engine(config, list(rules), use_cache=False, jobs=1, isolate=True).scan([str(root)])


def test_a_worker_killed_by_a_signal_is_reported_and_the_scan_goes_on(tmp_path):
    project(tmp_path)
    write(tmp_path, "a_crash.py", "leak(x)\ncrash()\n")
    write(tmp_path, "b.py", "leak(y)\n")
    result = isolated(tmp_path, (SegfaultsInWorker,))
    assert result.crashed, "a dead worker makes the exit code 2"
    assert [(Path(f.path).name, f.rule) for f in result.findings] == [("a_crash.py", "DP008"), ("b.py", "DP995")]
    assert "SIGSEGV" in result.findings[0].message


@pytest.mark.parametrize("how", ["busy", "sleep"])
def test_a_file_over_the_time_limit_is_stopped_and_reported(tmp_path, how):
    """1 s of CPU time for a computing worker; ten times that of wall clock for a blocked one."""
    project(tmp_path)
    write(tmp_path, "a_stall.py", f"leak(x)\nstall({how})\n")
    write(tmp_path, "b.py", "leak(y)\n")
    result = isolated(tmp_path, (Stalls,), file_timeout=1.0)
    assert [(Path(f.path).name, f.rule) for f in result.findings] == [("a_stall.py", "DP007"), ("b.py", "DP996")]
    assert "stopped after 1 s of CPU time" in result.findings[0].message and not result.crashed


def test_a_file_over_the_memory_limit_is_reported_and_the_rest_is_written(tmp_path):
    """2,500 chained conditional expressions (within CPython's limits) with the depth limit
    lifted: libcst's allocations hit the worker's address-space limit."""
    project(tmp_path)
    # the XOR line makes DP101's gate hand the file to libcst
    write(tmp_path, "a_big.py", "import numpy as np\nepsilon = 1.0\nsigma = epsilon ^ 2\nx = np.random.laplace("
          + " if c else ".join(["epsilon"] * 2500) + ")\n")
    write(tmp_path, "ok.py", XOR)
    code, report, _ = run_scan(tmp_path, "--no-cache", "--max-depth", "100000", "--max-memory", "300M", ".")
    first, *rest = report["findings"]
    assert (first["path"], first["rule"]) in {("a_big.py", "DP007"), ("a_big.py", "DP008")}
    assert "not analysed" in first["message"] and "--max-memory" in first["message"]
    assert [(f["path"], f["rule"]) for f in rest] == [("ok.py", "DP102"), ("ok.py", "DP101")]
    assert code == (2 if first["rule"] == "DP008" else 1)


# -- 2. caches cannot change results ------------------------------------------------------


def test_a_planted_cache_does_not_hide_findings(tmp_path):
    project(tmp_path)
    data = XOR.encode()
    write(tmp_path, "gan.py", XOR)
    old = time.time() - 60
    os.utime(tmp_path / "gan.py", (old, old))
    engine = Engine(load_config(tmp_path), RuleCatalog(None, ()))  # the CLI's salt, so the CLI's index path
    index = engine.cache.path
    sha = hashlib.sha256(data).hexdigest()
    st = os.stat(tmp_path / "gan.py")
    planted = {"format": cache_module.FORMAT, "salt": engine.cache.salt,
               "files": {str(tmp_path / "gan.py"): [st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns, sha, True, 2]},
               "results": {sha: []}, "summaries": {}, "flows": {}}
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text(json.dumps(planted))
    code, report, _ = run_scan(tmp_path, "gan.py")
    assert code == 1 and rules_at(report) == [("gan.py", 2, "DP102"), ("gan.py", 2, "DP101")]
    assert report["summary"]["cache_hits"] == 0


def test_a_same_size_edit_with_the_mtime_restored_is_seen(tmp_path):
    project(tmp_path)
    path = write(tmp_path, "gan.py", "sigma = 10 ** int(delta)\n")
    old = time.time() - 60
    os.utime(path, (old, old))
    code, report, _ = run_scan(tmp_path, "gan.py")
    assert code == 0
    code, report, _ = run_scan(tmp_path, "gan.py")
    assert code == 0 and report["summary"]["cache_hits"] == 1, "the cache is used"
    st = os.stat(path)
    path.write_text("sigma = 10 ^  int(delta)\n")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # what `touch -r` does
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns
    code, report, _ = run_scan(tmp_path, "gan.py")
    assert code == 1 and rules_at(report) == [("gan.py", 1, "DP101")]


def test_pyproject_cache_dir_cannot_leave_the_project(tmp_path):
    project(tmp_path / "proj", 'cache-dir = "../elsewhere"\n')
    write(tmp_path / "proj", "a.py", "x = 1\n")
    code, _, err = run_scan(tmp_path / "proj", "a.py")
    assert code == 2 and "outside the project" in err and "Traceback" not in err
    assert not (tmp_path / "elsewhere").exists()


def test_a_committed_symlink_cannot_send_the_default_cache_elsewhere(tmp_path):
    project(tmp_path / "proj")
    write(tmp_path / "proj", "gan.py", XOR)
    (tmp_path / "outside").mkdir()
    os.symlink(tmp_path / "outside", tmp_path / "proj" / ".dpcheck")
    code, report, err = run_scan(tmp_path / "proj", "gan.py")
    assert code == 1 and len(report["findings"]) == 2 and "not caching" in err
    assert list((tmp_path / "outside").iterdir()) == []


# -- 3. walking is finite and complete ----------------------------------------------------


def world_readable_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="dpcheck-hostile-", dir="/tmp"))
    folder.chmod(0o755)
    return folder


def test_an_unlistable_folder_is_reported_not_skipped():
    folder = world_readable_folder()
    try:
        project(folder)
        write(folder, "pub/ok.py", "y = 1\n")
        write(folder, "sec/gan.py", XOR)
        for sub in (folder, folder / "pub"):
            for path in sub.rglob("*"):
                path.chmod(0o755 if path.is_dir() else 0o644)
        (folder / "sec").chmod(0)
        # root reads a mode-000 folder, so drop to nobody (a non-root user needs no change)
        nobody = os.geteuid() == 0
        code, report, err = run_scan(folder, "--no-cache", ".", as_nobody=nobody)
        assert code == 1, err
        assert rules_at(report) == [("sec", 1, "DP009")] and report["summary"]["files"] == 1
        assert "Permission denied" in report["findings"][0]["message"]
        code, report, err = run_scan(folder, "--no-cache", "sec/gan.py", as_nobody=nobody)
        assert code == 1 and "Traceback" not in err and rules_at(report) == [("sec/gan.py", 1, "DP002")]
    finally:
        (folder / "sec").chmod(0o755)
        shutil.rmtree(folder)


def test_a_symlink_ladder_visits_each_folder_once(tmp_path):
    """2 links per level × 20 levels: 2^20 paths to the last folder, 20 folders."""
    project(tmp_path)
    levels = 20
    for i in range(levels):
        write(tmp_path, f"real{i}/m{i}.py", "x = 1\n")
    for i in range(levels - 1):
        os.symlink(f"../real{i + 1}", tmp_path / f"real{i}" / "a")
        os.symlink(f"../real{i + 1}", tmp_path / f"real{i}" / "b")
    found = list(discover([str(tmp_path / "real0")], root=tmp_path))
    assert sorted(Path(c.path).name for c in found) == sorted(f"m{i}.py" for i in range(levels))


def test_a_symlink_loop_is_still_dp004(tmp_path):
    project(tmp_path)
    write(tmp_path, "pkg/m.py", "x = 1\n")
    os.symlink("..", tmp_path / "pkg" / "up")
    result = scan(tmp_path)
    assert [(Path(f.path).name, f.rule) for f in result.findings] == [("up", "DP004")]


# -- 4. outputs cannot be injected --------------------------------------------------------

NEWLINE_NAME = b"evil\n::warning file=x.py,line=1::pwned.py"
BYTES_NAME = b"bad\xff\xfe.py"


def crafted(tmp_path: Path) -> Path:
    project(tmp_path)
    for name in (NEWLINE_NAME, BYTES_NAME):
        with open(os.path.join(os.fsencode(tmp_path), name), "w") as handle:
            handle.write(XOR)
    return tmp_path


@pytest.mark.parametrize("fmt", ["text", "github", "json", "sarif"])
def test_crafted_file_names_cannot_inject_or_crash(tmp_path, fmt):
    crafted(tmp_path)
    proc = subprocess.run([*DPCHECK, "scan", "--no-cache", "--format", fmt, "."], cwd=tmp_path,
                          capture_output=True, timeout=300)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    out = proc.stdout.decode("utf-8")  # the report is valid UTF-8
    lines = out.splitlines()
    commands = [line for line in lines if line.startswith("::")]
    assert len(commands) == (4 if fmt == "github" else 0), "only the report's own workflow commands"
    assert not any(line.startswith("::warning") for line in lines)
    if fmt in ("json", "sarif"):
        data = json.loads(out)
        text = json.dumps(data)
        assert "bad\\\\xff\\\\xfe.py" in text or "bad%FF%FE.py" in text
    if fmt == "sarif":
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in data["runs"][0]["results"]}
        assert uris == {"bad%FF%FE.py", "evil%0A%3A%3Awarning%20file%3Dx.py%2Cline%3D1%3A%3Apwned.py"}
    if fmt == "text":
        assert any(line.startswith("evil\\n::warning file=x.py,line=1::pwned.py:2:") for line in lines)
