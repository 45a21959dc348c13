"""DP204: the value set or range of the private data shapes what a DP mechanism releases."""
from __future__ import annotations

import ast
import re

import libcst as cst
from libcst.metadata import PositionProvider

from dpcheck.analysis.off_switch import behind_off_switch
from dpcheck.analysis.dataindex import index_for
from dpcheck.analysis import dp_output
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.partitionkeys import partition_keys
from dpcheck.analysis.domainflow import _NOT_MECHANISM, evaluation
from dpcheck.analysis.domainflow import (
    BUDGET_WORDS,
    DRAWS,
    MECHANISM_WORDS,
    NOISE_DRAWS,
    Flow,
    Scope,
    body_of,
    module_records,
    budget_refs,
    function_flow,
    is_draw,
    is_mechanism,
    noisy_refs,
    reads_labels,
    statements,
)
from dpcheck.analysis.releaseless import scored_truth
from dpcheck.analysis.syntax import (
    COMPREHENSIONS, call_name, call_params, dotted, param_names, target_names, value_refs, walk, words,
)
from dpcheck.codetext import code_and_fstrings
from dpcheck.rule import Rule
from dpcheck.analysis.attackscope import attack_scope

_READ_TEXT = re.compile(
    r"\b(?:unique|value_counts|nunique|drop_duplicates|set|Counter|min|max|amin|amax|nanmin|nanmax|median|"
    r"quantile|percentile|histogram|bincount|groupby)\s*\(|\.categories\b"
    r"|(?:Label|Ordinal|OneHot)Encoder|LabelBinarizer|KBinsDiscretizer"
    r"|\]\s*(?:\+=|=(?!=))"  # an item assignment: a mapping filled from the records
    r"|\bnot\s+in\b|\bif\s+not\s"  # ``if v not in seen: seen.append(v)``: an alphabet collected from the records
)


_ARITHMETIC = frozenset({"log", "log2", "log10", "log1p", "sqrt", "exp", "ceil", "floor", "float", "int", "abs"})


def _delta_threshold(fn: Scope) -> bool:
    """A function branching on a ``delta``-dependent value (``if noisy < 2 * log(2 / delta) / eps``): a
    stability-based histogram or choice, where releasing only observed keys above the threshold is
    (epsilon, delta)-DP by design."""
    if not isinstance(fn, cst.FunctionDef):
        return False
    named = {n for n in value_refs(fn.params) if "delta" in words(n)}
    if not named:
        return False
    for _ in range(2):
        for stmt in statements(fn):
            if isinstance(stmt, cst.Assign) and value_refs(stmt.value) & named and all(
                    call_name(c) in _ARITHMETIC or is_draw(c) for c in walk(stmt.value) if isinstance(c, cst.Call)):
                named |= {n for t in stmt.targets for n in target_names(t.target)}
    params = {n for n in value_refs(fn.params) if "delta" in words(n)}
    derived = named - params

    def threshold(test: cst.BaseExpression) -> bool:  # not an input check such as ``delta < 0``
        return bool(value_refs(test) & derived) or any(
            isinstance(c, cst.Call) and call_name(c) in _ARITHMETIC and value_refs(c) & params for c in walk(test))

    return any(isinstance(n, (cst.If, cst.While)) and threshold(n.test) for n in walk(fn.body, into_scopes=False))


def _noise_names(fn: Scope) -> set[str]:
    """Names holding drawn noise: assigned a draw or mechanism call, or filled with one (``noise.append(d)``)."""
    out: set[str] = set()
    for _ in range(2):
        for stmt in statements(fn):
            value, targets = None, set()
            if isinstance(stmt, cst.Assign):
                value, targets = stmt.value, {n for t in stmt.targets for n in target_names(t.target)}
            elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and call_name(stmt.value) == "append" \
                    and isinstance(stmt.value.func, cst.Attribute) and stmt.value.args:
                value, targets = stmt.value.args[0].value, {dotted(stmt.value.func.value) or ""}
            if value is None or not targets:
                continue
            if any(isinstance(n, cst.Call) and (is_draw(n) or is_mechanism(n)) and not _split_mask(n)
                   for n in walk(value, into_scopes=False)) or value_refs(value) & out:
                out |= targets - {""}
    return out


def _mechanism_named(name: str) -> bool:
    pieces = words(name)
    return bool(pieces & MECHANISM_WORDS) and not pieces & _NOT_MECHANISM


def _functions(node: cst.CSTNode) -> list[cst.FunctionDef]:
    return [n for n in walk(node) if isinstance(n, cst.FunctionDef)]


def _value_slot(index: int, arg: cst.Arg) -> bool:
    """The argument a draw centres on or a mechanism privatises (first positional, ``loc=``)."""
    if arg.keyword is not None:
        return arg.keyword.value in ("loc", "mean", "mu", "value", "values", "x")
    return index == 0

    tables = {t.target.value.value for t in stmt.targets
              if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name)}
    if not tables:
        return False
    for loop in walk(fn):
        if not isinstance(loop, cst.For):
            continue
        it = loop.iter
        base = it.func.value if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) \
            and it.func.attr.value in {"items", "iteritems", "keys", "iterkeys"} else it
        if not (isinstance(base, cst.Name) and base.value in tables):
            continue
        if any(isinstance(n, cst.Call) and call_name(n) in _KEY_DRAWS for n in walk(loop.body)):
            return True
    return False


def _schema_only(call: cst.Call, param: str) -> bool:
    """Does the draw read ``param`` only for its schema (``np.random.laplace(0, b, value.shape)``,
    ``size=len(value)``)? A noise array shaped like the value is sized by it, not calibrated to it:
    the value handed in is the statistic being noised, not a domain (S2 b96). Only for a range read: the
    shape of a set read (``np.unique``) is the alphabet, which the noise array then reveals."""
    text = cst.Module([]).code_for_node(call)
    if not re.search(rf"\b{re.escape(param)}\b", text):
        return False
    rest = re.sub(rf"\b{re.escape(param)}\s*\.\s*(?:shape|size|ndim|dtype)\b"
                  rf"|\b(?:len|shape|size|ndim)\(\s*{re.escape(param)}\s*\)", "", text)
    return re.search(rf"(?<!\.)\b{re.escape(param)}\b", rest) is None


class _DropDraws(cst.CSTTransformer):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return cst.Name("_") if is_draw(original) or is_mechanism(original) else updated


class _DropReference(cst.CSTTransformer):
    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return cst.Name("_") if words(original.value) & _REFERENCE_WORDS else updated


#: a value returned for comparison with the noisy one (a simulation's ground truth), not released
_REFERENCE_WORDS = frozenset({"original", "true", "truth", "actual", "exact", "ground", "groundtruth"})


