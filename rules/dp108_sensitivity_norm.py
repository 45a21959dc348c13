"""DP108: Laplace noise sized from an L2 sensitivity (or Gaussian noise from an L1 one)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import last_assignment
from dpcheck.analysis.syntax import call_name, number, param_names, string_text, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import GAUSS_DRAWS, LAPLACE_DRAWS, NORM_CALLS, ident

#: calls that clip a tensor (or a list of them) to an L2 bound
_L2_CLIP_CALLS = frozenset({"clip_grad_norm_", "clip_grad_norm", "clip_by_norm", "clip_by_global_norm"})
#: guards of a clip ratio (``min(1, C / ‖g‖)``)
_GUARDS = frozenset({"min", "max", "minimum", "maximum", "clamp", "clamp_max", "clamp_min", "clip", "fmin"})

_SCALE_KEYWORDS = frozenset({"scale", "b", "beta", "std", "sigma", "stddev", "noise_scale"})


def _scale_of(call: cst.Call) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in _SCALE_KEYWORDS:
            return arg.value
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[1] if len(positional) >= 2 else None


def _l2_name(name: str) -> bool:
    """``l2_sensitivity``, ``l2_norm_clip``, ``max_grad_norm``, ``clip_norm``: an L2 bound."""
    pieces = words(name)
    if "l2" in pieces and pieces & {"sens", "sensitivity", "norm", "clip", "bound", "delta"}:
        return True
    return "norm" in pieces and bool(pieces & {"clip", "clipping", "max"}) and "l1" not in pieces


def _clip_named(expr: cst.BaseExpression) -> bool:
    name = ident(expr)
    if name is None and isinstance(expr, cst.Call) and expr.args:
        name = ident(expr.args[0].value)
    return name is not None and bool(words(name) & {"clip", "clipping", "bound", "c", "max_norm", "threshold"}
                                     or name in ("C", "c") or "clip" in name.lower())


def _l2_norm_call(node: cst.Call) -> bool:
    """``np.linalg.norm(x)``, ``torch.norm(g)``, ``g.norm(2)``: an L2 norm (no ``ord=1``/``p=1``)."""
    if call_name(node) not in NORM_CALLS:
        return False
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value in ("ord", "p") or arg.keyword is None:
            value = arg.value
            if isinstance(value, cst.Integer) and value.value == "1":
                return False
            if isinstance(value, (cst.SimpleString, cst.Name)) and ident(value) in ("inf", "fro", "nuc"):
                return False
    return True


def _norm_order(node: cst.Call) -> float | None:
    """The order of a norm call when it is above 2 (``p=3``, ``ord=np.inf``, ``float('inf')``); else None."""
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value in ("ord", "p") or (
                arg.keyword is None and call_name(node) == "norm" and arg is not node.args[0]):
            value = arg.value
            num = number(value)
            if num is not None:
                return num if num > 2 else None
            text = ident(value) or ""
            if text in ("inf", "np.inf", "math.inf", "torch.inf", "numpy.inf") or (
                    isinstance(value, cst.Call) and call_name(value) == "float" and value.args
                    and "inf" in str(getattr(value.args[0].value, "value", ""))):
                return float("inf")
            if isinstance(value, cst.SimpleString) and "inf" in value.value:
                return float("inf")
    return None


#: statistics whose sensitivity is unbounded unless the data are clipped to a known range
_UNBOUNDED = frozenset({"max", "min", "amax", "amin", "nanmax", "nanmin", "var", "nanvar", "std", "nanstd",
                        "variance", "stdev", "pvariance", "pstdev", "median", "nanmedian", "ptp"})
_SQL_UNBOUNDED = re.compile(r"(?i)\b(MIN|MAX|VARIANCE|VAR|VAR_POP|VAR_SAMP|STDDEV|STDDEV_POP|STDDEV_SAMP|STDEV|"
                            r"MEDIAN)\s*\(")
_STAT_DRAWS = frozenset({"laplace", "normal", "Laplace", "Normal", "gauss"})
_CLAMPS = frozenset({"clip", "clamp", "clip_", "clamp_", "minimum", "maximum"})


def unbounded_gate(facts: AstFacts) -> bool:
    """A draw in a module that computes a max/min/variance/std/median or names one in an SQL string."""
    if not facts.calls_any(_STAT_DRAWS):
        return False
    return facts.calls_any(_UNBOUNDED) or _SQL_UNBOUNDED.search(facts.source) is not None


def _constant_numerator(scale: cst.BaseExpression) -> bool:
    """``1 / eps``, ``1.0 / (eps / 4)``, ``2 / epsilon``: a scale with a literal sensitivity."""
    if isinstance(scale, cst.BinaryOperation) and isinstance(scale.operator, cst.Divide):
        return number(scale.left) is not None
    return False


class SensitivityNorm(Rule):
    id = "DP108"
    name = "sensitivity-norm"
    category = "general"
    severity = "error"
    summary = ("Laplace noise calibrated to an L2 sensitivity (or Gaussian noise to an L1 one); a literal "
               "sensitivity for an unbounded max/min/variance/median")
    rationale = (
        "The Laplace mechanism is ε-DP when its scale is Δ₁/ε, the L1 sensitivity: the largest "
        "L1 distance between the outputs on neighbouring datasets. The Gaussian mechanism needs "
        "the L2 sensitivity Δ₂. A d-dimensional vector clipped to L2 norm C (a DP-SGD gradient, "
        "an embedding) can move by up to C·√d in L1, so Laplace noise of scale C/ε "
        "(`np.random.laplace(0, l2_norm_clip / eps, d)`, `laplace(scale=np.linalg.norm(x) / eps)`) "
        "is √d times too small for the ε claimed. Gaussian noise sized from an L1 bound is the "
        "mirror mistake in the other direction of the claim. Clipping by a norm of order above 2 "
        "(`torch.norm(g, p=3)`, `ord=np.inf`) before L2-calibrated Gaussian noise is the same "
        "mistake at the clip: the L2 norm of the clipped vector can exceed C. "
        "Not reported: an L2 bound converted with √d (`np.sqrt(d) * l2_sens`), an L1 norm "
        "(`ord=1`), code with no DP context. "
        "Fix: calibrate Laplace noise to the L1 sensitivity (clip in L1, or multiply an L2 bound by "
        "√d), or use the Gaussian mechanism with the L2 bound. "
        "The same wrong-sensitivity mistake for a statistic: the MAX, MIN, VARIANCE, STD or MEDIAN "
        "of values that are not clipped to a range (numpy/pandas/statistics calls, or an SQL "
        "`SELECT MAX(col)`) released with noise of scale `1 / eps` (a literal sensitivity): one "
        "record can move these statistics without limit, so no fixed scale gives ε-DP. Not "
        "reported there: a function that clips/clamps the values, a scale built from a range or "
        "bounds. Fix: clip to public bounds [L, U] and use Δ = U − L (or a DP quantile)."
    )
    TRIGGERS = ("aplace", "l1_", "L1", "p=", "ord=", "inf", "normal", "gauss")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a Laplace draw in a module whose code names an L2 bound or calls a norm, or a
        Gaussian draw in one that names an L1 bound or takes a norm of an order that may be above 2."""
        from dpcheck.analysis.astshapes import sensitivity_norm

        return sensitivity_norm(facts, laplace_draws=LAPLACE_DRAWS, gauss_draws=GAUSS_DRAWS,
                                norm_calls=NORM_CALLS | _L2_CLIP_CALLS,
                                l2_name=_l2_name) or unbounded_gate(facts)

    VALID = (
        # a helper picks the sensitivity by norm and mechanism, converting the L2 clip with √d for Laplace
        """
import torch
class Rewriter:
    def sensitivity_for_norm_clip(self, z):
        if self.norm_ord == 1:
            return 2 * self.clip_norm
        if self.mechanism == "laplace":
            return 2 * self.clip_norm * torch.sqrt(torch.tensor(z.shape[-1]))
        return 2 * self.clip_norm
    def privatize(self, z):
        sens = self.sensitivity_for_norm_clip(z)
        noise = torch.distributions.Laplace(0, sens / self.epsilon).sample(z.shape)
        return z + noise
""",
        # VALID twins of the role cases: an L2 bound converted with √d, and an L1 projection
        """
import numpy as np
def release_update(delta, S, epsilon):
    delta = delta * min(1.0, S / np.linalg.norm(delta, ord=2))
    return delta + np.random.laplace(0.0, np.sqrt(delta.size) * S / epsilon, delta.shape)
""",
        """
import numpy as np
def release_update(delta, S, epsilon):
    delta = delta * min(1.0, S / np.linalg.norm(delta, ord=1))
    return delta + np.random.laplace(0.0, S / epsilon, delta.shape)
""",
        """
import torch
def noisy_step(model, opt, bound_s, noise_multiplier):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=bound_s)
    for p in model.parameters():
        p.grad += torch.normal(0.0, noise_multiplier * bound_s, p.grad.shape)
    opt.step()
""",
        # the best score among candidates (each score of sensitivity 1): the choosing mechanism
        """
import numpy as np
def choosing_mechanism(data, candidates, quality, eps):
    return max(quality(data, f) for f in candidates) + np.random.laplace(0, 4 / eps, 1)
""",
        # the twins: clipped values, a count, a scale from public bounds
        """
import numpy as np
def private_max_age(ages, epsilon):
    ages = np.clip(ages, 0, 100)
    return np.max(ages) + np.random.laplace(0, 1 / epsilon)
""",
        """
import numpy as np
def dp_stats(conn, table, epsilon):
    row = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()
    return float(row[0]) + np.random.laplace(0, 1.0 / epsilon)
""",
        """
import numpy as np
def dp_variance(df, column, eps, lower, upper, rng):
    v = df[column].var()
    return v + rng.laplace(scale=(upper - lower) ** 2 / (len(df) * eps))
""",
        """
import numpy as np
def noisy_total(values, epsilon):
    return max(0.0, sum(values) + np.random.laplace(0, 1 / epsilon))
""",
        # clipping by the L1 norm also bounds the L2 norm: Gaussian noise of C is enough
        """
import numpy as np
import torch
def clip_grad(grad, clip, sigma):
    grad = grad / np.max((1, float(torch.norm(grad, p=1)) / clip))
    return grad + torch.normal(0, sigma * clip, grad.shape)
""",
        # an L-infinity norm used for a convergence test, not a clip
        """
import numpy as np
def solve(x, sigma, tol):
    while np.linalg.norm(x, ord=np.inf) / tol > 1:
        x = step(x) + np.random.normal(0, sigma, x.shape)
    return x
""",
        # L1 sensitivity for Laplace
        """
import numpy as np
def release(counts, epsilon, l1_sensitivity=1.0):
    return counts + np.random.laplace(0, l1_sensitivity / epsilon, size=counts.shape)
""",
        # an L2 bound converted to L1 with sqrt(d)
        """
import numpy as np
def private_embedding(v, epsilon, l2_norm_clip):
    d = v.shape[0]
    v = v * min(1.0, l2_norm_clip / np.linalg.norm(v))
    return v + np.random.laplace(0, np.sqrt(d) * l2_norm_clip / epsilon, size=d)
""",
        # Gaussian noise with the L2 clip bound: the right pairing
        """
import numpy as np
def noisy_grad(g, l2_norm_clip, noise_multiplier):
    return g + np.random.normal(0, noise_multiplier * l2_norm_clip, size=g.shape)
""",
        # an L1 norm of the data bounds the Laplace scale
        """
import numpy as np
def laplace_release(x, epsilon):
    sens = np.linalg.norm(x, ord=1)
    return x + np.random.laplace(scale=sens / epsilon, size=x.shape)
""",
    )

    INVALID = (
        # the clip bound of clip_grad_norm_ (an L2 clip, whatever its name) scales Laplace noise
        """
import torch
def noisy_step(model, opt, bound_s, epsilon):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=bound_s)
    for p in model.parameters():
        p.grad += torch.distributions.Laplace(0.0, bound_s / epsilon).sample(p.grad.shape)  # <-
    opt.step()
""",
        # a client update projected onto the L2 ball of radius S, coordinate-wise Laplace of scale S/eps
        """
import numpy as np
def release_update(delta, S, epsilon):
    delta = delta * min(1.0, S / np.linalg.norm(delta, ord=2))
    return delta + np.random.laplace(0.0, S / epsilon, delta.shape)  # <-
""",
        # the bound divides the norm inside max(1, ‖u‖ / r); the scale is built from r through a local
        """
import numpy as np
import torch
def perturb(u, r, epsilon):
    u = u / max(1.0, torch.norm(u).item() / r)
    b = r / epsilon
    return u + torch.from_numpy(np.random.laplace(0, b, tuple(u.shape)))  # <-
""",
        # unbounded statistics released with a literal sensitivity: numpy, pandas, SQL, statistics
        """
import numpy as np
def private_max_age(ages, epsilon):
    return np.max(ages) + np.random.laplace(0, 1 / epsilon)  # <-
""",
        """
import numpy as np
def dp_variance(df, column, eps, rng):
    v = df[column].var()
    return v + rng.laplace(scale=1.0 / eps)  # <-
""",
        """
import numpy as np
def dp_stats(conn, table, column, epsilon):
    sql = f"SELECT MAX({column}) FROM {table}"
    row = conn.execute(sql).fetchone()
    true_max = float(row[0]) if row[0] is not None else 0.0
    return true_max + np.random.laplace(0, 1.0 / (epsilon / 2))  # <-
""",
        """
import random, statistics
def noisy_median(values, epsilon):
    return statistics.median(values) + random.gauss(0, 2 / epsilon)  # <-
""",
        # FuzzyFL DP.py: "clipping" by the L3 norm, Gaussian noise of the L2 bound
        """
'''Differential privacy (DP) mechanisms.'''
import numpy as np
import torch
def clip_grad(grad, clip):
    grad = grad / np.max((1, float(torch.norm(grad, p=3)) / clip))  # <-
    return grad
def gaussian(data, clip, sigma, epsilon, delta):
    return data + torch.normal(0, sigma * clip, data.shape)
""",
        """
import numpy as np
def clip_and_noise(g, l2_norm_clip, noise_multiplier):
    g = g / max(1.0, np.linalg.norm(g, ord=np.inf) / l2_norm_clip)  # <-
    return g + np.random.normal(0, noise_multiplier * l2_norm_clip, g.shape)
""",
        # DP-SGD gradients clipped in L2, Laplace noise of the L2 bound
        """
import numpy as np
def dp_laplace_sgd(grads, l2_norm_clip, epsilon):
    norms = np.linalg.norm(grads, axis=1, keepdims=True)
    clipped = grads * np.minimum(1.0, l2_norm_clip / norms)
    return clipped.sum(0) + np.random.laplace(0, l2_norm_clip / epsilon, clipped.shape[1])  # <-
""",
        # qiuqiu035 opacus_client_dp.py: L2-clipped per-sample gradients, a Laplace helper with scale C/ε
        """
def add_noise(self, avg_grads):
    lap_eps = float(self.epsilon_per_step)
    C = float(self.max_grad_norm)
    noise_scale = C / lap_eps
    noises = sample_l1_laplace_like_for_avg(avg_grads, scale=noise_scale)  # <-
    return [g + n for g, n in zip(avg_grads, noises)]
""",
        # a helper named for the norm clip returns the L2 bound itself, and Laplace uses it
        """
import torch
class Rewriter:
    def sensitivity_for_norm_clip(self, z):
        return 2 * self.l2_norm_clip
    def privatize(self, z):
        sens = self.sensitivity_for_norm_clip(z)
        noise = torch.distributions.Laplace(0, sens / self.epsilon)  # <-
        return z + noise.sample(z.shape)
""",
        # a sensitivity named L2, given to torch's Laplace
        """
import torch
def perturb(weights, epsilon, l2_sensitivity):
    noise = torch.distributions.Laplace(0.0, l2_sensitivity / epsilon)  # <-
    return weights + noise.sample(weights.shape)
""",
        # the sensitivity is an L2 norm computed from a bound vector
        """
import numpy as np
def private_mean(x, bound_vec, epsilon):
    sensitivity = np.linalg.norm(bound_vec) / len(x)
    return x.mean(0) + np.random.laplace(scale=sensitivity / epsilon, size=x.shape[1])  # <-
""",
        # Gaussian noise sized from an L1 sensitivity
        """
import numpy as np
def gaussian_release(hist, epsilon, delta, l1_sensitivity):
    sigma = l1_sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return hist + np.random.normal(0, sigma, hist.shape)  # <-
""",
    )

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, (cst.Add, cst.Subtract)):
            return
        for value, noise in ((node.left, node.right), (node.right, node.left)):
            if not (isinstance(noise, cst.Call) and call_name(noise) in _STAT_DRAWS):
                continue
            scale = _scale_of(noise)
            if scale is None or not _constant_numerator(self._local(node, scale, 0) or scale):
                continue
            stat = self._statistic(node, value, 0)
            if stat is None or self._clamped(node):
                continue
            self.report(node, f"noise of scale `{self.ctx.analysis.code(scale).strip()}` (a literal sensitivity) is "
                              f"added to a {stat} of values that are not clipped to a range: one record can move a "
                              f"{stat} without limit, so no fixed scale makes it ε-DP; clip to public bounds and "
                              f"use their width as the sensitivity")
            return

    def _local(self, node: cst.CSTNode, expr: cst.BaseExpression, depth: int) -> cst.BaseExpression | None:
        if not isinstance(expr, cst.Name) or depth > 10:
            return None
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or expr.value in param_names(fn):
            return None
        return last_assignment(fn, expr.value, fa.line_of(node) + 1, fa.line_of)

    def _statistic(self, node: cst.CSTNode, expr: cst.BaseExpression, depth: int) -> str | None:
        """The unbounded statistic ``expr`` holds: ``np.max(x)``, ``df[c].var()``, ``float(row[0])`` of an SQL
        ``SELECT MIN(c)``, through local names."""
        if depth > 10:
            return None
        if isinstance(expr, cst.Call):
            name = call_name(expr)
            if name in _UNBOUNDED and not (name in ("max", "min") and len(expr.args) != 1
                                           and not isinstance(expr.func, cst.Attribute)):
                if isinstance(expr.func, cst.Name) and name in ("max", "min") and expr.args and isinstance(
                        expr.args[0].value, (cst.List, cst.Tuple, cst.GeneratorExp, cst.ListComp)):
                    return None  # a max over candidates' scores (each of sensitivity 1), not over records
                return {"amax": "max", "amin": "min", "nanmax": "max", "nanmin": "min", "nanvar": "variance",
                        "var": "variance", "nanstd": "std", "pvariance": "variance", "pstdev": "std",
                        "stdev": "std", "nanmedian": "median"}.get(name, name)
            if name in ("float", "int", "item", "fetchone", "fetchall", "scalar", "text", "execute", "read_sql",
                        "read_sql_query", "query", "sql") or not expr.args and isinstance(expr.func, cst.Attribute):
                inner = [a.value for a in expr.args if a.keyword is None] or (
                    [expr.func.value] if isinstance(expr.func, cst.Attribute) else [])
                for sub in inner:
                    found = self._statistic(node, sub, depth + 1)
                    if found:
                        return found
                if isinstance(expr.func, cst.Attribute):
                    return self._statistic(node, expr.func.value, depth + 1)
            return None
        if isinstance(expr, cst.Subscript):
            return self._statistic(node, expr.value, depth + 1)
        if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
            match = _SQL_UNBOUNDED.search(string_text(expr))
            return match.group(1).upper() if match else None
        if isinstance(expr, cst.IfExp):
            return self._statistic(node, expr.body, depth + 1)
        if isinstance(expr, cst.Name):
            # every binding before the use: a value set in ``try`` and a fallback in ``except`` are both live
            fa = self.ctx.analysis
            fn = fa.enclosing_function(node)
            if fn is None or expr.value in param_names(fn):
                return None
            line = fa.line_of(node)
            for sub in walk(fn, into_scopes=False):
                if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target,
                                                                                       cst.Name) \
                        and sub.targets[0].target.value == expr.value and fa.line_of(sub) <= line:
                    found = self._statistic(node, sub.value, depth + 1)
                    if found:
                        return found
        return None

    def _clamped(self, node: cst.CSTNode) -> bool:
        fn = self.ctx.analysis.enclosing_function(node)
        return fn is not None and any(isinstance(n, cst.Call) and call_name(n) in _CLAMPS
                                      for n in walk(fn, into_scopes=False))

    def visit_Call(self, node: cst.Call) -> None:
        name = call_name(node)
        if name in NORM_CALLS:
            self._clip_norm(node)
            return
        # a Laplace draw, or a helper named for one that takes a ``scale=`` (``sample_laplace_like(g, scale=b)``)
        laplace = name in LAPLACE_DRAWS or ("laplace" in words(name) and any(
            a.keyword is not None and a.keyword.value == "scale" for a in node.args))
        if not laplace and name not in GAUSS_DRAWS:
            return
        scale = _scale_of(node)
        if scale is None:
            return
        evidence = self._evidence(scale, want_l2=laplace, depth=0)
        if evidence is None:
            return
        if laplace:
            self.report(
                node,
                f"Laplace noise is scaled by `{evidence}`, an L2 bound: the Laplace mechanism needs the L1 "
                "sensitivity, which for a d-dimensional release is up to √d times larger, so the noise is "
                "too small for the ε claimed; use the L1 sensitivity (or √d·Δ₂), or the Gaussian mechanism",
            )
        else:
            self.report(
                node,
                f"Gaussian noise is scaled by `{evidence}`, an L1 sensitivity: the Gaussian mechanism's σ "
                "must use the L2 sensitivity of the release; compute Δ₂ (or use the Laplace mechanism with Δ₁)",
            )

    def _clip_norm(self, node: cst.Call) -> None:
        """A clip by a norm of order above 2 (``g / max(1, norm(g, p=3) / C)``) in a module that draws Gaussian
        noise: the L2 norm of the clipped vector is not bounded by C."""
        order = _norm_order(node)
        if order is None:
            return
        fa = self.ctx.analysis
        clip = False
        for anc in fa.ancestors(node):
            if isinstance(anc, cst.BinaryOperation) and isinstance(anc.operator, cst.Divide) \
                    and any(n is node for n in walk(anc.left)) and _clip_named(anc.right):
                clip = True
                break
            if isinstance(anc, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                break
        if not clip or not any(isinstance(n, cst.Call) and call_name(n) in GAUSS_DRAWS for n in walk(self.ctx.module)):
            return
        shown = "∞" if order == float("inf") else f"{order:g}"
        self.report(node, f"the clip uses the L{shown} norm, which is smaller than the L2 norm: a vector clipped to "
                          f"C in L{shown} can have an L2 norm well above C, so Gaussian noise calibrated to an L2 "
                          f"sensitivity C is too small; clip by the L2 norm")

    def _l2_bounds(self) -> set[str]:
        """Identifiers the module uses as the bound of an L2 clip, whatever they are called: the ``max_norm`` of
        ``clip_grad_norm_`` (norm type 2), the ``clip_norm`` of ``clip_by_norm`` / ``clip_by_global_norm``, and
        ``X`` in a guard over a ratio of ``X`` and an L2 norm (``min(1, X / norm(v))``, ``max(1, norm(g) / X)``)."""
        cached = getattr(self, "_l2_bound_names", None)
        if cached is not None:
            return cached
        found: set[str] = set()
        for call in walk(self.ctx.module):
            if not isinstance(call, cst.Call):
                continue
            name = call_name(call)
            if name in _L2_CLIP_CALLS:
                keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
                order = keywords.get("norm_type")
                if order is not None and number(order) != 2:
                    continue
                positional = [a.value for a in call.args if a.keyword is None and not a.star]
                bound = keywords.get("max_norm", keywords.get("clip_norm"))
                if bound is None and len(positional) >= 2:
                    bound = positional[1]
                if bound is not None and ident(bound) is not None and number(bound) is None:
                    found.add(ident(bound))  # type: ignore[arg-type]
            elif name in _GUARDS:
                for arg in call.args:
                    ratio = arg.value
                    if not (isinstance(ratio, cst.BinaryOperation) and isinstance(ratio.operator, cst.Divide)):
                        continue
                    for side, other in ((ratio.left, ratio.right), (ratio.right, ratio.left)):
                        if isinstance(side, (cst.Name, cst.Attribute)) and ident(side) is not None and any(
                                isinstance(n, cst.Call) and _l2_norm_call(n) for n in walk(other)):
                            found.add(ident(side))  # type: ignore[arg-type]
        self._l2_bound_names = found
        return found

    def _evidence(self, expr: cst.BaseExpression, *, want_l2: bool, depth: int) -> str | None:
        """The L2 (``want_l2``) or L1 bound ``expr`` is built from, following local names."""
        fa = self.ctx.analysis
        for node in walk(expr):
            if want_l2 and isinstance(node, cst.Call) and call_name(node) == "sqrt" and not any(
                    isinstance(n, cst.Call) and call_name(n) in ("log", "log1p") for n in walk(node)):
                return None  # a √d conversion between the norms
        # a called helper's name is not a bound (``get_sensitivity_for_clip_by_norm(x)``): what it returns is
        callees = {id(n) for c in walk(expr) if isinstance(c, cst.Call) for n in walk(c.func)}
        for node in walk(expr):
            if want_l2 and isinstance(node, cst.Call):
                fn = fa.callee(node)
                if fn is not None and any(isinstance(n, cst.Call) and call_name(n) == "sqrt" for n in walk(fn)):
                    return None  # the helper converts an L2 bound with √d on some path: it knows the norms apart
            if id(node) in callees:
                continue
            if isinstance(node, (cst.Name, cst.Attribute)):
                name = ident(node)
                if name is None:
                    continue
                pieces = words(name)
                if want_l2 and (_l2_name(name) or name in self._l2_bounds()):
                    return name
                if not want_l2 and "l1" in pieces and pieces & {"sens", "sensitivity", "norm", "bound"}:
                    return name
            elif want_l2 and isinstance(node, cst.Call) and _l2_norm_call(node):
                return fa.code(node).strip()
        if depth >= 2:
            return None
        for node in walk(expr):
            if isinstance(node, cst.Name) and id(node) not in callees:
                value = fa.value_of(node)
                if value is not None and value is not expr:
                    found = self._evidence(value, want_l2=want_l2, depth=depth + 1)
                    if found is not None:
                        return found
            elif isinstance(node, cst.Call) and fa.callee(node) is not None:
                for value in fa.referents(node):
                    found = self._evidence(value, want_l2=want_l2, depth=depth + 1)
                    if found is not None:
                        return found
        return None
