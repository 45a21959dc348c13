"""Code that reads the data but releases nothing DP: simulated data sets and utility evaluation.

``simulated`` answers whether a value is built only from random draws in its function (a
generator of toy data for an experiment, not anyone's records). ``evaluation_after_release``
answers whether a read sits in a utility-evaluation module (classifier metrics, no noise of its
own) after the function's last use of the privacy budget, so it cannot shape what was released.
"""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from dpcheck.cstwalk import children
from dpcheck.analysis.syntax import call_name, dotted, target_names, value_refs, walk, words

_LIBS = frozenset({"np", "numpy", "pd", "pandas", "torch", "math", "scipy", "stats"})
_METRICS = frozenset({
    "accuracy_score", "f1_score", "roc_auc_score", "r2_score", "mean_squared_error", "mean_absolute_error",
    "classification_report", "confusion_matrix", "precision_score", "recall_score",
    "average_precision_score", "balanced_accuracy_score",
})
_NOISE = frozenset({"laplace", "normal", "gumbel", "exponential", "geometric", "randn", "normal_"})
_NOISE_WORDS = frozenset({"mechanism", "noise", "noisy", "privatize", "privatise", "perturb", "laplace", "gaussian"})
_EVAL_MODULE_WORDS = frozenset({"utility", "utilities", "metrics", "evaluation", "evaluate"})
_REPORTING = frozenset({"print", "info", "debug", "warning", "log", "write", "to_csv", "format", "savefig", "set_title"})
_BUDGET_WORDS = frozenset({"epsilon", "eps", "budget", "rho", "noise", "multiplier", "sigma"})


def _drawn(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Call) and "random" in (dotted(n.func) or "").split(".") for n in walk(expr))


def _built_from(value: cst.BaseExpression, names: set[str]) -> bool:
    """Does ``value`` read some names, all of them in ``names`` (a file read reads none)?"""
    read = {r for r in value_refs(value) if r.split(".")[0] not in _LIBS}
    return bool(read) and read <= names


_PREDICTIONS = frozenset({
    "predict", "predict_proba", "predict_log_proba", "decision_function", "score_samples",
})


def _predicted(expr: cst.CSTNode) -> bool:
    """A model's output on some inputs (``clf.decision_function(X_test)``), maybe wrapped."""
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
               and n.func.attr.value in _PREDICTIONS for n in walk(expr))


def model_scores(name: str, fn: cst.FunctionDef) -> bool:
    """Is every value ``fn`` binds to ``name`` a model's predictions or built from them? Rescaling
    scores for a metric reads the model's outputs, not the bounds of anyone's records."""
    return _grounded(name, fn, _predicted)


def simulated(name: str, fn: cst.FunctionDef) -> bool:
    """Is every value ``fn`` binds to ``name`` drawn at random or built from such values?"""
    return _grounded(name, fn, _drawn)


def _grounded(name: str, fn: cst.FunctionDef, seed: Callable[[cst.CSTNode], bool]) -> bool:
    bindings: dict[str, list[cst.BaseExpression]] = {}
    for node in walk(fn.body, into_scopes=False):
        if isinstance(node, cst.Assign):
            for t in node.targets:
                for n in target_names(t.target):
                    bindings.setdefault(n, []).append(node.value)
    if name not in bindings:
        return False
    done: set[str] = set()
    for _ in range(4):
        for n, values in bindings.items():
            if n in done:
                continue
            grounded = any(seed(v) or _built_from(v, done) for v in values)
            if grounded and all(seed(v) or _built_from(v, done | {n}) for v in values):
                done.add(n)
    return name in done


LineOf = Callable[[cst.CSTNode], int]


def _budget_lines(scope: cst.CSTNode, line_of: LineOf) -> list[int]:
    """Lines naming a budget outside reporting (f-strings, ``print``, logging, file names)."""
    out: list[int] = []
    stack: list[cst.CSTNode] = [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.FormattedString) or (isinstance(node, cst.Call)
                                                     and call_name(node) in _REPORTING):
            continue
        if node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(node, cst.Name) and words(node.value) & _BUDGET_WORDS:
            out.append(line_of(node))
        stack.extend(children(node))
    return out


def _evaluation_import(module: str) -> bool:
    """A project's own evaluation module (``from utility_tests import *``); not a package's
    (``synthcity.metrics``, whose functions score anything), not a privacy metric."""
    if "." in module:
        return False
    last = words(module)
    return bool(last & _EVAL_MODULE_WORDS) and not last & {"privacy", "private", "dp"}


