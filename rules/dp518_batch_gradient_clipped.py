"""DP518: a DP sanitizer (clip, clip-and-noise helper) applied to the gradient of a whole batch."""
from __future__ import annotations

import re
from functools import lru_cache

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import NORM_CALLS, is_clip_bound, is_norm_value
from dpcheck.analysis.perexample import per_example_machinery
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.analysis.vocabulary import DP_NAME, dp_generator_name
from dpcheck.rule import Rule

#: calls returning the gradient of the loss they are given
_GRADIENT_OF = frozenset({"gradient", "gradients", "compute_gradients", "grad", "value_and_grad"})
#: markers of per-example gradients somewhere in the module: then a batch-level clip may be deliberate
_PER_EXAMPLE = ("grad_sample", "per_sample", "per_example", "persample", "perexample", "microbatch", "micro_batch",
                "jacobian", "vmap", "vectorized_map", "map_fn", "while_loop", "GradSampleModule", "make_private",
                ".attach(", "functorch", "pfor", "DPOptimizer", "DPKeras", "grad1", "autograd_hacks", "backpack",
                "BatchGrad", "jac(", "hessian")
#: words of a helper that clips and/or noises what it is given (``sanitize``, ``grad_dp``, ``clip_and_noise``)
_SANITIZER_WORDS = frozenset({"clip", "clipping", "sanitize", "sanitizer", "privatize", "privatise", "dp"})
_CLIPS = frozenset({"clip_by_norm", "clip_grad_norm_", "clip_grad_norm", "clip_by_global_norm", "clip_by_value",
                    "clip_grad_value_"})
#: optax transformations: a chain that clips and adds noise works on the batch gradient
_OPTAX_CLIPS = frozenset({"clip_by_global_norm", "clip", "clip_by_block_rms", "adaptive_grad_clip"})
_SCALE_METHODS = frozenset({"mul_", "div_", "mul", "div", "multiply", "divide", "true_divide"})
_EXAMPLE_WORDS = frozenset({"sample", "samples", "example", "examples", "record", "records", "zip", "xi", "row", "rows"})
_BATCH_LOOP_WORDS = frozenset({"loader", "dataloader", "batches", "epoch", "epochs", "steps", "step", "rounds",
                               "iterations", "iters", "dataset", "critic"})


_TOP_DEF = re.compile(r"^def[ \t]+(\w+)[ \t]*\(", re.M)
_TOP_LEVEL = re.compile(r"^(?=[^\s#)\]}])", re.M)


def ident_code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).replace(" ", "")


@lru_cache(maxsize=16)
def _live_source(source: str) -> str:
    """``source`` without the top-level functions that nothing in the module calls or names (a per-example
    gradient helper written and then left unused does not make the training loop's clip per-example)."""
    out = source
    for match in list(_TOP_DEF.finditer(source))[::-1]:
        name = match.group(1)
        if len(re.findall(rf"\b{re.escape(name)}\b", source)) != 1 or name == "main" or name.startswith("test"):
            continue
        nxt = _TOP_LEVEL.search(source, source.index("\n", match.end()) + 1 if "\n" in source[match.end():]
                                else len(source))
        end = nxt.start() if nxt else len(source)
        out = out[:match.start()] + out[end:]
    return out


def _loop_is_per_example(loop: cst.For, code: str) -> bool:
    """``for x, y in zip(xb, yb)``, ``for i in range(batch_size)``, ``for sample in batch``."""
    text = code.replace(".", " ").replace("(", " ").replace(")", " ").replace(",", " ").replace("[", " ")
    pieces = words("_".join(text.replace("]", " ").split()))
    target = words("_".join(n.value for n in walk(loop.target) if isinstance(n, cst.Name)))
    if pieces & _BATCH_LOOP_WORDS:
        return False
    return bool((pieces | target) & _EXAMPLE_WORDS) or bool(pieces & {"batch", "bs"} and "range" in pieces) \
        or bool(target & {"x", "i"} and pieces & {"batch", "size", "len"})


