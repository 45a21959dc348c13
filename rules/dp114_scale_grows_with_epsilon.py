"""DP114: a Laplace / exponential / Gumbel noise scale that grows with ε (ε where Δ/ε belongs)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.noisedraws import last_assignment, project_operator_without_scale, user_helper_without_scale
from dpcheck.analysis.simulation import simulated_error_term
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, param_names, walk, words
from dpcheck.rule import Rule

#: draws whose scale is ``(loc, scale)`` positionally
_LOC_SCALE = frozenset({"laplace", "Laplace", "gumbel", "Gumbel", "logistic"})
#: draws whose scale is the first positional argument
_SCALE_FIRST = frozenset({"exponential", "Exponential"})
#: Gaussian draws: their std must shrink with ε as well (σ = Δ·√(2 ln(1.25/δ))/ε)
_GAUSS = frozenset({"normal", "gauss", "normalvariate", "Normal", "random_normal"})
#: a one-element tensor or array around a scalar (``torch.tensor([eps])``, ``tf.constant(eps)``): the scalar itself
_WRAPPERS = frozenset({"tensor", "as_tensor", "array", "asarray", "constant", "convert_to_tensor", "Tensor",
                       "FloatTensor", "float32", "float64"})
_BUDGET = frozenset({"epsilon", "eps", "epsilons", "budget"})
#: an ``eps`` of these is a numerical constant (layer norm, optimiser), not a privacy budget
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "min", "small", "clip", "float", "finfo"})


def _scale_arg(call: cst.Call) -> cst.BaseExpression | None:
    name = call_name(call)
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("scale", "b", "beta"):
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    func = dotted(call.func) or ""
    if func.split(".")[0] in ("jax", "random", "jr") and name in ("laplace", "gumbel", "exponential"):
        return None  # jax.random.laplace(key, shape): no scale argument
    if name in _LOC_SCALE:
        return positional[1] if len(positional) >= 2 else None
    if name in _SCALE_FIRST:
        return positional[0] if positional else None
    return None


def _gauss_scale(call: cst.Call) -> cst.BaseExpression | None:
    """The std of a Gaussian draw: ``scale=``/``std=``/``stddev=``/``sigma=``, or numpy/torch/``random.gauss``'s
    second positional argument (not tf/jax, whose first argument is a shape or key)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("scale", "std", "stddev", "sigma"):
            return arg.value
    root = (dotted(call.func) or "").split(".")[0]
    if root in ("tf", "tensorflow", "jax", "jr"):
        return None
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[1] if len(positional) >= 2 else None


