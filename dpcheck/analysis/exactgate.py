"""Branches on exact private values that decide whether a noisy value is released.

A mechanism adds noise to a value ``E`` because ``E`` depends on the private records. A branch whose test
reads the *same* data as ``E`` without any noise, and whose outcome decides whether ``E`` is released with
its noise at all (the noisy assignment sits in one arm only, or an arm skips it with ``continue``, ``break``
or ``return``), publishes the outcome of the exact test: a cluster centre that moves only when its exact
count is non-zero, a histogram cell noised only when the category occurs, a group skipped when it is empty.

The roles, not the names, decide:

* a *draw* is a call to a known noise sampler (``laplace``, ``normal``, ``gumbel``, …, under a random
  module or a generator), a mechanism's ``randomise``/``randomize``, or a function of the same module
  whose ``return`` is a draw (``self._laplace(b)``); a *noise value* is a name assigned from a draw, and
  anything assigned from a noise value is noisy too;
* the *noised value* ``E`` is what a draw or a noise value is added to (``E + draw``, ``E - noise``), a
  mechanism's argument (``mech.randomise(E)``), or a draw's non-constant location (``normal(E, σ)``);
* the *test* reads data when, after following local assignments backwards, it shares a name with ``E``
  that is neither a ``range`` counter, nor a parameter of the noise's scale, nor noisy.

Checked with CPython's ``ast`` only, so the rule's gate and its report are the same computation.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from dpcheck.analysis.astnames import dotted

#: samplers whose output is DP noise when added to a value
_DRAWS = frozenset({
    "laplace", "normal", "gauss", "gumbel", "randn", "randn_like", "standard_normal", "normalvariate",
    "random_normal", "geometric", "standard_cauchy", "normal_",
})
#: roots a sampler is called on: ``np.random.laplace``, ``rng.normal``, ``torch.randn``, ``random.gauss``
_RANDOM_ROOTS = frozenset({"random", "np", "numpy", "torch", "tf", "rng", "generator", "jax", "gen", "prng",
                           "rs", "random_state", "randomstate", "rand", "nr", "npr"})
#: a mechanism object's release method (diffprivlib, IBM's and similar APIs)
_MECHANISM_METHODS = frozenset({"randomise", "randomize"})
#: words of functions that evaluate, test or plot a mechanism rather than run it
_NOT_ALGORITHM = frozenset({"test", "tests", "eval", "evaluate", "evaluation", "plot", "baseline", "nonprivate",
                            "non_private", "benchmark", "metric", "metrics", "score", "simulate", "simulation",
                            "attack", "utility", "accuracy", "error"})
_SHAPE_ATTRS = frozenset({"ndim", "dtype", "device", "requires_grad", "grad", "is_cuda"})
_ESCAPES = (ast.Continue, ast.Break, ast.Return)

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class ExactGate:
    line: int          #: the ``if`` statement
    noise_line: int    #: the noisy release it decides
    shared: str        #: a data name the test and the noised value both read
    partition: bool = False  #: a recursive partition's stop (``noise_line`` is then the recursive call)
    step: bool = False  #: a private optimizer's step taken only when the exact loss passes a test


def _root(func: ast.AST) -> str:
    name = dotted(func.value) if isinstance(func, ast.Attribute) else None
    return (name or "").lower()


def _sampler(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Attribute):
        if func.attr in _MECHANISM_METHODS:
            return True
        if func.attr in _DRAWS:
            parts = set(_root(func).replace("_", ".").split("."))
            return bool(parts & _RANDOM_ROOTS) or func.attr in ("laplace", "gumbel", "randn", "standard_normal")
    return isinstance(func, ast.Name) and func.id in ("laplace", "gumbel", "randn", "normalvariate", "gauss")


def _draw_helpers(tree: ast.Module) -> frozenset[str]:
    """Functions and methods of the module whose ``return`` is a draw (``def _laplace(self, b): return
    np.random.laplace(scale=b)``)."""
    out: set[str] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, FUNCTIONS):
            for node in ast.walk(fn):
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and _sampler(node.value):
                    out.add(fn.name)
                    break
    return frozenset(out)


def _is_draw(call: ast.Call, helpers: frozenset[str]) -> bool:
    if _sampler(call):
        return True
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name not in helpers:
        return False
    # a method helper is called on ``self``; a module helper by its bare name
    return isinstance(func, ast.Name) or (isinstance(func, ast.Attribute) and _root(func) in ("self", "cls"))


def _names(expr: ast.AST | None) -> set[str]:
    """Dotted names read in ``expr`` (``self.x``, ``sum_``), outside nested scopes."""
    out: set[str] = set()
    if expr is None:
        return out
    called = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    for node in ast.walk(expr):
        if id(node) in called:
            continue  # the callee is not a value the expression reads
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(getattr(node, "ctx", None), ast.Load):
            name = dotted(node)
            if name is not None:
                out.add(name)
    return out


def _targets(target: ast.AST) -> Iterator[str]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _targets(element)
    elif isinstance(target, ast.Starred):
        yield from _targets(target.value)
    elif isinstance(target, (ast.Name, ast.Attribute)):
        name = dotted(target)
        if name is not None:
            yield name
    elif isinstance(target, ast.Subscript):
        yield from _targets(target.value)


def _own_nodes(fn: ast.AST) -> Iterator[ast.AST]:
    """Nodes of ``fn``'s body, not of nested functions, classes or lambdas."""
    stack = list(ast.iter_child_nodes(fn))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


