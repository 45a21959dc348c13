"""DP661: the accountant counts N // batch steps per epoch while training runs ceil(N / batch) noisy updates."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, refs, walk, words
from dpcheck.rule import Rule

_BATCH = frozenset({"batch", "bs", "bsz", "batchsize", "lot"})
#: calls that turn a step count into a privacy cost
_ACCOUNT_LAST = frozenset({"compute_rdp", "compute_dp_sgd_privacy", "compute_dp_sgd_privacy_statement",
                           "get_privacy_spent", "compute_epsilon", "get_epsilon", "compute_eps", "calc_epsilon",
                           "compute_privacy", "epsilon_from_steps", "get_noise_multiplier", "compute_rdp_sample",
                           "rdp_accountant", "compute_heterogenous_rdp"})
_ACCOUNT_WORDS = frozenset({"epsilon", "eps", "rdp", "privacy", "accountant", "spent", "moments"})


def _last(call: cst.Call) -> str:
    return (call_name(call) or "").split(".")[-1]


def _accounting(last: str) -> bool:
    """An accountant call (by its name's last segment)."""
    return last in _ACCOUNT_LAST or bool(words(last) & _ACCOUNT_WORDS and words(last) & {"compute", "get", "calc",
                                                                                           "spent"})


def _ast_ceil_shape(node: ast.AST, facts: AstFacts) -> bool:
    """Could ``_ceil_by_batch`` hold for ``node`` (the batch naming not checked)?"""
    if isinstance(node, ast.Call):
        return "ceil" in facts.call_lasts(node) and bool(node.args or node.keywords)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub) and isinstance(node.operand, ast.BinOp) \
            and isinstance(node.operand.op, ast.FloorDiv)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return any(isinstance(side, ast.Compare) or isinstance(side, ast.Call) and bool(side.args or side.keywords)
                   and facts.call_lasts(side) & {"bool", "int"} for side in (node.left, node.right))
    return False


def _batch_named(expr: cst.BaseExpression) -> bool:
    return any(words(n.split(".")[-1]) & _BATCH or n.split(".")[-1].lower() in _BATCH for n in refs(expr))


def _floor_by_batch(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.FloorDivide) \
        and _batch_named(expr.right) and not (isinstance(expr.left, cst.UnaryOperation))


def _ceil_by_batch(expr: cst.BaseExpression) -> bool:
    """``ceil(N / B)``, ``-(-N // B)``, ``q + bool(r)``, ``q + (r > 0)``, ``q + int(r != 0)``."""
    if isinstance(expr, cst.Call) and _last(expr) == "ceil" and expr.args:
        inner = expr.args[0].value
        return isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Divide) \
            and _batch_named(inner.right)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) \
            and isinstance(expr.expression, cst.BinaryOperation) \
            and isinstance(expr.expression.operator, cst.FloorDivide) and _batch_named(expr.expression.right):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        for side in (expr.left, expr.right):
            if isinstance(side, cst.Call) and _last(side) in ("bool", "int") and side.args \
                    and (isinstance(side.args[0].value, (cst.Name, cst.Comparison))):
                return True
            if isinstance(side, cst.Comparison):
                return True
    return False


