"""benchmarks/parse_floor.py: parse timing counts the files each parser accepts."""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load():
    sys.path.insert(0, str(BENCH))
    try:
        spec = importlib.util.spec_from_file_location("parse_floor_bench", BENCH / "parse_floor.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_cpu_seconds_counts_parsed_files_and_survives_refusals() -> None:
    floor = _load()
    seconds, ok = floor.cpu_seconds(ast.parse, ["x = 1\n", "def (:\n", "print 'py2'\n", "y = [i for i in x]\n"])
    assert ok == 2
    assert seconds >= 0.0


def test_libcst_accepts_what_the_floor_times() -> None:
    import libcst

    floor = _load()
    _, ok = floor.cpu_seconds(libcst.parse_module, ["x = 1\n", "async def f():\n    await g()\n"])
    assert ok == 2