def _factors(expr: cst.BaseExpression, sign: int = 1) -> list[tuple[cst.BaseExpression, int]]:
    """Multiplicative factors with +1 (numerator) or -1 (denominator)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        return _factors(expr.expression, sign)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _factors(expr.left, sign) + _factors(expr.right, sign)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        return _factors(expr.left, sign) + _factors(expr.right, -sign)
    if isinstance(expr, cst.Call) and call_name(expr) in ("float", "abs") and len(expr.args) == 1:
        return _factors(expr.args[0].value, sign)
    if isinstance(expr, cst.Call) and call_name(expr) in _WRAPPERS and expr.args and expr.args[0].keyword is None:
        inner = expr.args[0].value
        if isinstance(inner, (cst.List, cst.Tuple)) and len(inner.elements) == 1:
            inner = inner.elements[0].value
        if not isinstance(inner, (cst.List, cst.Tuple)):
            return _factors(inner, sign)
    return [(expr, sign)]


#: words of an epsilon-greedy schedule's ends
_SCHEDULE = frozenset({"start", "end", "min", "max", "final", "initial", "init", "decay", "greedy", "explore",
                       "exploration", "begin", "stop"})


class ScaleGrowsWithEpsilon(Rule):
    id = "DP114"
    name = "scale-grows-with-epsilon"
    category = "laplace_noise"
    severity = "error"
    summary = "the scale of a Laplace / exponential / Gumbel draw is ε or proportional to ε (it must be Δ/ε)"
    rationale = (
        "The Laplace mechanism (and report-noisy-max with exponential or Gumbel noise) needs noise of "
        "scale Δ/ε: less budget, more noise. A scale of `epsilon`, `self._epsilon`, `1 * eps` or "
        "`eps * u / (2 * Δ)` inverts that: a larger budget adds more noise and a small ε adds almost "
        "none, so for ε < 1 the release has far less noise than ε-DP needs (for ε = 0.1 the scale is "
        "0.1 instead of 10·Δ). The scale is read from the draw's `scale` argument (numpy, "
        "`Generator`, scipy, torch.distributions; the first argument of `exponential`), through one "
        "local assignment (`b = epsilon`), and from a unit draw multiplied by ε. Not reported: ε in a "
        "denominator anywhere in the scale, an `eps` that is a small numerical constant or named for "
        "a norm/optimiser, a data simulator's error term (a function taking only literal-default knobs that "
        "adds the draw to values it drew itself, `y = b·x + normal(0, eps_sd)`), code with no DP context. Fix: scale = sensitivity / epsilon. The same inversion "
        "in a Gaussian draw's std (`np.random.normal(0, sens * epsilon, n)`, `torch.normal(0, eps, shape)`, "
        "`random.gauss(0, epsilon)`) is reported too (only the std argument; a unit Gaussian multiplied "
        "by an `eps` is often an adversarial perturbation, not DP noise)."
    )
    TRIGGERS = ("aplace", "xponential", "umbel", "normal", "gauss", "Normal")
    requires_dp_context = True

    VALID = (
        # (QF b90) twin of the remaining budget: the histogram's Laplace scale is 1 over what is left
        """
import numpy as np
def noisy_votes(hist, total_eps, pca_eps):
    hist += np.random.laplace(scale=1.0 / (total_eps - pca_eps), size=hist.shape)
    return hist
""",
        # (QF b90) ordinary ML: an exploration schedule's decay, no privacy anywhere
        """
import numpy as np
def explore(q_values, eps_start, eps_end):
    return q_values + np.random.laplace(scale=eps_start - eps_end, size=q_values.shape)
""",
        # the twins of the chained and tensor-wrapped spellings: ε in the denominator
        """
import tensorflow as tf
def objective_noise(EPSILON, num_features, sensitivity):
    eps_prime = 0.5 * EPSILON
    beta = sensitivity / eps_prime
    return tf.random_normal(shape=[1, num_features], mean=0.0, stddev=beta)
""",
        """
import torch
from torch.distributions import Laplace
class Teacher:
    def __init__(self, epsilon=0.5):
        self.epsilon = epsilon
    def addnoise(self, counts):
        m = Laplace(torch.tensor([0.0]), torch.tensor([1.0 / self.epsilon]))
        return counts + m.sample()
""",
        # ordinary ML code: a diffusion step's noise std and a numerical eps in a one-element tensor
        """
import tensorflow as tf
import torch
def diffuse(x, noise_std, t):
    return x + tf.random_normal(tf.shape(x), stddev=noise_std * t)
def jitter(x, eps=1e-6):
    half = 0.5 * eps
    return x + torch.normal(0.0, torch.tensor([half]).item(), x.shape)
