"""DP580: the std handed to a Gaussian draw is the noise multiplier alone, while the values it perturbs were
clipped to a bound C (the sensitivity): the noise is σ, not σ·C."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisecalib import (
    Leaves, bound_multiplicity, clip_bounds, gauss_std, is_bound_key, is_unit_draw, key, multiplier_keys,
    product_factors, resolve,
)
from dpcheck.analysis.syntax import call_name, call_params, number, walk
from dpcheck.rule import Rule

_GUARDS = frozenset({"min", "max", "minimum", "maximum", "clamp", "clamp_", "clip", "fmin", "fmax", "clamp_max",
                     "clamp_min", "clip_by_value", "clip_by_norm", "clip_grad_norm_", "clip_by_global_norm"})
_DRAW_NAMES = frozenset({"normal", "gauss", "normalvariate", "random_normal", "normal_", "Normal", "randn",
                         "randn_like", "standard_normal"})


class NoiseMultiplierAsStd(Rule):
    id = "DP580"
    name = "noise-multiplier-as-std"
    category = "general"
    severity = "error"
    summary = ("a Gaussian draw's std is the noise multiplier alone (σ) while the values it perturbs were "
               "clipped to a bound C: the noise is σ, not σ·C")
    rationale = (
        "The Gaussian mechanism on values clipped to L2 norm (or range) C adds N(0, σ²C²): σ, the noise "
        "multiplier, is the number the accountant is run with and is dimensionless; the std is σ times the "
        "sensitivity C. A draw whose std is σ alone adds the noise of multiplier σ/C — for C = 10 ten times too "
        "little — while ε is computed for σ. The multiplier is recognised by its role: a value handed to an "
        "accountant or engine as `noise_multiplier=` (or `compute_rdp(q, σ, …)`), a value returned by a "
        "calibration (`get_noise_multiplier(...)`), or a name saying multiplier (`sigma`/`z` only in a module "
        "that runs an accountant). The std is followed through locals, `self` attributes set once, casts, "
        "config reads (`cfg[\"noise_multiplier\"]`, `args.sigma`), a unit draw's product "
        "(`torch.randn_like(g) * sigma`), and into a helper whose std parameter the caller fills with σ "
        "(reported at the call). Reported: such a std in a function (or class) that clips to a bound other "
        "than the literal 1 — `clip_grad_norm_(…, C)`, `clip_by_norm`, `g / max(1, ‖g‖/C)`, "
        "`min(1, C/‖g‖)`, `np.clip(x, -C, C)`, `max(-C, min(C, x))`. Not reported: a std with the bound, a "
        "sensitivity or any unknown call in it (`σ·C`, `sigma_for(eps, delta, C)`), a power (another rule "
        "reads variances), values normalised by C before the noise or noise scaled back by C, a clip bound of "
        "1, modules with no multiplier. Fix: draw with std `noise_multiplier * C` (divide by the batch size "
        "after), or normalise to unit norm, add N(0, σ²) and scale back by C."
    )
    TRIGGERS = ("normal", "randn", "gauss")
    #: a clip followed by noise whose std is a value the code treats as a noise multiplier is DP by itself
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.calls_any(set(_DRAW_NAMES))) and bool(facts.calls_any(set(_GUARDS)))

    VALID = (
    # twin 1: std is the multiplier times the clip bound
    """
import numpy as np
def private_sum(per_example, clip, noise_multiplier):
    norms = np.linalg.norm(per_example, axis=1, keepdims=True)
    clipped = per_example * np.minimum(1.0, clip / (norms + 1e-12))
    total = clipped.sum(axis=0)
    return total + np.random.normal(0, noise_multiplier * clip, size=total.shape)
""",
    # twin 2: class, std built in __init__ from both
    """
import torch
class DPOptimizer:
    def __init__(self, params, max_grad_norm, noise_multiplier):
        self.params = list(params)
        self.max_grad_norm = max_grad_norm
        self.noise_multiplier = noise_multiplier
        self.std = noise_multiplier * max_grad_norm
    def step(self):
        torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        for p in self.params:
            p.grad += torch.normal(0, self.std, size=p.grad.shape)
""",
    # twin 3: argparse script, unit draw times sigma times clip
    """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--clip", type=float, default=4.0)
