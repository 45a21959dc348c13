"""Plain (non-private) optimizers beside DP training in one module, read with CPython's ``ast``.

The role: a module trains some model with differential privacy — a DP optimizer class
(``DPAdamGaussianOptimizer``, ``DPKerasSGDOptimizer``, Opacus' ``DPOptimizer``), an engine's
``make_private``/``attach``, optax's ``differentially_private_aggregate``, or noise added to the
``.grad`` of a model's parameters by hand — and another optimizer that is *not* one of those steps a
loss computed from the records themselves. The guarantee reported for the pipeline covers the DP
model only; the plainly trained one (an autoencoder whose decoder generates, an embedder, a
pretrained encoder) has memorised the same records.

``plain_steps(tree)`` returns one ``PlainStep`` per such optimizer. The data a loss reads is followed
through the function's assignments (and the module's, for TF1 graphs): a loop variable over an
iterable, a parameter, a ``tf.placeholder``, a loaded array. Not followed: the arguments of a call of
the DP-trained model (a generator's loss reaches the records only through the private discriminator),
sizes (``x.size(0)``, ``x.shape``, ``len(x)``), values named public, synthetic, generated or test.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from dpcheck.analysis.astfacts import func_name
from dpcheck.analysis.astnames import dotted
from dpcheck.analysis.vocabulary import ACCOUNTANT_CALL

#: optimizer classes and factories that take plain gradient steps
_PLAIN = frozenset({
    "Adam", "AdamW", "SGD", "RMSprop", "RMSProp", "Adagrad", "Adadelta", "Adamax", "NAdam", "Nadam", "RAdam",
    "SparseAdam", "LBFGS", "ASGD", "Rprop", "Ftrl", "AdamOptimizer", "GradientDescentOptimizer",
    "RMSPropOptimizer", "AdagradOptimizer", "MomentumOptimizer", "AdadeltaOptimizer", "FtrlOptimizer",
    "AdamWOptimizer",
})
#: optax / flax factories (lower case: only with their module as qualifier)
_PLAIN_LOWER = frozenset({"adam", "adamw", "sgd", "rmsprop", "adagrad", "adabelief", "lamb", "lion", "nadam"})
_LOWER_QUALIFIERS = frozenset({"optax", "optim", "optimizers"})
#: Keras' optimizer strings
_PLAIN_STRINGS = frozenset({"adam", "sgd", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "adamw"})
#: calls that build a DP optimizer or make one private
_DP_CALL = re.compile(
    r"^(?:make_private\w*|attach|(?:DP|Dp|dp_?)\w*(?:Optimizer|SGD|Adam|Adagrad|RMSProp|RMSprop|Sequential|Model|Engine)|"
    r"(?:Noisy|Private|Priv)_?(?:Optimizer|SGD|Adam|AdamW|Adagrad|RMSProp|RMSprop)\w*|"
    r"Vectorized_?DP\w*|\w*DPOptimizer\w*|\w*DPKeras\w*|GradSampleModule|"
    r"differentially_private_aggregate|dpsgd\w*|DPSGD\w*|make_optimizer_class|make_keras_optimizer_class|"
    r"make_\w*dp\w*_optimizer|privatize\w*|GenericDPOptimizer|PrivacyEngine)$")
#: draws that are gradient noise when added to ``.grad``
_DRAWS = frozenset({"normal", "normal_", "randn", "randn_like", "laplace", "gaussian", "normal_like",
                    "random_normal", "gauss", "standard_normal"})
#: names of values that are not the private records
_PUBLIC_WORDS = frozenset({"public", "pub", "synthetic", "syn", "synth", "fake", "gen", "generated", "test", "val",
                           "valid", "validation", "eval", "aux", "auxiliary", "noise", "z", "latent", "random", "rand",
                           "dummy", "reference", "ref", "holdout", "heldout", "teacher", "teachers", "student"})
#: functions or classes for a non-private mode, a baseline or an evaluation
_NON_PRIVATE_WORDS = frozenset({"nonprivate", "nondp", "nodp", "non", "baseline", "vanilla", "plain", "public",
                                "eval", "evaluate", "evaluation", "test", "tests", "utility", "metric", "metrics",
                                "score", "benchmark", "classifier_accuracy", "tstr", "trtr", "downstream", "centralized",
                                "centralised", "central", "nonpriv", "reference", "oracle", "upper"})
#: models that never read the records directly in a GAN: their loss goes through the discriminator
_GENERATOR_WORDS = frozenset({"g", "gen", "generator", "netg", "generators", "z", "latent", "noise"})
#: parameter names that are no records: models, optimizers, hyper-parameters
_NOT_DATA = frozenset({"self", "cls", "args", "opt", "opts", "config", "cfg", "conf", "params", "param", "weights",
                       "model", "net", "optimizer", "optim", "lr", "epochs", "epoch", "steps", "step", "device",
                       "sigma", "clip", "eps", "epsilon", "delta", "state", "hparams", "kwargs", "logger", "writer",
                       "encoder", "decoder", "generator", "discriminator", "G", "D", "ae", "vae", "flow", "critic"})
#: word pieces of a data value (loaded arrays are recognised by these only)
_DATA_WORDS = frozenset({"x", "data", "batch", "real", "train", "inputs", "input", "images", "image", "imgs", "img",
                         "features", "feats", "records", "rows", "samples", "seq", "seqs", "sequences", "df",
                         "table", "private", "priv", "dataset", "loader", "examples", "tokens", "text", "sentences"})
#: calls that load records from a file or a data set
_LOADS = frozenset({"load", "read", "fetch", "loader", "dataset", "data", "csv", "split"})
_SIZES = frozenset({"size", "shape", "len", "numel", "dim", "ndim", "__len__", "device", "dtype", "new_zeros",
                    "zeros_like", "ones_like", "new_ones", "new_full", "full_like"})

_WORD = re.compile(r"[a-z]+|[A-Z][a-z]*")


def _words(name: str) -> frozenset[str]:
    out = set()
    for part in name.replace(".", "_").split("_"):
        out |= {w.lower() for w in _WORD.findall(part)} if part and not part.isupper() else {part.lower()}
    return frozenset(w for w in out if w)


def _key(node: ast.AST) -> str | None:
    """``opt`` / ``self.ae_opt``: the place an optimizer is kept."""
    d = dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    return d or None


def _plain_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = func_name(node.func)
    if name in _PLAIN:
        return True
    if name in _PLAIN_LOWER and isinstance(node.func, ast.Attribute):
        q = func_name(node.func.value)
        return q in _LOWER_QUALIFIERS
    return False


def _dp_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and bool(_DP_CALL.match(func_name(node.func))) and func_name(node.func) not in (
        "DataLoader", "DataParallel", "DDP", "DistributedDataParallel")


def _has_dp(node: ast.AST) -> bool:
    return any(_dp_call(n) for n in ast.walk(node))


def _wraps_dp(node: ast.AST) -> bool:
    """A DP call given something to make private (an optimizer, a model, parameters)."""
    return any(_dp_call(n) and (n.args or n.keywords) for n in ast.walk(node))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class PlainStep:
    line: int          #: where the plain optimizer steps (or is handed to the function that steps it)
    optimizer: str     #: its name
    data: str          #: the record value its loss reads
    step_line: int
    dp_line: int       #: the DP training the module holds


def _model_of_params(expr: ast.AST) -> set[str]:
    """``D.parameters()``, ``self.D.trainable_variables`` -> {"D"} / {"self.D"}."""
    out = set()
    for n in ast.walk(expr):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("parameters",
                                                                                             "named_parameters"):
            k = _key(n.func.value)
            if k:
                out.add(k)
        if isinstance(n, ast.Attribute) and n.attr in ("trainable_variables", "trainable_weights", "variables"):
            k = _key(n.value)
            if k:
                out.add(k)
    return out


def _grad_noise(node: ast.AST) -> bool:
    """``p.grad += torch.normal(…)`` / ``p.grad.add_(noise_draw)`` / ``p.grad = p.grad + randn(…)``."""
    def draws(e: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and func_name(c.func) in _DRAWS for c in ast.walk(e))
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Attribute) and node.target.attr == "grad":
        return draws(node.value) or isinstance(node.value, ast.Name) and "noise" in _words(node.value.id)
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets):
        return draws(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("add_", "add") \
            and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "grad":
        return any(draws(a) or isinstance(a, ast.Name) and "noise" in _words(a.id) for a in node.args)
    return False


class _Module:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: dict[ast.AST, ast.AST] = {}
        for p in ast.walk(tree):
            for c in ast.iter_child_nodes(p):
                self.parents[c] = p
        self.dp_line = 0
        self.wrapped: set[str] = set()
        self.dp_models: set[str] = set()
        self.noise_models: set[str] = set()
        self.dp_nodes: list[ast.AST] = []
        for n in ast.walk(tree):
            if _dp_call(n):
                assert isinstance(n, ast.Call)
                name = func_name(n.func)
                if name == "attach" and not (any(_key(a) for a in n.args) and isinstance(n.func, ast.Attribute)
                                             and _words(_key(n.func.value) or "") & {"privacy", "engine", "pe"}):
                    continue
                self.dp_line = self.dp_line or n.lineno
                self.dp_nodes.append(n)
                for a in (*n.args, *(k.value for k in n.keywords)):
                    for s in ast.walk(a):
                        k = _key(s)
                        if k:
                            self.wrapped.add(k)
                    self.dp_models |= _model_of_params(a)
                for kw in n.keywords:
                    if kw.arg in ("module", "model") and _key(kw.value):
                        self.dp_models.add(_key(kw.value))  # type: ignore[arg-type]
                if name == "PrivacyEngine" and n.args and _key(n.args[0]):
                    self.dp_models.add(_key(n.args[0]))  # type: ignore[arg-type]
                parent = self.parents.get(n)
                # ``clf.compile(optimizer=DPKeras…)`` : clf is the DP model
                if isinstance(parent, ast.keyword) and isinstance(self.parents.get(parent), ast.Call):
                    outer = self.parents[parent]
                    if isinstance(outer.func, ast.Attribute) and outer.func.attr == "compile" and _key(outer.func.value):
                        self.dp_models.add(_key(outer.func.value))  # type: ignore[arg-type]
            elif _grad_noise(n):
                self.dp_line = self.dp_line or n.lineno
                self.dp_nodes.append(n)
                loop = self._loop_over_params(n)
                if loop:
                    self.noise_models |= loop
        self.dp_models |= self.noise_models
        # a wrapper's result bound to a name: ``dp_opt = DPOptimizer(opt)`` — that name is DP as well
        for n in ast.walk(tree):
            if isinstance(n, ast.Assign) and _has_dp(n.value):
                for t in n.targets:
                    for s in ast.walk(t):
                        k = _key(s)
                        if k:
                            self.wrapped.add(k)
        # an optimizer kept in a list (or dict) that is handed to a wrapper: ``opts.append(opt)``
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("append", "extend") \
                    and _key(n.func.value) in self.wrapped:
                for a in n.args:
                    k = _key(a)
                    if k:
                        self.wrapped.add(k)
        self.dp_last = {k.rsplit(".", 1)[-1] for k in self.dp_models}

    def _loop_over_params(self, node: ast.AST) -> set[str]:
        p = self.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            if isinstance(p, ast.For):
                return _model_of_params(p.iter)
            p = self.parents.get(p)
        return set()

    def unit(self, node: ast.AST) -> ast.AST:
        """The class a method belongs to, else the function, else the module: one training pipeline."""
        scope = self.scope(node)
        p = self.parents.get(scope) if scope is not self.tree else None
        while p is not None and not isinstance(p, (ast.ClassDef, ast.Module)):
            if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope = p
            p = self.parents.get(p)
        return p if isinstance(p, ast.ClassDef) else scope

    def dp_in(self, unit: ast.AST, line: int | None = None) -> int:
        """Line of DP training inside ``unit`` (0 when none)."""
        for d in self.dp_nodes:
            if self.unit(d) is unit or unit is self.tree and self.scope(d) is self.tree:
                return d.lineno  # type: ignore[attr-defined]
        if line is None and isinstance(unit, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # a helper the DP pipeline calls: ``encoder = pretrain(enc, private_loader)`` beside ``make_private``
            for c in ast.walk(self.tree):
                if isinstance(c, ast.Call) and func_name(c.func) == unit.name:
                    caller = self.unit(c)
                    if caller is not unit:
                        found = self.dp_in(caller, 0)
                        if found:
                            return found
        return 0

    def scope(self, node: ast.AST) -> ast.AST:
        p = self.parents.get(node)
        while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            p = self.parents.get(p)
        return p if p is not None else self.tree

    def named_non_private(self, node: ast.AST) -> bool:
        p = self.parents.get(node)
        while p is not None:
            if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and (
                    _words(p.name) & _NON_PRIVATE_WORDS or p.name.lower() in _NON_PRIVATE_WORDS):
                return True
            if isinstance(p, ast.If) and (self._mode_test(p, node) or self._dp_other_arm(p, node)):
                return True
            p = self.parents.get(p)
        return False

    def _dp_other_arm(self, branch: ast.If, node: ast.AST) -> bool:
        """``if clip > 0: <DP optimizer> else: <node>``: the plain arm is the switch's non-private mode."""
        inside_body = any(node is n for s in branch.body for n in ast.walk(s))
        other = branch.orelse if inside_body else branch.body
        return any(_has_dp(s) for s in other)

    def _mode_test(self, branch: ast.If, node: ast.AST) -> bool:
        """``node`` sits in a branch chosen by a DP switch (``if args.dp: … else: <node>``)."""
        text = ast.unparse(branch.test).lower()
        return any(w in _words(text) for w in ("dp", "private", "privacy", "nonprivate", "nodp", "disable"))

    def is_dp_model_call(self, call: ast.Call) -> bool:
        k = _key(call.func)
        if k is None and isinstance(call.func, ast.Attribute):
            k = _key(call.func.value)
        if k is None:
            return False
        return k in self.dp_models or k.rsplit(".", 1)[-1] in self.dp_last


