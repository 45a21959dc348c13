"""DP110: δ computed from the exact size of the private dataset."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import last_name as ast_last_name
from dpcheck.analysis.syntax import call_name, call_params, number, param_names, walk, words
from dpcheck.analysis.deadcode import outside_dead_functions
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import ident
from dpcheck.analysis.recordcount import RecordCounts

_DELTA_KEYWORDS = frozenset({"delta", "target_delta", "dp_delta", "delta_target"})
#: keywords that set a mechanism's sensitivity (``LaplaceTruncated(..., sensitivity=2 / n)``)
_SENSITIVITY_KEYWORDS = frozenset({"sensitivity", "l1_sensitivity", "l2_sensitivity", "sens"})
#: a fitted attribute counting the records it was fitted on (sklearn's trailing underscore:
#: ``n_records_fit_``, ``n_samples_seen_``, ``num_examples_``): the private record count
_FITTED_COUNT = re.compile(r"^(?:n|num|number_of)_(?:records|samples|rows|examples|obs|observations)\w*_$")
#: a dataset name that is not the private training data (a held-out, public or synthetic set)
_NOT_TRAINING = frozenset({"test", "val", "valid", "validation", "eval", "dev", "holdout", "batch", "loader",
                           "public", "synthetic", "synth", "fake", "generated"})


#: (h44-2) OpenDP constructors whose ``size=`` is the (public) number of records
_KNOWN_SIZE = frozenset({"make_bounded_resize", "make_resize", "then_resize", "make_resize_bounded"})


def _frame_count(expr: cst.BaseExpression, fa) -> str | None:  # noqa: ANN001 - FileAnalysis
    """``n`` assigned ``data.count()`` (a Spark/pandas frame's row count) of a frame not held out."""
    value = fa.value_of(expr) if isinstance(expr, cst.Name) else expr
    if isinstance(value, cst.Call) and call_name(value) == "count" and not value.args \
            and isinstance(value.func, cst.Attribute):
        owner = ident(value.func.value)
        if owner is not None and not words(owner) & _NOT_TRAINING:
            return f"`{fa.code(value).strip()}`"
    return None


def _delta_name(name: str | None) -> bool:
    return name is not None and (name in _DELTA_KEYWORDS or "delta" in words(name) and not
                                 words(name) & {"t", "time", "huber", "lr", "loss", "x", "y"})


def _sensitivity_name(name: str | None) -> bool:
    """``sensitivity``, ``self._score_sensitivity``, ``l2_sens`` (not ``sensitivity_map``)."""
    if name is None:
        return False
    pieces = words(name)
    return bool(pieces & {"sensitivity", "sens"}) and not pieces & {"map", "maps", "analysis", "fn", "func"}


def _constant(expr: cst.BaseExpression) -> bool:
    """A numeric literal or arithmetic of literals (``0.9 * 1``, ``2 * 2``)."""
    if number(expr) is not None:
        return True
    if isinstance(expr, cst.Call) and call_name(expr) in ("sqrt", "log", "exp", "float") and len(expr.args) == 1:
        return _constant(expr.args[0].value)  # ``np.sqrt(2) / n``
    return isinstance(expr, cst.BinaryOperation) and _constant(expr.left) and _constant(expr.right)


def _denominator(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """``1 / D``, ``1.0 / D``, ``D ** -2``, ``pow(D, -1)``: the D a reciprocal divides by (in either
    branch of a conditional: ``0.0 if eps == inf else 1 / D``)."""
    if isinstance(value, cst.IfExp):
        return _denominator(value.body) or _denominator(value.orelse)
    if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
        # ``target_delta or 1 / n``: the default when the caller passed none
        return _denominator(value.right)
    if isinstance(value, cst.BinaryOperation):
        if isinstance(value.operator, cst.Divide) and _constant(value.left):
            return value.right
        if isinstance(value.operator, cst.Divide):  # 1.0 / n / log(n): a reciprocal divided further
            return _denominator(value.left)
        if isinstance(value.operator, cst.Power):
            exponent = value.right
            if isinstance(exponent, cst.UnaryOperation) and isinstance(exponent.operator, cst.Minus):
                return value.left
            if number(exponent) is not None and number(exponent) > 0:  # ``(1.0 / n) ** 2``: still a reciprocal
                return _denominator(value.left)
        if isinstance(value.operator, (cst.Multiply, cst.Add)):  # 0.1 * (1 / n); 3 / n + 2 / n ** 2
            return _denominator(value.left) or _denominator(value.right)
    if isinstance(value, cst.Call) and call_name(value) in ("min", "max", "minimum", "maximum"):
        # ``min(cfg.delta, 1.0 / max(N, 10_000))``: δ capped by (or floored at) a reciprocal
        for arg in value.args:
            found = _denominator(arg.value)
            if found is not None:
                return found
        return None
    if isinstance(value, cst.Call) and call_name(value) in ("pow", "power") and len(value.args) == 2:
        exponent = value.args[1].value
        if isinstance(exponent, cst.UnaryOperation) and isinstance(exponent.operator, cst.Minus):
            return value.args[0].value
    return None


def _ast_constant(expr: ast.AST) -> bool:
    if isinstance(expr, ast.UnaryOp):
        expr = expr.operand
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.Call) and ast_last_name(expr.func) in ("sqrt", "log", "exp", "float") \
            and len(expr.args) == 1:
        return _ast_constant(expr.args[0])  # ``np.sqrt(2) / n``
    return isinstance(expr, ast.BinOp) and _ast_constant(expr.left) and _ast_constant(expr.right)


def _ast_reciprocal(value: ast.AST) -> bool:
    """``_denominator`` on CPython's ``ast``: ``c / D``, ``D ** -k``, ``pow(D, -k)``, or a product of one."""
    if isinstance(value, ast.IfExp):
        return _ast_reciprocal(value.body) or _ast_reciprocal(value.orelse)
    if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
        return _ast_reciprocal(value.values[-1])
    if isinstance(value, ast.BinOp):
        if isinstance(value.op, ast.Div) and _ast_constant(value.left):
            return True
        if isinstance(value.op, ast.Div):
            return _ast_reciprocal(value.left)
        if isinstance(value.op, ast.Pow) and isinstance(value.right, ast.UnaryOp) \
                and isinstance(value.right.op, ast.USub):
            return True
        if isinstance(value.op, ast.Pow) and _ast_constant(value.right):
            return _ast_reciprocal(value.left)
        if isinstance(value.op, (ast.Mult, ast.Add)):
            return _ast_reciprocal(value.left) or _ast_reciprocal(value.right)
    if isinstance(value, ast.Call) and ast_last_name(value.func) in ("min", "max", "minimum", "maximum"):
        return any(_ast_reciprocal(a) for a in value.args)
    return isinstance(value, ast.Call) and len(value.args) == 2 and isinstance(value.args[1], ast.UnaryOp)


def _ast_positional_reciprocal(value: ast.AST) -> bool:
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Pow):
        return _ast_positional_reciprocal(value.left)
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div) and _ast_constant(value.left)


def _ast_budget(expr: ast.AST) -> bool:
    return any(_budget_name(ast_last_name(n))
               for n in ast.walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))


