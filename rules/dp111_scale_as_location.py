"""DP111: a noise scale passed as numpy's first positional argument, which is the location."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import last_name as ast_last_name
from dpcheck.analysis.syntax import all_params, call_name, call_params, dotted, number, param_names, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import ident

_DRAWS = frozenset({"laplace", "normal", "gumbel", "logistic", "Laplace", "Normal"})
_SCALE_WORDS = frozenset({
    "scale", "b", "beta", "lambda", "lamda", "lam", "sigma", "std", "stddev", "noise", "sensitivity", "sens",
})
_BUDGET_WORDS = frozenset({"epsilon", "eps", "privacy", "budget", "rho"})
_LOCATION_WORDS = frozenset({"mean", "mu", "loc", "location", "center", "centre", "x", "value", "values", "counts"})


def _budget_named(name: str) -> bool:
    """``epsilon``, ``eps_i``, ``e``, or one all-lowercase compound that contains a budget word (``privacybudget``)."""
    if words(name) & _BUDGET_WORDS or name in ("e", "ε"):
        return True
    return any(word in name.lower() for word in ("epsilon", "budget"))


def _scale_like(expr: cst.BaseExpression) -> bool:
    """A value named or built like a noise scale: ``lambda_``, ``b``, ``sens / eps``, ``1 / epsilon``."""
    name = ident(expr)
    if name is not None:
        pieces = words(name)
        return bool(pieces & _SCALE_WORDS) and not pieces & _LOCATION_WORDS
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide):
        return any(isinstance(n, (cst.Name, cst.Attribute)) and _budget_named(ident(n) or "") for n in walk(expr.right))
    return False


def _ast_numeric_slot(facts: AstFacts) -> bool:
    """A module function with a tiny numeric default, called with a division among its positional arguments."""
    tiny = {f.name for f in facts.functions if any(
        isinstance(d, ast.Constant) and isinstance(d.value, float) and 0 < d.value < 1e-3
        for d in (*f.args.defaults, *f.args.kw_defaults) if d is not None)}
    if not tiny:
        return False
    return any(facts.call_lasts(c) & tiny and any(isinstance(a, ast.BinOp) and isinstance(a.op, ast.Div)
                                                  for a in c.args) for c in facts.calls)


class ScaleAsLocation(Rule):
    id = "DP111"
    name = "scale-as-location"
    category = "general"
    severity = "error"
    summary = ("a noise scale in the wrong parameter: numpy's location (the only positional argument), or a "
               "sampler's numerical-stability eps")
    rationale = (
        "numpy's `laplace(loc=0.0, scale=1.0, size=None)` and `normal(loc, scale, size)` take the "
        "location first. `np.random.laplace(lambda_)` or `rng.normal(sens / eps)` therefore draws "
        "noise of scale 1 centred on the intended scale: the noise does not grow as ε shrinks, so "
        "for ε < 1 (or a sensitivity above 1) it is far too small, and the release is shifted by "
        "a known constant. Not reported: a draw with a `scale=` keyword or two positional "
        "arguments, a first argument named for a location (`mean`, `mu`, `counts`), torch and "
        "Python `random` (whose signatures differ), code with no DP context. Also reported, in any "
        "library: `Laplace(sens / eps, 1)`, a scale built over the budget given as the location with "
        "a literal unit scale, and a scale passed positionally into a module function's parameter "
        "with a tiny numeric default (`sample_gumbel(shape, C / eps)` for `def sample_gumbel(shape, "
        "eps=1e-20)`): the draw keeps its unit scale. "
        "Fix: `np.random.laplace(0.0, lambda_)` or `np.random.laplace(scale=lambda_)`."
    )
    TRIGGERS = ("laplace", "normal", "gumbel", "logistic", "Laplace", "Normal", "e-")
    #: checked per report: a DP context, or a draw whose argument divides by a budget-named value (that is one)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a draw with one positional argument (no ``scale``/``loc`` keyword) that
        is named like a scale or divides by a budget-named value."""
        if _ast_numeric_slot(facts):
            return True
        if not facts.calls_any(_DRAWS):
            return False
        for call in facts.calls:
            if not facts.call_lasts(call) & _DRAWS:
                continue
            if len(call.args) == 2 and not call.keywords and isinstance(call.args[0], ast.BinOp):
                return True
            if len(call.args) != 1:
                continue
            if {k.arg for k in call.keywords} & {"scale", "loc", None}:
                continue
            arg = call.args[0]
            if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Div):
                return True
            name = ast_last_name(arg)
            if name is not None and words(name) & _SCALE_WORDS:
                return True
        return False

    VALID = (
        "import numpy as np\ndef noisy(x, epsilon, sensitivity=1.0):\n"
        "    return x + np.random.laplace(0.0, sensitivity / epsilon)\n",
        "import numpy as np\ndef noisy(x, lambda_):\n    return x + np.random.laplace(scale=lambda_)\n",
        # the first argument is the values: noise centred on them
        "import numpy as np\ndef release(counts, epsilon):\n    return np.random.laplace(counts, 1.0 / epsilon)\n",
        # torch.normal(mean, std) needs both
        "import torch\ndef dp_noise(grad, noise_multiplier):\n"
        "    return grad + torch.normal(torch.zeros_like(grad), noise_multiplier)\n",
        "import numpy as np\ndef sample_latent(mean, epsilon):\n    return np.random.normal(mean) * epsilon\n",
        "import numpy as np\nclass Mechanism:\n    def noise(self, e):\n"
        "        return np.random.laplace(0.0, self.sensitivity / e)\n",
        "import torch\ndef privatize(x, epsilon, sensitivity):\n"
        "    return x + torch.distributions.Laplace(0.0, sensitivity / epsilon).sample(x.shape)\n",
        # the twins: the scale multiplies the unit draw
        "import torch\ndef sample_gumbel(shape, eps=1e-20):\n    u = torch.rand(shape)\n"
        "    return -torch.log(-torch.log(u + eps) + eps)\n"
        "def noisy_topk(diff, clip, epsilon):\n    return diff + sample_gumbel(diff.shape) * (1.5 * clip / epsilon)\n",
        # the twins: the compound budget names passed as the scale
        "import numpy as np\ndef dp_centres(points, labels, k, globalsens, privacybudget):\n"
        "    return [points[labels == c].sum(0) + np.random.laplace(0, globalsens / privacybudget, points.shape[1])\n"
        "            for c in range(k)]\n",
        "import numpy as np\ndef noisy_size(members, totalbudget):\n"
        "    return len(members) + np.random.laplace(scale=1 / totalbudget)\n",
        "import numpy as np\ndef noisy_sum(values, epsilonval):\n"
        "    return values.sum() + np.random.laplace(0.0, 2.0 / epsilonval)\n",
        # the project's own method whose first parameter is the scale
        "import numpy as np\nclass Tree:\n    def laplace(self, scale):\n        return np.random.laplace(0.0, scale)\n"
        "    def noisy_size(self, rows, epsilon2):\n        return len(rows) + self.laplace(1.0 / epsilon2)\n",
        # a location divided by a count whose name contains no budget word
        "import numpy as np\ndef jitter_mean(total, steps):\n    return np.random.normal(total / steps)\n",
        # a project's own laplace(scale, size): the second argument is a size
        "from .distribution import laplace\ndef perturb(v, epsilon):\n"
        "    return v + laplace.laplace(2 / epsilon, 1)\n",
    )

    INVALID = (
        # Copula-Shirley: one positional argument, read by numpy as the location
        """
import numpy as np
def privatise(counts, epsilon, sensitivity=2.0):
    lambda_ = sensitivity / epsilon
    return counts + np.random.laplace(lambda_)  # <-
""",
        """
import numpy as np
rng = np.random.default_rng(0)
def dp_sum(values, epsilon):
    return values.sum() + rng.laplace(1.0 / epsilon)  # <-
""",
        """
import numpy as np
def gaussian_mechanism(x, sigma):
    return x + np.random.normal(sigma, size=x.shape)  # <-
""",
        """
import numpy as np
def noisy_count(data, epsilon, sens=1):
    return len(data) + np.random.laplace(sens / epsilon)  # <-
""",
        # the budget spelled e, the scale through an attribute
        """
import numpy as np
class Mechanism:
    def noise(self, e):
        return np.random.laplace(self.sensitivity / e)  # <-
""",
        # a Gumbel scale passed positionally into the numerical eps of a Gumbel sampler
        """
import torch
def sample_gumbel(shape, eps=1e-20):
    u = torch.rand(shape)
    return -torch.log(-torch.log(u + eps) + eps)
def noisy_topk(diff, clip, epsilon):
    return diff + sample_gumbel(diff.shape, 1.5 * clip / epsilon)  # <-
""",
        """
import numpy as np
class Sampler:
    def logistic_noise(self, n, tol=1e-12):
        u = np.random.uniform(tol, 1 - tol, n)
        return np.log(u / (1 - u))
    def release(self, x, sensitivity, epsilon):
        return x + self.logistic_noise(len(x), sensitivity / epsilon)  # <-
""",
        # the budget in one lowercase compound name, the draw's result appended per coordinate
        """
import numpy as np
def dp_centres(points, labels, k, globalsens, privacybudget):
    centres = []
    for c in range(k):
        noise = [np.random.laplace(globalsens / privacybudget) for _ in range(points.shape[1])]  # <-
        centres.append(points[labels == c].sum(0) + noise)
    return centres
""",
        # the same with a literal sensitivity and a compound budget name ending in the word
        """
import numpy as np
def noisy_size(members, totalbudget):
    return len(members) + np.random.laplace(1 / totalbudget)  # <-
""",
        # a compound name beginning with the word
        """
import numpy as np
def noisy_sum(values, epsilonval):
    return values.sum() + np.random.laplace(2.0 / epsilonval)  # <-
""",
        # the project's own method keeps numpy's order (location first): the scale lands in the location
        """
import numpy as np
class Tree:
    def laplace(self, loc, scale=1.0):
        return np.random.laplace(loc, scale)
    def noisy_size(self, rows, epsilon2):
        return len(rows) + self.laplace(1.0 / epsilon2)  # <-
""",
        # torch: the scale given as the location, the scale a literal 1
        """
import torch
def privatize(x, epsilon, sensitivity):
    dist = torch.distributions.Laplace(sensitivity / epsilon, 1.0)  # <-
    return x + dist.sample(x.shape)
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name not in _DRAWS:
            self._numeric_slot(node, name)
            return
        func = dotted(node.func) or ""
        if func.split(".")[0] in ("torch", "tf", "jax", "jnp", "random", "dist", "distributions") \
                and name not in ("Laplace", "Normal"):
            return
        if any(a.star for a in node.args) or self._own_scale_first(node, name):
            return
        positional = [a.value for a in node.args if a.keyword is None]
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
        known = func.split(".")[0] in ("np", "numpy", "rng", "torch", "distributions", "dist", "scipy", "stats",
                                       "tfd", "tfp", "random_state", "generator") or name in ("Laplace", "Normal")
        if len(positional) == 2 and not keywords and number(positional[1]) == 1 and known \
                and isinstance(positional[0], cst.BinaryOperation) and _scale_like(positional[0]) \
                and self._in_dp(node, positional[0]):
            # Laplace(sens / eps, 1): the intended scale is the location, the scale is 1
            code = self.ctx.analysis.code(positional[0]).strip()
            self.report(node, f"`{code}` is the location (first argument) of `{name}` and the scale is 1: the noise "
                              f"does not follow ε; pass `{name}(0.0, {code})`")
            return
        if len(positional) != 1 or keywords & {"scale", "loc"}:
            return
        if not _scale_like(positional[0]) or not self._in_dp(node, positional[0]):
            return
        code = self.ctx.analysis.code(positional[0]).strip()
        self.report(
            node,
            f"`{code}` is the first positional argument of `{name}`, which numpy reads as the location (loc): "
            f"the noise has scale 1 and is centred on `{code}`, so it does not follow ε; pass it as "
            f"`{name}(0.0, {code})` or `scale={code}`",
        )

    def _own_scale_first(self, node: cst.Call, name: str) -> bool:
        """``self.laplace(1 / eps)`` or ``laplace(b)`` calling this module's own ``def laplace(self, scale)``: its
        first parameter is not a location, so the argument lands where the project wants it."""
        func = node.func
        receiver = func.value if isinstance(func, cst.Attribute) else None
        if receiver is not None and not (isinstance(receiver, cst.Name) and receiver.value in ("self", "cls")):
            return False
        callee = self._functions().get(name)
        if callee is None:
            return False
        params = [p for p in param_names(callee) if p not in ("self", "cls")]
        return bool(params) and not words(params[0]) & _LOCATION_WORDS

    def _in_dp(self, node: cst.Call, scale: cst.BaseExpression) -> bool:
        """DP context, or the scale divides by a budget: ``laplace(sens / privacybudget)`` needs no other sign."""
        if self.ctx.analysis.in_dp_context(node):
            return True
        return isinstance(scale, cst.BinaryOperation) and isinstance(scale.operator, cst.Divide) and any(
            isinstance(n, (cst.Name, cst.Attribute)) and _budget_named(ident(n) or "") for n in walk(scale.right))

    def _numeric_slot(self, node: cst.Call, name: str) -> None:
        """``sample_gumbel(shape, C * 2 / topk_eps)`` for ``def sample_gumbel(shape, eps=1e-20)``: a noise scale
        passed positionally into a module function's numerical-stability parameter."""
        if not name or any(a.star for a in node.args):
            return
        callee = self._functions().get(name)
        if callee is None or not self.ctx.analysis.in_dp_context(node):
            return
        params = call_params(node, callee)
        defaults = {p.name.value: number(p.default) for p in all_params(callee) if p.default is not None}
        positional = [a.value for a in node.args if a.keyword is None]
        for index, value in enumerate(positional):
            if index >= len(params):
                return
            default = defaults.get(params[index])
            if default is None or not 0 < default < 1e-3:
                continue
            if not (isinstance(value, cst.BinaryOperation) and _scale_like(value)):
                continue
            code = self.ctx.analysis.code(value).strip()
            self.report(node, f"`{code}` lands in `{name}`'s parameter `{params[index]}` (default {default:g}, a "
                              f"numerical constant), not in a noise scale: the draw keeps its unit scale whatever "
                              f"the budget; multiply the draw by `{code}` or pass it to a scale parameter")
            return

    def _functions(self) -> dict[str, cst.FunctionDef]:
        found = getattr(self, "_defs", None)
        if found is None:
            found = {}
            for sub in walk(self.ctx.module):
                if isinstance(sub, cst.FunctionDef):
                    found.setdefault(sub.name.value, sub)
            self._defs = found
        return found
