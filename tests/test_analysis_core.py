"""The shared analysis core: qualified names, bindings, DP context, private-data taint, acknowledged leaks."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from dpcheck.analysis import FileAnalysis


def analyse(src: str) -> FileAnalysis:
    src = textwrap.dedent(src)
    return FileAnalysis(cst.parse_module(src), src)


def calls(fa: FileAnalysis, name: str) -> list[cst.Call]:
    """Calls whose called name ends with ``name``, in source order."""
    found = [c for c in fa.nodes(cst.Call) if (fa.qualified_name(c) or "").split(".")[-1] == name
             or (isinstance(c.func, cst.Attribute) and c.func.attr.value == name)]
    return sorted(found, key=fa.line_of)


def names(fa: FileAnalysis, name: str) -> list[cst.Name]:
    """Name nodes read as values (not attribute names), in source order."""
    out = []
    for node in fa.nodes(cst.Name):
        parent = fa.parent(node)
        if node.value == name and not (isinstance(parent, cst.Attribute) and parent.attr is node):
            out.append(node)
    return sorted(out, key=lambda n: (fa.line_of(n), fa.index.order[n]))


def fn(fa: FileAnalysis, name: str) -> cst.FunctionDef:
    return next(f for f in fa.nodes(cst.FunctionDef) if f.name.value == name)


def cls(fa: FileAnalysis, name: str) -> cst.ClassDef:
    return next(c for c in fa.nodes(cst.ClassDef) if c.name.value == name)


def returned(fa: FileAnalysis, function: str) -> cst.BaseExpression:
    ret = next(r for r in fa.nodes(cst.Return) if fa.enclosing_function(r) is fn(fa, function))
    assert ret.value is not None
    return ret.value


# ---- qualified names and bindings ---------------------------------------------------------
def test_qualified_names_through_aliases():
    fa = analyse("""
        import numpy as np
        import torch.nn.functional as F
        import scipy.stats
        from torch import randn as r
        from diffprivlib.mechanisms import Laplace
        from .utils import helper
        a = np.random.normal(0, 1)
        b = r(3)
        c = F.relu(b)
        d = scipy.stats.norm.rvs()
        e = Laplace(epsilon=1.0)
        f = helper()
        g = undefined.thing()
        h = (a + b).sum()
    """)
    got = [fa.qualified_name(c) for c in sorted(fa.nodes(cst.Call), key=fa.line_of) if fa.line_of(c) < 15]
    assert got[:7] == ["numpy.random.normal", "torch.randn", "torch.nn.functional.relu", "scipy.stats.norm.rvs",
                       "diffprivlib.mechanisms.Laplace", ".utils.helper", "undefined.thing"]
    assert fa.qualified_name(calls(fa, "sum")[0]) is None


def test_resolve_local_picks_the_binding_in_scope():
    fa = analyse("""
        x = 1
        def f(x, y):
            z = x
            x = 2
            return x + y + z
        def g():
            return x
        class C:
            x = 3
            def m(self):
                return x
        for k in range(3):
            print(k)
    """)
    xs = names(fa, "x")
    # in f: ``z = x`` reads the parameter, ``return x`` the later assignment
    assert isinstance(fa.resolve_local(xs[2]), cst.Param)
    assert isinstance(fa.resolve_local(xs[4]), cst.Assign) and fa.line_of(fa.resolve_local(xs[4])) == 5
    # in g: the module's ``x = 1``; in C.m: the module's, not the class body's
    for read in (xs[5], xs[7]):
        binding = fa.resolve_local(read)
        assert isinstance(binding, cst.Assign) and fa.line_of(binding) == 2
    assert isinstance(fa.resolve_local(names(fa, "f")[0] if names(fa, "f") else fn(fa, "f").name), cst.FunctionDef)
    assert isinstance(fa.resolve_local(names(fa, "k")[-1]), cst.For)
    assert fa.resolve_local(names(fa, "print")[0]) is None


# ---- DP context -----------------------------------------------------------------------------
DP_POSITIVE = {
    "function taking epsilon": """
        import numpy as np
        def release_mean(values, epsilon):
            return values.mean()
    """,
    "DP-SGD trainer": """
        from opacus import PrivacyEngine
        def train(model, loader, noise_multiplier, max_grad_norm):
            engine = PrivacyEngine()
            model, opt, loader = engine.make_private(module=model, noise_multiplier=noise_multiplier,
                                                     max_grad_norm=max_grad_norm)
            for x, y in loader:
                opt.step()
    """,
    "PATE class with docstring only": """
        class Aggregator:
            '''Aggregates teacher votes as in PATE.'''
            def aggregate(self, votes):
                return votes.argmax(axis=1)
    """,
    "class named DPGAN": """
        class DPGAN:
            def train_step(self, batch):
                return batch
    """,
    "laplace draw with DP-named scale": """
        import numpy as np
        def noisy_count(x, sens, eps_value):
            return len(x) + np.random.laplace(0, sens / eps_value)
    """,
    "torch normal with sigma and delta": """
        import torch
        def perturb(grad, sigma, delta):
            return grad + torch.normal(0, sigma, grad.shape)
    """,
    "diffprivlib call": """
        from diffprivlib import tools
        def summary(df):
            return tools.mean(df.values)
    """,
    "accountant": """
        def spent(orders, steps, q, s):
            rdp = compute_rdp(q, s, steps, orders)
            return rdp
    """,
    "privacy budget attribute": """
        class Synth:
            def sample(self, n):
                return self.privacy_budget * n
    """,
}


@pytest.mark.parametrize("label", sorted(DP_POSITIVE))
def test_dp_context_positive(label):
    fa = analyse(DP_POSITIVE[label])
    last_fn = fa.nodes(cst.FunctionDef)[-1]
    ctx = fa.dp_context(last_fn.body)
    assert fa.in_dp_context(last_fn.body), f"{label}: {ctx}"
    assert ctx.is_dp or fa.dp_context(fa.enclosing_class(last_fn) or fa.module).is_dp


def test_dp_context_reasons_name_the_signal():
    fa = analyse(DP_POSITIVE["function taking epsilon"])
    assert "parameter epsilon" in fa.dp_context(fn(fa, "release_mean")).reasons
    fa = analyse(DP_POSITIVE["laplace draw with DP-named scale"])
    assert any("numpy.random.laplace" in r for r in fa.dp_context(fn(fa, "noisy_count")).reasons)
    fa = analyse(DP_POSITIVE["PATE class with docstring only"])
    assert any("docstring" in r for r in fa.dp_context(cls(fa, "Aggregator")).reasons)
    fa = analyse(DP_POSITIVE["class named DPGAN"])
    assert "class name DPGAN" in fa.dp_context(cls(fa, "DPGAN")).reasons


DP_NEGATIVE = {
    "GAN with no privacy claim": """
        import torch
        class GAN:
            '''A plain generative adversarial network.'''
            def __init__(self, latent_dim=64, lr=2e-4):
                self.opt = torch.optim.Adam(self.parameters(), lr=lr, betas=(0.5, 0.999), eps=1e-8)
            def fit(self, data, epochs=10):
                for _ in range(epochs):
                    z = torch.randn(len(data), 64)
                    fake = self.generator(z)
                    loss = self.discriminator(fake).mean()
                    loss.backward()
            def sample(self, n):
                return self.generator(torch.normal(0, 1, (n, 64)))
    """,
    "k-anonymity utility": """
        '''k-anonymity generalisation for privacy-preserving data publishing.'''
        def generalise(df, quasi_identifiers, k=5):
            groups = df.groupby(quasi_identifiers)
            return groups.filter(lambda g: len(g) >= k)
        def suppress(df, column):
            return df.drop(columns=[column])
    """,
    "evaluation metric module": """
        import numpy as np
        def kl_divergence(p, q, eps=1e-10):
            return np.sum(p * np.log((p + eps) / (q + eps)))
        def total_variation(real, synth):
            return 0.5 * np.abs(real.min() - synth.min()).sum()
    """,
    "huber loss with delta": """
        def huber(residual, delta=1.0):
            return residual ** 2 if abs(residual) < delta else delta * abs(residual)
    """,
}


@pytest.mark.parametrize("label", sorted(DP_NEGATIVE))
def test_dp_context_negative(label):
    fa = analyse(DP_NEGATIVE[label])
    for function in fa.nodes(cst.FunctionDef):
        assert not fa.in_dp_context(function.body), f"{label}: {function.name.value}: {fa.dp_context(function)}"
    assert not fa.dp_context(fa.module).is_dp


def test_dp_context_spreads_to_class_module_and_callees():
    fa = analyse("""
        class Synth:
            def __init__(self, epsilon):
                self.epsilon = epsilon
            def _helper(self, x):
                return x
        def fit_model(data, epsilon):
            return prep(data)
        def prep(data):
            return data
        def unrelated(data):
            return data
    """)
    assert fa.dp_context(cls(fa, "Synth")).is_dp
    assert not fa.dp_context(fn(fa, "_helper")).is_dp and fa.in_dp_context(fn(fa, "_helper").body)
    assert any("called in fit_model" in r for r in fa.dp_context(fn(fa, "prep")).reasons)
    assert not fa.in_dp_context(fn(fa, "unrelated").body)
    claim = analyse('''"""Differentially private synthetic data."""\ndef helper(x):\n    return x\n''')
    assert claim.in_dp_context(fn(claim, "helper").body)


# ---- private data ---------------------------------------------------------------------------
TAINT = """
    import numpy as np
    import pandas as pd

    def _bounds(values):
        return values.min(), values.max()

    def scale(v, lo, hi):
        return (v - lo) / (hi - lo)

    class Model:
        def __init__(self, epsilon=1.0, bounds=None, n_samples=100):
            self.epsilon = epsilon
            self.bounds = bounds
            self.n_samples = n_samples

        def fit(self, X, y=None, epochs=10):
            data = X
            a, b = data[:, 0], data[:, 1]
            total = 0
            total += a.sum()
            n = len(X)
            rows = X.shape[0]
            lo, hi = _bounds(X)
            self.lo = lo
            self.train_ = self._prepare(X)
            eps_step = self.epsilon / epochs
            for row in X:
                last = row
            labels = y
            return self

        def _prepare(self, frame):
            cleaned = frame.dropna()
            return cleaned

        def sample(self, k):
            low = self.lo
            prepared = self.train_
            noisy = self.lo + np.random.laplace(0, 1 / self.epsilon)
            ll = self.log_prob(self.train_)
            score = self.discriminator(self.train_)
            limit = self.bounds
            count = self.n_samples
            return low

    def driver(path):
        df = pd.read_csv(path)
        cols = df.columns
        model = Model(epsilon=1.0)
        model.fit(df)
        public = scale(3.0, 0.0, 1.0)
        return df
