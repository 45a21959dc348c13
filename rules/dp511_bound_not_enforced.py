"""DP511: the bound a mechanism's noise assumes is never enforced: a range check that can never fire
(``any(x) > 1``) or the clamp left commented out."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, last_name, number, param_names, walk, words
from dpcheck.rule import Rule

#: calls that return a bool
_BOOL_CALLS = frozenset({"any", "all", "bool"})
#: a commented-out line that is a clamp/clip of a value (``# W = torch.clamp(W, c - r, c + r)``)
_COMMENTED_CLAMP = re.compile(
    r"^\s*#\s*(?P<code>(?:[\w.]+(?:\[[\w\s,:+\-]*\])?\s*=\s*)?[\w.]*\b(?:clamp|clamp_|clip|clip_by_norm|clip_by_value|"
    r"clip_grad_norm_|clip_grad_norm)\s*\(.*\))\s*$")
_BOUND_CALLS = frozenset({"clamp", "clamp_", "clip", "clip_by_norm", "clip_by_value", "clip_grad_norm_",
                          "clip_grad_norm", "minimum", "maximum", "min", "max", "clip_", "normalize"})
_EPS_WORDS = frozenset({"eps", "epsilon"})
#: calls that return a bounded (or sorted) copy and leave their argument as it was
_COPYING_BOUNDS = frozenset({"clip", "clamp", "clip_by_value", "clip_by_norm", "minimum", "maximum", "sort",
                             "sorted", "clip_by_global_norm"})
#: receivers whose ``sort`` / ``clip`` are module functions, not in-place methods
_ARRAY_MODULES = frozenset({"np", "numpy", "torch", "jnp", "tf", "math"})


def _ast_discarded_bound(stmt: ast.Expr) -> bool:
    call = stmt.value
    if not isinstance(call, ast.Call):
        return False
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name in _COPYING_BOUNDS


def _never(op: cst.BaseCompOp, value: float) -> str | None:
    """What a bool (0 or 1) compared with ``value`` by ``op`` always gives, if it is fixed."""
    if isinstance(op, cst.GreaterThan):
        return "False" if value >= 1 else "True" if value < 0 else None
    if isinstance(op, cst.GreaterThanEqual):
        return "False" if value > 1 else "True" if value <= 0 else None
    if isinstance(op, cst.LessThan):
        return "False" if value <= 0 else "True" if value > 1 else None
    if isinstance(op, cst.LessThanEqual):
        return "False" if value < 0 else "True" if value >= 1 else None
    if isinstance(op, cst.Equal):
        return "False" if value not in (0, 1) else None
    return None


def _ast_bool_compare(node: ast.Compare) -> bool:
    left = node.left
    return isinstance(left, ast.Call) and (
        isinstance(left.func, ast.Name) and left.func.id in _BOOL_CALLS
        or isinstance(left.func, ast.Attribute) and left.func.attr in _BOOL_CALLS) and any(
        isinstance(c, ast.Constant) and isinstance(c.value, (int, float)) and not isinstance(c.value, bool)
        for c in node.comparators)


#: torch's in-place clips of the ``.grad`` of the tensors they are given
_GRAD_CLIPS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"})
#: values that are tensors without a ``.grad`` of their own (gradients, copies, concatenations)
_PLAIN_TENSOR_CALLS = frozenset({"cat", "stack", "clone", "detach", "view", "reshape", "flatten", "grad",
                                 "gradient", "concat", "concatenate", "hstack", "vstack", "zeros_like", "tensor"})
_GRAD_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "g"})
_PARAM_WORDS = frozenset({"param", "params", "parameters", "parameter", "weights", "model", "net", "module"})


def _ast_grad_clip(node: ast.Call) -> bool:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _GRAD_CLIPS


class BoundNotEnforced(Rule):
    id = "DP511"
    name = "bound-not-enforced"
    category = "general"
    severity = "error"
    summary = ("the bound the noise is calibrated for is never enforced: a range check that cannot fire "
               "(`any(x) > 1`), a clamp left commented out, or `clip_grad_norm_` given a tensor with no "
               "`.grad` or called before `backward()`")
    rationale = (
        "A mechanism's noise is calibrated to a sensitivity that holds only for inputs inside a "
        "bound (unit-norm columns, weights in [c-r, c+r], values in [lo, hi]). When the check or "
        "clamp that enforces it does nothing, one record outside the bound moves the output by more "
        "than the noise covers and the guarantee is void. Two spellings: a check that compares a "
        "bool with a number (`if any(norms) > 1: raise ...`: `any()` is 0 or 1, never above 1, so "
        "the check never fires; likewise `all(x) > c`, `any(x) == 2`), and a clamp or clip commented "
        "out (`# W = torch.clamp(W, c - r, c + r)`) in a function that perturbs its input under ε "
        "with no other clamp. Not reported: a bool compared with 0 or 1 in a way that can hold, a "
        "commented clamp when the function clamps elsewhere, functions that draw no noise and use "
        "no ε, a check outside a function that draws noise or takes ε, code with no DP context. "
        "A commented clamp also counts in a helper whose name promises the clamp "
        "(`discounted_and_clamped`) or whose caller perturbs, when the module perturbs under ε. "
        "Two more spellings of a clip that clips nothing: torch's `clip_grad_norm_`/"
        "`clip_grad_value_` rescale the `.grad` of the tensors they are given, so given a gradient, "
        "a copy (`g.detach().clone()`), a concatenation (`torch.cat(...)`) or `autograd.grad`'s "
        "result they change nothing; and called before `loss.backward()` (with the optimizer step "
        "after it) they clip the previous, zeroed gradients. "
        "A clip whose result is dropped (`np.clip(x, lo, hi)`, `x.clamp(-C, C)`, `tf.clip_by_value(...)`, "
        "`np.sort(data)` as a bare statement, in a function that takes ε or draws noise) bounds a copy "
        "nobody reads. Not reported there: in-place forms (`clamp_`, `out=`, `inplace=True`, "
        "`x.sort()`). "
        "Fix: compare inside the call (`any(norms > 1)`), and clamp (or raise) before the noise; assign the "
        "clipped value."
    )
    TRIGGERS = ("any(", "all(", "bool(", "clamp", "clip", "sort", "minimum", "maximum")

    def visit_Expr(self, node: cst.Expr) -> None:
        """``np.clip(x, lo, hi)`` / ``np.sort(data)`` / ``x.clamp(-C, C)`` as a statement: the bounded copy is
        dropped and the mechanism reads the raw values."""
        call = node.value
        if not isinstance(call, cst.Call) or call_name(call) not in _COPYING_BOUNDS or not call.args:
            return
        func = call.func
        if any(a.keyword is not None and a.keyword.value in ("out", "inplace") for a in call.args):
            return
        positional = [a for a in call.args if a.keyword is None]
        module_call = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
            and func.value.value in _ARRAY_MODULES
        # numpy's positional ``out``: np.maximum(a, b, out), np.clip(a, lo, hi, out), a.clip(lo, hi, out)
        if len(positional) >= (3 if call_name(call) in ("minimum", "maximum") or not module_call else 4):
            return
        if not self.ctx.analysis.in_dp_context(node):
            return
        if isinstance(func, cst.Attribute):
            module = isinstance(func.value, cst.Name) and func.value.value in _ARRAY_MODULES
            if call_name(call) in ("sort", "minimum", "maximum") and not module:
                return  # list.sort() / ndarray.sort() sort in place
            if module and call_name(call) == "sort" and func.value.value == "math":
                return
        elif call_name(call) != "sorted":
            return  # a bare ``clip(x)`` may be the module's own in-place helper
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None or not self._noising_function(fn):
            return
        fa = self.ctx.analysis
        self.report(node, f"the result of `{fa.code(call).strip()}` is discarded: the call returns a bounded (or "
                          f"sorted) copy and leaves its argument as it was, so the code below reads the raw "
                          f"values and the sensitivity the noise assumes does not hold; assign the result")

    @staticmethod
    def _noising_function(fn: cst.FunctionDef) -> bool:
        if any(words(p) & (_EPS_WORDS | {"rho", "budget", "sensitivity"}) for p in param_names(fn)):
            return True
        return any(isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS for n in walk(fn, into_scopes=False))

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) not in _GRAD_CLIPS or not node.args:
            return
        fa = self.ctx.analysis
        if not fa.in_dp_context(node):
            return
        target = node.args[0].value
        plain = self._plain_tensor(target)
        if plain:
            self.report(node, f"`{call_name(node)}` clips the `.grad` of the tensors it is given, but "
                              f"`{fa.code(target).strip()}` is {plain} with no `.grad` of its own, so nothing is "
                              f"clipped and the noise calibrated to the clip bound covers unbounded values; "
                              f"scale the tensor itself (`g * min(1, C / g.norm())`)")
            return
        late = self._backward_after(node)
        if late is not None:
            self.report(node, f"`{call_name(node)}` runs before `{fa.code(late).strip()}`: it clips the "
                              f"previous (zeroed) gradients, and the gradient the optimizer applies is never "
                              f"clipped, so the bound the noise assumes does not hold; clip after backward()")

    def _plain_tensor(self, target: cst.BaseExpression) -> str | None:
        """What makes ``target`` a tensor (or tensors) without a ``.grad``: a gradient, a copy, a
        concatenation; None when it may be parameters."""
        fa = self.ctx.analysis
        values = [target]
        if isinstance(target, cst.Name):
            values.extend(fa.referents(target))
        for value in values:
            if isinstance(value, cst.Attribute) and value.attr.value == "grad":
                return "a gradient"
            if isinstance(value, (cst.ListComp, cst.GeneratorExp)) and isinstance(value.elt, cst.Attribute) \
                    and value.elt.attr.value == "grad":
                return "a list of gradients"
            if isinstance(value, cst.Call) and call_name(value) in _PLAIN_TENSOR_CALLS:
                inner = value.func.value if isinstance(value.func, cst.Attribute) else None
                if call_name(value) in ("view", "reshape", "flatten", "detach", "clone") and inner is not None \
                        and words(fa.code(inner)) & _PARAM_WORDS and not words(fa.code(inner)) & _GRAD_WORDS:
                    continue
                return f"the result of `{call_name(value)}()`"
        if isinstance(target, cst.Name) and words(target.value) & _GRAD_WORDS \
                and not words(target.value) & _PARAM_WORDS and not fa.referents(target):
            return "a gradient"
        return None

    def _backward_after(self, clip: cst.Call) -> cst.CSTNode | None:
        """The ``loss.backward()`` that follows the clip in the same block, with no clip between it
        and the next ``step()``."""
        fa = self.ctx.analysis
        stmt = fa.enclosing_statement(clip)
        if isinstance(fa.parent(stmt), cst.SimpleStatementLine):
            stmt = fa.parent(stmt)
        block = fa.parent(stmt)
        body = getattr(block, "body", None)
        if not isinstance(body, (list, tuple)) or stmt not in body:
            return None
        before = list(body)[:list(body).index(stmt)]
        for earlier in reversed(before):
            # the clip follows this step's own backward(): it clips fresh gradients (a GAN's D step, then G's)
            names = {call_name(n) for n in walk(earlier, into_scopes=False) if isinstance(n, cst.Call)}
            if "step" in names or "zero_grad" in names:
                break
            if "backward" in names:
                return None
        after = list(body)[list(body).index(stmt) + 1:]
        backward = None
        for later in after:
            calls = [n for n in walk(later, into_scopes=False) if isinstance(n, cst.Call)]
            names = {call_name(n) for n in calls}
            if backward is None:
                if names & _GRAD_CLIPS:
                    return None
                found = next((n for n in calls if call_name(n) == "backward"), None)
                if found is not None:
                    backward = found
                continue
            if names & _GRAD_CLIPS or names & {"clip_by_norm", "clamp", "clamp_", "clip"}:
                return None
            if "step" in names:
                return backward
        return None
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a comparison of a bool-returning call with a number, or a commented-out
        clamp/clip line."""
        if any(_ast_bool_compare(c) for c in facts.nodes(ast.Compare)):  # type: ignore[arg-type]
            return True
        if any(_ast_grad_clip(c) for c in facts.nodes(ast.Call)):  # type: ignore[arg-type]
            return True
        if any(_ast_discarded_bound(e) for e in facts.nodes(ast.Expr)):  # type: ignore[arg-type]
            return True
        return any(_COMMENTED_CLAMP.match(line) for line in facts.source.splitlines() if "#" in line)

    VALID = (
        # numpy's positional out (the result is written in place)
        """
import numpy as np
def responsibilities(R, A, tmp, epsilon):
    np.maximum(R, 0, tmp)
    tmp.clip(0, np.inf, tmp)
    return tmp + np.random.laplace(0, 1 / epsilon, tmp.shape)
""",
        # the clipped copy assigned; in-place methods
        """
import numpy as np
def dp_sum(values, lower, upper, epsilon):
    values = np.clip(values, lower, upper)
    return values.sum() + np.random.laplace(0, (upper - lower) / epsilon)
""",
        """
import torch
def private_mean(x, bound, eps):
    x.clamp_(-bound, bound)
    return x.mean() + torch.distributions.Laplace(0.0, 2 * bound / (eps * len(x))).sample()
""",
        """
import numpy as np
def dp_median_scores(data, candidates, epsilon):
    data.sort()
    np.clip(data, 0, 1, out=data)
    ranks = np.searchsorted(data, candidates)
    return -np.abs(ranks - len(data) / 2)
""",
        # the comparison inside any()
        """
import numpy as np
def dp_pca(data, epsilon, delta):
    if any(np.linalg.norm(data, axis=0) > 1):
        raise ValueError("columns must have norm at most 1")
    return data @ data.T + np.random.normal(0, np.sqrt(2 * np.log(1.25 / delta)) / epsilon, (len(data), len(data)))
""",
        # a bool compared with 0: can hold
        """
def check(values, epsilon):
    if all(v >= 0 for v in values) == 0:
        raise ValueError("negative value")
""",
        # an always-true assertion in numerical code: no mechanism relies on it
        """
def trust_region(vmultc, mcon, sigma, delta):
    assert all(vmultc[:mcon]) >= 0
    return vmultc * sigma + delta
""",
        # a commented clamp, but the function clamps anyway
        """
import math, torch
def perturb(W, c, r, eps):
    # W = torch.clamp(W, c - r, c + r)
    W = W.clamp(c - r, c + r)
    coff = (math.exp(eps) + 1) / (math.exp(eps) - 1)
    return torch.where(torch.rand(len(W)) < (W - c) / coff + r, c + r * coff, c - r * coff)
""",
        # clip_grad_norm_ on the parameters after backward
        """
import torch
def dp_local_step(model, loss, optimizer, max_grad_norm, sigma):
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    for p in model.parameters():
        p.grad += torch.normal(0, sigma * max_grad_norm, p.grad.shape)
    optimizer.step()
""",
        # a per-example gradient scaled by its own clip factor (not clip_grad_norm_)
        """
import torch
def clip_and_noise(per_sample_grad, max_grad_norm, noise_multiplier):
    g = per_sample_grad.detach().clone()
    g = g * min(1.0, max_grad_norm / (g.norm() + 1e-6))
    return g + torch.normal(0, noise_multiplier * max_grad_norm, g.shape)
""",
        # a named list of parameters
        """
from torch.nn.utils import clip_grad_norm_
def private_update(net, loss, opt, clip, sigma):
    params = [p for p in net.parameters() if p.requires_grad]
    loss.backward()
    clip_grad_norm_(params, clip)
    opt.step()
""",
        # a commented clip in a function that releases nothing
        """
import numpy as np
def normalise(x):
    # x = np.clip(x, 0, 1)
    return x / x.sum()
""",
        # a GAN step: D's gradients clipped after D's backward; the later backward belongs to G's step
        """
import torch
def train_dp_gan(G, D, opt_G, opt_D, loader, bce, clip_norm, sigma, noise_dim):
    for xb, yb in loader:
        opt_D.zero_grad()
        fake = G(torch.randn(xb.size(0), noise_dim), yb).detach()
        loss_D = bce(D(xb, yb), torch.ones(len(xb), 1)) + bce(D(fake, yb), torch.zeros(len(xb), 1))
        loss_D.backward()
        torch.nn.utils.clip_grad_norm_(D.parameters(), max_norm=clip_norm)
        for p in D.parameters():
            p.grad.add_(torch.randn_like(p.grad) * sigma * clip_norm)
        opt_D.step()
        opt_G.zero_grad()
        loss_G = bce(D(G(torch.randn(xb.size(0), noise_dim), yb), yb), torch.ones(len(xb), 1))
        loss_G.backward()
        opt_G.step()
""",
    )

    INVALID = (
        # np.clip's result dropped before the Laplace sum
        """
import numpy as np
def dp_sum(values, lower, upper, epsilon):
    np.clip(values, lower, upper)  # <-
    return values.sum() + np.random.laplace(0, (upper - lower) / epsilon)
""",
        # a torch clamp method (not clamp_) as a statement
        """
import torch
def private_mean(x, bound, eps):
    x.clamp(-bound, bound)  # <-
    return x.mean() + torch.distributions.Laplace(0.0, 2 * bound / (eps * len(x))).sample()
""",
        # np.sort discarded before a rank-based selection
        """
import numpy as np
def dp_median_scores(data, candidates, epsilon):
    np.sort(data)  # <-
    ranks = np.searchsorted(data, candidates)
    return -np.abs(ranks - len(data) / 2)
""",
        # dp-federated_sharing dp_pca.py: any() compared with 1
        """
import numpy as np
def dp_pca_ag(data, epsilon=1.0, delta=0.1):
    if any(np.diag(np.dot(data.transpose(), data))) > 1:  # <-
        print('ERROR: Each column in the data matrix should have 2-norm bounded in [0,1].')
        return
    D = (1.0 / epsilon) * np.sqrt(2.0 * np.log(1.25 / delta))
    return np.dot(data, data.transpose()) + np.random.normal(0, D, (len(data), len(data)))
""",
        """
import numpy as np
def dp_mean(x, epsilon, lower, upper):
    if np.all(x >= lower) < 0 or all(x <= upper) > 1:  # <-
        raise ValueError("out of range")
    return x.mean() + np.random.laplace(0, (upper - lower) / (len(x) * epsilon))
""",
        # LDPFL-Attack LDP_FL.py: the clamp to [c-r, c+r] is commented out
        """
import math, torch
def data_pertubation(W, c: float, r: float, eps: float):
    sz = len(W)
    with torch.no_grad():
        # torch.clamp(W, min=c-r, max=c+r)
        coff = (math.exp(eps) + 1) / (math.exp(eps) - 1)  # <-
        Pb = (((W - c) / coff) + r)
        cmp = torch.gt(Pb, torch.rand(sz) * 2.0 * r)
        return cmp * (c + r * coff) + (~cmp) * (c - r * coff)
""",
        """
import numpy as np
def privatize(values, lo, hi, epsilon):
    #values = np.clip(values, lo, hi)
    return values.sum() + np.random.laplace(0, (hi - lo) / epsilon)  # <-
""",
        # a function promising the clamp, its clamp commented out, feeding the module's mechanism
        """
import numpy as np
def centred_and_clamped(R, mean, B):
    out = R - mean
    # out = np.clip(out, -B, B)
    return out  # <-

def input_perturbation(R, sensitivity, epsilon):
    return R + np.random.laplace(0, sensitivity / epsilon, R.shape)
""",
        # clip_grad_norm_ on a concatenated gradient (a tensor with no .grad)
        """
import torch
from torch.nn.utils import clip_grad_norm_
def sanitize(grads, max_grad_norm, noise_multiplier):
    flat = torch.cat([g.view(-1) for g in grads])
    clip_grad_norm_(flat, max_norm=max_grad_norm)  # <-
    return flat + torch.normal(0, noise_multiplier * max_grad_norm, flat.shape)
""",
        # on a per-sample copy of a gradient
        """
import torch
def dp_sgd_step(model, batch, loss_fn, max_grad_norm, sigma):
    for x, y in batch:
        loss_fn(model(x), y).backward()
        for p in model.parameters():
            g = p.grad.detach().clone()
            torch.nn.utils.clip_grad_norm_(g, max_grad_norm)  # <-
            p.acc.append(g)
""",
        # on the gradients returned by autograd (tensors with no .grad)
        """
import torch
def private_grads(loss, params, clip, sigma):
    grads = torch.autograd.grad(loss, params)
    torch.nn.utils.clip_grad_value_(grads, clip)  # <-
    return [g + sigma * clip * torch.randn_like(g) for g in grads]
""",
        # a GAN's D step that clips before its own backward (the earlier backward was G's, already stepped)
        """
import torch
def train_dp_gan(G, D, opt_G, opt_D, loader, bce, clip_norm, sigma, noise_dim):
    for xb, yb in loader:
        opt_G.zero_grad()
        loss_G = bce(D(G(torch.randn(xb.size(0), noise_dim), yb), yb), torch.ones(len(xb), 1))
        loss_G.backward()
        opt_G.step()
        opt_D.zero_grad()
        loss_D = bce(D(xb, yb), torch.ones(len(xb), 1))
        torch.nn.utils.clip_grad_norm_(D.parameters(), max_norm=clip_norm)  # <-
        loss_D.backward()
        for p in D.parameters():
            p.grad.add_(torch.randn_like(p.grad) * sigma * clip_norm)
        opt_D.step()
""",
        # clipped before backward: the applied gradient is never clipped
        """
import torch
def local_train(net, loader, opt, loss_fn, C, sigma):
    '''Local training of a differentially private client.'''
    for x, y in loader:
        loss = loss_fn(net(x), y)
        torch.nn.utils.clip_grad_norm_(net.parameters(), C)  # <-
        loss.backward()
        opt.step()
        opt.zero_grad()
""",
    )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        left = node.left
        if not isinstance(left, cst.Call) or call_name(left) not in _BOOL_CALLS:
            return
        for target in node.comparisons:
            value = number(target.comparator)
            if value is None:
                continue
            result = _never(target.operator, value)
            if result is None or not self.ctx.analysis.in_dp_context(node) or not self._mechanism_scope(node):
                continue
            fa = self.ctx.analysis
            self.report(node, f"`{fa.code(left).strip()}` is a bool (0 or 1), so comparing it with {value:g} is "
                              f"always {result}: the bound this check should enforce is never checked; compare "
                              f"inside the call (`{call_name(left)}(x > {value:g})`)")
            return

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        text = fa.code(node)
        if "#" not in text:
            return
        lines = text.splitlines()
        commented = [i for i, line in enumerate(lines) if _COMMENTED_CLAMP.match(line)]
        if not commented:
            return
        body = list(walk(node.body, into_scopes=False))
        if any(isinstance(n, cst.Call) and call_name(n) in _BOUND_CALLS for n in body):
            return
        promised = bool(words(node.name.value) & {"clamp", "clamped", "clip", "clipped", "bound", "bounded"})
        if not self._perturbs(body) and not self._perturbing_caller(node, promised):
            return
        code = _COMMENTED_CLAMP.match(lines[commented[0]]).group("code")  # type: ignore[union-attr]
        self.report(self._statement_after(node, lines, commented[0]) or node,
                    f"`{code.strip()}` is commented out: the function perturbs its input under ε as if it "
                    f"were inside that bound, but nothing enforces it, so one value outside moves the "
                    f"output by more than the noise covers; clamp before the mechanism")

    def _mechanism_scope(self, node: cst.CSTNode) -> bool:
        """The check sits in a function that draws noise or takes ε (a bound a mechanism relies on)."""
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None:
            return False
        if any(words(p) & {"epsilon", "rho"} for p in param_names(fn)):
            return True
        return any(isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS for n in walk(fn, into_scopes=False))

    def _perturbing_caller(self, fn: cst.FunctionDef, promised: bool) -> bool:
        """A function of the module that calls ``fn`` (and clamps nothing itself) perturbs under ε,
        or ``fn``'s name promises the clamp and the module perturbs under ε: the commented clamp
        was the bound that noise relies on."""
        for caller in self.ctx.analysis.nodes(cst.FunctionDef):
            if caller is fn:
                continue
            body = list(walk(caller.body, into_scopes=False))  # type: ignore[attr-defined]
            if promised:
                if self._perturbs(body):
                    return True
                continue
            if not any(isinstance(n, cst.Call) and call_name(n) == fn.name.value for n in body):
                continue
            if any(isinstance(n, cst.Call) and call_name(n) in _BOUND_CALLS for n in body):
                continue
            if self._perturbs(body):
                return True
        return False

    @staticmethod
    def _perturbs(body: list[cst.CSTNode]) -> bool:
        """Draws noise or randomises with ``exp(eps)``."""
        for n in body:
            if isinstance(n, cst.Call):
                name = call_name(n)
                if name in PURE_DRAWS or name in ("rand", "random", "uniform", "binomial", "bernoulli"):
                    if any(words(last_name(m) or "") & _EPS_WORDS for m in walk(n) if isinstance(m, cst.Name)) \
                            or any(isinstance(m, cst.Call) and call_name(m) == "exp" for m in body):
                        return True
                if name == "exp" and n.args and any(
                        isinstance(m, cst.Name) and words(m.value) & _EPS_WORDS for m in walk(n.args[0].value)):
                    return any(isinstance(m, cst.Call) and (call_name(m) in PURE_DRAWS or call_name(m) in (
                        "rand", "random", "uniform", "binomial", "bernoulli", "choice")) for m in body)
        return False

    def _statement_after(self, fn: cst.FunctionDef, lines: list[str], index: int) -> cst.CSTNode | None:
        """The first statement of ``fn`` on a line after the commented one (the report's anchor: a
        comment is no node)."""
        fa = self.ctx.analysis
        first = fa.line_of(fn)
        # the node's code starts with its leading blank lines and decorators, its line at ``def``
        head = next((i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))), 0)
        wanted = first + index - head
        best: tuple[int, cst.CSTNode] | None = None
        for n in walk(fn.body, into_scopes=False):
            if isinstance(n, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                line = fa.line_of(n)
                if line > wanted and (best is None or line < best[0]):
                    best = (line, n)
        return best[1] if best else None
