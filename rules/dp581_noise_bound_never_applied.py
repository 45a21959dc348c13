"""DP581: the bound that sizes the noise (std σ·C, scale C/ε, a sensitivity built from C) is never applied to the
values the noise is added to: nothing in the module clips, clamps, projects, checks or hands over C."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisecalib import (
    Leaves, bound_applied, clip_key, gauss_std, is_unit_draw, laplace_scale, noised_partner, product_factors, resolve,
)
from dpcheck.analysis.syntax import call_name, param_names, walk, words
from dpcheck.rule import Rule

_DRAW_NAMES = frozenset({"normal", "gauss", "normalvariate", "random_normal", "normal_", "Normal", "randn",
                         "randn_like", "standard_normal", "laplace", "Laplace"})
#: words of the value the bound is paired with in the calibration: a budget or a multiplier
_CALIBRATION_WORDS = frozenset({"eps", "epsilon", "sigma", "multiplier", "z", "noise", "budget", "rho", "mu",
                                "privacy", "delta"})


#: calls that measure the range of the values they are given
_RANGE_CALLS = frozenset({"max", "amax", "nanmax", "ptp", "abs", "absolute", "norm", "quantile", "percentile"})


def _measured_from(fn: cst.FunctionDef, aliases: list[str], partner: cst.BaseExpression) -> bool:
    """Is one of the bound's names assigned in ``fn`` from the range (``np.max``, ``.max()``, a norm) of the very
    values the noise is added to? Then the values meet the bound by construction; a bound read from the data is
    another defect (data-dependent sensitivity), not a bound that is never applied."""
    roots = {n.value for n in walk(partner) if isinstance(n, cst.Name)}
    if not roots:
        return False
    for stmt in walk(fn, into_scopes=False):
        if not isinstance(stmt, cst.Assign) or not any(
                isinstance(t.target, cst.Name) and t.target.value in aliases for t in stmt.targets):
            continue
        for c in walk(stmt.value):
            if isinstance(c, cst.Call) and call_name(c) in _RANGE_CALLS:
                measured = [a.value for a in c.args] or (
                    [c.func.value] if isinstance(c.func, cst.Attribute) else [])
                if any(isinstance(n, cst.Name) and n.value in roots for m in measured for n in walk(m)):
                    return True
    return False


class NoiseBoundNeverApplied(Rule):
    id = "DP581"
    name = "noise-bound-never-applied"
    category = "general"
    severity = "error"
    summary = ("the bound that sizes the noise (std σ·C, scale C/ε) is never applied to the values the noise is "
               "added to")
    rationale = (
        "Noise calibrated to a clip bound C — the std `noise_multiplier * C`, a Laplace scale `2 * C / (n * ε)`, "
        "a sensitivity built from C — covers one record's or one client's contribution only if that "
        "contribution has been clipped to C. When C is read by the noise formula and by nothing else — no clip "
        "call, `min`/`max`/`clamp`, comparison or assert uses it, and no other function is handed it (a clip "
        "helper, an engine's `max_grad_norm=`) — the gradients, model updates, sums or weights are released "
        "with their raw norm and the guarantee does not hold (a clipping line commented out, a clip helper never "
        "called, a `w_clip` in the NbAFL noise with no projection). The bound is recognised by its role in the "
        "noise: a std or scale (followed through locals, `self` attributes set once, config reads and the "
        "factors of a unit draw) built from a clip-bound name together with a budget or multiplier. Not "
        "reported: a module that uses the bound in any call other than printing, logging, casting or drawing, "
        "in a comparison, an assert or a conditional; a noise helper that adds the noise to a parameter it was "
        "given (the caller may have clipped); a bound measured from the noised values themselves (`np.max(x)`, a "
        "norm: they meet it by construction); draws not added to a value. Fix: clip each contribution to C "
        "before summing (`g * min(1, C / ‖g‖)`, `clip_grad_norm_` per example, `np.clip` for a range), or "
        "derive the noise from a bound the code enforces."
    )
    TRIGGERS = ("clip", "Clip", "CLIP", "norm", "bound", "contribution", "C")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.calls_any(set(_DRAW_NAMES)))

    VALID = (
    # twin: the bound is the measured range of each noised column (data-dependent, another defect), which the
    # column meets by construction
    """
import numpy as np
def perturb_columns(table, noise_multiplier, use_range=True):
    cols = np.split(table, table.shape[1], axis=1)
    for i, col in enumerate(cols):
        bound = 1.0 if not use_range else np.max(col)
        cols[i] = col + np.random.laplace(scale=bound * noise_multiplier, size=col.shape)
    return np.concatenate(cols, axis=1)
""",
    # twin 1: the update is clipped to the bound the noise is sized for
    """
