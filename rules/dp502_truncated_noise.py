"""DP502: the noise draw itself is clipped (truncated) before it is added to the released value."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.noisedraws import PURE_DRAWS, is_draw, last_assignment, zero_centred

_CLIPS = frozenset({"clip", "clamp", "clamp_", "clip_", "clip_by_value"})
#: folds of a draw onto one side (``abs``) or towards zero (``int`` truncates, unlike ``floor``/``round``)
_FOLDS = frozenset({"abs", "fabs", "absolute"})
_TRUNCS = frozenset({"int", "trunc", "fix"})
#: wrappers a folded draw passes through on its way to the sum
_WRAPS = frozenset({"int", "float", "ceil", "floor", "round", "trunc", "fix"})


class TruncatedNoise(Rule):
    id = "DP502"
    name = "truncated-noise"
    category = "general"
    severity = "error"
    summary = "the noise draw is clipped to a range before it is added: truncated noise gives no DP guarantee"
    rationale = (
        "The Laplace and Gaussian mechanisms rely on the noise density's full tails: the ratio of the "
        "output densities at neighbouring inputs is bounded only because every output is possible "
        "under both. Clipping the noise to ±3σ (`np.clip(noise, -3*s, 3*s)`, `noise.clamp(-c, c)`) "
        "makes the support of the release depend on the true value: an output beyond `f(D) + 3σ` "
        "has probability zero under D and positive under a neighbour, so ε is infinite (δ is at "
        "least the mass of those outputs). Not reported: a clip of the noisy *release* "
        "(`np.clip(x + noise, lo, hi)`, post-processing), a clip of a value that is not a draw, "
        "code with no DP context. Fix: add the untruncated noise and clip the sum if a range is needed."
    )
    TRIGGERS = ("clip", "clamp", "noise", "abs", "int(", "trunc", "fix(")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a clip or clamp call beside a draw, or a one-sided list comprehension in a file with one."""
        from dpcheck.analysis.astshapes import truncated_noise

        if truncated_noise(facts, _CLIPS, PURE_DRAWS):
            return True
        import ast
        from dpcheck.analysis.astfacts import call_name as ast_call_name
        draws = PURE_DRAWS | {"rvs"}
        return any(ast_call_name(c) in draws for c in facts.calls) and any(
            ast_call_name(c) in _FOLDS | _TRUNCS for c in facts.calls)

    VALID = (
        # simulated data, not noise (ornl-presto's examples)
        """
import numpy as np
def make_cohort(n, epsilon):
    age = np.random.normal(50, 15, n)
    age = np.clip(age, 18, 90)
    freq_shift = np.random.normal(0, 0.05, n)
    freq_shift = np.clip(freq_shift, -0.1, 0.1)
    return age, freq_shift, epsilon
""",
        # dp-cgans: a draw centred on the value is the noisy value; clipping it is post-processing
        """
import numpy as np
def inverse_transform(values, sigmas, st, epsilon):
    values = np.random.normal(values, sigmas[st])
    return np.clip(values, -1, 1)
""",
        # the sum is clipped: post-processing
        """
import numpy as np
def noise_add(w, noise_scale, dim):
    noise = np.random.normal(0, noise_scale, dim)
    return np.clip(w + noise, -1.0, 1.0)
""",
        """
import numpy as np
def noise_add(w, noise_scale, dim):
    noise = np.random.normal(0, noise_scale, dim)
    w_noise = w + noise
    return w_noise
""",
        # clipping the value before the noise is the sensitivity bound
        """
import torch
def private_sum(x, C, sigma):
    clipped = x.clamp(-C, C)
    return clipped.sum() + torch.normal(0.0, sigma * C, size=())
""",
        # the name is reassigned to the noisy release before the clip
        """
import numpy as np
def release(counts, epsilon):
    noisy = np.random.laplace(0, 1 / epsilon, len(counts))
    noisy = counts + noisy
    return np.clip(noisy, 0, None)
""",
        # rounding the draws element-wise keeps them two-sided
        """
import numpy as np
def noisy_counts(counts, b, epsilon):
    noise = np.random.laplace(loc=0, scale=b, size=len(counts)).tolist()
    noise = [round(x) for x in noise]
    released = [c + x for c, x in zip(counts, noise)]
    return [0 if (v < 0) else v for v in released]
""",
    )

    VALID = VALID + (
        # the noisy value (not the draw) is folded or truncated: post-processing
        """
import numpy as np
def noisy_counts(counts, epsilon):
    out = []
    for c in counts:
        noisy = int(c + np.random.laplace(0, 1 / epsilon))
        out.append(abs(noisy))
    return out
""",
        # a draw centred on the count is the noisy count; truncating it is post-processing
        """
import numpy as np
def leaf_counts(freq, epsilon):
    for i in range(len(freq)):
        noisy = int(np.random.laplace(freq[i], 1 / epsilon))
        freq[i] = abs(noisy)
    return freq
""",
        # floor of the draw keeps a two-sided discretised Laplace
        """
import numpy as np
def noisy_count(count, sens, eps):
    noise = int(np.floor(np.random.laplace(0, sens / eps)))
    return count + noise
""",
        # the size of the noise as a diagnostic, not added to anything
        """
import numpy as np
def report(values, sigma, epsilon):
    noise = np.random.normal(0, sigma, values.shape)
    print("mean |noise|", np.mean(np.abs(noise)), epsilon)
    return values + noise
""",
        # half-normal augmentation with literal scales in ordinary training code
        """
import numpy as np
def jitter(x, epsilon=1e-8):
    scale = abs(np.random.normal(0, 0.1)) + 1.0
    return x * scale + epsilon
""",
        # diffusion: the time step draw is folded, then used as an index
        """
import torch
def sample_t(batch, sigma_max, eps=1e-5):
    t = torch.randn(batch).abs() * sigma_max
    return t.clamp(min=eps)
""",
    )

    INVALID = (
        # one-sided Laplace: only |noise| is added, so the noisy frequency is never below the true one
        """
from scipy.stats import laplace
def noisy_frequencies(freq, epsilon):
    out = {}
    for key in freq:
        noise = laplace.rvs(loc=0, scale=1 / epsilon, size=1)[0]
        out[key] = freq[key] + abs(noise)  # <-
    return out
""",
        """
import numpy as np
def noisy_time(total, sensitivity, epsilon):
    return total + np.abs(np.random.laplace(0.0, sensitivity / epsilon))  # <-
""",
        # a noise helper that returns the ceiling of |noise|: callers only ever add copies
        """
import math
from scipy.stats import laplace
def get_noise(epsilon):
    noise = laplace.rvs(loc=0, scale=1 / epsilon, size=1)[0]
    noise = int(math.ceil(abs(noise)))  # <-
    return noise
""",
        # Laplace noise truncated toward zero with int(): the mass of (-1, 1) collapses onto 0
        """
import numpy as np
def noisy_variants(freqs, epsilon):
    b = 1 / epsilon
    for v in freqs:
        noise = int(np.random.laplace(0, b))  # <-
        freqs[v] = freqs[v] + noise
    return freqs
""",
        """
import torch
def noisy_sum(total, sigma, clip, epsilon):
    z = torch.randn(()) * sigma * clip
    total += z.abs()  # <-
    return total
""",
         # athenarc PrivBayes.py: negative Laplace draws set to 0 (one-sided noise), after rounding
        """
import numpy as np
def noisy_counts(counts, b, epsilon):
    noise = np.random.laplace(loc=0, scale=b, size=len(counts)).tolist()
    noise = [round(x) for x in noise]
    noise = [0 if (x<0) else x for x in noise]  # <-
    return [c + x for c, x in zip(counts, noise)]
""",
       # AdamWei Fed_Svm.py
        """
import numpy as np
def noise_add(w, noise_scale, dim):
    noise = np.random.normal(0, noise_scale, dim)
    noise = np.clip(noise, -3 * noise_scale, 3 * noise_scale)  # <-
    w_noise = w + noise
    return w_noise
""",
        """
import torch
def dp_update(delta, sigma, clip):
    noise = torch.randn_like(delta) * sigma * clip
    return delta + noise.clamp(-3 * sigma * clip, 3 * sigma * clip)  # <-
""",
        """
import numpy as np
def laplace_mechanism(value, sensitivity, epsilon):
    b = sensitivity / epsilon
    return value + np.clip(np.random.laplace(0, b), -5 * b, 5 * b)  # <-
""",
        """
import tensorflow as tf
def add_gaussian_noise(grads, noise_multiplier, l2_norm_clip):
    stddev = noise_multiplier * l2_norm_clip
    noise = tf.random.normal(tf.shape(grads), stddev=stddev)
    bounded = tf.clip_by_value(noise, -2 * stddev, 2 * stddev)  # <-
    return grads + bounded
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) in _FOLDS | _TRUNCS:
            self._fold(node)
        if call_name(node) not in _CLIPS:
            return
        subject: cst.BaseExpression | None = None
        if isinstance(node.func, cst.Attribute) and call_name(node) in ("clamp", "clamp_", "clip_", "clip") and not self._module_call(node):
            subject = node.func.value
        elif node.args and node.args[0].keyword is None:
            subject = node.args[0].value
        if subject is None:
            return
        draw = self._draw(subject, node)
        if draw is None or not self._noise_bound(subject, draw, node):
            return
        code = self.ctx.analysis.code(subject).strip()
        self.report(node, f"the noise `{code}` is truncated here before it is added: outputs beyond the bound are "
                          f"impossible under one input and possible under its neighbour, so no ε holds; add the "
                          f"full draw and clip the noisy sum instead")

    def _fold(self, node: cst.Call) -> None:
        """``x + abs(noise)`` / ``x + int(noise)``: a zero-centred draw folded onto one side or truncated toward
        zero before it is added (g3 2026-11-27: Elkoumy/amun, samadeusfp/PRIPEL, samadeusfp/SaCoFa)."""
        name = call_name(node)
        if isinstance(node.func, cst.Attribute) and name in ("abs", "absolute") and not node.args:
            subject: cst.BaseExpression = node.func.value
        elif node.args and node.args[0].keyword is None and len(node.args) == 1:
            subject = node.args[0].value
        else:
            return
        if name in _TRUNCS and isinstance(node.func, cst.Attribute) and name == "int":
            return
        draw = self._folded_draw(subject, node)
        if draw is None or not self._added(node):
            return
        code = self.ctx.analysis.code(subject).strip()
        if name in _FOLDS:
            self.report(node, f"only the magnitude of the noise `{code}` is added: the noise is one-sided, so a "
                              f"release below the true value is impossible for this input but possible for a "
                              f"neighbour and no ε holds; add the signed zero-centred draw")
        else:
            self.report(node, f"the noise `{code}` is truncated toward zero with `{name}()` before it is added: all "
                              f"draws in (-1, 1) collapse onto 0, so the output probabilities of neighbouring "
                              f"counts differ by more than e^ε; add the full draw (or round the noisy sum, or "
                              f"use floor or a discrete Laplace/geometric draw)")

    def _folded_draw(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = 2) -> cst.Call | None:
        """The zero-centred draw with a non-literal scale ``expr`` is: directly, scaled, through ``[0]`` /
        ``.item()`` / ``float()``, or through the last assignment of a local name."""
        while True:
            if isinstance(expr, cst.Subscript):
                expr = expr.value
            elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                    expr.func.attr.value in ("item", "tolist") and not expr.args:
                expr = expr.func.value
            elif isinstance(expr, cst.Call) and call_name(expr) == "float" and len(expr.args) == 1:
                expr = expr.args[0].value
            else:
                break
        if isinstance(expr, cst.Name):
            if depth <= 0:
                return None
            fa = self.ctx.analysis
            fn = fa.enclosing_function(at)
            if fn is None:
                return None
            value = last_assignment(fn, expr.value, fa.line_of(at), fa.line_of)
            return None if value is None else self._folded_draw(value, value, depth - 1)
        calls = [n for n in walk(expr) if isinstance(n, cst.Call) and (
            call_name(n) in PURE_DRAWS or (call_name(n) == "rvs" and isinstance(n.func, cst.Attribute)
                                           and last_name(n.func.value) in ("laplace", "norm", "Laplace")))]
        if not calls or not (is_draw(expr) or calls[0] is expr or _rvs_scaled(expr)):
            return None
        draw = calls[0]
        if not zero_centred(draw) or self._constant_centre(draw, at):
            return None
        scale = [a.value for a in draw.args if a.keyword is None or a.keyword.value not in ("size", "shape", "loc",
                                                                                              "mean", "mu")]
        names = [n for a in scale for n in walk(a) if isinstance(n, (cst.Name, cst.Attribute))]
        outer = [n for n in walk(expr) if isinstance(n, cst.Name) and not any(n is m for m in walk(draw))]
        return draw if names or outer else None

    def _added(self, node: cst.Call) -> bool:
        """Does the folded draw reach a sum: an operand of ``+``/``-``/``+=``, a name later added, or the
        return value of a noise helper?"""
        fa = self.ctx.analysis
        cur: cst.CSTNode = node
        parent = fa.parent(cur)
        while isinstance(parent, (cst.Call, cst.Arg)) and (isinstance(parent, cst.Arg) or call_name(parent) in _WRAPS):
            cur, parent = parent, fa.parent(parent)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
            return True
        if isinstance(parent, cst.AugAssign) and isinstance(parent.operator, (cst.AddAssign, cst.SubtractAssign)):
            return True
        fn = fa.enclosing_function(node)
        if fn is None:
            return False
        if isinstance(parent, cst.Return):
            return bool(words(fn.name.value) & {"noise", "laplace", "gaussian", "perturb"})
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            var = parent.targets[0].target.value
            line = fa.line_of(parent)
            for n in walk(fn, into_scopes=False):
                if fa.line_of(n) <= line:
                    continue
                if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Add, cst.Subtract)) and any(
                        isinstance(side, cst.Name) and side.value == var for side in (n.left, n.right)):
                    return True
                if isinstance(n, cst.AugAssign) and isinstance(n.operator, (cst.AddAssign, cst.SubtractAssign)) \
                        and isinstance(n.value, cst.Name) and n.value.value == var:
                    return True
                if isinstance(n, cst.Return) and isinstance(n.value, cst.Name) and n.value.value == var:
                    return bool(words(fn.name.value) & {"noise", "laplace", "gaussian", "perturb"})
        return False

    def visit_ListComp(self, node: cst.ListComp) -> None:
        """``[0 if x < 0 else x for x in noise]`` / ``[max(0, x) for x in noise]``: the negative draws are cut
        to zero, so the noise is one-sided (a noisy count is never below the true count)."""
        comp = node.for_in
        if comp.inner_for_in is not None or not isinstance(comp.target, cst.Name) or node.for_in.ifs:
            return
        var = comp.target.value
        elt = node.elt
        one_sided = False
        if isinstance(elt, cst.IfExp) and isinstance(elt.test, cst.Comparison) and len(elt.test.comparisons) == 1:
            test, op = elt.test, elt.test.comparisons[0].operator
            sides = (test.left, test.comparisons[0].comparator)
            zero_branch = elt.body if isinstance(op, (cst.LessThan, cst.LessThanEqual)) else elt.orelse
            keep_branch = elt.orelse if zero_branch is elt.body else elt.body
            one_sided = isinstance(sides[0], cst.Name) and sides[0].value == var and _is_zero(sides[1]) \
                and isinstance(op, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)) \
                and _is_zero(zero_branch) and isinstance(keep_branch, cst.Name) and keep_branch.value == var
        elif isinstance(elt, cst.Call) and call_name(elt) == "max" and len(elt.args) == 2:
            values = [a.value for a in elt.args]
            one_sided = any(_is_zero(v) for v in values) and any(
                isinstance(v, cst.Name) and v.value == var for v in values)
        if not one_sided or not self._noise_source(comp.iter, node, depth=3):
            return
        code = self.ctx.analysis.code(comp.iter).strip()
        self.report(node, f"the negative draws of the noise `{code}` are set to 0 before it is added: the noise is "
                          f"one-sided, so a release below the true value is impossible for this input but possible "
                          f"for a neighbour and no ε holds; add the full zero-centred draw")

    def _noise_source(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int) -> bool:
        """A zero-centred draw, possibly through ``.tolist()`` and element-wise comprehensions (``[round(x) for x
        in noise]``) over earlier assignments of the same name."""
        while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value in ("tolist", "flatten", "ravel", "numpy") and not expr.args:
            expr = expr.func.value
        if isinstance(expr, cst.Call):
            return is_draw(expr) and (zero_centred(expr) or self._constant_centre(expr, at))
        if not isinstance(expr, cst.Name) or depth <= 0:
            return False
        fa = self.ctx.analysis
        fn = fa.enclosing_function(at) or self.ctx.module
        value = last_assignment(fn, expr.value, fa.line_of(at), fa.line_of)
        if value is None:
            return False
        if isinstance(value, cst.ListComp) and value.for_in.inner_for_in is None:
            return self._noise_source(value.for_in.iter, value, depth - 1)
        return self._noise_source(value, value, depth - 1)

    def _constant_centre(self, call: cst.Call, at: cst.CSTNode) -> bool:
        """``laplace(loc=mu, …)`` with ``mu`` assigned only numeric literals in the function: a fixed offset, not a
        data value the draw perturbs."""
        loc = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("loc", "mean", "mu")),
                   None)
        if not isinstance(loc, cst.Name):
            return False
        fn = self.ctx.analysis.enclosing_function(at) or self.ctx.module
        values = [n.value for n in walk(fn, into_scopes=False) if isinstance(n, cst.Assign) and any(
            isinstance(t.target, cst.Name) and t.target.value == loc.value for t in n.targets)]
        return bool(values) and all(isinstance(v, (cst.Integer, cst.Float)) for v in values)

    @staticmethod
    def _module_call(node: cst.Call) -> bool:
        """``np.clip(x, …)`` / ``torch.clamp(x, …)`` rather than ``x.clip(…)``."""
        base = node.func.value if isinstance(node.func, cst.Attribute) else None
        return isinstance(base, (cst.Name, cst.Attribute)) and (
            (isinstance(base, cst.Name) and base.value in ("np", "numpy", "torch", "tf", "jnp", "cp"))
            or (isinstance(base, cst.Attribute) and base.attr.value in ("math", "numpy", "experimental"))
        )

    def _draw(self, expr: cst.BaseExpression, at: cst.Call) -> cst.Call | None:
        """The zero-centred draw ``expr`` is (directly, scaled, or through its last assignment)."""
        value: cst.BaseExpression | None = expr
        if isinstance(expr, cst.Name):
            fa = self.ctx.analysis
            fn = fa.enclosing_function(at)
            if fn is None:
                return None
            value = last_assignment(fn, expr.value, fa.line_of(at), fa.line_of)
            # an augmented update in between (``noise += x``) makes it something else
            if value is None or any(
                    isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name) and n.target.value == expr.value
                    and fa.line_of(value) < fa.line_of(n) < fa.line_of(at) for n in walk(fn, into_scopes=False)):
                return None
        if value is None or not is_draw(value):
            return None
        calls = [n for n in walk(value) if isinstance(n, cst.Call) and is_draw(n)]
        return calls[0] if calls and zero_centred(calls[0]) else None

    @staticmethod
    def _noise_bound(subject: cst.BaseExpression, draw: cst.Call, clip: cst.Call) -> bool:
        """Is the clipped value noise rather than simulated data: named ``noise``, or clipped to a multiple
        of the draw's own scale (``np.clip(z, -3 * s, 3 * s)``)?"""
        name = last_name(subject)
        if name is not None and words(name) & {"noise", "noises"}:
            return True
        scale_names = {n.value for arg in draw.args for n in walk(arg.value) if isinstance(n, cst.Name)}
        bounds = [a.value for a in clip.args[1:]] if clip.args and clip.args[0].value is subject else list(
            a.value for a in clip.args)
        return any(isinstance(n, cst.Name) and n.value in scale_names for b in bounds for n in walk(b))


def _rvs_scaled(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)) and any(
        isinstance(side, cst.Call) and call_name(side) == "rvs" or _rvs_scaled(side) for side in (expr.left, expr.right))


def _is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and float(expr.value) == 0.0
