"""DP824: record values are clipped to their range only after the noise is added; the noised input is unbounded."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, param_names, walk, words
from dpcheck.rule import Rule

#: draws of additive privacy noise
_DRAWS = frozenset({"laplace", "normal", "gauss", "gaussian", "normalvariate", "randn", "randn_like",
                    "standard_normal", "geometric", "discrete_laplace", "discrete_gaussian"})
#: words of a helper that adds privacy noise to the values it is given
_NOISE_HELPER_WORDS = frozenset({"laplace", "gaussian", "noise", "perturb", "privatize", "privatise", "noisy",
                                 "randomize", "randomise", "sanitize", "obfuscate"})
#: range clips
_CLIPS = frozenset({"clip", "clamp", "clip_by_value"})
#: words of a privacy calibration (the function must be one)
_DP_WORDS = frozenset({"eps", "epsilon", "sensitivity", "sens", "privacy", "private", "dp", "laplace", "budget",
                       "rho", "delta"})
#: a noised quantity that is a count, a frequency or a gradient: its bound is not a value range clip
_QUIET_WORDS = frozenset({"count", "counts", "hist", "histogram", "freq", "freqs", "frequency", "frequencies",
                          "tally", "votes", "vote", "num", "n", "cnt", "prob", "probs", "probability",
                          "probabilities", "grad", "grads", "gradient", "gradients", "weights", "weight", "param",
                          "params", "parameters", "image", "images", "img", "imgs", "pixel", "pixels", "latent", "z",
                          "logits", "embedding", "embeddings", "hidden", "noise", "model", "theta", "score",
                          "scores", "utility", "utilities", "rating", "ratings", "density", "corr", "correlation",
                          "ratio", "fraction", "rate", "proportion", "share", "accuracy", "xm", "x", "statistics",
                          "stats", "marginals", "answers"})


def _ident_words(expr: cst.CSTNode) -> set[str]:
    out: set[str] = set()
    for n in walk(expr):
        if isinstance(n, cst.Name):
            out |= words(n.value) | {n.value.lower()}
        elif isinstance(n, cst.SimpleString):
            out |= words(n.value.strip("'\"")) | {n.value.strip("'\"").lower()}
    return out


def _root(expr: cst.CSTNode) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript, cst.Call)):
        expr = expr.value if isinstance(expr, (cst.Attribute, cst.Subscript)) else expr.func
    return expr.value if isinstance(expr, cst.Name) else None


def _is_draw(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Call) and call_name(node) in _DRAWS and isinstance(node.func, cst.Attribute) \
        and (dotted(node.func.value) or "").split(".")[0] in ("np", "numpy", "random", "torch", "rng", "self", "tf",
                                                              "generator", "gen", "prng")


def _noise_helper(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call) or not node.args:
        return False
    name = call_name(node) or ""
    pieces = words(name)
    return bool(pieces & _NOISE_HELPER_WORDS) and name not in _DRAWS and not pieces & {"scale", "std", "sigma",
                                                                                        "generate", "sample"}


def _clip_parts(call: cst.Call) -> tuple[cst.BaseExpression, cst.BaseExpression, cst.BaseExpression] | None:
    """(clipped value, lower, upper) of ``np.clip(v, lo, hi)``, ``torch.clamp(v, lo, hi)``, ``v.clip(lo, hi)``,
    ``v.clip(lower=lo, upper=hi)``; None when a bound is missing or None."""
    name = call_name(call)
    if name not in _CLIPS or not isinstance(call.func, cst.Attribute):
        return None
    receiver = dotted(call.func.value) or ""
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    if receiver in ("np", "numpy", "torch", "tf", "jnp", "tf.clip_by_value"):
        if len(args) < 1:
            return None
        value, rest = args[0], args[1:]
    else:
        value, rest = call.func.value, args
    lo = rest[0] if rest else kw.get("lower", kw.get("min", kw.get("a_min", kw.get("clip_value_min"))))
    hi = rest[1] if len(rest) > 1 else kw.get("upper", kw.get("max", kw.get("a_max", kw.get("clip_value_max"))))
    if lo is None or hi is None or any(isinstance(b, cst.Name) and b.value == "None" for b in (lo, hi)):
        return None
    return value, lo, hi


class ValueClippedAfterNoise(Rule):
    id = "DP824"
    name = "value-clipped-after-noise"
    category = "general"
    severity = "error"
    summary = ("record values are clipped to [lower, upper] only after the noise is added: the values noised are "
               "never bounded, so the sensitivity the noise assumes is not enforced")
    rationale = (
        "Input perturbation (noise added to each record's value, to a column of a table, to a sum or a mean) is "
        "calibrated to a sensitivity that holds only if the values fed to the mechanism lie in a known range. "
        "Code that adds noise to the raw values and only afterwards clips the noisy result to [lower, upper] "
        "post-processes the output into the range but never bounds the input: a record outside the range moves "
        "the noised value by more than the sensitivity, and the ε claimed does not hold. Reported: in a function "
        "that calibrates privacy noise (ε, sensitivity, a Laplace/Gaussian helper), a value is assigned with "
        "noise (`v = x + np.random.laplace(...)`, `out[c] = self.add_laplace_noise(df[c].values, s)`) and later "
        "clipped with both bounds (`np.clip(v, lo, hi)`, `v.clip(lo, hi)`, `torch.clamp`), while the noised "
        "input was never clipped before. Quiet for counts, histograms, probabilities, ratings (bounded by their scale), "
        "gradients, images and latent vectors. Fix: clip the input to [lower, upper] before adding noise calibrated to that range "
        "(the clip of the output may stay as post-processing)."
    )
    TRIGGERS = ("clip", "clamp")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a range clip and a noise draw or a noise helper."""
        called = facts.called
        if not called & _CLIPS:
            return False
        return bool(called & _DRAWS) or any(words(c) & _NOISE_HELPER_WORDS for c in called)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        nodes = list(walk(node.body, into_scopes=False))
        dp_words = set()
        for p in param_names(node):
            dp_words |= words(p) | {p.lower()}
        dp_words |= words(node.name.value)
        noised: list[tuple[str, int, list[cst.BaseExpression]]] = []  # (target code, line, inputs)
        for sub in nodes:
            if not isinstance(sub, cst.Assign) or len(sub.targets) != 1:
                continue
            value = sub.value
            inputs: list[cst.BaseExpression] = []
            inner = self._helper_in_comprehension(value)
            if _noise_helper(value):
                inputs = [a.value for a in value.args[:1] if a.keyword is None]  # type: ignore[union-attr]
                dp_words |= words(call_name(value))  # type: ignore[arg-type]
            elif inner is not None:
                # ``np.array([mech.randomise(float(v)) for v in values])`` (diffprivlib, per record)
                inputs = [inner[1]]
                dp_words |= words(call_name(inner[0])) | {"dp"}
            elif isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
                left, right = value.left, value.right
                if any(_is_draw(n) for n in walk(right)) and not any(_is_draw(n) for n in walk(left)):
                    inputs = [left]
                elif any(_is_draw(n) for n in walk(left)) and not any(_is_draw(n) for n in walk(right)):
                    inputs = [right]
                for n in walk(value):
                    if isinstance(n, cst.Name):
                        dp_words |= words(n.value) | {n.value.lower()}
            if not inputs or any(isinstance(n, cst.Call) and call_name(n) in _CLIPS | {"minimum", "maximum"}
                                 for i in inputs for n in walk(i)):
                continue
            target = sub.targets[0].target
            if _ident_words(target) & _QUIET_WORDS or any(_ident_words(i) & _QUIET_WORDS for i in inputs):
                continue
            noised.append((fa.code(target), fa.line_of(sub), inputs))
        if not noised or not dp_words & _DP_WORDS:
            return
        for sub in nodes:
            if not isinstance(sub, cst.Call):
                continue
            parts = _clip_parts(sub)
            if parts is None:
                continue
            value, lo, hi = parts
            low, high = number(lo), number(hi)
            if high == 1.0 and low is not None and -1.0 <= low < 1.0:
                continue  # a normalised statistic, a pixel or a correlation: bounded by construction
            line = fa.line_of(sub)
            code = fa.code(value)
            for target, at, inputs in noised:
                if not (at < line and (code == target or code.startswith(target + "."))):
                    continue
                roots = {_root(i) for i in inputs} - {None}
                if self._clipped_before(nodes, roots, at):
                    continue
                shown = fa.code(inputs[0])[:40]
                self.report(sub, f"`{code[:40]}` is clipped to [{fa.code(lo)[:20]}, {fa.code(hi)[:20]}] only after "
                                 f"the noise was added to `{shown}` (line {at}), which is never clipped: the noised "
                                 f"values are unbounded and the sensitivity the noise assumes does not hold; clip the "
                                 f"input to the range before adding noise")
                break

    @staticmethod
    def _helper_in_comprehension(value: cst.BaseExpression) -> tuple[cst.Call, cst.BaseExpression] | None:
        """(noise helper call, iterated values) of a comprehension in ``value`` that noises each element."""
        for comp in walk(value):
            if not isinstance(comp, (cst.ListComp, cst.GeneratorExp)):
                continue
            for_in = comp.for_in
            targets = {n.value for n in walk(for_in.target) if isinstance(n, cst.Name)}
            for call in walk(comp.elt):
                if isinstance(call, cst.Call) and _noise_helper(call) and any(
                        isinstance(n, cst.Name) and n.value in targets for a in call.args for n in walk(a.value)):
                    return call, for_in.iter
        return None

    def _clipped_before(self, nodes: list[cst.CSTNode], roots: set[str], line_limit: int) -> bool:
        """Some clip before the noise (line ``line_limit``) names the noised input's root."""
        fa = self.ctx.analysis
        for n in nodes:
            if isinstance(n, cst.Call) and call_name(n) in _CLIPS | {"minimum", "maximum", "bound", "clip_values",
                                                                    "clip_data", "bounded"} \
                    and fa.line_of(n) <= line_limit:
                statement = fa.enclosing_statement(n)
                named = {m.value for m in walk(n) if isinstance(m, cst.Name)}
                if isinstance(statement, cst.Assign):
                    named |= {m.value for t in statement.targets for m in walk(t.target) if isinstance(m, cst.Name)}
                if named & roots:
                    return True
        return False

    VALID = (
        # twin: the values are clipped before the noise, the output clip is post-processing
        """
import numpy as np
class Perturber:
    def perturb_column(self, df, column, lower, upper, epsilon):
        values = np.clip(df[column].values, lower, upper)
        noisy = values + np.random.laplace(0, (upper - lower) / epsilon, len(values))
        df[column] = np.clip(noisy, lower, upper)
        return df
""",
        # twin of the helper case: the helper gets clipped values
        """
import numpy as np
class Release:
    def add_laplace_noise(self, value, sensitivity):
        return value + np.random.laplace(0, sensitivity / self.epsilon, np.shape(value))
    def apply(self, df, configs):
        out = df.copy()
        for column, cfg in configs.items():
            bounded = df[column].clip(cfg['lower'], cfg['upper'])
            out[column] = self.add_laplace_noise(bounded.values, cfg['upper'] - cfg['lower'])
            out[column] = np.clip(out[column], cfg['lower'], cfg['upper'])
        return out
""",
        # a noisy count clipped to [0, n]: the count's sensitivity is 1 by construction
        """
import numpy as np
def noisy_count(records, epsilon, n):
    count = len(records)
    noisy_count = count + np.random.laplace(0, 1 / epsilon)
    return np.clip(noisy_count, 0, n)
""",
        # ordinary ML: noise added to images for augmentation, clamped to the pixel range
        """
import torch
def augment(batch, sigma=0.1):
    noisy_batch = batch + torch.randn_like(batch) * sigma
    return torch.clamp(noisy_batch, 0.0, 1.0)
""",
        # twin of the torch case: the records are clamped first
        """
import torch
def private_release(values, epsilon, low, high):
    values = torch.clamp(values, low, high)
    released = values + torch.distributions.Laplace(0.0, (high - low) / epsilon).sample(values.shape)
    noisy_values = values + torch.normal(0.0, (high - low) / epsilon, size=values.shape)
    return noisy_values.clamp(low, high)
""",
        # twin of the per-record case: each value is clipped before it is randomised
        """
import numpy as np
from diffprivlib.mechanisms import Laplace
def privatize_column(values, epsilon, lower, upper):
    mech = Laplace(epsilon=epsilon, sensitivity=upper - lower)
    bounded = np.clip(values, lower, upper)
    noisy_values = np.array([mech.randomise(float(v)) for v in bounded])
    return np.clip(noisy_values, lower, upper)
""",
    )

    INVALID = (
        """
import numpy as np
class Perturber:
    def perturb_column(self, df, column, lower, upper, epsilon):
        values = df[column].values
        noisy = values + np.random.laplace(0, (upper - lower) / epsilon, len(values))
        df[column] = np.clip(noisy, lower, upper)  # <-
        return df
""",
        """
import numpy as np
class Release:
    def add_laplace_noise(self, value, sensitivity):
        return value + np.random.laplace(0, sensitivity / self.epsilon, np.shape(value))
    def apply(self, df, configs):
        out = df.copy()
        for column, cfg in configs.items():
            out[column] = self.add_laplace_noise(df[column].values, cfg['upper'] - cfg['lower'])
            out[column] = np.clip(out[column], cfg['lower'], cfg['upper'])  # <-
        return out
""",
        """
import numpy as np
def private_ages(ages, epsilon, lo=0, hi=100):
    released = ages + np.random.laplace(0, (hi - lo) / epsilon, len(ages))
    return released.clip(lo, hi)  # <-
""",
        """
import torch
def private_release(values, epsilon, low, high):
    noisy_values = values + torch.normal(0.0, (high - low) / epsilon, size=values.shape)
    return noisy_values.clamp(low, high)  # <-
""",
        """
import numpy as np
from diffprivlib.mechanisms import Laplace
def privatize_column(values, epsilon, lower, upper):
    mech = Laplace(epsilon=epsilon, sensitivity=upper - lower)
    noisy_values = np.array([mech.randomise(float(v)) for v in values])
    return np.clip(noisy_values, lower, upper)  # <-
""",
    )