"""


@pytest.fixture(scope="module")
def taint():
    return analyse(TAINT)


def assigned_value(fa: FileAnalysis, target: str, function: str) -> cst.BaseExpression:
    """The last value expression assigned to ``target`` (a name or ``self.x``) inside ``function``."""
    scope = fn(fa, function)
    for binding in reversed(fa.index.bindings[scope][target]):
        if binding.value is not None:
            return binding.value
    raise AssertionError(target)


@pytest.mark.parametrize(("target", "function"), [
    ("data", "fit"), ("a", "fit"), ("b", "fit"), ("total", "fit"), ("lo", "fit"), ("hi", "fit"),
    ("self.train_", "fit"), ("last", "fit"), ("labels", "fit"), ("low", "sample"), ("prepared", "sample"),
    ("cleaned", "_prepare"), ("df", "driver"),
])
def test_private_values(taint, target, function):
    value = assigned_value(taint, target, function)
    assert taint.is_private(value), f"{target} in {function}"
    assert taint.private_origin(value)


@pytest.mark.parametrize(("target", "function"), [
    ("n", "fit"), ("rows", "fit"), ("eps_step", "fit"), ("noisy", "sample"), ("ll", "sample"), ("score", "sample"),
    ("limit", "sample"), ("count", "sample"), ("cols", "driver"), ("model", "driver"), ("public", "driver"),
    ("self.epsilon", "__init__"),
])
def test_not_private_values(taint, target, function):
    assert not taint.is_private(assigned_value(taint, target, function)), f"{target} in {function}"


def test_counts_are_private_only_with_allow_shape(taint):
    n = assigned_value(taint, "n", "fit")
    rows = assigned_value(taint, "rows", "fit")
    assert not taint.is_record_values(n) and taint.is_private(n, allow_shape=True)
    assert taint.is_private(rows, allow_shape=True)


def test_origins_say_why(taint):
    assert taint.private_origin(assigned_value(taint, "data", "fit")) == "parameter `X` of `fit`"
    low = taint.private_origin(assigned_value(taint, "low", "sample"))
    assert low is not None and low.startswith("self.lo stored in `fit` at line 25")
    assert "read_csv" in taint.private_origin(assigned_value(taint, "df", "driver"))


def test_helper_called_with_public_values_is_not_private(taint):
    # ``scale`` is also called with private data nowhere; its parameters stay public
    assert not taint.is_private(returned(taint, "scale"))
    # ``_bounds`` takes private data only through its caller, so its own return is private there
    assert taint.is_private(returned(taint, "_bounds"))


def test_data_passed_to_fit_is_private_in_the_caller():
    fa = analyse("""
        def main(path, eps, columns):
            raw = load(path)
            table = raw[columns]
            lo = table.min()
            top = raw.max()
            synth = DPSynth(epsilon=eps)
            synth.fit(table)
            return lo
    """)
    assert fa.is_private(assigned_value(fa, "lo", "main"))
    assert "passed to `fit`" in fa.private_origin(assigned_value(fa, "lo", "main"))
    assert "`raw` flows into `table` passed to `fit`" in fa.private_origin(assigned_value(fa, "top", "main"))
    for public in ("path", "eps", "columns"):
        assert not fa.is_private(names(fa, public)[-1]), public


def test_sampler_that_trains_is_an_entry_point():
    fa = analyse("""
        class Synth:
            def generate(self, X, n):
                self.model.fit(X)
                lo = X.min()
                return self.model.sample(n)
            def transform(self, X):
                lo = X.min()
                return lo
    """)
    assert fa.is_private(assigned_value(fa, "lo", "generate"))
    assert not fa.is_private(assigned_value(fa, "lo", "transform"))


# ---- acknowledged leaks ---------------------------------------------------------------------
ACK = """
    import warnings
    import numpy as np

    class Mean:
        def fit(self, X):
            if self.bounds is None:
                warnings.warn("Bounds have not been specified and will be calculated on the data provided. "
                              "This will result in additional privacy leakage.", PrivacyLeakWarning)
                self.bounds = (X.min(), X.max())
            return self

        def fit_silent(self, X):
            if self.bounds is None:
                self.bounds = (X.min(), X.max())
            return self

        def fit_block(self, X):
            early = X.max()
            warnings.warn("norm not given: the result is not differentially private")
            late = X.max()
            return late

        def fit_negated(self, X):
            if not self.data_norm:
                warnings.warn("data_norm not specified", PrivacyLeakWarning)
            norm = np.linalg.norm(X, axis=1).max() if not self.data_norm else self.data_norm
            return norm

        def fit_other_warning(self, X):
            warnings.warn("this API is deprecated", DeprecationWarning)
            bound = X.max()
            return bound

        def fit_wrong_branch(self, X):
            if self.bounds is None:
                warnings.warn("additional privacy leakage", PrivacyLeakWarning)
            else:
                lo = X.min()
            return lo
