"""DP524: noise redrawn in a loop until the noisy value lands in a range or region (rejection = truncation)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, number, target_names, walk, words
from dpcheck.rule import Rule

#: draws of a mechanism's noise (``random.gamma(2, 1/ε)`` is the planar Laplace radius)
_DRAWS = PURE_DRAWS | {"gamma", "gauss", "normalvariate", "expovariate"}
_ORDER = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


class NoiseRedrawnUntilInRange(Rule):
    id = "DP524"
    name = "noise-redrawn-until-in-range"
    category = "general"
    severity = "error"
    summary = "noise is redrawn until the noisy value falls in a range or region: the release is truncated noise"
    rationale = (
        "Redrawing the noise until `x + noise` lies inside the grid (or until `lo <= value <= hi`) releases a "
        "sample of the noise distribution conditioned on the output being in range. The conditioning "
        "renormalises the density by the probability mass that falls inside, which depends on the true value: "
        "near a border most of the mass is outside and the surviving outputs are pushed inwards, so the ratio "
        "of output densities at neighbouring inputs is no longer bounded by e^ε (and outputs near the border "
        "may be impossible under one input). It is the same failure as clipping the noise. "
        "Reported: a `while` loop that draws Laplace/Gaussian/planar noise scaled by a non-literal and "
        "continues (`while not inside(v)`, `while v < 0 or v > hi`) or breaks (`if inside(v): break`) on an "
        "ordering comparison or a predicate of a value computed from that draw. Not reported: exact samplers "
        "whose loop tests random bits (`if b == 1: break`), loops whose exit does not read the drawn value, "
        "draws with only literal scales (simulated data), code with no DP context. "
        "Fix: add the noise once and post-process the release (clip or project the noisy value to the range)."
    )
    TRIGGERS = ("while",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A ``while`` loop holding a noise draw."""
        return any(isinstance(c, ast.Call) and ast_call_name(c) in _DRAWS
                   for loop in facts.nodes(ast.While) for c in ast.walk(loop))

    VALID = (
        # the noisy value is clipped to the range once (post-processing)
        """
import numpy as np
def noisy_length(true_len, epsilon, max_len):
    noisy = true_len + np.random.laplace(0, 1 / epsilon)
    return int(np.clip(noisy, 1, max_len))
""",
        # an exact sampler's rejection loop tests a random bit, not the released value
        """
import numpy as np
def bernoulli_exp(gamma, rng):
    while True:
        k = rng.laplace(0, gamma)
        b = rng.binomial(1, 0.5)
        if b == 1:
            return k
""",
        # splitting a public total into positive parts with a unit spread (no privacy noise)
        """
import random
def split_total(total, m, eps):
    parts = []
    for i in range(m - 1):
        now = -1
        while now < 0 or total - now < 0:
            now = random.normalvariate(total / (m - i), 1)
        parts.append(now)
        total -= now
    return parts + [total]
""",
        # the twin: each cell gets one draw, the noisy matrix is clipped to >= 1 afterwards
        """
import numpy as np
def noisy_cells(matrix, cells, epsilon):
    b = 1 / epsilon
    for i, j in cells:
        matrix[i, j] = matrix[i, j] + np.random.laplace(0, b)
    return np.maximum(matrix, 1)
""",
        # a buffer of draws filled until it is full: the exit reads its length, not the values
        """
import numpy as np
def fill(buffer, n, sigma, epsilon):
    k = 0
    while len(buffer) < n:
        buffer[k] = np.random.normal(0, sigma / epsilon)
        k += 1
    return buffer
""",
        # a budget loop: the exit reads ε spent, not the noisy value
        """
import numpy as np
def release_until_spent(values, epsilon, step_eps):
    spent, out = 0.0, []
    while spent < epsilon:
        out.append(values + np.random.laplace(0, 1 / step_eps, values.shape))
        spent += step_eps
    return out
""",
    )

    INVALID = (
        # location privacy: planar noise redrawn until the perturbed point is inside the grid
        """
import numpy as np
def perturb_location(x, y, epsilon, grid):
    while True:  # <-
        theta = np.random.uniform(0, 2 * np.pi)
        r = np.random.gamma(2, 1 / epsilon)
        nx, ny = x + r * np.cos(theta), y + r * np.sin(theta)
        if grid.contains((nx, ny)):
            break
    return nx, ny
""",
        # a Laplace draw centred on the value, redrawn until it lies in [0, 2u]
        """
import numpy as np
def noisy_counts(u, sensitivity, eps, n):
    b = sensitivity / eps
    out = []
    for _ in range(n):
        v = np.random.laplace(u, b)
        while v > 2 * u or v < 0:  # <-
            v = np.random.laplace(u, b)
        out.append(v)
    return out
""",
        # Gaussian noise redrawn until the noisy count is non-negative
        """
import numpy as np
def noisy_count(count, epsilon, delta):
    sigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    noisy = count + np.random.normal(0, sigma)
    while noisy < 0:  # <-
        noisy = count + np.random.normal(0, sigma)
    return noisy
""",
        # noise added to a cell again and again until the cell is at least 1 (a random walk stopped in range)
        """
import numpy as np
def noisy_cells(matrix, cells, epsilon):
    b = 1 / epsilon
    for i, j in cells:
        value = 0
        while value < 1:  # <-
            matrix[i, j] = matrix[i, j] + np.random.laplace(0, b)
            value = matrix[i, j]
    return matrix
""",
        # the noise alone redrawn until it is small (a truncated distribution)
        """
import torch
def bounded_noise(shape, noise_multiplier, clip, limit):
    while True:  # <-
        z = torch.normal(0, noise_multiplier * clip, shape)
        if z.abs().max() <= limit:
            return z
""",
    )

    def visit_While(self, node: cst.While) -> None:
        fa = self.ctx.analysis
        drawn: set[str] = set()
        statements = [s for s in walk(node.body, into_scopes=False)
                      if isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign))]
        for _ in range(3):  # names computed from the draw, a few steps on
            for s in statements:
                value = s.value
                if value is None:
                    continue
                if any(isinstance(c, cst.Call) and call_name(c) in _DRAWS and self._scaled(c, node) for c in walk(value)) \
                        or any(isinstance(n, cst.Name) and n.value in drawn for n in walk(value)):
                    targets = [t.target for t in s.targets] if isinstance(s, cst.Assign) else [s.target]
                    for t in targets:
                        drawn |= target_names(t)
                        # ``cells[a, b] = cells[a, b] + noise``: the container now holds the noisy value
                        # (g3 2026-11-27: samadeusfp/SaCoFa adds noise again until the cell is >= 1)
                        if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name):
                            drawn.add(t.value.value)
        if not drawn or self._carries_state(node):
            return
        tests: list[cst.BaseExpression] = []
        if number(node.test) is None and not (isinstance(node.test, cst.Name) and node.test.value == "True"):
            tests.append(node.test)
        for s in walk(node.body, into_scopes=False):
            if isinstance(s, cst.If) and any(isinstance(x, (cst.Break, cst.Return)) for x in walk(s.body)):
                tests.append(s.test)
        if any(self._tests_value(t, drawn) for t in tests):
            self.report(node, "the noise is redrawn until the noisy value passes a range or region test: the "
                              "release is the noise conditioned on landing inside, whose normalisation depends on "
                              "the true value, so the ε of the mechanism does not hold; add the noise once and "
                              "clip or project the noisy value instead")

    @staticmethod
    def _loads(node: cst.CSTNode) -> set[str]:
        attrs = {id(n.attr) for n in walk(node) if isinstance(n, cst.Attribute)}
        return {n.value for n in walk(node) if isinstance(n, cst.Name) and id(n) not in attrs}

    def _carries_state(self, loop: cst.While) -> bool:
        """An iteration reads a name that an earlier iteration assigned (a counter, an iterate, a shrinking
        candidate set): the loop is a training, power-iteration or selection loop, not a fresh redraw."""
        assigned: set[str] = set()
        for s in walk(loop.body, into_scopes=False):
            if isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                assigned |= set().union(*(target_names(t.target) for t in s.targets)) if isinstance(s, cst.Assign) \
                    else target_names(s.target)
        seen: set[str] = set()
        for s in walk(loop.body, into_scopes=False):
            if isinstance(s, cst.Assign):
                reads, targets = self._loads(s.value), set().union(*(target_names(t.target) for t in s.targets))
            elif isinstance(s, cst.AugAssign):
                reads, targets = self._loads(s.value) | target_names(s.target), target_names(s.target)
            elif isinstance(s, cst.AnnAssign):
                reads, targets = self._loads(s.value) if s.value is not None else set(), target_names(s.target)
            elif isinstance(s, (cst.Expr, cst.Return)):
                reads, targets = self._loads(s), set()
            elif isinstance(s, (cst.If, cst.While)):
                reads, targets = self._loads(s.test), set()
            else:
                continue
            if (reads & assigned) - seen:
                return True
            seen |= targets
        return False

    def _scaled(self, draw: cst.Call, loop: cst.While) -> bool:
        """The draw's scale is not only literals: it reads ε, σ or a name not bound to a number."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(loop)
        literal_names: set[str] = set()
        if fn is not None:
            for s in walk(fn, into_scopes=False):
                if isinstance(s, cst.Assign) and number(s.value) is not None:
                    for t in s.targets:
                        literal_names |= target_names(t.target)
        args = [a.value for a in draw.args if a.keyword is None or a.keyword.value not in ("size", "shape")]
        scale = args[1:] if len(args) > 1 else args
        return any(isinstance(n, (cst.Name, cst.Attribute)) and not (isinstance(n, cst.Name)
                                                                    and n.value in literal_names)
                   for a in scale for n in walk(a)) and not any(
            number(a) is not None and call_name(draw) in ("normalvariate", "gauss", "normal") and len(args) >= 2
            and a is args[1] for a in args)

    @staticmethod
    def _tests_value(test: cst.BaseExpression, drawn: set[str]) -> bool:
        """An ordering comparison or a predicate call over a drawn value (not an equality test on random bits)."""
        for sub in walk(test):
            if isinstance(sub, cst.Comparison) and any(isinstance(c.operator, _ORDER) for c in sub.comparisons):
                if any(isinstance(n, cst.Name) and n.value in drawn for n in walk(sub)):
                    return True
            if isinstance(sub, cst.Call) and call_name(sub) not in ("len", "sum", "count") and any(isinstance(n, cst.Name) and n.value in drawn
                                                 for a in sub.args for n in walk(a.value)):
                return True
        return False
