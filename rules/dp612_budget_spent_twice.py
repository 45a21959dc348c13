"""DP612: one function hands its whole ε to two different mechanisms in a row (a selection and a measurement)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name

from dpcheck.analysis.syntax import call_name, dotted, last_name, number, walk, words
from dpcheck.rule import Rule

_EPS = re.compile(r"(eps|epsilon)\d*")
#: an ε name with one of these words is already a share (``eps_select``, ``epsilon_1``)
#: a function that compares or evaluates mechanisms side by side (each result is a measurement of the mechanism)
_EVAL_WORDS = frozenset({"evaluate", "evaluation", "eval", "compare", "comparison", "benchmark", "experiment",
                         "experiments", "metric", "metrics", "test", "demo", "simulate", "simulation", "plot"})
#: an argument that passes the share of ε beside ε itself (``private_ssa(d, epsilon, ssa_frac)``)
_FRACTION_WORDS = frozenset({"frac", "fraction", "ratio", "alloc", "allocation", "share", "portion", "proportion",
                             "percent", "percentage", "weight", "split"})
_SHARE_WORDS = frozenset({
    "per", "each", "round", "step", "iter", "query", "split", "share", "part", "local", "single", "one", "sub",
    "remaining", "left", "rest", "new", "cur", "current", "select", "selection", "measure", "measurement", "noise",
    "first", "second", "half", "frac", "fraction", "ratio", "total", "target", "spent", "used", "min", "max",
})
#: a callee that releases something about its input under the ε it is given
_MECH_WORDS = frozenset({
    "laplace", "laplacian", "gaussian", "gauss", "geometric", "perturb", "perturbation", "privatize", "privatise",
    "randomize", "randomise", "randomized", "randomised", "randomizer", "randomiser", "mechanism", "mech",
    "noise", "noisy", "private", "privatized", "sanitize", "exponential", "select", "selection", "privbayes",
    "priv", "measure", "measurement",
})
#: a callee that reads ε to calibrate, account, estimate or report (not a release)
_NOT_RELEASE_WORDS = frozenset({
    "aggregator", "aggregate", "aggregation", "estimate", "estimator", "estimation", "est", "decode", "debias",
    "unbias", "unbiased", "analyze", "analyse", "attack", "eval", "evaluate", "variance", "var", "utility", "loss",
    "accuracy", "error", "mse", "plot", "print", "log", "test", "get", "compute", "calc", "calculate", "find",
    "search", "multiplier", "sigma", "std", "scale", "calibrate", "calibration", "accountant", "account", "spend",
    "charge", "budget", "check", "validate", "assert", "set", "config", "params", "info", "format", "str",
    "theoretical", "bound", "expected", "prob", "probability", "probabilities", "make", "engine", "optimizer",
})


def _full_eps(expr: cst.BaseExpression) -> str | None:
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return None
    name = last_name(expr)
    pieces = words(name or "")
    if name and any(_EPS.fullmatch(w) for w in pieces) and not pieces & _SHARE_WORDS:
        return dotted(expr)
    return None


def _release_call(call: cst.Call) -> bool:
    name = call_name(call)
    pieces = words(name)
    if pieces & _NOT_RELEASE_WORDS:
        return False
    return bool(pieces & _MECH_WORDS) or "exp_mech" in name.lower()


class BudgetSpentTwice(Rule):
    id = "DP612"
    name = "budget-spent-twice"
    category = "general"
    severity = "error"
    summary = ("the function's whole ε is given to two different mechanisms one after the other: the two releases "
               "cost 2·ε")
    rationale = (
        "Sequential composition: a private selection followed by a noisy measurement of the same data (PrivBayes "
        "structure then Laplace marginals, an exponential-mechanism choice then Laplace counts) costs the sum of the "
        "two budgets. A function that takes `epsilon` and passes that same `epsilon`, unsplit, to both "
        "(`M = select(data, epsilon)`, then `laplace(data, M, epsilon)`) is 2·ε-DP while it is run and reported as "
        "ε. Reported: two calls with different mechanism names (laplace, gaussian, exponential mechanism, select, "
        "measure, perturb, privatize, ...) in the same block of the same function, each given the function's own "
        "ε parameter as an argument. Not reported: calls in different branches or inside a loop (a loop is DP510's), "
        "an ε reassigned or split in between, callees that calibrate, account, estimate or report (`get_noise_"
        "multiplier(eps)`, `accountant.spend(eps)`, `estimate(reports, eps)`), two calls of the same mechanism "
        "(often disjoint parts), test code, code with no DP context. Fix: split the budget (`eps_select = "
        "epsilon / 2`, `eps_measure = epsilon - eps_select`) and pass each part."
    )
    TRIGGERS = ("eps",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Two differently named release calls in the file."""
        names = {n for c in facts.calls if (n := ast_call_name(c)) and (
            words(n) & _MECH_WORDS or "exp_mech" in n.lower()) and not words(n) & _NOT_RELEASE_WORDS}
        return len(names) >= 2

    VALID = (
        # the twin: the budget split between the selection and the measurement
        """
def run(W, relation, eps, prng, select, laplace):
    eps_select = eps / 2
    M = select(relation, eps_select, prng)
    return laplace(relation, M, eps - eps_select, prng)
""",
        # alternative mechanisms in different branches
        """
import numpy as np
def privatize(x, epsilon, delta, kind, sensitivity):
    if kind == "laplace":
        return laplace_mechanism(x, sensitivity, epsilon)
    else:
        return gaussian_mechanism(x, sensitivity, epsilon, delta)
""",
        # calibrate then build: both read the same target ε, one release
        """
def train(model, optimizer, loader, epsilon, delta, epochs, engine, get_noise_multiplier):
    sigma = get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, epochs=epochs)
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=sigma,
                               max_grad_norm=1.0), epsilon
""",
        # release then de-bias with the same ε (post-processing)
        """
def frequency(values, epsilon, k):
    reports = perturb(values, epsilon, k)
    return estimate_frequency(reports, epsilon, k)
""",
        # two calls of the same mechanism (often on disjoint parts)
        """
def noisy_counts(men, women, epsilon):
    return laplace_mechanism(len(men), 1, epsilon), laplace_mechanism(len(women), 1, epsilon)
""",
        # a grid size chosen from public settings and ε, then one measurement
        """
def run(self, W, x, eps):
    M = ugrid_select(self.domain_shape, self.total, eps)
    return x.laplace(M, eps)
""",
        # the share of ε passed beside it: each callee spends its fraction
        """
def private_statistic(self, d, epsilon, ssa_frac):
    msa = self.private_ssa(d, epsilon, ssa_frac)
    mse = self.private_sse(d, epsilon, 1 - ssa_frac)
    return msa / mse
""",
        # a comparison of two mechanisms on the same value (an evaluation, not one release)
        """
def evaluate_mechanisms(data, epsilon, delta, laplace_mechanism, gaussian_mechanism):
    true_value = sum(data) / len(data)
    lap = laplace_mechanism(true_value, 1.0, epsilon)
    gau = gaussian_mechanism(true_value, 1.0, epsilon, delta)
    return abs(lap - true_value), abs(gau - true_value)
""",
        # ordinary ML code: eps of Adam and of a batch norm
        """
import torch
def build(model, lr, eps=1e-8):
    opt = torch.optim.Adam(model.parameters(), lr=lr, eps=eps)
    norm = torch.nn.BatchNorm1d(16, eps=eps)
    return opt, norm
""",
        # the ε of the function is reassigned (split) between the releases
        """
def release(data, epsilon, select, laplace_noise):
    epsilon = epsilon / 2
    cols = select(data, epsilon)
    return laplace_noise(data[cols], epsilon)
""",
    )

    INVALID = (
        # a PrivBayes-style plan: structure selection and Laplace measurement each get the whole eps
        """
import numpy as np
class PrivBayesLS:
    def Run(self, W, relation, eps, seed):
        prng = np.random.RandomState(seed)
        M = PrivBayesSelect(self.theta, self.domain, eps).select(relation, prng)
        x = vectorize(relation)
        y = Laplace(M, eps).measure(x, prng)  # <-
        return least_squares(M, y)
""",
        # an exponential-mechanism choice of how many cells to noise, then Laplace noise, both with epsilon
        """
import random
def privatize_frequencies(relations, mapping, epsilon, candidates, exact_cells):
    chosen = exp_mech(candidates, epsilon)
    for cell in random.sample(exact_cells, chosen):
        relations.add(cell)
    return apply_laplace_noise(relations, mapping, epsilon)  # <-
""",
        # an LDP pipeline: the same users' values perturbed twice, by two randomisers, with the full eps each
        """
def collect(values, epsilon, domain):
    mean_reports = piecewise_perturb(values, epsilon)
    freq_reports = grr_randomize(values, domain, epsilon)  # <-
    return mean_reports, freq_reports
""",
        # a noisy top-k selection and then noisy answers of the chosen queries, same budget
        """
import numpy as np
def select_and_measure(data, queries, k, epsilon):
    chosen = noisy_topk_select(data, queries, k, epsilon)
    return gaussian_mechanism(data, [queries[i] for i in chosen], epsilon)  # <-
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        if node.name.value.startswith("test") or re.search(r"(^|/)tests?(/|_)|_test\.py$", self.ctx.path or ""):
            return
        if words(node.name.value) & _EVAL_WORDS:
            return
        budgets = set()
        for p in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params):
            if not _full_eps(p.name):
                continue
            if p.default is not None and isinstance(p.default, (cst.Float, cst.Integer)) and \
                    float(p.default.value.replace("_", "")) < 1e-3:
                continue  # ``eps=1e-8``: a numerical constant
            budgets.add(p.name.value)
        if not budgets:
            return
        # the releases of each block: (block, callee name, budget, call)
        seen: dict[tuple[int, str], tuple[str, cst.Call]] = {}
        assigned = {dotted(t.target) for n in walk(node, into_scopes=False) if isinstance(n, cst.Assign)
                    for t in n.targets} | {dotted(n.target) for n in walk(node, into_scopes=False)
                                           if isinstance(n, (cst.AugAssign, cst.AnnAssign))}
        for call in walk(node, into_scopes=False):
            if not isinstance(call, cst.Call) or not _release_call(call):
                continue
            budget = next((b for a in call.args if not a.star and (a.keyword is None or words(a.keyword.value) & {
                "eps", "epsilon", "budget"} or _EPS.fullmatch(a.keyword.value)) and (b := _full_eps(a.value))
                           and b in budgets), None)
            if budget is None or budget in assigned:
                continue
            if self._fraction_given(call):
                continue  # the share of ε travels beside it: the callee spends ``epsilon * frac``
            if not self._reads_data(call):
                continue  # only ε and the object's own settings: a calibration, not a release of the data
            block = self._block(call, node)
            if block is None:
                continue
            key = (id(block), budget)
            name = call_name(call)
            if key in seen:
                first_name, first = seen[key]
                if first_name != name and not self._nested(first, call):
                    self.report(call, f"`{budget}` is the whole budget of `{node.name.value}`, and it was already "
                                      f"given to `{first_name}` on line {fa.line_of(first)}: the two releases of the "
                                      f"same data cost 2·{budget}; split it between them")
                    seen[key] = (name, call)
                continue
            seen[key] = (name, call)

    def _block(self, call: cst.Call, fn: cst.FunctionDef) -> cst.CSTNode | None:
        """The function body when the call sits in it directly (not in a branch, loop, try or with)."""
        fa = self.ctx.analysis
        cur = fa.parent(call)
        while cur is not None and cur is not fn:
            if isinstance(cur, (cst.If, cst.Else, cst.For, cst.While, cst.Try, cst.ExceptHandler, cst.With,
                                cst.Lambda, cst.ListComp, cst.DictComp, cst.GeneratorExp, cst.SetComp, cst.IfExp,
                                cst.BooleanOperation, cst.Match if hasattr(cst, "Match") else cst.If)):
                return None
            cur = fa.parent(cur)
        return fn

    @staticmethod
    def _fraction_given(call: cst.Call) -> bool:
        for a in call.args:
            if a.keyword is not None and words(a.keyword.value) & _FRACTION_WORDS:
                return True
            if isinstance(a.value, cst.BinaryOperation) and isinstance(a.value.operator, cst.Subtract) and \
                    number(a.value.left) == 1:
                return True
            if any(isinstance(n, (cst.Name, cst.Attribute)) and words(last_name(n) or "") & _FRACTION_WORDS
                   for n in walk(a.value)):
                return True
        return False

    def _reads_data(self, call: cst.Call) -> bool:
        """An argument (or the receiver, or an argument of a method called on the result) is a plain name other
        than the budget and the randomness: ``select(relation, eps)``, ``x.laplace(M, eps)``,
        ``Select(self.theta, eps).select(relation)``; not ``ugrid_select(self.shape, self.total, eps)``."""
        fa = self.ctx.analysis
        exprs = [a.value for a in call.args if not a.star]
        if isinstance(call.func, cst.Attribute):
            exprs.append(call.func.value)
        up = fa.parent(call)
        if isinstance(up, cst.Attribute):
            outer = fa.parent(up)
            if isinstance(outer, cst.Call) and outer.func is up:
                exprs.extend(a.value for a in outer.args if not a.star)
        for expr in exprs:
            if isinstance(expr, cst.Name) and not _full_eps(expr) and not words(expr.value) & {
                    "prng", "rng", "seed", "random", "state", "self", "key", "generator", "np", "torch", "exp"}:
                return True
            if isinstance(expr, (cst.Subscript, cst.Call)) and any(
                    isinstance(n, cst.Name) and n.value not in ("self", "np", "len") and not _full_eps(n)
                    for n in walk(expr)):
                return True
        return False

    @staticmethod
    def _nested(a: cst.Call, b: cst.Call) -> bool:
        return any(n is b for n in walk(a)) or any(n is a for n in walk(b))
