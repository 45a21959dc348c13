"""DP510: the whole ε spent on every column, coordinate or selection of a loop over the same records."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, last_name, loop_iter, number, walk, words
from dpcheck.rule import Rule

_EPS = re.compile(r"(eps|epsilon)\d*")
#: an ε name with one of these words is already a share (``eps_per_col``, ``epsilon_round``)
_SHARE_WORDS = frozenset({
    "per", "each", "col", "column", "attr", "attribute", "round", "step", "iter", "iteration", "query", "split",
    "share", "part", "local", "single", "one", "node", "dim", "coord", "item", "feature", "marginal", "t", "i",
    "k", "sub", "unit", "layer", "level", "j", "q", "remaining", "left", "rest", "new", "cur", "current",
})
#: what a loop over the attributes of the same records iterates
_COLUMN_WORDS = frozenset({
    "cols", "columns", "column", "features", "attributes", "attrs", "attr", "dims", "dimensions", "dim",
    "coordinates", "coords", "marginals", "queries", "fields", "variables", "categorical", "numeric",
    "numerical", "d", "ncols", "ncol", "nfeatures", "record", "row",
})
#: a loop that repeats the same release to measure it (tests, experiments), not one release per pass
_REPEAT_WORDS = frozenset({"trials", "trial", "runs", "run", "repeat", "repeats", "repetitions", "reps",
                           "experiments", "exper", "seeds", "samples", "times", "nsamples", "ntrials", "nruns"})
#: ``range(n_batch)``, ``range(num_clients)``: one pass per disjoint part of the records (parallel composition)
_DISJOINT_WORDS = frozenset({"batch", "batches", "nbatch", "nbatches", "chunk", "chunks", "partitions", "shards",
                             "clients", "users", "parts"})
#: column words that only qualify a noun: ``numeric_cols`` is columns, ``timestamps_numerical`` is one value per record
_QUALIFIER_WORDS = frozenset({"categorical", "numeric", "numerical", "record", "row"})
#: what a list of one value per record is named (``login_timestamps_numerical``, ``row_values``)
_VALUE_WORDS = frozenset({"timestamps", "values", "vals", "data", "samples", "records", "rows", "points",
                          "readings", "entries", "ts", "times", "scores", "counts", "ages", "amounts", "salaries"})
#: what a list of a trained model's outputs is named: every prediction is a function of all the training records,
#: so one release per prediction composes over the same data (sequential, not parallel composition)
_PREDICTION_WORDS = frozenset({"preds", "predictions", "prediction", "predicted", "probs", "probas", "proba",
                               "probabilities", "logits", "yhat"})
#: DP library releases built with an ε (PyDP's aggregations; ``BoundedMean(epsilon=…).quick_result([v])``)
_LIBRARY_RELEASES = frozenset({"BoundedMean", "BoundedSum", "BoundedStandardDeviation", "BoundedVariance",
                               "Count", "Max", "Min", "Median", "Percentile"})
_PASS_THROUGH = frozenset({"enumerate", "zip", "list", "sorted", "tqdm", "reversed", "iter", "tuple", "set"})
#: a callee that releases something about its input under an ε it is given
_MECH_WORDS = frozenset({
    "laplace", "laplacian", "gaussian", "gauss", "geometric", "perturb", "perturbation", "privatize", "privatise",
    "randomize", "randomise", "randomized", "randomised", "randomizer", "randomiser", "rr", "grr", "oue", "olh",
    "mechanism", "mech", "noise", "noisy", "private", "privatized", "sanitize", "exponential", "exponent",
})
_SELECT_WORDS = frozenset({"exponential", "exponent", "em"})
#: a loop body that charges a budget or an accountant composes its rounds
_CHARGE_WORDS = frozenset({"spend", "spent", "consume", "charge", "compose", "accountant", "account", "budget",
                           "odometer", "composition", "pay"})


def _eps_name(name: str | None) -> bool:
    """The full budget: ``epsilon``, ``self.eps``, ``epsilon1`` (not ``eps_per_col``, ``eps_round``)."""
    if name is None:
        return False
    pieces = words(name)
    return any(_EPS.fullmatch(w) for w in pieces) and not pieces & _SHARE_WORDS


def _full_eps(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Name, cst.Attribute)) and _eps_name(last_name(expr))


def _attribute_target(target: cst.BaseExpression) -> bool:
    """``for atr in cluster``: the loop's own name says each pass is one attribute of the same records."""
    return isinstance(target, cst.Name) and bool(words(target.value) & {"atr", "attr", "attribute", "col", "column",
                                                                          "feature", "feat"})


#: what names one location (a point of a map), not one coordinate of a vector
_LOCATION_WORDS = frozenset({"lat", "latitude", "lon", "lng", "long", "longitude", "point", "pt", "location", "loc",
                             "place", "poi", "checkin", "position", "gps", "latlon", "latlng", "venue"})
_AXIS_WORDS = frozenset({"x", "y", "z"})


def _location_target(target: cst.BaseExpression) -> bool:
    """``for lon, lat in coordinates``, ``for i, (x, y) in enumerate(coords)``, ``for point in coords``: each pass
    is a different location (one per record), perturbed once, not one coordinate of the same record."""
    if isinstance(target, cst.Name):
        return bool(words(target.value) & (_LOCATION_WORDS - {"long"}))
    if not isinstance(target, (cst.Tuple, cst.List)):
        return False
    names = [e.value for e in target.elements if isinstance(e.value, cst.Name)]
    inner = [e.value for e in target.elements if isinstance(e.value, (cst.Tuple, cst.List))]
    if any(_location_target(t) for t in inner):
        return True
    hits = [n for n in names if words(n.value) & (_LOCATION_WORDS | _AXIS_WORDS)]
    return len(hits) >= 2 and any(words(n.value) & _LOCATION_WORDS for n in hits) \
        or len(hits) >= 2 and {n.value for n in hits} >= {"x", "y"}


