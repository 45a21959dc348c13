"""DP765: the gradient is clipped after ``optimizer.step()`` in a DP training loop, so the step used the unclipped
gradient."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: in-place gradient clipping of torch (the clipped ``.grad`` is only used by a later ``step``)
_CLIPS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"})
_OPT_WORDS = frozenset({"opt", "optim", "optimizer", "optimiser", "optimizers", "sgd", "adam", "dp"})
#: a privacy engine clips inside its own optimizer step: a user clip after the step is then only redundant
_ENGINES = frozenset({"PrivacyEngine", "make_private", "make_private_with_epsilon", "DPOptimizer",
                      "DPOptimizerClass", "make_optimizer_class"})


def _optimizer_step(call: cst.Call) -> bool:
    """``optimizer.step()``, ``self.optim.step()``, ``opt.step(closure)`` — not ``scheduler.step()``."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "step"):
        return False
    owner = dotted(call.func.value) or ""
    last = owner.rsplit(".", 1)[-1]
    return bool(words(last) & _OPT_WORDS) or last.lower() in ("o", "optimizer", "optimiser")


def _events(stmts: list[cst.BaseStatement]) -> list[tuple[str, cst.Call]]:
    """In source order, the optimizer steps and gradient clips of a statement list, looking into ``if``/``with``
    /``try`` blocks but not into nested loops or functions."""
    out: list[tuple[str, cst.Call]] = []
    for stmt in stmts:
        if isinstance(stmt, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            for n in walk(stmt):
                if isinstance(n, cst.Call):
                    if _optimizer_step(n):
                        out.append(("step", n))
                    elif call_name(n) in _CLIPS:
                        out.append(("clip", n))
            continue
        blocks: list[cst.BaseSuite] = []
        if isinstance(stmt, cst.If):
            blocks.append(stmt.body)
            orelse = stmt.orelse
            while orelse is not None:
                blocks.append(orelse.body)
                orelse = orelse.orelse if isinstance(orelse, cst.If) else None
        elif isinstance(stmt, (cst.With, cst.Try)):
            blocks.append(stmt.body)
        for b in blocks:
            if isinstance(b, cst.IndentedBlock):
                out.extend(_events(list(b.body)))
    return out


class ClipAfterOptimizerStep(Rule):
    id = "DP765"
    name = "clip-after-optimizer-step"
    category = "general"
    severity = "error"
    summary = ("the gradient is clipped after `optimizer.step()`: the step applied the unclipped gradient and the "
               "clipped one is discarded by the next `zero_grad`")
    rationale = (
        "torch's `clip_grad_norm_` / `clip_grad_value_` rescale the `.grad` tensors in place; only a later "
        "`optimizer.step()` uses them. In a loop body that runs `loss.backward(); optimizer.step()` and then "
        "clips, the update already applied the raw gradient, and the clipped gradient is cleared by the next "
        "iteration's `zero_grad`. The bound the DP noise or sensitivity assumes (an update of norm at most "
        "C·lr, a per-client sensitivity 2·C·lr) is never enforced, so the claimed ε does not hold. Reported: in "
        "a loop body of DP code, a clip call that follows an optimizer step (also inside an `if`) with no "
        "clip before that step and no step after the clip. Not reported: clip before the step, loops where "
        "another step follows the clip, code run by a privacy engine (Opacus `make_private`, `DPOptimizer`), "
        "whose step clips per sample itself. Fix: clip between `backward()` and `step()`."
    )
    TRIGGERS = ("clip_grad",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A torch gradient clip, a ``step`` call and a loop, with no privacy engine."""
        return facts.calls_any(_CLIPS) and facts.calls_any(frozenset({"step"})) \
            and not facts.calls_any(_ENGINES) and not (facts.identifiers & _ENGINES)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_Module(self, node: cst.Module) -> None:
        self._engine = any(isinstance(n, cst.Name) and n.value in _ENGINES for n in walk(node)) or any(
            isinstance(n, cst.Attribute) and n.attr.value in _ENGINES for n in walk(node))

    def _loop(self, body: cst.BaseSuite) -> None:
        if getattr(self, "_engine", False) or not isinstance(body, cst.IndentedBlock):
            return
        events = _events(list(body.body))
        for i, (kind, call) in enumerate(events):
            if kind != "clip":
                continue
            before = [k for k, _ in events[:i]]
            after = [k for k, _ in events[i + 1:]]
            if "step" in before and "step" not in after and "clip" not in before[:before.index("step")]:
                self.report(call, "the gradient is clipped after `optimizer.step()`: the step already applied the "
                                  "unclipped gradient, so the clipping bound the DP noise assumes is not enforced; "
                                  "clip between `backward()` and `step()`")

    def visit_For(self, node: cst.For) -> None:
        self._loop(node.body)

    def visit_While(self, node: cst.While) -> None:
        self._loop(node.body)

    VALID = (
        # twin: clip between backward and step
        """
import torch
def local_update(model, loader, optimizer, loss_fn, clip_value, epsilon, lr):
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_value)
        optimizer.step()
    scale = 2.0 * clip_value * lr / epsilon
    for p in model.parameters():
        p.data.add_(torch.distributions.Laplace(0.0, scale).sample(p.shape))
""",
        # twin: value clipping under a flag, before the step
        """
from torch.nn.utils import clip_grad_value_
def train_dp(net, batches, opt, crit, clip, sigma):
    for xb, yb in batches:
        opt.zero_grad()
        crit(net(xb), yb).backward()
        if clip:
            clip_grad_value_(net.parameters(), clip)
        for p in net.parameters():
            p.grad += sigma * clip * torch.randn_like(p.grad)
        opt.step()
""",
        # an Opacus engine clips per sample inside its step; the extra clip after it is only redundant
        """
import torch
from opacus import PrivacyEngine
def fit(model, loader, optimizer, epsilon, delta, epochs):
    model, optimizer, loader = PrivacyEngine().make_private_with_epsilon(
        module=model, optimizer=optimizer, data_loader=loader, target_epsilon=epsilon, target_delta=delta,
        epochs=epochs, max_grad_norm=1.0)
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
""",
        # ordinary ML: no DP anywhere
        """
import torch
def train(model, loader, optimizer, max_norm=5.0):
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
""",
    )
    INVALID = (
        # clip after the step, under a flag; Laplace output perturbation assumes the 2·C·lr bound
        """
import torch
def local_update(model, loader, optimizer, loss_fn, clip_value, epsilon, lr):
    for x, y in loader:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        if clip_value:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_value)  # <-
    scale = 2.0 * clip_value * lr / epsilon
    for p in model.parameters():
        p.data.add_(torch.distributions.Laplace(0.0, scale).sample(p.shape))
