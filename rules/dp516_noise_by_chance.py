"""DP516: the noise is added only when a coin flip says so; otherwise the exact value is released."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: draws that flip a coin: ``random.random() < p``, ``np.random.choice([0, 1], p=…)``, ``torch.rand(1) < p``
_COINS = frozenset({"random", "rand", "uniform", "choice", "binomial", "bernoulli", "randint", "random_sample", "sample"})
#: draws and helpers that add DP noise
_NOISE_DRAWS = frozenset({
    "normal", "laplace", "gauss", "gumbel", "randn", "randn_like", "standard_normal", "normal_like",
    "gaussian", "random_normal", "normalvariate",
})
_NOISE_WORDS = frozenset({"noise", "laplace", "gaussian", "gauss", "mechanism", "perturb", "privatize", "privatise"})


def _coin(test: cst.BaseExpression) -> str | None:
    """The random draw the test compares (a coin flip), unless the test also reads noise (a noisy threshold)."""
    coin = None
    for node in walk(test):
        if isinstance(node, cst.Call):
            name = call_name(node)
            if name in _NOISE_DRAWS or words(name) & _NOISE_WORDS:
                return None
            root = dotted(node.func.value) if isinstance(node.func, cst.Attribute) else None
            if name in _COINS and root is not None and ("random" in words(root) or root in ("np", "torch", "rng", "tf")):
                coin = coin or name
    return coin


def _adds_noise(body: cst.CSTNode) -> cst.CSTNode | None:
    for node in walk(body):
        if isinstance(node, cst.Call):
            name = call_name(node)
            if name in _NOISE_DRAWS or words(name) & _NOISE_WORDS:
                return node
    return None


class NoiseByChance(Rule):
    id = "DP516"
    name = "noise-by-chance"
    category = "general"
    severity = "error"
    summary = "noise added only when a random draw says so: the other runs release the exact value"
    rationale = (
        "A mechanism is ε-DP when every run's output distribution is close for neighbouring inputs. "
        "`if random.random() < p: x = x + noise` (or `np.random.choice([0, 1], p=[1 - p, p])`, "
        "`torch.rand(1) < p`) releases the exact value with probability 1 - p: on that branch the "
        "output identifies the input, so no finite ε holds, whatever σ the noisy branch uses (and "
        "a p computed from the private update leaks by itself). Not reported: a branch whose `else` "
        "also adds noise, a noisy threshold (`if q + laplace(…) > T`, the sparse vector technique), "
        "coin flips that add no noise (randomized response, Poisson subsampling), code with no DP "
        "context. Fix: add the calibrated noise on every run; to trade utility for privacy lower "
        "σ, not the chance of noise."
    )
    TRIGGERS = ("if ",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return facts.calls_any(_COINS)

    VALID = (
        # noise on every run
        """
import numpy as np
def upload(update, sigma, clip):
    return update + np.random.normal(0, sigma * clip, update.shape)
""",
        # randomized response: the coin flips the answer, no additive noise
        """
import random
def randomized_response(bit, epsilon):
    p = 2.718 ** epsilon / (1 + 2.718 ** epsilon)
    if random.random() < p:
        return bit
    return 1 - bit
""",
        # sparse vector: the test itself carries the noise
        """
import numpy as np
def above_threshold(queries, T, epsilon):
    rho = np.random.laplace(0, 2 / epsilon)
    for i, q in enumerate(queries):
        if q + np.random.laplace(0, 4 / epsilon) >= T + rho:
            return i
""",
        # both branches add noise (two mechanisms chosen at random)
        """
import numpy as np
def release(x, epsilon, delta, sigma):
    if np.random.rand() < 0.5:
        return x + np.random.laplace(0, 1 / epsilon)
    else:
        return x + np.random.normal(0, sigma)
""",
        # Poisson subsampling: the coin selects records, the noise comes after
        """
import numpy as np
def dp_sum(rows, q, sigma, clip):
    picked = [r for r in rows if np.random.rand() < q]
    return np.sum(picked, 0) + np.random.normal(0, sigma * clip, rows.shape[1])
""",
    )

    INVALID = (
        # a weighted coin with numpy
        """
import numpy as np
def client_update(delta_w, epsilon, delta, sensitivity, dp_rate):
    if np.random.choice([0, 1], p=[1 - dp_rate, dp_rate]) == 1:  # <-
        delta_w = delta_w + np.random.normal(0, sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon, delta_w.shape)
    return delta_w
""",
        # a plain random.random() test and a mechanism helper
        """
import random
def gaussian_mechanism(x, sigma):
    return [v + random.gauss(0, sigma) for v in x]
def dp_share(vec, sigma, noise_prob):
    if random.random() < noise_prob:  # <-
        vec = gaussian_mechanism(vec, sigma)
    return vec
""",
        # torch coin flip guarding the gradient noise
        """
import torch
def private_step(model, sigma, clip, p_noise):
    for p in model.parameters():
        if torch.rand(1).item() < p_noise:  # <-
            p.grad += torch.normal(0, sigma * clip, p.grad.shape)
""",
        # an rng generator and a Laplace helper, the else releases raw
        """
import numpy as np
rng = np.random.default_rng()
def add_laplace_noise(v, epsilon):
    return v + rng.laplace(0, 1 / epsilon, v.shape)
def release_counts(counts, epsilon, keep):
    if rng.uniform() > keep:  # <-
        out = add_laplace_noise(counts, epsilon)
    else:
        out = counts
    return out
""",
    )

    def visit_If(self, node: cst.If) -> None:
        coin = _coin(node.test)
        if coin is None or _adds_noise(node.body) is None:
            return
        if node.orelse is not None and _adds_noise(node.orelse) is not None:
            return
        if isinstance(self.ctx.analysis.parent(node), cst.If):
            return  # an elif of a chain whose other branches decide
        self.report(
            node,
            f"the noise is added only when `{self.ctx.analysis.code(node.test).strip()}` holds (a "
            f"`{coin}` draw); on the other runs the exact value is released, so no ε holds; add "
            "the noise on every run",
        )
