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


#: words of a function that analyses a mechanism (its RDP, a log-probability, a bound), not one that draws
_ANALYSIS_WORDS = frozenset({"rdp", "logq", "logpr", "accountant", "moments", "epsilon", "eps", "loss", "bound",
                             "cdf", "pdf", "logpdf", "logcdf"})


def _adds_noise(body: cst.CSTNode) -> cst.CSTNode | None:
    for node in walk(body):
        if isinstance(node, cst.Call):
            name = call_name(node)
            if name in _NOISE_DRAWS:
                return node
            named = words(name)
            if named & _NOISE_WORDS and not (named & _ANALYSIS_WORDS and not named & {"noise", "perturb",
                                                                                        "privatize", "privatise"}):
                return node
    return None


#: counters of rounds / epochs / iterations: ``if round_num == 0: return raw`` skips the noise once
_COUNTER_WORDS = frozenset({"round", "rounds", "rnd", "epoch", "iter", "iteration", "step", "t", "comm", "communication"})


def _first_rounds(test: cst.BaseExpression) -> str | None:
    """``round_num == 0``, ``epoch < 2``, ``t <= warmup``: the code a counter's first values take."""
    for node in walk(test):
        if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
            continue
        op = node.comparisons[0].operator
        right = node.comparisons[0].comparator
        if not isinstance(op, (cst.Equal, cst.LessThan, cst.LessThanEqual)):
            continue
        name = dotted(node.left) or ""
        pieces = words(name.rsplit(".", 1)[-1]) if name else frozenset()
        if pieces & _COUNTER_WORDS and isinstance(right, cst.Integer):
            return name
    return None


class NoiseByChance(Rule):
    id = "DP516"
    name = "noise-by-chance"
    category = "general"
    severity = "error"
    summary = "noise added only when a random draw says so, or skipped in the first round: those runs release the exact value"
    rationale = (
        "A mechanism is ε-DP when every run's output distribution is close for neighbouring inputs. "
        "`if random.random() < p: x = x + noise` (or `np.random.choice([0, 1], p=[1 - p, p])`, "
        "`torch.rand(1) < p`) releases the exact value with probability 1 - p: on that branch the "
        "output identifies the input, so no finite ε holds, whatever σ the noisy branch uses (and "
        "a p computed from the private update leaks by itself). Not reported: a branch whose `else` "
        "also adds noise, a noisy threshold (`if q + laplace(…) > T`, the sparse vector technique), "
        "coin flips that add no noise (randomized response, Poisson subsampling), code with no DP "
        "context. Fix: add the calibrated noise on every run; to trade utility for privacy lower "
        "σ, not the chance of noise. The same holds for a counter: `if round_num == 0: return "
        "net.state_dict()` before the perturbation releases the first round's trained weights raw."
    )
    TRIGGERS = ("if ",)
    #: checked per finding: a coin flip needs DP context; a first-round skip needs DP context or a
    #: perturbation helper named for privacy after it
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Every shape needs a noise call: an identifier in the text that draws or names noise."""
        return any(i in _NOISE_DRAWS or words(i) & _NOISE_WORDS for i in facts.identifiers)

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
        # round 0 returns the public initial model, before any training
        """
import numpy as np
def local_update(model, loader, round_idx, epsilon):
    if round_idx == 0:
        return model.initial_weights()
    for x, y in loader:
        model.loss(x, y).backward()
        model.opt.step()
    return perturb_weights(model.weights(), epsilon)
""",
        # every round perturbed; round 0 only changes the learning rate
        """
def client_train(net, opt, loader, epoch, sigma, clip):
    for x, y in loader:
        net.loss(x, y).backward()
        opt.step()
    if epoch == 0:
        opt.lr = 0.01
    return add_gaussian_noise(net.state_dict(), sigma * clip)
""",
        # a plot that simulates which queries get answered: the calls under the coin analyse the
        # Gaussian mechanism (its log-probability and RDP), they draw nothing
        """
import math, random
def pate_scatter(votes, threshold, sigma1, sigma2, order):
    xs, ys = [], []
    for v in votes:
        q = math.exp(log_answered(threshold, sigma1, v))
        if random.random() < q:
            logq = compute_logq_gaussian(v, sigma2)
            xs.append(max(v))
            ys.append(rdp_gaussian(logq, sigma2, order))
    return xs, ys
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
        # the first round's trained weights returned before the perturbation
        """
def train(net, optimizer, loader, round_num, eps):
    for x, y in loader:
        net.loss(x, y).backward()
        optimizer.step()
    if round_num == 0:  # <-
        return net.state_dict()
    return ldp_perturb(net.state_dict(), eps)
""",
        # warm-up epochs leave the update un-noised (TensorFlow spelling)
        """
import tensorflow as tf
def client_round(model, ds, epoch, noise_multiplier, l2_clip):
    model.fit(ds, epochs=1)
    update = model.get_weights()
    if epoch < 2:  # <-
        return update
    return [w + tf.random.normal(tf.shape(w), stddev=noise_multiplier * l2_clip) for w in update]
""",
        # the same coin, but the branch adds the Gaussian noise to the released votes
        """
import math, random
import numpy as np
def pate_answer(votes, threshold, sigma1, sigma2):
    out = []
    for v in votes:
        q = math.exp(log_answered(threshold, sigma1, v))
        if random.random() < q:  # <-
            v = v + np.random.normal(0, sigma2, len(v))
        out.append(int(np.argmax(v)))
    return out
""",
    )

    def visit_If(self, node: cst.If) -> None:
        self._first_round(node)
        coin = _coin(node.test)
        if coin is None or _adds_noise(node.body) is None or not self.ctx.analysis.in_dp_context(node):
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

    def _first_round(self, node: cst.If) -> None:
        """``if round == 0: return trained`` before the function's perturbation, after its training."""
        counter = _first_rounds(node.test)
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if counter is None or fn is None or _adds_noise(node.body) is not None:
            return
        returns = [r for r in walk(node.body) if isinstance(r, cst.Return) and r.value is not None]
        if not returns:
            return
        line = fa.line_of(node)
        later = [n for n in walk(fn, into_scopes=False)
                 if isinstance(n, cst.Call) and fa.line_of(n) > line and _adds_noise(n) is not None]
        later_noise = bool(later) and (fa.in_dp_context(node) or any(
            words(call_name(n)) & {"perturb", "privatize", "privatise", "sanitize", "ldp", "dp"} for n in later))
        trained_before = any(fa.line_of(n) < line and fa.trains(n) for n in fn.body.body)
        if later_noise and trained_before:
            self.report(
                node,
                f"when `{fa.code(node.test).strip()}` the function returns `{fa.code(returns[0].value).strip()}` "
                "before the perturbation below: the trained values of that round are released with no "
                "noise; perturb them on every round",
            )