def _assignments(scope: ast.AST) -> dict[str, list[ast.AST]]:
    out: dict[str, list[ast.AST]] = {}
    body = scope.body if isinstance(scope, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef)) else []
    for stmt in body:
        for n in ast.walk(stmt):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not scope:
                continue
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    for s in ast.walk(t):
                        k = _key(s)
                        if k:
                            out.setdefault(k, []).append(n.value)
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign)) and n.value is not None:
                k = _key(n.target)
                if k:
                    out.setdefault(k, []).append(n.value)
            elif isinstance(n, (ast.For, ast.comprehension)):
                for s in ast.walk(n.target):
                    k = _key(s)
                    if k:
                        out.setdefault(k, []).append(ast.Tuple(elts=[ast.Name(id="__loop__"), n.iter], ctx=ast.Load()))
            elif isinstance(n, ast.withitem) and n.optional_vars is not None:
                k = _key(n.optional_vars)
                if k:
                    out.setdefault(k, []).append(n.context_expr)
    return out


def _params(scope: ast.AST) -> set[str]:
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    a = scope.args
    return {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}


def _public(name: str) -> bool:
    w = _words(name)
    return bool(w & _PUBLIC_WORDS)


class _Reader:
    """Follows the values a loss reads back to a record value."""

    def __init__(self, mod: _Module, scope: ast.AST) -> None:
        self.mod = mod
        self.scope = scope
        self.assigned = _assignments(scope)
        self.module_assigned = _assignments(mod.tree) if scope is not mod.tree else {}
        self.params = _params(scope)

    def data(self, expr: ast.AST) -> str | None:
        seen: set[str] = set()
        todo: list[ast.AST] = [expr]
        while todo:
            e = todo.pop()
            for name, node in self._reads(e):
                if name in seen:
                    continue
                seen.add(name)
                last = name.rsplit(".", 1)[-1]
                if _public(last) or name == "__loop__":
                    continue
                values = self.assigned.get(name) or (self.module_assigned.get(name) if name not in self.params else None)
                if name in self.params:
                    if last not in _NOT_DATA and not _words(last) & {"model", "net", "opt", "optimizer", "lr",
                                                                     "args", "config", "cfg", "params", "weights",
                                                                     "lambda", "coef", "penalty"}:
                        return name
                    continue
                if values:
                    for v in values:
                        if isinstance(v, ast.Tuple) and v.elts and isinstance(v.elts[0], ast.Name) \
                                and v.elts[0].id == "__loop__":
                            it = v.elts[1]
                            if any(_public(x.id) for x in ast.walk(it) if isinstance(x, ast.Name)) or any(
                                    _public(x.attr) for x in ast.walk(it) if isinstance(x, ast.Attribute)):
                                continue
                            if isinstance(it, ast.Call) and func_name(it.func) in ("range", "zip") and not any(
                                    _key(a) and _words(_key(a) or "") & _DATA_WORDS for a in it.args):
                                continue
                            return name
                        if isinstance(v, ast.Call) and func_name(v.func) == "placeholder":
                            return name
                        if isinstance(v, ast.Call) and func_name(v.func) in _DRAWS | {"rand", "randint", "uniform",
                                                                               "zeros", "ones"}:
                            continue
                        if isinstance(v, ast.Call) and _words(last) & _DATA_WORDS and (
                                not any(True for _ in self._reads(v)) or _words(func_name(v.func)) & _LOADS):
                            return name
                        todo.append(v)
                elif name.startswith("self.") and _words(last) & _DATA_WORDS and last not in _NOT_DATA:
                    return name
        return None

    def _reads(self, expr: ast.AST):
        """(name, node) read in ``expr``: not through the DP model, a size, a called function's name."""
        stack = [expr]
        while stack:
            n = stack.pop()
            if isinstance(n, ast.Call):
                if self.mod.is_dp_model_call(n):
                    continue
                name = func_name(n.func)
                if name in _SIZES:
                    continue
                if isinstance(n.func, ast.Attribute):
                    stack.append(n.func.value)
                stack.extend(n.args)
                stack.extend(k.value for k in n.keywords)
                continue
            if isinstance(n, ast.Attribute):
                if n.attr in _SIZES:
                    continue
                k = _key(n)
                if k and k.startswith("self."):
                    yield k, n
                    continue
                stack.append(n.value)
                continue
            if isinstance(n, ast.Name):
                yield n.id, n
                continue
            if isinstance(n, (ast.Lambda, ast.FunctionDef)):
                continue
            stack.extend(ast.iter_child_nodes(n))


