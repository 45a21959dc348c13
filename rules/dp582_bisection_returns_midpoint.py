"""DP582: a bisection for the noise (or budget) that returns the last midpoint instead of the bound known to meet
the target."""
from __future__ import annotations

import os
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisecalib import key
from dpcheck.analysis.syntax import call_name, number, param_names, target_nodes, walk, words
from dpcheck.rule import Rule

#: words that tie a search to privacy: the target it meets or the quantity it computes
_PRIVACY_WORDS = frozenset({"eps", "epsilon", "delta", "sigma", "noise", "multiplier", "rdp", "privacy", "accountant",
                            "budget", "dp", "rho", "mu", "gdp", "zcdp"})


def _midpoint(expr: cst.BaseExpression) -> tuple[str, str] | None:
    """``(a + b) / 2``, ``(a + b) * 0.5``, ``0.5 * (a + b)``, ``a + (b - a) / 2``, ``sqrt(a * b)`` -> (a, b)."""
    def pair(e: cst.BaseExpression, op: type) -> tuple[str, str] | None:
        if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, op):
            a, b = key(e.left), key(e.right)
            if a and b and a != b:
                return a, b
        return None

    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Divide) and number(expr.right) == 2:
            return pair(expr.left, cst.Add)
        if isinstance(expr.operator, cst.Multiply):
            for s, o in ((expr.left, expr.right), (expr.right, expr.left)):
                if number(o) == 0.5:
                    return pair(s, cst.Add)
        if isinstance(expr.operator, cst.Add):
            for s, o in ((expr.left, expr.right), (expr.right, expr.left)):
                if isinstance(o, cst.BinaryOperation) and isinstance(o.operator, cst.Divide) and number(o.right) == 2:
                    d = pair(o.left, cst.Subtract)
                    if d and key(s) == d[1]:
                        return d
    if isinstance(expr, cst.Call) and call_name(expr) == "sqrt" and len(expr.args) == 1:
        return pair(expr.args[0].value, cst.Multiply)
    return None


def _literals(fn: cst.FunctionDef) -> dict[str, float]:
    """Names the function binds to one number: parameter defaults (``tolerance=1e-7``) and plain assignments
    (``tol = 1e-6``); a name bound twice to different values is left out."""
    out: dict[str, float] = {}
    seen: set[str] = set()

    def bind(name: str, value: float | None) -> None:
        if name in seen and out.get(name) != value:
            out.pop(name, None)
        elif value is not None:
            out[name] = value
        seen.add(name)

    for p in [*fn.params.params, *fn.params.kwonly_params]:
        if p.default is not None:
            bind(p.name.value, number(p.default))
    for n in walk(fn.body, into_scopes=False):
        if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            targets = n.targets if isinstance(n, cst.Assign) else [n]
            for t in targets:
                if isinstance(t.target, cst.Name):
                    bind(t.target.value, number(n.value) if isinstance(n, cst.Assign) else None)
    return out


def _assigned(loop: cst.CSTNode) -> list[tuple[str, cst.BaseExpression, cst.CSTNode]]:
    """``(target key, value, statement)`` of every assignment in ``loop`` (tuple assignments paired)."""
    out: list[tuple[str, cst.BaseExpression, cst.CSTNode]] = []
    for s in walk(loop, into_scopes=False):
        if not isinstance(s, cst.Assign):
            continue
        for t in s.targets:
            if isinstance(t.target, (cst.Tuple, cst.List)) and isinstance(s.value, (cst.Tuple, cst.List)) and len(
                    t.target.elements) == len(s.value.elements):
                for te, ve in zip(t.target.elements, s.value.elements):
                    k = key(te.value)
                    if k:
                        out.append((k, ve.value, s))
            else:
                for tn in target_nodes(t.target):
                    k = key(tn)
                    if k:
                        out.append((k, s.value, s))
    return out