class DeltaFromPrivateSize(Rule):
    id = "DP110"
    name = "delta-from-private-size"
    category = "general"
    severity = "error"
    summary = "δ or a sensitivity set from the exact number of private records (1/n, 1/n², 2/n with n = len(data))"
    rationale = (
        "Under add/remove neighbouring the number of records n is itself private: δ = 1/n², "
        "1/(n·√n) or 1/n computed from `len(X)` makes the mechanism's own parameter depend on "
        "whether one person is in the data, and the noise scale that depends on δ then releases n "
        "outside the budget. δ = 1/n is also too large to mean anything (releasing one random "
        "record in full is (0, 1/n)-DP). "
        "Spellings: `1 / (10 * n)`, `n ** -1.1`, `10 ** -len(str(n))` (either branch of a conditional), a "
        "function named for δ returning one of them for a record-count parameter, and a count read off the "
        "data object (`data.num_edges`, `data.train_mask.sum()`) kept on `self`. "
        "A default computed when the caller passed no δ (`if delta is None:`, synthcity's and "
        "smartnoise's PATE-GAN, the NIST-challenge DP-WGAN) is reported too: the caller cannot see "
        "that it leaks n. Not reported: a second `if delta is None:` default after an earlier statement already set δ (dead code), a mutual-information or entropy sensitivity written with logarithms of n±1 (PrivBayes's published score, bounded DP with a public n), δ from a public size (a parameter or constant), code with no "
        "DP context. "
        "The same holds for a sensitivity `c / n` (`2 / data.shape[0]` for a normalised "
        "histogram, `3 / self.n_records_fit_` for a score) and for δ or a sensitivity taken from "
        "`len(train_set)` of a training set stored in a constructor. Not reported: a "
        "data-dependent numerator (`(upper - lower) / n`, the replace-one mean sensitivity), sizes "
        "of test/validation/public sets and batch sizes. "
        "Fix: fix δ in advance from a public bound on n (δ ≤ 1/n_max, e.g. 1e-5), or spend "
        "budget on a DP estimate of n."
        " "
        "(h44-2) Also reported: OpenDP's known-size constructors (`make_bounded_resize`, `make_sized_bounded_mean`/`_variance`, `then_resize`) given `size=` the data's own count (`df.count()`, `len(df)`), and a sensitivity `c / (n·λ)` named first and handed to an ε calibration (`get_eps_AGM(sigma, GS, delta)`). Not reported: a δ-named 1/n read only in a comparison or a message (a sanity bound the configured δ is checked against)."
    )
    TRIGGERS = ("delta", "DELTA", "Delta", "sens", "Sens", "SENS", "eps", "EPS")
    requires_dp_context = True
    TEXT_AFTER_GATE = True

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A δ/sensitivity word, or a positional ``c / n`` argument in a file naming the budget."""
        return any(t in source for t in cls.TRIGGERS[:6]) or cls.triggered(source) and bool(_POSITIONAL_RECIPROCAL.search(source)) \
            or "size=" in source and ("make_sized_" in source or "resize(" in source)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a δ- or sensitivity-named assignment target or keyword whose value divides,
        raises to a power or calls ``pow``; or a call with a budget and a ``len(...)``
        argument in a module that divides a constant by something."""
        for call in facts.nodes(ast.Call):  # (h44-2) OpenDP's known-size constructors given ``size=``
            callee = ast_last_name(call.func)  # type: ignore[attr-defined]
            if callee and (callee.startswith(("make_sized_", "then_sized_")) or callee in _KNOWN_SIZE) \
                    and any(k.arg == "size" for k in call.keywords):  # type: ignore[attr-defined]
                return True
        # no precondition on how the count is read: counts come from ``len``, ``shape``, fitted
        # attributes, count-named parameters and counts read off data objects (``mask.sum()``)
        values = [n.value for n in facts.nodes(ast.keyword)  # type: ignore[attr-defined]
                  if n.arg in _DELTA_KEYWORDS or n.arg in _SENSITIVITY_KEYWORDS]  # type: ignore[attr-defined]
        deltas = [n.value for n in facts.nodes(ast.keyword) if n.arg in _DELTA_KEYWORDS]  # type: ignore[attr-defined]
        for node in facts.nodes(ast.Assign, ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            if node.value is not None and any(  # type: ignore[attr-defined]
                    _delta_name(ast_last_name(t)) or _sensitivity_name(ast_last_name(t)) for t in targets):
                values.append(node.value)  # type: ignore[attr-defined]
            if node.value is not None and any(_delta_name(ast_last_name(t)) for t in targets):  # type: ignore[attr-defined]
                deltas.append(node.value)  # type: ignore[attr-defined]
        for fn in facts.nodes(ast.FunctionDef):
            if _delta_name(fn.name):  # type: ignore[attr-defined]
                values.extend(r.value for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None)
        # δ computed by a call from a record count: ``get_target_delta(len(loader) * batch_size)``
        if any(isinstance(v, ast.Call) and any(
                isinstance(n, ast.Call) and ast_last_name(n.func) == "len"
                or isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute) and n.value.attr == "shape"
                for a in [*v.args, *(k.value for k in v.keywords)] for n in ast.walk(a)) for v in deltas):
            return True
        reciprocal = any(isinstance(b.left, ast.Constant) for b in facts.binops(ast.Div))
        budget_locals: set[str] | None = None
        reciprocal_locals = {t.id for node in facts.nodes(ast.Assign) for t in node.targets  # type: ignore[attr-defined]
                             if isinstance(t, ast.Name) and _ast_positional_reciprocal(node.value)} \
            if reciprocal else set()  # type: ignore[attr-defined]
        if reciprocal_locals and any(_ast_budget(call.func) and any(  # type: ignore[attr-defined]
                isinstance(a, ast.Name) and a.id in reciprocal_locals for a in call.args)  # type: ignore[attr-defined]
                for call in facts.nodes(ast.Call)):
            return True  # (h44-2) ``GS = 4.0 / (m * lam)`` then ``get_eps_AGM(sigma, GS, delta)``
        for call in facts.nodes(ast.Call):
            args = call.args  # type: ignore[attr-defined]
            if len(args) >= 2 and (any(_ast_budget(a) for a in args) or _ast_budget(call.func)) and any(  # type: ignore[attr-defined]
                    _ast_positional_reciprocal(a) for a in args):
                return True
            if len(args) >= 2 and any(_ast_positional_reciprocal(a) for a in args) \
                    and any(isinstance(a, ast.Name) for a in args):
                # ``budget = cfg['epsilon'] / k`` assigned before: a local carrying the budget
                if budget_locals is None:
                    budget_locals = {t.id for node in facts.nodes(ast.Assign) for t in node.targets  # type: ignore[attr-defined]
                                     if isinstance(t, ast.Name) and (_ast_budget(node.value) or any(  # type: ignore[attr-defined]
                                         isinstance(c, ast.Constant) and isinstance(c.value, str)
                                         and _budget_name(c.value) for c in ast.walk(node.value)))}  # type: ignore[attr-defined]
                if any(isinstance(a, ast.Name) and a.id in budget_locals for a in args):
                    return True
            # a ``len(...)`` beside the budget, into a module function that may take its reciprocal
            if reciprocal and len(args) >= 2 and any(_ast_budget(a) for a in args) and any(
                    isinstance(a, ast.Call) and isinstance(a.func, ast.Name) and a.func.id == "len" for a in args):
                return True
        return any(_ast_reciprocal(v) for v in values)

    VALID = (
        # the second default guard can never run: the first one (before the loop) already set δ
        """
import numpy as np
class Synth:
    def fit(self, data, epochs):
        if self.delta is None:
            self.delta = 1e-5
        for epoch in range(epochs):
            eps = self.engine.get_privacy_spent(self.delta)
            if self.delta is None:
                self.delta = 1 / data.shape[0]
        return eps
""",
        # PrivBayes's mutual-information sensitivity over n records (bounded DP: n is public by the guarantee)
        """
import numpy as np
def choose_parents(scores, n_records, epsilon, d):
    sens = 2.0 / n_records * np.log2((n_records + 1) / 2.0) + (n_records - 1) / n_records * np.log2(
        (n_records + 1) / (n_records - 1))
    weights = np.exp(epsilon / (d - 1) * np.asarray(scores) / (2 * sens))
    return np.random.choice(len(scores), p=weights / weights.sum())
""",
        # twins of the capped δ: the cap from a configured bound on n, a constant floor, an attribute bound
        """
import numpy as np
def main(cfg, X_df, epsilon):
    N = cfg.max_rows
    cfg.delta = min(cfg.delta, 1.0 / max(N, 10_000))
    return np.sqrt(2 * np.log(1.25 / cfg.delta)) / epsilon
def calibrate(X, epsilon, n_max=10 ** 6):
    target_delta = np.minimum(1e-5, 1.0 / n_max)
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=target_delta)
class Release:
    def __init__(self, epsilon, delta, max_records=10 ** 6):
        self.epsilon, self.delta, self.max_records = epsilon, delta, max_records
    def fit(self, X):
        self.delta = min(self.delta, 0.1 / self.max_records)
        return self.epsilon
""",
        # twins of the (X, y) pair: a held-out pair, a public pair, the number of columns
        """
def configure(FLAGS, train_tuple, test_tuple, public_pair, epsilon):
    if FLAGS.delta == -1:
        FLAGS.delta = 1. / (test_tuple[0].shape[0] ** 2)
    sensitivity = 2 / public_pair[0].shape[0]
    width = 1 / train_tuple[0].shape[1]
    return get_sigma(FLAGS.q, epsilon, FLAGS.delta), sensitivity, width
""",
        # twins of the two-division spelling: a public bound on n, a data-dependent numerator, a constant chain
        """
import math
import numpy as np
def run(priv_data, runner, n_public):
    delta = 1.0 / n_public / np.log(n_public)
    runner.run(delta=delta, epsilon=1.0)
def train(model, train_df, epsilon, noise_for):
    m = train_df.shape[0]
    spread = (train_df.max() - train_df.min()) / m / 2
    target_delta = 1 / 1000 / 10
    return noise_for(epsilon, target_delta), spread
def configure(records, epsilon, calibrate, max_records=10**6):
    delta = (1 / max_records) / math.sqrt(max_records)
    return calibrate(epsilon=epsilon, delta=delta)
""",
        # twins of the 10^-digits, helper and mask-count spellings: public bounds, not the data's counts
        """
import numpy as np
class EdgePrivateGCN:
    def __init__(self, epsilon, delta="auto", max_edges=10 ** 7):
        self.epsilon, self.delta, self.max_edges = epsilon, delta, max_edges
    def fit(self, graph):
        self.feature_count = graph.num_features
        if self.delta == "auto":
            delta = 0.0 if np.isinf(self.epsilon) else 1.0 / 10 ** len(str(self.max_edges))
        return self.calibrate(self.epsilon, delta)
""",
        """
from opacus import PrivacyEngine
def default_delta(max_examples):
    return 0.1 / max_examples
def train(model, loader, epsilon, population):
    return PrivacyEngine().make_private_with_epsilon(module=model, data_loader=loader, target_epsilon=epsilon,
                                                     target_delta=default_delta(population))
""",
        """
class NodeDP:
    def __init__(self, epsilon, max_nodes):
        self.epsilon, self.max_nodes = epsilon, max_nodes
    def fit(self, data):
        count = int(data.train_mask.sum())
        self.n_train = count
        return self.calibrate()
    def calibrate(self):
        delta = self.max_nodes ** -1.1
        return self.mech.calibrate(eps=self.epsilon, delta=delta)
""",
        # twin: δ from a configured maximum, although the user count was overwritten
        """
from accounting import get_privacy
def main(args, dict_users):
    args.num_users = len(dict_users)
    return get_privacy(frac=args.frac, z=args.z, delta=1 / args.max_users ** 1.1, T=args.epochs)
""",
        # the accountant sits in a function the script only calls inside a string (commented-out code)
        """
def train_init(train_data, sample_locs, sigma):
    trace_num = len(sample_locs)
    return MomentsAccountant(delta=1 / trace_num, sigma=sigma, sampling_prob=0.01)
def main(train_data, sample_locs):
    'train_init(train_data, sample_locs, 1.1)'
    return serve(train_data)
if __name__ == "__main__":
    main(load(), load())
""",
        # twin: a fixed δ beside an overwritten count
        """
def main(cfg, partitions, epsilon):
    cfg.n_clients = len(partitions)
    return calibrate(epsilon, delta=1e-5, clients=cfg.n_clients)
""",
        # twins of the helper / parameter spellings with public bounds
        """
import pandas as pd
from opacus import PrivacyEngine
def suggest_delta(n):
    return 10 ** -len(str(n))
class Trainer:
    def __init__(self, train_df: pd.DataFrame, epsilon, max_population=10 ** 6):
        self.epsilon = epsilon
        self.target_delta = suggest_delta(max_population)
def fit(model, optimizer, train_loader, epsilon, epochs, delta_for, n_max):
    engine = PrivacyEngine()
    return engine.make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=train_loader,
                                            target_epsilon=epsilon, epochs=epochs,
                                            target_delta=delta_for(n_max))
""",
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def epsilon_after(steps, n_train_samples, batch, sigma, orders, max_train_samples):
    rdp = compute_rdp(batch / n_train_samples, sigma, steps, orders)
    return get_privacy_spent(orders, rdp, target_delta=1.0 / max_train_samples)[0]
def dp_sgd_config(dataset_size, epsilon, delta=None, dataset_size_bound=10 ** 6):
    if delta is None:
        delta = 0.1 / dataset_size_bound
    return {"epsilon": epsilon, "delta": delta}
""",
        # δ from the size of the test loader
        """
from opacus import PrivacyEngine
def evaluate_privately(test_loader, delta_for, epsilon):
    delta = delta_for(len(test_loader))
    return PrivacyEngine(), epsilon, delta
""",
        # the size of a public list (the attributes), not of the records, flows into the callee
        """
import math
def ExponentialMechanism(omega, d, epsilon):
    sensitivity = 1 / d
    return [math.exp(epsilon * I / (2 * sensitivity)) for I in omega]
def select(omega, attributes, epsilon):
    return ExponentialMechanism(omega, len(attributes), epsilon)
""",
        # a positional sensitivity beside the budget from a public bound on the number of records
        """
import numpy as np
from ProDist import GetFNProDist
f = open("br2000.data")
b = eval(f.read())
n_min = 1000
epsilon = 0.05
FPro = GetFNProDist(b, 0, n_min, np.array(b), epsilon / 2, 2 / n_min)
""",
        # δ from a public bound on the population
        """
def train(X, epsilon, n_max=100000):
    delta = 1.0 / n_max ** 2
    return fit_private(X, epsilon=epsilon, delta=delta)
""",
        # a constant δ
        """
import numpy as np
def fit(self, X, epsilon=1.0):
    self.delta = 1e-5
    sigma = np.sqrt(2 * np.log(1.25 / self.delta)) / epsilon
    return X.mean(0) + np.random.normal(0, sigma / len(X), X.shape[1])
""",
        # a default from a public bound when the caller gave none
        """
import numpy as np
class PATEGAN:
    def __init__(self, epsilon=1.0, delta=None, max_records=10 ** 6):
        self.epsilon, self.delta, self.max_records = epsilon, delta, max_records
    def fit(self, X):
        if self.delta is None:
            self.delta = 1 / (self.max_records * np.sqrt(self.max_records))
        return self._train(X)
""",
        # a time step named delta in a DP module
        """
def fit(data, epsilon):
    delta_t = 1.0 / len(data)
    return noisy_mean(data, epsilon) * delta_t
""",
        # δ from the size of a public / held-out set, and from the batch size
        """
import torch
from opacus import PrivacyEngine
class Client:
    def __init__(self, args, train_set, public_set, test_set):
        self.DELTA = 0.9 / len(public_set)
        self.test_delta = 1 / len(test_set)
        self.loader = torch.utils.data.DataLoader(train_set, batch_size=args.bs, shuffle=True)
""",
        # a sensitivity from a public bound on n, or with a data-dependent numerator (a range / n
        # under replace-one neighbouring is the textbook mean sensitivity)
        """
from diffprivlib.mechanisms import Laplace
def dp_marginal(data, epsilon, min_records=1000):
    sensitivity = 2 / min_records
    mech = Laplace(epsilon=epsilon, sensitivity=sensitivity)
    return [mech.randomise(v) for v in data.value_counts(normalize=True)]
def dp_mean(data, epsilon, lower, upper):
    sensitivity = (upper - lower) / len(data)
    return Laplace(epsilon=epsilon, sensitivity=sensitivity).randomise(data.clip(lower, upper).mean())
""",
        # a record count that is not a fitted attribute: the number of synthetic rows asked for
        """
class DPSynth:
    def __init__(self, epsilon=1.0, n_samples_out=1000):
        self.epsilon, self.n_samples_out = epsilon, n_samples_out
        self.sensitivity = 1.0 / self.n_samples_out
""",
        # a default δ chosen with ``or``: a public constant
        """
class DPMixin:
    def __init__(self, data, target_epsilon, target_delta=None):
        self.nrows = len(data)
        self.target_epsilon = target_epsilon
        self.target_delta: float = target_delta or 1e-5
""",
        # twins of the run-time counts: a configured user count, a public bound, a constant δ squared
        """
def local_search(args, objective, ground_set, k, eps):
    delta_target = 1 / (args.num_users ** 1.5)
    return best_eps_0(eps_target=eps, delta_target=delta_target, k=k)
""",
        """
def run_experiment(objective, passenger_coords, params, max_passengers=10 ** 6):
    eps = params["eps"]
    delta_target = 1 / (max_passengers ** 1.5)
    return best_eps_0(eps_target=eps, delta_target=delta_target, k=len(passenger_coords))
""",
        """
def helper(name, params_exp, n_max=10 ** 6):
    feature_vecs, labels, w_opt = getattr(Datasets(), name)()
    privacy_dp = params_exp["total"]
    params_exp["total"] = eps_to_zcdp(privacy_dp, (1.0 / n_max) ** 2, len(labels))
    return params_exp
""",
        # the count a helper returns is of the held-out split
        """
import pandas as pd
def prepare(raw, label):
    train = raw.sample(frac=0.8)
    X_test = raw.drop(train.index)
    return train.drop(columns=[label]), train[label], X_test, len(X_test)
def main(path, epsilon, delta=None):
    X, y, held, count = prepare(pd.read_csv(path), "y")
    delta = delta or (1.0 / count)
    return fit_private(X, y, epsilon, delta)
""",
        # the helper returns a public bound in that slot, not a count
        """
import numpy as np
def load(path):
    frame = np.load(path)
    return frame, 10 ** 6
def run(path, epsilon):
    data, size = load(path)
    target_delta = 1 / (size * np.log(size))
    return train(data, epsilon, target_delta)
""",
        # the slot holds the number of batches a loader yields
        """
def loaders(dataset, batch):
    batches = [dataset[i:i + batch] for i in range(0, len(dataset), batch)]
    return batches, len(batches)
def train(dataset, epsilon):
    parts, n = loaders(dataset, 64)
    delta = 1 / n ** 2
    return run_dp(parts, epsilon, delta)
""",
        # twins of the derived counts: a public bound scaled by a constant, a configured size, a held-out
        # slot of a helper, the number of silos (not records), a count attribute of a configuration object
        """
import numpy as np
def prepare(path):
    labels = np.load(path)
    test_count = int(min([np.sum(labels == k) for k in range(10)]))
    return labels, 5000
frac = 1 / 7
labels, cap = prepare("mnist.npz")
n = int(cap * 2 * frac)
delta = 1 / (n ** 2)
sigma = np.sqrt(2 * np.log(1.25 / delta)) / 1.0
""",
        """
import numpy as np
silo_sizes = [0, 0, 0]
for i in range(3):
    silo_sizes[i] = 200
n = min(silo_sizes)
delta = 1 / n ** 2
sigma = np.sqrt(2 * np.log(1.25 / delta)) / 0.5
""",
        """
import numpy as np
from loaders import load_split
C, X_train, y_train, X_test, y_test, n_test, d = load_split("housing")
delta_dp = 1 / (n_test ** 2)
n_sil, d = X_train.shape[1], 3
delta_b = 1 / n_sil ** 2
sigma = np.sqrt(2 * np.log(1.25 / delta_dp)) / 1.0
""",
        """
import numpy as np
from loaders import TabularData
class Settings:
    def noise(self, epsilon, config):
        full_data = TabularData(path=self.path)
        n = config.n
        self.delta = 1 / n ** 2
        self.sigma = np.sqrt(2 * np.log(1.25 / self.delta)) / epsilon
        silos = full_data.num_silos
        return 1 / silos
""",
        # δ = 1/n with n the node count of the graph's adjacency matrix: public under edge-level DP
        """
import numpy as np
def edge_private_embedding(A, K, eps, delta=None):
    n = int(A.shape[0])
    if delta is None:
        delta_use = 1.0 / float(n)
    sigma = np.sqrt(2 * np.log(1.25 / delta_use)) / eps
    return np.linalg.eigh(A + np.random.normal(0, sigma, A.shape))[1][:, :K]
""",
        # twin: the sensitivity from a public lower bound on the rows, the shape's columns not its rows
        """
import numpy as np
faces = np.load("faces.npy")
n_samples, n_features = 400, faces.shape[1]
n_rows_min = 300
epsilon = 1.0
sensitivity = 2 / float(n_rows_min)
width = 2 / float(n_features)
std = np.sqrt(2 * np.log(1.25 / 1e-4)) * sensitivity / epsilon
""",
        # twin: the class holds a public bound on the record count, not the data's size
        """
class MarkovField:
    \"\"\"Differentially private Markov random field synthesis.\"\"\"
    def __init__(self, data, config):
        self.data = data
        self.config = config
        self.max_records = config["max_records"]
    def pick(self, candidates, scores, rounds):
        share = self.config["epsilon"] / rounds
        return exp_mech(candidates, scores, share, 1 / 2 / self.max_records)
""",
        # twin: δ from a configured public population bound, the client counts only feed the accountant
        """
def setup_accountant(self, sample_counts: list[int]) -> None:
    total_samples = sum(sample_counts)
    target_delta = 1.0 / self.population_bound if self.delta is None else self.delta
    return self.accountant.get_epsilon(self.rounds, target_delta, total_samples)
""",
        # twin: the blanket parameter from a public number of users; the frame's size is only averaged
        """
import math
class ShuffleDP:
    def __init__(self, epsilon, delta, n_users):
        self.epsilon, self.delta, self.n_users = epsilon, delta, n_users
    def blanket(self, n_rows, n_cols, eps, dlt):
        return max(14 * n_cols * math.log(2 / dlt) / ((n_rows - 1) * eps ** 2), 27 * n_cols / ((n_rows - 1) * eps))
    def mean_rows(self, df, n_rows):
        return df.sum() / n_rows
    def apply(self, df):
        avg = self.mean_rows(df, len(df))
        return self.blanket(self.n_users, len(df.columns), self.epsilon, self.delta), avg
""",
        # ordinary ML code: a per-sample loss averaged over the batch size, Adam's eps
        """
import torch
class Trainer:
    def __init__(self, data, lr, eps=1e-8):
        self.data = data
        self.n = len(self.data)
        self.opt_eps = eps
    def loss(self, losses):
        return losses.sum() / self.n
""",
        # (u39-2 twin: public n / ordinary ML)
        """
import torch
def train(model, X_train: torch.Tensor, y_train, epsilon, clip=1.0, delta=1e-5):
    n = X_train.size(0)
    steps = n // 256
    feature_scale = 1.0 / X_train.size(1)
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=0.01, steps=steps)
""",
        # (u39-2 twin: public n / ordinary ML)
        """
