"""DP700: a function takes the privacy budget, never reads it, draws no noise, and keeps or returns statistics
computed from its data."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, interface_only, number, target_nodes, walk, words
from dpcheck.rule import Rule

#: parameter words that name the privacy budget
_BUDGET = frozenset({"epsilon", "eps", "budget", "epsilons"})
#: an eps that is a numerical constant of an optimiser or a tolerance
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "small", "finfo", "ln", "bn", "layer", "root", "step", "lr"})
_OPTIMISER_SIBLINGS = frozenset({"b1", "b2", "beta1", "beta2", "beta_1", "beta_2", "eps_root", "amsgrad", "momentum"})
#: words of a function that is the non-private reference on purpose
_REFERENCE = frozenset({"true", "exact", "nonprivate", "non", "baseline", "raw", "plain", "gt", "oracle", "actual",
                        "nodp", "clean", "ground", "unperturbed", "real", "test", "mock", "dummy", "fake", "stub",
                        # the server side of a local-DP protocol reads already randomised reports
                        "aggregate", "aggregation", "aggregator", "estimate", "estimator", "decode", "debias",
                        "evaluate", "eval", "plot"})
#: words of a call that draws noise or hands the work to a mechanism (the budget may travel on ``self``)
_NOISE_WORDS = frozenset({"noise", "noisy", "laplace", "gaussian", "gauss", "geometric", "normal", "randn",
                          "perturb", "privatize", "privatise", "randomize", "randomise", "randomized", "mechanism",
                          "mech", "sanitize", "sanitise", "exponential", "dp", "private", "privacy", "ldp", "rr",
                          "rvs", "sample", "choice", "measurement", "measure", "release", "query", "spend",
                          "accountant", "charge", "super"})
#: calls that read every local (the budget could travel through them)
_INTROSPECT = frozenset({"locals", "vars", "eval", "exec"})
#: words of a parameter that is not the data
_NOT_DATA = frozenset({"self", "cls", "delta", "seed", "rng", "random", "state", "verbose", "k", "n", "size", "bins",
                       "grid", "bounds", "bound", "lower", "upper", "config", "cfg", "args", "options", "opts",
                       "kwargs", "domain", "schema", "sensitivity", "clip", "alpha", "beta", "threshold", "treshold",
                       "path", "file", "dir", "name", "columns", "column", "col", "cols", "attribute", "attributes"})
#: words of a parameter that holds the records (the fallback without a loop reads only these)
_DATA_WORDS = frozenset({"data", "db", "df", "dataset", "records", "rows", "table", "frame", "traj", "trajs",
                         "trajectories", "trips", "points", "samples", "values", "original", "orig", "train",
                         "private", "sensitive", "raw", "database", "users", "edges", "graph", "degrees"})
#: methods that add to a collection in place
_ADDS = frozenset({"append", "add", "update", "extend", "insert", "setdefault"})


def _budget_params(fn: cst.FunctionDef) -> list[cst.Param]:
    params = (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)
    names = {p.name.value.lower() for p in params}
    if len(names & _OPTIMISER_SIBLINGS) >= 2:
        return []
    out = []
    for p in params:
        pieces = words(p.name.value)
        if not pieces & _BUDGET or pieces & _NUMERIC:
            continue
        default = number(p.default) if p.default is not None else None
        if default is not None and 0 < default < 1e-3:
            continue
        out.append(p)
    return out


def _reads(fn: cst.FunctionDef, name: str) -> bool:
    """Does ``name`` occur in the body as a variable (not as a keyword or an attribute)?"""
    for node in walk(fn.body):
        if isinstance(node, cst.Name) and node.value == name:
            return True
    return False


def _names_outside_keywords(fn: cst.FunctionDef) -> set[str]:
    out: set[str] = set()
    skip: set[int] = set()
    for node in walk(fn.body):
        if isinstance(node, cst.Arg) and node.keyword is not None:
            skip.add(id(node.keyword))
        elif isinstance(node, cst.Attribute):
            skip.add(id(node.attr))
        elif isinstance(node, cst.Name) and id(node) not in skip:
            out.add(node.value)
    return out


def _key(target: cst.BaseExpression) -> str | None:
    """``counts`` of ``counts[a][b]``, ``self.table`` of ``self.table[k]``."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return dotted(target)


