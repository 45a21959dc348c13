"""Helpers shared by the DP50x rules (noise order, truncated noise, classical Gaussian, budget loops)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.syntax import call_name, last_name, number, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS, STRONG_NOISE_DRAWS

#: draws that are noise by themselves (not helpers such as ``add_noise(x)`` that return a noisy value)
PURE_DRAWS = (NOISE_DRAWS | STRONG_NOISE_DRAWS | {"normal_noise", "laplace_noise", "gaussian_noise"}) - {
    "add_noise", "sample", "rvs",
}
EPS_WORDS = frozenset({"epsilon", "eps"})


#: parameter names a noise helper gives its scale
_SCALE_PARAMS = frozenset({"scale", "b", "beta", "std", "stddev", "sigma", "lam", "lambda", "lambd", "lamda", "noise",
                           "lap", "laplace", "var", "variance", "sd", "width", "spread"})


def user_helper_without_scale(call: cst.Call, callee: cst.FunctionDef | None, index: int) -> bool:
    """``laplace(value, epsilon)`` runs the module's own ``def laplace(val, epsilon)``: its argument at
    ``index`` is whatever that helper names it, not a library draw's scale."""
    if callee is None:
        return False
    params = [p.name.value for p in (*callee.params.posonly_params, *callee.params.params)]
    if params and params[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
        params = params[1:]
    if any(a.keyword is not None and a.keyword.value == "scale" for a in call.args):
        return "scale" not in params
    return index >= len(params) or not words(params[index]) & _SCALE_PARAMS


def is_draw(expr: cst.BaseExpression) -> bool:
    """A random draw, possibly scaled: ``np.random.normal(0, s, d)``, ``s * torch.randn(n)``."""
    if isinstance(expr, cst.Call):
        return call_name(expr) in PURE_DRAWS
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return is_draw(expr.left) or is_draw(expr.right)
    return False


def zero_centred(call: cst.Call) -> bool:
    """A draw centred on 0: ``normal(0, s)``, ``normal(scale=s)``, ``randn(n)``, ``torch.normal(0.0, s)``,
    ``normal(torch.zeros_like(x), s)`` (not ``normal(mean, s)``, which perturbs a value)."""
    name = call_name(call)
    if name not in ("normal", "laplace", "gumbel", "Normal", "Laplace", "gauss", "normalvariate"):
        return True
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("loc", "mean", "mu"):
            return _zero(arg.value)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if not positional or "stddev" in keywords:
        # tf.random.normal(shape, mean=0.0, stddev=…): the positional argument is the shape
        return True
    if len(positional) == 1 and not keywords & {"scale", "std", "stddev", "sigma"}:
        # one positional argument: numpy reads it as loc, torch/tf as a shape or mean; a name is a value
        return number(positional[0]) is not None or not isinstance(positional[0], (cst.Name, cst.Attribute))
    return _zero(positional[0])


def _zero(expr: cst.BaseExpression) -> bool:
    if number(expr) == 0:
        return True
    return isinstance(expr, cst.Call) and call_name(expr) in ("zeros", "zeros_like", "zeros_like_")


def adds_draw(expr: cst.BaseExpression) -> bool:
    """``x + draw`` (or ``draw + x``) anywhere at the top of ``expr``'s sums."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return is_draw(expr.left) or is_draw(expr.right) or adds_draw(expr.left) or adds_draw(expr.right)
    return False


def last_assignment(fn: cst.CSTNode, name: str, before_line: int, line_of) -> cst.BaseExpression | None:
    """The value of the last plain ``name = value`` in ``fn`` on a line before ``before_line``."""
    found: tuple[int, cst.BaseExpression] | None = None
    for node in walk(fn, into_scopes=False):
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0].target
        if not isinstance(target, cst.Name) or target.value != name:
            continue
        line = line_of(node)
        if line < before_line and (found is None or line >= found[0]):
            found = (line, node.value)
    return found[1] if found else None


def is_eps(expr: cst.CSTNode) -> bool:
    name = last_name(expr)
    return name is not None and bool(words(name) & EPS_WORDS)


def is_one(expr: cst.CSTNode) -> bool:
    return number(expr) == 1


_ACCOUNTANT_CHARGE = re.compile(
    r"(?i)(accountant|compute_rdp|get_privacy_spent|accumulate_privacy_spending|compute_log_moment|"
    r"compute_dp_sgd_privacy|compute_eps|get_epsilon|privacy_spent|^rdp_|_rdp$|make_private)")


def charges_accountant(call: cst.Call) -> bool:
    """A call that composes a noise multiplier into a moments/RDP/PRV accountant: ``compute_rdp(q, σ, …)``,
    ``GaussianMomentsAccountant(…)``, ``accountant.accumulate_privacy_spending(…, σ, …)``,
    ``accountant.step(noise_multiplier=σ, …)``."""
    name = call_name(call)
    if _ACCOUNTANT_CHARGE.search(name):
        return True
    return name == "step" and any(a.keyword is not None and a.keyword.value in ("noise_multiplier", "sigma")
                                  for a in call.args)


# -- a draw-named call that runs the project's own operator ---------------------------------------------------------
#: modules whose ``laplace``/``normal``/``Laplace`` … are distribution draws (loc, scale)
_DRAW_LIBS = frozenset({"numpy", "np", "scipy", "torch", "tensorflow", "tf", "jax", "jnp", "jr", "random", "tfp",
                        "tensorflow_probability", "pyro", "numpyro", "distrax", "secrets", "cupy", "mxnet", "paddle"})
#: receiver words of a random generator object (``rng.laplace``, ``self.prng.normal``, ``random_state.laplace``)
_RNG_WORDS = frozenset({"rng", "prng", "random", "generator", "gen", "rs", "rand", "randomstate", "state", "dist",
                        "distribution", "distributions", "np", "numpy", "torch", "key", "seed", "sampler", "noise"})
_DRAW_DEF_NAMES = ("laplace", "Laplace", "gumbel", "Gumbel", "logistic", "exponential", "Exponential", "normal",
                   "Normal", "gauss", "normalvariate")
_DEF_RE = re.compile(r"^[ \t]*(?:def|class)[ \t]+(" + "|".join(_DRAW_DEF_NAMES) + r")\b", re.M)
_SKIP_DIRS = frozenset({".git", ".venv", "venv", "site-packages", "node_modules", "__pycache__", "build", "dist"})
_PROJECT_DEFS: dict[str, dict[str, list[list[str]]]] = {}


def project_root(path: str) -> str:
    """The folder above the file's top-level package (the file's own folder for a script)."""
    import os

    folder = os.path.dirname(os.path.abspath(path))
    top = folder
    while os.path.isfile(os.path.join(top, "__init__.py")):
        parent = os.path.dirname(top)
        if parent == top:
            break
        top = parent
    return top


def _project_defs(root: str) -> dict[str, list[list[str]]]:
    """Draw-named functions, methods and classes the project under ``root`` defines: name -> the parameter
    lists (without ``self``/``cls``; a class's ``__init__``). Read once per root with ``ast``, in sorted order."""
    import ast
    import os

    if root in _PROJECT_DEFS:
        return _PROJECT_DEFS[root]
    found: dict[str, list[list[str]]] = {}
    files: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))
        if len(files) > 4000:
            break
    for file in files:
        try:
            with open(file, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            continue
        _defs_of(text, found)
    _PROJECT_DEFS[root] = found
    return found


def _defs_of(text: str, found: dict[str, list[list[str]]]) -> None:
    import ast

    if not _DEF_RE.search(text):
        return
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        fn: ast.AST | None = None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _DRAW_DEF_NAMES:
            fn = node
        elif isinstance(node, ast.ClassDef) and node.name in _DRAW_DEF_NAMES:
            fn = next((b for b in node.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
            if fn is None:
                continue
        if fn is None:
            continue
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)]  # type: ignore[attr-defined]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        found.setdefault(node.name, []).append(params)  # type: ignore[attr-defined]


def _library_receiver(fa, expr: cst.BaseExpression) -> bool:  # type: ignore[no-untyped-def]
    """``np.random``, ``rng``, ``self.prng``, ``torch.distributions``, a name imported from numpy/torch/…, a
    local bound to ``default_rng(…)``/``RandomState(…)``: a random generator whose draws take (loc, scale)."""
    from dpcheck.analysis.syntax import dotted

    text = dotted(expr)
    if text is None:
        return True  # ``np.random.default_rng(0).laplace``: a call's result, assume a generator
    parts = text.split(".")
    if parts[0] in _DRAW_LIBS or any(words(p) & _RNG_WORDS for p in parts):
        return True
    root = expr
    while isinstance(root, cst.Attribute):
        root = root.value
    if isinstance(root, cst.Name):
        binding = fa.binding(root)
        if binding is not None:
            if binding.kind == "import":
                module = _import_module(binding.stmt)
                return module is None or module.split(".")[0] in _DRAW_LIBS
            value = binding.value
            if isinstance(value, cst.Call):  # ``r = np.random.RandomState(seed)``, ``g = default_rng()``
                made = dotted(value.func) or ""
                return made.split(".")[0] in _DRAW_LIBS or bool(words(call_name(value)) & (
                    _RNG_WORDS | {"default", "randomstate", "generator", "prngkey"}))
    return False


def _import_module(stmt: cst.CSTNode) -> str | None:
    from dpcheck.analysis.syntax import dotted

    if isinstance(stmt, cst.ImportFrom):
        if stmt.relative:
            return "."  # a relative import: the project's own module
        return dotted(stmt.module) if stmt.module is not None else None
    if isinstance(stmt, cst.Import):
        return dotted(stmt.names[0].name)
    return None


def project_operator_without_scale(ctx, call: cst.Call, index: int) -> bool:  # type: ignore[no-untyped-def]
    """``x.laplace(M, eps)``, ``measurement.Laplace(M, eps)``, ``Laplace(M, eps)`` imported from the project:
    the call runs an operator the scanned project defines (a method, function or class named like a draw), not a
    numpy/torch/scipy draw, and every such definition names its argument at ``index`` something other than a
    scale (``eps``: a budget the operator divides by). Calls on a random generator or on a library module, and
    names imported from a library, are draws."""
    name = call_name(call)
    if name not in _DRAW_DEF_NAMES or any(a.keyword is not None and a.keyword.value in ("scale", "std", "stddev")
                                          for a in call.args):
        return False
    fa = ctx.analysis
    func = call.func
    if isinstance(func, cst.Attribute):
        if _library_receiver(fa, func.value):
            return False
    elif isinstance(func, cst.Name):
        binding = fa.binding(func)
        if binding is None or binding.kind not in ("import", "class", "def"):
            return False
        module = _import_module(binding.stmt) if binding.kind == "import" else "."
        if module is None or module.split(".")[0] in _DRAW_LIBS:
            return False
    else:
        return False
    import os

    path = getattr(ctx, "path", None)
    if path and os.path.isfile(path):
        defs = _project_defs(project_root(path)).get(name)
    else:  # source without a file (stdin, a test case): its own definitions only
        own: dict[str, list[list[str]]] = {}
        _defs_of(ctx.source, own)
        defs = own.get(name)
    if not defs:
        return False
    return all(index < len(params) and not words(params[index]) & _SCALE_PARAMS for params in defs)


# -- a helper the project never refers to ---------------------------------------------------------------------------
_TOKENS: dict[str, dict[str, int]] = {}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STAR = re.compile(r"^[ \t]*from[ \t]+([.\w]+)[ \t]+import[ \t]+\*", re.M)


def _project_tokens(root: str) -> dict[str, int]:
    """How often each identifier-like token occurs in the project's ``.py`` files (code, strings and comments
    alike, so a mention anywhere counts as a use). Read once per root."""
    import os

    if root in _TOKENS:
        return _TOKENS[root]
    counts: dict[str, int] = {}
    seen = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for n in sorted(names):
            if not n.endswith(".py"):
                continue
            seen += 1
            if seen > 4000:
                break
            try:
                with open(os.path.join(folder, n), encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except OSError:
                continue
            for token in _IDENT.findall(text):
                counts[token] = counts.get(token, 0) + 1
            if n == "__init__.py":  # ``from .core import *`` in a package: core's names are its public API
                for module in _STAR.findall(text):
                    key = " reexported:" + module.rsplit(".", 1)[-1]
                    counts[key] = 1
    _TOKENS[root] = counts
    return counts


def _installable(root: str) -> bool:
    """A project users install (its build files, or the metadata an installed wheel or sdist carries beside the
    package): its public functions are an API whose callers are outside the scanned tree."""
    import os

    if any(os.path.isfile(os.path.join(root, f)) for f in ("setup.py", "pyproject.toml", "setup.cfg", "PKG-INFO")):
        return True
    try:
        return any(n.endswith((".dist-info", ".egg-info")) for n in os.listdir(root))
    except OSError:
        return False


def never_referenced(ctx, fn: cst.FunctionDef | None, *, methods: bool = False) -> bool:  # type: ignore[no-untyped-def]
    """A module-level function whose name occurs nowhere in the scanned project but its own ``def`` (no call,
    import, export, registry entry, string or comment names it): a dead helper, it releases nothing. Only for a
    file on disk inside a project (a package or a folder with other modules); methods and nested functions are
    never counted dead."""
    import os

    if fn is None or fn.name.value.startswith("__"):
        return False
    path = getattr(ctx, "path", None)
    if not path or not os.path.isfile(path):
        return False
    fa = ctx.analysis
    if isinstance(fa.parent(fn), cst.Module):
        public = not fn.name.value.startswith("_")
    elif methods:  # ``methods``: also a method of a module-level class, counted as public API
        owner = fa.enclosing_class(fn)
        if owner is None or not isinstance(fa.parent(owner), cst.Module) or fa.enclosing_function(fn) is not None:
            return False
        public = True
    else:
        return False
    tokens = _project_tokens(project_root(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    root = project_root(path)
    if public and (" reexported:" + stem in tokens or _installable(root)):
        return False  # a library's public API (re-exported by a package ``__init__``, or installable): users call it
    return tokens.get(fn.name.value, 0) == 1


def project_mentions(ctx, tokens: frozenset[str]) -> bool:  # type: ignore[no-untyped-def]
    """Does any ``.py`` file of the scanned project (the file's project root) contain one of ``tokens`` as an
    identifier? ``False`` for a file not on disk (rule cases): the project is the file alone."""
    import os

    path = getattr(ctx, "path", None)
    if not path or not os.path.isfile(path):
        return False
    counts = _project_tokens(project_root(path))
    return any(counts.get(t, 0) for t in tokens)
