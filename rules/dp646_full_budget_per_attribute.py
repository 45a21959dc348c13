"""DP646: several values of one record each released with the whole ε, one after another, with no split."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, walk, words
from dpcheck.rule import Rule

_EPS = re.compile(r"(eps|epsilon)\d*")
#: an ε name with one of these words is already a share (``eps_per_attr``, ``epsilon_avg``)
_SHARE_WORDS = frozenset({
    "per", "each", "col", "column", "attr", "attribute", "round", "step", "iter", "query", "split", "share",
    "part", "single", "one", "dim", "coord", "item", "feature", "marginal", "sub", "unit", "layer", "level",
    "remaining", "left", "rest", "half", "avg", "mean", "count", "sum", "first", "second", "third", "a", "b",
})
#: a callee (or a mechanism constructor) that releases its input under the ε it is given
_MECH_WORDS = frozenset({
    "laplace", "laplacian", "gaussian", "gauss", "geometric", "perturb", "perturbation", "privatize",
    "privatise", "randomize", "randomise", "randomized", "randomised", "randomizer", "rr", "grr", "oue", "olh",
    "mechanism", "mech", "noisy", "sanitize", "gpm", "pdp", "pm", "duchi", "piecewise", "hybrid",
})
#: callees named for post-processing or evaluation (they read ε, they release nothing)
_POST_WORDS = frozenset({
    "aggregator", "aggregate", "estimate", "estimator", "decode", "debias", "unbias", "frequency", "analyze",
    "analyse", "attack", "eval", "evaluate", "variance", "var", "utility", "loss", "accuracy", "error", "mse",
    "plot", "print", "log", "test", "expected", "theoretical", "bound",
})
#: data arguments naming disjoint record sets (train/test halves are parallel composition)
_DISJOINT_WORDS = frozenset({"train", "test", "val", "valid", "validation", "holdout", "public", "synthetic",
                             "fake", "dummy", "example", "sample"})
_CHARGE_WORDS = frozenset({"spend", "spent", "consume", "charge", "compose", "accountant", "budget", "odometer",
                           "composition", "remaining", "used"})


def _full_eps(expr: cst.BaseExpression) -> str | None:
    """``epsilon``, ``self.epsilon``, ``eps1``: the whole budget (not a named share)."""
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return None
    name = last_name(expr)
    pieces = words(name or "")
    if any(_EPS.fullmatch(w) for w in pieces) and not pieces & _SHARE_WORDS:
        return name
    return None


def _mech_named(name: str) -> bool:
    pieces = words(name)
    return bool(pieces & _MECH_WORDS) and not pieces & _POST_WORDS


def _eps_given(call: cst.Call) -> str | None:
    """The full ε a call reads: an argument that is it, or a scale that divides by it (``scale=1e6 / eps``)."""
    for arg in call.args:
        if arg.star:
            continue
        if arg.keyword is not None and words(arg.keyword.value) & {"delta", "sensitivity", "sens", "seed"}:
            continue
        name = _full_eps(arg.value)
        if name is not None:
            return name
        for sub in walk(arg.value):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
                name = _full_eps(sub.right)
                if name is not None:
                    return name
    return None


def _data_arg(call: cst.Call) -> str | None:
    """The first positional argument that is not the budget: what is released."""
    for arg in call.args:
        if arg.keyword is None and not arg.star and _full_eps(arg.value) is None:
            return arg.value.__class__.__name__ + ":" + (last_name(arg.value) or "")
    return None


class FullBudgetPerAttribute(Rule):
    id = "DP646"
    name = "full-budget-per-attribute"
    category = "general"
    severity = "error"
    summary = ("two or more values of the same record (attributes, a transform's coefficients and its mean) are "
               "each released with the whole ε in one function and returned together: the report costs k·ε")
    rationale = (
        "Sequential composition: releasing k noisy values computed from the same records costs the sum of "
        "their budgets. A function that perturbs a user's coefficients and then their average with the same "
        "`self.epsilon` (`c = perturb_gpm(coefs, self.epsilon); m = perturb_pdp(avg, self.epsilon); return c, "
        "m`), or builds one Laplace mechanism at `scale = b / epsilon` and applies it to four fields of a form "
        "(`return {'rent': mech(rent), 'debt': mech(debt), ...}`), claims ε for a release that is k·ε-DP. "
        "The loop spelling is DP510. Reported: at the second release, when at least two releases of different "
        "values, each given the same unsplit ε (an argument, or a scale dividing by it), are returned together. "
        "Not reported: an ε named as a share (`eps_avg`, `eps_per_attr`) or rebound to a quotient in the "
        "function (`eps = epsilon / 2`), functions that charge an accountant or a budget, releases of "
        "different record sets (train/test), the same value released by two mechanisms for comparison, "
        "post-processing callees (estimators, utility metrics), test functions, code without DP context. "
        "Fix: split the budget (ε/k per value, or shares that sum to ε), or release one vector through one "
        "mechanism calibrated to its joint sensitivity."
    )
    TRIGGERS = ("eps",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a function with a ``return`` and at least two calls (a mechanism and another)."""
        for fn in facts.nodes(ast.FunctionDef):
            calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
            if len(calls) >= 2 and any(isinstance(n, ast.Return) for n in ast.walk(fn)):
                return True
        return False

    VALID = (
        # twin of the coefficient/average case: the budget split in two shares that sum to ε
        """
class Client:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def report(self, record):
        mean, coefs = transform(record)
        eps_coef = self.epsilon / 2
        eps_avg = self.epsilon - eps_coef
        return perturb_gpm(coefs, eps_coef), perturb_pdp(mean, eps_avg)
""",
        # twin of the form case: one mechanism at ε/4 for the four fields
        """
import opendp.prelude as dp
def release_form(rent, debt, savings, medical, epsilon):
    share = epsilon / 4
    mech = dp.m.make_laplace(dp.atom_domain(T=float), dp.absolute_distance(T=float), scale=1e6 / share)
    return {"rent": mech(rent), "debt": mech(debt), "savings": mech(savings), "medical": mech(medical)}
""",
        # train and test halves are disjoint records (parallel composition)
        """
import numpy as np
def laplace_perturb(x, epsilon):
    return x + np.random.laplace(0, 1 / epsilon, size=x.shape)
def noisy_splits(X_train, X_test, epsilon):
    return laplace_perturb(X_train, epsilon), laplace_perturb(X_test, epsilon)
""",
        # the same value released by two mechanisms to compare them (an experiment, not a report)
        """
def compare(x, epsilon):
    lap = laplace_mechanism(x, epsilon)
    gau = gaussian_mechanism(x, epsilon)
    return lap, gau
""",
        # ordinary ML: an optimiser eps handed to two layers' updates
        """
def step(w1, g1, w2, g2, lr, eps=1e-8):
    return adam_update(w1, g1, lr, eps), adam_update(w2, g2, lr, eps)
""",
        # an accountant charges each release
        """
def release(age, income, epsilon, accountant):
    a = laplace_mech(age, epsilon)
    accountant.spend(epsilon)
    b = laplace_mech(income, epsilon)
    accountant.spend(epsilon)
    return a, b
""",
    )
    INVALID = (
        # per record of a loop: the pair is stored together, each half at the whole ε
        """
def perturb_all(records, epsilon, b, delta):
    out = []
    for rec in records:
        mean, coefs = transform(rec)
        c = perturbation_gpm(coefs, epsilon)
        m = perturbation_pdp(mean, epsilon, b, delta)  # <-
        out.append((m, c))
    return out
""",
        # a transform's coefficients and its average each perturbed with the client's whole ε
        """
class Client:
    def __init__(self, epsilon, b, delta):
        self.epsilon, self.b, self.delta = epsilon, b, delta
    def report(self, record):
        mean, coefs = transform(record)
        noisy_coefs = perturb_gpm(coefs, self.epsilon)
        noisy_mean = perturb_pdp(mean, self.epsilon, self.b, self.delta)  # <-
        return noisy_coefs, noisy_mean
""",
        # one Laplace mechanism at scale b / ε applied to four fields of the same user
        """
import opendp.prelude as dp
def release_form(rent, debt, savings, medical, epsilon):
    mech = dp.m.make_laplace(dp.atom_domain(T=float), dp.absolute_distance(T=float), scale=1e6 / epsilon)
    r = mech(rent)
    d = mech(debt)  # <-
    s = mech(savings)
    m = mech(medical)
    return {"rent": r, "debt": d, "savings": s, "medical": m}
""",
        # numpy draws spelled inline for two attributes of the same person
        """
import numpy as np
def privatize_person(age, salary, epsilon):
    noisy_age = age + np.random.laplace(0, 100 / epsilon)
    noisy_salary = salary + np.random.laplace(0, 1e5 / epsilon)  # <-
    return noisy_age, noisy_salary
""",
        # randomized response on two attributes with the whole ε each
        """
def randomize_profile(gender, smoker, epsilon):
    return grr_randomize(gender, ["f", "m", "x"], epsilon), grr_randomize(smoker, ["y", "n"], epsilon)  # <-
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        if node.name.value.startswith("test") or node.name.value.startswith("_test"):
            return
        body_nodes = list(walk(node.body, into_scopes=False))
        # a budget charged or ε rebound to a share inside the function: not the whole ε each time
        for sub in body_nodes:
            if isinstance(sub, cst.Call) and words(call_name(sub)) & _CHARGE_WORDS:
                return
            if isinstance(sub, cst.Name) and words(sub.value) & {"accountant", "odometer"}:
                return
        # ``eps = epsilon / 2`` (a share); ``epsilon = float(epsilon)`` is still the whole budget
        rebound = {last_name(t.target) for sub in body_nodes if isinstance(sub, cst.Assign)
                   and any(isinstance(b, cst.BinaryOperation) and isinstance(b.operator, (
                       cst.Divide, cst.Multiply, cst.Subtract, cst.FloorDivide)) for b in walk(sub.value))
                   for t in sub.targets} | {last_name(sub.target) for sub in body_nodes
                                            if isinstance(sub, cst.AugAssign)}
        mechs: dict[str, str] = {}  # a name bound in the function to a mechanism built with the full ε
        for sub in body_nodes:
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and isinstance(sub.value, cst.Call) and _mech_named(call_name(sub.value)):
                eps = _eps_given(sub.value)
                if eps is not None:
                    mechs[sub.targets[0].target.value] = eps
        releases: list[tuple[cst.Call, str, str, str]] = []  # (call, ε, data, callee)
        for sub in body_nodes:
            if not isinstance(sub, cst.Call):
                continue
            name = call_name(sub)
            eps: str | None = None
            if isinstance(sub.func, cst.Name) and sub.func.value in mechs:
                eps = mechs[sub.func.value]
            elif _mech_named(name) or name in ("laplace", "normal", "gumbel", "geometric"):
                eps = _eps_given(sub)
            if eps is None or eps in rebound:
                continue
            data = self._data_of(sub, name)
            if data is None:
                continue
            releases.append((sub, eps, data, name))
        if len(releases) < 2:
            return
        # where releases are put together: a ``return``, or a tuple/dict/list literal (``results.append((a, b))``)
        collectors = [n for n in body_nodes if isinstance(n, cst.Return) and n.value is not None
                      or isinstance(n, (cst.Tuple, cst.Dict, cst.List)) and not isinstance(fa.parent(n), cst.Return)
                      and not any(isinstance(a, (cst.AssignTarget, cst.For)) and fa.inside(n, getattr(a, "target", a))
                                  for a in fa.ancestors(n))]
        by_key: dict[tuple[str, int], list[tuple[cst.Call, str, str]]] = {}
        for call, eps, data, callee in releases:
            loops = fa.enclosing_loops(call, comprehensions=True)
            if any(fa.inside(lp, node) and not isinstance(lp, cst.For) for lp in loops):
                continue  # a comprehension over items is the loop spelling (DP510)
            for i, collector in enumerate(collectors):
                if self._reaches(call, collector):
                    by_key.setdefault((eps, i), []).append((call, data, callee))
        seen: set[int] = set()
        for (eps, _), group in by_key.items():
            if len({id(fa.enclosing_loops(c)[0]) if fa.enclosing_loops(c) else 0 for c, _, _ in group}) > 1:
                continue  # releases in different loops are not one report
            if any(id(c) in seen for c, _, _ in group):
                continue
            seen |= {id(c) for c, _, _ in group}
            datas = {d for _, d, _ in group}
            if len(datas) < 2 or any(words(d.split(":", 1)[1]) & _DISJOINT_WORDS for d in datas):
                continue
            second = sorted(group, key=lambda g: fa.line_of(g[0]))[1][0]
            self.report(second, f"`{eps}` is the whole budget, and {len(group)} values of the same record are each "
                                f"released with it here and reported together: the report costs {len(group)}·ε, "
                                f"not ε; split it (ε/{len(group)} per value, or shares that sum to ε)")

    def _data_of(self, call: cst.Call, name: str) -> str | None:
        """What the release is about: its first non-budget argument; for a bare draw (``np.random.laplace``),
        the value it is added to (``age + laplace(…)``)."""
        fa = self.ctx.analysis
        if name in ("laplace", "normal", "gumbel", "geometric"):
            parent = fa.parent(call)
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
                other = parent.left if parent.right is call else parent.right
                return "draw:" + (last_name(other) or fa.code(other).strip())
            return None
        return _data_arg(call)

    def _reaches(self, call: cst.Call, collector: cst.CSTNode) -> bool:
        """The release is inside the collector, or assigned to a name the collector reads."""
        fa = self.ctx.analysis
        if fa.inside(call, collector):
            return True
        statement = fa.enclosing_statement(call)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0].target, cst.Name):
            target = statement.targets[0].target.value
            return any(isinstance(n, cst.Name) and n.value == target for n in walk(collector))
        return False