"""


@pytest.fixture(scope="module")
def ack():
    return analyse(ACK)


def _call_in(fa: FileAnalysis, name: str, function: str, index: int = 0) -> cst.Call:
    found = [c for c in calls(fa, name) if fa.enclosing_function(c) is fn(fa, function)]
    return found[index]


def test_fallback_with_warning_is_acknowledged(ack):
    reason = ack.acknowledged(_call_in(ack, "min", "fit"))
    assert reason is not None and "leak" in reason and "line 8" in reason


def test_fallback_without_warning_is_not_acknowledged(ack):
    assert ack.acknowledged(_call_in(ack, "min", "fit_silent")) is None
    assert ack.acknowledged(_call_in(ack, "max", "fit_silent")) is None


def test_warning_acknowledges_only_what_follows_it(ack):
    assert ack.acknowledged(_call_in(ack, "max", "fit_block", 0)) is None
    assert ack.acknowledged(_call_in(ack, "max", "fit_block", 1)) is not None


def test_guarded_fallback_expression_after_the_warning(ack):
    reason = ack.acknowledged(_call_in(ack, "norm", "fit_negated"))
    assert reason is not None and "not self.data_norm" in reason


def test_unrelated_warning_or_branch_is_not_acknowledged(ack):
    assert ack.acknowledged(_call_in(ack, "max", "fit_other_warning")) is None
    assert ack.acknowledged(_call_in(ack, "min", "fit_wrong_branch")) is None


LOGGED = """
    import logging
    logger = logging.getLogger(__name__)
    log = logging.getLogger("binning")

    class Binner:
        def categories(self, col, series, public=False):
            if "categories" in self.domain:
                cats = self.domain["categories"]
            else:
                if not public:
                    logger.warning(f"PrivacyLeakage: no categorical domain for {col}, imputed from the data")
                cats = series.unique().tolist()
            return cats

        def fit_module_logging(self, X):
            logging.warning("bounds were not given and are read from the data: privacy leak")
            lo = X.min()
            return lo

        def fit_log_warn(self, X):
            log.warn("no clipping norm supplied; this leaks privacy of the training rows")
            hi = X.max()
            return hi

        def fit_unrelated_log(self, X):
            logger.warning("column %s has missing values", "age")
            hi = X.max()
            return hi

        def fit_after_bound_test(self, X):
            if self.bounds is None:
                logger.warning("PrivacyLeakage: bounds computed from the data")
            hi = X.max()
            return hi