import argparse, math
def main():
    p = argparse.ArgumentParser()
    p.add_argument("--test", default="data/adult_test.csv")
    p.add_argument("--n-max", type=int, default=50000)
    args = p.parse_args()
    with open(args.test) as f:
        num_test = sum(1 for _ in f) - 1
    delta = 1.0 / (args.n_max * math.log(args.n_max))
    print(compute_epsilon(1.0, delta), num_test)
""",
        # (u39-2 twin: public n / ordinary ML)
        """
import numpy as np
def release_marginal(records, attr, epsilon, rho_delta=1e-6):
    counts = np.bincount(records[:, attr])
    noisy = counts + np.random.normal(0, 1.0 / epsilon, counts.shape)
    total = max(noisy.sum(), 1.0)
    delta = rho_delta
    return noisy / total, delta
""",
        # (u39-2 twin: public n / ordinary ML)
        """
import torch
def fit(model, train_ds, lr=1e-3):
    huber = torch.nn.HuberLoss(delta=1.0)
    opt = torch.optim.Adam(model.parameters(), lr=lr, eps=1.0 / 1e8)
    bn = torch.nn.BatchNorm1d(16, eps=1e-5)
    smoothing = 1.0 / len(train_ds.classes)
    return huber, opt, bn, smoothing
""",
        # (u39-2 twin: public n / ordinary ML)
        """
import tensorflow as tf
def dp_keras_fit(model, features, labels, epsilon, batch_size=250, n_public=60000):
    opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=batch_size)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    model.fit(features, labels, batch_size=batch_size, epochs=20)
    return compute_eps(n_public, batch_size, 1.1, 20, delta=1.0 / (n_public * 10))
""",
        # (u39-2 twin: public bounds)
        """
