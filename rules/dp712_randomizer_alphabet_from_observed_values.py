"""DP712: a local randomiser draws its replacement values from, or sizes its keep probability by, the set
of values observed in the private column (reached through local names)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, param_names, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps", "budget"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "tol", "tolerance", "stability", "small", "finfo", "root"})
_SET_FUNCS = frozenset({"unique", "set", "frozenset"})
_SET_METHODS = frozenset({"unique", "drop_duplicates"})
_WRAPPERS = frozenset({"sorted", "list", "tuple", "array", "asarray"})
_LIBS = frozenset({"np", "numpy", "pd", "pandas", "torch"})


def _names(expr: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(expr) if isinstance(n, cst.Name)}


def _set_source(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The argument whose distinct values ``expr`` collects (``pd.unique(v)``, ``set(v)``,
    ``sorted(set(v))``, ``v.unique()``, ``v.drop_duplicates()``), else None."""
    if not isinstance(expr, cst.Call):
        return None
    name = call_name(expr)
    args = [a.value for a in expr.args if a.keyword is None]
    func = expr.func
    if name in _WRAPPERS and args:
        return _set_source(args[0])
    if isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name) and func.value.value in _LIBS):
        return func.value if name in _SET_METHODS else None
    if name in _SET_FUNCS and args:
        return args[0]
    return None


class RandomizerAlphabetFromObservedValues(Rule):
    id = "DP712"
    name = "randomizer-alphabet-from-observed-values"
    category = "metadata"
    severity = "error"
    summary = ("a randomized-response style randomiser takes its alphabet from the distinct values of the "
               "private column (`categories = pd.unique(values)`), draws replacements from it or sets k in "
               "its keep probability with it")
    rationale = (
        "k-ary randomized response is ε-LDP over a fixed, public alphabet. When the alphabet is the set of values "
        "that occur in the column being privatised (`pd.unique(col.values[mask])`, `set(v)`), a rare value is "
        "drawn as a replacement, and counted in k, only when some user holds it: the released column's range "
        "and the keep probability `e^ε / (e^ε + k - 1)` reveal which values are present, with certainty. "
        "DP703 catches the set passed with ε to a mechanism call; this rule follows the column through local "
        "names (a mask, `.astype`, `.values`) and reports the set when it is the pool of a `choice(...)` draw "
        "or its length enters an expression with the budget. Fix: take the categories from the schema or a "
        "public parameter."
    )
    TRIGGERS = ("unique", "set(", "drop_duplicates")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A function with a budget parameter, a distinct-values call and a ``choice`` draw or ``len``."""
        if not facts.calls_any(_SET_FUNCS | _SET_METHODS) or not facts.calls_any({"choice", "len"}):
            return False
        return any(words(a.arg) & _BUDGET and not words(a.arg) & _NUMERIC for fn in facts.functions
                   for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = set(param_names(node))
        budget = {p for p in params if words(p) & _BUDGET and not words(p) & _NUMERIC}
        if not budget:
            return
        data = params - budget - {"self", "cls"}
        body = list(walk(node.body, into_scopes=False))
        assigns = [s for s in body if isinstance(s, cst.Assign) and len(s.targets) == 1
                   and isinstance(s.targets[0].target, cst.Name)]
        derived = set(data)
        sets: dict[str, cst.Assign] = {}
        for a in assigns:  # in source order: a name computed from the data is data
            name = a.targets[0].target.value  # type: ignore[union-attr]
            src = _set_source(a.value)
            if src is not None and _names(src) & derived:
                sets.setdefault(name, a)
            elif _names(a.value) & derived and name not in budget:
                derived.add(name)
        if not sets:
            return
        sizes: dict[str, str] = {}  # ``k = len(categories)``
        for a in assigns:
            value = a.value
            if isinstance(value, cst.Call) and call_name(value) == "len" and len(value.args) == 1 \
                    and isinstance(value.args[0].value, cst.Name) and value.args[0].value.value in sets:
                sizes[a.targets[0].target.value] = value.args[0].value.value  # type: ignore[union-attr]
        used: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Call) and call_name(sub) == "choice" and sub.args:
                pool = sub.args[0].value
                if isinstance(pool, cst.Name) and pool.value in sets:
                    used.add(pool.value)
            if isinstance(sub, (cst.Assign, cst.Return)) and sub.value is not None:
                names = _names(sub.value)
                if names & budget:
                    used.update(sizes[n] for n in names & set(sizes))
                    for call in walk(sub.value):
                        if isinstance(call, cst.Call) and call_name(call) == "len" and call.args:
                            arg = call.args[0].value
                            if isinstance(arg, cst.Name) and arg.value in sets:
                                used.add(arg.value)
        for name in sorted(used):
            self.report(sets[name], f"`{name}` is the set of values observed in the private column, and the "
                                    "randomiser draws from it or sizes its keep probability with it: the output "
                                    "range and k reveal which values occur; take the alphabet from a public "
                                    "domain")

    VALID = (
        # twin of the masked-column case: the alphabet is a public parameter
        """