import torch
class Client:
    def __init__(self, model, clip, sigma):
        self.model, self.clip, self.sigma = model, clip, sigma
    def upload(self, global_state):
        delta = {k: v - global_state[k] for k, v in self.model.state_dict().items()}
        norm = torch.sqrt(sum((d ** 2).sum() for d in delta.values()))
        factor = min(1.0, self.clip / (norm.item() + 1e-12))
        return {k: d * factor + torch.normal(0, self.sigma * self.clip, d.shape) for k, d in delta.items()}
""",
    # twin 2: numpy, np.clip-free L2 clip via a helper that receives the bound
    """
import numpy as np
from utils import clip_update
def privatize(new_w, old_w, args):
    delta = clip_update(new_w - old_w, args.clip)
    return delta + np.random.normal(0, args.clip * args.noise_multiplier, delta.shape)
""",
    # twin 3: TF, clip_by_global_norm with the bound
    """
import tensorflow as tf
class DPTrainer:
    def __init__(self, model, l2_norm_clip, noise_multiplier):
        self.model, self.l2_norm_clip, self.noise_multiplier = model, l2_norm_clip, noise_multiplier
    def step(self, x, y, loss_fn, opt):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, self.model(x))
        grads = tape.gradient(loss, self.model.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, self.l2_norm_clip)
        grads = [g + tf.random.normal(tf.shape(g), stddev=self.l2_norm_clip * self.noise_multiplier) for g in grads]
        opt.apply_gradients(zip(grads, self.model.trainable_variables))
""",
    # twin 4: Laplace output perturbation, weights projected onto the ball of the bound
    """
import numpy as np
class OutputPerturbation:
    def __init__(self, clip_bound, epsilon):
        self.clip_bound, self.epsilon = clip_bound, epsilon
    def release(self, w, n):
        norm = np.linalg.norm(w)
        if norm > self.clip_bound:
            w = w * self.clip_bound / norm
        scale = 2 * self.clip_bound / (n * self.epsilon)
        return w + np.random.laplace(0, scale, w.shape)
""",
    # twin 5: per-sample grads clipped with clip_grad_norm_ on the bound
    """
import torch
def train(model, loader, opt, max_grad_norm, noise_multiplier):
    for x, y in loader:
        opt.zero_grad()
        model.loss(x, y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        for p in model.parameters():
            p.grad += torch.normal(0, noise_multiplier * max_grad_norm, p.grad.shape)
        opt.step()
""",
    # twin 6: server aggregate of updates clipped on arrival
    """
import numpy as np
def aggregate(client_updates, clip, z):
    clipped = [u / max(1.0, np.linalg.norm(u) / clip) for u in client_updates]
    avg = np.mean(clipped, axis=0)
    avg += np.random.normal(0, z * clip / len(clipped), avg.shape)
    return avg
""",
    # twin 7: scalar sum, values clamped to the bound
    """
import random
def noisy_total(values, bound, sigma):
    total = sum(min(max(v, -bound), bound) for v in values)
    return total + random.gauss(0, sigma * bound)
""",
    # the clip factor is built from the bound and the norm by hand, then guarded with torch.min (GS-WGAN's hook)
    """
import torch
CLIP_BOUND = 1.0
def hook(module, grad_input, grad_output):
    g = grad_input[0]
    bound = CLIP_BOUND / g.shape[0]
    norms = torch.norm(g.view(g.shape[0], -1), p=2, dim=1)
    coef = bound / (norms + 1e-10)
    coef = torch.min(coef, torch.ones_like(coef))
    g = coef.unsqueeze(-1) * g
    noise = bound * noise_multiplier * torch.randn_like(g)
    return (g + noise,)
""",
    # the bound is read from the config into a local, and the local is the one clipped with
    """
import torch
def run(config, deltas, sigma_t, K):
    c_fixed = config["differential_privacy"]["max_clipping_norm"]
    clipped = [dw * min(1.0, c_fixed / (dw.norm(2).item() + 1e-8)) for dw in deltas]
    agg = torch.stack(clipped).sum(dim=0)
    agg.add_(torch.randn_like(agg) * sigma_t * c_fixed)
    return agg / K
""",
    # a pure noise helper: the caller (elsewhere) clips and passes the bound
    """
import numpy as np
def add_gaussian_noise(update, clip_norm, noise_multiplier):
    return update + np.random.normal(0, clip_norm * noise_multiplier, update.shape)
""",
    # Opacus does the clipping with the bound it is given
    """
import torch
from opacus import PrivacyEngine
def setup(model, opt, loader, args):
    engine = PrivacyEngine()
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=args.sigma, max_grad_norm=args.clip)
    print("noise std", args.sigma * args.clip)
    return model, opt, loader
""",
    # ordinary ML: annealed gradient noise with no clip bound, gradient clipping for stability
    """