from abc import ABC
class DPMixin(ABC):
    def __init__(self, *args, nrows_bound=100000, target_epsilon=3.0, target_delta=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta or 1 / nrows_bound
""",
        # (u39-2 twin: public bounds)
        """
import numpy as np
def _noisy_pi(nk, n, sigma, rng):
    pi_sens = 2 / n
    return nk / n + rng.normal(0, sigma * pi_sens, nk.shape)
def fit_dp_gmm(X, resp, sigma, rng, n_public=10000):
    return _noisy_pi(resp.sum(0), n_public, sigma, rng)
""",
        # (h44-2) 1/n only as a sanity bound: the configured δ is compared with it (and it is printed), it never
        # becomes a parameter of the mechanism
        """
import math
class Trainer:
    def __init__(self, users, config):
        self.users = users
        self.target_delta = config["delta"]
        max_ok_delta = 1.0 / len(self.users)
        if self.target_delta >= max_ok_delta:
            raise ValueError(f"delta must be below 1/n = {max_ok_delta:.2e}")
        self.sigma = math.sqrt(2 * math.log(1.25 / self.target_delta)) / config["epsilon"]
""",
        # (h44-2 twin) the sensitivity from a public lower bound on the training size
        """
import numpy as np
from sklearn.linear_model import LogisticRegression
def private_fit(X_train, y_train, lam, sigma, delta, m_public=50000):
    clf = LogisticRegression(C=1.0 / (lam * m_public)).fit(X_train, y_train)
    clf.coef_ += sigma * np.random.standard_normal(clf.coef_.shape)
    GS = 4.0 / (m_public * lam)
    return clf, analytic_gaussian_eps(sigma, GS, delta)
""",
        # (h44-2 twin) the known size is a public constant; a bootstrap draw of len(x) items is no OpenDP size
        """
import numpy as np
import pandas as pd
from opendp.trans import make_clamp, make_bounded_resize, make_sized_bounded_mean
from opendp.meas import make_base_laplace
def dp_mean(path, column, lower, upper, epsilon, public_n=10000):
    values = pd.read_csv(path)[column]
    chain = (make_clamp(bounds=(lower, upper))
             >> make_bounded_resize(size=public_n, bounds=(lower, upper), constant=lower)
             >> make_sized_bounded_mean(size=public_n, bounds=(lower, upper)))
    boot = np.random.choice(values.to_numpy(), size=values.count())
    return (chain >> make_base_laplace(scale=(upper - lower) / (public_n * epsilon)))(values.tolist()), boot
""",
    )

    INVALID = (
        # twin of the dead guard: here the only default is the one inside the loop, and it runs
        """
import numpy as np
class Synth:
    def fit(self, data, epochs):
        for epoch in range(epochs):
            if self.delta is None:
                self.delta = 1 / data.shape[0]  # <-
            eps = self.engine.get_privacy_spent(self.delta)
        return eps
""",
        # (h44-2) output perturbation: the ERM sensitivity 4/(m·λ) from the private training size, named, then handed
        # to the ε calibration
        """
import numpy as np
from sklearn.linear_model import LogisticRegression
def private_fit(X_train, y_train, lam, sigma, delta):
    clf = LogisticRegression(C=1.0 / (lam * len(y_train))).fit(X_train, y_train)
    clf.coef_ += sigma * np.random.standard_normal(clf.coef_.shape)
    m = X_train.shape[0]
    GS = 4.0 / (m * lam)  # <-
    return clf, analytic_gaussian_eps(sigma, GS, delta)
""",
        # (h44-2) OpenDP's known-size mean built with the frame's own row count
        """
import pandas as pd
from opendp.trans import make_clamp, make_bounded_resize, make_sized_bounded_mean
from opendp.meas import make_base_laplace
def dp_mean(path, column, lower, upper, epsilon):
    values = pd.read_csv(path)[column]
    n_rows = values.count()
    chain = (make_clamp(bounds=(lower, upper))
             >> make_bounded_resize(size=int(n_rows), bounds=(lower, upper), constant=lower)  # <-
             >> make_sized_bounded_mean(size=n_rows, bounds=(lower, upper)))  # <-
    return (chain >> make_base_laplace(scale=(upper - lower) / epsilon))(values.tolist())
""",
        # (h44-2 twin) the bound replaces the configured δ when it is larger: δ is then set from n
        """
import math
class Trainer:
    def __init__(self, users, config):
        self.users = users
        max_ok_delta = 1.0 / len(self.users)  # <-
        self.target_delta = min(config["delta"], max_ok_delta)
        self.sigma = math.sqrt(2 * math.log(1.25 / self.target_delta)) / config["epsilon"]
""",
        # δ capped by a reciprocal of the private row count (``min``/``max``, numpy's ``minimum``, on the object)
        """
import numpy as np
def main(cfg, X_df, epsilon):
    N = len(X_df)
    cfg.delta = min(cfg.delta, 1.0 / max(N, 10_000))  # <-
    return np.sqrt(2 * np.log(1.25 / cfg.delta)) / epsilon
""",
        """
import numpy as np
def calibrate(X, epsilon):
    n_rows = X.shape[0]
    target_delta = np.minimum(1e-5, 1.0 / n_rows)  # <-
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=target_delta)
""",
        """
class Release:
    def __init__(self, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta
    def fit(self, X):
        self.n = len(X)
        self.delta = min(self.delta, 0.1 / self.n)  # <-
        return self.epsilon
""",
        # the size of a training (X, y) pair read through its first element
        """
def configure(FLAGS, train_tuple, epsilon):
    if FLAGS.delta == -1:
        FLAGS.delta = 1. / (train_tuple[0].shape[0] ** 2)  # <-
    return get_sigma(FLAGS.q, epsilon, FLAGS.delta)
""",
        """
import numpy as np
def private_mean(train_split, epsilon):
    sensitivity = 2 / train_split[0].shape[0]  # <-
    return np.mean(train_split[0]) + np.random.laplace(0, sensitivity / epsilon)
""",
        """
from opacus import PrivacyEngine
def fit(model, loader, trainset, epsilon):
    return PrivacyEngine().make_private_with_epsilon(module=model, data_loader=loader, target_epsilon=epsilon,
                                                     target_delta=1 / (10 * trainset[0].shape[0]))  # <-
""",
        # a reciprocal divided again: 1/(n·log n) spelt as two divisions, with n from the private table, a
        # private dataset's attribute or the row count of the training frame
        """
import math
import numpy as np
def run(priv_data, runner):
    n_priv = len(priv_data.frame)
    delta = 1.0 / n_priv / np.log(n_priv)  # <-
    runner.run(delta=delta, epsilon=1.0)
def train(model, train_df, epsilon, noise_for):
    m = train_df.shape[0]
    target_delta = 1 / m / 10  # <-
    return noise_for(epsilon, target_delta)
def configure(records, epsilon, calibrate):
    delta = (1 / len(records)) / math.sqrt(len(records))  # <-
    return calibrate(epsilon=epsilon, delta=delta)
""",
        # NHSSynth's DPMixin: the default δ (``or``) is one over the training row count kept on the object
        """
class DPMixin:
    def __init__(self, data, target_epsilon, target_delta=None):
        self.nrows = len(data)
        self.target_epsilon = target_epsilon
        self.target_delta: float = target_delta or 1 / self.nrows  # <-
def make_private(model, data, epsilon, delta=None):
    delta = delta or 1.0 / (len(data) * 10)  # <-
    return model, epsilon, delta
""",
        # δ = 10^-digits(|E|) of the private graph, in the branch taken when δ is left to 'auto'
        """
import numpy as np
class EdgePrivateGCN:
    def __init__(self, epsilon, delta="auto"):
        self.epsilon, self.delta = epsilon, delta
    def fit(self, graph):
        self.edge_count = graph.num_edges
        if self.delta == "auto":
            delta = 0.0 if np.isinf(self.epsilon) else 1.0 / 10 ** len(str(self.edge_count))  # <-
        return self.calibrate(self.epsilon, delta)
""",
        # a helper named for δ returning 1/(10 n) of its record-count parameter
        """
from opacus import PrivacyEngine
def default_delta(num_examples):
    return 0.1 / num_examples  # <-
def train(model, loader, epsilon):
    return PrivacyEngine().make_private_with_epsilon(module=model, data_loader=loader, target_epsilon=epsilon,
                                                     target_delta=default_delta(len(loader.dataset)))  # <-
""",
        # δ = n^-1.1 with n the number of training nodes counted from the mask, kept on the object
        """
class NodeDP:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def fit(self, data):
        count = int(data.train_mask.sum())
        self.n_train = count
        return self.calibrate()
    def calibrate(self):
        delta = self.n_train ** -1.1  # <-
        return self.mech.calibrate(eps=self.epsilon, delta=delta)
""",
        # δ from a configured count overwritten with the size of the user partition
        """
from accounting import get_privacy
def main(args, dict_users):
    args.num_users = len(dict_users)
    return get_privacy(frac=args.frac, z=args.z, delta=1 / args.num_users ** 1.1, T=args.epochs)  # <-
""",
        # the same accountant in a function the script runs
        """
def train_init(train_data, sample_locs, sigma):
    trace_num = len(sample_locs)
    return MomentsAccountant(delta=1 / trace_num, sigma=sigma, sampling_prob=0.01)  # <-
def main(train_data, sample_locs):
    train_init(train_data, sample_locs, 1.1)
if __name__ == "__main__":
    main(load(), load())
""",
        # δ = 1 / cfg.n_records after cfg.n_records = len(partitions)
        """
def main(cfg, partitions, epsilon):
    cfg.n_records = len(partitions)
    return calibrate(epsilon, delta=1.0 / cfg.n_records, clients=cfg.n_records)  # <-
""",
        # δ from a helper given the training frame's row count, kept on the object (pandas)
        """
import pandas as pd
from opacus import PrivacyEngine
def suggest_delta(n):
    return 10 ** -len(str(n))
class Trainer:
    def __init__(self, train_df: pd.DataFrame, epsilon):
        self.epsilon = epsilon
        self.target_delta = suggest_delta(train_df.shape[0])  # <-
""",
        # a keyword δ from a helper given the number of batches of the training loader
        """
import torch
from opacus import PrivacyEngine
def fit(model, optimizer, train_loader, epsilon, epochs, delta_for):
    engine = PrivacyEngine()
    return engine.make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=train_loader,
                                            target_epsilon=epsilon, epochs=epochs,
                                            target_delta=delta_for(len(train_loader)))  # <-
""",
        # δ = 1/n from a parameter named for the number of training examples (callers pass len(x))
        """
from tensorflow_privacy import compute_rdp, get_privacy_spent
def epsilon_after(steps, n_train_samples, batch, sigma, orders):
    rdp = compute_rdp(batch / n_train_samples, sigma, steps, orders)
    return get_privacy_spent(orders, rdp, target_delta=1.0 / n_train_samples)[0]  # <-
""",
        # jax: a default δ from the dataset size argument
        """
import jax
def dp_sgd_config(dataset_size, epsilon, delta=None):
    if delta is None:
        delta = 0.1 / dataset_size  # <-
    return {"epsilon": epsilon, "delta": delta, "key": jax.random.PRNGKey(0)}
""",
        # athenarc PrivBayes: len(Dataset) flows into the mutual-information sensitivity two calls down
        """