def _plain_creations(mod: _Module) -> dict[str, ast.AST]:
    """key -> the statement building a plain optimizer (TF1: the ``minimize`` op built on one)."""
    out: dict[str, ast.AST] = {}
    for n in ast.walk(mod.tree):
        if not isinstance(n, ast.Assign) or len(n.targets) != 1:
            continue
        k = _key(n.targets[0])
        v = n.value
        if k is None or _has_dp(v):
            continue
        if _plain_call(v) or isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) \
                and v.func.attr == "minimize" and _plain_call(v.func.value):
            out.setdefault(k, n)
    return out


def _step_loss(mod: _Module, step: ast.Call, scope: ast.AST) -> ast.AST | None:
    """The loss a step call applies: ``loss.backward()`` before ``opt.step()``; ``minimize(loss)``;
    ``tape.gradient(loss, …)`` behind ``apply_gradients``; the gradient call behind ``opt.update(grads, …)``."""
    name = func_name(step.func)
    if name == "minimize":
        return step.args[0] if step.args else next((k.value for k in step.keywords if k.arg == "loss"), None)
    assigned = _assignments(scope)
    if name in ("apply_gradients", "update"):
        arg = step.args[0] if step.args else None
        if isinstance(arg, ast.Call) and func_name(arg.func) == "zip" and arg.args:
            arg = arg.args[0]
        k = _key(arg) if arg is not None else None
        for v in assigned.get(k or "", []):
            if isinstance(v, ast.Call) and func_name(v.func) == "gradient" and v.args:
                return v.args[0]
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Call) and func_name(v.func.func) in (
                    "grad", "value_and_grad"):
                return ast.Tuple(elts=list(v.args), ctx=ast.Load())
        return None
    # torch: the last ``X.backward()`` before the step in the same function, with no noise added in between
    body = [n for n in ast.walk(scope) if getattr(n, "lineno", 0) and n.lineno <= step.lineno]
    backs = [n for n in body if isinstance(n, ast.Call) and func_name(n.func) == "backward"
             and isinstance(n.func, ast.Attribute)]
    if not backs:
        return None
    back = max(backs, key=lambda n: (n.lineno, n.col_offset))
    if any(_grad_noise(n) or _clips(n) for n in body if back.lineno <= getattr(n, "lineno", 0) <= step.lineno):
        return None
    return back.func.value  # type: ignore[attr-defined]