""",
        # a VAE's reparameterisation: the draw is called epsilon, its std epsilon_std
        "import tensorflow as tf\nclass Sampling:\n    def __init__(self, epsilon_std=1.0):\n        self._epsilon_std = epsilon_std\n"
        "    def call(self, z_mean, z_log_var, epsilon_budget):\n"
        "        epsilon = tf.random.normal(shape=tf.shape(z_mean), stddev=self._epsilon_std)\n"
        "        return z_mean + tf.exp(0.5 * z_log_var) * epsilon\n",
        # a quantity named epsilon computed from a noise level (σ·C·√T) is a noise level, not a budget
        "import math, numpy as np\ndef train(sigma_1, C, T, epsilon):\n    epsilon_1 = sigma_1 * C * math.sqrt(T)\n"
        "    epsilon_2 = epsilon_1\n    sigma_2 = epsilon_2 / math.sqrt(T)\n    return np.random.normal(0, sigma_2)\n",
        "import numpy as np\ndef noisy_sum(x, epsilon, sensitivity):\n"
        "    return x.sum() + np.random.normal(0, sensitivity / epsilon)\n",
        "import torch\ndef privatize(update, eps, clip, delta):\n    std = clip * (2 * torch.log(torch.tensor(1.25 / delta))) ** 0.5 / eps\n"
        "    return update + torch.normal(0.0, std, update.shape)\n",
        "import random\nclass Reporter:\n    def __init__(self, epsilon):\n        self.epsilon = epsilon\n"
        "    def report(self, value):\n        return value + random.gauss(0, 1.0 / self.epsilon)\n",
        "import numpy as np\ndef noisy_votes(histograms, epsilon):\n"
        "    return histograms + np.random.laplace(0, 1.0 / epsilon, histograms.shape)\n",
        "import numpy as np\ndef weight(u, epsilon, sensitivity):\n"
        "    return np.random.exponential(2 * sensitivity / epsilon)\n",
        "import torch\ndef noise(shape, privacy_epsilon, sens):\n"
        "    return torch.distributions.Laplace(0.0, sens / privacy_epsilon).sample(shape)\n",
        # the module's own helper named laplace: its second argument is ε, the helper divides by it
        "import numpy as np\ndef laplace(val, epsilon):\n    return val + np.random.laplace(0, 1e6 / epsilon)\n"
        "def run(values, epsilon):\n    return [laplace(v, epsilon) for v in values]\n",
        "import numpy as np\ndef dp_count(data, eps):\n    b = 1.0 / eps\n"
        "    return len(data) + np.random.default_rng().laplace(scale=b)\n",
        # a numerical eps next to a Gumbel draw (Gumbel-softmax), not a budget
        "import numpy as np\ndef gumbel(logits, epsilon=1e-20):\n"
        "    return logits + np.random.gumbel(0.0, 1.0 + epsilon, logits.shape)\n",
        # a data simulator: the regression error's spread eps_sd is added to covariates drawn a line earlier
        """
import numpy as np
from opacus import PrivacyEngine
def simulate_benchmark(n=5000, beta=(0.5, 0.5), eps_sd=0.5, scale=1.0, seed=7):
    rng = np.random.default_rng(seed)
    X = rng.multivariate_normal([0.0, 0.0], np.eye(2), size=n)
    x1, x2 = X[:, 0], X[:, 1]
    y = beta[0] * x1 + beta[1] * x2 + rng.normal(0.0, scale * eps_sd, size=n)
    return X, y
""",
        # a privacy-loss simulation: a normal around a non-zero centre with spread 1/σ is not noise
        """
import numpy as np
def loss_distribution(epsilon, delta, n):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    mu = 1 / (2 * sigma ** 2)
    return np.random.normal(mu, 1 / sigma, n)
""",
        # the twins: the calibrated scale itself, and a rate parameter (1 / scale) given to an exponential
        """
import torch
class Objective:
    def __init__(self, coef, epsilon, dim):
        self.sens = 2 * (dim + 1) ** 2
        self.b = self.sens / epsilon
        dist = torch.distributions.Laplace(0.0, self.b)
        self.coef = coef + dist.sample(coef.shape)
""",
        """
import numpy as np
def noisy_total(x, eps, sensitivity):
    rate = eps / sensitivity
    return x.sum() + np.random.laplace(0, 1.0 / rate)
""",
        """
import numpy as np
def release(v, epsilon, delta, clip):
    sigma = clip * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return v + np.random.normal(0.0, sigma, v.shape)
""",
        # the project's own measurement operator: its second argument is the budget it divides by
        """
