"""DP675: the "other value" of generalized randomized response is drawn from a range one too short or too long."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astnames import walk as ast_walk
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: integer draws whose upper end is excluded
_EXCLUSIVE = frozenset({"randrange", "integers"})
#: every integer draw the rule reads
_DRAW_NAMES = _EXCLUSIVE | {"randint"}
#: receivers of a ``randint`` that excludes its upper end (numpy, torch, a numpy Generator/RandomState)
_EXCLUSIVE_OWNERS = frozenset({"np", "numpy", "torch", "rs", "random_state", "randomstate", "generator", "gen",
                               "prng", "npr", "nprandom"})


def _split(expr: cst.BaseExpression, code) -> tuple[str, int] | None:  # type: ignore[no-untyped-def]
    """``d - 2`` -> ("d", 2); ``d`` -> ("d", 0); a plain number -> None."""
    if number(expr) is not None:
        return None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Subtract, cst.Add)):
        off = number(expr.right)
        if off is not None and float(off).is_integer() and number(expr.left) is None:
            sign = 1 if isinstance(expr.operator, cst.Subtract) else -1
            return code(expr.left).strip(), int(off) * sign
        return None
    return code(expr).strip(), 0


class RandomizedResponseOtherValueRange(Rule):
    id = "DP675"
    name = "rr-other-value-range"
    category = "general"
    severity = "error"
    summary = ("generalized randomized response draws the replacement value from d-2 (or d) values instead of "
               "the d-1 values other than the true one")
    rationale = (
        "k-ary (generalized) randomized response keeps the true value with probability p and otherwise reports "
        "one of the other d-1 values uniformly. The usual code draws `j` from d-1 values and maps the collision "
        "away: `j = np.random.randint(0, d - 1)` (upper end excluded) then `if j == v: j = d - 1` or "
        "`if j >= v: j += 1`. With one value too few — numpy's `randint(0, d - 2)`, `randrange(0, d - 2)`, or "
        "Python's inclusive `random.randint(0, d - 3)` — some output (here d-2) is never drawn as a "
        "replacement, so it is reported only when it is the true value: seeing it reveals the input with "
        "certainty and the privacy loss is unbounded. With one too many (`random.randint(0, d - 1)` then the "
        "remap) the value d-1 gets twice the probability of the others and the ε of the formula does not hold. "
        "Reported: an integer draw into a name, then `if name == other:` (or `>=`) that remaps the name to "
        "`D - 1` or shifts it by one, where the draw covers a number of values other than D-1 (numpy/torch "
        "`randint`, `randrange`, `Generator.integers` exclude the upper end; `random.randint` includes it). "
        "Not reported: rejection loops that redraw, draws whose range cannot be read. Bad: "
        "`j = np.random.randint(0, d - 2); if j == v: j = d - 1`. Good: `j = np.random.randint(0, d - 1); "
        "if j == v: j = d - 1`. Fix: draw from exactly the d-1 values other than the true one."
    )
    TRIGGERS = ("randint", "randrange", "integers")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a name bound to an integer draw, then ``if name == v:`` (or ``>=``) whose body rebinds the
        name (the collision remap)."""
        if not facts.calls_any(_DRAW_NAMES):
            return False
        drawn: set[str] = set()
        for node in facts.nodes(ast.Assign):
            targets = node.targets  # type: ignore[attr-defined]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and any(
                    isinstance(c, ast.Call) and facts.call_lasts(c) & _DRAW_NAMES
                    for c in ast_walk(node.value)):  # type: ignore[attr-defined]
                drawn.add(targets[0].id)
        for node in facts.nodes(ast.If):
            test = node.test  # type: ignore[attr-defined]
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1
                    and isinstance(test.ops[0], (ast.Eq, ast.GtE))):
                continue
            names = {s.id for s in (test.left, test.comparators[0]) if isinstance(s, ast.Name) and s.id in drawn}
            for stmt in node.body:  # type: ignore[attr-defined]
                for sub in ast_walk(stmt):
                    if isinstance(sub, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names
                                                           for t in sub.targets) \
                            or isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) \
                            and sub.target.id in names:
                        return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        self._inclusive_bare = any(
            isinstance(s, cst.ImportFrom) and dotted(s.module) == "random" and not isinstance(s.names, cst.ImportStar)
            and any(isinstance(a.name, cst.Name) and a.name.value == "randint" for a in s.names)
            for s in walk(node))

    def _count(self, call: cst.Call) -> tuple[str, int] | None:
        """The draw's number of values as ``D - c`` -> (D, c); None when it cannot be read."""
        name = call_name(call)
        owner = dotted(call.func.value) if isinstance(call.func, cst.Attribute) else None
        if name == "randint":
            if owner == "random" or owner is None and self._inclusive_bare:
                inclusive = True
            elif owner is not None and {w.lower() for w in words(owner)} & _EXCLUSIVE_OWNERS:
                inclusive = False
            else:
                return None
        elif name in _EXCLUSIVE:
            inclusive = name == "integers" and any(
                a.keyword is not None and a.keyword.value == "endpoint" and dotted(a.value) == "True"
                for a in call.args)
        else:
            return None
        pos = [a.value for a in call.args if a.keyword is None and a.star == ""]
        kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        lo_e = kw.get("low", kw.get("a", pos[0] if len(pos) >= 2 else None))
        hi_e = kw.get("high", kw.get("b", pos[1] if len(pos) >= 2 else pos[0] if len(pos) == 1 and not (
            "low" in kw or "a" in kw) else None))
        if hi_e is None:
            return None
        lo = 0.0 if lo_e is None else number(lo_e)
        if lo is None or not float(lo).is_integer():
            return None
        split = _split(hi_e, self.ctx.analysis.code)
        if split is None:
            return None
        dom, off = split
        # values: exclusive hi - lo, inclusive hi - lo + 1 -> D - (off + lo - inclusive)
        return dom, off + int(lo) - (1 if inclusive else 0)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._scan(list(node.body))

    def _scan(self, stmts: list[cst.BaseStatement]) -> None:
        draws: dict[str, tuple[cst.CSTNode, cst.Call]] = {}
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                            and isinstance(small.targets[0].target, cst.Name):
                        target = small.targets[0].target.value
                        value = small.value
                        for _ in range(3):  # ``int(torch.randint(...))``, ``rng.integers(...).item()``
                            if isinstance(value, cst.Call) and call_name(value) == "int" and value.args:
                                value = value.args[0].value
                            elif isinstance(value, cst.Call) and call_name(value) == "item" \
                                    and isinstance(value.func, cst.Attribute):
                                value = value.func.value
                        if isinstance(value, cst.Call):
                            draws[target] = (stmt, value)
                        else:
                            draws.pop(target, None)
                continue
            if not isinstance(stmt, cst.If) or not isinstance(stmt.test, cst.Comparison) \
                    or len(stmt.test.comparisons) != 1:
                continue
            comp = stmt.test.comparisons[0]
            if not isinstance(comp.operator, (cst.Equal, cst.GreaterThanEqual)):
                continue
            sides = [stmt.test.left, comp.comparator]
            drawn = [s.value for s in sides if isinstance(s, cst.Name) and s.value in draws]
            if len(drawn) != 1 or any(number(s) is not None for s in sides):
                continue
            name = drawn[0]
            site, call = draws[name]
            count = self._count(call)
            if count is None:
                continue
            dom, missing = count
            remapped = False
            for sub in walk(stmt.body):
                if isinstance(sub, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == name for t in sub.targets):
                    to = _split(sub.value, self.ctx.analysis.code)
                    shifted = isinstance(sub.value, cst.BinaryOperation) and dotted(sub.value.left) == name
                    remapped = remapped or to == (dom, 1) or shifted
                elif isinstance(sub, cst.AugAssign) and isinstance(sub.target, cst.Name) \
                        and sub.target.value == name and number(sub.value) == 1:
                    remapped = True
                elif isinstance(sub, (cst.Call,)) and call_name(sub) in ("randint", "randrange", "integers"):
                    remapped = False  # a redraw: rejection sampling, not a remap
                    break
            if not remapped or missing == 1:
                continue
            drawn_values = f"{dom} - {missing}" if missing > 0 else f"{dom} + {-missing}" if missing else dom
            self.report(
                call,
                f"the replacement value is drawn from {drawn_values} values, then the collision with the true value "
                f"is remapped: generalized randomized response must choose among the {dom} - 1 values other than "
                "the true one, so one output now has probability 0 (or double) for some inputs and the ε of p/q does "
                f"not hold; draw from exactly {dom} - 1 values (numpy `randint(0, {dom} - 1)`, "
                f"`random.randint(0, {dom} - 2)`)",
            )

    VALID = (
        # twin of the torch case: num_classes - 1 values
        """
import math
import torch
def perturb_labels(labels, num_classes, epsilon):
    keep = math.exp(epsilon) / (math.exp(epsilon) + num_classes - 1)
    out = []
    for y in labels:
        if torch.rand(1).item() < keep:
            out.append(y)
            continue
        z = int(torch.randint(0, num_classes - 1, (1,)))
        if z == y:
            z = num_classes - 1
        out.append(z)
    return out
""",
        # twin: numpy randint excludes its upper end, d - 1 values, the collision sent to d - 1
        """
import numpy as np
class KRR:
    def __init__(self, epsilon, k):
        self.k = k
        self.p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    def respond(self, value):
        if np.random.rand() < self.p:
            return value
        other = np.random.randint(0, self.k - 1)
        if other == value:
            other = self.k - 1
        return other
""",
        # Python's random.randint includes its upper end: randint(0, d - 2) is d - 1 values; shift past the value
        """
import math
import random
def grr(value, d, epsilon):
    p = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
    if random.random() < p:
        return value
    out = random.randint(0, d - 2)
    if out >= value:
        out += 1
    return out
""",
        # rejection: redraw until it differs
        """
import numpy as np
def grr(value, d, epsilon):
    if np.random.rand() < np.exp(epsilon) / (np.exp(epsilon) + d - 1):
        return value
    out = np.random.randint(0, d)
    while out == value:
        out = np.random.randint(0, d)
    return out
""",
        # ordinary code: a random crop offset clamped to the image size, no randomized response
        """
import numpy as np
def crop_offset(width, size):
    x = np.random.randint(0, width - size)
    if x >= width:
        x = width - 1
    return x
""",
    )

    INVALID = (
        # numpy randint(0, d - 2) excludes d - 2: output d - 2 only ever comes from the true value d - 2
        """
import numpy as np
class KRR:
    def __init__(self, epsilon, k):
        self.k = k
        self.p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    def respond(self, value):
        if np.random.rand() < self.p:
            return value
        other = np.random.randint(0, self.k - 2)  # <-
        if other == value:
            other = self.k - 1
        return other
""",
        # Python's inclusive randint(0, d - 1) then the shift: d - 1 reachable twice
        """
import math
import random
def grr(value, d, epsilon):
    p = math.exp(epsilon) / (math.exp(epsilon) + d - 1)
    if random.random() < p:
        return value
    out = random.randint(0, d - 1)  # <-
    if out >= value:
        out += 1
    return out
""",
        # a numpy Generator's integers, one value short
        """
import numpy as np
def grr(value, domain_size, epsilon, rng):
    if rng.random() < np.exp(epsilon) / (np.exp(epsilon) + domain_size - 1):
        return value
    out = rng.integers(domain_size - 2)  # <-
    if out == value:
        out = domain_size - 1
    return out
""",
        # torch.randint excludes its upper end: d - 2 values with the collision sent to d - 1
        """
import math
import torch
def perturb_labels(labels, num_classes, epsilon):
    keep = math.exp(epsilon) / (math.exp(epsilon) + num_classes - 1)
    out = []
    for y in labels:
        if torch.rand(1).item() < keep:
            out.append(y)
            continue
        z = int(torch.randint(0, num_classes - 2, (1,)))  # <-
        if z == y:
            z = num_classes - 1
        out.append(z)
    return out
""",
    )
