"""DP110: δ computed from the exact size of the private dataset."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import last_name as ast_last_name
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import ident

_DELTA_KEYWORDS = frozenset({"delta", "target_delta", "dp_delta", "delta_target"})


def _delta_name(name: str | None) -> bool:
    return name is not None and (name in _DELTA_KEYWORDS or "delta" in words(name) and not
                                 words(name) & {"t", "time", "huber", "lr", "loss", "x", "y"})


def _denominator(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """``1 / D``, ``1.0 / D``, ``D ** -2``, ``pow(D, -1)``: the D a reciprocal divides by."""
    if isinstance(value, cst.BinaryOperation):
        if isinstance(value.operator, cst.Divide) and number(value.left) is not None:
            return value.right
        if isinstance(value.operator, cst.Power):
            exponent = value.right
            if isinstance(exponent, cst.UnaryOperation) and isinstance(exponent.operator, cst.Minus):
                return value.left
        if isinstance(value.operator, cst.Multiply):  # 0.1 / n written as 0.1 * (1 / n)
            return _denominator(value.left) or _denominator(value.right)
    if isinstance(value, cst.Call) and call_name(value) in ("pow", "power") and len(value.args) == 2:
        exponent = value.args[1].value
        if isinstance(exponent, cst.UnaryOperation) and isinstance(exponent.operator, cst.Minus):
            return value.args[0].value
    return None


def _ast_reciprocal(value: ast.AST) -> bool:
    """``_denominator`` on CPython's ``ast``: ``c / D``, ``D ** -k``, ``pow(D, -k)``, or a product of one."""
    if isinstance(value, ast.BinOp):
        if isinstance(value.op, ast.Div) and isinstance(value.left, ast.Constant):
            return True
        if isinstance(value.op, ast.Pow) and isinstance(value.right, ast.UnaryOp) \
                and isinstance(value.right.op, ast.USub):
            return True
        if isinstance(value.op, ast.Mult):
            return _ast_reciprocal(value.left) or _ast_reciprocal(value.right)
    return isinstance(value, ast.Call) and len(value.args) == 2 and isinstance(value.args[1], ast.UnaryOp)


class DeltaFromPrivateSize(Rule):
    id = "DP110"
    name = "delta-from-private-size"
    category = "general"
    severity = "error"
    summary = "δ set from the exact number of private records (1/n, 1/n², 1/(n·√n) with n = len(data))"
    rationale = (
        "Under add/remove neighbouring the number of records n is itself private: δ = 1/n², "
        "1/(n·√n) or 1/n computed from `len(X)` makes the mechanism's own parameter depend on "
        "whether one person is in the data, and the noise scale that depends on δ then releases n "
        "outside the budget. δ = 1/n is also too large to mean anything (releasing one random "
        "record in full is (0, 1/n)-DP). "
        "A default computed when the caller passed no δ (`if delta is None:`, synthcity's and "
        "smartnoise's PATE-GAN, the NIST-challenge DP-WGAN) is reported too: the caller cannot see "
        "that it leaks n. Not reported: δ from a public size (a parameter or constant), code with no "
        "DP context. "
        "Fix: fix δ in advance from a public bound on n (δ ≤ 1/n_max, e.g. 1e-5), or spend "
        "budget on a DP estimate of n."
    )
    TRIGGERS = ("delta", "DELTA", "Delta")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a δ-named assignment target or keyword whose value divides, raises to a
        power or calls ``pow``, in a module with a ``len`` call or a ``shape`` read."""
        if not ("len" in facts.called or "shape" in facts.source):
            return False
        values = [n.value for n in facts.nodes(ast.keyword) if n.arg in _DELTA_KEYWORDS]  # type: ignore[attr-defined]
        for node in facts.nodes(ast.Assign, ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            if node.value is not None and any(  # type: ignore[attr-defined]
                    _delta_name(ast_last_name(t)) for t in targets):
                values.append(node.value)  # type: ignore[attr-defined]
        return any(_ast_reciprocal(v) for v in values)

    VALID = (
        # δ from a public bound on the population
        """
def train(X, epsilon, n_max=100000):
    delta = 1.0 / n_max ** 2
    return fit_private(X, epsilon=epsilon, delta=delta)
""",
        # a constant δ
        """
import numpy as np
def fit(self, X, epsilon=1.0):
    self.delta = 1e-5
    sigma = np.sqrt(2 * np.log(1.25 / self.delta)) / epsilon
    return X.mean(0) + np.random.normal(0, sigma / len(X), X.shape[1])
