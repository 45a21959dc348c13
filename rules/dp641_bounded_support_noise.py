"""DP641: a value 'perturbed' with uniform or random-integer noise of bounded support."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: draws with a bounded support (a uniform real or integer range)
_BOUNDED = frozenset({"randint", "integers", "uniform", "random_integers", "randrange"})
#: names of a function or a target that present the result as a private release
_PRIVACY = frozenset({"perturb", "perturbed", "perturbation", "private", "privatize", "privatise", "privatized",
                      "privatised", "privacy", "anonymize", "anonymise", "anonymized", "anonymised", "anonymous",
                      "obfuscate", "obfuscated", "sanitize", "sanitise", "sanitized", "sanitised", "dp", "ldp",
                      "privatizer", "perturber"})
#: an operand that is a position, an index or a seed, not a record's value
_NOT_VALUE = frozenset({"i", "j", "k", "idx", "index", "start", "offset", "pos", "position", "seed", "step", "epoch",
                        "t", "shift", "base", "low", "lo", "begin", "row", "col", "x0", "y0", "n", "len"})
_PARSE = frozenset({"float", "int", "round", "Decimal"})
_EPS = frozenset({"eps", "epsilon"})
#: a module about adversarial examples: ``x + uniform(-eps, eps)`` is PGD's random start there
_ADVERSARIAL = ("adversar", "pgd", "fgsm", "attack")


def _ranged(call: cst.Call) -> bool:
    """A draw with an explicit range: ``randint(1000)``, ``uniform(-5, 5)``, ``rng.integers(0, k)``; not
    ``uniform()``/``uniform(size=n)`` (a [0, 1) dequantisation or coin)."""
    name = call_name(call)
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value for a in call.args if a.keyword is not None}
    if name in ("randint", "integers", "random_integers", "randrange"):
        return bool(positional) or "high" in keywords
    return len(positional) >= 2 or {"low", "high"} <= keywords


def _eps_bounds(call: cst.Call) -> bool:
    """``uniform(-eps, eps)``: the range is an ε itself (an adversarial perturbation radius), not a DP scale."""
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.UnaryOperation):
            value = value.expression
        name = dotted(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        if name and words(name.split(".")[-1]) & _EPS:
            return True
    return False


def _parsed_token(expr: cst.BaseExpression) -> bool:
    """``float(word)``, ``round(float(tok))``, ``int(s)``: a number parsed from a record's text."""
    return isinstance(expr, cst.Call) and call_name(expr) in _PARSE and len(expr.args) >= 1 and (
        _parsed_token(expr.args[0].value) or (call_name(expr) != "round" and isinstance(
            expr.args[0].value, (cst.Name, cst.Attribute, cst.Subscript))))


