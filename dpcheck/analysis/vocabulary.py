"""The words and library names that say "differential privacy" or "training data" in code."""
from __future__ import annotations

import re

from dpcheck.analysis.syntax import words

#: identifiers that name a DP parameter on their own
STRONG_DP_NAMES = frozenset({
    "epsilon", "ε", "target_epsilon", "target_eps", "privacy_budget", "noise_multiplier", "target_delta",
    "l2_norm_clip", "dp_epsilon", "dp_delta", "eps_budget", "epsilon_budget", "total_epsilon",
    "epsilon_per_step", "laplace_scale", "lap_scale", "noise_multiplicity", "priv_budget", "lamda",
    "privacy_loss", "rdp_orders", "δ", "ρ",
})
#: word pieces that make an identifier a strong DP name (``epsilon_split``, ``privacy_params``)
STRONG_DP_WORDS = frozenset({"epsilon", "privacy", "dp", "rdp", "zcdp", "pate", "accountant", "ldp"})
#: identifiers that name a DP parameter only next to another DP signal (``eps`` is also a
#: numerical-stability constant, ``sigma`` a kernel width, ``delta`` a Huber threshold)
WEAK_DP_NAMES = frozenset({
    "eps", "delta", "rho", "sigma", "budget", "noise_scale", "noise_std", "sensitivity",
    "lambda_", "noise_sigma", "clip_norm", "max_grad_norm", "lam", "orders",
})
#: ``teachers`` alone is also a knowledge-distillation ensemble: PATE only with another signal
WEAK_DP_WORDS = frozenset({"eps", "delta", "rho", "sigma", "budget", "sensitivity", "lam", "teachers"})
#: two weak names make DP context only if one of them is one of these (``eps`` + ``rho`` is
#: Adadelta, ``mu`` + ``sigma`` a Gaussian, ``sigma`` + ``rho`` a correlation)
ANCHOR_DP_WORDS = frozenset({"delta", "sensitivity", "budget", "lam", "noise", "clip", "teachers"})

#: top-level packages whose use is a DP signal
DP_LIBRARIES = frozenset({
    "diffprivlib", "opacus", "tensorflow_privacy", "pipeline_dp", "tmlt", "prv_accountant", "autodp",
    "dp_accounting", "opendp", "snsynth", "smartnoise", "pydp", "jax_privacy", "private_pgm", "mbi",
    "dpsynth", "dp_cgans", "privacy_engine",
})
#: called names (last segment) of noise mechanisms and privacy accountants
ACCOUNTANT_CALL = re.compile(
    r"(?i)^(?:compute_rdp\w*|get_privacy_spent|compute_eps\w*|rdp_to_\w+|get_noise_multiplier|"
    r"compute_dp_sgd_privacy\w*|\w*accountant\w*|privacyengine|compute_log_moment\w*|"
    r"\w*moments?_account\w*|gnmax\w*|\w*noisy_max\w*|\w*laplace_mech\w*|\w*gaussian_mech\w*|"
    r"\w*exponential_mech\w*|sparse_vector\w*|\w*privacy_spent\w*|make_private\w*|"
    r"compute_privacy\w*|\w*_rdp|rdp_\w+|laplacemechanism|gaussianmechanism|report_noisy\w*|\w*log_moments?\w*)$"
)
#: called names (last segment) of random draws that are DP noise when their scale has a DP name
NOISE_DRAWS = frozenset({
    "laplace", "normal", "gumbel", "randn", "standard_normal", "normal_", "exponential", "randn_like",
    "normal_like", "gaussian", "Laplace", "Normal", "rvs", "random_normal", "sample",
})
#: called names that are always noise primitives
STRONG_NOISE_DRAWS = frozenset({"laplace", "gumbel", "Laplace", "add_noise", "gaussian_noise", "laplace_noise"})

