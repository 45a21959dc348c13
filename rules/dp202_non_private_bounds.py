"""DP202: data bounds (min/max/quantiles/categories) read from the private training data."""
from __future__ import annotations

import ast

import bisect
import re

import libcst as cst
from libcst.metadata import PositionProvider

from dpcheck.analysis.domainflow import bypassed_fallback
from dpcheck.analysis.attackscope import attack_scope
from dpcheck.analysis import dp_output, nonrelease, preprocessing
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import target_names as ast_target_names
from dpcheck.analysis.astfacts import call_name as ast_call_name
from dpcheck.analysis.astfacts import dotted as ast_dotted

from dpcheck.analysis.syntax import call_name, dotted, refs, target_names, value_refs, walk, words
from dpcheck.codetext import code_and_fstrings
from dpcheck.rule import Rule
from dpcheck.analysis.releaseless import (
    after_release, evaluation_module, measuring_scope, model_scores, scored_truth, simulated, unbound_in_init,
)
from dpcheck.analysis.per_record import from_first_parameter, per_record_function
from dpcheck.analysis.off_switch import behind_off_switch
from dpcheck.analysis.dataindex import (
    Dp2Index,
    assigned,
    has_noise,
    index_for,
)

_BOUND_FUNCS = {
    "min", "max", "amin", "amax", "nanmin", "nanmax", "ptp", "quantile", "percentile",
    "nanquantile", "nanpercentile", "aminmax", "unique",
}
_BOUND_METHODS = {"min", "max", "amin", "amax", "quantile", "nanquantile", "aminmax", "unique", "ptp", "nunique", "describe"}
_LIB_ROOTS = {"numpy", "torch", "pandas", "np", "pd", "tf", "jnp", "jax.numpy", "tensorflow", "math"}
_FITTED = {
    "MinMaxScaler", "MaxAbsScaler", "RobustScaler", "QuantileTransformer", "KBinsDiscretizer",
    "OneHotEncoder", "OrdinalEncoder", "LabelEncoder", "StandardScaler", "PowerTransformer",
    "BayesianGaussianMixture", "GaussianMixture",
    # CTGAN's / RDT's / synthcity's table transformers: modes, category lists and min/max learned
    # from the table they are fitted on, and used to decode the synthetic output
    "DataTransformer", "HyperTransformer", "ClusterBasedNormalizer", "BayesGMMTransformer", "TabularEncoder",
    "GaussianNormalizer",
    # a basis or a vocabulary learned from the records: principal axes (the DP model works in them and its
    # output is mapped back with them), Keras preprocessing layers ``adapt``-ed to the training set
    "PCA", "TruncatedSVD", "KernelPCA", "IncrementalPCA",
    # imputers filling with the records' mean/median/mode or their neighbours' values
    "SimpleImputer", "KNNImputer", "IterativeImputer",
    "Normalization", "Discretization", "StringLookup", "IntegerLookup", "TextVectorization",
}
_ENCODERS = {"OneHotEncoder", "OrdinalEncoder", "LabelEncoder"}
_FIT = {"fit", "fit_transform", "partial_fit", "adapt"}
#: functions that scale/bin their argument with bounds or quantiles taken from it
_SCALE_FUNCS = {"minmax_scale", "maxabs_scale", "robust_scale", "quantile_transform", "qcut"}
#: histograms whose bin edges span the data's own extremes unless ``range=`` (or explicit edges) is given
_HIST_FUNCS = frozenset({"histogram", "histogramdd", "histogram2d"})
#: prefilter texts (``NonPrivateBounds.applies_to``): a call ``_bound_data`` can return data for
_BOUND_CALL_TEXT = re.compile(
    r"(?:min|max|ptp|quantile|percentile|unique|describe|fit|fit_transform|adapt|_scale|quantile_transform|qcut|cut|median"
    r"|histogram|histogramdd|histogram2d)\s*\("
)
_FITTED_CALL_TEXT = re.compile(r"(?:" + "|".join(sorted(_FITTED)) + r")\s*\(")
_IDENT = re.compile(r"[A-Za-z_][\w.]*")
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _bound_call_text(code: str) -> bool:
    """A necessary condition of any finding: a call named exactly like a bound function/method
    (``min``/``unique``/``quantile``…, not ``argmax``), a scaling function, ``cut``, or a
    ``fit``/``fit_transform``/``partial_fit`` with a scaler/encoder constructed in the module."""
    fitted: bool | None = None
    statements: _Statements | None = None
    for m in _BOUND_CALL_TEXT.finditer(code):
        start = m.start()
        while start > 0 and code[start - 1] in _IDENT_CHARS:
            start -= 1
        name = code[start:m.end() - 1].rstrip()
        if name in _FIT:
            if fitted is None:
                fitted = _FITTED_CALL_TEXT.search(code) is not None
            if not fitted:
                continue
        elif not (name in _BOUND_FUNCS or name in _BOUND_METHODS or name in _SCALE_FUNCS or name == "cut"
                  or name in ("median", "nanmedian") or name in _HIST_FUNCS):
            continue
        statements = statements or _Statements(code)
        if _names_data(statements.around(start)):
            return True
    return False


def _names_data(text: str) -> bool:
    """Does ``text`` hold a name ``_is_data``/``_is_target`` could accept (``X``, ``df``, ``y``…)?"""
    for ident in _IDENT.findall(text):
        for part in ident.split("."):
            if part in {"X", "x", "D"} or words(part) & (_DATA_WORDS | _TARGET_WORDS) \
                    or _GLUED_DATA.search(part.lower()):
                return True
    return False


class _Statements:
    """Logical lines of blanked code: a statement spanning open brackets or backslashes is one."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.starts: list[int] = []
        self.open: list[bool] = []  # does the line continue the previous one?
        depth, pos, continued = 0, 0, False
        for line in code.split("\n"):
            self.starts.append(pos)
            self.open.append(depth > 0 or continued)
            depth = max(0, depth + sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}"))
            continued = line.rstrip().endswith("\\")
            pos += len(line) + 1

    def around(self, offset: int) -> str:
        i = bisect.bisect_right(self.starts, offset) - 1
        first = i
        while first > 0 and self.open[first]:
            first -= 1
        last = i
        while last + 1 < len(self.starts) and self.open[last + 1]:
            last += 1
        end = self.starts[last + 1] if last + 1 < len(self.starts) else len(self.code)
        return self.code[self.starts[first]:end]


_DATA_WORDS = {
    "x", "xs", "data", "df", "dataset", "train", "training", "real", "records", "table",
    "features", "raw", "inputs", "input", "samples", "rows", "col", "column", "orig", "original",
}
_NOT_DATA = {
    "fake", "gen", "generated", "synth", "synthetic", "syn", "noise", "votes", "vote", "alpha",
    "eps", "epsilon", "grad", "grads", "gradient", "loss", "losses", "logits", "pred", "preds",
    "prediction", "predictions", "scores", "score", "weights", "weight", "lamda", "lambda", "q",
    "counts", "count", "z", "latent", "output", "outputs", "public", "pub", "moments", "y",
    "labels", "label", "target", "targets", "lengths", "len", "sizes", "size", "shape", "dims",
    "norms", "norm", "probs", "proba", "dist", "distances", "test", "val", "valid", "bounds",
    "lower", "upper", "metadata", "meta", "schema", "domain", "ranges", "range",
}
_USE_CALLS = {
    "clip", "clamp", "linspace", "digitize", "searchsorted", "histogram", "interp", "arange",
    "divide", "true_divide", "subtract",
}
#: names of a privacy budget handed to a mechanism next to a bound
_BUDGET_WORDS = frozenset({"epsilon", "epsilons", "eps", "budget", "privacy", "rho"})
_GUARD_WORDS = {"infer", "inferred", "assume", "allow", "unsafe"}


#: LPDT's shape: a base-class ``_fit`` reads the range of ``X``; the DP subclass reaches it through
#: ``get_partition`` with public data (VALID) or with its private training data (INVALID)
_PARTITION_TREE = """
import numpy as np
class Base:
    def _fit(self, X, Y, range_x="unit"):
        if range_x == "auto":
            lo = X.min(axis=0){mark}
            hi = X.max(axis=0){mark}
            self.X_range = (lo - 0.01 * (hi - lo), hi + 0.01 * (hi - lo))
        return self
class TreeRegressor(Base):
    '''Differentially private regression tree: the partition is learned on public data.'''
    def __init__(self, epsilon=1.0, public_X=None, public_Y=None):
        self.epsilon, self.public_X, self.public_Y = epsilon, public_X, public_Y
    def get_partition(self, X, Y, range_x):
        return self._fit(X, Y, range_x=range_x)
    def fit(self, X, Y):
        self.get_partition({args}, "auto")
        self.value = Y.mean() + np.random.laplace(0, 1 / (self.epsilon * len(Y)))
        return self
"""

#: role-first spellings (u39-3): a transformer or bound fitted on the private records that encodes the
#: DP input or decodes the DP output, written before reading the benchmark's misses; each has a twin
#: Two more spellings of the role are found by ``dpcheck scan`` through the project flow (a module claiming
#: DP: ``dpcheck.analysis.preprocessing``), not by the in-file rule these cases run, so they are not cases:
#: a helper ``prepare(X)`` returning ``X / X.norm(dim=1).max()`` to an Opacus trainer, and a trainer class
#: standardising ``self.X = (X - self.mu) / self.sd`` with ``self.mu = X.mean(0)``.
_ROLE_INVALID = (
    # missing values filled with the records' mean before diffprivlib trains on them
    """
from sklearn.impute import SimpleImputer
from diffprivlib.models import GaussianNB
def train(X, y, epsilon, bounds):
    X = SimpleImputer(strategy="mean").fit_transform(X)  # <-
    return GaussianNB(epsilon=epsilon, bounds=bounds).fit(X, y)
""",
    # sklearn: a scaler fitted on the records diffprivlib then trains on
    """
from sklearn.preprocessing import StandardScaler
from diffprivlib.models import LogisticRegression
def train(X_train, y_train, epsilon):
    scaler = StandardScaler()
    X = scaler.fit_transform(X_train)  # <-
    clf = LogisticRegression(epsilon=epsilon, data_norm=1.0)
    return clf.fit(X, y_train)
""",
    # sklearn PCA fitted on the private table: the DP generator works in its basis, the output is decoded with it
    """
from sklearn.decomposition import PCA
def synthesize(X_private, epsilon, n):
    pca = PCA(n_components=10).fit(X_private)  # <-
    Z = pca.transform(X_private)
    gen = DPGAN(epsilon=epsilon).fit(Z)
    return pca.inverse_transform(gen.sample(n))
""",
    # TF2-Keras: a Normalization layer adapted to the training records, inside the DP-SGD model
    """
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer
def train(x_train, y_train, noise_multiplier):
    norm = tf.keras.layers.Normalization()
    norm.adapt(x_train)  # <-
    model = tf.keras.Sequential([norm, tf.keras.layers.Dense(10)])
    opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=noise_multiplier, num_microbatches=1)
    model.compile(optimizer=opt, loss="mse")
    return model.fit(x_train, y_train)
""",
    # JAX: min-max scaling by the batch's own extremes before DP-SGD
    """
import jax.numpy as jnp
import optax
def preprocess(x):
    return (x - jnp.min(x, 0)) / (jnp.max(x, 0) - jnp.min(x, 0))  # <-
def train(x, noise_multiplier, l2_clip):
    x = preprocess(x)
    return optax.contrib.dpsgd(learning_rate=0.1, l2_norm_clip=l2_clip, noise_multiplier=noise_multiplier, seed=1)
""",
    # a home-made discretiser class: bin edges from the records' extremes, used to decode AIM's output
    """
import numpy as np
class Discretizer:
    def __init__(self, n_bins):
        self.n_bins = n_bins
    def fit(self, X):
        self.lo = X.min(axis=0)  # <-
        self.hi = X.max(axis=0)  # <-
        return self
    def inverse(self, B):
        return self.lo + (B + 0.5) * (self.hi - self.lo) / self.n_bins
def run(X, epsilon, n):
    disc = Discretizer(16).fit(X)
    return disc.inverse(AIM(epsilon=epsilon).fit(X).sample(n))
""",
    # a domain json written from the table's observed value counts, then read by MST
    """
import json
import pandas as pd
def build_domain(csv_path, out_path):
    df = pd.read_csv(csv_path)
    domain = {col: int(df[col].nunique()) for col in df.columns}  # <-
    with open(out_path, "w") as f:
        json.dump(domain, f)
    return domain
def run_mst(csv_path, epsilon, delta):
    return MST(pd.read_csv(csv_path), build_domain(csv_path, "domain.json"), epsilon, delta)
""",
    # pandas: ten equal-width bins between the column's own extremes, then a noisy histogram
    """
import numpy as np
import pandas as pd
def age_histogram(df, epsilon):
    df["age_bin"] = pd.cut(df["age"], bins=10)  # <-
    counts = df["age_bin"].value_counts().sort_index()
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
)
_ROLE_VALID = (
    # (QF b90) twin: each image standardised by its own mean/std over every axis but the records'
    """
import numpy as np
from opacus import PrivacyEngine
def train(model, images, labels, optimizer, noise_multiplier, max_grad_norm):
    axes = tuple(range(1, images.ndim))
    mu = np.mean(images, axis=axes, keepdims=True)
    sd = np.std(images, axis=list(range(1, len(images.shape))), keepdims=True)
    images = (images - mu) / sd
    return fit_private(model, images, labels, optimizer, noise_multiplier, max_grad_norm)
""",
    # (QF b90) ordinary ML: per-sample standardisation as a transform in a plain training loop
    """
import numpy as np
def per_image_standardize(batch):
    dims = tuple(range(1, batch.ndim))
    return (batch - batch.mean(axis=dims, keepdims=True)) / (batch.std(axis=dims, keepdims=True) + 1e-6)
""",
    # twin: missing values filled with a given constant
    """
from sklearn.impute import SimpleImputer
from diffprivlib.models import GaussianNB
def train(X, y, epsilon, bounds):
    X = SimpleImputer(strategy="constant", fill_value=0.0).fit_transform(X)
    return GaussianNB(epsilon=epsilon, bounds=bounds).fit(X, y)
""",
    # twin: the scaler is fitted on a public reference sample
    """
from sklearn.preprocessing import StandardScaler
from diffprivlib.models import LogisticRegression
def train(X_train, y_train, X_public, epsilon):
    scaler = StandardScaler().fit(X_public)
    X = scaler.transform(X_train)
    clf = LogisticRegression(epsilon=epsilon, data_norm=1.0)
    return clf.fit(X, y_train)
""",
    # twin: rows clipped to a configured norm, not divided by the largest one
    """
import torch
from opacus import PrivacyEngine
def prepare(X, max_norm):
    return X * torch.clamp(max_norm / X.norm(dim=1, keepdim=True), max=1.0)
def train(model, X, y, optimizer, noise_multiplier, max_grad_norm, args):
    X = prepare(X, args.feature_norm)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=64)
    model, optimizer, loader = PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                            noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm)
    return model
""",
    # diffprivlib's PCA spends budget on the axes it learns
    """
from diffprivlib.models import PCA
def synthesize(X_private, epsilon, n):
    pca = PCA(n_components=10, epsilon=epsilon / 2, bounds=(0, 1)).fit(X_private)
    return pca.transform(X_private)
""",
    # twin: the PCA basis comes from public data
    """
from sklearn.decomposition import PCA
def synthesize(X_private, X_public, epsilon, n):
    pca = PCA(n_components=10).fit(X_public)
    Z = pca.transform(X_private)
    gen = DPGAN(epsilon=epsilon).fit(Z)
    return pca.inverse_transform(gen.sample(n))
""",
    # PCA of the synthetic and real samples in a plotting helper of a DP project: nothing is released
    """
from sklearn.decomposition import PCA
import matplotlib.pyplot as plt
def plot_embedding(real, synthetic, epsilon):
    pca = PCA(n_components=2).fit(real)
    plt.scatter(*pca.transform(real).T); plt.scatter(*pca.transform(synthetic).T)
    plt.title(f"epsilon={epsilon}")
""",
    # twin: the Normalization layer takes a published mean and variance
    """
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer
FEATURE_MEAN, FEATURE_VAR = 0.5, 0.08
def train(x_train, y_train, noise_multiplier):
    norm = tf.keras.layers.Normalization(mean=FEATURE_MEAN, variance=FEATURE_VAR)
    model = tf.keras.Sequential([norm, tf.keras.layers.Dense(10)])
    opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=noise_multiplier, num_microbatches=1)
    model.compile(optimizer=opt, loss="mse")
    return model.fit(x_train, y_train)
""",
    # twin: standardising with the dataset's published constants
    """
import torch
from opacus import PrivacyEngine
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081
class Trainer:
    def __init__(self, X, noise_multiplier):
        self.X = (X - MNIST_MEAN) / MNIST_STD
        self.noise_multiplier = noise_multiplier
    def train(self, model, optimizer, loader):
        return PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=loader,
                                            noise_multiplier=self.noise_multiplier, max_grad_norm=1.0)
""",
    # twin: the discretiser's range is given
    """
import numpy as np
class Discretizer:
    def __init__(self, n_bins, lo, hi):
        self.n_bins, self.lo, self.hi = n_bins, lo, hi
    def inverse(self, B):
        return self.lo + (B + 0.5) * (self.hi - self.lo) / self.n_bins
def run(X, epsilon, n, schema):
    disc = Discretizer(16, schema["lo"], schema["hi"])
    return disc.inverse(AIM(epsilon=epsilon).fit(X).sample(n))
""",
    # twin: the domain is read from the published schema file
    """
import json
import pandas as pd
def run_mst(csv_path, domain_path, epsilon, delta):
    with open(domain_path) as f:
        domain = json.load(f)
    return MST(pd.read_csv(csv_path), domain, epsilon, delta)
""",
    # twin: bins between public age limits
    """
import numpy as np
import pandas as pd
def age_histogram(df, epsilon):
    df["age_bin"] = pd.cut(df["age"], bins=np.arange(0, 101, 10))
    counts = df["age_bin"].value_counts().sort_index()
    return counts + np.random.laplace(0, 1 / epsilon, len(counts))
""",
    # ordinary ML code: a scaler and PCA in a non-private pipeline with Adam's eps and batch-norm eps
    """
import torch
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler
def fit_baseline(X, y):
    X = PCA(n_components=20).fit_transform(StandardScaler().fit_transform(X))
    model = torch.nn.Sequential(torch.nn.Linear(20, 10), torch.nn.BatchNorm1d(10, eps=1e-5))
    return model, torch.optim.Adam(model.parameters(), eps=1e-8)
""",
)