def _clips(n: ast.AST) -> bool:
    return isinstance(n, ast.Call) and func_name(n.func) in ("clip_grad_norm_", "clip_grad_norm", "clip_by_global_norm")


#: calls that only read an optimizer, never train with it: schedulers, Opacus' BatchMemoryManager
_NOT_TRAINING_CALL = re.compile(r"(?:LR|Scheduler|scheduler|Warmup|warmup|Annealing|BatchMemoryManager|^lr_)")
#: word pieces of a factory that builds an optimizer: ``get_optimizer(params=D.parameters(), choice=…)``
_OPT_FACTORY_WORDS = frozenset({"optimizer", "optimiser", "optim", "opt"})


def _dp_optimizers(mod: _Module) -> set[str]:
    """(fix46b-R1) optimizers the module hands to DP machinery: ``make_private(optimizer=…)``,
    ``DPOptimizer(opt)``, Opacus' ``BatchMemoryManager(optimizer=…)``."""
    out: set[str] = set()
    for n in ast.walk(mod.tree):
        if isinstance(n, ast.Call) and (_dp_call(n) or func_name(n.func) == "BatchMemoryManager"):
            for kw in n.keywords:
                if kw.arg == "optimizer" and _key(kw.value):
                    out.add(_key(kw.value))  # type: ignore[arg-type]
            if _dp_call(n) and "Optimizer" in func_name(n.func):
                out |= {_key(a) for a in n.args[:1] if _key(a)}  # type: ignore[misc]
    return out