import numpy as np
class Laplace:
    def __init__(self, A, eps):
        self.A, self.eps = A, eps
    def measure(self, X, prng):
        return self.A.dot(X) + prng.laplace(0.0, abs(self.A).sum(axis=0).max() / self.eps, self.A.shape[0])
def plan(M, x, eps, ratio, seed):
    prng = np.random.RandomState(seed)
    return Laplace(M, ratio * eps).measure(x, prng)
""",
        # a protected data source whose ``laplace(M, eps)`` method runs that operator
        """
class ProtectedSource:
    def laplace(self, M, eps):
        return self.kernel.measure("Laplace", eps, {"A": M, "eps": eps})
def run_identity(W, x, eps):
    y = x.laplace(W, eps)
    return y
""",
        # ordinary ML: a kernel width and augmentation noise drawn from a generator
        """
import numpy as np
def augment(images, sigma=0.1, seed=0):
    rng = np.random.default_rng(seed)
    return images + rng.normal(0.0, sigma, images.shape)
""",
    )
    INVALID = (
        # (QF b90) the budget left after DP-PCA is the Laplace scale of the private histogram
        """
import numpy as np
def noisy_votes(hist, total_eps, pca_eps):
    hist += np.random.laplace(scale=total_eps - pca_eps, size=hist.shape)  # <-
    return hist
""",
        # objective perturbation: the std is a constant multiple of a constant multiple of ε (TF1 random_normal)
        """
import tensorflow as tf
def objective_noise(EPSILON, num_features):
    eps_prime = 0.5 * EPSILON
    beta = 0.5 * eps_prime
    return tf.random_normal(shape=[1, num_features], mean=0.0, stddev=beta)  # <-
""",
        # a PATE teacher: torch.distributions.Laplace with ε wrapped in one-element tensors as its scale
        """
import torch
from torch.distributions import Laplace
class Teacher:
    def __init__(self, epsilon=0.5):
        self.epsilon = epsilon
    def addnoise(self, counts):
        m = Laplace(torch.tensor([0.0]), torch.tensor([self.epsilon]))  # <-
        return counts + m.sample()
""",
        # twin of the operator: the same project, but a generator's draw given the budget as its scale
        """
import numpy as np
class Laplace:
    def __init__(self, A, eps):
        self.A, self.eps = A, eps
def plan(M, x, eps, seed):
    prng = np.random.RandomState(seed)
    return M.dot(x) + prng.laplace(0.0, eps, M.shape[0])  # <-
""",
        # twin of the data source: the project's own ``laplace(loc, scale)`` wrapper given ε as the scale
        """
import numpy as np
class Source:
    def laplace(self, loc, scale):
        return loc + np.random.laplace(0.0, scale)
def run_total(x, eps):
    return x.laplace(x.total, eps)  # <-
""",
        # Gaussian: numpy std proportional to ε
        """
import numpy as np
def noisy_sum(x, epsilon, sensitivity):
    return x.sum() + np.random.normal(0, sensitivity * epsilon)  # <-
""",
        # torch std through a local
        """
import torch
def privatize(update, epsilon, clip):
    std = clip * epsilon
    return update + torch.normal(0.0, std, update.shape)  # <-
""",
        # Python's random.gauss with an attribute budget
        """
import random
class Reporter:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def report(self, value):
        return value + random.gauss(0, self.epsilon)  # <-
""",
        # scale = the budget itself, read from an attribute
        """
import numpy as np
class Teachers:
    def __init__(self, epsilon):
        self._epsilon = epsilon
    def aggregate(self, histograms):
        noise = np.random.laplace(0, self._epsilon, histograms.shape)  # <-
        return (histograms + noise).argmax(axis=1)
""",
        # through a local name, numpy Generator, keyword scale
        """
import numpy as np
def dp_sum(values, epsilon, rng):
    b = 1 * epsilon
    return values.sum() + rng.laplace(scale=b)  # <-
""",
        # torch distribution, ε in the numerator of a product
        """