class _Function:
    def __init__(self, fn: ast.FunctionDef | ast.AsyncFunctionDef, helpers: frozenset[str]) -> None:
        self.fn = fn
        self.helpers = helpers
        self.nodes = list(_own_nodes(fn))
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in [fn, *self.nodes]:
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self.sources: dict[str, list[ast.AST]] = {}
        self.counters: set[str] = set()
        #: values written into one slot of a container (``hist[k] = v + noise``): they do not make the whole
        #: container noisy
        self.slot_writes: set[int] = set()
        for node in self.nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for name in _targets(target):
                        self.sources.setdefault(name, []).append(node.value)
                        if isinstance(target, ast.Subscript):
                            self.slot_writes.add(id(node.value))
            elif isinstance(node, (ast.For, ast.comprehension)):
                self._loop_target(node.target, node.iter)
            elif isinstance(node, ast.NamedExpr):
                self.sources.setdefault(node.target.id, []).append(node.value)
        self.noisy_names = self._noisy_names()
        self.noise_names = self._noise_names()

    def _loop_target(self, target: ast.AST, iterable: ast.AST) -> None:
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range":
            self.counters.update(_targets(target))
            return
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
                and isinstance(target, ast.Tuple) and len(target.elts) == 2 and iterable.args:
            self.counters.update(_targets(target.elts[0]))
            for name in _targets(target.elts[1]):
                self.sources.setdefault(name, []).append(iterable.args[0])
            return
        for name in _targets(target):
            self.sources.setdefault(name, []).append(iterable)

    def draws(self, expr: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and _is_draw(n, self.helpers) for n in ast.walk(expr))

    def _noisy_names(self) -> set[str]:
        noisy: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, values in self.sources.items():
                if name not in noisy and any((self.draws(v) or _names(v) & noisy) and id(v) not in self.slot_writes
                                             for v in values):
                    noisy.add(name)
                    changed = True
        return noisy

    def _noise_names(self) -> set[str]:
        """Names holding a noise term itself (``noise = laplace(0, b)``, ``z = sigma * randn(d)``)."""
        pure: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, values in self.sources.items():
                if name not in pure and any(self._pure(v, pure) for v in values):
                    pure.add(name)
                    changed = True
        return pure

    def _pure(self, expr: ast.AST, pure: set[str]) -> bool:
        if isinstance(expr, ast.Call):
            if _is_draw(expr, self.helpers):
                return True
            wrapper = expr.func.attr if isinstance(expr.func, ast.Attribute) else getattr(expr.func, "id", "")
            return wrapper in ("int", "float", "abs", "round", "array", "asarray", "tensor", "to") \
                and len(expr.args) == 1 and self._pure(expr.args[0], pure) or (
                    isinstance(expr.func, ast.Attribute) and expr.func.attr in ("to", "cuda", "item", "astype")
                    and self._pure(expr.func.value, pure))
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
            return self._pure(expr.left, pure) or self._pure(expr.right, pure)
        if isinstance(expr, ast.UnaryOp):
            return self._pure(expr.operand, pure)
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp)):
            return self._pure(expr.elt, pure)
        name = dotted(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        return name is not None and name in pure

    def noise_term(self, expr: ast.AST) -> bool:
        return self._pure(expr, self.noise_names)

    def noisy(self, expr: ast.AST) -> bool:
        return self.draws(expr) or bool(_names(expr) & self.noisy_names)

    def test_deps(self, test: ast.AST) -> set[str]:
        """What a test reads as data: the conjuncts that are not tests of a value's kind, without the keys they
        look up (``c`` in ``c not in bounds``, ``cfg[c]``: a key names a slot, it is not the data)."""
        out: set[str] = set()
        for part in _conjuncts(test):
            if _typing_test(part) or self._typing_name(part):
                continue
            keys = _keys(part)
            out |= self.deps_of(_names(part) - keys)
        return out

    def _typing_name(self, part: ast.AST) -> bool:
        """``is_bool_col`` bound to ``is_bool_dtype(df[c])``: a flag about a column's kind."""
        if not isinstance(part, (ast.Name, ast.Attribute)):
            return False
        values = self.sources.get(dotted(part) or "", ())
        return bool(values) and all(all(_typing_test(c) or _kind_call(c) or (
            isinstance(c, (ast.Name, ast.Attribute)) and c is not part and self._typing_name(c))
            for c in _conjuncts(v)) for v in values)

    def deps(self, expr: ast.AST, limit: int = 6) -> set[str]:
        """Names ``expr`` reads, followed back through local assignments (``limit`` hops)."""
        return self.deps_of(_names(expr), limit)

    def deps_of(self, names: set[str], limit: int = 6) -> set[str]:
        seen = set(names)
        frontier = set(seen)
        for _ in range(limit):
            nxt: set[str] = set()
            for name in frontier:
                for value in self.sources.get(name, ()):
                    if id(value) not in self.slot_writes:  # one slot's value is not what the container holds
                        nxt |= _names(value) - seen
            if not nxt:
                break
            seen |= nxt
            frontier = nxt
        return seen

    def releases(self) -> Iterator[tuple[ast.AST, ast.AST, set[str]]]:
        """(node, noised value, names feeding the noise's scale) for each noisy release."""
        for node in self.nodes:
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
                for side, other in ((node.left, node.right), (node.right, node.left)):
                    if self.noise_term(other) and not self.noisy(side) and not isinstance(side, ast.Constant):
                        yield node, side, self._scale_names(other)
                        break
            elif isinstance(node, ast.Call) and _sampler(node):
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr in _MECHANISM_METHODS and node.args:
                    yield node, node.args[0], set()
                elif node.args and not isinstance(node.args[0], ast.Constant) and isinstance(func, ast.Attribute) \
                        and func.attr in ("laplace", "normal", "gumbel") and len(node.args) >= 2 \
                        and not self.noisy(node.args[0]):
                    yield node, node.args[0], set().union(*(_names(a) for a in node.args[1:]))

    def _scale_names(self, noise: ast.AST) -> set[str]:
        """Names a noise term is computed from (its scale: the budget, the sensitivity)."""
        out: set[str] = set()
        seen: set[str] = set()
        todo = [noise]
        while todo:
            expr = todo.pop()
            for node in ast.walk(expr):
                if isinstance(node, ast.Call) and _is_draw(node, self.helpers):
                    for arg in [*node.args, *(k.value for k in node.keywords)]:
                        out |= self.deps(arg)
            for name in (_names(expr) & self.noisy_names) - seen:
                seen.add(name)
                todo.extend(self.sources.get(name, ()))
        return out

    def inside(self, node: ast.AST, block: list[ast.stmt]) -> bool:
        ids = {id(s) for s in block}
        current: ast.AST | None = node
        while current is not None:
            if id(current) in ids:
                return True
            current = self.parents.get(current)
        return False

    def loop_of(self, node: ast.AST) -> ast.AST | None:
        current = self.parents.get(node)
        while current is not None and current is not self.fn:
            if isinstance(current, (ast.For, ast.While, ast.AsyncFor)):
                return current
            current = self.parents.get(current)
        return None


def _escapes(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], _ESCAPES) and not (
        isinstance(block[-1], ast.Return) and block[-1].value is not None and not isinstance(block[-1].value,
                                                                                                ast.Constant))


