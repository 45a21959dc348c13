"""Values that are already the output of a DP mechanism: statistics of them are post-processing.

A statistic, a normalisation, a clustering or a domain computed on values a mechanism released
(LDPGen's server fitting KMeans on the clients' Laplace-noised degree vectors, a rescaling of a
noisy Gaussian-mechanism sample, a ``Counter`` over randomized-response reports) reads nothing
private: DP is closed under post-processing. This module says which values are such outputs,
with CPython's ``ast`` (shared by the per-file rules and the project join):

* a *noise draw*: ``np.random.laplace(…)``, ``rng.normal(…)``, ``torch.normal(…)``,
  ``Laplace(loc, scale).sample(…)``, or a name bound only to values built from draws;
* a *noised value*: ``x + draw`` (``x - draw``, ``x += draw``), whatever ``x`` is: the sum is the
  mechanism's output;
* a *mechanism* of the module: a function or method every ``return`` of which hands back a noised
  value (``def gaussian_mechanism(x, s): return x + np.random.normal(0, s, x.shape)``), or a
  randomized response (``return x`` or a random draw, decided by a random test); its call's result;
* a *released* expression: a noised value or a mechanism's result, or built only from released
  names, constants and the schema of other values (``pd.DataFrame(sample, columns=data.columns)``,
  ``np.array(reports)``, ``delta.cpu().numpy()``);
* a *released* name: every binding of it (assignments, ``xs.append(v)``, ``d[k] = v``; ``self.x``
  across the class's methods) is released or holds no data (``[]``, ``np.zeros(x.shape)``), at
  least one released; for a read after a top-level re-binding (``delta = delta + noise``) only
  that binding counts;
* a *released* parameter: every call of the function in the module passes a released value.

A noised value mixed with a raw one (``noisy + x``, ``np.concatenate([noisy, x])``) is not
released. Noise added to a loss is not a mechanism (``loss + noise``).
"""
from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Iterator, Mapping

from dpcheck.analysis.astfacts import func_name
from dpcheck.analysis.astnames import dotted

#: calls that draw noise by themselves (the last name of the called function)
_STRONG = frozenset({"laplace", "gumbel", "Laplace", "Gumbel", "laplace_noise", "gaussian_noise", "geometric"})
#: calls that draw noise when called on a random source (``np.random.normal``, ``rng.normal``, ``torch.randn``)
_DRAWS = frozenset({"normal", "randn", "standard_normal", "normal_", "randn_like", "multivariate_normal",
                    "exponential", "exponential_", "standard_exponential", "logistic"})
#: roots of a random source
_SOURCES = frozenset({"random", "rng", "prng", "gen", "generator", "rs", "random_state", "torch", "jax", "secrets",
                      "np_rng", "noise_rng", "rand_gen", "randomizer"})
#: distribution objects whose ``.sample()`` / ``.rsample()`` / ``.rvs()`` is a noise draw
_DISTRIBUTIONS = frozenset({"Laplace", "Normal", "Gumbel", "MultivariateNormal", "laplace", "norm", "gumbel_r"})
#: attributes and calls reading a value's schema, not its values
_SCHEMA = frozenset({"shape", "columns", "index", "dtype", "dtypes", "size", "ndim", "device", "names", "keys",
                     "num_nodes", "num_edges", "num_features", "num_classes"})
_SIZE_CALLS = frozenset({"len", "range", "enumerate", "zeros", "ones", "empty", "zeros_like", "ones_like",
                         "empty_like", "full", "arange", "eye", "identity", "device", "isinstance", "type"})
#: module roots (their attributes are functions, not values)
_LIBS = frozenset({"np", "numpy", "torch", "pd", "pandas", "math", "scipy", "sp", "tf", "jnp", "jax", "F", "nn",
                   "random", "stats", "self", "cls", "None", "True", "False", "int", "float", "str", "list", "dict",
                   "tuple", "set", "len", "range", "sum", "min", "max", "abs", "round", "sorted", "zip", "enumerate"})
_LOSS = frozenset({"loss", "losses", "objective", "augment", "augmented", "aug"})
_MAX_ROUNDS = 6

Function = ast.FunctionDef | ast.AsyncFunctionDef


def _words(name: str) -> set[str]:
    return {w for w in name.lower().replace(".", "_").split("_") if w}


