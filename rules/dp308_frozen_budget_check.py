"""DP308: a loop stops on a privacy budget whose spent value is never updated."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import number, param_names, walk, words
from dpcheck.rule import Rule

#: names of a spent privacy cost (what a stop test compares with the budget)
_SPENT_WORDS = frozenset({"eps", "epsilon", "delta", "spent", "privacy", "rdp", "budget", "loss"})
_NOT_SPENT = frozenset({"target", "max", "budget", "limit", "threshold", "goal", "total", "tol"})
_COMPARISONS = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)


def _spent_name(name: str) -> bool:
    """``delta``, ``eps_spent``, ``privacy_loss``: a spent cost, not the budget (``target_eps``, ``delta0``)."""
    pieces = words(name)
    if not pieces & _SPENT_WORDS or pieces & _NOT_SPENT or name[-1].isdigit() or name.startswith("_"):
        return False
    return not (pieces == {"loss"} or pieces & {"lr", "learning", "d", "g"})


def _constant(expr: cst.BaseExpression) -> bool:
    return number(expr) is not None or (isinstance(expr, cst.Name) and expr.value in ("None", "False", "True"))


def _ast_frozen(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``fn`` assigns a spent-named local only constants and compares it inside a loop."""
    stored: dict[str, bool] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    stored[t.id] = stored.get(t.id, True) and isinstance(node.value, ast.Constant)
                elif isinstance(t, ast.Tuple):
                    stored.update({e.id: False for e in t.elts if isinstance(e, ast.Name)})
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With, ast.NamedExpr)):
            stored.update({n.id: False for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)})
    frozen = {name for name, const in stored.items() if const and _spent_name(name)}
    if not frozen:
        return False
    return any(isinstance(loop, (ast.For, ast.While)) and any(
        isinstance(c, ast.Compare) and any(isinstance(n, ast.Name) and n.id in frozen for n in ast.walk(c))
        for c in ast.walk(loop)) for loop in ast.walk(fn))


class FrozenBudgetCheck(Rule):
    id = "DP308"
    name = "frozen-budget-check"
    category = "general"
    severity = "error"
    summary = "a training loop stops on a spent ε/δ that is only ever assigned a constant, so the budget check never fires"
    rationale = (
        "A budget stop (`if delta > delta0: break`, `while eps < target_eps:`) bounds the "
        "privacy loss only if the spent value it reads is re-computed from the accountant as "
        "training goes. When the function assigns that value only constants (`delta = 0` before "
        "the loop, the accountant call left as a TODO), the test compares the same constant every "
        "iteration: the stop never fires (or always does), training runs every epoch whatever it "
        "costs, and the (ε₀, δ₀) the code advertises is not enforced. "
        "Not reported: a spent value updated anywhere in the function (assignment from a call, "
        "`+=`, tuple unpacking, a loop target), attributes (`self.eps`, updated by other methods), "
        "parameters, globals, names of the budget itself (`target_eps`, `delta0`, `max_epsilon`), "
        "a comparison whose other side changes (`if _delta >= delta`: the frozen name is then the "
        "budget), comparisons outside loops, code with no DP context. "
        "Fix: update the spent value from the accountant inside the loop (after each step) before "
        "the stop test, or remove the stop and the (ε, δ) claim."
    )
    TRIGGERS = ("eps", "delta", "spent", "privacy")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a function assigning a spent-named local (``delta``, ``eps_spent``) only
        constants and comparing it inside a loop."""
        # a frozen name needs a ``name = <constant>`` in the function: only functions holding one are walked
        constant = facts.functions_holding([n for n in facts.nodes(ast.Assign) if isinstance(n.value, ast.Constant)
                                            and any(isinstance(t, ast.Name) and _spent_name(t.id) for t in n.targets)])
        return any(_ast_frozen(fn) for fn in facts.functions if id(fn) in constant)

    VALID = (
        # the spent δ is re-computed from the accountant every epoch
        """
def train(self, epochs, eps0, delta0, accountant):
    delta = 0
    for e in range(epochs):
        self.step()
        delta = accountant.get_privacy_spent(target_eps=eps0)[1]
        if delta > delta0:
            break
""",
        # accumulated with +=
        """
def run(queries, budget, epsilon_per_query):
    spent = 0.0
    for q in queries:
        if spent + epsilon_per_query > budget:
            break
        answer(q, epsilon_per_query)
        spent += epsilon_per_query
""",
        # an attribute updated by another method
        """
class Trainer:
    def fit(self, epochs, target_eps):
        self.eps = 0.0
        for _ in range(epochs):
            self.train_step()
            if self.eps > target_eps:
                break
""",
        # a tuple unpacking from the accountant
        """
def train(model, steps, q, sigma, orders, target_eps):
    eps = 0
    for step in range(steps):
        model.dp_step(sigma)
        eps, _ = apply_dp_sgd_analysis(q, sigma, step + 1, orders, 1e-5)
        if eps > target_eps:
            break
