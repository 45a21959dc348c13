"""DP680: the noise drawn for a release is returned or published beside the noisy value."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as call_name_ast
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, dotted, target_names, value_refs, walk, words
from dpcheck.rule import Rule

#: primitive random sources: a name bound from one of them is random
_RANDOM = frozenset(PURE_DRAWS | {"random", "rand", "uniform", "geometric", "exponential", "gamma", "integers",
                                  "randint", "poisson", "choice", "binomial", "lognormal"})
#: words of a user helper that draws noise (``_laplace_noise(rng, scale)``, ``sample_geometric(eps)``)
_NOISE_WORDS = frozenset({"noise", "laplace", "laplacian", "gaussian", "geometric", "gumbel"})
#: words saying a function is a privacy mechanism (its name, its class's name, its parameters and names)
#: an opt-in to get the noise back, off by default (``return_noise=False``): the module hands the noise out
#: only to a caller who asks for it for analysis, and its helpers' tuples feed that path
_NOISE_OPT_IN = re.compile(r"\b(?:return|output|keep|with|get)_noise\w*\s*(?::\s*bool\s*)?=\s*False\b")
_PRIVACY_WORDS = frozenset({"epsilon", "eps", "sensitivity", "privacy", "private", "dp", "obfuscated", "obfuscate",
                            "obfuscation", "laplace", "geometric", "mechanism", "privatize", "privatise",
                            "perturb", "perturbed", "geo", "indistinguishability", "release", "budget"})
#: wrappers that keep a noise value recoverable (its magnitude, its type)
_KEEP = frozenset({"abs", "fabs", "float", "int", "round", "item", "tolist", "copy", "absolute", "array"})


#: (T2 h48) words of a helper that returns a value with noise already added (``mean_with_noise_local``,
#: ``noisy_count``), not the draw itself
_NOISED_WORDS = frozenset({"noisy", "noised", "with"})


def _random_call(call: cst.Call) -> bool:
    name = call_name(call)
    return name in _RANDOM or bool(words(name) & _NOISE_WORDS) and not words(name) & _NOISED_WORDS


def _indicator(value: cst.BaseExpression) -> bool:
    """(T2 h48) ``1 if guess != truth else 0``, ``a > b``, ``bool(...)``: a 0/1 outcome computed from random
    values (an attack's hit or false positive), not a draw that can be subtracted from a release."""
    if isinstance(value, (cst.Comparison, cst.UnaryOperation)) and (
            isinstance(value, cst.Comparison) or isinstance(value.operator, cst.Not)):
        return True
    if isinstance(value, cst.BooleanOperation):
        return True
    if isinstance(value, cst.IfExp):
        return all(isinstance(b, (cst.Integer, cst.Float, cst.Name)) and (
            not isinstance(b, cst.Name) or b.value in ("True", "False", "None")) for b in (value.body, value.orelse))
    return isinstance(value, cst.Call) and call_name(value) == "bool"


def _statements(fn: cst.FunctionDef) -> list[cst.CSTNode]:
    return [n for n in walk(fn.body, into_scopes=False) if isinstance(n, (cst.Assign, cst.AugAssign, cst.Return))]


def _bare_noise(expr: cst.BaseExpression, noise: set[str]) -> str | None:
    """``noise``, ``abs(noise)``, ``np.abs(noise)``, ``noise.item()``, ``self.noise``: the exact draw."""
    while isinstance(expr, cst.Call):
        if call_name(expr) not in _KEEP:
            return None
        if expr.args:
            expr = expr.args[0].value
        elif isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            return None
    name = dotted(expr)
    return name if name in noise else None


class NoiseReleasedBesideOutput(Rule):
    id = "DP680"
    name = "noise-released-beside-output"
    category = "general"
    severity = "error"
    summary = ("the noise drawn for a release (or its magnitude) is returned, stored or published next to the "
               "noisy value, so the exact value is recovered by subtraction")
    rationale = (
        "A mechanism's output is private only because the noise is secret: `noisy = value + noise` hides `value` "
        "as long as `noise` is unknown. A mechanism that returns the draw with its output (`return noisy, noise`), "
        "that records the noise radius or `abs(noise)` as a 'quality loss' column next to the obfuscated value, or "
        "that keeps the draw in a release object whose `to_dict()` publishes it, hands out `value = noisy - "
        "noise` exactly (or one of two candidates `noisy ± |noise|`, or a circle of known radius around a noisy "
        "location). Reported: in a function with privacy vocabulary (ε, sensitivity, mechanism, obfuscation), a "
        "random draw added to a value, where a `return` holds both the noisy result and the draw itself (bare or "
        "through `abs`/`float`/`.item()`); a caller that unpacks such a tuple and keeps the noise part; a class "
        "built with `noise=<the draw>` whose dictionary form publishes `self.noise`. Not reported: functions "
        "without privacy vocabulary (a diffusion model's `return x_noisy, noise` training target). Fix: return "
        "only the noisy value; report utility as the expected error of the mechanism (a function of ε), never "
        "the realised draw."
    )
    TRIGGERS = ("return",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an addition, a ``return`` of a tuple/call/dict, and a random draw."""
        if not facts.nodes(ast.BinOp):
            return False
        if not any(isinstance(r.value, (ast.Tuple, ast.List, ast.Call, ast.Dict))  # type: ignore[attr-defined]
                   for r in facts.nodes(ast.Return)):
            return False
        return any(call_name_ast(c) in _RANDOM or bool(words(call_name_ast(c)) & _NOISE_WORDS)
                   for c in facts.nodes(ast.Call))

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._assigns: list[cst.Assign] = []
        #: function name -> positions of the noise in its returned tuple
        self._leaky: dict[str, set[int]] = {}
        #: (class name, keyword) built with the noise
        self._fields: set[tuple[str, str]] = set()
        self._classes: list[cst.ClassDef] = []
        self._class_stack: list[str] = []

    def visit_Module(self, node: cst.Module) -> None:
        self._opt_in = bool(_NOISE_OPT_IN.search(self.ctx.source))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)
        self._class_stack.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._class_stack.pop()

    def _privacy_flavoured(self, fn: cst.FunctionDef) -> bool:
        found: set[str] = set(words(fn.name.value))
        if self._class_stack:
            found |= words(self._class_stack[-1])
        for n in walk(fn):
            if isinstance(n, cst.Name):
                found |= words(n.value)
            elif isinstance(n, cst.Attribute):
                found |= words(n.attr.value)
        return bool(found & _PRIVACY_WORDS)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if getattr(self, "_opt_in", False):
            return
        stmts = _statements(node)
        random: set[str] = set()
        noise: set[str] = set()
        noisy: set[str] = set()
        for st in stmts:
            if not isinstance(st, (cst.Assign, cst.AugAssign)):
                continue
            targets: set[str] = set()
            for t in (st.targets if isinstance(st, cst.Assign) else [st]):
                targets |= target_names(t.target)
            value = st.value
            if _indicator(value):
                continue
            reads = value_refs(value)
            if isinstance(st, cst.AugAssign) and isinstance(st.operator, (cst.AddAssign, cst.SubtractAssign)):
                if reads & random and not targets & random:
                    noise |= reads & random
                    noisy |= targets
                    continue
            added = False
            for sub in walk(value):
                if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Add, cst.Subtract)):
                    left, right = value_refs(sub.left) & random, value_refs(sub.right) & random
                    if bool(left) != bool(right):
                        noise |= left | right
                        added = True
            if added:
                noisy |= targets
            elif reads & noisy:
                noisy |= targets
            elif any(isinstance(c, cst.Call) and _random_call(c) for c in walk(value)) or reads & random:
                random |= targets
        for st in stmts:
            if isinstance(st, cst.Return) and st.value is not None:
                for sub in walk(st.value):
                    if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Add, cst.Subtract)):
                        left, right = value_refs(sub.left) & random, value_refs(sub.right) & random
                        if bool(left) != bool(right):
                            noise |= left | right
                            noisy.add(id(sub))  # type: ignore[arg-type]
        if not noise or not self._privacy_flavoured(node):
            return
        for st in stmts:
            if not isinstance(st, cst.Return) or st.value is None:
                continue
            value = st.value
            keyword = None
            if isinstance(value, (cst.Tuple, cst.List)):
                items = [(None, e.value) for e in value.elements]
            elif isinstance(value, cst.Call):
                items = [(a.keyword.value if a.keyword else None, a.value) for a in value.args]
            elif isinstance(value, cst.Dict):
                items = [(None, e.value) for e in value.elements if isinstance(e, cst.DictElement)]
            else:
                continue
            leaked = [(i, k, _bare_noise(v, noise)) for i, (k, v) in enumerate(items)]
            leaked = [x for x in leaked if x[2]]
            others = [v for _, v in items if _bare_noise(v, noise) is None and (
                value_refs(v) & noisy or any(id(sub) in noisy for sub in walk(v)))]
            if not leaked or not others:
                continue
            what = leaked[0][2]
            self.report(st, f"the drawn noise `{what}` is returned beside the noisy value it was added to: whoever "
                            f"receives both recovers the exact value (noisy − {what}); return only the noisy value")
            if isinstance(value, (cst.Tuple, cst.List)):
                self._leaky.setdefault(node.name.value, set()).update(i for i, _, _ in leaked)
            if isinstance(value, cst.Call):
                for _, keyword, _ in leaked:
                    if keyword:
                        self._fields.add((call_name(value), keyword))

    def visit_Assign(self, node: cst.Assign) -> None:
        # recorded for leave_Module: callers unpacking a leaky function's tuple
        self._assigns.append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        if getattr(self, "_opt_in", False):
            return
        for node in self._assigns:
            if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
                continue
            positions = self._leaky.get(call_name(node.value))
            target = node.targets[0].target
            if not positions or not isinstance(target, (cst.Tuple, cst.List)):
                continue
            for i in sorted(positions):
                if i < len(target.elements) and isinstance(target.elements[i].value, cst.Name) \
                        and target.elements[i].value.value != "_":
                    self.report(node, f"`{target.elements[i].value.value}` is the exact noise "
                                      f"`{call_name(node.value)}` drew, kept beside the noisy output: storing or "
                                      "releasing it gives the exact value back")
                    break
        for cls in self._classes:
            fields = {k for c, k in self._fields if c == cls.name.value}
            if not fields:
                continue
            for n in walk(cls.body):
                if isinstance(n, cst.DictElement) and isinstance(n.value, cst.Attribute) \
                        and dotted(n.value) in {f"self.{f}" for f in fields}:
                    self.report(n, f"`{dotted(n.value)}` holds the drawn noise of the release and is published "
                                   "with its value: value − noise is the exact answer")

    VALID = (
        # (T2 h48) a simulated membership attack scores its guess on two noisy releases: the false-positive
        # indicator is a 0/1 outcome, not the noise of either release
        """
def score_guess(auditor, epsilon, group):
    noisy_in = auditor.noisy_total_with_noise(group, epsilon)
    noisy_out = auditor.total_with_noise_excluding(group, epsilon)
    guess = 1 if noisy_in > noisy_out else 0
    hit = 1 if guess == 1 else 0
    miss = 1 if guess != 1 else 0
    return {"hit": hit, "miss": miss, "balanced": (hit + (1 - miss)) / 2}
""",
        # ordinary ML: a dropout-style mask drawn and returned with the augmented batch's accuracy flag
        """
import numpy as np
def augment(batch, labels, model):
    jitter = np.random.normal(0.0, 0.05, batch.shape)
    correct = model.predict(batch + jitter) == labels
    return {"correct": correct.mean(), "n": len(labels)}
""",
        # the noise comes back only to a caller who opts in for analysis (off by default); the helper's
        # tuple feeds that path, the released word is the noisy one
        """
import numpy as np
class EmbeddingPerturber:
    def __init__(self, vectors, epsilon, return_noise=False):
        self.vectors, self.epsilon, self.return_noise = vectors, epsilon, return_noise
    def _noisy(self, vec):
        direction = np.random.normal(size=vec.shape)
        radius = np.random.gamma(vec.shape[0], 1 / self.epsilon)
        z = radius * direction / np.linalg.norm(direction)
        return vec + z, z
    def privatize(self, word):
        noisy, z = self._noisy(self.vectors[word])
        nearest = self.nearest(noisy)
        return (nearest, z) if self.return_noise else nearest
""",
        # twin: only the noisy value leaves the mechanism
        """
import numpy as np
class LaplaceObfuscator:
    def __init__(self, epsilon, sensitivity):
        self.epsilon, self.sensitivity = epsilon, sensitivity
    def obfuscate(self, value):
        noise = np.random.laplace(0.0, self.sensitivity / self.epsilon)
        return value + noise, self.sensitivity / self.epsilon
""",
        # twin: the release object keeps the scale, not the draw
        """
import numpy as np
from dataclasses import dataclass
@dataclass
class Release:
    value: float
    scale: float
    def as_dict(self):
        return {"value": self.value, "scale": self.scale}
def release_count(count, epsilon):
    scale = 1.0 / epsilon
    noise = np.random.laplace(0.0, scale)
    return Release(value=count + noise, scale=scale)
""",
        # twin of the geo case: the radius stays inside
        """
import math, random
def geo_point(x, y, epsilon):
    theta = random.random() * 2 * math.pi
    radius = random.gammavariate(2, 1 / epsilon)
    return x + radius * math.cos(theta), y + radius * math.sin(theta)
""",
        # ordinary ML: a diffusion step returns the noisy input and its noise target
        """
import torch
def q_sample(x_start, alphas_cumprod, t):
    noise = torch.randn_like(x_start)
    a = alphas_cumprod[t]
    x_noisy = a.sqrt() * x_start + (1 - a).sqrt() * noise
    return x_noisy, noise
""",
    )
    INVALID = (
        # (T2 h48) twin of the attack scorer: the helper draws raw noise and the release returns it beside the
        # noisy total together with a 0/1 flag
        """
import numpy as np
def laplace_noise(scale):
    return np.random.laplace(0.0, scale)
def release_total(values, epsilon):
    noise = laplace_noise(1.0 / epsilon)
    noisy = sum(values) + noise
    flagged = 1 if noisy > 100 else 0
    return {"total": noisy, "flag": flagged, "noise": noise}  # <-
""",
        # the absolute noise is returned as a 'quality loss' beside the obfuscated value
        """
import numpy as np
class LaplaceObfuscator:
    def __init__(self, epsilon, sensitivity):
        self.epsilon, self.sensitivity = epsilon, sensitivity
    def obfuscate(self, value):
        noise = np.random.laplace(0.0, self.sensitivity / self.epsilon)
        return value + noise, abs(noise)  # <-
""",
        # the release object is built with the draw and publishes it
        """
import numpy as np
from dataclasses import dataclass
@dataclass
class Release:
    value: float
    noise: float
    def as_dict(self):
        return {"value": self.value,
                "noise": self.noise}  # <-
def release_count(count, epsilon):
    noise = np.random.laplace(0.0, 1.0 / epsilon)
    noisy = count + noise
    return Release(value=noisy, noise=noise)  # <-
""",
        # geo-indistinguishability: the exact radius comes back and the caller stores it
        """
import math, random
class PlanarLaplace:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def radius(self, p):
        return -math.log(1 - p) / self.epsilon
    def point(self, x, y):
        theta = random.random() * 2 * math.pi
        r = self.radius(random.random())
        x2 = x + r * math.cos(theta)
        y2 = y + r * math.sin(theta)
        return x2, y2, r  # <-
    def run(self, points):
        out = []
        for x, y in points:
            ox, oy, loss = self.point(x, y)  # <-
            out.append((ox, oy, loss))
        return out
""",
        # augmented addition, noise returned as a dict value
        """
import numpy as np
def private_sum(values, epsilon, bound):
    total = float(np.clip(values, 0, bound).sum())
    draw = np.random.laplace(0.0, bound / epsilon)
    total += draw
    return {"sum": total, "noise": draw}  # <-
""",
    )
