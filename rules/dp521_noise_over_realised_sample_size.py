"""DP521: the noise std is divided by the realised size of a Poisson (Bernoulli) sample."""
from __future__ import annotations

import re

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
#: words of a sampler or loader that draws a Poisson (Bernoulli) sample
_POISSON_WORDS = frozenset({"poisson", "possion", "bernoulli"})
#: words of a DP optimiser's normaliser (the batch size the noisy sum is divided by)
_BATCH_WORDS = frozenset({"batch", "minibatch", "lot", "microbatches"})
#: a module of a vendored copy of Opacus: its DP optimizer imported relatively from the package itself
_LIBRARY_INTERNAL = re.compile(r"from\s+\.[\w.]*\s+import\s+\(?[^)]*?\bDPOptimizer\b", re.S)
#: Opacus entry points whose batches are Poisson samples unless ``poisson_sampling=False`` is passed
_OPACUS_ENTRY = frozenset({"make_private", "make_private_with_epsilon", "DPOptimizer", "DPDataLoader",
                           "DPOptimizerFastGradientClipping"})


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
        "C/m the accountant never sees. The same holds when the realised count is the DP optimiser's "
        "normaliser (`optimizer.minibatch_size = len(batch)`, a global `num_microbatches` set per batch) or "
        "divides the noisy clipped sum (`p.grad = noisy_grad / batch.shape[0]`) of a batch from a Bernoulli "
        "mask, a local sampler that draws coins, or a loader named for Poisson sampling. "
        "Not reported: a noise std over a fixed or expected size "
        "(`q * N`, `batch_size`), uniform sampling without replacement of a fixed m, a realised count "
        "used only outside the noise scale. Fix: divide by the expected sample size q·N (Opacus' "
        "`expected_batch_size`)."
    )
    TRIGGERS = ("binomial", "bernoulli", "rand", "oisson", "ossion", "per_sample")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a Bernoulli draw (or a uniform draw compared with a rate) and a noise draw."""
        poisson = bool(facts.called & (_BERNOULLI | _UNIFORM)) or any(words(c) & _POISSON_WORDS for c in facts.called)
        opacus = bool(facts.called & _OPACUS_ENTRY) or any(
            i in _OPACUS_ENTRY or {"privacy", "engine"} <= words(i) for i in facts.identifiers)
        if not poisson and opacus and any({"per", "sample"} <= words(i) for i in facts.identifiers):
            poisson = True  # (g2 h41) Opacus' Poisson batches measured by their per-sample gradients
        return poisson and (bool(facts.called & PURE_DRAWS) or any(
            words(c) & {"noise", "noisy"} for c in facts.called) or any(
            words(i) & _BATCH_WORDS for i in facts.identifiers))

    VALID = (
        # a training loss averaged over a Bernoulli-sampled batch is logged, not released with noise
        """
import numpy as np
def train(model, data, q, clip, noise_multiplier, loss_fn):
    batch = data[np.random.rand(len(data)) < q]
    total = 0.0
    for x in batch:
        out = model(x)
        total += loss_fn(out) / batch.shape[0]
    return total
""",
        # VALID twin: the accumulator's noise divided by the expected lot size q·N
        """
import numpy as np
import torch
from helpers import make_noise
def local_round(model, data, q, clip, noise_multiplier):
    picked = np.where(np.random.rand(len(data)) < q)[0]
    expected = q * len(data)
    acc = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    for n, p in model.named_parameters():
        acc[n] += make_noise(p.shape, clip, noise_multiplier) / expected
    return acc, picked
""",
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
        # twin of the optimiser normaliser: a shuffled fixed-size loader, the batch length is the fixed size
        """
import torch
from torch.utils.data import DataLoader
def train(model, optimizer, dataset, batch_size, epsilon):
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=True, drop_last=True)
    for data, target in loader:
        optimizer.minibatch_size = len(data)
        optimizer.step(model, data, target)
""",
        # twin of the divided noisy sum: Poisson batch, noisy sum over the expected size
        """
