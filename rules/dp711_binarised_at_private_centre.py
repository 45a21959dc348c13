"""DP711: before a local randomiser, a column is binarised at its own exact mean or median."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.attackscope import attack_scope
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: statistics of the whole column that cut it into two halves
_CENTRES = frozenset({"mean", "median", "nanmean", "nanmedian"})
_LIBS = frozenset({"np", "numpy", "torch", "pd", "pandas", "statistics"})
#: a local randomiser or a budget in the file: the binary values are what it perturbs
_LOCAL_WORDS = frozenset({"epsilon", "eps", "ldp", "randomized", "randomised", "rr", "rappor", "budget",
                          "perturb", "privacy", "private"})
_ORDER = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)


def _code(module: cst.Module, node: cst.CSTNode) -> str:
    return "".join(module.code_for_node(node).split())


def _centre_of(expr: cst.BaseExpression, module: cst.Module) -> str | None:
    """``x.mean()``, ``x.median()``, ``np.median(x)``, ``x.quantile(0.5)``: the code of ``x``."""
    if not isinstance(expr, cst.Call):
        return None
    name = call_name(expr)
    func = expr.func
    args = [a.value for a in expr.args if a.keyword is None]
    if isinstance(func, cst.Attribute):
        lib = isinstance(func.value, cst.Name) and func.value.value in _LIBS
        if lib and name in _CENTRES and args:
            return _code(module, args[0])
        if not lib and name in _CENTRES and not args:
            return _code(module, func.value)
        if not lib and name == "quantile" and len(args) == 1 and isinstance(args[0], cst.Float) \
                and args[0].value in {"0.5", ".5"}:
            return _code(module, func.value)
    return None


def _kind(expr: cst.BaseExpression, module: cst.Module, bound: dict[str, str]) -> str:
    """``mean`` or ``median`` (a ``quantile(0.5)`` is the median), for the message."""
    if isinstance(expr, cst.Name):
        return bound.get("#" + expr.value, "median")
    return "mean" if call_name(expr) in {"mean", "nanmean"} else "median"


def _column(expr: cst.BaseExpression) -> bool:
    """A column or an array read from a table (not a literal, a count or a call's result)."""
    return isinstance(expr, (cst.Subscript, cst.Name, cst.Attribute))


class BinarisedAtPrivateCentre(Rule):
    id = "DP711"
    name = "binarised-at-private-centre"
    category = "metadata"
    severity = "error"
    summary = ("a column is binarised at its own exact mean or median (`x >= x.mean()`, `y > y.median()`) "
               "before a local randomiser perturbs it")
    rationale = (
        "Local DP perturbs each user's value on its own: the report of one user may depend on that user's value "
        "only. Cutting a column at the mean or median of all users' values (`np.where(df[c] >= df[c].mean(), 1, "
        "0)`, `label = price > price.median()`) before randomized response makes every user's bit depend on "
        "everyone else's data through an exact, un-noised statistic: one record moves the threshold and flips "
        "other users' inputs, and the threshold is never charged to any budget. Reported: in a file with a "
        "budget or a local randomiser, an order comparison of a column with its own mean/median (the call "
        "inline, or a name bound to it in the same function) whose value is kept (assigned, passed on), not a "
        "branch test. Fix: cut at a public threshold (domain knowledge, the middle of the public range) or a "
        "DP estimate of the median charged to the budget."
    )
    TRIGGERS = ("mean", "median", "quantile")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an order comparison, a mean/median call and a budget or randomiser name."""
        if not facts.nodes(ast.Compare) or not facts.calls_any(_CENTRES | {"quantile"}):
            return False
        return any(words(i) & _LOCAL_WORDS for i in facts.identifiers)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._scopes: list[dict[str, str]] = [{}]

    def _bind(self, body: cst.CSTNode) -> dict[str, str]:
        """Names bound in this scope (not nested ones) to the centre of a column: name -> column code."""
        out: dict[str, str] = {}
        for sub in walk(body, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 \
                    and isinstance(sub.targets[0].target, cst.Name):
                col = _centre_of(sub.value, self.ctx.module)
                if col is not None:
                    out[sub.targets[0].target.value] = col
                    out["#" + sub.targets[0].target.value] = _kind(sub.value, self.ctx.module, {})
        return out

    def visit_Module(self, node: cst.Module) -> None:
        self._scopes = [self._bind(node)]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(self._bind(node.body))
        self._attack = getattr(self, "_attack", []) + [attack_scope(node, self.ctx.path)]

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()
        self._attack = self._attack[:-1]

    def visit_If(self, node: cst.If) -> None:
        self._tests = getattr(self, "_tests", set()) | {id(node.test)}

    def visit_While(self, node: cst.While) -> None:
        self._tests = getattr(self, "_tests", set()) | {id(node.test)}

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if id(node) in getattr(self, "_tests", set()) or len(node.comparisons) != 1:
            return
        if any(getattr(self, "_attack", [])):
            return  # (QC h44 b69) a membership-inference attack's median threshold on model confidences
        comp = node.comparisons[0]
        if not isinstance(comp.operator, _ORDER):
            return
        module = self.ctx.module
        bound = self._scopes[-1]
        for side, other in ((node.left, comp.comparator), (comp.comparator, node.left)):
            if not _column(side):
                continue
            col = _centre_of(other, module)
            if col is None and isinstance(other, cst.Name):
                col = bound.get(other.value)
            if col is not None and col == _code(module, side):
                self.report(node, f"`{module.code_for_node(side)}` is cut at its own exact "
                                  f"{_kind(other, module, self._scopes[-1])} of all "
                                  "records before it is randomised: each user's input depends on everyone's "
                                  "data through an un-noised statistic; cut at a public threshold or a DP "
                                  "median")
                return

    VALID = (
        # twin of the np.where case: a public threshold fixed by the schema
        """
import numpy as np
def binarise(df, thresholds, epsilon):
    for col in df.columns:
        df[col] = np.where(df[col] >= thresholds[col], 1, 0)
    p = np.exp(epsilon) / (1 + np.exp(epsilon))
    flip = np.random.rand(*df.shape) > p
    return np.where(flip, 1 - df.values, df.values)
""",
        # twin of the median label: the cut is a public constant
        """
import numpy as np
def make_label(data, epsilon, cut=200000.0):
    data["label"] = data["label"] > cut
    keep = np.random.rand(len(data)) < np.exp(epsilon) / (1 + np.exp(epsilon))
    data["label"] = np.where(keep, data["label"], ~data["label"])
    return data
""",
        # twin of the torch case: the cut is the middle of the public score range
        """
import torch
def local_bits(path, epsilon):
    scores = torch.load(path)
    centre = 0.5 * (0.0 + 100.0)
    bits = (scores >= centre).float()
    return torch.where(torch.rand_like(bits) < 1 / (1 + torch.exp(torch.tensor(epsilon))), 1 - bits, bits)
""",
        # twin of the numpy case: a public cut-off given by the caller
        """
import numpy as np
def to_bits(x, epsilon, cutoff):
    bits = (cutoff < x).astype(int)
    return np.where(np.random.rand(len(bits)) < 1 / (1 + np.exp(epsilon)), 1 - bits, bits)
""",
        # (QC b69) a membership-inference attack thresholds confidences at their median: it releases nothing
        """
import numpy as np
def mia_success(model, X_train, X_test, epsilon):
    train_conf = model.predict_proba(X_train).max(axis=1)
    threshold = np.median(train_conf)
    hits = (train_conf > threshold).mean()
    return hits, epsilon
""",
        # a branch on the mean, not a value kept
        """
import numpy as np
def report(values, epsilon):
    if values.mean() > values.median():
        print("skewed")
    return values.mean() + np.random.laplace(0, 1 / epsilon)
""",
        # ordinary ML: a median split of a target for a classifier, no budget in sight
        """
import numpy as np
def make_binary_target(frame):
    frame["target"] = frame["price"] > frame["price"].median()
    return frame
""",
    )

    INVALID = (
        # every numeric column cut at its own mean before k-ary randomized response
        """
import numpy as np
def binarise(df, epsilon):
    for col in df.columns:
        df[col] = np.where(df[col] >= df[col].mean(), 1, 0)  # <-
    p = np.exp(epsilon) / (1 + np.exp(epsilon))
    flip = np.random.rand(*df.shape) > p
    return np.where(flip, 1 - df.values, df.values)
""",
        # the label defined by the exact median, bound to a name first
        """
import numpy as np
def make_label(data, epsilon):
    cut = data["label"].median()
    data["label"] = data["label"] > cut  # <-
    keep = np.random.rand(len(data)) < np.exp(epsilon) / (1 + np.exp(epsilon))
    data["label"] = np.where(keep, data["label"], ~data["label"])
    return data
""",
        # numpy spelling, the column on the right
        """
import numpy as np
def to_bits(x, epsilon):
    bits = (np.median(x) < x).astype(int)  # <-
    return np.where(np.random.rand(len(bits)) < 1 / (1 + np.exp(epsilon)), 1 - bits, bits)
""",
        # torch spelling, the mean bound to a name
        """
import torch
def local_bits(path, epsilon):
    scores = torch.load(path)
    centre = scores.mean()
    bits = (scores >= centre).float()  # <-
    return torch.where(torch.rand_like(bits) < 1 / (1 + torch.exp(torch.tensor(epsilon))), 1 - bits, bits)
""",
    )