def _column_like(expr: cst.BaseExpression, *, any_range: bool) -> bool:
    """``df.columns``, ``enumerate(cols)``, ``range(len(features))``, ``range(X.shape[1])``, ``range(d)``;
    with ``any_range`` every ``range(…)`` (repeated selections on the same data)."""
    if isinstance(expr, cst.Call):
        name = call_name(expr)
        if name in _PASS_THROUGH:
            return any(_column_like(a.value, any_range=any_range) for a in expr.args if a.keyword is None)
        if name in ("items", "keys", "values") and isinstance(expr.func, cst.Attribute):
            return _column_like(expr.func.value, any_range=any_range)
        if name == "range" and expr.args:
            bound = expr.args[-1].value if len(expr.args) == 1 else expr.args[1].value
            if number(bound) is not None or words(last_name(bound) or "") & (_REPEAT_WORDS | _DISJOINT_WORDS):
                return False
            if any_range:
                return True
            if isinstance(bound, cst.Call) and call_name(bound) == "len" and bound.args:
                return _column_like(bound.args[0].value, any_range=False)
            if isinstance(bound, cst.Subscript) and last_name(bound.value) == "shape":
                index = bound.slice[0].slice if bound.slice else None
                return isinstance(index, cst.Index) and isinstance(index.value, cst.Integer) \
                    and index.value.value == "1"
            return _column_like(bound, any_range=False)
        return False
    name = last_name(expr)
    if name is None:
        return False
    pieces = words(name)
    if pieces & _PREDICTION_WORDS:
        return True  # ``for p in test_preds``: each prediction reads the whole training set
    hits = pieces & _COLUMN_WORDS
    # ``login_timestamps_numerical``: a list of one value per record (a pass per record is parallel composition)
    return bool(hits) and not (hits <= _QUALIFIER_WORDS and pieces & _VALUE_WORDS)


#: a callee that reads ε to post-process reports (de-bias an estimate, compute a variance), not to release
_POST_WORDS = frozenset({
    "aggregator", "aggregate", "aggregation", "estimate", "estimator", "estimation", "est", "decode", "debias",
    "unbias", "unbiased", "frequency", "freq", "analyze", "analyse", "attack", "eval", "evaluate", "variance",
    "var", "utility", "loss", "accuracy", "error", "mse", "plot", "print", "log", "test",
})


def _mech_call(call: cst.Call) -> bool:
    name = call_name(call)
    pieces = words(name)
    if pieces & _POST_WORDS:
        return False
    return bool(pieces & _MECH_WORDS) or "exp_mech" in name.lower()


def _select_call(call: cst.Call) -> bool:
    name = call_name(call)
    return bool(words(name) & _SELECT_WORDS) or "exp_mech" in name.lower() or "noisy_max" in name.lower()


def _eps_arg(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.star:
            continue
        if arg.keyword is not None and not (_EPS.fullmatch(arg.keyword.value) or
                                            words(arg.keyword.value) & {"eps", "epsilon", "budget"}):
            continue
        if _full_eps(arg.value):
            return arg.value
    return None


def _counts_passes(expr: cst.BaseExpression) -> bool:
    """A numerator that multiplies by the number of passes (``X.shape[1] / epsilon``, ``len(cols) / eps``,
    ``d / epsilon``): the budget is split over them."""
    for sub in walk(expr):
        if isinstance(sub, cst.Call) and call_name(sub) == "len":
            return True
        if isinstance(sub, cst.Attribute) and sub.attr.value == "shape":
            return True
        if isinstance(sub, cst.Name) and (sub.value in ("d", "k", "n", "m") or words(sub.value) & {
                "dim", "dims", "num", "features", "feature", "cols", "columns", "count", "size", "passes"}):
            return True
    return False


def _draw_eps(call: cst.Call) -> cst.BaseExpression | None:
    """``laplace(0, sens / epsilon)``: a draw whose scale divides by the full ε."""
    if call_name(call) not in PURE_DRAWS:
        return None
    for arg in call.args:
        for sub in walk(arg.value):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) \
                    and _full_eps(sub.right):
                return sub.right
    return None


class BudgetPerItem(Rule):
    id = "DP510"
    name = "budget-per-item"
    category = "general"
    severity = "error"
    summary = ("a mechanism given the whole ε inside a loop over columns, coordinates, a model's predictions or "
               "repeated selections: "
               "d releases of the same records cost d·ε")
    rationale = (
        "Sequential composition: releasing d noisy answers about the same records costs the sum of "
        "their budgets. A loop over the columns, attributes, coordinates or marginals of one data "
        "set (`for col in df.columns: out[col] = laplace_perturb(df[col], epsilon)`, "
        "`{c: ECDF(x[c], mech) for c in cols}` with `mech = Laplace(epsilon=epsilon)`, "
        "`np.random.laplace(0, 1 / epsilon)` per coordinate; the predictions of one trained model, each released on "
        "its own: `for p in test_preds: BoundedMean(epsilon=epsilon, …).quick_result([p])`, since every prediction "
        "reads all the training records; a Kronecker-product randomized response over a cluster whose per-attribute "
        "matrices each use the whole cluster budget (`for attr in group: keep = exp(eps) / (exp(eps) + k - 1)`, then "
        "`randomize_response(group, data, kron(…))`; good: `eps = budget / len(group)`); vectorised: `idx = rng.choice(d, size=k, "
        "replace=False)` then each chosen coordinate randomised with `exp(eps)`), or a loop that repeats an exponential-"
        "mechanism selection (`for i in range(k): exp_mech(scores, epsilon)`), spends the full ε on "
        "each pass, so the release is d·ε-DP (k·ε for k selections) while it is labelled ε. "
        "Not reported: a noise level from a calibrator told the number of passes (`sigma = gauss_zcdp(eps, delta, sens, len(marginals))`), a list of one value per record (`[laplace(t, eps) for t in timestamps_numerical]`: parallel composition), an ε split before the loop (`eps = epsilon / len(cols)`) or named as a share "
        "(`eps_per_col`, `epsilon_round`), a loop body that charges an accountant or a budget "
        "(`spent += eps`, `accountant.spend(eps)`), a noisy loop that stops at the first answer above "
        "a threshold (the sparse vector technique), loops over records, users, clients, batches or "
        "bins (disjoint data: parallel composition), repetitions (`range(1000)`, `range(n_trials)`) and "
        "test functions/modules that sample a mechanism to check it, callees named for post-processing (an "
        "aggregator or estimator that reads ε to de-bias reports), code with no DP context. "
        "Fix: give each pass ε/d (ε/k for selections), or charge an accountant per pass and report "
        "the composed ε."
    )
    TRIGGERS = ("eps",)

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """An ε word and a ``for`` (a loop or a comprehension) or a ``choice(`` (k coordinates drawn)."""
        return "eps" in source and ("for " in source or "choice(" in source)
    #: an ``epsilon`` given to a mechanism-named callee in such a loop is DP evidence of its own; a bare
    #: ``eps`` (often a stability constant) needs the scope's DP context (checked in ``visit_Call``)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is, in a loop over columns (or a ``range``), a draw dividing by the full ε, a mechanism
        given it, or a call given a mechanism built with it; or a ``.choice(…, size=k)`` beside ``exp(ε)``."""
        from dpcheck.analysis.astshapes import budget_per_item

        def mechanism(name: str) -> bool:  # ``_mech_call`` on the called name
            pieces = words(name)
            return not pieces & _POST_WORDS and (bool(pieces & _MECH_WORDS) or "exp_mech" in name.lower())

        if budget_per_item(facts, eps_name=_eps_name, mechanism=mechanism, draws=PURE_DRAWS,
                           column=_COLUMN_WORDS, repeat=_REPEAT_WORDS, through=_PASS_THROUGH):
            return True
        # a DP library release built with ``epsilon=`` in a loop over a model's predictions
        if "for " in facts.source and facts.called & _LIBRARY_RELEASES \
                and any(words(n) & _PREDICTION_WORDS for n in re.findall(r"\bin\s+([\w.]+)", facts.source)):
            return True
        # ``exp(eps)`` in a loop: a randomized response per attribute (``_exp_per_attribute``)
        if "for " in facts.source and re.search(r"exp(m1)?\(\s*(self\.)?(eps|epsilon)\d*\s*\)", facts.source):
            return True
        # a draw whose scale parameter a caller sets to ``k / epsilon`` (``_scale_param_from_eps``)
        return bool(facts.called & PURE_DRAWS) and "for " in facts.source \
            and re.search(r"/\s*\(?(self\.)?(eps|epsilon)\b", facts.source) is not None

    VALID = (
        # (h47-91) each pass perturbs a different location (one point per record) once: per-location geo-ind
        """