def _factory_creations(mod: _Module, dp_opts: set[str]) -> dict[str, ast.AST]:
    """(fix46b-R1) ``self.opt_d = get_optimizer(parameters=self.dis.parameters(), …)`` in a module that names
    another optimizer (``self.opt_g``) as the DP one: the factory's optimizer is plain."""
    out: dict[str, ast.AST] = {}
    if not dp_opts:
        return out
    for n in ast.walk(mod.tree):
        if not isinstance(n, ast.Assign) or len(n.targets) != 1 or not isinstance(n.value, ast.Call):
            continue
        k = _key(n.targets[0])
        v = n.value
        if k is None or k in dp_opts or _has_dp(v) or not _words(func_name(v.func)) & _OPT_FACTORY_WORDS:
            continue
        if _model_of_params(v) and not any(k.rsplit(".", 1)[-1] == d.rsplit(".", 1)[-1] for d in dp_opts):
            out.setdefault(k, n)
    return out


def plain_steps(tree: ast.Module) -> list[PlainStep]:
    mod = _Module(tree)
    if not mod.dp_line:
        return []
    out: list[PlainStep] = []
    created = _plain_creations(mod)
    for k, v in _factory_creations(mod, _dp_optimizers(mod)).items():
        created.setdefault(k, v)
    reported: set[str] = set()
    # Keras: ``M.compile(optimizer=<plain or "adam">)`` then ``M.fit(records, …)``
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "compile"):
            continue
        model = _key(n.func.value)
        opt = next((k.value for k in n.keywords if k.arg == "optimizer"), n.args[0] if n.args else None)
        if model is None or opt is None or _has_dp(opt) or mod.named_non_private(n) or model in mod.wrapped:
            continue
        dp_line = mod.dp_in(mod.unit(n))
        if not dp_line:
            continue
        plain = _plain_call(opt) or isinstance(opt, ast.Constant) and str(opt.value).lower() in _PLAIN_STRINGS or (
            _key(opt) in created)
        if not plain or (_key(opt) or "") in mod.wrapped:
            continue
        scope = mod.scope(n)
        for f in ast.walk(scope):
            if isinstance(f, ast.Call) and isinstance(f.func, ast.Attribute) and f.func.attr in ("fit", "train_on_batch") \
                    and _key(f.func.value) == model and f.args:
                data = _Reader(mod, scope).data(f.args[0])
                if data:
                    out.append(PlainStep(f.lineno, model, data, f.lineno, dp_line))
                    reported.add(model)
                    break
    # optimizers that step
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("step", "apply_gradients", "update", "minimize")):
            continue
        if n.func.attr == "minimize":
            if not _plain_call(n.func.value):
                continue
            parent = mod.parents.get(n)
            key = _key(parent.targets[0]) if isinstance(parent, ast.Assign) and len(parent.targets) == 1 else None
            key = key or "optimizer"
            where: ast.AST = parent if isinstance(parent, ast.Assign) else n
        else:
            key = _key(n.func.value)
            if key is None:
                continue
            where = created.get(key) or n
            if key not in created:
                # built elsewhere: only an optimizer that is a parameter or an attribute of this code
                last = key.rsplit(".", 1)[-1]
                if not (_words(last) & {"opt", "optimizer", "optim", "solver"}):
                    continue
            if n.func.attr == "update" and key not in created:
                continue
            if key not in created and not any(_grad_noise(g) for g in ast.walk(mod.scope(n))):
                continue  # built and made private (or not) elsewhere: only a step beside hand-written DP noise
        if key in reported or key in mod.wrapped or key.rsplit(".", 1)[-1] in {w.rsplit(".", 1)[-1] for w in mod.wrapped}:
            continue
        if mod.named_non_private(n) or mod.named_non_private(where):
            continue
        origin = created.get(key)
        if origin is not None:
            models = _model_of_params(origin) | {_key(k.value) or "" for k in getattr(
                origin.value if isinstance(origin, ast.Assign) else origin, "keywords", []) if k.arg == "var_list"}
            if models & mod.dp_models or any(_words(m.rsplit(".", 1)[-1]) & _GENERATOR_WORDS for m in models if m):
                continue
        dp_line = mod.dp_in(mod.unit(where))
        if not dp_line:
            continue
        scope = mod.scope(n)
        loss = _step_loss(mod, n, scope)
        if loss is None:
            continue
        data = _Reader(mod, scope).data(loss)
        if data is None:
            continue
        reported.add(key)
        out.append(PlainStep(n.lineno, key, data, n.lineno, dp_line))
        # built in one function and stepped in another it is handed to: the hand-over is the training call
        if origin is not None and mod.scope(origin) is not scope:
            for c in ast.walk(mod.scope(origin)):
                if isinstance(c, ast.Call) and c is not n and any(_key(a) == key for a in (*c.args, *(
                        k.value for k in c.keywords))) and not _dp_call(c) \
                        and not _NOT_TRAINING_CALL.search(func_name(c.func)):
                    out.append(PlainStep(c.lineno, key, data, n.lineno, dp_line))
    return out