"""


@pytest.mark.parametrize("name, function", [
    ("unique", "categories"), ("min", "fit_module_logging"), ("max", "fit_log_warn"),
])
def test_logger_warning_about_a_privacy_leak_acknowledges(name, function):
    fa = analyse(LOGGED)
    reason = fa.acknowledged(_call_in(fa, name, function))
    assert reason is not None and "leak warning" in reason


@pytest.mark.parametrize("name, function", [("max", "fit_unrelated_log"), ("max", "fit_after_bound_test")])
def test_unrelated_logger_text_or_bound_conditional_warning_is_not_acknowledged(name, function):
    fa = analyse(LOGGED)
    assert fa.acknowledged(_call_in(fa, name, function)) is None


def test_no_warning_in_file_means_nothing_acknowledged():
    fa = analyse("""
        def fit(X, bounds=None):
            if bounds is None:
                bounds = (X.min(), X.max())
            return bounds
    """)
    assert all(fa.acknowledged(c) is None for c in fa.nodes(cst.Call))


def test_column_reads_of_a_dataset_are_private():
    fa = analyse("""
        def bounds_of(train_df, synth_df, cfg):
            a = train_df["age"].max()
            b = synth_df["age"].max()
            c = cfg["epsilon"]
            return a, b, c
        def columns(X, arr):
            d = X[:, 0].min()
            e = arr[:, 0].min()
            f = X[0]
            return d, e, f
    """)
    assert fa.is_private(assigned_value(fa, "a", "bounds_of"))
    assert "column read of dataset `train_df`" in fa.private_origin(assigned_value(fa, "a", "bounds_of"))
    assert fa.is_private(assigned_value(fa, "d", "columns"))
    for target, function in (("b", "bounds_of"), ("c", "bounds_of"), ("e", "columns"), ("f", "columns")):
        assert not fa.is_private(assigned_value(fa, target, function)), target


def test_navigation_helpers_shared_by_the_rules():
    fa = analyse("""
        import numpy as np
        def train(X, iters):
            for it in range(iters):
                while True:
                    total = [np.log(v) for v in X]
                    break
            return total
    """)
    log_call = calls(fa, "log")[0]
    loops = fa.enclosing_loops(log_call)
    assert [type(l).__name__ for l in loops] == ["While", "For"]
    assert [type(l).__name__ for l in fa.enclosing_loops(log_call, comprehensions=True)] == ["ListComp", "While", "For"]
    assert fa.enclosing_loops(calls(fa, "range")[0]) == []
    assert isinstance(fa.enclosing_statement(log_call), cst.Assign)
    assert fa.is_training_entry(fn(fa, "train")) and fa.functions_named("train") == [fn(fa, "train")]
    assert fa.code(log_call) == "np.log(v)"
    assert fa.resolve_local(names(fa, "np")[0]).__class__ is cst.Import


def test_referents_follow_names_attributes_and_calls():
    fa = analyse("""
        def helper(v):
            return v * 2
        class C:
            def __init__(self, lam):
                self.lam = lam
                self.lam = 0.5
            def run(self, q):
                t = q + 1
                t = helper(t)
                return self.lam * t + helper(q)
    """)
    reads = names(fa, "t")
    assert [fa.code(v) for v in fa.referents(reads[-1])] == ["q + 1", "helper(t)"]
    lam = next(a for a in fa.nodes(cst.Attribute) if fa.code(a) == "self.lam"
               and fa.enclosing_function(a) is fn(fa, "run"))
    assert [fa.code(v) for v in fa.referents(lam)] == ["lam", "0.5"]
    call = calls(fa, "helper")[-1]
    assert fa.callee(call) is fn(fa, "helper") and [fa.code(v) for v in fa.referents(call)] == ["v * 2"]
    assert fa.referents(names(fa, "q")[-1]) == []


def test_derived_names_and_noise():
    fa = analyse("""
        import numpy as np
        def sample(self, n):
            z = np.random.normal(size=(n, 8))
            out = self.G(z)
            a, b = out, 1
            rows = [r for r in out]
            other = n * 2
            noisy = other + np.random.laplace(0, 1.0)
            return rows
    """)
    scope = fn(fa, "sample")
    is_gen = lambda e: isinstance(e, cst.Call) and fa.code(e.func) == "self.G"
    assert fa.derived_names(scope, is_gen) == {"out", "a", "r", "rows"}
    assert fa.derived_names(scope, lambda e: False, seed=["n"]) >= {"z", "out", "other", "noisy"}
    assert fa.is_noise(assigned_value(fa, "noisy", "sample").right)
    assert not fa.is_noise(assigned_value(fa, "other", "sample"))


def test_gaussian_calibration_and_dp_named_trainers():
    fa = analyse("""
        from numpy import log as ln, sqrt
        def calibrate(e, d):
            return sqrt(2.0 * ln(1.25 / d)) / e
        def ratio(a, b):
            return 1.25 * a / b
    """)
    assert any("Gaussian mechanism" in r for r in fa.dp_context(fn(fa, "calibrate")).reasons)
    assert not fa.in_dp_context(fn(fa, "ratio").body)
    trainer = analyse("""
        def dp_train(table, e):
            return table.mean()
        def summarise(table):
            return table.mean()
    """)
    assert trainer.is_private(returned(trainer, "dp_train"))
    assert not trainer.is_private(returned(trainer, "summarise"))
    # a module defining a function that claims DP is DP code throughout
    assert trainer.in_dp_context(fn(trainer, "summarise").body)


# ---- DP-context gaps found by the DP2 rules ------------------------------------------------
def test_module_naming_a_dp_generator_is_dp_code():
    for text in ('MODEL = "pategan"', 'URL = "github.com/x/private-data-generation"',
                 'def load(path):\n    """Reads the private data."""\n    return path',
                 "def build_PATE_GAN(cfg):\n    return cfg", "from models import pategan_core as core"):
        fa = analyse(text + "\ndef helper(df):\n    return df.max()\n")
        assert fa.in_dp_context(fn(fa, "helper").body), text
    # the words in a comment only are not a claim
    plain = analyse("# compare with pategan\ndef helper(df):\n    return df.max()\n")
    assert not plain.in_dp_context(fn(plain, "helper").body)


def test_classes_constructed_or_called_from_dp_code_inherit_it():
    fa = analyse("""
        class Teachers:
            def fit(self, X):
                return X.max()
        class TabularEncoder:
            def __init__(self, k):
                self.k = k
            def fit(self, X):
                return X.min()
        class Encoder2:
            def fit(self, X):
                return X.min()
        class Unused:
            def fit(self, X):
                return X.min()
        def train(X, epsilon):
            Teachers(X)
            TabularEncoder(3).fit(X)
            enc = Encoder2()
            enc.fit(X)
    """)
    for name in ("Teachers", "TabularEncoder", "Encoder2"):
        method = fa.method(cls(fa, name), "fit")
        assert method is not None and fa.in_dp_context(method.body), name
    assert not fa.in_dp_context(fa.method(cls(fa, "Unused"), "fit").body)


def test_teachers_alone_are_a_weak_signal():
    distill = analyse("""
        def distill(X, y, student, n_teachers=5):
            teachers = [fit_one(X, y) for _ in range(n_teachers)]
            return student.fit(X, [t.predict(X) for t in teachers])
    """)
    assert not distill.in_dp_context(fn(distill, "distill").body)
    pate = analyse("""
        def aggregate(votes, n_teachers, sigma):
            return votes.argmax() + sigma * n_teachers
    """)
    assert pate.in_dp_context(fn(pate, "aggregate").body)


def test_importing_a_privacy_named_module_is_not_dp_code():
    for text, use in (("import synthcity.metrics.eval_privacy as ep", "ep"),
                      ("from synthcity.metrics import eval_privacy", "eval_privacy"),
                      ("import synthcity.metrics.eval_privacy", "synthcity.metrics.eval_privacy"),
                      ("from privacy_meter.constants import MetricEnum", "MetricEnum"),
                      ("import privacy_meter.utils as pmu", "pmu")):
        fa = analyse(f"{text}\ndef score(df):\n    return {use}.x(df.max())\n")
        assert not fa.in_dp_context(fn(fa, "score").body), text
    # a DP parameter read from an imported config module still counts
    cfg = analyse("import config\ndef score(df):\n    return config.epsilon * df.max()\n")
    assert cfg.in_dp_context(fn(cfg, "score").body)


def test_a_list_of_columns_is_private_like_one_column():
    fa = analyse("""
        def summarise(df, cols):
            one = df["age"]
            many = df[["age", "income"]]
            rows = df[[0, 1]]
            names = cols[["a", "b"]]
            return one, many, rows, names
    """)
    assert fa.is_private(assigned_value(fa, "one", "summarise"))
    assert fa.is_private(assigned_value(fa, "many", "summarise"))
    assert not fa.is_private(assigned_value(fa, "rows", "summarise"))
    assert not fa.is_private(assigned_value(fa, "names", "summarise"))


def test_made_up_data_fitted_on_is_not_private():
    fa = analyse("""
        import numpy as np
        from sklearn.preprocessing import StandardScaler
        def check(loaded):
            X = np.random.rand(10, 5)
            StandardScaler().fit(X)
            Y = np.array([[1.0, 2.0], [3.0, -1.0]])
            StandardScaler().fit(Y)
            rng = np.random.default_rng(0)
            W = rng.random((10, 5))
            StandardScaler().fit(W)
            table = loaded.values
            StandardScaler().fit(table)
            return X.max(), Y.max(), table.max(), W.max()
    """)
    x_max, y_max, z_max, w_max = returned(fa, "check").elements
    assert not fa.is_private(w_max.value)
    assert not fa.is_private(x_max.value)
    assert not fa.is_private(y_max.value)
    assert fa.is_private(z_max.value)


def test_machine_epsilon_is_not_a_privacy_budget():
    fa = analyse("""
        import sys
        import numpy as np
        def corr(a):
            return a / (a.std() + sys.float_info.epsilon)
        def corr2(a):
            return a / (a.std() + np.finfo(float).eps)
        def release(a, epsilon):
            return a + epsilon
    """)
    assert not fa.in_dp_context(fn(fa, "corr").body)
    assert not fa.in_dp_context(fn(fa, "corr2").body)
    assert fa.in_dp_context(fn(fa, "release").body)


def test_small_epsilon_default_is_a_cutoff_not_a_budget():
    """ydata-synthetic's CTGAN processor: ``epsilon=0.005`` cuts mixture weights, kept as
    ``self._epsilon``; a default of 0.05 is a budget."""
    src = """
        class Processor:
            def __init__(self, n_clusters=10, epsilon={value}):
                self._epsilon = epsilon
            def fit(self, X):
                self.bgm.fit(X)
                return self.bgm.weights_ > self._epsilon
    """
    fa = analyse(src.replace("{value}", "0.005"))
    assert not fa.in_dp_context(fn(fa, "fit").body)
    assert not fa.dp_context(fa.module).is_dp
    fa = analyse(src.replace("{value}", "0.05"))
    assert fa.in_dp_context(fn(fa, "fit").body)


# ---- project join: namespace packages and helpers that return a statistic ---------------------

_CARDINALITY = """\
import numpy as np