import numpy as np
def planar_noise(lon, lat, epsilon):
    r = np.random.gamma(2, 1.0 / epsilon)
    t = np.random.uniform(0, 2 * np.pi)
    return lon + r * np.cos(t), lat + r * np.sin(t)
def mask_points(coordinates, epsilon):
    out = []
    for lon, lat in coordinates:
        out.append(planar_noise(lon, lat, epsilon))
    return out
def mask_visits(coords, epsilon):
    return [planar_noise(point[0], point[1], epsilon) for point in coords]
""",
        # ordinary ML: a per-feature standardisation constant, not a budget
        """
import numpy as np
def scale_coords(coords, eps=1e-8):
    return [(c - np.mean(c)) / (np.std(c) + eps) for c in coords]
""",
        # (h44b-2) twin: the cluster budget divided over its attributes before the Kronecker-product response
        """
import numpy as np
class ClusterRR:
    def perturb(self, data, clusters, ratios, domains):
        for k, group in enumerate(clusters):
            e_k = self.epsilon * ratios[k]
            mats = {}
            for attr in group:
                eps = e_k / len(group)
                keep = np.exp(eps) / (np.exp(eps) + len(domains[attr]) - 1)
                mats[attr] = self.matrix(domains[attr], keep)
            joint = mats[group[0]]
            for attr in group[1:]:
                joint = np.kron(joint, mats[attr])
            data = self.randomize_response(group, data, joint)
        return data
""",
        # a server rebuilding the clients' matrices to de-bias their reports (post-processing): the response it
        # applies uses an estimate derived from them
        """
import numpy as np
class Server:
    def invariant(self, reports, clusters, domains):
        for group in clusters:
            mats = {}
            for attr in group:
                eps = self.epsilon
                keep = np.exp(eps) / (np.exp(eps) + len(domains[attr]) - 1)
                mats[attr] = self.matrix(domains[attr], keep)
            joint = mats[group[0]]
            pi = self.estimate_distribution(reports, joint)
            reports = self.randomize_response(group, reports, self.q_bar(pi, joint))
        return reports
""",
        # twins: the budget split over the predictions released, or one vector release
        """
import numpy as np
from pydp.algorithms.laplacian import BoundedMean
def publish_predictions(model, X_test, epsilon):
    test_preds = np.clip((model.predict_proba(X_test)[:, 1] * 100).astype(int), 0, 100)
    eps_each = epsilon / len(test_preds)
    released = []
    for p in test_preds:
        m = BoundedMean(epsilon=eps_each, lower_bound=0, upper_bound=100)
        released.append(m.quick_result([int(p)]))
    return np.array(released) / 100.0
""",
        """
import numpy as np
def noisy_logits(logits, epsilon, sensitivity):
    return np.asarray(logits) + np.random.laplace(0, len(logits) * sensitivity / epsilon, len(logits))
""",
        # ordinary ML: a stability eps in a loop over predicted probabilities
        """
import numpy as np
def log_loss(probs, labels, eps=1e-12):
    return -sum(np.log(p + eps) if y else np.log(1 - p + eps) for p, y in zip(probs, labels))
""",
        # twin of the inline GRR: the user's budget divided over the attributes first
        """
import numpy as np
class Reporter:
    def __init__(self, epsilon, attributes_domain):
        self.epsilon = epsilon
        self.attributes_domain = attributes_domain
    def report(self, record):
        out = []
        eps = self.epsilon / len(self.attributes_domain)
        for attr in self.attributes_domain.keys():
            domain = self.attributes_domain[attr]
            p = np.exp(eps) / (np.exp(eps) + len(domain) - 1)
            q = (1 - p) / (len(domain) - 1)
            probs = [p if v == record[attr] else q for v in domain]
            out.append(np.random.choice(domain, p=probs))
        return out
""",
        # ordinary ML: a smoothing eps exponentiated per feature column, nothing randomised
        """
import numpy as np
def log_ratio(X, columns, eps=1e-6):
    out = {}
    for col in columns:
        out[col] = np.log(X[col] + np.exp(eps))
    return out
""",
        # the noise level comes from a calibrator told how many tables share the budget (it composes them)
        """
import numpy as np
def release_tables(marginal_sets, epsilon, delta, sens):
    for key, marginals in marginal_sets.items():
        sigma = zcdp_gaussian_sigma(epsilon, delta, sens, len(marginals))
        for name, table in marginals.items():
            table += np.random.normal(scale=sigma, size=table.shape)
    return marginal_sets
""",
        # one noisy value per record (a list of each record's own number): parallel composition, not d·ε
        """
import numpy as np
def add_laplace(value, epsilon, sensitivity=1.0):
    return value + np.random.laplace(0, sensitivity / epsilon)
def jitter_visits(visits, epsilon):
    visit_times_numeric = [v.timestamp() for v in visits]
    return [add_laplace(t, epsilon) for t in visit_times_numeric]
""",
        # ordinary ML: a stability eps given to a normaliser once per feature column
        """
import numpy as np
def standardise(X, columns, eps=1e-8):
    return {c: (X[c] - X[c].mean()) / (X[c].std() + eps) for c in columns}
