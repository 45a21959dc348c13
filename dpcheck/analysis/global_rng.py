"""Privacy mechanisms in the project's other modules that draw their noise from a global random generator.

A run's entry point often seeds NumPy's (or Python's, or torch's) global generator with a constant
(``np.random.seed(2022)`` at the top of ``main.py``) and then calls a randomiser defined in another module
of the project (``ldp.OUE(epsilon, d).privatise(x)``, whose ``np.random.binomial(n, self.p)`` draws from
that same global generator). Neither file alone shows that the privacy noise is fixed. This module follows
the entry point's imports into the scanned project (a few levels deep, never importing anything: the files
are read with ``ast``) and finds a function or method there that is a mechanism (it, or its class, takes ε)
and draws calibrated noise (a scale or flip probability that is not a literal) from the seeded generator.
"""
from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable

import libcst as cst

from dpcheck.analysis.noisedraws import project_root
from dpcheck.analysis.syntax import words

#: a module followed through imports is read only up to the scan's own file-size limit (2 MiB)
_MAX_BYTES = 2 * 1024 * 1024

#: receivers of the global generators, by family
FAMILIES = {"np.random": "numpy", "numpy.random": "numpy", "random": "random", "torch": "torch"}
#: draw -> the position and keywords of its scale or probability argument
_CALIBRATED = {
    "laplace": (1, ("scale",)), "normal": (1, ("scale", "std")), "gumbel": (1, ("scale",)),
    "binomial": (1, ("p",)), "exponential": (0, ("scale",)), "geometric": (0, ("p",)),
    "gauss": (1, ("sigma",)), "normalvariate": (1, ("sigma",)), "expovariate": (0, ("lambd",)),
}
#: uniform draws compared with a flip probability (``random.random() < self.p``): a randomised response
_COIN = frozenset({"random", "rand", "random_sample", "uniform", "rand_like"})
#: standard draws a mechanism scales by multiplication
_STANDARD = frozenset({"randn", "randn_like", "standard_normal", "standard_laplace", "standard_cauchy"})
_EPS_WORDS = frozenset({"eps", "epsilon", "epsi", "epsilons"})
_MAX_DEPTH = 3
_MAX_FILES = 60
_CACHE: dict[str, tuple[float, list[tuple[str, int, str]], list[tuple[str, int, tuple[str, ...]]]]] = {}


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def _calibrated(call: ast.Call, draw: str) -> bool:
    position, keywords = _CALIBRATED[draw]
    value = next((k.value for k in call.keywords if k.arg in keywords), None)
    if value is None and len(call.args) > position:
        value = call.args[position]
    if value is None:
        return False
    return not (isinstance(value, ast.Constant) or isinstance(value, ast.UnaryOp)
                and isinstance(value.operand, ast.Constant))


#: what a mechanism's standard draw is scaled by (a decoder's learned std, ``torch.exp(logvar)``, is not one)
_SCALE_WORDS = frozenset({"sigma", "std", "stddev", "scale", "multiplier", "sensitivity", "sens", "clip", "eps",
                          "epsilon", "epsi", "b", "c", "l2", "norm", "delta", "budget", "lam", "lambda"})


def _scaled(call: ast.Call, parents: dict[int, ast.AST], scale_words: frozenset[str] = _SCALE_WORDS) -> bool:
    """``torch.randn_like(g) * sigma * clip``, ``np.random.standard_normal(d) * self.scale``: a standard draw
    multiplied by a privacy scale (σ, a clip bound, a sensitivity, ε)."""
    node: ast.AST = call
    parent = parents.get(id(node))
    while isinstance(parent, ast.BinOp) and isinstance(parent.op, (ast.Mult, ast.Div)):
        other = parent.right if parent.left is node else parent.left
        if any(words(n.id if isinstance(n, ast.Name) else n.attr) & scale_words
               for n in ast.walk(other) if isinstance(n, (ast.Name, ast.Attribute))):
            return True
        node, parent = parent, parents.get(id(parent))
    return False


def _eps_named(name: str | None) -> bool:
    return bool(name) and bool(words(name) & _EPS_WORDS)  # type: ignore[arg-type]


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    a = fn.args
    return [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])]]


def _summarize(path: str) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, tuple[str, ...]]]]:
    """(mechanism draws: (function, line, family), imports: (module, level, names)) of one file, cached."""
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return [], []
    cached = _CACHE.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1], cached[2]
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            raise OSError(path)
        with open(path, encoding="utf-8", errors="replace") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        _CACHE[path] = (mtime, [], [])
        return [], []
    draws, imports = _summarize_tree(tree)
    _CACHE[path] = (mtime, draws, imports)
    return draws, imports


#: marks a draw that counts only in the file that seeds (a Laplace draw of divided scale in a function taking no ε)
_LOCAL = "~"


