"""DP709: a DP client noises its parameters' gradients but uploads the whole state dict (BatchNorm statistics
included, exact)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"normal", "randn", "randn_like", "normal_like", "laplace", "gauss", "standard_normal", "normal_"})
_PARAM_ITEMS = frozenset({"named_parameters", "parameters"})
_STATE_CALLS = frozenset({"state_dict", "get_weights"})
#: the model has buffers computed from the data: BatchNorm layers (torch's, a torchvision ResNet, a *BN model)
_BN_EVIDENCE = re.compile(r"BatchNorm|\bResNet\w*BN\b|\bresnet(?:18|34|50|101|152)\b|running_mean|\bbn\d?\b")
#: a key filter that keeps buffers out (``if "running" in k``, ``if k in params``)
_FILTER_WORDS = frozenset({"running", "num", "batches", "bn", "buffer", "buffers", "named", "parameters",
                           "params", "trainable", "requires"})


def _calls(node: cst.CSTNode, names: frozenset[str]) -> bool:
    return any(isinstance(c, cst.Call) and call_name(c).split(".")[-1] in names for c in walk(node))


def _state_items(it: cst.BaseExpression) -> bool:
    """``model.state_dict().items()``, ``self.model.get_weights().items()``."""
    return isinstance(it, cst.Call) and call_name(it).split(".")[-1] in ("items", "keys") \
        and isinstance(it.func, cst.Attribute) and isinstance(it.func.value, cst.Call) \
        and call_name(it.func.value).split(".")[-1] in _STATE_CALLS


class BuffersUploadedWithoutNoise(Rule):
    id = "DP709"
    name = "buffers-uploaded-without-noise"
    category = "general"
    severity = "error"
    summary = ("a DP client adds noise to its parameters' gradients, then returns the update over the whole state "
               "dict: the BatchNorm running statistics, computed from its raw batches, leave without noise")
    rationale = (
        "`model.state_dict()` (and `get_weights()` helpers built on it) holds the buffers as well as the "
        "parameters: a BatchNorm layer's `running_mean`, `running_var` and `num_batches_tracked`, updated in "
        "every forward pass from the raw private batch. DP-SGD noise added to `p.grad` for `p in "
        "model.named_parameters()` never touches them, so a client update computed as `{k: v - w[k] for k, v "
        "in model.state_dict().items()}` sends per-client batch statistics of the private data exactly, and "
        "the server averages them into the global model: no ε covers them. Reported: a function that adds a "
        "noise draw inside a loop over `named_parameters()`/`parameters()` and builds the returned update by "
        "looping over `state_dict().items()`/`get_weights().items()` without filtering keys, in a file whose "
        "models have BatchNorm (`BatchNorm`, a torchvision ResNet, a `*BN` model). Fix: upload only the "
        "parameters (`named_parameters()`), replace BatchNorm with GroupNorm, or keep BN statistics local."
    )
    TRIGGERS = ("state_dict", "get_weights")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A noise draw, a parameter loop, a state-dict read and a BatchNorm model in the file."""
        return facts.calls_any(_DRAWS) and facts.calls_any(_PARAM_ITEMS) and facts.calls_any(_STATE_CALLS) \
            and bool(_BN_EVIDENCE.search(facts.source))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    VALID = (
        # (twin) the update is taken over the parameters only
        """
import torch
from models import ResNet18BN
def local_update(model, loader, loss_fn, opt, C, sigma, w0):
    for x, y in loader:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        for name, p in model.named_parameters():
            p.grad *= min(1.0, C / (p.grad.norm() + 1e-12))
            p.grad += torch.normal(0, sigma * C, size=p.grad.shape)
        opt.step()
    return {k: p.detach() - w0[k] for k, p in model.named_parameters()}
""",
        # the state dict is filtered: BatchNorm statistics stay on the client
        """
import torch
def local_update(model, loader, loss_fn, opt, C, sigma, w0):
    for x, y in loader:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            p.grad += torch.randn_like(p.grad) * sigma * C
        opt.step()
    delta = {}
    for k, v in model.state_dict().items():
        if "running" in k or "num_batches" in k:
            continue
        delta[k] = v - w0[k]
    return delta
    # model: nn.BatchNorm2d layers inside
""",
        # no BatchNorm anywhere: the state dict holds only parameters
        """
import torch
import torch.nn as nn
net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
def local_update(model, loader, loss_fn, opt, sigma, w0):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            p.grad += torch.randn_like(p.grad) * sigma
        opt.step()
    return {k: v - w0[k] for k, v in model.state_dict().items()}
""",
        # ordinary training with a BatchNorm model: weight noise for regularisation, no privacy claim
        """
import torch
import torch.nn as nn
def train_and_export(model, loader, opt, std, reference):
    bn = nn.BatchNorm1d(16)
    for x, y in loader:
        opt.step()
        for p in model.parameters():
            p.data += torch.randn_like(p) * std
    return {k: v - reference[k] for k, v in model.state_dict().items()}
""",
    )

    INVALID = (
        # the update over get_weights() (the state dict) includes the BatchNorm buffers
        """
import torch
from models.resnet_bn import ResNet18BN
class Client:
    def update(self, weights, loader, C, dp_sigma):
        self.model.set_weights(weights)
        for x, y in loader:
            self.model.zero_grad()
            self.loss(self.model(x), y).backward()
            for name, param in self.model.named_parameters():
                param.grad *= min(1, C / torch.norm(param.grad, 2))
                param.grad += torch.normal(0, dp_sigma * C, size=param.grad.shape)
            self.opt.step()
        delta = {}
        for k, v in self.model.get_weights().items():  # <-
            delta[k] = v - weights[k]
        return delta
""",
        # a torchvision ResNet and a dict comprehension over state_dict()
        """
import torch
import torchvision
model = torchvision.models.resnet18(num_classes=10)
def client_round(model, loader, opt, loss_fn, clip, noise_multiplier, start):
    for x, y in loader:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            torch.nn.utils.clip_grad_norm_([p], clip)
            p.grad.add_(torch.randn_like(p.grad) * noise_multiplier * clip)
        opt.step()
    return {k: v - start[k] for k, v in model.state_dict().items()}  # <-
""",
        # the new state minus the old, with nn.BatchNorm2d in the model
        """
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)

def private_local_train(net, loader, opt, loss_fn, C, sigma, global_state):
    for x, y in loader:
        loss_fn(net(x), y).backward()
        for p in net.parameters():
            p.grad = p.grad + torch.normal(0.0, sigma * C, p.grad.shape)
        opt.step()
    update = {}
    for key in net.state_dict().keys():  # <-
        update[key] = net.state_dict()[key] - global_state[key]
    return update
""",
        # Laplace noise on the gradients, the whole state dict uploaded
        """
import numpy as np
import torch
from models import ResNet10BN
def dp_client(model, loader, opt, loss_fn, epsilon, C, w_global):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        for name, p in model.named_parameters():
            p.grad += torch.from_numpy(np.random.laplace(0, C / epsilon, p.grad.shape)).float()
        opt.step()
    diff = {}
    for k, v in model.state_dict().items():  # <-
        diff[k] = v.cpu() - w_global[k]
    return diff
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not _BN_EVIDENCE.search(self.ctx.source) or not self._noises_parameters(node):
            return
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.For) and _state_items(sub.iter) and not self._filtered(sub.body) \
                    and self._returned(node, sub):
                self._flag(sub)
            elif isinstance(sub, (cst.DictComp, cst.ListComp)) and any(_state_items(f.iter) for f in walk(sub)
                                                                       if isinstance(f, cst.CompFor)) \
                    and not any(isinstance(f, cst.CompFor) and f.ifs for f in walk(sub)) \
                    and isinstance(self.ctx.analysis.parent(sub), cst.Return):
                self._flag(sub)

    def _flag(self, node: cst.CSTNode) -> None:
        self.report(node, "the update is built over the whole state dict, but the noise went only to the "
                          "parameters' gradients: the BatchNorm running means/variances (computed from the raw "
                          "private batches) are sent exact and averaged by the server; upload only the "
                          "parameters (`named_parameters()`), or use GroupNorm / keep BN statistics local")

    @staticmethod
    def _noises_parameters(fn: cst.FunctionDef) -> bool:
        """A noise draw inside a loop over ``named_parameters()``/``parameters()``."""
        for loop in walk(fn.body, into_scopes=False):
            if isinstance(loop, cst.For) and _calls(loop.iter, _PARAM_ITEMS) and _calls(loop.body, _DRAWS):
                return True
        return False

    @staticmethod
    def _filtered(body: cst.CSTNode) -> bool:
        """The loop skips some keys (``if "running" in k: continue``, ``if k in params``)."""
        for sub in walk(body):
            if isinstance(sub, cst.If):
                names = {w for n in walk(sub.test) if isinstance(n, (cst.Name, cst.SimpleString, cst.Attribute))
                         for w in words(n.value if isinstance(n, (cst.Name, cst.SimpleString)) else n.attr.value)}
                if names & _FILTER_WORDS or any(isinstance(c, cst.Comparison) for c in walk(sub.test)):
                    return True
        return False

    def _returned(self, fn: cst.FunctionDef, loop: cst.For) -> bool:
        """The dict filled in the loop is returned (or the function returns right after the loop)."""
        filled = set()
        for sub in walk(loop.body):
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name):
                        filled.add(t.target.value.value)
        returns = [r for r in walk(fn.body, into_scopes=False) if isinstance(r, cst.Return) and r.value is not None]
        return any(isinstance(n, cst.Name) and n.value in filled for r in returns for n in walk(r.value))
