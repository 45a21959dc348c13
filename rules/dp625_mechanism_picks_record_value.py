"""DP625: a mechanism picks a rank among the sorted private values and the release is the record at that
rank (``array[idx]``), so every output is an actual value of the data."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import all_params, call_name, dotted, walk, words
from dpcheck.rule import Rule

#: calls that sort their operand and return it (``np.sort(x)``, ``sorted(x)``, ``x.sort_values()``)
_SORTS = frozenset({"sort", "sorted", "sort_values", "argsort_values", "msort"})
#: words of a helper or method that picks an index with a DP selection mechanism
_PICK_WORDS = frozenset({"exponential", "exp", "exponent", "mechanism", "mech", "em", "noisy", "max", "argmax",
                         "report", "select", "selection", "permute", "gumbel"})
#: method names of a mechanism object that draw its output (diffprivlib: ``Exponential(...).randomise()``)
_RANDOMISE = frozenset({"randomise", "randomize"})
#: draws whose arguments may be sorted record values without releasing them: a uniform point between two
#: consecutive order statistics is the exponential mechanism's correct median (Smith 2011)
_DRAWS = frozenset({"uniform", "randint", "integers", "triangular", "rand", "random"})
#: words of a value that is a public grid of candidates, not the records
_PUBLIC = frozenset({"public", "pub", "grid", "candidates", "candidate", "domain", "bins", "edges", "levels",
                     "thresholds", "support", "universe", "schema", "bounds", "range", "ranges"})
#: calls that build a public candidate grid (``np.linspace(lo, hi, k)``)
_GRIDS = frozenset({"linspace", "arange", "range", "logspace", "geomspace"})
_MODULES = frozenset({"np", "numpy", "torch", "jnp", "tf", "pd", "scipy"})
_BUDGET = frozenset({"eps", "epsilon", "epsi", "budget", "rho", "privacy"})


def _last(call: cst.Call) -> str:
    return call_name(call).split(".")[-1]


def _names(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


def _mechanism_pick(value: cst.BaseExpression, budgeted: bool) -> bool:
    """``mech.randomise()``, ``exp_mechanism(scores, n, eps, s)``, ``np.random.choice(n, p=probs)`` in a
    function holding a budget: an index chosen by a DP selection mechanism."""
    if isinstance(value, cst.Subscript):
        value = value.value  # ``exponential(...)[0]``
    if not isinstance(value, cst.Call):
        return False
    name = _last(value)
    if name in _RANDOMISE:
        return isinstance(value.func, cst.Attribute)
    if name == "choice":
        return budgeted and any(a.keyword is not None and a.keyword.value == "p" for a in value.args)
    pieces = words(name)
    if name in {"int", "round"} and value.args:
        return _mechanism_pick(value.args[0].value, budgeted)
    return bool(pieces & _PICK_WORDS) and bool(pieces & {"mechanism", "mech", "exponential", "em", "noisy",
                                                         "exp", "gumbel"}) and "sort" not in pieces


def _sorted_values(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The operand of a sort (``np.sort(x)``, ``sorted(x)``, ``x.sort_values().reset_index(drop=True)``,
    ``torch.sort(x)[0]``/``.values``), or ``None``."""
    node: cst.CSTNode = value
    while True:
        if isinstance(node, cst.Subscript) or isinstance(node, cst.Attribute) and node.attr.value == "values":
            node = node.value
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and node.func.attr.value in {"reset_index", "to_numpy", "tolist", "copy", "astype", "ravel",
                                             "flatten", "dropna"}:
            node = node.func.value
        else:
            break
    if not isinstance(node, cst.Call) or _last(node) not in _SORTS:
        return None
    if isinstance(node.func, cst.Attribute) and (dotted(node.func.value) or "").split(".")[0] not in _MODULES:
        return node.func.value  # ``x.sort_values()``, ``t.sort(dim=0)``: the receiver is sorted
    args = [a.value for a in node.args if a.keyword is None]
    return args[0] if args else None


def _public(expr: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.Call) and _last(n) in _GRIDS for n in walk(expr)) or any(
        words(n) & _PUBLIC for n in _names(expr))


def _interval(stmt: cst.CSTNode, sorted_names: dict[str, cst.CSTNode], picks: set[str]) -> bool:
    """The statement also reads the next (or previous) order statistic, ``x[i + 1] - x[i]``: a point of the
    chosen interval between two records (``rng.random() * (x[i+1] - x[i]) + x[i]``), not a record."""
    for n in walk(stmt):
        if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value in sorted_names \
                and len(n.slice) == 1 and isinstance(n.slice[0].slice, cst.Index) \
                and isinstance(n.slice[0].slice.value, cst.BinaryOperation) \
                and _names(n.slice[0].slice.value) & picks:
            return True
    return False