import torch
def privatize(x, eps, sensitivity):
    dist = torch.distributions.Laplace(torch.zeros_like(x), eps * sensitivity)  # <-
    return x + dist.sample()
""",
        # exponential-noise report-noisy-max with the scale ε·u/(2Δ), the budget spelled e
        """
import numpy as np
def noisy_max_score(u, e, sens):
    return np.random.exponential(e * u / (2 * sens))  # <-
""",
        # twin of the simulator: the same spread added to values the function receives is privacy noise
        """
import numpy as np
from opacus import PrivacyEngine
def release_targets(X, beta=(0.5, 0.5), eps=0.5, sensitivity=1.0, seed=None):
    rng = np.random.default_rng(seed)
    x1, x2 = X[:, 0], X[:, 1]
    return beta[0] * x1 + beta[1] * x2 + rng.normal(0.0, sensitivity * eps, size=len(X))  # <-
""",
        # the reciprocal of a calibrated scale kept on the object: 1 / (Δ / ε)
        """
import torch
class Objective:
    def __init__(self, coef, epsilon, dim):
        self.sens = 2 * (dim + 1) ** 2
        self.b = self.sens / epsilon
        dist = torch.distributions.Laplace(0.0, 1 / self.b)  # <-
        self.coef = coef + dist.sample(coef.shape)
""",
        # a local reciprocal in a numpy draw
        """
import numpy as np
def noisy_total(x, eps, sensitivity):
    width = sensitivity / eps
    return x.sum() + np.random.laplace(0, 1.0 / width)  # <-
""",
        # a Gaussian std as the reciprocal of a calibrated σ
        """
import numpy as np
def release(v, epsilon, delta, clip):
    sigma = clip * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return v + np.random.normal(0.0, 1.0 / sigma, v.shape)  # <-
""",
        # a unit Gumbel draw multiplied by the budget
        """
