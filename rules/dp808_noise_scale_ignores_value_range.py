"""DP808: a noise helper receives the upper end of the values' range (`max`, `upper`) but scales its Laplace /
Gaussian noise as `1/epsilon`, i.e. sensitivity 1, whatever the range is."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, param_names, walk
from dpcheck.rule import Rule

_DRAWS = frozenset({"laplace", "normal", "gauss", "Laplace", "Normal"})
#: parameter names holding the top of the value range (or its width)
_RANGE_PARAMS = frozenset({"max", "max_val", "max_value", "maxval", "maxvalue", "upper", "upper_bound", "hi", "high",
                           "vmax", "max_range", "value_range", "data_range", "range_max", "ub", "max_num", "domain_max"})
_EPS_PARAMS = frozenset({"epsilon", "eps", "privacy_budget", "e", "ep", "budget"})


def _one_over_eps(expr: cst.BaseExpression, eps: set[str]) -> bool:
    """``1/epsilon``, ``1.0 / eps``: a literal numerator over the ε parameter."""
    return (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)
            and number(expr.left) is not None and isinstance(expr.right, cst.Name) and expr.right.value in eps)


class NoiseScaleIgnoresValueRange(Rule):
    id = "DP808"
    name = "noise-scale-ignores-value-range"
    category = "laplace_noise"
    severity = "error"
    summary = ("a noise helper takes the values' upper bound (`max`, `upper`) as a parameter but draws its noise "
               "with scale `1/epsilon`, ignoring it")
    rationale = (
        "When each value (or a sum of values) lies in [0, max], one record can change it by up to max, so Laplace "
        "noise for ε-DP needs scale max/ε (or (upper - lower)/ε). Helpers written for counts use `1/epsilon`; "
        "reused for values in a range (pixel intensities, ids in [0, 1023], ratings) they add noise max times too "
        "small, so the claimed ε is really about max·ε. The helper itself shows the range: it takes the upper "
        "bound as a parameter (to wrap or clip the output) and still scales by `1/epsilon`. Reported: in a "
        "function with an ε parameter and a parameter naming the range's top (`max`, `max_value`, `upper`, `hi`), "
        "a Laplace/Gaussian draw whose scale is a number over ε, when no value is divided by the range parameter. "
        "Bad: `np.random.laplace(0, 1.0/epsilon, n) % max`. Good: `np.random.laplace(0, max/epsilon, n)`. Fix: "
        "calibrate the scale to the range (upper - lower), or clip values so that 1 is their sensitivity."
    )
    TRIGGERS = ("laplace", "normal", "gauss", "Laplace", "Normal")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a function with a range parameter and an ε parameter, and a division."""
        if not facts.binops(ast.Div) or not facts.calls_any(_DRAWS):
            return False
        for fn in facts.functions:
            names = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
            if names & _RANGE_PARAMS and names & _EPS_PARAMS:
                return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = set(param_names(node))
        ranges = params & _RANGE_PARAMS
        eps = params & _EPS_PARAMS
        if not ranges or not eps:
            return
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) \
                    and isinstance(sub.right, cst.Name) and sub.right.value in ranges:
                return  # the values are normalised by the range first: sensitivity 1 is theirs
        for sub in walk(node.body, into_scopes=False):
            if not isinstance(sub, cst.Call) or call_name(sub) not in _DRAWS:
                continue
            positional = [a for a in sub.args if a.keyword is None]
            scale = next((a.value for a in sub.args if a.keyword is not None and a.keyword.value in ("scale", "b",
                                                                                                     "sigma")), None)
            if scale is None and len(positional) >= 2:
                scale = positional[1].value
            if scale is None or not _one_over_eps(scale, eps):
                continue
            self.report(
                sub,
                f"the noise scale `{self.ctx.module.code_for_node(scale)}` is sensitivity 1 although the values "
                f"range up to `{sorted(ranges)[0]}`: one record can move a value by the whole range, so the noise "
                f"is `{sorted(ranges)[0]}` times too small for the claimed ε. Scale by the range over ε",
            )

    VALID = (
        # twin: the scale is the range over epsilon
        """
import numpy as np
def laplace_values(values, n, max, epsilon=1):
    noise = np.random.laplace(0, max / epsilon, n).round()
    return (np.asarray(values) + noise) % max
""",
        # twin: values clipped to [0, 1] first, then 1/epsilon is right
        """
import numpy as np
def dp_ratings(ratings, epsilon, upper=5):
    scaled = np.clip(np.asarray(ratings) / upper, 0, 1)
    return upper * (scaled + np.random.laplace(0, 1.0 / epsilon, len(scaled)))
""",
        # a count helper: no range parameter, 1/epsilon is the count's sensitivity
        """
import numpy as np
def noisy_count(records, epsilon):
    return len(records) + np.random.laplace(0, 1.0 / epsilon)
""",
        # ordinary ML: a clamp range for augmentation noise, no epsilon
        """
import numpy as np
def jitter(image, hi=255, strength=1.0):
    return np.clip(image + np.random.normal(0, 1.0 / strength, image.shape), 0, hi)
""",
    )

    INVALID = (
        # values in [0, max) wrapped modulo max but perturbed with sensitivity 1
        """
import numpy as np
def laplace_mechanism(values, n, max, epsilon=1):
    noise = np.random.laplace(0, 1.0 / epsilon, n).round() % max  # <-
    return (np.asarray(values) + noise) % max
""",
        # pixel values with an upper bound parameter, clipped after noise
        """
import numpy as np
def privatize_pixels(img, epsilon, max_value=255):
    noisy = img + np.random.laplace(loc=0, scale=1 / epsilon, size=img.shape)  # <-
    return np.clip(noisy, 0, max_value)
""",
        # a bounded sum helper that ignores its bounds
        """
import numpy as np
def dp_sum(values, lower, upper, eps):
    total = float(np.clip(values, lower, upper).sum())
    return total + np.random.laplace(0.0, 1.0 / eps)  # <-
""",
        # Gaussian variant
        """
import numpy as np
def gaussian_ratings(ratings, epsilon, hi=5.0):
    return np.asarray(ratings) + np.random.normal(0, 2.0 / epsilon, len(ratings))  # <-
""",
    )