def _reciprocal_scale(call: ast.Call) -> bool:
    """``np.random.laplace(0, 1.0 / gamma)``, ``laplace(loc=0, scale=float(sens / eps))``: the Laplace scale is a
    quotient by a non-literal (b = Δ/ε), the form of a mechanism's noise rather than of a fixed augmentation."""
    value = next((k.value for k in call.keywords if k.arg == "scale"), None)
    if value is None and len(call.args) > 1:
        value = call.args[1]
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("float", "abs") \
            and len(value.args) == 1:
        value = value.args[0]
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div) and not isinstance(value.right, ast.Constant)


def _summarize_tree(tree: ast.Module) -> tuple[list[tuple[str, int, str]], list[tuple[str, int, tuple[str, ...]]]]:
    imports: list[tuple[str, int, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend((alias.name, 0, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imports.append((node.module or "", node.level, tuple(alias.name for alias in node.names)))
    families = dict(FAMILIES)
    for node in ast.walk(tree):  # ``import numpy.random as npr``, ``from numpy import random as nr``, ``import numpy as n``
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name in ("numpy.random", "numpy", "torch", "random"):
                    families[alias.asname if alias.name != "numpy" else alias.asname + ".random"] = \
                        FAMILIES["numpy.random" if alias.name == "numpy" else alias.name]
        elif isinstance(node, ast.ImportFrom) and node.module == "numpy" and not node.level:
            for alias in node.names:
                if alias.name == "random":
                    families[alias.asname or "random"] = "numpy"
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    draws: list[tuple[str, int, str]] = []
    #: a module that defines a mechanism taking ε (``cal_probability(embed, embed, epsilon)``): its functions'
    #: weighted choices and compared coins are that mechanism's sampling (``np.random.choice(n, p=prob)``)
    module_eps = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("test")
                     and any(_eps_named(p) for p in _params(n)) for n in tree.body)
    for owner in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]:
        class_eps = isinstance(owner, ast.ClassDef) and any(
            (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(_eps_named(p) for p in _params(n)))
            or (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
                and _eps_named(n.attr)) for n in ast.walk(owner))
        for fn in owner.body:
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name.startswith("test"):
                continue
            sampling_only = not (class_eps or any(_eps_named(p) for p in _params(fn)))
            if sampling_only and not (module_eps and owner is tree) and not any(
                    isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "laplace"
                    and _reciprocal_scale(c) for c in ast.walk(fn)):
                continue
            compared = {id(side) for n in ast.walk(fn) if isinstance(n, ast.Compare)
                        and any(not isinstance(o, ast.Constant) for o in [n.left, *n.comparators])
                        for side in [n.left, *n.comparators]}
            # ``p = random.uniform(0, 1)`` … ``if p <= self.threshold_prob``: a coin kept in a name, then compared
            compared_names = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and id(n) in compared}
            compared |= {id(n.value) for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
                         and isinstance(n.targets[0], ast.Name) and n.targets[0].id in compared_names}
            # ``u = random.uniform(0, 1) - 0.5`` … ``scale * np.sign(u) * np.log(1 - 2 * abs(u))``: a uniform draw
            # turned into Laplace noise by its inverse CDF (in a function taking ε)
            logged = {n.id for c in ast.walk(fn) if isinstance(c, ast.Call) and (_dotted(c.func) or "").rsplit(
                ".", 1)[-1] in ("log", "log1p") for n in ast.walk(c) if isinstance(n, ast.Name)}
            if not sampling_only:
                for n in ast.walk(fn):
                    if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                            and n.targets[0].id in logged:
                        compared |= {id(c) for c in ast.walk(n.value) if isinstance(c, ast.Call)}
            for call in ast.walk(fn):
                if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
                    continue
                family = families.get(_dotted(call.func.value) or "")
                if family is None:
                    continue
                draw = call.func.attr
                if sampling_only and draw != "choice" and not (draw == "laplace" and _reciprocal_scale(call)):
                    continue  # (a compared coin there may sample synthetic labels; a Laplace draw of scale
                    # ``1.0 / gamma`` is a mechanism's noise wherever it is written)
                if draw in _CALIBRATED and _calibrated(call, draw) \
                        or draw in _STANDARD and _scaled(call, parents) \
                        or draw in _COIN and id(call) in compared \
                        or draw == "choice" and any(k.arg == "p" and not isinstance(k.value, ast.Constant)
                                                    for k in call.keywords):
                    # a Laplace draw of scale ``1.0 / gamma`` outside a function taking ε counts only in the
                    # seeding file itself (``_LOCAL`` marks it): an imported module's may be off the seeded path
                    name = fn.name if not sampling_only or draw != "laplace" else _LOCAL + fn.name
                    if all(f != family or d.lstrip(_LOCAL) != fn.name for d, _, f in draws):
                        draws.append((name, call.lineno, family))
    for found in engine_draws(tree, families, parents):
        if found not in draws:
            draws.append(found)
    return draws, imports


#: DP engines that draw their noise from a framework's global generator unless told otherwise
_TORCH_ENGINES = frozenset({"PrivacyEngine"})
_OPACUS_ATTACH = frozenset({"make_private", "make_private_with_epsilon"})
#: TensorFlow Privacy optimizers (their Gaussian noise comes from TensorFlow's global seed)
_TF_DP_OPTIMIZERS = frozenset({
    "DPKerasSGDOptimizer", "DPKerasAdamOptimizer", "DPKerasAdagradOptimizer", "VectorizedDPKerasSGDOptimizer",
    "VectorizedDPKerasAdamOptimizer", "VectorizedDPKerasAdagradOptimizer", "DPGradientDescentGaussianOptimizer",
    "DPAdamGaussianOptimizer", "DPAdagradGaussianOptimizer", "DPGradientDescentOptimizer", "DPAdamOptimizer",
    "VectorizedDPSGD", "DPKerasSGD", "make_keras_optimizer_class", "make_gaussian_optimizer_class",
})
#: what hand-written DP noise is scaled by, outside a function that takes ε (a diffusion model's σ alone is not)
_PRIVACY_SCALE_WORDS = frozenset({"sensitivity", "sens", "multiplier", "clip", "clipping", "noise", "dp", "privacy",
                                  "eps", "epsilon", "budget"})


#: a class whose draws are privacy noise (``CummuNoiseTorch``, ``GaussianMechanism``, ``DPNoise``)
_NOISE_CLASS_WORDS = frozenset({"noise", "mechanism", "privacy", "private", "dp", "ldp", "laplace"})


def _scaled_by_privacy(call: ast.Call, parents: dict[int, ast.AST]) -> bool:
    """``torch.randn_like(h) * sensitivity * sigma``, ``torch.randn(d) * (2 * noise_factor / n)``: a standard draw
    multiplied by a privacy scale (a sensitivity, a noise multiplier or factor, a clip bound, ε)."""
    return _scaled(call, parents, _PRIVACY_SCALE_WORDS)


def _added_to_gradient(call: ast.Call, parents: dict[int, ast.AST]) -> bool:
    """``p.grad += torch.normal(0, sigma / batch_size, size=p.grad.shape).cuda()``, ``param.grad = g + noise``
    written in one expression: a draw added to a gradient is DP-SGD noise, whatever its scale is called."""
    node: ast.AST = call
    for _ in range(6):
        parent = parents.get(id(node))
        if parent is None:
            return False
        if isinstance(parent, ast.AugAssign):
            return isinstance(parent.op, ast.Add) and parent.value is node and isinstance(parent.target, ast.Attribute) \
                and parent.target.attr == "grad"
        if isinstance(parent, ast.Assign):
            return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and any(
                isinstance(t, ast.Attribute) and t.attr == "grad" for t in parent.targets)
        if not isinstance(parent, (ast.Attribute, ast.Call, ast.BinOp)) or isinstance(parent, ast.Call) \
                and parent.func is not node and not isinstance(parent.func, ast.Attribute):
            return False
        node = parent
    return False


def _true_or_unknown(value: ast.expr) -> bool:
    return not (isinstance(value, ast.Constant) and not value.value)


def engine_draws(tree: ast.Module, families: dict[str, str], parents: dict[int, ast.AST]) -> list[tuple[str, int, str]]:
    """(function or ``<module>``, line, family) of the DP noise a file draws from a global generator outside a
    function taking ε: an Opacus ``PrivacyEngine`` without ``secure_mode``/``secure_rng`` (its Gaussian noise comes
    from torch's global generator), ``make_private(…)`` given no ``noise_generator``, a TensorFlow Privacy
    optimizer (TensorFlow's global seed), a standard torch draw scaled by a sensitivity or noise multiplier."""
    owner: dict[int, str] = {}
    noise_class: set[int] = set()
    for node in ast.walk(tree):  # ``ast.walk`` is breadth-first: an inner function overwrites its outer one
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                owner[id(sub)] = node.name
        elif isinstance(node, ast.ClassDef) and words(node.name) & _NOISE_CLASS_WORDS:
            noise_class.update(id(sub) for sub in ast.walk(node))
    out: list[tuple[str, int, str]] = []
    secure = any(isinstance(call, ast.Call) and any(k.arg in ("secure_mode", "secure_rng") and _true_or_unknown(k.value)
                                                    for k in call.keywords) for call in ast.walk(tree))
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        where = owner.get(id(call), "<module>")
        if where.startswith("test"):
            continue
        name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id \
            if isinstance(call.func, ast.Name) else ""
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        if name in _TORCH_ENGINES:
            if not any(_true_or_unknown(keywords[k]) for k in ("secure_mode", "secure_rng") if k in keywords):
                out.append((where, call.lineno, "torch"))
        elif name in _OPACUS_ATTACH and not secure and any(k in keywords for k in ("noise_multiplier", "target_epsilon",
                                                                    "max_grad_norm")):
            generator = keywords.get("noise_generator")
            if generator is None or isinstance(generator, ast.Constant) and generator.value is None:
                out.append((where, call.lineno, "torch"))
        elif name in _TF_DP_OPTIMIZERS:
            out.append((where, call.lineno, "tf"))
        elif isinstance(call.func, ast.Attribute) and families.get(_dotted(call.func.value) or "") == "torch" \
                and name in (_STANDARD | {"normal"}) and (
                    _scaled_by_privacy(call, parents) or name == "normal" and any(
                        words(n.id if isinstance(n, ast.Name) else n.attr) & _PRIVACY_SCALE_WORDS
                        or id(call) in noise_class
                        for a in call.args[1:2] for n in ast.walk(a) if isinstance(n, (ast.Name, ast.Attribute)))
                    or name == "normal" and len(call.args) >= 2 and not isinstance(call.args[1], ast.Constant)
                    and _added_to_gradient(call, parents)):
            if not any(k in keywords for k in ("generator",)):
                out.append((where, call.lineno, "torch"))
        elif _hand_written_global_noise(call, name, keywords, parents, id(call) in noise_class or
                                        bool(words(where) & _NOISE_FUNCTION_WORDS)):
            out.append((where, call.lineno, _hand_written_global_noise(call, name, keywords, parents, True)))
    return out


#: TensorFlow/Keras receivers whose Gaussian draws use TensorFlow's global seed (``K.random_normal``,
#: ``tf.random.normal``, ``tf.random_normal``, ``keras.backend.random_normal``)
_TF_RECEIVERS = frozenset({"K", "tf", "tf.random", "tensorflow", "tensorflow.random", "keras.backend", "backend",
                           "tf.keras.backend", "tf.compat.v1", "tf.compat.v1.random"})
_TF_GAUSSIAN = frozenset({"random_normal", "normal", "truncated_normal", "random_laplace"})
#: torch distributions whose ``sample()`` draws from torch's global generator
_TORCH_DISTRIBUTIONS = frozenset({"Normal", "Laplace", "Gumbel", "Bernoulli", "Binomial", "Geometric"})
#: a function named for its noise (``def noise(scale, shape)``, ``add_gaussian_noise``)
_NOISE_FUNCTION_WORDS = frozenset({"noise", "noisy", "noised", "perturb", "privatize", "privatise", "laplace"})


def _privacy_scaled(values: list[ast.expr]) -> bool:
    return any(words(n.id if isinstance(n, ast.Name) else n.attr) & _PRIVACY_SCALE_WORDS
               for v in values for n in ast.walk(v) if isinstance(n, (ast.Name, ast.Attribute)))


def _hand_written_global_noise(call: ast.Call, name: str, keywords: dict[str, ast.expr], parents: dict[int, ast.AST],
                               noise_place: bool) -> str | None:
    """The family of hand-written DP noise drawn from a framework's global generator with a privacy scale (or in a
    noise class or function), given no explicit seed or generator: ``K.random_normal(g.shape, stddev=noise * clip)``
    (TensorFlow's global seed), ``torch.FloatTensor(shape).normal_(0, sigma * clipping)`` (an in-place draw),
    ``torch.distributions.Normal(0, scale).sample(shape)`` in ``def noise(scale, shape)``."""
    if not isinstance(call.func, ast.Attribute) or "seed" in keywords or "generator" in keywords:
        return None
    receiver = _dotted(call.func.value) or ""
    if name in _TF_GAUSSIAN and receiver in _TF_RECEIVERS:
        scale = [keywords[k] for k in ("stddev", "scale") if k in keywords] or call.args[2:3]
        if scale and (_privacy_scaled(scale) or noise_place) or _scaled_by_privacy(call, parents):
            return "tf"
        return None
    if name == "normal_" and not receiver.endswith("init"):  # ``nn.init.normal_(w, 0, 0.02)`` initialises weights
        scale = [keywords[k] for k in ("std",) if k in keywords] or call.args[1:2]
        if scale and (_privacy_scaled(scale) or noise_place):
            return "torch"
        return None
    if name in ("sample", "rsample"):
        dist = call.func.value
        if isinstance(dist, ast.Name):  # ``lap = torch.distributions.laplace.Laplace(0, b)`` … ``lap.sample(shape)``
            scope = parents.get(id(call))
            while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                scope = parents.get(id(scope))
            bound = [n.value for n in ([] if scope is None else ast.walk(scope)) if isinstance(n, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == dist.id for t in n.targets)]
            dist = bound[0] if len(bound) == 1 else dist
        if not isinstance(dist, ast.Call):
            return None
        dist_name = dist.func.attr if isinstance(dist.func, ast.Attribute) else dist.func.id \
            if isinstance(dist.func, ast.Name) else ""
        if dist_name == "Laplace" or dist_name in _TORCH_DISTRIBUTIONS and (noise_place or _privacy_scaled(
                [*dist.args[1:2], *(k.value for k in dist.keywords if k.arg in ("scale", "probs"))])):
            return "torch"
    return None


def _candidates(folder: str, roots: Iterable[str], module: str, level: int, names: tuple[str, ...]) -> list[str]:
    """The project files an import names (a module, a package's ``__init__``, or submodules imported by name)."""
    if level:
        base = folder
        for _ in range(level - 1):
            base = os.path.dirname(base)
        bases = [base]
    else:
        bases = list(roots)
    out = []
    parts = [p for p in module.split(".") if p]
    for base in bases:
        stem = os.path.join(base, *parts) if parts else base
        for option in (stem + ".py", os.path.join(stem, "__init__.py")):
            if parts and os.path.isfile(option):
                out.append(option)
        for name in names:
            option = os.path.join(stem, name + ".py")
            if os.path.isfile(option):
                out.append(option)
    return out


def _roots(path: str) -> list[str]:
    folder = os.path.dirname(os.path.abspath(path))
    return list(dict.fromkeys([folder, project_root(path), *_path_additions(path, folder)]))


def _path_additions(path: str, folder: str) -> list[str]:
    """Folders a script puts on ``sys.path`` relative to itself: ``sys.path.append('..')``,
    ``sys.path.insert(0, os.path.join(here, '..', '..'))`` (the literal parts, taken from the file's folder).
    Remembered per parsed tree: a file's every noise draw asks again."""
    tree = _tree(path)
    known = _ADDITIONS.get((path, folder))
    if known is not None and known[0] is tree:
        return known[1]
    out = _walk_path_additions(tree, folder)
    _ADDITIONS[(path, folder)] = (tree, out)
    return out


def _walk_path_additions(tree: ast.Module | None, folder: str) -> list[str]:
    out: list[str] = []
    for call in [] if tree is None else ast.walk(tree):
        if not (isinstance(call, ast.Call) and _dotted(call.func) in ("sys.path.append", "sys.path.insert")
                and call.args):
            continue
        arg = call.args[-1]
        if isinstance(arg, ast.Call) and _dotted(arg.func) == "str" and arg.args:
            arg = arg.args[0]
        pathlib = _pathlib_relative(arg)
        if pathlib is not None:
            # ``str(Path(__file__).resolve().parents[1] / "src")``: the script's folder, steps up, then named folders
            target = os.path.normpath(os.path.join(folder, *pathlib))
            if os.path.isdir(target):
                out.append(target)
            continue
        parts = [arg.value] if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else [
            a.value for a in arg.args if isinstance(a, ast.Constant) and isinstance(a.value, str)] \
            if isinstance(arg, ast.Call) and (_dotted(arg.func) or "").endswith("path.join") else []
        if parts and all(p.strip("./") == "" for p in parts):  # only ``.``/``..`` steps: relative to the script
            target = os.path.normpath(os.path.join(folder, *parts))
            if os.path.isdir(target):
                out.append(target)
    return out


def _pathlib_relative(node: ast.expr) -> list[str] | None:
    """The steps from the script's folder of ``Path(__file__).resolve().parents[N] / "src"`` or
    ``Path(__file__).parent.parent / "lib"`` (``..`` per level up, then the literal names); None for any other
    expression."""
    names: list[str] = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
            and isinstance(node.right.value, str):
        names.insert(0, node.right.value)
        node = node.left
    ups = -1  # ``Path(__file__).parent`` and ``.parents[0]`` are the script's own folder
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents" \
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        ups, node = node.slice.value, node.value.value
    while isinstance(node, ast.Attribute) and node.attr == "parent":
        ups, node = ups + 1, node.value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "resolve", "absolute") and not node.args:
        node = node.func.value
    if not (isinstance(node, ast.Call) and (_dotted(node.func) or "").rsplit(".", 1)[-1] == "Path" and node.args
            and isinstance(node.args[0], ast.Name) and node.args[0].id == "__file__") or ups < 0:
        return None
    if any(not n or "/" in n.strip("/") and ".." in n for n in names):
        return None
    return [".."] * ups + names