def _kind_call(node: ast.AST) -> bool:
    """``is_numeric_dtype(df[c])``, ``is_categorical(x)``: a predicate on a value's kind."""
    return isinstance(node, ast.Call) and (
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")).startswith("is_")


def _conjuncts(test: ast.AST) -> list[ast.AST]:
    if isinstance(test, ast.BoolOp):
        return [p for v in test.values for p in _conjuncts(v)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _conjuncts(test.operand)
    return [test]


def _keys(part: ast.AST) -> set[str]:
    """Names used as a key: the left of ``in``/``not in``, a subscript's index, ``.get``'s argument."""
    out: set[str] = set()
    for node in ast.walk(part):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) \
                and isinstance(node.left, (ast.Name, ast.Attribute)):
            out.add(dotted(node.left) or "")
        elif isinstance(node, ast.Subscript):
            out |= _names(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args:
            out |= _names(node.args[0])
    return out


def _typing_test(test: ast.AST) -> bool:
    """``x is None``, ``isinstance(…)``, ``x.ndim == 2``, ``len(x.shape)``: a test of a value's kind."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "isinstance", "hasattr", "callable", "type", "getattr"):
            return True
        if isinstance(node, ast.Attribute) and node.attr in _SHAPE_ATTRS:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True
    return False


_PROBABILITY_WORDS = frozenset({"prob", "probs", "proba", "probas", "probability", "probabilities", "likelihood",
                                "pvalue", "pval"})


def _negative(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
        and isinstance(node.operand.value, (int, float))


def _sentinel(part: ast.AST) -> str | None:
    """``probas[0] < 0`` (a probability is never negative), ``label == -1``: a marker value, not a magnitude;
    the marked value's name."""
    if not isinstance(part, ast.Compare) or len(part.ops) != 1:
        return None
    left, op, right = part.left, part.ops[0], part.comparators[0]
    base = left.value if isinstance(left, ast.Subscript) else left
    name = dotted(base) if isinstance(base, (ast.Name, ast.Attribute)) else None
    if name is None:
        return None
    if isinstance(op, (ast.Eq, ast.NotEq)) and _negative(right):
        return name
    if isinstance(op, ast.Lt) and isinstance(right, ast.Constant) and right.value == 0 \
            and set(name.split(".")[-1].lower().split("_")) & _PROBABILITY_WORDS:
        return name
    return None


def _marker_test(test: ast.AST) -> bool:
    """A test that reads a marker (``len(p) == 1 and p[0] < 0``: one negative probability marks a numeric
    attribute): every conjunct a sentinel comparison, or the length of a value a sentinel conjunct marks."""
    parts = _conjuncts(test)
    marked = {_sentinel(p) for p in parts} - {None}
    if not marked:
        return False
    for p in parts:
        if _sentinel(p):
            continue
        if isinstance(p, ast.Compare) and isinstance(p.left, ast.Call) and isinstance(p.left.func, ast.Name) \
                and p.left.func.id == "len" and len(p.left.args) == 1 and dotted(p.left.args[0]) in marked \
                and all(isinstance(c, ast.Constant) for c in p.comparators):
            continue
        return False
    return True


def _algorithm(fn: ast.AST, enclosing: list[str]) -> bool:
    words_: set[str] = set()
    for name in [getattr(fn, "name", ""), *enclosing]:
        words_ |= set(name.lower().split("_"))
        words_.add(name.lower())
    return not words_ & _NOT_ALGORITHM and not any(w.startswith("test") for w in words_)


def _functions(tree: ast.Module) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]]]:
    def visit(node: ast.AST, names: list[str]) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[str]]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, FUNCTIONS):
                yield child, names
                yield from visit(child, [*names, child.name])
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, [*names, child.name])
            else:
                yield from visit(child, names)
    yield from visit(tree, [])


