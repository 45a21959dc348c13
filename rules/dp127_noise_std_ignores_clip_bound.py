"""DP127: Gaussian noise on values clipped to a bound C, with a standard deviation set independently of C."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.clipping import is_clip_bound, is_norm_value, strip_small_add
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: Gaussian draws with a location and a standard deviation
_GAUSS = frozenset({"normal", "random_normal", "gauss", "normalvariate"})
_STD_KEYWORDS = ("std", "scale", "stddev", "sigma")
#: clipping calls and the position of their bound
_CLIP_CALLS = {"clip_grad_norm_": 1, "clip_grad_norm": 1, "clip_by_norm": 1, "clip_by_global_norm": 1}
#: words of a value that carries the clip bound or a calibration (noise multiplier, sensitivity)
_CALIBRATED = frozenset({"clip", "clipping", "clipnorm", "norm", "bound", "sensitivity", "sens", "multiplier",
                         "z", "c", "calibrate", "calibrated", "compute", "get"})
#: a read of configuration: a number the user sets (``os.environ.get("STD", "0.01")``, ``float(...)``)
#: calls handed the clip bound that do not return clipped values: arithmetic, and calibration helpers
_NOT_CLIPPERS = frozenset({"min", "max", "float", "int", "abs", "round", "print", "log", "format", "str", "isinstance",
                           "setattr", "getattr", "append", "tensor", "full", "ones", "zeros", "Parameter", "sqrt"})
_CALIBRATORS = frozenset({"sigma", "std", "stddev", "noise", "scale", "multiplier", "calibrate", "calibrated",
                          "variance", "accountant", "epsilon", "eps", "budget", "privacy", "engine", "optimizer",
                          "init", "config", "set", "add", "argument", "parser"})
_CONFIG_READS = frozenset({"get", "getenv", "float", "int", "max", "min", "abs"})


def _keywords(call: cst.Call) -> dict[str, cst.BaseExpression]:
    return {a.keyword.value: a.value for a in call.args if a.keyword is not None}


def _std_of(call: cst.Call) -> cst.BaseExpression | None:
    keywords = _keywords(call)
    for key in _STD_KEYWORDS:
        if key in keywords:
            return keywords[key]
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    name = dotted(call.func) or ""
    if name.startswith(("tf.", "tensorflow.", "K.", "keras.")) or call_name(call) == "random_normal":
        return None  # (shape, mean, stddev): positional stddev is the third argument, rare
    return positional[1] if len(positional) >= 2 else None


class NoiseStdIgnoresClipBound(Rule):
    id = "DP127"
    name = "noise-std-ignores-clip-bound"
    category = "laplace_noise"
    severity = "error"
    summary = "Gaussian noise on values clipped to a bound C has a standard deviation set independently of C"
    rationale = (
        "Clipping to norm C bounds the sensitivity at C; the Gaussian mechanism's standard deviation must "
        "be σ = z·C with z the noise multiplier the accountant is run with. A standard deviation that is "
        "a number of its own — a literal, an environment variable, a constructor default, or "
        "`base / ε` — next to a clip bound set separately means the noise does not follow the bound: "
        "`noise_std = 0.001` with `max_clip_norm = 5.0` is a noise multiplier of 0.0002, and no "
        "guarantee is computed for it. Reported: in one function, values scaled by `min(1, C / norm)` "
        "(or clipped by `clip_grad_norm_(…, C)`) and a Gaussian draw whose std resolves — through "
        "locals, `self` attributes, the module's constructors and their call sites — only to numbers, "
        "configuration reads and the budget, never to C or a multiplier. Not reported: a std that is a "
        "parameter of the function (the caller may calibrate it), `z * C`, a std computed by a "
        "calibration helper. Fix: draw with std `noise_multiplier * C` and account for that multiplier."
    )
    TRIGGERS = ("clip", "Clip", "CLIP")
    requires_dp_context = True

    VALID = (
        # twins: the std is the multiplier times the clip bound (directly, through the object, through a local)
        """
import numpy as np
class Strategy:
    def __init__(self, noise_multiplier=1.1, max_clip_norm=1.0):
        self.noise_multiplier = noise_multiplier
        self.max_clip_norm = max_clip_norm
class Client:
    def fit(self, params):
        total = np.sqrt(sum(np.sum(p ** 2) for p in params))
        coef = min(1.0, self.strategy.max_clip_norm / (total + 1e-6))
        clipped = [p * coef for p in params]
        std = self.strategy.noise_multiplier * self.strategy.max_clip_norm
        return [p + np.random.normal(0, std, p.shape) for p in clipped]
""",
        """
