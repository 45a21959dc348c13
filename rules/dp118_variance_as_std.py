"""DP118: a Gaussian noise variance passed where the draw takes a standard deviation."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.noisedraws import last_assignment
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, param_names, walk, words
from dpcheck.rule import Rule

#: draws whose second positional argument (or ``scale``/``std``/``stddev``/``sigma``) is a standard deviation
_GAUSS = frozenset({"normal", "gauss", "normalvariate", "Normal", "random_normal", "normal_"})
_STD_KEYWORDS = ("scale", "std", "stddev", "sigma")
_LAPLACE = frozenset({"laplace", "Laplace"})
_DELTA_WORDS = frozenset({"delta", "dlt", "δ"})
#: a name that holds a variance, not a standard deviation
_VARIANCE_WORDS = frozenset({"variance", "var", "sigma2", "sigmasq", "sq", "squared", "std2", "var2"})
#: a squared name that is a standard deviation or a noise multiplier (its square is a variance; a squared
#: sensitivity or clip is not reported: a second-moment statistic has sensitivity C²)
_SCALE_WORDS = frozenset({"sigma", "sig", "std", "stddev", "multiplier", "noise"})
_SQRT = frozenset({"sqrt", "rsqrt", "std"})


def _std_arg(call: cst.Call) -> cst.BaseExpression | None:
    func = dotted(call.func) or ""
    root = func.split(".")[0]
    if root in ("jax", "jr"):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _STD_KEYWORDS:
            return arg.value
    if root in ("tf", "tensorflow") or call_name(call) == "random_normal":
        return None  # tf.random.normal(shape, mean, stddev): only the keyword is read
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[1] if len(positional) >= 2 else None


def _literal_location(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("loc", "mean", "mu"):
            value = number(arg.value)
            return value is not None and value != 0
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    first = number(positional[0]) if positional and (dotted(call.func) or "").split(".")[0] not in (
        "tf", "tensorflow", "jax", "jr") else None
    return first is not None and first != 0


def _has_sqrt(expr: cst.CSTNode) -> bool:
    for n in walk(expr):
        if isinstance(n, cst.Call) and call_name(n) in _SQRT:
            return True
        if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power):
            exponent = number(n.right)
            if exponent is not None and exponent < 1 or isinstance(n.right, cst.BinaryOperation):
                return True
    return False


def _square_of(expr: cst.CSTNode) -> cst.CSTNode | None:
    """``x ** 2``, ``x * x``, ``pow(x, 2)``, ``np.square(x)``: the squared ``x``."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power) and number(expr.right) == 2:
        return expr.left
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply) \
            and isinstance(expr.left, (cst.Name, cst.Attribute)) and dotted(expr.left) == dotted(expr.right):
        return expr.left
    if isinstance(expr, cst.Call) and call_name(expr) in ("pow", "power") and len(expr.args) == 2 \
            and number(expr.args[1].value) == 2:
        return expr.args[0].value
    if isinstance(expr, cst.Call) and call_name(expr) == "square" and len(expr.args) == 1:
        return expr.args[0].value
    return None


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)) \
            and _square_of(expr) is None:
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _signed_factors(expr: cst.BaseExpression, sign: int = 1) -> list[tuple[str, int]]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _signed_factors(expr.left, sign) + _signed_factors(expr.right, sign)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        return _signed_factors(expr.left, sign) + _signed_factors(expr.right, -sign)
    name = dotted(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
    return [(name, sign)] if name else []


def _repeated_factor(expr: cst.BaseExpression) -> bool:
    """``… * sens * sens / eps / eps``: a name multiplied (or divided) in twice, a square spelled out."""
    factors = _signed_factors(expr)
    return len(factors) != len(set(factors))


def _log_of_delta(expr: cst.CSTNode) -> bool:
    """``log(1.25 / delta)``: the Gaussian-mechanism term whose square root σ needs."""
    for n in walk(expr):
        if isinstance(n, cst.Call) and call_name(n) in ("log", "log1p") and any(
                isinstance(m, (cst.Name, cst.Attribute)) and words(last_name(m) or "") & _DELTA_WORDS
                for m in walk(n)):
            return True
    return False


def variance_shape(expr: cst.BaseExpression) -> str | None:
    """Why ``expr`` is a variance (a squared scale, or the Gaussian mechanism's 2·ln(1.25/δ)·Δ²/ε²), or None."""
    if _has_sqrt(expr):
        return None
    if _log_of_delta(expr) and (any(_square_of(f) is not None for f in walk(expr)) or _repeated_factor(expr)):
        return "the Gaussian-mechanism variance 2·ln(1.25/δ)·Δ²/ε² (no square root)"
    for factor in _factors(expr):
        base = _square_of(factor)
        if base is not None and isinstance(base, (cst.Name, cst.Attribute)) \
                and words(last_name(base) or "") & _SCALE_WORDS:
            return f"a squared scale `{last_name(base)}**2`"
        if base is not None and isinstance(base, cst.BinaryOperation) and isinstance(base.operator, cst.Multiply):
            # (h44-Q1) ``(noise_scale * clip) ** 2``: the product σ·C squared, a variance
            named = [f for f in _factors(base) if isinstance(f, (cst.Name, cst.Attribute))]
            if any(words(last_name(f) or "") & _SCALE_WORDS for f in named):
                return "a squared noise level `(σ·C)**2`"
    return None


#: standard-normal draws that are scaled by multiplying them (``torch.randn_like(g) * std``)
_UNIT_GAUSS = frozenset({"randn", "randn_like", "standard_normal"})


def _unit_draw(expr: cst.BaseExpression) -> bool:
    """``torch.randn_like(g)``, ``torch.randn(shape)``, ``np.random.randn(d)``, ``rng.standard_normal(d)``."""
    return isinstance(expr, cst.Call) and call_name(expr) in _UNIT_GAUSS


#: names for the number of coordinates a draw covers
_SIZE_WORDS = frozenset({"d", "dim", "dims", "dimension", "dimensions", "numel", "size", "features", "params",
                         "parameters", "coords", "coordinates"})
_SIZE_CALLS = frozenset({"numel", "prod", "len", "count_params", "nelement"})
#: a numerator naming the privacy calibration (not a weight-initialisation std)
_CALIBRATION_WORDS = frozenset({"sigma", "multiplier", "clip", "sens", "sensitivity", "noise", "epsilon", "eps",
                                "delta", "c"})


def _is_size(expr: cst.BaseExpression) -> bool:
    """``x.size``, ``x.numel()``, ``np.prod(x.shape)``, ``len(params)``, ``d``, ``n_features``."""
    if isinstance(expr, cst.Call):
        return call_name(expr) in _SIZE_CALLS
    if isinstance(expr, cst.Attribute):
        return expr.attr.value in ("size", "numel")
    if isinstance(expr, cst.Name):
        pieces = words(expr.value)
        return bool(pieces & _SIZE_WORDS) and not pieces & {"batch", "lot", "sample", "samples", "step"}
    return False


def _root_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    if isinstance(expr, cst.Call) and call_name(expr) == "sqrt" and len(expr.args) == 1:
        return expr.args[0].value
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power) and number(expr.right) == 0.5:
        return expr.left
    return None


