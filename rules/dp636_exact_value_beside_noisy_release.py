"""DP636: the exact statistic is printed or logged beside its noisy release."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, target_names, value_refs, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS
from dpcheck.rule import Rule

#: words of a helper that releases its first argument with noise (``laplace_mechanism(count, 1, eps)``)
_MECHANISM_WORDS = frozenset({"mechanism", "privatize", "privatise", "perturb", "noisy", "noised", "randomize"})
_ADD_NOISE_WORDS = frozenset({"noise", "laplace", "gaussian", "geometric", "lap"})
#: statistics of a data set: a value computed by one of them is an exact query answer
_STATISTICS = frozenset({"len", "sum", "mean", "median", "min", "max", "count", "std", "var", "nunique", "quantile",
                         "percentile", "nanmean", "nansum", "nanmedian", "amin", "amax", "value_counts", "size"})
#: method calls that keep the receiver's records (``col.dropna().max()`` is a statistic of ``col``)
_KEEP_RECORDS = frozenset({"dropna", "fillna", "astype", "to_numpy", "values", "copy", "abs"})
#: names of training state, not query answers: a debug print of a gradient is another rule's business
_TRAINING_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "update", "updates", "weight", "weights",
                             "param", "params", "parameters", "model", "loss", "epoch", "step", "eps", "epsilon",
                             "delta", "sigma", "sensitivity", "scale", "budget", "noise", "noisy", "private",
                             "dp", "priv", "noised", "released", "perturbed", "clip", "bound", "bounds", "lower",
                             "upper", "threshold", "seed", "test", "synthetic", "syn", "synth", "public"})
#: modules whose statistics take the data as their first argument (``np.mean(x)``, ``torch.sum(x)``)
_LIBRARIES = frozenset({"np", "numpy", "statistics", "torch", "tf", "jnp", "math", "pd", "scipy", "stats"})
#: calls whose result maps each value to its exact count
_COUNTERS = frozenset({"value_counts", "groupby", "Counter", "bincount", "crosstab"})
_LOG_METHODS = frozenset({"info", "debug", "warning", "warn", "log", "error"})


def _draws(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and call_name(n) in NOISE_DRAWS
               for n in walk(expr))


def _mechanism(call: cst.Call) -> bool:
    w = words(call_name(call))
    if isinstance(call.func, cst.Attribute) and call_name(call) in NOISE_DRAWS:
        return False  # a primitive draw: its first argument is a location, not the released value
    return bool(w & _MECHANISM_WORDS or "add" in w and w & _ADD_NOISE_WORDS)


def _released(expr: cst.CSTNode) -> bool:
    return _draws(expr) or any(isinstance(n, cst.Call) and _mechanism(n) for n in walk(expr))


def _root(expr: cst.BaseExpression) -> str | None:
    """The data a statistic reads: ``df`` of ``len(df)``, ``df['x'].max()``, ``col.dropna().mean()``."""
    while True:
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)
              and expr.func.attr.value in _KEEP_RECORDS):
            expr = expr.func.value
        elif isinstance(expr, cst.Attribute) and expr.attr.value == "values":
            expr = expr.value
        elif isinstance(expr, cst.Comparison):
            expr = expr.left  # ``(labels == c).sum()`` counts records of ``labels``
        else:
            break
    return expr.value if isinstance(expr, cst.Name) else None


def _statistic_root(expr: cst.BaseExpression, shape: bool = True) -> str | None:
    """``len(df)`` / ``df[c].max()`` / ``np.mean(x)`` / ``df.shape[0]``: the data name the exact statistic reads."""
    while isinstance(expr, cst.Call) and call_name(expr) in ("int", "float", "round"):
        if not expr.args:
            return None
        expr = expr.args[0].value
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        return _root(expr.value.value) if shape else None
    if not isinstance(expr, cst.Call) or call_name(expr) not in _STATISTICS:
        return None
    if isinstance(expr.func, cst.Attribute) and not (isinstance(expr.func.value, cst.Name)
                                                      and expr.func.value.value in _LIBRARIES):
        return _root(expr.func.value)
    return _root(expr.args[0].value) if expr.args else None


def _training(name: str) -> bool:
    return bool(words(name) & _TRAINING_WORDS)


def _is_log(call: cst.Call) -> bool:
    if isinstance(call.func, cst.Name):
        return call.func.value == "print"
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _LOG_METHODS:
        return bool(words(call_name(call.func.value) if isinstance(call.func.value, cst.Call) else
                          (call.func.value.value if isinstance(call.func.value, cst.Name) else
                           call.func.value.attr.value if isinstance(call.func.value, cst.Attribute) else ""))
                    & {"logger", "logging", "log", "logs"})
    return False


class ExactValueBesideNoisyRelease(Rule):
    id = "DP636"
    name = "exact-value-beside-noisy-release"
    category = "general"
    severity = "error"
    summary = ("the exact statistic (the count `len(df)`, a share `count / len(df)`, the true mean, min or max) is "
               "printed or logged in the same function that releases its noisy version")
    rationale = (
        "The noisy answer protects nothing when the exact one is published beside it: a report that prints "
        "`~{noisy_size} records` and then `Actual size: {true_size}`, the share `count / len(df)` next to the "
        "noisy count, or the true mean, minimum and maximum of the column whose mean it noises, releases the "
        "exact query answer, and one record changes it. Reported: a `print` or a logger call in a function (or "
        "script) that hands a local statistic of the data (`len(df)`, `col.mean()`, a count from "
        "`value_counts().items()`) to a noise mechanism (`laplace_mechanism(x, …)`, `add_noise(x, …)`, "
        "`x + np.random.laplace(…)`), when the printed expression reads that exact value, a value computed from "
        "it without noise, or another statistic (`len`, `min`, `max`, `mean`, `sum`…) of the same data. "
        "Not reported: the noisy value, the parameters (ε, the sensitivity, the bounds), training state "
        "(gradients, weights, loss), statistics of test, synthetic or public data, the schema "
        "(`len(df.columns)`), a mechanism helper's own parameter. "
        "Fix: print only the noisy value (or a DP estimate charged to the budget); keep exact values for an "
        "offline evaluation that is not published."
    )
    TRIGGERS = ("print", "log")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a print or logger call and a noise draw or a mechanism-named call in the file."""
        called = facts.called
        if not called & ({"print"} | _LOG_METHODS):
            return False
        return bool(called & NOISE_DRAWS) or any(
            words(n) & _MECHANISM_WORDS or "add" in words(n) and words(n) & _ADD_NOISE_WORDS for n in called)

    VALID = (
        # twin of the exact size: only the noisy size is printed
        """
import numpy as np
def laplace_mechanism(value, sensitivity, epsilon):
    return value + np.random.laplace(0, sensitivity / epsilon)
def overview(df, epsilon):
    true_size = len(df)
    noisy_size = int(laplace_mechanism(true_size, 1, epsilon))
    print(f"records (private): ~{noisy_size}")
    print(f"columns: {len(df.columns)}")
    return noisy_size
""",
        # twin of the exact share: the share is computed from the noisy count
        """
import numpy as np
def laplace_mechanism(value, sensitivity, epsilon):
    return value + np.random.laplace(0, sensitivity / epsilon)
def shares(df, col, epsilon, public_total):
    for value, count in df[col].value_counts().items():
        noisy_count = max(0, laplace_mechanism(count, 1, epsilon))
        share = noisy_count / public_total * 100
        print(f"{value}: ~{noisy_count} ({share:.1f}%)")
""",
        # the parameters and the noisy mean are logged; the bounds are public
        """
import logging
import numpy as np
logger = logging.getLogger(__name__)
def dp_mean(values, lower, upper, epsilon):
    clipped = np.clip(values, lower, upper)
    total = clipped.sum()
    noisy_total = total + np.random.laplace(0, (upper - lower) / epsilon)
    logger.info("epsilon=%s bounds=(%s, %s) noisy total=%s", epsilon, lower, upper, noisy_total)
    return noisy_total
""",
        # DP-SGD: the noised gradient sum and the loss are printed (training state, not a query answer)
        """
import torch
def dp_step(per_sample_grads, clip, sigma, loss):
    grad_sum = per_sample_grads.sum(0)
    noisy = grad_sum + torch.normal(0, sigma * clip, grad_sum.shape)
    print("loss", loss.item(), "batch", len(per_sample_grads))
    return noisy
""",
        # ordinary ML: Gaussian augmentation of inputs, the batch mean printed, no DP release
        """
import numpy as np
def augment(batch, std=0.1):
    mean = batch.mean()
    out = batch + np.random.normal(0, std, batch.shape)
    print("batch mean", mean)
    return out
""",
        # a statistic of the test split is printed beside the noisy training count
        """
import numpy as np
def report(train, test, epsilon):
    n_train = len(train)
    noisy_n = n_train + np.random.laplace(0, 1 / epsilon)
    n_test = len(test)
    print("noisy train size", noisy_n, "test size", n_test)
""",
    )
    INVALID = (
        # the exact size printed right after the noisy one
        """
import numpy as np
def laplace_mechanism(value, sensitivity, epsilon):
    return value + np.random.laplace(0, sensitivity / epsilon)
def overview(df, epsilon):
    true_size = len(df)
    noisy_size = int(laplace_mechanism(true_size, 1, epsilon))
    print(f"records (private): ~{noisy_size}")
    print(f"records (exact): {true_size}")  # <-
    return noisy_size
""",
        # the exact share of each category printed next to its noisy count
        """
import numpy as np
def laplace_mechanism(value, sensitivity, epsilon):
    return value + np.random.laplace(0, sensitivity / epsilon)
def shares(df, col, epsilon):
    for value, count in df[col].value_counts().items():
        noisy_count = max(0, laplace_mechanism(count, 1, epsilon))
        share = count / len(df) * 100
        print(f"{value}: ~{noisy_count} ({share:.1f}% actual)")  # <-
""",
        # the exact min and max of the column whose mean is noised
        """
import numpy as np
def add_laplace_noise(value, sensitivity, epsilon):
    return value + np.random.laplace(0, sensitivity / epsilon)
def describe(frame, epsilon):
    col = frame["amount"].dropna()
    true_mean = col.mean()
    lo, hi = col.min(), col.max()
    private_mean = add_laplace_noise(true_mean, (hi - lo) / len(col), epsilon)
    print(f"mean (private): {private_mean:.1f}")
    print(f"range: {lo} - {hi}")  # <-
""",
        # the exact total logged beside the noised one, noise added inline
        """
import logging
import numpy as np
log = logging.getLogger("release")
def release_total(records, epsilon):
    total = records["cost"].sum()
    released = total + np.random.laplace(0, 1000 / epsilon)
    log.info("released %.1f (true %.1f)", released, total)  # <-
    return released
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        scopes: list[cst.CSTNode] = [node, *(n for n in walk(node) if isinstance(n, cst.FunctionDef))]
        for scope in scopes:
            self._check(scope)

    def _check(self, scope: cst.CSTNode) -> None:
        body = scope.body if isinstance(scope, cst.FunctionDef) else scope
        nodes = list(walk(body, into_scopes=False))
        # local definitions: name -> the expressions assigned to it (loop targets: the loop's iterable)
        defs: dict[str, list[cst.BaseExpression]] = {}
        loop_vars: dict[str, cst.BaseExpression] = {}
        for n in nodes:
            if isinstance(n, cst.Assign):
                if len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Tuple) and isinstance(n.value, cst.Tuple) \
                        and len(n.targets[0].target.elements) == len(n.value.elements):
                    for t, v in zip(n.targets[0].target.elements, n.value.elements):
                        for name in target_names(t.value):
                            defs.setdefault(name, []).append(v.value)
                    continue
                for t in n.targets:
                    for name in target_names(t.target):
                        defs.setdefault(name, []).append(n.value)
                    if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name):
                        defs.setdefault(t.target.value.value, []).append(n.value)  # ``hist[c] = (y == c).sum()``
            elif isinstance(n, cst.AnnAssign) and n.value is not None:
                for name in target_names(n.target):
                    defs.setdefault(name, []).append(n.value)
            elif isinstance(n, cst.For):
                for name in target_names(n.target):
                    loop_vars[name] = n.iter
        # the exact values handed to a mechanism, and the data they are statistics of
        exact: set[str] = set()
        roots: set[str] = set()
        for n in nodes:
            true_value: cst.BaseExpression | None = None
            if isinstance(n, cst.Call) and _mechanism(n) and n.args and n.args[0].keyword is None:
                true_value = n.args[0].value
            elif isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Add):
                if _draws(n.right) and not _draws(n.left):
                    true_value = n.left
                elif _draws(n.left) and not _draws(n.right):
                    true_value = n.right
            if not isinstance(true_value, cst.Name) or _training(true_value.value):
                continue
            name = true_value.value
            for value in defs.get(name, []):
                root = _statistic_root(value)
                if root is not None and not _training(root):
                    exact.add(name)
                    roots.add(root)
            it = loop_vars.get(name)
            if it is not None and any(isinstance(c, cst.Call) and call_name(c) in ("items", "iteritems")
                                      for c in walk(it)):
                # the counts iterated: the loop's iterable, or the local it was computed into
                sources = [it, *(v for r in value_refs(it) for v in defs.get(r, []))]
                if any(isinstance(c, cst.Call) and call_name(c) in _COUNTERS for src in sources for c in walk(src)):
                    exact.add(name)
        if not exact:
            return
        # other statistics of the same data, and values computed from exact ones without noise
        changed = True
        while changed:
            changed = False
            for name, values in defs.items():
                if name in exact or _training(name):
                    continue
                for value in values:
                    if _released(value) or any(_training(r) for r in value_refs(value)):
                        continue  # noised, or a parameter calibrated with ε (another rule's business)
                    # another statistic of the same data (not its shape: a histogram's shape is its domain)
                    root = _statistic_root(value, shape=False)
                    if root in roots or value_refs(value) & exact:
                        exact.add(name)
                        changed = True
                        break
        for n in nodes:
            if not isinstance(n, cst.Call) or not _is_log(n):
                continue
            for arg in n.args:
                hit = self._exact_read(arg.value, exact, roots)
                if hit is not None:
                    self.report(n, f"the exact value `{hit}` is printed beside its noisy release: the output "
                                   "publishes the exact query answer, so the noise protects nothing; print only "
                                   "the noisy value")
                    break

    @staticmethod
    def _exact_read(expr: cst.BaseExpression, exact: set[str], roots: set[str]) -> str | None:
        read = sorted(value_refs(expr) & exact)
        if read:
            return read[0]
        for sub in walk(expr):
            if isinstance(sub, (cst.Call, cst.Subscript)):
                root = _statistic_root(sub, shape=False)
                if root is not None and root in roots:
                    return cst.Module([]).code_for_node(sub)
        return None