import os
import torch
class FlClient:
    def __init__(self):
        self.clip_norm = float(os.environ.get("CLIP", "0.5"))
        self.z = float(os.environ.get("Z", "1.0"))
        self.noise_std = self.z * self.clip_norm
    def update(self, deltas):
        total = sum(torch.sum(d ** 2) for d in deltas) ** 0.5
        factor = min(1.0, self.clip_norm / (total + 1e-12))
        return [d * factor + torch.normal(mean=0.0, std=self.noise_std, size=d.shape) for d in deltas]
""",
        # the std is a parameter the caller calibrates
        """
import numpy as np
def privatize(update, clip, sigma):
    norm = np.linalg.norm(update)
    update = update * min(1.0, clip / (norm + 1e-12))
    return update + np.random.normal(0, sigma, update.shape)
""",
        # noise in a diffusion model / augmentation, gradient clipping for stability (no clip-bounded release)
        """
import torch
def train_step(model, opt, x, loss_fn):
    noise = torch.normal(mean=0.0, std=0.1, size=x.shape)
    loss = loss_fn(model(x + noise))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
""",
        # a DP module: noise on the inputs (augmentation) and gradient clipping for stability, not the release
        """
import torch
from opacus import PrivacyEngine
def train_step(model, opt, x, loss_fn, epsilon):
    noise = torch.normal(mean=0.0, std=0.1, size=x.shape)
    loss = loss_fn(model(x + noise))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
""",
        # std from a calibration helper
        """
import numpy as np
def dp_update(w, clip_norm, epsilon, delta, calibrate):
    w = w * min(1.0, clip_norm / (np.linalg.norm(w) + 1e-6))
    std = calibrate(epsilon, delta)
    return w + np.random.normal(0, std, w.shape)
""",
        # twin of the module constant: a multiplier times the bound
        """
import numpy as np
Z = 1.1
def local_update(w, w0, clip_bound, epsilon):
    delta = w - w0
    delta = delta * min(1, clip_bound / (np.linalg.norm(delta) + 1e-12))
    return w0 + delta + np.random.normal(0, Z * clip_bound, delta.shape)
""",
        # twin: the layer's noise is the multiplier times the bound handed to the clipping helper
        """
import torch
def make_dp_linear(C, noise_multiplier):
    class DPLinearFn(torch.autograd.Function):
        @staticmethod
        def backward(ctx, grad_out):
            x, w = ctx.saved_tensors
            g_w = _clipped_weight_grad(x, grad_out, C)
            g_w.add_(torch.normal(mean=0, std=noise_multiplier * C, size=g_w.shape))
            return grad_out @ w, g_w
    return DPLinearFn.apply
""",
        # ordinary ML: gradient clipping for stability through a helper, then Gaussian weight perturbation
        """
import torch
def sam_step(model, opt, max_grad_norm):
    clipped = torch.nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)
    for p in model.parameters():
        p.data.add_(torch.normal(mean=0.0, std=0.01, size=p.shape))
    opt.step()
""",
        # a std calibrated by a helper that is handed the bound
        """
import torch
def dp_layer_grad(x, grad_out, max_grad_norm, z):
    g = clip_rows(x, grad_out, max_grad_norm)
    std = noise_std_for(z, max_grad_norm)
    return g + torch.normal(mean=0.0, std=std, size=g.shape)
""",
    )

    INVALID = (
        # the std is a constructor default of the strategy object, set separately from the clip bound
        """
import numpy as np
class Strategy:
    def __init__(self, noise_std=0.1, max_clip_norm=1.0):
        self.noise_std = float(noise_std)
        self.max_clip_norm = float(max_clip_norm)
class Client:
    def fit(self, params):
        total = np.sqrt(sum(np.sum(p ** 2) for p in params))
        coef = min(1.0, self.strategy.max_clip_norm / (total + 1e-6))
        clipped = [p * coef for p in params]
        return [p + np.random.normal(0, self.strategy.noise_std, p.shape) for p in clipped]  # <-
strategy = Strategy(noise_std=0.001, max_clip_norm=5.0)
""",
        # 'automatic calibration' from ε alone, read from the environment
        """
import os
import torch
class FlClient:
    def __init__(self):
        self.clip_norm = float(os.environ.get("CLIP", "0.5"))
        self.epsilon = float(os.environ.get("EPS", "1.0"))
        self.base = float(os.environ.get("BASE_NOISE", "0.05"))
        self.noise_std = self.base / max(self.epsilon, 1e-8)  # <-
    def update(self, deltas):
        total = sum(torch.sum(d ** 2) for d in deltas) ** 0.5
        factor = min(1.0, self.clip_norm / (total + 1e-12))
        return [d * factor + torch.normal(mean=0.0, std=self.noise_std, size=d.shape) for d in deltas]
""",
        # a literal std after clip_grad_norm_ of the private gradients
        """
import torch
def dp_step(model, opt, loss, max_norm=5.0):
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    for p in model.parameters():
        p.grad += torch.normal(0.0, 0.0001, size=p.grad.shape)  # <-
    opt.step()