def per_coordinate_shape(expr: cst.BaseExpression) -> str | None:
    """``sigma * C / np.sqrt(update.size)``: an L2 noise level spread over the coordinates."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)):
        return None
    root = _root_of(expr.right)
    if root is None or not _is_size(root):
        return None
    if not any(isinstance(n, (cst.Name, cst.Attribute)) and words(last_name(n) or "") & _CALIBRATION_WORDS
               for n in walk(expr.left)):
        return None
    return f"divided by √`{root.value if isinstance(root, cst.Name) else call_name(root) if isinstance(root, cst.Call) else 'size'}`"


class VarianceAsStd(Rule):
    id = "DP118"
    name = "gaussian-std-units"
    category = "general"
    severity = "error"
    summary = ("a Gaussian std in the wrong units: a variance (σ², 2·ln(1.25/δ)·Δ²/ε²) passed as the standard "
               "deviation, or the noise level σ·Δ divided by √(number of coordinates)")
    rationale = (
        "numpy's `normal(loc, scale)`, torch's `normal(mean, std)` and `Normal(loc, scale)`, Python's "
        "`random.gauss(mu, sigma)` and tf's `stddev=` all take the standard deviation. The Gaussian "
        "mechanism's std is σ = Δ·√(2·ln(1.25/δ))/ε; code that computes the variance "
        "`2 * np.log(1.25 / delta) * sens**2 / eps**2` (or squares σ, `sigma**2 * C**2`) and hands it "
        "to the draw adds noise of std σ² instead of σ: whenever σ < 1 (a mean over many records, a "
        "large ε) the noise is far smaller than the guarantee needs. Reported: a std argument that is, "
        "directly or through one assignment (a local, also at a script's top level, an attribute set once, "
        "a module function's return), a square of a σ, std or noise-multiplier name, the Gaussian-mechanism formula (its "
        "2·ln(1.25/δ) possibly bound to a name of its own) "
        "with ln(·/δ) and a square but no square root, or a name for a variance (`variance`, "
        "`noise_var`, `sigma_sq`) bound to a square without a square root. Not reported: any "
        "square root in the expression (`np.sqrt(variance)`, `** 0.5`), a squared sensitivity or clip "
        "alone (the sensitivity of a second moment), variances used as variances "
        "(`multivariate_normal(mean, cov)`), draws around a non-zero literal mean (simulated data), code "
        "with no DP context. Fix: pass `np.sqrt(variance)`, or "
        "compute σ = Δ·√(2·ln(1.25/δ))/ε. The second unit mistake: the std of a vector draw "
        "(`normal(0, std, update.shape)`) set to σ·C divided by √(the number of coordinates) "
        "(`/ np.sqrt(update.size)`, `/ math.sqrt(d)`, `/ p.numel() ** 0.5`): each coordinate needs std "
        "σ·C for an L2-bounded vector, so the whole vector gets noise of norm ≈ σ·C, √d times less "
        "than the accountant charges. Not reported there: a literal numerator (weight "
        "initialisation `1 / sqrt(fan_in)`), a batch size under the root, a draw without a shape. "
        "Fix: std = σ·C on every coordinate. A Laplace scale that is such a variance "
        "(`laplace(0, sig**2 * clip**2, shape)`) is reported too, and so is a standard-normal draw multiplied by "
        "such a variance (`torch.randn_like(g) * (noise_scale * clip) ** 2`; fix: `torch.randn_like(g) * "
        "noise_scale * clip`)."
    )
    TRIGGERS = ("normal", "gauss", "Normal", "aplace", "randn")
    requires_dp_context = True

    VALID = (
        # (h44-Q1 twin) the unit draw scaled by the std σ·C
        """