class StepsFloorVsCeil(Rule):
    id = "DP661"
    name = "steps-floor-vs-ceil"
    category = "general"
    severity = "warning"
    summary = ("the privacy accountant is given N // batch_size steps per epoch while the training loop runs "
               "ceil(N / batch_size) noisy updates (the leftover partial batch included)")
    rationale = (
        "Each noisy update spends privacy; the accountant must compose exactly as many steps as were taken. When "
        "the batches are built as `num_complete, leftover = divmod(N, B)`, `num_batches = num_complete + "
        "bool(leftover)` (or `ceil(N / B)`), every epoch takes one more noisy step than `N // B` whenever N is not "
        "a multiple of B, and an accountant fed `epochs * (N // B)` reports an ε below the one spent (the partial "
        "batch also has a higher sampling ratio than B/N). Reported: an accountant call (compute_rdp, "
        "get_privacy_spent, compute_epsilon, ..) whose step count reads `N // B` (directly or through a name) in a "
        "module whose training loop runs `range(count)` with count a ceil of the same division. Bad: "
        "`compute_epsilon(epoch * (N // B), ..)` beside `for _ in range(num_complete + bool(leftover))`. Good: "
        "count the steps taken (`steps += 1` per update) or drop the partial batch. Fix: give the accountant the "
        "number of noisy updates actually run (ceil(N / B) per epoch), or drop the last partial batch."
    )
    TRIGGERS = ("//",)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a floor division, an accountant call with arguments, a ``for … in range(…)`` loop and a
        ceil-shaped count (``ceil(…)``, ``-(-N // B)``, ``q + bool(r)``, ``q + (r > 0)``)."""
        if not facts.binops(ast.FloorDiv):
            return False
        if not any((c.args or c.keywords) and any(_accounting(n) for n in facts.call_lasts(c)) for c in facts.calls):
            return False
        loops = [loop.iter for loop in facts.nodes(ast.For, ast.AsyncFor)]  # type: ignore[attr-defined]
        if not any(isinstance(it, ast.Call) and (it.args or it.keywords) and "range" in facts.call_lasts(it)
                   for it in loops):
            return False
        return any(_ast_ceil_shape(n, facts) for n in facts.nodes(ast.Call, ast.UnaryOp, ast.BinOp))

    INVALID = (
        # divmod + bool(leftover) batches, accountant fed the floor
        """
def stream(n_train, batch_size):
    full, rest = divmod(n_train, batch_size)
    n_batches = full + bool(rest)
    return n_batches
n_batches = stream(len(xs), args.batch_size)
per_epoch = len(xs) // args.batch_size
for epoch in range(1, args.epochs + 1):
    for _ in range(n_batches):
        state = noisy_step(state)
    eps = compute_epsilon(epoch * per_epoch, len(xs), args.batch_size, args.sigma, 1e-5)  # <-
""",
        # math.ceil batches, rdp accountant fed the floor inline
        """
import math
from tensorflow_privacy.privacy.analysis.rdp_accountant import compute_rdp, get_privacy_spent
steps_each = math.ceil(n / lot_size)
for ep in range(epochs):
    for b in range(steps_each):
        params = dp_update(params, b)
rdp = compute_rdp(lot_size / n, sigma, epochs * (n // lot_size), orders)  # <-
""",
        # -(-n // b) batches, privacy statement over the floor
        """
n_iters = -(-num_examples // batch_size)
for epoch in range(num_epochs):
    for it in range(n_iters):
        w = private_sgd_step(w, it)
iters_per_epoch = num_examples // batch_size
total = num_epochs * iters_per_epoch
epsilon = get_epsilon(total, batch_size / num_examples, noise_multiplier)  # <-
""",
        # q + (r > 0) batches, an accountant object stepped by the floor
        """
q, r = divmod(N, bsz)
num_steps = q + (r > 0)
for e in range(E):
    for s in range(num_steps):
        theta = step(theta)
accountant.compute_epsilon(steps=E * (N // bsz), delta=1e-5)  # <-
""",
    )
    VALID = (
        # twin: the accountant gets the ceil count the loop runs
        """
def stream(n_train, batch_size):
    full, rest = divmod(n_train, batch_size)
    n_batches = full + bool(rest)
    return n_batches
n_batches = stream(len(xs), args.batch_size)
for epoch in range(1, args.epochs + 1):
    for _ in range(n_batches):
        state = noisy_step(state)
    eps = compute_epsilon(epoch * n_batches, len(xs), args.batch_size, args.sigma, 1e-5)
""",
        # twin: the loop also runs the floor (partial batch dropped)
        """
from tensorflow_privacy.privacy.analysis.rdp_accountant import compute_rdp
steps_each = n // lot_size
for ep in range(epochs):
    for b in range(steps_each):
        params = dp_update(params, b)
rdp = compute_rdp(lot_size / n, sigma, epochs * (n // lot_size), orders)
""",
        # twin: the steps are counted as they are taken
        """
n_iters = -(-num_examples // batch_size)
taken = 0
for epoch in range(num_epochs):
    for it in range(n_iters):
        w = private_sgd_step(w, it)
        taken += 1
epsilon = get_epsilon(taken, batch_size / num_examples, noise_multiplier)
""",
        # ordinary ML: a ceil loop and a floor for logging, no accountant
        """
import math
n_batches = math.ceil(len(data) / batch_size)
for epoch in range(epochs):
    for i in range(n_batches):
        loss = train_step(model, i)
    print("full batches", len(data) // batch_size)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        assigned: dict[str, list[cst.BaseExpression]] = {}
        for sub in walk(node):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1:
                name = dotted(sub.targets[0].target)
                if name is not None:
                    assigned.setdefault(name, []).append(sub.value)
        ceil_names = {n for n, vs in assigned.items() if any(_ceil_by_batch(v) for v in vs)}
        floor_names = {n for n, vs in assigned.items() if any(_floor_by_batch(v) for v in vs)}
        if not floor_names and "//" not in self.ctx.source:
            return
        # the training loop runs a ceil count: ``for _ in range(C)`` with C a ceil (or a call returning one)
        returns_ceil = {fn.name.value for fn in walk(node) if isinstance(fn, cst.FunctionDef)
                        and any(isinstance(r, cst.Return) and r.value is not None
                                and (refs(r.value) & ceil_names or _ceil_by_batch(r.value))
                                for r in walk(fn, into_scopes=False))}
        for n, vs in assigned.items():
            if any(isinstance(v, cst.Call) and _last(v) in returns_ceil for v in vs):
                ceil_names.add(n)
        ceil_names -= floor_names
        loops = False
        for loop in walk(node):
            if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call) and _last(loop.iter) == "range" \
                    and loop.iter.args and (refs(loop.iter.args[-1].value) & ceil_names
                                            or _ceil_by_batch(loop.iter.args[-1].value)):
                loops = True
                break
        if not loops:
            return
        # a name built from a floor count (``total = epochs * per_epoch``)
        derived = set(floor_names)
        for _ in range(2):
            for n, vs in assigned.items():
                if n not in derived and any(refs(v) & derived for v in vs) \
                        and not any(_ceil_by_batch(v) for v in vs):
                    derived.add(n)
        for call in walk(node):
            if not isinstance(call, cst.Call):
                continue
            if not _accounting(_last(call)):
                continue
            for arg in call.args:
                if refs(arg.value) & derived or any(_floor_by_batch(s) for s in walk(arg.value)
                                                    if isinstance(s, cst.BinaryOperation)):
                    self.report(call, "the accountant counts N // batch_size steps per epoch, but the training loop "
                                      "runs ceil(N / batch_size) noisy updates (the partial batch too), so ε is "
                                      "under-reported; pass the number of updates actually taken or drop the "
                                      "partial batch")
                    break