class NonPrivateBounds(Rule):
    id = "DP202"
    name = "non-private-bounds"
    category = "metadata"
    severity = "error"
    summary = "min/max/quantiles/categories of the private training data used to scale or encode it without DP"
    rationale = (
        "Scaling or encoding the training data needs bounds (per-column min and max, "
        "quantiles, the set of categories, the domain size). Reading them from the private data "
        "itself (`np.min(x, axis=0)`, `data.max()`, `MinMaxScaler().fit(data)`, "
        "`LabelEncoder().fit(df[c])`, `pd.cut(x, bins=10)`, `df[c].unique()`/`nunique()` as the "
        "domain, and the target's `y.min()`/`np.ptp(y)` used to scale or clip it) "
        "releases them without any noise: the extreme values are often one person's record, "
        "they end up in the model's transform and in every synthetic row, and membership "
        "attacks exploit them (Stadler et al. 2022, Annamalai et al. 2024). The DP guarantee "
        "covers only what the mechanism sees, so these bounds leak outside the budget. "
        "Not reported: a max subtracted before `exp` (log-sum-exp, stable softmax), min/max of "
        "a dictionary's keys, of budgets, lengths or scores, a classifier's class count/set, "
        "code with no DP context, toy data drawn at random in the same function, a model's scores "
        "(`decision_function`, `predict_proba`) rescaled for a metric, a `fit` its class's own "
        "`fit_transform` re-implements without calling it (the live copy is checked; in the project flow too), "
        "a function or method whose only calls in the scanned project are commented-out lines of code, and a "
        "utility-evaluation module (classifier metrics, no noise of its own) reading the data after "
        "the last use of the privacy budget, code behind a switch that defaults off and that every call "
        "in the module leaves off (`if norm:` with `norm=False`), a median fill in a helper mapped over "
        "the records one at a time (one subject's own series), a label encoder of the prediction target, "
        "the distinct identifiers or pseudonyms of the records, and an attribute a plain class's "
        "constructor reads but never binds (it raises first). A fallback the code flags with a privacy-leak warning is "
        "reported as an `acknowledged` note. A bound that limits a clip of the DP output (synthetic rows, "
        "noisy counts, a generator's samples) is reported even after the release or in a function named "
        "for DP: every released value at the limit shows the private extreme. "
        "Across modules (the project flow): when a scanned module claims (local) differential privacy, "
        "preprocessing in the modules a DP script reaches through imports (three steps; an entry script's helpers beside its DP module; standalone data-preparation scripts; not inside a released distribution) is reported too: "
        "a scaler/encoder/imputer/discretiser/column selector fitted on the data, the data centred or "
        "scaled by its own mean/std/min/max/quantile, binned at its own quantiles (`qcut`) or into a "
        "number of bins between its extremes (`cut(x, bins=10)`), de-normalised with them, clipped at them, filled "
        "with its median, or columns kept by a correlation/variance test, one-hot columns made from the "
        "categories the records hold (`pd.get_dummies(df)`, unless the categories are declared or the column "
        "was bucketed by the code's own literal mapping), a unit or scale chosen by comparing a centre of the "
        "records with a number (`if df.age.median() > 120: df.age /= 365`), or the builtin extreme of every "
        "record's extreme (`max([max(g) for g in groups])`); the data divided or shifted in place by its "
        "own extreme (`y_train /= np.max(np.abs(y_train))`, `X / max(np.linalg.norm(X, axis=1))`), unless the "
        "name holds a matrix computed there, an accumulator or a loop's batch. A fitted transformer is "
        "followed through its holder: a per-column dict (`self.encoders[col].fit(...)`), either arm of a "
        "conditional constructor, a pipeline or column transformer with such a step (quiet when every step "
        "takes its categories from a schema), or a module factory returning one (`make_preprocessor().fit(df)`); "
        "not for data named synthetic, "
        "public, test or validation, nor values every call fills with an enumerated domain "
        "(`np.arange(k)`), nor in functions or files that evaluate, plot or benchmark. "
        "Fix: take bounds as public metadata (parameters, a schema) or estimate them with a DP "
        "mechanism and charge that to the budget."
    )
    TEXT_AFTER_GATE = True
    TRIGGERS = (
        "PATE", "Pate", "pategan", " pate", "_pate", ".pate", "(pate", "rivacy", "ifferential",
        "rivate data", "rivate-data", "rivate_data", "Private", "epsilon", "noise_multiplier", "DPGAN", "DP-GAN", "DP-SGD",
        "DP_SGD", "DPSGD", "dp_sgd",
        "DP GAN", "LDP", "ldp", ".laplace(",
    )
    requires_dp_context = True

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A DP word somewhere (``TRIGGERS``, a cheap prefilter; the core decides DP context) and,
        in code, a call the rule can flag (``_bound_call_text``)."""
        if not super().applies_to(source):
            return False
        return _bound_call_text(code_and_fstrings(source))

    VALID = (
        # (R1 b86) the min-max arm of the helper: its only caller hard-codes the other option
        """
'''Loader for DP-SGD training.'''
import numpy as np
def rescale(data, mode):
    if mode == "range":
        lo, hi = data.min(axis=0), data.max(axis=0)
        data = (data - lo) / (hi - lo + 1e-8)
    return data
def load(path, clip, noise_multiplier):
    mode = "unit"
    X = np.load(path)
    X = rescale(X, mode)
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / clip)
""",
        # (R1 b84) the ``__main__`` demo scales toy data it draws itself: no record is read
        """
import numpy as np
def pate_gan(x, epsilon, delta):
    return x + np.random.laplace(0, 1.0 / epsilon, x.shape)
if __name__ == "__main__":
    x = np.random.normal(0, 1, [500, 3])
    for j in range(x.shape[1]):
        x[:, j] = x[:, j] - np.min(x[:, j])
        x[:, j] = x[:, j] / (np.max(x[:, j]) + 1e-8)
    out = pate_gan(x, epsilon=1.0, delta=1e-5)
""",
        # (R1 b94) customer/item ids mapped to embedding rows; only the ratings are randomised
        """
import numpy as np
from sklearn.preprocessing import LabelEncoder
def ldp_ratings(df, epsilon):
    users, items = LabelEncoder(), LabelEncoder()
    df["u"] = users.fit_transform(df["customer_id"])
    df["i"] = items.fit_transform(df["item_id"])
    df["r"] = df["rating"].clip(1, 5) + np.random.laplace(0, 4.0 / epsilon, len(df))
    return df
""",
        # (R1 b94) label smoothing in a DP-SGD loop: a hyperparameter spread over the class count
        """
import torch
import torch.nn.functional as F
def train(model, loader, data, optimizer, noise_multiplier, smoothing=0.1):
    n_classes = int(data.y.max()) + 1
    for xb, yb in loader:
        logp = F.log_softmax(model(xb), 1)
        eps_ls = float(smoothing)
        target = torch.full_like(logp, eps_ls / n_classes)
        target.scatter_(1, yb.view(-1, 1), 1.0 - eps_ls + eps_ls / n_classes)
        (-(target * logp).sum(1).mean()).backward()
        optimizer.step()
""",
        # (R1 b93) a simulated feeder scaled to a public peak, then noised; and the utility of the release
        """
import numpy as np
class Feeder:
    def build(self, houses, desired_peak, epsilon):
        profile = np.zeros(len(houses[0]))
        for h in houses:
            peak = np.max(profile + h)
            if peak > desired_peak:
                profile = profile + h * (desired_peak / np.max(peak))
                break
            profile = profile + h
        self.true = profile
        self.noisy = profile + np.random.laplace(0, 2.0 / epsilon, profile.shape)
        return self.noisy
    def empirical_accuracy(self):
        err = np.abs(self.noisy - self.true)
        return err / np.max(self.true)
""",
        # ordinary ML (no DP): label smoothing over the number of classes
        """
import torch
def smooth_targets(labels, num_classes, smoothing=0.1):
    out = torch.full((len(labels), num_classes), smoothing / num_classes)
    out.scatter_(1, labels.view(-1, 1), 1.0 - smoothing + smoothing / num_classes)
    return out
""",
        # (R2) twin of the qcut case: strata are quantile bins of the rows' ranks (positions), so the edges
        # are public positions and no private value is read
        """
'''Differentially private marginals.'''
import numpy as np
import pandas as pd
def stratified_rows(df, fraction, epsilon=1.0):
    df = df.copy()
    df["stratum"] = pd.qcut(df["time"].rank(method="first"), q=int(1 / fraction), labels=False)
    df["block"] = pd.qcut(np.arange(len(df)), q=5, labels=False)
    return df.groupby("stratum").apply(lambda g: g.sample(frac=fraction))
""",
        # (R3 b69) the rows per column counted from the sizes of the data and of its variance: shapes only
        """
import numpy as np
def private_variance(values, epsilon, seed=0):
    spread = np.var(values, axis=0)
    per_column = values.size / spread.size
    scale = 2.0 / (per_column * epsilon)
    return spread + np.random.RandomState(seed).laplace(0.0, scale, size=spread.size)
""",
        # (q3 h46) the data-range fallback of an optional ``limits`` that every caller in the module fills:
        # it never runs here (the callers' limits are judged where they are built)
        """
import numpy as np
def perturb(X, mult, limits=None):
        out = X.astype(float)
        for j in range(X.shape[1]):
            if limits is not None:
                width = limits[j][1] - limits[j][0]
            else:
                width = np.max(X[:, j]) - np.min(X[:, j])
            out[:, j] += np.random.laplace(0.0, mult * width, size=len(X))
        return out
def release(X, epsilon, schema):
        limits = [(schema[c]["lo"], schema[c]["hi"]) for c in range(X.shape[1])]
        return perturb(np.clip(X, 0, 1), 1.0 / epsilon, limits)
if __name__ == "__main__":
    print(release(np.random.rand(10, 2), 1.0, [{"lo": 0, "hi": 1}] * 2))
""",
        # (h43-p) every call passes the range: the data-range fallback never runs (spring-epfl set_domain)
        """
import numpy as np
def _release_range(x, epsilon, bounds=None):
    if bounds is None:
        hi = np.max(x)  # only when no caller gives the range
    else:
        hi = bounds[1]
    return np.clip(x, 0, hi) + np.random.laplace(0, hi / epsilon, len(x))
def run(x, epsilon):
    return _release_range(x, epsilon, bounds=(0.0, 10.0))
""",
        # (g2 h40) the distinct count only feeds a progress percentage that is printed
        """
import numpy as np
def encode_cases(df, epsilon):
    total = df["case"].nunique()
    rows = []
    for i, (_, g) in enumerate(df.groupby("case"), 1):
        share = 100.0 * i / total
        print(f"encoding {share:.1f}%")
        rows.append(len(g) + np.random.laplace(0, 1 / epsilon))
    return rows
""",
        # (g2 h40) the exact maximum only when no budget is given (non-private mode); noised otherwise
        """
import numpy as np
def release_range(x, epsilon):
    if epsilon is None:
        hi = np.max(x)
    else:
        hi = np.max(x) + np.random.laplace(0, 1 / epsilon)
    return np.clip(x, 0, hi) + np.random.laplace(0, hi / (epsilon or 1.0), len(x))
""",
        # (g2 h40) the exact maximum only scores the selected candidate
        """
import numpy as np
def score_selection(data, candidates, epsilon):
    selected = exponential_mechanism(data, candidates, epsilon)
    true_max = np.max(data)
    error = abs(true_max - selected)
    print(error)
    return selected
""",
        # (g37-4) the best score of an attack's calibration curve, a field of a results table
        """
import pandas as pd
from opacus import PrivacyEngine
def summarize(curve_df, auc, epsilon):
    table = pd.DataFrame([{"model": "DP-SGD", "epsilon": epsilon,
                           "best_youden": curve_df["youdens_j"].max(), "auc": auc}])
    return table
""",
        # a test function compares the sketch's estimates with the true counts at the values present
        """
import numpy as np
def test_sketch_accuracy(data_column, epsilon):
    true_counts = data_column.value_counts()
    data_values = np.sort(data_column.unique())
    sketch = build_sketch(data_column, epsilon)
    return [abs(sketch.estimate(v) - true_counts[v]) for v in data_values]
""",
        # the histogram's edges are the configured bins (public ages), not the data's extremes
        """
import numpy as np
class HistogramRelease:
    def __init__(self, epsilon, bins=None):
        self.epsilon = epsilon
        self.bins = bins if bins is not None else np.arange(0, 101, 10)
    def release(self, data):
        hist, edges = np.histogram(data["age"], bins=self.bins)
        return hist + np.random.laplace(0, 1 / self.epsilon, len(hist)), edges
""",
        # the minimum is the statistic being released: it is noised, not used as a bound
        """
import numpy as np
def private_min(data, epsilon):
    value = np.min(data, axis=0)
    return anonymize_min_with_budget(value, epsilon)
def report(data, epsilon):
    return anonymize_max_with_budget(np.max(data), epsilon)
""",
        # the column bounds registered for the DP engine come from the published schema
        """
import pandas as pd
def register(path, schema, epsilon=1.0):
    df = pd.read_csv(path)
    return [ColumnSpec(name=c, lower=schema[c][0], upper=schema[c][1], epsilon=epsilon) for c in df.columns]
""",
        # a train-on-real baseline beside train-on-synthetic in an evaluation: nothing is released
        """
from sklearn.preprocessing import StandardScaler
from opacus import PrivacyEngine
def evaluate_utility(real_data, syn_data, make_model):
    x_real = StandardScaler().fit_transform(real_data)
    x_syn = StandardScaler().fit_transform(syn_data)
    return make_model().fit(x_real).score(x_real), make_model().fit(x_syn).score(x_real)
""",
        # the mechanism's domain is public configuration; the data's extremes are only printed
        """
import numpy as np
def release_mean(values, lower, upper, epsilon):
    clipped = np.clip(values, lower, upper)
    return clipped.mean() + np.random.laplace(0, (upper - lower) / (epsilon * len(values)))
def run(records, epsilon, lower=0.0, upper=100.0):
    print("observed range", min(records), max(records))
    return release_mean(records, lower, upper, epsilon)
""",
        # torch spelling: bounds come from the schema, not from the tensor
        """
import torch
def run(data, schema, epsilon):
    lo, hi = schema["age"]
    return bounded_sum(data, lo, hi, epsilon=epsilon)
""",
        # a loader of a DP module that maps incomes to [-1, 1] with the survey's published range
        """
import pandas as pd
INCOME_MIN, INCOME_MAX = 0.0, 200000.0
def load_incomes(path):
    frame = pd.read_csv(path)
    datalist = [min(max(v, INCOME_MIN), INCOME_MAX) for v in frame["income"]]
    return [2 * (v - INCOME_MIN) / (INCOME_MAX - INCOME_MIN) - 1 for v in datalist]
def main(epsilon):
    return [piecewise(v, epsilon) for v in load_incomes("x.csv")]
""",
        # a histogram over a public range: the edges do not depend on the records
        """
import numpy as np
def synthesize(records, epsilon, n, lower, upper):
    counts, edges = np.histogram(records, bins=20, range=(lower, upper))
    noisy = np.clip(counts + np.random.laplace(0, 1 / epsilon, counts.shape), 0, None)
    cells = np.random.choice(len(noisy), size=n, p=noisy / noisy.sum())
    return np.random.uniform(edges[cells], edges[cells + 1])
""",
        # the true histogram only scores the synthetic sample (a metric), nothing is drawn from it
        """
import numpy as np
from scipy import stats
def score(database, synthetic, epsilon, x):
    truth = stats.rv_histogram(np.histogram(database, bins=30, density=True))
    model = stats.rv_histogram(np.histogram(synthetic, bins=30, density=True))
    return np.max(np.abs(truth.cdf(x) - model.cdf(x)))
""",
        # the rows are scaled into the unit ball by a public norm bound before the mechanism
        """
import numpy as np
def grid_centres(data, epsilon, radius):
    norms = np.linalg.norm(data, axis=1, keepdims=True)
    data = data / np.maximum(1.0, norms / radius)
    return grid_mechanism(data, epsilon)
""",
        # distinct patient ids only drive the split into clients
        """
import numpy as np
def make_clients(data_df, n_clients, noise_multiplier):
    subject_ids = data_df["subject_id"].unique()
    np.random.shuffle(subject_ids)
    return [data_df[data_df["subject_id"].isin(part)] for part in np.array_split(subject_ids, n_clients)]
""",
        # the partition's range is read from data every call fills with public data (LPDT):
        # ``fit`` → ``get_partition(self.public_X, …)`` → ``_fit(X, …)`` of the base class
        _PARTITION_TREE.format(mark="", args="self.public_X, self.public_Y"),
        # a function named for measuring that draws no noise: the domain read only ranks the model's
        # recommendations for the utility metrics (its twin below trains on it)
        """
from opacus import PrivacyEngine
def train(df, noise_multiplier, max_grad_norm):
    engine = PrivacyEngine()
    def evaluation_and_save(model):
        items = sorted(df["item"].unique())
        codes = {item: i for i, item in enumerate(items)}
        return model.rank(codes)
    return evaluation_and_save
""",
        # a profile of the upload (cardinalities shown to its owner) next to a DP release: the
        # function draws no noise and its result feeds nothing released (twin below encodes with it)
        """
from opacus import PrivacyEngine
def train(df, noise_multiplier, max_grad_norm):
    engine = PrivacyEngine()
    def profile_columns(model):
        items = sorted(df["item"].unique())
        codes = {item: i for i, item in enumerate(items)}
        return model.rank(codes)
    return profile_columns
""",
        # a chart helper of a DP-SGD report: min/max place the sweep's points on the axes
        """
TITLE = "DP-SGD generator: utility against the accumulated epsilon"
def _svg_line_chart(xs, ys, width=640, height=240):
    xmin, xmax = min(xs), max(xs)
    ymin, ymax = min(ys), max(ys)
    span_x, span_y = (xmax - xmin) or 1.0, (ymax - ymin) or 1.0
    points = [(width * (x - xmin) / span_x, height * (1 - (y - ymin) / span_y)) for x, y in zip(xs, ys)]
    return "<polyline points='%s'/>" % " ".join(f"{a:.1f},{b:.1f}" for a, b in points)
""",
        # PATE-GAN named only in a comment, a module with "privacy" in its name imported: an
        # evaluation metric, not DP code (the same lines under a PATE-GAN docstring are reported)
        """
# metrics for PATE-GAN outputs
from synthcity.metrics import eval_privacy
def score(real_data, synth):
    lo, hi = real_data.min(), real_data.max()
    scaled = (real_data - lo) / (hi - lo)
    return eval_privacy.compare(scaled, synth)
""",
        # toy data drawn at random for an experiment: its min/max belong to nobody
        """
import numpy as np
def data_generator(no, dim, noise_rate):
    '''Toy train data for the PATE-GAN experiment.'''
    x_train = np.random.multivariate_normal(np.zeros(dim), np.eye(dim), no)
    y_train = x_train.sum(1, keepdims=True) + np.random.normal(0, noise_rate, (no, 1))
    train_data = np.concatenate((x_train, y_train), axis=1)
    for i in range(dim + 1):
        train_data[:, i] = train_data[:, i] - np.min(train_data[:, i])
        train_data[:, i] = train_data[:, i] / (np.max(train_data[:, i]) + 1e-8)
    return train_data
""",
        # utility evaluation after the release: the encoder only re-encodes synthetic and test data
        """
from sklearn.preprocessing import OrdinalEncoder
from sklearn.metrics import accuracy_score
def crossval(data, train, test, labels, epsilon):
    synth = dp_synthesizer(train, epsilon=epsilon)
    encoder = OrdinalEncoder().fit(data)
    clf = fit_classifier(encoder.transform(synth), labels)
    return accuracy_score(labels, clf.predict(encoder.transform(test)))
""",
        # bounds passed in as public parameters
        """
import numpy as np
def normalization(data, lower, upper):
    # PATE-GAN preprocessing with public bounds
    min_val = np.asarray(lower)
    max_val = np.asarray(upper)
    return (data - min_val) / (max_val - min_val + 1e-8)
""",
        # DP bound estimation: noisy extremes, charged to the privacy budget
        """
import numpy as np
def dp_bounds(x, epsilon, delta):
    lo = np.min(x, axis=0) + np.random.laplace(scale=2.0 / epsilon, size=x.shape[1])
    hi = np.max(x, axis=0) + np.random.laplace(scale=2.0 / epsilon, size=x.shape[1])
    return lo, hi