import torch
class DPNoisySGD(torch.optim.Optimizer):
    def step(self):
        for grp in self.param_groups:
            for k, summed in enumerate(grp["summed"]):
                noise = torch.randn_like(summed) * (self.sigma * self.max_norm)
                grp["params"][k].grad = (summed + noise) / self.lot_size
""",
        # (h44-Q1 twin) numpy: the square root of the variance
        """
import numpy as np
def release(total, noise_multiplier, clip):
    variance = (noise_multiplier * clip) ** 2
    return total + np.random.randn(*total.shape) * np.sqrt(variance)
""",
        # ordinary ML: a random feature map scaled by a squared bandwidth product, no DP
        """
import torch
def features(x, gamma, width):
    w = torch.randn(x.shape[1], 64) * (gamma * width) ** 2
    return torch.cos(x @ w)
""",
        # simulated data around a constant mean (a test distribution, not noise)
        "import numpy as np\nsigma = 0.35\ndef simulate(epsilon, n):\n"
        "    return np.random.normal(0.4, sigma ** 2, n)\n",
        # a Laplace scale misnamed `variance` (2d/(nε) is a scale, not a variance)
        "import numpy as np\ndef laplace_cov(x, epsilon):\n    variance = 2 * x.shape[1] / (x.shape[0] * epsilon)\n"
        "    return x.T @ x / len(x) + np.random.laplace(0, variance, (x.shape[1], x.shape[1]))\n",
        # the noisy variance of clipped values: its sensitivity is the squared bound
        "import numpy as np\ndef noisy_second_moment(x, bound, eps):\n"
        "    return np.mean(np.clip(x, -bound, bound) ** 2) + np.random.laplace(0, bound ** 2 / (len(x) * eps))\n",
        "import numpy as np\ndef perturb_grads(grads, epsilon, clip):\n"
        "    return [g + np.random.laplace(0.0, clip / epsilon, size=g.shape) for g in grads]\n",
        # σ·C per coordinate; an initialisation 1/√d
        "import numpy as np\ndef privatize(update, clip_norm, noise_multiplier):\n"
        "    return update + np.random.normal(0, clip_norm * noise_multiplier, update.shape)\n",
        "import torch, math\ndef init_and_noise(w, sigma, clip):\n    w.data = torch.normal(0, 1 / math.sqrt(w.numel()), w.shape)\n"
        "    return w + torch.normal(0, sigma * clip, w.shape)\n",
        "import numpy as np\ndef noisy_vec(x, l2_sens, eps, delta):\n"
        "    std = l2_sens * np.sqrt(2 * np.log(1.25 / delta)) / eps\n    return x + np.random.normal(0, std, size=len(x))\n",
        "import numpy as np\ndef gaussian_mechanism(x, eps, delta, sens):\n"
        "    variance = 2 * np.log(1.25 / delta) * sens ** 2 / eps ** 2\n"
        "    return x + np.random.normal(0, np.sqrt(variance), x.shape)\n",
        "import torch\ndef privatize(g, sigma, clip):\n"
        "    return g + torch.normal(0, sigma * clip, g.shape)\n",
        "import random, math\ndef dp_mean(values, epsilon, delta):\n"
        "    sigma = math.sqrt(2 * math.log(1.25 / delta)) / (epsilon * len(values))\n"
        "    return sum(values) / len(values) + random.gauss(0, sigma)\n",
        "import numpy as np\nclass Gaussian:\n    def __init__(self, epsilon, delta, sensitivity):\n"
        "        self.noise_var = 2 * np.log(1.25 / delta) * sensitivity ** 2 / epsilon ** 2\n"
        "    def randomise(self, value):\n"
        "        return value + np.random.normal(0, self.noise_var ** 0.5)\n",
        # the variance used where a covariance belongs
        "import numpy as np\ndef noisy_cov(x, eps, delta):\n"
        "    var = 2 * np.log(1.25 / delta) / eps ** 2\n"
        "    return np.random.multivariate_normal(x, var * np.eye(len(x)))\n",
        # twins: the square root taken, or the std itself passed
        """