# --------------------------------------------------------------------------- ε reported for a plain run

#: calls that turn an accountant's state into the ε a run reports
_EPS_REPORT = re.compile(r"^(?:get_privacy_spent|accumulate_privacy_spending|compute_dp_sgd_privacy\w*|get_epsilon|compute_epsilon\w*|"
                         r"rdp_to_eps\w*|eps_from_rdp|get_privacy_budget|compute_eps\w*|get_eps)$")
#: imported names of DP optimizers and engines
_DP_IMPORT = re.compile(r"^(?:PrivacyEngine|(?:Noisy|Private|Priv)_?(?:Optimizer|SGD|Adam|AdamW|Adagrad|RMSProp)\w*|(?:Vectorized)?DP\w*(?:Optimizer|SGD|Adam|Adagrad|RMSProp|Sequential|Model)\w*|"
                        r"DPKeras\w*|make_optimizer_class|make_keras_optimizer_class|make_\w*dp\w*_optimizer|"
                        r"GenericDPOptimizer|differentially_private_aggregate|dpsgd)$")
#: calls that draw noise or clip in the module: then the plain optimizer may be noised by hand
_NOISY_CALLS = _DRAWS | frozenset({"laplace", "add_noise", "clip_grad_norm_", "clip_by_norm", "clip_by_global_norm",
                                   "noise", "gaussian_noise", "laplace_noise", "add_gaussian_noise", "privatize",
                                   "clip_and_noise", "clip_gradients", "dp_step", "sanitize", "sanitise"})