""",
        # no DP context: an ordinary preprocessing helper
        """
import numpy as np
def minmax(x):
    mn, mx = x.min(0), x.max(0)
    return (x - mn) / (mx - mn)
""",
        # range of generated data and of teacher votes are not metadata of the private records
        """
import numpy as np
class PATEGAN:
    def sample(self, n, epsilon):
        fake = self.generator(n)
        fake_min = fake.min(0)
        votes = self.votes(fake)
        return (fake - fake_min) / np.max(votes)
""",
        # a sanity check on the data, not used to scale it
        """
import numpy as np
def fit(self, X, epsilon, delta):
    if X.min() < 0 or X.max() > 1:
        raise ValueError("PATE-GAN expects data scaled to [0, 1] with public bounds")
    self.train(X)
""",
        # encoder with public categories
        """
from sklearn.preprocessing import OneHotEncoder
def encode(df, categories, epsilon, delta):
    enc = OneHotEncoder(categories=categories)
    return enc.fit_transform(df)
""",
        # log-sum-exp shift of the exponential mechanism: the max only keeps exp() in range
        """
import numpy as np
def exponential_mechanism(x, utility, epsilon, sensitivity):
    log_probs = epsilon * utility(x) / (2 * sensitivity)
    m = np.max(log_probs)
    return np.log(np.sum(np.exp(log_probs - m))) + m
""",
        # the same shift spelled on a data-named array, inline and through a name (stable softmax)
        """
import numpy as np
def softmax_scores(x, epsilon):
    z = x - x.max(axis=-1, keepdims=True)
    p = np.exp(z * epsilon)
    return p / p.sum(), np.log(np.exp(x - np.amax(x)).sum())
""",
        # an accountant's bookkeeping: dictionary keys, orders, budgets and lengths
        """
class RenyiAccountant:
    def __init__(self, epsilon, delta):
        self.history = {}
        self.data = dict()
    def last_order(self, orders):
        newest = max(self.history.keys())
        lowest = min(orders)
        return newest - lowest, max(self.data) - 1
    def spent(self, epsilons, deltas, train_data):
        longest = max(len(r) for r in train_data)
        return max(epsilons) * len(epsilons) - min(deltas), longest - 1
""",
        # min/max of a mapping's keys: an annotated parameter (privacy-loss distribution offsets)
        """
'''Differentially private accounting with privacy loss distributions.'''
from typing import Mapping
def dictionary_to_list(input_dictionary: Mapping[int, float], data: dict):
    offset = min(input_dictionary)
    top = max(data)
    return offset, [input_dictionary.get(i, 0) for i in range(offset, top - offset + 1)]
""",
        # labels: the class count and class set of a DP classifier are not scaling bounds
        """
import numpy as np
from sklearn.preprocessing import LabelEncoder
def fit(self, X, y, epsilon=1.0):
    n_classes = int(np.max(y)) + 1
    self.classes_ = np.unique(y)
    self.encoder = LabelEncoder().fit(y)
    return n_classes - 1
""",
        # the transformer fitted on a public reference table
        """
from ctgan.data_transformer import DataTransformer
class DPCTGAN:
    def fit(self, train_data, public_data, discrete_columns=(), noise_multiplier=1.0, max_grad_norm=1.0):
        self._transformer = DataTransformer()
        self._transformer.fit(public_data, discrete_columns)
        return self._train(self._transformer.transform(train_data), noise_multiplier)
""",
        # a simulated split of the training set among agents: the range only weights which agent
        # each row goes to (a draw over a public support), nothing of it is released
        """
import numpy as np
class DPFederation:
    def allocate_data_to_agents(self, epsilon=1.0):
        means = np.linspace(np.min(self.data_train[["age"]].values),
                            np.max(self.data_train[["age"]].values), self.n_agents + 2)[1:-1]
        rows = {i: [] for i in range(self.n_agents)}
        for index, row in self.data_train.iterrows():
            Pr = to_probability(1 / (abs(row["age"] - means) + 1e-6))
            i = np.random.choice(range(self.n_agents), p=Pr)
            rows[i].append(index)
        return rows
""",
        # a __main__ demo: a label encoder only maps class names to codes, never decoded
        """
import pandas as pd
from sklearn import preprocessing
def diff_gen(data, eps):
    return dp_synthesize(data, epsilon=eps)
if __name__ == "__main__":
    data = pd.read_csv("fishiris.csv")
    lb_make = preprocessing.LabelEncoder()
    obj_df = data.select_dtypes(include=["object"]).copy()
    for feat in list(obj_df.columns):
        data.loc[:, feat] = lb_make.fit_transform(obj_df[feat])
    private_data = diff_gen(data=data, eps=0.5)
""",
        # a median used for reporting, and imputation with a public constant
        """
import pandas as pd
def main(epsilon=1.0):
    df = pd.read_csv("adult.csv")
    print("median age", df["age"].median())
    df["age"] = df["age"].fillna(40)
    return train_dp_generator(df, epsilon)
""",
        # a local randomiser with public bounds; the data's range only printed
        """
import numpy as np
class LaplaceLDP:
    def encode(self, data, eps=0.5, low=-1.0, up=1.0):
        print("range", np.max(data) - np.min(data))
        data = np.clip(data, low, up)
        noise = self.random_.laplace(0, data.size * (up - low) / eps, size=np.shape(data))
        return data + noise
""",
        # a private attribute written and never read (nothing downstream uses the set)
        """
class PrivBayes:
    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon
    def fit(self, X):
        self._binary_columns = [c for c in X.columns if X[c].unique().size <= 2]
        return self._greedy_bayes(X, self.epsilon)
""",
        # bins given as public edges
        """
import pandas as pd
def fit(self, df, epsilon):
    df["age_bin"] = pd.cut(df["age"], bins=[0, 18, 40, 65, 120])
    return df["age_bin"].cat.codes - 1
""",
        # no DP context: a k-anonymity generaliser, an evaluation metric, a GAN with no privacy claim
        """
'''Privacy utilities: k-anonymity generalisation of quasi-identifiers.'''
def generalize(df, quasi_identifiers, k):
    for col in quasi_identifiers:
        lo, hi = df[col].min(), df[col].max()
        df[col] = (df[col] - lo) // ((hi - lo) / k)
    return df, {c: sorted(df[c].unique()) for c in quasi_identifiers}
""",
        # a GAN with no privacy claim conditioning on the source-domain column's ids
        """
class RadialGANModel:
    def __init__(self, X, domain_column="domain", n_iter=1000):
        self.domains = list(X[domain_column].unique())
        self.mapping = {d: i for i, d in enumerate(self.domains)}
""",
        """
'''Utility and privacy scores of synthetic data against the real table.'''
from sklearn.preprocessing import MinMaxScaler
def distance_to_closest_record(real_data, synth_data):
    scaler = MinMaxScaler().fit(real_data)
    lo, hi = real_data.min(0), real_data.max(0)
    return scaler.transform(synth_data), (synth_data - lo) / (hi - lo)
""",
        """
'''Vanilla tabular GAN (privacy: none).'''
class TabularGAN:
    def fit(self, data, epochs=100):
        self.lo, self.hi = data.min(0), data.max(0)
        return (data - self.lo) / (self.hi - self.lo)
""",
        # the classifier's scores on the test split are rescaled to [0, 1] for an AUC: a model's
        # outputs, not the bounds of the records the DP synthesizer trains on
        """
import numpy as np
from snsynth import Synthesizer
from sklearn.metrics import roc_auc_score
def score_dp_synthesizer(train_df, clf, X_test, y_test, epsilon):
    synth = Synthesizer.create("mst", epsilon=epsilon)
    clf.fit(synth.fit_sample(train_df))
    scores = np.asarray(clf.decision_function(X_test))
    proba = (scores - scores.min()) / (scores.max() - scores.min() + 1e-12)
    return roc_auc_score(y_test, proba)
""",
        # ``fit`` duplicates the fitting that ``fit_transform`` re-implements (the live path, which
        # spends the budget on the histogram): the duplicate is not reported a second time
        """
import numpy as np
class PrivateBinner:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def fit(self, data):
        counts, edges = np.histogram(data[:, 0], bins=100)
        self.edges = edges
    def fit_transform(self, data):
        counts, edges = np.histogram(np.clip(data[:, 0], 0, 1), bins=100, range=(0, 1))
        noisy = counts + np.random.laplace(0, 1 / self.epsilon, len(counts))
        self.edges = edges
        return np.digitize(data[:, 0], self.edges), noisy
""",
        # the synthetic rows are clipped to the schema's public range after sampling
        """
import numpy as np
def fit_private_model(train_df, schema, measurements, engine, n_rows, epsilon):
    model = engine.estimate(measurements, epsilon)
    synth_df = model.synthetic_data(rows=n_rows).df
    for col in train_df.columns:
        top = int(schema[col]["max"])
        synth_df[col] = synth_df[col].round().clip(0, top)
    return synth_df
""",
        # the noisy counts are clipped at zero and at the public population size
        """
import numpy as np
def dp_histogram(records, epsilon, population):
    counts = np.bincount(records, minlength=120)
    noisy = counts + np.random.laplace(0, 1 / epsilon, size=120)
    print("oldest", records.max())
    return np.clip(noisy, 0, population)
""",
        # the generator's output is clamped to the public [-1, 1] of the tanh encoding
        """
import torch
def dp_generate(generator, train, n, epsilon):
    generated = generator(torch.randn(n, 16))
    print(train.min(), train.max())
    return torch.clamp(generated, min=-1.0, max=1.0)
""",
        # the pseudonyms seen in the eavesdropped traces list whose messages to link, not a value domain
        """
import numpy as np
import pandas as pd
def load_traces(frames, epsilon):
    data = pd.concat(frames)
    pseudonyms = np.array(pd.unique(data["pseudonym"].values))
    noisy = data["speed"] + np.random.laplace(0, 1 / epsilon, len(data))
    return noisy, pseudonyms
""",
        # the constructor reads an attribute nothing binds: it raises before any release
        """
import numpy as np
class PrivateSketchServer:
    def __init__(self, epsilon, width, df):
        self.epsilon = epsilon
        self.width = width
        self.domain = self.df["value"].unique().tolist()
        self.table = np.zeros((len(self.domain), width))
    def estimate(self, value):
        return self.table[self.domain.index(value)] + np.random.laplace(0, 1 / self.epsilon)
""",
        # one subject's series imputed with the median of that subject's own values, the function
        # mapped over the subjects one at a time and the results stacked: no record sees another
        """
import numpy as np
def series_matrix(frame, columns):
    vals = frame[columns].ffill()
    for c in columns:
        col = vals[c]
        vals[c] = col.fillna(col.median())
    return vals.values
def train_dp_generator(paths, columns, epsilon):
    rows = []
    for path in paths:
        subject = read_subject(path)
        rows.append(series_matrix(subject, columns))
    data = np.stack(rows)
    return fit_dp_gan(data, epsilon)
""",
        """
import pandas as pd
def impute_user(user_df):
    filled = user_df.copy()
    for name in filled.columns:
        filled[name] = filled[name].fillna(filled[name].median())
    return filled
def private_synth(table, epsilon):
    parts = []
    for uid, group in table.groupby("user"):
        cleaned = impute_user(group)
        parts.append(cleaned)
    return dp_synthesizer(pd.concat(parts), epsilon)
""",
        # (t1) the same factory and per-column holders with public categories, a factory that fits its own
        # (public) data, and a factory-built scaler pipeline in ML code with no DP claim
        """
'''Train a DP-VAE (Opacus) and release decoded synthetic rows.'''
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder
def build_columns(cats, schema):
    return ColumnTransformer([("c", OneHotEncoder(categories=[schema[c] for c in cats]), cats)])
def main(train_df, public_df, cats, schema, epsilon, noise_multiplier):
    pre = build_columns(cats, schema)
    x = pre.fit_transform(train_df)
    enc = {}
    for col in cats:
        enc[col] = OneHotEncoder(categories=[schema[col]])
        enc[col].fit(train_df[[col]])
    ref = build_columns(cats, schema).fit(public_df)
    return x, ref
""",
        """
'''DP synthetic data (MST) with an encoder learnt on the public census sample.'''
from sklearn.preprocessing import OneHotEncoder
def public_encoder(public_df):
    enc = OneHotEncoder(handle_unknown="ignore")
    enc.fit(public_df)
    return enc
def run(private_df, public_df, epsilon):
    enc = public_encoder(public_df)
    return enc.transform(private_df)
""",
        """
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
def build():
    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0))
def train(X_train, y_train):
    model = build()
    model.fit(X_train, y_train)
    return model
""",
        """
import numpy as np
def load_regression(X, y_train, y_test, target_epsilon, delta, y_bound=50.0, x_bound=10.0):
    y_train /= y_bound
    y_test /= y_bound
    X /= x_bound
    return np.clip(X, -1, 1), np.clip(y_train, -1, 1), y_test
""",
        """
import numpy as np
def normalise_scores(losses, logits):
    losses /= losses.max()
    logits -= logits.max(axis=1, keepdims=True)
    return losses, logits
""",
        # (g1) the exact quantile only measures the released estimate's error (a results field named for it)
        """
import numpy as np
def release_quantiles(x, qs, epsilon):
    table = []
    for q in qs:
        rec = {}
        est = private_quantile(x, q, epsilon, lower=0.0, upper=1.0)
        rec["estimate"] = est
        rec["dist"] = abs(est - np.quantile(x, q))
        table.append(rec)
    return table
""",
        # twin: the rows are clipped to a public radius, no record sets the scale
        """
import numpy as np
def unit_rows(X, radius=1.0):
    for j in range(X.shape[0]):
        size = np.linalg.norm(X[j], ord=2)
        if size > radius:
            X[j] = X[j] * (radius / size)
    return X / radius
def private_projection(X, k, epsilon):
    Z = unit_rows(X) @ np.random.normal(0, 1, (X.shape[1], k))
    return Z + np.random.laplace(0, 2.0 / epsilon, Z.shape)
""",
        # ordinary training: the best validation loss tracked by comparison (no record norm)
        """
import numpy as np
def train(model, Xtrain, ytrain, epochs, noise_multiplier):
    best = np.inf
    for epoch in range(epochs):
        loss = model.step(Xtrain, ytrain, noise_multiplier)
        if loss < best:
            best = loss
    return best
""",
        # twin: the metadata's column bounds come from the public schema
        """
import pandas as pd
def build_metadata(df, schema, epsilon):
    meta = {"epsilon": epsilon, "columns": []}
    for c in df.columns:
        lo, hi = schema[c]["lower"], schema[c]["upper"]
        meta["columns"].append({"name": c, "bounds": [{"key": "lower", "value": lo}, {"key": "upper", "value": hi}]})
    return meta
""",
        # an experiment's results row keeps the true maximum next to the DP estimate to score it
        """
import numpy as np
def run_trial(df, epsilon, results):
    truth = df["age"].max()
    est = dp_max(df["age"], epsilon, lower=0, upper=120)
    results.append({"max": truth, "dp_max": est, "error": abs(est - truth)})
    return results
""",
        # (QC b77) the labels' values read only to refuse non-binary input: nothing is encoded with them
    """
import numpy as np
class PrivateLogit:
    def __init__(self, epsilon, clip=1.0, steps=100):
        self.epsilon, self.clip, self.steps = epsilon, clip, steps
    def fit(self, X, y):
        if set(np.unique(y)) - {0, 1}:
            raise ValueError("labels must be 0/1")
        self.w = np.zeros(X.shape[1])
        for _ in range(self.steps):
            g = X.T @ (1 / (1 + np.exp(-X @ self.w)) - y) / len(y)
            g = g / max(1.0, np.linalg.norm(g) / self.clip)
            self.w -= 0.1 * (g + np.random.laplace(0, self.clip / self.epsilon, g.shape))
        return self
""",
        # (QC b77) a membership-inference attack's own scaler/classifier, trained to score a released model
    """
import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.linear_model import LogisticRegression
def run_shadow_attack(target_model, X_train, y_train, X_test, epsilon):
    attack = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression())])
    attack.fit(X_train, y_train)
    scores = attack.predict_proba(X_test)[:, 1]
    return {"epsilon": epsilon, "auc": float(np.mean(scores))}
""",
    """
from sklearn.preprocessing import StandardScaler
from diffprivlib.models import LogisticRegression
def train_shadow_attack_model(X_train, y_train, epsilon):
    X = StandardScaler().fit_transform(X_train)
    return LogisticRegression(epsilon=epsilon, data_norm=1.0).fit(X, y_train)
""",
        # ordinary ML: a classifier refusing a single-class target
    """
import numpy as np
from sklearn.linear_model import LogisticRegression
def fit(X, y):
    if len(np.unique(y)) < 2:
        raise ValueError("need two classes")
    return LogisticRegression().fit(X, y)
""",
        # (S2 b96) the generated table tidied after the DP step (`_post_process`): its own median fills gaps; post-processing
        """
import numpy as np
import pandas as pd
class DPSynthesizer:
    def __init__(self, epsilon, bounds):
        self.epsilon = epsilon
        self.bounds = bounds
    def generate(self, records):
        table = records[list(self.bounds)].clip(lower=[b[0] for b in self.bounds.values()],
                                                upper=[b[1] for b in self.bounds.values()], axis=1)
        for c, (lo, hi) in self.bounds.items():
            table[c] = table[c] + np.random.laplace(0, (hi - lo) / self.epsilon, len(table))
        return self._post_process(table)
    def _post_process(self, table):
        for c in self.bounds:
            table[c] = pd.to_numeric(table[c], errors="coerce")
            table[c] = table[c].fillna(table[c].median()).round()
        return table
""",
        # (S2 b96) the wrapper's fit_transform applies an encoder fitted just before on the same data: the encoder's fit is the site
        """
from tablekit.encoding import ColumnEncoder, DataTransformer
class Forge:
    def __init__(self, data, epsilon):
        self.data = data
        self.epsilon = epsilon
    def fit(self):
        self.encoder = ColumnEncoder()
        self.encoder.fit(self.data)
        self.transformer = DataTransformer()
        encoded = self.transformer.fit_transform(self.data, self.encoder)
        return encoded
""",
        # ordinary ML: a classifier's predictions thresholded at their median in a post-processing helper
        """
import numpy as np
def postprocess_predictions(logits, threshold=None):
    probs = 1.0 / (1.0 + np.exp(-logits))
    cut = np.median(probs) if threshold is None else threshold
    return (probs >= cut).astype(int)
def train(model, X, y, epsilon=1e-8):
    scores = model.fit(X, y).decision_function(X)
    return postprocess_predictions(scores / (np.abs(scores).max() + epsilon))
""",
    ) + _ROLE_VALID

    INVALID = (
        # (R1 b86) twin of the dead arm: a caller asks for the min-max option
    """
'''Loader for DP-SGD training.'''
import numpy as np
def rescale(data, mode):
    if mode == "range":
        lo, hi = data.min(axis=0), data.max(axis=0)  # <-
        data = (data - lo) / (hi - lo + 1e-8)
    return data
def load(path, clip, noise_multiplier):
    mode = "range"
    X = np.load(path)
    X = rescale(X, mode)
    return X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / clip)
""",
        # (R1 b93) the first fit reads the raw column (reported); the refits read the codes it wrote
        # (the identity map, quiet); a fit of another raw column is reported again
    """