import math
def CalcSensitivity(x, n, domains):
    Delta_I = (2 / n) * math.log((n + 1) / 2, 2) + ((n - 1) / n) * math.log((n + 1) / (n - 1), 2)  # <- (u39-2: the helper's n is the private size at every call)
    return Delta_I
def ExponentialMechanism(omega, domains, n, epsilon, k):
    return [math.exp(epsilon * I / (2 * CalcSensitivity(x, n, domains))) for x, I in omega]
def GreedyBayes(Dataset, domains, epsilon_1, k, omega):
    return ExponentialMechanism(omega, domains, len(Dataset), epsilon_1, k)  # <-
""",
        # FAPrivBayes: a positional sensitivity ``2 / n`` beside the budget, n the size of the data
        # handed to the same call
        """
import numpy as np
from ProDist import GetFNProDist
f = open("br2000.data")
b = eval(f.read())
n = len(b)
epsilon = 0.05
FPro = GetFNProDist(b, 0, n, np.array(b), epsilon / 2, 2 / n)  # <-
""",
        # δ = 1/n² from the private training set, in a script
        """
import pandas as pd
from opacus import PrivacyEngine
train = pd.read_csv("adult.csv")
DELTA = 1 / len(train) ** 2  # <-
engine = PrivacyEngine()
""",
        # 1/(n·√n) from the private data's shape, passed as a keyword
        """
import numpy as np
def fit(self, X, epsilon):
    n = X.shape[0]
    return self._private_fit(X, epsilon=epsilon, delta=1.0 / (n * np.sqrt(n)))  # <-
""",
        # δ = 1/n through a size variable
        """
def train_dp(train_data, epsilon, noise_multiplier):
    n = len(train_data)
    target_delta = 1 / n  # <-
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=target_delta)
""",
        # synthcity's and smartnoise's default when no δ is given
        """
import numpy as np
class PATEGAN:
    def __init__(self, epsilon=1.0, delta=None):
        self.epsilon, self.delta = epsilon, delta
    def fit(self, data):
        if self.delta is None:
            self.delta = 1 / (data.shape[0] * np.sqrt(data.shape[0]))  # <-
        return self._train(data)
""",
        # negative power spelling on self
        """
class DPModel:
    def fit(self, X, epsilon=1.0):
        self.delta = len(X) ** -1.1  # <-
        return self.train(X, epsilon, self.delta)
""",
        # a federated client's δ from its own training set, with a constant product as numerator
        """
import torch
from opacus import PrivacyEngine
class client(object):
    def __init__(self, idx, args, train_set, test_set):
        self.DELTA = 0.9 * 1 / len(train_set)  # <-
        self.train_loader = torch.utils.data.DataLoader(train_set, batch_size=args.local_bs, shuffle=True)
""",
        # a normalised marginal's sensitivity 2/n from the private column
        """
from diffprivlib.mechanisms import LaplaceTruncated
def dp_marginal_distribution(data, epsilon):
    marginal = data.value_counts(normalize=True)
    sensitivity = 2 / data.shape[0]  # <-
    mech = LaplaceTruncated(epsilon=epsilon, lower=0, upper=1, sensitivity=sensitivity)
    return [mech.randomise(v) for v in marginal.values]
""",
        # a fitted record count (sklearn's trailing underscore) in a score sensitivity
        """
import numpy as np
class PrivBayes:
    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon
    def _check_score_function(self):
        self._score_sensitivity = (3 / self.n_records_fit_) + (2 / self.n_records_fit_ ** 2)  # <-
""",
        # the record count kept on the object, then δ from it in another method
        """
class DPGAN:
    def fit(self, data, epsilon=1.0):
        self.n = data.shape[0]
        return self._train(data, epsilon)
    def _train(self, data, epsilon):
        self.target_delta = 1.0 / self.n ** 2  # <-
""",
        # δ from the data's size whatever the data is called: a count of users read off the objective
        # object, the length of a table named for what it holds, a reciprocal squared handed to a budget
        # conversion
        """
def local_search(objective, ground_set, k, eps):
    delta_target = 1 / (objective.num_users ** 1.5)  # <-
    return best_eps_0(eps_target=eps, delta_target=delta_target, k=k)
""",
        """
def run_experiment(objective, passenger_coords, params):
    eps = params["eps"]
    delta_target = 1 / (len(passenger_coords) ** 1.5)  # <-
    return best_eps_0(eps_target=eps, delta_target=delta_target, k=params["k"])
""",
        """
def helper(name, params_exp):
    feature_vecs, labels, w_opt = getattr(Datasets(), name)()
    privacy_dp = params_exp["total"]
    params_exp["total"] = eps_to_zcdp(privacy_dp, (1.0 / len(labels)) ** 2)  # <-
    return params_exp
""",
        # the record count of the training split comes back from the module's own preparation step
        """
import pandas as pd
def prepare(raw, label):
    train = raw.sample(frac=0.8)
    X_train, y_train = train.drop(columns=[label]), train[label]
    return X_train, y_train, len(X_train)
def main(path, epsilon, delta=None):
    X, y, count = prepare(pd.read_csv(path), "y")
    delta = delta or (1.0 / count)  # <-
    return fit_private(X, y, epsilon, delta)
""",
        # rows of the array, named through a local before the return, squared in δ
        """
import numpy as np
def features(path):
    X = np.load(path)
    rows = X.shape[0]
    return X, rows
def run(path, epsilon):
    data, size = features(path)
    target_delta = 1 / (size * np.log(size))  # <-
    return train(data, epsilon, target_delta)
""",
        # a list pattern and a list return
        """
def read(path):
    with open(path) as handle:
        records = [line.split(",") for line in handle]
    return [records, len(records)]
def release(path, epsilon):
    [rows, m] = read(path)
    delta = 1 / m ** 2  # <-
    return gaussian_counts(rows, epsilon, delta)
""",
        # δ = 1/n² with n derived from the data: the smallest per-label count returned in a helper's last
        # slot (scaled by constants), the minimum of per-silo lengths, a slot unpacked beside the training
        # data from a loader of another module, the count attribute of a data object
        """
import numpy as np
def prepare(path):
    labels = np.load(path)
    per_label = int(min([np.sum(labels == k) for k in range(10)]) * 0.5)
    return labels, per_label
frac = 1 / 7
per_label = prepare("mnist.npz")[-1]
n = int(per_label * 2 * frac)
delta = 1 / (n ** 2)  # <-
sigma = np.sqrt(2 * np.log(1.25 / delta)) / 1.0
""",
        """
import numpy as np
silo_sizes = [0, 0, 0]
for i in range(3):
    silo_sizes[i] = len(labels_by_silo[i])
n = min(silo_sizes)
delta = 1 / n ** 2  # <-
sigma = np.sqrt(2 * np.log(1.25 / delta)) / 0.5
""",
        """
import numpy as np
from loaders import load_split
C, X_train, y_train, X_test, y_test, n, d = load_split("housing")
delta_dp = 1 / (n ** 2)  # <-
sigma = np.sqrt(2 * np.log(1.25 / delta_dp)) / 1.0
""",
        """
import numpy as np
from loaders import TabularData
class Settings:
    def noise(self, epsilon):
        full_data = TabularData(path=self.path)
        n = full_data.n
        self.delta = 1 / n ** 2  # <-
        self.sigma = np.sqrt(2 * np.log(1.25 / self.delta)) / epsilon
""",
        """
import numpy as np
df = load_table("insurance.csv")
SILOS = 10
n = int(np.ceil(len(df["charges"]) / SILOS))
delta = 1 / n ** 2  # <-
sigma = np.sqrt(2 * np.log(1.25 / delta)) / 2.0
""",
        # a sensitivity 2/n with n unpacked from the private matrix's shape at a script's top level
        """
import numpy as np
faces = np.load("faces.npy")
n_samples, n_features = faces.shape
XX = faces.T @ faces / float(n_samples)
epsilon = 1.0
sensitivity = 2 / float(n_samples)  # <-
std = np.sqrt(2 * np.log(1.25 / 1e-4)) * sensitivity / epsilon
""",
        # a model class keeps the exact size of the data it holds; the selection's sensitivity is 1/(2n)
        """
class MarkovField:
    \"\"\"Differentially private Markov random field synthesis.\"\"\"
    def __init__(self, data, config):
        self.data = data
        self.config = config
        self.data_num = len(self.data)
    def pick(self, candidates, scores, rounds):
        share = self.config["epsilon"] / rounds
        return exp_mech(candidates, scores, share, 1 / 2 / self.data_num)  # <-
""",
        # a federated server sums the sample counts the clients reported, and takes δ = 1/total
        """
def setup_accountant(self, sample_counts: list[int]) -> None:
    total_samples = sum(sample_counts)
    target_delta = 1.0 / total_samples if self.delta is None else self.delta  # <-
    return self.accountant.get_epsilon(self.rounds, target_delta)
""",
        # the shuffle model's blanket parameter divides by (n - 1)·ε², with n the frame's exact row count
        """
import math
class ShuffleDP:
    def __init__(self, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta
    def blanket(self, n_rows, n_cols, eps, dlt):
        return max(14 * n_cols * math.log(2 / dlt) / ((n_rows - 1) * eps ** 2), 27 * n_cols / ((n_rows - 1) * eps))
    def apply(self, df):
        gamma = self.blanket(len(df), len(df.columns), self.epsilon, self.delta)  # <-
        return gamma
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import torch
def train(model, X_train: torch.Tensor, y_train, epsilon, clip=1.0):
    n = X_train.size(0)
    delta = 1.0 / n  # <-
    return get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=0.01, epochs=10)
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import torch
class DPTrainer:
    def __init__(self, features, labels, epsilon):
        self.features, self.labels, self.epsilon = features, labels, epsilon
    def noise_multiplier(self, epochs):
        num = self.features.size()[0]
        return get_noise_multiplier(target_epsilon=self.epsilon, target_delta=num ** -1.1,  # <-
                                    sample_rate=0.01, epochs=epochs)
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import argparse, math
def main():
    p = argparse.ArgumentParser()
    p.add_argument("--train", default="data/adult_train.csv")
    p.add_argument("--epsilon", type=float, default=1.0)
    args = p.parse_args()
    with open(args.train) as f:
        num_records = sum(1 for _ in f) - 1
    delta = 1.0 / (num_records * math.log(num_records))  # <-
    print(compute_epsilon(args.epsilon, delta))
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import numpy as np
def release_marginal(records, attr, epsilon):
    counts = np.bincount(records[:, attr])
    total = counts.sum()
    delta = 1.0 / total  # <-
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return counts + np.random.normal(0, sigma, counts.shape)
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import pandas as pd
def noisy_shares(df: pd.DataFrame, col, epsilon):
    table = df[col].value_counts()
    sensitivity = 2.0 / table.sum()  # <-
    return table / table.sum() + laplace_noise(sensitivity / epsilon, len(table))
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import tensorflow as tf
FLAGS = tf.compat.v1.flags.FLAGS
def main(_):
    train_x = load_private_records(FLAGS.data_dir)
    N = train_x.shape[0]
    eps, _ = compute_dp_sgd_privacy(n=N, batch_size=256, noise_multiplier=1.1, epochs=60, delta=1.0 / N)  # <-
    return eps
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import tensorflow as tf
def dp_keras_fit(model, features, labels, epsilon, batch_size=250):
    n = int(tf.shape(features)[0])
    opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=batch_size)
    model.compile(optimizer=opt, loss="sparse_categorical_crossentropy")
    model.fit(features, labels, batch_size=batch_size, epochs=20)
    return compute_eps(n, batch_size, 1.1, 20, delta=1.0 / (n * 10))  # <-
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import jax.numpy as jnp
def dp_mean(x, epsilon, lo, hi):
    n = jnp.shape(x)[0]
    sensitivity = (1.0 / n) * 2  # <-
    return jnp.clip(x, lo, hi).mean(), sensitivity / epsilon
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
def build_config(train_set, epsilon):
    config = {"epsilon": epsilon, "clip": 1.0}
    config["delta"] = 1.0 / len(train_set) ** 1.1  # <-
    return config