def _without_reference(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.visit(_DropReference())  # type: ignore[return-value]


def _without_draws(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` with its noise draws replaced by a placeholder (their sizes are not returned)."""
    return expr.visit(_DropDraws())  # type: ignore[return-value]


def _row_fields(value: cst.BaseExpression) -> cst.BaseExpression:
    """A record (``{...}``, ``dict(k=...)``) with only its fields that read a budget; anything else as is."""
    if isinstance(value, cst.Dict):
        return value.with_changes(elements=[el for el in value.elements
                                            if not isinstance(el, cst.DictElement) or budget_refs(el.value)])
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict" \
            and all(a.keyword is not None for a in value.args):
        return value.with_changes(args=[a for a in value.args if budget_refs(a.value)])
    return value


class _DropUnbudgetedFields(cst.CSTTransformer):
    """Keeps, of a row appended to a results list (``rows.append(dict(eps=eps, n=int(n)))``), only the
    fields that read a budget, and drops reports (an f-string, ``print``/logging): they store or show the
    budget beside other values, they compute nothing from them together. A record given to a call (a
    mechanism's parameters) is kept whole."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if call_name(original) in _REPORTS:
            return cst.Name("_")
        if call_name(original) in ("append", "extend", "insert") and isinstance(original.func, cst.Attribute):
            # what was filled in before is not combined with this row either
            rows = [cst.Element(_row_fields(a.value)) for a in updated.args]
            return cst.Tuple(rows) if rows else cst.Name("_")
        return updated

    def leave_List(self, original: cst.List, updated: cst.List) -> cst.BaseExpression:
        """``records = [{"eps": eps, "error": err}]``: a table started with its first rows."""
        rows = [el.value for el in updated.elements]
        if rows and all(_row_fields(r) is not r for r in rows):
            return updated.with_changes(elements=[el.with_changes(value=_row_fields(el.value)) for el in updated.elements])
        return updated

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.BaseExpression:
        return cst.SimpleString('""')


#: draws that pick uniformly among positions or classes (no weights)
_UNIFORM_PICKS = frozenset({"choice", "choices", "randint", "integers", "randperm", "permutation"})

def _split_mask(call: cst.Call) -> bool:
    """(QF b90) ``np.random.binomial(1, p=0.9, size=len(users))``: a Bernoulli mask with a literal
    probability (a train/test split or a subsample), not a randomised response whose ``p`` reads a budget."""
    if call_name(call) not in ("binomial", "bernoulli"):
        return False
    prob = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "p"), None)
    if prob is None:
        positional = [a for a in call.args if a.keyword is None]
        index = 1 if call_name(call) == "binomial" else 0
        prob = positional[index].value if len(positional) > index else None
    return isinstance(prob, (cst.Float, cst.Integer)) or isinstance(prob, cst.BinaryOperation) \
        and all(isinstance(n, (cst.Float, cst.Integer, cst.BinaryOperation)) or not isinstance(n, cst.BaseExpression)
                for n in walk(prob))


#: calls that only show or log what they are given
_REPORTS = frozenset({"print", "info", "debug", "warning", "warn", "set_description", "set_postfix"})


class _ScoreOnly(cst.CSTTransformer):
    """(QF b90) ``np.exp(-epsilon * loss / (2 * sens))``: the exponential mechanism's weight. Its score
    (``loss``) depends on the records by design; only the exponent's denominators (the sensitivity) stay,
    beside the budget, so a data-derived sensitivity is still combined with it."""

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if call_name(original) != "exp" or len(original.args) != 1 or not budget_refs(original.args[0].value):
            return updated
        budgets = sorted(budget_refs(original.args[0].value))
        try:
            kept: list[cst.BaseExpression] = [cst.parse_expression(budgets[0])]
        except Exception:  # noqa: BLE001 - a budget spelled in a way that is no expression
            return updated
        kept += [n.right for n in walk(updated.args[0].value)
                 if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)]
        kept += [side for n in walk(updated.args[0].value)
                 if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply)
                 for side in (n.left, n.right) if isinstance(side, cst.Name) and _EXTREME.search(side.value)]
        return cst.Tuple([cst.Element(k) for k in kept])


#: a name for an extreme or a range of the values, such as ``max_z`` in ``exp(-2 * max_z * eps)``: a bound
#: on the scores, not a score, so the flow still decides whether the data gave it (FedKT's accountant)
_EXTREME = re.compile(r"(?:^|_)(?:max|min|maximum|minimum|range|span|bound|upper|lower)(?:_|$)", re.IGNORECASE)


def _without_scores(expr: cst.BaseExpression) -> cst.BaseExpression:
    if not any(isinstance(n, cst.Call) and call_name(n) == "exp" for n in walk(expr)):
        return expr
    return expr.visit(_ScoreOnly())  # type: ignore[return-value]


def _budget_fields(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` without the record fields and reports that read no budget (``expr`` itself when it has none)."""
    if not any(isinstance(n, (cst.List, cst.FormattedString)) or isinstance(n, cst.Call)
               and call_name(n) in _REPORTS | {"append", "extend", "insert"} for n in walk(expr)):
        return expr
    return expr.visit(_DropUnbudgetedFields())  # type: ignore[return-value]


def _kept(srcs: set[cst.BaseExpression], flow: Flow, part: cst.BaseExpression) -> set[cst.BaseExpression]:
    """The reads of ``srcs`` that ``part`` (a copy of the statement's value, maybe) still carries."""
    found = flow.sources(part)
    texts = {_EMPTY.code_for_node(f) for f in found}
    return {s for s in srcs if s in found or _EMPTY.code_for_node(s) in texts}


_EMPTY = cst.Module([])


#: setters that configure a mechanism object (diffprivlib's older API, hand-written mechanism classes):
#: what they are given is the mechanism's sensitivity, output range or candidate set
_CONFIGURE = frozenset({
    "set_sensitivity", "set_bounds", "set_utility", "set_domain", "set_candidates", "set_range", "set_labels",
    "set_alphabet",
})


def _configures_mechanism(call: cst.Call) -> bool:
    """``mech.set_sensitivity(s)``, ``Laplace().set_epsilon(e).set_bounds(lo, hi)``: the receiver is a
    mechanism (named so, or built by a mechanism-named call) or the setter names a sensitivity/utility."""
    name = call_name(call)
    if name not in _CONFIGURE or not isinstance(call.func, cst.Attribute):
        return False
    if name in ("set_sensitivity", "set_utility"):
        return True
    receiver: cst.BaseExpression = call.func.value
    while True:
        if isinstance(receiver, cst.Call):
            if is_mechanism(receiver) or _mechanism_named(call_name(receiver)):
                return True
            if not isinstance(receiver.func, cst.Attribute):
                return False
            receiver = receiver.func.value
        else:
            text = dotted(receiver) or ""
            return any(_mechanism_named(part) for part in text.split("."))


def _draw_scale(call: cst.Call) -> cst.BaseExpression | None:
    """The scale argument of a noise draw (``laplace(loc, scale, size)``, ``normal(0, scale=s)``), else None."""
    if call_name(call) not in ("laplace", "normal", "gumbel", "gauss", "normalvariate"):
        return None
    for i, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None:
            if arg.keyword.value in ("scale", "sigma", "b", "std"):
                return arg.value
        elif i == 1:
            return arg.value
    return None


def _size_slot(index: int, arg: cst.Arg) -> bool:
    """``size=``/``shape=`` of a draw, or its third positional argument."""
    if arg.keyword is not None:
        return arg.keyword.value in ("size", "shape")
    return index == 2


#: a called name (or its receiver) with one of these words releases what it is given; an ``epsilon`` alone
#: is also an SVR margin or an RBF shape parameter
_RELEASE_WORDS = MECHANISM_WORDS | frozenset({
    "dp", "private", "privacy", "priv", "anonymize", "anonymise", "anonymized", "sanitize", "sanitise", "budget",
})


def _given_budget(call: cst.Call, flow: Flow) -> bool:
    """``Mechanism.anonymize_sum_with_budget(value, lower, upper, epsilon)``: a DP-named call handed a
    privacy budget (a budget-named name not itself read from the data) releases its other arguments."""
    return bool(words(dotted(call.func) or call_name(call) or "") & _RELEASE_WORDS) and any(
        isinstance(arg.value, cst.Name) and words(arg.value.value) & BUDGET_WORDS
        and arg.value.value not in flow.taint for arg in call.args)


def _budget_argument(call: ast.Call, read_names: set[str]) -> bool:
    """The gate's side of ``_given_budget``: a DP-named call given a budget-named name and a name assigned
    from a domain read (``read_names``)."""
    func, chain = call.func, []
    while isinstance(func, ast.Attribute):
        chain.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        chain.append(func.id)
    if not any(words(n) & _RELEASE_WORDS for n in chain):
        return False
    names = {v.id for v in (*call.args, *(k.value for k in call.keywords)) if isinstance(v, ast.Name)}
    return any(words(n) & BUDGET_WORDS for n in names) and not names.isdisjoint(read_names)


def _reads() -> frozenset[str]:
    from dpcheck.analysis import domainflow

    return domainflow._SET_FUNCS | domainflow._SET_METHODS | domainflow._RANGE_FUNCS | domainflow._HIST_FUNCS


def _file_releases(facts: AstFacts, reads: frozenset[str]) -> bool:
    """The file draws noise, calls a mechanism-named function, or gives a DP-named helper the budget
    beside a domain read: without one of these no domain read can shape a release in it."""
    if any(facts.call_lasts(c) & DRAWS or any(words(n) & MECHANISM_WORDS for n in facts.call_lasts(c))
           for c in facts.calls):
        return True
    if _mechanism_functions(facts):
        return True
    read_names = _read_names(facts, reads)
    return bool(read_names) and any(_budget_argument(c, read_names) for c in facts.calls)


def _filled_mapping(facts: AstFacts) -> bool:
    """An empty mapping (``{}``, ``Counter()``, ``defaultdict(int)``) and an item assignment: a histogram
    keyed by what the records hold may be built (``domainflow._keyed_by_records``)."""
    def empty(value: ast.AST) -> bool:
        if isinstance(value, ast.Dict):
            return not value.keys
        return isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) and (
            getattr(value.func, "id", None) or getattr(value.func, "attr", "")) in (
            "dict", "Counter", "OrderedDict", "defaultdict")

    collected = any(isinstance(n.value, ast.List) and not n.value.elts or isinstance(n.value, ast.Call)
                    and isinstance(n.value.func, ast.Name) and n.value.func.id in ("set", "list") and not n.value.args
                    for n in facts.nodes(ast.Assign))
    if collected and facts.called & {"add", "append"}:
        return True  # an alphabet collected while reading the records (``domainflow._deduplicated_appends``)
    if not any(empty(n.value) for n in facts.nodes(ast.Assign)):
        return False
    return any(isinstance(t, ast.Subscript) for n in facts.nodes(ast.Assign) for t in n.targets) or any(
        isinstance(n.target, ast.Subscript) for n in facts.nodes(ast.AugAssign))


def _mechanism_functions(facts: AstFacts) -> bool:
    """A mechanism-named function taking a budget-named parameter (``randomized_response(x, epsilon)``)."""
    return any(_mechanism_named(fn.name) and any(words(a.arg) & BUDGET_WORDS for a in (*fn.args.args, *fn.args.kwonlyargs))
               for fn in facts.functions)


def _read_names(facts: AstFacts, reads: frozenset[str]) -> set[str]:
    """Names assigned from an expression holding a call named in ``reads``."""
    out: set[str] = set()
    for node in facts.nodes(ast.Assign):
        if any(isinstance(n, ast.Call) and facts.call_lasts(n) & reads for n in ast.walk(node.value)):
            out |= {t.id for target in node.targets for t in ast.walk(target) if isinstance(t, ast.Name)}
    return out


#: role-first spellings (u39-3): the value set / range / vocabulary of the private records sizes or
#: names what a DP mechanism releases; written before reading the benchmark's misses, each with a twin
_ROLE_INVALID = (
    # (q3 h46) a bin count parameter spread over the data's own range: the released labels are its edges
    """
import numpy as np
def noisy_histogram(values, epsilon, n_bins: int = 20):
    counts, edges = np.histogram(values, bins=n_bins)  # <-
    return {f"{edges[i]:.2f}..{edges[i + 1]:.2f}": c + np.random.laplace(0, 1 / epsilon)
            for i, c in enumerate(counts)}
""",
    # (q3 h46) per-column bounds read off the training features, handed to a helper object's method whose
    # Laplace draw is scaled by each bound's width (input perturbation)
    """
import numpy as np
class Noiser:
    @staticmethod
    def perturb_columns(X, mult, ranges=None):
        out = X.astype(float)
        for j in range(X.shape[1]):
            width = ranges[j][1] - ranges[j][0] if ranges else 1.0
            out[:, j] += np.random.laplace(0.0, mult * width, size=len(X))
        return out
class Pipeline:
    def __init__(self):
        self.noiser = Noiser()
    def private_fit(self, X_train, y_train, epsilon):
        ranges = [(X_train[:, j].min(), X_train[:, j].max()) for j in range(X_train.shape[1])]  # <-
        return self.noiser.perturb_columns(X_train, 1.0 / epsilon, ranges)
""",
    # (q3 h46) the same through a module function: the bounds a wrapper takes from the data scale a normal draw
    """
import numpy as np
def jitter(values, sigma_per_unit, span):
    lo, hi = span
    return values + np.random.normal(0, sigma_per_unit * (hi - lo), size=values.shape)
def release_incomes(incomes, epsilon, delta):
    span = (np.min(incomes), np.max(incomes))  # <-
    return jitter(incomes, np.sqrt(2 * np.log(1.25 / delta)) / epsilon, span)
""",
    # (g2 h40) twin of the noise column: the records' own column
    """
import numpy as np
def shift_cases(data, epsilon):
    noise = np.random.laplace(0, 1 / epsilon, len(data))
    data["shifted"] = data["start"] + noise
    lo = data.groupby("case")["start"].min()  # <-
    return data["shifted"] - lo.min()
""",
    # a mechanism object configured with the data's own spread (g2 h40): the setter is the sink
    """
from diffprivlib import mechanisms
def release_durations(durations, epsilon):
    mech = mechanisms.LaplaceBoundedDomain()
    mech.set_epsilon(epsilon)
    mech.set_sensitivity(max(durations) - min(durations))  # <-
    return [mech.randomise(d) for d in durations]
""",
    """
from diffprivlib import mechanisms
def shift_trace(start_times, epsilon):
    low = min(start_times)  # <-
    mech = mechanisms.LaplaceBoundedDomain().set_epsilon(epsilon).set_sensitivity(1.0)
    mech.set_bounds(low, 0.0)
    return mech.randomise(0.0)
""",
    # a helper of the module configures the mechanism with what it is handed: the read is one call away
    """
from diffprivlib import mechanisms
class Perturber:
    def _calibrate(self, mech, spread, floor):
        mech.set_sensitivity(spread).set_bounds(floor, floor + spread)
        return mech
    def run(self, gaps, epsilon):
        mech = mechanisms.LaplaceBoundedDomain().set_epsilon(epsilon)
        spread = max(gaps) - min(gaps)  # <-
        mech = self._calibrate(mech, spread, 0.0)
        return [mech.randomise(g) for g in gaps]
""",
    # an alphabet collected while reading the records (g2 h40): a set filled with each event's
    # activity, whose ordered pairs are the candidate relations that get noise
    """
import itertools
import numpy as np
def relation_scores(events, epsilon):
    seen = set()
    for row in events:
        seen.add(row["activity"])  # <-
    candidates = list(itertools.permutations(seen, 2))
    return {c: np.random.laplace(0, 2.0 / epsilon) for c in candidates}
""",
    # a list deduplicated by a membership test: the item ids that occur are the exponential
    # mechanism's output set
    """
import numpy as np
def pick_item(baskets, utility, epsilon):
    items = []
    for basket in baskets:
        for it in basket:
            if it not in items:
                items.append(it)  # <-
    w = np.exp(epsilon * np.array([utility(i) for i in items]) / 2)
    return items[np.random.choice(len(items), p=w / w.sum())]
""",
    # a codebook: every key that occurs gets the next integer code; the code count sizes the noisy vector
    """
import numpy as np
def coded_counts(log, epsilon):
    code = {}
    for case in log:
        for step in case:
            if step["name"] not in code:
                code[step["name"]] = len(code)  # <-
    counts = np.zeros(len(code))
    for case in log:
        for step in case:
            counts[code[step["name"]]] += 1
    return counts + np.random.laplace(0, 1 / epsilon, len(code))
""",
    # plain Python: the largest item id in the transactions sizes the noisy count vector (Laplace as
    # the difference of two exponential draws)
    """
import random
def item_counts(transactions, epsilon):
    n_items = max(max(t) for t in transactions) + 1  # <-
    counts = [0] * n_items
    for t in transactions:
        for i in t:
            counts[i] += 1
    return [c + random.expovariate(epsilon) - random.expovariate(epsilon) for c in counts]
""",
    # the exponential mechanism's candidates are the distinct private values
    """
import numpy as np
def exponential_mechanism(candidates, utility, epsilon, sensitivity=1.0):
    scores = np.array([utility(c) for c in candidates])
    p = np.exp(epsilon * scores / (2 * sensitivity)); p /= p.sum()
    return candidates[np.random.choice(len(candidates), p=p)]
def private_median(values, epsilon):
    candidates = sorted(set(values))  # <-
    return exponential_mechanism(candidates, lambda c: -abs(sum(v < c for v in values) - len(values) / 2), epsilon)
""",
    # histogram edges at the data's own quantiles, released beside the noisy counts
    """
import numpy as np
def dp_histogram(x, epsilon, k=10):
    edges = np.quantile(x, np.linspace(0, 1, k + 1))
    counts, _ = np.histogram(x, bins=edges)  # <-
    return counts + np.random.laplace(0, 1.0 / epsilon, size=counts.shape), edges
""",
    # a helper returns the domain read from the records; the noisy marginals are sized by it
    """
import numpy as np
def get_domain(df):
    return {c: int(df[c].max()) + 1 for c in df.columns}  # <-
def noisy_marginals(df, epsilon):
    out = {}
    for c, size in get_domain(df).items():
        counts = np.bincount(df[c], minlength=size)
        out[c] = counts + np.random.laplace(0, 1 / epsilon, size)
    return out
""",
)
_ROLE_VALID = (
    # (q3 h46) a utility metric's entropy over a bin count: the edges are thrown away, the counts have the given length
    """
import numpy as np
def entropy(vals, n_bins=30):
    counts, _ = np.histogram(vals, bins=n_bins)
    probs = (counts + 1e-10) / (counts.sum() + 1e-9)
    return float(-np.sum(probs * np.log2(probs)))
def release_ages(ages, epsilon):
    noisy = ages + np.random.laplace(0, 1 / epsilon, len(ages))
    return noisy, entropy(ages) - entropy(noisy)
""",
    # (q3 h46) twin of the bin count: the same count over a public range, so the edges are public
    """
import numpy as np
def noisy_histogram(values, epsilon, n_bins: int = 20, lower=0.0, upper=120.0):
    counts, edges = np.histogram(values, bins=n_bins, range=(lower, upper))
    return {f"{edges[i]:.2f}..{edges[i + 1]:.2f}": c + np.random.laplace(0, 1 / epsilon)
            for i, c in enumerate(counts)}
""",
    # (q3 h46) ordinary ML: a histogram of a model's losses for a plot, no budget
    """
import numpy as np
def loss_histogram(losses, n_bins: int = 30):
    counts, edges = np.histogram(losses, bins=n_bins)
    return counts, edges
""",
    # (q3 h46) twin of the perturbed columns: the ranges are the schema's, handed in by the caller
    """
import numpy as np
class Noiser:
    @staticmethod
    def perturb_columns(X, mult, ranges=None):
        out = X.astype(float)
        for j in range(X.shape[1]):
            width = ranges[j][1] - ranges[j][0] if ranges else 1.0
            out[:, j] += np.random.laplace(0.0, mult * width, size=len(X))
        return out
class Pipeline:
    def __init__(self, schema):
        self.noiser = Noiser()
        self.schema = schema
    def private_fit(self, X_train, y_train, epsilon):
        ranges = [(self.schema[j]["lo"], self.schema[j]["hi"]) for j in range(X_train.shape[1])]
        X = np.clip(X_train, [r[0] for r in ranges], [r[1] for r in ranges])
        return self.noiser.perturb_columns(X, 1.0 / epsilon, ranges)
""",
    # (q3 h46) twin of the jitter: public bounds, clipped to
    """
import numpy as np
def jitter(values, sigma_per_unit, span):
    lo, hi = span
    return np.clip(values, lo, hi) + np.random.normal(0, sigma_per_unit * (hi - lo), size=values.shape)
def release_incomes(incomes, epsilon, delta, lower=0.0, upper=100.0):
    return jitter(incomes, np.sqrt(2 * np.log(1.25 / delta)) / epsilon, (lower, upper))
""",
    # (q3 h46) ordinary ML: the data's range sets an augmentation's noise width (no budget anywhere)
    """
import numpy as np
def augment(batch, strength, span):
    return batch + np.random.normal(0, strength * (span[1] - span[0]), size=batch.shape)
def make_views(images, strength=0.05):
    span = (images.min(), images.max())
    return [augment(images, strength, span) for _ in range(2)]
""",
    # (g2 h40) pairs sampled at random and collected without repeats (negative edges for an attack): drawn
    # values, not the records' alphabet
    """
import numpy as np
def sample_non_edges(edges, n_nodes, k, epsilon, rng):
    seen = set()
    while len(seen) < k:
        a = int(rng.integers(0, n_nodes))
        b = int(rng.integers(0, n_nodes))
        pair = (min(a, b), max(a, b))
        if pair in edges:
            continue
        seen.add(pair)
    return sorted(seen), np.random.laplace(0, 1 / epsilon)
""",
    # (g2 h40) the extremes of the drawn noise (a column named for it)
    """
import numpy as np
def shift_cases(data, epsilon):
    noise = np.random.laplace(0, 1 / epsilon, len(data))
    data["cumm_noise"] = noise.cumsum()
    span = data.groupby("case")["cumm_noise"].min()
    return data["start"] + data["cumm_noise"] - span.min()
""",
    # twins of the configured mechanisms (g2 h40): the spread is the public range
    """
from diffprivlib import mechanisms
def release_durations(durations, epsilon, lower, upper):
    mech = mechanisms.LaplaceBoundedDomain()
    mech.set_epsilon(epsilon)
    mech.set_sensitivity(upper - lower)
    return [mech.randomise(min(max(d, lower), upper)) for d in durations]
""",
    """
from diffprivlib import mechanisms
class Perturber:
    def _calibrate(self, mech, spread, floor):
        mech.set_sensitivity(spread).set_bounds(floor, floor + spread)
        return mech
    def run(self, gaps, epsilon, bounds):
        mech = mechanisms.LaplaceBoundedDomain().set_epsilon(epsilon)
        mech = self._calibrate(mech, bounds[1] - bounds[0], bounds[0])
        return [mech.randomise(g) for g in gaps]
""",
    # the data's maximum handed to a helper that noises it: a DP estimate of the maximum, not a bound
    """
import numpy as np
def add_noise(value, scale):
    return value + np.random.laplace(0, scale)
def noisy_peak(x, epsilon, width):
    scale = width / epsilon
    peak = add_noise(np.max(x), scale)
    return peak
""",
    # a plot's axis spine bounds and a records frame carried through a helper that noises a count
    """
import numpy as np
import matplotlib.pyplot as plt
def noisy_total(frame, epsilon):
    return len(frame) + np.random.laplace(0, 1 / epsilon)
def report(frame, epsilon):
    frame, top = clean(frame), frame["v"].max()
    fig, ax = plt.subplots()
    ax.spines["left"].set_bounds(0, top)
    return noisy_total(frame, epsilon)
""",
    # twins of the collected alphabets (g2 h40): the activities are a public parameter
    """
import itertools
import numpy as np
def relation_scores(events, activities, epsilon):
    candidates = list(itertools.permutations(activities, 2))
    return {c: np.random.laplace(0, 2.0 / epsilon) for c in candidates}
""",
    """
import numpy as np
def pick_item(baskets, utility, categories, epsilon):
    items = []
    for it in categories:
        if it not in items:
            items.append(it)
    w = np.exp(epsilon * np.array([utility(i) for i in items]) / 2)
    return items[np.random.choice(len(items), p=w / w.sum())]
""",
    """
import numpy as np
def coded_counts(log, schema, epsilon):
    code = {}
    for name in schema:
        code[name] = len(code)
    counts = np.zeros(len(code))
    for case in log:
        for step in case:
            counts[code[step["name"]]] += 1
    return counts + np.random.laplace(0, 1 / epsilon, len(code))
""",
    # the noisy outputs deduplicated (randomised values, not the records), and the sizes of the batches seen
    """
import numpy as np
def distinct_noisy(values, epsilon):
    released = []
    for v in values:
        y = v + np.random.laplace(0, 1 / epsilon)
        if y not in released:
            released.append(y)
    return released
""",
    """
import torch
def train(model, loader, epochs, lr=1e-3, eps=1e-8):
    opt = torch.optim.Adam(model.parameters(), lr=lr, eps=eps)
    sizes = set()
    for _ in range(epochs):
        for xb, yb in loader:
            sizes.add(len(xb))
            loss = torch.nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad(); loss.backward(); opt.step()
    return model, sizes
""",
    # twin: the item universe is a parameter
    """
import random
def item_counts(transactions, epsilon, n_items):
    counts = [0] * n_items
    for t in transactions:
        for i in t:
            counts[i] += 1
    return [c + random.expovariate(epsilon) - random.expovariate(epsilon) for c in counts]
""",
    # twin: the candidates are a public grid
    """
import numpy as np
def exponential_mechanism(candidates, utility, epsilon, sensitivity=1.0):
    scores = np.array([utility(c) for c in candidates])
    p = np.exp(epsilon * scores / (2 * sensitivity)); p /= p.sum()
    return candidates[np.random.choice(len(candidates), p=p)]
def private_median(values, epsilon, lower, upper):
    candidates = np.linspace(lower, upper, 1000)
    return exponential_mechanism(candidates, lambda c: -abs(sum(v < c for v in values) - len(values) / 2), epsilon)
""",
    # twin: equal-width edges over a public range
    """
import numpy as np
def dp_histogram(x, epsilon, lower, upper, k=10):
    edges = np.linspace(lower, upper, k + 1)
    counts, _ = np.histogram(x, bins=edges)
    return counts + np.random.laplace(0, 1.0 / epsilon, size=counts.shape), edges
""",
    # twin: the domain sizes come from the schema
    """
import numpy as np
def noisy_marginals(df, schema, epsilon):
    out = {}
    for c in df.columns:
        size = schema[c]["size"]
        counts = np.bincount(df[c], minlength=size)
        out[c] = counts + np.random.laplace(0, 1 / epsilon, size)
    return out
""",
    # the target's class count sizes a DP-SGD classifier's output layer: a label set, not a release
    """
import numpy as np
import torch
from opacus import PrivacyEngine
def train(X, y, model_fn, noise_multiplier):
    num_classes = len(np.unique(y))
    model = model_fn(X.shape[1], num_classes)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    return PrivacyEngine().make_private(module=model, optimizer=opt, data_loader=None,
                                        noise_multiplier=noise_multiplier, max_grad_norm=1.0)
""",
    # ordinary code: Gaussian weight init and a kernel's sigma in a file that also runs a DP mechanism
    """
import random
import numpy as np
def init_weights(n, sigma=0.1):
    return [random.gauss(0, sigma) for _ in range(n)]
def rbf(x, y, sigma):
    return np.exp(-np.sum((x - y) ** 2) / (2 * sigma ** 2))
def release_count(records, epsilon):
    return len(records) + np.random.laplace(0, 1 / epsilon)
""",
)


#: constructors of an evenly spaced grid between given end points
_GRIDS = frozenset({"linspace", "arange", "logspace", "geomspace"})
_EXTREMES = frozenset({"min", "max", "amin", "amax", "nanmin", "nanmax"})


def _home(functions: list[Scope], src: cst.CSTNode) -> Scope:
    """The innermost of ``functions`` (the module first) whose body holds ``src``."""
    home = functions[0]
    for fn in functions[1:]:
        if any(m is src for m in walk(body_of(fn))):
            home = fn
    return home


def _grid_extreme(fn: Scope, src: cst.BaseExpression) -> bool:
    """``np.max(radii)`` where ``fn`` assigns ``radii`` only grids (``np.linspace(r0, r1, n)``): the extreme
    is an end point the grid was given, not a value of the records (a read inside the end points is its
    own finding)."""
    if not (isinstance(src, cst.Call) and call_name(src) in _EXTREMES):
        return False
    positional = [a.value for a in src.args if a.keyword is None and not a.star]
    subject = src.func.value if isinstance(src.func, cst.Attribute) and not positional else (positional[0] if positional else None)
    if not isinstance(subject, cst.Name):
        return False
    values = [n.value for n in walk(body_of(fn)) if isinstance(n, cst.Assign) and n.value is not None
              and any(isinstance(t.target, cst.Name) and t.target.value == subject.value for t in n.targets)]
    params = {p.name.value for p in fn.params.params} if isinstance(fn, cst.FunctionDef) else set()
    return bool(values) and subject.value not in params and all(
        isinstance(v, cst.Call) and call_name(v) in _GRIDS for v in values)


def _index_box(stmt: cst.Assign | cst.AnnAssign | None, src: cst.BaseExpression) -> bool:
    """``lo = np.maximum(np.floor(pts.min(axis=0) - pad), 0).astype(int)`` / ``hi = np.minimum(..., shape - 1)``:
    the extreme is clamped to an array's index range and cast to int, a crop box for rasterizing into a
    grid whose size is given; it sets no alphabet, bin or scale of a release."""
    if stmt is None or not (isinstance(src, cst.Call) and call_name(src) in _EXTREMES):
        return False
    value = stmt.value
    if isinstance(value, cst.Call) and call_name(value) == "astype" and isinstance(value.func, cst.Attribute) \
            and value.args and (dotted(value.args[0].value) or "").split(".")[-1] in {"int", "int32", "int64", "intp"}:
        value = value.func.value
    else:
        return False
    if not (isinstance(value, cst.Call) and call_name(value) in {"maximum", "minimum"} and len(value.args) == 2):
        return False
    first, other = value.args[0].value, value.args[1].value
    if not any(m is src for m in walk(first)):
        return False
    if call_name(value) == "maximum":
        return isinstance(other, cst.Integer) and other.value == "0"
    return any(isinstance(m, (cst.Name, cst.Attribute)) and "shape" in (dotted(m) or "").lower() for m in walk(other))


def _assignment_holding(fn: Scope, read: cst.CSTNode) -> cst.Assign | cst.AnnAssign | None:
    """The innermost assignment in ``fn`` whose value holds ``read``."""
    found: cst.Assign | cst.AnnAssign | None = None
    for node in walk(body_of(fn)):
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None \
                and any(m is read for m in walk(node.value)):
            found = node
    return found


class PrivateDomain(Rule):
    id = "DP204"
    name = "private-domain"
    category = "metadata"
    severity = "error"
    summary = "the set of values or the range of the private data shapes the DP release (candidates, bins, keys, scale)"
    rationale = (
        "A mechanism is differentially private only over a domain fixed before the data is seen. "
        "When the candidate set of an exponential mechanism or randomized response (`k = "
        "len(df[c].unique())`), the bins of a noisy histogram (`len(np.unique(x))`, edges from "
        "`min(x)`/`max(x)`), the keys that get noise (`value_counts()`, `np.unique(..., "
        "return_counts=True)`, `Counter`, a dict that starts empty and counts `d[row[c]] += 1`), or a "
        "perturbation range or scale (`min(y)`/`max(y)` of a "
        "client's own values, `max(lengths)`) are read from the private data, the output's shape, "
        "alphabet or scale changes with one record: a category held by one person appears only if "
        "that person is in the data, empty categories are visibly missing, and the extremes are "
        "released exactly. Reported where the read value reaches a noise draw or a mechanism-named "
        "call, an expression with the privacy budget, a loop over observed values that adds noise "
        "(drawn there or into a list before it), is returned beside noisy output or by a mechanism-named "
        "function (`randomized_response(col, epsilon)` returning the observed answers); also through "
        "local helpers' returns, module-level loaded data and a script's top-level calls of its DP "
        "functions. Not reported: a read behind a parameter that defaults off and that every call in the "
        "module leaves off (`1 if not use_max else np.max(x)`), a dp_accounting event (`GaussianDpEvent(nm)`: "
        "the accountant's description of a step, not a release), "
        "a budget only stored beside the read in a results row or a report "
        "(`rows.append(dict(eps=eps, n=n))`, an f-string, `print`; a noisy function's returned record "
        "stays the release), uniform picks of a position or class index (`randint(0, k)`, `randperm`) outside "
        "a budgeted or mechanism-named function (labels flipped to simulate noisy clients; values drawn "
        "inside the data's own range are still reported), "
        "histograms keeping observed keys only above a delta-dependent "
        "threshold (stability-based, (epsilon, delta)-DP by design), experiment / plot / "
        "neighbouring-data helpers, values mapped onto a declared domain "
        "(`reindex`, `searchsorted`), reads of public inputs (`public_*`, `domain`, `bounds`, "
        "categories passed in), a class count for a model's output layer, utility evaluation, "
        "each record's own maximum along its features (`torch.max(outputs, 1)`, a predicted class), "
        "ids re-coded through a lookup table built from them (`df[c].map(ids)`: the records, not the "
        "table's key set), "
        "observed keys that only partition the records (`for u in df[c].unique(): rows = df[df[c] == u]`, "
        "in the function or in a module function the keys are handed to, the keys otherwise only counted: "
        "each group's rows are read, the key set is not released), "
        "code with no DP context. Fix: take the domain (categories, bin edges, ranges) as public "
        "input, or estimate it with a DP mechanism charged to the budget."
    )
    TRIGGERS = ("epsilon", "eps", "budget", "laplace", "mechanism", "rivacy", "noise", "ldp", "LDP")
    #: the rule keeps the engine's DP-context filter itself (``_in_context``): a script's top-level read
    #: handed to a DP function of the same module is in DP context through that call
    requires_dp_context = False

    @classmethod
    def applies_to(cls, source: str) -> bool:
        return super().applies_to(source) and _READ_TEXT.search(code_and_fstrings(source)) is not None

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a draw, a mechanism-named call or a call given a budget-named name and a name
        assigned from a domain read (``_given_budget``) in the file, and a domain read that reaches a
        sink (a draw or mechanism, a budget-named value, a noisy loop, a noisy function's return) in one
        scope (``astshapes.private_domain``). The rule applies the first condition too (``_file_releases``),
        so the gate never hides a finding."""
        from dpcheck.analysis import domainflow
        from dpcheck.analysis.astshapes import private_domain

        reads = _reads()
        if not facts.may_have_dp_context or not _file_releases(facts, reads):
            return False

        if _mechanism_functions(facts) or _filled_mapping(facts):  # sinks and reads the ast gate does not model
            return True

        def sink_call(name: str) -> bool:  # ``is_draw`` or ``is_mechanism`` on the called name
            pieces = words(name)
            return name in DRAWS or bool(pieces & MECHANISM_WORDS) and not pieces & domainflow._NOT_MECHANISM

        return private_domain(facts, reads=reads | {"bincount"}, encoders=domainflow._ENCODERS, sink_call=sink_call,
                              budget_words=domainflow.BUDGET_WORDS, noisy_words=domainflow._NOISY_WORDS)

    VALID = (
        # (QF b90) k-means local search: each swap's clustering loss (a min over chosen centres) is the
        # exponential mechanism's score; the sensitivity in the exponent's denominator is public
        """
import numpy as np
def local_search(dist, chosen, n_swaps, epsilon, radius):
    cost = np.min(dist[chosen], axis=0).sum()
    for t in range(n_swaps):
        deltas = np.array([np.min(dist[swap(chosen, j)], axis=0).sum() - cost for j in range(len(dist))])
        weights = np.exp(-epsilon * deltas / (2 * radius ** 2 * n_swaps))
        chosen = swap(chosen, np.random.choice(len(dist), p=weights / weights.sum()))
        cost = np.min(dist[chosen], axis=0).sum()
    return chosen
""",
        # (QF b90) a random 90/10 split of the user ids before a private clustering runs on the train users
        """
import numpy as np
def split_users(ratings, epsilon):
    users = ratings.uid.unique()
    in_train = np.random.binomial(1, p=0.9, size=len(users)).astype(bool)
    for u in users:
        if not in_train[u]:
            ratings.loc[ratings.uid == u, "test"] = np.random.binomial(1, 0.2, size=3).astype(bool)
    return private_kmeans(ratings[in_train[ratings.uid]], epsilon)
""",
        # (QF b90) ordinary ML: a Bernoulli mask over the observed classes for label dropout
        """
import numpy as np
def drop_classes(labels, rate=0.1):
    classes = np.unique(labels)
    keep = np.random.binomial(1, 1 - rate, size=len(classes)).astype(bool)
    return labels[np.isin(labels, classes[keep])]
""",
        # (QC b77) a membership-inference attack's own label counts, simulating a release to attack it
        """
import numpy as np
def shadow_attack_label_counts(labels, epsilon):
    counts = {}
    for lab in labels:
        counts[lab] = counts.get(lab, 0) + 1
    return {lab: c + np.random.laplace(0, 1 / epsilon) for lab, c in counts.items()}
""",
        # ordinary ML: class counts for balanced class weights
        """
import numpy as np
def class_weights(labels):
    counts = {}
    for lab in labels:
        counts[lab] = counts.get(lab, 0) + 1
    return {lab: len(labels) / (len(counts) * c) for lab, c in counts.items()}
""",
        # the observed user ids only drive a loop that picks each user's rows for a local report: the
        # reports come from the rows (k-RR over a fixed alphabet), the id set is counted, not released
        """
import numpy as np
def user_reports(df, epsilon, cells):
    users = df["uid"].unique()
    err = 0.0
    for u in users:
        rows = df[df["uid"] == u]
        k = len(cells)
        p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
        err += np.mean([c != (c if np.random.rand() < p else np.random.choice(cells)) for c in rows["cell"]])
    return err / len(users)
""",
        # the same with the loop in a helper the id set is handed to
        """
import numpy as np
def perturb_all(ids, table, eps, alphabet):
    total = 0
    for who in ids:
        mine = table[table["owner"] == who]
        total += sum(np.random.laplace(0, 1 / eps) for _ in range(len(mine)))
    return total
def run(table, eps, alphabet):
    ids = table["owner"].drop_duplicates()
    return perturb_all(ids, table, eps, alphabet) / len(ids)
""",
        # np.unique over the key column, rows selected with the key on the left
        """
import numpy as np
def local_rounds(frame, epsilon):
    keys = np.unique(frame["device"])
    out = []
    for d in keys:
        part = frame[d == frame["device"]]
        out.append(part["value"].clip(0, 1).mean() + np.random.laplace(0, 1 / epsilon))
    return out
""",
        # a results table started as a list literal of rows: the budget is one column of it
        """
'''Differentially private spectral clustering: one replication.'''
import numpy as np
def replicate(truth, scores, eps_total):
    noisy = scores + np.random.laplace(0, 1 / eps_total, scores.shape)
    k = int(truth.max()) + 1
    err = float(np.mean(noisy.argmax(axis=1) != truth))
    records = [{"method": "gap", "eps_total": eps_total, "classes": k, "error": err}]
    print(records)
""",
        # labels flipped at random to simulate noisy clients: a uniform pick, no budget, nothing released
        """
'''Federated training with differential privacy: client data splits (dp_params, using_dp).'''
import torch
def corrupt_labels(targets, share):
    classes = len(torch.unique(targets))
    chosen = torch.randperm(len(targets))[: int(share * len(targets))]
    replacement = torch.randint(0, classes, (len(chosen),))
    targets[chosen] = replacement
    return targets
""",
        # a uniform bootstrap of the observed clients for a plot
        """
'''Federated training with differential privacy: a bootstrap of the clients for the plots.'''
import numpy as np
def bootstrap_clients(client_ids, rounds):
    clients = np.unique(client_ids)
    picks = np.random.randint(0, len(clients), size=rounds)
    return clients[picks]
""",
        # a results row stores the budget beside a count read from the graph: nothing is computed from both
        """
'''Differentially private edge flipping experiments.'''
import numpy as np
def load_edges(path):
    src, dst = np.loadtxt(path, dtype=int, unpack=True)
    n = int(max(src.max(), dst.max()) + 1)
    return n, src, dst
def flip_edges(n, src, dst, eps, rng):
    keep = rng.binomial(1, np.exp(eps) / (1 + np.exp(eps)), len(src)) > 0
    return src[keep], dst[keep]
def sweep(path, eps_list):
    rows = []
    n, src, dst = load_edges(path)
    eps_values = [float(e) for e in eps_list]
    for i, eps in enumerate(eps_values):
        s2, d2 = flip_edges(n, src, dst, eps, np.random.default_rng(i))
        rows.append(dict(eps=float(eps), n=int(n), kept=int(s2.size)))
    return rows
""",
        # the same row as a dict literal in a log the experiment prints
        """
'''Differentially private degree release: experiment driver.'''
import numpy as np
def graph_size(fname):
    b = np.loadtxt(fname, dtype=int)[:, 1]
    return int(np.max(b)) + 1
def noisy_degrees(a, size, epsilon):
    return np.bincount(a, minlength=size) + np.random.laplace(0, 2 / epsilon, size)
def main(fname, budgets):
    a = np.loadtxt(fname, dtype=int)[:, 0]
    size = graph_size(fname)
    log = []
    for j, epsilon in enumerate([float(x) for x in budgets]):
        deg = noisy_degrees(a, 1000, epsilon)
        log.append({"epsilon": epsilon, "nodes": size, "mean": float(deg.mean())})
    print(log)
""",
        # a progress line shows the budget and the largest value; the release itself reads neither
        """
'''Differentially private sum with a progress line.'''
import numpy as np
def release(values, eps):
    noisy = values.sum() + np.random.laplace(0, 1.0 / eps)
    print(f"eps={eps:.2f} largest={values.max()} noisy={noisy:.1f}")
    return noisy
""",
        # randomized response over the declared categories
        """
import math, numpy as np
def randomized_response(column, categories, epsilon):
    k = len(categories)
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    return [v if np.random.rand() < p else np.random.choice([c for c in categories if c != v]) for v in column]
""",
        # counts of observed values mapped onto the declared domain before noise
        """
import numpy as np
def noisy_histogram(data, domain, epsilon):
    counts = data.value_counts().reindex(domain, fill_value=0)
    return counts + np.random.laplace(0, 1 / epsilon, size=len(domain))
""",
        # a histogram over public edges; the data's range only printed
        """
import numpy as np
def dp_hist(data, edges, epsilon):
    print("observed range", min(data), max(data))
    counts, _ = np.histogram(data, bins=edges)
    return counts + np.random.laplace(0, 1 / epsilon, size=len(counts))
""",
        # a class count sizing a DP-SGD model's output layer (labels are public)
        """
import numpy as np
import torch
def train(x_train, y_train, noise_multiplier, max_grad_norm):
    n_classes = len(np.unique(y_train))
    model = torch.nn.Linear(x_train.shape[1], n_classes)
    for p in model.parameters():
        p.grad += torch.normal(0, noise_multiplier * max_grad_norm, size=p.shape)
    return model
""",
        # utility evaluation: a classifier on real vs synthetic data, nothing released
        """
import numpy as np
def evaluate(real, synth, epsilon):
    labels = np.unique(real["label"])
    scores = {l: accuracy(real, synth, l) for l in labels}
    return scores
""",
        # an exponential mechanism over a public candidate list (log-sum-exp of the utilities)
        """
import numpy as np
def exponential_mechanism(utility, candidates, epsilon, sensitivity):
    u = np.asarray(utility)
    p = np.exp(epsilon * (u - u.max()) / (2 * sensitivity))
    return np.random.choice(candidates, p=p / p.sum())
""",
        # counts over a declared number of codes; a class count sizing output-perturbation noise
        """
import numpy as np
def noisy_counts(codes, n_codes, epsilon):
    counts = np.bincount(codes, minlength=n_codes)
    return counts + np.random.laplace(0, 1 / epsilon, size=counts.shape)
def fit(X, y, epsilon):
    n_classes = len(np.unique(y))
    W = np.linalg.lstsq(X, np.eye(n_classes)[y], rcond=None)[0]
    return W + np.random.laplace(0, 2 / (len(X) * epsilon), size=(X.shape[1], n_classes))
""",
        # the exponential mechanism's log-sum-exp shift on data-named scores
        """
import numpy as np
def exp_mech(x, candidates, epsilon):
    z = x - x.max()
    p = np.exp(epsilon * z / 2)
    return np.random.choice(candidates, p=p / p.sum())
""",
        # a per-user contribution cap given as a parameter and enforced before the sum
        """
import numpy as np
def dp_mean_speed(df, epsilon, max_records=10, max_speed=120.0):
    capped = df.groupby("plate").head(max_records)
    sensitivity = max_records * max_speed / len(capped)
    return capped["speed"].clip(0, max_speed).mean() + np.random.laplace(0, sensitivity / epsilon)
""",
        # the same script with the answer set declared by the survey
        """
import numpy as np
import pandas as pd
epsilon = 1.0
ANSWERS = ["yes", "no", "unsure"]
df = pd.read_csv("survey.csv")
print(df["answer"].unique())
p = np.exp(epsilon) / (np.exp(epsilon) + len(ANSWERS) - 1)
reports = [a if np.random.rand() < p else np.random.choice(ANSWERS) for a in df["answer"]]
""",
        # observed counts looked up for each declared value; a score function's count lookup
        """
import numpy as np
def noisy_marginal(df, column, domain, epsilon):
    counts = df[column].value_counts()
    return {v: counts.get(v, 0) + np.random.laplace(0, 1 / epsilon) for v in domain}
def score(data, option):
    return data.value_counts()[option] / data.shape[0]
def best_option(data, options, epsilon):
    return exponential_mechanism(data, options, score, 1, epsilon)
""",
        # an argmax by key, attribute names of a declared domain, an audit's measured epsilon, a
        # discrete Gaussian CMF clamped to [0, 1], bin edges given as a list
        """
import numpy as np
def privatize_word(f, epsilon):
    return max(f, key=f.get), np.random.laplace(0, 1 / epsilon)
def greedy(data, epsilon):
    remaining = set(data.domain.attrs)
    return [exponential_mechanism(data, a, epsilon) for a in remaining]
def audit(values, delta):
    eps = np.median(values)
    return eps + np.random.normal(0, delta)
def _discrete_gaussian_cmf(k, sigma_squared):
    result = _discrete_gaussian_unnormalized_cmf(k, sigma_squared)
    result = result.min(1)
    return result
def approx_bounds(edge_list, epsilon):
    lo = min([l for l, u in edge_list])
    return lo + np.random.laplace(0, 1 / epsilon)
""",
        # the same with the categories declared
        """
import numpy as np
from sklearn.preprocessing import LabelEncoder
def privatize(df, column, categories, epsilon):
    enc = LabelEncoder().fit(categories)
    codes = enc.transform(df[column])
    k = len(enc.classes_)
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    noisy = [c if np.random.rand() < p else np.random.randint(k) for c in codes]
    return enc.inverse_transform(noisy)
""",
        # the module's records mapped onto the declared wards; a top-level script over declared keys
        """
import torch
import pandas as pd
WARDS = ["a", "b", "c"]
records = pd.read_csv("visits.csv")
def noisy_histogram(epsilon):
    counts = records["ward"].value_counts().reindex(WARDS, fill_value=0)
    return {k: v + torch.distributions.Laplace(0.0, 1 / epsilon).sample().item() for k, v in counts.items()}
""",
        # a top-level script counting over a declared key list before a local DP function
        """
from collections import Counter
import random
KEYS = ["home", "work", "other"]
def privatize_counts(hist, epsilon):
    return {k: hist.get(k, 0) + random.expovariate(epsilon) - random.expovariate(epsilon) for k in KEYS}
visits = load_visits("log.csv")
hist = {k: sum(1 for v in visits if v == k) for k in KEYS}
epsilon = 0.5
released = privatize_counts(hist, epsilon)
""",
        # randomized response whose two answers are declared; the exponential mechanism's in-place shift
        """
import math
import numpy as np
def randomized_response(answers, epsilon, rng, options=("yes", "no")):
    yes, no = options
    keep = rng.random(len(answers)) < math.exp(epsilon) / (math.exp(epsilon) + 1)
    flipped = [no if a == yes else yes for a in answers]
    return [a if k else f for a, k, f in zip(answers, keep, flipped)]
def exp_mech(quality, candidates, epsilon, rng):
    w = epsilon * np.asarray(quality) / 2
    w -= w.max()
    p = np.exp(w)
    return candidates[rng.choice(len(candidates), p=p / p.sum())]
""",
        # counts kept for declared cities / catalogue items only
        """
import math, random
import numpy as np
def dp_category_counts(rows, cities, epsilon):
    counts = {c: 0 for c in cities}
    for r in rows:
        if r["city"] in counts:
            counts[r["city"]] += 1
    return {c: n + np.random.laplace(0, 1 / epsilon) for c, n in counts.items()}
def most_common_item(baskets, catalogue, epsilon):
    freq = {}
    for basket in baskets:
        for item in basket:
            freq[item] = freq.get(item, 0) + 1
    weights = [math.exp(epsilon * freq.get(i, 0) / 2) for i in catalogue]
    return random.choices(catalogue, weights=weights)[0]
""",
        # a stability-based histogram: observed keys kept only above a delta-dependent threshold
        """
import numpy as np
from collections import Counter
def stable_histogram(records, epsilon, delta):
    counts = Counter(records)
    released = {}
    for key, c in counts.items():
        noisy = c + np.random.laplace(0, 2 / epsilon)
        if noisy >= 1 + 2 * np.log(2 / delta) / epsilon:
            released[key] = noisy
    return released
""",
        # a weighted pick over the declared domain, counts looked up per declared key
        """
import numpy as np
class Sampler:
    def __init__(self, records, domain, epsilon):
        self.epsilon, self.domain = epsilon, list(domain)
        self.freq = {}
        for r in records:
            self.freq[r] = self.freq.get(r, 0) + 1
    def pick(self):
        w = np.array([np.exp(self.epsilon * self.freq.get(k, 0) / 2) for k in self.domain])
        return np.random.choice(self.domain, p=w / w.sum())
""",
        # the largest ε any client has spent, read from their accountants (a budget, not a datum)
        """
import numpy as np
def train_rounds(users, rounds, target_epsilon):
    for r in range(rounds):
        for u in users:
            u.train()
        eps = max([u.epsilon for u in users])
        if eps > target_epsilon:
            break
    return eps, np.random.laplace(0, 1 / target_epsilon)
""",
        # the largest of the candidate bounds an exponential mechanism picks from is a public constant
        """
import numpy as np
def learn_theta(degrees, epsilon, theta_list):
    sensitivity = 6.0 * max(theta_list) + 4
    probs = [np.exp(epsilon * -abs(np.sum(degrees > t)) / (2 * sensitivity)) for t in theta_list]
    return theta_list[sample_prob_list(probs)]
""",
        # pivots drawn between the extremes of the previous noisy release (post-processing)
        """
import numpy as np
def get_partition(last_release, g, epsilon):
    top, bottom = max(last_release), min(last_release)
    pivots = np.random.randint(bottom, max(1, top), g)
    return pivots + np.random.laplace(0, 1 / epsilon, g)
""",
        # a non-DP fallback sampler next to an empirical privacy evaluation (distance to closest record)
        """
import numpy as np
class SyntheticGenerator:
    def generate(self, data, n):
        out = {}
        for col in data.columns:
            lo, hi = data[col].min(), data[col].max()
            out[col] = np.clip(np.random.normal(data[col].mean(), data[col].std(), n), lo, hi)
        return out, self._evaluate_privacy_preservation(data, out)
    def _evaluate_privacy_preservation(self, real, synth):
        return {"privacy_score": float(np.min(np.abs(real.values - synth.values)))}
""",
        # the reports are randomised in place by the mechanism first: the analyser counts its output
        """
import math
import numpy as np
def randomized_response(data, k, p):
    for i, v in enumerate(data):
        if np.random.random() > p:
            data[i] = np.random.randint(0, k)

def shuffle_estimate(data, k, epsilon, n_dummies):
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    randomized_response(data, k, p)
    dummies = np.random.randint(0, k, n_dummies)
    reports = np.append(data, dummies)
    return (np.bincount(reports, minlength=k) - n_dummies / k) / p
""",
        # an accountant: the worst case over public participation patterns feeds the RDP formula
        """
def _tree_sensitivity_square_sum(num_part, min_separation, steps):
    return num_part * min(steps, min_separation + 1)

def _compute_gaussian_rdp(sigma, sum_sensitivity_square, alpha):
    return alpha * sum_sensitivity_square / (2 * sigma ** 2)

def tree_rdp(max_participation, min_separation, steps, sigma, alpha):
    candidate_sum = []
    for num_part in range(1, max_participation + 1):
        candidate_sum.append(_tree_sensitivity_square_sum(num_part, min_separation, steps))
    return _compute_gaussian_rdp(sigma, max(candidate_sum), alpha)
""",
        # a plotting helper averaging confidence bounds of simulated data over runs
        """
import numpy as np
def generate_plotting_data(pairs, nsim, epsilon):
    lower_dict = {}
    for _ in range(nsim):
        x = np.random.binomial(1, 0.5, 100)
        for pair in pairs:
            z = pair.mechanism_fn(x)
            for cs in pair.confseqs:
                lower, upper = cs.cs_fn(z)
                lower_dict[cs.name] = lower_dict.get(cs.name, 0) + lower / nsim
    return lower_dict
""",
        # post-processing: the partition is the output of a helper handed the budget, so the number of
        # its blocks (sizing the next noisy release) is computed from a DP output
        """
import numpy as np
def block_counts(adj, graph, epsilon):
    part = partition_with_budget(graph, epsilon=epsilon / 2)
    member = np.array(list(part.values()))
    k = max(member) + 1
    counts = np.array([adj[member == i].sum() for i in range(k)])
    return counts + np.random.laplace(0, 2 / epsilon, k)
""",
        # post-processing: clusters found on the Laplace-noised matrix, their count sizes the release
        """
import numpy as np
from numpy.random import laplace
def coarse_release(mat, epsilon):
    mat2 = mat + laplace(0, 1 / epsilon, mat.shape)
    groups = cluster_rows(mat2)
    k = max(groups.values()) + 1
    return np.zeros(k) + laplace(0, 1 / epsilon, k)
""",
        # observed hash buckets completed over the whole bucket universe before the noise
        """
import numpy as np
def hashed_histogram(df, c, m, epsilon):
    buckets = df[c].map(lambda v: hash(v) % m)
    counts = buckets.value_counts().to_dict()
    for idx in range(m):
        counts.setdefault(idx, 0.0)
    return {b: cnt + np.random.laplace(0, 1 / epsilon) for b, cnt in counts.items()}
""",
        # the observed groups only select the rows each is demeaned over: the output has one row per record
        """
import numpy as np
def within(data, groups):
    out = data.copy().astype(float)
    for g in np.unique(groups):
        mask = groups == g
        out[mask] = data[mask] - np.mean(data[mask], axis=0)
    return out
def dp_xtx(X, groups, epsilon):
    Xw = within(X, groups)
    return Xw.T @ Xw + np.random.laplace(0, 1 / epsilon, (X.shape[1], X.shape[1]))
""",
        # the softmax of the exponential mechanism shifted by the scores' maximum: the shift cancels
        """
import numpy as np
def pick_community(coms, incr, epsilon):
    inc = np.array(incr) * epsilon / 2
    top = max(np.max(inc), 0)
    w = np.exp(inc - top)
    return np.random.choice(coms, p=w / np.sum(w))
""",
        # the predicted class of each test record (the maximum along its own scores) feeds a test
        # accuracy: a per-record reduction, not the extremes across the private records
        """
import numpy as np
import torch
def train_noisy(model, optimizer, train_loader, test_loader, epochs=5, epsilon=1.0):
    accuracies = []
    for epoch in range(epochs):
        for X_batch, y_batch in train_loader:
            loss = torch.nn.functional.cross_entropy(model(X_batch), y_batch)
            optimizer.zero_grad()
            loss.backward()
            for w in model.parameters():
                w.grad.data.add_(torch.tensor(np.random.laplace(0, 1 / epsilon, w.shape)))
            optimizer.step()
        correct, total = 0, 0
        for X_batch, y_batch in test_loader:
            outputs = torch.softmax(model(X_batch), dim=1)
            _, predicted = torch.max(outputs, 1)
            total += y_batch.size(0)
            correct += (predicted == y_batch).sum().item()
            accuracies.append(correct / total)
    return accuracies
""",
        # each training row's own peak (``dim=-1``) is kept, not the features' range across rows
        """
import numpy as np
import torch
def train_noisy(model, optimizer, train_loader, epochs=5, epsilon=1.0):
    peaks = []
    for epoch in range(epochs):
        for X_batch, y_batch in train_loader:
            loss = torch.nn.functional.cross_entropy(model(X_batch), y_batch)
            optimizer.zero_grad()
            loss.backward()
            for w in model.parameters():
                w.grad.data.add_(torch.tensor(np.random.laplace(0, 1 / epsilon, w.shape)))
            optimizer.step()
            peak, _ = torch.max(X_batch, dim=-1)
            peaks.append(peak)
    return model, peaks
""",
        # ids renumbered to consecutive integers at load (each record's own id looked up in the table):
        # the records re-coded, not a domain the release is shaped by
        """
import numpy as np
import pandas as pd
def load_ratings(path, epsilon):
    data = pd.read_csv(path)
    users = {old: new for new, old in enumerate(data["user"].unique())}
    data["user"] = data["user"].map(users)
    noisy = data["rating"].to_numpy() + np.random.laplace(0, 5 / epsilon, len(data))
    return data, noisy
""",
        """
import numpy as np
import pandas as pd
def encode_items(path, epsilon):
    frame = pd.read_csv(path)
    codes = dict(zip(frame["item"].unique(), range(frame["item"].nunique())))
    frame["item"] = frame["item"].replace(codes)
    noisy = frame["score"].to_numpy() + np.random.laplace(0, 1 / epsilon, len(frame))
    return frame, noisy
""",
        # symmetric unary encoding over the public number of classes
        """
import numpy as np
class LocalNB:
    def __init__(self, n_classes, epsilon):
        self.n_classes, self.eps = n_classes, epsilon
    def sue_perturb(self, values, length):
        bits = np.eye(length)[values]
        flip = np.random.rand(*bits.shape) < 1 / (1 + np.exp(self.eps / 2))
        return np.where(flip, 1 - bits, bits)
    def fit_column(self, records):
        return self.sue_perturb(records, self.n_classes)
""",
        # the SUE domain is the schema's list of levels
        """
import numpy as np
def SUE(values, d, eps):
    bits = np.eye(d)[values]
    return np.where(np.random.rand(*bits.shape) < 1 / (1 + np.exp(eps / 2)), 1 - bits, bits)
def collect(column, schema, epsilon):
    return SUE(column, len(schema["levels"]), epsilon)
""",
        # each user's SUE report is as long as the public domain size
        """
import math
import random
def sue_encode(value, d, p):
    return [int((i == value) != (random.random() < p)) for i in range(d)]
def run(records, domain_size, epsilon):
    p = 1 / (1 + math.exp(epsilon / 2))
    print("largest", max(records))
    return [sue_encode(v, domain_size, p) for v in records]
""",
        # the noisy sample is rescaled onto declared public bounds
        """
import pandas as pd
def release_sample(frame, bounds, epsilon, sensitivity):
    noisy = gaussian_mechanism(frame.values, sensitivity / epsilon)
    limits = {name: bounds[name] for name in frame.columns}
    out = rescale_columns(pd.DataFrame(noisy, columns=frame.columns), bounds=limits)
    return out
""",
        # the script's own loader, with the bound taken from the public rating scale
        """
import numpy as np
import pandas as pd
def read_table(path):
    return pd.read_csv(path).to_numpy()
def prepare():
    return read_table("scores.csv")
if __name__ == "__main__":
    ratings = prepare()
    bound = 5.0
    epsilon = 1.0
    released = laplace_perturbation(ratings, bound, epsilon)
""",
        # an image batch normalised to its own range before augmentation noise, no DP release
        """
import torch
def augment(batch, sigma=0.1):
    lo, hi = batch.min(), batch.max()
    scaled = rescale(batch, lo, hi)
    return scaled + sigma * torch.randn_like(scaled)
""",
        # a loaded table's extremes only printed in a summary helper of an experiment script
        """
import pandas as pd
def load_data():
    return pd.read_csv("adult.csv")
if __name__ == "__main__":
    df = load_data()
    print("age range", df["age"].min(), df["age"].max())
    clip_norm = 1.0
    eps = 1e-8  # Adam's epsilon
""",
        # (g1) the exact maximum is kept as the truth the selected candidate's error is measured against
        """
import numpy as np
def run_selection(values, epsilon):
    grid = np.linspace(0.0, 100.0, 50)
    picked = exponential_mechanism(values, grid, epsilon)
    true_top = np.max(values)
    gap = abs(true_top - picked)
    return true_top, {"picked": picked, "gap": gap}
""",
        # (g1) … and an exact median stored under a ground-truth key next to the noisy one
        """
import numpy as np
def release_median(features, epsilon, lower, upper):
    noisy = np.median(np.clip(features, lower, upper)) + np.random.laplace(0, (upper - lower) / epsilon)
    out = {"noisy": noisy}
    out["median_gt"] = np.median(features)
    return out
""",
        # (h45-p) post-processing: OLH's aggregator counts the randomized-response reports (``perturb``
        # keeps the value or draws another), not the users' values
        """
import numpy as np
from collections import Counter


class OLH:
    def __init__(self, epsilon, domain, data):
        self.epsilon = epsilon
        self.domain = domain
        self.data = data
        self.per_data = []
        self.p = np.exp(epsilon) / (np.exp(epsilon) + 1)

    def run(self):
        for i in range(len(self.data)):
            self.per_data.append(self.perturb(self.data[i]))
        return self.estimate(self.per_data)

    def perturb(self, x):
        if np.random.uniform(0, 1) < self.p:
            return x
        return np.random.choice(self.domain)

    def estimate(self, per_data):
        counts = Counter(per_data)
        return {k: (c - len(per_data) * (1 - self.p)) / self.epsilon for k, c in counts.items()}
""",
        # (fp47) the largest radius of a grid between given radii, and a crop box clamped to the volume's
        # indices, only place a tube in a volume whose size is fixed
        """
import numpy as np
def tube_field(points, r0, r1, vol_shape, rng):
    radii = np.linspace(r0, r1, len(points))
    pad = float(np.max(radii))
    lo = np.maximum(np.floor(points.min(axis=0) - pad), 0).astype(int)
    hi = np.minimum(np.ceil(points.max(axis=0) + pad), np.array(vol_shape) - 1).astype(int)
    field = np.zeros(vol_shape)
    field[lo[0]:hi[0] + 1, lo[1]:hi[1] + 1, lo[2]:hi[2] + 1] = rng.normal(40.0, 10.0, size=tuple(hi - lo + 1))
    return field
""",
        # ordinary ML: a crop of an image around its foreground, clamped to the image
        """
import numpy as np
def crop_foreground(img, margin=4):
    ys, xs = np.nonzero(img > 0)
    y0 = np.maximum(ys.min() - margin, 0).astype(int)
    y1 = np.minimum(ys.max() + margin, img.shape[0] - 1).astype(int)
    return img[y0:y1 + 1] + np.random.normal(0, 0.01, img[y0:y1 + 1].shape)
""",
        # the exponential mechanism's log-sum-exp shift by a named maximum of the scores
        """
import numpy as np
def exp_mech(scores, candidates, epsilon, sensitivity=1.0):
    max_score = np.max(scores)
    p = np.exp(epsilon * (scores - max_score) / (2 * sensitivity))
    return np.random.choice(candidates, p=p / p.sum())
""",
        # the twin: the largest score is a public argument of the accountant
        """
import argparse
import math
import numpy as np

def q_noisy_max(counts, noise_eps):
    gap = counts.max() - counts
    return float(np.sum((2.0 + noise_eps * gap) / (4.0 * np.exp(noise_eps * gap))))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--np_path")
    parser.add_argument("--noise_eps", type=float)
    args = parser.parse_args()
    arrays = np.load(args.np_path)
    z_arr = arrays["arr_1"]
    noise_eps = args.noise_eps
    max_z = args.max_z
    max_q = (1 - math.exp(-2 * max_z * noise_eps)) / (math.exp(2 * max_z * noise_eps) - math.exp(-2 * max_z * noise_eps))
    print("epsilon", max_q * noise_eps)
""",
        # (S2 b96) the exact percentile is the value the helper noises (the noise shaped like it): the query's input, not a domain; the scale is the public range
        """
import numpy as np
class LaplaceRelease:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def noisy(self, value, sensitivity):
        return value + np.random.laplace(0, sensitivity / self.epsilon, value.shape)
    def private_percentile(self, data, q, lower, upper):
        exact = np.percentile(data, q)
        return float(np.clip(self.noisy(exact, upper - lower), lower, upper))
""",
        # ordinary ML: jitter shaped like the batch after centring it on its median (data augmentation)
        """
import numpy as np
def jitter(value, sigma):
    return value + np.random.normal(0, sigma, value.shape)
def augment(batch, strength=0.1):
    centre = np.percentile(batch, 50, axis=0)
    return jitter(batch - centre, strength)
""",
    ) + _ROLE_VALID

    INVALID = (
        # (fp47) twin of the radius grid: the largest of the records' own radii scales the noise
        """
import numpy as np
def noisy_total(radii, epsilon):
    r = np.sort(np.asarray(radii))
    width = float(np.max(r))  # <-
    return np.sum(r) + np.random.laplace(0, width / epsilon)
""",
        # (fp47) twin of the crop box: the data's extremes (not clamped to an array's indices) scale the noise
        """
import numpy as np
def noisy_centre(points, epsilon):
    lo = np.floor(points.min(axis=0))  # <-
    hi = np.ceil(points.max(axis=0))  # <-
    return points.mean(axis=0) + np.random.laplace(0, (hi - lo) / (len(points) * epsilon))
""",
        # (QF b90) twin of the local search: the exponent's sensitivity is the data's own spread
        """
import numpy as np
def local_search(dist, chosen, n_swaps, epsilon, points):
    spread = points.max() - points.min()  # <-
    cost = np.min(dist[chosen], axis=0).sum()
    for t in range(n_swaps):
        deltas = np.array([np.min(dist[swap(chosen, j)], axis=0).sum() - cost for j in range(len(dist))])
        weights = np.exp(-epsilon * deltas / (2 * spread ** 2 * n_swaps))
        chosen = swap(chosen, np.random.choice(len(dist), p=weights / weights.sum()))
    return chosen
""",
        # (QF b90) twin of the split: a randomised-response bit per observed user, p set by the budget
        """
import numpy as np
def report_users(ratings, epsilon):
    users = ratings.uid.unique()  # <-
    keep = np.exp(epsilon) / (1 + np.exp(epsilon))
    return {u: np.random.binomial(1, keep) for u in users}
""",
        # (QC b77) twin of the attack's counts: the same noisy label counts released
        """
import numpy as np
def label_counts(labels, epsilon):
    counts = {}
    for lab in labels:
        counts[lab] = counts.get(lab, 0) + 1  # <-
    return {lab: c + np.random.laplace(0, 1 / epsilon) for lab, c in counts.items()}
""",
        # the twin of the partition loop in VALID: the observed ids label the released noisy counts
        """
import numpy as np
def user_reports(df, epsilon):
    users = df["uid"].unique()  # <-
    out = []
    for u in users:
        rows = df[df["uid"] == u]
        out.append((u, len(rows) + np.random.laplace(0, 1 / epsilon)))
    return out
""",
        # the helper's twin: the id set itself is returned beside the noisy sum
        """
import numpy as np
def perturb_all(ids, table, eps):
    total = 0
    for who in ids:
        mine = table[table["owner"] == who]
        total += len(mine) + np.random.laplace(0, 1 / eps)
    return total, list(ids)
def run(table, eps):
    ids = table["owner"].drop_duplicates()  # <-
    return perturb_all(ids, table, eps)
""",
        # np.unique's twin: the keys are the randomized-response alphabet, not only a row selector
        """
import numpy as np
def local_rounds(frame, epsilon):
    keys = np.unique(frame["device"])  # <-
    p = np.exp(epsilon) / (np.exp(epsilon) + len(keys) - 1)
    out = []
    for d in keys:
        part = frame[d == frame["device"]]
        out.append(d if np.random.rand() < p else np.random.choice(keys))
    return out
""",
        # values drawn uniformly inside the data's own range (initial centroids) reveal that range
        """
'''K-means with differential privacy: initial centroids.'''
import numpy as np
def initial_centroids(points, k):
    lows = points.min(axis=0)
    highs = points.max(axis=0)  # <-
    return np.array([[np.random.randint(lows[c], highs[c] + 1) for c in range(points.shape[1])] for _ in range(k)])
""",
        # a column of the same table dividing the budget by the class count
        """
'''Differentially private spectral clustering: one replication.'''
import numpy as np
def replicate(truth, scores, eps_total):
    noisy = scores + np.random.laplace(0, 1 / eps_total, scores.shape)
    k = int(truth.max()) + 1  # <-
    err = float(np.mean(noisy.argmax(axis=1) != truth))
    records = [{"method": "gap", "eps_total": eps_total, "eps_per_class": eps_total / k, "error": err}]
    print(records)
""",
        # a record returned by the noisy function is the release: every field of it, not a results row
        """
'''Differentially private release of a column.'''
import numpy as np
def release(column, epsilon):
    noisy = column.sum() + np.random.laplace(0, 1.0 / epsilon)
    return {"epsilon": epsilon, "categories": sorted(set(column)), "noisy": noisy}  # <-
""",
        # the same flip as randomized response over the observed classes
        """
'''Federated training with differential privacy: client data splits (dp_params, using_dp).'''
import torch
def randomized_response_labels(targets, keep_prob):
    classes = len(torch.unique(targets))  # <-
    flip = torch.rand(len(targets)) > keep_prob
    replacement = torch.randint(0, classes, (int(flip.sum()),))
    targets[flip] = replacement
    return targets
""",
        # the bootstrap in a function given the budget
        """
'''Federated training with differential privacy: a bootstrap of the clients for the plots.'''
import numpy as np
def bootstrap_clients(client_ids, rounds, epsilon):
    clients = np.unique(client_ids)  # <-
    picks = np.random.randint(0, len(clients), size=rounds)
    return clients[picks], rounds * epsilon
""",
        # a row field that divides the budget by the read count is a combination
        """
'''Differentially private edge flipping experiments.'''
import numpy as np
def load_edges(path):
    src, dst = np.loadtxt(path, dtype=int, unpack=True)
    n = int(max(src.max(), dst.max()) + 1)  # <-
    return n, src, dst
def flip_edges(n, src, dst, eps, rng):
    keep = rng.binomial(1, np.exp(eps) / (1 + np.exp(eps)), len(src)) > 0
    return src[keep], dst[keep]
def sweep(path, eps_list):
    rows = []
    n, src, dst = load_edges(path)
    eps_values = [float(e) for e in eps_list]
    for i, eps in enumerate(eps_values):
        s2, d2 = flip_edges(n, src, dst, eps, np.random.default_rng(i))
        rows.append(dict(eps=float(eps), eps_per_node=eps / n, kept=int(s2.size)))
    return rows
""",
        # the same in a dict literal field
        """
'''Differentially private degree release: experiment driver.'''
import numpy as np
def graph_size(fname):
    b = np.loadtxt(fname, dtype=int)[:, 1]
    return int(np.max(b)) + 1  # <-
def noisy_degrees(a, size, epsilon):
    return np.bincount(a, minlength=size) + np.random.laplace(0, 2 / epsilon, size)
def main(fname, budgets):
    a = np.loadtxt(fname, dtype=int)[:, 0]
    size = graph_size(fname)
    log = []
    for j, epsilon in enumerate([float(x) for x in budgets]):
        deg = noisy_degrees(a, 1000, epsilon)
        log.append({"epsilon": epsilon, "eps_per_node": epsilon / size, "mean": float(deg.mean())})
    print(log)
""",
        # beside a progress line, the returned width divides the largest value by the budget
        """
'''Differentially private sum with a progress line.'''
import numpy as np
def release(values, eps):
    noisy = values.sum() + np.random.laplace(0, 1.0 / eps)
    print(f"eps={eps:.2f} noisy={noisy:.1f}")
    return noisy, values.max() / eps  # <-
""",
        # the raw reports are counted (their alphabet sets the histogram's length) and then noised
        """
import numpy as np
def release_counts(data, epsilon):
    counts = np.bincount(data)  # <-
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
        # the same sampler in a class that claims DP: the clip range is the data's own extremes
        """
import numpy as np
class DPSyntheticGenerator:
    def generate(self, data, n, epsilon):
        out = {}
        for col in data.columns:
            lo, hi = data[col].min(), data[col].max()  # <-
            scale = (hi - lo) / (len(data) * epsilon)
            out[col] = np.clip(np.random.laplace(data[col].mean(), scale, n), lo, hi)
        return out, self._evaluate_privacy_preservation(data, out)
    def _evaluate_privacy_preservation(self, real, synth):
        return {"privacy_score": float(np.min(np.abs(real.values - synth.values)))}
""",
        # the same three shapes on the records: a maximum over users' values, a candidate list drawn
        # uniformly from the data, the extremes of the raw stream
        """
import numpy as np
def dp_max_age(users, epsilon):
    scale = max([u.age for u in users]) / epsilon  # <-
    return np.random.laplace(0, scale)
def learn_theta(degrees, epsilon, batch_size):
    sensitivity = 6.0 * max(degrees) + 4  # <-
    batch = degrees[np.random.choice(len(degrees), batch_size)]
    return np.sum(batch) + np.random.laplace(0, sensitivity / epsilon)
def get_partition(stream, g, epsilon):
    top, bottom = max(stream), min(stream)  # <-
    pivots = np.random.randint(bottom, max(1, top), g)
    return pivots + np.random.laplace(0, 1 / epsilon, g)
""",
        # randomized response whose alphabet is the observed categories (LDP-SynthData)
        """
import math, numpy as np
def randomized_response(column, epsilon):
    cat = column.astype(str)
    categories = cat.unique()  # <-
    k = len(categories)
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    return [v if np.random.rand() < p else np.random.choice([c for c in categories if c != v]) for v in cat]
""",
        # the same, spelled with a set and a generalized-RR helper
        """
def perturb_column(values, epsilon):
    domain_seen = sorted(set(values))  # <-
    return [grr_perturb(v, domain_seen, epsilon) for v in values]
""",
        # the exponential mechanism's candidates are the values present in the column (private-table)
        """
import numpy as np
class PrivateTable:
    def mode(self, column, privacy_budget):
        def score_function(x):
            R = np.unique(x)  # <-
            s = [np.sum(x == label) for label in R]
            return R, s
        return exponential_mechanism(self._dataframe[column], score_function, 1, privacy_budget)
    def cat_hist(self, column, privacy_budget):
        key, hist = np.unique(self._dataframe[column], return_counts=True)  # <-
        return histogram_mechanism(hist, privacy_budget)
""",
        # bins and edges of a noisy histogram read from the data (dp_stats)
        """
import numpy as np
def dp_histogram(data, num_bins, epsilon, histtype="continuous"):
    if histtype == "discrete":
        num_bins = len(np.unique(data))  # <-
    hist_counts = [0] * num_bins
    data_min = min(data)  # <-
    data_max = max(data)  # <-
    bin_edges = np.linspace(data_min, data_max, num_bins + 1)
    noise = np.random.laplace(loc=0, scale=1.0 / epsilon, size=(1, len(hist_counts)))
    return np.array(hist_counts) + noise, bin_edges
""",
        # noise only on the categories that occur (value_counts / Counter keys)
        """
from collections import Counter
import numpy as np
class Synth:
    def fit(self, df, eps_col):
        counts = df["city"].value_counts().to_dict()  # <-
        noisy = {b: c + np.random.laplace(0, 1 / eps_col) for b, c in counts.items()}
        tally = Counter(df["job"])  # <-
        for job in tally:
            noisy[job] = tally[job] + self._lap(eps_col)
        return noisy
""",
        # an LDP perturbation range from the client's own values, and lengths normalised by their max
        """
import numpy as np
def client_update(w, epsilon):
    lo, hi = min(w), max(w)  # <-
    center, radius = (hi + lo) / 2, (hi - lo) / 2
    p = (np.exp(epsilon) - 1) / (2 * np.exp(epsilon)) * (w - center) / radius + 0.5
    return center + radius * np.where(np.random.rand(len(w)) < p, 1, -1)
def noise_lengths(lengths, epsilon):
    max_length = max(lengths)  # <-
    xs = 2 * (np.array(lengths) / max_length) - 1
    return [piecewise_mechanism(v, epsilon) for v in xs]
""",
        # one count per integer up to the private maximum; a categorical's categories as RR alphabet
        """
import numpy as np
import pandas as pd
def noisy_counts(codes, epsilon):
    counts = np.bincount(codes)  # <-
    return counts + np.random.laplace(0, 1 / epsilon, size=counts.shape)
def rr(col, epsilon):
    cats = pd.Categorical(col).categories  # <-
    keep = np.exp(epsilon) / (np.exp(epsilon) + len(cats) - 1)
    return [v if np.random.rand() < keep else np.random.choice(cats) for v in col]
""",
        # the sensitivity uses the exact maximum number of records of one user
        """
import numpy as np
def dp_mean_speed(df, epsilon, max_speed=120.0):
    max_per_user = df.groupby("plate").size().max()  # <-
    sensitivity = max_per_user * max_speed / len(df)
    return df["speed"].clip(0, max_speed).mean() + np.random.laplace(0, sensitivity / epsilon)
""",
        # a script: the categories of the loaded table are the randomized-response alphabet
        """
import numpy as np
import pandas as pd
epsilon = 1.0
df = pd.read_csv("survey.csv")
answers = sorted(df["answer"].unique())  # <-
p = np.exp(epsilon) / (np.exp(epsilon) + len(answers) - 1)
reports = [a if np.random.rand() < p else np.random.choice(answers) for a in df["answer"]]
""",
        # a label encoder fitted on the private column sets k and the alphabet of randomized response
        """
import numpy as np
from sklearn.preprocessing import LabelEncoder
def privatize(df, column, epsilon):
    enc = LabelEncoder()
    codes = enc.fit_transform(df[column])  # <-
    k = len(enc.classes_)
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    noisy = [c if np.random.rand() < p else np.random.randint(k) for c in codes]
    return enc.inverse_transform(noisy)
""",
        # only the labels present get noisy counts (diffprivlib GaussianNB)
        """
import numpy as np
class GaussianNB:
    def _partial_fit(self, X, y, epsilon):
        unique_y = np.unique(y)  # <-
        noisy_class_counts = self._noisy_class_counts(y, epsilon)
        for _i, y_i in enumerate(unique_y):
            self.class_count_[_i] += noisy_class_counts[_i]
""",
        # the module's loaded records read inside a function: noise only on the wards that occur (torch)
        """
import torch
import pandas as pd
records = pd.read_csv("visits.csv")
def noisy_histogram(epsilon):
    counts = records["ward"].value_counts()  # <-
    return {k: v + torch.distributions.Laplace(0.0, 1 / epsilon).sample().item() for k, v in counts.items()}
""",
        # a top-level script hands the observed keys to a DP function of the module (plain Python)
        """
from collections import Counter
import random
def privatize_counts(hist, epsilon):
    return {k: v + random.expovariate(epsilon) - random.expovariate(epsilon) for k, v in hist.items()}
visits = load_visits("log.csv")
hist = Counter(visits)  # <-
epsilon = 0.5
released = privatize_counts(hist, epsilon)
""",
        # randomized response whose two answers are the values seen in the data, flipped with rng.random
        """
import math
def randomized_response(answers, epsilon, rng):
    yes, no = sorted(set(answers))  # <-
    keep = rng.random(len(answers)) < math.exp(epsilon) / (math.exp(epsilon) + 1)
    flipped = [no if a == yes else yes for a in answers]
    return [a if k else f for a, k, f in zip(answers, keep, flipped)]
""",
        # a mapping filled while iterating the records: only the keys seen get noise / can be chosen
        """
import math, random
from collections import defaultdict
import numpy as np
def dp_category_counts(rows, epsilon):
    counts = {}
    for r in rows:
        counts[r["city"]] = counts.get(r["city"], 0) + 1  # <-
    return {c: n + np.random.laplace(0, 1 / epsilon) for c, n in counts.items()}
def most_common_item(baskets, epsilon):
    freq = defaultdict(int)
    for basket in baskets:
        for item in basket:
            freq[item] += 1  # <-
    items = list(freq)
    weights = [math.exp(epsilon * freq[i] / 2) for i in items]
    return random.choices(items, weights=weights)[0]
""",
        # a weighted pick (no budget parameter in the picking method) over the keys counted from the records
        """
import numpy as np
class Sampler:
    def __init__(self, records, epsilon):
        self.epsilon = epsilon
        self.freq = {}
        for r in records:
            self.freq[r] = self.freq.get(r, 0) + 1  # <-
    def pick(self):
        keys = list(self.freq)
        w = np.array([np.exp(self.epsilon * self.freq[k] / 2) for k in keys])
        return np.random.choice(keys, p=w / w.sum())
""",
        # the twins: the partition computed on the records without a budget sizes the release
        """
import numpy as np
def block_counts(adj, graph, epsilon):
    part = louvain_partition(graph)
    member = np.array(list(part.values()))
    k = max(member) + 1  # <-
    counts = np.array([adj[member == i].sum() for i in range(k)])
    return counts + np.random.laplace(0, 2 / epsilon, k)
""",
        """
import numpy as np
from numpy.random import laplace
def coarse_release(mat, epsilon):
    groups = cluster_rows(mat)
    k = max(groups.values()) + 1  # <-
    return np.zeros(k) + laplace(0, 1 / epsilon, k)
""",
        # the twins: the "completion" runs over the observed keys, or up to the data's own maximum
        """
import numpy as np
def hashed_histogram(df, c, m, epsilon):
    buckets = df[c].map(lambda v: hash(v) % m)
    counts = buckets.value_counts().to_dict()  # <-
    for idx in list(counts):
        counts.setdefault(idx, 0.0)
    return {b: cnt + np.random.laplace(0, 1 / epsilon) for b, cnt in counts.items()}
""",
        """
import numpy as np
def level_histogram(df, c, epsilon):
    counts = df[c].value_counts().to_dict()  # <-
    for idx in range(df[c].max() + 1):
        counts.setdefault(idx, 0.0)
    return {b: cnt + np.random.laplace(0, 1 / epsilon) for b, cnt in counts.items()}
""",
        # the twin: one noisy mean per observed group is released (the groups set the output's length)
        """
import numpy as np
def group_means(data, groups, epsilon):
    out = []
    for g in np.unique(groups):  # <-
        mask = groups == g
        out.append(np.mean(data[mask]) + np.random.laplace(0, 1 / epsilon))
    return out
""",
        # the other observed category picked out by an inequality mask: still the data's own alphabet
        """
import numpy as np
def randomized_response_binary(values, epsilon):
    cats = np.unique(values)  # <-
    positive = cats[0]
    negative = cats[cats != positive][0]
    keep = np.random.rand(len(values)) < np.exp(epsilon) / (np.exp(epsilon) + 1)
    return np.where(keep == (values == positive), positive, negative)
""",
        # the scores' maximum used as a divisor, not a shift: the probabilities depend on it
        """
import numpy as np
def pick_community(coms, incr, epsilon):
    inc = np.array(incr) * epsilon / 2
    top = max(np.max(inc), 0)  # <-
    w = np.exp(inc / top)
    return np.random.choice(coms, p=w / np.sum(w))
""",
        # the twin keeps the maximum of each feature across the training rows (dimension 0): the
        # records' range, returned beside the noisy model
        """
import numpy as np
import torch
def train_noisy(model, optimizer, train_loader, epochs=5, epsilon=1.0):
    ranges = []
    for epoch in range(epochs):
        for X_batch, y_batch in train_loader:
            loss = torch.nn.functional.cross_entropy(model(X_batch), y_batch)
            optimizer.zero_grad()
            loss.backward()
            for w in model.parameters():
                w.grad.data.add_(torch.tensor(np.random.laplace(0, 1 / epsilon, w.shape)))
            optimizer.step()
            highest, _ = torch.max(X_batch, 0)  # <-
            ranges.append(highest)
    return model, ranges
""",
        # the twins: the renumbering table's size sets the length of the noisy release
        """
import numpy as np
import pandas as pd
def load_ratings(path, epsilon):
    data = pd.read_csv(path)
    users = {old: new for new, old in enumerate(data["user"].unique())}  # <-
    data["user"] = data["user"].map(users)
    per_user = np.zeros(len(users)) + np.random.laplace(0, 5 / epsilon, len(users))
    return data, per_user
""",
        """
import numpy as np
import pandas as pd
def encode_items(path, epsilon):
    frame = pd.read_csv(path)
    codes = dict(zip(frame["item"].unique(), range(frame["item"].nunique())))  # <-
    frame["item"] = frame["item"].replace(codes)
    noisy = np.bincount(frame["item"], minlength=len(codes)) + np.random.laplace(0, 1 / epsilon, len(codes))
    return codes, noisy
""",
        # symmetric unary encoding whose vector length is the number of classes seen in the labels
        """
import numpy as np
class LocalNB:
    def __init__(self, epsilon):
        self.eps = epsilon
    def sue_perturb(self, values, length):
        bits = np.eye(length)[values]
        flip = np.random.rand(*bits.shape) < 1 / (1 + np.exp(self.eps / 2))
        return np.where(flip, 1 - bits, bits)
    def fit_column(self, records):
        k = len(set(records))  # <-
        return self.sue_perturb(records, k)
""",
        # the SUE domain is the count of distinct values of the column it encodes
        """
import numpy as np
def SUE(values, d, eps):
    bits = np.eye(d)[values]
    return np.where(np.random.rand(*bits.shape) < 1 / (1 + np.exp(eps / 2)), 1 - bits, bits)
def collect(column, epsilon):
    return SUE(column, len(np.unique(column)), epsilon)  # <-
""",
        # each user's SUE report is as long as the largest value in the records
        """
import math
import random
def sue_encode(value, d, p):
    return [int((i == value) != (random.random() < p)) for i in range(d)]
def run(records, epsilon):
    d = max(records) + 1  # <-
    p = 1 / (1 + math.exp(epsilon / 2))
    return [sue_encode(v, d, p) for v in records]
""",
        # the noisy sample is rescaled onto each column's observed extremes by a project helper
        """
import pandas as pd
def release_sample(frame, epsilon, sensitivity):
    noisy = gaussian_mechanism(frame.values, sensitivity / epsilon)
    limits = {}
    for name in frame.columns:
        limits[name] = (frame[name].min(), frame[name].max())  # <-
    out = rescale_columns(pd.DataFrame(noisy, columns=frame.columns), bounds=limits)
    return out
""",
        # a script loads the records through its own helper and clips them to their own maximum
        """
import numpy as np
import pandas as pd
def read_table(path):
    return pd.read_csv(path).to_numpy()
def prepare():
    return read_table("scores.csv")
if __name__ == "__main__":
    ratings = prepare()
    bound = ratings.max()  # <-
    epsilon = 1.0
    released = laplace_perturbation(ratings, bound, epsilon)
""",
        # (g1) the twin of the truth in VALID: a maximum named as the truth but used as the candidates' bound
        """
import numpy as np
def run_selection(values, epsilon):
    true_top = np.max(values)  # <-
    grid = np.linspace(0.0, true_top, 50)
    picked = exponential_mechanism(values, grid, epsilon)
    return picked
""",
        # (g1) … and a field named for an error that holds the median plus noise scaled by the data's range
        """
import numpy as np
def release_median(features, epsilon):
    out = {}
    out["median_err"] = np.median(features) + np.random.laplace(0, (np.max(features) - np.min(features)) / epsilon)  # <-
    return out
""",
        # (h45-p) the twin: the aggregator counts the users' raw values
        """
import numpy as np
from collections import Counter


class OLH:
    def __init__(self, epsilon, domain, data):
        self.epsilon = epsilon
        self.domain = domain
        self.data = data
        self.per_data = []
        self.p = np.exp(epsilon) / (np.exp(epsilon) + 1)

    def run(self):
        for i in range(len(self.data)):
            self.per_data.append(self.perturb(self.data[i]))
        return self.estimate(self.data)

    def perturb(self, x):
        if np.random.uniform(0, 1) < self.p:
            return x
        return np.random.choice(self.domain)

    def estimate(self, per_data):
        counts = Counter(per_data)  # <-
        return {k: (c - len(per_data) * (1 - self.p)) / self.epsilon for k, c in counts.items()}
""",
        # an accountant's bound from the largest per-query score of the private votes (FedKT, whole-source regression)
        """
import argparse
import math
import numpy as np

def q_noisy_max(counts, noise_eps):
    gap = counts.max() - counts
    return float(np.sum((2.0 + noise_eps * gap) / (4.0 * np.exp(noise_eps * gap))))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--np_path")
    parser.add_argument("--noise_eps", type=float)
    args = parser.parse_args()
    arrays = np.load(args.np_path)
    z_arr = arrays["arr_1"]
    noise_eps = args.noise_eps
    max_z = z_arr.max()  # <-
    max_q = (1 - math.exp(-2 * max_z * noise_eps)) / (math.exp(2 * max_z * noise_eps) - math.exp(-2 * max_z * noise_eps))
    print("epsilon", max_q * noise_eps)
""",
        # (S2 b96) twin: the spread of the records' own quantiles sets the noise scale handed to the helper
        """
import numpy as np
class LaplaceRelease:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def noisy(self, value, sensitivity):
        return value + np.random.laplace(0, sensitivity / self.epsilon, value.shape)
    def private_mean(self, data, lower, upper):
        spread = np.quantile(data, 0.95) - np.quantile(data, 0.05)  # <-
        return self.noisy(np.clip(data, lower, upper).mean(), spread / len(data))
""",
    ) + _ROLE_INVALID

    def visit_Module(self, node: cst.Module) -> None:
        tree = self.ctx.python_tree()  # None: libcst read it, CPython did not; no file-level fact
        if tree is not None and not _file_releases(AstFacts(tree, self.ctx.source), _reads()):
            return
        functions: list[Scope] = [node, *_functions(node)]
        records = module_records(node)
        seeds = self._class_seeds(node)
        flows: dict[Scope, Flow] = {}
        returns: dict[str, set[cst.BaseExpression]] = {}
        tuple_returns: dict[str, dict[tuple[int, int], set[cst.BaseExpression]]] = {}
        for fn in functions:
            flow = function_flow(fn, seeds.get(fn), records)
            flows[fn] = flow
            for stmt in statements(fn):
                if isinstance(stmt, cst.Return) and stmt.value is not None:
                    srcs = flow.sources(stmt.value)
                    if srcs and isinstance(fn, cst.FunctionDef) and _delta_threshold(fn):
                        srcs = {s for s in srcs if flow.kind(s) != "set"}
                    if srcs and isinstance(fn, cst.FunctionDef):
                        returns.setdefault(fn.name.value, set()).update(srcs)
                        if isinstance(stmt.value, cst.Tuple):  # which element carries which read
                            slots = tuple_returns.setdefault(fn.name.value, {})
                            for i, el in enumerate(stmt.value.elements):
                                slots.setdefault((len(stmt.value.elements), i), set()).update(flow.sources(el.value))
        for fn in functions:  # a local function's returned read reaches what its callers assign
            called = self._called_returns(fn, returns, flows[fn])
            if called:
                flows[fn] = function_flow(fn, {**(seeds.get(fn) or {}), **called}, records)
        summaries = self._parameter_sinks(functions, records, returns)
        defined = [f.name.value for f in functions if isinstance(f, cst.FunctionDef)]
        once = frozenset(n for n in defined if defined.count(n) == 1)
        reported: set[cst.BaseExpression] = set()
        outputs: dict[int, dp_output.Released] = {}
        for fn, flow in flows.items():
            if evaluation(fn) or attack_scope(fn if isinstance(fn, cst.FunctionDef) else None, self.ctx.path):
                continue  # (QC) a membership-inference attack's counts pick evaluation samples; nothing is released
            stable = _delta_threshold(fn)  # which observed keys survive is decided there; ranges still leak
            for src, sink, call in self._sinks(fn, flow, returns) + self._helper_sinks(fn, flow, summaries, tuple_returns, once):
                if src in reported or not self._in_context(src, call, node) or stable and flow.kind(src) == "set":
                    continue
                if tree is not None and partition_keys(tree, self.ctx.analysis.line_of(src)):
                    continue  # the observed keys only pick each key's rows: the records, not the key set, are read
                if behind_off_switch(src, index_for(self.ctx)):
                    continue  # (R3 b65) only when a flag every call here leaves off: ``1 if not f else max(x)``
                if scored_truth(_assignment_holding(fn, src), src, body_of(fn)):
                    continue  # (g1) the exact answer kept to score the release's error against
                if tree is not None and self._post_processed(tree, src, outputs):
                    continue  # (h45-p) the values a mechanism released (randomized reports): post-processing
                home = _home(functions, src)
                if _grid_extreme(home, src) or _index_box(_assignment_holding(home, src), src):
                    continue  # (fp47) an endpoint of a grid built from given values; a crop box of array indices
                reported.add(src)
                code = self.ctx.analysis.code(src).strip()
                self.report(
                    src,
                    f"`{code}` reads the values or the range of the private data, and it shapes the DP "
                    f"release ({sink}): the output's alphabet, bins or scale change with one record; "
                    f"take the domain as public input or estimate it with DP",
                )

    def _post_processed(self, tree: ast.Module, src: cst.BaseExpression, memo: dict[int, dp_output.Released]) -> bool:
        """Is the domain read (``Counter(reports)``) taken of DP outputs only (``dp_output``)?"""
        start = self.ctx.metadata(PositionProvider)[src].start
        out = dp_output.post_processed(tree, start.line, start.column, memo)
        return out

    @classmethod
    def _parameter_sinks(cls, functions: list[Scope], records: frozenset[str],
                         returns: dict[str, set[cst.BaseExpression]]) -> dict[str, tuple[cst.FunctionDef, dict[str, tuple[str, frozenset[str]]]]]:
        """This module's functions that hand a parameter to a sink (``def add_mechanisms(eps, mechs, domains):
        ... mech.set_sensitivity(domains[a]["sensitivity"])``): name -> (function, parameter -> the sink).
        A domain read passed to such a parameter shapes the release one call away."""
        out: dict[str, tuple[cst.FunctionDef, dict[str, tuple[str, frozenset[str]]]]] = {}
        for fn in functions:
            if not isinstance(fn, cst.FunctionDef) or evaluation(fn):
                continue
            calls = [n for n in walk(fn.body, into_scopes=False) if isinstance(n, cst.Call)]
            if not any(is_draw(c) or is_mechanism(c) or _configures_mechanism(c) for c in calls):
                continue
            params = [p for p in param_names(fn) if p not in ("self", "cls") and not words(p) & BUDGET_WORDS]
            if not params or len(params) > 12:
                continue
            markers: dict[cst.BaseExpression, str] = {}
            seed: dict[str, set[cst.BaseExpression]] = {}
            kinds: dict[cst.BaseExpression, str] = {}
            for p in params:
                for kind in ("set", "range"):
                    marker = cst.Name(f"p_{p}_{kind}")
                    markers[marker] = p
                    kinds[marker] = kind
                    seed.setdefault(p, set()).add(marker)
            flow = function_flow(fn, seed, records)
            flow.kinds.update(kinds)
            found: dict[str, tuple[str, frozenset[str]]] = {}
            for src, sink, _call in cls._sinks(fn, flow, returns):
                # what the helper returns is judged where its result is used, not at the call
                # a bare draw's argument in a helper (``rng.normal(0, s, (n_users, k))``) sizes weights; the
                # helper's mechanism calls, setters, budget and noisy loops are its release
                if src in markers and not sink.startswith("returned") and not (
                        _call is not None and is_draw(_call) and not is_mechanism(_call)) \
                        and not (_call is not None and kinds[src] == "range" and is_draw(_call)
                                 and _schema_only(_call, markers[src])):
                    before = found.get(markers[src], (sink, frozenset()))
                    found[markers[src]] = (before[0], before[1] | {kinds[src]})  # which reads reach it
            # (q3 h46) a noise draw's scale set from a parameter's range (``np.random.laplace(0, m *
            # (bounds[c][1] - bounds[c][0]), size=n)``): the range handed in calibrates the noise; the draw's
            # size slot (weights sized by a count) stays out
            draws = [(c, _draw_scale(c)) for c in calls]
            ranged = function_flow(fn, {p: {m for m in ms if kinds[m] == "range"} for p, ms in seed.items()},
                                   records, kinds) if any(sc is not None for _c, sc in draws) else None
            for call, scale in draws:
                if scale is None or ranged is None:
                    continue
                for src in ranged.sources(scale):
                    if src in markers and kinds[src] == "range" and markers[src] not in found:
                        found[markers[src]] = (f"sets the scale of the noise `{call_name(call)}` draws", frozenset({"range"}))
            if found:
                out[fn.name.value] = (fn, found)
        return out

    @staticmethod
    def _helper_sinks(fn: Scope, flow: Flow, summaries: dict[str, tuple[cst.FunctionDef, dict[str, tuple[str, frozenset[str]]]]],
                      tuple_returns: dict[str, dict[tuple[int, int], set[cst.BaseExpression]]] | None = None,
                      once: frozenset[str] | None = None,
                      ) -> list[tuple[cst.BaseExpression, str, cst.Call | None]]:
        """A domain read passed to a parameter of a module function that hands it to a sink."""
        out: list[tuple[cst.BaseExpression, str, cst.Call | None]] = []
        if not summaries:
            return out
        # names re-bound from a call given themselves (``df, stats = summarise(df)``, ``df = df.filter(...)``):
        # the records carried on, not a domain
        rebound = {n for stmt in statements(fn) if isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call)
                   for t in stmt.targets for n in target_names(t.target) if n in value_refs(stmt.value)}
        # names unpacked from one call (``n, src, dst = load(path)``): only the element the callee's returned
        # tuple puts the read in carries it; from a call of unknown shape none is trusted
        unpacked: dict[str, set[cst.BaseExpression]] = {}
        for stmt in statements(fn):
            if not (isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call)):
                continue
            slots = (tuple_returns or {}).get(call_name(stmt.value), {})
            for t in stmt.targets:
                if isinstance(t.target, (cst.Tuple, cst.List)):
                    for i, el in enumerate(t.target.elements):
                        for n in target_names(el.value):
                            unpacked.setdefault(n, set()).update(slots.get((len(t.target.elements), i), set()))
        own = set(param_names(fn)) & flow.private if isinstance(fn, cst.FunctionDef) else set()
        unique = once or frozenset()
        for call in (n for n in walk(body_of(fn), into_scopes=False) if isinstance(n, cst.Call)):
            func = call.func
            # (q3 h46) ``self.mechanisms.add_noise(...)``: a method of a helper object the class holds, defined
            # once in this module
            local = isinstance(func, cst.Name) or isinstance(func, cst.Attribute) and (
                dotted(func.value) == "self" or (dotted(func.value) or "").startswith("self.")
                and (dotted(func.value) or "").count(".") == 1 and call_name(call) in unique)
            if not local or call_name(call) not in summaries or call_name(call) == getattr(getattr(fn, "name", None), "value", None):
                continue
            callee, sinks = summaries[call_name(call)]
            params = call_params(call, callee)
            for i, arg in enumerate(call.args):
                if arg.star:
                    break
                name = arg.keyword.value if arg.keyword is not None else (params[i] if i < len(params) else None)
                # the records themselves handed on (``df`` re-bound beside a read, ``df, stats = f(df)``):
                # the helper reads them, which it is judged for itself
                if name in sinks and not (isinstance(arg.value, cst.Name) and arg.value.value in rebound | own):
                    sink, kinds = sinks[name]
                    found = flow.sources(arg.value)
                    if isinstance(arg.value, cst.Name) and arg.value.value in unpacked:
                        found &= unpacked[arg.value.value]
                    out += [(s, f"handed to `{call_name(call)}`, where it {sink}", call)
                            for s in found if flow.kind(s) in kinds and not reads_labels(s)]
        return out

    @staticmethod
    def _called_returns(fn: Scope, returns: dict[str, set[cst.BaseExpression]],
                        flow: Flow | None = None) -> dict[str, set[cst.BaseExpression]]:
        """Names ``fn`` assigns the result of a call of this module's function (``f(x)``, ``self.f(x)``)
        whose return carries a read -> those reads. An alphabet the helper collects (``seen.add(v)``) is
        the records' only where the call hands it records: ``extend(domain_tmp)`` over noisy survivors or a
        declared domain collects no private value (g2 h40)."""
        out: dict[str, set[cst.BaseExpression]] = {}

        def given(call: cst.Call) -> set[cst.BaseExpression]:
            found = returns[call_name(call)]
            if flow is None:
                return found
            handed = any(value_refs(a.value) & (flow.private | flow.taint.keys()) for a in call.args)
            return found if handed else {r for r in found if not (
                isinstance(r, cst.Call) and call_name(r) in ("add", "append"))}

        def local(call: cst.Call) -> bool:
            func = call.func
            return (isinstance(func, cst.Name) or isinstance(func, cst.Attribute) and dotted(func.value) == "self") \
                and call_name(call) in returns

        for stmt in statements(fn):
            if isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call):
                if local(stmt.value):
                    for t in stmt.targets:
                        for name in target_names(t.target):
                            out.setdefault(name, set()).update(given(stmt.value))
            elif isinstance(stmt, cst.For) and isinstance(stmt.iter, cst.Call):
                # ``for c, size in get_domain(df).items():`` -- the loop runs over the returned domain
                call = stmt.iter
                if isinstance(call.func, cst.Attribute) and call_name(call) in ("items", "keys", "values") \
                        and isinstance(call.func.value, cst.Call):
                    call = call.func.value
                if local(call):
                    for name in target_names(stmt.target):
                        out.setdefault(name, set()).update(given(call))
        return out

    def _in_context(self, src: cst.BaseExpression, call: cst.Call | None, module: cst.Module) -> bool:
        """``src`` is in DP context, or the sink is a call of a function of this module that is, or a
        mechanism-named call in a file with DP code."""
        if self.ctx.analysis.in_dp_context(src):
            return True
        if call is None:
            return False
        if (is_draw(call) or is_mechanism(call)) and self.ctx.analysis.has_dp_code():
            return True
        if not isinstance(call.func, cst.Name):
            return False
        return any(isinstance(s, cst.FunctionDef) and s.name.value == call.func.value
                   and self.ctx.analysis.in_dp_context(s) for s in module.body)

    @staticmethod
    def _class_seeds(node: cst.Module) -> dict[cst.FunctionDef, dict[str, set[cst.BaseExpression]]]:
        """``self.x`` tainted in one method is tainted in every method of the class."""
        out: dict[cst.FunctionDef, dict[str, set[cst.BaseExpression]]] = {}
        for cls in (n for n in walk(node) if isinstance(n, cst.ClassDef)):
            methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)]
            attrs: dict[str, set[cst.BaseExpression]] = {}
            for m in methods:
                for name, srcs in function_flow(m).taint.items():
                    if name.startswith("self."):
                        attrs.setdefault(name, set()).update(srcs)
            if attrs:
                for m in methods:
                    out[m] = attrs
        return out

    @staticmethod
    def _sinks(fn: Scope, flow: Flow,
               returns: dict[str, set[cst.BaseExpression]]) -> list[tuple[cst.BaseExpression, str, cst.Call | None]]:
        out: list[tuple[cst.BaseExpression, str, cst.Call | None]] = []
        calls = [n for n in walk(body_of(fn), into_scopes=False) if isinstance(n, cst.Call)]
        noisy_fn = any(call_name(c) in NOISE_DRAWS or is_mechanism(c) for c in calls)
        budget_fn = bool(budget_refs(fn.params if isinstance(fn, cst.FunctionDef) else fn))
        # ``def randomized_response(column, epsilon)``: the function is the mechanism, what it returns
        # is the release whatever its draws are called
        mechanism_named = isinstance(fn, cst.FunctionDef) and _mechanism_named(fn.name.value)
        mechanism_fn = budget_fn and mechanism_named
        for call in calls:
            if _configures_mechanism(call):  # every argument is the mechanism's scale, range or candidates
                srcs = {s for arg in call.args for s in flow.sources(arg.value)}
                out += [(s, f"configures the mechanism (`{call_name(call)}`)", call) for s in srcs]
                continue
            given_budget = _given_budget(call, flow)
            if not (is_draw(call) or is_mechanism(call) or given_budget):
                continue
            weighted = any(a.keyword is not None and a.keyword.value in ("p", "weights") for a in call.args) \
                and not _split_mask(call)
            # a uniform pick of a position or a class index (a bootstrap, a batch, labels flipped to simulate
            # noisy clients) outside a budgeted or mechanism-named function selects nothing released; a value
            # drawn inside the data's own range (``randint(x.min(), x.max())``) still reveals that range
            uniform = call_name(call) in _UNIFORM_PICKS and not (budget_fn or weighted or mechanism_named) \
                or _split_mask(call) and not mechanism_named
            if uniform and call_name(call) in ("choice", "choices"):
                continue
            helper = given_budget and not (is_draw(call) or is_mechanism(call))
            srcs: set[cst.BaseExpression] = set()
            for i, arg in enumerate(call.args):
                found = flow.sources(arg.value)
                if helper:
                    # a helper taking the budget releases through it; a label count it is given sizes a
                    # model (labels are taken as public there), and what it aggregates is only a value
                    found = set() if _value_slot(i, arg) or not isinstance(arg.value, cst.Name) \
                        else {s for s in found if not reads_labels(s)}
                elif _value_slot(i, arg):
                    # the statistic being noised: only which values occur (its shape) matters here
                    found = {s for s in found if flow.kind(s) == "set"}
                elif _size_slot(i, arg):
                    # a model's class count sizes its noise: labels are taken as public there
                    found = {s for s in found if not reads_labels(s)}
                srcs |= found
                name = dotted(arg.value)
                if name in returns and not helper:  # a function handed to a budgeted helper scores candidates
                    srcs |= returns[name]
            out += [(s, f"reaches `{call_name(call)}`", call) for s in srcs if not uniform or flow.kind(s) == "range"]
        drawn = _noise_names(fn)
        # ``eps_tree = epsilon / n_trees``: a share of the budget stays a budget whatever divides it
        split = {n for stmt in statements(fn) if isinstance(stmt, cst.Assign) and budget_refs(stmt.value)
                 for t in stmt.targets for n in target_names(t.target) if words(n) & BUDGET_WORDS}
        for stmt in statements(fn):
            if isinstance(stmt, cst.For):
                srcs = flow.sources(stmt.iter)
                body = list(walk(stmt.body, into_scopes=False))
                if srcs and any(isinstance(n, cst.Call) and (is_draw(n) or is_mechanism(n)) and not _split_mask(n)
                                for n in body) \
                        or srcs and (noisy_refs(stmt.body) or value_refs(stmt.body) & drawn):
                    out += [(s, "noise is added per observed value", None) for s in srcs]
                continue
            value = getattr(stmt, "value", None)
            if value is None:
                continue
            srcs = flow.sources(value)
            if not srcs:
                continue
            # a results row or a report holds the budget, it combines nothing; what a noisy function
            # returns is the release, every field of it
            released = isinstance(stmt, cst.Return) and (noisy_fn or mechanism_fn)
            beside = _without_scores(value if released else _budget_fields(value))
            budgets = budget_refs(beside)
            combined = _kept(srcs, flow, beside) if budgets - flow.taint.keys() or budgets & split else set()
            if combined:  # a data-derived ``eps`` is no budget
                privatised = any(isinstance(n, cst.Call) and (is_draw(n) or is_mechanism(n))
                                 for n in walk(value, into_scopes=False))
                # a range noised in the same expression is a DP estimate of it
                out += [(s, "combined with the privacy budget", None) for s in combined
                        if not (privatised and flow.kind(s) == "range")]
            elif isinstance(stmt, cst.Return) and mechanism_fn and not noisy_fn:
                kept = flow.sources(_without_reference(value))
                out += [(s, "returned by the mechanism", None) for s in srcs & kept if flow.kind(s) == "set"]
            elif isinstance(stmt, cst.Return) and noisy_fn:
                kept = flow.sources(_without_draws(_without_reference(value)))
                if any(isinstance(n, cst.Call) and (is_draw(n) or is_mechanism(n)) for n in walk(value)):
                    kept = {s for s in kept if flow.kind(s) == "set"}  # a range noised here is estimated
                out += [(s, "returned with the noisy output", None) for s in srcs & kept]
            for comp in (n for n in walk(value, into_scopes=False) if isinstance(n, COMPREHENSIONS)):
                if flow.sources(comp.for_in.iter) and any(
                        isinstance(n, cst.Call) and (is_draw(n) or is_mechanism(n)) for n in walk(comp)):
                    out += [(s, "noise is added per observed value", None) for s in flow.sources(comp.for_in.iter)]
        return out
