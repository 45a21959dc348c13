"""DP529: a local randomiser whose output probabilities (or output interval) are computed from an input it
never clips to the domain those probabilities assume."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import project_mentions
from dpcheck.analysis.syntax import call_name, dotted, target_names, walk, words
from dpcheck.rule import Rule

#: draws of a uniform number in [0, 1) (or [lo, hi))
_UNIFORM = frozenset({"random", "rand", "uniform", "random_sample", "sample_uniform"})
#: random selections weighted by a probability argument
_WEIGHTED = frozenset({"choice", "choices", "binomial", "bernoulli", "multinomial"})
#: calls and attributes that read a value's size or shape, not its value
_SIZE_READS = frozenset({"len", "zeros_like", "ones_like", "empty_like", "full_like", "range", "shape", "size",
                         "argwhere", "nonzero", "where", "flatnonzero", "arange"})
_SIZE_ATTRS = frozenset({"shape", "size", "dtype", "ndim", "device"})
#: calls that bound their argument
_BOUND_CALLS = frozenset({"clip", "clamp", "clip_", "clamp_", "minimum", "maximum", "min", "max", "clip_by_value",
                          "tanh", "sigmoid", "sign"})
_BOUND_WORDS = frozenset({"clip", "clamp", "bound", "truncate", "project", "squash", "winsorize"})
#: parameters that are not the input value (budget, generator, sizes, the domain itself)
_NOT_INPUT = frozenset({"self", "cls", "eps", "epsilon", "epsilons", "budget", "rng", "seed", "random", "state",
                        "size", "n", "num", "count", "k", "d", "dim", "dims", "range", "domain", "bound", "bounds",
                        "lo", "low", "hi", "high", "lower", "upper", "min", "max", "delta", "p", "q", "prob",
                        "probs", "sensitivity", "scale", "shape", "axis", "dtype", "device", "generator", "verbose",
                        "m", "c", "b", "a", "t", "alpha", "beta", "gamma", "lr", "mode", "kind", "method", "name",
                        "ais", "p0", "idx", "index", "i", "j", "key", "keys", "labels", "label", "weights", "l", "h",
                        "bins", "bin", "steps", "iterations", "rounds", "batch", "interval", "width", "depth"})
_BUDGET = frozenset({"eps", "epsilon", "budget"})
_PROJECT_CLIPS = frozenset({"clip", "clamp", "clip_", "clamp_", "clip_by_value", "clipped", "clamped"})
#: parameters of a randomiser that are never its input value
_BUDGET_OR_RNG = frozenset({"self", "cls", "eps", "epsilon", "epsilons", "budget", "rng", "seed", "random",
                            "generator", "state", "prng", "key"})


def _reads(expr: cst.CSTNode) -> set[str]:
    """Names whose *values* ``expr`` reads: ``len(x)``, ``x.shape``, ``zeros_like(x)`` read only a size."""
    out: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            if call_name(node).split(".")[-1] in _SIZE_READS:
                continue
            if isinstance(node.func, cst.Attribute):
                stack.append(node.func.value)
            stack.extend(a.value for a in node.args)
            continue
        if isinstance(node, cst.Attribute):
            if node.attr.value in _SIZE_ATTRS:
                continue
            name = dotted(node)
            if name is not None:
                out.add(name)
                continue
            stack.append(node.value)
            continue
        if isinstance(node, cst.Name):
            out.add(node.value)
            continue
        if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            continue
        stack.extend(node.children)
    return out


#: calls that keep a value affine in their argument (shape changes, conversions, cumulative sums)
_AFFINE_CALLS = frozenset({"abs", "fabs", "reshape", "ravel", "flatten", "astype", "float", "asarray", "array",
                           "squeeze", "cumsum", "copy", "tensor", "to_numpy", "multiply", "add", "subtract", "divide",
                           "true_divide"})


def _affine_reads(expr: cst.CSTNode, local: frozenset[str]) -> set[str]:
    """Names ``expr`` reads through affine steps only (+, −, ×, ÷, abs, reshapes, the module's own helpers in
    ``local``): ``exp(ε·score)`` (the exponential mechanism), ``log``, powers and sums read no input this way."""
    out: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            last = call_name(node).split(".")[-1]
            if last not in _AFFINE_CALLS and last not in local:
                continue
            if isinstance(node.func, cst.Attribute):
                stack.append(node.func.value)
            stack.extend(a.value for a in node.args)
            continue
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
                stack.extend((node.left, node.right))
            elif isinstance(node.operator, cst.Divide):
                stack.append(node.left)  # ``x / range`` is affine in x; ``e / (e + k − 1)`` is not in k
            continue
        if isinstance(node, cst.UnaryOperation):
            stack.append(node.expression)
            continue
        if isinstance(node, cst.Subscript):
            stack.append(node.value)
            continue
        if isinstance(node, (cst.Name, cst.Attribute)):
            out |= _reads(node)
            continue
        if isinstance(node, (cst.List, cst.Tuple)):
            stack.extend(e.value for e in node.elements)
    return out


def _bound_call(call: cst.Call) -> bool:
    last = call_name(call).split(".")[-1]
    if last in ("min", "max"):
        return isinstance(call.func, cst.Name) and len(call.args) >= 2  # builtin min(max(x, lo), hi)
    return last in _BOUND_CALLS or bool(words(last) & _BOUND_WORDS)


class LdpInputUnclipped(Rule):
    id = "DP529"
    name = "ldp-input-unclipped"
    category = "general"
    severity = "error"
    summary = ("a local randomiser (Duchi, piecewise, square wave, three-output …) computes its output probabilities "
               "or output interval from an input it never clips to the domain they assume")
    rationale = (
        "Numeric local randomisers (Duchi et al., the piecewise and hybrid mechanisms, square wave, three- and "
        "N-output mechanisms) are ε-LDP only for inputs in the domain their probabilities were derived for "
        "(x ∈ [-1, 1] after `x / range`, or [a, b] encoded to [-1, 1]). A value outside it gives a Bernoulli "
        "probability `x·(e^ε−1)/(2e^ε+2) + 1/2` outside [0, 1] (a deterministic report), or moves the "
        "high-probability interval `[l(x), r(x)]` outside the output support: the ε-LDP ratio no longer holds for "
        "that user. Reported: in a module that computes a probability from `exp(ε)`, a function whose input "
        "parameter (after scaling or encoding) becomes a probability compared with a uniform draw "
        "(`rng.random(n) < x*p + 0.5`), the `p=`/`weights=` of a random choice, or a bound of a uniform draw "
        "(`uniform(l, r)` with `l` computed from the input), while nothing in the function (nor a helper it passes "
        "the input to, nor a caller in the module) clips, clamps or asserts the input's range. Not reported: "
        "inputs clipped (`np.clip(x, -1, 1)`, `min(max(x, lo), hi)`), asserted or rejected (`if abs(x) > 1: "
        "raise`), randomisers of categories (probabilities that do not read the input's value), uniform noise "
        "for augmentation in a module with no ε. Fix: clip the input to the domain (`x = np.clip(x, lo, hi)`) "
        "before encoding it."
    )
    TRIGGERS = ("exp",)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return facts.calls_any(_UNIFORM | _WEIGHTED)

    VALID = (
        # randomised response over one-hot targets in a nested helper; the caller rejects non-0/1 input first
        """