""",
        # the frozen name is the target δ; the spent δ is the loop's (tf-privacy's get_privacy_spent pairs)
        """
def main(priv_accountant, sess, steps, target_eps):
    delta = 1e-5
    for i in range(steps):
        sess.run(train_op)
        for _eps, _delta in priv_accountant.get_privacy_spent(sess, target_eps=target_eps):
            if _delta >= delta:
                return
""",
        # a loss compared with a tolerance (not a privacy cost)
        """
def fit(model, data, tol, epsilon):
    g_loss = 0.0
    for x in data:
        model.dp_step(x, epsilon)
        if g_loss < tol:
            break
""",
    )

    INVALID = (
        # dp-gan: delta starts at 0, the accountant is a TODO, the (eps0, delta0) stop never fires
        """
def train(self, X, epochs, eps0, delta0, tol, sigma):
    delta = 0
    for e in range(1, epochs + 1):
        self.train_D(X, sigma)
        self.train_G()
        # TODO: delta = request privacy with eps0
        if tol >= 0:
            if (delta > delta0) or self.converged(tol):  # <-
                break
""",
        # a while loop on a spent ε that is never re-computed
        """
def train(model, loader, target_epsilon, noise_multiplier):
    epsilon_spent = 0.0
    while epsilon_spent < target_epsilon:  # <-
        for x, y in loader:
            model.dp_step(x, y, noise_multiplier)
""",
        # a privacy-loss counter reset but never charged, checked before each release
        """
def answer_all(queries, data, budget, epsilon):
    privacy_loss = 0
    out = []
    for q in queries:
        if privacy_loss >= budget:  # <-
            break
        out.append(laplace_answer(q, data, epsilon))
    return out
""",
        # a stop test in a nested loop on an ε initialised to None
        """
def fit(self, data, epochs, eps_budget, sigma):
    eps = None
    for epoch in range(epochs):
        for batch in data:
            self.noisy_step(batch, sigma)
            if eps is not None and eps > eps_budget:  # <-
                return
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        frozen, varying = self._frozen_locals(node)
        if not frozen:
            return
        fa = self.ctx.analysis
        seen: set[str] = set()
        tests = {id(n) for w in walk(node.body, into_scopes=False) if isinstance(w, cst.While) for n in walk(w.test)}
        for sub in walk(node.body, into_scopes=False):
            if not isinstance(sub, cst.Comparison) or not any(isinstance(c.operator, _COMPARISONS)
                                                              for c in sub.comparisons):
                continue
            read = {n.value for n in walk(sub) if isinstance(n, cst.Name)}
            names = read & frozen
            if read & varying:
                continue  # ``_delta >= delta``: the frozen name is the budget a changing spent value is tested against
            if not names or not (fa.enclosing_loops(sub) or id(sub) in tests) or names <= seen:
                continue
            seen |= names
            name = sorted(names)[0]
            self.report(
                sub,
                f"`{name}` is only ever assigned a constant in `{node.name.value}`: this budget test compares the same "
                "value every iteration, so it never stops the training however much it spends; update the spent "
                "value from the accountant after each step before testing it",
            )

    @staticmethod
    def _frozen_locals(fn: cst.FunctionDef) -> tuple[set[str], set[str]]:
        """Spent-named locals whose every binding in ``fn`` is a plain assignment of a constant, and the locals
        bound to something else."""
        constant: dict[str, bool] = {}
        for sub in walk(fn.body, into_scopes=False):
            if isinstance(sub, cst.Assign):
                for target in sub.targets:
                    if isinstance(target.target, cst.Name):
                        name = target.target.value
                        constant[name] = constant.get(name, True) and _constant(sub.value)
                    else:
                        for n in walk(target.target):
                            if isinstance(n, cst.Name):
                                constant[n.value] = False
            elif isinstance(sub, (cst.AugAssign, cst.AnnAssign)) and isinstance(sub.target, cst.Name):
                constant[sub.target.value] = False
            elif isinstance(sub, (cst.For, cst.CompFor)):
                for n in walk(sub.target):
                    if isinstance(n, cst.Name):
                        constant[n.value] = False
            elif isinstance(sub, (cst.WithItem,)) and sub.asname is not None:
                for n in walk(sub.asname.name):
                    if isinstance(n, cst.Name):
                        constant[n.value] = False
            elif isinstance(sub, (cst.Global, cst.Nonlocal, cst.NamedExpr)):
                for n in walk(sub):
                    if isinstance(n, cst.Name):
                        constant[n.value] = False
        params = set(param_names(fn))
        frozen = {name for name, const in constant.items() if const and name not in params and _spent_name(name)}
        return frozen, {name for name, const in constant.items() if not const}