parser.add_argument("--sigma", type=float, default=1.1)
args = parser.parse_args()
def noisy(g):
    g = g / torch.clamp(g.norm() / args.clip, min=1.0)
    return g + torch.randn_like(g) * args.sigma * args.clip
""",
    # twin 4: TF1 stddev = noise_multiplier * l2_norm_clip
    """
import tensorflow as tf
def dp_grads(grads, l2_norm_clip, noise_multiplier, batch_size):
    clipped = [tf.clip_by_norm(g, l2_norm_clip) for g in grads]
    stddev = l2_norm_clip * noise_multiplier
    return [(g + tf.random.normal(tf.shape(g), stddev=stddev)) / batch_size for g in clipped]
""",
    # twin 6: JAX, the noise is scaled back by the bound after drawing with sigma
    """
import jax
import jax.numpy as jnp
def privatize(key, g, C, sigma):
    g = g * jnp.minimum(1.0, C / (jnp.linalg.norm(g) + 1e-9))
    noise = jax.random.normal(key, g.shape) * sigma
    return g + C * noise
""",
    # twin 7: config dict, the values are normalised to unit norm, so sigma alone is right, then scaled back
    """
import numpy as np
def aggregate(updates, cfg):
    C = cfg["clip_norm"]
    unit = [u / max(1.0, np.linalg.norm(u) / C) / C for u in updates]
    s = np.sum(unit, axis=0) + np.random.normal(0, cfg["noise_multiplier"], size=unit[0].shape)
    return s * C / len(updates)
""",
    # twin 9: helper takes the std; the caller passes sigma * C
    """
import numpy as np
def gaussian_noise(x, std):
    return x + np.random.normal(0.0, std, size=x.shape)
class Server:
    def __init__(self, clip_threshold, z):
        self.clip_threshold = clip_threshold
        self.z = z
    def aggregate(self, updates):
        clipped = [u * min(1.0, self.clip_threshold / np.linalg.norm(u)) for u in updates]
        return gaussian_noise(np.sum(clipped, axis=0), self.z * self.clip_threshold) / len(updates)
""",
    # clip bound literally 1: sigma alone is sigma * C
    """
import numpy as np
def noisy_grad(g, noise_multiplier):
    g = g / max(1.0, np.linalg.norm(g) / 1.0)
    return g + np.random.normal(0, noise_multiplier, g.shape)
""",
    # ordinary ML: gradient clipping for stability, noise for augmentation with a literal std
    """
import torch
def train_step(model, opt, x, y, loss_fn, max_grad_norm):
    x = x + torch.normal(0.0, 0.1, size=x.shape)
    loss = loss_fn(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    opt.step()
""",
    # diffusion: sigma of the noise schedule, gradient clipping for stability
    """
import torch
def diffusion_loss(model, x0, sigma, opt, clip):
    noise = torch.randn_like(x0) * sigma
    loss = ((model(x0 + noise, sigma) - x0) ** 2).mean()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    opt.step()
""",
    # sigma from a calibration helper that already includes the bound
    """
import numpy as np
def gaussian_sigma(eps, delta, sensitivity):
    return sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / eps
def release(values, bound, eps, delta):
    v = np.clip(values, -bound, bound)
    sigma = gaussian_sigma(eps, delta, bound)
    return v.sum() + np.random.normal(0, sigma)
""",
    # Opacus: the library draws the noise
    """
from opacus import PrivacyEngine
def make(model, opt, loader, noise_multiplier, max_grad_norm):
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=opt, data_loader=loader,
                               noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm)
""",
    # a kernel's sigma and clipping of predictions
    """
import numpy as np
def rbf_features(X, sigma, clip):
    X = np.clip(X, -clip, clip)
    W = np.random.normal(0, 1.0 / sigma, size=(X.shape[1], 100))
    return np.cos(X @ W)
""",
    # std named as a std, derived from sens and multiplier in the caller (tf keras)
    """
import tensorflow as tf
class DPModel(tf.keras.Model):
    def __init__(self, l2_clip, noise_multiplier, **kw):
        super().__init__(**kw)
        self.l2_clip = l2_clip
        self.noise_stddev = l2_clip * noise_multiplier
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x))
        grads = tape.gradient(loss, self.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, self.l2_clip)
        grads = [g + tf.random.normal(tf.shape(g), stddev=self.noise_stddev) for g in grads]
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
""",
    # plain python: scalar clamp, std sigma * C
    """
