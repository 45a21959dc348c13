"""DP665: the ε of a model built from several parties' private work reported as the (weighted) mean of their ε."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

_EPS_WORDS = frozenset({"eps", "epsilon", "epsilons", "epss", "budget", "budgets"})
#: words naming the parties a global model is built from
_PARTY_WORDS = frozenset({"client", "clients", "local", "locals", "party", "parties", "participant", "participants",
                          "silo", "silos", "worker", "workers", "device", "devices", "node", "nodes", "user", "users"})
#: words naming the combined model whose guarantee is claimed
_GLOBAL_WORDS = frozenset({"global", "server", "aggregated", "aggregate", "federated", "fed", "overall", "total"})
#: words of an ε that is a loss of the reporting, not a guarantee (a mean over repeated runs for a plot)
_REPORT_ONLY = frozenset({"plot", "avg_over_runs", "trial", "trials", "seed", "seeds", "run", "runs", "repeat"})
_MEANS = frozenset({"mean", "average", "nanmean", "fmean"})


def _eps_name(name: str | None) -> bool:
    return bool(name) and bool(words(name) & _EPS_WORDS) and "delta" not in words(name)


def _names(expr: cst.CSTNode) -> set[str]:
    return {n for sub in walk(expr) if isinstance(sub, (cst.Name, cst.Attribute))
            for n in [dotted(sub)] if n is not None}


class AveragedEpsilon(Rule):
    id = "DP665"
    name = "averaged-epsilon"
    category = "general"
    severity = "error"
    summary = ("the ε of a global model trained on several clients' data is reported as the (weighted) mean of "
               "the clients' ε, which is below the guarantee the model actually has")
    rationale = (
        "A federated or ensemble model built from clients that each ran a DP mechanism on their own records "
        "protects every record only at that record's client's ε (parallel composition over disjoint data), so "
        "the model's guarantee is the largest client ε (the sum when the same records are used by several "
        "parties), never an average. Reporting `sum(e * w for e, w in zip(local_eps, weights))` or "
        "`np.mean(client_epsilons)` as the global ε understates the privacy loss of the clients whose ε is "
        "above the mean. Reported: an assignment to, or a return from a function named for, a global/server ε "
        "of the mean (`np.mean`, `np.average`, `statistics.mean`), a weighted sum, or `sum(…) / len(…)` of a "
        "collection of per-client ε. Not reported: the maximum or the sum of the clients' ε, a mean over "
        "repeated runs or seeds (a report of an experiment, not a guarantee), means of other quantities. "
        "Bad: `global_eps = np.average(client_eps, weights=sizes)`. Good: `global_eps = max(client_eps)`."
    )
    TRIGGERS = ("eps", "budget")
    requires_dp_context = False

    VALID = (
        # twin: the global model's ε is the largest client ε (parallel composition over disjoint clients)
        """
def global_epsilon(local_epsilons, weights):
    return max(local_epsilons)
""",
        # twin: the clients share the records, so the ε add up
        """
import numpy as np
def server_eps(client_eps):
    return float(np.sum(client_eps))
""",
        # a mean over repeated runs of the same experiment, for a plot
        """
import numpy as np
def summarise(run_epsilons, accuracies):
    mean_eps_over_runs = np.mean(run_epsilons)
    return mean_eps_over_runs, np.mean(accuracies)
""",
        # ordinary ML: Adam's eps averaged over parameter groups, a per-client loss averaged
        """
import numpy as np
def log_round(client_losses, client_sizes, groups):
    global_loss = np.average(client_losses, weights=client_sizes)
    mean_eps = np.mean([g["eps"] for g in groups])
    return global_loss, mean_eps
""",
    )
    INVALID = (
        # the global model's ε as the data-weighted average of the local ε
        """
def global_epsilon(local_epsilons, weights):
    if not local_epsilons:
        return None
    total = sum(e * w for e, w in zip(local_epsilons, weights))  # <-
    return total
""",
        """
import numpy as np
def summarise_round(client_eps, sizes):
    global_eps = np.average(client_eps, weights=sizes)  # <-
    return {"global_epsilon": global_eps}
""",
        """
import statistics
class Server:
    def report(self):
        self.global_epsilon = statistics.mean(c.epsilon for c in self.clients)  # <-
        return self.global_epsilon
""",
        """
def server_budget(client_budgets):
    return sum(client_budgets) / len(client_budgets)  # <-
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an average: a mean-like call, a (weighted) sum, or a division (``sum(e) / len(e)``)."""
        averages = _MEANS | {"sum", "fsum"}
        return bool(facts.binops(ast.Div)) or any(facts.call_lasts(c) & averages for c in facts.calls)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = dotted(node.targets[0].target)
        fn = self.ctx.analysis.enclosing_function(node)
        fn_name = fn.name.value if fn is not None else ""
        if not target:
            return
        # ``global_eps = …``; or ``total = …`` returned by ``def global_epsilon(…)``
        if _eps_name(target) and words(target) & _GLOBAL_WORDS:
            self._check(node.value, node.value)
        elif fn is not None and _eps_name(fn_name) and words(fn_name) & _GLOBAL_WORDS and "." not in target \
                and self._returned(fn, target):
            self._check(node.value, node.value)

    def visit_Return(self, node: cst.Return) -> None:
        fn = self.ctx.analysis.enclosing_function(node)
        if node.value is None or fn is None:
            return
        if _eps_name(fn.name.value) and words(fn.name.value) & _GLOBAL_WORDS:
            self._check(node.value, node.value)

    @staticmethod
    def _returned(fn: cst.FunctionDef, name: str) -> bool:
        return any(isinstance(sub, cst.Return) and isinstance(sub.value, cst.Name) and sub.value.value == name
                   for sub in walk(fn))

    def _check(self, value: cst.BaseExpression, at: cst.CSTNode) -> None:
        collection = self._averaged(value)
        if collection is None:
            return
        pieces = set().union(*(words(n.replace(".", "_")) for n in collection)) if collection else set()
        if not (pieces & _EPS_WORDS and pieces & _PARTY_WORDS) or pieces & _REPORT_ONLY:
            return
        self.report(at, f"the global ε is the mean of the per-client ε `{self.ctx.analysis.code(value).strip()[:60]}`:"
                        f" the model guarantees only the largest client ε (their sum when clients share records), "
                        f"so the mean understates the loss; report `max(…)` of the clients' ε")

    def _averaged(self, value: cst.BaseExpression) -> set[str] | None:
        """The names the mean is taken over: ``np.mean(xs)``, ``np.average(xs, weights=w)``, ``sum(xs) / len(xs)``,
        ``sum(e * w for e, w in zip(xs, ws))``. None when ``value`` is no mean."""
        if isinstance(value, cst.Call):
            name = call_name(value)
            if name in _MEANS and value.args:
                return _names(value.args[0].value)
            if name == "sum" and len(value.args) == 1 and isinstance(value.args[0].value, cst.GeneratorExp):
                gen = value.args[0].value
                if isinstance(gen.elt, cst.BinaryOperation) and isinstance(gen.elt.operator, cst.Multiply):
                    it = gen.for_in.iter
                    if isinstance(it, cst.Call) and call_name(it) == "zip":
                        return _names(it)
            return None
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide) \
                and isinstance(value.left, cst.Call) and call_name(value.left) == "sum" \
                and isinstance(value.right, cst.Call) and call_name(value.right) == "len":
            return _names(value.left)
        return None
