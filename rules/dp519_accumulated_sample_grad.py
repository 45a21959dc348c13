"""DP519: "per-sample" gradients read from ``.grad`` in a loop that never zeroes it (running sums)."""
from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk
from dpcheck.rule import Rule

_DP_WORDS = ("clip", "nois", "sigma", "epsilon", "privacy", "private", "dp", "laplace", "gaussian_mech")


def _words(ident: str) -> list[str]:
    """``noise_multiplier`` -> noise, multiplier; ``maxGradNorm`` -> max, grad, norm; ``DPSGD`` -> dpsgd."""
    out: list[str] = []
    for part in ident.split("_"):
        word = ""
        for i, ch in enumerate(part):
            if ch.isupper() and word and not part[i - 1].isupper():
                out.append(word.lower())
                word = ""
            word += ch
        if word:
            out.append(word.lower())
    return out


def _dp_evidence(node: cst.CSTNode) -> bool:
    """An identifier or string of ``node`` names clipping, noise or privacy (``clip``, ``noise_multiplier``,
    ``sigma``, ``epsilon``, ``dpsgd``, ``private``): a loop whose function names none of them is ordinary training
    or analysis code (an importance score, an attack feature), where a running ``.grad`` sum releases nothing."""
    for sub in walk(node):
        text = sub.value if isinstance(sub, cst.Name) else (
            sub.attr.value if isinstance(sub, cst.Attribute) else (
                sub.value if isinstance(sub, cst.SimpleString) else None))
        if not isinstance(text, str):
            continue
        for word in _words(text.strip("'\"")):
            if word.startswith(_DP_WORDS):
                return True
    return False


_ZEROING = frozenset({"zero_grad", "zero_", "fill_", "detach_", "zero_grad_"})


def _zeroes(body: cst.CSTNode) -> bool:
    """``opt.zero_grad()``, ``p.grad.zero_()``, ``p.grad = None``, ``p.grad.data.fill_(0)``, ``p.grad = zeros``."""
    for node in walk(body):
        if isinstance(node, cst.Call) and (call_name(node) in _ZEROING or (
                call_name(node).startswith("zero") and "grad" in call_name(node))):
            return True
        if isinstance(node, cst.Assign) and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value == "grad" for t in node.targets):
            return True
    return False


def _fresh_leaves(body: cst.CSTNode, backward_line: int, line_of: Callable[[cst.CSTNode], int]) -> set[str]:
    """Names (re)bound inside the loop body before the ``backward``: a tensor created afresh each
    iteration starts with no ``.grad``, so reading it after the backward is that iteration's gradient."""
    out: set[str] = set()
    for node in walk(body):
        if isinstance(node, cst.Assign) and line_of(node) < backward_line:
            out.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    return out