""",
        # one selection per pass over the next disjoint batch of users (parallel composition)
        """
def latent_counts(generator, model, eps=1.0):
    counts = {}
    n_batch = generator.size // generator.batch_size
    for _ in range(n_batch):
        x = generator.next_batch()
        for c in exponential_mechanism(model(x), eps):
            counts[c] = counts.get(c, 0) + 1
    return counts
""",
        # the instance's ε is already the per-feature share: the estimator built the binner with ε / d
        """
import numpy as np
class Binner:
    def __init__(self, n_bins, epsilon=1.0):
        self.n_bins = n_bins
        self.epsilon = epsilon
    def fit(self, X):
        self.edges_ = []
        for feature in range(X.shape[1]):
            self.edges_.append(private_quantiles(np.sort(X[:, feature]), self.n_bins, eps=self.epsilon))
        return self
class Tree:
    def fit(self, X, y):
        self.binner_ = Binner(self.n_bins, epsilon=self.quantile_epsilon / X.shape[1])
        return self.binner_.fit(X)
""",
        # one exponential-mechanism draw whose utility loops over the queries; the lambda's ``y`` is
        # its own parameter, not the draw assigned below
        """
import numpy as np
def small_db(db, queries, candidates, epsilon):
    utility = lambda x, y: -max(abs(score(q, x) - score(q, y)) for q in queries)
    y = exponential_mechanism(db, candidates, utility, epsilon)
    return y
""",
        # the functional mechanism: every coefficient gets Laplace(Δ/ε) with Δ the L1 sensitivity of all d of them
        """
def perturb_coefficients(coefs, d, epsilon, make_mechanism):
    total_sensitivity = 2 * (1 + d) ** 2
    out = [0.0] * d
    for j in range(d):
        mech = make_mechanism(epsilon=epsilon, sensitivity=total_sensitivity)
        out[j] = mech.randomise(coefs[j])
    return out
""",
        # one user's one-hot vector perturbed coordinate-wise with its L1 sensitivity 2 (SHE): one release
        """
import numpy as np
def she_perturb(v, epsilon):
    for i in range(len(v)):
        v[i] = v[i] + np.random.laplace(0, 2 / epsilon)
    return v
""",
        # the budget split over the columns before the loop
        """
import numpy as np
def perturb_columns(df, epsilon, sensitivity):
    eps = epsilon / len(df.columns)
    for col in df.columns:
        df[col] = df[col] + np.random.laplace(0, sensitivity / eps, len(df))
    return df
""",
        # a share named as such
        """
def release(data, cols, eps_per_col):
    return {col: laplace_mechanism(data[col].sum(), eps_per_col) for col in cols}
""",
        # one mechanism per user: disjoint records (parallel composition)
        """
def collect(users, epsilon):
    return [randomized_response(u.answer, epsilon) for u in users]
""",
        # each selection charged to an accountant
        """
def select_marginals(scores, k, epsilon, accountant):
    chosen = []
    for i in range(k):
        chosen.append(exponential_mechanism(scores, epsilon))
        accountant.spend(epsilon, 0)
    return chosen
""",
        # k selections with ε/k each
        """
def select(scores, k, epsilon):
    eps = epsilon / k
    return [exponential_mechanism(scores, eps) for _ in range(k)]
""",
        # above-threshold (sparse vector): noise per query, one answer paid for
        """
import numpy as np
def above_threshold(queries, df, T, epsilon):
    T_hat = T + np.random.laplace(0, 2 / epsilon)
    for i, q in enumerate(queries):
        if q(df) + np.random.laplace(0, 4 / epsilon) >= T_hat:
            return i
    return None
""",
        # an LDP aggregator reads ε to de-bias each attribute's reports: post-processing
        """
def smp_aggregator(reports, lst_k, d, epsilon):
    return [GRR_Aggregator_MI(reports[idx], lst_k[idx], epsilon) for idx in range(d)]
""",
        # a test samples the selection many times to check its distribution
        """
def check_distribution(scores, epsilon, n_trials):
    picks = [exponential_mechanism(scores, epsilon) for _ in range(n_trials)]
    return picks.count(0) / n_trials
""",
        # k coordinates sampled, each perturbed with eps / k
        """
import numpy as np
def encode(x, epsilon, k, rng):
    idx = rng.choice(len(x), size=k, replace=False)
    eps = epsilon / k
    p = np.exp(eps) / (np.exp(eps) + 1)
    return idx, np.where(rng.random(k) < p, x[idx], -x[idx])
""",
        # a loss margin, no mechanism
        """
import torch
def hinge(features, targets, epsilon):
    for f in features:
        f.loss = torch.clamp(epsilon - targets * f.score, min=0)
""",
        # repeated independent simulations: every pass perturbs fresh reports, then averages the error
        """
def simulate(epsilon, exper_time):
    errors = []
    for i in range(exper_time):
        reports, truth = generate_noised_data(epsilon)
        est = olh_EM(reports, epsilon)
        errors.append(((est - truth) ** 2).mean())
    return sum(errors) / exper_time
""",
        # twin: the caller splits the budget over the columns first
        """
import numpy as np
class Perturb:
    @staticmethod
    def noisy_columns(X, scale_factor, bounds):
        out = X.copy()
        for j in range(X.shape[1]):
            width = bounds[j][1] - bounds[j][0]
            out[:, j] += np.random.laplace(0, scale_factor * width, size=X.shape[0])
        return out
def train(X, epsilon, bounds):
    scale_factor = X.shape[1] / epsilon
    return Perturb.noisy_columns(X, scale_factor, bounds)
""",
        # a scale parameter the caller does not derive from the budget (augmentation noise level)
        """
import numpy as np
def jitter_columns(X, sigma):
    out = X.copy()
    for j in range(X.shape[1]):
        out[:, j] += np.random.normal(0, sigma, size=X.shape[0])
    return out
def augment(X, epsilon):
    return jitter_columns(X, 0.1)
""",
    )

    INVALID = (
        # (h47-91) twin: every coordinate of one user's vector perturbed at the whole budget
        """
import numpy as np
def perturb_vector(coords, epsilon, sensitivity):
    out = []
    for c in coords:
        out.append(c + np.random.laplace(0, sensitivity / epsilon))  # <-
    return out
""",
        # (h44b-2) a cluster's perturbation matrices, each attribute at the whole cluster budget, applied as one
        # Kronecker-product randomized response
        """