""",
        # a module constant over ε, beside a clip bound the function is given
        """
import numpy as np
NOISE_STD = 0.01
def local_update(w, w0, clip_bound, epsilon):
    delta = w - w0
    delta = delta * min(1, clip_bound / (np.linalg.norm(delta) + 1e-12))
    return w0 + delta + np.random.normal(0, NOISE_STD / epsilon, delta.shape)  # <-
""",
        # a custom autograd layer: the per-sample clipping helper is handed C, the noise has a literal std
        """
import torch
def make_dp_linear(C):
    class DPLinearFn(torch.autograd.Function):
        @staticmethod
        def backward(ctx, grad_out):
            x, w = ctx.saved_tensors
            g_w = _clipped_weight_grad(x, grad_out, C)
            g_w.add_(torch.normal(mean=0, std=1.0, size=g_w.shape))  # <-
            return grad_out @ w, g_w
    return DPLinearFn.apply
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        bounds = self._clip_bounds(node)
        if not bounds:
            return
        fa = self.ctx.analysis
        clipped = fa.derived_names(node, lambda v: any(
            isinstance(n, cst.Call) and any(n is c for c in self._clip_calls) for n in walk(v)))
        for sub in walk(node.body):
            if not (isinstance(sub, cst.Call) and call_name(sub) in _GAUSS):
                continue
            if not self._on_clipped(sub, node, clipped):
                continue
            std = _std_of(sub)
            if std is None or number(std) == 0:
                continue
            if not fa.in_dp_context(sub) and not self.ctx.analysis.has_dp_code():
                continue
            free = self._free(std, node, 6)
            if not free:
                continue
            code = fa.code(std).strip()
            bound = fa.code(bounds[0]).strip()
            self.report(self._where(std, sub), f"Gaussian noise of std `{code}` is added to values clipped to `{bound}`, but the std is "
                             "set independently of the clip bound (it resolves only to numbers, configuration and the "
                             "budget): the sensitivity is the bound, so the noise multiplier is std / bound, which no "
                             "accountant sees; draw with std `noise_multiplier * clip_bound`")

    def _where(self, std: cst.BaseExpression, draw: cst.Call) -> cst.CSTNode:
        """The draw, or the assignment that sets the std from the budget (``self.std = base / eps``):
        where the noise was calibrated without the bound."""
        if not isinstance(std, cst.Attribute) or not (isinstance(std.value, cst.Name) and std.value.value == "self"):
            return draw
        for value, _owner in self._attribute_values(std.attr.value):
            if any(isinstance(n, (cst.Name, cst.Attribute)) and words(n.value if isinstance(n, cst.Name)
                                                                       else n.attr.value) & {"epsilon", "eps"}
                   for n in walk(value)):
                return value
        return draw

    # ------------------------------------------------------------------ the clip bound
    def _on_clipped(self, draw: cst.Call, fn: cst.FunctionDef, clipped: set[str]) -> bool:
        """The draw perturbs the clipped values: its statement reads a name derived from the clip factor
        (``[p + normal(...) for p in clipped]``), a gradient after ``clip_grad_norm_`` (``p.grad += ...``),
        or the draw is kept in a name a later statement adds to them."""
        fa = self.ctx.analysis
        statement = fa.enclosing_statement(draw)

        def reads(stmt: cst.CSTNode) -> bool:
            for n in walk(stmt):
                if isinstance(n, cst.Name) and n.value in clipped:
                    return True
                if self._grad_clip and isinstance(n, cst.Attribute) and n.attr.value == "grad":
                    return True
            return False

        if reads(statement):
            return True
        if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
                and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
                and isinstance(statement.body[0].targets[0].target, cst.Name):
            kept = statement.body[0].targets[0].target.value
            for other in walk(fn.body):
                if isinstance(other, cst.BinaryOperation) and isinstance(other.operator, cst.Add):
                    names = {n.value for n in walk(other) if isinstance(n, cst.Name)}
                    if kept in names and (names & clipped or self._grad_clip and any(
                            isinstance(n, cst.Attribute) and n.attr.value == "grad" for n in walk(other))):
                        return True
        return False

    def _clip_bounds(self, fn: cst.FunctionDef) -> list[cst.BaseExpression]:
        out: list[cst.BaseExpression] = []
        self._clip_calls: list[cst.Call] = []
        self._grad_clip = False
        for sub in walk(fn.body):
            if not isinstance(sub, cst.Call):
                continue
            name = call_name(sub)
            if name in _CLIP_CALLS:
                keywords = _keywords(sub)
                positional = [a.value for a in sub.args if a.keyword is None]
                bound = keywords.get("max_norm", keywords.get("clip_norm",
                                     positional[_CLIP_CALLS[name]] if len(positional) > _CLIP_CALLS[name] else None))
                if bound is not None:
                    out.append(bound)
                    self._grad_clip = True
            elif name not in _NOT_CLIPPERS and not words(name or "") & _CALIBRATORS and any(
                    isinstance(a.value, (cst.Name, cst.Attribute)) and is_clip_bound(a.value) for a in sub.args
                    if not a.star):
                # a clipping helper handed the bound (``g = clip_per_sample(grads, C)``,
                # ``grad_w = _weight_grad_clipped(x, grad_out, C)``): its result is bounded by C
                bound = next(a.value for a in sub.args if not a.star
                             and isinstance(a.value, (cst.Name, cst.Attribute)) and is_clip_bound(a.value))
                out.append(bound)
                self._clip_calls.append(sub)
            elif name == "min" and len(sub.args) == 2 and number(sub.args[0].value) == 1:
                ratio = sub.args[1].value
                if isinstance(ratio, cst.BinaryOperation) and isinstance(ratio.operator, cst.Divide) \
                        and (is_norm_value(strip_small_add(ratio.right)) or is_clip_bound(ratio.left)) \
                        and not isinstance(ratio.left, (cst.Integer, cst.Float)):
                    out.append(ratio.left)
                    self._clip_calls.append(sub)
        return out

    # ------------------------------------------------------------------ is the std free of the bound?
    def _free(self, expr: cst.BaseExpression, fn: cst.FunctionDef, hops: int) -> bool:
        """True when ``expr`` resolves only to numbers, configuration reads and budget names."""
        if hops <= 0:
            return False
        if number(expr) is not None:
            return True
        if isinstance(expr, cst.SimpleString):
            return True
        if isinstance(expr, (cst.Name, cst.Attribute)):
            name = expr.value if isinstance(expr, cst.Name) else expr.attr.value
            pieces = words(name)
            if pieces & _CALIBRATED or is_clip_bound(expr):
                return False
            if pieces & {"epsilon", "eps"}:
                return True
            return self._resolve(expr, fn, hops - 1)
        if isinstance(expr, cst.BinaryOperation):
            return self._free(expr.left, fn, hops) and self._free(expr.right, fn, hops)
        if isinstance(expr, cst.Call):
            name = call_name(expr)
            if name not in _CONFIG_READS:
                return False
            if name in ("get", "getenv"):
                receiver = dotted(expr.func) or ""
                return "environ" in receiver or receiver in ("os.getenv", "getenv")
            return all(self._free(a.value, fn, hops) for a in expr.args)
        return False

    def _resolve(self, expr: cst.BaseExpression, fn: cst.FunctionDef, hops: int) -> bool:
        fa = self.ctx.analysis
        if isinstance(expr, cst.Name):
            binding = fa.binding(expr)
            if binding is None:
                return False
            if binding.kind == "param":
                return False  # the caller chooses it
            if binding.kind != "assign" or binding.value is None:
                return False
            return self._free(binding.value, fn, hops)
        assert isinstance(expr, cst.Attribute)
        attr = expr.attr.value
        values = self._attribute_values(attr)
        if not values:
            return False
        return all(self._free_value(v, hops) for v in values)

    def _attribute_values(self, attr: str) -> list[tuple[cst.BaseExpression, cst.FunctionDef | None]]:
        """Every ``self.<attr> = value`` in the module's classes."""
        fa = self.ctx.analysis
        out: list[tuple[cst.BaseExpression, cst.FunctionDef | None]] = []
        for stmt in fa.nodes(cst.Assign):
            if len(stmt.targets) != 1:
                continue
            target = stmt.targets[0].target
            if isinstance(target, cst.Attribute) and target.attr.value == attr and isinstance(target.value, cst.Name) \
                    and target.value.value == "self":
                out.append((stmt.value, fa.enclosing_function(stmt)))
        return out

    def _free_value(self, item: tuple[cst.BaseExpression, cst.FunctionDef | None], hops: int) -> bool:
        value, owner = item
        if owner is None:
            return False
        while isinstance(value, cst.Call) and call_name(value) in ("float", "int") and len(value.args) == 1:
            value = value.args[0].value  # ``self.noise_std = float(noise_std)``
        if isinstance(value, cst.Name):
            # a constructor parameter: its default and every keyword the module passes for it
            params = {p.name.value: p for p in (*owner.params.params, *owner.params.kwonly_params)}
            param = params.get(value.value)
            if param is not None:
                if param.default is None or number(param.default) is None:
                    return False
                for call in self.ctx.analysis.nodes(cst.Call):
                    for arg in call.args:
                        if arg.keyword is not None and arg.keyword.value == value.value \
                                and not self._free(arg.value, owner, hops):
                            return False
                return True
        return self._free(value, owner, hops)