#: phrases claiming DP in a docstring: case matters for the acronyms ...
_CLAIM_CASED = re.compile(r"\bDP\b|\bDP-?(?:SGD|GAN|Adam|CTGAN|WGAN|VAE)\b|\bPATE\b|\bε-DP\b")
#: ... and not for the words (matched on the lower-cased text)
_CLAIM_LOWER = re.compile(
    r"differential(?:ly)?[\s_-]*priva|\((?:ε|\\epsilon|epsilon|eps)\s*,\s*(?:δ|\\delta|delta)\)"
    r"|privacy[\s_-]*(?:budget|loss|guarantee|accountant|accounting|engine)|\brényi\b|\brenyi\b|\bzcdp\b"
    r"|\bpate[\s_-]?gan|moments?\s+accountant|\bprivately\b"
    r"|\bprivate[\s_-]+(?:data[\s_-]+(?:generation|release|synthesis)|synthe\w*|gan\b|learning|training|release)"
)
_CLAIM_HINTS = ("priva", "pate", "rényi", "renyi", "zcdp", "epsilon", "eps", "accountant")


def dp_claim(text: str) -> str | None:
    """The phrase of ``text`` that claims differential privacy, else None."""
    if "DP" in text or "PATE" in text:
        match = _CLAIM_CASED.search(text)
        if match:
            return match.group(0)
    lower = text.lower()
    if not any(h in lower for h in _CLAIM_HINTS):
        return None
    match = _CLAIM_LOWER.search(lower)
    return match.group(0) if match else None


#: names of DP generators / DP training setups: a module naming one in an identifier or a string
#: (``pategan``, ``"PATE-GAN"``, ``private-data-generation``, ``dp_sgd``) is DP code
DP_GENERATOR_NAME = re.compile(
    r"(?i)pate[\s_-]?gan|private[\s_-]data|(?<![a-z0-9])dp[_-]?(?:sgd|gan|synth)|privacy[_-]?engine"
)
_GENERATOR_HINTS = ("pate", "private", "dp", "privacy")


def dp_generator_name(text: str) -> str | None:
    """The DP generator / DP training name ``text`` mentions, else None."""
    lower = text.lower()
    if not any(h in lower for h in _GENERATOR_HINTS):
        return None
    match = DP_GENERATOR_NAME.search(text)
    return match.group(0) if match else None


#: class / function names claiming DP: ``DPGAN``, ``PrivateSynthesizer``, ``PATEGAN``, ``dp_train``
DP_NAME = re.compile(
    r"^_*(?:DP|Dp|dp)(?=[A-Z_]|$)|(?<=[a-z_])DP(?=[A-Z_]|$)|PATE|(?:^|_)pate(?:_|$)|^Pate|Private|Privacy"
    r"|(?:^|_)(?:private|privacy|privately)(?:_|$)|(?:^|_)dp(?:_|$)"
    # local DP: ``LDP``, ``ldp_perturb``, ``LDPServer`` (not ``LDPC`` codes)
    r"|(?:^|_)(?:LDP|Ldp|ldp)(?=_|$|[A-Z][a-z])"
)

#: names of training entry points whose data parameters hold the private data
TRAIN_ENTRY = re.compile(r"^_{0,2}(?:fit|train|partial_fit|fit_transform|fit_sample|fit_resample)(?:_\w+)?$|^_?train\w*$")
#: sampling entry points that train when their body has a training step
MAYBE_TRAIN_ENTRY = frozenset({"generate", "sample", "run", "synthesize", "fit_generate", "__call__"})
#: word pieces of a parameter that make it a hyperparameter, not data
HYPER_WORDS = frozenset({
    "epsilon", "eps", "delta", "rho", "sigma", "budget", "privacy", "noise", "multiplier", "clip", "norm",
    "n", "num", "number", "count", "size", "epochs", "epoch", "iters", "iter", "iterations", "steps",
    "lr", "learning", "rate", "seed", "random", "state", "verbose", "bounds", "bound", "lower",
    "upper", "min", "max", "range", "columns", "cols", "column", "names", "name", "categorical",
    "discrete", "continuous", "ordinal", "metadata", "meta", "schema", "config", "cfg", "params", "device",
    "path", "dir", "file", "filename", "callback", "callbacks", "logger", "log", "model", "optimizer",
    "transformer", "encoder", "k", "dim", "dims", "depth", "layers", "hidden", "alpha", "beta", "gamma",
    "lamda", "lambda", "decay", "kwargs", "args", "mode", "strategy", "method", "preprocessor", "self",
    "cls", "domain", "workers", "jobs", "gpu", "cuda", "dtype", "shape", "generator", "discriminator",
    "accountant", "mechanism", "verbosity", "debug", "tol", "threshold", "orders", "order", "teachers",
    "moments", "latent", "z", "embedding", "cuda", "conditional", "checkpoint", "save", "out",
})
#: word pieces of names that hold released/synthetic data, not the private input
NOT_PRIVATE_WORDS = frozenset({
    "synth", "synthetic", "fake", "generated", "gen", "sampled", "noisy", "private", "priv", "dp", "anon",
    "public", "released", "sanitized", "perturbed",
})
#: word pieces of a name that holds a dataset (whose column reads are private records)
DATASET_WORDS = frozenset({
    "data", "df", "dataset", "train", "training", "real", "records", "table", "raw", "orig", "original",
    "frame", "dataframe",
})
#: attributes / methods that read a dataset's values
COLUMN_READS = frozenset({"values", "iloc", "loc", "to_numpy", "at", "iat"})