def _module_imports(module: cst.Module) -> list[tuple[str, int, tuple[str, ...]]]:
    from dpcheck.analysis.syntax import dotted, walk

    out: list[tuple[str, int, tuple[str, ...]]] = []
    for node in walk(module):
        if isinstance(node, cst.Import):
            out.extend((dotted(alias.name) or "", 0, ()) for alias in node.names)
        elif isinstance(node, cst.ImportFrom):
            names: tuple[str, ...] = ("*",)
            if not isinstance(node.names, cst.ImportStar):
                names = tuple(dotted(alias.name) or "" for alias in node.names)
            out.append((dotted(node.module) if node.module is not None else "", len(node.relative), names))
    return out


def _module_imports_aliased(module: cst.Module) -> list[tuple[str, int, tuple[str, ...], str]]:
    """(module path, level, (), the local name it is bound to) of each module import: ``import tools`` ->
    ``tools``, ``import lib.tools as t`` -> ``t``, ``from lib import tools`` -> ``lib.tools`` bound to ``tools``."""
    from dpcheck.analysis.syntax import dotted, walk

    out: list[tuple[str, int, tuple[str, ...], str]] = []
    for node in walk(module):
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted(alias.name) or ""
                local = dotted(alias.asname.name) if alias.asname is not None else full
                out.append((full, 0, (), local or ""))
        elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
            base = dotted(node.module) if node.module is not None else ""
            for alias in node.names:
                sub = dotted(alias.name) or ""
                local = dotted(alias.asname.name) if alias.asname is not None else sub
                out.append((f"{base}.{sub}" if base else sub, len(node.relative), (), local or ""))
    return out