import random
def dp_mean(xs, C, sigma):
    total = sum(max(-C, min(C, x)) for x in xs)
    return (total + random.gauss(0, sigma * C)) / len(xs)
""",
    # twin 17: the std is sigma times the bound
    """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--max_norm", type=float, default=1, help="maximum norm of the representations")
parser.add_argument("--sigma", type=float, default=1.0, help="noise multiplier")
args = parser.parse_args()
def class_sum(embed, images):
    out = embed(images).detach()
    l2 = torch.norm(out, dim=1)
    scaler = torch.min(args.max_norm * torch.ones_like(l2) / l2, torch.ones_like(l2))
    total = torch.sum(scaler.unsqueeze(1) * out, dim=0)
    return total + args.sigma * args.max_norm * torch.randn_like(total)
""",
    # automatic clipping: gradients normalised to unit norm in another method, so sigma alone is the std; the
    # clip to the bound happens in a method this one does not call
    """
import torch
class DPOptimizer(torch.optim.SGD):
    def __init__(self, params, l2_norm_clip, noise_multiplier, **kw):
        super().__init__(params, **kw)
        self.l2_norm_clip, self.noise_multiplier = l2_norm_clip, noise_multiplier
    def microbatch_step(self):
        for group in self.param_groups:
            for p, acc in zip(group["params"], group["accum_grads"]):
                acc.add_(p.grad * min(1.0, self.l2_norm_clip / (p.grad.norm() + 1e-6)))
    def microbatch_step_auto(self, total_norm):
        for group in self.param_groups:
            for p, acc in zip(group["params"], group["accum_grads"]):
                acc.add_(p.grad / (total_norm + 1e-3))
    def step_auto(self):
        for group in self.param_groups:
            for p, acc in zip(group["params"], group["accum_grads"]):
                p.grad = acc.clone() + self.noise_multiplier * torch.randn_like(acc)
        super().step()
""",
    # twin 18: std = multiplier * C
    """
import numpy as np
class GaussianUpdateDP:
    def __init__(self, noise_multiplier, l2_norm_clip, num_clients):
        self.noise_multiplier, self.l2_norm_clip, self.num_clients = noise_multiplier, l2_norm_clip, num_clients
    def __call__(self, weights):
        total = np.sqrt(sum(np.sum(w ** 2) for w in weights))
        factor = min(1.0, self.l2_norm_clip / total)
        out = []
        for w in weights:
            noise = np.random.normal(loc=0.0, scale=self.noise_multiplier * self.l2_norm_clip, size=w.shape)
            out.append(w * factor + noise / self.num_clients)
        return out
""",
    # a variance with C squared, turned into a std by a square root
    """
import torch
def noisy_sum(per_sample, clip, sigma, accountant):
    norms = per_sample.norm(dim=1, keepdim=True)
    per_sample = per_sample * torch.clamp(clip / norms, max=1.0)
    accountant.step(noise_multiplier=sigma, sample_rate=0.01)
    var = sigma ** 2 * clip ** 2
    s = per_sample.sum(0)
    return s + torch.normal(0.0, var ** 0.5, size=s.shape)
""",
    )

    INVALID = (


    # 1 numpy function
    """
import numpy as np
def private_sum(per_example, clip, noise_multiplier):
    norms = np.linalg.norm(per_example, axis=1, keepdims=True)
    clipped = per_example * np.minimum(1.0, clip / (norms + 1e-12))
    total = clipped.sum(axis=0)
    return total + np.random.normal(0, noise_multiplier, size=total.shape)  # <-
""",
    # 2 class: clip in step with attribute bound, std from attribute multiplier
    """
import torch
class DPOptimizer:
    def __init__(self, params, max_grad_norm, noise_multiplier):
        self.params = list(params)
        self.max_grad_norm = max_grad_norm
        self.noise_multiplier = noise_multiplier
    def step(self):
        torch.nn.utils.clip_grad_norm_(self.params, self.max_grad_norm)
        for p in self.params:
            p.grad += torch.normal(0, self.noise_multiplier, size=p.grad.shape)  # <-
""",
    # 3 argparse script, unit draw times sigma
    """
