"""DP508: DP-SGD that clips the batch gradient (after ``loss.backward()``) instead of each example's."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import NORM_CALLS
from dpcheck.analysis.perexample import per_example_machinery
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

_CLIPS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_by_global_norm"})
_GRADIENTS = frozenset({"backward", "compute_gradients", "gradients"})
#: element-wise clamps: a gradient clamped per coordinate is clipped too (in L-infinity, per tensor)
_CLAMPS = frozenset({"clamp", "clamp_", "clip_"})
_DRAWS = frozenset({"normal", "randn", "randn_like", "random_normal", "normal_", "laplace", "standard_normal"})
#: per-example gradient machinery: then the batch clip is not the only clip
_PER_EXAMPLE = ("grad_sample", "per_sample", "per_example", "persample", "perexample", "microbatch", "micro_batch",
                "jacobian", "vmap", "vectorized_map", "GradSampleModule", "make_private", "PrivacyEngine",
                "functorch", "pfor", "DPOptimizer", "DPKeras", "DPAdam", "DPSGD(", "dp_optimizer", "grad1",
                "autograd_hacks", "backpack", "BatchGrad")
_LOADER_WORDS = frozenset({"loader", "dataloader", "batches", "dataset", "epochs", "epoch", "steps", "iterations",
                           "iters", "iterator", "critic", "rounds", "enumerate"})
_EXAMPLE_WORDS = frozenset({"zip", "batch", "xb", "x", "examples", "example", "samples", "sample", "size", "len",
                            "bs", "micro"})


def _identifiers(text: str) -> set[str]:
    """The identifiers of a code fragment."""
    return set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text))


def _max_of_norm(expr: cst.BaseExpression) -> bool:
    """``max(1, norm(g) / C)``, ``tf.maximum(1., tf.norm(g) / C)``: the divisor of a clip to C."""
    return isinstance(expr, cst.Call) and call_name(expr) in ("max", "maximum", "fmax") and any(
        isinstance(n, cst.Call) and call_name(n) in NORM_CALLS for n in walk(expr))


class BatchClipping(Rule):
    id = "DP508"
    name = "batch-clipping"
    category = "general"
    severity = "error"
    summary = "DP-SGD clips the batch gradient after `loss.backward()` (no per-example clipping), then adds noise"
    rationale = (
        "DP-SGD bounds each record's influence by clipping every example's gradient to C before they "
        "are summed; the Gaussian noise σ·C and the accountant rest on that per-example bound. "
        "`loss.backward()` on a batch loss followed by `clip_grad_norm_(model.parameters(), C)` clips "
        "the gradient of the whole batch: one record can still move it anywhere inside the ball of "
        "radius C (sensitivity 2C, not C per record of a sum), and with a mean loss the clip does "
        "not bound a single example's share at all. The noise added afterwards does not give the "
        "ε the accountant computes. Not reported: modules with per-example machinery (Opacus "
        "`grad_sample`, `make_private`, micro-batches, `vmap`/`jacobian`), unless the function itself "
        "norm-clips `.grad` and adds noise scaled by that bound to `.grad` (a hand-written step the "
        "engine does not cover), a backward inside a loop "
        "over the examples of a batch (micro-batches of one), gradient-norm clipping with no noise "
        "after it (ordinary training), code with no DP context. "
        "Fix: compute per-example gradients (Opacus, `torch.func.vmap`, micro-batches of size 1), "
        "clip each to C, sum, add N(0, σ²C²) and divide by the batch size."
    )
    TRIGGERS = ("clip_grad_norm", "clip_by_global_norm", "norm", "clip")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a gradient clip call next to a backward/compute_gradients call and a noise draw."""
        clip = bool(facts.called & (_CLIPS | _CLAMPS | {"max", "maximum", "fmax"})) or any(
            "clip" in name.lower() for name in facts.called)
        noise = bool(facts.called & _DRAWS) or any("noise" in name.lower() or "gaussian" in name.lower()
                                                   or "laplace" in name.lower() for name in facts.called)
        return clip and (bool(facts.called & _GRADIENTS) or ".grad" in facts.source) and noise

    VALID = (
        # the whole batch is clipped to C, but the noise is scaled to 2C: two clipped batch gradients differ by <= 2C
        """
import torch
def train(model, loader, optimizer, sigma, device):
    clip_norm = 1.0
    for xb, yb in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        for p in model.parameters():
            std = sigma * 2 * clip_norm
            p.grad += torch.normal(0, std, size=p.grad.shape)
        optimizer.step()
""",
        # twins in a module with an Opacus engine: the hand-written step clips per example (grad_sample)
        """
import torch
from opacus import PrivacyEngine
def add_noise_to_gradients(model, noise_multiplier, max_grad_norm):
    norms = torch.stack([p.grad_sample.flatten(1).norm(dim=1) for p in model.parameters()]).norm(dim=0)
    scale = (max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
    for param in model.parameters():
        param.grad = torch.einsum("i,i...->...", scale, param.grad_sample)
        param.grad += torch.randn_like(param.grad) * noise_multiplier * max_grad_norm
""",
        """
import torch
from opacus import PrivacyEngine
class Client:
    def train(self, loader):
        self.model, self.opt, loader = PrivacyEngine().make_private(module=self.model, optimizer=self.opt,
                                                                    data_loader=loader, noise_multiplier=1.0,
                                                                    max_grad_norm=self.max_norm)
        for x, y in loader:
            self.opt.zero_grad()
            self.loss(self.model(x), y).backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
            self.opt.step()
""",
        """
import torch
import torch.nn as nn
from opacus.grad_sample import GradSampleModule
def local_step(model, batch, cfg):
    model.zero_grad()
    loss_fn(model(batch[0]), batch[1]).backward()
    nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
    return [p.grad.clone() for p in model.parameters()]
""",
        # per-example losses (``reduction="none"``) walked one element at a time, each backward clipped
        """
import torch
def train_epoch(model, optimizer, loader, criterion, clip_norm, noise_multiplier):
    for data, target in loader:
        optimizer.zero_grad()
        losses = criterion(model(data), target)
        summed = [torch.zeros_like(p) for p in model.parameters()]
        for element in losses:
            element.backward(retain_graph=True)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_norm)
            for s, p in zip(summed, model.parameters()):
                s += p.grad
                p.grad.zero_()
        for s, p in zip(summed, model.parameters()):
            p.grad = (s + torch.randn_like(s) * noise_multiplier * clip_norm) / len(losses)
        optimizer.step()
""",
        # per-example clipping by micro-batches of one, then one noise draw on the sum
        """
import torch
def dp_step(model, optimizer, xb, yb, max_grad_norm, noise_multiplier):
    summed = [torch.zeros_like(p) for p in model.parameters()]
    for x, y in zip(xb, yb):
        optimizer.zero_grad()
        loss_fn(model(x[None]), y[None]).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        for s, p in zip(summed, model.parameters()):
            s += p.grad
    for s, p in zip(summed, model.parameters()):
        p.grad = (s + torch.normal(0, noise_multiplier * max_grad_norm, s.shape)) / len(xb)
    optimizer.step()
""",
        # Opacus does the per-example clipping; the extra clip is harmless
        """
import torch
from opacus import PrivacyEngine
def train(model, optimizer, loader, max_grad_norm, noise_multiplier):
    model, optimizer, loader = PrivacyEngine().make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                            noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm)
    for x, y in loader:
        loss_fn(model(x), y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
""",
        # a per-sample clip helper on Opacus-style grad_sample, then noise on the sum
        """
import torch
def dp_step(model, loss, clip, sigma, epsilon):
    loss.backward()
    for p in model.parameters():
        p.grad = clip_per_example(p.grad_sample, clip).sum(0) + torch.normal(0, sigma * clip, p.grad.shape)
""",
        # ordinary gradient clipping in DP code with no noise after it
        """
import torch
def pretrain_public(model, optimizer, loader, epsilon, max_grad_norm):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
""",
        # a DP-GAN's generator step: only the DP discriminator's output on fakes reaches its loss
        """
import torch
def fit(self, loader, optimizerG, noise_multiplier, max_grad_norm):
    for x in loader:
        loss_g = -torch.mean(self.discriminator(self._generator(torch.randn(64, 128))))
        optimizerG.zero_grad()
        loss_g.backward()
        torch.nn.utils.clip_grad_norm_(self._generator.parameters(), max_grad_norm)
        optimizerG.step()
        for param in self._generator.parameters():
            param.data += torch.normal(mean=0.0, std=noise_multiplier * max_grad_norm, size=param.shape)
""",
        # gradient-noise regularisation clipped afterwards, no privacy: noise before the clip
        """
import torch
def step(model, optimizer, loader, epsilon, eta, t, max_norm):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            p.grad += torch.randn_like(p.grad) * (eta / (1 + t) ** 0.55)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
""",
        # micro-batches of one indexed by range(batch_size), then one noise draw on the sum
        """
import torch
def dp_step(model, xb, yb, max_grad_norm, noise_multiplier, batch_size):
    summed = [torch.zeros_like(p) for p in model.parameters()]
    for i in range(batch_size):
        model.zero_grad()
        loss_fn(model(xb[i:i + 1]), yb[i:i + 1]).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        for s, p in zip(summed, model.parameters()):
            s += p.grad
    for s, p in zip(summed, model.parameters()):
        p.grad = s + torch.normal(0, noise_multiplier * max_grad_norm, s.shape)
""",
        # a helper with no backward that clips the stored gradients and adds no noise to them
        """
import torch
def clip_and_perturb_inputs(model, x, max_norm, epsilon):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    return x + torch.randn_like(x) / epsilon
""",
        # a script's top-level loop with micro-batches of one: the backward runs per example
        """
import torch
for xb, yb in loader:
    acc = [torch.zeros_like(p) for p in net.parameters()]
    for x, y in zip(xb, yb):
        net.zero_grad()
        crit(net(x[None]), y[None]).backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm)
        for a, p in zip(acc, net.parameters()):
            a += p.grad
    for a, p in zip(acc, net.parameters()):
        p.grad = (a + torch.normal(0.0, sigma * max_norm, a.shape)) / len(xb)
    opt.step()
""",
        # a clip helper given the model with no noise after it (ordinary training in a DP project)
        """
def train_baseline(model, optimizer, loader, criterion, max_norm, epsilon):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        clip_gradients(model, max_norm)
        optimizer.step()
""",
        # client-level DP-FedAvg: local epochs of ordinary steps, then the model update clipped and noised
        """
def local_update(model, global_model, optimizer, loader, criterion, clip_norm, noise_multiplier):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    clip_gradients(model, global_model, clip_norm)
    add_gaussian_noise(model, noise_multiplier * clip_norm)
""",
        # the noise helper perturbs the predictions, not the clipped model's gradients
        """
def train_then_release(model, optimizer, loader, criterion, max_norm, sigma, x_test):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        clip_gradients(model, max_norm)
        optimizer.step()
    return add_gaussian_noise(model(x_test), sigma)
""",
        # (g39-2) one backward per task loss (``enumerate`` over the losses), each clipped before the next
        """
import torch
class MetaLearner:
    def dp_step(self, task_losses):
        for k, task_loss in enumerate(task_losses):
            self.optimizer.zero_grad()
            task_loss.backward(retain_graph=True)
            torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.clip)
            for name, p in self.net.named_parameters():
                self.acc[name] += p.grad
        for name, p in self.net.named_parameters():
            p.grad = (self.acc[name] + torch.randn_like(p) * self.clip * self.sigma) / len(task_losses)
        self.optimizer.step()
""",
    )

    INVALID = (
        # twin: the same batch clip with noise scaled to C only
        """
import torch
def train(model, loader, optimizer, sigma, device):
    clip_norm = 1.0
    for xb, yb in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(xb), yb).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)  # <-
        for p in model.parameters():
            std = sigma * clip_norm
            p.grad += torch.normal(0, std, size=p.grad.shape)
        optimizer.step()
""",
        # (g2 h41) twin of the single-example caller: the caller's loader holds whole batches
        """
import torch
def dp_epoch(model, optimizer, loader, clip, sigma):
    for x, y in loader:
        optimizer.zero_grad()
        model.loss(x, y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)  # <-
        for p in model.parameters():
            p.grad += torch.randn_like(p.grad) * sigma * clip
        optimizer.step()
def main(model, optimizer, data, clip, sigma, args):
    loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size, shuffle=True)
    dp_epoch(model, optimizer, loader, clip, sigma)
""",
        # a hand-written DP-SGD step in a module that also sets up an Opacus engine (B21-039)
        """
import torch
from opacus import PrivacyEngine
def add_noise_to_gradients(model, noise_multiplier, max_grad_norm):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # <-
    for param in model.parameters():
        if param.grad is not None:
            param.grad += torch.randn_like(param.grad) * noise_multiplier * max_grad_norm
""",
        """
import torch
from opacus import PrivacyEngine
class Client:
    def train(self, loader):
        for x, y in loader:
            self.opt.zero_grad()
            self.loss(self.model(x), y).backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)  # <-
            for p in self.model.parameters():
                p.grad.add_(torch.normal(0.0, self.sigma * self.max_norm, p.grad.shape))
            self.opt.step()
""",
        """
import torch
import torch.nn as nn
from opacus.grad_sample import GradSampleModule
def local_step(model, batch, cfg):
    model.zero_grad()
    loss_fn(model(batch[0]), batch[1]).backward()
    nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)  # <-
    for p in model.parameters():
        noise = torch.randn_like(p.grad)
        p.grad.add_(noise * cfg.noise_multiplier * cfg.max_grad_norm)
    return [p.grad.clone() for p in model.parameters()]
""",
        # twin: the same loop over the losses, but the backward is of their mean (one batch gradient)
        """
import torch
def train_epoch(model, optimizer, loader, criterion, clip_norm, noise_multiplier):
    for data, target in loader:
        optimizer.zero_grad()
        losses = criterion(model(data), target)
        for element in losses:
            losses.mean().backward(retain_graph=True)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_norm)  # <-
        for p in model.parameters():
            p.grad = p.grad + torch.randn_like(p.grad) * noise_multiplier * clip_norm
        optimizer.step()
""",
        # dp-synthetic-tabular-data dp_gan.py: a 'DP-SGD' helper clips the stored batch gradient, then noises it
        """
import torch
def add_dp_noise(model, max_grad_norm, noise_multiplier, batch_size):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # <-
    std = noise_multiplier * max_grad_norm / max(1, int(batch_size))
    for p in model.parameters():
        if p.grad is not None:
            p.grad.add_(torch.randn_like(p.grad) * std)
""",
        # federated_dp_project: each coordinate of the batch gradient clamped, then noised
        """
import torch
def add_dp_noise(model, clip_bound=1.0, noise_std=0.1):
    for param in model.parameters():
        if param.grad is not None:
            param.grad.data.clamp_(-clip_bound, clip_bound)  # <-
            noise = torch.normal(0, noise_std, size=param.grad.data.size())
            param.grad.data.add_(noise)
""",
        # dp_ctgan_train.py: batches sliced by range(0, n, batch_size) are not micro-batches of one
        """
import torch
def train(D, optD, X, batch_size, max_grad_norm, noise_multiplier):
    for i in range(0, X.size(0), batch_size):
        real = X[i:i + batch_size]
        optD.zero_grad()
        loss_fn(D(real)).backward()
        torch.nn.utils.clip_grad_norm_(D.parameters(), max_grad_norm)  # <-
        for p in D.parameters():
            p.grad.add_(torch.randn_like(p.grad) * noise_multiplier * max_grad_norm)
        optD.step()
""",
        # DP-SDV ctgan.py: the DP TVAE clips the batch gradient, then noises the parameters
        """
import torch
def fit(self, loader, encoder, optimizerAE, noise_multiplier, max_grad_norm):
    for id_, data in enumerate(loader):
        optimizerAE.zero_grad()
        loss = self.loss(encoder, data[0])
        loss.backward()
        if noise_multiplier is not None:
            torch.nn.utils.clip_grad_norm_(encoder.parameters(), max_grad_norm)  # <-
        optimizerAE.step()
        if noise_multiplier is not None:
            for param in encoder.parameters():
                param.data += torch.normal(mean=0.0, std=noise_multiplier * max_grad_norm, size=param.shape)
""",
        # the same with the noise on the gradients before the step
        """
import torch
def dp_train(model, optimizer, loader, epochs, clip, sigma):
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)  # <-
            for p in model.parameters():
                p.grad += torch.randn_like(p.grad) * sigma * clip / len(x)
            optimizer.step()
""",
        # DP-SDV's DP-CTGAN discriminator: the penalty and the loss backpropagated, one clip, then noise
        """
import torch
def fit(self, discriminator, optimizerD, n_critic, noise_multiplier, max_grad_norm):
    for n in range(n_critic):
        loss_d = -(torch.mean(y_real) - torch.mean(y_fake))
        optimizerD.zero_grad()
        pen.backward(retain_graph=True)
        loss_d.backward()
        if noise_multiplier is not None:
            torch.nn.utils.clip_grad_norm_(discriminator.parameters(), max_grad_norm)  # <-
        optimizerD.step()
        for param in discriminator.parameters():
            param.data += torch.normal(mean=0.0, std=noise_multiplier * max_grad_norm, size=param.shape)
""",
        # alexandrehuat dp-gan: the batch-mean loss's gradient clipped per variable by hand, then noised
        """
import tensorflow as tf
def train(self, X, optimizer, C=1, sigma=1, target_epsilon=4, target_delta=1e-05):
    D_loss = tf.reduce_mean(self.D(self.G(z)) - self.D(x), axis=0)
    D_grad_vars = optimizer.compute_gradients(D_loss, self.D.trainable_weights)
    D_grad_vars = [(tf.divide(grad, tf.maximum(tf.constant(1.), tf.divide(tf.norm(grad), tf.constant(C)))) + tf.random_normal(grad.shape, 0, sigma * C), var) for grad, var in D_grad_vars]  # <-
    return optimizer.apply_gradients(D_grad_vars)
""",
        # FuzzyFL FedAvg.py: each tensor of the accumulated batch gradient clipped by a helper, noise later
        """
import torch
def update_weights(self, criterion, optimizer):
    for e in range(self.epoch):
        for batch_x, batch_y in self.data_loader:
            loss = criterion(self.model(batch_x), batch_y) / len(self.data_loader)
            loss.backward()
        grads = dict(self.model.named_parameters())
        for name in grads:
            grads[name].grad = clip_grad(grads[name].grad, self.clip)  # <-
        optimizer.step()
    sensitivity = 2 * self.lr * self.clip / self.data_size
    new_param = self.model.state_dict()
    for name in new_param:
        new_param[name] += gaussian_noise_ls(new_param[name].shape, sensitivity, self.sigma)
""",
        # flower-dp pytorch/client.py: the batch gradient clipped and noised per tensor by one helper
        """
import torch
def fit(self, x, y, epsilon, delta):
    loss = self.criterion(self.net(x), y)
    loss.backward()
    with torch.no_grad():
        for param in self.net.parameters():
            param.grad.copy_(torch.Tensor(privacy.noise_and_clip_param(  # <-
                param.grad, l2_norm_clip=self.l2_norm_clip, sigma=self.sigma_u)))
    self.optimizer.step()
""",
        # TF: the batch loss's gradients clipped globally, then noised
        """
import tensorflow as tf
def dp_step(optimizer, loss, variables, l2_norm_clip, noise_multiplier):
    grads_and_vars = optimizer.compute_gradients(loss, variables)
    grads, _ = tf.clip_by_global_norm([g for g, v in grads_and_vars], l2_norm_clip)  # <-
    noisy = [g + tf.random.normal(tf.shape(g), stddev=noise_multiplier * l2_norm_clip) for g in grads]
    return optimizer.apply_gradients(zip(noisy, variables))
""",
        # a training script: the top-level loop clips the batch gradient and noises .grad
        """
import torch
for epoch in range(epochs):
    for xb, yb in train_loader:
        opt.zero_grad()
        crit(clf(xb), yb).backward()
        torch.nn.utils.clip_grad_norm_(clf.parameters(), C)  # <-
        for p in clf.parameters():
            p.grad += torch.normal(torch.zeros_like(p), noise_multiplier * C)
        opt.step()
""",
        # project helpers given the model: clip what backward left in .grad, then noise it
        """
def local_train(net, optimizer, loader, criterion, clip_norm, noise_multiplier):
    for x, y in loader:
        optimizer.zero_grad()
        criterion(net(x), y).backward()
        clip_grads(net, clip_norm)  # <-
        add_gaussian_noise(net, noise_multiplier * clip_norm)
        optimizer.step()
""",
        # a trainer's methods on self.model's parameters
        """
class Trainer:
    def step(self, x, y):
        self.opt.zero_grad()
        self.loss_fn(self.model(x), y).backward()
        self.clip_gradient_norms(self.model.parameters(), self.max_grad_norm)  # <-
        self.noise_gradients(self.model.parameters(), self.noise_multiplier)
        self.opt.step()
""",
        # (g39-2) twin: the task losses are summed first, so the one clip bounds the gradient of all tasks together
        """
import torch
class MetaLearner:
    def dp_step(self, task_losses):
        self.optimizer.zero_grad()
        sum(task_losses).backward()
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.clip)  # <-
        for name, p in self.net.named_parameters():
            p.grad = p.grad + torch.randn_like(p) * self.clip * self.sigma
        self.optimizer.step()
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope(node)

    def visit_Module(self, node: cst.Module) -> None:
        """A training script's top-level loop is a scope like a function's body."""
        self._scope(node)

    def _scope(self, node: cst.FunctionDef | cst.Module) -> None:
        fa = self.ctx.analysis
        # a library engine elsewhere in the module may clip per example; not a step this scope writes by hand
        if per_example_machinery(self.ctx.source, _PER_EXAMPLE) and not self._hand_written_step(node):
            return
        gradients: list[cst.Call] = []
        clips: list[cst.Call] = []
        noise: list[cst.Call] = []
        model_noise: list[cst.Call] = []
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) \
                    and _max_of_norm(sub.right):
                clips.append(sub)  # type: ignore[arg-type]
                continue
            if not isinstance(sub, cst.Call):
                continue
            name = call_name(sub)
            if name in _GRADIENTS:
                gradients.append(sub)
            elif name in _CLIPS or self._manual_clip(sub) or self._clip_helper(sub) or self._grad_clamp(sub):
                clips.append(sub)
                if self._noise_helper(sub):
                    noise.append(sub)  # ``noise_and_clip_param(p.grad, …)`` does both
            elif (name in _DRAWS or self._noise_helper(sub)) and self._on_weights(sub):
                noise.append(sub)
            elif self._noise_helper(sub) and self._model_arg(sub):
                model_noise.append(sub)  # ``add_dp_noise(model, σ, C)``: kept if a clip helper gets that model
        models = {self._model_arg(c) for c in clips if isinstance(c, cst.Call)} - {None}
        noise += [n for n in model_noise if self._model_arg(n) in models]
        if not clips or not noise:
            return
        if not gradients:
            self._helper(clips, noise)
            return
        for clip in clips:
            if self._generator_step(clip):
                continue
            line = fa.line_of(clip)
            before = [g for g in gradients if fa.line_of(g) <= line]
            if not before or any(self._per_example(g, clip) for g in before):
                continue
            if self._update_clipped(before[-1], clip, node):
                continue
            if isinstance(node, cst.FunctionDef) and self._single_example_loader(node, before[-1]):
                continue
            after = [n for n in noise if fa.line_of(n) >= line]
            if not after:
                continue
            if self._two_bound_noise(clip, after, node):
                continue
            if isinstance(node, cst.Module) and not any(
                    any(fa.inside(g, loop) for g in before) for loop in fa.enclosing_loops(clip)):
                continue  # a script's one-off backward (a demo), not a training loop over batches
            self.report(clip, f"this clips the gradient of the whole batch (computed on line {fa.line_of(before[-1])}), "
                              f"not each example's, and noise is added on line {fa.line_of(after[0])}: one record "
                              f"can move the clipped batch gradient anywhere within the bound, so the noise does not "
                              f"give the per-record guarantee DP-SGD's accountant assumes; clip per-example gradients")

    def _two_bound_noise(self, clip: cst.CSTNode, draws: list[cst.Call], scope: cst.CSTNode) -> bool:
        """(B100 Dynamic-Privacy-Budget utils.py) The noise std is k·C with a literal k ≥ 2 for the bound C of a
        ``clip_grad_norm_(params, C)``: two batch gradients of norm ≤ C differ by at most 2C, so noise scaled to
        2C covers the change of one record even though the whole batch is clipped."""
        if not isinstance(clip, cst.Call) or call_name(clip) not in _CLIPS:
            return False
        bound = next((a.value for a in clip.args if a.keyword is not None
                      and a.keyword.value in ("max_norm", "clip_norm", "max_grad_norm")), None)
        if bound is None and len(clip.args) >= 2 and clip.args[1].keyword is None:
            bound = clip.args[1].value
        bound_name = dotted(bound) if bound is not None else None
        if bound_name is None:
            return False
        exprs: list[cst.CSTNode] = [a.value for d in draws for a in d.args]
        names = {dotted(r) for e in list(exprs) for r in walk(e)} - {None}
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, cst.Assign) and any(dotted(t.target) in names for t in sub.targets):
                exprs.append(sub.value)
        def factors(n: cst.BaseExpression) -> list[cst.BaseExpression]:
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply):
                return [*factors(n.left), *factors(n.right)]
            return [n]

        for e in exprs:
            for n in walk(e):
                if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Multiply):
                    fs = factors(n)
                    if any((number(f) or 0) >= 2 for f in fs) and any(dotted(f) == bound_name for f in fs):
                        return True
        return False

    def _single_example_loader(self, fn: cst.FunctionDef, gradient: cst.Call) -> bool:
        """(g2 h41) The backward runs over a loader this function is handed, and every call of the function in the
        module hands it a loader built with one example per batch (``batch_size=1``, or ``batch_size=self.batch_size``
        in a caller that sets ``self.batch_size = 1``): each ``.grad`` then holds one example's gradient, and the
        clip is per-example (DPFedMeta's ``run_pretrain(dp=True)``)."""
        fa = self.ctx.analysis
        loops = [loop for loop in fa.enclosing_loops(gradient) if isinstance(loop, cst.For)]
        if not loops:
            return False
        iterated = loops[-1].iter
        if isinstance(iterated, cst.Call) and call_name(iterated) == "enumerate" and iterated.args:
            iterated = iterated.args[0].value
        if not isinstance(iterated, cst.Name):
            return False
        params = [p.name.value for p in fn.params.params]
        if iterated.value not in params:
            return False
        index = params.index(iterated.value) - (1 if params and params[0] in ("self", "cls") else 0)
        calls = [n for n in walk(self.ctx.module) if isinstance(n, cst.Call) and call_name(n) == fn.name.value
                 and not fa.inside(n, fn)]
        if not calls:
            return False
        for call in calls:
            keyword = next((a.value for a in call.args if a.keyword is not None
                            and a.keyword.value == iterated.value), None)
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            passed = keyword if keyword is not None else (positional[index] if 0 <= index < len(positional) else None)
            caller = fa.enclosing_function(call)
            if not isinstance(passed, cst.Name) or caller is None or not self._built_one_per_batch(passed.value, caller):
                return False
        return True

    @staticmethod
    def _built_one_per_batch(name: str, caller: cst.FunctionDef) -> bool:
        """In ``caller``, ``name`` is bound (alone or unpacked) from a call given ``batch_size=1``, or
        ``batch_size=<x>`` where every assignment of ``x`` in ``caller`` is the literal 1."""
        ones: dict[str, bool] = {}
        for sub in walk(caller, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1:
                key = dotted(sub.targets[0].target)
                if key is not None:
                    ones[key] = ones.get(key, True) and number(sub.value) == 1
        found = False
        for sub in walk(caller, into_scopes=False):
            if not (isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call)):
                continue
            names = {dotted(e.value) for t in sub.targets if isinstance(t.target, (cst.Tuple, cst.List))
                     for e in t.target.elements}
            names |= {dotted(t.target) for t in sub.targets}
            if name not in names:
                continue
            size = next((a.value for a in sub.value.args if a.keyword is not None
                         and a.keyword.value == "batch_size"), None)
            if size is None:
                return False
            if number(size) != 1 and not ones.get(dotted(size) or "", False):
                return False
            found = True
        return found

    def _hand_written_step(self, scope: cst.FunctionDef | cst.Module) -> bool:
        """A function that norm-clips the parameters' stored ``.grad`` and adds noise scaled by the same bound
        to ``.grad`` itself (``clip_grad_norm_(model.parameters(), C)`` … ``p.grad += randn_like(p.grad) * σ * C``):
        a DP-SGD step written by hand, whatever engine the module also mentions."""
        if not isinstance(scope, cst.FunctionDef):
            return False
        fa = self.ctx.analysis
        text = fa.code(scope)
        if any(marker in text for marker in _PER_EXAMPLE):
            return False
        bounds: set[str] = set()
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, cst.Call) and call_name(sub) in _CLIPS and len(sub.args) >= 2:
                first = fa.code(sub.args[0].value)
                bound = sub.args[1].value
                if (".grad" in first or ".parameters()" in first or "param" in first) and isinstance(
                        bound, (cst.Name, cst.Attribute)):
                    bounds.add(fa.code(bound).strip())
        if not bounds:
            return False
        draws = [sub for sub in walk(scope, into_scopes=False) if isinstance(sub, cst.Call) and call_name(sub) in _DRAWS]
        noise_names = {t.target.value for d in draws if isinstance(st := fa.enclosing_statement(d), cst.Assign)
                       for t in st.targets if isinstance(t.target, cst.Name)}
        for line in walk(scope, into_scopes=False):
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            text = fa.code(line)
            has_noise = any(fa.inside(d, line) for d in draws) or bool(_identifiers(text) & noise_names)
            if has_noise and ".grad" in text and any(b in text for b in bounds):
                return True
        return False

    def _helper(self, clips: list[cst.Call], noise: list[cst.Call]) -> None:
        """A function with no backward of its own that clips the model's stored ``.grad`` (what
        ``loss.backward()`` left there: the batch gradient) and then adds noise to ``.grad``."""
        fa = self.ctx.analysis
        gradient_noise = [n for n in noise if ".grad" in fa.code(fa.enclosing_statement(n))]
        for clip in clips:
            if not isinstance(clip, cst.Call) or self._generator_step(clip):
                continue
            text = fa.code(clip)
            if ".grad" not in text and ".parameters()" not in text or "grad_sample" in text:
                continue
            line = fa.line_of(clip)
            after = [n for n in gradient_noise if fa.line_of(n) >= line]
            if not after:
                continue
            self.report(clip, f"this clips the gradients stored in the parameters' `.grad`, which `backward()` on a "
                              f"batch loss fills with the whole batch's gradient, not each example's, and noise is "
                              f"added on line {fa.line_of(after[0])}: one record can move the clipped gradient "
                              f"anywhere within the bound, so the noise does not give the per-record guarantee "
                              f"DP-SGD's accountant assumes; clip per-example gradients")
            return

    def _grad_clamp(self, call: cst.Call) -> bool:
        """``p.grad.data.clamp_(-C, C)``, ``torch.clamp(p.grad, -C, C)``: a gradient clamped coordinate-wise."""
        if call_name(call) not in _CLAMPS and call_name(call) != "clip":
            return False
        fa = self.ctx.analysis
        receiver = fa.code(call.func.value) if isinstance(call.func, cst.Attribute) else ""
        first = fa.code(call.args[0].value) if call.args else ""
        return any(".grad" in t and "grad_sample" not in t for t in (receiver, first))

    def _clip_helper(self, call: cst.Call) -> bool:
        """A project helper named for clipping applied to a parameter's ``.grad`` (``clip_grad(p.grad, C)``,
        ``privacy.noise_and_clip_param(param.grad, l2_norm_clip=C)``)."""
        pieces = words(call_name(call))
        if not pieces & {"clip", "clipping", "clipped"} or call_name(call) in _CLIPS:
            return False
        if pieces & {"grad", "grads", "gradient", "gradients"} and self._model_arg(call):
            return True  # ``clip_gradients(model, C)``: the helper clips what the model's ``.grad`` holds
        return any(".grad" in self.ctx.analysis.code(a.value) and "grad_sample" not in self.ctx.analysis.code(a.value)
                   for a in call.args)

    def _update_clipped(self, gradient: cst.Call, clip: cst.CSTNode, scope: cst.CSTNode) -> bool:
        """An optimizer step comes between the backward and the clip: what is clipped is the model update of
        local training (client-level DP-FedAvg), not the gradient ``.grad`` holds."""
        fa = self.ctx.analysis
        start, end = fa.line_of(gradient), fa.line_of(clip)
        return any(isinstance(n, cst.Call) and call_name(n) == "step" and start < fa.line_of(n) < end
                   for n in walk(scope, into_scopes=False))

    def _model_arg(self, call: cst.Call) -> str | None:
        """The model a helper is given as its first argument (``model``, ``self.net``, ``net.parameters()``)."""
        args = [a.value for a in call.args if a.keyword is None]
        if not args:
            return None
        first = args[0]
        if isinstance(first, cst.Call) and call_name(first) in ("parameters", "named_parameters") \
                and isinstance(first.func, cst.Attribute):
            first = first.func.value
        if not isinstance(first, (cst.Name, cst.Attribute)):
            return None
        text = self.ctx.analysis.code(first).strip()
        return text if words(text.rsplit(".", 1)[-1]) & {"model", "net", "network", "classifier", "discriminator",
                                                          "critic", "encoder", "module", "params", "parameters"} else None

    @staticmethod
    def _noise_helper(call: cst.Call) -> bool:
        """A helper that returns noise or a noised value: ``gaussian_noise_ls(shape, s, sigma)``."""
        pieces = words(call_name(call))
        return bool(pieces & {"noise", "noised", "noisy"}) or bool(pieces & {"gaussian", "laplace"} and pieces & {
            "noise", "mechanism", "ls", "sample"})

    @staticmethod
    def _manual_clip(call: cst.Call) -> bool:
        """``tf.divide(g, tf.maximum(1., tf.norm(g) / C))``."""
        positional = [a.value for a in call.args if a.keyword is None]
        return call_name(call) in ("divide", "div", "truediv", "true_divide") and len(positional) == 2 \
            and _max_of_norm(positional[1])

    def _generator_step(self, clip: cst.Call) -> bool:
        """A GAN generator's gradient: its loss reads only the (DP) discriminator's output on fakes, so the
        clip and noise there are post-processing, not the privacy mechanism."""
        if isinstance(clip, cst.BinaryOperation):
            text = self.ctx.analysis.code(clip.left)
        elif not clip.args:
            return False
        else:
            text = self.ctx.analysis.code(clip.args[0].value)
        return bool(re.search(r"(?i)generator|\bgen\b|\bnetG\b|\bG\.|_gen\b|\bgen_", text))

    def _on_weights(self, draw: cst.Call) -> bool:
        """The draw is added to parameters or gradients (``param.data += normal(…)``, ``p.grad += …``)."""
        statement = self.ctx.analysis.enclosing_statement(draw)
        text = self.ctx.analysis.code(statement)
        return any(w in text for w in ("param", "grad", ".data", "weight"))

    @staticmethod
    def _of_element(gradient: cst.Call, element: str) -> bool:
        """``item.backward()`` / ``torch.autograd.grad(item, params)``: the gradient of the loop's element."""
        receiver = gradient.func.value if isinstance(gradient.func, cst.Attribute) else None
        if isinstance(receiver, cst.Name) and receiver.value == element:
            return True
        first = gradient.args[0].value if gradient.args and gradient.args[0].keyword is None else None
        return isinstance(first, cst.Name) and first.value == element and call_name(gradient) == "grad"

    def _per_example(self, gradient: cst.Call, clip: cst.Call) -> bool:
        """The backward runs in a loop over one batch's examples (micro-batches of one): ``for x, y in
        zip(xb, yb)``, ``for i in range(batch_size)``; not a loop over a loader, epochs or critic steps."""
        fa = self.ctx.analysis
        for loop in fa.enclosing_loops(gradient):
            if not fa.inside(clip, loop) or not isinstance(loop, cst.For):
                continue
            if isinstance(loop.iter, cst.Call) and call_name(loop.iter) == "range" and len(loop.iter.args) == 3 \
                    and words(fa.code(loop.iter.args[2].value)) & {"batch", "bs"}:
                return False  # ``range(0, n, batch_size)``: a loop over batches
            if isinstance(loop.target, cst.Name) and self._of_element(gradient, loop.target.value):
                return True  # ``for item in losses: item.backward()``: one backward per element of the losses
            if isinstance(loop.target, cst.Tuple) and isinstance(loop.iter, cst.Call) \
                    and call_name(loop.iter) == "enumerate" and len(loop.target.elements) == 2 \
                    and isinstance(loop.target.elements[1].value, cst.Name) \
                    and self._of_element(gradient, loop.target.elements[1].value.value):
                return True  # (g39-2) ``for i, item in enumerate(losses): item.backward()``: the same, counted
            text = fa.code(loop.iter)
            names = words("_".join(part for part in text.replace(".", " ").replace("(", " ").replace(")", " ")
                                   .replace(",", " ").replace("[", " ").replace("]", " ").split()))
            if names & _LOADER_WORDS:
                return False
            return bool(names & _EXAMPLE_WORDS)
        return False