def imported_mechanism_draw(path: str | None, module: cst.Module, families: set[str],
                            called: bool = False) -> tuple[str, str, int] | None:
    """(file, function, line) of a mechanism in a project module this file imports (directly or through the
    project's own imports, up to a few levels) that draws calibrated noise from one of ``families``' global
    generators. None for a file not on disk. ``called``: only a mechanism that this file or another module on the
    way names outside its definition (``privatize(…)``, ``ldp.perturb(…)``, ``(name, perturb_edges)`` in a table of
    mechanisms); a package's ``__init__`` re-exporting every mechanism does not make a script that uses none of
    them draw their noise."""
    if not path or not os.path.isfile(path):
        return None
    me = os.path.abspath(path)
    seen = {me}
    frontier = [(me, _module_imports(module))]
    pending: list[tuple[str, str, int]] = []
    entry_roots = _roots(me)  # the running script's folder is on ``sys.path`` for every module it imports
    for _ in range(_MAX_DEPTH):
        following = []
        for file, imports in frontier:
            folder = os.path.dirname(file)
            roots = list(dict.fromkeys([*_roots(file), *entry_roots]))
            for mod, level, names in imports:
                for candidate in _candidates(folder, roots, mod, level, names):
                    candidate = os.path.abspath(candidate)
                    if candidate in seen or len(seen) > _MAX_FILES:
                        continue
                    seen.add(candidate)
                    draws, more = _summarize(candidate)
                    for function, line, family in draws:
                        if family in families and not function.startswith(_LOCAL):
                            if not called or function == "<module>":
                                return candidate, function, line
                            pending.append((candidate, function, line))
                    following.append((candidate, more))
        frontier = following
    if not pending:
        return None
    texts = {me: _code(module)}
    for file in seen - {me}:
        if os.path.basename(file) == "__init__.py":
            continue  # a package's re-exports name every mechanism it has
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                texts[file] = handle.read(_MAX_BYTES)
        except OSError:
            continue
    for file, function, line in pending:
        # the function, or the class whose method it is (``NoisyAdam(lr=…)`` whose ``get_updates`` Keras calls)
        tree = _tree(file)
        names = {function.rsplit(".", 1)[-1]} | {
            node.name for node in ([] if tree is None else ast.walk(tree)) if isinstance(node, ast.ClassDef)
            and node.lineno <= line <= (node.end_lineno or node.lineno)}
        for name in names:
            use = re.compile(r"(?<![\w])" + re.escape(name) + r"(?![\w])")
            definition = re.compile(r"(?:def|class)\s+" + re.escape(name) + r"(?![\w])")
            for other, text in texts.items():
                if other != file and len(use.findall(text)) > len(definition.findall(text)):
                    return file, function, line
    return None