def noise_draw(node: ast.AST) -> bool:
    """A call that draws noise: ``np.random.laplace(0, b)``, ``rng.normal(0, s, n)``, ``torch.normal(…)``,
    ``Laplace(0, b).sample((n,))``, ``scipy.stats.laplace.rvs(…)``, ``noise.normal_(0, s)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    last = func_name(func)
    if last in _STRONG:
        return True
    if isinstance(func, ast.Attribute) and last in {"sample", "rsample", "rvs"}:
        owner = func.value
        name = func_name(owner.func) if isinstance(owner, ast.Call) else func_name(owner)
        return name in _DISTRIBUTIONS
    if last in _DRAWS and isinstance(func, ast.Attribute):
        root = dotted(func.value) or ""
        return bool(set(root.split(".")) & _SOURCES) or last.endswith("_")
    return False


def _contains_draw(expr: ast.AST) -> bool:
    return any(noise_draw(n) for n in ast.walk(expr))


def _functions(tree: ast.Module) -> Iterator[tuple[str, Function, ast.ClassDef | None]]:
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield stmt.name, stmt, None
        elif isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{stmt.name}.{item.name}", item, stmt


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``fn``'s body, nested defs and classes not entered (lambdas are)."""
    stack = list(getattr(fn, "body", []))[::-1]
    while stack:
        node = stack.pop()
        yield node
        for child in reversed(list(ast.iter_child_nodes(node))):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append(child)


def function_params(fn: Function) -> list[str]:
    args = fn.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


class _Binding:
    __slots__ = ("value", "line", "top", "kind")

    def __init__(self, value: ast.AST | None, line: int, top: bool, kind: str = "") -> None:
        self.value = value
        self.line = line
        self.top = top  # a statement directly in the function's body (not under an if/loop/try)
        self.kind = kind  # "" (read the value), "item" (an element put in a container)


def _target_keys(target: ast.AST) -> list[str]:
    while isinstance(target, (ast.Subscript, ast.Starred)):
        target = target.value
    if isinstance(target, (ast.Tuple, ast.List)):
        return [k for elt in target.elts for k in _target_keys(elt)]
    key = dotted(target)
    return [key] if key else []