import numpy as np
import pandas as pd
def rr_column(series, alphabet, epsilon):
    values = series.astype("object").values
    k = len(alphabet)
    p_keep = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    other = np.random.choice(alphabet, size=len(values))
    return pd.Series(np.where(np.random.rand(len(values)) < p_keep, values, other), index=series.index)
""",
        # twin of the set() case: categories read from the schema
        """
import random
import math
def krr(column, schema, epsilon):
    domain = sorted(schema["colour"])
    p = math.exp(epsilon) / (math.exp(epsilon) + len(domain) - 1)
    return [v if random.random() < p else random.choice(domain) for v in column]
""",
        # the distinct values are only counted for a log line
        """
import numpy as np
def perturb(values, epsilon):
    seen = np.unique(values)
    print("distinct:", len(seen))
    return values + np.random.laplace(0, 1 / epsilon, len(values))
""",
        # ordinary ML: class labels drawn for a random baseline, eps a numerical tolerance
        """
import numpy as np
def random_baseline(y, eps=1e-9):
    classes = np.unique(y)
    guess = np.random.choice(classes, size=len(y))
    return (guess == y).mean() + eps
""",
    )

    INVALID = (
        # the alphabet from the masked column's own values, drawn from and counted in k
        """
import numpy as np
import pandas as pd
def rr_column(series, epsilon):
    values = series.astype("object").values
    present = values[pd.notna(values)]
    alphabet = pd.unique(present)  # <-
    k = len(alphabet)
    p_keep = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    other = np.random.choice(alphabet, size=len(values))
    return pd.Series(np.where(np.random.rand(len(values)) < p_keep, values, other), index=series.index)
""",
        # set() of the column, its length inline in the probability
        """
import random
import math
def krr(column, epsilon):
    domain = sorted(set(column))  # <-
    p = math.exp(epsilon) / (math.exp(epsilon) + len(domain) - 1)
    return [v if random.random() < p else random.choice(domain) for v in column]
""",
        # pandas method on a frame column, only the replacement draw
        """
import numpy as np
def perturb_col(frame, col, epsilon):
    raw = frame[col]
    levels = raw.unique()  # <-
    flip = np.random.rand(len(raw)) > np.exp(epsilon) / (1 + np.exp(epsilon))
    frame.loc[flip, col] = np.random.choice(levels, size=int(flip.sum()))
    return frame
""",
        # generator API, the size bound to a name
        """
import numpy as np
def grr(labels, epsilon, rng):
    cats = np.unique(labels)  # <-
    n_cats = len(cats)
    keep = np.exp(epsilon) / (np.exp(epsilon) + n_cats - 1)
    return np.where(rng.random(len(labels)) < keep, labels, rng.integers(0, n_cats, len(labels)))
""",
    )