import torch
def train(model, loader, opt, clip, eta=0.3, gamma=0.55):
    for t, (x, y) in enumerate(loader):
        opt.zero_grad()
        model.loss(x, y).backward()
        for p in model.parameters():
            p.grad += torch.randn_like(p.grad) * (eta / (1 + t) ** gamma) ** 0.5
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
""",
    # the bound is checked with an assert (enforced: a violating input stops the release)
    """
import numpy as np
def noisy_sum(x, clip, sigma):
    x = np.asarray(x)
    assert np.all(np.linalg.norm(x, axis=1) <= clip)
    s = x.sum(0)
    return s + np.random.normal(0, sigma * clip, s.shape)
""",
    # twin 13: pandas column clipped to the contribution bound
    """
import numpy as np
class SumQuery:
    def __init__(self, max_contribution, epsilon):
        self.max_contribution, self.epsilon = max_contribution, epsilon
    def run(self, df, col):
        return df[col].clip(0, self.max_contribution).sum() + np.random.laplace(0, self.max_contribution / self.epsilon)
""",
    )

    INVALID = (
    # the twin with a configured per-column bound that no line applies to the column
    """
import numpy as np
def perturb_columns(table, noise_multiplier, col_bound):
    cols = np.split(table, table.shape[1], axis=1)
    for i, col in enumerate(cols):
        bound = 1.0 if col_bound is None else col_bound
        cols[i] = col + np.random.laplace(scale=bound * noise_multiplier, size=col.shape)  # <-
    return np.concatenate(cols, axis=1)
""",
    # 1 torch FL client: trained weights perturbed, never clipped
    """
import torch
class Client:
    def __init__(self, model, clip, sigma):
        self.model, self.clip, self.sigma = model, clip, sigma
    def upload(self, global_state):
        delta = {k: v - global_state[k] for k, v in self.model.state_dict().items()}
        return {k: d + torch.normal(0, self.sigma * self.clip, d.shape) for k, d in delta.items()}  # <-
""",
    # 2 numpy: update noised for args.clip, clipping commented out
    """
import numpy as np
def privatize(new_w, old_w, args):
    delta = new_w - old_w
    # delta = clip_update(delta, args.clip)
    return delta + np.random.normal(0, args.clip * args.noise_multiplier, delta.shape)  # <-
""",
    # 3 TF: gradients noised for l2_norm_clip, never clipped
    """
import tensorflow as tf
class DPTrainer:
    def __init__(self, model, l2_norm_clip, noise_multiplier):
        self.model, self.l2_norm_clip, self.noise_multiplier = model, l2_norm_clip, noise_multiplier
    def step(self, x, y, loss_fn, opt):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, self.model(x))
        grads = tape.gradient(loss, self.model.trainable_variables)
        grads = [g + tf.random.normal(tf.shape(g), stddev=self.l2_norm_clip * self.noise_multiplier) for g in grads]  # <-
        opt.apply_gradients(zip(grads, self.model.trainable_variables))
""",
    # 4 Laplace output perturbation without the projection
    """
import numpy as np
class OutputPerturbation:
    def __init__(self, clip_bound, epsilon):
        self.clip_bound, self.epsilon = clip_bound, epsilon
    def release(self, w, n):
        scale = 2 * self.clip_bound / (n * self.epsilon)
        return w + np.random.laplace(0, scale, w.shape)  # <-
""",
    # 5 torch training loop: the bound only sizes the noise
    """
import torch
def train(model, loader, opt, max_grad_norm, noise_multiplier):
    for x, y in loader:
        opt.zero_grad()
        model.loss(x, y).backward()
        for p in model.parameters():
            p.grad += torch.normal(0, noise_multiplier * max_grad_norm, p.grad.shape)  # <-
        opt.step()
""",
    # 6 server aggregate of raw updates
    """
import numpy as np
def aggregate(client_updates, clip, z):
    avg = np.mean(client_updates, axis=0)
    avg += np.random.normal(0, z * clip / len(client_updates), avg.shape)  # <-
    return avg
""",
    # 7 plain python scalar sum
    """
import random
def noisy_total(values, bound, sigma):
    total = sum(values)
    return total + random.gauss(0, sigma * bound)  # <-
""",
    # 8 JAX grads through a lambda
    """
import jax
def noisy_grads(params, batch, key, loss_fn, C, sigma):
    grads = jax.grad(loss_fn)(params, batch)
    return jax.tree_util.tree_map(lambda g: g + sigma * C * jax.random.normal(key, g.shape), grads)  # <-
""",
    # 9 config dict
    """
import numpy as np
def local_round(model, data, cfg):
    w0 = model.get_weights()
    model.fit(data, epochs=cfg["local_epochs"])
    delta = [a - b for a, b in zip(model.get_weights(), w0)]
    std = cfg["noise_multiplier"] * cfg["clip_norm"]
    return [d + np.random.normal(0, std, d.shape) for d in delta]  # <-