import numpy as np
class LabelRR:
    def __init__(self, eps):
        self.eps = eps
    def __call__(self, targets):
        def onehot_rr(targets):
            k = targets.shape[-1]
            keep = np.exp(self.eps) / (np.exp(self.eps) + k - 1)
            other = (1 - keep) / (k - 1)
            probs = targets * (keep - other) + other
            return np.eye(k)[[np.random.choice(k, p=probs[i]) for i in range(targets.shape[0])]]
        if not np.all((targets == 0) | (targets == 1)):
            raise ValueError("labels must be one-hot")
        return onehot_rr(targets)
""",
        # Duchi's randomiser with the input clipped to [-1, 1] first
        """
import numpy as np
class DuchiMech:
    def __init__(self, eps, rng, scale=1.0):
        e = np.exp(eps)
        self.q = (e - 1) / (2 * e + 2)
        self.out = (e + 1) / (e - 1)
        self.rng, self.scale = rng, scale
    def perturb(self, values):
        v = np.clip(values.ravel() / self.scale, -1.0, 1.0)
        prob = v * self.q + 0.5
        coin = self.rng.random(len(v))
        return np.where(coin < prob, self.out, -self.out) * self.scale
""",
        # the piecewise mechanism that clamps the encoded value with min/max
        """
import math, random
class Piecewise:
    def __init__(self, epsilon, lo, hi):
        self.epsilon, self.lo, self.hi = epsilon, lo, hi
        self.C = (math.exp(epsilon / 2) + 1) / (math.exp(epsilon / 2) - 1)
    def randomize(self, value):
        value = min(max(value, self.lo), self.hi)
        t = 2 * (value - self.lo) / (self.hi - self.lo) - 1
        left = (self.C + 1) / 2 * t - (self.C - 1) / 2
        right = left + self.C - 1
        if random.random() < math.exp(self.epsilon / 2) / (math.exp(self.epsilon / 2) + 1):
            return random.uniform(left, right)
        return random.choice([random.uniform(-self.C, left), random.uniform(right, self.C)])