import numpy as np
delta, eps = 1e-4, 1.0
sens = 2 / 500.0
c2 = 2 * np.log(1.25 / delta)
v = c2 * (sens ** 2) / (eps ** 2)
noise = np.random.normal(0, np.sqrt(v), [8, 8])
""",
        """
import math
import numpy as np
def perturb_mean(x, dlt, eps, rng):
    log_term = 2 * math.log(1.25 / dlt)
    sens = 1.0 / len(x)
    spread = log_term * sens * sens / (eps * eps)
    return x.mean() + rng.normal(0.0, spread ** 0.5)
""",
        """
import numpy as np
sigma = 0.8
noise_var = sigma ** 2
w_noisy = np.zeros(10) + np.random.normal(0, sigma, 10)
""",
    )
    INVALID = (
        # (h44-Q1) a hand-written DP-SGD step: unit noise times (σ·C)², a variance
        """
import torch
class DPNoisySGD(torch.optim.Optimizer):
    def step(self):
        for grp in self.param_groups:
            for k, summed in enumerate(grp["summed"]):
                noise = torch.randn_like(summed) * ((self.sigma * self.max_norm) ** 2)  # <-
                grp["params"][k].grad = (summed + noise) / self.lot_size
""",
        # (h44-Q1) numpy, the squared std bound to a local first
        """
import numpy as np
def release(total, noise_multiplier, clip):
    spread = (noise_multiplier * clip) ** 2
    return total + spread * np.random.randn(*total.shape)  # <-
""",
        # a Gaussian variance used as a Laplace scale
        """
import numpy as np
def perturb_grads(grads, sig, clip):
    return [g + np.random.laplace(0.0, sig ** 2 * clip ** 2, size=g.shape) for g in grads]  # <-
""",
        # σ·C spread over the coordinates, numpy through a local
        """
import numpy as np
def privatize(update, clip_norm, noise_multiplier):
    std = clip_norm * noise_multiplier / np.sqrt(update.size)
    return update + np.random.normal(0, std, update.shape)  # <-