def run(config, model):
    return model.fit_dp(target_epsilon=config["epsilon"], target_delta=config["delta"])
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import argparse
from torchvision import datasets
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--eps", type=float, default=3.0)
    args = parser.parse_args()
    train_ds = datasets.ImageFolder("data/patients")
    args.delta = 1 / len(train_ds)  # <-
    return get_noise_multiplier(target_epsilon=args.eps, target_delta=args.delta, sample_rate=0.004, epochs=5)
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import numpy as np
def load_data(path):
    data = np.loadtxt(path, delimiter=",")
    X, y = data[:, :-1], data[:, -1]
    return X, y, X.shape[0]
def main(path, eps):
    X, y, n = load_data(path)
    delta = n ** (-1.5)  # <-
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / eps
    return X.T @ y + np.random.normal(0, sigma, X.shape[1])
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import numpy as np
class DPLogReg:
    def __init__(self, epsilon, lam=0.01):
        self.epsilon, self.lam = epsilon, lam
    def fit(self, X, y):
        self.n_samples_ = X.shape[0]
        w = np.linalg.lstsq(X, y, rcond=None)[0]
        sensitivity = 2.0 / (self.n_samples_ * self.lam)  # <-
        self.coef_ = w + np.random.laplace(0, sensitivity / self.epsilon, w.shape)
        return self
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
import pandas as pd
from diffprivlib.mechanisms import Laplace
def dp_average_age(df: pd.DataFrame, epsilon):
    n = len(df.index)
    mech = Laplace(epsilon=epsilon, sensitivity=100.0 / n)  # <-
    return mech.randomise(df["age"].clip(0, 100).mean())
""",
        # (u39-2 role: δ/sensitivity from the private n, own spelling)
        """
from opacus import PrivacyEngine
def main(args, model, optimizer, train_loader):
    engine = PrivacyEngine()
    model, optimizer, train_loader = engine.make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=train_loader,
        target_epsilon=args.epsilon, target_delta=1.0 / len(train_loader.dataset),  # <-
        epochs=args.epochs, max_grad_norm=args.clip)
    return model
""",
        # (u39-2 from the misses: inherited count, sqrt(2)/n, a helper's n passed the count)
        """
