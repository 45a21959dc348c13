"""The exact call and operator shapes some rules report, found on CPython's ``ast`` (their gates).

Each function answers "does the file hold the shape the rule's report starts from?" and must be a
superset of the rule's own libcst test: names are read as written (the rules do not expand import
aliases for these shapes), an argument the rule reads by position or keyword is looked for among all
of them, and a value the rule follows through assignments is looked for anywhere in the function
(or file) it may come from. A rule passes its own vocabulary (word sets, called names), so the gate
and the visitor read the same words. Results are memoised per file in ``AstFacts.memo``.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from dpcheck.analysis.astfacts import FUNCTIONS, AstFacts, call_name, last_name, number
from dpcheck.analysis.astnames import dotted
from dpcheck.analysis.syntax import words


def arg_values(call: ast.Call) -> list[ast.expr]:
    """Every argument's value, positional (starred unwrapped) and keyword (``**`` included)."""
    out = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
    return out + [k.value for k in call.keywords]


def named(expr: ast.AST | None, vocabulary: frozenset[str]) -> bool:
    """The last name of ``expr`` has a word of ``vocabulary``."""
    name = last_name(expr) if expr is not None else None
    return name is not None and bool(words(name) & vocabulary)


def top_statement(facts: AstFacts, node: ast.AST) -> ast.AST:
    """The module-level statement holding ``node``."""
    parents = facts.parents
    while True:
        parent = parents.get(node)
        if parent is None or parent is facts.tree:
            return node
        node = parent


def _statements_with(facts: AstFacts, names: frozenset[str], key: str) -> set[int]:
    """Ids of the module-level statements holding a call of one of ``names`` (as written)."""
    return facts.memo(key, lambda: {id(top_statement(facts, c)) for c in facts.calls if call_name(c) in names})


# ---- DP502: a clip of a noise draw, a one-sided comprehension over one ------------------------------

