"""DP525: each parameter tensor clipped to C on its own while the noise σ·C assumes one vector of norm C."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.clipping import GUARD_CALLS, NORM_CALLS
from dpcheck.analysis.perexample import per_example_machinery
from dpcheck.analysis.syntax import (call_name, call_params, dotted, loop_iter, loop_targets, param_names, refs,
                                     target_names, walk, words)
from dpcheck.analysis.vocabulary import NOISE_DRAWS
from dpcheck.rule import Rule

#: calls that clip their first argument to the norm bound given next
_CLIP_CALLS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_by_norm"})
_DRAWS = NOISE_DRAWS - {"sample", "exponential", "rvs", "gumbel"}
#: in-place / functional scalings of a tensor by a factor
_SCALES = frozenset({"mul_", "div_", "mul", "div", "multiply", "divide", "true_divide"})
#: words of an iterable that holds the pieces of one model / update
_TENSOR_WORDS = frozenset({"parameters", "params", "param", "state", "dict", "grads", "gradients", "grad", "weights",
                           "layers", "layer", "variables", "vars", "tensors", "groups", "update", "updates", "delta",
                           "diff", "nabla", "nabala", "model", "keys", "items", "values", "trainable"})
#: words of an iterable over records, clients or steps: a clip per item there is per-example / per-client
_ITEM_WORDS = frozenset({"client", "clients", "user", "users", "worker", "workers", "example", "examples", "sample",
                         "samples", "batch", "batches", "loader", "dataloader", "data", "dataset", "record", "records",
                         "epoch", "epochs", "round", "rounds", "steps", "microbatch", "microbatches", "x", "xs", "xb",
                         "images", "inputs", "rows", "range"})
#: a library DP engine owns the step: Opacus / TF-Privacy rebuild ``p.grad`` from clipped per-example
#: gradients, so a hand-written clip of ``p.grad`` before ``optimizer.step()`` is overwritten
_ENGINES = ("make_private", "PrivacyEngine", "GradSampleModule", "DPOptimizer", "DPKeras")
#: a bound split over the layers (C/√L, C/len(layers)) is the correct per-layer form
_SPLITTERS = frozenset({"sqrt", "len", "numel", "size"})


def _tensor_loop(loop: cst.CSTNode) -> bool:
    """``for p in model.parameters()``, ``for k in update.keys()``, ``for g in grads`` — not over examples/clients."""
    it = loop_iter(loop)
    if it is None:
        return False
    pieces: set[str] = set()
    for name in refs(it):
        pieces |= words(name)
    for sub in walk(it):
        if isinstance(sub, cst.Call):
            pieces |= words(call_name(sub))
        elif isinstance(sub, cst.SimpleString):
            pieces |= words(sub.value.strip("'\""))
    return bool(pieces & _TENSOR_WORDS) and not pieces & _ITEM_WORDS


class PerTensorClip(Rule):
    id = "DP525"
    name = "per-tensor-clip"
    category = "general"
    severity = "error"
    summary = "each parameter tensor (layer) is clipped to C separately while the noise σ·C assumes one vector of norm C"
    rationale = (
        "DP-SGD and DP-FedAvg bound one record's (or one client's) contribution by clipping the whole "
        "gradient or update, all tensors together, to L2 norm C; the Gaussian noise σ·C and the accountant "
        "rest on that bound. A loop over the model's tensors (`for p in model.parameters()`, `for k in "
        "update.keys()`, `group['params']`) that takes each tensor's own norm and scales that tensor to C "
        "(`p.grad *= min(1, C/‖p.grad‖)`, `clip_grad_norm_([p], C)`, `tf.clip_by_norm(g, C)`, a clip-and-noise "
        "helper called on each tensor with the model's bound) bounds every "
        "tensor by C, so the whole vector can reach C·√L for L tensors: the noise σ·C is √L times too small "
        "for the claimed ε. Reported: a per-tensor clip in such a loop whose bound is the same value that "
        "scales a noise draw in the function (or, for an attribute bound, in the class). Not reported: the "
        "total norm accumulated over the tensors first (the correct global clip), a bound split over the "
        "layers (C/√L, C/len(…)), per-example norms over a batch axis (`dim=`/`axis=`), loops over "
        "examples or clients, clipping with no noise scaled by the bound (ordinary training), modules "
        "where a library engine (Opacus `make_private`, `DPOptimizer`, TF-Privacy's DP Keras optimizers) "
        "owns the step and rebuilds `.grad` from clipped per-example gradients (a clip of `.grad` there). "
        "Fix: compute the norm of all tensors together and scale every tensor by min(1, C/‖g‖), or give "
        "layer l the bound C_l with Σ C_l² = C²."
    )
    TRIGGERS = ("norm", "clip")
    #: the evidence is the noise itself (a draw scaled by the clip bound, or a clip-and-noise helper);
    #: a method's DP context often sits only in its class's constructor
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A norm or clip call (the noise may come from a draw or from any helper whose result is added),
        or a clip-and-noise helper call."""
        names = {ast_call_name(c) for c in facts.calls}
        return bool(names & (NORM_CALLS | _CLIP_CALLS)) or any(
            words(n) & _HELPER_CLIP and words(n) & _HELPER_NOISE for n in names)

    VALID = (
        # (fix46-QB twin) the caller gives the clip helper a per-layer share of C (sum of squares is C^2)
        """
import math, torch
def bound_tensors(grads, C):
    out = {}
    for name, g in grads.items():
        n = torch.norm(g)
        out[name] = g * (C / n) if n > C else g
    return out

def gaussian_for(grads, sigma, C):
    return {name: torch.randn_like(g) * (sigma * C) for name, g in grads.items()}

def private_step(model, lr, sigma, C):
    grads = {n: p.grad for n, p in model.named_parameters()}
    per_layer = C / math.sqrt(len(grads))
    clipped = bound_tensors(grads, per_layer)
    noise = gaussian_for(clipped, sigma, C)
    for n, p in model.named_parameters():
        p.data -= lr * (clipped[n] + noise[n])
""",
        # (fix46-QB) ordinary ML: weight-norm projection per layer, noise only as augmentation of the inputs
        """
import torch
def project_weights(model, max_norm):
    for name, w in model.state_dict().items():
        n = torch.norm(w)
        if n > max_norm:
            w.mul_(max_norm / n)

def augment(x, std):
    return x + torch.randn_like(x) * std

def epoch(model, loader, max_norm, std):
    for xb, yb in loader:
        model.fit(augment(xb, std), yb)
        project_weights(model, max_norm)
""",
        # the global clip: the total norm over all tensors first, then every tensor scaled by one factor
        """
import torch
def private_step(model, clip, noise_multiplier, lr):
    total = torch.sqrt(sum(p.grad.norm(2) ** 2 for p in model.parameters()))
    factor = min(1.0, clip / (total + 1e-6))
    for p in model.parameters():
        p.grad.mul_(factor)
        p.grad.add_(torch.randn_like(p.grad) * noise_multiplier * clip)
""",
        # the total norm accumulated in a first loop; the per-tensor loop only applies it
        """
import torch
def sanitize(delta, bound, noise_multiplier):
    sq = 0.0
    for name in delta:
        sq += float(delta[name].norm(2)) ** 2
    scale = min(1.0, bound / (sq ** 0.5))
    for name in delta:
        delta[name] = delta[name] * scale + torch.normal(0, noise_multiplier * bound, delta[name].shape)
    return delta
""",
        # per-layer bounds split from C (C/√L): each layer gets C_l with Σ C_l² = C²
        """
import math, torch
def layerwise(params, C, noise_mult):
    per_layer = C / math.sqrt(len(params))
    for p in params:
        p.grad *= min(1, per_layer / p.grad.norm())
    for p in params:
        p.grad += torch.randn_like(p.grad) * noise_mult * C
""",
        # (fix47-QC) the bound divided by a layer count kept in a name: C_l = C / L, so Σ C_l² ≤ C²
        """
import torch
class Client:
    def local_round(self, net, loader, loss_fn, opt):
        n_layers = len(list(net.parameters()))
        C_l = self.clip / n_layers
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(net(xb), yb).backward()
            for p in net.parameters():
                p.grad /= max(1, p.grad.norm(2) / C_l)
                p.grad += torch.normal(0.0, self.sigma * self.clip, p.grad.shape)
            opt.step()
""",
        # per-tensor gradient-norm clipping for stability, no noise (ordinary training)
        """
import torch
def train_step(model, loss, opt, max_norm, epsilon):
    loss.backward()
    for p in model.parameters():
        torch.nn.utils.clip_grad_norm_([p], max_norm)
    opt.step()
    noise = torch.randn(3) * epsilon
""",
        # the model and optimizer are handed to Opacus: its DPOptimizer rebuilds p.grad from clipped
        # per-example gradients at step(), so the per-tensor clip before it is overwritten
        """
import torch
from opacus import PrivacyEngine
class Runner:
    def setup(self, model, opt, loader):
        self.model, self.opt, self.loader = PrivacyEngine().make_private(
            module=model, optimizer=opt, data_loader=loader, noise_multiplier=self.noise_multiplier,
            max_grad_norm=self.max_norm)
    def step(self):
        for w in self.model.parameters():
            torch.nn.utils.clip_grad_norm_([w], self.max_norm)
            w.grad += torch.normal(0.0, self.noise_multiplier * self.max_norm, size=w.grad.shape)
        self.opt.step()
""",
        # the clip-and-noise helper is given the whole flattened gradient once, not tensor by tensor
        """
import torch
from . import dp_tools
def local_step(net, loss, opt, clip_bound, noise_multiplier):
    loss.backward()
    flat = torch.cat([w.grad.flatten() for w in net.parameters()])
    noisy = dp_tools.clip_and_noise(flat, clip_norm=clip_bound, noise_multiplier=noise_multiplier)
    offset = 0
    for w in net.parameters():
        w.grad.copy_(noisy[offset:offset + w.numel()].view_as(w))
        offset += w.numel()
    opt.step()
""",
        # a per-client clip inside a loop over the clients' updates (each update is one vector)
        """
import numpy as np
def aggregate(client_updates, C, noise_multiplier):
    out = []
    for upd in client_updates:
        out.append(upd * min(1.0, C / np.linalg.norm(upd)))
    return np.sum(out, axis=0) + np.random.normal(0, noise_multiplier * C, out[0].shape)
""",
        # VALID twin of the imported-helper case: the whole update clipped by its global norm
        """
import torch
from mech import gaussian_noise_array, sensitivity_for
class LocalUpdate:
    def bound_update(self, net):
        total = torch.sqrt(sum(v.norm(2) ** 2 for v in net.parameters()))
        for name, v in net.named_parameters():
            v /= max(1, total.item() / self.clip_c)
    def perturb(self, net):
        sens = sensitivity_for(self.lr, self.clip_c)
        for name, v in net.named_parameters():
            z = gaussian_noise_array(self.eps, self.delta, sens, size=v.shape)
            v += torch.from_numpy(z)
""",
        # a per-tensor clip whose bound feeds only a logging call added to a counter (no noise)
        """
import torch
class Trainer:
    def clip(self, net):
        for v in net.parameters():
            v.grad /= max(1, v.grad.norm(2).item() / self.max_norm)
    def log(self, net):
        seen = describe_bound(self.max_norm)
        self.count = self.count + len(seen)
""",
        # (g39-2) each tensor clipped to C on its own, and the noise scaled by C·√L: it covers the global bound
        """
import numpy as np
import torch
class Learner:
    def step(self, losses):
        for loss in losses:
            self.optimizer.zero_grad()
            loss.backward(retain_graph=True)
            for name, p in self.model.named_parameters():
                torch.nn.utils.clip_grad_norm_(p, self.clip)
                self.acc[name].add_(p.grad)
        scale = self.clip * np.sqrt(self.num_layers) * self.noise_multiplier
        for name, p in self.model.named_parameters():
            self.acc[name].add_(torch.randn_like(p) * scale)
""",
    )

    INVALID = (
        # (fix46-QB) the clip helper bounds each tensor by C; the caller passes the same C to a noise helper
        """
import torch
def bound_tensors(grads, C):
    out = {}
    for name, g in grads.items():
        n = torch.norm(g)
        out[name] = g * (C / n) if n > C else g  # <-
    return out

def gaussian_for(grads, sigma, C):
    return {name: torch.randn_like(g) * (sigma * C) for name, g in grads.items()}

def private_step(model, lr, sigma, C):
    grads = {n: p.grad for n, p in model.named_parameters()}
    clipped = bound_tensors(grads, C)
    noise = gaussian_for(clipped, sigma, C)
    for n, p in model.named_parameters():
        p.data -= lr * (clipped[n] + noise[n])
""",
        # a client update clipped entry by entry of its state dict, noise for norm C per entry
        """
import torch
def privatize_update(upd, C, noise_multiplier, m):
    for key in upd.keys():
        noise = torch.normal(0, noise_multiplier * C / m ** 0.5, upd[key].shape)
        upd[key] *= min(1, C / torch.norm(upd[key], 2))  # <-
        upd[key] += noise
    return upd
""",
        # an optimizer step clipping each parameter tensor through a local factor
        """
import torch
class NoisySGD(torch.optim.SGD):
    def dp_step(self):
        for group in self.param_groups:
            bound = group['clip']
            mult = group['noise_multiplier']
            for p in group['params']:
                g = p.grad.data
                coef = bound / (g.norm(2) + 1e-6)
                coef = min(coef, 1.0)
                g = g * coef  # <-
                p.grad.data = g + torch.randn_like(g) * bound * mult
""",
        # clip_grad_norm_ on one tensor at a time, noise σ·C added afterwards in the same method
        """
import torch
from torch.nn.utils import clip_grad_norm_
class Trainer:
    def step(self):
        for w in self.net.parameters():
            clip_grad_norm_([w], self.max_norm)  # <-
        for w in self.net.parameters():
            w.grad += torch.normal(0.0, self.noise_multiplier * self.max_norm, size=w.grad.shape)
""",
        # a clip-and-noise helper called on each parameter's gradient with the whole model's bound
        """
import torch
from . import dp_tools
def local_step(net, loss, opt, clip_bound, z):
    loss.backward()
    with torch.no_grad():
        for w in net.parameters():
            w.grad.copy_(dp_tools.clip_and_noise(w.grad, clip_norm=clip_bound, noise_multiplier=z))  # <-
    opt.step()
""",
        # TensorFlow: clip_by_norm per gradient tensor, noise stddev from the same bound
        """
import tensorflow as tf
def noisy_grads(tape, loss, variables, l2_clip, noise_multiplier):
    grads = tape.gradient(loss, variables)
    clipped = [tf.clip_by_norm(g, l2_clip) for g in grads]  # <-
    return [g + tf.random.normal(tf.shape(g), stddev=l2_clip * noise_multiplier) for g in clipped]
""",
        # the bound in the class, the noise in a sibling method; conditional rescale of each layer
        """
import numpy as np
class Client:
    def clip(self, weights_delta):
        for i, w in enumerate(weights_delta):
            n = np.linalg.norm(w)
            if n > self.clip_norm:
                weights_delta[i] = w * self.clip_norm / n  # <-
        return weights_delta
    def noise(self, weights_delta):
        return [w + np.random.normal(0, self.clip_norm * self.noise_multiplier, w.shape) for w in weights_delta]
""",
        # the noise comes from an imported mechanism helper given a sensitivity derived from the bound
        """
import torch
from mech import gaussian_noise_array, sensitivity_for
class LocalUpdate:
    def bound_update(self, net):
        for name, v in net.named_parameters():
            v /= max(1, v.norm(2).item() / self.clip_c)  # <-
    def perturb(self, net):
        sens = sensitivity_for(self.lr, self.clip_c)
        for name, v in net.named_parameters():
            z = gaussian_noise_array(self.eps, self.delta, sens, size=v.shape)
            v += torch.from_numpy(z)
""",
        # (g39-2) the twin whose noise is scaled by C alone: L tensors clipped to C each move the vector by C·√L
        """
import numpy as np
import torch
class Learner:
    def step(self, losses):
        for loss in losses:
            self.optimizer.zero_grad()
            loss.backward(retain_graph=True)
            for name, p in self.model.named_parameters():
                torch.nn.utils.clip_grad_norm_(p, self.clip)  # <-
                self.acc[name].add_(p.grad)
        scale = self.clip * self.noise_multiplier
        for name, p in self.model.named_parameters():
            self.acc[name].add_(torch.randn_like(p) * scale)
""",
        # (fix47-QC twin) the same loop, but each layer keeps the full bound: the vector can reach C·√L
        """
import torch
class Client:
    def local_round(self, net, loader, loss_fn, opt):
        for xb, yb in loader:
            opt.zero_grad()
            loss_fn(net(xb), yb).backward()
            for p in net.parameters():
                p.grad /= max(1, p.grad.norm(2) / self.clip)  # <-
                p.grad += torch.normal(0.0, self.sigma * self.clip, p.grad.shape)
            opt.step()
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._scope(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope(node)

    def _scope(self, node: cst.FunctionDef | cst.Module) -> None:
        path = self.ctx.path.replace("\\", "/")
        stem = path.rsplit("/", 1)[-1]
        if stem.startswith("test_") or stem.endswith("_test.py") or "/tests/" in f"/{path}":
            return  # a test pins arithmetic; it releases nothing
        engine = per_example_machinery(self.ctx.source, _ENGINES)
        fa = self.ctx.analysis
        assigns = _assignments(node)
        for loop in walk(node, into_scopes=False):
            if not isinstance(loop, (cst.For, cst.ListComp, cst.GeneratorExp, cst.DictComp)) or not _tensor_loop(loop):
                continue
            elements = _element_names(loop)
            for site, bound, norms in _per_tensor_clips(loop, elements):
                if engine and _touches_grad(site):
                    continue
                bound_refs = {r for r in _expand(bound, assigns, elements | norms)
                              if r.split(".")[0] not in elements and r not in norms}
                if not bound_refs or _split(bound, assigns):
                    continue
                if not (isinstance(site, cst.Call) and _clip_helper(site, elements) is not None) \
                        and not self._noise_scaled_by(node, bound_refs) \
                        and not self._caller_noises_with_bound(node, bound_refs):
                    continue
                self.report(site, f"`{fa.code(site)}` clips one tensor of the model to the bound on its own "
                                  f"(a clip per layer inside the loop over `{fa.code(loop_iter(loop))}`), while "
                                  f"the noise is scaled by the same bound as if the whole vector had norm ≤ C: "
                                  f"with L tensors one record moves the vector by up to C·√L; clip the global "
                                  f"norm of all tensors together, or split C over the layers (Σ C_l² = C²)")

    def _caller_noises_with_bound(self, fn: cst.FunctionDef | cst.Module, bound_refs: set[str]) -> bool:
        """The clip helper's bound is one of its parameters, and a caller hands the same value to the clip helper
        and to another function of the module whose noise is scaled by it
        (``clipped = clip_gradients(g, C)``; ``noise = add_noise(clipped, sigma, C)`` with ``std = C * sigma``)."""
        if not isinstance(fn, cst.FunctionDef) or self.ctx.analysis.enclosing_class(fn) is not None:
            return False
        params = param_names(fn)
        bound_params = [p for p in params if p in bound_refs]
        if not bound_params or set(bound_refs) - set(params):
            return False
        module = self.ctx.analysis.index.module
        functions = {f.name.value: f for f in module.body if isinstance(f, cst.FunctionDef)}
        fa = self.ctx.analysis

        def bound_to(call: cst.Call, callee: cst.FunctionDef) -> dict[str, str]:
            names = call_params(call, callee)
            out: dict[str, str] = {}
            for i, arg in enumerate(a for a in call.args if a.keyword is None and not a.star):
                if i < len(names):
                    out[names[i]] = fa.code(arg.value).strip()
            for arg in call.args:
                if arg.keyword is not None:
                    out[arg.keyword.value] = fa.code(arg.value).strip()
            return out

        for call in walk(module):
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == fn.name.value):
                continue
            passed = {bound_to(call, fn).get(p) for p in bound_params} - {None}
            caller = fa.enclosing_function(call)
            if not passed or caller is None:
                continue
            for other in walk(caller):
                if not (isinstance(other, cst.Call) and isinstance(other.func, cst.Name)
                        and other.func.value in functions and other.func.value != fn.name.value):
                    continue
                callee = functions[other.func.value]
                scaled = {p for p, code in bound_to(other, callee).items() if code in passed}
                if scaled and self._noise_scaled_by(callee, scaled):
                    return True
        return False

    def _noise_scaled_by(self, fn: cst.FunctionDef | cst.Module, bound_refs: set[str]) -> bool:
        """A noise draw in ``fn`` (or, for an attribute bound, in its class) whose scale reads the bound."""
        scopes: list[cst.FunctionDef | cst.Module] = [fn]
        if isinstance(fn, cst.FunctionDef) and any(r.startswith("self.") for r in bound_refs):
            cls = self.ctx.analysis.enclosing_class(fn)
            if cls is not None:
                scopes = [f for f in walk(cls) if isinstance(f, cst.FunctionDef)]
        wanted = bound_refs
        for scope in scopes:
            assigns = _assignments(scope)
            for stmt in walk(scope, into_scopes=False):
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                draws = [c for c in walk(stmt) if isinstance(c, cst.Call) and call_name(c) in _DRAWS]
                if draws and _expand(stmt, assigns) & wanted and not _layer_scaled(stmt, assigns):
                    return True
            if _added_helper_noise(scope, assigns, wanted):
                return True
        return False


def _added_helper_noise(scope: cst.FunctionDef | cst.Module, assigns: dict[str, list[cst.BaseExpression]],
                        wanted: set[str]) -> bool:
    """A call of a noise helper (imported or not) given the bound, whose result is added to a value in
    ``scope``: ``noise = gaussian_mech(sensitivity=f(C), size=v.shape)`` … ``v += noise``; the role is the
    addition, not the helper's name."""
    added: set[str] = set()
    for sub in walk(scope, into_scopes=False):
        if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
            added |= _operand_names(sub.value)
        elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
            added |= _operand_names(sub.left) | _operand_names(sub.right)
        elif isinstance(sub, cst.Call) and call_name(sub) in ("add_", "add") and sub.args:
            added |= _operand_names(sub.args[0].value)
    for sub in walk(scope, into_scopes=False):
        if not (isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name)
                and sub.targets[0].target.value in added and isinstance(sub.value, cst.Call)):
            continue
        call = sub.value
        if call_name(call) in _SCALES or words(call_name(call)) & {"clip", "clamp", "norm", "normalize"} \
                or call_name(call) in GUARD_CALLS or not call.args or not any(
                a.keyword is not None and a.keyword.value in ("size", "shape") or a.keyword is None for a in call.args):
            continue
        if _expand(call, assigns) & wanted:
            return True
    return False