""",
        # an out-of-range input is rejected before the coin is thrown
        """
import math, random
def duchi_report(x, epsilon):
    if abs(x) > 1:
        raise ValueError("x must lie in [-1, 1]")
    e = math.exp(epsilon)
    p = x * (e - 1) / (2 * e + 2) + 0.5
    return (e + 1) / (e - 1) if random.random() < p else -(e + 1) / (e - 1)
""",
        # the caller clips before calling the randomiser in the same module
        """
import numpy as np
def square_wave(v, eps, rng):
    b = (eps * np.exp(eps) - np.exp(eps) + 1) / (2 * np.exp(eps) * (np.exp(eps) - 1 - eps))
    left, right = v - b, v + b
    return rng.uniform(left, right)
def collect(values, eps, rng):
    return [square_wave(np.clip(v, 0.0, 1.0), eps, rng) for v in values]
""",
        # generalised randomised response over categories: the probability does not read the input's value
        """
import numpy as np
def grr(item, k, epsilon, rng):
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    if rng.random() < p:
        return item
    return rng.choice([c for c in range(k) if c != item])
""",
        # ordinary ML: mixup with a uniform coefficient and no privacy budget, an exponential LR decay
        """
import numpy as np
def mixup(x, y, rng, decay_steps, step):
    lam = rng.uniform(0.2, 0.8)
    lr = 0.1 * np.exp(-step / decay_steps)
    keep = rng.random(len(x)) < 0.5
    return lam * x + (1 - lam) * y, keep, lr
""",
        # dropout-like keep mask: a probability that does not depend on the input's value
        """
import numpy as np
def dp_subsample(data, epsilon, rng):
    q = 1 - np.exp(-epsilon)
    keep = rng.random(len(data)) < q
    return data[keep]
""",
        # the twin of the piecewise mechanism below: its input is clipped to [-1, 1] first
        """
import math
import random
def piecewise(t, epsilon):
    t = max(-1.0, min(1.0, t))
    z = math.exp(epsilon / 2)
    C = (z + 1) / (z - 1)
    left = (C + 1) / 2 * t - (C - 1) / 2
    right = left + C - 1
    if random.random() < z / (z + 1):
        return random.uniform(left, right)
    return random.choice([random.uniform(-C, left), random.uniform(right, C)])
