"""DP503: the classical Gaussian mechanism's σ = sqrt(2 ln(1.25/δ))·Δ/ε with no check that ε < 1.

Labelling criterion (benchmarks): a finding is a true positive when an ε ≥ 1 can reach the formula
through the code as written: a parameter default, a configuration value, a command-line flag, or the
parameter of a library's public helper that nothing bounds below 1 (the caller's choice). The σ it gives
is then outside the theorem's range, whether or not it happens to meet (ε, δ) numerically at the values
tried. It is a false positive when every ε reaching the formula is a constant below 1, when nothing in an
experiment repository runs the formula (an uncalled copy, not a library's API), or when an accountant
charges the resulting σ (the formula only picks a starting point and no (ε, δ) claim rests on it). The rule decides what it can see in one file: a
literal ε ≤ 1 and a comparison of ε with 1 silence it; reach and configuration are the labeller's.
"""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, target_nodes, value_refs, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.noisedraws import EPS_WORDS, charges_accountant, is_draw, is_eps, is_one, never_referenced, zero_centred


#: an ε computed from the noise scales by a composition (pyvacy's ``comp_epsilon(qs, sigmas, steps, δ)``)
_EPS_FROM_SIGMAS = re.compile(r"(?i)^(comp|compose|composed|total)_?(epsilon|eps)$")


def _is_classical_log(node: cst.Call) -> bool:
    """``log(1.25 / delta)`` (any spelling of the log)."""
    if call_name(node) != "log" or len(node.args) != 1:
        return False
    arg = node.args[0].value
    return (isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Divide)
            and number(arg.left) == 1.25)