import pandas as pd
from sklearn.preprocessing import LabelEncoder
from diffprivlib.models import GaussianNB
def train(df, epsilon):
    enc = LabelEncoder()
    df["father"] = enc.fit_transform(df["father"])  # <-
    df["maternal"] = enc.fit_transform(df["father"])
    df["paternal"] = enc.fit_transform(df["father"])
    df["mother"] = enc.fit_transform(df["mother"])  # <-
    return GaussianNB(epsilon=epsilon).fit(df[["father", "maternal", "mother"]], df["y"])
""",
        # (R1 b94) twin of the ids: the encoded column is a protected attribute
    """
import numpy as np
from sklearn.preprocessing import LabelEncoder
def ldp_ratings(df, epsilon):
    cities = LabelEncoder()
    df["c"] = cities.fit_transform(df["home_city"])  # <-
    df["r"] = df["rating"].clip(1, 5) + np.random.laplace(0, 4.0 / epsilon, len(df))
    return df
""",
        # (QC b77) twin of the guard: the branch re-encodes the labels with the values it read
    """
import numpy as np
class PrivateLogit:
    def __init__(self, epsilon, clip=1.0, steps=100):
        self.epsilon, self.clip, self.steps = epsilon, clip, steps
    def fit(self, X, y):
        if set(np.unique(y)) - {0, 1}:  # <-
            y = (y == max(np.unique(y))).astype(float)
        self.w = np.zeros(X.shape[1])
        for _ in range(self.steps):
            g = X.T @ (1 / (1 + np.exp(-X @ self.w)) - y) / len(y)
            g = g / max(1.0, np.linalg.norm(g) / self.clip)
            self.w -= 0.1 * (g + np.random.laplace(0, self.clip / self.epsilon, g.shape))
        return self
""",
        # (QC b77) twin of the attack scope: the same scaler before a DP release
    """
from sklearn.preprocessing import StandardScaler
from diffprivlib.models import LogisticRegression
def train_release(X_train, y_train, epsilon):
    X = StandardScaler().fit_transform(X_train)  # <-
    return LogisticRegression(epsilon=epsilon, data_norm=1.0).fit(X, y_train)
""",
        # (q3 h46) the filled ``limits`` in a library module: an importer may call ``perturb`` without them
    """
import numpy as np
def perturb(X, mult, limits=None):
    out = X.astype(float)
    for j in range(X.shape[1]):
        if limits is not None:
            width = limits[j][1] - limits[j][0]
        else:
            width = np.max(X[:, j]) - np.min(X[:, j])  # <-
        out[:, j] += np.random.laplace(0.0, mult * width, size=len(X))
    return out
def release(X, epsilon, schema):
    limits = [(schema[c]["lo"], schema[c]["hi"]) for c in range(X.shape[1])]
    return perturb(np.clip(X, 0, 1), 1.0 / epsilon, limits)
""",
        # (q3 h46) twin of the filled ``limits``: one caller leaves them out, so the data-range fallback runs
    """
import numpy as np
def perturb(X, mult, limits=None):
    out = X.astype(float)
    for j in range(X.shape[1]):
        if limits is not None:
            width = limits[j][1] - limits[j][0]
        else:
            width = np.max(X[:, j]) - np.min(X[:, j])  # <-
        out[:, j] += np.random.laplace(0.0, mult * width, size=len(X))
    return out
def release(X, epsilon, schema):
    limits = [(schema[c]["lo"], schema[c]["hi"]) for c in range(X.shape[1])]
    return perturb(np.clip(X, 0, 1), 1.0 / epsilon, limits)
def release_quick(X, epsilon):
    return perturb(X, 1.0 / epsilon)
if __name__ == "__main__":
    print(release_quick(np.random.rand(10, 2), 1.0))
""",
        # (h43-p) twin: the range comes from a config that may lack it, so the fallback may read the data
        """
import numpy as np
def _release_range(x, epsilon, bounds=None):
    if bounds is None:
        hi = np.max(x)  # <-
    else:
        hi = bounds[1]
    return np.clip(x, 0, hi) + np.random.laplace(0, hi / epsilon, len(x))
def run(x, epsilon, cfg):
    return _release_range(x, epsilon, bounds=cfg.get("bounds"))
""",
        # (g2 h40) twins: the share is released; the exact maximum in the budgeted branch (the project
        # flow's twin -- a plain KMeans fitted whatever the budget vs. DP_KMeans(epsilon=...) with KMeans only
        # under epsilon=None -- is not an in-file case: ``preprocessing._built_with_budget``)
        """
import numpy as np
def encode_cases(df, epsilon):
    total = df["case"].nunique()  # <-
    rows = []
    for i, (_, g) in enumerate(df.groupby("case"), 1):
        share = len(g) / total
        print(f"case {i}")
        rows.append(share + np.random.laplace(0, 1 / epsilon))
    return rows
""",
        """
import numpy as np
def release_range(x, epsilon):
    if epsilon is not None:
        hi = np.max(x)  # <-
    else:
        hi = 1.0
    return np.clip(x, 0, hi) + np.random.laplace(0, hi / (epsilon or 1.0), len(x))
""",
        # (g37-4) twin of the results-table field: the records' maximum is a field of the release's settings
        """
import numpy as np
def run(records, epsilon):
    return release_mean(records, **{"lower": 0.0, "upper": np.max(records)}, epsilon=epsilon)  # <-
""",
        # its twin releases estimates for exactly the values present in the private column
        """
import numpy as np
def release_frequencies(data_column, epsilon):
    data_values = np.sort(data_column.unique())  # <-
    sketch = build_sketch(data_column, epsilon)
    return {v: sketch.estimate(v) for v in data_values}
""",
        # the column bounds registered for the DP engine are the table's own extremes
        """
import pandas as pd
def register(path, epsilon=1.0):
    df = pd.read_csv(path)
    return [ColumnSpec(name=c, lower=df[c].min(), upper=df[c].max()) for c in df.columns]  # <-
""",
        # the same function trains the DP model: the scaler is fitted on what the release is trained on
        """
from sklearn.preprocessing import StandardScaler
from opacus import PrivacyEngine
def evaluate_utility(real_data, syn_data, make_model, noise_multiplier):
    x_real = StandardScaler().fit_transform(real_data)  # <-
    x_syn = StandardScaler().fit_transform(syn_data)
    model = PrivacyEngine().make_private(make_model(), noise_multiplier=noise_multiplier)
    return model.fit(x_real).score(x_syn)
""",
        # the data's own extremes handed to the mechanism together with its budget
        """
import numpy as np
def release_mean(values, lower, upper, epsilon):
    clipped = np.clip(values, lower, upper)
    return clipped.mean() + np.random.laplace(0, (upper - lower) / (epsilon * len(values)))
def run(records, epsilon):
    return release_mean(records, np.min(records), np.max(records), epsilon)  # <-
""",
        # torch spelling through names: ``lo, hi`` hold the tensor's extremes
        """
import torch
def run(data, epsilon):
    lo, hi = data.min().item(), data.max().item()  # <-
    return bounded_sum(data, lo, hi, epsilon=epsilon)
""",
        # a loader of an LDP experiment that maps the incomes to [-1, 1] with their own extremes
        """
import pandas as pd
def load_incomes(path):
    frame = pd.read_csv(path)
    datalist = list(frame["income"])
    hi, lo = max(datalist), min(datalist)  # <-
    return [2 * (v - lo) / (hi - lo) - 1 for v in datalist]
def main(epsilon):
    return [piecewise(v, epsilon) for v in load_incomes("x.csv")]
""",
        # the noisy histogram's edges span the records' extremes and the synthetic points are drawn in them
        """
import numpy as np
def synthesize(records, epsilon, n):
    counts, edges = np.histogram(records, bins=20)  # <-
    noisy = np.clip(counts + np.random.laplace(0, 1 / epsilon, counts.shape), 0, None)
    cells = np.random.choice(len(noisy), size=n, p=noisy / noisy.sum())
    return np.random.uniform(edges[cells], edges[cells + 1])
""",
        # synthetic points sampled from a histogram of the records with data-spanned edges
        """
import numpy as np
from scipy import stats
def release(database, epsilon, k):
    weights = perturb_weights(len(database), epsilon)
    dist = stats.rv_histogram(np.histogram(database, bins=30, weights=weights))  # <-
    return dist.rvs(size=k)
""",
        # the rows are scaled into the unit ball by the largest private row norm
        """
import numpy as np
def grid_centres(data, epsilon):
    largest = np.max(np.sqrt(np.square(data).sum(axis=1)))  # <-
    data = np.divide(data, largest)
    return grid_mechanism(data, epsilon)
""",
        # DataSynthesizer's greedy_bayes: the private distinct counts pick the exponential
        # mechanism's sensitivity, whose scores then weight the draw (a noise scale, not a split)
        """
import numpy as np
def greedy_bayes(dataset, k, epsilon):
    attr_to_is_binary = {attr: dataset[attr].unique().size <= 2 for attr in dataset}  # <-
    pairs, scores = candidates(dataset, k)
    dist = exponential_mechanism(epsilon, scores, pairs, attr_to_is_binary)
    idx = np.random.choice(list(range(len(scores))), p=dist)
    return pairs[idx]
class PrivBayes:
    def fit(self, data, epsilon=1.0):
        self.network = greedy_bayes(data, 2, epsilon)
""",
        # the same agent split, but the range-derived centres are also kept as the released grid
        """
import numpy as np
class DPFederation:
    def allocate_data_to_agents(self, epsilon=1.0):
        means = np.linspace(np.min(self.data_train[["age"]].values),  # <-
                            np.max(self.data_train[["age"]].values), self.n_agents + 2)[1:-1]  # <-
        for index, row in self.data_train.iterrows():
            Pr = to_probability(1 / (abs(row["age"] - means) + 1e-6))
            i = np.random.choice(range(self.n_agents), p=Pr)
        return means
""",
        # a __main__ run whose label encoder decodes the synthetic codes back to the private classes
        """
import pandas as pd
from sklearn import preprocessing
def diff_gen(data, eps):
    return dp_synthesize(data, epsilon=eps)
if __name__ == "__main__":
    data = pd.read_csv("patients.csv")
    lb_make = preprocessing.LabelEncoder()
    data.loc[:, "diagnosis"] = lb_make.fit_transform(data["diagnosis"])  # <-
    private_data = diff_gen(data=data, eps=0.5)
    private_data["diagnosis"] = lb_make.inverse_transform(private_data["diagnosis"])
""",
        # a local randomiser whose Laplace scale is the user's own quantile range
        """
import numpy as np
class LaplaceLDP:
    def encode(self, data, eps=0.5):
        up, low = np.quantile(data, 0.995), np.quantile(data, 0.005)  # <-
        sensitivity = up - low
        data = np.clip(data, low, up)
        noise = self.random_.laplace(0, data.size * sensitivity / eps, size=np.shape(data))
        return data + noise
""",
        # median imputation of the private columns before DP training (DP-MERF's spelling)
        """
import pandas as pd
def main(dataset, epsilon=1.0):
    df = pd.read_csv("cervical.csv")
    for feature in ["Age", "Number of sexual partners"]:
        feature_mean = round(df[feature].median(), 1)  # <-
        df[feature] = df[feature].fillna(feature_mean)
    return train_dp_generator(df, epsilon)
""",
        # the per-subject shape, but the helper runs once over the whole table of subjects
        """
import numpy as np
def series_matrix(frame, columns):
    vals = frame[columns].ffill()
    for c in columns:
        col = vals[c]
        vals[c] = col.fillna(col.median())  # <-
    return vals.values
def train_dp_generator(paths, columns, epsilon):
    rows = []
    for path in paths:
        rows.append(read_subject(path))
    table = concat_subjects(rows)
    data = series_matrix(table, columns)
    return fit_dp_gan(data, epsilon)
""",
        # mapped over groups, but the median is of the whole table read inside the helper
        """
import pandas as pd
TABLE = pd.read_csv("patients.csv")
def impute_user(user_df):
    filled = user_df.copy()
    for name in filled.columns:
        filled[name] = filled[name].fillna(TABLE[name].median())  # <-
    return filled
def private_synth(table, epsilon):
    parts = []
    for uid, group in table.groupby("user"):
        cleaned = impute_user(group)
        parts.append(cleaned)
    return dp_synthesizer(pd.concat(parts), epsilon)
""",
        # the twin releases noisy counts for exactly the speeds present in the traces
        """
import numpy as np
import pandas as pd
def load_traces(frames, epsilon):
    data = pd.concat(frames)
    speeds = np.array(pd.unique(data["speed"].values))  # <-
    return {v: (data["speed"] == v).sum() + np.random.laplace(0, 1 / epsilon) for v in speeds}
""",
        # its twin binds the table first: the domain is the private column's own values
        """
import numpy as np
class PrivateSketchServer:
    def __init__(self, epsilon, width, df):
        self.epsilon = epsilon
        self.df = df
        self.domain = self.df["value"].unique().tolist()  # <-
        self.table = np.zeros((len(self.domain), width))
    def estimate(self, value):
        return self.table[self.domain.index(value)] + np.random.laplace(0, 1 / self.epsilon)
""",
        # the same, inline and with numpy
        """
import numpy as np
class DPSynth:
    def fit(self, X, epsilon=1.0):
        X = np.where(np.isnan(X), 0, X)
        self.data = self.data_frame.fillna(self.data_frame.median())  # <-
        return self
""",
        # CTGAN's DataTransformer fitted on the private table: its modes and category lists decode
        # the synthetic output and size the generator
        """
from ctgan.data_transformer import DataTransformer
class DPCTGAN:
    def fit(self, train_data, discrete_columns=(), noise_multiplier=1.0, max_grad_norm=1.0):
        self._transformer = DataTransformer()
        self._transformer.fit(train_data, discrete_columns)  # <-
        data_dim = self._transformer.output_dimensions
        return self._train(self._transformer.transform(train_data), data_dim, noise_multiplier)
""",
        # the same private attribute, read when the network is built
        """
class PrivBayes:
    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon
    def fit(self, X):
        self._binary_columns = [c for c in X.columns if X[c].unique().size <= 2]  # <-
        return self._greedy_bayes(X, self.epsilon)
    def _greedy_bayes(self, X, epsilon):
        return [c for c in X.columns if c not in self._binary_columns]
""",
        # the same tree partitioned on the private data itself
        _PARTITION_TREE.format(mark="  # <-", args="X, Y"),
        # the same normalisation of real records read from a file
        """
import numpy as np
import pandas as pd
def load_data(path, dim):
    '''Real train data for the PATE-GAN experiment.'''
    train_data = pd.read_csv(path).to_numpy()
    for i in range(dim + 1):
        train_data[:, i] = train_data[:, i] - np.min(train_data[:, i])  # <-
        train_data[:, i] = train_data[:, i] / (np.max(train_data[:, i]) + 1e-8)  # <-
    return train_data
""",
        # the evaluation module's encoder fitted before the release encodes the DP model's input
        """
from sklearn.preprocessing import OrdinalEncoder
from sklearn.metrics import accuracy_score
def crossval(data, train, test, labels, epsilon):
    encoder = OrdinalEncoder().fit(data)  # <-
    synth = dp_synthesizer(encoder.transform(train), epsilon=epsilon)
    clf = fit_classifier(synth, labels)
    return accuracy_score(labels, clf.predict(encoder.transform(test)))
""",
        # ornl-presto: a sensitivity read off the private data and returned as such
        """
import numpy as np
def calculate_sensitivity(data, query_type="sum", global_sensitivity=None):
    if global_sensitivity is not None:
        return global_sensitivity
    if query_type == "sum":
        return np.max(np.abs(data))  # <-
    return 1.0
def fit(data, epsilon):
    return np.sum(data) + np.random.laplace(0, calculate_sensitivity(data) / epsilon)
""",
        # a public ``fit`` stays a training entry point even when this module also calls it on
        # public data: users call it with theirs
        """
import numpy as np
class Scaler:
    '''Differentially private scaler.'''
    def __init__(self, epsilon=1.0, public_X=None):
        self.epsilon, self.public_X = epsilon, public_X
    def warm_start(self):
        return self.fit(self.public_X)
    def fit(self, X):
        lo, hi = X.min(axis=0), X.max(axis=0)  # <-
        self.scale = (hi - lo) / self.epsilon
        return (X - lo) / (hi - lo) + np.random.laplace(0, self.scale)
""",
        # original: min/max of the training data in the PATE-GAN function
        """
import numpy as np
def PATE_GAN(X_train, Y_train, epsilon, delta, niter, num_teachers):
    Min_Val = np.min(X_train, 0)  # <-
    X_train = X_train - Min_Val
    Max_Val = np.max(X_train, 0)  # <-
    X_train = X_train / (Max_Val + 1e-8)
""",
        # synthcity-style encoder storing data bounds on self
        """
class TabularEncoder:
    '''Scaling for the PATE-GAN plugin (differentially private).'''
    def fit(self, X):
        self.min_ = X.min(axis=0)  # <-
        self.max_ = X.max(axis=0)  # <-
        return self
    def transform(self, X):
        return 2 * (X - self.min_) / (self.max_ - self.min_) - 1
""",
        # borealis driver: sklearn MinMaxScaler fitted on the training data
        """
'''private-data-generation: evaluate driver.'''
from sklearn.preprocessing import MinMaxScaler
def preprocess(x_train):
    scaler = MinMaxScaler()
    x_scaled = scaler.fit_transform(x_train)  # <-
    return x_scaled, scaler
""",
        # torch, inline bounds in the scaling expression
        """
import torch
def fit(self, data, epsilon, delta):
    data = (data - data.amin(0)) / (data.amax(0) - data.amin(0))  # <-
    self.train(data)
""",
        # quantile clipping from the data in a DP-SGD pipeline
        """
import numpy as np
def prepare(features, noise_multiplier):
    '''DP-SGD on clipped features; privacy accounting below.'''
    hi = np.percentile(features, 99, axis=0)  # <-
    return np.clip(features, 0, hi)
""",
        # the twin of the measuring VALID case: the same domain encodes the DP-SGD training data
        """
from opacus import PrivacyEngine
def train(df, noise_multiplier, max_grad_norm):
    engine = PrivacyEngine()
    def prepare_and_save(model):
        items = sorted(df["item"].unique())  # <-
        codes = {item: i for i, item in enumerate(items)}
        return model.rank(codes)
    return prepare_and_save
""",
        # categories read from the private data to one-hot encode it
        """
import pandas as pd
class PATEGAN:
    def fit(self, df, epsilon=1.0, delta=1e-5):
        self.categories = {c: sorted(df[c].unique()) for c in self.cat_cols}  # <-
        encoded = pd.get_dummies(df, columns=self.cat_cols)
""",
        # from-import spelling, builtin tuple unpack
        """
from numpy import amin, amax
def pategan(real_data, epsilon, delta):
    lo, hi = amin(real_data, axis=0), amax(real_data, axis=0)  # <-
    scaled = (real_data - lo) / (hi - lo)
""",
        # bounds of the regression target read from the data (diffprivlib-style, no warning)
        """
import numpy as np
class DPLinearRegression:
    def fit(self, X, y, epsilon=1.0):
        if self.bounds_y is None:
            self.bounds_y = (np.min(y, axis=0), np.max(y, axis=0))  # <-
        y_lo, y_hi = y.min(), y.max()  # <-
        y = (y - y_lo) / (y_hi - y_lo)
        span = np.ptp(y)  # <-
        return y / span
""",
        # target scaled by a fitted scaler / clipped by its own range (torch spelling)
        """
