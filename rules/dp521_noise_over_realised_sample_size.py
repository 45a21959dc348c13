"""DP521: the noise std is divided by the realised size of a Poisson (Bernoulli) sample."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.rule import Rule

#: calls that count what a mask or a sample holds
_COUNTS = frozenset({"sum", "len", "count_nonzero", "nansum", "reduce_sum"})
#: Bernoulli draws: ``binomial(1, q, n)``, ``bernoulli(q)``, ``rand(n) < q``
_BERNOULLI = frozenset({"binomial", "bernoulli", "Bernoulli"})
_UNIFORM = frozenset({"rand", "random", "uniform", "random_sample"})
_SCALE_WORDS = frozenset({"sigma", "std", "stddev", "noise", "scale", "stdev"})


class NoiseOverRealisedSampleSize(Rule):
    id = "DP521"
    name = "noise-over-realised-sample-size"
    category = "general"
    severity = "error"
    summary = "the noise std is divided by the realised size of a Poisson sample, which depends on who was sampled"
    rationale = (
        "The privacy amplification by Poisson sampling that the accountant applies (each record or "
        "client included with probability q) holds for a mechanism whose noise and normalisation do "
        "not depend on the realised sample: the sum is noised with σ·C and divided by the *expected* "
        "size q·N. Dividing the noise std by the realised count `m = sum(binomial(1, q, N))` (or the "
        "length of the Bernoulli-masked set) makes the noise scale a function of which records were "
        "drawn — adding or removing one record changes m, and with it the per-round sensitivity "
        "C/m the accountant never sees. Not reported: a noise std over a fixed or expected size "
        "(`q * N`, `batch_size`), uniform sampling without replacement of a fixed m, a realised count "
        "used only outside the noise scale. Fix: divide by the expected sample size q·N (Opacus' "
        "`expected_batch_size`)."
    )
    TRIGGERS = ("binomial", "bernoulli", "rand")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a Bernoulli draw (or a uniform draw compared with a rate) and a noise draw."""
        return bool(facts.called & (_BERNOULLI | _UNIFORM)) and bool(facts.called & PURE_DRAWS)

    VALID = (
        # the expected sample size
        """
import numpy as np
def round_noise(n_clients, q, z, clip):
    picked = np.where(np.random.binomial(1, q, n_clients) == 1)[0]
    sigma = z * clip / (q * n_clients)
    return picked, np.random.normal(0, sigma)
""",
        # uniform sampling of a fixed number of clients
        """
import numpy as np
def round_noise(n_clients, frac, z, clip):
    m = max(int(frac * n_clients), 1)
    picked = np.random.choice(n_clients, m, replace=False)
    sigma = z * clip / m
    return picked, np.random.normal(0, sigma)
""",
        # the realised count only reported, the noise over the expected batch size
        """
import torch
def dp_step(per_sample_grads, q, n, clip, noise_multiplier, log):
    mask = torch.rand(n) < q
    log["batch"] = int(mask.sum())
    total = (per_sample_grads[mask]).sum(0)
    return (total + torch.normal(0.0, noise_multiplier * clip, total.shape)) / (q * n)
""",
        # a Bernoulli draw of data (simulation), noise over a fixed count
        """
import numpy as np
def simulate(n, p, epsilon, k):
    bits = np.random.binomial(1, p, n)
    m = bits.sum()
    return m + np.random.laplace(0, 1.0 / epsilon), np.random.laplace(0, k / epsilon)
""",
    )

    INVALID = (
        # a federated round: Poisson client sampling, std z·G/m with m the clients drawn
        """
import numpy as np
def fed_round(updates, n_users, q, noise_multiplier, G):
    chosen = np.random.binomial(1, q, n_users)
    m = chosen.sum()
    std = noise_multiplier * G / m  # <-
    avg = sum(u for u, c in zip(updates, chosen) if c) / m
    return avg + np.random.normal(0, std, avg.shape)
""",
        # torch: a Bernoulli mask over the records, the noise std over its size
        """
import torch
def dp_step(per_sample_grads, q, clip, noise_multiplier):
    mask = torch.rand(per_sample_grads.shape[0]) < q
    batch = per_sample_grads[mask]
    b = len(batch)
    summed = batch.sum(0)
    return summed / b + torch.normal(0.0, noise_multiplier * clip / b, summed.shape)  # <-
""",
        # an attribute set in the sampling step and read by the noise
        """
import numpy as np
class Server:
    def sample(self, q):
        draws = np.random.random(self.n_clients) < q
        self.n_sampled = int(np.sum(draws))
        return np.flatnonzero(draws)
    def noise(self, shape):
        sigma = self.noise_multiplier * self.clip / self.n_sampled  # <-
        return np.random.normal(0, sigma, shape)
""",
        # a list of sampled indices from Bernoulli coins
        """
import random
import numpy as np
def sample_and_noise(n, q, noise_multiplier, clip, d):
    sampled = [i for i in range(n) if random.random() < q]
    noise_std = noise_multiplier * clip / len(sampled)  # <-
    return sampled, np.random.normal(0, noise_std, d)
""",
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        targets = [t.target for t in node.targets if isinstance(t.target, (cst.Name, cst.Attribute))]
        if not any(words(self._last(t)) & _SCALE_WORDS for t in targets):
            return
        size = self._realised_denominator(node.value, node)
        if size:
            self._report(node, size)

    def visit_Call(self, node: cst.Call) -> None:
        """A draw whose scale argument is itself divided by the realised size."""
        if call_name(node) not in PURE_DRAWS:
            return
        for arg in node.args:
            size = self._realised_denominator(arg.value, node)
            if size:
                self._report(node, size)
                return

    def _report(self, node: cst.CSTNode, size: str) -> None:
        self.report(node, f"the noise std is divided by `{size}`, the realised size of a Bernoulli (Poisson) "
                          "sample: it depends on which records or clients were drawn, so the per-round "
                          "sensitivity is not the C/(q·N) the subsampled accountant assumes; divide by the "
                          "expected size q·N")

    @staticmethod
    def _last(expr: cst.BaseExpression) -> str:
        return expr.value if isinstance(expr, cst.Name) else expr.attr.value  # type: ignore[attr-defined]

    def _realised_denominator(self, expr: cst.BaseExpression, at: cst.CSTNode) -> str | None:
        fa = self.ctx.analysis
        for sub in walk(expr):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
                for ref in walk(sub.right):
                    if isinstance(ref, (cst.Name, cst.Attribute, cst.Call)) and self._realised(ref, at):
                        return fa.code(ref).strip()
        return None

    def _realised(self, ref: cst.CSTNode, at: cst.CSTNode) -> bool:
        """``m`` / ``self.m`` assigned a count of a Bernoulli sample, or ``len(sampled)`` of one."""
        fa = self.ctx.analysis
        if isinstance(ref, cst.Call):
            return call_name(ref) in _COUNTS and bool(ref.args) and self._bernoulli(ref.args[0].value, ref, 0)
        if isinstance(ref, cst.Name) and ref.value in ("self", "cls"):
            return False  # the attribute ``self.m`` is checked as a whole
        values = self._values(ref, at)
        return any(self._count_of_bernoulli(v, v) for v in values)

    def _values(self, ref: cst.BaseExpression, at: cst.CSTNode) -> list[cst.BaseExpression]:
        """What ``ref`` is assigned: in the function around ``at`` for a name, in the module for ``self.x``."""
        fa = self.ctx.analysis
        key = fa.code(ref).strip()
        attribute = isinstance(ref, cst.Attribute)
        scope = fa.index.module if attribute else (fa.enclosing_function(at) or fa.index.module)
        out = []
        for sub in walk(scope, into_scopes=attribute):
            if isinstance(sub, cst.Assign) and any(fa.code(t.target).strip() == key for t in sub.targets):
                out.append(sub.value)
        return out

    def _count_of_bernoulli(self, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
        for sub in walk(value):
            if isinstance(sub, cst.Call) and sub.args and (
                    call_name(sub) in _COUNTS and self._bernoulli(sub.args[0].value, sub, 0)):
                return True
            if isinstance(sub, cst.Call) and call_name(sub) in ("sum", "count_nonzero") and not sub.args \
                    and isinstance(sub.func, cst.Attribute) and self._bernoulli(sub.func.value, sub, 0):
                return True  # ``mask.sum()``
        return False

    def _bernoulli(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """``expr`` holds a Bernoulli draw or what it selects: ``binomial(1, q, n)``, ``rand(n) < q``, a
        comprehension filtered by a coin, ``np.where(mask)``, ``x[mask]``, through local names."""
        for sub in walk(expr):
            if isinstance(sub, cst.Call) and call_name(sub) in _BERNOULLI and (
                    call_name(sub) != "binomial" or (sub.args and number(sub.args[0].value) == 1)):
                return True
            if isinstance(sub, cst.Comparison) and any(
                    isinstance(n, cst.Call) and call_name(n) in _UNIFORM for n in walk(sub.left)):
                return True
            if isinstance(sub, (cst.Name, cst.Attribute)) and depth < 3 and not (
                    isinstance(sub, cst.Name) and sub.value in ("self", "cls")):
                if any(self._bernoulli(v, v, depth + 1) for v in self._values(sub, sub) if v is not expr):
                    return True
        return False
