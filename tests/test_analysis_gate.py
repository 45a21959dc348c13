"""``run_rules`` wiring of the analysis core: the DP-context gate and acknowledged fallbacks."""
from __future__ import annotations

import textwrap
from typing import ClassVar

import libcst as cst

from dpcheck.rule import ACKNOWLEDGED, FileContext, Rule, run_rules


class _MinMax(Rule):
    """Test-only rule: every ``.min()``/``.max()`` call."""

    id = "DP990"
    name = "test-min-max"
    category = "general"
    summary = "min/max"

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("min", "max"):
            self.report(node, "data-dependent bound")


class _GatedMinMax(_MinMax):
    id = "DP991"
    requires_dp_context: ClassVar[bool] = True


class _AsksCore(Rule):
    """Test-only rule that consults the core while visiting."""

    id = "DP992"
    name = "test-asks-core"
    category = "general"
    summary = "private min"

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "min" \
                and self.ctx.analysis.is_private(node.func.value):
            self.report(node, f"min of private data ({self.ctx.analysis.private_origin(node.func.value)})")


NON_DP = textwrap.dedent("""
    def normalise(X):
        return (X - X.min()) / (X.max() - X.min())
""")
DP = textwrap.dedent("""
    import numpy as np
    def release(X, epsilon):
        lo, hi = X.min(), X.max()
        return np.clip(X, lo, hi).mean() + np.random.laplace(0, (hi - lo) / epsilon)
""")
ACK = textwrap.dedent("""
    import warnings
    def fit(X, epsilon, bounds=None):
        if bounds is None:
            warnings.warn("will result in additional privacy leakage", PrivacyLeakWarning)
            bounds = (X.min(), X.max())
        return bounds
""")


def test_gate_drops_reports_outside_dp_context():
    assert len(run_rules(NON_DP, [_MinMax])) == 3
    assert run_rules(NON_DP, [_GatedMinMax]) == []
    gated = run_rules(DP, [_GatedMinMax])
    assert [f.line for f in gated] == [4, 4]
    assert all(f.category == "general" and f.severity == "error" for f in gated)


def test_acknowledged_fallback_becomes_a_note():
    for rule in (_MinMax, _GatedMinMax):
        found = run_rules(ACK, [rule])
        assert [f.line for f in found] == [6, 6]
        for f in found:
            assert f.category == ACKNOWLEDGED and f.severity == "note"
            assert "acknowledged" in f.message and "privacy leak" in f.message


def test_same_fallback_without_warning_stays_a_violation():
    silent = ACK.replace('        warnings.warn("will result in additional privacy leakage", PrivacyLeakWarning)\n', "")
    assert silent != ACK
    found = run_rules(silent, [_MinMax])
    assert found and all(f.category == "general" and f.severity == "error" for f in found)


def test_rules_share_one_lazily_built_analysis():
    module = cst.parse_module(DP)
    ctx = FileContext("<string>", DP, cst.MetadataWrapper(module, unsafe_skip_copy=True))
    assert ctx._analysis is None
    assert ctx.analysis is ctx.analysis
    # ``release`` is no training entry point: its X is not known to be the training data
    assert run_rules(DP, [_AsksCore]) == []
    train = "def train(X, epsilon):\n    lo = X.min()\n    k = sorted(range(3)).min()\n    return lo\n"
    found = run_rules(train, [_AsksCore])
    assert [f.line for f in found] == [2] and "parameter `X` of `train`" in found[0].message
