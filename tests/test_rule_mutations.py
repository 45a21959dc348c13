"""No rule crashes on ordinary respellings of its own cases.

Every VALID and INVALID case of every rule is respelled the ways research code writes the same
thing (local names as ``self.`` attributes, option strings such as ``'-t,'``, arguments read from
a config, odd numbers) and scanned with all rules: a crash (DP005) fails. DP527 crashed on
``self.out = ...`` and DP530 on ``add_argument('-t,', ...)`` (a real repository) before
``syntax.undotted``.
"""
from __future__ import annotations

import libcst as cst
import pytest

from dpcheck.analysis.syntax import undotted
from dpcheck.rules import all_rules
from dpcheck.scan import engine

SHARDS = 8
RULES = list(all_rules())
CASES = [(r.id, case) for r in RULES for case in (*r.VALID, *r.INVALID)]


class _InFunctions(cst.CSTTransformer):
    """Tracks whether the node being left lies inside a function (``depth``)."""

    def __init__(self) -> None:
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        return updated


class _SelfAttributes(_InFunctions):
    """``x = ...`` inside a function becomes ``self.x = ...``."""

    def leave_AssignTarget(self, original: cst.AssignTarget, updated: cst.AssignTarget) -> cst.AssignTarget:
        if self.depth and isinstance(updated.target, cst.Name):
            return updated.with_changes(target=cst.Attribute(cst.Name("self"), cst.Name(updated.target.value)))
        return updated


class _OddStrings(cst.CSTTransformer):
    """Every plain string literal holds text no identifier can: ``"-t, x.y z"``."""

    def leave_SimpleString(self, original: cst.SimpleString, updated: cst.SimpleString) -> cst.SimpleString:
        return updated if updated.prefix else updated.with_changes(value=f"{updated.quote}-t, x.y z{updated.quote}")


class _ConfigArguments(_InFunctions):
    """A name passed as an argument inside a function is read from ``self.cfg``."""

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if self.depth and isinstance(updated.value, cst.Name) and updated.value.value not in {"self", "None", "True", "False"}:
            cfg = cst.Attribute(cst.Name("self"), cst.Name("cfg"))
            return updated.with_changes(value=cst.Attribute(cfg, cst.Name(updated.value.value)))
        return updated


class _OddNumbers(cst.CSTTransformer):
    def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> cst.Integer:
        return cst.Integer("0")

    def leave_Float(self, original: cst.Float, updated: cst.Float) -> cst.Float:
        return cst.Float("1e400")


MUTATORS = (_SelfAttributes, _OddStrings, _ConfigArguments, _OddNumbers)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_rule_crashes_on_respelled_cases(shard: int) -> None:
    crashes = []
    for rule_id, source in CASES[shard::SHARDS]:
        module = cst.parse_module(source)
        for mutator in MUTATORS:
            text = module.visit(mutator()).code
            for f in engine.analyse_source(text, "x.py", RULES).findings:
                if f.rule == "DP005":
                    crashes.append(f"{rule_id} case via {mutator.__name__}: {f.message}")
    assert not crashes, "\n".join(crashes[:10])


def test_the_respellings_change_the_cases() -> None:
    """The mutators do something on the cases (else the test above proves nothing)."""
    changed = {m.__name__: 0 for m in MUTATORS}
    for _, source in CASES:
        module = cst.parse_module(source)
        for mutator in MUTATORS:
            changed[mutator.__name__] += module.visit(mutator()).code != source
    assert all(n > len(CASES) // 10 for n in changed.values()), changed


@pytest.mark.parametrize("source", [
    # Schulze-M/DPIM main.py: an option string with a stray comma beside a DP mechanism
    "import argparse\nimport numpy as np\np = argparse.ArgumentParser()\n"
    "p.add_argument('-t,', '--threshold', type=float, default=0.95)\n"
    "a = p.parse_args()\nnoisy = 3 + np.random.laplace(0, 1 / a.threshold)\n",
    # DP527's record aliasing over ``self.`` targets
    "import numpy as np\nclass Pub:\n    def release(self, data, epsilon=0.1, seed=None):\n"
    "        rng = np.random.default_rng(seed)\n        self.out = data.copy()\n"
    "        noise = rng.laplace(0, 1 / epsilon, size=(len(self.out), 3))\n"
    "        self.out[:] = data + noise\n        return self.out\n",
])
def test_spellings_that_crashed_a_rule(source: str) -> None:
    assert [f.message for f in engine.analyse_source(source, "x.py", RULES).findings if f.rule == "DP005"] == []


def test_undotted() -> None:
    assert cst.Module([]).code_for_node(undotted("a.b.c")) == "a.b.c"
    assert cst.Module([]).code_for_node(undotted("c", cst.Name("x"))) == "x.c"
    for bad in ("t,", "a b", "a..b", "", "-x", "a.1"):
        assert undotted(bad) is None
