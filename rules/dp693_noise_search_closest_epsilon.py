"""DP693: a noise search keeps the candidate whose ε is closest to the target (``min |ε(σ) − target|``), which
may be one whose ε exceeds the target."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

_EPS_WORDS = frozenset({"eps", "epsilon", "epsilons"})
_PICK = frozenset({"min", "argmin", "nanargmin", "idxmin", "sorted", "sort"})


def _eps_like(expr: cst.BaseExpression) -> bool:
    """An ε value: an ε-named name/attribute, or a call whose name (or a part of it) says ε/privacy."""
    if isinstance(expr, cst.Call):
        w = words(call_name(expr))
        return bool(w & (_EPS_WORDS | {"privacy", "spent", "rdp"}))
    d = dotted(expr)
    return d is not None and bool(words(d.rsplit(".", 1)[-1]) & _EPS_WORDS)


def _target_like(expr: cst.BaseExpression) -> bool:
    d = dotted(expr)
    if d is None:
        return False
    w = words(d.rsplit(".", 1)[-1])
    return bool(w & _EPS_WORDS) and bool(w & {"target", "goal", "desired", "budget", "max"})


class NoiseSearchClosestEpsilon(Rule):
    id = "DP693"
    name = "noise-search-closest-epsilon"
    category = "general"
    severity = "error"
    summary = ("a noise search picks the candidate whose ε is closest to the target (`min |ε(σ) − target|`): the "
               "chosen noise may give an ε above the target")
    rationale = (
        "Calibrating σ for a target ε means finding the smallest noise whose ε is at most the target. A search "
        "that ranks candidates by `abs(target_epsilon - eps(σ))` and keeps the minimum returns whichever "
        "candidate lands nearest, from above as often as from below: the chosen σ can spend more than the "
        "target ε that the run then claims. Reported: `abs(a - b)` where one side is a target-ε name "
        "(`target_epsilon`, `target_eps`) and the other an ε value or an ε-computing call, in a function that "
        "takes a `min` / `argmin` / `sorted` or compares the distance with `<`, and never compares an ε with "
        "the target directly (a filter `eps <= target_epsilon` makes the pick safe). Fix: keep only candidates "
        "with ε ≤ target and take the smallest noise among them (or bisect on the one-sided condition)."
    )
    TRIGGERS = ("abs",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is ``abs(x - y)`` with a subtraction inside, in a file that names a target ε."""
        if "abs" not in facts.called or not (facts.identifiers & {"target_epsilon", "target_eps", "targetEpsilon",
                                                                   "target_eps_", "eps_target", "epsilon_target"}
                                             or any("target" in i.lower() and "eps" in i.lower()
                                                    for i in facts.identifiers)):
            return False
        return any(call_name_ast(c) == "abs" and c.args and isinstance(c.args[0], ast.BinOp)
                   and isinstance(c.args[0].op, ast.Sub) for c in facts.calls)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body))
        # a comparison with a literal (``abs(eps - target) > 0.1``) is a tolerance check that warns, not a pick
        picks = any(isinstance(c, cst.Call) and call_name(c) in _PICK for c in body) or any(
            isinstance(c, cst.Comparison) and any(isinstance(t.operator, (cst.LessThan, cst.GreaterThan))
                                                  for t in c.comparisons)
            and not any(number(o) is not None for o in [c.left] + [t.comparator for t in c.comparisons])
            for c in body)
        if not picks:
            return
        targets: set[str] = set()
        hits: list[cst.Call] = []
        for c in body:
            if not (isinstance(c, cst.Call) and call_name(c) == "abs" and len(c.args) == 1):
                continue
            diff = c.args[0].value
            if not (isinstance(diff, cst.BinaryOperation) and isinstance(diff.operator, cst.Subtract)):
                continue
            for tgt, other in ((diff.left, diff.right), (diff.right, diff.left)):
                if _target_like(tgt) and _eps_like(other):
                    targets.add(dotted(tgt) or "")
                    hits.append(c)
                    break
        if not hits:
            return
        # a one-sided filter against the target makes the pick safe
        for comp in body:
            if isinstance(comp, cst.Comparison):
                operands = [comp.left] + [t.comparator for t in comp.comparisons]
                if any(dotted(o) in targets for o in operands):
                    return
        done = self.__dict__.setdefault("_done", set())
        for c in hits:
            if id(c) not in done:
                done.add(id(c))
                self.report(
                    c,
                    "the noise is chosen by the distance |ε − target| alone: the nearest candidate can have ε above "
                    "the target the run claims; keep only candidates with ε ≤ target and take the smallest noise",
                )

    VALID = (
        # twin: only candidates within the target are considered
        """
def find_noise(target_epsilon, max_noise, steps, n):
    best, best_diff = None, float("inf")
    for i in range(1, max_noise * steps):
        noise = i / steps
        eps = epsilon_for(noise, n)
        if eps <= target_epsilon:
            diff = abs(target_epsilon - eps)
            if diff < best_diff:
                best, best_diff = noise, diff
    return best
""",
        # twin: the smallest noise meeting the target
        """
def calibrate_sigma(target_eps, delta, q, steps):
    for sigma in [0.5 + 0.01 * k for k in range(1000)]:
        if compute_epsilon(sigma, q, steps, delta) <= target_eps:
            return sigma
    raise ValueError("no noise meets the target")
""",
        # the distance is only reported, nothing is picked by it
        """
def report_gap(engine, target_epsilon, delta):
    spent = engine.get_epsilon(delta)
    print("privacy gap", abs(target_epsilon - spent))
    return spent
""",
        # a summary only warns when the spent ε strays from the target; nothing is chosen by the distance
        """
def privacy_summary(log, target_epsilon, actual_epsilon, noise_multiplier):
    log.info("target %.3f, actual %.3f, sigma %.3f", target_epsilon, actual_epsilon, noise_multiplier)
    if abs(actual_epsilon - target_epsilon) > 0.1:
        log.warning("privacy level differs from the target")
""",
        # ordinary ML: a hyperparameter closest to a target loss
        """
def closest_lr(lrs, target_loss, run):
    return min(lrs, key=lambda lr: abs(run(lr) - target_loss))
""",
    )

    INVALID = (
        """
def find_noise(target_epsilon, max_noise, steps, n):
    diffs, by_diff = [], {}
    for i in range(1, max_noise * steps):
        noise = i / steps
        diff = abs(target_epsilon - epsilon_for(noise, n))  # <-
        diffs.append(diff)
        by_diff[diff] = noise
    return by_diff[min(diffs)]
""",
        """
import numpy as np
def pick_sigma(sigmas, target_eps, q, steps, delta):
    epsilons = [compute_epsilon(s, q, steps, delta) for s in sigmas]
    gaps = [abs(eps - target_eps) for eps in epsilons]  # <-
    return sigmas[int(np.argmin(gaps))]
""",
        """
from opacus.accountants import RDPAccountant
def choose_multiplier(candidates, target_epsilon, rate, steps, delta):
    def eps_of(sigma):
        acc = RDPAccountant()
        acc.history = [(sigma, rate, steps)]
        return acc.get_epsilon(delta)
    return min(candidates, key=lambda s: abs(eps_of(s) - target_epsilon))  # <-
""",
        """
def tune(self, grid):
    best_sigma, best_gap = None, 1e9
    for sigma in grid:
        gap = abs(self.target_epsilon - self.privacy_spent(sigma))  # <-
        if gap < best_gap:
            best_sigma, best_gap = sigma, gap
    self.sigma = best_sigma
""",
    )


def call_name_ast(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""