#: calls that hand the same numbers on (type, device, container or shape changes)
_PASS_ON = frozenset({"from_numpy", "tensor", "as_tensor", "to", "float", "double", "half", "cuda", "type",
                      "reshape", "view", "view_as", "astype", "array", "asarray", "convert_to_tensor"})


def _operand_names(expr: cst.BaseExpression) -> set[str]:
    """The names whose values ``expr`` adds as they are (``z``, ``torch.from_numpy(z).to(d)``, ``z * lr``)."""
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide, cst.Add)):
        return _operand_names(expr.left) | _operand_names(expr.right)
    if isinstance(expr, cst.Call) and call_name(expr) in _PASS_ON:
        inner = [a.value for a in expr.args[:1] if a.keyword is None]
        if isinstance(expr.func, cst.Attribute) and call_name(expr) in ("to", "float", "double", "half", "cuda",
                                                                        "type", "reshape", "view", "view_as", "astype"):
            inner = [expr.func.value]
        return set().union(*(_operand_names(e) for e in inner)) if inner else set()
    return set()


def _touches_grad(site: cst.CSTNode) -> bool:
    """Does the clip act on a ``.grad`` (which a library engine rebuilds at ``step()``)?"""
    return any(isinstance(n, cst.Attribute) and n.attr.value == "grad" for n in walk(site)) or (
        isinstance(site, cst.Call) and call_name(site) in ("clip_grad_norm_", "clip_grad_norm"))