#: word pieces of a helper that privatises (another module's ``apply_dp``, ``add_noise``)
_NOISY_WORDS = frozenset({"dp", "noise", "noisy", "private", "privacy", "privatize", "privatise", "clip", "laplace",
                          "gaussian", "perturb", "sanitize", "sanitise"})


@dataclass(frozen=True)
class PlainEpsilon:
    line: int
    why: str


def _steps_plain(mod: _Module) -> ast.AST | None:
    """A plain optimizer built in the module that takes steps (or a Keras model compiled with one and fitted)."""
    created = _plain_creations(mod)
    for n in ast.walk(mod.tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
            if n.func.attr == "minimize" and _plain_call(n.func.value):
                return n
            if n.func.attr in ("step", "apply_gradients") and _key(n.func.value) in created:
                return created[_key(n.func.value)]  # type: ignore[index]
            if n.func.attr == "compile":
                opt = next((k.value for k in n.keywords if k.arg == "optimizer"), None)
                if opt is not None and (_plain_call(opt) or _key(opt) in created or isinstance(opt, ast.Constant)
                                        and str(opt.value).lower() in _PLAIN_STRINGS):
                    return n
    return None


def _flag_names(test: ast.AST) -> set[str]:
    """The switch a test reads, by its last name (``args.dpsgd`` and ``self.dpsgd`` are one switch)."""
    out = {d.rsplit(".", 1)[-1] for d in (_key(x) for x in ast.walk(test) if isinstance(x, (ast.Name, ast.Attribute)))
           if d}
    out |= {str(x.value) for x in ast.walk(test) if isinstance(x, ast.Constant) and isinstance(x.value, str)}
    return out - {"self", "args", "cfg", "config", "FLAGS", "flags", "opt", "params", "not", "None"}


def _under_switch(mod: _Module, node: ast.AST, switches: list[set[str]]) -> bool:
    p = mod.parents.get(node)
    while p is not None:
        if isinstance(p, (ast.If, ast.IfExp)) and any(s & _flag_names(p.test) for s in switches):
            return True
        p = mod.parents.get(p)
    return False


def _noisy(n: ast.AST) -> bool:
    """A call that draws or applies noise (a noisy helper, a DP optimizer, noise added to a gradient)."""
    return isinstance(n, ast.Call) and (func_name(n.func) in _NOISY_CALLS or _dp_call(n) or (
        _words(func_name(n.func)) & _NOISY_WORDS and not _EPS_REPORT.match(func_name(n.func)) and not ACCOUNTANT_CALL.match(
            func_name(n.func)))) or _grad_noise(n)


_NOISE_ADD_WORDS = frozenset({"noise", "noisy", "laplace", "gaussian", "perturb", "sanitize", "sanitise", "privatize",
                              "privatise"})


def _adds_noise(stmt: ast.stmt) -> bool:
    """A simple statement calling a noise-adding helper (``AddGaussianNoise(x, s)``, ``x + laplace(...)``)."""
    return isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)) and any(
        isinstance(x, ast.Call) and _words(func_name(x.func)) & _NOISE_ADD_WORDS and not _EPS_REPORT.match(func_name(x.func))
        and not ACCOUNTANT_CALL.match(func_name(x.func)) or _grad_noise(x) for x in ast.walk(stmt))


def _charged_with_noise(mod: _Module, node: ast.AST) -> bool:
    """``if add_noise: accountant.accumulate(sigma, n); x = add_gaussian_noise(x, sigma)``: the charge is a
    statement of the branch whose other statements add the noise it accounts for, so no noiseless step is
    charged."""
    child, p = node, mod.parents.get(node)
    while p is not None and not isinstance(p, ast.stmt):
        child, p = p, mod.parents.get(p)
    stmt, parent = p, mod.parents.get(p) if p is not None else None
    if not isinstance(parent, ast.If):
        return False
    arm = parent.body if stmt in parent.body else parent.orelse if stmt in parent.orelse else []
    return any(_adds_noise(s) for s in arm if s is not stmt)


_RAW_DRAWS = frozenset({"laplace", "normal", "gauss", "gaussian", "randn", "randn_like", "normal_"})


def _accounts_own_draw(mod: _Module, node: ast.Call) -> bool:
    """(fix44b-R1) ``sigma = ..; eps = compute_dp_sgd_privacy(.., noise_multiplier=sigma, ..)`` in a function that
    itself adds ``np.random.laplace(scale=c * sigma, ..)`` to data: the ε describes that function's own input
    perturbation (always applied), not the optimizer's steps, so the DP/plain optimizer switch does not reach it."""
    fn = mod.scope(node)
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    given = {n.id for a in (*node.args, *(k.value for k in node.keywords)) for n in ast.walk(a)
             if isinstance(n, ast.Name)}
    given = {g for g in given if _words(g) & {"noise", "sigma", "multiplier", "std", "scale"}}
    if not given:
        return False
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and func_name(n.func) in _RAW_DRAWS:
            read = {x.id for a in (*n.args, *(k.value for k in n.keywords)) for x in ast.walk(a)
                    if isinstance(x, ast.Name)}
            if read & given:
                return True
    return False