def _factors(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The factors of a denominator: ``n * epsilon`` and ``float(n * epsilon)`` give ``n`` and ``epsilon``."""
    if isinstance(node, cst.Call) and call_name(node) in ("float", "int") and len(node.args) == 1:
        return _factors(node.args[0].value)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return [*_factors(node.left), *_factors(node.right)]
    # a floor against division by zero, ``max(eps, 1e-9)``, leaves ε itself (a ``min(eps, 1)`` is a guard)
    if isinstance(node, cst.Call) and call_name(node) in ("max", "maximum") and len(node.args) == 2:
        values = [a.value for a in node.args]
        floors = [v for v in values if (number(v) or 0) > 0 and (number(v) or 1) < 1e-3]
        if len(floors) == 1:
            return _factors(next(v for v in values if v is not floors[0]))
    return [node]


def _compares_eps_with_one(node: cst.CSTNode, eps_names: set[str]) -> bool:
    """``epsilon < 1``, ``0 < eps <= 1``, ``eps > 1``, or ``min(eps, 1)``."""
    if isinstance(node, cst.Comparison):
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        return any(last_name(s) in eps_names for s in sides) and any(is_one(s) for s in sides)
    if isinstance(node, cst.Call) and call_name(node) in ("min", "minimum"):
        values = [a.value for a in node.args]
        return any(last_name(v) in eps_names for v in values) and any(is_one(v) for v in values)
    return False


def _acts_on_condition(branch: cst.CSTNode, eps_names: set[str], callee: str | None) -> bool:
    """Does a branch taken on ``ε vs 1`` elsewhere guard the formula: raise, warn, return, re-bind ε, or
    call the function that holds the formula (a caller choosing the mechanism)?"""
    for node in walk(branch):
        if isinstance(node, (cst.Raise, cst.Return)):
            return True
        if isinstance(node, cst.Call) and (call_name(node) in ("warn", "warning")
                                           or (callee is not None and call_name(node) == callee)):
            return True
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = ([t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target])
            if any(last_name(t) in eps_names for t in targets):
                return True
    return False


def _guards(rule: Rule, at: cst.Call, eps_names: set[str]) -> bool:
    """Is one of ``eps_names`` compared with 1 where it guards the formula at ``at``: in the same function
    (the module when there is none), in an assert or a ``min``, or in a branch elsewhere that acts on the
    outcome (an unrelated ``if epsilon <= 1:`` that only sets a plot option in another function does not)."""
    fa = rule.ctx.analysis
    home = fa.enclosing_function(at)
    callee = home.name.value if home is not None else None
    for node in walk(rule.ctx.module):
        if not _compares_eps_with_one(node, eps_names):
            continue
        if isinstance(node, cst.Call) or fa.enclosing_function(node) is home:
            return True
        for up in fa.ancestors(node):
            if isinstance(up, cst.Assert):
                return True
            if isinstance(up, (cst.If, cst.While, cst.IfExp)):
                if _acts_on_condition(up, eps_names, callee):
                    return True
                break
            if isinstance(up, (cst.FunctionDef, cst.SimpleStatementLine)):
                break
    return False


class ClassicalGaussianUnguarded(Rule):
    id = "DP503"
    name = "classical-gaussian-unguarded"
    category = "general"
    severity = "error"
    summary = "σ = sqrt(2 ln(1.25/δ))·Δ/ε is used with no check that ε < 1 (the formula is proved only for ε < 1)"
    rationale = (
        "The classical Gaussian mechanism (Dwork & Roth, Theorem A.1) calibrates "
        "σ = Δ·sqrt(2 ln(1.25/δ))/ε and is proved only for ε < 1. For larger ε the formula "
        "under-noises: at ε = 4 and δ = 1e-5 the σ it gives meets (ε, δ)-DP only for a δ far "
        "above the one claimed. Code that takes ε as a parameter and never compares it with 1 "
        "will silently be run with ε > 1. Not reported: a module that compares that ε with 1 "
        "(`assert 0 < epsilon < 1`, `if epsilon >= 1: raise`, `min(epsilon, 1)`) in the function of the "
        "formula, or elsewhere in a branch that acts on it (raises, warns, returns, re-binds ε, or calls "
        "the formula's function); a literal ε ≤ 1, "
        "code with no DP context. The ε may sit under a floor against division by zero (`max(epsilon, 1e-9)` is "
        "still any ε); the σ may be kept on the instance (`self.sigma = …`) and drawn in another method of the "
        "class. Fix: guard ε < 1, or use the analytic Gaussian mechanism "
        "(Balle & Wang 2018), which holds for every ε."
    )
    TRIGGERS = ("1.25",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a ``log`` call with the constant 1.25 in the module."""
        return "log" in facts.called and 1.25 in facts.numbers

    VALID = (
        # a mechanism class whose constructor default and only construction pass a module constant ε of 1
        """
import numpy as np
EPS = 1.0
DELTA = 1e-5
class NoisyEncoder:
    def __init__(self, dim, epsilon=EPS, delta=DELTA):
        self.epsilon = epsilon
        self.sigma = np.sqrt(2 * np.log(1.25 / delta)) / self.epsilon
    def encode(self, vec):
        return vec + np.random.normal(0, self.sigma, len(vec))
def build(dim):
    return NoisyEncoder(dim, epsilon=EPS)
""",
        # (h43-p) the Gaussian branch of a private helper every call sends to Laplace never runs (chit-ang/dpgnn get_noise)
        """
import numpy as np
def _get_noise(noise_type, size, eps, delta=1e-5, sensitivity=2.0):
    if noise_type == "laplace":
        return np.random.laplace(0, sensitivity / eps, size)
    elif noise_type == "gaussian":
        c = np.sqrt(2 * np.log(1.25 / delta))
        return np.random.normal(0, c * sensitivity / eps, size)
    raise NotImplementedError(noise_type)
def release(adj, eps):
    return adj + _get_noise(noise_type="laplace", size=adj.shape, eps=eps)
""",
        # (h43-p) a module flag set once to True and never changed: its else-branch never runs (privGnn config.use_lap_noise)
        """
import numpy as np
_USE_LAPLACE = True
def noisy_logits(logits, eps, delta, sens):
    if _USE_LAPLACE:
        return logits + np.random.laplace(0, sens / eps, logits.shape)
    else:
        sigma = np.sqrt(2 * np.log(1.25 / delta)) * sens / eps
        return logits + np.random.normal(0, sigma, logits.shape)
""",
        # graph-experiments GlobalDPSyntheticGraphStratification.py / ScaleFreeGraphExperiments.py: a script whose
        # only ε reaching the formula is a module constant or a caller's default of at most 1
        """
import numpy as np
epsilon = 1.0
def gaussian_release(value, sensitivity, epsilon, delta=1e-5):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return value + np.random.normal(0, sigma)
def run(degrees, eps=0.5):
    return gaussian_release(degrees.mean(), 1.0 / len(degrees), eps)
results = [gaussian_release(d, 1.0, epsilon) for d in (3.0, 4.0)]
print(run(np.array([1.0, 2.0])))
""",
        # Adam's eps and a kernel's sigma are no privacy parameters
        """
import numpy as np
def smooth(x, sigma=2.0, eps=1e-8):
    w = np.exp(-np.arange(-3, 4) ** 2 / (2 * sigma ** 2))
    return np.convolve(x, w / (w.sum() + eps), mode="same")
""",
        # a literal δ and a literal ε below 1
        """
import numpy as np
def gaussian_mechanism(data, sensitivity=1):
    sigma = np.sqrt(2 * np.log(1.25 / 1e-5)) * sensitivity / 0.5
    return data + np.random.normal(0, sigma, len(data))
""",
        # a σ that only describes the mechanism in a returned summary (ornl-presto's metrics)
        """
import numpy as np
def privacy_loss_distribution(epsilon, delta=1e-5, n_samples=1000):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    mu = 1 / (2 * sigma ** 2)
    losses = np.random.normal(mu, 1 / sigma, n_samples)
    return {"epsilon": epsilon, "mean_loss": float(losses.mean())}
""",
        # smartnoise-sql: a rough scale only compared with a limit; the noise is calibrated elsewhere
        """
import math
def _compute_noise_scale(self):
    rough_scale = float(self.upper - self.lower) * math.sqrt(2.0 * math.log(1.25 / self.delta)) / self.epsilon
    if rough_scale > 10_000_000:
        raise ValueError("noise scale too large for this epsilon")
    self.scale = self._analytic_scale()
""",
        # private-table: the formula's condition is asserted
        """
import numpy as np
def gaussian_mechanism(value, sensitivity, epsilon, delta):
    assert 0 < epsilon < 1, "the classical Gaussian mechanism needs epsilon < 1"
    sigma = np.sqrt(2 * np.log(1.25 / delta)) * sensitivity / epsilon
    return value + np.random.normal(0, sigma)
""",
        """
import math
class GaussianClassic:
    def __init__(self, epsilon, delta, sensitivity):
        if epsilon > 1:
            raise ValueError("epsilon must be at most 1")
        self.epsilon, self.delta, self.sensitivity = epsilon, delta, sensitivity

    def scale(self):
        return math.sqrt(2 * math.log(1.25 / self.delta)) * self.sensitivity / self.epsilon
""",
        # alps-lab/dpgan: the formula only seeds σ; the moments accountant charges that σ and computes ε
        """
import numpy as np
from utils.accounting import GaussianMomentsAccountant
if __name__ == "__main__":
    config = parser.parse_args()
    if config.enable_accounting:
        config.sigma = np.sqrt(2.0 * np.log(1.25 / config.delta)) / config.epsilon
        print("Now with new sigma: %.4f" % config.sigma)
    accountant = GaussianMomentsAccountant(loader.n, config.moment)
    train(config, accountant)
""",
        """
import numpy as np
from opacus.accountants import RDPAccountant
def train(model, loader, epsilon, delta, q, steps):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    accountant = RDPAccountant()
    for _ in range(steps):
        step(model, loader, sigma)
        accountant.step(noise_multiplier=sigma, sample_rate=q)
    return accountant.get_epsilon(delta)
""",
        # a literal epsilon below 1
        """
import numpy as np
def noisy(x, delta):
    return x + np.random.normal(0, np.sqrt(2 * np.log(1.25 / delta)) / 0.5)
""",
        # federated_recommendation's Client.py: ε a local constant below 1, then the formula
        """
import math
import numpy as np
def add_noise(weights):
    epsilon = 0.5
    delta = 0.00001
    sigma = 0.001 / 64 / epsilon * math.sqrt(2 * math.log(1.25 / delta))
    return weights + np.random.normal(0, sigma, weights.shape)
""",
        """
import numpy as np
def gaussian_sigma(epsilon, delta, sensitivity=1.0):
    epsilon = min(epsilon, 1.0)
    return np.sqrt(2 * np.log(1.25 / delta)) * sensitivity / epsilon
""",
        # the ε check sits in another function, but it raises
        """
import numpy as np
def perturb(w, sensitivity, epsilon, delta):
    scale = np.sqrt(2 * np.log(1.25 / delta)) * sensitivity / epsilon
    return w + np.random.normal(0, scale, w.shape)
def sweep(grid, w, delta):
    for epsilon in grid:
        if epsilon >= 1:
            raise ValueError("classical calibration needs epsilon < 1")
        perturb(w, 1.0, epsilon, delta)
""",
        # a caller picks the classical formula only below 1
        """
import math, random
def classical_noise(value, epsilon, delta):
    sd = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return value + random.gauss(0, sd)
def release(value, epsilon, delta):
    if epsilon < 1:
        return classical_noise(value, epsilon, delta)
    return analytic_noise(value, epsilon, delta)
""",
        # the driver clamps ε before use
        """
import numpy as np
def noisy_mean(x, epsilon, delta):
    std = np.sqrt(2 * np.log(1.25 / delta)) / epsilon / len(x)
    return x.mean() + np.random.normal(0, std)
def main(args):
    epsilon = args.epsilon
    if epsilon > 1:
        epsilon = 0.99
    print(noisy_mean(args.data, epsilon, 1e-5))
""",
        # ε in a product under the fraction bar, with a literal ε ≤ 1 passed
        """
import numpy as np
def private_average(values, delta):
    n = len(values)
    std = (1.0 / (n * 0.5)) * np.sqrt(2 * np.log(1.25 / delta))
    return values.mean() + np.random.normal(0, std)
""",
        """
import math, random
def gaussian_sum(xs, eps, delta, bound):
    assert 0 < eps < 1
    sd = bound * math.sqrt(2 * math.log(1.25 / delta)) / (2 * eps)
    return sum(xs) + random.gauss(0, sd)
""",
        """
import numpy as np
def noisy_var(x, epsilon, delta):
    epsilon = min(epsilon, 1.0)
    s = 3.0 / float(len(x) * epsilon) * np.sqrt(2 * np.log(1.25 / delta))
    return x.var() + s * np.random.standard_normal()
""",
        # twins of the floored ε and of the σ kept on the instance: ε checked, or the σ only described
        """
import math
import numpy as np
def local_report(v, epsilon, delta, low, high):
    assert epsilon < 1, "classical calibration"
    sd = (high - low) * math.sqrt(2 * math.log(1.25 / delta)) / max(epsilon, 1e-12)
    return v + np.random.normal(0, sd)
""",
        """
import numpy as np
class ClassicGauss:
    def __init__(self, epsilon, delta, sens=1.0):
        if epsilon >= 1:
            raise ValueError("epsilon must be below 1")
        self.epsilon, self.delta, self.sens = epsilon, delta, sens
    def fit(self):
        self.std = self.sens * np.sqrt(2 * np.log(1.25 / self.delta)) / self.epsilon
    def apply(self, x):
        return x + np.random.normal(0.0, self.std, np.shape(x))
""",
        """
import math
class MechanismCard:
    def __init__(self, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta
    def describe(self):
        self.noise_sd = math.sqrt(2 * math.log(1.25 / self.delta)) / self.epsilon
    def as_dict(self):
        return {"epsilon": self.epsilon, "sd": self.noise_sd}
""",
        # the noise function's σ and the accountant's σ share the configured ε: a list of σs goes to an RDP
        # composition (pyvacy comp_epsilon), which computes the claimed ε from σ
        """
import numpy as np
from pyvacy.analysis import comp_epsilon
def weights_noise(counts, n, cfg):
    sens = np.sqrt(n * n - n)
    std = np.sqrt(sens * np.log(1.25 / cfg['delta_w'])) / cfg['epsilon_w']
    return counts + np.random.normal(0.0, std, counts.shape)
def total_privacy(cfg, n, steps, q):
    sigmas, qs, its = [cfg['noise_multiplier']], [q], [steps]
    std_w = np.sqrt(n * n - n) * np.sqrt(2 * np.log(1.25 / cfg['delta_w'])) / cfg['epsilon_w']
    sigmas.append(std_w)
    qs.append(1.0)
    its.append(1)
    return comp_epsilon(qs, sigmas, its, cfg['delta'])
""",
        # not DP: a Gaussian blur with a kernel sigma and a numerical epsilon
        """
import numpy as np
def blur_kernel(size, sigma, eps=1e-8):
    x = np.arange(size) - size // 2
    k = np.exp(-x ** 2 / (2 * sigma ** 2))
    return k / (k.sum() + eps)
""",
        # (fix48-S6) 2·ln(1.25/δ)·Δ/ε without the square root is no classical σ (it over-noises by the root)
        """
import numpy as np
class UploadNoiser:
    def __init__(self, clip, delta):
        self.clip, self.delta = clip, delta
    def scale(self, epsilon):
        return (2.0 * np.log(1.25 / self.delta) * self.clip) / epsilon
    def add(self, w, epsilon):
        return w + np.random.normal(0.0, self.scale(epsilon), w.shape)
""",
        # (fix48-S6) ordinary ML: a log-ratio schedule that only looks like the formula
        """
import math
def warmup_factor(step, total, eps=1e-8):
    return 2 * math.log(1.25 / (1 + step / total)) / (total + eps)
""",
    )

    INVALID = (
        # twin: the same class constructed with ε = 4 by its caller
        """
import numpy as np
EPS = 1.0
DELTA = 1e-5
class NoisyEncoder:
    def __init__(self, dim, epsilon=EPS, delta=DELTA):
        self.epsilon = epsilon
        self.sigma = np.sqrt(2 * np.log(1.25 / delta)) / self.epsilon  # <-
    def encode(self, vec):
        return vec + np.random.normal(0, self.sigma, len(vec))
def build(dim):
    return NoisyEncoder(dim, epsilon=4.0)
""",
        # (fix48-S6) twin: the root is taken on the next line, so σ is the classical one for any ε
        """
import numpy as np
class UploadNoiser:
    def __init__(self, clip, delta):
        self.clip, self.delta = clip, delta
    def scale(self, epsilon):
        c2 = 2.0 * np.log(1.25 / self.delta)  # <-
        return np.sqrt(c2) * self.clip / epsilon
    def add(self, w, epsilon):
        return w + np.random.normal(0.0, self.scale(epsilon), w.shape)
""",
        # (h43-p) twin: a caller passes the kind it is given, so the Gaussian branch may run
        """
import numpy as np
def _get_noise(noise_type, size, eps, delta=1e-5, sensitivity=2.0):
    if noise_type == "laplace":
        return np.random.laplace(0, sensitivity / eps, size)
    elif noise_type == "gaussian":
        c = np.sqrt(2 * np.log(1.25 / delta))  # <-
        return np.random.normal(0, c * sensitivity / eps, size)
    raise NotImplementedError(noise_type)
def release(adj, eps, kind):
    return adj + _get_noise(noise_type=kind, size=adj.shape, eps=eps)
""",
        # (h43-p) twin: the flag is reassigned from the command line, so either branch may run
        """
import numpy as np
_USE_LAPLACE = True
def noisy_logits(logits, eps, delta, sens):
    if _USE_LAPLACE:
        return logits + np.random.laplace(0, sens / eps, logits.shape)
    else:
        sigma = np.sqrt(2 * np.log(1.25 / delta)) * sens / eps  # <-
        return logits + np.random.normal(0, sigma, logits.shape)
def configure(args):
    global _USE_LAPLACE
    _USE_LAPLACE = args.laplace
""",
        # the twin where a caller passes ε above 1 (a constant of 2, a default of 4)
        """
import numpy as np
epsilon = 2.0
def gaussian_release(value, sensitivity, epsilon, delta=1e-5):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon  # <-
    return value + np.random.normal(0, sigma)
def run(degrees, eps=4.0):
    return gaussian_release(degrees.mean(), 1.0 / len(degrees), eps)
results = [gaussian_release(d, 1.0, epsilon) for d in (3.0, 4.0)]
print(run(np.array([1.0, 2.0])))
""",
        # twin of the shared-ε case: the accountant gets σs of other mechanisms only
        """
import numpy as np
from pyvacy.analysis import comp_epsilon
def weights_noise(counts, n, cfg):
    sens = np.sqrt(n * n - n)
    std = np.sqrt(2 * np.log(1.25 / cfg['delta_w'])) * sens / cfg['epsilon_w']  # <-
    return counts + np.random.normal(0.0, std, counts.shape)
def total_privacy(cfg, steps, q):
    sigmas = [cfg['noise_multiplier']]
    return comp_epsilon([q], sigmas, [steps], cfg['delta'])
""",
        # flwr LocalDpMod: the σ goes straight to the noise helper
        """
import numpy as np
class LocalDpMod:
    def __call__(self, params):
        std_dev = (
            self.sensitivity * np.sqrt(2 * np.log(1.25 / self.delta)) / self.epsilon  # <-
        )
        add_gaussian_noise_inplace(params, std_dev)
""",
        # wenzhu dp_mechanism.py
        """
import numpy as np
def Gaussian_Simple(epsilon, delta):
    return np.sqrt(2 * np.log(1.25 / delta)) / epsilon  # <-
""",
        """
import math
def gaussian_mechanism(value, sensitivity, epsilon, delta):
    sigma = sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon  # <-
    return value + random.gauss(0, sigma)
""",
        """
import numpy as np
class GaussianMechanism:
    def __init__(self, epsilon, delta, sensitivity):
        self.epsilon, self.delta, self.sensitivity = epsilon, delta, sensitivity

    def noise_scale(self):
        c = np.sqrt(2 * np.log(1.25 / self.delta))  # <-
        return c * self.sensitivity / self.epsilon
""",
        # dp4gp: the constant, then the σ, then a scaled standard draw
        """
import numpy as np
def prepare(self, binaverages, sens_per_bin):
    c = np.sqrt(2*np.log(1.25/self.delta))  # <-
    bin_sigma = c*sens_per_bin/self.epsilon
    return binaverages + np.random.randn(binaverages.shape[0])*bin_sigma
""",
        # an accountant in the module, but the σ given to it is another one
        """
import numpy as np
def release(x, epsilon, delta, q, steps, noise_multiplier):
    std = np.sqrt(2 * np.log(1.25 / delta)) / epsilon  # <-
    eps_sgd = compute_rdp(q, noise_multiplier, steps, orders)
    return x + np.random.normal(0, std, size=x.shape)
""",
        # δ written as a literal inside the log
        """
import numpy as np
def gaussian_mechanism(data, epsilon, sensitivity=1):
    sigma = np.sqrt(2 * np.log(1.25 / 1e-5)) * sensitivity / epsilon  # <-
    return data + np.random.normal(0, sigma, len(data))
""",
        # the check is on another name
        """
import numpy as np
def dp_release(x, eps, delta, alpha):
    assert alpha < 1
    std = np.sqrt(2 * np.log(1.25 / delta)) / eps  # <-
    return x + np.random.normal(0, std, size=x.shape)
""",
        # the same spelling with ε a constant above 1, or a local constant a caller can override
        """
import math
import numpy as np
def add_noise(weights, epsilon=0.5):
    delta = 0.00001
    sigma = 0.001 / 64 / epsilon * math.sqrt(2 * math.log(1.25 / delta))  # <-
    return weights + np.random.normal(0, sigma, weights.shape)
def add_noise_big(weights):
    eps = 4.0
    delta = 0.00001
    sigma = 0.001 / eps * math.sqrt(2 * math.log(1.25 / delta))  # <-
    return weights + np.random.normal(0, sigma, weights.shape)
""",
        # an ε compared with 1 in another function only to pick a repeat count
        """
import numpy as np
def perturb(w, sensitivity, epsilon, delta):
    scale = np.sqrt(2 * np.log(1.25 / delta)) * sensitivity / epsilon  # <-
    return w + np.random.normal(0, scale, w.shape)
def sweep(grid, w, delta):
    for epsilon in grid:
        if epsilon >= 1:
            repeats = 5
        else:
            repeats = 20
        for _ in range(repeats):
            perturb(w, 1.0, epsilon, delta)
""",
        # ... only to label a plot
        """
import math, random
def classical_noise(value, epsilon, delta):
    sd = math.sqrt(2 * math.log(1.25 / delta)) / epsilon  # <-
    return value + random.gauss(0, sd)
def plot(results, epsilon):
    style = "solid" if epsilon < 1 else "dashed"
    draw(results, linestyle=style)
""",
        # ... only to print a note
        """
import numpy as np
def noisy_mean(x, epsilon, delta):
    std = np.sqrt(2 * np.log(1.25 / delta)) / epsilon / len(x)  # <-
    return x.mean() + np.random.normal(0, std)
def main(args):
    epsilon = args.epsilon
    if epsilon > 1:
        print("weak privacy regime")
    print(noisy_mean(args.data, epsilon, 1e-5))
""",
        # ε inside a product in the denominator
        """
import numpy as np
def private_average(values, epsilon, delta):
    n = len(values)
    std = (1.0 / (n * epsilon)) * np.sqrt(2 * np.log(1.25 / delta))  # <-
    return values.mean() + np.random.normal(0, std)
""",
        """
import math, random
def gaussian_sum(xs, eps, delta, bound):
    sd = bound * math.sqrt(2 * math.log(1.25 / delta)) / (2 * eps)  # <-
    return sum(xs) + random.gauss(0, sd)
""",
        """
import numpy as np
def noisy_var(x, epsilon, delta):
    s = 3.0 / float(len(x) * epsilon) * np.sqrt(2 * np.log(1.25 / delta))  # <-
    return x.var() + s * np.random.standard_normal()
""",
        # ε floored against division by zero is still any ε the caller passes
        """
import math
import numpy as np
def local_report(v, epsilon, delta, low, high):
    sd = (high - low) * math.sqrt(2 * math.log(1.25 / delta)) / max(epsilon, 1e-12)  # <-
    return v + np.random.normal(0, sd)
""",
        # the σ calibrated in one method, kept on the instance, drawn in another
        """
import numpy as np
class ClassicGauss:
    def __init__(self, epsilon, delta, sens=1.0):
        self.epsilon, self.delta, self.sens = epsilon, delta, sens
    def fit(self):
        self.std = self.sens * np.sqrt(2 * np.log(1.25 / self.delta)) / self.epsilon  # <-
    def apply(self, x):
        return x + np.random.normal(0.0, self.std, np.shape(x))
""",
        # ... and handed to the library's noise sampler by keyword
        """
import math
class VectorGauss:
    def __init__(self, rng, epsilon=2.0, delta=1e-6, l2=1.0):
        self.rng, self.epsilon, self.delta, self.l2 = rng, epsilon, delta, l2
    def calibrate(self):
        self.sd = self.l2 * math.sqrt(2.0 * math.log(1.25 / self.delta)) / self.epsilon  # <-
    def privatise(self, vec):
        return vec + draw_noise(self.rng, "gaussian", scale=self.sd, size=len(vec))
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not _is_classical_log(node) or not self._square_rooted(node):
            return
        eps = {e for e in self._epsilons(node) if not self._small_constant(e, node)}
        if not eps or _guards(self, node, eps) or not self._calibrates(node) or self._charged(node):
            return
        if never_referenced(self.ctx, self.ctx.analysis.enclosing_function(node)):
            return  # a helper nothing in the project calls, imports or names: it releases nothing
        self.report(node, f"the classical Gaussian calibration `sqrt(2·ln(1.25/δ))·Δ/ε` holds only for ε < 1, and "
                          f"`{sorted(eps)[0]}` is never compared with 1: with ε > 1 it under-noises; guard ε < 1 "
                          f"or use the analytic Gaussian mechanism")

    def _square_rooted(self, at: cst.Call) -> bool:
        """Is ``2 ln(1.25/δ)`` under a square root: ``sqrt(…)``, ``(…) ** 0.5``, a variance form (``/ eps ** 2``)
        or a name the function later takes the root of? Without it, ``2·ln(1.25/δ)·Δ/ε`` is no classical σ (it
        over-noises by the root's factor)."""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(at)

        def root(n: cst.CSTNode) -> bool:
            return (isinstance(n, cst.Call) and call_name(n) in ("sqrt", "isqrt")
                    or isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power)
                    and number(n.right) == 0.5)

        if any(root(n) for n in fa.ancestors(at) if statement is None or fa.inside(n, statement)):
            return True
        if statement is None or any(isinstance(n, (cst.BinaryOperation, cst.AugAssign)) and isinstance(
                n.operator, (cst.Power, cst.PowerAssign)) for n in walk(statement)):
            return True
        if isinstance(statement, cst.Return):
            return False
        if not isinstance(statement, cst.Assign):
            return True
        seed = {t for target in statement.targets for t in value_refs(target.target)}
        fn = fa.enclosing_function(at)
        scope: cst.CSTNode = fn if fn is not None else self.ctx.module
        for n in walk(scope, into_scopes=False):
            if root(n) and n is not at and value_refs(n) & seed:
                return True
        return False

    def _small_constant(self, name: str, at: cst.Call) -> bool:
        """Is ``name`` a local constant ε ≤ 1: every assignment to it in the enclosing function (the module
        when there is none) a number literal ≤ 1, and not a parameter (``epsilon = 0.5`` then the formula)?"""
        fa = self.ctx.analysis
        scope: cst.CSTNode = fa.enclosing_function(at) or self.ctx.module
        if isinstance(scope, cst.FunctionDef) and any(
                p.name.value == name for p in (*scope.params.params, *scope.params.kwonly_params)):
            return self._callers_pass_small(scope, name, 0)
        values = []
        for node in walk(scope, into_scopes=False):
            if isinstance(node, cst.Assign) and any(last_name(t.target) == name and dotted(t.target) == name
                                                    for t in node.targets):
                values.append(number(node.value))
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and dotted(node.target) == name:
                values.append(number(node.value) if isinstance(node, cst.AnnAssign) and node.value else None)
        return bool(values) and all(v is not None and 0 < v <= 1 for v in values)

    def _callers_pass_small(self, fn: cst.FunctionDef, name: str, depth: int) -> bool:
        """``name`` is a parameter of the module-level function ``fn`` of a script no other module imports, and
        every call of ``fn`` in the script passes a literal ε ≤ 1, a module constant ≤ 1, or leaves a default ≤ 1
        (through up to three callers' own parameters: ``run(G, epsilon=1.0)`` calling ``mechanism(x, epsilon)``):
        every ε that reaches the formula is ≤ 1. A library's helper, imported elsewhere, is the caller's choice."""
        import os
        import re as _re

        from dpcheck.analysis.noisedraws import _project_tokens, project_root

        fa = self.ctx.analysis
        path = self.ctx.path
        if depth > 3:
            return False
        callee = fn.name.value
        params = [*fn.params.params, *fn.params.kwonly_params]
        positional_params = list(fn.params.params)
        if not isinstance(fa.parent(fn), cst.Module):
            # a constructor of a module-level class (``Mechanism(epsilon=EPS)``): its callers name the class
            owner = fa.enclosing_class(fn)
            if fn.name.value != "__init__" or owner is None or not isinstance(fa.parent(owner), cst.Module) \
                    or not params or params[0].name.value != "self":
                return False
            callee = owner.name.value
            params = params[1:]
            positional_params = positional_params[1:]
        index = next((i for i, p in enumerate(params) if p.name.value == name), None)
        if index is None:
            return False
        default = params[index].default
        if default is not None and not 0 < (number(default) or 0) <= 1 and not (
                isinstance(default, cst.Name) and self._module_constant_small(default.value)):
            return False
        code = self.ctx.module.code
        stem = os.path.splitext(os.path.basename(path))[0] if path and os.path.isfile(path) else None
        if stem is not None and _project_tokens(project_root(path)).get(stem, 0) > len(
                _re.findall(r"(?<!\w)" + _re.escape(stem) + r"(?!\w)", code)):
            return False  # another module imports (or names) this one: its callers choose ε
        calls = [c for c in walk(self.ctx.module) if isinstance(c, cst.Call) and isinstance(c.func, cst.Name)
                 and c.func.value == callee]
        if not calls or len(_re.findall(r"(?<![\w.])" + _re.escape(callee) + r"(?!\w)", code)) != len(calls) + 1:
            return False  # passed around as a value, or never called here
        for call in calls:
            value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
            positional = [a for a in call.args if a.keyword is None]
            if any(a.star for a in call.args):
                return False
            if value is None and index < len(positional) and index < len(positional_params):
                value = positional[index].value
            if value is None:
                if default is None:
                    return False
                continue
            if 0 < (number(value) or 0) <= 1:
                continue
            if not isinstance(value, cst.Name):
                return False
            caller = fa.enclosing_function(call)
            if caller is not None and any(p.name.value == value.value
                                          for p in (*caller.params.params, *caller.params.kwonly_params)):
                if not self._callers_pass_small(caller, value.value, depth + 1):
                    return False
                continue
            if caller is not None and any(isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and any(
                    dotted(t) == value.value for t in ([x.target for x in n.targets] if isinstance(n, cst.Assign)
                                                        else [n.target])) for n in walk(caller, into_scopes=False)):
                return False  # a local of the caller
            if not self._module_constant_small(value.value):
                return False
        return True

    def _module_constant_small(self, name: str) -> bool:
        """Is ``name`` a module-level constant, every assignment to it a number literal in (0, 1]?"""
        values = [number(n.value) for n in walk(self.ctx.module, into_scopes=False)
                  if isinstance(n, cst.Assign) and any(dotted(t.target) == name for t in n.targets)]
        return bool(values) and all(v is not None and 0 < v <= 1 for v in values)

    def _calibrates(self, at: cst.Call) -> bool:
        """Does the σ become a noise scale: returned, stored on the object, or passed to a zero-centred draw
        or a noise helper (not a rough bound that is only compared, nor a simulation centred elsewhere)?"""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(at)
        if isinstance(statement, cst.Return):
            return True
        fn = fa.enclosing_function(at)
        if fn is None:
            return True
        if not isinstance(statement, cst.Assign):
            return any(isinstance(n, cst.Call) and (is_draw(n) and zero_centred(n) or "noise" in words(call_name(n)))
                       for n in fa.ancestors(at) if fa.inside(n, statement))
        seed = {t for target in statement.targets for t in value_refs(target.target)}
        if self._read_by_sibling_draw(fn, statement):
            return True
        derived = fa.derived_names(fn, lambda _: False, seed)
        # a σ that only flows into a returned summary is a description, not a calibration, unless the
        # function is itself named for the scale
        returns_scale = bool(words(fn.name.value) & {"sigma", "scale", "std", "stddev", "noise", "gaussian"})
        for node in walk(fn, into_scopes=False):
            if isinstance(node, cst.Return) and node.value is not None and value_refs(node.value) & derived:
                if returns_scale:
                    return True
            if isinstance(node, cst.Call) and node is not at and (
                    (is_draw(node) and zero_centred(node)) or "noise" in words(call_name(node))):
                if any(value_refs(a.value) & derived for a in node.args):
                    return True
            # ``randn(n) * sigma``
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                for draw, other in ((node.left, node.right), (node.right, node.left)):
                    if isinstance(draw, cst.Call) and is_draw(draw) and zero_centred(draw) and value_refs(other) & derived:
                        return True
        return False

    def _read_by_sibling_draw(self, fn: cst.FunctionDef, statement: cst.Assign) -> bool:
        """Is the σ stored on the instance (``self.sigma = …``) and read by a zero-centred draw or a noise helper
        in a method of the same class (a mechanism object calibrating in one method and sampling in another)?"""
        fa = self.ctx.analysis
        stored = {dotted(t) for target in statement.targets for t in target_nodes(target.target)}
        stored = {s for s in stored if s is not None and s.startswith("self.") and s.count(".") == 1}
        owner = fa.enclosing_class(fn)
        if not stored or owner is None:
            return False
        for node in walk(owner):
            if isinstance(node, cst.Call) and (is_draw(node) and zero_centred(node)
                                               or "noise" in words(call_name(node))):
                if any(dotted(r) in stored for a in node.args for r in walk(a.value)):
                    return True
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                for draw, other in ((node.left, node.right), (node.right, node.left)):
                    if (isinstance(draw, cst.Call) and is_draw(draw) and zero_centred(draw)
                            and any(dotted(r) in stored for r in walk(other))):
                        return True
        return False

    def _charged(self, at: cst.Call) -> bool:
        """Is the σ (or the object it is stored on) also handed to a moments/RDP accountant in this module? Then
        the classical formula only picks a starting σ and the accountant computes the ε that is claimed."""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(at)
        if not isinstance(statement, cst.Assign):
            return False
        names: set[str] = set()
        holders: set[str] = set()
        for target in statement.targets:
            for t in target_nodes(target.target):
                name = dotted(t)
                if name is None:
                    continue
                names.add(name)
                base = name.split(".")[0]
                if "." in name and base not in ("self", "cls"):
                    holders.add(base)
        if not names:
            return False
        if self._reaches_accountant(names, holders):
            return True
        # the same ε calibrates a σ elsewhere in the module that is charged (``sigmas.append(σ)`` for the
        # accountant, the noise drawn in another function from its own copy of the formula): the accountant,
        # not the classical theorem, turns the mechanism's σ into the ε that is claimed
        mine = self._eps_texts(statement)
        if not mine:
            return False
        for other in walk(self.ctx.module):
            if not isinstance(other, cst.Call) or other is at or not _is_classical_log(other):
                continue
            twin = fa.enclosing_statement(other)
            if not isinstance(twin, cst.Assign) or not self._eps_texts(twin) & mine:
                continue
            twin_names = {dotted(t) for target in twin.targets for t in target_nodes(target.target)} - {None}
            if twin_names and self._reaches_accountant(twin_names, set()):  # type: ignore[arg-type]
                return True
        return False

    def _eps_texts(self, statement: cst.CSTNode) -> set[str]:
        """The source text of the ε factors ``statement`` divides by (``paras['epsilon_learnW']``)."""
        fa = self.ctx.analysis
        out: set[str] = set()
        for node in walk(statement):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
                for factor in _factors(node.right):
                    if is_eps(factor) or isinstance(factor, cst.Subscript) and any(
                            words(str(n.evaluated_value)) & EPS_WORDS for n in walk(factor)
                            if isinstance(n, cst.SimpleString)):
                        out.add(fa.code(factor).strip())
        return out

    def _reaches_accountant(self, names: set[str], holders: set[str]) -> bool:
        """Is one of ``names`` (or a list it is appended to) read by an accountant's charge in this module?"""
        names = set(names)
        for n in walk(self.ctx.module):
            # ``sigmas.append(σ)`` / ``sigmas += [σ]``: the list carries the σ to the accountant
            if isinstance(n, cst.Call) and call_name(n) in ("append", "extend", "insert") \
                    and isinstance(n.func, cst.Attribute) and any(value_refs(a.value) & names for a in n.args):
                container = dotted(n.func.value)
                if container:
                    names.add(container)
            elif isinstance(n, cst.AugAssign) and value_refs(n.value) & names:
                container = dotted(n.target)
                if container:
                    names.add(container)
        for n in walk(self.ctx.module):
            if not isinstance(n, cst.Call) or not (charges_accountant(n) or _EPS_FROM_SIGMAS.search(call_name(n))):
                continue
            read = set().union(*(value_refs(a.value) for a in n.args)) if n.args else set()
            # the σ itself, or the config object holding it handed to an accountant's constructor
            if read & names or (read & holders and "accountant" in call_name(n).lower()):
                return True
        return False

    def _epsilons(self, at: cst.Call) -> set[str]:
        """The ε the σ is divided by: in the statement itself, or in the statement that uses its result."""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(at)
        found = self._divisors(statement)
        if found is None:
            return set()
        if found:
            return found
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            target = last_name(statement.targets[0].target)
            fn = fa.enclosing_function(at)
            if target is not None and fn is not None:
                for node in walk(fn, into_scopes=False):
                    if isinstance(node, cst.BaseSmallStatement) and node is not statement and any(
                            last_name(n) == target for n in walk(node)):
                        more = self._divisors(node)
                        if more:
                            return more
        return set()

    @staticmethod
    def _divisors(statement: cst.CSTNode) -> set[str] | None:
        """Names with ε words divided by in ``statement``; None when it divides by a literal ε ≤ 1."""
        out: set[str] = set()
        for node in walk(statement):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
                right = node.right
                value = number(right)
                if number(node.left) == 1.25:
                    continue  # 1.25 / δ: a literal δ is not a literal ε
                if value is not None and value <= 1:
                    return None
                for factor in _factors(right):
                    if is_eps(factor):
                        out.add(last_name(factor) or "")
        return out