import numpy as np
class ClusterRR:
    def perturb(self, data, clusters, ratios, domains):
        for k, group in enumerate(clusters):
            e_k = self.epsilon * ratios[k]
            mats = {}
            for attr in group:
                eps = e_k
                keep = np.exp(eps) / (np.exp(eps) + len(domains[attr]) - 1)  # <-
                mats[attr] = self.matrix(domains[attr], keep)
            joint = mats[group[0]]
            for attr in group[1:]:
                joint = np.kron(joint, mats[attr])
            data = self.randomize_response(group, data, joint)
        return data
""",
        # every test prediction of one trained model gets its own library release at the whole ε
        """
import numpy as np
from pydp.algorithms.laplacian import BoundedMean
def publish_predictions(model, X_test, epsilon):
    test_preds = np.clip((model.predict_proba(X_test)[:, 1] * 100).astype(int), 0, 100)
    released = []
    for p in test_preds:
        m = BoundedMean(epsilon=epsilon, lower_bound=0, upper_bound=100)  # <-
        released.append(m.quick_result([int(p)]))
    return np.array(released) / 100.0
""",
        # the same with hand-drawn Laplace noise on each logit
        """
import numpy as np
def noisy_logits(logits, epsilon, sensitivity):
    return [z + np.random.laplace(0, sensitivity / epsilon) for z in logits]  # <-
""",
        # twin: generalized randomized response inline, each attribute of the same user at the whole ε
        """
import numpy as np
class Reporter:
    def __init__(self, epsilon, attributes_domain):
        self.epsilon = epsilon
        self.attributes_domain = attributes_domain
    def report(self, record):
        out = []
        eps = self.epsilon
        for attr in self.attributes_domain.keys():
            domain = self.attributes_domain[attr]
            p = np.exp(eps) / (np.exp(eps) + len(domain) - 1)  # <-
            q = (1 - p) / (len(domain) - 1)
            probs = [p if v == record[attr] else q for v in domain]
            out.append(np.random.choice(domain, p=probs))
        return out
""",
        # binary randomized response with a coin per column of one row
        """
import math
import random
def randomize_row(row, columns, epsilon):
    noisy = {}
    for col in columns:
        keep = math.exp(epsilon) / (1 + math.exp(epsilon))  # <-
        noisy[col] = row[col] if random.random() < keep else 1 - row[col]
    return noisy
""",
        # twin of the calibrator case: sigma for one release, then spent again on every marginal
        """
import numpy as np
def release_tables(marginals, epsilon, delta, sens):
    sigma = gaussian_sigma(epsilon, delta, sens)
    for name, table in marginals.items():
        table += np.random.normal(scale=sigma, size=table.shape)  # <-
    return marginals
""",
        # twin of the per-record case: the numeric columns of the same records each get the whole ε
        """
import numpy as np
def add_laplace(value, epsilon, sensitivity=1.0):
    return value + np.random.laplace(0, sensitivity / epsilon)
def jitter_columns(df, epsilon):
    numeric_cols = [c for c in df.columns if df[c].dtype.kind == "f"]
    return {c: add_laplace(df[c].sum(), epsilon) for c in numeric_cols}  # <-
""",
        # the twin: the same records selected from once per feature
        """
def latent_counts(x, model, eps=1.0):
    counts = {}
    n_features = x.shape[1]
    for j in range(n_features):
        for c in exponential_mechanism(model(x[:, j]), eps):  # <-
            counts[c] = counts.get(c, 0) + 1
    return counts
""",
        # twin: the estimator hands the binner its whole ε, spent again on every feature
        """
import numpy as np
class Binner:
    def __init__(self, n_bins, epsilon=1.0):
        self.n_bins = n_bins
        self.epsilon = epsilon
    def fit(self, X):
        self.edges_ = []
        for feature in range(X.shape[1]):
            self.edges_.append(private_quantiles(np.sort(X[:, feature]), self.n_bins, eps=self.epsilon))  # <-
        return self
class Tree:
    def fit(self, X, y):
        self.binner_ = Binner(self.n_bins, epsilon=self.quantile_epsilon)
        return self.binner_.fit(X)
""",
        # a mechanism built with the whole ε, then applied once per column
        """
def release_columns(data, columns, epsilon):
    mech = LaplaceMechanism(epsilon=epsilon, sensitivity=1.0)
    return {c: apply(mech, data[c]) for c in columns}  # <-
""",
        # the same estimator run once per column of one table, with the whole ε each time
        """
def estimate_columns(reports, epsilon, columns):
    estimates = []
    for col in columns:
        estimates.append(olh_EM(reports[col], epsilon))  # <-
    return estimates
""",
        # twin: one noisy mean per column of the data set, each with the whole ε
        """
import numpy as np
def column_means(X, epsilon):
    out = np.zeros(X.shape[1])
    for i in range(X.shape[1]):
        out[i] = X[:, i].mean() + np.random.laplace(0, 2 / epsilon)  # <-
    return out
""",
        # local-differential-privacy harmony.py: k coordinates sampled, each perturbed with the whole eps
        """
import numpy as np
class HarmonyLDP:
    def encode(self, data, eps=None):
        if eps is None:
            eps = self.eps
        x = np.clip(data.reshape(1, -1), -1, 1)
        idx = self.random_.choice(np.arange(x.shape[1]), size=(1, self.k), replace=False).T  # <-
        prob = (x[0, idx] * (np.exp(eps) - 1) + np.exp(eps) + 1) / 2 / (np.exp(eps) + 1)
        return np.where(self.random_.binomial(1, np.clip(prob, 0, 1)) == 1, 1.0, -1.0)
""",
        # ReverendBayes LDP-SynthData: every column of a record perturbed with the full ε
        """
import numpy as np
def laplace_perturb(column, epsilon):
    return column + np.random.laplace(0, 1.0 / epsilon, len(column))
def generate_synthetic(df, epsilon, mechanism):
    synth = df.copy()
    for col in df.columns:
        if mechanism == 'laplace':
            synth[col] = laplace_perturb(df[col], epsilon)  # <-
        else:
            synth[col] = randomized_response(df[col], epsilon)  # <-
    return synth
""",
        # copula-shirley: one mechanism with the whole ε applied to every column's ECDF
        """
def get_ecdfs(samples, epsilon, sensitivity=2):
    dp_mech = LaplaceTruncated(epsilon=epsilon, sensitivity=sensitivity, lower=0, upper=len(samples))
    return {col: ECDF(samples[col], dp_mech) for col in samples.columns}  # <-
""",
        # FAPrivBayes FirstNode.py: k exponential-mechanism selections, each with the whole epsilon1
        """
