"""DP703: a mechanism given ε takes its candidate set (its output range) from the values present in the
private data (``categories = np.unique(data)``)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, param_names, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps", "budget"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "tol", "tolerance", "stability", "small", "finfo", "root"})
#: calls whose result is the set of values present in their argument
_SET_FUNCS = frozenset({"unique", "set", "sorted", "list", "frozenset"})
_SET_METHODS = frozenset({"unique", "drop_duplicates"})
#: words of a name that holds a candidate set / output range
_CANDIDATE_WORDS = frozenset({"categories", "category", "candidates", "candidate", "domain", "values", "labels",
                              "classes", "options", "outcomes", "alphabet", "support", "cats", "items", "keys"})


def _set_of(expr: cst.BaseExpression, params: set[str]) -> bool:
    """``np.unique(p...)``, ``set(p)``, ``sorted(set(p))``, ``p[col].unique()`` over a parameter ``p``."""
    if not isinstance(expr, cst.Call):
        return False
    name = call_name(expr)
    if isinstance(expr.func, cst.Attribute) and name in _SET_METHODS and name != "unique" or (
            isinstance(expr.func, cst.Attribute) and name == "unique"
            and not (isinstance(expr.func.value, cst.Name) and expr.func.value.value in {"np", "numpy", "pd", "torch"})):
        return bool({n.value for n in walk(expr.func.value) if isinstance(n, cst.Name)} & params)
    if name in {"sorted", "list", "frozenset"} and expr.args:
        return _set_of(expr.args[0].value, params)
    if name in {"unique", "set"} and expr.args:
        return bool({n.value for n in walk(expr.args[0].value) if isinstance(n, cst.Name)} & params)
    return False


class MechanismCandidatesFromData(Rule):
    id = "DP703"
    name = "mechanism-candidates-from-data"
    category = "general"
    severity = "error"
    summary = ("a mechanism given ε builds its candidate set (categories, output range) from the values present "
               "in the private data (`np.unique(data)`), then samples from it with that ε")
    rationale = (
        "The exponential mechanism, k-ary randomized response and similar categorical mechanisms are ε-DP only "
        "over a fixed, public output range. Taking the candidates from the data (`categories = "
        "np.unique(df[col])`, `set(values)`) makes the range, and k in the probabilities, a function of which "
        "values occur: a record with a rare value adds it to every possible output, so its presence is visible "
        "with certainty. Reported: in a function with a budget parameter, a name assigned the set of values of a "
        "parameter (`np.unique(p)`, `set(p)`, `p[c].unique()`, `sorted(set(p))`) that is passed to a call "
        "together with the budget, or read in the same statement as the budget. Fix: take the categories from a "
        "public domain (a parameter, the schema)."
    )
    TRIGGERS = ("unique", "set(")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A function with a budget-named parameter that calls ``unique``/``set``."""
        if not facts.calls_any({"unique", "set"}):
            return False
        return any(words(a.arg) & _BUDGET for fn in facts.functions
                   for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = set(param_names(node))
        budget = {p for p in params if words(p) & _BUDGET and not words(p) & _NUMERIC}
        if not budget:
            return
        data = params - budget - {"self", "cls"}
        body = list(walk(node.body, into_scopes=False))
        sets: dict[str, cst.Assign] = {}
        for sub in body:
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and _set_of(sub.value, data):
                name = sub.targets[0].target.value
                if words(name) & _CANDIDATE_WORDS or name in {"k_values", "uniq", "uniques"}:
                    sets.setdefault(name, sub)
        if not sets:
            return
        for sub in body:
            if not isinstance(sub, cst.Call):
                continue
            arg_names = {n.value for a in sub.args for n in walk(a.value) if isinstance(n, cst.Name)}
            if not arg_names & budget:
                continue
            for name in sorted(arg_names & set(sets)):
                where = sets.pop(name)
                self.report(where, f"`{name}` is the set of values present in the private data, and the mechanism "
                                   "samples its output from it with the budget: the output range (and k) reveal "
                                   "which values occur; take the candidates from a public domain")

    VALID = (
        # twin: the categories are a public parameter
        """
import numpy as np
def dp_exponential(values, categories, epsilon):
    return sample_exponential(values, categories, epsilon)
""",
        # twin of the k-RR case: public alphabet
        """
import numpy as np
def krr(column, alphabet, epsilon):
    k = len(alphabet)
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    return [v if np.random.rand() < p else np.random.choice(alphabet) for v in column]
""",
        # the unique values are only counted for a report, not given to the mechanism
        """
import numpy as np
def report(data, epsilon):
    categories = np.unique(data)
    print(len(categories))
    return laplace_count(len(data), epsilon)
""",
        # ordinary ML: classes of the labels for a classifier with an eps tolerance
        """
import numpy as np
def fit(X, y, eps=1e-6):
    classes = np.unique(y)
    return train_one_vs_rest(X, y, classes, tol=eps)
""",
    )

    INVALID = (
        # candidates of the exponential mechanism from the private column
        """
import numpy as np
def dp_exponential(df, column, epsilon):
    categories = np.unique(df[column].values)  # <-
    df[column] = sample_exponential(df[column].values, categories, epsilon)
    return df
""",
        # the array version
        """
import numpy as np
def dp_exponential_array(data, epsilon):
    data = np.asarray(data)
    categories = np.unique(data)  # <-
    return sample_exponential(data, categories, epsilon)
""",
        # k-RR over the values seen in the data
        """
import numpy as np
def krr(column, epsilon):
    alphabet = sorted(set(column))  # <-
    return randomized_response(column, alphabet, epsilon)
""",
        # pandas unique, the budget split in the call
        """
def ldp_perturb_column(frame, col, eps):
    values = frame[col].unique()  # <-
    return frame[col].apply(lambda v: exponential_mechanism(v, values, eps / 2))
""",
    )
