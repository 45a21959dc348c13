"""DP124: a branch on the private value that releases a constant (or the value itself) with no noise, beside noisy
branches."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts

from dpcheck.analysis.syntax import call_name, dotted, number, param_names, walk, words
from dpcheck.rule import Rule

#: called names that draw noise
_DRAWS = frozenset({"laplace", "Laplace", "normal", "Normal", "gauss", "gaussian", "randn", "standard_normal",
                    "normalvariate", "rand", "random", "uniform", "choice", "binomial", "bernoulli", "randint",
                    "exponential", "gumbel", "geometric", "sample", "rvs", "randomise", "randomize", "randrange",
                    "shuffle", "permutation", "multinomial", "poisson", "dirichlet", "beta", "integers"})
_BUDGET = frozenset({"eps", "epsilon", "epsilons", "rho", "budget", "privacy"})
_NOISE_WORDS = frozenset({"noise", "noisy", "laplace", "laplacian", "gauss", "gaussian", "perturb", "perturbed",
                          "privatize", "privatise", "randomize", "randomise", "dp", "private", "mechanism",
                          "sanitize", "sanitise", "rr", "random"})
#: parameter words that are knobs, not private values
_KNOBS = frozenset({"eps", "epsilon", "delta", "rho", "budget", "sensitivity", "sens", "bound", "bounds", "lower",
                    "upper", "lo", "hi", "low", "high", "clip", "threshold", "size", "shape", "axis", "dim", "seed",
                    "rng", "mode", "method", "mechanism", "type", "kind", "flag", "verbose", "debug", "self", "cls",
                    "sigma", "scale", "noise", "config", "cfg", "args", "params", "option", "options", "domain",
                    "range", "support", "k", "n", "d", "i", "j", "t", "idx", "index", "step", "epoch", "iteration",
                    "round", "num", "count", "max", "min", "limit", "b", "alpha", "beta", "gamma", "lr", "level",
                    "levels", "bins", "degree", "order", "depth", "width", "height", "length", "std", "stddev",
                    "var", "variance", "multiplier", "temperature", "tau", "rate", "prob", "p", "q"})


#: words of a test that switches privacy on or off (the non-private mode is another rule's concern)
_SWITCH = frozenset({"dp", "private", "privacy", "noise", "noisy", "enable", "enabled", "use", "disable",
                     "disabled", "debug", "test", "baseline", "mode"})


def _names(node: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


def _last(call: cst.Call) -> str:
    return call_name(call).split(".")[-1]


#: tests of a missing value: ``np.isnan(x)``, ``np.isnan(x).any()``, ``pd.isna(x)``, ``math.isnan(x)``
_MISSING_TESTS = frozenset({"isnan", "isna", "isnull"})


def _missing_test(test: cst.BaseExpression, private: set[str]) -> bool:
    """``np.isnan(value)`` (or ``.any()`` of it, or ``value is np.nan``) of a private value: the branch is taken on
    whether the private input holds a missing value."""
    while isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value in ("any", "all") \
            and not test.args:
        test = test.func.value
    if not (isinstance(test, cst.Call) and _last(test) in _MISSING_TESTS and len(test.args) == 1):
        return False
    return bool(_names(test.args[0].value) & private)


def _nan(expr: cst.BaseExpression) -> bool:
    """``np.nan`` / ``math.nan`` / ``float('nan')``."""
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("nan", "NaN", "NAN"):
        return True
    return isinstance(expr, cst.Call) and _last(expr) == "float" and len(expr.args) == 1 and isinstance(
        expr.args[0].value, cst.SimpleString) and expr.args[0].value.evaluated_value.lower() == "nan"


def _branches(stmt: cst.If) -> list[tuple[cst.BaseExpression | None, cst.BaseSuite]]:
    """The (test, body) pairs of an if / elif / else chain; the else body has no test of its own."""
    out: list[tuple[cst.BaseExpression | None, cst.BaseSuite]] = []
    node: cst.If | cst.Else | None = stmt
    while node is not None:
        if isinstance(node, cst.If):
            out.append((node.test, node.body))
            node = node.orelse
        else:
            out.append((None, node.body))
            node = None
    return out


class NoiselessBranchOnPrivateValue(Rule):
    id = "DP124"
    name = "noiseless-branch-on-private-value"
    category = "general"
    severity = "error"
    summary = ("a branch taken on a comparison of the private value releases a constant (or the value itself) "
               "without noise, or a branch passes the private value through to a name the other branch sets "
               "from ε, while the other branches release it with noise")
    rationale = (
        "A mechanism is ε-DP only if every input's output distribution is close to its neighbours'. When one "
        "branch, chosen by comparing the private value (`value == prev == next`, `value < lower`, `x > upper`), "
        "releases a constant or the exact value with no noise while the others add noise, the output on that "
        "branch is deterministic: seeing the constant (which the noisy branches almost never produce) reveals "
        "with certainty which side of the comparison the private value is on, so no finite ε holds (timeDP's "
        "`syn_value = 0` for three equal neighbours; a bounded Laplace that answers 0 outside its support). "
        "Reported: in an if / elif / else chain where at least one branch draws noise or calls a mechanism with "
        "the budget, a branch with no noise whose test compares a private value (a non-knob parameter or a value "
        "read from one) with something other than a string or None, and which returns a constant or the value, "
        "or appends a constant to the list the noisy branch appends to. Also reported: a branch (chosen by a "
        "coin or by the value) that sets a name to the private value itself (`lo = hi = x[j]` when a coefficient "
        "is not selected) where another branch sets the same name from ε (an output interval, a noisy value): "
        "that coordinate leaves exact (bad: `if bit == 0: lo = x[j]` / `else: lo = f(x[j], ε)`; good: both "
        "branches draw the interval from ε). Not reported: tests on noisy values "
        "(post-processing), on random draws (randomized response), on lengths, types, budgets or mode strings; "
        "branches that raise. Fix: clamp the value into the mechanism's domain and perturb it like the others, "
        "or draw the output of that branch from the same noisy mechanism."
    )
    TRIGGERS = ("if ",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noisy branch: a draw, or a call named for noise or a mechanism."""
        return facts.calls_any(_DRAWS) or any(words(n) & _NOISE_WORDS for n in facts.called)

    VALID = (
        # ordinary numerics: a random direction for a gradient check, no ε anywhere in the sibling branch
        """
import numpy as np
def check_gradient(fun, grad, x0, direction="all", rng=None):
    if direction == "random":
        v = np.random.default_rng(rng).standard_normal(x0.shape)
        target = lambda t: fun(x0 + t * v)
    elif direction == "all":
        target = fun
    return target
""",
        # the other branch reshapes the same records (a conditional concat), no randomiser; the loss uses ε later
        """
import torch
def discriminator_input(real, cond, epsilon):
    if cond is not None and len(cond) > 0:
        batch = torch.cat([real, cond], dim=1)
    else:
        batch = real
    scale = 1.0 / epsilon
    return batch, scale
""",
        # twin of the pass-through: every coordinate gets its output interval from ε, on both branches
        """
import numpy as np
def perturb_coefficients(coeffs, epsilon, keep):
    out = np.copy(coeffs)
    e = np.exp(epsilon)
    for j, bit in enumerate(keep):
        if bit == 0 or abs(coeffs[j]) < 0.5:
            lo, hi = -(e + 1) / (e - 1), (coeffs[j] * e - 1) / (e - 1)
        else:
            lo, hi = (coeffs[j] * e + 1) / (e - 1), (e + 1) / (e - 1)
        out[j] = np.random.uniform(lo, hi)
    return out
""",
        # randomized response: a coin keeps the value, the other branch draws another one
        """
import numpy as np
def grr(value, domain_size, epsilon):
    p = np.exp(epsilon) / (np.exp(epsilon) + domain_size - 1)
    coin = np.random.rand()
    if coin < p:
        reported = value
    else:
        reported = np.random.randint(0, domain_size)
    return reported
""",
        # ordinary ML: a warm-up schedule, no privacy budget anywhere
        """
def learning_rate(step, base_lr, warmup, decay):
    if step < warmup:
        lr = base_lr
    else:
        lr = base_lr * decay ** (step - warmup)
    return lr
""",
        # twin of the missing-value shortcut: a missing value is replaced by a public default and noised like any other
        """
import numpy as np
def private_mean_point(value, lower, upper, epsilon):
    if np.isnan(value):
        value = (lower + upper) / 2
    return np.clip(value, lower, upper) + np.random.laplace(0, (upper - lower) / epsilon)
""",
        # ordinary ML: a NaN loss guard in a training step with Adam's eps, no DP release
        """
import math
def step(loss, optimizer, eps=1e-8):
    if math.isnan(loss):
        return float("nan")
    optimizer.step()
    return loss
""",
        # out-of-range values are clamped and perturbed like the rest
        """
import numpy as np
def bounded_laplace(value, lo, hi, epsilon):
    if value < lo:
        value = lo
    elif value > hi:
        value = hi
    return value + np.random.laplace(0, (hi - lo) / epsilon)
""",
        # post-processing: the test reads the noisy value
        """
import numpy as np
def noisy_count(count, epsilon):
    noisy = count + np.random.laplace(0, 1 / epsilon)
    if noisy < 0:
        return 0
    return noisy
""",
        # randomized response: the test is a coin flip
        """
import numpy as np
def respond(bit, epsilon):
    p = np.exp(epsilon) / (1 + np.exp(epsilon))
    if np.random.rand() < p:
        return bit
    else:
        return 1 - bit
""",
        # a module's own function named like a draw (a curve's ``beta``) is not noise
        """
import math
def curve(sigma, order):
    def beta(q):
        return order * math.log(q) / sigma
    def gap(q, epsilon):
        if q == 0 or q > 0.8:
            return 0
        return beta(q * epsilon) - beta(q)
    return [gap(x / 100, 1.0) for x in range(1, 100)]
""",
        # a sampler's degenerate case on its own distribution parameter (no budget: not a mechanism)
        """
import random
def geometric(x):
    if x == 0:
        return 0
    k = 0
    while random.random() < x:
        k += 1
    return k
""",
        # a zero noise level short-circuits the sampler (a knob, not the private value)
        """
import torch
def make_noise(std, reference, epsilon):
    zeros = torch.zeros(reference.shape)
    if std == 0:
        return zeros
    return torch.normal(0, std / epsilon, reference.shape)
""",
        # a mode switch and an empty-input guard
        """
import numpy as np
def release(values, epsilon, mechanism):
    if len(values) == 0:
        return 0.0
    if mechanism == "laplace":
        return np.mean(values) + np.random.laplace(0, 1 / epsilon)
    return np.mean(values) + np.random.normal(0, 1 / epsilon)
""",
    )
    INVALID = (
        # a coefficient not selected (or small) is sent unchanged; the others get an ε-interval
        """
import numpy as np
def perturb_coefficients(coeffs, epsilon, keep):
    out = np.copy(coeffs)
    e = np.exp(epsilon)
    for j, bit in enumerate(keep):
        if bit == 0 or abs(coeffs[j]) < 0.5:
            lo = coeffs[j]  # <-
            hi = coeffs[j]
        else:
            lo, hi = (coeffs[j] * e + 1) / (e - 1), (e + 1) / (e - 1)
        out[j] = np.random.uniform(lo, hi)
    return out
""",
        # a reading under a public floor is forwarded as is, the others get Laplace noise
        """
import numpy as np
def privatize_readings(readings, epsilon, floor):
    sent = []
    for r in readings:
        if r < floor:
            value = r  # <-
        else:
            value = r + np.random.laplace(0, 1.0 / epsilon)
        sent.append(value)
    return sent
""",
        # a NaN in the private array returns an exact NaN without noise (and without charging the budget)
        """
import numpy as np
def private_quantile(values, q, epsilon, lower, upper):
    gaps = np.diff(np.sort(np.clip(values, lower, upper)))
    if np.isnan(gaps).any():
        return np.nan  # <-
    return np.quantile(values, q) + np.random.laplace(0, (upper - lower) / epsilon)
""",
        # a missing client value is sent as NaN, un-perturbed, while present values are randomised
        """
import numpy as np
def privatize_value(value, epsilon, lo, hi):
    if np.isnan(value):
        return float("nan")  # <-
    return np.clip(value, lo, hi) + np.random.laplace(0, (hi - lo) / epsilon)
""",
        # three equal neighbours: a deterministic 0 beside noisy branches appending to the same series
        """
import numpy as np
def synthesize(series, epsilon):
    out = []
    for i in range(1, len(series) - 1):
        prev, cur, nxt = series[i - 1], series[i], series[i + 1]
        if cur > prev and cur > nxt:
            out.append(cur + np.random.laplace(0, 1 / epsilon))
        elif cur == prev == nxt:
            out.append(0)  # <-
        else:
            out.append(perturb(cur, epsilon))
    return out
""",
        # a bounded mechanism answering a constant outside its support
        """
import numpy as np
def truncated_mech(x, support, b, epsilon):
    lower, upper = support
    if x < lower or x > upper:
        return -1  # <-
    return x + np.random.laplace(0, b / epsilon)
""",
        # the exact value released when it is above a public level
        """
import numpy as np
def privatize_reading(reading, epsilon, cap):
    if reading >= cap:
        return reading  # <-
    else:
        return reading + np.random.normal(0, cap / epsilon)
""",
        # the private input echoed when it already sits at the edge of the clamp range
        """
import numpy as np
class Mechanism:
    def __init__(self, epsilon, width):
        self.epsilon = epsilon
        self.width = width
    def release(self, amount):
        if amount <= 0:
            return 0.0  # <-
        shifted = amount + np.random.laplace(0, self.width / self.epsilon)
        return shifted
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        #: the module's own functions: a bare call of one named ``beta`` or ``sample`` is not a library draw
        self._defined = {sub.name.value for sub in walk(node) if isinstance(sub, cst.FunctionDef)}
        self._samplers = {sub.name.value for sub in walk(node) if isinstance(sub, cst.FunctionDef) and any(
            isinstance(c, cst.Call) and _last(c) in _DRAWS for c in walk(sub))}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = {p for p in param_names(node) if p not in _KNOBS and not words(p) & _KNOBS}
        body = list(walk(node, into_scopes=False))
        private, noisy = set(params), set()
        for _ in range(3):
            for sub in body:
                targets: set[str] = set()
                value: cst.CSTNode | None = None
                if isinstance(sub, cst.Assign):
                    value = sub.value
                    targets = {n for t in sub.targets for n in _names(t.target)}
                elif isinstance(sub, cst.For):
                    value, targets = sub.iter, _names(sub.target)
                if value is None:
                    continue
                if self._noisy(value) or _names(value) & noisy:
                    noisy |= targets
                elif _names(value) & private and not any(
                        isinstance(c, cst.Call) and _last(c) in ("len", "range", "enumerate", "zip", "shape")
                        and not isinstance(sub, cst.For) for c in walk(value)):
                    private |= {t for t in targets if t not in _KNOBS and not words(t) & _KNOBS}
        private -= noisy
        # names computed from the budget (``e = np.exp(epsilon)``, ``p = e / (e + k - 1)``)
        self._budgeted = set()
        for _ in range(3):
            for sub in body:
                if isinstance(sub, cst.Assign) and any(
                        words(n) & _BUDGET or n in self._budgeted for n in _names(sub.value)):
                    self._budgeted |= {n for t in sub.targets for n in _names(t.target)}
        if not params or not any(isinstance(n, cst.Name) and words(n.value) & _BUDGET for n in walk(node)):
            return  # no budget in sight: a sampler's own parameter checks, not a mechanism on private data
        seen: set[cst.CSTNode] = set()
        for sub in body:
            if isinstance(sub, cst.If) and sub not in seen:
                chain = _branches(sub)
                node_ = sub
                while isinstance(node_, cst.If):
                    seen.add(node_)
                    node_ = node_.orelse if isinstance(node_.orelse, cst.If) else None
                if sub.orelse is None:
                    # ``if <test>: return C`` then the noisy release below it: the fall-through is the sibling
                    fa = self.ctx.analysis
                    rest = [r for r in fa.returns_of(node) if r.value is not None and not fa.inside(r, sub.body)
                            and fa.line_of(r) > fa.line_of(sub) and (self._noisy(r.value) or _names(r.value) & noisy)]
                    if rest:
                        chain = chain + [(None, rest[0])]  # type: ignore[list-item]
                self._chain(chain, private, noisy)
                self._passthrough(chain, private, noisy)

    def _passthrough(self, chain: list[tuple[cst.BaseExpression | None, cst.BaseSuite]], private: set[str],
                     noisy: set[str]) -> None:
        """``if bit == 0 or abs(x[i]) < 0.5: lo = hi = x[i]`` beside ``else: lo = <interval from ε>``: one branch
        sets a name the other branch perturbs to the private value itself, so whenever it is taken (by a coin or by
        the value) the exact value leaves in the output."""
        if len(chain) < 2 or any(test is None and isinstance(suite, cst.Return) for test, suite in chain):
            return
        tests = [t for t, _ in chain if t is not None]
        if not tests or any(words(n) & (_BUDGET | _SWITCH) for t in tests for n in _names(t)):
            return  # a DP on/off switch: the non-private mode, not a branch of the mechanism
        if not any(_names(t) - _KNOBS for t in tests):
            return
        if any(isinstance(c.operator, (cst.Is, cst.IsNot)) for t in tests for comp in walk(t)
               if isinstance(comp, cst.Comparison) for c in comp.comparisons):
            return  # ``if acc is None: acc = part``: an accumulator's first value

        def assigned(suite: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
            out: dict[str, list[cst.BaseExpression]] = {}
            for a in walk(suite):
                if isinstance(a, cst.Assign):
                    for t in a.targets:
                        for name in _names(t.target) if isinstance(t.target, (cst.Name, cst.Tuple)) else ():
                            out.setdefault(name, []).append(a.value)
            return out

        suites = [suite for _, suite in chain]
        for i, suite in enumerate(suites):
            if self._noisy(suite) or any(isinstance(n, cst.Raise) for n in walk(suite)):
                continue
            mine = assigned(suite)
            for stmt in walk(suite):
                if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1 \
                        or not isinstance(stmt.targets[0].target, cst.Name):
                    continue
                target, value = stmt.targets[0].target.value, stmt.value
                root = value
                while isinstance(root, cst.Subscript):
                    root = root.value  # ``x[i]``: the array read, whatever indexes it
                if not isinstance(root, cst.Name) or root.value not in private or root.value in noisy \
                        or root.value in self._budgeted or any(isinstance(c, cst.Call) for c in walk(value)):
                    continue  # (a value computed with the budget is a mechanism's output)
                perturbed = False
                for j, other in enumerate(suites):
                    if j == i or target not in assigned(other):
                        continue
                    used = {n.value for v in assigned(other)[target] for n in walk(v) if isinstance(n, cst.Name)}
                    if not self._noisy(other) and root.value in used and not any(
                            words(n) & _BUDGET or n in self._budgeted for n in used - {root.value, target}):
                        continue  # the sibling reshapes the same value (``torch.cat([real, c])``): no randomiser
                    if self._noisy(other) and not any(_names(t) & private for t in tests):
                        continue  # randomized response: a coin keeps the value, the other branch draws a value
                    if root.value not in _names(other):
                        continue  # the sibling randomises something else: a parameter choice, not this value
                    if any(words(n) & _BUDGET or n in self._budgeted and n != target for n in _names(other)):
                        perturbed = True  # the sibling's randomiser reads ε (a bare draw is no mechanism)
                if perturbed and len(mine.get(target, [])) == 1:
                    self.report(
                        stmt,
                        f"`{self.ctx.analysis.code(stmt).strip()[:60]}` passes the private value through unchanged in "
                        "this branch, while the other branch sets the same name from the ε-randomiser: whenever this "
                        "branch is taken the exact value is released and no ε bounds it; randomise every "
                        "coordinate (draw its output interval with ε in both branches)",
                    )
                    return

    def _noisy(self, node: cst.CSTNode) -> bool:
        for c in walk(node):
            if not isinstance(c, cst.Call):
                continue
            last = _last(c)
            if last in self._samplers or last in _DRAWS and not (
                    isinstance(c.func, cst.Name) and c.func.value in self._defined):
                return True
            if words(last) & _NOISE_WORDS and any(
                    words(dotted(a.value) or "") & _BUDGET for a in c.args):
                return True
        return False

    def _private_test(self, test: cst.BaseExpression, private: set[str], noisy: set[str]) -> bool:
        if _names(test) & noisy or self._noisy(test):
            return False
        if _missing_test(test, private):
            return True
        if any(isinstance(c, cst.Call) for c in walk(test)):
            return False  # lengths, types, norms: not a comparison of the value itself
        found = False
        for comp in walk(test):
            if not isinstance(comp, cst.Comparison):
                continue
            sides = [comp.left] + [c.comparator for c in comp.comparisons]
            if any(not isinstance(c.operator, (cst.Equal, cst.LessThan, cst.GreaterThan, cst.LessThanEqual,
                                               cst.GreaterThanEqual)) for c in comp.comparisons):
                return False
            if any(isinstance(s, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
                   or isinstance(s, cst.Name) and s.value in ("None", "True", "False") for s in sides):
                return False
            if any(isinstance(s, (cst.Name, cst.Subscript)) and _names(s) & private for s in sides):
                found = True
        return found

    def _release(self, suite: cst.BaseSuite, private: set[str], lists: set[str]) -> cst.CSTNode | None:
        """A statement of a noiseless branch that releases a constant or a private value."""
        consts: set[str] = set()
        for stmt in walk(suite):
            if isinstance(stmt, cst.Assign) and number(stmt.value) is not None:
                consts |= {n for t in stmt.targets for n in _names(t.target)}
            if isinstance(stmt, cst.Return) and stmt.value is not None:
                v = stmt.value
                if number(v) is not None or isinstance(v, cst.Name) and v.value in private or _nan(v):
                    return stmt
            if isinstance(stmt, cst.Call) and _last(stmt) == "append" and isinstance(stmt.func, cst.Attribute) \
                    and dotted(stmt.func.value) in lists and len(stmt.args) == 1:
                v = stmt.args[0].value
                if number(v) is not None or isinstance(v, cst.Name) and v.value in consts:
                    return stmt
        return None

    def _chain(self, chain: list[tuple[cst.BaseExpression | None, cst.BaseSuite]], private: set[str],
               noisy: set[str]) -> None:
        if len(chain) < 2:
            return
        loud = [s for _, s in chain if self._noisy(s) or _names(s) & noisy]
        if not loud:
            return
        lists = {d for s in loud for c in walk(s) if isinstance(c, cst.Call) and _last(c) == "append"
                 and isinstance(c.func, cst.Attribute) and (d := dotted(c.func.value)) is not None}
        for test, suite in chain:
            fixed = {n for a in walk(suite) if isinstance(a, cst.Assign) and number(a.value) is not None
                     for t in a.targets for n in _names(t.target)}
            if test is None or self._noisy(suite) or (_names(suite) - fixed) & noisy or any(isinstance(n, cst.Raise) for n in walk(suite)):
                continue
            if not self._private_test(test, private, noisy):
                continue
            site = self._release(suite, private, lists)
            if site is None:
                continue
            self.report(
                site,
                f"when `{self.ctx.analysis.code(test).strip()[:50]}` holds (a comparison of the private value) this "
                "branch releases a fixed or exact value with no noise, while the other branches add noise: the "
                "output then reveals the comparison with certainty, so no ε bounds it; perturb this branch too",
            )