def _assignments(fn: cst.FunctionDef | cst.Module) -> dict[str, list[cst.BaseExpression]]:
    """Each plain name or attribute chain assigned in ``fn`` and the values it is given."""
    out: dict[str, list[cst.BaseExpression]] = {}
    for sub in walk(fn, into_scopes=False):
        if isinstance(sub, cst.Assign):
            for t in sub.targets:
                for name in target_names(t.target):
                    out.setdefault(name, []).append(sub.value)
    return out


#: module and builtin names: read by every bound and every draw, they link nothing
_MODULES = frozenset({"torch", "np", "numpy", "tf", "math", "jnp", "jax", "scipy", "F", "nn", "random"})
_COMMON = _MODULES | {"self", "cls", "min", "max", "abs", "float", "int", "len", "sum", "range", "pow", "round"}


def _chains(expr: cst.CSTNode, skip: set[str] | None = None) -> set[str]:
    """Maximal names / attribute chains read as values in ``expr`` (callees and norm calls left out)."""
    out: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call) and not _config_lookup(node):
            if call_name(node) in NORM_CALLS:
                continue
            if isinstance(node.func, cst.Attribute):
                stack.append(node.func.value)
            stack.extend(a.value for a in node.args)
            continue
        if isinstance(node, cst.Subscript) and _config_lookup(node) and dotted(node.value) is not None:
            out.add(f"{dotted(node.value)}[{_key(node)}]")
            continue
        if isinstance(node, cst.Call) and _config_lookup(node) and isinstance(node.func, cst.Attribute) \
                and dotted(node.func.value) is not None:
            out.add(f"{dotted(node.func.value)}[{_key(node)}]")
            continue
        if isinstance(node, (cst.Attribute, cst.Name)):
            name = dotted(node)
            if name is not None:
                out.add(name)
                continue
        if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            continue
        stack.extend(node.children)
    return {n for n in out if n not in _COMMON and n.split(".")[0] not in _MODULES and n not in (skip or set())}