def _bindings(fn: ast.AST) -> dict[str, list[_Binding]]:
    """name (or ``self.x``) -> its bindings in ``fn``'s own body."""
    out: dict[str, list[_Binding]] = {}
    top = {id(s) for s in getattr(fn, "body", [])}

    def add(keys: Iterable[str], value: ast.AST | None, node: ast.AST, kind: str = "") -> None:
        for key in keys:
            out.setdefault(key, []).append(_Binding(value, getattr(node, "lineno", 0), id(node) in top, kind))

    for node in _own_nodes(fn):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                whole = isinstance(target, (ast.Name, ast.Attribute))
                add(_target_keys(target), node.value, node, "" if whole or isinstance(target, (ast.Tuple, ast.List))
                    else "item")
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            add(_target_keys(node.target), node.value, node)
        elif isinstance(node, ast.AugAssign):
            if isinstance(node.op, (ast.Add, ast.Sub)) and _contains_draw(node.value):
                add(_target_keys(node.target), ast.BinOp(left=node.target, op=node.op, right=node.value), node)
            else:
                add(_target_keys(node.target), node.value, node, "item")
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            add(_target_keys(node.target), node.iter, node, "loop")
        elif isinstance(node, ast.comprehension):
            add(_target_keys(node.target), node.iter, node, "loop")
        elif isinstance(node, ast.NamedExpr):
            add(_target_keys(node.target), node.value, node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args \
                and node.func.attr in {"append", "extend", "add", "insert", "put", "appendleft"}:
            key = dotted(node.func.value)
            if key:
                add([key], node.args[-1], node, "item")
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    add(_target_keys(item.optional_vars), item.context_expr, node)
    return out


class Released:
    """The module's DP outputs: mechanisms, and the released names of each function."""

    def __init__(self, tree: ast.Module, foreign: Mapping[int, bool] | None = None, find: bool = True) -> None:
        self.tree = tree
        #: id(call) -> the call's result is (True) or is not (False) a DP output, decided elsewhere
        #: (a mechanism of another module, resolved by the project join)
        self.foreign = dict(foreign or {})
        self.functions = {key: (fn, cls) for key, fn, cls in _functions(tree)}
        self._bindings: dict[int, dict[str, list[_Binding]]] = {}
        self._class_attrs: dict[str, dict[str, list[tuple[_Binding, Function]]]] = {}
        self._names: dict[int, set[str]] = {}
        self._noise: dict[int, set[str]] = {}
        self._params: dict[str, set[str]] | None = None
        self.mechanisms: set[str] = set()
        self._neutral_extra: dict[int, set[str]] = {}
        self._neutral_cache: dict[int, set[str]] = {}
        self._class_done: dict[str, set[str]] = {}
        self._may: dict[int, bool] = {}
        if find:  # ``find=False``: a module that draws nothing defines no mechanism (a cheap text test said so)
            self._mechanisms()

    # -- per function ----------------------------------------------------------------------
    def bindings(self, fn: ast.AST) -> dict[str, list[_Binding]]:
        found = self._bindings.get(id(fn))
        if found is None:
            found = self._bindings[id(fn)] = _bindings(fn)
        return found

    def noise_names(self, fn: ast.AST) -> set[str]:
        """Names bound only to draws or to values built from draws (``noise = rng.laplace(0, b, n)``)."""
        found = self._noise.get(id(fn))
        if found is not None:
            return found
        found = set()
        binds = self.bindings(fn)
        for _ in range(_MAX_ROUNDS):
            grown = False
            for name, bs in binds.items():
                if name in found or _words(name) & _LOSS:
                    continue
                if all(b.value is not None and b.kind != "loop" and (
                        _contains_draw(b.value) or _reads(b.value) & found) for b in bs):
                    found.add(name)
                    grown = True
            if not grown:
                break
        self._noise[id(fn)] = found
        return found

    def _noised(self, node: ast.AST, noise: set[str]) -> bool:
        """``x + draw`` (or ``draw + x``, ``x - draw``): a mechanism's output."""
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))):
            return False
        if any(_words(k) & _LOSS for k in _reads(node.left)):
            return False
        return any(noise_draw(side) or dotted(side) in noise or
                   (isinstance(side, ast.Call) and func_name(side.func) in {"to", "cuda", "cpu", "reshape", "view", "float"}
                    and isinstance(side.func, ast.Attribute) and noise_draw(side.func.value))
                   for side in (node.left, node.right))

    def _mechanism_call(self, node: ast.AST, fn: ast.AST) -> bool:
        if not isinstance(node, ast.Call):
            return False
        if id(node) in self.foreign:
            return self.foreign[id(node)]
        key = self._callee_key(node.func, fn)
        return key is not None and key in self.mechanisms

    def _callee_key(self, func: ast.expr, fn: ast.AST) -> str | None:
        if isinstance(func, ast.Name) and func.id in self.functions:
            return func.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            cls = self._class_of(fn)
            if cls is not None and f"{cls.name}.{func.attr}" in self.functions:
                return f"{cls.name}.{func.attr}"
        if isinstance(func, ast.Attribute):
            receiver = self._constructed(func.value, fn)
            if receiver is not None and f"{receiver}.{func.attr}" in self.functions:
                return f"{receiver}.{func.attr}"
        return None

    def _constructed(self, receiver: ast.expr, fn: ast.AST) -> str | None:
        """The module's class an instance name was built from (``m = MVGMechanism(…)``)."""
        key = dotted(receiver)
        if key is None:
            return None
        bs = self.bindings(fn).get(key, [])
        names = {func_name(b.value.func) for b in bs if isinstance(b.value, ast.Call)}
        if len(bs) == 1 and len(names) == 1:
            name = names.pop()
            return name if any(k.startswith(f"{name}.") for k in self.functions) else None
        return None

    def _class_of(self, fn: ast.AST) -> ast.ClassDef | None:
        for f, cls in self.functions.values():
            if f is fn:
                return cls
        return None

    def kind(self, expr: ast.AST, fn: ast.AST, names: set[str], line: int = 0) -> str:
        """``"released"``, ``"neutral"`` (holds no data: constants, sizes, schema) or ``"other"``."""
        noise = self.noise_names(fn)
        released = False
        stack = [expr]
        while stack:
            node = stack.pop()
            if self._noised(node, noise) or self._mechanism_call(node, fn):
                released = True
                continue
            if noise_draw(node):
                continue  # a draw by itself holds no data
            if isinstance(node, ast.Call):
                stack.extend(_call_operands(node))
                continue
            if isinstance(node, ast.Attribute):
                if node.attr in _SCHEMA:
                    continue
                key = dotted(node)
                if key is not None and key.startswith("self."):
                    if key in names:
                        released = True
                        continue
                    if key in noise:
                        continue
                    return "other"
                stack.append(node.value)
                continue
            if isinstance(node, ast.Name):
                if node.id in names:
                    released = True
                elif node.id in noise or node.id in _LIBS or node.id in self.functions:
                    continue
                elif node.id in self._neutral_names(fn):
                    continue
                else:
                    return "other"
                continue
            if isinstance(node, ast.Lambda):
                continue
            if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                # the comprehension's loop targets take their kind from their iterables
                inner = set(names)
                for gen in node.generators:
                    k = self.kind(gen.iter, fn, inner)
                    if k == "other":
                        return "other"
                    if k == "released":
                        inner |= set(_target_keys(gen.target))
                        released = True
                    else:
                        self._neutral_extra.setdefault(id(fn), set()).update(_target_keys(gen.target))
                parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
                for part in parts:
                    k = self.kind(part, fn, inner)
                    if k == "other":
                        return "other"
                    released = released or k == "released"
                continue
            stack.extend(ast.iter_child_nodes(node))
        return "released" if released else "neutral"

    def _neutral_names(self, fn: ast.AST) -> set[str]:
        """Locals holding no data: every binding a constant, a size or the schema (``n, m = data.shape``),
        loop targets over such (``for i in range(n)``), and comprehension targets over them."""
        extra = self._neutral_extra.setdefault(id(fn), set())
        cached = self._neutral_cache.get(id(fn))
        if cached is None:
            cached = self._neutral_cache[id(fn)] = set()  # while computing: nothing is neutral yet
            binds = self.bindings(fn)
            for _ in range(_MAX_ROUNDS):
                grown = False
                for name, bs in binds.items():
                    if name in cached or name.startswith("self."):
                        continue
                    if all(b.value is not None and b.kind in ("", "loop")
                           and self.kind(b.value, fn, set()) == "neutral" for b in bs):
                        cached.add(name)
                        grown = True
                if not grown:
                    break
        return cached | extra

    def names(self, fn: ast.AST, seed: Iterable[str] = ()) -> set[str]:
        """Names of ``fn`` holding released values wherever they are read (``seed``: released parameters)."""
        seed = set(seed)
        cached = self._names.get(id(fn)) if not seed else None
        if cached is not None:
            return cached
        binds = self.bindings(fn)
        cls = self._class_of(fn)
        params = self._params_of(fn) - seed
        out = set(seed) | self._class_released(cls)
        if not out and not self._may_release(fn):
            self._names[id(fn)] = out
            return out
        for _ in range(_MAX_ROUNDS):
            grown = False
            for name, bs in binds.items():
                if name in out or name.startswith("self."):
                    continue
                if name in params:
                    continue  # the caller's value reaches every read no top-level binding overrides
                if self._all_released(bs, fn, out, name):
                    out.add(name)
                    grown = True
            if not grown:
                break
        if not seed:
            self._names[id(fn)] = out
        return out

    def _may_release(self, fn: ast.AST) -> bool:
        """Whether anything in ``fn`` can be a mechanism's output: a draw, or a call of a mechanism. Without
        one no name is released, and the fixpoint (rounds × names × expression) is skipped."""
        found = self._may.get(id(fn))
        if found is None:
            found = self._may[id(fn)] = bool(self.mechanisms) or any(self.foreign.values()) or any(
                noise_draw(n) for n in ast.walk(fn))
        return found

    def _all_released(self, bs: list[_Binding], fn: ast.AST, names: set[str], name: str = "") -> bool:
        """Every binding released or holding no data, one released by itself; a binding may copy
        the name's own values (``s[j] = s[i]``)."""
        kinds = [self.kind(b.value, fn, names | {name} if name else names) if b.value is not None else "other"
                 for b in bs]
        if "other" in kinds:
            return False
        return any(self.kind(b.value, fn, names) == "released" for b in bs if b.value is not None)

    def _params_of(self, fn: ast.AST) -> set[str]:
        return set(function_params(fn)) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else set()

    def _class_released(self, cls: ast.ClassDef | None) -> set[str]:
        """``self.x`` every binding of which, across the class's methods, is released."""
        if cls is None:
            return set()
        attrs = self._class_attrs.get(cls.name)
        if attrs is None:
            attrs = {}
            for key, (fn, owner) in self.functions.items():
                if owner is cls:
                    for name, bs in self.bindings(fn).items():
                        if name.startswith("self."):
                            attrs.setdefault(name, []).extend((b, fn) for b in bs)
            self._class_attrs[cls.name] = attrs
        done = self._class_done
        if cls.name in done:
            return done[cls.name]
        done[cls.name] = set()  # no recursion while computing
        out: set[str] = set()
        for name, pairs in attrs.items():
            kinds = []
            for b, fn in pairs:
                local = self.names(fn) if id(fn) in self._names else self._plain_names(fn)
                kinds.append(self.kind(b.value, fn, local) if b.value is not None else "other")
            if "other" not in kinds and "released" in kinds:
                out.add(name)
        done[cls.name] = out
        return out

    def _plain_names(self, fn: ast.AST) -> set[str]:
        binds = self.bindings(fn)
        params = self._params_of(fn)
        out: set[str] = set()
        for _ in range(_MAX_ROUNDS):
            grown = False
            for name, bs in binds.items():
                if name in out or name.startswith("self."):
                    continue
                if name in params:
                    continue
                if self._all_released(bs, fn, out, name):
                    out.add(name)
                    grown = True
            if not grown:
                break
        return out

    def at(self, name: str, fn: ast.AST, line: int, names: set[str]) -> bool:
        """Is ``name`` released where it is read at ``line``: its last top-level binding before
        ``line`` and the bindings after that one (``delta = delta + noise`` overrides the raw counts)."""
        if name in names:
            return True
        if not names and not self._may_release(fn):
            return False
        bs = [b for b in self.bindings(fn).get(name, []) if b.line < line or not line]
        last_top = max((i for i, b in enumerate(bs) if b.top and b.kind == ""), default=None)
        if last_top is None:
            return False
        return self._all_released(bs[last_top:], fn, names, name)

    # -- mechanisms --------------------------------------------------------------------------
    def _mechanisms(self) -> None:
        for _ in range(_MAX_ROUNDS):
            grown = False
            for key, (fn, _cls) in self.functions.items():
                if key in self.mechanisms or _words(fn.name) & _LOSS:
                    continue
                if self._returns_released(fn) or _randomized_response(fn):
                    self.mechanisms.add(key)
                    self._names.clear()
                    grown = True
            if not grown:
                break

    def _returns_released(self, fn: Function) -> bool:
        returns = [n for n in _own_nodes(fn) if isinstance(n, ast.Return) and n.value is not None]
        if not returns:
            return False
        names = self._plain_names(fn)
        for ret in returns:
            value = ret.value
            key = dotted(value)
            if key is not None and not key.startswith("self."):
                if not self.at(key, fn, ret.lineno, names):
                    return False
                continue
            if self.kind(value, fn, names) != "released":
                return False
        return True

    # -- parameters --------------------------------------------------------------------------
    def released_params(self) -> dict[str, set[str]]:
        """function key -> parameters every call in this module fills with a released value."""
        if self._params is not None:
            return self._params
        calls: dict[str, list[tuple[ast.Call, ast.AST]]] = {}
        for key, (fn, _cls) in self.functions.items():
            for node in _own_nodes(fn):
                if isinstance(node, ast.Call):
                    callee = self._callee_key(node.func, fn)
                    if callee is not None:
                        calls.setdefault(callee, []).append((node, fn))
        for node in self.tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Call):
                        callee = self._callee_key(sub.func, self.tree)
                        if callee is not None:
                            calls.setdefault(callee, []).append((sub, self.tree))
        out: dict[str, set[str]] = {}
        for key, sites in calls.items():
            fn, cls = self.functions[key]
            params = function_params(fn)
            if cls is not None and params[:1] in (["self"], ["cls"]):
                params = params[1:]
            given: set[str] | None = None
            for call, caller in sites:
                names = self.names(caller) if caller is not self.tree else set()
                passed = passed_arguments(call, params)
                here = {p for p, arg in passed.items() if self.expr_released(arg, caller, names, call.lineno)}
                given = here if given is None else given & here
            if given:
                out[key] = given
        self._params = out
        return out

    def expr_released(self, expr: ast.AST, fn: ast.AST, names: set[str], line: int) -> bool:
        key = dotted(expr)
        if key is not None and not key.startswith("self.") and key not in names:
            return self.at(key, fn, line, names)
        return self.kind(expr, fn, names) == "released"

    def last_value(self, name: str, fn: ast.AST, line: int) -> ast.AST | None:
        """The value ``name`` holds at ``line``: its only binding before it, or its last top-level one."""
        bs = [b for b in self.bindings(fn).get(name, []) if b.line < line]
        if len(bs) == 1 and bs[0].kind == "":
            return bs[0].value
        if bs and bs[-1].top and bs[-1].kind == "":
            return bs[-1].value
        return None

    def function_of(self, line: int) -> tuple[str, Function] | None:
        """The innermost of the module's functions and methods around ``line``."""
        best: tuple[str, Function] | None = None
        for key, (fn, _cls) in self.functions.items():
            if fn.lineno <= line <= (fn.end_lineno or fn.lineno):
                best = (key, fn)
        return best

    def reads_released(self, expr: ast.AST, line: int) -> bool:
        """Does ``expr`` (read at ``line``) hold only DP outputs: released names of its function, or
        parameters every call here fills with one, and nothing else that holds data?"""
        found = self.function_of(line)
        if found is None:
            return False
        key, fn = found
        seed = self.released_params().get(key, set())
        names = self.names(fn, seed) if seed else self.names(fn)
        reads = [n for n in _data_leaves(expr)]
        if not reads:
            return False
        return all(self.at(r, fn, line, names) or r in names for r in reads)


