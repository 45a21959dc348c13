"""DP734: randomized response by multiplying with random ±1 signs is applied to the unscaled 0/1 data while
the module builds the ±1 version for it."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, number, param_names, walk
from dpcheck.rule import Rule


def _signs(expr: cst.CSTNode) -> bool:
    """``np.random.choice([1, -1], …)`` / ``choice([-1, 1])``: a draw of random signs."""
    for n in walk(expr):
        if isinstance(n, cst.Call) and call_name(n) == "choice" and n.args:
            first = n.args[0].value
            if isinstance(first, (cst.List, cst.Tuple)) and sorted(
                    (number(e.value) for e in first.elements), key=lambda v: v if v is not None else 0) == [-1.0, 1.0]:
                return True
    return False


def _root(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _scaled_from(expr: cst.BaseExpression) -> str | None:
    """``(x - 0.5) * 2`` / ``2 * x - 1`` / ``x * 2 - 1`` / ``2 * (x - 0.5)`` -> x."""
    if not isinstance(expr, cst.BinaryOperation):
        return None
    names = [n.value for n in walk(expr) if isinstance(n, cst.Name)]
    nums = sorted(v for n in walk(expr) if (v := number(n)) is not None and isinstance(n, (cst.Integer, cst.Float)))
    if len(names) == 1 and nums in ([0.5, 2.0], [1.0, 2.0]):
        return names[0]
    return None


class SignFlipResponseOnUnscaledBits(Rule):
    id = "DP734"
    name = "sign-flip-response-on-unscaled-bits"
    category = "general"
    severity = "error"
    summary = ("randomized response by multiplying with random ±1 signs is run on the 0/1 data instead of its "
               "±1 version: every 0 is reported exactly")
    rationale = (
        "Randomized response on a bit can be written as a multiplication: map the bit to ±1, multiply by a "
        "random sign that is +1 with probability e^ε/(e^ε+1), and de-bias. The multiplication flips the value "
        "only when the value is ±1: applied to the raw 0/1 data, every 0 stays exactly 0 whatever the sign, so a "
        "0 answer is released without noise and a ±1 answer reveals that the bit was 1. Reported: a call of a "
        "function that multiplies a parameter by a `choice([1, -1], …)` draw, passing data whose ±1 version "
        "(`(x - 0.5) * 2`, `2 * x - 1`) the module builds but does not pass (directly or through a row "
        "selection `x[idx]`). Fix: pass the ±1 data (`2 * x - 1`)."
    )
    TRIGGERS = ("choice",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``choice`` draw and both literals 1 and 2 (the ±1 scaling)."""
        return facts.calls_any(frozenset({"choice"})) and {1.0, 2.0} <= facts.numbers

    def visit_Module(self, node: cst.Module) -> None:
        flippers: dict[str, int] = {}
        for fn in walk(node):
            if not isinstance(fn, cst.FunctionDef):
                continue
            params = param_names(fn)
            sign_names = {last_name(t.target) for s in walk(fn.body, into_scopes=False)
                          if isinstance(s, cst.Assign) and _signs(s.value) for t in s.targets}
            sign_names.discard(None)
            for s in walk(fn.body, into_scopes=False):
                operands: list[cst.BaseExpression] = []
                if isinstance(s, cst.BinaryOperation) and isinstance(s.operator, cst.Multiply):
                    operands = [s.left, s.right]
                elif isinstance(s, cst.Call) and call_name(s) == "multiply" and len(s.args) == 2:
                    operands = [a.value for a in s.args]
                if len(operands) != 2:
                    continue
                names = [last_name(o) for o in operands]
                signed = [i for i, o in enumerate(operands) if names[i] in sign_names or _signs(o)]
                if len(signed) != 1:
                    continue
                other = names[1 - signed[0]]
                if other in params:
                    flippers[fn.name.value] = params.index(other) - (1 if params[0] in ("self", "cls") else 0)
        if not flippers:
            return
        scaled: set[str] = set()   # data names whose ±1 version exists
        derived: dict[str, str] = {}  # name -> the data it selects rows of (``xb = x[idx]``)
        for s in walk(node):
            if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name):
                source = _scaled_from(s.value)
                if source:
                    scaled.add(source)
                elif isinstance(s.value, cst.Subscript) and _root(s.value):
                    derived[s.targets[0].target.value] = _root(s.value)  # type: ignore[assignment]
        for s in walk(node):
            if not isinstance(s, cst.Call) or call_name(s) not in flippers:
                continue
            positional = [a for a in s.args if a.keyword is None]
            index = flippers[call_name(s)]
            if index >= len(positional):
                continue
            root = _root(positional[index].value)
            base = derived.get(root, root) if root else None
            if base in scaled:
                self.report(s, f"`{call_name(s)}` flips signs by multiplication, but `{root}` is the 0/1 data, not "
                               f"its ±1 version: every 0 is released exactly; pass the scaled data (2·x − 1)")

    VALID = (
        # twin: the ±1 rows are passed
        """
import numpy as np
def local_rr(p, epsilon):
    q = np.exp(epsilon) / (np.exp(epsilon) + 1)
    signs = np.random.choice([1, -1], size=p.shape, p=[q, 1 - q])
    return np.mean(p * signs, axis=0)
def run(p, epsilon):
    scaled = (p - 0.5) * 2
    idx = np.random.choice(p.shape[0], p.shape[0])
    boot = scaled[idx]
    return local_rr(boot, epsilon)
""",
        # twin: scaled inline, with np.multiply
        """
import numpy as np
def flip(bits, epsilon):
    q = np.exp(epsilon) / (np.exp(epsilon) + 1)
    s = np.random.choice([-1, 1], size=bits.shape, p=[1 - q, q])
    return np.multiply(bits, s)
def release(x, epsilon):
    pm = 2 * x - 1
    return flip(pm, epsilon).mean(axis=0)
""",
        # a Rademacher sketch on real-valued data (no 0/1 data scaled anywhere)
        """
import numpy as np
def sketch(v, k):
    s = np.random.choice([1, -1], size=(k, len(v)))
    return (s * v).sum(axis=1)
def run(v):
    return sketch(v, 16)
""",
        # ordinary ML: random horizontal flips as augmentation
        """
import numpy as np
def random_flip(batch):
    signs = np.random.choice([1, -1], size=len(batch))
    return batch * signs[:, None]
def augment(images):
    centred = 2 * images - 1
    return random_flip(centred)
""",
    )

    INVALID = (
        # the bootstrap rows of the raw 0/1 matrix are passed
        """
import numpy as np
def local_rr(p, epsilon):
    q = np.exp(epsilon) / (np.exp(epsilon) + 1)
    signs = np.random.choice([1, -1], size=p.shape, p=[q, 1 - q])
    return np.mean(p * signs, axis=0)
def run(p, epsilon):
    scaled = (p - 0.5) * 2
    idx = np.random.choice(p.shape[0], p.shape[0])
    boot = p[idx]
    return local_rr(boot, epsilon)  # <-
""",
        # np.multiply on the unscaled bits
        """
import numpy as np
def flip(bits, epsilon):
    q = np.exp(epsilon) / (np.exp(epsilon) + 1)
    s = np.random.choice([-1, 1], size=bits.shape, p=[1 - q, q])
    return np.multiply(bits, s)
def release(x, epsilon):
    pm = 2 * x - 1
    return flip(x, epsilon).mean(axis=0)  # <-
""",
        # a method flipping a column, called with the raw column
        """
import numpy as np
class Survey:
    def respond(self, answers, epsilon):
        q = np.exp(epsilon) / (1 + np.exp(epsilon))
        return answers * np.random.choice([1, -1], size=len(answers), p=[q, 1 - q])
    def run(self, answers, epsilon):
        signed = answers * 2 - 1
        return self.respond(answers, epsilon).mean()  # <-
""",
        # the scaled copy is used for the threshold only
        """
import numpy as np
def rr(x, eps):
    t = np.exp(eps) / (np.exp(eps) + 1)
    flips = np.random.choice([1, -1], size=x.shape, p=[t, 1 - t])
    return x * flips
def experiment(data, eps):
    data_pm = 2 * (data - 0.5)
    sample = data[np.random.choice(len(data), 100)]
    return rr(sample, eps).sum(axis=0), data_pm.shape  # <-
""",
    )