def _expand(expr: cst.CSTNode, assigns: dict[str, list[cst.BaseExpression]], skip: set[str] | None = None,
            depth: int = 2) -> set[str]:
    """The chains ``expr`` reads, with those of the values local names were assigned (``depth`` levels)."""
    seen = _chains(expr, skip)
    frontier = set(seen)
    for _ in range(depth):
        nxt: set[str] = set()
        for name in frontier:
            for value in assigns.get(name, ()):
                nxt |= _chains(value, skip)
        nxt -= seen
        seen |= nxt
        frontier = nxt
    return seen


#: words of a count of the model's tensors (the L of C·√L)
_LAYER_COUNT_WORDS = frozenset({"layer", "layers", "tensors", "params", "parameters", "keys"})


def _layer_scaled(stmt: cst.CSTNode, assigns: dict[str, list[cst.BaseExpression]]) -> bool:
    """(g39-2) The noise scale, a few assignments back, is multiplied by a root of the number of tensors
    (``S * sqrt(grad_layer_num) * z``, ``C * math.sqrt(len(params)) * z``): the noise covers the C·√L that L
    tensors clipped to C each can move, so the per-tensor clip is accounted for."""
    exprs: list[cst.CSTNode] = [stmt]
    seen: set[str] = set()
    for _ in range(3):
        for e in list(exprs):
            for name in refs(e) - seen:
                seen.add(name)
                exprs.extend(assigns.get(name, ()))
    for e in exprs:
        for c in walk(e):
            if isinstance(c, cst.Call) and call_name(c) == "sqrt" and c.args:
                inner = c.args[0].value
                names = {n for n in refs(inner)} | {call_name(n) for n in walk(inner) if isinstance(n, cst.Call)}
                if any(words(n) & _LAYER_COUNT_WORDS or n == "L" for n in names):
                    return True
    return False