def passed_arguments(call: ast.Call, params: list[str]) -> dict[str, ast.expr]:
    out: dict[str, ast.expr] = {}
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        if i < len(params):
            out[params[i]] = arg
    for kw in call.keywords:
        if kw.arg in params:
            out[kw.arg] = kw.value
    return out


def _call_operands(call: ast.Call) -> list[ast.expr]:
    """The values a call reads (its receiver and arguments); none for a size or shape call."""
    if func_name(call.func) in _SIZE_CALLS:
        return []
    out: list[ast.expr] = [call.func.value] if isinstance(call.func, ast.Attribute) else []
    return out + list(call.args) + [k.value for k in call.keywords]


def _reads(expr: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def _data_leaves(expr: ast.AST) -> list[str]:
    """The names (and ``self.x``) ``expr`` reads the values of: not called functions, libraries,
    schema reads or sizes."""
    out: list[str] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            stack.extend(_call_operands(node))
            continue
        if isinstance(node, ast.Attribute):
            if node.attr in _SCHEMA:
                continue
            key = dotted(node)
            if key is not None and key.startswith("self."):
                out.append(".".join(key.split(".")[:2]))
                continue
            stack.append(node.value)
            continue
        if isinstance(node, ast.Name):
            if node.id not in _LIBS and isinstance(node.ctx, ast.Load):
                out.append(node.id)
            continue
        if isinstance(node, ast.Lambda):
            own = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
            out.extend(leaf for leaf in _data_leaves(node.body) if leaf not in own)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def _randomized_response(fn: Function) -> bool:
    """``def perturb(x): if np.random.uniform() < p: return x; else: return <a random choice>``: every
    return is the input or a random draw, behind a random test."""
    params = set(function_params(fn)) - {"self", "cls"}
    returns = [n for n in _own_nodes(fn) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) < 2 or not params:
        return False
    tested = any(isinstance(n, (ast.If, ast.IfExp)) and _random_call(n.test) for n in _own_nodes(fn))
    if not tested:
        return False
    binds = _bindings(fn)
    drawn: set[str] = set()
    for name, bs in binds.items():
        if bs and all(b.value is not None and _random_call(b.value) for b in bs):
            drawn.add(name)
    kept = randomised = 0
    for ret in returns:
        value = ret.value
        if isinstance(value, ast.Name) and value.id in params:
            kept += 1
        elif _random_call(value) or isinstance(value, ast.Name) and value.id in drawn:
            randomised += 1
        else:
            return False
    return kept > 0 and randomised > 0


_RANDOM_CALLS = frozenset({"choice", "randint", "random", "uniform", "rand", "binomial", "bernoulli", "integers"})


def _random_call(expr: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and (func_name(n.func) in _RANDOM_CALLS and (
        "random" in (dotted(n.func) or "") or isinstance(n.func, ast.Name) or "rng" in (dotted(n.func) or ""))
        or noise_draw(n)) for n in ast.walk(expr))


def released(tree: ast.Module, memo: dict[int, Released] | None = None) -> Released:
    """The module's :class:`Released` (``memo``: one per tree)."""
    if memo is not None:
        found = memo.get(id(tree))
        if found is None:
            found = memo[id(tree)] = Released(tree)
        return found
    return Released(tree)


def expression_at(tree: ast.Module, line: int, col: int) -> ast.expr | None:
    """The outermost expression starting at ``line``:``col`` (0-based column, as ``ast`` counts)."""
    best: ast.expr | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.expr) and getattr(node, "lineno", None) == line and node.col_offset == col:
            if best is None or (node.end_lineno or 0, node.end_col_offset or 0) > (best.end_lineno or 0,
                                                                                    best.end_col_offset or 0):
                best = node
    return best