""",
        # value clipping imported bare, after the step, with Gaussian noise on the update
        """
from torch.nn.utils import clip_grad_value_
def train_dp(net, batches, opt, crit, clip, noise_multiplier):
    for xb, yb in batches:
        opt.zero_grad()
        crit(net(xb), yb).backward()
        for p in net.parameters():
            p.grad += noise_multiplier * clip * torch.randn_like(p.grad)
        opt.step()
        clip_grad_value_(net.parameters(), clip)  # <-
""",
        # a while loop in a DP client class
        """
import torch
class DPClient:
    def train(self, it, epsilon, delta, sigma):
        while self.steps < self.max_steps:
            loss = self.loss(next(it))
            self.optim.zero_grad()
            loss.backward()
            self.optim.step()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)  # <-
            self.steps += 1
""",
        # gradient accumulation: the clip of the last micro-batch comes after the step inside the same branch
        """
import torch.nn as nn
def dp_epoch(model, loader, optimizer, accum, clip_norm, noise_std):
    for i, (x, y) in enumerate(loader):
        model.loss(x, y).backward()
        if (i + 1) % accum == 0:
            for p in model.parameters():
                p.grad.add_(noise_std * torch.randn_like(p.grad))
            optimizer.step()
            nn.utils.clip_grad_norm_(model.parameters(), clip_norm)  # <-
            optimizer.zero_grad()
""",
    )