import numpy as np
def report_noisy_max(scores, epsilon):
    return np.argmax(scores + np.random.gumbel(size=len(scores)) * epsilon)  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name in _GAUSS or name in _LOC_SCALE or name in _SCALE_FIRST:
            fa = self.ctx.analysis
            if simulated_error_term(fa.enclosing_function(node), node, fa.parent):
                return  # a data simulator's error term (``y = b·x + normal(0, eps_sd)``), not privacy noise
            if project_operator_without_scale(self.ctx, node, 0 if name in _SCALE_FIRST else 1):
                return  # ``x.laplace(M, eps)``: the project's own operator takes the budget, not a scale
        if name in _GAUSS:
            if user_helper_without_scale(node, self.ctx.analysis.callee(node), 1):
                return
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            loc = number(positional[0]) if positional else None
            if loc is not None and loc != 0:
                return  # a simulated distribution around a constant, not noise
            parent = self.ctx.analysis.parent(node)
            if isinstance(parent, cst.Assign) and any(
                    words(last_name(t.target) or "") & {"epsilon", "eps"} for t in parent.targets):
                return  # ``epsilon = normal(…)``: the reparameterisation trick's ε is the draw itself
            scale = _gauss_scale(node)
            if scale is not None:
                self._check(node, scale, name)
            return
        if name not in _LOC_SCALE and name not in _SCALE_FIRST:
            return
        if user_helper_without_scale(node, self.ctx.analysis.callee(node), 0 if name in _SCALE_FIRST else 1):
            return  # the module's own ``def laplace(value, epsilon)``: not a loc/scale draw
        scale = _scale_arg(node)
        if scale is None:
            self._unit_draw_times_eps(node)
            return
        self._check(node, scale, name)

    def _unit_draw_times_eps(self, call: cst.Call) -> None:
        """``np.random.gumbel(size=n) * epsilon``, ``jax.random.laplace(key, shape) * eps``: a draw with no
        loc/scale, multiplied by ε."""
        jax = (dotted(call.func) or "").split(".")[0] in ("jax", "jr")
        positional = [a for a in call.args if a.keyword is None]
        if positional and not jax:
            return
        if any(a.keyword is not None and a.keyword.value in ("loc", "scale", "b", "beta") for a in call.args):
            return
        parent = self.ctx.analysis.parent(call)
        if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply)):
            return
        other = parent.right if parent.left is call else parent.left
        self._check(call, other, call_name(call), product=True)

    def _check(self, call: cst.Call, scale: cst.BaseExpression, name: str, *, product: bool = False) -> None:
        resolved = self._resolve(call, scale)
        plain = _factors(resolved)
        factors = self._reciprocals(call, plain)
        if len(factors) != len(plain) and not self._zero_loc(call):
            return  # ``normal(mu, 1 / sigma)`` around a non-zero centre simulates a distribution, it is no noise
        numerator = [f for f, s in factors if s > 0 and (self._budget(call, f) or self._budget_left(call, f))]
        if not numerator:
            return
        if any(s < 0 and self._budget(call, n) for f, s in factors for n in walk(f)
               if isinstance(n, (cst.Name, cst.Attribute))):
            return
        budget = self.ctx.analysis.code(numerator[0]).strip()
        if isinstance(numerator[0], cst.BinaryOperation) and not numerator[0].lpar:
            budget = f"({budget})"
        what = "multiplies the unit draw" if product else f"is the scale of `{name}`"
        if len(factors) != len(plain):
            what = f"ends up in the numerator of the scale of `{name}` (`{self.ctx.analysis.code(scale).strip()}` is " \
                   "the reciprocal of a Δ/ε scale)"
        need = "std Δ·√(2·ln(1.25/δ))/" if name in _GAUSS else "scale Δ/"
        self.report(call, f"`{budget}` {what}: the noise grows with the privacy budget, so a small ε adds almost "
                          f"no noise; the mechanism needs {need}{budget}")

    def _reciprocals(self, call: cst.Call, factors: list[tuple[cst.BaseExpression, int]]
                     ) -> list[tuple[cst.BaseExpression, int]]:
        """``1 / b`` with ``b = Δ / ε`` (or ``self.b = Δ / ε``) assigned earlier in the function: the reciprocal
        of a calibrated scale, so ε ends up in the numerator."""
        fn = self.ctx.analysis.enclosing_function(call)
        if fn is None:
            return factors
        out: list[tuple[cst.BaseExpression, int]] = []
        for factor, sign in factors:
            value = self._assigned(call, fn, factor) if sign < 0 else None
            if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide):
                out.extend(_factors(value, sign))
            else:
                out.append((factor, sign))
        return out

    def _zero_loc(self, call: cst.Call) -> bool:
        """The draw's location is absent or 0 (through one assignment: ``self.mu = 0``)."""
        loc = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("loc", "mean")), None)
        if loc is None:
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            loc = positional[0] if len(positional) >= 2 else None
        if loc is None:
            return True
        fn = self.ctx.analysis.enclosing_function(call)
        value = self._assigned(call, fn, loc) if fn is not None else None
        return number(value if value is not None else loc) == 0

    def _assigned(self, call: cst.Call, fn: cst.FunctionDef, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """The last value assigned to a local name or a ``self`` attribute in ``fn`` before ``call``."""
        fa = self.ctx.analysis
        target = dotted(expr)
        if target is None or not isinstance(expr, (cst.Name, cst.Attribute)) or "." in target and \
                not target.startswith("self."):
            return None
        if isinstance(expr, cst.Name) and expr.value in param_names(fn):
            return None
        found: tuple[int, cst.BaseExpression] | None = None
        for node in walk(fn, into_scopes=False):
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and dotted(node.targets[0].target) == target:
                line = fa.line_of(node)
                if line <= fa.line_of(call) and (found is None or line >= found[0]):
                    found = (line, node.value)
        return found[1] if found else None

    def _resolve(self, call: cst.Call, expr: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression:
        """The scale through local assignments: ``b = epsilon``, or a short chain of constant multiples
        (``beta = 0.5 * eps_prime`` after ``eps_prime = 0.5 * budget``)."""
        fn = self.ctx.analysis.enclosing_function(call)
        if fn is None or not isinstance(expr, cst.Name) or expr.value in param_names(fn) or depth > 2:
            return expr
        fa = self.ctx.analysis
        value = last_assignment(fn, expr.value, fa.line_of(call) + 1, fa.line_of)
        if value is None or depth and not isinstance(value, cst.Name) and not self._constant_multiple(value):
            return expr  # past the first assignment, follow only copies and constant multiples
        if isinstance(value, cst.Name) and value.value != expr.value:
            return self._resolve(call, value, depth + 1)
        if self._constant_multiple(value):
            left, right = value.left, value.right  # type: ignore[attr-defined]
            if isinstance(right, cst.Name) and not self._budget(call, right):
                return value.with_changes(right=self._resolve(call, right, depth + 1))  # type: ignore[attr-defined]
            if isinstance(left, cst.Name) and not self._budget(call, left):
                return value.with_changes(left=self._resolve(call, left, depth + 1))  # type: ignore[attr-defined]
        return value

    @staticmethod
    def _constant_multiple(expr: cst.BaseExpression) -> bool:
        """``0.5 * x``, ``x * 2``, ``x / 2``: a number times (or over) one name."""
        if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide))):
            return False
        if number(expr.left) is not None and isinstance(expr.operator, cst.Multiply):
            return isinstance(expr.right, cst.Name)
        return isinstance(expr.left, cst.Name) and number(expr.right) is not None

    def _noise_level(self, call: cst.Call, fn: cst.FunctionDef, name: str) -> bool:
        """``epsilon_1 = sigma_1 * C * sqrt(T)``: a name spelled like a budget but computed from a noise level
        (followed through copies ``epsilon_2 = epsilon_1``)."""
        fa = self.ctx.analysis
        for _ in range(4):
            value = last_assignment(fn, name, fa.line_of(call) + 1, fa.line_of)
            if value is None:
                return False
            if isinstance(value, cst.Name):
                name = value.value
                continue
            return any(isinstance(n, (cst.Name, cst.Attribute)) and words(last_name(n) or "") & {
                "sigma", "noise", "std", "multiplier", "stddev"} for n in walk(value))
        return False

    def _budget_left(self, call: cst.Call, expr: cst.BaseExpression) -> bool:
        """(QF b90) ``total_eps - pca_eps``, ``FLAGS.extra_eps - FLAGS.dppca_eps``: the budget left after
        another step spent its share is still a budget (both sides named as budgets)."""
        if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Subtract)):
            return False
        # ``eps_start - eps_end``: an exploration schedule's span (epsilon-greedy), not a privacy budget
        if any(words(last_name(side) or "") & _SCHEDULE for side in (expr.left, expr.right)):
            return False
        return self._budget(call, expr.left) and self._budget(call, expr.right)

    def _budget(self, call: cst.Call, expr: cst.BaseExpression) -> bool:
        """A privacy budget: named ``epsilon``/``eps``/``budget`` (not a numerical eps), or a parameter ``e``."""
        name = last_name(expr)
        if name is None or not isinstance(expr, (cst.Name, cst.Attribute)):
            return False
        pieces = words(name)
        if name in ("e", "ε"):
            fn = self.ctx.analysis.enclosing_function(call)
            return fn is not None and name in param_names(fn)
        if not pieces & _BUDGET or pieces & _NUMERIC or pieces & {"std", "stddev", "sigma", "var", "variance"}:
            return False  # ``epsilon_std``: the std of a VAE's reparameterisation ε, not a budget
        fn = self.ctx.analysis.enclosing_function(call)
        if fn is not None and isinstance(expr, cst.Name) and self._noise_level(call, fn, expr.value):
            return False
        if fn is not None and isinstance(expr, cst.Name):
            for param in fn.params.params:
                if param.name.value == name and param.default is not None:
                    default = number(param.default)
                    if default is not None and 0 < default < 1e-3:
                        return False
        return True