""",
        # torch, numel() ** 0.5
        """
import torch
def noise_grad(p, noise_multiplier, max_grad_norm):
    return p.grad + torch.normal(0.0, noise_multiplier * max_grad_norm / p.grad.numel() ** 0.5, p.grad.shape)  # <-
""",
        # math.sqrt of a dimension name, keyword size
        """
import math, numpy as np
def release(vec, l2_sensitivity, epsilon, delta, dim):
    sigma = l2_sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return vec + np.random.normal(0, sigma / math.sqrt(dim), size=dim)  # <-
""",
        # the variance by name, numpy
        """
import numpy as np
def gaussian_mechanism(cov, epsilon, delta):
    variance = 2 * np.log(1.25 / delta) / (epsilon ** 2)
    return cov + np.random.normal(0, variance, cov.shape)  # <-
""",
        # torch, the variance formula inline, sensitivity squared
        """
import torch, math
def noisy_sum(x, eps, delta, l2_sensitivity):
    return x.sum(0) + torch.normal(0.0, 2 * math.log(1.25 / delta) * l2_sensitivity ** 2 / eps ** 2, x.shape[1:])  # <-
""",
        # a squared std, Python's random.gauss
        """
import random
def perturb(value, sigma, epsilon):
    return value + random.gauss(0, sigma ** 2)  # <-
""",
        # an attribute set once in __init__, scipy-style keyword scale
        """
import numpy as np
class GaussianMechanism:
    def __init__(self, epsilon, delta, sensitivity):
        self.sigma_sq = 2 * np.log(1.25 / delta) * sensitivity * sensitivity / epsilon / epsilon
    def release(self, value):
        return value + np.random.normal(loc=0.0, scale=self.sigma_sq)  # <-
""",
        # a module function that returns the variance
        """
import numpy as np
def gaussian_variance(epsilon, delta, sens):
    return 2 * np.log(1.25 / delta) * np.square(sens) / epsilon ** 2
def release(counts, epsilon, delta):
    return counts + np.random.normal(0, gaussian_variance(epsilon, delta, 1.0), len(counts))  # <-
""",
        # tensorflow stddev keyword with σ²·C²
        """
import tensorflow as tf
def noised(grads, noise_multiplier, l2_norm_clip):
    return [g + tf.random.normal(tf.shape(g), stddev=noise_multiplier ** 2 * l2_norm_clip ** 2) for g in grads]  # <-
""",
        # a script's top level: the log term bound to a name, then the variance drawn with as a std
        """
import numpy as np
delta, eps = 1e-4, 1.0
sens = 2 / 500.0
c2 = 2 * np.log(1.25 / delta)
v = c2 * (sens ** 2) / (eps ** 2)
noise = np.random.normal(0, v, [8, 8])  # <-
""",
        """
import math
import numpy as np
def perturb_mean(x, dlt, eps, rng):
    log_term = 2 * math.log(1.25 / dlt)
    sens = 1.0 / len(x)
    spread = log_term * sens * sens / (eps * eps)
    return x.mean() + rng.normal(0.0, spread)  # <-
""",
        """
