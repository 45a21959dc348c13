"""DP602: a helper named as the noise (``laplace_noise(eps)``, ``Laplacian_func(eps)``) computes a deterministic formula
(the density at a fixed point) instead of drawing, and its value is used as the noise."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: words of a helper that promises noise
_NOISE_NAME_WORDS = frozenset({"laplace", "laplacian", "lap", "gaussian", "gauss", "noise", "geometric"})
#: words of a helper that computes a density or likelihood on purpose
_DENSITY_WORDS = frozenset({"pdf", "density", "likelihood", "logpdf", "cdf", "prob", "probability", "log", "kernel",
                            "weight", "weights", "loss", "var", "variance", "std", "scale", "sigma", "calibrate",
                            "calibration", "bound", "width", "mse", "error", "parameter", "param", "params",
                            "level", "compute", "get", "opt", "optimal", "multiplier", "amount", "magnitude",
                            "size"})
#: the calls a closed-form formula may use; anything else may draw
_FORMULA_CALLS = frozenset({"exp", "sqrt", "log", "abs", "fabs", "pow", "power", "float", "int", "round"})
_BUDGET_WORDS = frozenset({"eps", "epsilon", "scale", "b", "sigma", "sensitivity", "sens", "beta", "mu", "std"})


def _deterministic(fn: cst.FunctionDef) -> cst.Return | None:
    """The function's single return of a formula built from its parameters with math calls only."""
    returns = [n for n in walk(fn.body, into_scopes=False) if isinstance(n, cst.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return None
    for n in walk(fn.body, into_scopes=False):
        if isinstance(n, cst.Call) and call_name(n) not in _FORMULA_CALLS:
            return None
        if isinstance(n, (cst.For, cst.While, cst.If, cst.Try, cst.With)):
            return None
    value = returns[0].value
    if isinstance(value, (cst.Integer, cst.Float, cst.Name)):
        return None
    return returns[0]


class NoiseHelperWithoutDraw(Rule):
    id = "DP602"
    name = "noise-helper-without-draw"
    category = "general"
    severity = "error"
    summary = ("a helper named as the noise (`Laplacian_func(eps)`, `laplace_noise(eps)`) evaluates a formula (the "
               "density at a fixed point) and draws nothing, and its value is used as the noise")
    rationale = (
        "A mechanism is random: the Laplace mechanism adds a *draw* from Lap(Δ/ε). A helper that returns "
        "`(eps / 2) * np.exp(-abs(x - mu) * eps)` for a fixed x evaluates the Laplace density instead; the "
        "'noise' is one constant, the same for every query, so subtracting it recovers every exact value and "
        "there is no privacy at all. Reported: at the return of a function whose name promises noise (laplace, "
        "gaussian, noise) and that takes ε or a scale, whose body only computes a closed formula (arithmetic and "
        "`exp`/`sqrt`/`log`/`abs`, no draw, no other call, no branch or loop), when the module assigns its "
        "result to a noise-named variable or adds it to a value. Not reported: density and likelihood helpers "
        "(`laplace_pdf`, `gaussian_likelihood`, used in decoding or inference), scale and calibration helpers "
        "(`gaussian_sigma(eps, delta)`, `laplace_noise_parameter(...)`, `compute_opt_noise(...)`), helpers that call a sampler. Fix: draw the noise "
        "(`np.random.laplace(0, sensitivity / eps, size)`), a fresh draw per released value."
    )
    TRIGGERS = ("aplac", "auss", "noise", "lap")
    requires_dp_context = False

    VALID = (
        # the helper draws
        """
import numpy as np
def laplace_noise(eps, sensitivity=1.0):
    return np.random.laplace(0, sensitivity / eps)
noisy = 42 + laplace_noise(0.5)
""",
        # a density used in decoding, named as one
        """
import numpy as np
def laplace_pdf(x, eps):
    return (eps / 2.0) * np.exp(-abs(x) * eps)
def posterior(reports, eps):
    return [laplace_pdf(r - 1.0, eps) for r in reports]
""",
        # a calibration helper computes the Gaussian sigma in closed form
        """
import numpy as np
def gaussian_noise_scale(eps, delta, sens):
    return sens * np.sqrt(2 * np.log(1.25 / delta)) / eps
sigma = gaussian_noise_scale(1.0, 1e-5, 1.0)
noisy = 3.0 + np.random.normal(0, sigma)
""",
        # ordinary ML: a Gaussian kernel weight named gaussian, used as a weight not as noise
        """
import numpy as np
def gaussian(d, sigma):
    return np.exp(-d ** 2 / (2 * sigma ** 2))
def smooth(values, dists, sigma, epsilon=1e-8):
    w = [gaussian(d, sigma) for d in dists]
    return sum(a * b for a, b in zip(w, values)) / (sum(w) + epsilon)
""",
    )
    INVALID = (
        # the density at a fixed point used as the noise of every count
        """
import numpy as np
def Laplacian_func(eps):
    x = 0.01
    return (eps / 2.0) * np.exp(-abs(x) * eps)  # <-
counts = {"fr": 10, "de": 7}
noise = Laplacian_func(0.1)
noisy = {k: v + noise for k, v in counts.items()}
""",
        # a helper named as Laplace noise adding a formula of the scale to the value
        """
import math
def laplace_noise(value, epsilon, sensitivity=1.0):
    b = sensitivity / epsilon
    return value + math.exp(-1.0 / b) / (2 * b)  # <-
released = laplace_noise(128, 0.5)
""",
        # a Gaussian 'noise' that is the density at the mean
        """
import numpy as np
def gaussian_noise(sigma):
    return 1.0 / (sigma * np.sqrt(2 * np.pi))  # <-
def release(total, epsilon, delta):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return total + gaussian_noise(sigma)
""",
        # the result kept under a noise name and added later
        """
import numpy as np
def lap_noise(eps, sens):
    return np.exp(-eps / sens) * sens / eps  # <-
def answer(query_value, eps, sens):
    noise_term = lap_noise(eps, sens)
    return query_value + noise_term
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        functions = {f.name.value: f for f in walk(node) if isinstance(f, cst.FunctionDef)}
        used = self._used_as_noise(node)
        for name, fn in functions.items():
            w = words(name)
            if not w & _NOISE_NAME_WORDS or w & _DENSITY_WORDS or name not in used:
                continue
            # Laplace noise is a privacy mechanism's in any module; a Gaussian or plain "noise" helper only in DP code
            if not w & {"laplace", "laplacian", "lap"} and not self.ctx.analysis.has_dp_code():
                continue
            params = {p.name.value for p in fn.params.params}
            if not any(words(p) & _BUDGET_WORDS for p in params):
                continue
            ret = _deterministic(fn)
            if ret is None:
                continue
            self.report(ret, f"`{name}` is used as the noise but draws nothing: it returns a closed formula of its "
                             "arguments (the density at a fixed point), the same constant for every call, so the "
                             "exact values are recovered by subtracting it; draw the noise instead")

    @staticmethod
    def _used_as_noise(module: cst.Module) -> set[str]:
        """Helpers whose call result is added to a value or stored under a noise-named variable."""
        out: set[str] = set()
        for n in walk(module):
            if isinstance(n, cst.Assign) and isinstance(n.value, cst.Call):
                targets = [t.target for t in n.targets]
                if any(isinstance(t, cst.Name) and words(t.value) & {"noise", "noisy", "noised", "released",
                                                                    "perturbed", "private", "dp"} for t in targets):
                    out.add(call_name(n.value))
            elif isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Add, cst.Subtract)):
                for side in (n.left, n.right):
                    if isinstance(side, cst.Call):
                        out.add(call_name(side))
        return out