""",
    # 10 std set once in __init__ from the bound, used in another method
    """
import numpy as np
class NbAFLClient:
    def __init__(self, w_clip, epsilon, delta, n):
        self.w_clip = w_clip
        self.noise_scale = 2 * w_clip * np.sqrt(2 * np.log(1.25 / delta)) / (n * epsilon)
    def upload(self, weights):
        return [w + np.random.normal(0, self.noise_scale, w.shape) for w in weights]  # <-
""",
    # 11 sensitivity computed from the bound in a local, then the scale
    """
import numpy as np
def release_mean(x, clip_threshold, epsilon):
    n = len(x)
    sensitivity = 2 * clip_threshold / n
    return np.mean(x, axis=0) + np.random.laplace(0, sensitivity / epsilon, x.shape[1])  # <-
""",
    # 12 argparse script with a unit draw
    """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--max-norm", type=float, default=5.0)
parser.add_argument("--sigma", type=float, default=1.0)
args = parser.parse_args()
def step(model, x, y, opt):
    opt.zero_grad()
    model.loss(x, y).backward()
    for p in model.parameters():
        p.grad = p.grad + torch.randn_like(p.grad) * args.sigma * args.max_norm  # <-
    opt.step()
""",
    # 13 pandas sum with a contribution bound that is never applied
    """
import numpy as np
class SumQuery:
    def __init__(self, max_contribution, epsilon):
        self.max_contribution, self.epsilon = max_contribution, epsilon
    def run(self, df, col):
        return df[col].sum() + np.random.laplace(0, self.max_contribution / self.epsilon)  # <-
""",
    # 14 functorch per-sample grads summed and noised
    """
import torch
from torch.func import grad, vmap
def dp_grad(params, loss_fn, xs, ys, l2_clip, noise_multiplier):
    per_sample = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, xs, ys)
    total = per_sample.sum(0)
    return (total + noise_multiplier * l2_clip * torch.randn_like(total)) / xs.shape[0]  # <-
""",
    # 15 log only: the bound is printed, never applied
    """
import numpy as np
def noisy_average(updates, clip_norm, noise_multiplier, logger):
    logger.info(f"clip={clip_norm} z={noise_multiplier}")
    s = np.sum(updates, axis=0)
    s = s + np.random.normal(0, noise_multiplier * clip_norm, s.shape)  # <-
    return s / len(updates)
""",
    )

    def leave_Module(self, original_node: cst.Module) -> None:
        fa = self.ctx.analysis
        applied: dict[str, bool] = {}
        for call in walk(original_node):
            if not isinstance(call, cst.Call) or call_name(call) not in _DRAW_NAMES:
                continue
            scale = gauss_std(call) or laplace_scale(call)
            if scale is not None:
                factors = [scale, *product_factors(call, fa.parent)]
            elif is_unit_draw(call):
                factors = product_factors(call, fa.parent)
            else:
                continue
            if not factors:
                continue
            fn, cls = fa.enclosing_function(call), fa.enclosing_class(call)
            if fn is None:
                continue
            leaves = Leaves()
            for f in factors:
                resolve(f, fn, cls, fa, leaves, transparent=True)
            bounds = sorted(k for k in leaves.keys if clip_key(k))
            if not bounds or not any(words(k) & _CALIBRATION_WORDS for k in leaves.keys if k not in bounds):
                continue
            partner = noised_partner(call, fn, fa)
            if partner is None:
                continue
            if isinstance(partner, cst.Name) and partner.value in param_names(fn) and leaves.params & set(bounds) \
                    and not any(
                    isinstance(s, (cst.Assign, cst.AugAssign)) for s in walk(fn, into_scopes=False)
                    if any(isinstance(t, cst.Name) and t.value == partner.value for t in walk(s) if
                           (isinstance(s, cst.Assign) and any(t is x.target for x in s.targets))
                           or (isinstance(s, cst.AugAssign) and t is s.target))):
                continue  # a noise helper: the caller hands over values it may have clipped
            # the bound and the names it was reached through (``c = cfg["max_clipping_norm"]``): none may be applied
            aliases = [k for k in leaves.keys if k in bounds or not words(k) & _CALIBRATION_WORDS]
            if _measured_from(fn, aliases, partner):
                continue  # ``clip = np.max(x)``: the range of the noised values, which they meet by construction
            for b in aliases:
                if b not in applied:
                    applied[b] = bound_applied(original_node, b, fa)
            if any(applied[b] for b in aliases):
                continue
            b = bounds[0]
            self.report(call, f"the noise is sized for the bound `{b}`, but nothing in this module applies `{b}` to "
                              "the values it is added to (no clip, clamp, projection, check, or call that receives "
                              f"it): a record or update larger than `{b}` moves the release by more than the noise "
                              "covers, so the claimed ε does not hold")