import argparse
import torch
from opacus.accountants import RDPAccountant
parser = argparse.ArgumentParser()
parser.add_argument("--clip", type=float, default=4.0)
parser.add_argument("--sigma", type=float, default=1.1)
args = parser.parse_args()
def noisy(g):
    g = g / torch.clamp(g.norm() / args.clip, min=1.0)
    return g + torch.randn_like(g) * args.sigma  # <-
accountant = RDPAccountant()
accountant.step(noise_multiplier=args.sigma, sample_rate=0.01)
""",
    # 4 TF1
    """
import tensorflow as tf
def dp_grads(grads, l2_norm_clip, noise_multiplier, batch_size):
    clipped = [tf.clip_by_norm(g, l2_norm_clip) for g in grads]
    stddev = noise_multiplier
    return [(g + tf.random.normal(tf.shape(g), stddev=stddev)) / batch_size for g in clipped]  # <-
""",
    # 5 TF2 Keras train_step
    """
import tensorflow as tf
class DPModel(tf.keras.Model):
    def __init__(self, l2_clip, noise_multiplier, **kw):
        super().__init__(**kw)
        self.l2_clip = l2_clip
        self.noise_multiplier = noise_multiplier
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(y, self(x))
        grads = tape.gradient(loss, self.trainable_variables)
        grads, _ = tf.clip_by_global_norm(grads, self.l2_clip)
        grads = [g + tf.random.normal(tf.shape(g), stddev=self.noise_multiplier) for g in grads]  # <-
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
""",
    # 6 JAX
    """
import jax
import jax.numpy as jnp
from dp_accounting import rdp
def privatize(key, g, C, sigma):
    g = g * jnp.minimum(1.0, C / (jnp.linalg.norm(g) + 1e-9))
    noise = jax.random.normal(key, g.shape) * sigma  # <-
    return g + noise
def epsilon(q, sigma, steps):
    return rdp.compute_rdp(q, sigma, steps, [2, 4, 8])
""",
    # 7 config dict
    """
import numpy as np
def aggregate(updates, cfg):
    C = cfg["clip_norm"]
    clipped = [u / max(1.0, np.linalg.norm(u) / C) for u in updates]
    s = np.sum(clipped, axis=0) + np.random.normal(0, cfg["noise_multiplier"], size=clipped[0].shape)  # <-
    return s / len(updates)
""",
    # 8 multiplier calibrated by a helper in one function, used in another
    """
import numpy as np
from opacus.accountants.utils import get_noise_multiplier
class DPTrainer:
    def __init__(self, target_eps, delta, sample_rate, epochs, clip):
        self.clip = clip
        self.sigma = get_noise_multiplier(target_epsilon=target_eps, target_delta=delta,
                                          sample_rate=sample_rate, epochs=epochs)
    def noisy_grad(self, per_sample):
        norms = np.linalg.norm(per_sample, axis=1)
        scale = np.minimum(1.0, self.clip / norms)[:, None]
        g = (per_sample * scale).sum(0)
        g += np.random.normal(scale=self.sigma, size=g.shape)  # <-
        return g / len(per_sample)
""",
    # 9 helper takes the std, caller passes the multiplier alone
    """
import numpy as np
def gaussian_noise(x, std):
    return x + np.random.normal(0.0, std, size=x.shape)
class Server:
    def __init__(self, clip_threshold, z):
        self.clip_threshold = clip_threshold
        self.z = z
    def aggregate(self, updates):
        clipped = [u * min(1.0, self.clip_threshold / np.linalg.norm(u)) for u in updates]
        return gaussian_noise(np.sum(clipped, axis=0), self.z) / len(updates)  # <-
    def spent(self, q, steps, delta):
        from tensorflow_privacy import compute_rdp, get_privacy_spent
        return get_privacy_spent([2, 4], compute_rdp(q, self.z, steps, [2, 4]), target_delta=delta)
""",
    # 10 plain python, scalar clamp
    """
import random
def dp_mean(xs, C, noise_multiplier):
    total = sum(max(-C, min(C, x)) for x in xs)
    return (total + random.gauss(0, noise_multiplier)) / len(xs)  # <-
""",
    # 11 pandas column clip
    """
