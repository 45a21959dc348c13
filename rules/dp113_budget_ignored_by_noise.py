"""DP113: a function that calibrates or draws noise takes the privacy budget and never reads it."""
from __future__ import annotations


import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, unread_param
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, dotted, interface_only, number, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps", "budget"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "min", "small", "float", "finfo", "step", "lr"})
#: names of functions that compute a noise scale
_CALIBRATION = frozenset({"noise", "sigma", "multiplier", "std", "stddev", "scale"})
_ABSTRACT = frozenset({"abstractmethod", "overload", "abstractproperty"})
#: words of a user helper that releases a value with noise (``laplace_mech(value, eps, sens)``)
_MECHANISM_HELPERS = frozenset({"mech", "mechanism", "laplace", "geometric", "privatize", "privatise"})
#: words of an accounting helper named after the mechanism it analyses (``calc_rdp_of_gaussian_mechanism``)
_ACCOUNTING_WORDS = frozenset({"rdp", "calc", "compute", "bound", "upperbound", "accountant", "accounting",
                               "epsilon", "eps", "moment", "moments", "privacy", "loss", "spent", "cost"})


#: parameters of an Adam-style optimiser: an ``eps`` beside them is its numerical-stability constant
_OPTIMISER_SIBLINGS = frozenset({"b1", "b2", "beta1", "beta2", "beta_1", "beta_2", "eps_root", "amsgrad", "momentum"})


def _optimiser_eps(fn: cst.FunctionDef) -> bool:
    """``scale_by_adam(b1, b2, eps, eps_root)``: the function takes an optimiser's moment decays and no δ, so
    its ``eps`` is the optimiser's constant, not a privacy budget."""
    names = {p.name.value.lower() for p in (*fn.params.params, *fn.params.kwonly_params, *fn.params.posonly_params)}
    return len(names & _OPTIMISER_SIBLINGS) >= 2 and not any("delta" in n for n in names)


def _budget_params(fn: cst.FunctionDef) -> list[str]:
    out = []
    if _optimiser_eps(fn):
        return out
    for param in (*fn.params.params, *fn.params.kwonly_params, *fn.params.posonly_params):
        pieces = words(param.name.value)
        if not pieces & _BUDGET or pieces & _NUMERIC:
            continue
        default = number(param.default) if param.default is not None else None
        if default is not None and 0 < default < 1e-3:
            continue  # a numerical eps=1e-8
        out.append(param.name.value)
    return out


class BudgetIgnoredByNoise(Rule):
    id = "DP113"
    name = "budget-ignored-by-noise"
    category = "general"
    severity = "error"
    summary = "a noise-calibration or noise-drawing function takes ε as a parameter and never reads it"
    rationale = (
        "A function named for a noise scale (`compute_noise_multiplier`, `get_sigma`, `noise_scale`) or "
        "one that draws noise, and that is given the privacy budget (`epsilon`, `target_eps`, "
        "`budget`), promises noise calibrated to that budget. When the body never reads the "
        "parameter, the noise is the same whatever ε the caller asks for: a hard-coded `return 1.0` "
        "or a fixed `laplace(0, 1.0)` claims ε-DP for every ε, and for a small ε it is far too "
        "little. Not reported: interfaces (a body of only docstring/pass/raise, `@abstractmethod`), "
        "functions that hand `locals()` on, an `eps` with a tiny numerical default or named for a "
        "norm/optimiser, code with no DP context. Fix: compute the noise from the budget, or drop "
        "the parameter and say that the noise is fixed."
    )
    TRIGGERS = ("eps", "budget")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a function whose budget-named parameter no ``Name`` of its body reads."""
        return unread_param(facts, _BUDGET)

    VALID = (
        # an accountant's dispatcher takes the budget for a uniform signature (``_eps``) and calls helpers
        # named after the mechanism they analyse: no noise is drawn here
        """
def rdp_of_sampled_gaussian_mechanism(alpha, params, rate, _eps):
    if float(alpha).is_integer():
        return calc_bound_of_rdp_sampled_gaussian_mechanism_int(int(alpha), params, rate)
    return calc_bound_of_rdp_sampled_gaussian_mechanism_frac(alpha, params, rate)
""",
        "def compute_noise_multiplier(target_epsilon, target_delta, steps, q):\n"
        "    return (q * (steps * 2 * __import__('math').log(1 / target_delta)) ** 0.5) / target_epsilon\n",
        "import numpy as np\ndef laplace_noise(shape, epsilon, sensitivity=1.0):\n"
        "    return np.random.laplace(0.0, sensitivity / epsilon, shape)\n",
        # an interface
        "class Mechanism:\n    def noise_scale(self, epsilon):\n        raise NotImplementedError\n",
        # an Adam-style transformation inside a DP trainer: eps sits beside b1/b2, the noise uses the multiplier
        """