import torch
from sklearn.preprocessing import MinMaxScaler
def train(features, target, noise_multiplier, max_grad_norm):
    y_scaled = MinMaxScaler().fit_transform(target.reshape(-1, 1))  # <-
    t = torch.clamp(target, target.amin(), target.amax())  # <-
    return y_scaled, t
""",
        # category encoders fitted on the private columns inside fit
        """
from sklearn.preprocessing import LabelEncoder, OneHotEncoder, OrdinalEncoder
class DPSynthesizer:
    def fit(self, data, epsilon, delta):
        self.encoders = {c: LabelEncoder().fit(data[c]) for c in self.categorical}  # <-
        self.onehot = OneHotEncoder(handle_unknown="ignore")
        self.onehot.fit(data[self.categorical])  # <-
        codes = OrdinalEncoder().fit_transform(data)  # <-
        return codes
""",
        # bins derived from the data: pd.cut with a bin count, qcut, KBinsDiscretizer, StandardScaler
        """
'''Differentially private marginals.'''
import pandas as pd
from sklearn.preprocessing import KBinsDiscretizer, StandardScaler
def preprocess(df, epsilon=1.0):
    df["age"] = pd.cut(df["age"], bins=10, labels=False)  # <-
    df["income"] = pd.qcut(df["income"], q=4, labels=False)  # <-
    binned = KBinsDiscretizer(n_bins=8, encode="ordinal").fit_transform(df[["hours"]])  # <-
    standard = StandardScaler().fit(df[["weight"]])  # <-
    return df, binned, standard
""",
        # the domain size of each column read from the private data (nunique/unique as the domain)
        """
import numpy as np
class MarginalSynth:
    def fit(self, df, epsilon):
        self.domain = {c: df[c].nunique() for c in df.columns}  # <-
        k = df["city"].nunique()  # <-
        onehot = np.eye(k)[df["city"].cat.codes]
        self.levels = sorted(df["job"].unique())  # <-
        return onehot
""",
        # the domain of every column taken as max+1 of the private frame when none is given
        """
class MarginalModel:
    def fit(self, df, epsilon, public=False):
        if self._domain is None:
            dom = (df.astype(int).max(axis=0) + 1).to_dict()  # <-
        return Domain(list(df.columns), [dom[c] for c in df.columns])
""",
        # histogram bins from builtin min/max of each private column, offsets kept for sampling
        """
import numpy as np
class MWEMLike:
    def fit(self, data, epsilon):
        bins = []
        for column in data.T:
            low, high = min(column), max(column)  # <-
            bins.append(int(high - low + 1))
            self.offsets.append(low)
        return np.histogramdd(data, bins=bins)
""",
        # data-dependent choices inside a mechanism: sensitivity from a distinct count, score bins
        """
import pandas as pd
class PrivBayesLike:
    def fit(self, data, epsilon):
        return self.sensitivity(data, "age", epsilon), self.score(data, ["sex"], "age", epsilon)
    def sensitivity(self, data, child, epsilon):
        binary = {a: data[a].unique().size <= 2 for a in data}  # <-
        return 1.0 / len(data) if binary[child] else 2.0 / len(data)
    def score(self, data, parents, candidate, epsilon):
        binned, edges = pd.cut(data[candidate], bins=self.n_bins, retbins=True)  # <-
        return mutual_information(data[parents], binned)
""",
        # a mode-specific normaliser (Gaussian mixture) fitted on the private continuous column
        """
from sklearn.mixture import BayesianGaussianMixture
class DPCGANTransformer:
    def _fit_continuous(self, data, epsilon):
        gm = BayesianGaussianMixture(n_components=10, weight_concentration_prior=1e-3)
        gm.fit(data[self.column].to_numpy().reshape(-1, 1))  # <-
        self.means = gm.means_
""",
        # the twin rescales the training column itself by its own extremes before the DP release
        # (the same shape as the scores above, but the values are records, not a model's outputs)
        """
import numpy as np
from snsynth import Synthesizer
def release_scaled(train_df, col, epsilon):
    raw = np.asarray(train_df[col])
    scaled = (raw - raw.min()) / (raw.max() - raw.min() + 1e-12)  # <-
    synth = Synthesizer.create("mst", epsilon=epsilon)
    return synth.fit_sample(scaled)
""",
        # the twin's ``fit_transform`` delegates to ``fit``, so ``fit`` is the live path
        """
import numpy as np
class PrivateBinner:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def fit(self, data):
        counts, edges = np.histogram(data[:, 0], bins=100)  # <-
        self.edges = edges
        return self
    def fit_transform(self, data):
        self.fit(data)
        counts, edges = np.histogram(np.clip(data[:, 0], 0, 1), bins=100, range=(0, 1))
        noisy = counts + np.random.laplace(0, 1 / self.epsilon, len(counts))
        return np.digitize(data[:, 0], self.edges), noisy
""",
        # the synthetic rows are clipped to each training column's maximum after sampling
        """
import numpy as np
def fit_private_model(train_df, measurements, engine, n_rows, epsilon):
    model = engine.estimate(measurements, epsilon)
    synth_df = model.synthetic_data(rows=n_rows).df
    for col in train_df.columns:
        top = int(train_df[col].max())  # <-
        synth_df[col] = synth_df[col].round().clip(0, top)
    return synth_df
""",
        # the noisy counts are clipped at the oldest age present in the data
        """
import numpy as np
def dp_histogram(records, epsilon):
    counts = np.bincount(records, minlength=120)
    noisy = counts + np.random.laplace(0, 1 / epsilon, size=120)
    return np.clip(noisy, 0, records.max())  # <-
""",
        # the generator's output is clamped to the training tensor's extremes
        """
import torch
def dp_generate(generator, train, n, epsilon):
    generated = generator(torch.randn(n, 16))
    return torch.clamp(generated, min=train.min(), max=train.max())  # <-
""",
        # transformers held per column in a dict attribute (``self.encoders[col]``), chosen by a conditional
        # expression, or built by a module factory (``make_preprocessor()`` returning a ColumnTransformer or
        # a pipeline with a scaler step): each is fitted on the private table the DP model trains on
        """
'''DP tabular diffusion (Opacus DP-SGD).'''
import pandas as pd
from sklearn.preprocessing import OneHotEncoder, QuantileTransformer, LabelBinarizer, MinMaxScaler
class DPTableModel:
    def fit(self, df, discrete, epsilon, noise_multiplier):
        self.enc, self.qt = {}, {}
        for col in df.columns:
            if col in discrete:
                self.enc[col] = OneHotEncoder(handle_unknown="ignore")
                codes = self.enc[col].fit_transform(df[[col]])  # <-
            else:
                self.qt[col] = QuantileTransformer()
                codes = self.qt[col].fit_transform(df[[col]])  # <-
        for i, col in enumerate(df.columns):
            step = LabelBinarizer() if col in discrete else MinMaxScaler()
            step.fit(df[col].to_numpy().reshape(-1, 1))  # <-
        return codes
""",
        """
'''Train a DP-VAE (Opacus) and release decoded synthetic rows.'''
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
def build_columns(cats, nums):
    return ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), cats), ("n", StandardScaler(), nums)])
def build_numeric():
    scale = StandardScaler()
    return make_pipeline(scale)
def main(train_df, cats, nums, epsilon, noise_multiplier):
    pre = build_columns(cats, nums)
    x = pre.fit_transform(train_df)  # <-
    num = build_numeric().fit(train_df[nums])  # <-
    return x, num
""",
        # (t1) the largest |y| and the largest record norm of the private data divide the data in place
        """
import numpy as np
def load_regression(X, y_train, y_test, target_epsilon, delta):
    y_max = np.max(np.abs(y_train))  # <-
    y_train /= y_max
    y_test /= y_max
    x_scale = np.linalg.norm(X, axis=1).max()  # <-
    X /= x_scale
    return X, y_train, y_test
""",
        # (g1) the twin of the error field in VALID: the exact quantile clips the released estimate
        """
import numpy as np
def release_quantiles(x, qs, epsilon):
    table = []
    for q in qs:
        rec = {}
        est = private_quantile(x, q, epsilon, lower=0.0, upper=1.0)
        rec["estimate"] = np.clip(est, 0.0, np.quantile(x, 0.99))  # <-
        table.append(rec)
    return table
""",
        # the split feature matrix ``Xtrain`` divided by its largest row norm before the noisy release
        """
import numpy as np
def unit_ball(Xtrain, epsilon):
    top = np.max(np.linalg.norm(Xtrain, axis=1))  # <-
    Xtrain = Xtrain / top
    return Xtrain.sum(axis=0) + np.random.laplace(0, 1.0 / epsilon, Xtrain.shape[1])
""",
        # the column bounds written into the DP engine's metadata are exact quantiles of the private table
        """
import numpy as np
import pandas as pd
def build_metadata(df, epsilon):
    meta = {"epsilon": epsilon, "columns": []}
    for c in df.columns:
        lo = float(df[c].quantile(np.random.uniform(0.01, 0.05)))  # <-
        hi = float(df[c].quantile(0.99))  # <-
        meta["columns"].append({"name": c, "bounds": [{"key": "lower", "value": lo}, {"key": "upper", "value": hi}]})
    return meta
""",
        # (S2 b96) twin of the post-processing fill: the median fills the records' gaps before the noisy release
        """
import numpy as np
import pandas as pd
class DPSynthesizer:
    def __init__(self, epsilon, bounds):
        self.epsilon = epsilon
        self.bounds = bounds
    def generate(self, records):
        records = self._prepare(records)
        table = records[list(self.bounds)].clip(lower=[b[0] for b in self.bounds.values()],
                                                upper=[b[1] for b in self.bounds.values()], axis=1)
        for c, (lo, hi) in self.bounds.items():
            table[c] = table[c] + np.random.laplace(0, (hi - lo) / self.epsilon, len(table))
        return table
    def _prepare(self, records):
        for c in self.bounds:
            records[c] = pd.to_numeric(records[c], errors="coerce")
            records[c] = records[c].fillna(records[c].median())  # <-
        return records
""",
        # (S2 b96) twin of the applied encoder: the encoder was fitted on another table, so the wrapper's fit learns from the records
        """
from tablekit.encoding import ColumnEncoder, DataTransformer
class Forge:
    def __init__(self, data, epsilon):
        self.data = data
        self.epsilon = epsilon
    def fit(self, reference):
        self.encoder = ColumnEncoder()
        self.encoder.fit(reference)
        self.transformer = DataTransformer()
        encoded = self.transformer.fit_transform(self.data, self.encoder)  # <-
        return encoded
""",
    ) + _ROLE_INVALID

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a call ``_bound_data`` returns data for (``_ast_bound_data``) where that
        data is named like data or a target."""
        fitted: set[str] | None = None
        imputes: bool | None = None
        for call in facts.calls:
            name = ast_call_name(call)
            if name in _MEDIANS:
                if imputes is None:
                    imputes = any(ast_call_name(c) in _IMPUTE_CALLS for c in facts.calls)
                if imputes:
                    return True
                continue
            if not (name in _SCALE_FUNCS or name == "cut" or name in _BOUND_FUNCS or name in _BOUND_METHODS
                    or name in _FIT and isinstance(call.func, ast.Attribute) or name in _HIST_FUNCS):
                continue
            if fitted is None:
                fitted = _ast_fitted_names(facts)
            for data in _ast_bound_data(facts, call, fitted):
                root = _ast_data_root(data)
                if not (_data_named(root) or _target_named(root)):
                    continue
                if name in _FIT | _SCALE_FUNCS | _HIST_FUNCS | {"cut"} or _ast_may_scale(facts, call):
                    return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        analysis = self.ctx.analysis
        if not analysis.has_dp_code():
            return
        index = index_for(self.ctx)
        fitted = _fitted_names(index)
        # a module naming a DP generator is DP code throughout and its data-named values are its
        # training data, helpers included; elsewhere the data must be private by the core's flow
        claimed = analysis.dp_generator_named() is not None
        evaluation = evaluation_module(node)
        outputs: dict[int, dp_output.Released] = {}
        tree = self.ctx.python_tree()
        dead = preprocessing.dead_dispatch_lines(tree) if tree is not None else set()
        for call in index.calls:
            if dead and self._line(call) in dead:
                continue  # (R1 b86) an arm ``if kind == "minmax":`` every caller here skips
            if call_name(call) in _MEDIANS:
                self._median_fill(call, index, claimed)
                continue
            data = self._bound_data(call, index, fitted)
            if data is None:
                continue
            target = _is_target(data)
            if not (target or _is_data(data)) or _over_mapping(data, index) or _identifiers(call, data):
                continue
            if (_dp_estimated(call, index) and not _clips_release(call, index)) or _numeric_shift(call, index) \
                    or _drawing(call, index):
                continue
            if self._releases_nothing(call, data, index, evaluation) or _unused_or_printed(call, index):
                continue
            if _raise_guard(call, index) or attack_scope(index.enclosing_function(call), self.ctx.path):
                continue  # a check that raises on unexpected labels; a membership-inference attack's own fit
            if nonrelease.results_record(call, index.ancestors(call)):
                continue  # (g37-4) a field of a results table (an attack's best calibration score)
            if scored_truth(_assignment_of(call, index), call, index.enclosing_function(call) or index.module):
                continue  # (g1) the exact answer kept to score the release's error against
            fits = call_name(call) in _FIT | _SCALE_FUNCS | _HIST_FUNCS | {"cut"}
            if target and not (_scales(call, fitted) if fits else _scales_target(call, index)):
                continue
            if not fits and not _used_for_scaling(call, index):
                continue
            if not fits and _only_weights_a_draw(call, index):
                continue
            if fits and _demo_label_codes(call, index, fitted):
                continue
            if fits and (_recoded_column(call, index, fitted) or _identifier_codes(call, data, fitted)):
                continue  # (R1 b93/b94) an encoder refit on codes it wrote (identity); ids mapped to row indices
            if fits and _applies_fitted_encoder(call, data, index):
                continue  # (S2 b96) ``transformer.fit_transform(df, encoder)`` after ``encoder.fit(df)``: the encoder learnt
            own_scale = False
            if not (claimed or analysis.is_private(data) or _handed_to_mechanism(call, index)
                    or _loaded_here(call, data, index)
                    or _mechanism_input(call, data, index)):
                own_scale = _scales_own_noise(call, data, index)
                if not own_scale:
                    continue
            root = _data_root(data)
            if root is not None and analysis.public_parameter(call, root):
                continue
            if self._post_processed(data, outputs):
                continue  # (h45-p) fitted on what a mechanism released (a noisy sample): post-processing
            if bypassed_fallback(self.ctx.module, call):
                continue  # (q3 h46) the no-bounds fallback every caller here bypasses by passing bounds
            if own_scale:
                self.report(
                    call,
                    f"{self._what(call)} of `{self.ctx.module.code_for_node(data)}` sets the scale (or "
                    "range) of the noise this function adds to that same input: the noise is calibrated "
                    "to the private value it should hide, so the output reveals it (a user's own "
                    "quantiles or maximum in a local randomiser); calibrate to public bounds and clip to them",
                )
                continue
            if fits:
                lead = f"`{self.ctx.module.code_for_node(call.func)}` learns bounds/categories/axes from"
            else:
                lead = f"{self._what(call)} is read from"
            self.report(
                call,
                f"{lead} the training data `{self.ctx.module.code_for_node(data)}` with no DP "
                "mechanism and used downstream (to scale or encode the data, or to calibrate the "
                "mechanism), so it leaks outside the privacy budget; pass public bounds (metadata) "
                "or estimate them with a DP mechanism",
            )

    def _post_processed(self, data: cst.BaseExpression, memo: dict[int, dp_output.Released]) -> bool:
        """Does ``data`` hold DP outputs only (``dp_output``: a mechanism's result, passed on)?"""
        tree = self.ctx.python_tree()
        if tree is None:
            return False
        start = self.ctx.metadata(PositionProvider)[data].start
        out = dp_output.post_processed(tree, start.line, start.column, memo)
        return out

    def _line(self, node: cst.CSTNode) -> int:
        return self.ctx.metadata(PositionProvider)[node].start.line

    def _releases_nothing(self, call: cst.Call, data: cst.BaseExpression, index: Dp2Index,
                          evaluation: bool) -> bool:
        """Toy data drawn at random in the function, or a utility evaluation after the release."""
        fn = index.enclosing_function(call)
        root = _data_root(data)
        if fn is not None and root is not None and (simulated(root, fn) or model_scores(root, fn)):
            return True
        if fn is None and root is not None:
            guard = _main_guard(call, index)
            if guard is not None and simulated(root, guard):  # type: ignore[arg-type]
                return True  # (R1 b84) the ``__main__`` demo scales toy data it draws itself
        if fn is not None and _shadowed_fit(fn, call, index):
            return True
        if measuring_scope(fn, self.ctx.path) or behind_off_switch(call, index) or _no_budget_branch(call, index):
            return True
        if root is not None and unbound_in_init(root, fn, index.enclosing_class(call)):
            return True
        return evaluation and after_release(call, fn, self.ctx.module, self._line) \
            and not _clips_release(call, index)

    def _median_fill(self, call: cst.Call, index: Dp2Index, claimed: bool) -> None:
        """``df[c].fillna(df[c].median())``: missing values imputed with the private median."""
        analysis = self.ctx.analysis
        data = _median_data(call, index)
        if data is None or not _is_data(data) or not _imputes(call, index):
            return
        if not (claimed or analysis.is_private(data)):
            return
        root = _data_root(data)
        if root is not None and analysis.public_parameter(call, root):
            return
        fn = index.enclosing_function(call)
        if fn is not None and root is not None and from_first_parameter(fn, root) \
                and per_record_function(fn, index):
            return
        if fn is not None and preprocessing._post_processing(fn.name.value):
            return  # (S2 b96) the generated (released) table tidied after the DP step: post-processing
        self.report(
            call,
            f"the median of the training data `{self.ctx.module.code_for_node(data)}` fills its missing "
            "values with no DP mechanism: the imputed records carry a statistic of everyone's data (one "
            "record can move the median), so the model trained on them leaks it outside the privacy "
            "budget; impute with a public constant or a DP median charged to the budget",
        )

    @staticmethod
    def _bound_data(call: cst.Call, index: Dp2Index, fitted: dict[str, str]) -> cst.BaseExpression | None:
        name = call_name(call)
        func = call.func
        args = [a.value for a in call.args if a.keyword is None]
        if name in _SCALE_FUNCS:
            if name == "qcut" and args and _ranks(args[0]):
                return None  # (R2) quantile bins of ranks/positions: the edges are positions, no value is read
            return args[0] if args else None
        if name in _HIST_FUNCS:
            return args[0] if args and _data_edges(call, index) else None
        if name == "cut":
            return args[0] if args and _pandas(func, index) and _bin_count(call) else None
        if name in _FIT and isinstance(func, cst.Attribute):
            receiver = func.value
            ctor = receiver if isinstance(receiver, cst.Call) else None
            if ctor is not None and call_name(ctor) in _FITTED and not _public_categories(ctor) \
                    and not _defined_here(call_name(ctor), index):
                return args[0] if args else None
            if ctor is not None and f"{call_name(ctor)}()" in fitted:
                return args[0] if args else None
            held = receiver.value if isinstance(receiver, cst.Subscript) else receiver  # ``self.encoders[col]``
            if dotted(held) in fitted:
                return args[0] if args else None
            return None
        if name not in _BOUND_FUNCS and name not in _BOUND_METHODS:
            return None
        if isinstance(func, cst.Name):
            qual = index.imports.get(func.value, "")
            if func.value in {"min", "max"} and not qual:
                # builtin min/max over one iterable
                return args[0] if len(args) == 1 and not call.args[0].star else None
            if qual.split(".")[0] in {"numpy", "torch", "pandas", "jax"}:
                return args[0] if args else None
            return None
        if not isinstance(func, cst.Attribute):
            return None
        receiver = func.value
        root = dotted(receiver)
        if root is not None and (root in _LIB_ROOTS or index.imports.get(root.split(".")[0], "").split(".")[0] in {"numpy", "torch", "pandas", "jax", "tensorflow"}):
            if name in _BOUND_FUNCS:
                return args[0] if args else None
            return None
        if name in _BOUND_METHODS:
            if name in {"min", "max"} and len(args) >= 1 and not _is_axis(args[0]):
                return None
            return receiver
        return None

    @staticmethod
    def _what(call: cst.Call) -> str:
        name = call_name(call) or ""
        if "unique" in name:
            return "the set of categories"
        if "quantile" in name or "percentile" in name:
            return "a quantile"
        if "min" in name and "max" in name:
            return "the min and max"
        return f"the {name}"