import numpy as np
import pandas as pd
def dp_column_sum(df: pd.DataFrame, col, bound, noise_multiplier):
    clipped = df[col].clip(lower=-bound, upper=bound)
    return clipped.sum() + np.random.normal(loc=0.0, scale=noise_multiplier)  # <-
""",
    # 12 torch per-sample clamp, noise multiplier via a local std
    """
import torch
class PrivateSGD:
    def __init__(self, model, lr, clip, noise_multiplier):
        self.model, self.lr, self.clip, self.noise_multiplier = model, lr, clip, noise_multiplier
    def step(self, per_sample_grads):
        norms = per_sample_grads.flatten(1).norm(dim=1)
        factor = (self.clip / (norms + 1e-6)).clamp(max=1.0)
        g = (per_sample_grads * factor.view(-1, 1)).sum(0)
        std = self.noise_multiplier
        g = g + torch.normal(mean=0.0, std=std, size=g.shape)  # <-
        return g / per_sample_grads.shape[0]
""",
    # 13 multiplier only known by its role (handed to the accountant), named noise_level
    """
import numpy as np
from prv_accountant import Accountant
def run(per_example, clip_bound, noise_level, steps, q):
    acc = Accountant(noise_multiplier=noise_level, sampling_probability=q, delta=1e-5, max_steps=steps, eps_error=0.1)
    norms = np.linalg.norm(per_example, axis=1, keepdims=True)
    g = (per_example / np.maximum(1.0, norms / clip_bound)).sum(0)
    return g + np.random.normal(0, noise_level, g.shape), acc  # <-
""",
    # 14 multiplier inflated by the batch: std sigma / B (the mean's noise needs sigma*C/B)
    """
import torch
def dp_mean_grad(per_sample, max_grad_norm, noise_multiplier):
    per_sample = per_sample * torch.clamp(max_grad_norm / per_sample.norm(dim=1, keepdim=True), max=1.0)
    mean = per_sample.mean(0)
    return mean + torch.randn_like(mean) * noise_multiplier / per_sample.shape[0]  # <-
""",
    # 15 helper module style: noise added in another method, bound clipped in the client
    """
import numpy as np
class Client:
    def __init__(self, args):
        self.clip = args.clip
        self.noise_multiplier = args.noise_multiplier
    def local_update(self, delta):
        return delta * min(1.0, self.clip / (np.linalg.norm(delta) + 1e-12))
    def privatize(self, delta):
        clipped = self.local_update(delta)
        return clipped + np.random.normal(0, self.noise_multiplier, clipped.shape)  # <-
""",
    # 16 noise multiplier in a YAML-style attribute config
    """
import torch
def train(model, loader, opt, cfg):
    for x, y in loader:
        opt.zero_grad()
        model.loss(x, y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.dp.max_grad_norm)
        for p in model.parameters():
            p.grad.add_(torch.normal(0, cfg.dp.noise_multiplier, p.grad.shape))  # <-
        opt.step()
""",
    # 17 the multiplier declared by its argparse help text; the bound broadcast with ones_like (seen in batch 40)
    """
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--max_norm", type=float, default=1, help="maximum norm of the representations")
parser.add_argument("--sigma", type=float, default=1.0, help="noise multiplier")
args = parser.parse_args()
def class_sums(embed, images, num_classes, ipc):
    sums = []
    for c in range(num_classes):
        out = embed(images[c * ipc:(c + 1) * ipc]).detach()
        l2 = torch.norm(out, dim=1)
        scaler = torch.min(args.max_norm * torch.ones_like(l2) / l2, torch.ones_like(l2))
        total = torch.sum(scaler.unsqueeze(1) * out, dim=0)
        sums.append(total + args.sigma * torch.randn_like(total))  # <-
    return sums
""",
    # 18 the bound squared: std = multiplier * C * C on an update clipped to C
    """
import numpy as np
class GaussianUpdateDP:
    def __init__(self, noise_multiplier, l2_norm_clip, num_clients):
        self.noise_multiplier, self.l2_norm_clip, self.num_clients = noise_multiplier, l2_norm_clip, num_clients
    def __call__(self, weights):
        total = np.sqrt(sum(np.sum(w ** 2) for w in weights))
        factor = min(1.0, self.l2_norm_clip / total)
        out = []
        for w in weights:
            noise = np.random.normal(loc=0.0, scale=self.noise_multiplier * self.l2_norm_clip * self.l2_norm_clip, size=w.shape)  # <-
            out.append(w * factor + noise / self.num_clients)
        return out