class BudgetAcceptedExactStatistics(Rule):
    id = "DP700"
    name = "budget-accepted-exact-statistics"
    category = "general"
    severity = "error"
    summary = ("a function takes the privacy budget (`epsilon`, `privacyBudget`), never reads it, draws no noise, "
               "and returns or keeps statistics it computed from its data")
    rationale = (
        "A step of a DP pipeline that is given the budget (`def transition_counts(trajs, grid, epsilon=1)`, "
        "`def __init__(self, db, eps)`, `def group_by(dataset, threshold, epsilon)`) promises to spend it on the "
        "statistic it computes. When the body never reads the budget, draws no noise and hands the work to no "
        "mechanism, the counts, lengths, min/max values or group keys it accumulates from the records are exact, "
        "and whatever is built from them (a synthetic data set, a released table) is not covered by any ε. "
        "Reported: in DP code, a function with a budget-named parameter that no statement reads (keyword names "
        "and attributes do not count), no noise or mechanism call, and either a loop over a data parameter that "
        "accumulates into a returned name or a `self.` attribute (`t[i] += 1`, `self.keys.append(k)`, "
        "`self.max = x`), or else the first assignment computed directly from a parameter named for the records "
        "(`data`, `df`, `original_db`) when the function returns a value. Not reported: reference functions named true/exact/baseline/non-private, the aggregation or "
        "estimation side of a local-DP protocol (its input is already randomised), interfaces, "
        "numerical eps, functions that call `locals()`. Fix: add calibrated noise charged to the budget (or drop "
        "the parameter and treat the output as non-private)."
    )
    TRIGGERS = ("eps", "Eps", "budget", "Budget", "EPS")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A function with a budget-named parameter that its body never names."""
        for fn in facts.functions:
            args = fn.args
            budget = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
                      if words(a.arg) & _BUDGET and not words(a.arg) & _NUMERIC]
            if not budget:
                continue
            used = {n.id for stmt in fn.body for n in ast.walk(stmt) if isinstance(n, ast.Name)}
            if any(b not in used for b in budget):
                return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        budget = _budget_params(node)
        if not budget or words(node.name.value) & _REFERENCE or interface_only(node):
            return
        if any(dotted(d.decorator) in {"abstractmethod", "abc.abstractmethod", "overload", "typing.overload"}
               for d in node.decorators):
            return
        read = _names_outside_keywords(node)
        unused = [p.name.value for p in budget if p.name.value not in read]
        if not unused or len(unused) < len(budget):
            return  # the budget (or one of its names) is read
        for sub in walk(node.body):
            if isinstance(sub, cst.Call):
                name = call_name(sub)
                if name in _INTROSPECT or words(name) & _NOISE_WORDS:
                    return
        params = (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
        data = {p.name.value for p in params
                if p not in budget and not words(p.name.value) & (_NOT_DATA | _BUDGET)}
        if not data:
            return
        returned: set[str] = set()
        returns_value = False
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Return) and sub.value is not None:
                returns_value = True
                returned |= {n.value for n in walk(sub.value) if isinstance(n, cst.Name)}
        found = self._loop_accumulations(node, data, returned)
        if found:
            for key, where in found.items():
                self.report(where, self._message(unused[0], key))
            return
        if not returns_value:
            return
        records = {d for d in data if words(d) & _DATA_WORDS}
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Assign) and {n.value for n in walk(sub.value) if isinstance(n, cst.Name)} & records:
                if not isinstance(sub.value, (cst.Call, cst.Subscript, cst.Attribute, cst.BinaryOperation)):
                    continue
                keys = [_key(t.target) for t in sub.targets]
                self.report(sub, self._message(unused[0], next((k for k in keys if k), "the result")))
                return

    @staticmethod
    def _message(budget: str, key: str) -> str:
        return (f"`{key}` is computed from the records while the budget `{budget}` this function takes is never "
                "read and no noise is drawn: the statistic is exact, and no ε covers what is built from it; add "
                "calibrated noise charged to the budget")

    @staticmethod
    def _loop_accumulations(fn: cst.FunctionDef, data: set[str], returned: set[str]) -> dict[str, cst.CSTNode]:
        found: dict[str, cst.CSTNode] = {}
        for loop in walk(fn.body, into_scopes=False):
            if not isinstance(loop, cst.For):
                continue
            if not {n.value for n in walk(loop.iter) if isinstance(n, cst.Name)} & data:
                continue
            loop_vars = {n.value for t in target_nodes(loop.target) for n in walk(t) if isinstance(n, cst.Name)}
            for sub in walk(loop.body, into_scopes=False):
                targets: list[cst.BaseExpression] = []
                if isinstance(sub, cst.Assign):
                    targets = [t for at in sub.targets for t in target_nodes(at.target)]
                elif isinstance(sub, (cst.AugAssign, cst.AnnAssign)):
                    targets = list(target_nodes(sub.target))
                elif isinstance(sub, cst.Call) and call_name(sub) in _ADDS and isinstance(sub.func, cst.Attribute):
                    targets = [sub.func.value]
                for t in targets:
                    key = _key(t)
                    if key is None or key in loop_vars or key in found:
                        continue
                    root = key.split(".")[0]
                    if root == "self" and "." in key or key in returned:
                        found[key] = sub
        return found

    VALID = (
        # twin of the transition counts: the budget reaches the noise
        """
