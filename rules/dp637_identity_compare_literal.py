"""DP637: a privacy guard compares a value with a string or number literal by identity (``is`` / ``is not``)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import dotted, words
from dpcheck.rule import Rule


def _literal(expr: cst.BaseExpression) -> bool:
    """A string or number literal (not ``None``/``True``/``False``, whose identity is defined)."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)):
        return True
    return isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float))


#: words of a privacy parameter or setting: the compared value is part of a privacy check
_PRIVACY_WORDS = frozenset({"eps", "epsilon", "delta", "sigma", "rho", "mu", "noise", "neighboring", "neighbouring",
                            "neighbor", "neighbour", "relation", "mechanism", "mech", "accountant", "privacy", "dp",
                            "clip", "clipping", "sensitivity", "budget", "amplification", "sampling", "composition",
                            "ldp", "cdp", "rdp", "zcdp", "gdp"})


def _privacy_named(expr: cst.BaseExpression) -> bool:
    """A name, attribute chain or string-keyed subscript (``cfg["accountant"]``) whose words speak of a privacy
    parameter or setting."""
    parts: list[str] = []
    while isinstance(expr, (cst.Subscript, cst.Call)):
        if isinstance(expr, cst.Subscript):
            parts += [e.slice.value.evaluated_value for e in expr.slice if isinstance(e.slice, cst.Index)
                      and isinstance(e.slice.value, cst.SimpleString) and isinstance(e.slice.value.evaluated_value, str)]
            expr = expr.value
        else:
            expr = expr.func
    name = dotted(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    if name is not None:
        parts += name.split(".")
    return any(words(part) & _PRIVACY_WORDS for part in parts)


class IdentityCompareLiteral(Rule):
    id = "DP637"
    name = "identity-compare-literal"
    category = "general"
    severity = "error"
    summary = ("a check in DP code compares a value with a string or number literal by identity (`x is not "
               "'replace_one'`): the guard depends on interning, not on the value")
    rationale = (
        "`is` compares object identity. Two equal strings or numbers are the same object only by accident of "
        "interning (literals in one module, short strings, small ints): a value built at run time, read from a "
        "config or passed from another module is a different object, so `mechanism.neighboring is not "
        "'replace_one'` is True even when the relation is replace-one, and the assertion that forbids an "
        "amplification bound (or a composition, a sensitivity) for the wrong neighbouring relation passes "
        "silently; `x is 'add_remove'` is False for an equal string and the branch is skipped. Python itself "
        "warns (`SyntaxWarning: \"is not\" with a literal`). Reported: `is` / `is not` with a string or number "
        "literal on either side, in DP code. Not reported: `is None`, `is True`/`is False`, identity of "
        "objects, names or sentinels. Fix: compare values (`==`, `!=`, `in`)."
    )
    TRIGGERS = (" is ",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an ``is``/``is not`` comparison with a str or number constant."""
        for node in facts.nodes(ast.Compare):
            operands = [node.left, *node.comparators]  # type: ignore[attr-defined]
            for op, (a, b) in zip(node.ops, zip(operands, operands[1:])):  # type: ignore[attr-defined]
                if isinstance(op, (ast.Is, ast.IsNot)) and any(
                        isinstance(x, ast.Constant) and isinstance(x.value, (str, int, float))
                        and not isinstance(x.value, bool) for x in (a, b)):
                    return True
        return False

    VALID = (
        # twin of the pure-DP check: delta compared by value (0.0 == 0)
        """
import numpy as np
def get_eps(eps_list, delta):
    if delta == 0:
        return sum(eps_list)
    return np.inf
""",
        # ordinary ML: a type check and an `is` between two objects, no literal
        """
import torch
def make_optimizer(model, name, lr, eps=1e-8):
    if type(name) is str and name.lower() == "adam":
        return torch.optim.Adam(model.parameters(), lr=lr, eps=eps)
    return torch.optim.SGD(model.parameters(), lr=lr)
""",
        # twin: the relation is compared by value
        """
def amplify(mechanism, poisson, epsilon):
    if poisson:
        assert mechanism.neighboring != "replace_one", "replace-one DP cannot be amplified by Poisson sampling"
    return epsilon
""",
        # identity with None and with booleans is defined
        """
def privacy_config(epsilon=None, delta=1e-5, use_dp=True):
    if epsilon is None or use_dp is False:
        return None
    return {"epsilon": epsilon, "delta": delta}
""",
        # ordinary ML: identity of a sentinel object, not a literal
        """
_MISSING = object()
def get_eps(cfg, default=_MISSING):
    value = cfg.get("adam_eps", default)
    if value is _MISSING:
        value = 1e-8
    return value
""",
    )
    INVALID = (
        # delta compared with 0 by identity: a float 0.0 is not the cached int and pure DP is missed
        """
import numpy as np
def get_eps(eps_list, delta):
    if delta is 0:  # <-
        return sum(eps_list)
    return np.inf
""",
        # a literal on the left, a config string on the right
        """
def accountant_for(cfg, epsilon, delta):
    if "rdp" is cfg["accountant"]:  # <-
        return ("rdp", epsilon, delta)
    return ("gdp", epsilon, delta)
""",
        # the neighbouring relation compared by identity in the amplification guard
        """
def amplify(mechanism, poisson, epsilon):
    if poisson:
        assert mechanism.neighboring is not "replace_one", "replace-one DP cannot be amplified by Poisson sampling"  # <-
    return epsilon
""",
        # a mechanism name compared by identity picks the noise
        """
import numpy as np
def add_noise(value, mechanism, sensitivity, epsilon):
    if mechanism is "laplace":  # <-
        return value + np.random.laplace(0, sensitivity / epsilon)
    return value + np.random.normal(0, sensitivity / epsilon)
""",
    )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        for target in node.comparisons:
            right = target.comparator
            if isinstance(target.operator, (cst.Is, cst.IsNot)) and (
                    _literal(left) and _privacy_named(right) or _literal(right) and _privacy_named(left)):
                op = "is not" if isinstance(target.operator, cst.IsNot) else "is"
                self.report(node, f"`{op}` compares with a literal by identity: equal strings or numbers need not "
                                  "be the same object, so this privacy check depends on interning; use `==` / `!=`")
                return
            left = right