def is_dataset_name(identifier: str) -> bool:
    """``df``, ``train_data``, ``X``, ``X_train``, ``self.real_df`` (not ``synth_df``)."""
    last = identifier.rsplit(".", 1)[-1]
    if last in ("X", "D") or last.startswith("X_"):
        pieces = words(last)
        return not pieces & NOT_PRIVATE_WORDS and "test" not in pieces
    pieces = words(last)
    return bool(pieces & DATASET_WORDS) and not pieces & NOT_PRIVATE_WORDS and not pieces & {"test", "loader", "path", "dir", "file", "name", "names", "type", "types", "config", "module"}


#: calls whose value is a count or a type, not record values
SHAPE_CALLS = frozenset({"len", "isinstance", "type", "id", "hash", "shape", "ndim", "callable", "hasattr", "getattr_"})
SHAPE_ATTRS = frozenset({"shape", "dtype", "dtypes", "columns", "ndim", "size", "index", "nbytes", "itemsize", "device", "names"})
#: model outputs: scores/log-probabilities computed by a model are not records
MODEL_OUTPUT_CALLS = frozenset({
    "predict", "predict_proba", "predict_log_proba", "log_prob", "logpdf", "logpmf", "score", "score_samples",
    "decision_function", "loss", "evaluate", "log_likelihood", "keys", "forward", "log_softmax",
})
#: word pieces of a called object that is a model: its outputs on the data are scores, not records
MODEL_CALLEE_WORDS = frozenset({
    "model", "net", "network", "discriminator", "critic", "classifier", "teacher", "student", "netd",
    "disc", "scorer", "clf", "predictor", "regressor", "estimator",
})
#: calls that read a dataset from storage (script-level private data)
LOAD_CALLS = frozenset({
    "read_csv", "read_parquet", "read_excel", "read_table", "read_json", "read_feather", "read_pickle",
    "loadtxt", "genfromtxt", "fetch_openml", "load_dataset", "fetch_adult", "load_iris", "load_digits",
    "load_breast_cancer", "load_wine", "fetch_california_housing", "load_diabetes",
})
#: a training step inside a body (backward/optimizer step/minimize/fit/session run)
TRAIN_STEP_CALLS = frozenset({"backward", "minimize", "apply_gradients", "train_on_batch", "partial_fit", "fit", "fit_transform"})

_TINY = 1e-2


def dp_name_strength(identifier: str) -> int:
    """2 = a DP parameter name on its own, 1 = DP only with company, 0 = not a DP name."""
    if identifier in STRONG_DP_NAMES:
        return 2
    pieces = words(identifier)
    if pieces & STRONG_DP_WORDS:
        return 2
    if identifier in WEAK_DP_NAMES or pieces & WEAK_DP_WORDS:
        return 1
    return 0


def stability_constant(identifier: str, value: float | None) -> bool:
    """``eps=1e-8`` / ``epsilon = 0.005``: a numerical-stability constant or a cut-off (a mixture
    weight threshold), not a privacy budget (a DP epsilon is never below 0.01; a DP delta is, so
    only epsilon-like names qualify)."""
    return value is not None and abs(value) < _TINY and bool(words(identifier) & {"eps", "epsilon"})


def is_data_param_name(name: str) -> bool:
    if name in ("self", "cls"):
        return False
    pieces = words(name)
    return not pieces & HYPER_WORDS and dp_name_strength(name) == 0