import numpy as np
def transition_counts(trajectories, n_cells, privacy_budget=1.0):
    counts = np.zeros((n_cells, n_cells))
    for traj in trajectories:
        for a, b in zip(traj, traj[1:]):
            counts[a, b] += 1
    counts += np.random.laplace(0, 1 / privacy_budget, counts.shape)
    return counts
""",
        # twin of the length model: lengths kept through a noisy histogram
        """
import numpy as np
class LengthModel:
    def __init__(self, trips, eps):
        hist = np.zeros(64)
        for trip in trips:
            hist[min(len(trip), 63)] += 1
        self.hist = hist + np.random.laplace(0, 1 / eps, 64)
""",
        # twin of the grouping: the threshold is noisy and spends epsilon
        """
import numpy as np
class Groups:
    def __init__(self, frame, threshold=10, epsilon=0.3):
        self.keys = []
        for key, group in frame.groupby("zip"):
            if len(group) + np.random.laplace(0, 1 / epsilon) > threshold:
                self.keys.append(key)
""",
        # a non-private reference kept on purpose beside the DP one
        """
def exact_histogram(records, n_bins, epsilon):
    counts = [0] * n_bins
    for r in records:
        counts[r] += 1
    return counts
""",
        # the budget is passed on to a mechanism helper
        """
def private_counts(records, epsilon):
    counts = {}
    for r in records:
        counts[r] = counts.get(r, 0) + 1
    return add_laplace_noise(counts, epsilon)
""",
        # the server side of a local-DP protocol: the reports are already randomised
        """
import numpy as np
def aggregate_reports(reports, d, epsilon):
    support = np.zeros(d)
    for r in reports:
        support[r] += 1
    return support
""",
        # ordinary ML: an optimiser's eps that the step does not need
        """
def accumulate_grads(batches, lr=0.1, eps=1e-8):
    total = 0.0
    for b in batches:
        total += b.grad
    return total * lr
""",
    )

    INVALID = (
        # the transition counts ignore the budget they are given
        """
def transition_counts(trajectories, cells, privacy_budget=1):
    counts = [[0] * len(cells) for _ in cells]
    for traj in trajectories:
        for a, b in zip(traj, traj[1:]):
            counts[cells.index(a)][cells.index(b)] += 1  # <-
    return counts
""",
        # a length model of a DP synthesiser: exact lengths and exact min/max
        """
class LengthModel:
    '''Trip lengths for the differentially private trajectory synthesiser.'''
    def __init__(self, trips, eps=0.5):
        self.lengths = {}
        self.shortest = 10 ** 9
        for trip in trips:
            if len(trip) < self.shortest:
                self.shortest = len(trip)  # <-
            self.lengths.setdefault(trip.key, []).append(len(trip))  # <-
""",
        # a grouping that documents a threshold and epsilon and emits every key
        """
class GroupedDataset:
    def __init__(self, dataset, threshold=10, epsilon=0.3, **kwargs):
        self.keys = []
        for key, part in dataset.groupby(**kwargs):
            self.keys.append(key)  # <-
""",
        # the synthesis entry point takes the total epsilon and never spends it
        """
def synthesize(original_db, total_epsilon, cell_count):
    box = bounding_box(original_db)  # <-
    grid = make_grid(box, cell_count)
    return generate(grid, len(original_db))
""",
    )