def post_processed(tree: ast.Module, line: int, col: int, memo: dict[int, Released] | None = None) -> bool:
    """Is the statistic at ``line``:``col`` (its data expression) computed on DP outputs only?"""
    expr = expression_at(tree, line, col)
    if expr is None:
        return False
    out = released(tree, memo).reads_released(expr, line)
    return out


def reaching_params(fn: Function, line: int, cls: ast.ClassDef | None = None,
                    depth: int = 0) -> list[tuple[str, str]] | None:
    """The parameters whose values reach what ``line`` of ``fn`` reads, as (function key, parameter)
    pairs, ``""`` for ``fn`` itself: through the function's own assignments (``self.x`` set here
    included) and, for ``self.x`` another method of ``cls`` sets, through that method's. ``None``
    when the line reads data that comes from elsewhere (a global, an attribute nothing here sets)."""
    params = [p for p in function_params(fn) if p not in ("self", "cls")]
    binds = _bindings(fn)
    origin: dict[str, set[str]] = {p: {p} for p in params}
    for _ in range(_MAX_ROUNDS):
        grown = False
        for name, bs in binds.items():
            got = set(origin.get(name, set()))
            for b in bs:
                if b.value is None:
                    continue
                for leaf in _data_leaves(b.value):
                    got |= origin.get(leaf, set())
            if got != origin.get(name, set()):
                origin[name] = got
                grown = True
        if not grown:
            break
    reads: list[str] = []
    for node in _own_nodes(fn):
        if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno) \
                and not any(isinstance(c, ast.stmt) and c.lineno <= line <= (c.end_lineno or c.lineno)
                            for c in ast.iter_child_nodes(node)):
            # the outermost expressions that start on ``line`` (not every sub-expression: a called
            # class's name is no read)
            stack: list[tuple[ast.AST, bool]] = [(c, False) for c in ast.iter_child_nodes(node)]
            while stack:
                sub, inside = stack.pop()
                here = isinstance(sub, ast.expr) and getattr(sub, "lineno", 0) == line
                if here and not inside:
                    reads.extend(_data_leaves(_without_settings(sub)))
                stack.extend((c, inside or here) for c in ast.iter_child_nodes(sub))
            # a lambda's parameter is an element of what the lambda is mapped over (``data[c].apply(lambda x: …)``)
            lambdas: set[str] = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Call) and any(isinstance(a, ast.Lambda) for a in sub.args):
                    for lam in (a for a in sub.args if isinstance(a, ast.Lambda)):
                        lambdas |= {a.arg for a in (*lam.args.posonlyargs, *lam.args.args)}
                    if isinstance(sub.func, ast.Attribute):
                        reads.extend(_data_leaves(sub.func.value))
            reads = [r for r in reads if r not in lambdas]
            break
    out: set[tuple[str, str]] = set()
    for leaf in dict.fromkeys(reads):
        if leaf in origin and origin[leaf]:
            out |= {("", p) for p in origin[leaf]}
        elif leaf in binds:
            continue  # a local holding no parameter's data (a constant, a size)
        elif leaf.startswith("self.") and cls is not None and depth < 2:
            # an attribute another method of the class sets: the parameters that reach it there
            setters = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and m is not fn and leaf in _bindings(m)]
            if not setters:
                return None
            for m in setters:
                lines = [b.line for b in _bindings(m)[leaf]]
                for at in lines:
                    got = reaching_params(m, at, cls, depth + 1)
                    if got is None:
                        return None
                    out |= {(f"{cls.name}.{m.name}" if not k else k, p) for k, p in got}
        else:
            return None
    return sorted(out)