def cardinality(X):
    '''Number of distinct value combinations.'''
    return np.prod(X.nunique(dropna=False))


def show(X):
    return X.nunique()
"""

_PRIVBAYES = """\
import synth.models.utils as utils


class PrivBayes:
    '''Differentially private Bayesian network.'''

    def __init__(self, epsilon=1.0, theta=4):
        self.epsilon, self.theta = epsilon, theta

    def fit(self, data):
        size = utils.cardinality(data)
        print("table size", size)
        return self._max_domain(data, "age")

    def _max_domain(self, data, node):
        k = utils.cardinality(data[node])
        return self.epsilon / (self.theta * k)
"""


def _flow(tmp_path, files):
    import os
    from pathlib import Path

    from test_scan_support import project, scan, write

    from dpcheck.rules import all_rules

    project(tmp_path)
    for rel, text in files.items():
        write(tmp_path, rel, text)
    rules = [r for r in all_rules() if r.id == "DP202"]
    result = scan(tmp_path, [str(tmp_path / "synth")], rules=rules)
    return sorted((Path(os.path.relpath(os.path.abspath(f.path), tmp_path)).as_posix(), f.line)
                  for f in result.findings if f.rule == "DP202")


def test_join_resolves_a_namespace_package_and_reports_where_a_returned_statistic_is_used(tmp_path):
    # ``synth/`` has no __init__.py (PEP 420): ``synth.models.utils`` still resolves; the helper
    # returns ``nunique`` of its argument, so the DP model's use of the result is reported where
    # it is used (line 16), while the size that is only printed (line 11) is not
    found = _flow(tmp_path, {"synth/models/__init__.py": "", "synth/models/utils.py": _CARDINALITY,
                             "synth/models/privbayes.py": _PRIVBAYES})
    assert ("synth/models/privbayes.py", 16) in found
    assert ("synth/models/privbayes.py", 11) not in found
    assert ("synth/models/utils.py", 6) in found


def test_join_quiet_when_the_helper_privatises_what_it_returns(tmp_path):
    utils = """\