""",
        # a default from a public bound when the caller gave none
        """
import numpy as np
class PATEGAN:
    def __init__(self, epsilon=1.0, delta=None, max_records=10 ** 6):
        self.epsilon, self.delta, self.max_records = epsilon, delta, max_records
    def fit(self, X):
        if self.delta is None:
            self.delta = 1 / (self.max_records * np.sqrt(self.max_records))
        return self._train(X)
""",
        # a time step named delta in a DP module
        """
def fit(data, epsilon):
    delta_t = 1.0 / len(data)
    return noisy_mean(data, epsilon) * delta_t
""",
    )

    INVALID = (
        # δ = 1/n² from the private training set, in a script
        """
import pandas as pd
from opacus import PrivacyEngine
train = pd.read_csv("adult.csv")
DELTA = 1 / len(train) ** 2  # <-
engine = PrivacyEngine()
""",
        # 1/(n·√n) from the private data's shape, passed as a keyword
        """
import numpy as np
def fit(self, X, epsilon):
    n = X.shape[0]
    return self._private_fit(X, epsilon=epsilon, delta=1.0 / (n * np.sqrt(n)))  # <-
""",
        # δ = 1/n through a size variable
        """
def train_dp(train_data, epsilon, noise_multiplier):
    n = len(train_data)
    target_delta = 1 / n  # <-
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=target_delta)
""",
        # synthcity's and smartnoise's default when no δ is given
        """
import numpy as np
class PATEGAN:
    def __init__(self, epsilon=1.0, delta=None):
        self.epsilon, self.delta = epsilon, delta
    def fit(self, data):
        if self.delta is None:
            self.delta = 1 / (data.shape[0] * np.sqrt(data.shape[0]))  # <-
        return self._train(data)
""",
        # negative power spelling on self
        """
class DPModel:
    def fit(self, X, epsilon=1.0):
        self.delta = len(X) ** -1.1  # <-
        return self.train(X, epsilon, self.delta)
""",
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if _delta_name(ident(target.target)):
                self._check(node.value)
                return

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and _delta_name(ident(node.target)):
            self._check(node.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in _DELTA_KEYWORDS:
            self._check(node.value)

    def _check(self, value: cst.BaseExpression) -> None:
        denominator = _denominator(value)
        if denominator is None:
            return
        size = self._private_size(denominator)
        if size is None:
            return
        default = " (a default taken when no δ is passed: the caller cannot know it leaks n)" \
            if self._default_branch(value) else ""
        self.report(
            value,
            f"δ = `{self.ctx.analysis.code(value).strip()}` is computed from the private dataset's size "
            f"({size}){default}: under add/remove neighbouring n is private, so δ (and every σ calibrated "
            "with it) depends on whether one person is in the data; fix δ from a public bound on n (e.g. 1e-5)",
        )

    def _private_size(self, expr: cst.BaseExpression) -> str | None:
        fa = self.ctx.analysis
        for node in walk(expr):
            size: cst.CSTNode | None = None
            if isinstance(node, cst.Call) and call_name(node) == "len":
                size = node
            elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) \
                    and node.value.attr.value == "shape":
                size = node
            elif isinstance(node, cst.Name):
                value = fa.value_of(node)
                if value is not None and not isinstance(value, (cst.Integer, cst.Float)):
                    size = value
            if size is None:
                continue
            if fa.is_private(size, allow_shape=True) and _counts_records(size):
                return f"`{fa.code(node).strip()}`"
        return None

    def _default_branch(self, node: cst.CSTNode) -> bool:
        """Inside ``if delta is None:`` / ``if not delta:`` (a default when none was given)."""
        for anc in self.ctx.analysis.ancestors(node):
            if isinstance(anc, cst.If):
                for sub in walk(anc.test):
                    if isinstance(sub, (cst.Name, cst.Attribute)) and _delta_name(ident(sub)):
                        return True
            if isinstance(anc, cst.FunctionDef):
                return False
        return False


def _counts_records(size: cst.CSTNode) -> bool:
    """``len(X)``, ``X.shape[0]``, ``X.shape`` — not ``X.shape[1]`` (the number of columns)."""
    if isinstance(size, cst.Subscript):
        index = size.slice[0].slice if size.slice else None
        return isinstance(index, cst.Index) and number(index.value) == 0
    if isinstance(size, cst.Call):
        return call_name(size) == "len"
    return isinstance(size, cst.Attribute) and size.attr.value == "shape" or any(
        isinstance(n, cst.Call) and call_name(n) == "len" for n in walk(size))