def _shadowed_fit(fn: cst.FunctionDef, call: cst.Call, index: Dp2Index) -> bool:
    """``call`` sits in a class's ``fit`` that its own ``fit_transform`` re-implements without
    calling ``self.fit``, and that copy makes a call of the same name: the pipeline's
    ``fit_transform`` is the live path and is checked (and reported) there; ``fit`` is a duplicate."""
    if fn.name.value != "fit":
        return False
    cls = index.enclosing_class(fn)
    if cls is None:
        return False
    name = call_name(call)
    wanted = {name, f"{name}_transform"} if name in _FIT else {name}
    for member in cls.body.body:
        if not isinstance(member, cst.FunctionDef) or member.name.value != "fit_transform":
            continue
        calls = [n for n in walk(member.body) if isinstance(n, cst.Call)]
        if any(isinstance(c.func, cst.Attribute) and dotted(c.func.value) == "self"
               and c.func.attr.value == "fit" for c in calls):
            return False
        return any(call_name(c) in wanted for c in calls)
    return False


def _data_edges(call: cst.Call, index: Dp2Index) -> bool:
    """``np.histogram(x, bins=k)`` with no ``range=`` and a bin count (not explicit edges) whose
    edges are then used: kept (``counts, edges = …`` with ``edges`` read, an attribute) or handed to
    a sampler (``rv_histogram(np.histogram(x, …))``)."""
    if not _numpy(call.func, index):
        return False
    bins: cst.BaseExpression | None = None
    for i, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == "range":
            return False
        if (arg.keyword is not None and arg.keyword.value == "bins") or (arg.keyword is None and i == 1):
            bins = arg.value
    if bins is not None and (isinstance(bins, (cst.List, cst.Tuple)) or (
            isinstance(bins, cst.Call) and call_name(bins) in {"linspace", "arange", "array", "asarray"})
            or words(dotted(bins) or "") & {"edges", "edge", "boundaries", "grid", "breaks", "bins"}):
        return False
    parent = index.parents.get(call)
    while isinstance(parent, cst.Arg):
        parent = index.parents.get(parent)
    if isinstance(parent, cst.Call) and call_name(parent) in {"rv_histogram", "rv_histogram_dd"}:
        return _sampled_from(parent, index)
    stmt = _assignment_of(call, index)
    if stmt is None or not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
        return False
    target = stmt.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) < 2:
        return False
    edges = target.elements[1].value
    name = dotted(edges)
    if name is None or name == "_":
        return False
    if "." in name:
        return True
    scope = index.enclosing_function(call) or index.module
    return any(isinstance(n, cst.Name) and n.value == name and index.order.get(n, -1) > index.order[stmt]
               and not index.inside(n, stmt) and not _shown_only(n, index, scope) for n in walk(scope))


#: parameter names of a privacy budget (a mechanism's signature)
_BUDGET_PARAMS = frozenset({"epsilon", "eps", "delta", "budget", "rho", "privacy"})


def _params(fn: cst.FunctionDef) -> set[str]:
    return {p.name.value for p in (*fn.params.params, *fn.params.posonly_params, *fn.params.kwonly_params)}


def _mechanism_input(call: cst.Call, data: cst.BaseExpression, index: Dp2Index) -> bool:
    """The data is what a mechanism receives: a parameter of a function that also takes a budget
    (``rwm(n, database, epsilon)``), or an attribute of a class one of whose methods takes one."""
    fn = index.enclosing_function(call)
    root = _data_root(data)
    if fn is None or root is None:
        return False
    if "." not in root:
        return root in _params(fn) and any(words(p) & _BUDGET_PARAMS for p in _params(fn))
    if not root.startswith("self.") or root.count(".") != 1:
        return False
    cls = index.enclosing_class(call)
    return cls is not None and any(
        isinstance(m, cst.FunctionDef) and any(words(p) & _BUDGET_PARAMS for p in _params(m))
        for m in cls.body.body)


_SAMPLE_METHODS = frozenset({"rvs", "ppf", "sample", "resample"})


def _sampled_from(dist: cst.Call, index: Dp2Index) -> bool:
    """Points are drawn from the distribution (``rv_histogram(…).rvs(k)``, or the name holding it
    later calls ``rvs``): the released sample lives inside the histogram's edges. A distribution only
    compared with another (a metric) releases nothing."""
    parent = index.parents.get(dist)
    if isinstance(parent, cst.Attribute) and parent.attr.value in _SAMPLE_METHODS:
        return True
    stmt = _assignment_of(dist, index)
    if stmt is None:
        return False
    names = set(assigned(stmt)[0])
    scope = index.enclosing_function(dist) or index.module
    return any(isinstance(n, cst.Attribute) and n.attr.value in _SAMPLE_METHODS and dotted(n.value) in names
               for n in walk(scope))


def _numpy(func: cst.BaseExpression, index: Dp2Index) -> bool:
    root = (dotted(func.value) or "").split(".")[0] if isinstance(func, cst.Attribute) else None
    if root is None and isinstance(func, cst.Name):
        return index.imports.get(func.value, "").split(".")[0] in {"numpy", "jax", "torch"}
    return root in {"np", "numpy", "jnp", "torch"} or index.imports.get(root or "", "").split(".")[0] in {"numpy", "jax", "torch"}


_ID_WORDS = frozenset({"id", "ids", "uid", "uids", "uuid", "identifier", "identifiers", "pseudonym", "pseudonyms"})


def _identifiers(call: cst.Call, data: cst.BaseExpression) -> bool:
    """``df["subject_id"].unique()``: the distinct identifiers list who the records belong to (the
    clients or patients to iterate and split), not a value domain of a released attribute."""
    if call_name(call) != "unique":
        return False
    key: str | None = None
    if isinstance(data, cst.Attribute) and data.attr.value in {"values", "array"}:
        data = data.value  # ``pd.unique(df["id"].values)``
    if isinstance(data, cst.Subscript) and len(data.slice) == 1:
        index_value = data.slice[0].slice
        if isinstance(index_value, cst.Index) and isinstance(index_value.value, cst.SimpleString):
            key = index_value.value.evaluated_value if isinstance(index_value.value.evaluated_value, str) else None
    elif isinstance(data, cst.Attribute):
        key = data.attr.value
    return key is not None and bool(words(key) & _ID_WORDS)


def _is_axis(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.UnaryOperation)) or (
        isinstance(expr, cst.Name) and expr.value in {"axis", "dim"}
    )


def _public_categories(ctor: cst.Call) -> bool:
    for arg in ctor.args:
        if arg.keyword is not None and arg.keyword.value == "strategy" and isinstance(arg.value, cst.SimpleString) \
                and "constant" in arg.value.value:
            return True  # ``SimpleImputer(strategy="constant", fill_value=0)``: a given fill value
        if arg.keyword is not None and arg.keyword.value in {"categories", "feature_range_public"}:
            return not (isinstance(arg.value, cst.SimpleString) and "auto" in arg.value.value)
    return False


#: containers whose ``fit`` fits every transformer among their steps
_COMPOSITES = frozenset({"Pipeline", "make_pipeline", "ColumnTransformer", "make_column_transformer", "FeatureUnion",
                         "make_union"})


def _fitted_kind(value: cst.BaseExpression | None, index: Dp2Index, factories: dict[str, str],
                 local: dict[str, str] | None = None) -> str | None:
    """The unfitted transformer class a value builds: a constructor (``MinMaxScaler()``), either arm
    of ``LabelBinarizer() if cat else MinMaxScaler()``, a pipeline or column transformer with such a
    step, a call of a module factory returning one, or a name ``local`` binds to one."""
    if isinstance(value, cst.IfExp):
        return _fitted_kind(value.body, index, factories, local) or _fitted_kind(value.orelse, index, factories, local)
    if isinstance(value, cst.Name) and local is not None:
        return local.get(value.value)
    if not isinstance(value, cst.Call):
        return None
    kind = call_name(value)
    if kind in _FITTED:
        return None if _public_categories(value) or _defined_here(kind, index) else kind
    if kind in _COMPOSITES:
        for part in walk(value):
            if part is value:
                continue
            if isinstance(part, cst.Call) and call_name(part) in _FITTED and not _public_categories(part) \
                    and not _defined_here(call_name(part), index):
                return call_name(part)
            if isinstance(part, cst.Name) and local is not None and part.value in local:
                return local[part.value]
        return None
    return factories.get(kind or "")


def _factories(index: Dp2Index) -> dict[str, str]:
    """Module functions that build and return an unfitted transformer (``def make_preprocessor():
    return ColumnTransformer([...])``); one that fits what it builds returns a fitted object."""
    out: dict[str, str] = {}
    fns = [n for n in walk(index.module) if isinstance(n, cst.FunctionDef)]
    for _ in range(2):
        for fn in fns:
            name = fn.name.value
            if name in out or name in _FIT:
                continue
            local: dict[str, str] = {}
            fits = False
            kinds: list[str | None] = []
            for node in walk(fn.body):
                if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                    kind = _fitted_kind(node.value, index, out, local)
                    if kind:
                        local[node.targets[0].target.value] = kind
                elif isinstance(node, cst.Call) and call_name(node) in _FIT:
                    fits = True
                elif isinstance(node, cst.Return) and node.value is not None:
                    kinds.append(_fitted_kind(node.value, index, out, local))
            if not fits and kinds and all(kinds):
                out[name] = kinds[0]  # type: ignore[assignment]
    return out


def _fitted_names(index: Dp2Index) -> dict[str, str]:
    """Names bound to an unfitted scaler/encoder, with the class they hold (a container filled with
    them, ``self.encoders[col] = OneHotEncoder()``, under the container's name)."""
    out: dict[str, str] = {}
    factories = _factories(index)
    out.update({f"{name}()": kind for name, kind in factories.items()})  # ``make_scaler().fit(x)``
    for node in walk(index.module):
        if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
            kind = _fitted_kind(node.value, index, factories)
            if kind:
                out.update(dict.fromkeys(assigned(node)[0], kind))
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, cst.Subscript) and dotted(target.value):
                        out[dotted(target.value)] = kind  # type: ignore[index]
    return out



def _defined_here(name: str | None, index: Dp2Index) -> bool:
    """A class of that name is defined in this module: its own ``fit`` is what runs (and the
    rule reads it), not the library class the name usually means."""
    if name is None:
        return False
    # ``from diffprivlib.models import PCA``: the DP library's own estimator, which spends budget on what it learns
    qual = index.imports.get(name, "")
    # named DP libraries only: a project's own ``dp_cgans.DataTransformer`` is an ordinary fitted encoder
    if qual and qual.split(".")[0] in {"diffprivlib", "opendp", "snsynth", "tmlt", "pipeline_dp"}:
        return True
    return any(c.name.value == name for c in index.fa.nodes(cst.ClassDef))  # type: ignore[attr-defined]


def _ranks(expr: cst.BaseExpression) -> bool:
    """``df["t"].rank(method="first")``, ``np.arange(len(df))``: positions of the rows, whose quantile bins
    have edges at public positions (``k * n / q``), not at any private value."""
    return isinstance(expr, cst.Call) and (
        call_name(expr) == "rank" and isinstance(expr.func, cst.Attribute)
        or call_name(expr) == "arange" and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.Call)
        and call_name(expr.args[0].value) == "len")


def _scales(call: cst.Call, fitted: dict[str, str]) -> bool:
    """Does this fit/scale call learn a numeric range (not an encoder's category set)?"""
    name = call_name(call)
    if name in _SCALE_FUNCS or name == "cut":
        return True
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    kind = call_name(receiver) if isinstance(receiver, cst.Call) else fitted.get(dotted(receiver) or "")
    return kind not in _ENCODERS


_WRAPPER_METHODS = {
    "to_numpy", "astype", "float", "double", "numpy", "cpu", "detach", "copy", "dropna", "reshape", "ravel",
    "flatten", "squeeze", "view", "sum",
}
_WRAPPER_FUNCS = {
    "asarray", "array", "tensor", "as_tensor", "from_numpy", "asanyarray", "abs", "absolute", "fabs", "norm",
    "sqrt", "square",
}


def _data_root(expr: cst.BaseExpression) -> str | None:
    base: cst.BaseExpression = expr
    for _ in range(12):
        if isinstance(base, cst.Subscript):
            base = base.value
        elif isinstance(base, cst.Attribute) and base.attr.value in {"values", "iloc", "loc", "T"}:
            base = base.value
        elif isinstance(base, cst.Call):
            name = call_name(base)
            if name in _WRAPPER_METHODS and isinstance(base.func, cst.Attribute):
                base = base.func.value
            elif name in _WRAPPER_FUNCS and base.args:
                base = base.args[0].value
            else:
                return None
        elif isinstance(base, cst.BinaryOperation):
            base = base.left
        else:
            break
    return dotted(base)


def _is_data(expr: cst.BaseExpression) -> bool:
    return _data_named(_data_root(expr))


def _data_named(name: str | None) -> bool:
    if name is None:
        return False
    last = name.split(".")[-1]
    ws = words(last)
    if ws & _NOT_DATA:
        return False
    return bool(ws & _DATA_WORDS) or last in {"X", "x", "D"} or any(_GLUED_DATA.fullmatch(w) for w in ws)


#: a data word glued to a container word (``datalist``, ``dataarr``, ``database``), or the feature
#: matrix glued to its split (``Xtrain``, ``Xtr``, ``xall``)
_GLUED_DATA = re.compile(r"(?:data|records|samples)(?:list|lst|arr|array|vec|mat|matrix|base|points|values|set)"
                         r"|x(?:train|tr|all|full)")


def _dp_estimated(call: cst.Call, index: Dp2Index) -> bool:
    fn = index.enclosing_function(call)
    if fn is not None and words(fn.name.value) & {"dp", "private", "noisy", "privately"}:
        return True
    stmt = _statement(call, index)
    if stmt is not None and has_noise(stmt):
        return True
    for anc in index.ancestors(call):
        if isinstance(anc, cst.If) and words(" ".join(refs(anc.test))) & _GUARD_WORDS:
            return True
    return False


def _statement(node: cst.CSTNode, index: Dp2Index) -> cst.CSTNode | None:
    for anc in index.ancestors(node):
        if isinstance(anc, cst.SimpleStatementLine):
            return anc
    return None


#: functions that draw: their min/max place points on an axis (the plot, not a bound, is the release)
_DRAWING_WORDS = frozenset({"plot", "chart", "svg", "draw", "figure", "axis", "axes"})


def _scales_own_noise(call: cst.Call, data: cst.BaseExpression, index: Dp2Index) -> bool:
    """A randomiser ``encode(self, data, eps)``: the bound is read from its parameter ``data``, a
    name computed from the bound is an argument of a noise draw, and the function adds a draw to
    a value computed from ``data`` (``data + ldp_noise``)."""
    from dpcheck.analysis.dataindex import is_noise_call

    fn = index.enclosing_function(call)
    root = _data_root(data)
    if fn is None or root is None or "." in root:
        return False
    if root not in {p.name.value for p in (*fn.params.params, *fn.params.posonly_params, *fn.params.kwonly_params)}:
        return False
    assigns = [n for n in walk(fn) if isinstance(n, (cst.Assign, cst.AnnAssign)) and n.value is not None]

    def closure(seed: set[str], start: cst.CSTNode | None = None) -> set[str]:
        names = set(seed)
        for _ in range(3):
            for node in assigns:
                if (start is not None and any(x is start for x in walk(node.value))) or refs(node.value) & names:
                    names |= set(assigned(node)[0])
        return names

    bound = closure(set(), call) - {root}
    if not bound:
        for anc in index.ancestors(call):
            if isinstance(anc, cst.Call) and anc is not call and is_noise_call(anc):
                break
        else:
            return False
    noise_calls = [n for n in walk(fn) if isinstance(n, cst.Call) and is_noise_call(n)]
    if not any(any(x is call for x in walk(n)) or any(refs(a.value) & bound for a in n.args) for n in noise_calls):
        return False
    inputs = closure({root}) - bound
    noisy = {t for node in assigns if has_noise(node.value) for t in assigned(node)[0]}
    for node in walk(fn):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            left, right = refs(node.left), refs(node.right)
            if (left & inputs and (right & noisy or has_noise(node.right))) or \
                    (right & inputs and (left & noisy or has_noise(node.left))):
                return True
    return False


_MEDIANS = frozenset({"median", "nanmedian"})
#: calls that fill missing values with their argument
_IMPUTE_CALLS = frozenset({"fillna", "nan_to_num", "putmask"})


def _median_data(call: cst.Call, index: Dp2Index) -> cst.BaseExpression | None:
    """What ``df[c].median()``, ``np.median(x)``, ``statistics.median(x)`` take the median of."""
    func = call.func
    args = [a.value for a in call.args if a.keyword is None]
    if isinstance(func, cst.Attribute):
        root = dotted(func.value)
        module = index.imports.get((root or "").split(".")[0], "").split(".")[0]
        if root is not None and (root in _LIB_ROOTS or module in {"numpy", "torch", "pandas", "statistics", "jax"}):
            return args[0] if args else None
        return func.value
    if isinstance(func, cst.Name) and index.imports.get(func.value, "").split(".")[0] in {"numpy", "statistics"}:
        return args[0] if args else None
    return None


def _imputes(call: cst.Call, index: Dp2Index) -> bool:
    """The median is a fill value: an argument of ``fillna``/``nan_to_num`` in its statement, or
    assigned to a name that such a call in the same scope reads."""
    for anc in index.ancestors(call):
        if isinstance(anc, cst.Call) and anc is not call and call_name(anc) in _IMPUTE_CALLS:
            return True
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            break
    stmt = _assignment_of(call, index)
    if stmt is None:
        return False
    names = assigned(stmt)[0]
    scope = index.enclosing_function(call) or index.module
    for sub in walk(scope):
        if isinstance(sub, cst.Call) and call_name(sub) in _IMPUTE_CALLS and \
                any(refs(a.value) & names for a in sub.args):
            return True
    return False


def _drawing(call: cst.Call, index: Dp2Index) -> bool:
    fn = index.enclosing_function(call)
    return fn is not None and bool(words(fn.name.value) & _DRAWING_WORDS)


def _budget_arg(expr: cst.BaseExpression) -> bool:
    """An argument naming a privacy budget (``epsilon``, ``eps_list``, ``self.budget``), not a
    literal margin (``eps=1e-8``)."""
    return any(words(r) & _BUDGET_WORDS for r in refs(expr))