_DRAW_TEXT = ("laplace", "normal", "gumbel", "randn", "Laplace", "random", "noise", "choice")


_RANDOMISING = re.compile(r"laplace|Laplace\(|gumbel|\.normal_?\(|randn|\.choice\(|randint\(|\.uniform\(")


def may_randomise(source: str) -> bool:
    """Could the module define a mechanism (a draw added to a value, or a randomized response)?"""
    return _RANDOMISING.search(source) is not None


def may_draw(source: str) -> bool:
    """Could the module draw noise (a cheap text test before the analysis)?"""
    return any(word in source for word in _DRAW_TEXT)


def site_released(file: str, site: list, summaries: Mapping[str, dict], resolver: object) -> bool:
    """The project join's test: a preprocessing site (a summary row carrying ``[function key,
    [[function key, parameter], …], {function key: parameters}]`` at 9..11) reads only parameters
    that every call in the scanned project fills with a DP output (a mechanism's result, passed
    on; or no data at all), at least one with a DP output."""
    if len(site) < 12 or not site[10]:
        return False
    pairs, params_of = site[10], site[11]
    wanted: dict[str, set[str]] = {}
    for key, param in pairs:
        wanted.setdefault(key, set()).add(param)
    calls: dict[str, list[tuple[str, dict]]] = {}
    for caller, summary in summaries.items():
        for chain, method, _line, flags in summary.get("ppcalls", ()):
            target = _resolve(resolver, summaries, caller, chain)
            if target is None or target[0] != file:
                continue
            key = target[1] if method is None else f"{target[1]}.{method}"
            if key not in wanted and f"{key}.__init__" in wanted:
                key = f"{key}.__init__"  # ``Server(k)`` runs ``Server.__init__``
            if key in wanted:
                calls.setdefault(key, []).append((caller, flags))
    some = False
    for key, needed in wanted.items():
        sites = calls.get(key)
        names = params_of.get(key)
        if not sites or names is None:
            return False
        for caller, flags in sites:
            if "*" in flags:
                return False
            for param in needed:
                if param not in names:
                    return False
                flag = flags.get(param, flags.get(f"#{names.index(param)}", "n"))
                if flag == "r":
                    some = True
                elif flag == "n":
                    continue
                elif isinstance(flag, list) and flag[0] == "via":
                    found = _resolve(resolver, summaries, caller, flag[1])
                    if found is None:
                        return False
                    mech = found[1] if flag[2] is None else f"{found[1]}.{flag[2]}"
                    if mech not in summaries.get(found[0], {}).get("mech", ()):
                        return False
                    some = True
                else:
                    return False
    return some