def _split(bound: cst.CSTNode, assigns: dict[str, list[cst.BaseExpression]]) -> bool:
    """Is the bound C divided over the layers (``C / sqrt(L)``, ``C / len(params)``)?"""
    exprs: list[cst.CSTNode] = [bound]
    seen: set[str] = set()
    for _ in range(3):  # through names: ``C = self.C / layers`` with ``layers = len(list(model.parameters()))``
        for e in list(exprs):
            for name in refs(e):
                if name not in seen:
                    seen.add(name)
                    exprs.extend(assigns.get(name, ()))
    if any(isinstance(c, cst.Call) and call_name(c) in _SPLITTERS for e in exprs for c in walk(e)):
        return True
    # ``C / n_layers``, ``clip / num_tensors``: divided by a count of the layers
    return any(isinstance(c, cst.BinaryOperation) and isinstance(c.operator, cst.Divide)
               and isinstance(c.right, (cst.Name, cst.Attribute))
               and bool(words(dotted(c.right) or "") & (_LAYER_COUNT_WORDS - {"params", "parameters"}))
               for e in exprs for c in walk(e))


def _element_names(loop: cst.CSTNode) -> set[str]:
    """The loop's targets and the names its body assigns from them (``g = p.grad``, ``d = w - w0``);
    not a config lookup (``c = group['clip']``) nor a value reading a norm (the clip factor)."""
    names = set(loop_targets(loop))
    body = loop.body if isinstance(loop, cst.For) else loop
    assigns = [s for s in walk(body, into_scopes=False) if isinstance(s, cst.Assign)]
    for _ in range(3):
        for sub in assigns:
            value = sub.value
            if _config_lookup(value) or any(isinstance(c, cst.Call) and call_name(c) in NORM_CALLS
                                            for c in walk(value)):
                continue
            if _roots(value) & names:
                for t in sub.targets:
                    names |= {n for n in target_names(t.target) if "." not in n}
    return names


