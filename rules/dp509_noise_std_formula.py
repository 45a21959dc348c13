"""DP509: a Gaussian noise standard deviation that disagrees with the sensitivity it is calibrated to:
divided by √(batch size), or scaled by the sensitivity squared."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.noisedraws import is_draw, zero_centred

_BATCH_WORDS = frozenset({"batch", "bs", "batchsize", "lot", "mb", "minibatch"})
_STD_WORDS = frozenset({"sigma", "std", "stddev", "stdev", "scale"})
_SENS_WORDS = frozenset({"sens", "sensitivity", "clip", "delta_f", "l2"})
_SQRT = frozenset({"sqrt"})
#: a noise multiplier / std: squared inside a draw's scale it is a variance used as a scale
_SIGMA_WORDS = frozenset({"sigma", "sig", "multiplier", "std", "stddev"})
_DRAW_NAMES = frozenset({"normal", "laplace", "random_normal", "gauss", "normalvariate", "Normal", "Laplace"})


def _batch_named(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and call_name(expr) in ("len", "float", "int") and expr.args:
        return _batch_named(expr.args[0].value)
    name = last_name(expr)
    if name is None:
        return False
    lowered = name.lower()
    return bool(words(name) & _BATCH_WORDS) or lowered.endswith("batch_size") or lowered in ("b", "bsz")


def _sqrt_of_batch(expr: cst.BaseExpression) -> bool:
    """``np.sqrt(batch_size)``, ``math.sqrt(len(batch))``, ``batch_size ** 0.5``."""
    if isinstance(expr, cst.Call) and call_name(expr) in _SQRT and len(expr.args) == 1:
        return _batch_named(expr.args[0].value)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power):
        return number(expr.right) == 0.5 and _batch_named(expr.left)
    return False


def _sensitivity_named(expr: cst.BaseExpression) -> bool:
    name = last_name(expr)
    return name is not None and (name == "s" or bool(words(name) & _SENS_WORDS))


def _sigma_named(expr: cst.BaseExpression) -> bool:
    name = last_name(expr)
    return name is not None and bool(words(name) & _SIGMA_WORDS)


def _bound_named(expr: cst.BaseExpression) -> bool:
    """A sensitivity or clip bound: ``sens``, ``clip_bound``, ``max_grad_norm``, ``C``."""
    name = last_name(expr)
    if name is None:
        return False
    pieces = words(name)
    return _sensitivity_named(expr) or name in ("C", "c") or bool(pieces & {"clipping", "bound"}) \
        or {"max", "norm"} <= pieces


def _draw_scale(call: cst.Call) -> cst.BaseExpression | None:
    """The scale/std argument of a zero-centred Gaussian or Laplace draw (numpy, torch, tf)."""
    name = call_name(call)
    if name not in ("normal", "laplace", "random_normal", "gauss", "normalvariate", "Normal", "Laplace"):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("scale", "std", "stddev", "sigma", "b"):
            return arg.value
    if any(a.keyword is not None and a.keyword.value == "shape" for a in call.args) or name == "random_normal":
        return None  # tf.random.normal(shape, mean, stddev): a positional scale is not the second argument
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[1] if len(positional) >= 2 else None


_DIM_WORDS = frozenset({"dimensions", "dims", "dim", "features", "columns", "cols", "attributes", "attrs",
                        "queries", "coordinates", "coords", "marginals", "histograms", "axes"})


def _count_of_dims(expr: cst.BaseExpression) -> bool:
    """``len(dimensions)``, ``len(self.columns)``: a count of released coordinates/queries."""
    if isinstance(expr, cst.Call) and call_name(expr) == "len" and expr.args:
        name = last_name(expr.args[0].value)
        return name is not None and bool(words(name) & _DIM_WORDS)
    return False


def _laplace_scale(call: cst.Call) -> cst.BaseExpression | None:
    """The scale of a Laplace draw or of a helper named for one (``self._laplace(scale)``)."""
    name = call_name(call)
    if name not in ("laplace", "Laplace") and "laplace" not in words(name):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("scale", "b", "beta"):
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if name in ("laplace", "Laplace"):
        return positional[1] if len(positional) >= 2 else None
    return positional[0] if len(positional) == 1 else None


class NoiseStdFormula(Rule):
    id = "DP509"
    name = "noise-std-formula"
    category = "general"
    severity = "error"
    summary = ("Gaussian noise std divided by √(batch size) or scaled by the sensitivity squared; a Laplace scale "
               "divided by the number of dimensions")
    rationale = (
        "The Gaussian mechanism adds N(0, σ²Δ²): the standard deviation is σ times the L2 "
        "sensitivity Δ. In DP-SGD the sum of B per-example gradients clipped to C has Δ = C, so "
        "its noise is N(0, σ²C²), and the mean's is σC/B. `normal(0, C*sigma) / sqrt(batch_size)` "
        "is neither: on the sum it is √B times too small for the σ the accountant charges. "
        "Likewise `sigma *= sensitivity ** 2` (then used as a draw's scale) multiplies the standard deviation by Δ² (a variance "
        "unit): for Δ < 1 the noise is too small by a factor Δ. Not reported: √B in a multiplication, "
        "a variance (`var = sigma**2 * sens**2`), a Δ² under a square root, code with no DP context. "
        "A Laplace scale `Δ / (ε · len(dimensions))` shrinks the noise of each coordinate as more "
        "are released, where each needs Δ/ε_i of its own share. "
        "Fix: std = σ·Δ on the sum (divide the noisy sum by B afterwards), and scale σ by Δ, not Δ²."
    )
    TRIGGERS = ("sqrt", "**", "aplace")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a division by √(batch), a sensitivity squared, or a Laplace scale over len(dimensions)."""
        from dpcheck.analysis.astshapes import noise_std

        if noise_std(facts, _BATCH_WORDS, _SENS_WORDS, _DIM_WORDS):
            return True
        # a σ or bound squared inside a draw's own arguments
        import ast

        from dpcheck.analysis.astfacts import last_name as ast_last_name

        wanted = _SENS_WORDS | _SIGMA_WORDS | {"c", "clipping", "bound", "norm"}
        for call in facts.calls:
            if not facts.call_lasts(call) & _DRAW_NAMES:
                continue
            for value in (*call.args, *(k.value for k in call.keywords)):
                for sub in ast.walk(value):
                    if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Pow) and isinstance(
                            sub.right, ast.Constant) and sub.right.value == 2:
                        name = ast_last_name(sub.left)
                        if name is not None and words(name) & wanted:
                            return True
        return False

    VALID = (
        # the noise on the sum is σC; the mean divides the noisy sum by B
        """
import torch
def noisy_mean(summed, clip, sigma, batch_size):
    return (summed + torch.normal(0, clip * sigma, summed.shape)) / batch_size
""",
        # a variance, not a std
        """
import numpy as np
def gaussian_variance(sigma, sensitivity):
    var = sigma ** 2 * sensitivity ** 2
    return var
""",
        # Δ² under the square root of a σ formula
        """
import numpy as np
def sigma_for(epsilon, delta, sensitivity):
    sigma = np.sqrt(2 * np.log(1.25 / delta) * sensitivity ** 2) / epsilon
    return np.random.normal(0, sigma)
""",
        # the Laplace scale of a mean over n records, and a budget split over the dimensions
        """
import numpy as np
def dp_means(x, epsilon, lower, upper, dimensions):
    eps_each = epsilon / len(dimensions)
    return x.mean(0) + np.random.laplace(0, (upper - lower) / (len(x) * eps_each), size=len(dimensions))
""",
        # the noise of a mean: σC / B
        """
import tensorflow as tf
def noise_grads(m, batch_size, sigma, clip):
    return {k: v + tf.random_normal(shape=k.shape, mean=0.0, stddev=clip * sigma) / batch_size for k, v in m.items()}
""",
        # √B in a multiplication: the effective noise of an averaged estimate, reported, not drawn
        """
import numpy as np
def effective_sigma(sigma, clip, batch_size):
    effective = sigma * clip * np.sqrt(batch_size)
    return effective
""",
        """
import tensorflow as tf
def privatize(grads, noise_multiplier, clip_norm):
    return [g + tf.random.normal(tf.shape(g), mean=0.0, stddev=noise_multiplier * clip_norm) for g in grads]
""",
        """
import torch
def dp_add_noise(grad, sigma, max_grad_norm):
    return grad + torch.normal(0.0, sigma * max_grad_norm, grad.shape)
""",
        """
import numpy as np
def ldp_perturb(update, sig, bound, epsilon):
    return update + np.random.normal(0.0, np.sqrt((sig ** 2) * (bound ** 2)), size=update.shape)
""",
        # a variance released with Laplace noise: the sensitivity of a second moment is in squared units
        """
import numpy as np
def noisy_std(scales, sensitivity, n, eps):
    return np.sqrt(np.abs(scales ** 2 + np.random.laplace(np.zeros_like(scales), sensitivity ** 2 / n / eps)))
""",
    )

    INVALID = (
        # the same squared sensitivity on a first moment (a mean) is a variance used as a scale
        """
import numpy as np
def noisy_mean(means, sensitivity, n, eps):
    return means + np.random.laplace(np.zeros_like(means), sensitivity ** 2 / n / eps)  # <-
""",
        # DP-SDV mwem.py: the Laplace scale divided again by the number of the query's dimensions
        """
def fit(self, hist, queries, dimensions):
    evals = self._evaluate(queries[qi], hist)
    lap = self._laplace(  # <-
        (2 * self.iterations * len(self.histograms)) / (self.epsilon * len(dimensions))
    )
    return evals + lap
""",
        # alps-lab dpgan clippers/basic.py
        """
import numpy as np
import tensorflow as tf
def noise_grads(self, m, batch_size, sigma, delta):
    noised = {}
    for k, v in m.items():
        c_value = self.clip_bound.get_bound_tensor()
        noised[k] = v + (tf.random_normal(shape=k.shape, mean=0.0, stddev=c_value * sigma) /  # <-
                         np.sqrt(batch_size))
    return noised
""",
        """
import torch, math
def privatize(grad_sum, clip, noise_multiplier, batch_size):
    std = clip * noise_multiplier / math.sqrt(batch_size)  # <-
    return grad_sum + torch.normal(0, std, grad_sum.shape)
""",
        # FuzzyFL DP.py: σ multiplied by the sensitivity squared
        """
import numpy as np
import torch
def tight_gaussian(data, s, c2, q, t, delta, epsilon, device=None):
    sigma = c2 * q * np.sqrt(t * np.log(1 / delta)) / epsilon
    sigma *= (s ** 2)  # <-
    noise = torch.normal(0, sigma, data.shape).to(device)
    return data + noise
""",
        """
import numpy as np
def gaussian_release(x, epsilon, delta, l2_sensitivity):
    std = np.sqrt(2 * np.log(1.25 / delta)) / epsilon * l2_sensitivity ** 2  # <-
    return x + np.random.normal(0, std, x.shape)
""",
        # a clip bound squared inside the draw's own std (tf, torch) and a variance as a Laplace scale (numpy)
        """
import tensorflow as tf
def privatize(grads, noise_multiplier, clip_norm):
    return [g + tf.random.normal(tf.shape(g), mean=0.0, stddev=noise_multiplier * clip_norm ** 2)  # <-
            for g in grads]
""",
        """
import torch
def dp_add_noise(grad, sigma, max_grad_norm):
    return grad + torch.normal(0.0, sigma * max_grad_norm ** 2, grad.shape)  # <-
""",
        """
import numpy as np
def ldp_perturb(update, sig, bound, epsilon):
    return update + np.random.laplace(0.0, (sig ** 2) * (bound ** 2), size=update.shape)  # <-
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Divide) and _sqrt_of_batch(node.right):
            if self._noise_or_std(node.left):
                self.report(node, "Gaussian noise scaled by 1/√(batch size): the sum of B clipped gradients has "
                                  "sensitivity C and needs std σ·C (σ·C/B for the mean), so this is √B too little "
                                  "noise for the σ the accountant charges")
            return
        if isinstance(node.operator, cst.Power) and number(node.right) == 2:
            if self._squared_in_scale(node):
                return
            if _sensitivity_named(node.left):
                self._squared_sensitivity(node)

    def visit_Call(self, node: cst.Call) -> None:
        scale = _laplace_scale(node)
        if scale is None:
            return
        for sub in walk(scale):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
                denominator = sub.right
                factors = [denominator]
                while factors:
                    f = factors.pop()
                    if isinstance(f, cst.BinaryOperation) and isinstance(f.operator, cst.Multiply):
                        factors += [f.left, f.right]
                    elif _count_of_dims(f):
                        self.report(node, f"the Laplace scale is divided by `{self.ctx.analysis.code(f)}`: the noise "
                                          "per coordinate shrinks as more coordinates are released, while each one "
                                          "needs the scale Δ/ε of its own share of the budget (more coordinates "
                                          "need more noise, not less)")
                        return

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if not isinstance(node.operator, cst.MultiplyAssign) or not self._std_target(node.target):
            return
        value = node.value
        while isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
            value = value.left if isinstance(value.left, cst.BinaryOperation) else value.right
        for sub in walk(node.value):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Power) \
                    and number(sub.right) == 2 and _sensitivity_named(sub.left) \
                    and self._drawn_with(node, last_name(node.target) or ""):
                self.report(node, f"the noise std `{dotted(node.target) or 'sigma'}` is multiplied by the "
                                  f"sensitivity squared: a standard deviation scales with Δ, not Δ² (Δ² is the "
                                  f"variance's unit), so for Δ < 1 the noise is too small")
                return

    # -- helpers ---------------------------------------------------------------------------------
    def _squared_in_scale(self, power: cst.BinaryOperation) -> bool:
        """``normal(0, sigma * C ** 2)``, ``laplace(0, sig ** 2 * c ** 2)``: a sensitivity or noise multiplier
        squared as a factor of a draw's scale argument itself (a variance in the place of a scale)."""
        if not (_bound_named(power.left) or _sigma_named(power.left)):
            return False
        fa = self.ctx.analysis
        child: cst.CSTNode = power
        for anc in fa.ancestors(power):
            if isinstance(anc, cst.Call):
                scale = _draw_scale(anc)
                if scale is None or not (scale is child or isinstance(child, cst.Arg) and child.value is scale):
                    return False
                if not zero_centred(anc):
                    return False
                if self._perturbs_variance(anc):
                    return True  # noise on a variance: its sensitivity is in squared units
                squared = self.ctx.analysis.code(power).strip()
                self.report(power, f"the noise scale of `{call_name(anc)}` contains `{squared}`: a standard "
                                   f"deviation or Laplace scale grows with σ·Δ, not with a square (σ²Δ² is the "
                                   f"Gaussian variance), so the noise does not match the sensitivity it is "
                                   f"calibrated to (for Δ < 1 it is too small)")
                return True
            if isinstance(anc, cst.Arg):
                child = anc
                continue
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, cst.Multiply):
                child = anc
                continue
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, cst.Divide) and anc.left is child:
                child = anc
                continue
            return False
        return False

    def _perturbs_variance(self, draw: cst.Call) -> bool:
        """``scales ** 2 + laplace(0, sens ** 2 / n / eps)``: the draw is added to a square or a variance, so the
        released value is a second moment and a squared sensitivity is its own unit."""
        parent = self.ctx.analysis.parent(draw)
        if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract))):
            return False
        other = parent.left if parent.right is draw else parent.right
        if isinstance(other, cst.BinaryOperation) and isinstance(other.operator, cst.Power):
            return number(other.right) == 2
        name = last_name(other)
        return name is not None and bool(words(name) & {"var", "variance", "variances", "sq", "squared"})

    def _noise_or_std(self, expr: cst.BaseExpression) -> bool:
        """A zero-centred Gaussian draw, a product with one, or a std made of σ and a clip bound."""
        inner = expr
        while isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Multiply):
            if is_draw(inner):
                break
            inner = inner.left
        if is_draw(expr):
            draws = [n for n in walk(expr) if isinstance(n, cst.Call) and is_draw(n)]
            return any(zero_centred(d) and call_name(d) not in ("laplace", "Laplace") for d in draws)
        names = {w for n in walk(expr) if isinstance(n, (cst.Name, cst.Attribute)) for w in words(last_name(n) or "")}
        if not (names & {"sigma", "noise", "multiplier"} and names & {"clip", "c", "bound", "norm", "value"}):
            return False
        statement = self.ctx.analysis.enclosing_statement(expr)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            return self._std_target(statement.targets[0].target)
        return False

    def _drawn_with(self, node: cst.CSTNode, name: str) -> bool:
        """Is ``name`` the scale of a zero-centred draw later in the same function (``normal(0, sigma, …)``,
        ``randn(n) * sigma``)?"""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or not name:
            return False
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Call) and is_draw(sub) and zero_centred(sub):
                if any(last_name(a.value) == name or any(last_name(n) == name for n in walk(a.value))
                       for a in sub.args):
                    return True
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Multiply) and is_draw(sub) \
                    and any(isinstance(n, cst.Name) and n.value == name for n in walk(sub)):
                return True
        return False

    @staticmethod
    def _std_target(target: cst.BaseExpression) -> bool:
        name = last_name(target)
        if name is None:
            return False
        pieces = words(name)
        return bool(pieces & _STD_WORDS) and not pieces & {"var", "variance", "sq", "squared", "sigma2", "lr"}

    def _squared_sensitivity(self, power: cst.BinaryOperation) -> None:
        fa = self.ctx.analysis
        for anc in fa.ancestors(power):
            if isinstance(anc, cst.Call) and call_name(anc) in _SQRT:
                return
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, cst.Power):
                return
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, (cst.Add, cst.Subtract, cst.Divide)) \
                    and not (isinstance(anc.operator, cst.Divide) and anc.left is not power and
                             not any(n is power for n in walk(anc.left))):
                return
            if isinstance(anc, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                break
        statement = fa.enclosing_statement(power)
        if isinstance(statement, cst.AugAssign):
            return  # visit_AugAssign reports it
        if not isinstance(statement, cst.Assign) or len(statement.targets) != 1 \
                or not self._std_target(statement.targets[0].target):
            return
        target = last_name(statement.targets[0].target)
        if not self._drawn_with(power, target or ""):
            return
        self.report(power, f"`{target}` (a noise std) is scaled by the sensitivity squared: a standard deviation "
                           f"scales with Δ, not Δ², so for Δ < 1 the noise is too small")