import numpy as np
import torch
def poisson_batch(X, q):
    keep = np.random.rand(len(X)) <= q
    return X[keep]
def step(model, X, q, clip, sigma):
    xb = poisson_batch(X, q)
    g = model.clipped_grad_sum(xb, clip)
    noisy = g + torch.normal(0.0, sigma * clip, g.shape)
    model.grad = noisy / (q * len(X))
""",
        # the realised batch only averages the loss before clipping (no noise in the quotient)
        """
import torch
from opacus.data_loader import DPDataLoader
def train(model, loader, criterion, sigma):
    for xb, yb in DPDataLoader.from_data_loader(loader):
        loss = criterion(model(xb), yb).sum() / len(xb)
        loss.backward()
""",
    )

    INVALID = (
        # (g2 h41) an adaptive clipping threshold updated from a noisy count over the realised Opacus batch
        """
import torch
from opacus import PrivacyEngine
class Trainer:
    def update_threshold(self, per_sample_grads, Z):
        norms_per_sample = torch.norm(per_sample_grads, p=2, dim=1)
        batch_size = len(norms_per_sample)
        above = (norms_per_sample > self.threshold * Z).sum().item() / batch_size
        noisy = above + torch.normal(0, self.count_sigma, (1,)).item() / batch_size  # <-
        return Z * torch.exp(-self.lr_z * (noisy - self.target_quantile))
""",
        # (g2 h41) a project's adaptive-clipping optimizer: the noisy unclipped count over the number of per-sample
        # clip factors it has seen (Poisson batches from Opacus)
        """
from opacus.optimizers import DPOptimizer
from opacus.optimizers.optimizer import _generate_noise
class AdaptiveClipOptimizer(DPOptimizer):
    def clip_and_accumulate(self):
        per_sample_clip_factor = self.clip_factors()
        self.sample_size += len(per_sample_clip_factor)
        self.unclipped_num += (per_sample_clip_factor == 1).sum()
    def add_noise(self):
        unclipped_num_noise = _generate_noise(std=self.unclipped_num_std, reference=self.unclipped_num)
        self.unclipped_num += unclipped_num_noise
    def update_max_grad_norm(self):
        unclipped_frac = self.unclipped_num / self.sample_size  # <-
        self.max_grad_norm *= 2.0 ** (-self.lr * (unclipped_frac - self.target))
""",
        # the noise added into a per-parameter accumulator is divided by the size of a Bernoulli-masked lot
        """
import numpy as np
import torch
from helpers import make_noise
def local_round(model, data, q, clip, noise_multiplier):
    picked = np.where(np.random.rand(len(data)) < q)[0]
    acc = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    for n, p in model.named_parameters():
        acc[n] += make_noise(p.shape, clip, noise_multiplier) / len(picked)  # <-
    return acc
""",
        # the DP optimiser's normaliser set to the size of each Poisson-sampled minibatch
        """
import torch
from loaders import make_poisson_loaders
def run(model, optimizer, data, batch_size, steps, epsilon):
    sample_batches, _ = make_poisson_loaders(batch_size=batch_size)
    for _ in range(steps):
        for xb, yb in sample_batches(data):
            optimizer.minibatch_size = len(xb)  # <-
            optimizer.step(model, xb, yb)
""",
        # noisy clipped sum divided by the realised Bernoulli batch's row count
        """
import numpy as np
import torch
def draw(X, y, q):
    u = np.random.rand(len(X))
    idx = np.arange(len(X))[u <= q]
    return X[idx], y[idx]
def step(model, X, y, q, clip, sigma):
    xb, yb = draw(X, y, q)
    g = model.clipped_grad_sum(xb, yb, clip)
    g = g + torch.normal(0.0, sigma * clip, g.shape)
    for p, gi in zip(model.parameters(), [g]):
        p.grad = gi / xb.shape[0]  # <-
""",
        # a global micro-batch count read by the optimiser, set from a Bernoulli subsample
        """