""",
        # a diffusion time sampler: (t, eps) where eps is a numerical floor, no randomiser
        """
import numpy as np
def sample_time(t, eps=1e-5):
    u = np.random.uniform(eps, 1.0, size=t.shape)
    return np.exp(-u * t)
""",
    )

    INVALID = (
        # the piecewise mechanism's output interval from an input t it never clips to [-1, 1]
        """
import math
import random
def piecewise(t, epsilon):
    z = math.exp(epsilon / 2)
    C = (z + 1) / (z - 1)
    left = (C + 1) / 2 * t - (C - 1) / 2  # <-
    right = left + C - 1
    if random.random() < z / (z + 1):
        return random.uniform(left, right)
    return random.choice([random.uniform(-C, left), random.uniform(right, C)])
""",
        # Duchi's mechanism: the probability of +1 is affine in an unclipped t
        """
import numpy as np
def duchi(t, epsilon, rng):
    p = (np.exp(epsilon) - 1) / (2 * np.exp(epsilon) + 2) * t + 0.5  # <-
    u = rng.choice([1, -1], p=[p, 1 - p])
    return u * (np.exp(epsilon) + 1) / (np.exp(epsilon) - 1)
""",
        # the same nested randomiser with no check of the targets in its caller
        """
import numpy as np
class LabelRR:
    def __init__(self, eps):
        self.eps = eps
    def __call__(self, targets):
        def onehot_rr(targets):
            k = targets.shape[-1]
            keep = np.exp(self.eps) / (np.exp(self.eps) + k - 1)
            other = (1 - keep) / (k - 1)
            probs = targets * (keep - other) + other  # <-
            return np.eye(k)[[np.random.choice(k, p=probs[i]) for i in range(targets.shape[0])]]
        return onehot_rr(targets)
""",
        # Duchi's randomiser on an input only divided by its range, never clipped
        """
import numpy as np
class DuchiMech:
    def __init__(self, eps, rng, scale=1.0):
        e = np.exp(eps)
        self.q = (e - 1) / (2 * e + 2)
        self.out = (e + 1) / (e - 1)
        self.rng, self.scale = rng, scale
    def perturb(self, values):
        v = values.ravel() / self.scale  # <-
        prob = v * self.q + 0.5
        coin = self.rng.random(len(v))
        return np.where(coin < prob, self.out, -self.out) * self.scale
""",
        # the piecewise mechanism with the value encoded from [lo, hi] but never clamped
        """
import math, random
class Piecewise:
    def __init__(self, epsilon, lo, hi):
        self.epsilon, self.lo, self.hi = epsilon, lo, hi
        self.C = (math.exp(epsilon / 2) + 1) / (math.exp(epsilon / 2) - 1)
    def to_unit(self, value):
        return 2 * (value - self.lo) / (self.hi - self.lo) - 1
    def randomize(self, value):
        left = (self.C + 1) / 2 * self.to_unit(value) - (self.C - 1) / 2  # <-
        right = left + self.C - 1
        if random.random() < math.exp(self.epsilon / 2) / (math.exp(self.epsilon / 2) + 1):
            return random.uniform(left, right)
        return random.choice([random.uniform(-self.C, left), random.uniform(right, self.C)])
""",
        # a Bernoulli probability from an unclipped scalar input
        """
import math, random
def duchi_report(x, epsilon):
    e = math.exp(epsilon)
    p = x * (e - 1) / (2 * e + 2) + 0.5  # <-
    return (e + 1) / (e - 1) if random.random() < p else -(e + 1) / (e - 1)
""",
        # square wave: the interval [v - b, v + b] moves with an input no one keeps in [0, 1]
        """
