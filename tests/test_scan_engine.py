"""Engine: suppressions, diagnostics for bad inputs, crash isolation, parallel runs, the cache."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from test_scan_support import TEST_RULES, LeakCall, project, scan, triples, write

from dpcheck.scan import engine
from dpcheck.scan.cache import ResultCache
from dpcheck.scan.engine import analyse

OLD = time.time() - 3600


def test_one_tree_all_rules_and_trigger_prefilter(tmp_path, monkeypatch):
    project(tmp_path)
    write(tmp_path, "hit.py", "family = 1\nleak(x)\nnoisy = 2\n")
    write(tmp_path, "quiet.py", "def f(x):\n    return x + 1\n")
    parses: list[str] = []
    real = engine._parse
    monkeypatch.setattr(engine, "_parse", lambda src: parses.append(src) or real(src))
    result = scan(tmp_path)
    assert triples(result) == [("hit.py", 1, "DP101"), ("hit.py", 2, "DP991"), ("hit.py", 3, "DP992")]
    assert len(parses) == 1, "one parse per file with triggers, none for files without"
    assert result.stats.files == 2 and result.stats.parsed == 1


def test_suppression_comments():
    source = (
        "leak(a)  # dpcheck: ignore\n"
        "leak(b)  # dpcheck: ignore[DP991]\n"
        "leak(c)  # dpcheck: ignore[DP992, DP101]\n"
        "leak(d); noisy = 1  # dpcheck:ignore[dp99]\n"
        "leak(e)\n"
    )
    found = [(f.line, f.rule) for f in analyse(source.encode(), "s.py", TEST_RULES).findings]
    assert found == [(3, "DP991"), (5, "DP991")]


def test_never_imports_or_executes_scanned_code(tmp_path):
    project(tmp_path)
    marker = tmp_path / "executed"
    write(tmp_path, "evil.py", f"open({str(marker)!r}, 'w').write('x')\nimport sys; sys.exit(3)\nleak(1)\n")
    result = scan(tmp_path)
    assert triples(result) == [("evil.py", 3, "DP991")]
    assert not marker.exists() and "evil" not in sys.modules


def test_syntax_error_is_one_diagnostic_and_the_scan_goes_on(tmp_path):
    project(tmp_path)
    write(tmp_path, "a_bad.py", "def f(:\n    leak(x)\n")
    write(tmp_path, "b_bad_no_trigger.py", "x = = 1\n")
    write(tmp_path, "c_good.py", "leak(x)\n")
    result = scan(tmp_path)
    assert [(n, r) for n, _, r in triples(result)] == [("a_bad.py", "DP000"), ("b_bad_no_trigger.py", "DP000"), ("c_good.py", "DP991")]
    assert all(f.category == "diagnostic" and "syntax error" in f.message for f in result.findings[:2])


def test_newer_grammar_is_not_a_syntax_error(tmp_path):
    # valid for libcst but rejected by older CPython parsers: confirmed with libcst before DP000
    project(tmp_path)
    write(tmp_path, "m.py", "match x:\n    case 1:\n        pass\n")
    assert scan(tmp_path).findings == []


def test_undecodable_bytes_and_pep263(tmp_path):
    project(tmp_path)
    write(tmp_path, "bad_utf8.py", b"leak(x)\ns = '\xff\xfe'\n")
    write(tmp_path, "bad_cookie.py", b"# -*- coding: klingon -*-\nleak(x)\n")
    write(tmp_path, "latin1.py", "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\nleak(x)\n".encode("latin-1"))
    write(tmp_path, "bom.py", b"\xef\xbb\xbfleak(x)\n")
    result = scan(tmp_path)
    assert triples(result) == [
        ("bad_cookie.py", 1, "DP001"), ("bad_utf8.py", 1, "DP001"), ("bom.py", 1, "DP991"), ("latin1.py", 3, "DP991"),
    ]
    bad = {Path(f.path).name: f.message for f in result.findings}
    assert "line 2" in bad["bad_utf8.py"] and "0xff" in bad["bad_utf8.py"]
    assert "klingon" in bad["bad_cookie.py"]


def test_unreadable_file(tmp_path, monkeypatch):
    # tests run as root, which chmod 000 does not stop: simulate the OS refusing the read
    project(tmp_path)
    write(tmp_path, "locked.py", "leak(x)\n")
    write(tmp_path, "open.py", "leak(x)\n")
    real = engine.read_bytes

    def refuse(path: str) -> bytes:
        if path.endswith("locked.py"):
            raise PermissionError(13, "Permission denied", path)
        return real(path)

    monkeypatch.setattr(engine, "read_bytes", refuse)
    result = scan(tmp_path)
    assert triples(result) == [("locked.py", 1, "DP002"), ("open.py", 1, "DP991")]
    assert "Permission denied" in result.findings[0].message


def test_fifo_named_py_is_never_opened(tmp_path):
    project(tmp_path)
    os.mkfifo(tmp_path / "pipe.py")  # opening it would block forever
    write(tmp_path, "ok.py", "leak(x)\n")
    assert triples(scan(tmp_path)) == [("ok.py", 1, "DP991"), ("pipe.py", 1, "DP006")]


def test_file_above_size_limit(tmp_path):
    project(tmp_path, "max-file-size = 200\n")
    write(tmp_path, "big.py", "leak(x)\n" + "# padding\n" * 50)
    write(tmp_path, "small.py", "leak(x)\n")
    result = scan(tmp_path)
    assert triples(result) == [("big.py", 1, "DP003"), ("small.py", 1, "DP991")]
    assert "above the limit of 200" in result.findings[0].message
    assert triples(scan(tmp_path, max_file_size=10_000)) == [("big.py", 1, "DP991"), ("small.py", 1, "DP991")]


def test_rule_crash_is_isolated(tmp_path):
    project(tmp_path)
    write(tmp_path, "a.py", "boom()\nleak(x)\n")
    write(tmp_path, "b.py", "leak(y)\n")
    result = scan(tmp_path)
    assert result.crashed
    assert triples(result) == [("a.py", 1, "DP005"), ("a.py", 2, "DP991"), ("b.py", 1, "DP991")]
    crash = result.findings[0]
    assert "DP993" in crash.message and "ZeroDivisionError" in crash.message and crash.path.endswith("a.py")


def test_parallel_equals_serial(tmp_path, monkeypatch):
    project(tmp_path)
    for i in range(30):
        body = "leak(x)\n" * (i % 3) + ("noisy = 1\n" if i % 4 == 0 else "") + ("def f(:\n" if i == 7 else "")
        write(tmp_path, f"pkg{i % 5}/m{i}.py", body + "y = 2\n" * 20)
    write(tmp_path, "pkg0/boom.py", "boom()\nleak(z)\n")
    serial = scan(tmp_path, jobs=1)
    parallel = scan(tmp_path, jobs=2)
    assert parallel.findings == serial.findings and len(serial.findings) > 20
    assert parallel.crashed and serial.crashed
    assert parallel.stats.lines == serial.stats.lines


def count_parses(monkeypatch) -> list[str]:
    calls: list[str] = []
    real = engine._parse
    monkeypatch.setattr(engine, "_parse", lambda src: calls.append(src) or real(src))
    return calls


def test_cache_hit_and_invalidation_on_content_change(tmp_path, monkeypatch):
    project(tmp_path)
    a = write(tmp_path, "a.py", "leak(x)\n")
    write(tmp_path, "b.py", "noisy = 1\n")
    parses = count_parses(monkeypatch)
    first = scan(tmp_path, use_cache=True)
    assert len(parses) == 2 and first.stats.cache_hits == 0
    second = scan(tmp_path, use_cache=True)
    assert len(parses) == 2 and second.stats.cache_hits == 2 and second.findings == first.findings
    a.write_text("leak(x)\nleak(y)\n")
    third = scan(tmp_path, use_cache=True)
    assert len(parses) == 3 and third.stats.cache_hits == 1
    assert triples(third) == [("a.py", 1, "DP991"), ("a.py", 2, "DP991"), ("b.py", 1, "DP992")]


def test_same_content_elsewhere_is_a_cache_hit_with_its_own_path(tmp_path, monkeypatch):
    project(tmp_path)
    write(tmp_path, "a.py", "leak(x)\n")
    scan(tmp_path, use_cache=True)
    write(tmp_path, "copy/a2.py", "leak(x)\n")
    parses = count_parses(monkeypatch)
    result = scan(tmp_path, use_cache=True)
    assert parses == [] and [f.path.endswith("a2.py") for f in result.findings] == [False, True]


def test_cache_invalidated_by_rule_set_and_size_limit(tmp_path, monkeypatch):
    project(tmp_path)
    write(tmp_path, "a.py", "leak(x)\nnoisy = 1\n")
    scan(tmp_path, use_cache=True)
    parses = count_parses(monkeypatch)
    only_leak = scan(tmp_path, use_cache=True, rules=(LeakCall,))
    assert len(parses) == 1 and [f.rule for f in only_leak.findings] == ["DP991"]
    scan(tmp_path, use_cache=True, max_file_size=10_000)
    assert len(parses) == 2
    scan(tmp_path, use_cache=True, max_file_size=10_000)
    assert len(parses) == 2


def test_unchanged_old_files_are_not_even_read(tmp_path, monkeypatch):
    project(tmp_path)
    for name in ("a.py", "b.py"):
        os.utime(write(tmp_path, name, "leak(x)\n"), (OLD, OLD))
    first = scan(tmp_path, use_cache=True)
    reads: list[str] = []
    real = engine.read_bytes
    monkeypatch.setattr(engine, "read_bytes", lambda p: reads.append(p) or real(p))
    warm = scan(tmp_path, use_cache=True)
    assert reads == [] and warm.findings == first.findings and warm.stats.lines == first.stats.lines == 2
    # touching a file (new mtime, same size) makes it re-read, then matched by content
    os.utime(tmp_path / "a.py", (OLD + 5, OLD + 5))
    assert scan(tmp_path, use_cache=True).findings == first.findings and len(reads) == 1


def test_no_cache_writes_nothing_and_cache_dir_env(tmp_path, monkeypatch):
    project(tmp_path)
    write(tmp_path, "a.py", "leak(x)\n")
    scan(tmp_path, use_cache=False)
    assert not (tmp_path / ".dpcheck").exists()
    monkeypatch.setenv("DPCHECK_CACHE_DIR", str(tmp_path / "elsewhere"))
    scan(tmp_path, use_cache=True)
    assert not (tmp_path / ".dpcheck").exists() and list((tmp_path / "elsewhere").glob("index-*.json"))
    monkeypatch.delenv("DPCHECK_CACHE_DIR")
    scan(tmp_path, use_cache=True)
    assert list((tmp_path / ".dpcheck" / "cache").glob("index-*.json"))


def test_corrupt_cache_is_ignored(tmp_path):
    project(tmp_path)
    write(tmp_path, "a.py", "leak(x)\n")
    scan(tmp_path, use_cache=True)
    (index,) = (tmp_path / ".dpcheck" / "cache").glob("index-*.json")
    index.write_text("{not json")
    assert triples(scan(tmp_path, use_cache=True)) == [("a.py", 1, "DP991")]
    json.loads(index.read_text())  # rewritten whole


def test_concurrent_cache_writers_never_corrupt_it(tmp_path):
    folder = tmp_path / "cache"
    stat = os.stat(tmp_path)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(15):
                cache = ResultCache(folder, "salt")
                cache.store(f"/f{n}_{i}.py", stat, f"sha{n}_{i}", 1, [[1, 1, "DP991", "pate", "error", "m", "", 0, 0, ""]])
                cache.save()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    final = ResultCache(folder, "salt")
    assert final.files and all(final.results.get(entry[4]) for entry in final.files.values())
    assert not list(folder.glob(".index-*.tmp"))


def test_two_concurrent_cli_scans_share_one_cache(tmp_path):
    project(tmp_path)
    for i in range(40):
        write(tmp_path, f"m{i}.py", "import numpy as np\nx = 10 ^ delta\n" * (i % 3 + 1))
    cmd = [sys.executable, "-m", "dpcheck", "scan", "--format", "json", "-j", "1", str(tmp_path)]
    procs = [subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = {p.returncode for p in procs}
    assert codes <= {0, 1}, [o[1] for o in outs]
    first, second = (json.loads(o[0])["findings"] for o in outs)
    assert first == second
    third = subprocess.run(cmd, cwd=tmp_path, capture_output=True, timeout=120)
    data = json.loads(third.stdout)
    assert data["findings"] == first and data["summary"]["cache_hits"] == 40


def test_engine_failure_on_one_file_is_a_crash_finding(tmp_path, monkeypatch):
    project(tmp_path)
    write(tmp_path, "a.py", "leak(x)\n")
    write(tmp_path, "b.py", "noisy = 1\n")

    def broken(findings, source):
        if "leak" in source:
            raise RuntimeError("engine bug")
        return findings

    monkeypatch.setattr(engine, "_unsuppressed", broken)
    result = scan(tmp_path)
    assert result.crashed
    assert triples(result) == [("a.py", 1, "DP005"), ("b.py", 1, "DP992")]
    assert "RuntimeError: engine bug" in result.findings[0].message


PARENT = os.getpid()


class DiesInWorker(LeakCall):
    id = "DP994"

    def visit_Call(self, node) -> None:
        if os.getpid() != PARENT:
            os._exit(1)  # a worker killed mid-file (e.g. by the OOM killer)
        super().visit_Call(node)


def test_dead_worker_is_reported_not_analysed(tmp_path):
    """A worker that dies on a file is replaced; the file (killing a fresh worker too) is DP008,
    never re-run in the scanning process, and the scan still reports every other file."""
    project(tmp_path)
    for i in range(6):
        write(tmp_path, f"m{i}.py", "leak(x)\n" * (i + 1))
    write(tmp_path, "quiet.py", "y = 2\n")
    serial = scan(tmp_path, rules=(DiesInWorker,), jobs=1)
    parallel = scan(tmp_path, rules=(DiesInWorker,), jobs=2)
    assert len(serial.findings) == 21 and not serial.crashed
    assert parallel.crashed
    assert [(f.path.rsplit("/", 1)[-1], f.rule) for f in parallel.findings] == [(f"m{i}.py", "DP008") for i in range(6)]
    assert "exited with code 1" in parallel.findings[0].message


def test_type_stubs_are_syntax_checked_but_never_analysed(tmp_path, monkeypatch):
    project(tmp_path)
    write(tmp_path, "lib.py", "leak(x)\n")
    write(tmp_path, "lib.pyi", "def leak(x: int = ...) -> None: ...\nleak(x)\n")
    write(tmp_path, "broken.pyi", "def f(:\n")
    parses: list[str] = []
    real = engine._parse
    monkeypatch.setattr(engine, "_parse", lambda src: parses.append(src) or real(src))
    result = scan(tmp_path)
    assert triples(result) == [("broken.pyi", 1, "DP000"), ("lib.py", 1, "DP991")]
    assert analyse(b"leak(x)\n", "x.pyi", TEST_RULES).findings == []
    assert [f.rule for f in analyse(b"leak(x)\n", "x.py", TEST_RULES).findings] == ["DP991"]


def test_rules_share_the_gate_tree_instead_of_parsing_again(monkeypatch):
    """DP134, DP204, DP570 and DP571 read CPython's tree: the engine hands over the one its gate
    read, so no rule parses the file a second time, and the findings are those of a fresh parse."""
    import ast as ast_module

    from dpcheck import rule as rule_module
    from dpcheck.rules import all_rules

    rules = [r for r in all_rules() if r.id in {"DP134", "DP204", "DP570", "DP571"}]
    sources = [case for r in rules for case in r.INVALID]
    expected = [sorted((f.rule, f.line) for f in engine.analyse_source(s, "x.py", rules).findings) for s in sources]
    assert any(expected), "the rules' INVALID cases report"
    calls: list[str] = []
    real_parse = ast_module.parse

    def counting_parse(text, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(text)  # literal_eval of a small constant also lands here
        return real_parse(text, *args, **kwargs)

    monkeypatch.setattr(rule_module.ast, "parse", counting_parse)
    for source, want in zip(sources, expected):
        calls.clear()
        tree = real_parse(source)
        got = rule_module.run_rules(source, rules, "x.py", tree=tree)
        assert sorted((f.rule, f.line) for f in got) == want
        assert source not in calls, "a rule parsed the source although the caller handed its tree over"