_SEEDERS = {("np.random", "seed"): "numpy", ("numpy.random", "seed"): "numpy", ("random", "seed"): "random",
            ("torch", "manual_seed"): "torch", ("torch.cuda", "manual_seed"): "torch",
            ("torch.cuda", "manual_seed_all"): "torch", ("tf", "set_random_seed"): "tf", ("tf.random", "set_seed"): "tf",
            ("tf.compat.v1", "set_random_seed"): "tf", ("tensorflow", "set_random_seed"): "tf",
            ("tensorflow.random", "set_seed"): "tf"}


def seeding_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[str | None, str, object]]:
    """What a seeding helper seeds: (its parameter or None for a literal, the generator family, the parameter's
    literal default or the literal) for each ``np.random.seed(x)``/``random.seed(x)``/``torch.manual_seed(x)``."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults: dict[str, object] = {}
    for param, default in zip(positional[::-1], a.defaults[::-1]):
        if isinstance(default, ast.Constant):
            defaults[param.arg] = default.value
    for param, default in zip(a.kwonlyargs, a.kw_defaults):
        if isinstance(default, ast.Constant):
            defaults[param.arg] = default.value
    out: list[tuple[str | None, str, object]] = []
    for call in ast.walk(fn):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            continue
        family = _SEEDERS.get((_dotted(call.func.value) or "", call.func.attr))
        if family is None or not call.args:
            continue
        seed = call.args[0]
        if isinstance(seed, ast.Constant) and isinstance(seed.value, int):
            out.append((None, family, seed.value))
        elif isinstance(seed, ast.Name) and seed.id in _params(fn):
            out.append((seed.id, family, defaults.get(seed.id)))
        elif isinstance(seed, ast.Attribute) and isinstance(seed.value, ast.Name) and seed.value.id in _params(fn):
            out.append((f"{seed.value.id}.{seed.attr}", family, None))  # ``def set_seed(args): np.random.seed(args.seed)``
    return out


def imported_seeding_helper(path: str | None, module: cst.Module, name: str,
                            receiver: str | None = None) -> tuple[list[str], list[tuple[str | None, str, object]]] | None:
    """(parameter names, what it seeds) of a function ``name`` that this file imports from a project module
    (``from utils import set_seed``), or of ``receiver.name`` where ``receiver`` is an imported project module
    (``import tools``/``from utils import tools``/``import lib.tools as tools``: ``tools.set_rng_seed(…)``); None
    when it is not such a function."""
    if not path or not os.path.isfile(path):
        return None
    me = os.path.abspath(path)
    folder, roots = os.path.dirname(me), _roots(me)
    for mod, level, names, alias in _module_imports_aliased(module) if receiver else [
            (m, lv, n, None) for m, lv, n in _module_imports(module)]:
        if receiver is not None:
            if alias != receiver:
                continue
            options = _candidates(folder, roots, mod, level, ())
        elif name not in names and "*" not in names:
            continue
        else:
            options = _candidates(folder, roots, mod, level, ())
        for candidate in options:
            tree = _tree(candidate)
            for node in [] if tree is None else tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
                    return _params(node), seeding_params(node)
    return None


_TREES: dict[str, tuple[float, ast.Module | None]] = {}
_ADDITIONS: dict[tuple[str, str], tuple[ast.Module | None, list[str]]] = {}
_LAST_CODE: list = []  # [module, its code]


def _code(module: cst.Module) -> str:
    """``module.code``, generated once per module: it costs a walk of the whole tree, and the callers
    here run once per noise draw of a file."""
    if _LAST_CODE and _LAST_CODE[0] is module:
        return _LAST_CODE[1]
    _LAST_CODE[:] = [module, module.code]
    return _LAST_CODE[1]


def _tree(path: str) -> ast.Module | None:
    try:
        mtime = os.path.getmtime(path)
    except OSError:
        return None
    cached = _TREES.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            raise OSError(path)
        with open(path, encoding="utf-8", errors="replace") as handle:
            tree: ast.Module | None = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        tree = None
    _TREES[path] = (mtime, tree)
    return tree


def project_noise_draw(path: str | None, module: cst.Module, families: set[str],
                       called: bool = False) -> tuple[str, str, int] | None:
    """(file, function, line) of DP noise drawn from one of ``families``' global generators in this file or in a
    project module it imports (a few levels deep): a mechanism taking ε, an Opacus engine without secure mode, a
    TensorFlow Privacy optimizer, a torch draw scaled by a sensitivity or noise multiplier."""
    on_disk = bool(path) and os.path.isfile(path)  # type: ignore[arg-type]
    if on_disk and _tree(os.path.abspath(path)) is None:  # type: ignore[arg-type]
        # the file on disk does not parse as is (a notebook export's ``!pip install`` line): read the text the
        # scan parsed
        me = os.path.abspath(path)  # type: ignore[arg-type]
        try:
            own = _summarize_tree(ast.parse(_code(module)))[0]
        except (SyntaxError, ValueError):
            own = []
    elif on_disk:
        me = os.path.abspath(path)  # type: ignore[arg-type]
        own = _summarize(me)[0]
    else:
        me = path or "<module>"
        try:
            own = _summarize_tree(ast.parse(_code(module)))[0]
        except (SyntaxError, ValueError):
            own = []
    for function, line, family in own:
        if family in families:
            return me, function.lstrip(_LOCAL), line
    return imported_mechanism_draw(path, module, families, called) if on_disk else None


def importer_noise_draw(path: str | None, families: set[str]) -> tuple[str, str, int] | None:
    """(file, function, line) of DP noise drawn from one of ``families``' global generators by a project module of
    the same folder that imports this one (``import utils`` / ``from utils import …``): a module seeding the
    generator at import fixes the draws of every module that imports it."""
    if not path or not os.path.isfile(path):
        return None
    me = os.path.abspath(path)
    folder, stem = os.path.dirname(me), os.path.splitext(os.path.basename(me))[0]
    try:
        siblings = sorted(f for f in os.listdir(folder) if f.endswith(".py"))[:_MAX_FILES]
    except OSError:
        return None
    for name in siblings:
        other = os.path.join(folder, name)
        if other == me:
            continue
        draws, imports = _summarize(other)
        if not any((mod.split(".")[-1] == stem or stem in names) and level <= 1 for mod, level, names in imports):
            continue
        for function, line, family in draws:
            if family in families and not function.startswith(_LOCAL):
                return other, function, line
    return None


def _global_seed_family(call: ast.Call, families: dict[str, str]) -> str | None:
    """The family a direct global seeding call fixes: ``np.random.seed(x)``, ``torch.manual_seed(x)``,
    ``random.seed(x)``, ``torch.cuda.manual_seed(x)``."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ("seed", "manual_seed", "manual_seed_all"):
        return None
    receiver = _dotted(call.func.value) or ""
    if receiver == "torch.cuda":
        return "torch"
    family = families.get(receiver)
    if family is None or (call.func.attr == "seed") == (family == "torch"):
        return None
    return family