def plain_epsilon(tree: ast.Module) -> list[PlainEpsilon]:
    mod = _Module(tree)
    reports = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _EPS_REPORT.match(func_name(n.func))]
    if not reports:
        return []
    out: list[PlainEpsilon] = []
    # (1) a DP optimizer or engine imported and never used, a plain optimizer steps, nothing in the module noises
    imported: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            for a in n.names:
                if _DP_IMPORT.match(a.name):
                    imported[a.asname or a.name] = n.lineno
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    unused = [k for k in imported if k not in loads]
    noisy = any(_noisy(n) for n in ast.walk(tree))
    if unused and not noisy and _steps_plain(mod) is not None:
        for r in reports:
            if _under_switch(mod, r, [{"dp", "dpsgd", "privacy_engine", "private", "use_dp", "enabled"}]):
                continue
            out.append(PlainEpsilon(r.lineno, f"`{unused[0]}` is imported and never used: the optimizer that "
                                                "steps is a plain one and nothing in the module clips or noises"))
        return out
    # (2) a switch picks the DP optimizer or the plain one, the ε is reported whatever it says
    switches: list[set[str]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.If):
            arms = (n.body, n.orelse)
            dp_arm = [any(_has_dp(s) for s in arm) for arm in arms]
            plain_arm = [any(_plain_call(x) for s in arm for x in ast.walk(s)) for arm in arms]
            if (dp_arm[0] and plain_arm[1] and not dp_arm[1]) or (dp_arm[1] and plain_arm[0] and not dp_arm[0]):
                switches.append(_flag_names(n.test))
        elif isinstance(n, ast.IfExp):
            # ``DPOptimizer(base) if cfg.dp else base`` wraps something; ``spec if spec else DPSGD()`` only
            # builds a default privacy setting, both arms of which are DP
            if (_wraps_dp(n.body) and not _has_dp(n.orelse)) or (_wraps_dp(n.orelse) and not _has_dp(n.body)):
                switches.append(_flag_names(n.test))
    switches = [s for s in switches if s]
    if not switches:
        return out
    for r in reports:
        guarded = False
        p = mod.parents.get(r)
        while p is not None:
            if isinstance(p, (ast.If, ast.IfExp)):
                names = _flag_names(p.test)
                if any(s & names for s in switches):
                    guarded = True
                    break
            if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)) and (_words(p.name) & {"dp", "private"}):
                pass
            p = mod.parents.get(p)
        guarded = guarded or _charged_with_noise(mod, r) or _accounts_own_draw(mod, r)
        # an early exit on the switch before the report: ``if not args.dp: return``
        fn = mod.scope(r)
        if not guarded and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for s in ast.walk(fn):
                if isinstance(s, ast.If) and getattr(s, "lineno", 0) < r.lineno and any(
                        isinstance(b, (ast.Return, ast.Continue, ast.Raise)) for b in s.body) and any(
                        sw & _flag_names(s.test) for sw in switches):
                    guarded = True
        # a helper every caller of which runs under the switch
        if not guarded and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call) and func_name(c.func) == fn.name]
            guarded = bool(calls) and all(_under_switch(mod, c, switches) for c in calls)
        if not guarded:
            out.append(PlainEpsilon(r.lineno, "the optimizer is DP only when a switch is on, and this ε is computed "
                                              "whatever the switch says"))
    return out


class _Lined(Protocol):
    line: int


_L = TypeVar("_L", bound=_Lined)


def first_per_line(tree: ast.Module | None, found: Callable[[ast.Module], Iterable[_L]]) -> dict[int, _L]:
    """``found``'s results on ``tree``, the first per line (no tree: a source ``ast`` cannot read, none)."""
    if tree is None:
        return {}
    out: dict[int, _L] = {}
    for item in found(tree):
        out.setdefault(item.line, item)
    return out


class LineHits(Generic[_L]):
    """A rule's ``ast`` results looked up by the line of the ``cst`` node it visits, each line taken once."""

    def __init__(self, ctx: Any, found: Callable[[ast.Module], Iterable[_L]]) -> None:
        self._ctx = ctx
        self._found = found
        self._lines: dict[int, _L] | None = None
        self._done: set[int] = set()

    def take(self, node: Any) -> _L | None:
        if self._lines is None:
            self._lines = first_per_line(self._ctx.python_tree(), self._found)
        line = self._ctx.analysis.line_of(node)
        hit = self._lines.get(line)
        if hit is None or line in self._done:
            return None
        self._done.add(line)
        return hit