import numpy as np


def noisy_cardinality(X, epsilon):
    return np.prod(X.nunique()) + np.random.laplace(0, 1 / epsilon)
"""
    model = _PRIVBAYES.replace("utils.cardinality(data[node])", "utils.noisy_cardinality(data[node], self.epsilon)")
    found = _flow(tmp_path, {"synth/models/__init__.py": "", "synth/models/utils.py": utils,
                             "synth/models/privbayes.py": model})
    assert ("synth/models/privbayes.py", 16) not in found


def test_join_quiet_when_the_returned_statistic_is_a_mechanism_input_or_only_stored(tmp_path):
    # scores handed to an exponential mechanism are its utility (privatised there); a result kept
    # on the object or returned is reported at the helper's fitting site only
    model = _PRIVBAYES.replace(
        "        k = utils.cardinality(data[node])\n        return self.epsilon / (self.theta * k)\n",
        "        scores = [utils.cardinality(data[c]) for c in data]\n"
        "        self.sizes_ = utils.cardinality(data)\n"
        "        return exponential_mechanism(scores, self.epsilon)\n",
    )
    found = _flow(tmp_path, {"synth/models/__init__.py": "", "synth/models/utils.py": _CARDINALITY,
                             "synth/models/privbayes.py": model})
    assert [f for f in found if f[0] == "synth/models/privbayes.py"] == []
    assert ("synth/models/utils.py", 6) in found


_LOADER = """\
import pandas as pd