""",
    # 19 the bound squared through a local and a power (torch)
    """
import torch
def noisy_sum(per_sample, clip, sigma, accountant):
    norms = per_sample.norm(dim=1, keepdim=True)
    per_sample = per_sample * torch.clamp(clip / norms, max=1.0)
    accountant.step(noise_multiplier=sigma, sample_rate=0.01)
    std = sigma * clip ** 2
    s = per_sample.sum(0)
    return s + torch.normal(0.0, std, size=s.shape)  # <-
""",
    # 20 the bound squared in an attribute set in __init__ (TF)
    """
import tensorflow as tf
class DPAggregator:
    def __init__(self, clip_norm, noise_multiplier):
        self.clip_norm = clip_norm
        self.noise_multiplier = noise_multiplier
        self.stddev = noise_multiplier * clip_norm * clip_norm
    def aggregate(self, updates):
        clipped = [tf.clip_by_global_norm(u, self.clip_norm)[0] for u in updates]
        summed = [tf.add_n(list(t)) for t in zip(*clipped)]
        return [s + tf.random.normal(tf.shape(s), stddev=self.stddev) for s in summed]  # <-
""",
    )

    def leave_Module(self, original_node: cst.Module) -> None:
        fa = self.ctx.analysis
        module = original_node
        bounds_all = clip_bounds(module)
        if not bounds_all:
            return
        self._bound_keys = {k for _, b in bounds_all if (k := key(b))}
        self._mult = multiplier_keys(module, self.ctx.source)
        if not self._mult and "multiplier" not in self.ctx.source:
            return
        self._bounds = bounds_all
        done: set[int] = set()
        for call in walk(module):
            if not isinstance(call, cst.Call) or call_name(call) not in _DRAW_NAMES:
                continue
            std = gauss_std(call)
            if std is not None:
                factors = [std, *product_factors(call, fa.parent)]
            elif is_unit_draw(call):
                factors = product_factors(call, fa.parent)
                if not factors:
                    continue
            else:
                continue
            fn = fa.enclosing_function(call)
            cls = fa.enclosing_class(call)
            leaves = Leaves()
            for f in factors:
                resolve(f, fn, cls, fa, leaves)
            formula = Leaves()
            for f in factors:
                resolve(f, fn, cls, fa, formula, transparent=True)
            if (formula.calibrated or formula.keys & self._mult) and formula.keys & self._bound_keys:
                self._squared(call, factors, fn, cls, formula, done)
            if leaves.opaque or any(is_bound_key(k, self._bound_keys) for k in leaves.keys):
                continue
            if leaves.calibrated or leaves.keys & self._mult:
                self._check_site(call, fn, cls, leaves, done)
            elif fn is not None and leaves.params and leaves.keys == leaves.params and std is not None:
                self._helper_callers(fn, leaves.params, done)

    def _squared(self, site: cst.Call, factors: list[cst.BaseExpression], fn: cst.FunctionDef | None,
                 cls: cst.ClassDef | None, leaves: Leaves, done: set[int]) -> None:
        """The clip bound is a factor of the std twice (``z * C * C``, ``sigma * C ** 2``): a variance unit."""
        fa = self.ctx.analysis
        count = sum(bound_multiplicity(f, fn, cls, fa, self._bound_keys) for f in factors)
        if count < 2:
            return
        scopes = self._scopes(fn, cls)
        bounds = [b for node, b in self._bounds if any(fa.inside(node, sc) for sc in scopes)
                  and key(b) in leaves.keys]
        if not bounds:
            return
        line = fa.line_of(site)
        if line in done:
            return
        done.add(line)
        mult = sorted(leaves.keys & self._mult) or ["the noise multiplier"]
        bound = fa.code(bounds[0]).strip()
        self.report(site, f"the Gaussian std multiplies `{mult[0]}` by the clip bound `{bound}` twice (C²): the "
                          f"sensitivity of values clipped to `{bound}` is `{bound}`, so the std is "
                          f"`{mult[0]} * {bound}`; with C² the noise is off by a factor of C (too small for C < 1)")

    def _helper_callers(self, helper: cst.FunctionDef, params: set[str], done: set[int]) -> None:
        fa = self.ctx.analysis
        name = helper.name.value
        for call in walk(self.ctx.module):
            if not isinstance(call, cst.Call) or call_name(call) != name or fa.inside(call, helper):
                continue
            names = call_params(call, helper)
            args = []
            for i, a in enumerate(call.args):
                if a.star:
                    break
                p = a.keyword.value if a.keyword is not None else (names[i] if i < len(names) else None)
                if p in params:
                    args.append(a.value)
            if not args:
                continue
            fn, cls = fa.enclosing_function(call), fa.enclosing_class(call)
            leaves = Leaves()
            for v in args:
                resolve(v, fn, cls, fa, leaves)
            if leaves.opaque or any(is_bound_key(k, self._bound_keys) for k in leaves.keys):
                continue
            if leaves.calibrated or leaves.keys & self._mult:
                self._check_site(call, fn, cls, leaves, done)

    def _check_site(self, site: cst.Call, fn: cst.FunctionDef | None, cls: cst.ClassDef | None, leaves: Leaves,
                    done: set[int]) -> None:
        fa = self.ctx.analysis
        scopes = self._scopes(fn, cls)
        bounds = [b for node, b in self._bounds if any(fa.inside(node, s) for s in scopes) and number(b) != 1.0]
        if not bounds:
            return
        if self._rescaled(scopes[0], site):
            return
        line = fa.line_of(site)
        if line in done:
            return
        done.add(line)
        mult = sorted(leaves.keys & self._mult) or ["the calibrated noise multiplier"]
        bound = fa.code(bounds[0]).strip()
        self.report(site, f"the Gaussian std here is `{mult[0]}`, the noise multiplier alone, but the values it "
                          f"perturbs were clipped to `{bound}`: their sensitivity is `{bound}`, so the std must be "
                          f"`{mult[0]} * {bound}`; as written the effective multiplier is {mult[0]}/{bound} and the "
                          "accountant's ε does not hold unless the bound is 1")

    def _scopes(self, fn: cst.FunctionDef | None, cls: cst.ClassDef | None) -> list[cst.CSTNode]:
        """Where the values noised at a site may have been clipped: the function itself and the methods of its class
        it calls on ``self`` (``clipped = self.local_update(delta)``); the module for top-level code."""
        if fn is None:
            return [self.ctx.module]
        out: list[cst.CSTNode] = [fn]
        if cls is not None:
            called = {n.func.attr.value for n in walk(fn) if isinstance(n, cst.Call)
                      and isinstance(n.func, cst.Attribute) and isinstance(n.func.value, cst.Name)
                      and n.func.value.value == "self"}
            out += [m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value in called]
        return out

    def _rescaled(self, scope: cst.CSTNode, site: cst.CSTNode) -> bool:
        """Values normalised by the bound (``g / C``) or the noise scaled back by it (``C * noise``) in ``scope``,
        outside the clip itself."""
        fa = self.ctx.analysis
        for n in walk(scope):
            if not isinstance(n, cst.BinaryOperation) or not isinstance(n.operator, (cst.Multiply, cst.Divide)):
                continue
            sides = (n.left, n.right) if isinstance(n.operator, cst.Multiply) else (n.right,)
            if not any(isinstance(s, (cst.Name, cst.Attribute, cst.Subscript)) and (k := key(s))
                       and k in self._bound_keys for s in sides):
                continue
            if isinstance(n.operator, cst.Divide):
                from dpcheck.analysis.clipping import is_norm_value
                if is_norm_value(n.left):
                    continue
            if self._in_guard(n):
                continue
            if isinstance(fa.parent(n), cst.Call) and call_name(fa.parent(n)) in _GUARDS:
                continue
            # the bound's ratio inside a guard call's receiver: ``(C / n).clamp(max=1)``
            parent = fa.parent(n)
            if isinstance(parent, cst.Attribute) and isinstance(fa.parent(parent), cst.Call):
                continue
            return True
        return False

    def _in_guard(self, node: cst.CSTNode) -> bool:
        for a in self.ctx.analysis.ancestors(node):
            if isinstance(a, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return False
            if isinstance(a, cst.Call) and call_name(a) in _GUARDS:
                return True
        return False
