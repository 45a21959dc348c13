"""DP846: values noised for a bounded sensitivity are clipped to the bounds only after the noise."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, refs, target_names, value_refs, walk, words
from dpcheck.rule import Rule

#: a noise draw, or a mechanism/helper call that perturbs a value
_NOISERS = frozenset({"laplace", "normal", "gauss", "randomise", "randomize", "add_laplace_noise",
                      "add_gaussian_noise", "add_noise", "laplace_mechanism", "gaussian_mechanism", "privatize",
                      "privatise", "perturb"})
_DRAWS = frozenset({"laplace", "normal", "gauss"})
_CLIPS = frozenset({"clip", "clamp", "clip_", "clamp_"})
#: words of a bound name
_BOUND_WORDS = frozenset({"lower", "upper", "low", "high", "lo", "hi", "min", "max", "bound", "bounds", "lb", "ub",
                          "minimum", "maximum", "floor", "ceil", "range"})


def _bound_name(expr: cst.BaseExpression) -> str | None:
    name = dotted(expr)
    if name is None or not words(name.split(".")[-1]) & _BOUND_WORDS:
        return None
    return name


class BoundsClippedOnlyAfterNoise(Rule):
    id = "DP846"
    name = "bounds-clipped-only-after-noise"
    category = "general"
    severity = "error"
    summary = "the raw values are noised and only the noisy result is clipped to [lower, upper]"
    rationale = (
        "A noise scale Δ/ε with Δ = upper − lower (or any fixed sensitivity) covers one record's change only when "
        "every value is first clipped into [lower, upper]. Clipping the noisy output to the bounds is harmless "
        "post-processing, but it does not bound the input: a record far outside the range moves the noisy value "
        "by far more than Δ, and the clip afterwards hides only part of that. Reported: in one function, a value "
        "is perturbed (a Laplace/Gaussian draw added to it, or a mechanism's `randomise(value)`, an "
        "`add_laplace_noise(values, …)` helper), and the noisy result is then clipped with `np.clip(noisy, lower, "
        "upper)` (or `.clip`/`clamp`) to bounds that also set the sensitivity (`sensitivity = upper - lower`) or "
        "are read from the data (`df[col].min()`), while nothing clips the raw values before the noise. "
        "Fix: clip the values to [lower, upper] before adding noise (and take the bounds from public knowledge, "
        "not from the data)."
    )
    TRIGGERS = ("clip", "clamp")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a clip after a noise call: the file needs both."""
        return facts.calls_any(_CLIPS) and facts.calls_any(_NOISERS)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        statements = [s for s in walk(node.body, into_scopes=False)
                      if isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign))]
        # the noisy names: targets of an assignment that perturbs an input value
        noisy: dict[str, int] = {}
        inputs: dict[str, int] = {}
        for st in statements:
            value = st.value
            if value is None:
                continue
            line = fa.line_of(st)
            perturbed = self._perturbed_inputs(value)
            if not perturbed and isinstance(st, cst.AugAssign) and isinstance(st.operator, cst.AddAssign) \
                    and self._has_draw(value):
                perturbed = value_refs(st.target)
            targets = target_names(st.target) if isinstance(st, (cst.AugAssign, cst.AnnAssign)) else set().union(
                *(target_names(t.target) for t in st.targets))
            raw_targets = [st.target] if not isinstance(st, cst.Assign) else [t.target for t in st.targets]
            # ``out[col] = noise(...)``: the subscripted container holds the noisy values
            raw_targets = [t.value if isinstance(t, cst.Subscript) else t for t in raw_targets]
            targets |= {d for d in (dotted(t) for t in raw_targets) if d}
            if perturbed:
                for t in targets:
                    noisy.setdefault(t, line)
                for i in perturbed:
                    inputs.setdefault(i, line)
            elif value_refs(value) & set(noisy):
                for t in targets:
                    noisy.setdefault(t, line)
        if not noisy or not inputs:
            return
        sensitivity_refs = self._sensitivity_refs(node)
        data_bounds = self._data_bounds(node)
        for call in walk(node.body, into_scopes=False):
            if not isinstance(call, cst.Call) or call_name(call) not in _CLIPS:
                continue
            clipped, bounds = self._clip_parts(call)
            if clipped is None or len(bounds) != 2:
                continue
            names = [_bound_name(b) for b in bounds]
            if any(n is None for n in names):
                continue
            line = fa.line_of(call)
            hit = value_refs(clipped) & set(noisy) | ({dotted(clipped)} & set(noisy))
            if not hit or not any(noisy[h] <= line for h in hit):
                continue
            if not (set(names) <= sensitivity_refs or set(names) & data_bounds):
                continue
            if self._clipped_before(node, inputs, min(noisy[h] for h in hit)):
                return
            self.report(call, f"the noisy values are clipped to [`{names[0]}`, `{names[1]}`] only after the noise "
                              f"was added; nothing clips the raw values to those bounds first, so one record outside "
                              f"them moves the noised value by more than the sensitivity the noise assumes: clip the "
                              f"inputs before adding noise")
            return

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _has_draw(expr: cst.BaseExpression) -> bool:
        return any(isinstance(n, cst.Call) and call_name(n) in _DRAWS for n in walk(expr))

    def _perturbed_inputs(self, value: cst.BaseExpression) -> set[str]:
        """Names of the values a noise call perturbs: ``x + laplace(...)``, ``mech.randomise(x)``,
        ``add_laplace_noise(x, s)``, ``[mech.randomise(v) for v in values]``."""
        out: set[str] = set()
        for n in walk(value):
            if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Add):
                for side, other in ((n.left, n.right), (n.right, n.left)):
                    if self._has_draw(side) and not self._has_draw(other):
                        out |= value_refs(other)
            if isinstance(n, cst.Call) and call_name(n) in _NOISERS - _DRAWS and n.args:
                out |= value_refs(n.args[0].value)
        if out and isinstance(value, (cst.ListComp, cst.GeneratorExp)) or any(
                isinstance(n, (cst.ListComp, cst.GeneratorExp)) for n in walk(value)):
            for comp in walk(value):
                if isinstance(comp, cst.CompFor):
                    out |= value_refs(comp.iter)
        return out

    @staticmethod
    def _clip_parts(call: cst.Call) -> tuple[cst.BaseExpression | None, list[cst.BaseExpression]]:
        args = [a.value for a in call.args]
        if isinstance(call.func, cst.Attribute) and dotted(call.func.value) not in ("np", "numpy", "torch", "tf"):
            return call.func.value, args[:2]
        if len(args) >= 3:
            return args[0], args[1:3]
        return None, []

    @staticmethod
    def _sensitivity_refs(fn: cst.FunctionDef) -> set[str]:
        """Names a ``sensitivity``/``delta_f`` is computed from (``sensitivity = upper - lower``)."""
        out: set[str] = set()
        for n in walk(fn.body, into_scopes=False):
            if isinstance(n, cst.Assign) and any(
                    words(d.split(".")[-1]) & {"sensitivity", "sens", "delta"}
                    for t in n.targets for d in [dotted(t.target) or ""] if d):
                if isinstance(n.value, cst.BinaryOperation) and isinstance(n.value.operator, cst.Subtract):
                    out |= {d for d in (dotted(n.value.left), dotted(n.value.right)) if d}
        return out

    @staticmethod
    def _data_bounds(fn: cst.FunctionDef) -> set[str]:
        """Bound names whose value (or default) is read from the data: ``lower = cfg.get('lower', df[c].min())``."""
        out: set[str] = set()
        for n in walk(fn.body, into_scopes=False):
            if isinstance(n, cst.Assign) and any(
                    isinstance(c, cst.Call) and call_name(c) in ("min", "max", "nanmin", "nanmax", "quantile",
                                                                  "percentile", "amin", "amax")
                    and isinstance(c.func, cst.Attribute) or isinstance(c, cst.Call)
                    and call_name(c) in ("nanmin", "nanmax", "amin", "amax", "percentile", "quantile")
                    for c in walk(n.value)):
                for t in n.targets:
                    d = dotted(t.target)
                    if d:
                        out.add(d)
        return out

    def _clipped_before(self, fn: cst.FunctionDef, inputs: dict[str, int], noise_line: int) -> bool:
        """Is any input clipped (``np.clip``, ``.clip``, ``clamp``, ``minimum``/``maximum``) before the noise?"""
        fa = self.ctx.analysis
        for n in walk(fn.body, into_scopes=False):
            # ``min(x, hi)`` with two arguments clips; ``df[col].min()`` only reads the data
            if isinstance(n, cst.Call) and (call_name(n) in _CLIPS | {"minimum", "maximum"}
                                            or call_name(n) in ("min", "max") and len(n.args) >= 2) \
                    and fa.line_of(n) <= noise_line and refs(n) & set(inputs):
                return True
            # ``raw = df[col].clip(lo, hi).values``: the input is bound to an already clipped value
            if isinstance(n, cst.Assign) and fa.line_of(n) <= noise_line and any(
                    target_names(t.target) & set(inputs) for t in n.targets) and any(
                    isinstance(c, cst.Call) and call_name(c) in _CLIPS for c in walk(n.value)):
                return True
        return False

    VALID = (
        # twin: the values are clipped to the bounds before the noise, and the noisy result again after
        """
import numpy as np
from diffprivlib.mechanisms import Laplace
def noisy_column(values, epsilon, lower, upper):
    sensitivity = upper - lower
    mech = Laplace(epsilon=epsilon, sensitivity=sensitivity)
    values = np.clip(values, lower, upper)
    noisy = np.array([mech.randomise(float(v)) for v in values])
    return np.clip(noisy, lower, upper)
""",
        # twin: a data-derived range, but the column is clamped first
        """
import numpy as np
def privatize(df, column, cfg, epsilon):
    low = cfg.get("low", 0.0)
    high = cfg.get("high", df[column].max())
    raw = df[column].clip(low, high).values
    out = raw + np.random.laplace(0, (high - low) / epsilon, raw.shape)
    return np.clip(out, low, high)
""",
        # twin of the torch case: the record vector is clamped before the Gaussian noise
        """
import torch
def release_vector(x, sigma, clip_min, clip_max):
    sensitivity = clip_max - clip_min
    x = torch.clamp(x, clip_min, clip_max)
    noisy = x + torch.normal(0.0, sigma * sensitivity, size=x.shape)
    return torch.clamp(noisy, clip_min, clip_max)
""",
        # ordinary ML: augmentation noise on images, clipped to the pixel range
        """
import numpy as np
def augment(images, sigma, pix_min, pix_max):
    noisy = images + np.random.normal(0, sigma, images.shape)
    return np.clip(noisy, pix_min, pix_max)
""",
    )
    INVALID = (
        """
import numpy as np
from diffprivlib.mechanisms import Laplace
def noisy_column(values, epsilon, lower, upper):
    sensitivity = upper - lower
    mech = Laplace(epsilon=epsilon, sensitivity=sensitivity)
    noisy = np.array([mech.randomise(float(v)) for v in values])
    return np.clip(noisy, lower, upper)  # <-
""",
        """
import numpy as np
def privatize(df, column, cfg, epsilon):
    low = cfg.get("low", df[column].min())
    high = cfg.get("high", df[column].max())
    raw = df[column].values
    out = raw + np.random.laplace(0, 1.0 / epsilon, raw.shape)
    return np.clip(out, low, high)  # <-
""",
        """
import numpy as np
class Release:
    def column(self, df, name, epsilon, lower_bound, upper_bound):
        sensitivity = upper_bound - lower_bound
        out = df.copy()
        out[name] = self.add_laplace_noise(df[name].values, sensitivity / epsilon)
        out[name] = np.clip(out[name], lower_bound, upper_bound)  # <-
        return out
""",
        """
import torch
def release_vector(x, sigma, clip_min, clip_max):
    sensitivity = clip_max - clip_min
    noisy = x + torch.normal(0.0, sigma * sensitivity, size=x.shape)
    return torch.clamp(noisy, clip_min, clip_max)  # <-
""",
    )