class BatchGradientClipped(Rule):
    id = "DP518"
    name = "batch-gradient-clipped"
    category = "general"
    severity = "error"
    summary = "the gradient of a whole batch (`.grad`, `tape.gradient(loss)`) is clipped or handed to a DP sanitizer: no per-example bound"
    rationale = (
        "DP-SGD's noise σ·C hides one record only when each example's gradient is clipped to C "
        "before the sum. The gradient of a batch loss (`p.grad` after `loss.backward()`, "
        "`tape.gradient(loss, vars)`, `tf.gradients(loss, vars)`, `torch.autograd.grad(loss, "
        "params)`, `optimizer.compute_gradients(loss)`) already mixes all examples: clipping it (a "
        "norm clip, a hand-written `g * min(1, C / ‖g‖)`, `g.div_(norm / C)`, `g /= max(1, ‖g‖ / C)`, or `if ‖g‖ > C: g /= ‖g‖`) or passing it, tensor "
        "by tensor, to a clip-and-noise helper (`sanitizer.sanitize(g, …)`, `grad_dp(p.grad)`) bounds "
        "the batch's mean, not one record's share; scaled back by the batch size it lets one record "
        "move the sum by up to 2·B·C. The same holds for Keras optimizers built with `clipnorm=` / "
        "`clipvalue=` as the DP clip, and for TF-Privacy with one micro-batch (`num_microbatches=1`: "
        "the batch mean is clipped). Not reported: modules with per-example machinery (Opacus, "
        "`vmap`, `jacobian`, micro-batches, `map_fn`/`while_loop` over examples), a gradient "
        "taken inside a loop over the examples of a batch, a clip with no noise in the function "
        "(ordinary training), code with no DP context. Fix: compute per-example gradients, clip "
        "each, sum, add N(0, σ²C²), divide by the batch size."
    )
    TRIGGERS = ("grad", "clip")
    #: checked per finding: a function needs DP context; an optimizer or config carrying its own
    #: noise and clip settings is evidence enough, or a file named for a DP generator
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return True

    VALID = (
        # (fix46-QB twin) the per-sample helper is the one used: each example's gradient is bounded
        """
import torch
def per_sample_grads(model, xb, yb, loss_fn):
    out = []
    for x, y in zip(xb, yb):
        model.zero_grad()
        loss_fn(model(x[None]), y[None]).backward()
        out.append({n: p.grad.clone() for n, p in model.named_parameters()})
    return out

def clip_each(grads, C):
    total = torch.sqrt(sum((g ** 2).sum() for g in grads.values()))
    return {k: g * min(1.0, C / (total + 1e-12)) for k, g in grads.items()}

def dp_epoch(model, loader, loss_fn, C, sigma, lr):
    for xb, yb in loader:
        summed = None
        for grads in per_sample_grads(model, xb, yb, loss_fn):
            grads = clip_each(grads, C)
            summed = grads if summed is None else {k: summed[k] + grads[k] for k in grads}
        for n, p in model.named_parameters():
            p.data -= lr * (summed[n] + torch.randn_like(summed[n]) * sigma * C) / len(xb)
""",
        # (fix46-QB) ordinary training: the batch gradient is clipped for stability, no privacy claimed
        """
import torch
def train(model, loader, loss_fn, opt, max_norm):
    for xb, yb in loader:
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        opt.step()
""",
        # per-example gradients from a loop over the batch's examples
        """
import tensorflow as tf
def dp_grads(model, loss_fn, xb, yb, l2_clip, noise_multiplier):
    total = None
    for x, y in zip(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(y[None], model(x[None]))
        g = tape.gradient(loss, model.trainable_variables)
        g, _ = tf.clip_by_global_norm(g, l2_clip)
        total = g if total is None else [a + b for a, b in zip(total, g)]
    return [t + tf.random.normal(tf.shape(t), stddev=noise_multiplier * l2_clip) for t in total]
""",
        # ordinary training: a clipped batch gradient with no noise
        """
import torch
def train_step(model, loss, optimizer, max_norm, epsilon):
    loss.backward()
    grads = [p.grad for p in model.parameters()]
    total = torch.sqrt(sum(g.pow(2).sum() for g in grads))
    for g in grads:
        g.mul_(min(1.0, max_norm / (total + 1e-6)))
    optimizer.step()
""",
        # vmap per-example gradients
        """
import torch
from torch.func import grad, vmap
def dp_step(params, loss_fn, xb, yb, clip, sigma):
    per_ex = vmap(grad(loss_fn), in_dims=(None, 0, 0))(params, xb, yb)
    norms = per_ex.norm(dim=1, keepdim=True)
    clipped = per_ex * torch.clamp(clip / norms, max=1.0)
    return clipped.sum(0) + torch.normal(0, sigma * clip, clipped.shape[1:])
""",
        # Keras clipnorm in an ordinary (non-DP) optimizer of a DP project's baseline
        """
from tensorflow import keras
def baseline_optimizer(epsilon):
    return keras.optimizers.Adam(learning_rate=1e-3, clipnorm=1.0)
""",
        # TF-Privacy with one example per micro-batch
        """
from tensorflow_privacy import DPKerasSGDOptimizer
def make_opt(batch_size, l2_norm_clip, noise_multiplier):
    return DPKerasSGDOptimizer(l2_norm_clip=l2_norm_clip, noise_multiplier=noise_multiplier,
                               num_microbatches=batch_size, learning_rate=0.1)
""",
        # optax's DP aggregate on per-example gradients
        """
import jax
import optax
def make_tx(l2_clip, noise_multiplier, seed):
    return optax.contrib.differentially_private_aggregate(l2_clip, noise_multiplier, seed)
def per_example(loss, params, batch):
    return jax.vmap(jax.grad(loss), in_dims=(None, 0))(params, batch)
""",
        # a hand-written engine that clips .grad per example and sums into a buffer of its own
        """
import torch
class Engine:
    def clip_and_accumulate(self, model):
        total = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
        for p in model.parameters():
            p.grad.mul_(min(1.0, self.max_grad_norm / (total + 1e-6)))
            p.summed_grad += p.grad
    def add_noise(self, model):
        for p in model.parameters():
            p.grad = p.summed_grad
            p.grad += torch.normal(0.0, self.sigma * self.max_grad_norm, p.grad.shape)
""",
        # micro-batches of one: each example's .grad clipped in place and kept, the noise added to their sum
        """
import torch
class MicroBatchDP:
    def clip_example(self, model):
        total = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
        for p in model.parameters():
            p.grad.mul_(min(1.0, self.max_grad_norm / (total + 1e-6)))
        self.store.append([p.grad.clone() for p in model.parameters()])
    def release(self, model):
        for i, p in enumerate(model.parameters()):
            p.grad = sum(s[i] for s in self.store)
            p.grad += torch.normal(0.0, self.noise_multiplier * self.max_grad_norm, p.grad.shape)
""",
        # a module that clips .grad and noises only the released predictions
        """
import torch
def clip(model, max_norm):
    total = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
    for p in model.parameters():
        p.grad.mul_(min(1.0, max_norm / (total + 1e-6)))
def private_predict(model, x, sigma, epsilon):
    return model(x) + torch.normal(0.0, sigma, (len(x), 10))
""",
        # a script's one-off gradient of one example (a gradient-leakage demo), clipped and noised per tensor
        """
import torch
x = data[idx].view(1, *data[idx].size())
grads = list(g.detach() for g in torch.autograd.grad(crit(net(x), y), net.parameters()))
for i in range(len(grads)):
    grads[i] = grads[i] / torch.max(torch.norm(grads[i]) / max_grad_norm, torch.tensor(1.0))
    grads[i] += torch.normal(0.0, noise_multiplier * max_grad_norm, grads[i].size())
""",
        # a script scaling per-example gradients taken in a loop over the batch's examples
        """
import torch
for xb, yb in loader:
    total = 0
    for x, y in zip(xb, yb):
        g = torch.autograd.grad(crit(net(x[None]), y[None]), net.parameters())
        norm = torch.sqrt(sum(t.pow(2).sum() for t in g))
        total = total + torch.cat([t.flatten() for t in g]) * min(1.0, clip / norm)
    update = total + sigma * clip * torch.randn_like(total)
""",
        # each example's gradient normalised when above the bound, inside the loop over the batch's examples
        """
import torch
from scipy.stats import multivariate_normal
def noisy_sgd(w, X, Y, lr, epsilon, sigma, loss_fn):
    for xi, yi in zip(X, Y):
        loss_fn(w, xi, yi).backward()
        step = lr * w.grad.clone()
        if torch.linalg.norm(step) > 1.0:
            step /= torch.linalg.norm(step)
        w.data -= step + torch.tensor(multivariate_normal(cov=sigma).rvs(size=len(w)))
        w.grad.zero_()
""",
        # (fix47-QC) an estimation loop that clips its own batch gradient and steps, with no noise, beside a
        # DP method of the same class that noises its own .grad: the estimate is not the DP release
        """
import torch
class Server:
    def estimate_smoothness(self, net, loader, loss_fn, opt):
        norms = []
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(net(xb), yb).backward()
            for p in net.parameters():
                p.grad /= max(1, p.grad.norm(2) / self.clip)
            norms.append(sum(p.grad.norm() ** 2 for p in net.parameters()))
            opt.step()
        return max(norms)
    def private_round(self, net, examples, loss_fn, opt):
        for x, y in examples:
            opt.zero_grad()
            loss_fn(net(x[None]), y[None]).backward()
            for p in net.parameters():
                p.grad += torch.normal(0.0, self.sigma * self.clip, p.grad.shape)
            opt.step()
""",
        # the batch gradient divided by max(1, ‖g‖/C) with no noise anywhere: ordinary training with a clip
        """
def descend(w, loss, lr, clip, epsilon_tol):
    loss.backward()
    g = w.grad
    g /= max(1.0, g.norm() / clip)
    w.data -= lr * g
    return abs(loss.item()) < epsilon_tol
""",
        # unconditional normalisation of the batch gradient (normalised gradient descent), no clip guard
        """
import numpy as np
def ngd_step(model, loss, lr, sigma, epsilon):
    loss.backward()
    for p in model.parameters():
        d = p.grad
        d /= d.norm()
        p.data -= lr * d + lr * np.random.normal(0, sigma)
""",
        # (fix48-S6) functional mechanism: the noise goes into the loss weights before the gradient is taken,
        # and the value clip of that gradient is for stability, not a per-record bound
        """
import numpy as np
import tensorflow as tf
def noisy_weight(w, sensitivity, epsilon):
    return w + np.random.normal(0, sensitivity / epsilon)
def dp_generator_step(gen, opt, x, y, epsilon):
    with tf.GradientTape() as tape:
        a = noisy_weight(0.6, 1.0, epsilon)
        b = noisy_weight(0.4, 1.0, epsilon)
        loss = a * tf.reduce_mean(tf.abs(gen(x) - y)) + b * tf.reduce_mean(gen(x) ** 2)
    grads = tape.gradient(loss, gen.trainable_variables)
    grads = [tf.clip_by_value(g, -5, 5) for g in grads]
    opt.apply_gradients(zip(grads, gen.trainable_variables))
""",
        # (fix48-S6) the gradient of one record (``batch[0:1]``) clipped and noised: a per-example clip
        """
import torch
def dp_probe(model, loader, clip, sigma):
    xb, yb = next(iter(loader))
    x, y = xb[0:1].to("cpu"), yb[0:1].to("cpu")
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    clipped = clip_gradients(grads, clip)
    return [g + torch.normal(0, sigma * clip, g.shape) for g in clipped]
""",
        # (fix48-S6) ordinary ML: gradient clipping for stability with dropout-like input noise before the loss
        """
import torch
def train_step(model, opt, x, y, loss_fn):
    x = x + 0.01 * torch.randn_like(x)
    loss = loss_fn(model(x), y)
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
""",
    )

    INVALID = (
        # (fix48-S6) twin of the one-record probe: the whole batch goes into the loss
        """
import torch
def dp_probe(model, loader, clip, sigma):
    xb, yb = next(iter(loader))
    x, y = xb.to("cpu"), yb.to("cpu")
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    grads = [p.grad.clone() for p in model.parameters()]
    clipped = clip_gradients(grads, clip)  # <-
    return [g + torch.normal(0, sigma * clip, g.shape) for g in clipped]
""",
        # (fix48-S6) twin: the noise drawn before the gradient is added to the clipped batch gradient after it
        """
import numpy as np
import tensorflow as tf
def dp_generator_step(gen, opt, x, y, sigma, clip):
    noise = [np.random.normal(0, sigma * clip, v.shape) for v in gen.trainable_variables]
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(gen(x) - y))
    grads = tape.gradient(loss, gen.trainable_variables)
    grads = [tf.clip_by_norm(g, clip) for g in grads]  # <-
    opt.apply_gradients(zip([g + n for g, n in zip(grads, noise)], gen.trainable_variables))
""",
        # (fix46-QB) a per-sample helper is written but never called: the loop clips the batch's .grad
        """
import torch
def per_sample_grads(model, xb, yb, loss_fn):
    out = []
    for x, y in zip(xb, yb):
        model.zero_grad()
        loss_fn(model(x[None]), y[None]).backward()
        out.append([p.grad.clone() for p in model.parameters()])
    return out

def clip_each(grads, C):
    res = {}
    for k, g in grads.items():
        res[k] = g * min(1.0, C / (g.norm() + 1e-12))
    return res

def dp_epoch(model, loader, loss_fn, C, sigma, lr):
    for xb, yb in loader:
        model.zero_grad()
        loss_fn(model(xb), yb).backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters()}
        grads = clip_each(grads, C)  # <-
        for n, p in model.named_parameters():
            p.data -= lr * (grads[n] + torch.randn_like(grads[n]) * sigma * C / len(xb))
""",
        # torch: a hand-written global-norm clip of p.grad, then noise
        """
import torch
def add_dp_noise(model, max_norm, noise_multiplier, batch_size):
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    total = torch.sqrt(sum(g.pow(2).sum() for g in grads))
    scale = min(max_norm / (total + 1e-6), 1.0)
    for g in grads:
        g.mul_(scale)  # <-
    for g in grads:
        g.add_(torch.randn_like(g) * noise_multiplier * max_norm)
""",
        # TF2: the tape's batch gradient, tensor by tensor, into a sanitizer
        """
import tensorflow as tf
def dp_train_step(model, loss_fn, xb, yb, optimizer, sanitizer, sigma, eps_delta):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(loss_fn(yb, model(xb)))
    grads = tape.gradient(loss, model.trainable_variables)
    noisy = [sanitizer.sanitize(g, eps_delta, sigma) for g in grads]  # <-
    optimizer.apply_gradients(zip(noisy, model.trainable_variables))
""",
        # TF1 graph: tf.gradients of the batch loss, clipped per tensor, then noised
        """
import tensorflow as tf
def build(loss, emb, clip_bound, sigma):
    g_emb = tf.gradients(loss, emb)[0]
    g_emb = tf.clip_by_norm(g_emb, clip_bound)  # <-
    return g_emb + tf.random.normal(tf.shape(g_emb), stddev=sigma * clip_bound)
""",
        # torch: the batch gradient flattened, its norm divided down, noise added to the sum
        """
import torch
def local_dp_sgd(model, loader, criterion, clip, sigma):
    total = 0
    for x, y in loader:
        model.zero_grad()
        criterion(model(x), y).backward()
        flat = torch.cat([p.grad.view(-1) for p in model.parameters()])
        norm = flat.norm()
        if norm > clip:
            flat.div_(norm / clip)  # <-
        total = total + flat * len(x)
    return total + torch.normal(0, sigma * clip, total.shape)
""",
        # a Keras optimizer with a noise std whose clipping is Keras' clipnorm
        """
def make_dp_discriminator_optimizer(noise_std, clip):
    return NoisyAdam(learning_rate=2e-4, clipnorm=clip, standard_deviation=noise_std)  # <-
""",
        # TF-Privacy-style config with one micro-batch
        """
def dp_config(noise_multiplier):
    return {"diff_priv": {"enabled": True, "microbatches": 1,  # <-
                          "l2_norm_clip": 1.0, "noise_multiplier": noise_multiplier}}
""",
        # optax chain: clip and noise of the batch gradient
        """
import optax
def dp_optimizer(lr, l2_clip, noise_multiplier, seed):
    return optax.chain(optax.clip_by_global_norm(l2_clip),  # <-
                       optax.add_noise(noise_multiplier * l2_clip, 0.0, seed), optax.sgd(lr))
""",
        # JAX: jax.grad of the batch loss clipped by hand, then noised
        """
import jax
import jax.numpy as jnp
def dp_update(params, loss_fn, batch, key, l2_clip, noise_multiplier):
    grads = jax.grad(loss_fn)(params, batch)
    norm = jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree_util.tree_leaves(grads)))
    clipped = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, l2_clip / norm), grads)  # <-
    return jax.tree_util.tree_map(lambda g: g + noise_multiplier * l2_clip * jax.random.normal(key, g.shape), clipped)
""",
        # a training script: the stored .grad times a clip ratio, plus noise
        """
import torch
for batch in loader:
    model(**batch).loss.backward()
    for p in model.parameters():
        ratio = min(max_grad_norm / (torch.norm(p.grad) + 1e-6), 1.0)
        p.grad.data = p.grad.data * ratio + noise_multiplier * max_grad_norm * torch.randn_like(p.grad)  # <-
    opt.step()
""",
        # a hand-written engine: one method clips .grad, another noises it
        """
import torch
class ManualDP:
    def clip(self, model):
        sq = 0.0
        for p in model.parameters():
            sq += p.grad.norm(2).item() ** 2
        coef = self.l2_clip / (sq ** 0.5 + 1e-6)
        if coef < 1:
            for p in model.parameters():
                p.grad.mul_(coef)  # <-
    def noise(self, model):
        for p in model.parameters():
            p.grad.add_(torch.normal(0.0, self.noise_multiplier * self.l2_clip, p.grad.shape))
""",
        # the batch gradient divided by max(1, ‖g‖ / C), then noised
        """
import torch
def privatize(model, clip_norm, sigma):
    norm = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    for p in model.parameters():
        p.grad = p.grad / max(1.0, norm / clip_norm) + torch.randn_like(p.grad) * sigma * clip_norm  # <-
""",
        # the batch step lr·∇ normalised when its norm exceeds the bound, then a scipy Gaussian added
        """
import torch
from scipy.stats import multivariate_normal
def noisy_sgd(w, X, Y, lr, epsilon, sigma, loss_fn, batch):
    for _ in range(100):
        idx = torch.randint(len(X), (batch,))
        loss_fn(w, X[idx], Y[idx]).sum().backward()
        with torch.no_grad():
            step = lr * w.grad
            if torch.linalg.norm(step) > 1.0:
                step /= torch.linalg.norm(step)  # <-
            w -= step + torch.tensor(multivariate_normal(cov=sigma).rvs(size=len(w)))
            w.grad.zero_()
""",
        # the batch gradient divided in place by max(1, ‖g‖ / C), Gaussian noise σ·C after
        """
import torch
def private_update(model, loss, clip_bound, noise_multiplier, epsilon):
    loss.backward()
    for p in model.parameters():
        g = p.grad
        g /= max(1.0, g.norm(2) / clip_bound)  # <-
        g += torch.randn_like(g) * noise_multiplier * clip_bound
""",
        # TensorFlow: the tape gradient of the batch loss scaled in place by min(1, C/‖g‖), then noised
        """
import tensorflow as tf
def dp_grad(tape, loss, w, l2_clip, noise_multiplier, epsilon):
    grad = tape.gradient(loss, w)
    grad *= tf.minimum(1.0, l2_clip / tf.norm(grad))  # <-
    return grad + tf.random.normal(tf.shape(grad), stddev=l2_clip * noise_multiplier)
""",
        # (fix47-QC twin) the clip helper only clips; the step that noises the same .grad is another method
        """
import torch
class Server:
    def bound(self, net):
        for p in net.parameters():
            p.grad /= max(1, p.grad.norm(2) / self.clip)  # <-
    def private_round(self, net, loader, loss_fn, opt):
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(net(xb), yb).backward()
            self.bound(net)
            for p in net.parameters():
                p.grad += torch.normal(0.0, self.sigma * self.clip, p.grad.shape)
            opt.step()
""",
    )

    def _dp_file(self, node: cst.CSTNode) -> bool:
        fa = self.ctx.analysis
        path = self.ctx.path.replace("\\", "/")
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if stem.startswith("test_") or stem.endswith("_test") or "/tests/" in f"/{path}":
            return False  # a test pins the optimizer's arithmetic, it releases nothing
        return fa.in_dp_context(node) or bool(dp_generator_name(stem)) or bool(DP_NAME.search(stem))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope(node)

    def visit_Module(self, node: cst.Module) -> None:
        """A training script's top-level loop is a scope like a function's body."""
        self._scope(node)

    def _scope(self, node: cst.FunctionDef | cst.Module) -> None:
        if per_example_machinery(_live_source(self.ctx.source), _PER_EXAMPLE) \
                or not self.ctx.analysis.in_dp_context(node):
            return
        if not self._noises(node) and not (isinstance(node, cst.FunctionDef) and self._module_noises_grad()
                                           and not self._own_noiseless_step(node)):
            return
        if isinstance(node, cst.FunctionDef) and (self._noise_only_in_objective(node) or self._one_example_input(node)
                                                  or self._dead_method(node)):
            return
        batch = self._batch_gradients(node)
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, (cst.Call, cst.BinaryOperation, cst.AugAssign)):
                what = self._clips(sub, batch) if isinstance(sub, cst.Call) else self._scaled(sub, batch) \
                    if isinstance(sub, cst.BinaryOperation) else self._rescaled_in_place(sub, batch)
                if what and isinstance(node, cst.Module) and not self._in_training_loop(sub):
                    continue
                if what:
                    origin = self._origin(sub, batch)
                    self.report(
                        sub,
                        f"{what} the gradient of the whole batch (`{origin}`), "
                        "not each example's: one record can move the clipped batch gradient anywhere "
                        "within the bound, so the noise σ·C does not give the per-record guarantee the "
                        "accountant assumes; clip per-example gradients before summing",
                    )

    def _dead_method(self, fn: cst.FunctionDef) -> bool:
        """(B98 fairdpalashap ``Utils.clip_gradients``) A method of a module-level class whose name occurs nowhere
        in the scanned project but its own ``def`` (no call, no reference, no string names it), in a project that
        is not an installable library: nothing runs the clip, it releases nothing."""
        from dpcheck.analysis.noisedraws import never_referenced

        return never_referenced(self.ctx, fn, methods=True)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is None:
            return
        key = node.keyword.value
        if key in ("clipnorm", "clipvalue", "global_clipnorm"):
            call = self.ctx.analysis.parent(node)
            if isinstance(call, cst.Call) and self._noisy_optimizer(call) and self._dp_file(call):
                self.report(call, f"`{key}=` clips the gradient of the whole batch (Keras clips the averaged "
                                  "gradient, per tensor), not each example's: the optimizer's noise does not "
                                  "match a per-record bound; use per-example clipping (a DP optimizer with "
                                  "micro-batches of one)")
        elif key in ("num_microbatches", "microbatches") and number(node.value) == 1 and self._dp_file(node):
            self.report(node, "one micro-batch: the DP optimizer clips the gradient of the whole batch mean, so "
                              "one record can move it by 2·C while the noise and the accountant assume C per "
                              "example; use num_microbatches = batch size")

    def visit_Call(self, node: cst.Call) -> None:
        """``optax.chain(optax.clip_by_global_norm(C), optax.add_noise(…), …)``: clip and noise of the batch gradient."""
        if call_name(node) != "chain" or any(m in self.ctx.source for m in _PER_EXAMPLE):
            return
        inner = [call_name(a.value) for a in node.args if isinstance(a.value, cst.Call)]
        clip = next((n for n in inner if n in _OPTAX_CLIPS), None)
        if clip and "add_noise" in inner and self._dp_file(node):
            self.report(node, f"`{clip}` and `add_noise` in one optimizer chain act on the gradient of the whole "
                              "batch, not each example's: the noise does not match a per-record bound; use "
                              "per-example clipping (`optax.contrib.differentially_private_aggregate` on "
                              "per-example gradients from `jax.vmap(jax.grad(...))`)")

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = node.key
        if isinstance(key, cst.SimpleString) and key.evaluated_value in ("num_microbatches", "microbatches") \
                and number(node.value) == 1:
            parent = self.ctx.analysis.parent(node)
            text = self.ctx.analysis.code(parent) if parent is not None else ""
            if "clip" in text and "noise" in text:
                self.report(node, "one micro-batch: the DP optimizer clips the gradient of the whole batch mean, "
                                  "so one record can move it by 2·C while the noise and the accountant assume C "
                                  "per example; use micro-batches of one example")

    @staticmethod
    def _noisy_optimizer(call: cst.Call) -> bool:
        name = call_name(call)
        keys = {a.keyword.value for a in call.args if a.keyword is not None}
        noisy_keys = any(words(k) & {"noise", "stddev", "standard", "sigma"} for k in keys)
        return noisy_keys or bool(words(name) & {"noisy", "dp", "private"}) or name.startswith("DP")

    # ---- batch gradients inside one function -------------------------------------------------
    def _batch_gradients(self, fn: cst.FunctionDef) -> dict[str, str]:
        """Names holding (parts of) a batch gradient, mapped to the expression they come from."""
        out: dict[str, str] = {}
        for _ in range(3):
            for sub in walk(fn, into_scopes=False):
                if isinstance(sub, cst.Assign):
                    value, targets = sub.value, [t.target for t in sub.targets]
                elif isinstance(sub, cst.For):
                    value, targets = sub.iter, [sub.target]
                elif isinstance(sub, cst.CompFor):
                    value, targets = sub.iter, [sub.target]
                elif isinstance(sub, cst.Call) and call_name(sub) in ("append", "extend") and sub.args \
                        and isinstance(sub.func, cst.Attribute) and isinstance(sub.func.value, cst.Name):
                    value, targets = sub.args[0].value, [sub.func.value]
                else:
                    continue
                source = self._source(value, out)
                if source is None or self._in_example_loop(sub) or self._reduction(value):
                    continue
                for target in targets:
                    for name in walk(target):
                        if isinstance(name, cst.Name) and name.value not in out:
                            out[name.value] = source
        return out

    def _source(self, value: cst.BaseExpression, known: dict[str, str]) -> str | None:
        fa = self.ctx.analysis
        for sub in walk(value):
            if isinstance(sub, cst.Attribute) and sub.attr.value == "grad" and not self._in_example_loop(sub):
                return fa.code(sub).strip()
            if isinstance(sub, cst.Call) and call_name(sub) in _GRADIENT_OF and isinstance(sub.func, cst.Attribute) \
                    and sub.args and not self._per_example_loss(sub.args[0].value):
                return fa.code(sub).strip().split("\n")[0]
            if isinstance(sub, cst.Name) and sub.value in known:
                return known[sub.value]
        return None

    @staticmethod
    def _reduction(value: cst.BaseExpression) -> bool:
        """A norm or sum of the gradient (a scalar), not the gradient itself."""
        return any(isinstance(n, cst.Call) and (call_name(n) in NORM_CALLS or call_name(n) in ("sqrt", "sum", "reduce_sum"))
                   for n in walk(value)) and not isinstance(value, (cst.List, cst.ListComp, cst.Tuple))

    @staticmethod
    def _per_example_loss(loss: cst.BaseExpression) -> bool:
        """``loss[i]``, ``tf.gather(losses, i)``, a list of losses: already one example's."""
        return isinstance(loss, (cst.Subscript, cst.List, cst.ListComp))

    def _in_example_loop(self, node: cst.CSTNode) -> bool:
        fa = self.ctx.analysis
        return any(isinstance(loop, cst.For) and _loop_is_per_example(loop, fa.code(loop.iter))
                   for loop in fa.enclosing_loops(node))

    @staticmethod
    def _reads(node: cst.CSTNode) -> set[str]:
        return {n.value for n in walk(node) if isinstance(n, cst.Name)}

    def _noises(self, fn: cst.FunctionDef | cst.Module) -> bool:
        """The function adds noise (a draw, or a helper named for noise or sanitizing), lambdas included
        (a module's own statements only: its functions are scopes of their own)."""
        nodes = walk(fn) if isinstance(fn, cst.FunctionDef) else (
            n for top in walk(fn, into_scopes=False) for n in (walk(top) if isinstance(top, cst.Lambda) else (top,)))
        for sub in nodes:
            if isinstance(sub, cst.Call):
                name = call_name(sub)
                if name in ("normal", "randn", "randn_like", "random_normal", "laplace", "standard_normal", "normal_",
                            "multivariate_normal") \
                        or words(name) & {"noise", "gaussian", "laplace", "sanitize", "sanitizer", "privatize", "dp"}:
                    return True
        return False

    @staticmethod
    def _one_record_slice(value: cst.BaseExpression) -> bool:
        """``batch[0:1]``, ``x[i:i + 1]`` (through ``.to(device)``, ``.cuda()``): a batch of exactly one record."""
        while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                and value.func.attr.value in ("to", "cuda", "float", "double", "long", "detach", "clone"):
            value = value.func.value
        if not isinstance(value, cst.Subscript) or len(value.slice) != 1 \
                or not isinstance(value.slice[0].slice, cst.Slice):
            return False
        piece = value.slice[0].slice
        if piece.step is not None or piece.upper is None:
            return False
        lower = piece.lower
        low = 0 if lower is None else number(lower)
        if low is not None and number(piece.upper) is not None:
            return number(piece.upper) - low == 1
        upper = piece.upper
        return isinstance(upper, cst.BinaryOperation) and isinstance(upper.operator, cst.Add) \
            and number(upper.right) == 1 and lower is not None and ident_code(upper.left) == ident_code(lower)

    def _one_example_input(self, fn: cst.FunctionDef) -> bool:
        """The function's gradient is taken on one record (``x = batch[0:1]``, then the loss and ``backward``):
        a clip of it is a per-example clip, whatever the container it comes in."""
        fa = self.ctx.analysis
        grads = [fa.line_of(n) for n in walk(fn) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                 and (call_name(n) in _GRADIENT_OF or call_name(n) == "backward")]
        if not grads:
            return False
        single: set[str] = set()
        for sub in walk(fn):
            if not isinstance(sub, cst.Assign):
                continue
            for t in sub.targets:
                pairs = [(t.target, sub.value)]
                if isinstance(t.target, cst.Tuple) and isinstance(sub.value, cst.Tuple) \
                        and len(t.target.elements) == len(sub.value.elements):
                    pairs = [(a.value, b.value) for a, b in zip(t.target.elements, sub.value.elements)]
                single |= {target.value for target, value in pairs
                           if isinstance(target, cst.Name) and self._one_record_slice(value)}
        if not single:
            return False
        reads = [fa.line_of(n) for n in walk(fn) if isinstance(n, cst.Name) and n.value in single
                 and not isinstance(fa.parent(n), cst.AssignTarget)]
        return bool(reads) and min(reads) < min(grads) and not any(
            isinstance(sub, cst.For) and fa.line_of(sub) < min(grads) for sub in walk(fn, into_scopes=False))

    def _noise_only_in_objective(self, fn: cst.FunctionDef) -> bool:
        """Every noise draw of the function comes before its gradient is taken and is used up before it (the
        noised loss coefficients of a functional mechanism, ``lam = add_noise(0.5, s, eps)`` inside the tape):
        the noise perturbs the objective, and a clip of the resulting gradient is stability clipping, not the
        per-record bound of a DP-SGD step."""
        fa = self.ctx.analysis
        grads = [fa.line_of(n) for n in walk(fn) if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute)
                 and (call_name(n) in _GRADIENT_OF or call_name(n) == "backward")]
        if not grads:
            return False
        first = min(grads)
        held: set[str] = set()
        found = False
        for sub in walk(fn):
            if not isinstance(sub, cst.Call):
                continue
            name = call_name(sub)
            if not (name in ("normal", "randn", "randn_like", "random_normal", "laplace", "standard_normal", "normal_",
                             "multivariate_normal")
                    or words(name) & {"noise", "gaussian", "laplace", "sanitize", "sanitizer", "privatize", "dp"}):
                continue
            found = True
            if fa.line_of(sub) >= first:
                return False
            statement = fa.enclosing_statement(sub)
            if isinstance(statement, cst.Assign):
                held |= {n.value for t in statement.targets for n in walk(t.target) if isinstance(n, cst.Name)}
            elif not isinstance(statement, (cst.Expr, cst.Return)) or isinstance(statement, cst.Return):
                return False
        if not found:
            return False
        return not any(isinstance(n, cst.Name) and n.value in held and fa.line_of(n) > first for n in walk(fn))

    def _clips(self, call: cst.Call, batch: dict[str, str]) -> str | None:
        """What the call does to a batch gradient it reads: clip it, scale it by a clip factor, sanitize it."""
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        name = call_name(call)
        first_reads = self._reads(args[0]) if args else set()
        if name in _CLIPS and first_reads & set(batch):
            return f"`{name}` clips"
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if name in _SCALE_METHODS and args and self._clip_factor(args[0]) and (
                isinstance(receiver, cst.Name) and receiver.value in batch
                or isinstance(receiver, cst.Attribute) and self._source(receiver, batch) is not None):
            return f"`{self.ctx.analysis.code(call.func).strip()}(…)` rescales by a clip factor"
        if name in ("tree_map", "map_structure", "map") and any(self._reads(a) & set(batch) for a in args[1:]) \
                and any(isinstance(a, cst.Lambda) and self._clip_factor(a.body) and isinstance(a.body, cst.BinaryOperation)
                        and isinstance(a.body.operator, (cst.Multiply, cst.Divide)) for a in args[:1]):
            return f"`{name}` rescales by a clip factor"
        if words(name) & _SANITIZER_WORDS and name not in _CLIPS and first_reads & set(batch) \
                and not words(name) & {"norm", "value"} - {"clip"}:
            return f"`{name}` (a clip/noise helper) is given"
        return None

    @staticmethod
    def _own_noiseless_step(fn: cst.FunctionDef) -> bool:
        """The function takes the gradient itself (``loss.backward()``, ``tape.gradient``) and applies it
        (``optimizer.step()``, ``apply_gradients``) with no noise of its own: a complete step whose gradient
        never reaches the noise another function of the module adds to its own gradients (an estimation or
        non-private baseline loop beside the DP one)."""
        names = {call_name(n) for n in walk(fn) if isinstance(n, cst.Call)}
        return bool(names & ({"backward"} | _GRADIENT_OF)) and bool(names & {"step", "apply_gradients", "minimize"})

    def _module_noises_grad(self) -> bool:
        """Another function of the module adds a noise draw to the stored ``.grad`` in place
        (``p.grad.add_(noise)``, ``p.grad += torch.normal(…)``) and nothing accumulates ``.grad`` into a
        buffer of its own (micro-batches of one clipped one by one): the ``.grad`` clipped here is the one
        that gets noised."""
        cached = getattr(self, "_noised_grad", None)
        if cached is not None:
            return cached
        fa = self.ctx.analysis
        noised = accumulated = False
        for sub in walk(self.ctx.analysis.index.module):
            if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
                target, value = fa.code(sub.target), fa.code(sub.value)
                if ".grad" in target and self._noise_text(sub.value):
                    noised = True
                elif ".grad" in value and ".grad" not in target and not self._scalar_of(sub.value):
                    accumulated = True
            elif isinstance(sub, cst.Call) and call_name(sub) in ("append", "extend") and sub.args \
                    and ".grad" in fa.code(sub.args[0].value) and not self._scalar_of(sub.args[0].value):
                accumulated = True  # ``per_example.append(p.grad.clone())``: kept one by one
            elif isinstance(sub, cst.Call) and call_name(sub) in ("add_", "add") and isinstance(sub.func, cst.Attribute) \
                    and sub.args:
                receiver, arg = fa.code(sub.func.value), fa.code(sub.args[0].value)
                if ".grad" in receiver and self._noise_text(sub.args[0].value):
                    noised = True
                elif ".grad" in arg and ".grad" not in receiver and not self._scalar_of(sub.args[0].value):
                    accumulated = True
        self._noised_grad = noised and not accumulated
        return self._noised_grad

    @staticmethod
    def _scalar_of(expr: cst.BaseExpression) -> bool:
        """A norm, sum or power of the gradient (``p.grad.norm(2).item() ** 2``), not the gradient."""
        return any(isinstance(n, cst.Call) and call_name(n) in NORM_CALLS | {"sum", "item", "pow", "abs", "max", "mean"}
                   or isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Power) for n in walk(expr))

    def _noise_text(self, expr: cst.BaseExpression) -> bool:
        """A draw, or a name holding one (``noise = torch.normal(…)``)."""
        fa = self.ctx.analysis
        for sub in walk(expr):
            if isinstance(sub, cst.Call) and call_name(sub) in ("normal", "randn", "randn_like", "normal_", "laplace"):
                return True
            if isinstance(sub, cst.Name) and "noise" in sub.value.lower():
                value = fa.value_of(sub)
                if value is not None and value is not expr and self._noise_text(value):
                    return True
        return False

    def _in_training_loop(self, node: cst.CSTNode) -> bool:
        """At a script's top level, DP-SGD is a loop over batches that takes a gradient each pass; a one-off
        gradient (a gradient-leakage demo on one example) is not a training step."""
        fa = self.ctx.analysis
        return any(any(isinstance(n, cst.Call) and (call_name(n) == "backward" or call_name(n) in _GRADIENT_OF)
                       for n in walk(loop)) for loop in fa.enclosing_loops(node))

    def _origin(self, node: cst.CSTNode, batch: dict[str, str]) -> str:
        named = sorted(set(batch) & self._reads(node))
        return batch[named[0]] if named else (self._source(node, batch) or "?")

    def _scaled(self, op: cst.BinaryOperation, batch: dict[str, str]) -> str | None:
        """``g * min(1, C / ‖g‖)``, ``p.grad * clip_coef``, ``g / max(1, ‖g‖ / C)``: a batch gradient
        (a plain reference to it) times a clip ratio."""
        pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        if isinstance(op.operator, cst.Multiply):
            pairs = [(op.left, op.right), (op.right, op.left)]
        elif isinstance(op.operator, cst.Divide):
            pairs = [(op.left, op.right)]
        for grad, factor in pairs:
            if isinstance(grad, (cst.Name, cst.Attribute, cst.Subscript)) and self._source(grad, batch) is not None \
                    and not is_clip_bound(grad) and self._clip_ratio(factor):
                return f"`{self.ctx.analysis.code(op).strip()[:60]}` rescales by a clip ratio"
        return None

    def _rescaled_in_place(self, node: cst.AugAssign, batch: dict[str, str]) -> str | None:
        """``g /= max(1, ‖g‖ / C)``, ``g *= min(1, C / ‖g‖)``, and ``if ‖g‖ > C: g /= ‖g‖`` (normalised
        when above the bound): a batch gradient rescaled in place."""
        target = node.target
        if not isinstance(node.operator, (cst.DivideAssign, cst.MultiplyAssign)) \
                or not isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)) \
                or self._source(target, batch) is None or is_clip_bound(target):
            return None
        code = self.ctx.analysis.code(node).strip()[:60]
        if self._clip_ratio(node.value):
            return f"`{code}` rescales by a clip ratio"
        if isinstance(node.operator, cst.DivideAssign) and self._norm_of(node.value, target) \
                and self._guarded_by_norm(node, target):
            return f"`{code}` (normalised when its norm exceeds the bound) clips"
        return None

    def _norm_of(self, expr: cst.BaseExpression, target: cst.BaseExpression) -> bool:
        """Is ``expr`` a norm call of ``target`` (``torch.linalg.norm(g)``, ``g.norm()``)?"""
        fa = self.ctx.analysis
        text = fa.code(target).strip()
        if not isinstance(expr, cst.Call) or call_name(expr) not in NORM_CALLS:
            return False
        operands = [a.value for a in expr.args[:1]]
        if isinstance(expr.func, cst.Attribute):
            operands.append(expr.func.value)
        return any(fa.code(o).strip() == text for o in operands)

    def _guarded_by_norm(self, node: cst.CSTNode, target: cst.BaseExpression) -> bool:
        """Inside ``if ‖target‖ > bound:`` (the branch that clips)."""
        fa = self.ctx.analysis
        parent = fa.parent(node)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
            if isinstance(parent, cst.If) and isinstance(parent.test, cst.Comparison) and any(
                    isinstance(c, cst.Call) and self._norm_of(c, target) for c in walk(parent.test)):
                return True
            parent = fa.parent(parent)
        return False

    def _clip_ratio(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """A ratio of a clip bound and a norm (``min(1, C / norm)``, ``max(1, norm / C)``, ``clip / total``),
        directly or through the name it is assigned to."""
        fa = self.ctx.analysis
        for sub in walk(expr):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
                sides = (sub.left, sub.right)
                bound = any(is_clip_bound(n) for side in sides for n in walk(side)
                            if isinstance(n, (cst.Name, cst.Attribute)))
                norm = any(is_norm_value(n) or (isinstance(n, cst.Call) and call_name(n) in NORM_CALLS)
                           for side in sides for n in walk(side) if isinstance(n, (cst.Name, cst.Attribute, cst.Call)))
                if bound and norm:
                    return True
            if isinstance(sub, cst.Name) and depth < 2:
                value = fa.value_of(sub)
                if value is not None and value is not expr and self._clip_ratio(value, depth + 1):
                    return True
        return False

    def _clip_factor(self, expr: cst.BaseExpression) -> bool:
        """A factor built from a clip bound (``clip``, ``max_norm / total``, ``norm.div(C)``) or a norm."""
        fa = self.ctx.analysis
        for sub in walk(expr):
            if isinstance(sub, (cst.Name, cst.Attribute)) and is_clip_bound(sub):
                return True
            if isinstance(sub, cst.Call) and call_name(sub) in NORM_CALLS:
                return True
            if isinstance(sub, cst.Name):
                value = fa.value_of(sub)
                if value is not None and value is not expr and any(
                        isinstance(n, (cst.Name, cst.Attribute)) and is_clip_bound(n) for n in walk(value)):
                    return True
        return False