def _grad_read(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "grad"


class AccumulatedSampleGrad(Rule):
    id = "DP519"
    name = "accumulated-sample-grad"
    category = "general"
    severity = "error"
    summary = "per-sample gradients read from `.grad` in a loop that never zeroes it: each is a running sum"
    rationale = (
        "PyTorch's `backward()` adds into `.grad`. A hand-written per-example loop — `for x, y in "
        "batch: loss(x, y).backward(); g = p.grad.clone(); clip(g); store(g)` — must zero the "
        "gradients (`optimizer.zero_grad()`, `model.zero_grad()`, `p.grad = None`, "
        "`p.grad.zero_()`) for every example; otherwise the 'gradient of example k' is the sum over "
        "examples 1..k, every example enters all later clipped terms, and one record moves the sum "
        "by up to B·C instead of C. Not reported: loops that zero the gradients anywhere in their "
        "body, loops that do not read `.grad` after the backward (gradient accumulation for one "
        "step), code with no DP context, and loops whose function names no clipping, noise or privacy at all (an importance "
        "score or attack feature built from `.grad`). Fix: zero the gradients at the start of each example's "
        "iteration (or use `torch.func.vmap`/Opacus for per-example gradients)."
    )
    TRIGGERS = ("backward",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return facts.calls_any(frozenset({"backward"}))

    VALID = (
        # VALID twins of the clip cases: the optimizer's clip per example after zeroing .grad in the loop
        """
import torch
def train_critic(critic, opt, batch, epsilon):
    for i in range(len(batch)):
        opt.zero_microbatch_grad()
        out = critic(batch[i:i + 1]).mean()
        out.backward()
        opt.clip_and_accumulate()
    opt.add_noise()
    opt.step()
""",
        """
import torch
def dp_epoch(model, optimizer, examples, loss_fn, max_norm, noise_multiplier):
    for x, y in examples:
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
""",
        # one clip after an accumulation loop (ordinary gradient accumulation, clipped once)
        """
import torch
def accumulate(model, optimizer, micro, loss_fn, max_norm, epsilon):
    for x, y in micro:
        loss_fn(model(x), y).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
""",
        # zeroed per example
        """
import torch
def dp_step(model, optimizer, criterion, xb, yb, clip, sigma):
    summed = [torch.zeros_like(p) for p in model.parameters()]
    for x, y in zip(xb, yb):
        optimizer.zero_grad()
        criterion(model(x[None]), y[None]).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for s, p in zip(summed, model.parameters()):
            s += p.grad
    return [s + torch.normal(0, sigma * clip, s.shape) for s in summed]
""",
        # .grad set to None at the end of each example
        """
def per_sample(model, loss_fn, samples, clip, noise_multiplier):
    grads = []
    for sample in samples:
        loss_fn(model, sample).backward()
        grads.append([p.grad.clone() for p in model.parameters()])
        for p in model.parameters():
            p.grad = None
    return grads
""",
        # ordinary gradient accumulation: .grad is only read by the step after the loop
        """
def train(model, opt, loss_fn, micro_batches, epsilon):
    for mb in micro_batches:
        loss_fn(model, mb).backward()
    opt.step()
""",
        # grads zeroed through the parameter tensors
        """
def dp_grads(model, loss_fn, batch, clip, sigma):
    out = []
    for x in batch:
        loss_fn(model(x)).backward()
        out.append([p.grad.detach().clone() for p in model.parameters()])
        for p in model.parameters():
            p.grad.zero_()
    return out
""",
        # ordinary ML: a parameter-importance score from batch gradients, nothing clipped or noised
        """
import torch
def importance(model, loader, criterion, mu, scores):
    for x, y in loader:
        criterion(model(x), y).backward()
        norms = [torch.norm(p.grad.detach().clone()) ** 2 for p in model.parameters()]
        for i, n in enumerate(norms):
            scores[i] = mu * scores[i] + (1 - mu) * n
    return scores
""",
        # a leaf tensor created afresh in each iteration: its .grad holds that iteration's gradient only
        """
import torch
def per_example_input_grads(model, loss_fn, examples, clip, sigma):
    out = []
    for x in examples:
        leaf = x.detach().clone().requires_grad_(True)
        loss_fn(model(leaf)).backward()
        g = leaf.grad.detach()
        out.append(g * min(1.0, clip / float(g.norm())))
    return torch.stack(out).sum(0) + torch.normal(0.0, sigma * clip, out[0].shape)
""",
    )

    INVALID = (
        # a private optimizer's own clip method called per example, .grad never cleared in the loop
        """
import torch
def train_critic(critic, opt, batch, epsilon):
    opt.zero_grad()
    for i in range(len(batch)):
        out = critic(batch[i:i + 1]).mean()
        out.backward()  # <-
        opt.clip_and_accumulate()
    opt.add_noise()
    opt.step()
""",
        # torch's clip_grad_norm_ on the model per example, then one noisy step after the loop
        """
import torch
def dp_epoch(model, optimizer, examples, loss_fn, max_norm, noise_multiplier):
    optimizer.zero_grad()
    for x, y in examples:
        loss_fn(model(x), y).backward()  # <-
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    for p in model.parameters():
        p.grad += torch.normal(0, noise_multiplier * max_norm, p.grad.shape)
    optimizer.step()
""",
        # clip_grad_value_ through an alias, a while loop over the microbatches
        """
import torch
from torch.nn.utils import clip_grad_value_ as cgv
def private_pass(net, sgd, micro, crit, bound, sigma):
    k = 0
    while k < len(micro):
        crit(net(micro[k][0]), micro[k][1]).backward()  # <-
        cgv(net.parameters(), bound)
        k += 1
    sgd.step()
""",
        # the same input gradients, but the leaf is created once before the loop: .grad accumulates
        """
import torch
def per_example_input_grads(model, loss_fn, examples, clip, sigma):
    out = []
    leaf = examples[0].detach().clone().requires_grad_(True)
    for x in examples:
        leaf.data.copy_(x)
        loss_fn(model(leaf)).backward()  # <-
        g = leaf.grad.detach()
        out.append(g * min(1.0, clip / float(g.norm())))
    return torch.stack(out).sum(0) + torch.normal(0.0, sigma * clip, out[0].shape)
""",
        # the LU-zhw323 shape, spelled with a list and clip_grad_norm_
        """
from torch.nn.utils import clip_grad_norm_
def train_step(model, batch, criterion, max_grad_norm, noise_multiplier):
    for p in model.parameters():
        p.acc = []
    for x, y in batch:
        loss = criterion(model(x), y)
        loss.backward()  # <-
        for p in model.parameters():
            g = p.grad.detach().clone()
            clip_grad_norm_(g, max_norm=max_grad_norm)
            p.acc.append(g)
""",
        # an index loop over the batch, grads flattened into a per-example list
        """
import torch
def per_example_grads(net, loss_fn, X, Y, clip, sigma):
    rows = []
    for i in range(len(X)):
        loss_fn(net(X[i:i + 1]), Y[i:i + 1]).backward()  # <-
        g = torch.cat([p.grad.flatten() for p in net.parameters()])
        rows.append(g * min(1.0, clip / float(g.norm())))
    return torch.stack(rows).sum(0) + torch.normal(0, sigma * clip, rows[0].shape)
""",
        # the importance loop of the VALID case, but the scores are clipped and noised for release
        """
import torch
def importance(model, loader, criterion, mu, scores, clip, sigma):
    for x, y in loader:
        criterion(model(x), y).backward()  # <-
        norms = [torch.norm(p.grad.detach().clone()) ** 2 for p in model.parameters()]
        for i, n in enumerate(norms):
            scores[i] = mu * scores[i] + (1 - mu) * min(n, clip)
    return scores + torch.normal(0.0, sigma * clip, scores.shape)
""",
        # zeroed once before the loop only
        """
def dp_sgd_step(model, optimizer, examples, loss_fn, clip, sigma):
    optimizer.zero_grad()
    clipped = []
    for ex in examples:
        loss_fn(model, ex).backward()  # <-
        clipped.append({n: p.grad.clone() for n, p in model.named_parameters()})
    return clipped
""",
        # a dictionary of per-example gradients in a while loop
        """
def collect(model, data, loss_fn, l2_clip, noise_multiplier):
    k, grads = 0, {}
    while k < len(data):
        loss_fn(model(data[k])).backward()  # <-
        grads[k] = [w.grad.clone() for w in model.parameters()]
        k += 1
    return grads
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) != "backward" or not isinstance(node.func, cst.Attribute):
            return
        fa = self.ctx.analysis
        loops = [loop for loop in fa.enclosing_loops(node) if isinstance(loop, (cst.For, cst.While))]
        if not loops:
            return
        loop = loops[0]
        if _zeroes(loop.body):
            return
        line = fa.line_of(node)
        fresh = _fresh_leaves(loop.body, line, fa.line_of)
        clip = self._clip_of_running_grads(loop.body, line)
        if clip is not None and _steps(loop.body):
            clip = None  # an optimiser step in the same loop: one update per batch, ordinary training
        if clip is not None:
            reported: set[cst.CSTNode] = self.__dict__.setdefault("_loops_reported", set())
            if loop in reported:
                return  # one finding per loop, at its first backward
            reported.add(loop)
            self.report(
                node,
                "`backward()` adds into `.grad`, and this loop never zeroes it: the clip on line "
                f"{fa.line_of(clip)} (`{fa.code(clip).strip()[:60]}`) bounds the running sum of every example so "
                "far, not one example's gradient, so each record enters all later clipped terms (sensitivity up "
                "to B·C); zero the gradients for each example",
            )
            return
        fn = fa.enclosing_function(loop)
        if not _dp_evidence(fn if fn is not None else loop):
            return  # no clipping, noise or privacy named where the gradients are read
        for sub in walk(loop.body):
            if _grad_read(sub) and fa.line_of(sub) > line and not (
                    isinstance(sub.value, cst.Name) and sub.value.value in fresh) and self._kept(sub):
                self.report(
                    node,
                    "`backward()` adds into `.grad`, and this loop never zeroes it: the gradient read "
                    f"on line {fa.line_of(sub)} is the running sum over every example so far, not one "
                    "example's, so each record enters all later clipped terms; zero the gradients for "
                    "each example",
                )
                return

    def _clip_of_running_grads(self, body: cst.CSTNode, backward_line: int) -> cst.Call | None:
        """A clip of the parameters' gradients after the backward: torch's ``clip_grad_norm_`` /
        ``clip_grad_value_`` given the model's parameters, or a clipping method of the optimizer (the object the
        function steps or zeroes), which acts on ``.grad`` in place."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(body)
        optimizers: set[str] = set()
        for sub in walk(fn if fn is not None else self.ctx.module):
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and sub.func.attr.value in ("step", "zero_grad") and isinstance(sub.func.value, cst.Name):
                optimizers.add(sub.func.value.value)
        for sub in walk(body):
            if not isinstance(sub, cst.Call) or fa.line_of(sub) <= backward_line:
                continue
            name = call_name(sub)
            qualified = fa.qualified_name(sub.func) or name
            if qualified.rsplit(".", 1)[-1] in ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm") \
                    and sub.args and any(
                    isinstance(c, cst.Call) and call_name(c) in ("parameters", "named_parameters")
                    for c in walk(sub.args[0].value)):
                return sub
            if isinstance(sub.func, cst.Attribute) and isinstance(sub.func.value, cst.Name) \
                    and sub.func.value.value in optimizers and "clip" in name.lower():
                return sub
        return None

    def _kept(self, read: cst.CSTNode) -> bool:
        """The ``.grad`` read is copied or stored (``clone``, ``append``, a new name), not updated in place."""
        fa = self.ctx.analysis
        stmt = fa.enclosing_statement(read)
        text = fa.code(stmt)
        if any(k in text for k in ("clone(", "append(", "copy(", "detach(", "flatten(", "view(", "cat(", "stack(")):
            return True
        return isinstance(stmt, cst.SimpleStatementLine) and any(
            isinstance(s, cst.Assign) and any(isinstance(t.target, (cst.Name, cst.Subscript)) for t in s.targets)
            for s in stmt.body)


def _steps(body: cst.CSTNode) -> bool:
    """An optimiser's ``step()`` (or Keras' ``apply_gradients``) inside ``body``."""
    return any(isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute)
               and sub.func.attr.value in ("step", "apply_gradients") for sub in walk(body))