class BisectionReturnsMidpoint(Rule):
    id = "DP582"
    name = "bisection-returns-midpoint"
    category = "moments_accountant"
    severity = "error"
    summary = ("a bisection for the noise multiplier (or ε, δ) returns the last midpoint, not the bound known to "
               "meet the privacy target")
    rationale = (
        "Calibrating σ to a target ε by bisection keeps two bounds: one whose ε is known to be above the target "
        "(too little noise) and one known to meet it. Each step moves one of them to the midpoint. After the "
        "loop only the feasible bound is guaranteed to meet the target; the last midpoint is on either side, "
        "so returning it (`return mid`, `return sigma`, `return (lo + hi) / 2`) can hand training a σ whose ε "
        "exceeds the budget by up to the search tolerance — and by much more when the loop stops after a fixed "
        "number of steps or on `abs(eps - target) < tol`. Reported: in a function with a loop that assigns a "
        "midpoint of two names (`(a + b) / 2`, `(a + b) * 0.5`, `a + (b - a) / 2`, `sqrt(a * b)`) and moves "
        "both names to it, a return after the loop of that midpoint (or a new midpoint of the same two names), "
        "when the function or loop speaks of privacy (ε, δ, σ, a noise multiplier, an accountant, RDP). Not "
        "reported: returning either bound or a value recorded only when the target holds, integer searches "
        "(`//`), searches narrowed to rounding (a width of at most 1e-5, also through a name such as a "
        "`tolerance=1e-7` default, or 40 and more halvings), bisections with no privacy quantity (roots, indices), a module-level helper no line of the project names (never called, so it calibrates nothing). Fix: return the bound the loop only moves "
        "to points meeting the target (for σ, the upper one), or check ε at the returned value."
        " "
        "(h44-2) Also reported: a grid search that keeps a candidate only when it meets the target and, when none does, picks one anyway in `if best is None:` and carries on instead of raising."
    )
    TRIGGERS = ("/ 2", "/2", "0.5", "sqrt", "is None")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        import ast
        if not facts.nodes(ast.While, ast.For) or not facts.nodes(ast.Return):
            return False
        if any(isinstance(n.test, ast.Compare) and len(n.test.ops) == 1 and isinstance(n.test.ops[0], ast.Is)
               and isinstance(n.test.comparators[0], ast.Constant) and n.test.comparators[0].value is None
               for n in facts.nodes(ast.If)) and re.search(r"eps|sigma|noise", facts.source):
            return True  # (h44-2) a search's not-found fallback
        for b in facts.nodes(ast.BinOp):
            if isinstance(b.op, ast.Div) and isinstance(b.left, ast.BinOp) and isinstance(b.left.op, (ast.Add, ast.Sub)) \
                    and isinstance(b.right, ast.Constant) and b.right.value == 2:
                return True
            if isinstance(b.op, ast.Mult) and any(isinstance(s, ast.Constant) and s.value == 0.5 for s in (b.left, b.right)):
                return True
        return any(isinstance(c.func, (ast.Attribute, ast.Name)) and (getattr(c.func, "attr", None) or getattr(
            c.func, "id", None)) == "sqrt" and c.args and isinstance(c.args[0], ast.BinOp) for c in facts.calls)

    VALID = (
        # the tolerance is a parameter whose default is at rounding level: the midpoint is the feasible bound
        # (h44-2 twin) the search refuses when no σ meets the target; a best-validation-loss search (no privacy)
        """
def calibrate(eps_of, target_epsilon, steps, grid=(0.5, 1.0, 2.0, 4.0)):
    best = None
    for sigma in grid:
        eps = eps_of(sigma, steps)
        if eps <= target_epsilon:
            if best is None or eps < best[0]:
                best = (eps, sigma)
    if best is None:
        raise ValueError("no noise multiplier on the grid meets the target epsilon")
    return best
def pick_lr(val_loss_of, grid, max_loss):
    best = None
    for lr in grid:
        loss = val_loss_of(lr)
        if loss <= max_loss:
            best = lr
    if best is None:
        best = grid[0]
    return best
""",
        """
def sigma_for(target_eps, steps, q, delta, accountant, tolerance=1e-8):
    lo, hi = 0.1, 500.0
    while hi - lo > tolerance:
        mid = (lo + hi) / 2
        if accountant(steps, mid, q, delta) < target_eps:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2
""",
        # a private search for a radius (GoodRadius): each step reads noisy counts, so returning the midpoint is
        # post-processing; neither the midpoint nor the test deciding the end is a privacy quantity
        """
import numpy as np
def dp_good_radius(S, t, tolerance, sigma_radius, count):
    r_low, r_high = 0.0, 1.0
    while r_high - r_low > tolerance:
        r_mid = (r_high + r_low) / 2
        noisy = count(S, r_mid) + np.random.normal(0, 2 * sigma_radius)
        if noisy >= t:
            r_high = r_mid
        else:
            r_low = r_mid
    return r_mid
""",
        # twin 1: returns the feasible upper bound
        """
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent
def find_sigma(target_eps, q, steps, delta, lo=0.1, hi=50.0, tol=1e-3):
    orders = [1 + x / 10.0 for x in range(1, 100)]
    while hi - lo > tol:
        mid = (lo + hi) / 2
        eps, _ = get_privacy_spent(orders=orders, rdp=compute_rdp(q=q, noise_multiplier=mid, steps=steps, orders=orders), delta=delta)
        if eps > target_eps:
            lo = mid
        else:
            hi = mid
    return hi
""",
        # twin 2: for loop, returns sigma_max
        """
def get_sigma(q, T, eps, delta, accountant):
    sigma_min, sigma_max = 0.01, 100.0
    for _ in range(60):
        sigma = (sigma_min + sigma_max) / 2
        if accountant(q, sigma, T, delta) < eps:
            sigma_max = sigma
        else:
            sigma_min = sigma
    return sigma_max
""",
        # twin 3: class method, the midpoint is kept only when feasible
        """
class Calibrator:
    def __init__(self, accountant, target_epsilon):
        self.accountant, self.target_epsilon = accountant, target_epsilon
    def noise_multiplier(self, sample_rate, steps):
        low, high, best = 0.0, 64.0, 64.0
        while high - low > 0.01:
            z = low + (high - low) / 2
            if self.accountant.epsilon(z, sample_rate, steps) <= self.target_epsilon:
                high, best = z, z
            else:
                low = z
        return best
""",
        # ordinary numerics: bisection for a root of a function, no privacy quantity
        """
def bisect(f, a, b, tol=1e-8):
    while b - a > tol:
        m = (a + b) / 2
        if f(a) * f(m) <= 0:
            b = m
        else:
            a = m
    return m
""",
        # the interval is narrowed to rounding (a tolerance of 1e-10): the midpoint is the root to numerical precision
        """
def gaussian_epsilon(sigma, delta, f):
    L, R = 0.0, 1.0
    while R - L > 1e-10:
        M = (R + L) / 2
        if f(sigma, M) >= delta:
            L = M
        else:
            R = M
    return (L + R) / 2
""",
        # binary search over an index of a sorted list
        """
def search(xs, target):
    lo, hi = 0, len(xs) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if xs[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return lo
""",
        # returns the midpoint only after checking the target holds there
        """
def calibrate(eps_fn, target_eps):
    lo, hi = 0.0, 100.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if eps_fn(mid) > target_eps:
            lo = mid
        else:
            hi = mid
    assert eps_fn(hi) <= target_eps
    return hi
""",
    )

    INVALID = (
        # the twin: the same search with a coarse tolerance bound to a local name
        # (h44-2) a σ grid search that, when no σ meets the target, takes the largest one and carries on
        """
def calibrate(eps_of, target_epsilon, steps, grid=(0.5, 1.0, 2.0, 4.0)):
    best = None
    for sigma in grid:
        eps = eps_of(sigma, steps)
        if eps <= target_epsilon:
            if best is None or eps < best[0]:
                best = (eps, sigma)
    if best is None:  # <-
        sigma = grid[-1]
        best = (eps_of(sigma, steps), sigma)
    return best
""",
        """
def sigma_for(target_eps, steps, q, delta, accountant):
    tolerance = 0.05
    lo, hi = 0.1, 500.0
    while hi - lo > tolerance:
        mid = (lo + hi) / 2
        if accountant(steps, mid, q, delta) < target_eps:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2  # <-
""",
        # 1 while loop with a tolerance, returns the last midpoint
        """
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent
def find_sigma(target_eps, q, steps, delta, lo=0.1, hi=50.0, tol=1e-3):
    orders = [1 + x / 10.0 for x in range(1, 100)]
    while hi - lo > tol:
        mid = (lo + hi) / 2
        eps, _ = get_privacy_spent(orders=orders, rdp=compute_rdp(q=q, noise_multiplier=mid, steps=steps, orders=orders), delta=delta)
        if eps > target_eps:
            lo = mid
        else:
            hi = mid
    return mid  # <-
""",
        # 2 for loop, the midpoint named sigma
        """
def get_sigma(q, T, eps, delta, accountant):
    sigma_min, sigma_max = 0.01, 100.0
    for _ in range(20):
        sigma = (sigma_min + sigma_max) / 2
        if accountant(q, sigma, T, delta) < eps:
            sigma_max = sigma
        else:
            sigma_min = sigma
    return sigma  # <-
""",
        # 3 class method, low + (high - low) / 2
        """
class Calibrator:
    def __init__(self, accountant, target_epsilon):
        self.accountant, self.target_epsilon = accountant, target_epsilon
    def noise_multiplier(self, sample_rate, steps):
        low, high = 0.0, 64.0
        while high - low > 0.01:
            z = low + (high - low) / 2
            if self.accountant.epsilon(z, sample_rate, steps) <= self.target_epsilon:
                high = z
            else:
                low = z
        return z  # <-
""",
        # 4 the midpoint recomputed in the return
        """
import numpy as np
def noise_for_budget(epsilon, delta, n_iters, batch, n):
    left, right = 1e-3, 1e3
    for _ in range(30):
        m = np.sqrt(left * right)
        e = compute_eps(m, batch / n, n_iters, delta)
        if e > epsilon:
            left = m
        else:
            right = m
    return (left + right) / 2  # <-
""",
        # 5 the midpoint stored on the object and returned after the loop
        """
class DPConfig:
    def calibrate(self, target_eps, delta, rate, epochs):
        a, b = 0.3, 30.0
        while b - a > 1e-4:
            self.sigma = (a + b) * 0.5
            if self.epsilon_for(self.sigma, rate, epochs, delta) > target_eps:
                a = self.sigma
            else:
                b = self.sigma
        return self.sigma  # <-
""",
        # 6 a tuple return: the midpoint with its epsilon
        """
def search_noise(target, q, steps, orders, delta):
    lo, hi = 0.5, 20.0
    while hi - lo > 1e-3:
        mid = (hi + lo) / 2.0
        eps = rdp_to_eps(q, mid, steps, orders, delta)
        if eps < target:
            hi = mid
        else:
            lo = mid
    return mid, eps  # <-
""",
        # 7 early exit on a tolerance inside the loop, and the midpoint after it
        """
def binary_search_sigma(eps_target, delta, sampling_prob, iterations, tol=0.01):
    sigma_low, sigma_high = 0.1, 10.0
    sigma = sigma_high
    while sigma_high - sigma_low > 1e-6:
        sigma = (sigma_low + sigma_high) / 2
        eps = get_epsilon(sigma, delta, sampling_prob, iterations)
        if abs(eps - eps_target) < tol:
            break
        if eps > eps_target:
            sigma_low = sigma
        else:
            sigma_high = sigma
    return sigma  # <-
""",
    )

    def _fallback_after_search(self, node: cst.FunctionDef) -> None:
        """(h44-2) A grid search keeps ``best`` only for candidates meeting the target (``if eps <= target: best =
        …``), and when none does, ``if best is None:`` picks one anyway (the largest σ) and carries on: the
        parameters returned then miss the privacy target the caller asked for."""
        fa = self.ctx.analysis
        statements = list(walk(node.body, into_scopes=False))
        for i, stmt in enumerate(statements):
            if not isinstance(stmt, cst.If):
                continue
            test = stmt.test
            if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
                    and isinstance(test.comparisons[0].operator, cst.Is) \
                    and isinstance(test.comparisons[0].comparator, cst.Name) \
                    and test.comparisons[0].comparator.value == "None" and isinstance(test.left, cst.Name):
                var = test.left.value
            elif isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) \
                    and isinstance(test.expression, cst.Name):
                var = test.expression.value
            else:
                continue
            loop = next((s for s in reversed(statements[:i]) if isinstance(s, (cst.For, cst.While))
                         and not fa.inside(stmt, s)), None)
            if loop is None or not self._kept_when_met(loop, var):
                continue
            if any(isinstance(n, (cst.Raise, cst.Return)) for n in walk(stmt.body)):
                continue
            if not any(isinstance(n, cst.Assign) for n in walk(stmt.body)):
                continue
            self.report(stmt.test, f"when no candidate of the search meets the privacy target, `{var}` is None and "
                                   "this branch picks a value anyway and carries on: the parameters used then give an "
                                   "ε above the target the caller asked for; raise (or refuse to train) instead")
            return

    @staticmethod
    def _kept_when_met(loop: cst.CSTNode, var: str) -> bool:
        """Inside ``loop``, ``var`` is assigned only under a test comparing a privacy quantity with a target."""
        for n in walk(loop):
            if not isinstance(n, cst.If) or not isinstance(n.test, cst.Comparison):
                continue
            names = {w for m in walk(n.test) if isinstance(m, cst.Name) for w in words(m.value)}
            if not names & {"target", "budget", "max"} or not names & _PRIVACY_WORDS:
                continue
            if any(isinstance(a, cst.Assign) and any(isinstance(t, cst.Name) and t.value == var
                                                     for tg in a.targets for t in target_nodes(tg.target))
                   for a in walk(n.body)):
                return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._fallback_after_search(node)
        for loop in walk(node.body, into_scopes=False):
            if not isinstance(loop, (cst.While, cst.For)):
                continue
            assigned = _assigned(loop)
            for mid, value, _ in assigned:
                ends = _midpoint(value)
                if ends is None:
                    continue
                moved = {k for k, v, _ in assigned if key(v) == mid}
                if not set(ends) <= moved:
                    continue
                if not self._privacy(loop, mid) or self._negligible(loop, _literals(node)):
                    continue
                self._returns_after(node, loop, mid, ends)

    def _never_called(self, fn: cst.FunctionDef) -> bool:
        """A module-level function whose name no other line of the module, and no other ``.py`` file of the
        project, mentions (not called, imported or passed on). A file not on disk is never judged so."""
        if not (self.ctx.path and os.path.isfile(self.ctx.path)) or self.ctx.analysis.parent(fn) is not self.ctx.module:
            return False
        name = fn.name.value
        if name.startswith("__") or len(name) < 4:
            return False
        pattern = re.compile(r"\b" + re.escape(name) + r"\b")
        own = [i for i, line in enumerate(self.ctx.source.splitlines()) if pattern.search(line)]
        if len(own) > 1:
            return False
        from dpcheck.analysis.noisedraws import project_root

        root = project_root(self.ctx.path)
        me = os.path.abspath(self.ctx.path)
        seen = 0
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "venv", ".venv")]
            for file in files:
                if not file.endswith(".py"):
                    continue
                path = os.path.join(folder, file)
                if os.path.abspath(path) == me:
                    continue
                seen += 1
                if seen > 3000:
                    return False  # too large a tree to be sure
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        if pattern.search(handle.read()):
                            return False
                except OSError:
                    return False
        # a script one folder up may import the helper (``scripts/run.py`` beside ``src/``): its own .py files
        parent = os.path.dirname(root)
        try:
            above = [os.path.join(parent, f) for f in os.listdir(parent) if f.endswith(".py")]
        except OSError:
            return False
        for path in above[:200]:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    if pattern.search(handle.read()):
                        return False
            except OSError:
                return False
        return True

    @staticmethod
    def _negligible(loop: cst.CSTNode, literals: dict[str, float] | None = None) -> bool:
        """The loop narrows the interval to numerical precision (a tolerance of at most 1e-5, written in the test
        or bound to a name the test reads: ``while high - low > tolerance`` with ``tolerance=1e-7`` a parameter
        default, ``isclose``, or 40 and more halvings), so the midpoint is within rounding of the feasible
        bound."""
        literals = literals or {}
        if any(isinstance(b, cst.Break) for b in walk(loop.body, into_scopes=False)):
            return False  # an early exit leaves the interval wide
        if isinstance(loop, cst.While):
            test = loop.test
            if any(isinstance(c, cst.Call) and call_name(c) in ("isclose", "allclose") for c in walk(test)):
                return True
            values = [number(n) for n in walk(test)]
            values += [literals.get(n.value) for n in walk(test) if isinstance(n, cst.Name)]
            return any(v is not None and 0 < abs(v) <= 1e-5 for v in values)
        it = loop.iter if isinstance(loop, cst.For) else None
        if isinstance(it, cst.Call) and call_name(it) == "range" and it.args:
            n = number(it.args[-1].value) if len(it.args) == 1 else number(it.args[1].value)
            return n is not None and n >= 40
        return False

    @staticmethod
    def _privacy(loop: cst.CSTNode, mid: str) -> bool:
        """The search is a privacy calibration: the midpoint is a privacy quantity (σ, a noise multiplier, ε),
        or the test that picks the end to move compares one (``if eps < target_epsilon``). A search for a
        radius or a truncation point steered by other values is not, whatever its function is called."""
        names: set[str] = {mid}
        for branch in walk(loop.body, into_scopes=False):
            if isinstance(branch, (cst.If, cst.IfExp)):
                test = branch.test
                names |= {call_name(c) for c in walk(test) if isinstance(c, cst.Call)}
                names |= {n.value for n in walk(test) if isinstance(n, cst.Name)}
                names |= {n.attr.value for n in walk(test) if isinstance(n, cst.Attribute)}
        return any(words(n) & _PRIVACY_WORDS for n in names if n)

    def _returns_after(self, fn: cst.FunctionDef, loop: cst.CSTNode, mid: str, ends: tuple[str, str]) -> None:
        fa = self.ctx.analysis
        end = fa.line_of(loop)
        for ret in walk(fn.body, into_scopes=False):
            if not isinstance(ret, cst.Return) or ret.value is None or fa.inside(ret, loop):
                continue
            if fa.line_of(ret) < end:
                continue
            value = ret.value
            items = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
            if any(key(v) == mid and not isinstance(v, cst.Subscript) for v in items) or any(
                    (m := _midpoint(v)) is not None and set(m) == set(ends) for v in items):
                if self._never_called(fn):
                    return  # (h69-q2) a helper no code of the project calls: its midpoint calibrates nothing
                self.report(ret, f"the search returns the last midpoint `{mid}`, which may lie on the side that "
                                 f"misses the target (its ε above the budget); return the bound the loop keeps "
                                 f"feasible (`{ends[1]}` or `{ends[0]}`, whichever is only moved to points meeting "
                                 "the target), or check the target at the returned value")