def _resolve(resolver: object, summaries: Mapping[str, dict], caller: str, chain: str) -> tuple[str, str] | None:
    """``resolver.resolve``, then a script's import of a sibling module (``from preprocessing import
    scale_data`` run from the folder that holds ``preprocessing.py``, inside a package or not)."""
    found = resolver.resolve(caller, chain)  # type: ignore[attr-defined]
    if found is not None:
        return found
    head, _, rest = chain.partition(".")
    for local, level, module, name in summaries.get(caller, {}).get("imports", ()):
        if local != head or level or not module:
            continue
        sibling = os.path.join(os.path.dirname(caller), *module.split(".")) + ".py"
        if sibling not in summaries:
            return None
        symbol = name if name is not None else rest.split(".")[0]
        if not symbol or symbol not in summaries[sibling].get("defs", ()):
            return None
        tail = rest if name is not None else rest.partition(".")[2]
        return sibling, ".".join(p for p in (symbol, tail) if p)
    return None


def _without_settings(expr: ast.expr) -> ast.expr:
    """``expr`` without the keyword settings of the constructors in it (``KMeans(n_clusters=self.k)``
    configures the fit; the data is what ``fit`` is given)."""
    if not any(isinstance(n, ast.Call) and n.keywords and func_name(n.func)[:1].isupper() for n in ast.walk(expr)):
        return expr

    class _Strip(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            if func_name(node.func)[:1].isupper():
                node.keywords = []
            return node

    import copy

    return _Strip().visit(copy.deepcopy(expr))