def _step_draws(fn: ast.AST, families: dict[str, str], parents: dict[int, ast.AST]) -> list[tuple[int, str]]:
    """(line, family) of privacy noise a function draws from a global generator: a calibrated draw whose scale
    names a privacy or noise quantity (``np.random.normal(0, self.sigma * self.clip, size)``), or a standard draw
    multiplied by one (``torch.randn(1).item() * self.gaussian_std``)."""
    out: list[tuple[int, str]] = []
    for call in ast.walk(fn):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            continue
        family = families.get(_dotted(call.func.value) or "")
        draw = call.func.attr
        if family is None or any(k.arg in ("generator", "seed", "random_state") for k in call.keywords):
            continue  # ``torch.randn(1, generator=gen)``: a generator of its own
        node: ast.AST = call
        parent = parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.attr in ("item", "float", "numpy", "tolist"):
            node = parents.get(id(parent), parent)  # ``torch.randn(1).item() * std``
        if draw in _CALIBRATED and _calibrated(call, draw):
            position, keywords = _CALIBRATED[draw]
            scale = [k.value for k in call.keywords if k.arg in keywords] or call.args[position:position + 1]
            if _privacy_scaled(scale) or any(
                    words(n.id if isinstance(n, ast.Name) else n.attr) & {"sigma", "std", "gaussian", "laplace"}
                    for v in scale for n in ast.walk(v) if isinstance(n, (ast.Name, ast.Attribute))):
                out.append((call.lineno, family))
        elif draw in _STANDARD and isinstance(node, ast.Call) and _scaled(node, parents, _SCALE_WORDS | {"gaussian"}):
            out.append((call.lineno, family))
    return out