def evaluation_module(module: cst.Module) -> bool:
    """Does the module score models or synthetic data (classifier metrics, an imported
    utility/evaluation module of the project) and draw no noise itself? (A model's own
    ``predict`` is not scoring.)"""
    scores = False
    for node in walk(module):
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            names = [dotted(node.module)] if isinstance(node, cst.ImportFrom) else \
                [dotted(a.name) for a in node.names]  # type: ignore[union-attr]
            scores = scores or any(n and _evaluation_import(n) for n in names)
        if not isinstance(node, cst.Call):
            continue
        name = call_name(node)
        if name in _NOISE or words(name) & _NOISE_WORDS:
            return False
        scores = scores or name in _METRICS
    return scores


def after_release(call: cst.Call, fn: cst.FunctionDef | None, module: cst.Module, line_of: LineOf) -> bool:
    """Is ``call`` after the last mention of a privacy budget (or noise scale) in its function (or
    module-level code)? In an ``evaluation_module`` such a read cannot shape what was released."""
    line = line_of(call)
    return all(b < line for b in _budget_lines(fn if fn is not None else module, line_of))


#: words of a function or module that measures rather than releases (utility, latency, plots)
_MEASURING_WORDS = frozenset({
    "evaluation", "evaluate", "eval", "metrics", "metric", "plot", "plotting", "visualize", "visualise",
    "visualization", "assessment", "performance", "benchmark", "benchmarks", "report", "reporting",
    # (g37-4) British spellings; attack code measures a released model (a membership or backdoor test), it
    # releases nothing of its own (not "defense": DP itself is one)
    "visualisation", "visualisations", "vis", "attack", "attacks", "backdoor",
})
#: (g37-4) folder names that hold measuring code only (``src/2_evaluation/…``, ``backdoor_defenses/``)
_MEASURING_DIR_WORDS = frozenset({"evaluation", "eval", "metrics", "plots", "plotting", "visualisation",
                                  "visualization", "vis", "attacks", "backdoor"})
#: words of a function (not a module: a ``validate.py`` script may train) that profiles the data,
#: validates an upload (without raising) or scores re-identification risk
_DESCRIBING_WORDS = frozenset({"profile", "profiling", "validate", "validator", "risk", "dcr", "nndr"})
_SYNTHETIC_WORDS = frozenset({"syn", "synth", "synthetic", "fake", "generated"})


def _scope_words(name: str) -> set[str]:
    return {w[:-1] if len(w) > 4 and w.endswith("s") else w for w in words(name)} | words(name)


def measuring_folder(path: str) -> bool:
    """(g37-4) Is the file in a folder that holds measuring code only (``src/2_evaluation/``,
    ``backdoor_defenses/``, ``attacks/``, ``vis/``)?"""
    parts = path.replace("\\", "/").split("/")
    return bool(set().union(*(words(p) for p in parts[-3:-1])) & _MEASURING_DIR_WORDS) if len(parts) > 1 else False


def measuring_scope(fn: cst.FunctionDef | None, path: str) -> bool:
    """Is the read in a function (or a module) named for measuring (``evaluation_and_save``,
    ``performance_assessment.py``) whose function draws no noise and calls no mechanism, trainer or
    privacy engine? Such
    a function scores or times what was released; its reads shape nothing released."""
    parts = path.replace("\\", "/").split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    folders = set().union(*(words(p) for p in parts[-3:-1])) if len(parts) > 1 else set()
    named = bool(_scope_words(stem) & _MEASURING_WORDS) or bool(folders & _MEASURING_DIR_WORDS) or (
        fn is not None and bool(_scope_words(fn.name.value) & _MEASURING_WORDS)) or (
        # a test function (``test_count_mean_sketch``) checks a mechanism's output against the truth
        fn is not None and fn.name.value.startswith("test")) or (
        # a validator that raises on the data reveals what it found
        fn is not None and bool(_scope_words(fn.name.value) & _DESCRIBING_WORDS)
        and not any(isinstance(n, cst.Raise) for n in walk(fn)))
    if not named or fn is None:
        return False
    # training or fitting inside such a function prepares the release, unless the function handles
    # no budget and compares with synthetic data (a train-on-real baseline next to train-on-synthetic)
    names = [n.value for n in walk(fn) if isinstance(n, cst.Name)]
    baseline = not any(words(n) & _BUDGET_WORDS for n in names) and any(words(n) & _SYNTHETIC_WORDS for n in names)
    for node in walk(fn):
        if isinstance(node, cst.Call):
            name = call_name(node)
            if name in _NOISE or words(name) & _NOISE_WORDS or words(name) & {"privacy", "private"}:
                return False
            if not baseline and words(name) & {"train", "fit"}:
                return False
    return True



def _binds_attribute(cls: cst.ClassDef, attr: str) -> bool:
    for node in walk(cls):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and attr in target_names(node.target):
            return True
        if isinstance(node, cst.For) and attr in target_names(node.target):
            return True
        if isinstance(node, cst.Call) and call_name(node) in {"setattr", "__setattr__"}:
            return True
        if isinstance(node, cst.Attribute) and node.attr.value == "__dict__":
            return True
    return False