class BoundedSupportNoise(Rule):
    id = "DP641"
    name = "bounded-support-noise"
    category = "general"
    severity = "error"
    summary = ("a value 'privatised' by adding uniform or random-integer noise of bounded support "
               "(`x + np.random.randint(1000)`, `age + random.uniform(-5, 5)`): no ε-DP guarantee")
    rationale = (
        "ε-differential privacy needs every output to be possible from neighbouring inputs with probabilities "
        "within a factor e^ε. Noise of bounded support — a uniform real on [a, b] or a random integer in "
        "[0, k) — shifts a value by at most b − a: an output near the edge of the range of one input is "
        "impossible for another (x + U[0, 1000) = 1005 rules out x = 0), so the ratio is infinite and the "
        "release is not ε-DP for any ε, however wide the range. Reported: a record's value plus (or minus) a "
        "ranged draw (`randint`, `integers`, `randrange`, `uniform(a, b)`) in a file with DP context, where the "
        "function or the assigned name presents the result as private (`perturb`, `privatize`, `anonymize`, "
        "`sanitize`, `dp`), or where a number parsed from a record's text (`float(word)`) is "
        "perturbed and written back as text (`str(round(float(w)) + np.random.randint(1000))`) in a module that "
        "names an ε. Not reported: "
        "`uniform()` without a range (dequantisation, coins), positions, indices, offsets and seeds, ranges that "
        "are an ε itself (`uniform(-eps, eps)`: an adversarial-example radius), modules about adversarial "
        "attacks. Bad: `noisy_age = age + np.random.randint(-5, 6)`. Good: "
        "`noisy_age = age + np.random.laplace(0, sensitivity / epsilon)` (or a geometric / discrete Laplace "
        "draw for integers) on a value clipped to the range the sensitivity assumes."
    )
    TRIGGERS = ("randint", "integers", "uniform", "randrange")
    requires_dp_context = False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        """A ranged draw in a file with DP context, or one that names a privacy budget (a text sanitiser's
        helper module whose only DP word is the ``eps`` of its mapping)."""
        return facts.calls_any(_BOUNDED) and (facts.may_have_dp_context or bool(facts.identifiers & _EPS))

    VALID = (
        # ordinary ML: an augmentation named 'randomize' beside Adam's eps (no DP context)
        """
import random
import torch
def randomize_shift(x):
    return x + random.uniform(-0.1, 0.1)
def make_opt(model):
    return torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-8)
""",
        # twin: numbers in text perturbed with a discrete Laplace (geometric difference) draw
        """
import numpy as np
def rewrite_tokens(sentences, eps):
    p = 1 - np.exp(-eps)
    out = []
    for s in sentences:
        toks = []
        for w in s.split():
            if w.isdigit():
                w = str(int(w) + np.random.geometric(p) - np.random.geometric(p))
            toks.append(w)
        out.append(" ".join(toks))
    return out
""",
        # twin: an age perturbed with Laplace noise on a clipped value
        """
import numpy as np
def perturb_age(age, epsilon, lo=0, hi=100):
    return float(np.clip(age, lo, hi)) + np.random.laplace(0, (hi - lo) / epsilon)
""",
        # ordinary ML: a random crop offset and dequantisation in a DP-SGD training script
        """
import numpy as np
from opacus import PrivacyEngine
def augment(img, size):
    start = np.random.randint(0, img.shape[0] - size)
    img = img[start:start + size] + np.random.uniform(size=(size,))
    return img
""",
        # ordinary ML: PGD's random start, a uniform ball of radius eps
        """
import torch
import numpy as np
def perturb(model, x, epsilon, sigma_dp):
    x_adv = x + np.random.uniform(-epsilon, epsilon, x.shape)
    return x_adv
""",
    )
    INVALID = (
        # numbers found in text replaced by the number plus a random integer in [0, 1000)
        """
import numpy as np
def rewrite(records, mapping, eps):
    out = []
    for rec in records:
        toks = []
        for w in rec.split():
            if w not in mapping:
                try:
                    w = str(round(float(w)) + np.random.randint(1000))  # <-
                except ValueError:
                    pass
            toks.append(w)
        out.append(" ".join(toks))
    return out
""",
        # an 'anonymised' age: uniform noise in [-5, 5]
        """
import random
def anonymize_age(age, epsilon):
    return age + random.uniform(-5, 5)  # <-
""",
        # a DP count released with a random integer offset
        """
import numpy as np
def dp_count(rows, epsilon, rng):
    true = len(rows)
    noisy_count = true + rng.integers(-10, 11)  # <-
    return noisy_count
""",
        # a perturbation helper with a torch integer draw
        """
import torch
def privatize_counts(hist, epsilon):
    return hist - torch.randint(-3, 4, hist.shape)  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> bool:
        text = self.ctx.analysis.code(node).lower()
        self._adversarial = any(a in text for a in _ADVERSARIAL)
        self._dp = self.ctx.analysis.has_dp_code()
        return True

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self._adversarial or not isinstance(node.operator, (cst.Add, cst.Subtract)):
            return
        for draw, value in ((node.right, node.left), (node.left, node.right)):
            if not isinstance(draw, cst.Call) or call_name(draw) not in _BOUNDED or not _ranged(draw):
                continue
            if _eps_bounds(draw) or self._position(value):
                continue
            if (self._dp and self._presented_private(node)) or (_parsed_token(value) and self._written_as_text(node)):
                self.report(node, f"`{self.ctx.analysis.code(node).strip()}` perturbs the value with "
                                  f"`{call_name(draw)}` noise of bounded support: outputs near the range's edge "
                                  f"are impossible for neighbouring values, so no ε-DP holds; use Laplace (or "
                                  f"geometric/discrete-Laplace) noise of scale Δ/ε on a value clipped to its range")
                return

    def _position(self, value: cst.BaseExpression) -> bool:
        """A literal, an index, an offset or a seed (``start + randint(k)``), not a record's value."""
        if number(value) is not None:
            return True
        if isinstance(value, (cst.Name, cst.Attribute)):
            return bool(words((dotted(value) or "").split(".")[-1]) & _NOT_VALUE)
        if isinstance(value, cst.BinaryOperation):
            return self._position(value.left) or self._position(value.right)
        return isinstance(value, cst.Call) and call_name(value) in ("len", "time", "randint", "integers")

    def _presented_private(self, node: cst.BinaryOperation) -> bool:
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is not None and words(fn.name.value) & _PRIVACY:
            return True
        parent = fa.parent(node)
        while parent is not None and not isinstance(parent, (cst.Assign, cst.Return, cst.SimpleStatementLine)):
            parent = fa.parent(parent)
        if isinstance(parent, cst.Assign):
            for target in parent.targets:
                name = dotted(target.target) if isinstance(target.target, (cst.Name, cst.Attribute)) else None
                if name and words(name.split(".")[-1]) & (_PRIVACY | {"noisy", "noised"}):
                    return True
        return False

    def _written_as_text(self, node: cst.BinaryOperation) -> bool:
        parent = self.ctx.analysis.parent(node)
        if isinstance(parent, cst.Arg):
            parent = self.ctx.analysis.parent(parent)
        return isinstance(parent, cst.Call) and call_name(parent) == "str"