def reseeding_callers(path: str | None, module: cst.Module, helper: str,
                      seeded: set[str]) -> list[tuple[str, str, int, int]]:
    """(file, function, call line, draw line) of each function, in this file or in a project module of the same
    folder that imports it, that calls ``helper`` (``self.select_clients(i)``, ``perturb(model, seed)``) and later
    draws privacy noise from one of the ``seeded`` global generators, which ``helper`` reseeds on its way: the
    noise is then a function of the helper's seed."""
    on_disk = bool(path) and os.path.isfile(path)  # type: ignore[arg-type]
    files: list[tuple[str, ast.Module | None]] = []
    if on_disk:
        me = os.path.abspath(path)  # type: ignore[arg-type]
        files.append((me, _tree(me)))
        folder, stem = os.path.dirname(me), os.path.splitext(os.path.basename(me))[0]
        try:
            siblings = sorted(f for f in os.listdir(folder) if f.endswith(".py"))[:_MAX_FILES]
        except OSError:
            siblings = []
        for name in siblings:
            other = os.path.join(folder, name)
            if other == me:
                continue
            _, imports = _summarize(other)
            if any((mod.split(".")[-1] == stem or stem in names) and level <= 1 for mod, level, names in imports):
                files.append((other, _tree(other)))
    else:
        try:
            files.append((path or "<module>", ast.parse(_code(module))))
        except (SyntaxError, ValueError):
            pass
    out: list[tuple[str, str, int, int]] = []
    for file, tree in files:
        if tree is None:
            continue
        families = dict(FAMILIES)
        parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name == helper \
                    or fn.name.startswith("test"):
                continue
            calls = [c.lineno for c in ast.walk(fn) if isinstance(c, ast.Call) and (
                isinstance(c.func, ast.Name) and c.func.id == helper
                or isinstance(c.func, ast.Attribute) and c.func.attr == helper
                and isinstance(c.func.value, ast.Name) and c.func.value.id in ("self", "cls"))]
            if not calls:
                continue
            reseeds = [c.lineno for c in ast.walk(fn) if isinstance(c, ast.Call)
                       and _global_seed_family(c, families) in seeded]
            for line, family in _step_draws(fn, families, parents):
                before = [c for c in calls if c < line]
                # the step's own reseed between the helper's call and the draw decides instead
                if family in seeded and before and not any(max(before) < r < line for r in reseeds):
                    out.append((file, fn.name, max(before), line))
                    break
    return out