def _zero(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and type(expr.value) in (int, float) and expr.value == 0


def one_sided_comprehension(comp: ast.ListComp) -> bool:
    """``[0 if x < 0 else x for x in v]`` / ``[max(0, x) for x in v]`` (either operand order)."""
    if len(comp.generators) != 1 or comp.generators[0].ifs or not isinstance(comp.generators[0].target, ast.Name):
        return False
    var = comp.generators[0].target.id
    elt = comp.elt
    if isinstance(elt, ast.IfExp) and isinstance(elt.test, ast.Compare) and len(elt.test.ops) == 1:
        test = elt.test
        if not isinstance(test.ops[0], (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
            return False
        return isinstance(test.left, ast.Name) and test.left.id == var and _zero(test.comparators[0]) and (
            _zero(elt.body) or _zero(elt.orelse))
    if isinstance(elt, ast.Call) and call_name(elt) == "max" and len(arg_values(elt)) == 2:
        values = arg_values(elt)
        return any(_zero(v) for v in values) and any(isinstance(v, ast.Name) and v.id == var for v in values)
    return False


def truncated_noise(facts: AstFacts, clips: frozenset[str], draws: frozenset[str]) -> bool:
    """A clip/clamp call in the same module-level statement as a draw (the clipped value is the draw or a
    name assigned one in the enclosing function), or a one-sided comprehension in a file with a draw."""
    with_draw = _statements_with(facts, draws, "astshapes.draw_statements")
    if not with_draw:
        return False
    if any(call_name(c) in clips and id(top_statement(facts, c)) in with_draw for c in facts.calls):
        return True
    return any(one_sided_comprehension(c) for c in facts.nodes(ast.ListComp))  # type: ignore[arg-type]


# ---- DP509: σ / √B, Δ², a Laplace scale over len(dimensions) -----------------------------------------

def _batch_named(expr: ast.AST, batch: frozenset[str]) -> bool:
    if isinstance(expr, ast.Call) and call_name(expr) in ("len", "float", "int"):
        return any(_batch_named(v, batch) for v in arg_values(expr))
    name = last_name(expr)
    if name is None:
        return False
    lowered = name.lower()
    return bool(words(name) & batch) or lowered.endswith("batch_size") or lowered in ("b", "bsz")


def _sqrt_of_batch(expr: ast.AST, batch: frozenset[str]) -> bool:
    if isinstance(expr, ast.Call) and call_name(expr) == "sqrt":
        values = arg_values(expr)
        return len(values) == 1 and _batch_named(values[0], batch)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Pow):
        return number(expr.right) == 0.5 and _batch_named(expr.left, batch)
    return False


def _factors(expr: ast.AST) -> Iterator[ast.AST]:
    stack = [expr]
    while stack:
        f = stack.pop()
        if isinstance(f, ast.BinOp) and isinstance(f.op, ast.Mult):
            stack += [f.left, f.right]
        else:
            yield f


def noise_std(facts: AstFacts, batch: frozenset[str], sensitivity: frozenset[str], dims: frozenset[str]) -> bool:
    """A division by √(batch), a sensitivity squared, or a Laplace(-named) call whose arguments divide by
    ``len(<dimensions>)``."""
    if any(_sqrt_of_batch(b.right, batch) for b in facts.binops(ast.Div)):
        return True
    for b in facts.binops(ast.Pow):
        name = last_name(b.left)
        if number(b.right) == 2 and name is not None and (name == "s" or words(name) & sensitivity):
            return True
    for call in facts.calls:
        name = call_name(call)
        if name not in ("laplace", "Laplace") and "laplace" not in words(name):
            continue
        for value in arg_values(call):
            for sub in ast.walk(value):
                if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div) and any(
                        isinstance(f, ast.Call) and call_name(f) == "len" and any(named(v, dims) for v in arg_values(f))
                        for f in _factors(sub.right)):
                    return True
    return False


# ---- DP504: ``while ε < budget``, a budget checked every k steps -------------------------------------

def _periods(test: ast.AST) -> list[float]:
    """Every ``k`` of ``x % k == 0`` among the ``and``-ed parts of ``test``."""
    out = []
    parts = [test]
    while parts:
        part = parts.pop()
        if isinstance(part, ast.BoolOp) and isinstance(part.op, ast.And):
            parts += part.values
        elif isinstance(part, ast.Compare) and len(part.ops) == 1 and isinstance(part.ops[0], ast.Eq) \
                and number(part.comparators[0]) == 0 and isinstance(part.left, ast.BinOp) \
                and isinstance(part.left.op, ast.Mod):
            k = number(part.left.right)
            if k is not None:
                out.append(k)
    return out


def budget_loop(facts: AstFacts, eps: frozenset[str], budget: frozenset[str], spent: frozenset[str]) -> bool:
    """``while <ε> < <budget>:``, or ``if step % k == 0:`` (k > 1) whose body calls an ε/spent-named function."""
    for loop in facts.nodes(ast.While):
        test = loop.test  # type: ignore[attr-defined]
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Lt, ast.LtE)) \
                and named(test.left, eps) and named(test.comparators[0], budget | eps):
            return True
    for branch in facts.nodes(ast.If):
        if any(k > 1 for k in _periods(branch.test)) and any(  # type: ignore[attr-defined]
                isinstance(n, ast.Call) and words(call_name(n)) & spent
                for stmt in branch.body for n in ast.walk(stmt)):  # type: ignore[attr-defined]
            return True
    return False


# ---- DP507: a seeded generator that draws noise, a global seed derived for the noise -----------------