import numpy as np
sigma = 0.8
noise_var = sigma ** 2
w_noisy = np.zeros(10) + np.random.normal(0, noise_var, 10)  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if _literal_location(node):
            return  # ``normal(0.4, sigma**2, n)`` simulates data around a constant; noise is centred on 0 or a value
        if call_name(node) in _LAPLACE:
            self._laplace(node)
            return
        if call_name(node) not in _GAUSS:
            return
        std = _std_arg(node)
        if std is None:
            return
        why = self._why(node, std, depth=0)
        if why is None:
            self._per_coordinate(node, std)
            return
        self.report(node, f"the standard deviation of this Gaussian draw is `{self.ctx.analysis.code(std).strip()}`, "
                          f"{why}: that is a variance, so the noise std is σ² instead of σ (far too small when "
                          f"σ < 1); pass its square root")

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        """(h44-Q1) a standard-normal draw multiplied by a variance: ``torch.randn_like(g) * (sigma * C) ** 2``."""
        if not isinstance(node.operator, cst.Multiply):
            return
        for draw, factor in ((node.left, node.right), (node.right, node.left)):
            if not _unit_draw(draw):
                continue
            why = self._why(draw, factor, depth=0)
            if why is None:
                continue
            self.report(node, f"this standard-normal draw is multiplied by `{self.ctx.analysis.code(factor).strip()}`, "
                              f"{why}: a variance used as the standard deviation, so the noise std is σ² instead of "
                              f"σ (far too small when σ < 1); multiply by the std `sigma * C` (or the square root)")
            return

    def _laplace(self, call: cst.Call) -> None:
        """A Laplace scale that is a squared σ (a Gaussian variance): ``laplace(0, sig**2 * C**2, shape)``."""
        scale = _std_arg(call)
        if scale is None:
            return
        why = self._why(call, scale, depth=0)
        if why is None:
            return
        self.report(call, f"the Laplace scale `{self.ctx.analysis.code(scale).strip()}` is {why}, a Gaussian "
                          f"variance: the Laplace mechanism needs scale Δ₁/ε, and a squared σ or clip is far too "
                          f"small whenever they are below 1")

    def _per_coordinate(self, call: cst.Call, std: cst.BaseExpression) -> None:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        shaped = len(positional) >= 3 or any(a.keyword is not None and a.keyword.value in ("size", "shape")
                                             for a in call.args) or call_name(call) == "normal_"
        if not shaped:
            return
        value = std
        if isinstance(std, cst.Name):
            value = self._value(call, std) or std
        why = per_coordinate_shape(value)
        if why is None:
            return
        self.report(call, f"the per-coordinate std `{self.ctx.analysis.code(std).strip()}` is the noise level "
                          f"{why}: the Gaussian mechanism needs std σ·Δ on every coordinate of an L2-bounded "
                          f"vector; spread over the coordinates the whole vector gets noise of norm ≈ σ·Δ, √d times "
                          f"less than the accountant assumes")

    def _why(self, call: cst.Call, expr: cst.BaseExpression, depth: int) -> str | None:
        shape = variance_shape(expr)
        if shape is not None:
            return shape
        if depth > 1 or _has_sqrt(expr):
            return None
        if self._log_term_by_name(call, expr) and (
                any(_square_of(f) is not None for f in walk(expr)) or _repeated_factor(expr)):
            return "the Gaussian-mechanism variance 2·ln(1.25/δ)·Δ²/ε² (no square root; the log bound to a name)"
        value = self._value(call, expr)
        if value is None:
            return None
        shape = self._why(call, value, depth + 1)
        if shape is not None:
            return shape
        name = last_name(expr.func) if isinstance(expr, cst.Call) else last_name(expr)
        if name and words(name) & _VARIANCE_WORDS and not _has_sqrt(value) and any(
                _square_of(n) is not None for n in walk(value)):
            return f"bound to `{name}`, a variance"
        return None

    def _log_term_by_name(self, call: cst.Call, expr: cst.BaseExpression) -> bool:
        """Is a factor of ``expr`` a local bound to ``2·ln(1.25/δ)`` with no square root taken
        (``c2 = 2*np.log(1.25/delta)`` then ``c2 * sens**2 / eps**2``)?"""
        for factor in _factors(expr):
            if isinstance(factor, cst.Name):
                value = self._value(call, factor)
                if value is not None and _log_of_delta(value) and not _has_sqrt(value):
                    return True
        return False

    def _value(self, call: cst.Call, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """The one value ``expr`` stands for: a local's last assignment, an attribute assigned once in the
        module, a module function's single return."""
        fa = self.ctx.analysis
        if isinstance(expr, cst.Name):
            fn = fa.enclosing_function(call)
            if fn is not None and expr.value in param_names(fn):
                return None
            # a script's top level is the scope of its module-level draws
            return last_assignment(fn or self.ctx.module, expr.value, fa.line_of(call) + 1, fa.line_of)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            values = [s.value for s in walk(self.ctx.module) if isinstance(s, cst.Assign) and any(
                isinstance(t.target, cst.Attribute) and dotted(t.target) == dotted(expr) for t in s.targets)]
            return values[0] if len(values) == 1 else None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            fns = fa.functions_named(expr.func.value)
            if len(fns) != 1:
                return None
            returns = [s.value for s in walk(fns[0], into_scopes=False)
                       if isinstance(s, cst.Return) and s.value is not None]
            return returns[0] if len(returns) == 1 else None
        return None