#: keywords naming a bound: a call given the extremes under these names stores or uses them as bounds
_BOUND_KEYWORDS = frozenset({"min", "max", "lower", "upper", "bound", "bounds", "lo", "hi", "domain", "clip"})
#: calls that draw a widget or a figure: a bound given to them sets a slider or an axis
_UI_WORDS = frozenset({"slider", "input", "plot", "ylim", "xlim", "axis", "set", "widget", "number", "range"})


def _handed_with_budget(outer: cst.Call, inner: cst.CSTNode, index: Dp2Index,
                        names: frozenset[str] | set[str] = frozenset()) -> bool:
    """``run_mechanism(stream, min(data), max(data), epsilon)``: the extremes are arguments of a call
    that also receives the privacy budget, so they are the mechanism's domain, clip or sensitivity.
    Both ends are needed (a lower and an upper bound, or two bound names): one statistic handed
    with the budget (``anonymize_min(np.min(x), epsilon)``) is the value being released."""
    if call_name(outer) in _SHOW_CALLS or words(call_name(outer) or "") & _UI_WORDS:
        return False
    budget = False
    bounds = 0
    for arg in outer.args:
        if index.inside(inner, arg) or arg.value is inner:
            # ``DatasetColumn(min_val=float(col.min()), …)``: kept as the column's bound metadata
            if arg.keyword is not None and words(arg.keyword.value) & _BOUND_KEYWORDS:
                return True
        if _budget_arg(arg.value) or (arg.keyword is not None and words(arg.keyword.value) & _BUDGET_WORDS
                                      and not isinstance(arg.value, (cst.Float, cst.Integer))):
            budget = True
        elif refs(arg.value) & set(names) or any(
                isinstance(n, cst.Call) and call_name(n) in _BOUND_FUNCS | _BOUND_METHODS for n in walk(arg.value)):
            bounds += 1
    return budget and bounds >= 2


#: calls that read records from a file or a store
_LOAD_CALLS = frozenset({
    "read_csv", "read_table", "read_excel", "read_parquet", "read_json", "read_sql", "read_sql_query",
    "loadtxt", "genfromtxt", "read_feather", "read_pickle", "load_dataset", "fetch_openml",
})


def _loaded_here(call: cst.Call, data: cst.BaseExpression, index: Dp2Index) -> bool:
    """The records are loaded from a file in the function that reads their bound, and the bound
    rescales them there (a loader of a DP module returning data normalised by its own extremes)."""
    fn = index.enclosing_function(call)
    root = _data_root(data)
    if fn is None or root is None or "." in root:
        return False
    if root in {p.name.value for p in (*fn.params.params, *fn.params.posonly_params, *fn.params.kwonly_params)}:
        return False
    if not any(isinstance(n, cst.Call) and call_name(n) in _LOAD_CALLS for n in walk(fn)):
        return False
    stmt = _assignment_of(call, index)
    if stmt is None:
        return False
    names = {n for n in assigned(stmt)[0] if "." not in n}
    return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Subtract, cst.Divide))
               and refs(n) & names and index.order.get(n, -1) > index.order[stmt] for n in walk(fn))


def _bounds_only(value: cst.BaseExpression | None) -> bool:
    """``lo, hi = min(x), max(x)`` or ``hi = x.max()``: the names hold the bounds themselves, not a
    grid or a transform built from them."""
    items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
    return bool(items) and all(_unwrapped_bound(v) for v in items)


def _unwrapped_bound(value: cst.BaseExpression) -> bool:
    """``min(x)``, ``x.max().item()``, ``float(np.max(x))``."""
    for _ in range(3):
        if not isinstance(value, cst.Call):
            return False
        name = call_name(value)
        if name in _BOUND_FUNCS | _BOUND_METHODS:
            return True
        if name in {"item", "tolist", "numpy"} and isinstance(value.func, cst.Attribute):
            value = value.func.value
        elif name in {"float", "int"} and len(value.args) == 1:
            value = value.args[0].value
        else:
            return False
    return False


def _bound_ends(scope: cst.CSTNode, names: set[str]) -> set[str]:
    """``names`` and every local name the scope assigns only bounds to (``lower = np.min(x)`` and
    ``upper = np.max(x)`` on separate lines are the two ends of one domain)."""
    ends = set(names)
    for node in walk(scope):
        if isinstance(node, cst.Assign) and _bounds_only(node.value):
            ends |= {n for n in assigned(node)[0] if "." not in n}
    return ends


def _handed_to_mechanism(call: cst.Call, index: Dp2Index) -> bool:
    """The bound (or a name assigned from it) is an argument of a call that also receives the
    privacy budget: whatever the data's origin, the mechanism runs with a domain read from it."""
    for anc in index.ancestors(call):
        if isinstance(anc, cst.Call) and anc is not call and _handed_with_budget(anc, call, index):
            return True
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            break
    stmt = _assignment_of(call, index)
    if stmt is None or not _bounds_only(stmt.value):
        return False
    names = {n for n in assigned(stmt)[0] if "." not in n}
    scope = index.enclosing_function(call) or index.module
    ends = _bound_ends(scope, names)
    for sub in walk(scope):
        if isinstance(sub, cst.Call) and index.order.get(sub, -1) > index.order[stmt] \
                and any(refs(a.value) & names for a in sub.args) and _handed_with_budget(sub, sub.func, index, ends):
            return True
    return False


#: words of a value that is the DP output (or made from it)
_RELEASE_WORDS = frozenset({
    "syn", "synth", "synthetic", "fake", "generated", "noisy", "noised", "released", "perturbed",
    "sanitized", "sanitised", "privatized", "privatised",
})
_CLIP_CALLS = frozenset({"clip", "clamp", "clip_", "clamp_", "minimum", "maximum"})


def _clips_release(call: cst.Call, index: Dp2Index) -> bool:
    """Is the bound (inline, or the name it is assigned to) a limit of a clip of the DP output
    (``synth[c].round().clip(0, hi)``, ``np.clip(noisy, lo, hi)``)? Read after the release, it still
    shapes what is published: every released value at the limit shows the private extreme."""
    stmt = index.parents.get(call)
    while stmt is not None and not isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.SimpleStatementLine)):
        stmt = index.parents.get(stmt)
    names = assigned(stmt)[0] if isinstance(stmt, (cst.Assign, cst.AnnAssign)) else set()
    scope = index.enclosing_function(call) or index.module
    for sub in walk(scope):
        if not (isinstance(sub, cst.Call) and call_name(sub) in _CLIP_CALLS):
            continue
        func = sub.func
        operands = [a.value for a in sub.args]
        method = isinstance(func, cst.Attribute) and (dotted(func.value) or "") not in _LIB_ROOTS
        if method:
            clipped: cst.BaseExpression = func.value  # type: ignore[union-attr]
        elif operands:
            clipped, operands = operands[0], operands[1:]
        else:
            continue
        limits = any(index.inside(call, a) or refs(a) & names for a in operands)
        source = {w for n in refs(clipped) for w in words(n)}
        if limits and source & _RELEASE_WORDS:
            return True
    return False


_IN_PLACE_SCALE = (cst.DivideAssign, cst.SubtractAssign)


def _used_for_scaling(call: cst.Call, index: Dp2Index) -> bool:
    """Is the bound used in arithmetic/clipping, kept on the object, or handed on as metadata?"""
    for anc in index.ancestors(call):
        if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, (cst.Subtract, cst.Divide, cst.Add, cst.Multiply)):
            return True
        if isinstance(anc, cst.Call) and call_name(anc) in _USE_CALLS and anc is not call:
            return True
        if isinstance(anc, cst.Call) and anc is not call and _handed_with_budget(anc, call, index):
            return True
        if isinstance(anc, (cst.DictComp, cst.Dict)):
            return _stored(anc, index)
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            break
    if _returned_as_sensitivity(call, index):
        return True
    parent = index.parents.get(call)
    stmt = parent
    while stmt is not None and not isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.SimpleStatementLine)):
        stmt = index.parents.get(stmt)
    if not isinstance(stmt, (cst.Assign, cst.AnnAssign)):
        return False
    names = assigned(stmt)[0]
    if any("." in n for n in names):
        # kept on the object: a public attribute is the fitted model's API (``self.levels``), a
        # private one (``self._binary_columns``) is used only if something in the module reads it
        return any(not n.rsplit(".", 1)[-1].startswith("_") or index.attribute_read(n.rsplit(".", 1)[-1])
                   for n in names if "." in n)
    categories = call_name(call) in {"unique", "nunique"}
    scope = index.enclosing_function(call) or index.module
    ends: set[str] | None = None
    for sub in walk(scope):
        if index.order.get(sub, -1) <= index.order[stmt] or index.inside(sub, stmt):
            continue
        if categories and isinstance(sub, (cst.Name, cst.Attribute)) and dotted(sub) in names:
            return True
        if isinstance(sub, cst.BinaryOperation) and refs(sub) & names:
            if not has_noise(sub):
                return True
        if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, _IN_PLACE_SCALE) \
                and refs(sub.value) & names and not has_noise(sub.value):
            return True  # ``y_train /= y_max``: the records scaled in place by the bound
        if isinstance(sub, cst.Call) and call_name(sub) in _USE_CALLS and refs(sub) & names:
            return True
        if isinstance(sub, cst.Call) and any(refs(a.value) & names for a in sub.args) \
                and _handed_with_budget(sub, sub.func, index, ends if ends is not None else
                                        (ends := _bound_ends(scope, set(names)))):
            return True
        if isinstance(sub, cst.Return) and sub.value is not None and refs(sub.value) & names:
            return True
        if isinstance(sub, cst.Dict) and _bound_entry(sub, names):
            return True  # ``{'key': 'lower', 'value': lower}``: stored as a column bound of the DP metadata
        if isinstance(sub, (cst.Assign, cst.AnnAssign)) and sub.value is not None and refs(sub.value) & names:
            if has_noise(sub.value):
                return False
    return False


#: words a metadata key naming a bound is made of (``'lower'``, ``'max_value'``, ``'clip_upper'``)
_BOUND_KEY_WORDS = frozenset({"lower", "upper", "min", "max", "bound", "bounds", "lo", "hi", "low", "high", "minimum",
                              "maximum", "clip", "clipping", "range"})


def _bound_key(expr: cst.BaseExpression | None) -> bool:
    if not isinstance(expr, cst.SimpleString):
        return False
    value = expr.evaluated_value
    pieces = words(value) if isinstance(value, str) else frozenset()
    return bool(pieces & _BOUND_KEY_WORDS) and pieces <= _BOUND_KEY_WORDS | {"value", "val", "col", "column"}


def _bound_entry(node: cst.Dict, names: set[str] | frozenset[str]) -> bool:
    """A dict literal keeping one of ``names`` as a bound: under a key naming a bound
    (``{'lower': lo}``), or as the value of a key/value record naming one (``{'key': 'upper', 'value': hi}``)."""
    entries = [e for e in node.elements if isinstance(e, cst.DictElement)]
    for e in entries:
        if not (isinstance(e.value, cst.Name) and e.value.value in names):
            continue
        if _bound_key(e.key):
            return True
        if any(_bound_key(o.value) for o in entries if o is not e):
            return True
    return False


_SHOW_CALLS = {"print", "info", "debug", "warning", "write", "log", "set_description", "set_postfix", "format"}


def _assignment_of(call: cst.Call, index: Dp2Index) -> cst.Assign | cst.AnnAssign | None:
    """The assignment statement holding ``call``, if its statement is one."""
    stmt = index.parents.get(call)
    while stmt is not None and not isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.SimpleStatementLine)):
        stmt = index.parents.get(stmt)
    return stmt if isinstance(stmt, (cst.Assign, cst.AnnAssign)) else None


_BUDGET_NAMES = frozenset({"epsilon", "eps", "epslon", "budget", "rho", "privacy"})


def _budget_test(test: cst.BaseExpression) -> tuple[str, bool] | None:
    """``if epsilon:`` / ``if epsilon is not None:`` / ``if epsilon > 0:`` -> (name, True: the body has a
    budget); ``if epsilon is None:`` / ``if not epsilon:`` -> (name, False)."""
    def name_of(expr: cst.BaseExpression) -> str | None:
        text = dotted(expr)
        return text if text is not None and words(text.rsplit(".", 1)[-1]) & _BUDGET_NAMES else None

    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _budget_test(test.expression)
        return (inner[0], not inner[1]) if inner else None
    if (n := name_of(test)) is not None:
        return n, True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and (n := name_of(test.left)) is not None:
        op, right = test.comparisons[0].operator, test.comparisons[0].comparator
        if isinstance(right, cst.Name) and right.value == "None":
            if isinstance(op, cst.IsNot):
                return n, True
            if isinstance(op, cst.Is):
                return n, False
        if isinstance(right, cst.Integer) and right.value == "0":
            if isinstance(op, (cst.GreaterThan, cst.NotEqual)):
                return n, True
            if isinstance(op, (cst.Equal, cst.LessThanEqual)):
                return n, False
    return None


def _no_budget_branch(call: cst.Call, index: Dp2Index) -> bool:
    """(g2 h40) ``if epsilon: DP_KMeans(..., epsilon=...) else: KMeans(...)``: the call runs only in the
    branch where no privacy budget was given (the explicit non-private mode), and the other branch
    uses the budget, so the DP path does not read the data this way."""
    child: cst.CSTNode = call
    for anc in index.ancestors(call):
        if isinstance(anc, cst.If):
            test = _budget_test(anc.test)
            if test is not None:
                name, body_has_budget = test
                in_body = child is anc.body
                other = anc.orelse if in_body else anc.body
                if in_body != body_has_budget and other is not None \
                        and name.rsplit(".", 1)[-1] in {n.value for n in walk(other) if isinstance(n, cst.Name)} | {
                            n.attr.value for n in walk(other) if isinstance(n, cst.Attribute)}:
                    return True
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
            return False
        child = anc
    return False


def _raise_guard(call: cst.Call, index: Dp2Index) -> bool:
    """(QC, ML-DP dp_logistic.py) ``if set(np.unique(y)) - {0, 1}: raise ValueError(...)``: the values
    are read only to refuse unexpected input; nothing is scaled, encoded or calibrated with them."""
    child: cst.CSTNode = call
    for anc in index.ancestors(call):
        if isinstance(anc, cst.If):
            if child is not anc.test or anc.orelse is not None:
                return False
            body = anc.body.body
            return bool(body) and all(
                isinstance(st, cst.SimpleStatementLine) and all(isinstance(x, cst.Raise) for x in st.body)
                for st in body)
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return False
        child = anc
    return False


def _unused_or_printed(call: cst.Call, index: Dp2Index) -> bool:
    """The bound is printed where it is read (``print(np.max(x) - np.min(x))``), or assigned to
    local names that the function afterwards only prints or logs, or never reads
    (``num_users_pre = df[u].max() + 1`` left over; ``n = len(df[u].unique())`` shown as a dataset
    statistic): no mechanism, model size or released value depends on it."""
    for anc in index.ancestors(call):
        if isinstance(anc, cst.Call) and anc is not call and call_name(anc) in _SHOW_CALLS:
            return True
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            break
    fn = index.enclosing_function(call)
    stmt = _assignment_of(call, index)
    if fn is None or stmt is None:
        return False
    names = assigned(stmt)[0]
    if not names or any("." in n for n in names):
        return False
    for sub in walk(fn):
        if isinstance(sub, (cst.Global, cst.Nonlocal)) and {n.name.value for n in sub.names} & set(names):
            return False
        if not isinstance(sub, cst.Name) or sub.value not in names or index.inside(sub, stmt):
            continue
        if index.order.get(sub, -1) <= index.order[stmt]:
            # a read before the assignment sees it on the next pass of a loop around both
            if any(index.inside(stmt, loop) and index.inside(sub, loop) for loop in index.loops):
                return False
            continue
        if not (_shown_only(sub, index, fn) or _feeds_display(sub, index, fn)):
            return False
    return True


#: names of an error or utility score of the released output against the exact answer
_ERROR_WORDS = frozenset({
    "error", "errors", "err", "mae", "mse", "rmse", "mape", "smape", "regret",
})