def _config_lookup(value: cst.CSTNode) -> bool:
    """``group['lr']``, ``cfg.get('clip')``: a setting, not a tensor."""
    return _key(value) is not None


def _key(value: cst.CSTNode) -> str | None:
    """The string key of ``d['k']`` / ``d.get('k', …)``."""
    if isinstance(value, cst.Subscript) and len(value.slice) == 1:
        index = value.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value.value.strip("'\"")
    if isinstance(value, cst.Call) and call_name(value) == "get" and value.args and \
            isinstance(value.args[0].value, cst.SimpleString):
        return value.args[0].value.value.strip("'\"")
    return None


def _roots(expr: cst.CSTNode) -> set[str]:
    return {r.split(".")[0] for r in refs(expr)}


_MODULE_NORMS = frozenset({"torch.norm", "np.linalg.norm", "numpy.linalg.norm", "tf.norm", "torch.linalg.norm",
                           "linalg.norm", "LA.norm", "jnp.linalg.norm", "torch.linalg.vector_norm", "tf.linalg.norm"})


def _module_norm(call: cst.Call) -> bool:
    return dotted(call.func) in _MODULE_NORMS or isinstance(call.func, cst.Name)


def _per_example_norm(call: cst.Call) -> bool:
    """``g.norm(2, dim=1)``, ``np.linalg.norm(G, axis=1)``, ``torch.norm(G, 2, 1)``: a norm per row."""
    if any(a.keyword is not None and a.keyword.value in ("dim", "axis") for a in call.args):
        return True
    positional = [a for a in call.args if a.keyword is None]
    return len(positional) >= (3 if _module_norm(call) else 2)