def _seed_arg(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg in ("seed", "x", "a"):
            return keyword.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    return positional[0] if positional else None


def seeded_noise(facts: AstFacts, generators: frozenset[str], seeds: frozenset[str], methods: frozenset[str],
                 eps: frozenset[str]) -> bool:
    """``target = <generator>(seed)`` whose target draws noise (``target.laplace(…)``) or is ``self.…`` set in
    an ``__init__`` taking ε; a call with an ε keyword and a ``random_state=`` that is not None; or
    ``np.random.seed(name)``/``torch.manual_seed(name)``/``tf…set_seed(name)`` in a function that assigns ``name``."""
    calls = facts.calls
    drawn_by: set[str] | None = None
    for call in calls:
        name = call_name(call)
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        state = keywords.get("random_state")
        if state is not None and keywords.keys() & eps and not (isinstance(state, ast.Constant) and state.value is None):
            return True  # ``Laplace(epsilon=…, random_state=…)``: a mechanism given a seed (DP507 checks which)
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "manual_seed"
               for n in ast.walk(keywords.get("noise_generator", ast.Constant(None)))):
            return True  # ``make_private(…, noise_generator=torch.Generator().manual_seed(…))`` (DP507 checks the seed)
        if isinstance(call.func, ast.Name) and words(call.func.id) & {"seed", "seeds"} and call.args \
                and isinstance(call.args[0], (ast.Constant, ast.Name)):
            return True  # ``set_seed(2022)``: a project helper seeding the global generators (DP507 resolves it)
        if name in generators:
            if name in ("Random", "Generator") and not (dotted(call.func) or "").startswith(("random.", "np.", "numpy.")):
                continue
            statement = facts.parents.get(call)
            if _seed_arg(call) is None or not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
                    or statement.value is not call:
                continue
            target = dotted(statement.targets[0])
            if target is None:
                continue
            if drawn_by is None:
                drawn_by = {d for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr in methods
                            for d in [dotted(c.func.value)] if d is not None}
            if target in drawn_by:
                return True
            if "." not in target and any(
                    isinstance(c, ast.Call) and any(isinstance(a, ast.Name) and a.id == target for a in c.args)
                    and any(words(n) & eps for n in [*(k.arg or "" for k in c.keywords),
                                                     *(a.id for a in c.args if isinstance(a, ast.Name)),
                                                     *(a.attr for a in c.args if isinstance(a, ast.Attribute))])
                    for c in calls):
                return True  # a generator handed to a call taking ε (DP507 checks the seed and the hand-off)
            fn = facts.enclosing_function(call)
            if target.startswith("self.") and fn is not None and fn.name == "__init__" and any(
                    words(a.arg) & eps for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs,
                                                 *filter(None, [fn.args.vararg, fn.args.kwarg])]):
                return True
        elif name in seeds and isinstance(call.func, ast.Attribute):
            receiver = dotted(call.func.value) or ""
            if (name == "seed" and receiver not in ("np.random", "numpy.random", "random")) \
                    or (name in ("manual_seed", "manual_seed_all") and not receiver.startswith("torch")) \
                    or (name == "set_seed" and not receiver.startswith("tf")):
                continue
            seed = _seed_arg(call)
            fn = facts.enclosing_function(call)
            if number(seed) is not None and name != "set_seed":
                return True  # a global generator seeded with a literal (DP507 checks for a mechanism drawing after it)
            if isinstance(seed, ast.Name) and fn is None and name != "set_seed":
                return True  # ``random_state = 68`` … ``np.random.seed(random_state)`` at module level
            if not isinstance(seed, ast.Name) or fn is None:
                continue
            if name != "set_seed" and any(
                    a.arg == seed.id and number(d) is not None
                    for a, d in [*zip(fn.args.args[::-1], fn.args.defaults[::-1]),
                                 *zip(fn.args.kwonlyargs, fn.args.kw_defaults)]):
                return True  # ``def set_random_seed(seed=42): np.random.seed(seed)``
            if any(isinstance(n, ast.Assign) and len(n.targets) == 1 and last_name(n.targets[0]) == seed.id
                   for n in ast.walk(fn)):
                return True
    return False


# ---- DP505: an engine/accountant assigned in a function that reads ε from it ---------------------------

def _elements(target: ast.expr) -> list[ast.expr]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e.value if isinstance(e, ast.Starred) else e for e in target.elts]
    return [target]