def unbound_in_init(root: str, fn: cst.FunctionDef | None, cls: cst.ClassDef | None) -> bool:
    """``self.df`` read in ``__init__`` of a plain class (no bases, no decorators) that never binds
    ``self.df`` nor defines ``df`` in its body: the constructor raises ``AttributeError`` there, so
    nothing after it runs."""
    if fn is None or cls is None or fn.name.value != "__init__" or not root.startswith("self.") \
            or cls.bases or cls.keywords or cls.decorators:
        return False
    attr = root.split(".")[1]
    if _binds_attribute(cls, f"self.{attr}"):
        return False
    for stmt in cls.body.body:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value in {attr, "__getattr__", "__getattribute__"}:
            return False
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(attr in target_names(t.target) for t in small.targets):
                    return False
                if isinstance(small, cst.AnnAssign) and attr in target_names(small.target):
                    return False
    return True


#: (g1) words of a value kept as the exact answer an error is measured against
_TRUTH_WORDS = frozenset({"true", "truth", "groundtruth", "gt", "exact", "actual", "oracle"})
#: … and of an error measure computed against it (``node['dist'] = abs(out - np.quantile(x, q))``)
_ERROR_WORDS = frozenset({"error", "errors", "err", "dist", "distance", "diff", "gap", "mae", "mse", "rmse",
                          "deviation", "residual", "regret"})


def _target_words(target: cst.BaseExpression) -> set[str]:
    """Words of an assignment target: a name, an attribute's last name, a subscript's string key."""
    if isinstance(target, cst.Name):
        return words(target.value)
    if isinstance(target, cst.Attribute):
        return words(target.attr.value)
    if isinstance(target, cst.Subscript):
        keys = [e.slice.value for e in target.slice if isinstance(e.slice, cst.Index)]
        if len(keys) == 1 and isinstance(keys[0], cst.SimpleString):
            return words(keys[0].evaluated_value if isinstance(keys[0].evaluated_value, str) else "")
    return set()


#: calls a kept truth may pass through on its way to a score or a report
_SCORING_CALLS = frozenset({"abs", "float", "int", "round", "str", "print", "append", "format", "info", "debug",
                            "write", "log", "item", "tolist", "fabs"})


def _scored_only(scope: cst.CSTNode, name: str) -> bool:
    """Is every read of ``name`` in ``scope`` an operand of a subtraction (an error), or kept, returned or
    printed through no other call (``return true_top, results``, ``row['gt'] = gt``)?"""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    for node in walk(scope):
        for child in children(node):
            parents[child] = node
    for node in walk(scope):
        if not isinstance(node, cst.Name) or node.value != name or isinstance(parents.get(node), cst.AssignTarget):
            continue
        up = parents.get(node)
        while up is not None and not isinstance(up, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            if isinstance(up, cst.BinaryOperation) and isinstance(up.operator, cst.Subtract):
                break
            if isinstance(up, cst.Call) and call_name(up) not in _SCORING_CALLS:
                return False
            up = parents.get(up)
        if isinstance(up, (cst.If, cst.While, cst.For)):
            return False  # a test or a loop bound on the exact value
    return True


def scored_truth(stmt: cst.CSTNode | None, read: cst.CSTNode, scope: cst.CSTNode | None = None) -> bool:
    """Is ``read`` (a statistic of the records) only the truth a release is scored against? The
    statement assigns it to a name of the exact answer (``true_value = np.max(data)``,
    ``train_gt = feats.median(0)``) that ``scope`` then only subtracts, keeps or prints, or subtracts it from something to form a named error
    (``node['dist'] = abs(sample - np.quantile(x, q))``). The exact value is kept to measure the
    mechanism's error; it is not handed to the mechanism in that statement."""
    if not isinstance(stmt, (cst.Assign, cst.AnnAssign)) or stmt.value is None:
        return False
    targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
    named = set().union(*(_target_words(t) for t in targets)) if targets else set()
    if any(isinstance(t, (cst.Tuple, cst.List)) for t in targets):
        return False
    value = stmt.value
    if named & _TRUTH_WORDS:
        # the statement reads the records and nothing else of a mechanism (``true = data.max()``), and
        # the name is then only subtracted from a release, kept or printed
        held = [t.value for t in targets if isinstance(t, cst.Name)]
        if scope is not None and not all(_scored_only(scope, n) for n in held):
            return False
        return not any(isinstance(n, cst.Call) and words(call_name(n) or "") & {"mechanism", "laplace", "gaussian",
                                                                            "noise", "noisy", "private"}
                       for n in walk(value))
    if named & _ERROR_WORDS:
        return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract)
                   and any(m is read for m in walk(n)) for n in walk(value))
    return False