class MechanismPicksRecordValue(Rule):
    id = "DP625"
    name = "mechanism-picks-record-value"
    category = "metadata"
    severity = "error"
    summary = ("a DP selection mechanism picks a rank among the sorted private values and the release is the "
               "record at that rank: every output is an actual value of the data")
    rationale = (
        "A DP median, quantile, minimum or maximum chosen by the exponential mechanism over ranks is only private "
        "when the output range is fixed in advance. When the candidates are the sorted private values themselves "
        "(`array = np.sort(x)`, `K.sort()`, `x.sort_values()`) and the released value is the record at the chosen "
        "rank (`output = array[mech.randomise()]`, `L.append(K[exp_mechanism(scores, len(K), eps, s)])`), every "
        "output is some person's exact value: an outlier that is the maximum shows up verbatim, a value absent "
        "from the data can never be output, and two neighbouring data sets have different output supports, so no "
        "epsilon bounds the ratio of their probabilities. Reported, in a function, at the subscript of a sorted "
        "private array by an index drawn by a selection mechanism (a diffprivlib mechanism's `randomise()`, a "
        "helper named for the exponential mechanism or report-noisy-max, `choice(n, p=...)` in a function given "
        "a budget). Not reported: candidates on a public grid (`np.linspace(lo, hi, k)`, `range`, names such as "
        "`candidates`/`bins`/`domain`), a uniform draw between two consecutive order statistics (the exponential "
        "mechanism's correct median over intervals), or a point between the chosen order statistic and the "
        "next (`rng.random() * (x[i + 1] - x[i]) + x[i]`), a generic helper that indexes the candidates it is given "
        "(the caller's candidate set is checked by DP204). Fix: run the mechanism over a public grid of "
        "candidates inside public bounds, or output a uniform point of the chosen interval between order "
        "statistics (Smith 2011)."
    )
    TRIGGERS = ("sort",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.nodes(ast.Subscript)) and bool(facts.nodes(ast.Call))

    VALID = (
        # twin: the exponential mechanism's candidates are a public grid inside public bounds
        """
import numpy as np
def dp_quantile(values, q, epsilon, lower, upper, k=1000):
    grid = np.linspace(lower, upper, k)
    x = np.sort(np.clip(values, lower, upper))
    scores = -np.abs(np.searchsorted(x, grid) - q * len(x))
    p = np.exp(epsilon * scores / 2)
    idx = np.random.choice(k, p=p / p.sum())
    return grid[idx]
""",
        # twin: Smith's median: the mechanism picks an interval between order statistics, the output is drawn
        # uniformly inside it
        """
import numpy as np
def dp_median(values, epsilon, lower, upper):
    x = np.concatenate([[lower], np.sort(np.clip(values, lower, upper)), [upper]])
    n = len(x) - 1
    widths = np.diff(x)
    scores = -np.abs(np.arange(n) - n / 2)
    w = widths * np.exp(epsilon * scores / 2)
    i = np.random.choice(n, p=w / w.sum())
    return np.random.uniform(x[i], x[i + 1])
""",
        # twin: diffprivlib's quantile: a uniform point of the chosen interval between two order statistics
        """
import numpy as np
def quantile(array, quant, epsilon, bounds, rng):
    k = array.size
    array = np.append(np.clip(array, *bounds), list(bounds))
    array.sort()
    mech = Exponential(epsilon=epsilon, sensitivity=1, utility=list(-np.abs(np.arange(0, k + 1) - quant * k)),
                       measure=list(np.diff(array)))
    idx = mech.randomise()
    return rng.random() * (array[idx + 1] - array[idx]) + array[idx]
""",
        # a generic exponential mechanism over the candidates its caller gives
        """
import numpy as np
def exponential_mechanism(candidates, scores, epsilon, sensitivity=1.0):
    p = np.exp(epsilon * np.asarray(scores) / (2 * sensitivity))
    idx = np.random.choice(len(candidates), p=p / p.sum())
    return candidates[idx]
""",
        # twin of the torch case: report-noisy-max over a public grid of thresholds inside public bounds
        """
import torch
def report_noisy_max(scores, epsilon):
    return int(torch.argmax(scores + torch.distributions.Gumbel(0.0, 2.0 / epsilon).sample(scores.shape)))
def private_max(readings, epsilon, lower, upper, k=256):
    grid = torch.linspace(lower, upper, k)
    ranked = torch.sort(readings.clamp(lower, upper)).values
    counts = torch.searchsorted(ranked, grid).float()
    j = report_noisy_max(-(counts - len(ranked)).abs(), epsilon)
    return grid[j].item()
""",
        # ordinary ML: a top-k of sorted model scores, no selection mechanism
        """
import numpy as np
def top_predictions(scores, labels, k=5):
    order = np.sort(scores)[::-1]
    best = np.argmax(scores)
    return labels[best], order[:k]
""",
        # a sampler sorting its own draws for a plot (no budget, no mechanism)
        """
import numpy as np
def plot_samples(model, n):
    xs = np.sort(model.sample(n))
    i = np.random.choice(n, p=np.ones(n) / n)
    return xs[i]
""",
    )
    INVALID = (
        # diffprivlib's exponential mechanism over ranks, the record at the rank released
        """
import diffprivlib
import numpy as np
def dp_extremes(values, epsilon, sensitivity):
    arr = np.sort(values)
    k = arr.size
    out = []
    for q in (0, 1):
        mech = diffprivlib.mechanisms.Exponential(epsilon=epsilon, sensitivity=sensitivity,
                                                  utility=list(-np.abs(np.arange(k) - q * k)))
        pick = mech.randomise()
        out.append(arr[pick])  # <-
    return out
""",
        # a hand-written exponential mechanism picks the median rank of each cell's sorted trip lengths
        """
import numpy as np
def exp_mechanism(scores, n, epsilon, sensitivity):
    p = np.exp(epsilon * np.asarray(scores) / (2 * sensitivity))
    return np.random.choice(n, p=p / p.sum())
def median_lengths(cells, epsilon, sensitivity):
    medians = []
    for lengths in cells:
        lens = list(lengths)
        lens.sort()
        mid = len(lens) / 2
        scores = [-abs(j - mid) for j in range(len(lens))]
        r = exp_mechanism(scores, len(lens), epsilon, sensitivity)
        medians.append(lens[r])  # <-
    return medians
""",
        # the exponential mechanism inlined with numpy's weighted choice; the pandas sort of the column
        """
import numpy as np
def private_quartile(column, epsilon, q=0.25):
    s = column.dropna().sort_values().reset_index(drop=True)
    n = len(s)
    u = -np.abs(np.arange(n) - q * n)
    p = np.exp(epsilon * u / 2)
    i = np.random.choice(n, p=p / p.sum())
    return s[i]  # <-
""",
        # torch: a report-noisy-max helper over the ranks of the sorted private scores
        """
import torch
def report_noisy_max(scores, epsilon):
    return int(torch.argmax(scores + torch.distributions.Gumbel(0.0, 2.0 / epsilon).sample(scores.shape)))
def private_max(readings, epsilon):
    ranked = torch.sort(readings).values
    ranks = torch.arange(len(ranked), dtype=torch.float32)
    j = report_noisy_max(ranks, epsilon)
    return ranked[j].item()  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        for fn in walk(node):
            if isinstance(fn, cst.FunctionDef):
                self._check(fn)

    def _check(self, fn: cst.FunctionDef) -> None:
        params = {p.name.value for p in all_params(fn)}
        body = list(walk(fn.body, into_scopes=False))
        budgeted = any(words(p) & _BUDGET for p in params) or any(
            isinstance(n, cst.Name) and words(n.value) & _BUDGET for n in body)
        sorted_names: dict[str, cst.CSTNode] = {}
        picks: set[str] = set()
        for n in body:
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                target = n.targets[0].target.value
                operand = _sorted_values(n.value)
                if operand is not None and not _public(operand) and not words(target) & _PUBLIC:
                    sorted_names[target] = n
                elif target in sorted_names and target not in _names(n.value):
                    sorted_names.pop(target)  # rebound to something else
                if _mechanism_pick(n.value, budgeted):
                    picks.add(target)
            elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "sort" \
                    and isinstance(n.func.value, cst.Name) and not n.args:
                name = n.func.value.value
                if not words(name) & _PUBLIC:
                    sorted_names[name] = n  # ``K.sort()`` in place
        if not sorted_names or not picks:
            return
        skip: set[int] = set()
        for n in body:
            if isinstance(n, cst.Call) and _last(n) in _DRAWS:
                skip.update(id(m) for m in walk(n))
            elif isinstance(n, cst.SimpleStatementLine) and _interval(n, sorted_names, picks):
                skip.update(id(m) for m in walk(n))
        for n in body:
            if not isinstance(n, cst.Subscript) or id(n) in skip or not isinstance(n.value, cst.Name) \
                    or n.value.value not in sorted_names or len(n.slice) != 1:
                continue
            index = n.slice[0].slice
            if not isinstance(index, cst.Index):
                continue
            chosen = index.value
            if isinstance(chosen, cst.Name) and chosen.value in picks or _mechanism_pick(chosen, budgeted):
                self.report(
                    n,
                    f"`{self.ctx.module.code_for_node(n)}` releases the record at the rank a selection mechanism "
                    "picked among the sorted private values: the output is always an exact value of the data and "
                    "its support changes with one record; run the mechanism over a public grid of candidates "
                    "(or draw uniformly inside the chosen interval between order statistics)",
                )
