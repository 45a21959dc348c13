"""DP698: a per-item budget is the total ε divided by the item's weight or probability (`eps / (w * n)`), so
every item gets at least the whole ε and the items together spend many times the total claimed."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.resolver import product_factors
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_BUDGET = frozenset({"epsilon", "eps", "budget"})
_NUMERIC = frozenset({"norm", "adam", "optimizer", "optim", "tol", "tolerance", "machine", "numerical", "stability",
                      "small", "float", "finfo", "attack", "adv"})
#: a vector of shares in (0, 1] that sum to one
_WEIGHTS = frozenset({"probs", "prob", "probabilities", "weights", "weight", "importance", "importances",
                      "shares", "share", "proportions", "fractions", "attention", "saliency"})
_NORMALISERS = frozenset({"softmax", "normalize", "normalise"})


def _budget(expr: cst.CSTNode) -> bool:
    name = dotted(expr)
    if name is None:
        return False
    pieces = words(name.rsplit(".", 1)[-1])
    return bool(pieces & _BUDGET) and not pieces & _NUMERIC


class BudgetDividedByWeight(Rule):
    id = "DP698"
    name = "budget-divided-by-weight"
    category = "general"
    severity = "error"
    summary = ("each item's ε is the budget divided by its weight or probability (`[eps / (w * n) for w in probs]`): "
               "an item of weight w < 1 gets more than ε, so the items together spend far more than the total")
    rationale = (
        "Splitting a budget ε over n items by importance weights w_i that sum to one gives item i the share "
        "ε·w_i, and the shares add up to ε by sequential composition. Dividing by the weight instead "
        "(`eps / w_i`, `eps / (w_i * n)`) gives every item at least ε under uniform weights (1/n · n = 1) and "
        "more than ε to every item of below-average weight, so a document of n tokens spends n·ε or more "
        "while the method claims ε in total (or ε/n per token). Reported: in a comprehension or loop over a "
        "vector named for weights or probabilities (`probs`, `weights`, `importance`, or a `softmax` "
        "result), an expression that divides a budget name by the loop's element. Not reported: the budget "
        "multiplied by the weight, divided by a count, a weight named loss/class weight with no budget. Fix: "
        "ε_i = ε·w_i (or ε/n for a uniform split)."
    )
    TRIGGERS = ("eps", "budget")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a division and a name of a weights vector iterated by a loop or comprehension."""
        if not facts.binops(ast.Div):
            return False
        iters = [n.iter for n in facts.nodes(ast.For, ast.comprehension)]  # type: ignore[attr-defined]
        return any(isinstance(it, (ast.Name, ast.Attribute, ast.Call)) for it in iters)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def _weights(self, it: cst.BaseExpression, scope: cst.CSTNode) -> bool:
        if isinstance(it, cst.Call) and call_name(it) == "zip":
            return any(self._weights(a.value, scope) for a in it.args)
        if isinstance(it, cst.Call) and call_name(it) in ("enumerate", "list", "tolist") and it.args:
            it = it.args[0].value
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and call_name(it) == "tolist":
            it = it.func.value
        name = dotted(it)
        if name is None:
            return False
        if words(name.rsplit(".", 1)[-1]) & _WEIGHTS:
            return True
        found = [b.value for b in self.ctx.analysis.bindings_in(scope).get(name, []) if b.value is not None]
        return bool(found) and all(isinstance(v, cst.Call) and call_name(v) in _NORMALISERS for v in found)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for loop in walk(node.body, into_scopes=False):
            if isinstance(loop, cst.CompFor):
                target, it, body = loop.target, loop.iter, self.ctx.analysis.parent(loop)
            elif isinstance(loop, cst.For):
                target, it, body = loop.target, loop.iter, loop.body
            else:
                continue
            if body is None or not self._weights(it, node):
                continue
            elems = {n.value for n in walk(target) if isinstance(n, cst.Name)}
            for n in walk(body, into_scopes=False):
                if not (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)):
                    continue
                parent = self.ctx.analysis.parent(n)
                if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Divide, cst.Multiply)):
                    continue  # the outermost quotient is read
                factors = product_factors(n)
                if not any(sign > 0 and _budget(f) for f, sign in factors):
                    continue
                if any(sign < 0 and dotted(f) in elems for f, sign in factors):
                    stmt = self.ctx.analysis.enclosing_statement(n)
                    self.report(stmt, f"`{self.ctx.analysis.code(n).strip()[:70]}` divides the budget by an "
                                      "item's weight: an item of weight w < 1 gets more than the budget (every "
                                      "item gets ε under uniform weights), so the items spend n·ε or more in "
                                      "total; give each item ε·w")
                    return

    VALID = (
        # twin: the budget multiplied by the weight
        """
def token_budgets(epsilon, probs):
    return [epsilon * w for w in probs]
""",
        # twin: a uniform split by the count
        """
import numpy as np
def split(eps, weights):
    scaled = np.asarray(weights) / np.sum(weights)
    return [eps * s for s in scaled], eps / len(weights)
""",
        # ordinary ML: a class-weighted loss divides by the class weight
        """
def balanced(losses, class_weights, eps=1e-8):
    return [l / (w + eps) for l, w in zip(losses, class_weights)]
""",
        # twin of the loop form: ε·w per token
        """
def perturb(tokens, epsilon, importance):
    out = []
    for tok, w in zip(tokens, importance):
        out.append(mechanism(tok, epsilon * w))
    return out
""",
    )

    INVALID = (
        """
import numpy as np
def token_budgets(epsilon, probs):
    return [epsilon / (w * len(probs)) for w in probs]  # <-
""",
        """
def assign(epsilon, weights, tokens):
    out = {}
    for w in weights:
        eps_i = epsilon / w  # <-
        out[w] = eps_i
    return out
""",
        """
import torch
def per_token(self, scores, epsilon):
    attn = torch.softmax(scores, dim=-1)
    return [self.epsilon / (a * attn.numel()) for a in attn]  # <-
""",
        """
def privatize_doc(words_, importance, epsilon):
    return [rewrite(t, epsilon / w) for t, w in zip(words_, importance)]  # <-
""",
    )