def engine_read_back(facts: AstFacts, accountants: frozenset[str], reads: frozenset[str]) -> bool:
    """``engine = PrivacyEngine()`` (or a ``privacy_engine`` among a call's results) in a function that later
    calls an ε/spent-named function on that name or with it as an argument."""
    for node in facts.nodes(ast.Assign):
        value = node.value  # type: ignore[attr-defined]
        if len(node.targets) != 1 or not isinstance(value, ast.Call):  # type: ignore[attr-defined]
            continue
        elements = _elements(node.targets[0])  # type: ignore[attr-defined]
        engines = {last_name(elements[0])} if call_name(value) in accountants and len(elements) == 1 else set()
        engines |= {n for n in map(last_name, elements) if n and {"privacy", "engine"} <= words(n)}
        engines.discard(None)
        fn = facts.enclosing_function(node) if engines else None
        if fn is None:
            continue
        for call in ast.walk(fn):
            if isinstance(call, ast.Call) and words(call_name(call)) & reads and any(
                    last_name(sub) in engines for sub in ast.walk(call)):
                return True
    return False


# ---- DP514: a noise scale that grows with the budget, δ passed as ρ/ε ---------------------------------

def product_sides(expr: ast.AST) -> tuple[list[ast.AST], list[ast.AST]]:
    """(numerator, denominator) factors of a product/quotient; ``sqrt(x)`` counts as ``x``."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
        ln, ld = product_sides(expr.left)
        rn, rd = product_sides(expr.right)
        return (ln + rn, ld + rd) if isinstance(expr.op, ast.Mult) else (ln + rd, ld + rn)
    if isinstance(expr, ast.Call) and call_name(expr) == "sqrt" and len(arg_values(expr)) == 1:
        return product_sides(arg_values(expr)[0])
    return [expr], []


def budget_scale(facts: AstFacts, draws: frozenset[str], budget_word: re.Pattern[str], std_words: frozenset[str],
                 delta_only: frozenset[str], scale_keys: tuple[str, ...]) -> bool:
    """A product/quotient of two or more factors with a budget-named factor (``budget(name)``) in the
    numerator (a word of its name matching ``budget_word``), either assigned to a std-named target that a draw in the same function reads or given as a
    draw's scale; or a call passing a δ-only name to a function or method of the module that has a
    budget-named parameter."""
    def budget(name: str) -> bool:
        return any(budget_word.fullmatch(w) for w in words(name))

    def grows(expr: ast.AST) -> bool:
        numerator, denominator = product_sides(expr)
        return len(numerator) + len(denominator) >= 2 and any(
            isinstance(f, (ast.Name, ast.Attribute)) and budget(last_name(f) or "") for f in numerator)

    draw_calls = [c for c in facts.calls if call_name(c) in draws]
    for call in draw_calls:
        scales = [k.value for k in call.keywords if k.arg in scale_keys]
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        scales += positional[1:2]
        if any(not isinstance(s, (ast.Name, ast.Attribute)) and grows(s) for s in scales):
            return True
    if draw_calls:
        read_by_draws: dict[int, set[str | None]] = {}
        for c in draw_calls:
            names = {last_name(n) for v in arg_values(c) for n in ast.walk(v)}
            for held in facts.functions_holding([c]):
                read_by_draws.setdefault(held, set()).update(names)
        for node in facts.nodes(ast.Assign):
            if len(node.targets) != 1 or not words(last_name(node.targets[0]) or "") & std_words:  # type: ignore[attr-defined]
                continue
            fn = facts.enclosing_function(node)
            if fn is not None and last_name(node.targets[0]) in read_by_draws.get(id(fn), ()) \
                    and grows(node.value):  # type: ignore[attr-defined]
                return True
    budgeted = set()
    for fn in facts.functions:
        args = fn.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        if any(budget(p) and "delta" not in words(p) for p in params):
            budgeted.add(fn.name)
    if not budgeted:
        return False
    for call in facts.calls:
        func = call.func
        if not (isinstance(func, ast.Name) or isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.value.id in ("self", "cls")) or call_name(call) not in budgeted:
            continue
        if any(isinstance(v, (ast.Name, ast.Attribute)) and "delta" in words(last_name(v) or "")
               and words(last_name(v) or "") <= delta_only for v in arg_values(call)):
            return True
    return False


# ---- DP510: the whole ε given to a mechanism in every pass of a loop over columns ----------------------

def _loop_iters(loop: ast.AST) -> list[ast.expr]:
    if isinstance(loop, (ast.For, ast.AsyncFor)):
        return [loop.iter]
    return [g.iter for g in loop.generators]  # type: ignore[attr-defined]


def _column_like(expr: ast.AST, column: frozenset[str], repeat: frozenset[str], through: frozenset[str]) -> bool:
    """Columns, or (the selections' reading, a superset of the columns') any ``range`` not bounded by a number
    or a repetition count."""
    if isinstance(expr, ast.Call):
        name = call_name(expr)
        if name in through:
            return any(_column_like(v, column, repeat, through) for v in arg_values(expr))
        if name in ("items", "keys", "values") and isinstance(expr.func, ast.Attribute):
            return _column_like(expr.func.value, column, repeat, through)
        if name == "range":
            return any(number(b) is None and not words(last_name(b) or "") & repeat for b in arg_values(expr))
        return False
    name = last_name(expr)
    return name is not None and bool(words(name) & column)


def budget_per_item(facts: AstFacts, *, eps_name: Callable[[str | None], bool], mechanism: Callable[[str], bool],
                    draws: frozenset[str], column: frozenset[str], repeat: frozenset[str],
                    through: frozenset[str]) -> bool:
    """In a loop over columns (or a ``range``): a draw dividing by a full-ε name, a mechanism-named call given
    one, or a call given a name assigned a mechanism-named call with one; or ``choice(…, size=<k>,
    replace=False)`` in a file with ``exp(<full ε>)``."""
    def full_eps(v: ast.AST) -> bool:
        return isinstance(v, (ast.Name, ast.Attribute)) and eps_name(last_name(v))

    calls = facts.calls
    if any(call_name(c) in ("exp", "expm1") and any(full_eps(v) for v in arg_values(c)) for c in calls) and any(
            call_name(c) == "choice" and any(k.arg == "size" for k in c.keywords) for c in calls):
        return True
    bound = {t.id for n in facts.nodes(ast.Assign) for t in n.targets  # type: ignore[attr-defined]
             if isinstance(t, ast.Name) and isinstance(n.value, ast.Call)  # type: ignore[attr-defined]
             and mechanism(call_name(n.value)) and any(full_eps(v) for v in arg_values(n.value))}  # type: ignore[attr-defined]
    loops = facts.nodes(ast.For, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    for loop in loops:
        if not any(_column_like(it, column, repeat, through) for it in _loop_iters(loop)):
            continue
        for call in ast.walk(loop):
            if not isinstance(call, ast.Call):
                continue
            name = call_name(call)
            values = arg_values(call)
            if name in draws and any(isinstance(s, ast.BinOp) and isinstance(s.op, ast.Div) and full_eps(s.right)
                                     for v in values for s in ast.walk(v)):
                return True
            if mechanism(name) and any(full_eps(v) for v in values):
                return True
            if any(isinstance(v, ast.Name) and v.id in bound for v in values):
                return True
    return False


# ---- DP204: a domain read and a sink in the same scope ------------------------------------------------

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a module's top-level code (nested functions, classes and lambdas left out), or every
    node of a function (its nested scopes included: a superset of its own statements)."""
    if not isinstance(scope, ast.Module):
        yield from ast.walk(scope)
        return
    stack: list[ast.AST] = list(scope.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def private_domain(facts: AstFacts, *, reads: frozenset[str], encoders: frozenset[str],
                   sink_call: Callable[[str], bool], budget_words: frozenset[str], noisy_words: frozenset[str]) -> bool:
    """A domain read reaches a sink in one scope (the module's top-level code, or a function with its
    class's ``self.…`` values): a read is a call named in ``reads`` (``fit``/``fit_transform`` too when an
    encoder is built in the file, ``size``/``count`` of a ``groupby``) or ``.categories``, and what it
    taints is every name assigned from an expression holding a read or a tainted name (any order, any
    call in between). Sinks: a ``sink_call`` (a draw or mechanism) given such an expression, a statement
    holding one beside a budget-named value, a ``for`` over one whose body draws or reads a noisy-named
    value, a ``return`` of one in a scope that draws, a comprehension over one that draws; or a sink
    call given the name of a function that returns a read."""
    fitted = reads | ({"fit", "fit_transform"} if any(call_name(c) in encoders for c in facts.calls) else set())

    def is_read(node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name in ("size", "count"):
                return isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call) \
                    and call_name(node.func.value) == "groupby"
            return name in fitted
        return isinstance(node, ast.Attribute) and node.attr == "categories"

    def named(node: ast.AST, vocabulary: frozenset[str]) -> bool:
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        return name is not None and bool(words(name) & vocabulary)

    def sinks(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and sink_call(call_name(node))

    summaries: dict[int, tuple[bool, frozenset[str]]] = {}

    def carries(expr: ast.AST | None, tainted: set[str]) -> bool:
        if expr is None:
            return False
        summary = summaries.get(id(expr))
        if summary is None:
            nodes = list(ast.walk(expr))
            summary = summaries[id(expr)] = (any(is_read(n) for n in nodes), frozenset(
                name for n in nodes if isinstance(n, (ast.Name, ast.Attribute)) for name in [dotted(n)] if name))
        return summary[0] or not summary[1].isdisjoint(tainted)

    read_nodes = [n for n in (*facts.calls, *facts.nodes(ast.Attribute)) if is_read(n)]
    if not read_nodes:
        return False

    def taint(statements: list[ast.stmt], seed: set[str]) -> set[str]:
        flows: list[tuple[list[str], ast.AST]] = []
        for stmt in statements:
            if isinstance(stmt, ast.Assign):
                flows.append(([n for t in stmt.targets for n in _bound_names(t)], stmt.value))
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and stmt.value is not None:
                flows.append((_bound_names(stmt.target), stmt.value))
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                flows.append((_bound_names(stmt.target), stmt.iter))
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Attribute):
                owner = dotted(stmt.value.func.value)
                if owner is not None:
                    flows.append(([owner], stmt.value))
        tainted = set(seed)
        changed = True
        while changed:
            changed = False
            for keys, value in flows:
                if not set(keys) <= tainted and carries(value, tainted):
                    tainted.update(keys)
                    changed = True
        return tainted

    def reaches(nodes: list[ast.AST], tainted: set[str]) -> bool:
        if not tainted and not any(is_read(n) for n in nodes):
            return False
        statements = [n for n in nodes if isinstance(n, ast.stmt)]
        drawing = any(sinks(n) for n in nodes)
        drawn = _drawn_names(statements, sinks) if drawing else set()
        for stmt in statements:
            if isinstance(stmt, (ast.For, ast.AsyncFor)):
                if carries(stmt.iter, tainted) and any(sinks(n) or named(n, noisy_words)
                                                       or isinstance(n, ast.Name) and n.id in drawn
                                                       for b in stmt.body for n in ast.walk(b)):
                    return True
                continue
            value = getattr(stmt, "value", None)
            if not isinstance(value, ast.AST) or not carries(value, tainted):
                continue
            if isinstance(stmt, ast.Return) and drawing:
                return True
            if any(named(n, budget_words) for n in ast.walk(value)):
                return True
        for n in nodes:
            if sinks(n) and any(carries(v, tainted) for v in arg_values(n)):  # type: ignore[arg-type]
                return True
            if isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) and any(
                    carries(g.iter, tainted) for g in n.generators) and any(sinks(m) for m in ast.walk(n)):
                return True
        return False

    # only functions holding a read (and the other methods of their classes) can taint anything
    reading = facts.functions_holding(read_nodes)
    functions = [fn for fn in facts.functions if id(fn) in reading]
    nodes = {id(fn): list(ast.walk(fn)) for fn in functions}
    own = {id(fn): [n for n in nodes[id(fn)] if isinstance(n, ast.stmt)] for fn in functions}
    tainted = {id(fn): taint(own[id(fn)], set()) for fn in functions}
    returning: set[str] = set()
    for fn in functions:
        if any(isinstance(r, ast.Return) and carries(r.value, tainted[id(fn)]) for r in own[id(fn)]):
            returning.add(fn.name)
    if any(reaches(nodes[id(fn)], tainted[id(fn)]) for fn in functions):
        return True
    # a class shares what one method taints (``self.x``) with every method
    for cls in facts.nodes(ast.ClassDef):
        methods = [m for m in cls.body if isinstance(m, FUNCTIONS)]  # type: ignore[attr-defined]
        shared = {n for m in methods if id(m) in reading for n in tainted[id(m)] if n.startswith("self.")}
        for m in methods if shared else ():
            m_nodes = nodes.get(id(m)) or list(ast.walk(m))
            m_own = own.get(id(m)) or [n for n in m_nodes if isinstance(n, ast.stmt)]
            m_tainted = taint(m_own, shared)
            if reaches(m_nodes, m_tainted):
                return True
            if any(isinstance(r, ast.Return) and carries(r.value, m_tainted) for r in m_own):
                returning.add(m.name)
    if any(facts.enclosing_function(n) is None for n in read_nodes):
        top = list(own_nodes(facts.tree))
        if reaches(top, taint([n for n in top if isinstance(n, ast.stmt)], set())):
            return True
    # what a caller assigns from a function returning a read (``domains = self.get_domains(data)``)
    for fn in facts.functions if returning else ():
        fn_nodes = nodes.get(id(fn)) or list(ast.walk(fn))
        fn_own = [n for n in fn_nodes if isinstance(n, ast.stmt)]
        seed = {name for st in fn_own if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call)
                and call_name(st.value) in returning for t in st.targets for name in _bound_names(t)}
        if seed and reaches(fn_nodes, taint(fn_own, seed)):
            return True
    return any(sinks(c) and any(dotted(v) in returning for v in arg_values(c)) for c in facts.calls)