def _norm_of_element(call: cst.Call, elements: set[str]) -> bool:
    if call_name(call) not in NORM_CALLS or _per_example_norm(call):
        return False
    read: set[str] = set()
    if isinstance(call.func, cst.Attribute) and not _module_norm(call):
        read |= _roots(call.func.value)
    for a in call.args[:1]:
        read |= _roots(a.value)
    return bool(read & elements)


def _per_tensor_clips(loop: cst.CSTNode, elements: set[str]) -> list[tuple[cst.CSTNode, cst.CSTNode, set[str]]]:
    """(site, bound, names holding the norm) of each clip of one element tensor to a bound inside ``loop``."""
    body = loop.body if isinstance(loop, cst.For) else loop
    out: list[tuple[cst.CSTNode, cst.CSTNode, set[str]]] = []
    norm_names: set[str] = set()
    nodes = list(walk(body, into_scopes=False))
    for _ in range(2):
        for sub in nodes:
            if not isinstance(sub, cst.Assign):
                continue
            reads_norm = any(isinstance(c, cst.Call) and _norm_of_element(c, elements) for c in walk(sub.value)) or \
                bool(refs(sub.value) & norm_names)
            # a factor derived from the norm, not the tensor scaled by it
            tensor = _tensors(sub.value, elements, norm_names)
            if reads_norm and not tensor:
                for t in sub.targets:
                    norm_names |= {n for n in target_names(t.target) if "." not in n}
    for sub in nodes:
        helper = _clip_helper(sub, elements)
        if helper is not None:
            out.append((sub, helper, norm_names))
            continue
        if isinstance(sub, cst.Call) and call_name(sub) in _CLIP_CALLS and len(sub.args) >= 2:
            first = sub.args[0].value
            if isinstance(first, cst.List) and len(first.elements) == 1:
                first = first.elements[0].value
            if dotted(first) is not None and _roots(first) & elements and not _is_collection(first):
                out.append((sub, sub.args[1].value, norm_names))
            continue
        factor: cst.BaseExpression | None = None
        scaled: cst.BaseExpression | None = None
        if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, (cst.MultiplyAssign, cst.DivideAssign)):
            factor, scaled = sub.value, sub.target
        elif isinstance(sub, cst.Assign):
            product = _scaled_product(sub.value, elements, norm_names)
            if product is not None:
                factor, scaled = product, sub.targets[0].target
        elif isinstance(sub, cst.Call) and call_name(sub) in _SCALES and isinstance(sub.func, cst.Attribute) \
                and sub.args:
            factor, scaled = sub.args[0].value, sub.func.value
        if factor is None or scaled is None or not _roots(scaled) & elements:
            continue
        reads_norm = any(isinstance(c, cst.Call) and _norm_of_element(c, elements) for c in walk(factor)) or \
            bool(refs(factor) & norm_names)
        if not reads_norm:
            continue
        bound = _bound_of(factor, norm_names, elements, nodes)
        if bound is not None and _clip_shaped(factor, bound):
            out.append((sub, bound, norm_names))
    return out