def exact_gates(tree: ast.Module) -> list[ExactGate]:
    """Every ``if`` on exact private data that decides whether a noisy release happens, and every exact
    stop of a recursive partition of the data (a tree's leaf) in code that draws noise."""
    helpers = _draw_helpers(tree)
    out: list[ExactGate] = []
    drawing = _drawing_scopes(tree, helpers)
    private_optimizers = _private_optimizers(tree)
    for fn, enclosing in _functions(tree):
        if not _algorithm(fn, enclosing):
            continue
        info = _Function(fn, helpers)
        releases = list(info.releases())
        for node in info.nodes:
            if isinstance(node, ast.If):
                gate = _gate(info, node, releases) if releases else None
                if gate is not None:
                    out.append(gate)
        if id(fn) in drawing:
            out.extend(_partition_stops(info))
        if private_optimizers:
            out.extend(_gated_private_steps(info, private_optimizers))
    return sorted(out, key=lambda g: g.line)


#: library calls that hand back a DP optimizer (Opacus: ``model, optimizer, loader = engine.make_private(...)``)
_MAKE_PRIVATE = frozenset({"make_private", "make_private_with_epsilon"})


def _private_optimizers(tree: ast.Module) -> frozenset[str]:
    """Names bound to an optimizer a privacy engine made private (the second of ``make_private``'s three
    results, or the argument of ``engine.attach(opt)``)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in _MAKE_PRIVATE:
            for target in node.targets:
                if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) >= 2:
                    name = dotted(target.elts[1])
                    if name is not None:
                        out.add(name)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "attach" \
                and node.args and "engine" in (dotted(node.func.value) or "").lower():
            name = dotted(node.args[0])
            if name is not None:
                out.add(name)
    return frozenset(out)


def _gated_private_steps(info: _Function, optimizers: frozenset[str]) -> list[ExactGate]:
    """``if loss > 0.15: loss.backward(); private_opt.step()``: the exact loss of the private batch decides
    whether the noisy step is taken."""
    out: list[ExactGate] = []
    for node in info.nodes:
        if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare) or info.draws(node.test):
            continue
        for arm, other in ((node.body, node.orelse), (node.orelse, node.body)):
            steps = [c for s in arm for c in ast.walk(s) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                     and c.func.attr == "step" and dotted(c.func.value) in optimizers]
            if not steps or any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "step"
                                and dotted(c.func.value) in optimizers for s in other for c in ast.walk(s)):
                continue
            backed = {dotted(c.func.value) for s in arm for c in ast.walk(s) if isinstance(c, ast.Call)
                      and isinstance(c.func, ast.Attribute) and c.func.attr == "backward"}
            shared = (backed - {None}) & _names(node.test)
            if shared:
                out.append(ExactGate(node.lineno, steps[0].lineno, sorted(shared)[0], step=True))  # type: ignore[arg-type]
                break
    return out


def _drawing_scopes(tree: ast.Module, helpers: frozenset[str]) -> set[int]:
    """Functions whose class (for a method) or module (for a function) draws noise somewhere."""
    def direct(scope: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and _is_draw(n, helpers) for n in ast.walk(scope))

    # module functions that draw (``AddLaplacianNoise(leaves, scale)`` adds the noise in place)
    drawing_functions = {f.name for f in tree.body if isinstance(f, FUNCTIONS) and direct(f)}

    def draws(scope: ast.AST) -> bool:
        return direct(scope) or any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                                    and n.func.id in drawing_functions for n in ast.walk(scope))

    out: set[int] = set()
    module_draws = draws(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and draws(node):
            out.update(id(f) for f in node.body if isinstance(f, FUNCTIONS))
    if module_draws:
        out.update(id(f) for f in tree.body if isinstance(f, FUNCTIONS))
    return out


#: calls and attributes that count records: ``len(X)``, ``X.shape[0]``, ``X.size``, ``np.unique(y)``
_COUNTERS = frozenset({"len", "unique", "count_nonzero", "sum", "nunique", "bincount"})


def _recursive_calls(info: _Function) -> list[ast.Call]:
    name = info.fn.name
    return [n for n in info.nodes if isinstance(n, ast.Call) and (
        isinstance(n.func, ast.Name) and n.func.id == name
        or isinstance(n.func, ast.Attribute) and n.func.attr == name and _root(n.func) in ("self", "cls"))]


def _partitioned(info: _Function, calls: list[ast.Call]) -> set[str]:
    """Parameters each recursive call hands a part of (``X[idx]``, ``left`` split off ``X``)."""
    params = [a.arg for a in [*info.fn.args.posonlyargs, *info.fn.args.args]]
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    out: set[str] = set()
    for call in calls:
        given = list(zip(params, call.args))
        given += [(k.arg, k.value) for k in call.keywords if k.arg in params or k.arg in
                  {a.arg for a in info.fn.args.kwonlyargs}]
        for param, arg in given:
            if isinstance(arg, (ast.Name, ast.Attribute)) and dotted(arg) == param:
                continue
            if _part_of(info, arg, param, 4):
                out.add(param)
    return out


_COPIES = frozenset({"list", "set", "tuple", "sorted", "copy", "deepcopy", "frozenset", "dict"})


def _part_of(info: _Function, arg: ast.AST, param: str, hops: int) -> bool:
    """Is ``arg`` a data-chosen part of ``param`` (``X[mask]``, ``split(D, a, v)``, a ``groupby`` group),
    rather than a copy or ``param`` minus one element (an attribute list shrinking by one)?"""
    if hops < 0:
        return False
    if isinstance(arg, ast.Subscript):
        whole = isinstance(arg.slice, ast.Slice) and arg.slice.lower is None and arg.slice.upper is None
        return not whole and param in info.deps(arg.value) and not isinstance(arg.slice, ast.Constant)
    if isinstance(arg, ast.Call):
        func = arg.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in _COPIES:
            return False
        receiver = func.value if isinstance(func, ast.Attribute) else None
        return any(param in info.deps(a) for a in [*arg.args, *(k.value for k in arg.keywords)]) or (
            receiver is not None and param in info.deps(receiver) and name not in ("remove", "difference", "copy"))
    if isinstance(arg, (ast.Name, ast.Attribute)):
        name = dotted(arg)
        return any(_part_of(info, v, param, hops - 1) for v in info.sources.get(name or "", ()))
    return False


def _counts(info: _Function, test: ast.AST, data: set[str]) -> str | None:
    """The partitioned parameter a count in ``test`` is taken of (``len(X) < k``, ``y.size == 0``)."""
    for node in ast.walk(test):
        subject: ast.AST | None = None
        if isinstance(node, ast.Call) and node.args and (
                isinstance(node.func, ast.Name) and node.func.id in _COUNTERS
                or isinstance(node.func, ast.Attribute) and node.func.attr in _COUNTERS and node.func.attr != "sum"):
            subject = node.args[0]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "sum", "nunique", "count_nonzero") and not node.args:
            subject = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "size":
            subject = node.value
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and node.value.attr == "shape" and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
            subject = node.value.value
        if subject is not None:
            hit = info.deps(subject) & data
            if hit:
                return sorted(hit)[0]
    return None


def _summed(info: _Function, call: ast.Call) -> bool:
    parent = info.parents.get(call)
    return isinstance(parent, (ast.BinOp, ast.AugAssign)) or isinstance(parent, ast.Call) and isinstance(
        parent.func, ast.Name) and parent.func.id in ("sum", "max", "min")


def _partition_stops(info: _Function) -> list[ExactGate]:
    """``if len(X) < min_samples: return leaf`` in a function that recurses on parts of ``X``."""
    calls = _recursive_calls(info)
    if not calls or any(_summed(info, c) for c in calls):
        return []  # an exact statistic computed by recursion (``count += f(part)``) is noised as a whole
    data = _partitioned(info, calls)
    if not data:
        return []
    out: list[ExactGate] = []
    for node in info.nodes:
        if not isinstance(node, ast.If) or info.noisy(node.test) or _typing_test(node.test):
            continue
        arm = node.body
        if not arm or not isinstance(arm[-1], ast.Return):
            continue
        if any(info.inside(c, arm) for c in calls):
            continue
        value = arm[-1].value
        if isinstance(value, (ast.Name, ast.Attribute)) and dotted(value) in data:
            continue  # a base case handing its input back (a sort), not a leaf of a model
        counted = _counts(info, node.test, data)
        if counted is not None:
            out.append(ExactGate(node.lineno, calls[0].lineno, counted, partition=True))
    return out


def _gate(info: _Function, node: ast.If, releases: list[tuple[ast.AST, ast.AST, set[str]]]) -> ExactGate | None:
    if info.noisy(node.test) or _typing_test(node.test) or _marker_test(node.test):
        return None
    loop = info.loop_of(node)
    if loop is None:
        return None  # a guard on the whole input (``if len(X) == 0: raise``) is not a per-group decision
    if _over_columns(loop) and _degenerate_size(node.test):
        return None  # ``for col in df.columns: if len(df[col].dropna()) <= 1:`` guards a whole column, not a group
    parent = info.parents.get(node)
    if isinstance(parent, ast.If) and parent.orelse == [node]:
        return None  # an elif: the chain's head decides
    test_deps = info.test_deps(node.test)
    for release, value, scale in releases:
        in_body = info.inside(release, node.body)
        in_else = info.inside(release, node.orelse)
        if in_body or in_else:
            other = node.orelse if in_body else node.body
            if any(info.inside(r, other) for r, _, _ in releases) or any(info.draws(s) for s in other):
                continue  # both arms release noise (the other one may noise a zero: ``int(laplace(b))``)
        else:
            arm = node.body if _escapes(node.body) else node.orelse if _escapes(node.orelse) else None
            if arm is None or info.loop_of(release) is not loop or getattr(release, "lineno", 0) <= node.lineno:
                continue
            if isinstance(arm[-1], ast.Return) and not isinstance(loop, (ast.For, ast.While)):
                continue
        shared = (test_deps & info.deps(value)) - info.counters - scale - info.noisy_names - {"self", "cls"}
        shared = {s for s in shared if s.split(".")[0] not in info.counters}
        derived = shared
        if not derived:
            continue
        if not _data_test(info, node.test, derived):
            continue
        # (b85) a data name first: a configuration object (``self.config``) is named only when nothing else is shared
        return ExactGate(node.lineno, getattr(release, "lineno", node.lineno),
                         sorted(derived, key=lambda s: (_config_root(s), s))[0])
    return None


_CONFIG_ROOTS = frozenset({"config", "cfg", "conf", "args", "opts", "opt", "options", "hparams", "params",
                           "settings", "FLAGS", "flags"})


def _config_root(name: str) -> bool:
    """``self.config``, ``cfg.x``, ``args``: a name read from the run's configuration."""
    parts = name.split(".")
    if parts[0] in ("self", "cls"):
        parts = parts[1:]
    return bool(parts) and parts[0] in _CONFIG_ROOTS