import numpy as np
microbatches = 256
def train_epoch(fit, X, n, q, noise_multiplier):
    global microbatches
    picked = [i for i in range(n) if np.random.random() < q]
    microbatches = len(picked)  # <-
    fit(X[picked], noise_multiplier=noise_multiplier, num_microbatches=microbatches)
""",
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
        if any(words(self._last(t)) & _SCALE_WORDS for t in targets):
            size = self._realised_denominator(node.value, node)
            if size:
                self._report(node, size)
                return
        fa = self.ctx.analysis
        for target in targets:
            if self._normaliser(target, node) and self._realised(node.value, node):
                self.report(node, f"`{fa.code(target).strip()}`, the size the noisy gradient sum is divided by, is "
                                  f"set to `{fa.code(node.value).strip()}`, the realised size of a Poisson-sampled "
                                  "batch: the normalisation depends on who was sampled, which the subsampled "
                                  "accountant does not cover; use the expected batch size q·N")
                return
        for sub in walk(node.value):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) and self._realised(
                    sub.right, node) and self._noisy(sub.left, node, 0):
                self.report(node, f"the noisy sum `{fa.code(sub.left).strip()}` is divided by "
                                  f"`{fa.code(sub.right).strip()}`, the realised size of a Poisson-sampled batch: "
                                  "the release depends on how many records were drawn, which the subsampled "
                                  "accountant does not cover; divide by the expected batch size q·N")
                return

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        """``acc += noise / m`` (and ``acc += noise(…) / len(sampled)``): the noise added to the running sum is
        divided by the realised size, the same dependence as in an assignment."""
        if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            return
        fa = self.ctx.analysis
        for sub in walk(node.value):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) and self._realised(
                    sub.right, node) and self._drawn_here(sub.left, node):
                self.report(node, f"the noise `{fa.code(sub.left).strip()[:60]}` is divided by "
                                  f"`{fa.code(sub.right).strip()}`, the realised size of a Poisson-sampled batch: "
                                  "the noise scale depends on how many records were drawn, which the subsampled "
                                  "accountant does not cover; divide by the expected batch size q·N")
                return

    def _drawn_here(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``expr`` is itself a draw or a noise helper's result (``make_noise(...)``, ``z`` with ``z = normal(…)``),
        not a value that merely descends from sampled data (a loss averaged over the batch)."""
        def direct(e: cst.BaseExpression) -> bool:
            return any(isinstance(c, cst.Call) and (call_name(c) in PURE_DRAWS or words(call_name(c) or "") & {
                "noise", "noisy"}) for c in walk(e))
        if direct(expr):
            return True
        return any(isinstance(n, cst.Name) and any(direct(v) for v in self._values(n, at)) for n in walk(expr))

    def _normaliser(self, target: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """``optimizer.minibatch_size`` / ``self.batch_size``, or a ``global microbatches`` the optimiser reads."""
        w = words(self._last(target))
        if not (w & _BATCH_WORDS and ("size" in w or "microbatches" in w)):
            return False
        if isinstance(target, cst.Attribute):
            return True
        fn = self.ctx.analysis.enclosing_function(at)
        return fn is not None and any(isinstance(g, cst.Global) and any(n.name.value == self._last(target)
                                                                        for n in g.names) for g in walk(fn))

    def _noisy(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """``expr`` holds a noise draw or a noisy helper's result, through local names and loop targets."""
        for sub in walk(expr):
            if isinstance(sub, cst.Call) and (call_name(sub) in PURE_DRAWS or words(call_name(sub) or "") & {
                    "noise", "noisy", "privatize", "privatise"}):
                return True
            if isinstance(sub, cst.Name) and depth < 3 and sub.value not in ("self", "cls"):
                if any(self._noisy(v, v, depth + 1) for v in self._values(sub, at) if v is not expr):
                    return True
            if isinstance(sub, cst.Attribute) and isinstance(sub.value, cst.Name) and sub.value.value == "self" \
                    and depth < 3 and self._opacus_poisson():
                # (g2 h41) ``self.count += count_noise`` in another method: the attribute holds a noisy count
                if any(self._noisy(v, v, depth + 1) for v in self._accumulated(sub)):
                    return True
        return False

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
        counted = self._counted(ref)
        if counted is not None:
            return self._bernoulli(counted, ref, 0) or self._per_sample(counted, at)
        if isinstance(ref, cst.Call):
            return False
        if isinstance(ref, cst.Name) and ref.value in ("self", "cls"):
            return False  # the attribute ``self.m`` is checked as a whole
        values = self._values(ref, at)
        if any(self._count_of_bernoulli(v, v) for v in values):
            return True
        # (g2 h41) ``batch_size = len(per_sample_norms)``; ``self.sample_size += len(per_sample_clip_factor)``
        values = values + self._accumulated(ref)
        return any(isinstance(v, (cst.Call, cst.Subscript)) and (c := self._counted(v)) is not None
                   and self._per_sample(c, v) for v in values)

    def _per_sample(self, counted: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """(g2 h41) ``counted`` holds one row per example of an Opacus batch (``per_sample_grads``,
        ``l2_norm_grad_per_sample``, ``p.grad_sample``), directly or through one local name, in a file that drives
        Opacus with its default Poisson sampling: its length is the realised batch size."""
        if not self._opacus_poisson():
            return False
        def per_example(e: cst.BaseExpression) -> bool:
            return any(isinstance(n, cst.Name) and ({"per", "sample"} <= words(n.value) or n.value == "grad_sample")
                       for n in walk(e))
        if per_example(counted):
            return True
        return isinstance(counted, cst.Name) and any(per_example(v) for v in self._values(counted, at))

    def _opacus_poisson(self) -> bool:
        """The module drives Opacus (imports it, or is handed a ``privacy_engine``) and never turns its Poisson
        sampling off; not a module inside a copy of the library (``from .optimizer import DPOptimizer``), whose
        optimizers are primitives the project may run with fixed batches."""
        source = self.ctx.source
        if "poisson_sampling=False" in source.replace(" ", "") or _LIBRARY_INTERNAL.search(source):
            return False
        return any(e in source for e in _OPACUS_ENTRY) or "privacy_engine" in source or "PrivacyEngine" in source

    def _accumulated(self, ref: cst.CSTNode) -> list[cst.BaseExpression]:
        """What ``self.x += …`` adds, anywhere in the module (an attribute summed over the per-sample steps)."""
        if not isinstance(ref, cst.Attribute):
            return []
        fa = self.ctx.analysis
        key = fa.code(ref).strip()
        return [sub.value for sub in walk(fa.index.module) if isinstance(sub, cst.AugAssign)
                and isinstance(sub.operator, cst.AddAssign) and fa.code(sub.target).strip() == key]

    @staticmethod
    def _counted(ref: cst.CSTNode) -> cst.BaseExpression | None:
        """``x`` of ``len(x)``, ``sum(x)``, ``x.shape[0]``, ``x.size(0)``."""
        if isinstance(ref, cst.Call) and call_name(ref) in _COUNTS and ref.args and isinstance(ref.func, cst.Name):
            return ref.args[0].value
        if isinstance(ref, cst.Call) and isinstance(ref.func, cst.Attribute) and ref.func.attr.value == "size" \
                and len(ref.args) == 1 and number(ref.args[0].value) == 0:
            return ref.func.value
        if isinstance(ref, cst.Subscript) and isinstance(ref.value, cst.Attribute) and \
                ref.value.attr.value == "shape" and len(ref.slice) == 1 and isinstance(ref.slice[0].slice, cst.Index) \
                and number(ref.slice[0].slice.value) == 0:
            return ref.value.value
        return None

    def _values(self, ref: cst.BaseExpression, at: cst.CSTNode) -> list[cst.BaseExpression]:
        """What ``ref`` is assigned: in the function around ``at`` for a name, in the module for ``self.x``."""
        fa = self.ctx.analysis
        key = fa.code(ref).strip()
        attribute = isinstance(ref, cst.Attribute)
        scope = fa.index.module if attribute else (fa.enclosing_function(at) or fa.index.module)
        memo: dict[tuple[str, bool, int], list[cst.BaseExpression]] = self.__dict__.setdefault("_values_memo", {})
        if (key, attribute, id(scope)) in memo:
            return memo[key, attribute, id(scope)]
        out: list[cst.BaseExpression] = []
        memo[key, attribute, id(scope)] = out
        for sub in walk(scope, into_scopes=attribute):
            if isinstance(sub, cst.Assign) and any(self._binds(t.target, key) for t in sub.targets):
                out.append(sub.value)
            elif isinstance(sub, cst.For) and not attribute and self._binds(sub.target, key):
                out.append(sub.iter)
        return out

    def _binds(self, target: cst.BaseExpression, key: str) -> bool:
        """``target`` is ``key`` or a tuple/list that unpacks into it."""
        if isinstance(target, (cst.Tuple, cst.List)):
            return any(self._binds(e.value, key) for e in target.elements)
        return self.ctx.analysis.code(target).strip() == key

    def _count_of_bernoulli(self, value: cst.BaseExpression, at: cst.CSTNode) -> bool:
        for sub in walk(value):
            if isinstance(sub, cst.Call) and sub.args and (
                    call_name(sub) in _COUNTS and self._bernoulli(sub.args[0].value, sub, 0)):
                return True
            if isinstance(sub, cst.Call) and call_name(sub) in ("sum", "count_nonzero") and not sub.args \
                    and isinstance(sub.func, cst.Attribute) and self._bernoulli(sub.func.value, sub, 0):
                return True  # ``mask.sum()``
        return False

    def _inside(self, node: cst.CSTNode, fn: cst.CSTNode) -> bool:
        return self.ctx.analysis.inside(node, fn)

    def _bernoulli(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """``expr`` holds a Bernoulli draw or what it selects: ``binomial(1, q, n)``, ``rand(n) < q``, a
        comprehension filtered by a coin, ``np.where(mask)``, ``x[mask]``, through local names."""
        memo: dict[tuple[int, int], bool] = self.__dict__.setdefault("_bernoulli_memo", {})
        if (id(expr), depth) not in memo:
            memo[id(expr), depth] = False  # a cycle through local names holds no draw
            memo[id(expr), depth] = self._bernoulli_uncached(expr, depth)
        return memo[id(expr), depth]

    def _bernoulli_uncached(self, expr: cst.BaseExpression, depth: int) -> bool:
        for sub in walk(expr):
            if isinstance(sub, cst.Call) and call_name(sub) in _BERNOULLI and (
                    call_name(sub) != "binomial" or (sub.args and number(sub.args[0].value) == 1)):
                return True
            if isinstance(sub, cst.Call) and words(call_name(sub) or "") & _POISSON_WORDS:
                return True
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Name) and depth < 3 and any(
                    self._bernoulli(f.body, f, depth + 1)
                    for f in self.ctx.analysis.functions_named(sub.func.value) if not self._inside(sub, f)):
                return True
            if isinstance(sub, cst.Comparison) and any(
                    isinstance(n, cst.Call) and call_name(n) in _UNIFORM for n in walk(sub.left)):
                return True
            if isinstance(sub, cst.Comparison) and isinstance(sub.left, cst.Name) and any(
                    isinstance(n, cst.Call) and call_name(n) in _UNIFORM
                    for v in self._values(sub.left, sub) for n in walk(v)):
                return True  # ``u = rand(n); mask = u <= q``
            if isinstance(sub, (cst.Name, cst.Attribute)) and depth < 3 and not (
                    isinstance(sub, cst.Name) and sub.value in ("self", "cls")):
                if any(self._bernoulli(v, v, depth + 1) for v in self._values(sub, sub) if v is not expr):
                    return True
        return False