#: words of a bound, not of a tensor: ``max_norm = bounds[k]`` is a setting even when indexed per layer
_BOUND_WORDS = frozenset({"norm", "clip", "clipping", "bound", "threshold", "max", "limit", "c"})


def _tensors(expr: cst.CSTNode, elements: set[str], norm_names: set[str]) -> set[str]:
    """The element tensors ``expr`` reads (not the norm's names, not bound-named settings)."""
    return {r for r in _chains(expr) if r.split(".")[0] in elements and r not in norm_names
            and not words(r.split(".")[-1]) & _BOUND_WORDS}


def _scaled_product(value: cst.BaseExpression, elements: set[str], norm_names: set[str]) -> cst.BaseExpression | None:
    """The ``t * f`` / ``t / f`` inside ``value`` scaling an element tensor by a factor reading its norm."""
    for sub in walk(value):
        if not isinstance(sub, cst.BinaryOperation) or not isinstance(sub.operator, (cst.Multiply, cst.Divide)):
            continue
        if not _tensors(sub, elements, norm_names):
            continue
        if any(isinstance(c, cst.Call) and _norm_of_element(c, elements) for c in walk(sub)) or \
                refs(sub) & norm_names:
            return sub
    return None


#: a helper named for clipping and noising what it is given (``noise_and_clip``, ``clip_and_add_noise``)
_HELPER_CLIP = frozenset({"clip", "clipping", "clipped"})
_HELPER_NOISE = frozenset({"noise", "noised", "noisy", "sanitize", "privatize", "privatise", "dp", "gaussian"})
_BOUND_KEYS = frozenset({"clip", "norm", "bound", "c", "threshold", "max"})


def _clip_helper(node: cst.CSTNode, elements: set[str]) -> cst.BaseExpression | None:
    """The bound given to a clip-and-noise helper called on one element tensor (``noise_and_clip(p.grad,
    l2_norm_clip=C, sigma=z)``): the helper clips that tensor on its own and noises it for C."""
    if not isinstance(node, cst.Call):
        return None
    pieces = words(call_name(node))
    if not pieces & _HELPER_CLIP or not pieces & _HELPER_NOISE or call_name(node) in _CLIP_CALLS or not node.args:
        return None
    first = node.args[0].value
    if first is None or node.args[0].keyword is not None or dotted(first) is None or not _roots(first) & elements \
            or _is_collection(first):
        return None
    for arg in node.args[1:]:
        if arg.keyword is not None and words(arg.keyword.value) & _BOUND_KEYS and \
                not words(arg.keyword.value) & {"noise", "sigma", "multiplier"}:
            return arg.value
    return None


def _clip_shaped(*exprs: cst.CSTNode) -> bool:
    """A ratio or a min/max of the norm and the bound (``C / ‖g‖``, ``max(1, ‖g‖ / C)``), not a product
    of norms (``m * σ² * ‖B‖²``, a variance)."""
    return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)
               or isinstance(n, cst.Call) and call_name(n) in ("min", "max", "minimum", "maximum", "clamp", "clip")
               for e in exprs for n in walk(e))


def _is_collection(expr: cst.BaseExpression) -> bool:
    return bool(words(dotted(expr) or "") & {"parameters", "params", "grads", "gradients", "variables"})


def _bound_of(factor: cst.BaseExpression, norm_names: set[str], elements: set[str],
              nodes: list[cst.CSTNode]) -> cst.CSTNode | None:
    """The expression the factor compares the norm with: ``factor`` itself, or the value a name it
    reads was given in the loop (followed through the norm's names), when it reads a name other
    than the norm and the elements."""
    values: dict[str, list[cst.BaseExpression]] = {}
    for sub in nodes:
        if isinstance(sub, cst.Assign):
            for t in sub.targets:
                for name in target_names(t.target):
                    values.setdefault(name, []).append(sub.value)
    todo: list[cst.BaseExpression] = [factor]
    seen: set[str] = set()
    while todo:
        cand = todo.pop(0)
        chains = _chains(cand)
        if any(r.split(".")[0] not in elements and r not in norm_names for r in chains):
            return cand
        for name in sorted(chains & norm_names - seen):
            seen.add(name)
            todo.extend(values.get(name, ()))
    return None