def _drawn_names(statements: list[ast.stmt], sinks: Callable[[ast.AST], bool]) -> set[str]:
    """Names assigned a draw (or filled with one by ``.append``), and names assigned from those."""
    out: set[str] = set()
    for _ in range(2):
        for stmt in statements:
            value, keys = None, []
            if isinstance(stmt, ast.Assign):
                value, keys = stmt.value, [n for t in stmt.targets for n in _bound_names(t)]
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append" \
                    and stmt.value.args and isinstance(stmt.value.func.value, ast.Name):
                value, keys = stmt.value.args[0], [stmt.value.func.value.id]
            if value is not None and any(sinks(n) or isinstance(n, ast.Name) and n.id in out
                                         for n in ast.walk(value)):
                out.update(keys)
    return out


def _bound_names(target: ast.AST) -> list[str]:
    """Names and ``a.b`` chains an assignment target binds; ``x[i] = …`` binds ``x`` (an update of it)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _bound_names(t)]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    while isinstance(target, ast.Subscript):
        target = target.value
    name = dotted(target)
    return [name] if name is not None else []


# ---- DP108: Laplace noise from an L2 bound, Gaussian noise from an L1 one, a clip by an L>2 norm -------

def sensitivity_norm(facts: AstFacts, *, laplace_draws: frozenset[str], gauss_draws: frozenset[str],
                     norm_calls: frozenset[str], l2_name: Callable[[str], bool]) -> bool:
    """A Laplace(-named) draw in a file with an L2-named bound or a norm call; a Gaussian draw in one with an
    L1-named bound, or with a norm call given an order that may be above 2."""
    called = {call_name(c) for c in facts.calls}
    names = {n for node in facts.nodes(ast.Name, ast.Attribute, ast.Subscript) for n in [last_name(node)] if n}
    if (called & laplace_draws or any("laplace" in words(c) for c in called)) and (
            called & norm_calls or any(l2_name(n) for n in names)):
        return True
    if not called & gauss_draws:
        return False
    if any("l1" in words(n) and words(n) & {"sens", "sensitivity", "norm", "bound"} for n in names):
        return True
    for call in facts.calls:
        if call_name(call) not in norm_calls:
            continue
        orders = [k.value for k in call.keywords if k.arg in ("ord", "p")]
        if call_name(call) == "norm":
            orders += [a for a in call.args[1:] if not isinstance(a, ast.Starred)]
        if any(number(o) is None or number(o) > 2 for o in orders):  # type: ignore[operator]
            return True
    return False


# ---- DP307: a noised copy that is never used ----------------------------------------------------------

def _base(target: ast.AST) -> str | None:
    while isinstance(target, ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


#: a value named as the noised release
_NOISED_WORDS = frozenset({"noised", "noisy", "perturbed", "privatized", "privatised", "sanitized", "sanitised"})


def discarded_noise(facts: AstFacts, fn: ast.FunctionDef | ast.AsyncFunctionDef, draws: frozenset[str],
                    measures: frozenset[str]) -> bool:
    """``fn`` stores ``x + <draw>`` (or ``x + n``, ``n`` assigned a draw) in a name it then reads only in its
    own assignments, ``name[k] = …`` targets and measurements (``measures`` calls other than ``append``)."""
    def drawn(expr: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in draws
                   for n in ast.walk(expr))

    nodes = [n for stmt in fn.body for n in ast.walk(stmt)]
    assigns = [n for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1]
    noise = {t.id for a in assigns for t in a.targets if isinstance(t, ast.Name) and drawn(a.value)}
    noised = {name for a in assigns for name in [_base(a.targets[0])] if name is not None and any(
        isinstance(b, ast.BinOp) and isinstance(b.op, ast.Add) and any(
            drawn(side) or isinstance(side, ast.Name) and side.id in noise for side in (b.left, b.right))
        for b in ast.walk(a.value))}
    loaded = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if noise - loaded and any(isinstance(t, ast.Name) and words(t.id) & _NOISED_WORDS
                              for a in assigns for t in a.targets):
        return True  # ``noise = normal(…)`` never read beside ``noised = x`` (the addition left out)
    if not noised:
        return False
    parents = facts.parents
    used: set[str] = set()
    for node in nodes:
        if not isinstance(node, ast.Name) or node.id not in noised or node.id in used \
                or not isinstance(node.ctx, ast.Load):
            continue
        parent = parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Store):
            continue  # ``name[k] = …``
        current = parent
        use = True
        while current is not None and not isinstance(current, ast.stmt):
            if isinstance(current, ast.Call) and call_name(current) in measures and call_name(current) != "append":
                use = False
                break
            current = parents.get(current)
        if use and isinstance(current, ast.Assign):
            use = not (len(current.targets) == 1 and _base(current.targets[0]) == node.id)
        if use:
            used.add(node.id)
    return bool(noised - used)


#: named float literals (``np.nan``, ``math.inf``): a placeholder both parameters may hold, like a literal
_FLOAT_CONSTANTS = frozenset({"nan", "inf", "infinity"})


def delta_twin_keyword(call_keywords: list[tuple[str, str | None]], other_words: frozenset[str]) -> str | None:
    """Among ``(keyword, dotted value)`` pairs of one call, the keyword that receives the same named value as a
    δ keyword (``sigma=args.dp_sigma, delta=args.dp_sigma``): one value cannot be both a δ and a σ/ε."""
    deltas = {value for key, value in call_keywords if value is not None and "delta" in words(key)
              and value.rsplit(".", 1)[-1].lower() not in _FLOAT_CONSTANTS}
    for key, value in call_keywords:
        pieces = words(key)
        if value in deltas and "delta" not in pieces and pieces & other_words:
            return key
    return None


def delta_twin_call(facts: AstFacts, other_words: frozenset[str]) -> bool:
    """A call passing one name (or dotted name) both to a δ keyword and to a σ/ε/noise keyword."""
    for call in facts.calls:
        pairs = [(k.arg, dotted(k.value) if isinstance(k.value, (ast.Name, ast.Attribute)) else None)
                 for k in call.keywords if k.arg is not None]
        if len(pairs) >= 2 and delta_twin_keyword(pairs, other_words) is not None:
            return True
    return False