import jax, jax.numpy as jnp
def scale_by_adam_corrected(batch_size, noise_multiplier, clip_norm, b1, b2, eps, eps_root):
    def update_fn(updates, state, key):
        noise_std = noise_multiplier * clip_norm / batch_size
        noised = updates + noise_std * jax.random.normal(key, updates.shape)
        return noised / (jnp.sqrt(state + eps_root) + 1.0), state
    return update_fn
""",
        # twin: the budget is split between the helper calls
        """
from mechanisms import laplace_mech
def private_variance(values, epsilon):
    n = laplace_mech(values.size, epsilon / 2, 1.0)
    s = laplace_mech(values.sum(), epsilon / 2, 100.0)
    return s / n
""",
        # a numerical eps
        "import torch\ndef gumbel_noise(shape, eps=1e-20):\n"
        "    u = torch.rand(shape)\n    return -torch.log(-torch.log(u + 1e-20) + 1e-20)\n",
        "import numpy as np\nclass Gaussian:\n    def __init__(self, epsilon, delta):\n"
        "        self.sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon\n"
        "    def get_sigma(self, epsilon):\n        return self.sigma if epsilon is None else 0.0\n",
    )
    INVALID = (
        # twin of the Adam transformation: it takes the privacy budget (with δ) beside b1/b2 and ignores it
        """
import numpy as np
def dp_adam_noise(grads, b1, b2, epsilon, delta, clip):  # <-
    sigma = 1.1 * clip
    return grads + np.random.normal(0.0, sigma, grads.shape)
""",
        # the noise multiplier is hard-coded whatever the target budget
        """
def compute_noise_multiplier(target_epsilon, target_delta, epochs, batch_size, n):  # <-
    q = batch_size / n
    steps = epochs / q
    noise_multiplier = 1.0
    return noise_multiplier
""",
        # a method: the budget attribute is set, the scale ignores its argument
        """
class LaplaceMechanism:
    def __init__(self, sensitivity):
        self.sensitivity = sensitivity
    def scale(self, epsilon):  # <-
        return self.sensitivity
""",
        # a draw with a fixed scale in a function given the budget (torch)
        """
import torch
def privatize(embedding, epsilon):  # <-
    return embedding + torch.distributions.Laplace(0.0, 1.0).sample(embedding.shape)
""",
        # the budget is ignored and a hard-coded share is handed to a mechanism helper per component
        """
from mechanisms import laplace_mech
def private_variance(values, epsilon):  # <-
    n = laplace_mech(values.size, 0.33, 1.0)
    s = laplace_mech(values.sum(), 0.33, 100.0)
    return s / n
""",
        # keyword-only budget, numpy draw
        """
import numpy as np
def add_gaussian_noise(x, *, privacy_budget, delta):  # <-
    sigma = np.sqrt(2 * np.log(1.25 / delta))
    return x + np.random.normal(0.0, sigma, x.shape)
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = _budget_params(node)
        if not params or interface_only(node):
            return
        if any(call_name(d.decorator) in _ABSTRACT if isinstance(d.decorator, cst.Call)
               else (dotted(d.decorator) or "").split(".")[-1] in _ABSTRACT for d in node.decorators):
            return
        used: set[str] = set()
        draws = False
        returns = False
        for sub in walk(node.body):
            if isinstance(sub, cst.Name):
                used.add(sub.value)
            elif isinstance(sub, cst.Call) and (call_name(sub) in PURE_DRAWS | {"Laplace", "Normal"}
                                                or words(call_name(sub)) & _MECHANISM_HELPERS
                                                and not words(call_name(sub)) & _ACCOUNTING_WORDS):
                draws = True
            elif isinstance(sub, cst.Return) and sub.value is not None:
                returns = True
        if used & {"locals", "vars"}:
            return
        unused = [p for p in params if p not in used and not p.startswith("_")]  # ``_eps``: unused on purpose
        if not unused:
            return
        named = bool(words(node.name.value) & _CALIBRATION)
        if not (draws or (named and returns)):
            return
        what = "draws noise" if draws else f"computes a noise parameter (`{node.name.value}`)"
        self.report(node.name, f"`{node.name.value}` {what} and takes the budget `{unused[0]}` but never reads it: "
                               f"the noise is the same for every ε the caller asks for")