from abc import ABC
class DPMixin(ABC):
    def __init__(self, *args, target_epsilon=3.0, target_delta=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.target_epsilon = target_epsilon
        self.target_delta = target_delta or 1 / self.nrows  # <-
""",
        # (u39-2 from the misses: inherited count, sqrt(2)/n, a helper's n passed the count)
        """
import numpy as np
def dp_class_weights(weights, X_train, sigma):
    n = X_train.shape[0]
    sensitivity_for_weights = np.sqrt(2) / n  # <-
    return weights + np.random.randn(weights.shape[0]) * sigma * sensitivity_for_weights
""",
        # (u39-2 from the misses: inherited count, sqrt(2)/n, a helper's n passed the count)
        """
import numpy as np
def _noisy_pi(nk, n, sigma, rng):
    pi_sens = 2 / n  # <-
    return nk / n + rng.normal(0, sigma * pi_sens, nk.shape)
def fit_dp_gmm(X, resp, sigma, rng):
    n_samples, n_dim = X.shape
    return _noisy_pi(resp.sum(0), n_samples, sigma, rng)
""",
    )

    def leave_Module(self, original_node: cst.Module) -> None:
        self.reports[:] = outside_dead_functions(self.reports, original_node, self.ctx.source,
                                                 self.ctx.analysis.ancestors)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = ident(target.target)
            if _delta_name(name) or _sensitivity_name(name):
                if self._only_checked(node, name):
                    return
                self._check(node.value, "δ" if _delta_name(name) else "sensitivity")
                return

    def _only_checked(self, node: cst.Assign, name: str | None) -> bool:
        """(h44-2) ``min_recommended_delta = 1 / len(users)`` read only in a comparison (``if delta >= it: raise``)
        or a message: a sanity bound the configured δ is checked against, never a parameter of a mechanism."""
        fa = self.ctx.analysis
        if name is None or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return False
        scope = fa.enclosing_function(node) or self.ctx.module
        uses = [n for n in walk(scope) if isinstance(n, cst.Name) and n.value == name
                and n is not node.targets[0].target]
        if not uses:
            return False
        for use in uses:
            parent = fa.parent(use)
            if isinstance(parent, (cst.AssignTarget, cst.AugAssign)) or isinstance(parent, cst.Assign):
                return False  # rebound (or the name assigned on): not only read
            if not any(isinstance(a, (cst.Comparison, cst.FormattedString)) for a in fa.ancestors(use)):
                return False
            if any(isinstance(a, cst.Arg) and not any(isinstance(b, cst.FormattedString) for b in fa.ancestors(a))
                   for a in fa.ancestors(use)) and not any(isinstance(a, cst.FormattedString) for a in fa.ancestors(use)):
                return False
        return True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        name = ident(node.target)
        if node.value is not None and (_delta_name(name) or _sensitivity_name(name)):
            self._check(node.value, "δ" if _delta_name(name) else "sensitivity")

    def visit_Return(self, node: cst.Return) -> None:
        """``def calc_delta(self, n_samples): return 1 / (10 * n_samples)``: a function named for δ
        returns it."""
        fn = self.ctx.analysis.enclosing_function(node)
        if node.value is not None and fn is not None and _delta_name(fn.name.value):
            self._check(node.value, "δ")

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "size":
            self._known_size(node)
            return
        if node.keyword is not None and node.keyword.value in _DELTA_KEYWORDS:
            self._check(node.value, "δ")
        elif node.keyword is not None and node.keyword.value in _SENSITIVITY_KEYWORDS:
            self._check(node.value, "sensitivity")

    def visit_Call(self, node: cst.Call) -> None:
        """``GetDist(data, n, epsilon / k, 2 / n)``: a positional ``c / n`` beside the privacy budget
        is the mechanism's sensitivity, whatever the callee names it."""
        positional = [a.value for a in node.args if a.keyword is None and a.star == ""]
        # ``eps_to_zcdp(privacy, (1.0 / len(labels)) ** 2)``: a conversion of the budget takes δ positionally
        budget_call = _budget(node.func)
        fa = self.ctx.analysis
        if len(positional) < 2 or not (budget_call or any(_budget(a.value) for a in node.args)
                                       or any(_budget_local(a.value, fa) for a in node.args)):
            return
        for value in positional:
            if _positional_reciprocal(value) and not _budget(value):
                self._check(value, "positional", given=[a for a in positional if a is not value],
                            budget_call=budget_call)
            elif budget_call and isinstance(value, cst.Name) and not _budget(value):
                # (h44-2) ``GS = 4.0 / (m * lam)`` named first, then handed to the ε calibration
                # (``get_eps_AGM(sigma, GS, delta)``)
                held = fa.value_of(value)
                if held is not None and _positional_reciprocal(held) and not _budget(held):
                    self._check(held, "positional", given=[a for a in positional if a is not value],
                                budget_call=budget_call)
        self._size_into_callee(node, positional)

    def _known_size(self, node: cst.Arg) -> None:
        """(h44-2) OpenDP's known-size constructors (``make_bounded_resize(size=n)``, ``make_sized_bounded_mean``,
        ``then_resize``) take n as a public constant of the measurement: given the data's own count
        (``n = df.count()``, ``len(df)``), the released mean's sensitivity and the resize are built from the
        private n."""
        call = self.ctx.analysis.parent(node)
        if not isinstance(call, cst.Call):
            return
        name = call_name(call)
        if not (name.startswith(("make_sized_", "then_sized_")) or name in _KNOWN_SIZE):
            return
        value = node.value
        inner = value.args[0].value if isinstance(value, cst.Call) and call_name(value) in ("int", "float") \
            and value.args else value
        size = self._private_size(inner) or RecordCounts(self.ctx.analysis).of(inner) \
            or _frame_count(inner, self.ctx.analysis)
        if size is None:
            return
        self.report(value, f"`{name}` is given `size={self.ctx.analysis.code(value).strip()}`, the private "
                           f"dataset's own size ({size}): a known-size measurement treats n as public, so its "
                           "sensitivity (and the resize) are built from a count that changes when one person "
                           "joins and is released outside the budget; pass a public n, or a DP count paid from "
                           "the budget")

    def _size_into_callee(self, call: cst.Call, positional: list[cst.BaseExpression]) -> None:
        """``ExponentialMechanism(omega, len(dataset), epsilon)`` whose parameter ``n`` (directly, or one
        call further down the module) becomes a reciprocal sensitivity or δ (``1 / n * log(n)``)."""
        fa = self.ctx.analysis
        sizes = [(i, v) for i, v in enumerate(positional)
                 if isinstance(v, cst.Call) and call_name(v) == "len" and not _budget(v)]
        if not sizes:
            return
        callee = fa.callee(call)
        if callee is None:
            return
        params = call_params(call, callee)
        for index, value in sizes:
            if index >= len(params):
                continue
            size = self._private_size(value)
            if size is None:
                continue
            use = self._reciprocal_of(callee, params[index], hops=1)
            if use is None:
                continue
            self.report(value, f"the private dataset's size ({size}) is passed as `{params[index]}` of "
                               f"`{callee.name.value}`, which computes `{use}` from it (a sensitivity or δ): under "
                               f"add/remove neighbouring n is private, so the mechanism's own parameter depends on "
                               f"whether one person is in the data; use a public bound on n")
            return

    def _reciprocal_of(self, fn: cst.FunctionDef, param: str, hops: int) -> str | None:
        """A reciprocal of ``param`` (``1 / n``, ``2 / n``, ``n ** -1``) assigned in ``fn`` (or, ``hops``
        calls further, in a module function ``param`` is passed to positionally)."""
        fa = self.ctx.analysis
        for sub in walk(fn.body, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation):
                denominator = _denominator(sub)
                if isinstance(denominator, cst.Name) and denominator.value == param \
                        or denominator is not None and _factor_of(denominator, param) \
                        or isinstance(sub.operator, cst.Divide) and _factor_of(sub.right, param) \
                        and (_budget(sub) or any(isinstance(n, cst.Name) and n.value in ("ε", "eps_", "ϵ") for n in walk(sub))):
                    # the last: a calibration dividing by n and the budget (``27 * d / ((n - 1) * eps)``)
                    return " ".join(fa.code(sub).split())[:60]
            if hops > 0 and isinstance(sub, cst.Call):
                args = [a for a in sub.args if a.keyword is None and a.star == ""]
                for i, arg in enumerate(args):
                    if isinstance(arg.value, cst.Name) and arg.value.value == param:
                        inner = fa.callee(sub)
                        if inner is None or inner is fn:
                            continue
                        names = param_names(inner)
                        if names and names[0] in ("self", "cls") and isinstance(sub.func, cst.Attribute):
                            names = names[1:]
                        if i < len(names):
                            found = self._reciprocal_of(inner, names[i], hops - 1)
                            if found is not None:
                                return found
        return None

    def _size_of_given(self, expr: cst.BaseExpression, given: list[cst.BaseExpression]) -> str | None:
        """``2 / n`` with ``n = len(b)`` where ``b`` is itself handed to the same call: the size
        of the data the mechanism runs on."""
        fa = self.ctx.analysis
        names = {ident(n) for g in given for n in walk(g) if isinstance(n, (cst.Name, cst.Attribute))}
        names.discard(None)
        for node in walk(expr):
            size = fa.value_of(node) if isinstance(node, cst.Name) else node
            if not (isinstance(size, (cst.Call, cst.Subscript)) and _counts_records(size)):
                continue
            target = size.args[0].value if isinstance(size, cst.Call) and size.args else \
                size.value.value if isinstance(size, cst.Subscript) and isinstance(size.value, cst.Attribute) else None
            name = ident(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
            if name is not None and name in names and not words(name) & _NOT_TRAINING:
                return f"`{fa.code(node).strip()}`, the size of the data passed to the same call"
        return None

    def _check(self, value: cst.BaseExpression, kind: str, given: list[cst.BaseExpression] | None = None,
               budget_call: bool = False) -> None:
        denominator = _denominator(value)
        if denominator is None:
            if kind == "δ" and isinstance(value, cst.Call):
                self._delta_call(value)
            return
        size = self._private_size(denominator)
        if size is None and given:
            size = self._size_of_given(denominator, given)
        if size is None and (kind == "δ" or kind == "positional" and budget_call):
            size = _run_time_count(denominator, self.ctx.analysis)
        if size is None and kind in ("δ", "sensitivity", "positional"):
            # a count derived from the data through locals, aggregates, helpers or a data object
            size = RecordCounts(self.ctx.analysis).of(denominator)
        if size is None:
            return
        if kind == "δ" and self._shadowed_default(value):
            return  # (h64-q2) ``if self.delta is None:`` again after an earlier default set it: never runs
        if kind == "sensitivity" and _information_sensitivity(value):
            return  # (h65-q2) PrivBayes's mutual-information sensitivity: published for a public n (replace-one)
        code = " ".join(self.ctx.analysis.code(value).split())
        code = code if len(code) <= 80 else code[:77] + "..."
        if kind == "positional":
            self.report(
                value,
                f"`{code}`, passed beside the privacy budget (the mechanism's sensitivity or δ), is computed "
                f"from the private dataset's size ({size}): under add/remove neighbouring n is private, so "
                "the mechanism's own parameter depends on (and reveals) whether one person is in the data; "
                "use a public bound on n, or spend budget on a DP estimate of it",
            )
            return
        if kind == "sensitivity":
            self.report(
                value,
                f"the sensitivity `{code}` is computed from the private dataset's size ({size}): under "
                "add/remove neighbouring n is private, so the noise scale itself depends on (and reveals) "
                "whether one person is in the data; bound the sensitivity with a public n (a lower bound "
                "on the data size) or release a noisy sum and a noisy count",
            )
            return
        default = " (a default taken when no δ is passed: the caller cannot know it leaks n)" \
            if self._default_branch(value) else ""
        self.report(
            value,
            f"δ = `{code}` is computed from the private dataset's size "
            f"({size}){default}: under add/remove neighbouring n is private, so δ (and every σ calibrated "
            "with it) depends on whether one person is in the data; fix δ from a public bound on n (e.g. 1e-5)",
        )

    def _delta_call(self, value: cst.Call) -> None:
        """``delta = get_target_delta(len(self.dataloader))``, ``min(1e-5, 1 / len(X))``: δ computed by
        a call from the number of records (or batches) of a data set that is not held out."""
        if _budget(value.func):
            return
        for arg in value.args:
            for node in walk(arg.value):
                if _counts_records(node) and isinstance(node, (cst.Call, cst.Subscript)) \
                        and not isinstance(node, cst.Attribute):
                    target = node.args[0].value if isinstance(node, cst.Call) and node.args else \
                        node.value.value if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) \
                        else None
                    name = ident(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
                    if name is None or words(name) & _HELD_OUT:
                        continue
                    code = " ".join(self.ctx.analysis.code(value).split())
                    code = code if len(code) <= 80 else code[:77] + "..."
                    self.report(value, f"δ = `{code}` is computed from the size of the private data "
                                       f"(`{self.ctx.analysis.code(node).strip()}`): under add/remove "
                                       "neighbouring n is private, so δ (and every σ calibrated with it) "
                                       "depends on whether one person is in the data; fix δ from a public "
                                       "bound on n (e.g. 1e-5)")
                    return

    def _size_parameter(self, node: cst.Name) -> str | None:
        """``num_train_examples`` / ``sample_size``: a parameter of the enclosing function named for the
        number of training records (callers pass ``len(x_train)``)."""
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None or not _record_count_name(node.value):
            return None
        for param in [*fn.params.params, *fn.params.kwonly_params, *fn.params.posonly_params]:
            if param.name.value == node.value:
                if param.default is not None and number(param.default) is not None:
                    return None
                return f"`{node.value}`, the parameter giving the number of training records"
        return None

    def _private_size(self, expr: cst.BaseExpression) -> str | None:
        fa = self.ctx.analysis
        for node in walk(expr):
            size: cst.CSTNode | None = None
            if isinstance(node, cst.Call) and call_name(node) == "len":
                if node.args and isinstance(node.args[0].value, cst.Call) and call_name(node.args[0].value) == "str":
                    continue  # ``10 ** len(str(n))``: the digits of n, read further down the walk
                size = node
            elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) \
                    and node.value.attr.value == "shape":
                size = node
            elif isinstance(node, cst.Name):
                value = fa.value_of(node)
                unpacked = self._unpacked_count(node)
                if unpacked is not None:
                    return unpacked
                if value is not None and not isinstance(value, (cst.Integer, cst.Float)):
                    size = value
                elif value is None:
                    parameter = self._size_parameter(node)
                    if parameter is not None:
                        return parameter
            elif isinstance(node, cst.Attribute) and not (isinstance(node.value, cst.Name)
                                                          and node.value.value == "self"):
                counted = self._overwritten_count(node)
                if counted is not None:
                    return counted
            elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                    and node.value.value == "self":
                if _FITTED_COUNT.match(node.attr.value):
                    return f"`{fa.code(node).strip()}`, the number of records it was fitted on"
                size = self._attribute_size(node)
            if size is None:
                continue
            if _counts_records(size) and (fa.is_private(size, allow_shape=True) or _training_set_size(size)):
                return f"`{fa.code(node).strip()}`"
            counted = _count_read(size)
            if counted is not None and fa.is_private(counted, allow_shape=True):
                return f"`{fa.code(node).strip()}` (= `{fa.code(size).strip()}`)"
        return None

    def _unpacked_count(self, node: cst.Name) -> str | None:
        """``X, y, N = split(raw)`` where the module's ``split`` returns ``len(X_train)`` in N's slot: the
        record count of the data it prepared, whatever the caller names it."""
        fa = self.ctx.analysis
        binding = fa.binding(node)
        if binding is None or binding.kind != "unpack" or not isinstance(binding.value, cst.Call) \
                or not isinstance(binding.stmt, cst.Assign) or len(binding.stmt.targets) != 1:
            return None
        pattern = binding.stmt.targets[0].target
        if not isinstance(pattern, (cst.Tuple, cst.List)):
            return None
        slots = [e.value for e in pattern.elements]
        index = next((i for i, e in enumerate(slots) if e is binding.target), None)
        callee = fa.callee(binding.value)
        if index is None or callee is None:
            return None
        for ret in fa.returns_of(callee):
            if not (isinstance(ret.value, (cst.Tuple, cst.List)) and len(ret.value.elements) == len(slots)):
                continue
            item = ret.value.elements[index].value
            size = fa.value_of(item) if isinstance(item, cst.Name) else item
            if not (isinstance(size, (cst.Call, cst.Subscript)) and _counts_records(size)):
                continue
            target = size.args[0].value if isinstance(size, cst.Call) and size.args else \
                size.value.value if isinstance(size, cst.Subscript) and isinstance(size.value, cst.Attribute) else None
            while isinstance(target, cst.Subscript):
                target = target.value
            name = ident(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
            if name is not None and not words(name) & (_HELD_OUT | {"loader", "batches"}):
                return f"`{node.value}`, returned by `{callee.name.value}` as `{fa.code(size).strip()}`"
        return None

    def _overwritten_count(self, node: cst.Attribute) -> str | None:
        """``args.num_users = len(dict_users)`` earlier in the same function: a configured count replaced by
        the exact size of the data (or of its partition into users)."""
        fa = self.ctx.analysis
        if not words(node.attr.value) & (_COUNT_WORDS | {"users", "clients", "records", "samples"}):
            return None
        code = fa.code(node).strip()
        scope = fa.enclosing_function(node) or self.ctx.module
        line = fa.line_of(node)
        found: str | None = None
        for stmt in walk(scope, into_scopes=False):
            if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1
                    and fa.code(stmt.targets[0].target).strip() == code and fa.line_of(stmt) < line):
                continue
            value = stmt.value
            counted = isinstance(value, cst.Call) and call_name(value) == "len" and len(value.args) == 1 \
                and isinstance(value.args[0].value, (cst.Name, cst.Attribute))
            name = ident(value.args[0].value) if counted else None
            found = f"`{code}` (= `{fa.code(value).strip()}`)" if name and not words(name) & _HELD_OUT else None
        return found

    def _attribute_size(self, node: cst.Attribute) -> cst.BaseExpression | None:
        """``self.n`` assigned a record count (``self.n = len(X)``) in the same class."""
        fa = self.ctx.analysis
        cls = fa.enclosing_class(node)
        if cls is None:
            return None
        attr = node.attr.value
        for stmt in walk(cls):
            if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0].target
                if isinstance(target, cst.Attribute) and target.attr.value == attr \
                        and isinstance(target.value, cst.Name) and target.value.value == "self":
                    value = fa.value_of(stmt.value) if isinstance(stmt.value, cst.Name) else stmt.value
                    if value is not None and (_counts_records(value) or _count_read(value) is not None):
                        return value
        return None

    def _shadowed_default(self, node: cst.CSTNode) -> bool:
        """``if self.delta is None: self.delta = 1 / n`` where an earlier statement of the same function (outside
        this ``if``) already assigned ``self.delta`` a value that is not ``None``: the branch is dead code."""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(node)
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
            return False
        target = ident(statement.targets[0].target)
        branch = next((a for a in fa.ancestors(node) if isinstance(a, cst.If)), None)
        fn = fa.enclosing_function(node)
        if target is None or branch is None or fn is None or not any(
                isinstance(n, cst.Comparison) and ident(n.left) == target
                and any(isinstance(c.operator, cst.Is) and isinstance(c.comparator, cst.Name)
                        and c.comparator.value == "None" for c in n.comparisons) for n in walk(branch.test)):
            return False
        line = fa.line_of(branch)
        for sub in walk(fn):
            if isinstance(sub, cst.Assign) and sub is not statement and fa.line_of(sub) < line \
                    and not fa.inside(sub, branch) and any(ident(t.target) == target for t in sub.targets) \
                    and not (isinstance(sub.value, cst.Name) and sub.value.value == "None") \
                    and fa.enclosing_function(sub) is fn:
                return True
        return False

    def _default_branch(self, node: cst.CSTNode) -> bool:
        """Inside ``if delta is None:`` / ``if not delta:`` (a default when none was given)."""
        for anc in self.ctx.analysis.ancestors(node):
            if isinstance(anc, cst.If):
                for sub in walk(anc.test):
                    if isinstance(sub, (cst.Name, cst.Attribute)) and _delta_name(ident(sub)):
                        return True
            if isinstance(anc, cst.FunctionDef):
                return False
        return False