def valid_values(gt_df, col):
    return {v: k for k, v in enumerate(gt_df[col].unique().tolist())}


def preprocess(input_file):
    original_df = pd.read_csv(input_file)
    print("max age", original_df["AGE"].max())
    col_maps = {"CITY": valid_values(original_df, "CITY")}
    return original_df, col_maps
"""

_DP_SCRIPT = """\
import data_utils
from opacus import PrivacyEngine

noise_multiplier = 1.1
original_df, col_maps = data_utils.preprocess("data.csv")
engine = PrivacyEngine()
"""


def test_join_follows_a_preprocessing_module_that_reads_the_data_itself(tmp_path):
    # the DP script passes only a path; the helper reads the private file and returns the
    # categories it found (NIST challenge's valid_values_from_groundtruth): reported at the
    # fitting site; the max that is only printed is not
    found = _flow(tmp_path, {"synth/data_utils.py": _LOADER, "synth/train_dp.py": _DP_SCRIPT})
    assert found == [("synth/data_utils.py", 5)]


def test_join_quiet_when_the_script_calling_the_loader_is_not_dp_code(tmp_path):
    script = _DP_SCRIPT.replace("from opacus import PrivacyEngine\n", "").replace(
        "noise_multiplier = 1.1\n", "").replace("engine = PrivacyEngine()\n", "")
    found = _flow(tmp_path, {"synth/data_utils.py": _LOADER, "synth/train.py": script})
    assert found == []