def select_first_nodes(scores, epsilon1, n, attrs):
    chosen = []
    for k in range(len(scores)):
        index = exponentSelect(attrs, scores, epsilon1, n)  # <-
        scores[index] = 0
        chosen.append(index)
    return chosen
""",
        # a draw per coordinate with the full ε
        """
import numpy as np
def privatize(x, epsilon, bound):
    out = np.empty(x.shape[1])
    for j in range(x.shape[1]):
        out[j] = x[:, j].mean() + np.random.laplace(0, bound / epsilon)  # <-
    return out
""",
        """
def measure(data, marginals, epsilon):
    return [gaussian_mechanism(data.project(m).datavector(), epsilon=epsilon) for m in marginals]  # <-
""",
        # the scale is a parameter every caller sets to k / epsilon: each column gets the full budget
        """
import numpy as np
class Perturb:
    @staticmethod
    def noisy_columns(X, scale_factor, bounds):
        out = X.copy()
        for j in range(X.shape[1]):
            width = bounds[j][1] - bounds[j][0]
            out[:, j] += np.random.laplace(0, scale_factor * width, size=X.shape[0])  # <-
        return out
def train(X, epsilon, bounds):
    scale_factor = 1.0 / epsilon
    return Perturb.noisy_columns(X, scale_factor, bounds)
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) == "choice":
            self._k_coordinates(node)
            return
        if call_name(node) in ("exp", "expm1"):
            self._exp_per_attribute(node)
            return
        eps = _draw_eps(node)
        selection = False
        if eps is None and (_mech_call(node) or call_name(node) in _LIBRARY_RELEASES
                            and any(a.keyword is not None and a.keyword.value == "epsilon" for a in node.args)):
            eps = _eps_arg(node)
            selection = _select_call(node)
        if eps is None:
            eps = self._bound_mechanism(node)
        if eps is None:
            eps = self._scale_param_from_eps(node)
        if eps is None:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is not None and fn.name.value.startswith("test") or self._test_file():
            return
        loops = fa.enclosing_loops(node, comprehensions=True)
        loop = next((lp for lp in loops if (it := loop_iter(lp)) is not None
                     and _column_like(it, any_range=selection)
                     and not _location_target(lp.target if isinstance(lp, cst.For)
                                              else getattr(getattr(lp, "for_in", None), "target", cst.Name("_")))),
                    None)
        if loop is None or not selection and self._stops_early(loop):
            return
        if self._charged(loop) or self._split(node, eps) or self._count_given(node):
            return
        if not selection and (self._one_vector(node, loop, eps) or self._vector_sensitivity(node, loops)):
            return
        if words(last_name(eps) or "") <= {"eps", "self"} and not fa.in_dp_context(node):
            return
        what = "selection" if selection else "release"
        self.report(node, f"`{fa.code(eps).strip()}` is the whole budget, spent again on every pass of the loop over "
                          f"`{fa.code(loop_iter(loop)).strip()}`: each {what} of the same records costs it, so d "
                          f"passes cost d·ε; split it (ε/d per pass) or charge an accountant per pass")

    def _scale_param_from_eps(self, call: cst.Call) -> cst.BaseExpression | None:
        """``laplace(0, noise_multiplier * sens, ...)`` where ``noise_multiplier`` is a parameter and every call of
        the function in the module passes a value set to ``k / epsilon`` (``noise_multiplier = 2.0 / epsilon``):
        the draw's scale divides by the full ε one call away."""
        if call_name(call) not in PURE_DRAWS:
            return None
        fa = self.ctx.analysis
        fn = fa.enclosing_function(call)
        if fn is None:
            return None
        params = [p.name.value for p in fn.params.params]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        for arg in call.args[1:] if len(call.args) > 1 else ():
            for sub in walk(arg.value):
                if not (isinstance(sub, cst.Name) and sub.value in params):
                    continue
                binding = fa.binding(sub)
                if binding is None or binding.kind != "param":
                    continue
                eps = self._passed_eps(fn, params.index(sub.value), sub.value)
                if eps is not None:
                    return eps
        return None

    def _passed_eps(self, fn: cst.FunctionDef, index: int, param: str) -> cst.BaseExpression | None:
        fa = self.ctx.analysis
        found: cst.BaseExpression | None = None
        for other in fa.nodes(cst.Call):
            if call_name(other) != fn.name.value:
                continue
            positional = [a for a in other.args if a.keyword is None and not a.star]
            passed = next((a.value for a in other.args if a.keyword is not None and a.keyword.value == param),
                          positional[index].value if index < len(positional) else None)
            if passed is None:
                return None
            value = passed
            if isinstance(value, cst.Name):
                binding = fa.binding(value)
                value = binding.value if binding is not None and binding.kind == "assign" else None
            eps = next((sub.right for sub in walk(value) if isinstance(sub, cst.BinaryOperation)
                        and isinstance(sub.operator, cst.Divide) and _full_eps(sub.right)
                        and not _counts_passes(sub.left)), None) if value is not None else None
            if eps is None:
                return None
            found = eps
        return found

    def _vector_sensitivity(self, call: cst.Call, loops: list[cst.CSTNode]) -> bool:
        """The mechanism's sensitivity grows with the number of passes (``sens = 2 * (1 + d) ** 2`` for a loop
        over ``range(d)``): it is the L1 sensitivity of the whole vector, so the whole ε per coordinate is one
        vector-valued release (the functional mechanism), not d releases."""
        fa = self.ctx.analysis
        counts: set[str] = set()
        targets: set[str] = set()
        for loop in loops:
            it = loop_iter(loop)
            if it is not None:
                counts |= {n.value for n in walk(it) if isinstance(n, cst.Name)} - {"range", "len", "enumerate", "zip"}
            if isinstance(loop, cst.For):
                targets |= {n.value for n in walk(loop.target) if isinstance(n, cst.Name)}
        counts -= targets
        for arg in call.args:
            if arg.keyword is None or not words(arg.keyword.value) & {"sensitivity", "sens", "l1", "delta"}:
                continue
            value = fa.value_of(arg.value) if isinstance(arg.value, cst.Name) else arg.value
            if value is not None and {n.value for n in walk(value) if isinstance(n, cst.Name)} & counts:
                return True
        return False

    def _one_vector(self, draw: cst.Call, loop: cst.CSTNode, eps: cst.BaseExpression) -> bool:
        """``v[i] = v[i] + laplace(2 / eps)`` over ``i``: each coordinate of one vector (a user's one-hot
        encoding) perturbed with the vector's own L1 sensitivity (a constant ≥ 2) over ε — one vector-valued
        Laplace release, not d releases."""
        fa = self.ctx.analysis
        scale = fa.parent(eps)
        if not (isinstance(scale, cst.BinaryOperation) and isinstance(scale.operator, cst.Divide)
                and (number(scale.left) or 0) >= 2):
            return False
        statement = fa.enclosing_statement(draw)
        targets: list[cst.BaseExpression] = []
        if isinstance(statement, cst.Assign):
            targets = [t.target for t in statement.targets]
        elif isinstance(statement, cst.AugAssign):
            targets = [statement.target]
        loop_names = {n.value for n in walk(loop.target) if isinstance(n, cst.Name)} \
            if isinstance(loop, cst.For) else set()
        code = fa.code

        def coordinate(t: cst.BaseExpression) -> bool:
            return isinstance(t, cst.Subscript) and len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index) \
                and isinstance(t.slice[0].slice.value, cst.Name) and t.slice[0].slice.value.value in loop_names

        if isinstance(statement, cst.AugAssign):
            return coordinate(statement.target)
        # ``v[i] = v[i] + noise``: the coordinate itself is what is perturbed (not ``out[i] = X[:, i].mean() + …``)
        return isinstance(statement, cst.Assign) and any(
            coordinate(t) and any(isinstance(n, cst.Subscript) and code(n).strip() == code(t).strip()
                                  for n in walk(statement.value)) for t in targets)

    def _k_coordinates(self, choice: cst.Call) -> None:
        """``idx = rng.choice(d, size=k, replace=False)`` then every chosen coordinate randomised with
        ``exp(eps)``: the vectorised spelling of k passes, each with the whole ε."""
        size = next((a.value for a in choice.args if a.keyword is not None and a.keyword.value == "size"), None)
        replace = next((a.value for a in choice.args if a.keyword is not None and a.keyword.value == "replace"), None)
        if size is None or not (isinstance(replace, cst.Name) and replace.value == "False"):
            return
        ks = [n for n in walk(size) if isinstance(n, (cst.Name, cst.Attribute)) and last_name(n) in ("k", "n_coords",
                                                                                                     "num_coords")]
        if not ks:
            return
        k = last_name(ks[0])
        fa = self.ctx.analysis
        fn = fa.enclosing_function(choice)
        if fn is None:
            return
        eps: cst.BaseExpression | None = None
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) \
                    and last_name(sub.right) == k:
                return  # something is shared out over the k coordinates
            if eps is None and isinstance(sub, cst.Call) and call_name(sub) in ("exp", "expm1") and sub.args \
                    and _full_eps(sub.args[0].value):
                eps = sub.args[0].value
        if eps is None or self._split(choice, eps):
            return
        # exp(ε) and a coin (a randomized response) are DP evidence of their own; else the scope's context
        coin = any(isinstance(n, cst.Call) and call_name(n) in ("binomial", "bernoulli", "rand", "random", "uniform")
                   for n in walk(fn, into_scopes=False))
        if not coin and not fa.in_dp_context(choice):
            return
        self.report(choice, f"`{fa.code(choice).strip()[:60]}` picks `{k}` coordinates of the same user and each is "
                            f"randomised with `exp({fa.code(eps).strip()})`, the whole budget: the report costs "
                            f"{k}·ε; randomise each with ε/{k}")

    def _exp_per_attribute(self, call: cst.Call) -> None:
        """``for a in self.attributes_domain: p = exp(eps) / (exp(eps) + k - 1)`` then a randomized response on
        that attribute: generalized randomized response spelled inline, each attribute of the same user at the
        whole ε."""
        if not call.args or not _full_eps(call.args[0].value):
            return
        eps = call.args[0].value
        fa = self.ctx.analysis
        fn = fa.enclosing_function(call)
        if fn is not None and fn.name.value.startswith("test") or self._test_file():
            return
        loops = fa.enclosing_loops(call, comprehensions=False)
        loop = next((lp for lp in loops if isinstance(lp, cst.For) and (it := loop_iter(lp)) is not None
                     and (_column_like(it, any_range=False) or _attribute_target(lp.target))), None)
        if loop is None or self._stops_early(loop) or self._charged(loop) or self._split(call, eps):
            return

        def randomises(scope: cst.CSTNode) -> bool:
            return any(isinstance(sub, cst.Call) and (
                words(call_name(sub)) & {"randomize", "randomise", "response", "rr", "grr", "perturb", "privatize"}
                or call_name(sub) in ("choice", "binomial", "rand", "random", "uniform", "bernoulli"))
                for sub in walk(scope))
        # the same pass randomises a value (a coin, a draw from the perturbed distribution, an RR helper); or
        # (h44b-2) the pass builds each attribute's perturbation matrix from ``exp(eps)`` and one randomized
        # response after the loop applies their product (a Kronecker-product GRR over a cluster of attributes)
        block = fa.parent(loop)
        if not randomises(loop.body) and not (isinstance(block, (cst.IndentedBlock, cst.Module))
                                              and self._applies_loop_matrices(loop, block)):
            return
        # ``exp(eps)`` inside an earlier ``if`` of this function's own one-attribute loop is the same; a line
        # reached once per function is reported once
        if words(last_name(eps) or "") <= {"eps", "self"} and not fa.in_dp_context(call):
            return
        done: set[int] = self.__dict__.setdefault("_exp_loops", set())
        if id(loop) in done:
            return
        done.add(id(loop))
        self.report(call, f"`exp({fa.code(eps).strip()})` sets a randomized response with the whole budget on every "
                          f"pass of the loop over `{fa.code(loop_iter(loop)).strip()}`: each attribute of the same "
                          "user is randomised at ε, so the report costs d·ε; randomise each with ε/d")

    @staticmethod
    def _applies_loop_matrices(loop: cst.For, block: cst.CSTNode) -> bool:
        """A randomized response after ``loop`` applies what the loop built per attribute (``Q[atr] = …`` in the
        loop, ``Compound_Q = np.kron(Compound_Q, Q[atr])`` after it, ``grr(cl, data, Compound_Q)``) directly or
        through Kronecker/matrix products only: not an estimate computed from it (a server de-biasing reports)."""
        built: set[str] = set()
        for sub in walk(loop.body):
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name):
                        built.add(t.target.value.value)
            elif isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and sub.func.attr.value in ("update", "append", "__setitem__") \
                    and isinstance(sub.func.value, cst.Name):
                built.add(sub.func.value.value)
        if not built:
            return False
        plain = {"kron", "dot", "matmul", "get", "copy", "outer", "array", "asarray"}
        for _ in range(3):
            for sub in walk(block):
                if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                        and all(call_name(c) in plain for c in walk(sub.value) if isinstance(c, cst.Call)) \
                        and any(isinstance(n, cst.Name) and n.value in built for n in walk(sub.value)):
                    built.add(sub.targets[0].target.value)
        for sub in walk(block):
            if isinstance(sub, cst.Call) and words(call_name(sub)) & {"randomize", "randomise", "response", "rr",
                                                                      "grr", "perturb", "privatize"} \
                    and any(isinstance(a.value, cst.Name) and a.value.value in built for a in sub.args):
                return True
        return False

    # -- helpers ---------------------------------------------------------------------------------
    def _bound_mechanism(self, call: cst.Call) -> cst.BaseExpression | None:
        """An argument bound in the same function to a mechanism built with the full ε."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(call)
        if fn is None:
            return None
        names = {last_name(a.value) for a in call.args if isinstance(a.value, cst.Name)}
        names.discard(None)
        # a lambda's own parameter (``lambda x, y: q.value(y)``) is not the function's later ``y``
        for anc in fa.ancestors(call):
            if isinstance(anc, cst.Lambda):
                names -= {p.name.value for p in anc.params.params}
            if anc is fn:
                break
        if not names:
            return None
        loops = fa.enclosing_loops(call, comprehensions=False)
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and sub.targets[0].target.value in names and isinstance(sub.value, cst.Call) \
                    and _mech_call(sub.value) and not fa.inside(call, sub) \
                    and (fa.line_of(sub) < fa.line_of(call) or any(fa.inside(sub, lp) for lp in loops)):
                # ``sigma = gauss_zcdp(eps, delta, sens, len(marginals))``: the builder is told the number of
                # passes and calibrates for their composition (the budget is split there, not spent per pass)
                if self._count_given(sub.value):
                    continue
                eps = _eps_arg(sub.value)
                if eps is not None:
                    return eps
        return None

    def _test_file(self) -> bool:
        """A test module samples a mechanism many times to check its distribution."""
        parts = self.ctx.path.replace("\\", "/").split("/")
        return parts[-1].startswith("test_") or parts[-1].endswith("_test.py") or "tests" in parts[:-1]

    @staticmethod
    def _count_given(call: cst.Call) -> bool:
        """The callee is also told how many passes there are (``inject_noise(eps, num_attributes)``) and
        may split the budget itself."""
        for arg in call.args:
            value = arg.value
            if isinstance(value, cst.Call) and call_name(value) == "len" and value.args:
                value = value.args[0].value
            elif not (words(last_name(value) or "") & {"num", "n", "number", "count", "k", "d"}
                      or (last_name(value) or "").startswith(("n_", "num"))):
                continue
            if _column_like(value, any_range=False) or words(last_name(value) or "") & {"k", "d"} \
                    or words(last_name(value) or "") & {"attributes", "attrs", "cols", "columns", "features", "dims",
                                                         "queries", "marginals", "selections", "rounds", "iterations"}:
                return True
        return False

    @staticmethod
    def _stops_early(loop: cst.CSTNode) -> bool:
        """A loop that stops at the first answer above a threshold (the sparse vector technique pays for
        one answer, not for every noisy comparison)."""
        return isinstance(loop, cst.For) and any(
            isinstance(sub, cst.If) and any(isinstance(n, (cst.Break, cst.Return)) for n in walk(sub.body))
            for sub in walk(loop.body, into_scopes=False))

    def _charged(self, loop: cst.CSTNode) -> bool:
        for sub in walk(loop, into_scopes=False):
            if isinstance(sub, cst.Call) and words(call_name(sub)) & _CHARGE_WORDS:
                return True
            if isinstance(sub, cst.AugAssign) and words(last_name(sub.target) or "") & (_CHARGE_WORDS | {"used"}):
                return True
            if isinstance(sub, cst.Name) and words(sub.value) & {"accountant", "budget", "odometer"}:
                return True
        return False

    def _split(self, node: cst.CSTNode, eps: cst.BaseExpression) -> bool:
        """Is the ε name rebound (in the module) to a product or quotient, i.e. already a share? Or is it the
        instance's ε (``self.epsilon``, set from the constructor's parameter) and every construction of the class
        in the module passes a quotient (``PrivateBinner(epsilon=eps_q / n_features)``): the caller split it?"""
        if self._split_by_constructor(node, eps):
            return True
        name = last_name(eps)
        for sub in walk(self.ctx.module):
            if isinstance(sub, cst.Assign) and any(last_name(t.target) == name for t in sub.targets):
                if any(isinstance(v, cst.BinaryOperation) and isinstance(v.operator, (cst.Divide, cst.Multiply,
                                                                                      cst.FloorDivide))
                       for v in walk(sub.value)):
                    return True
            elif isinstance(sub, cst.AugAssign) and last_name(sub.target) == name \
                    and isinstance(sub.operator, (cst.DivideAssign, cst.MultiplyAssign)):
                return True
        return False

    def _split_by_constructor(self, node: cst.CSTNode, eps: cst.BaseExpression) -> bool:
        if not (isinstance(eps, cst.Attribute) and isinstance(eps.value, cst.Name) and eps.value.value == "self"):
            return False
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        cls = fa.enclosing_class(fn) if fn is not None else None
        if cls is None:
            return False
        init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
        if init is None:
            return False
        params = [p.name.value for p in (*init.params.params, *init.params.kwonly_params)]
        attr = eps.attr.value
        # ``self.epsilon = epsilon`` in ``__init__``: the parameter that sets the instance's ε
        param = next((last_name(sub.value) for sub in walk(init) if isinstance(sub, cst.Assign)
                      and any(isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name)
                              and t.target.value.value == "self" and t.target.attr.value == attr for t in sub.targets)
                      and isinstance(sub.value, cst.Name) and sub.value.value in params), None)
        if param is None:
            return False
        position = params.index(param) - 1  # ``self`` fills the first
        given: list[cst.BaseExpression | None] = []
        for call in fa.nodes(cst.Call):
            if call_name(call) != cls.name.value:  # type: ignore[arg-type]
                continue
            args = call.args  # type: ignore[attr-defined]
            value = next((a.value for a in args if a.keyword is not None and a.keyword.value == param), None)
            if value is None:
                positional = [a.value for a in args if a.keyword is None and not a.star]
                value = positional[position] if 0 <= position < len(positional) else None
            given.append(value)
        return bool(given) and all(
            v is not None and any(isinstance(b, cst.BinaryOperation) and isinstance(b.operator, (
                cst.Divide, cst.FloorDivide)) for b in walk(v)) for v in given)