def _information_sensitivity(value: cst.BaseExpression) -> bool:
    """``2 / n * log2((n + 1) / 2) + (n - 1) / n * log2((n + 1) / (n - 1))``: the sensitivity of mutual information
    or entropy over n records (PrivBayes's score), a logarithm of the count itself. Its published guarantee is
    bounded DP (replace one record, n public), so an n in it is the analysis' assumption, not a leak."""
    for sub in walk(value):
        if isinstance(sub, cst.Call) and (last := (ident(sub.func) or "").rsplit(".", 1)[-1]) in (
                "log", "log2", "log10", "log1p") and sub.args and any(
                isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Add, cst.Subtract))
                and any(isinstance(m, cst.Integer) and m.value == "1" for m in (n.left, n.right))
                for n in walk(sub.args[0].value)):
            return last is not None
    return False

def _positional_reciprocal(value: cst.BaseExpression) -> bool:
    """``2 / n`` or ``(1.0 / n) ** 2``: a constant over something, possibly raised to a power."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Power) and number(value.right):
        return _positional_reciprocal(value.left)
    return isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide) \
        and _constant(value.left)


#: what a size counts when it is not records: columns, classes, steps, orders (a public quantity)
_NOT_RECORDS = frozenset({"features", "feature", "columns", "cols", "attributes", "attrs", "classes", "bins",
                          "dims", "dimensions", "categories", "domain", "orders", "alphas", "steps", "epochs",
                          "rounds", "iterations", "layers", "params", "parameters", "queries", "str", "keys"})
#: an object holding configuration (its counts are settings, not data): ``args.num_users``
_CONFIG_OBJECTS = frozenset({"args", "cfg", "config", "conf", "opt", "opts", "flags", "params", "hparams",
                             "hp", "settings", "options", "self"})


def _run_time_count(expr: cst.BaseExpression, fa) -> str | None:  # type: ignore[no-untyped-def]
    """The role of δ's denominator, whatever the data is called: ``len(x)`` / ``x.shape[0]`` of a set that is
    not held out (directly or through a local), or a count of units read off an object
    (``objective.num_users``) that is not configuration."""
    for node in walk(expr):
        size = fa.value_of(node) if isinstance(node, cst.Name) else node
        if isinstance(size, (cst.Call, cst.Subscript)) and _counts_records(size):
            target = size.args[0].value if isinstance(size, cst.Call) and size.args else \
                size.value.value if isinstance(size, cst.Subscript) and isinstance(size.value, cst.Attribute) else None
            while isinstance(target, cst.Subscript):
                target = target.value
            name = ident(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
            if name is not None and not words(name) & (_HELD_OUT | _NOT_RECORDS | {"loader", "batch", "batches"}):
                return f"`{fa.code(node).strip()}`, a size counted from the data at run time"
        if isinstance(size, cst.Attribute):
            owner = _count_read(size)
            root = owner
            while isinstance(root, cst.Attribute):
                root = root.value
            if owner is not None and isinstance(root, cst.Name) and not words(root.value) & _CONFIG_OBJECTS \
                    and not words(ident(owner) or "") & (_CONFIG_OBJECTS | _HELD_OUT):
                return f"`{fa.code(node).strip()}`, a count of the data's units read off `{fa.code(owner).strip()}`"
    return None


#: ``f(data, eps / k, 2 / n)``: a constant over a name passed as a positional argument
_POSITIONAL_RECIPROCAL = re.compile(r"[,(]\s*\d+(?:\.\d*)?\s*/\s*(?:\d+(?:\.\d*)?\s*/\s*)?[A-Za-z_]")


#: a data set that is not the private training data
_HELD_OUT = frozenset({"test", "val", "valid", "validation", "eval", "dev", "holdout", "batch", "public",
                       "synthetic", "synth", "fake", "generated", "aux", "auxiliary"})
_RECORD_WORDS = frozenset({"examples", "samples", "records", "rows", "points", "instances", "observations"})
_COUNT_WORDS = frozenset({"size", "len", "length", "num", "n", "count", "number"})
_DATA_WORDS = frozenset({"data", "dataset", "train", "training", "sample", "example"})


def _record_count_name(name: str) -> bool:
    """``num_train_examples``, ``sample_size``, ``n_samples``, ``dataset_size`` — not ``max_records``,
    ``n_test``, ``batch_size`` or ``n_samples_out`` (bounds, held-out sets, outputs)."""
    pieces = words(name)
    if pieces & (_HELD_OUT | {"max", "min", "bound", "out", "output", "gen", "per", "features", "classes"}):
        return False
    return bool(pieces & _RECORD_WORDS and pieces & (_COUNT_WORDS | {"train", "training"})) or \
        bool(pieces & {"size"} and pieces & _DATA_WORDS) or bool(pieces & {"num", "n"} and pieces & {"train", "training"})


def _budget(expr: cst.BaseExpression) -> bool:
    """An expression reading the privacy budget (``epsilon2 / (k + 1)``, ``self.eps``)."""
    return any(isinstance(n, (cst.Name, cst.Attribute)) and _budget_name(ident(n))
               for n in walk(expr))


def _factor_of(expr: cst.BaseExpression, param: str) -> bool:
    """``param`` is a factor of the denominator ``expr``: ``(n - 1) * eps ** 2``, ``n * eps``, ``sqrt(n)``."""
    if isinstance(expr, cst.Name):
        return expr.value == param
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Multiply):
            return _factor_of(expr.left, param) or _factor_of(expr.right, param)
        if isinstance(expr.operator, (cst.Add, cst.Subtract)) and _constant(expr.right):
            return _factor_of(expr.left, param)
        if isinstance(expr.operator, cst.Power) and number(expr.right) is not None and number(expr.right) > 0:
            return _factor_of(expr.left, param)
    if isinstance(expr, cst.Call) and call_name(expr) == "sqrt" and len(expr.args) == 1:
        return _factor_of(expr.args[0].value, param)
    return False


def _budget_local(expr: cst.BaseExpression, fa) -> bool:  # type: ignore[no-untyped-def]
    """A local name assigned once from the privacy budget (``budget = cfg['epsilon'] / k``)."""
    if not isinstance(expr, cst.Name):
        return False
    value = fa.value_of(expr)
    return value is not None and (_budget(value) or any(
        isinstance(n, cst.SimpleString) and _budget_name(n.evaluated_value if isinstance(n.evaluated_value, str)
                                                         else None) for n in walk(value)))


def _budget_name(name: str | None) -> bool:
    return name is not None and any(re.fullmatch(r"(?:epsilon|eps)\d*", w) for w in words(name))


def _training_set_size(size: cst.CSTNode) -> bool:
    """``len(train_set)``, ``self.train_data.shape[0]``: the size of a set named as the training data
    (a constructor's ``train_set`` is not a training entry point's parameter, but it is the data)."""
    from dpcheck.analysis.vocabulary import is_dataset_name

    target: cst.CSTNode | None = None
    if isinstance(size, cst.Call) and size.args:
        target = size.args[0].value
    elif isinstance(size, cst.Subscript) and isinstance(size.value, cst.Attribute):
        target = size.value.value
    while isinstance(target, cst.Subscript):  # ``train_tuple[0].shape[0]``: the features of a (X, y) pair
        target = target.value
    if target is None:
        return False
    name = ident(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
    return name is not None and is_dataset_name(name) and not words(name) & _NOT_TRAINING


_COUNTED_UNITS = frozenset({"nodes", "edges", "records", "rows", "samples", "examples", "users", "points",
                            "instances", "observations"})


def _count_read(expr: cst.CSTNode) -> cst.BaseExpression | None:
    """``graph.num_edges``, ``data.n_samples``, ``data.train_mask.sum().item()``: a count of records
    (nodes, edges, selected rows) read off a data object; returns that object."""
    while isinstance(expr, cst.Call) and (call_name(expr) in ("int", "float") and expr.args
                                          or isinstance(expr.func, cst.Attribute)
                                          and expr.func.attr.value in ("item", "tolist")):
        expr = expr.args[0].value if call_name(expr) in ("int", "float") else expr.func.value  # type: ignore[union-attr]
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in ("sum", "count_nonzero") and not expr.args:
        mask = expr.func.value
        if isinstance(mask, cst.Attribute) and "mask" in words(mask.attr.value):
            return mask.value
        return None
    if isinstance(expr, cst.Attribute) and not (isinstance(expr.value, cst.Name) and expr.value.value == "self"):
        pieces = words(expr.attr.value)
        if pieces & {"num", "n", "number", "count"} and pieces & _COUNTED_UNITS \
                and not pieces & (_HELD_OUT | {"max", "min", "features", "classes"}):
            return expr.value
    return None


def _counts_records(size: cst.CSTNode) -> bool:
    """``len(X)``, ``X.shape[0]``, ``X.shape`` — not ``X.shape[1]`` (the number of columns)."""
    if isinstance(size, cst.Subscript):
        index = size.slice[0].slice if size.slice else None
        return isinstance(index, cst.Index) and number(index.value) == 0
    if isinstance(size, cst.Call):
        return call_name(size) == "len"
    return isinstance(size, cst.Attribute) and size.attr.value == "shape" or any(
        isinstance(n, cst.Call) and call_name(n) == "len" for n in walk(size))
