"""Piecewise source positions equal libcst's ``PositionProvider`` for every node."""
from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from dpcheck.analysis import FileAnalysis
from dpcheck.analysis.positions import Positions

ROOT = Path(__file__).resolve().parents[1]

TRICKY = textwrap.dedent('''\
    #!/usr/bin/env python
    """Module docstring
    over two lines."""
    import numpy as np ; import math

    # a comment before a decorated class


    @dataclass(
        frozen=True)
    class Outer:
        """Doc."""

        # comment inside the class
        @staticmethod
        @other
        def helper(x,
                   y=1):  # trailing
            a = x + \\
                y
            if a > 1:
                return np.log(a)
            elif a < 0:
                b = """multi
    line"""
            else:
                pass
            try:
                c = [i for i in range(3)]
            except (ValueError, KeyError) as exc:
                raise RuntimeError(exc) from exc
            finally:
                print("done")
            return a

        class Inner:
            def m(self): return self.x; x = 1

        async def coro(self):
            async with self.lock:
                await self.go()

    def top(eps):
    \tif eps:
    \t\treturn eps * 2
    \treturn 0
    lam = lambda v: v + 1
    x = 1; y = top(2)
''')


def _all_nodes(module: cst.Module) -> list[cst.CSTNode]:
    return list(FileAnalysis(module, "").index.parents)


def _check(source: str) -> tuple[int, bool]:
    module = cst.parse_module(source)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    nodes = [n for n in _all_nodes(module) if n in expected]
    positions = Positions(module, source)
    for node in nodes:
        assert positions[node] == expected[node], (type(node).__name__, module.code_for_node(node)[:60])
    return len(nodes), positions._full


def test_tricky_layout_matches_libcst_without_regenerating_everything():
    count, full = _check(TRICKY)
    assert count > 150
    # asking about one node regenerates only its statement, not the module
    module = cst.parse_module(TRICKY)
    positions = Positions(module, TRICKY)
    call = next(n for n in _all_nodes(module) if isinstance(n, cst.Call) and module.code_for_node(n) == "np.log(a)")
    assert positions[call].start.line == 22
    assert not positions._full and len(positions._ranges) < len(_all_nodes(module)) / 2


@pytest.mark.parametrize("path", sorted((ROOT / "vendored_impls").rglob("*.py"))[:12], ids=lambda p: p.name)
def test_vendored_files_match_libcst(path):
    _check(path.read_text(encoding="utf-8"))


def test_windows_newlines_fall_back_to_the_whole_module():
    source = "def f(x):\r\n    return x.min()\r\n"
    count, _ = _check(source)
    module = cst.parse_module(source)
    positions = Positions(module, source)
    ret = next(n for n in _all_nodes(module) if isinstance(n, cst.Return))
    assert positions[ret].start.line == 2 and positions._full and count > 3