def _feeds_display(name: cst.Name, index: Dp2Index, fn: cst.CSTNode) -> bool:
    """(g2 h40) The name is read only to compute other local names that are themselves only printed
    (``progress = i / total * 100`` shown in a progress line): a display value one step removed."""
    node: cst.CSTNode | None = index.parents.get(name)
    while node is not None and not isinstance(node, (cst.Assign, cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        node = index.parents.get(node)
    if not isinstance(node, cst.Assign) or not all(isinstance(t.target, cst.Name) for t in node.targets):
        return False
    if any(name is t.target for t in node.targets):
        return True  # the name stored again (``total = ...`` later): a store, not a read
    shown = {t.target.value for t in node.targets}  # type: ignore[union-attr]
    if all(words(n) & _ERROR_WORDS for n in shown):
        return True  # the exact value scores the DP output (``error = abs(true_max - selected)``)
    stores = {id(t.target) for a in walk(fn) if isinstance(a, cst.Assign) for t in a.targets}
    reads = [sub for sub in walk(fn) if isinstance(sub, cst.Name) and sub.value in shown
             and not index.inside(sub, node) and id(sub) not in stores]
    return bool(reads) and all(_shown_only(sub, index, fn) for sub in reads)


def _shown_only(name: cst.Name, index: Dp2Index, fn: cst.CSTNode) -> bool:
    """The name is read inside a print/log call's arguments (or an f-string handed to one)."""
    node: cst.CSTNode | None = index.parents.get(name)
    while node is not None and node is not fn:
        if isinstance(node, cst.Call) and call_name(node) in _SHOW_CALLS:
            return True
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return False
        node = index.parents.get(node)
    return False


#: draws whose ``p=`` weights pick an element of a public support (an agent, a row index)
_WEIGHTED_DRAWS = {"choice", "multinomial", "categorical", "choices"}
_DECODE_ATTRS = {"inverse_transform", "classes_", "categories_", "get_feature_names_out", "get_feature_names"}


def _only_weights_a_draw(call: cst.Call, index: Dp2Index) -> bool:
    """The bound, through the values computed from it in its function, only weights a random
    choice over a public support (``np.random.choice(range(k), p=w)``): the draw's result is an
    index the support fixes, so the bound never reaches a release, a decode, an output size or a
    noise scale (how a simulation splits the training set among agents)."""
    fn = index.enclosing_function(call)
    stmt = _assignment_of(call, index)
    if fn is None or stmt is None:
        return False
    tainted = {n for n in assigned(stmt)[0] if "." not in n}
    if not tainted or len(tainted) != len(assigned(stmt)[0]):
        return False
    assigns = [n for n in walk(fn) if isinstance(n, (cst.Assign, cst.AnnAssign)) and n.value is not None]
    changed = True
    while changed:
        changed = False
        for node in assigns:
            if refs(node.value) & tainted and not _weights_only(node.value, tainted):
                if _reads_budget(node.value):
                    return False  # fed to a mechanism with the budget: it calibrates the noise
                names = assigned(node)[0]
                if any("." in n or "[" in n for n in names):
                    return False
                if not set(names) <= tainted:
                    tainted |= set(names)
                    changed = True
    used = False
    for sub in walk(fn):
        if not (isinstance(sub, cst.Name) and sub.value in tainted):
            continue
        anc_stmt = sub
        ok = False
        for anc in index.ancestors(sub):
            if isinstance(anc, cst.Arg) and anc.keyword is not None and anc.keyword.value == "p":
                owner = index.parents.get(anc)
                if isinstance(owner, cst.Call) and call_name(owner) in _WEIGHTED_DRAWS:
                    ok = used = True
                    break
            if isinstance(anc, (cst.Assign, cst.AnnAssign)):
                # the defining/propagating assignment itself (a target or a tainted value)
                ok = set(assigned(anc)[0]) <= tainted
                break
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
            anc_stmt = anc
        del anc_stmt
        if not ok:
            return False
    return used


def _reads_budget(expr: cst.BaseExpression) -> bool:
    return any(isinstance(n, cst.Name) and any(re.fullmatch(r"(?:epsilon|eps|rho|mu|sigma|noise\w*)\d*", w)
                                                for w in words(n.value)) for n in walk(expr))


def _weights_only(value: cst.BaseExpression, tainted: set[str]) -> bool:
    """``np.random.choice(range(k), p=w)``: the tainted names appear only as the draw's weights."""
    if not isinstance(value, cst.Call) or call_name(value) not in _WEIGHTED_DRAWS:
        return False
    return all(not (refs(a.value) & tainted) or (a.keyword is not None and a.keyword.value == "p")
               for a in value.args)


def _demo_label_codes(call: cst.Call, index: Dp2Index, fitted: dict[str, str]) -> bool:
    """A label encoder fitted in the ``if __name__ == "__main__":`` demo of a module, kept in a
    local name that is never decoded (no ``inverse_transform``/``classes_``), stored or returned:
    it only maps class names to integer codes for the demo run, nothing of its category set is
    released."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    name = dotted(receiver) if receiver is not None else None
    if name is None or "." in name or fitted.get(name) != "LabelEncoder":
        return False
    if index.enclosing_function(call) is not None:
        return False
    in_main = False
    for anc in index.ancestors(call):
        if isinstance(anc, cst.If) and "__main__" in index.module.code_for_node(anc.test) \
                and "__name__" in index.module.code_for_node(anc.test):
            in_main = True
            break
    if not in_main:
        return False
    for sub in walk(index.module):
        if isinstance(sub, cst.Attribute) and dotted(sub.value) == name and sub.attr.value in _DECODE_ATTRS:
            return False
        if isinstance(sub, cst.Return) and sub.value is not None and name in refs(sub.value):
            return False
        if isinstance(sub, cst.Call) and sub is not call and any(
                isinstance(a.value, cst.Name) and a.value.value == name for a in sub.args):
            return False
    return True


def _main_guard(call: cst.Call, index: Dp2Index) -> cst.If | None:
    """The ``if __name__ == "__main__":`` block ``call`` sits in, at module level."""
    for anc in index.ancestors(call):
        if isinstance(anc, cst.If) and "__main__" in index.module.code_for_node(anc.test) \
                and "__name__" in index.module.code_for_node(anc.test):
            return anc
    return None


_CODE_ENCODERS = frozenset({"LabelEncoder", "OrdinalEncoder"})


def _encoder_kind(call: cst.Call, fitted: dict[str, str]) -> str | None:
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if isinstance(receiver, cst.Call):
        return call_name(receiver)
    name = dotted(receiver) if receiver is not None else None
    return fitted.get(name) if name is not None else None


def _column_text(expr: cst.BaseExpression, index: Dp2Index) -> str:
    return index.module.code_for_node(expr).replace("'", '"').replace(" ", "")


def _recoded_column(call: cst.Call, index: Dp2Index, fitted: dict[str, str]) -> bool:
    """``df["c"] = enc.fit_transform(df["c"])`` and later ``enc.fit_transform(df["c"])`` again (in
    the same scope, the column not rebound in between): the column already holds the dense codes
    0..k-1 the first fit wrote, so the second label/ordinal encoder fit is the identity map and
    learns nothing of the records beyond what the first one did (reported there)."""
    if call_name(call) not in _FIT or not call.args or _encoder_kind(call, fitted) not in _CODE_ENCODERS:
        return False
    column = _column_text(call.args[0].value, index)
    scope = index.enclosing_function(call) or index.module
    at = index.order[call]
    last: cst.Assign | None = None
    for node in walk(scope.body if isinstance(scope, cst.FunctionDef) else scope, into_scopes=False):
        if isinstance(node, cst.Assign) and index.order[node] < at and any(
                _column_text(t.target, index) == column for t in node.targets):
            if last is None or index.order[node] > index.order[last]:
                last = node
    if last is None or not isinstance(last.value, cst.Call) or last.value is call:
        return False
    first = last.value
    return call_name(first) in {"fit_transform"} and _encoder_kind(first, fitted) in _CODE_ENCODERS \
        and bool(first.args) and _column_text(first.args[0].value, index) == column


def _applies_fitted_encoder(call: cst.Call, data: cst.BaseExpression, index: Dp2Index) -> bool:
    """``transformer.fit_transform(df, encoder)`` where ``encoder.fit(df)`` (or ``fit_transform``) ran
    earlier in the same scope on the same data: the call hands over an encoder already fitted on
    those records, so what is learnt from them was learnt there (the earlier fit is the site); the
    wrapper's own fit records the schema and applies the encoder."""
    if call_name(call) not in _FIT or len(call.args) < 2 or not isinstance(call.func, cst.Attribute):
        return False
    code = index.module.code_for_node
    shown = code(data)
    helpers = {code(a.value) for a in call.args[1:] if isinstance(a.value, (cst.Name, cst.Attribute))}
    if not helpers:
        return False
    scope = index.enclosing_function(call) or index.module
    at = index.order[call]
    for node in walk(scope.body if isinstance(scope, cst.FunctionDef) else scope, into_scopes=False):
        if isinstance(node, cst.Call) and node is not call and index.order.get(node, at) < at \
                and call_name(node) in _FIT and isinstance(node.func, cst.Attribute) and node.args \
                and code(node.func.value) in helpers and code(node.args[0].value) == shown:
            return True
    return False


def _identifier_codes(call: cst.Call, data: cst.BaseExpression, fitted: dict[str, str]) -> bool:
    """``LabelEncoder().fit_transform(df["user_id"])``: identifiers mapped to embedding/row indices
    (who the records belong to, as ``unique`` of an id column), not a value domain of an attribute."""
    if call_name(call) not in _FIT or _encoder_kind(call, fitted) not in _CODE_ENCODERS:
        return False
    if isinstance(data, cst.Subscript) and len(data.slice) == 1:
        index_value = data.slice[0].slice
        if isinstance(index_value, cst.Index) and isinstance(index_value.value, cst.SimpleString):
            key = index_value.value.evaluated_value
            return isinstance(key, str) and bool(words(key) & _ID_WORDS)
    return False


#: a function named for what calibrates a mechanism: what it returns is that calibration
_CALIBRATION_WORDS = frozenset({"sensitivity", "sensitivities"})


def _returned_as_sensitivity(call: cst.Call, index: Dp2Index) -> bool:
    """``return np.max(np.abs(data))`` in ``calculate_sensitivity``: the bound is the sensitivity."""
    fn = index.enclosing_function(call)
    if fn is None or not words(fn.name.value) & _CALIBRATION_WORDS:
        return False
    for anc in index.ancestors(call):
        if isinstance(anc, cst.Return):
            return True
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return False
    return False


def _stored(node: cst.CSTNode, index: Dp2Index) -> bool:
    """A dict/dict-comprehension of bounds that is assigned or returned (kept as metadata)."""
    stmt = index.parents.get(node)
    while stmt is not None and not isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.Return, cst.SimpleStatementLine)):
        stmt = index.parents.get(stmt)
    return isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.Return))


# ---- shapes that read a min/max but are not bounds of the records ----------------------------
_TARGET_WORDS = {"y", "target", "targets", "regressand", "response"}
_BOUND_ATTR_WORDS = {"bound", "bounds", "range", "ranges", "min", "max", "lo", "hi", "lower", "upper", "scale", "span", "ptp"}
_COUNT_CALLS = {"int", "len", "range", "zeros", "ones", "eye", "arange", "full", "empty", "bincount"}
_EXP_CALLS = {"exp", "expm1", "exp2", "softmax", "log_softmax", "logsumexp", "logaddexp", "sigmoid"}
_MAPPING_CTORS = {"dict", "defaultdict", "OrderedDict", "Counter"}
_MAPPING_TYPE = re.compile(r"^(?:typing\.)?(?:Mapping|MutableMapping|Dict|dict|DefaultDict|OrderedDict|Counter)\b")


def _pandas(func: cst.BaseExpression, index: Dp2Index) -> bool:
    qual = index.qualify(func) or ""
    return qual.split(".")[0] == "pandas"


def _bin_count(call: cst.Call) -> bool:
    """Is ``pd.cut``'s ``bins`` a number of bins (edges then come from the data's min and max)?"""
    positional = [a.value for a in call.args if a.keyword is None]
    keyword = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    bins = keyword.get("bins", positional[1] if len(positional) > 1 else None)
    if isinstance(bins, cst.Integer):
        return True
    name = dotted(bins)
    if name is None:
        return False
    last = name.split(".")[-1]
    return bool(words(last) & {"n", "num", "k", "nbins", "count"}) or last.startswith(("n_", "num_"))


def _is_target(expr: cst.BaseExpression) -> bool:
    """The regression target / label vector itself (``y``, ``y_train``, ``self.target``)."""
    return _target_named(_data_root(expr))


def _target_named(name: str | None) -> bool:
    if name is None:
        return False
    ws = words(name.split(".")[-1])
    return bool(ws & _TARGET_WORDS) and not (ws & (_NOT_DATA - _TARGET_WORDS - {"y"}))


def _scales_target(call: cst.Call, index: Dp2Index) -> bool:
    """Target bounds count when they scale or clip the target; ``int(max(y)) + 1`` (a class count)
    or ``np.unique(y)`` (the class set of a classifier) do not."""
    for anc in index.ancestors(call):
        if isinstance(anc, cst.Call) and call_name(anc) in _COUNT_CALLS:
            return False
        if isinstance(anc, cst.Call) and call_name(anc) in _USE_CALLS:
            return True
        if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, cst.Divide) \
                and _averages_other_values(anc, call, index):
            continue
        if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, (cst.Subtract, cst.Divide)):
            return True
        if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            break
    if call_name(call) in {"unique", "nunique"}:
        return False
    stmt = _statement(call, index)
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
    if not isinstance(small, (cst.Assign, cst.AnnAssign)):
        return False
    names = assigned(small)[0]
    if any("." in n and words(n.split(".")[-1]) & _BOUND_ATTR_WORDS for n in names):
        return True
    scope = index.enclosing_function(call) or index.module
    for sub in walk(scope):
        if index.order.get(sub, -1) <= index.order[small] or not refs(sub) & names:
            continue
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Subtract, cst.Divide)):
            return True
        if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, (cst.SubtractAssign, cst.DivideAssign)) \
                and refs(sub.value) & names:
            return True  # ``y_train /= y_max``: the target scaled in place
        if isinstance(sub, cst.Call) and call_name(sub) in _USE_CALLS:
            return True
    return False


_AVERAGE_CALLS = {"sum", "nansum", "fsum"}
_CALIBRATION_WORDS = {"eps", "epsilon", "delta", "budget", "sensitivity", "sigma", "scale", "noise", "rho", "privacy"}


def _averages_other_values(div: cst.BinaryOperation, call: cst.Call, index: Dp2Index) -> bool:
    """``sum(per_class_precision) / (max(y) + 1)``: the target bound is only the divisor that averages
    values summed from something other than the target (a metric per class); it neither scales the
    target nor calibrates a mechanism (the summed values are not budget-named)."""
    if not index.inside(call, div.right):
        return False
    num = div.left
    if not (isinstance(num, cst.Call) and call_name(num) in _AVERAGE_CALLS and num.args):
        return False
    summed = value_refs(num.args[0].value)
    if not summed or summed & value_refs(call):
        return False
    return not any(words(n) & _CALIBRATION_WORDS for n in summed)


def _numeric_shift(call: cst.Call, index: Dp2Index) -> bool:
    """A max subtracted before ``exp`` (log-sum-exp, stable softmax) only keeps the arithmetic
    in range; it never scales the records."""
    scope = index.enclosing_function(call) or index.module
    stmt = _statement(call, index)
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
    held = assigned(small)[0] if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None \
        and any(n is call for n in walk(small.value)) else set()
    shifted: set[str] = set()
    for sub in walk(scope):
        if not (isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Subtract)):
            continue
        if not (any(n is call for n in walk(sub.right)) or refs(sub.right) & held):
            continue
        for anc in index.ancestors(sub):
            if isinstance(anc, cst.Call) and call_name(anc) in _EXP_CALLS:
                return True
            if isinstance(anc, (cst.Assign, cst.AnnAssign)):
                shifted |= assigned(anc)[0]
                break
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
    if not shifted:
        return False
    return any(
        isinstance(sub, cst.Call) and call_name(sub) in _EXP_CALLS and refs(sub) & shifted
        for sub in walk(scope)
    )


def _over_mapping(expr: cst.BaseExpression, index: Dp2Index) -> bool:
    """min/max over a dictionary's keys or values (an accountant's history, orders, budgets)."""
    if isinstance(expr, cst.Call) and call_name(expr) in {"keys", "values", "items"}:
        return True
    name = dotted(expr)
    if name is None:
        return False
    mappings = getattr(index, "_dp202_mappings", None)
    if mappings is None:
        mappings = set()
        for node in walk(index.module):
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
                value = node.value
                if isinstance(value, (cst.Dict, cst.DictComp)) or (
                    isinstance(value, cst.Call) and call_name(value) in _MAPPING_CTORS
                ):
                    mappings |= assigned(node)[0]
            if isinstance(node, (cst.Param, cst.AnnAssign)) and node.annotation is not None:
                if _MAPPING_TYPE.search(index.code(node.annotation.annotation)):
                    mappings |= target_names(node.name if isinstance(node, cst.Param) else node.target)
        index._dp202_mappings = mappings  # type: ignore[attr-defined]
    return name in mappings or bool(words(name.split(".")[-1]) & {"dict", "dictionary", "mapping", "history"})


def _ast_data_root(expr: ast.AST) -> str | None:
    """``_data_root`` on CPython's ``ast``."""
    base = expr
    for _ in range(12):
        if isinstance(base, ast.Subscript):
            base = base.value
        elif isinstance(base, ast.Attribute) and base.attr in {"values", "iloc", "loc", "T"}:
            base = base.value
        elif isinstance(base, ast.Call):
            name = ast_call_name(base)
            if name in _WRAPPER_METHODS and isinstance(base.func, ast.Attribute):
                base = base.func.value
            elif name in _WRAPPER_FUNCS and (base.args or base.keywords):
                first = base.args[0] if base.args else base.keywords[0].value
                base = first.value if isinstance(first, ast.Starred) else first
            else:
                return None
        elif isinstance(base, ast.BinOp):
            base = base.left
        else:
            break
    return ast_dotted(base)


def _ast_fitted_names(facts: AstFacts) -> set[str]:
    """``_fitted_names`` widened on ``ast`` (public categories not checked): names and containers
    assigned a value that builds a transformer anywhere in it (a constructor, a conditional, a
    pipeline, a factory call), and ``f()`` for each function returning such a value."""
    out: set[str] = set()

    def builds(value: ast.AST | None) -> bool:
        return value is not None and any(isinstance(c, ast.Call) and (
            ast_call_name(c) in _FITTED or f"{ast_call_name(c)}()" in out) for c in ast.walk(value))

    for _ in range(2):
        for node in facts.nodes(ast.Assign, ast.AnnAssign, ast.Return):
            value = node.value  # type: ignore[attr-defined]
            if not builds(value):
                continue
            if isinstance(node, ast.Return):
                fn = facts.enclosing_function(node)
                if fn is not None:
                    out.add(f"{fn.name}()")  # type: ignore[attr-defined]
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            out.update(n for t in targets for n in ast_target_names(t))
            for t in targets:
                if isinstance(t, ast.Subscript) and ast_dotted(t.value):
                    out.add(ast_dotted(t.value))  # type: ignore[arg-type]
        for node in facts.nodes(ast.Assign):
            if not builds(node.value) and any(isinstance(n, ast.Name) and n.id in out for n in ast.walk(node.value)):  # type: ignore[attr-defined]
                out.update(n for t in node.targets for n in ast_target_names(t))  # type: ignore[attr-defined]
    return out


def _ast_may_scale(facts: AstFacts, call: ast.Call) -> bool:
    """``_used_for_scaling`` widened: arithmetic, a use call or a dict around the call in its
    statement, or a statement that assigns it."""
    parent = facts.parents.get(call)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Sub, ast.Div, ast.Add, ast.Mult)):
            return True
        if isinstance(parent, ast.Call) and ast_call_name(parent) in _USE_CALLS:
            return True
        if isinstance(parent, ast.Call) and any(
                words(n.id) & _BUDGET_WORDS for a in (*parent.args, *(k.value for k in parent.keywords))
                for n in ast.walk(a) if isinstance(n, ast.Name)):
            return True
        if isinstance(parent, (ast.Dict, ast.DictComp)):
            return True
        if isinstance(parent, ast.keyword):  # a bound-named keyword (``lower=df[c].min()``)
            return True
        parent = facts.parents.get(parent)
    if isinstance(parent, ast.Return):  # ``_returned_as_sensitivity``
        fn = facts.enclosing_function(call)
        return fn is not None and bool(words(fn.name) & _CALIBRATION_WORDS)  # type: ignore[attr-defined]
    return isinstance(parent, (ast.Assign, ast.AnnAssign))


_LIBS = {"numpy", "torch", "pandas", "jax"}


def _ast_bound_data(facts: AstFacts, call: ast.Call, fitted: set[str]) -> list[ast.AST]:
    """What ``_bound_data`` may return for ``call`` (``cut`` and public categories not checked)."""
    name = ast_call_name(call)
    func = call.func
    args = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    if name in _SCALE_FUNCS or name == "cut":
        return args[:1]
    if name in _HIST_FUNCS:
        return [] if any(k.arg == "range" for k in call.keywords) else args[:1]
    if name in _FIT and isinstance(func, ast.Attribute):
        receiver = func.value
        held = receiver.value if isinstance(receiver, ast.Subscript) else receiver
        if isinstance(receiver, ast.Call) and (ast_call_name(receiver) in _FITTED
                                               or f"{ast_call_name(receiver)}()" in fitted) \
                or ast_dotted(held) in fitted:
            return args[:1]
        return []
    if name not in _BOUND_FUNCS and name not in _BOUND_METHODS:
        return []
    if isinstance(func, ast.Name):
        imported = facts.aliases.get(func.id, set())
        if func.id in {"min", "max"} and not imported:
            return args[:1] if len(call.args) == 1 and not isinstance(call.args[0], ast.Starred) else []
        return args[:1] if any(q.split(".")[0] in _LIBS for q in imported) else []
    if not isinstance(func, ast.Attribute):
        return []
    receiver = func.value
    root = ast_dotted(receiver)
    if root is not None and (root in _LIB_ROOTS or any(
            q.split(".")[0] in _LIBS | {"tensorflow"} for q in facts.aliases.get(root.split(".")[0], ()))):
        return args[:1] if name in _BOUND_FUNCS else []
    if name in _BOUND_METHODS:
        if name in {"min", "max"} and args and not _ast_is_axis(args[0]):
            return []
        return [receiver]
    return []


def _ast_is_axis(expr: ast.AST) -> bool:
    return isinstance(expr, ast.UnaryOp) or (isinstance(expr, ast.Constant) and type(expr.value) is int) or (
        isinstance(expr, ast.Name) and expr.id in {"axis", "dim"})