import numpy as np
def square_wave_batch(vals, eps, rng):
    b = (eps * np.exp(eps) - np.exp(eps) + 1) / (2 * np.exp(eps) * (np.exp(eps) - 1 - eps))
    left = vals - b  # <-
    right = vals + b
    u = rng.random(len(vals))
    return u * (right - left) + left
""",
        # a three-output randomiser whose probabilities are read from |x| and handed to choice(p=...)
        """
import numpy as np
def three_output(x, eps, rng):
    e = np.exp(eps)
    p_zero = 1 / (e + 1) - abs(x) / (e + 1)  # <-
    p_pos = (1 - p_zero) / 2 + x / 4
    return rng.choice([-1, 0, 1], p=[1 - p_zero - p_pos, p_zero, p_pos])
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._ldp = False
        self._clipping_helpers: set[str] = set()
        self._clipped_calls: set[str] = set()
        self._local = frozenset(sub.name.value for sub in walk(node) if isinstance(sub, cst.FunctionDef))
        for sub in walk(node):
            if isinstance(sub, cst.Call):
                last = call_name(sub).split(".")[-1]
                if last == "exp" and any(
                        words((dotted(n) or "").split(".")[-1]) & _BUDGET
                        for a in sub.args for n in walk(a.value) if isinstance(n, (cst.Name, cst.Attribute))):
                    self._ldp = True
                # ``f(np.clip(x, ...))``: a function called with a clipped argument somewhere in the module
                if any(isinstance(a.value, cst.Call) and _bound_call(a.value) for a in sub.args):
                    self._clipped_calls.add(last)
            elif isinstance(sub, cst.FunctionDef):
                params = {p.name.value for p in sub.params.params}
                for inner in walk(sub, into_scopes=False):
                    if isinstance(inner, cst.Call) and _bound_call(inner) and any(
                            _reads(a.value) & params for a in inner.args):
                        self._clipping_helpers.add(sub.name.value)
                        break
        self._clipped_calls |= self._clipped_by_name(node)
        self._budgeted = self._budget_derived(node)

    @staticmethod
    def _budget_derived(module: cst.Module) -> set[str]:
        """Last names of values computed from ``exp(ε)`` (``self.p = (e - 1) / (2 * e + 2)`` with
        ``e = np.exp(eps)``, ``C = …exp(epsilon / 2)…``): the constants a randomiser's probabilities use."""
        assigns = []
        for sub in walk(module):
            if isinstance(sub, cst.Assign):
                names = {n.split(".")[-1] for t in sub.targets for n in target_names(t.target)}
                exp = any(isinstance(n, cst.Call) and call_name(n).split(".")[-1] == "exp" and any(
                    words(r.split(".")[-1]) & _BUDGET for r in _reads(n)) or isinstance(n, cst.BinaryOperation)
                    and isinstance(n.operator, cst.Power) and any(words(r.split(".")[-1]) & _BUDGET
                                                                  for r in _reads(n.right))
                    for n in walk(sub.value))
                assigns.append((names, {r.split(".")[-1] for r in _reads(sub.value)}, exp))
        derived: set[str] = set()
        for _ in range(4):
            grew = False
            for names, read, exp in assigns:
                if names - derived and (read & derived or exp):
                    derived |= names
                    grew = True
            if not grew:
                break
        return derived

    def _clipped_by_name(self, module: cst.Module) -> set[str]:
        """``v = np.clip(v, 0, 1)`` then ``f(v)`` in one function: ``f`` receives a clipped value."""
        out: set[str] = set()
        for fn in walk(module):
            if not isinstance(fn, cst.FunctionDef):
                continue
            clipped: set[str] = set()
            for sub in walk(fn, into_scopes=False):
                if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) and _bound_call(sub.value):
                    for t in sub.targets:
                        clipped |= target_names(t.target)
            if not clipped:
                continue
            for sub in walk(fn, into_scopes=False):
                if isinstance(sub, cst.Call) and any(isinstance(a.value, cst.Name) and a.value.value in clipped
                                                     for a in sub.args):
                    out.add(call_name(sub).split(".")[-1])
        return out

    @staticmethod
    def _exp_of_budget(expr: cst.CSTNode) -> bool:
        """``exp(ε)`` / ``e ** ε`` written inline."""
        return any(isinstance(n, cst.Call) and call_name(n).split(".")[-1] == "exp" and any(
            words(r.split(".")[-1]) & _BUDGET for r in _reads(n)) or isinstance(n, cst.BinaryOperation)
            and isinstance(n.operator, cst.Power) and any(words(r.split(".")[-1]) & _BUDGET for r in _reads(n.right))
            for n in walk(expr))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not self._ldp or node.name.value in self._clipped_calls:
            return
        params = [p.name.value for p in node.params.params if not (words(p.name.value) | {p.name.value}) & _NOT_INPUT]
        if not params:
            # ``piecewise(t, epsilon)``: the one parameter beside the budget and the generator is the input,
            # whatever its name (g3 2026-11-27: epfl-dlab/DIPPS's piecewise and Duchi mechanisms take ``t``)
            rest = [p.name.value for p in node.params.params
                    if not (words(p.name.value) | {p.name.value}) & _BUDGET_OR_RNG]
            if len(rest) != 1 or len(node.params.params) < 2:
                return
            # only when nothing in the project clips a value: callers elsewhere may clip it (PaaEl/LDP-classifiers
            # clips the gradients it hands to its piecewise randomiser in another module)
            if project_mentions(self.ctx, _PROJECT_CLIPS):
                return
            params = rest
        body = list(walk(node, into_scopes=False))
        # the input is bounded in the function: a clip of it, an assert on it, a range check that raises
        origin: dict[str, cst.CSTNode | None] = {p: None for p in params}
        src: dict[str, set[str]] = {p: {p} for p in params}
        uniform: set[str] = set()
        #: tainted names whose value also reads a budget-derived constant
        budgeted: set[str] = set()
        assigns = [s for s in body if isinstance(s, (cst.Assign, cst.AugAssign))]
        for _ in range(1):
            for s in assigns:
                value = s.value
                targets = target_names(s.target) if isinstance(s, cst.AugAssign) else set().union(
                    *(target_names(t.target) for t in s.targets))
                if isinstance(value, cst.Call) and call_name(value).split(".")[-1] in _UNIFORM \
                        and not _reads(value) & set(origin):
                    uniform |= targets
                    continue
                read = _affine_reads(value, self._local) & set(origin)
                if not read:
                    if isinstance(s, cst.AugAssign):
                        continue  # ``p /= p.sum()`` keeps what p was
                    for t in targets - set(params):
                        origin.pop(t, None)  # ``scores = np.exp(scores)``: no longer affine in the input
                    continue
                root = next((origin[r] for r in sorted(read) if origin[r] is not None), None)
                if {r.split(".")[-1] for r in _reads(value) - set(origin)} & self._budgeted or read & budgeted \
                        or self._exp_of_budget(value):
                    budgeted |= targets
                for t in targets:
                    src.setdefault(t, set()).update(*(src.get(r, set()) for r in read))
                    if t not in origin or origin[t] is None and t in params:
                        origin[t] = root if root is not None else s
        tainted = set(origin)
        # a helper nested in a function that rejects out-of-domain inputs (``if not ((x == 0) | (x == 1)).all():
        # raise``) before calling it: the helper's same-named input has been checked by its caller
        outer = self.ctx.analysis.enclosing_function(node)
        checks = [s for s in body]
        if outer is not None:
            checks += [s for s in walk(outer, into_scopes=False)
                       if isinstance(s, (cst.If, cst.Assert)) and not _reads(s.test).isdisjoint(params)]
        for s in checks:
            if isinstance(s, cst.Call) and _bound_call(s) and any(_reads(a.value) & tainted for a in s.args):
                return
            if isinstance(s, cst.Call) and call_name(s).split(".")[-1] in self._clipping_helpers \
                    and any(_reads(a.value) & tainted for a in s.args):
                return
            if isinstance(s, cst.Assert) and _reads(s.test) & tainted:
                return
            if isinstance(s, cst.If) and _reads(s.test) & tainted and any(
                    isinstance(n, cst.Raise) or isinstance(n, cst.Assign) and _reads(s.test) & set().union(
                        *(target_names(t.target) for t in n.targets))
                    for n in walk(s.body, into_scopes=False)):
                return  # rejected (``raise``) or clamped (``if x > c: x = c``)
        sink = self._sink(body, tainted, uniform)
        if sink is None:
            return
        site, operand = sink
        names = sorted(_affine_reads(operand, self._local) & tainted)
        if not (budgeted & set(names) or {r.split(".")[-1] for r in _reads(operand) - tainted} & self._budgeted
                or self._exp_of_budget(operand)):
            return  # a probability the budget does not shape (randomised rounding to a bin): not the randomiser
        root = next((origin[n] for n in names if origin[n] is not None), None)
        fa = self.ctx.analysis
        where = root if root is not None else site
        self.report(
            where,
            f"`{node.name.value}` turns its input `{', '.join(sorted(set().union(*(src.get(n, set()) for n in names))))}` into "
            f"the randomiser's output probabilities/interval (line {fa.line_of(site)}) without clipping it to the "
            "domain they were derived for: an out-of-range value gives a probability outside [0, 1] or an interval "
            "outside the output support, and the ε-LDP ratio fails for that user; clip the input to the domain first",
        )

    def _sink(self, body: list[cst.CSTNode], tainted: set[str],
              uniform: set[str]) -> tuple[cst.CSTNode, cst.BaseExpression] | None:
        def is_uniform(expr: cst.BaseExpression) -> bool:
            if isinstance(expr, cst.Name):
                return expr.value in uniform
            if isinstance(expr, cst.Subscript):
                return is_uniform(expr.value)
            return isinstance(expr, cst.Call) and call_name(expr).split(".")[-1] in _UNIFORM \
                and not _reads(expr) & tainted

        for s in body:
            if isinstance(s, cst.Comparison) and len(s.comparisons) == 1 and isinstance(
                    s.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan,
                                                cst.GreaterThanEqual)):
                left, right = s.left, s.comparisons[0].comparator
                for draw, other in ((left, right), (right, left)):
                    if is_uniform(draw) and _affine_reads(other, self._local) & tainted:
                        return s, other
            elif isinstance(s, cst.Call):
                last = call_name(s).split(".")[-1]
                if last in _WEIGHTED:
                    for a in s.args:
                        kw = a.keyword.value if a.keyword is not None else None
                        if kw in ("p", "weights", "pvals", "probs") and _affine_reads(a.value, self._local) & tainted:
                            return s, a.value
                    positional = [a.value for a in s.args if a.keyword is None]
                    if last == "binomial" and len(positional) > 1 and _affine_reads(positional[1], self._local) & tainted:
                        return s, positional[1]
                    if last == "bernoulli" and positional and _affine_reads(positional[0], self._local) & tainted:
                        return s, positional[0]
                elif last == "uniform":
                    for a in s.args:
                        if (a.keyword is None or a.keyword.value in ("low", "high", "a", "b")) \
                                and _affine_reads(a.value, self._local) & tainted:
                            return s, a.value
            elif isinstance(s, cst.BinaryOperation) and isinstance(s.operator, cst.Multiply):
                for draw, other in ((s.left, s.right), (s.right, s.left)):
                    # ``u * (r - l) + l``: a uniform draw stretched over an interval computed from the input
                    if is_uniform(draw) and isinstance(other, cst.BinaryOperation) \
                            and isinstance(other.operator, cst.Subtract) and _affine_reads(other, self._local) & tainted:
                        return s, other
        return None