_COLUMN_WORDS = frozenset({"columns", "cols", "features", "attributes", "attrs", "fields", "variables"})


def _over_columns(loop: ast.AST) -> bool:
    """A loop over the table's columns (``df.columns``, ``df.select_dtypes(...).columns``, ``numeric_cols``,
    ``features``): each pass reads a whole attribute of every record, not a group of records."""
    it = getattr(loop, "iter", None)
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id in ("enumerate", "list", "sorted") \
            and it.args:
        it = it.args[0]
    name = it.attr if isinstance(it, ast.Attribute) else it.id if isinstance(it, ast.Name) else None
    return name is not None and bool({w for w in name.lower().split("_") if w} & _COLUMN_WORDS)


def _degenerate_size(test: ast.AST) -> bool:
    """``len(x) <= 1``, ``len(x) < 2``, ``x.size == 0``, ``len(x) == 0``: too few values for a statistic to
    exist at all (a degenerate-input guard), not a threshold on a group's size."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    left, op, right = test.left, test.ops[0], test.comparators[0]
    size = isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len" \
        or isinstance(left, ast.Attribute) and left.attr in ("size", "count")
    if not size or not isinstance(right, ast.Constant) or not isinstance(right.value, int):
        return False
    if any(isinstance(n, ast.Call) and (getattr(n.func, "attr", None) or getattr(n.func, "id", None)) in (
            "unique", "nunique", "value_counts", "set", "Counter") for n in ast.walk(left)):
        return False  # ``len(df[col].unique()) == 1``: a constant column is a fact about the values
    v = right.value
    return isinstance(op, ast.LtE) and v <= 1 or isinstance(op, ast.Lt) and v <= 2 or isinstance(op, ast.Eq) and v <= 1


def _data_test(info: _Function, test: ast.AST, shared: set[str]) -> bool:
    """The test compares a data value (a count, membership, a slot of an aggregate), not a flag."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("len", "sum", "any",
                                                                                                 "all"):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "any", "all", "sum", "count_nonzero", "size", "nonzero"):
            return True
    return False


def gate_lines(tree: ast.Module) -> dict[int, ExactGate]:
    return {g.line: g for g in exact_gates(tree)}

