"""DP694: a private training/release is run again and again on the same data, each run at the full budget, and
the best run by a score is kept."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import dotted, loop_targets, string_text, walk, words
from dpcheck.rule import Rule

_EPS_WORDS = frozenset({"eps", "epsilon"})


def _names(expr: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(expr) if isinstance(n, cst.Name)}


def _targets(stmt: cst.CSTNode) -> set[str]:
    if isinstance(stmt, cst.Assign):
        return {n.value for t in stmt.targets for n in walk(t.target) if isinstance(n, cst.Name)}
    if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
        return {n.value for n in walk(stmt.target) if isinstance(n, cst.Name)}
    return set()


class BestOfRepeatedPrivateRuns(Rule):
    id = "DP694"
    name = "best-of-repeated-private-runs"
    category = "general"
    severity = "error"
    summary = ("a private run (given ε) is repeated in a `for _ in range(n)` loop on the same data and the run with "
               "the best score is kept: n runs are spent, and the selection itself is not private")
    rationale = (
        "Each call of a DP trainer or generator at budget ε on the data spends ε. Repeating it `iterations` times "
        "on the same data and keeping the output with the best score (`if perf > best_perf: synth = out.copy()`) "
        "spends up to n·ε by composition, and picking the maximum of the scores — usually computed on the "
        "private training data itself — is a further data-dependent choice no ε covers; the run still claims ε. "
        "Reported: in a `for … in range(…)` loop, a call given a budget (an `epsilon=`/`eps=` argument, an "
        "ε-named argument, or a dict built with an `'epsilon'` key) whose arguments do not depend on the loop "
        "variable, whose result (or a value derived from it in the loop) is kept under an `if` that compares "
        "with a `best…` name. Not reported: the loop variable changes the call (a sweep over ε, seeds or "
        "hyperparameters is a different question), results kept without a score. Fix: run once, or split ε "
        "across the runs and select privately (or on public data)."
    )
    TRIGGERS = ("best",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``for … in range(…)`` loop holding an ``if`` that compares with a ``best`` name."""
        for loop in facts.nodes(ast.For):
            it = loop.iter  # type: ignore[attr-defined]
            if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"):
                continue
            for sub in ast.walk(loop):
                if isinstance(sub, ast.If) and isinstance(sub.test, ast.Compare) and any(
                        isinstance(n, ast.Name) and "best" in n.id.lower() for n in ast.walk(sub.test)):
                    return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        self._budget_dicts: set[str] = set()
        for sub in walk(node):
            if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Dict):
                keys = " ".join(string_text(e.key) for e in sub.value.elements if isinstance(e, cst.DictElement))
                if words(keys.replace(" ", "_")) & _EPS_WORDS:
                    self._budget_dicts |= _targets(sub)
            elif isinstance(sub, cst.Assign):
                for t in sub.targets:
                    if isinstance(t.target, cst.Subscript) and isinstance(t.target.value, cst.Name) \
                            and words(string_text(t.target.slice[0]).replace(" ", "_") if t.target.slice else "") \
                            & _EPS_WORDS:
                        self._budget_dicts.add(t.target.value.value)

    def _private_call(self, call: cst.Call) -> bool:
        for arg in call.args:
            if arg.keyword is not None and words(arg.keyword.value) & _EPS_WORDS:
                return True
            d = dotted(arg.value)
            if d is not None and (words(d.rsplit(".", 1)[-1]) & _EPS_WORDS or d in self._budget_dicts):
                return True
        return False

    def visit_For(self, node: cst.For) -> None:
        it = node.iter
        if not (isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range"):
            return
        loop_vars = loop_targets(node)
        stmts = [s for s in walk(node.body, into_scopes=False)
                 if isinstance(s, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.If))]
        dependent = set(loop_vars)
        for i, stmt in enumerate(stmts):
            if not isinstance(stmt, cst.If) and stmt.value is not None and _names(stmt.value) & dependent:
                dependent |= _targets(stmt)
            if not (isinstance(stmt, cst.Assign) and isinstance(stmt.value, cst.Call)):
                continue
            call = stmt.value
            if not any(isinstance(c, cst.Call) and self._private_call(c) for c in walk(call)) \
                    or _names(call) & dependent:
                continue
            tainted = _targets(stmt)
            for later in stmts[i + 1:]:
                if isinstance(later, cst.If):
                    test_names = _names(later.test)
                    if isinstance(later.test, cst.Comparison) and any("best" in n.lower() for n in test_names):
                        kept = any(isinstance(s, cst.Assign) and _names(s.value) & tainted
                                   for s in walk(later.body, into_scopes=False))
                        if kept:
                            self.report(
                                stmt,
                                "this private run is repeated on the same data in every iteration and the best "
                                "one by a score is kept: the runs compose to n times the budget and the "
                                "selection is not private, yet the output claims one run's ε; run once or "
                                "split ε across the runs and select privately",
                            )
                            return
                elif _names(later.value if not isinstance(later, cst.If) and later.value is not None
                            else cst.Name("_")) & tainted:
                    tainted |= _targets(later)

    VALID = (
        # twin: one run at the full budget, no selection
        """
def main(train_data, args):
    params = {"epsilon": args.epsilon, "delta": args.delta, "k": args.k}
    synth = pategan(train_data, params)
    save(synth)
""",
        # twin: the budget is split across the runs and the selection uses public validation data
        """
def main(train_data, public_val, args):
    best_perf, synth = 0.0, None
    for it in range(args.iterations):
        params = {"epsilon": args.epsilon / args.iterations, "delta": args.delta / args.iterations, "seed": it}
        temp = pategan(train_data, params)
        perf = score(temp, public_val)
        if perf > best_perf:
            best_perf, synth = perf, temp
    return synth
""",
        # repeated runs only to report the mean score; nothing is selected
        """
def evaluate(data, eps, runs):
    scores = []
    for _ in range(runs):
        model = train_dp(data, epsilon=eps)
        scores.append(model.score(data))
    return sum(scores) / len(scores)
""",
        # ordinary ML: random restarts keep the best fit
        """
def fit_restarts(x, n_restarts):
    best_loss, best_model = float("inf"), None
    for _ in range(n_restarts):
        model = fit_kmeans(x, k=8)
        if model.loss < best_loss:
            best_loss, best_model = model.loss, model
    return best_model
""",
    )

    INVALID = (
        """
def main(train_data, args):
    params = {"epsilon": args.epsilon, "delta": args.delta, "k": args.k}
    best_perf = 0.0
    for it in range(args.iterations):
        temp = pategan(train_data, params)  # <-
        perf = auc_against(temp, train_data)
        if perf > best_perf:
            best_perf = perf
            synth = temp.copy()
    return synth
""",
        """
def generate(train, e, iterations):
    best_auc = 0.0
    for _ in range(iterations):
        model = learn_dp_model(train, epsilon=e)  # <-
        samples = sample_rows(model, len(train))
        auc = auc_on(samples, train)
        if auc > best_auc:
            best_auc = auc
            chosen = samples
    return chosen
""",
        """
def dp_synthesize(df, eps, tries):
    cfg = {}
    cfg["epsilon"] = eps
    best_score = -1
    best = None
    for t in range(tries):
        out = private_synthesizer(df, cfg).sample(len(df))  # <-
        s = fidelity(out, df)
        if s > best_score:
            best_score, best = s, out
    return best
""",
        """
class DPTrainer:
    def run(self, data):
        best_acc = 0
        for k in range(self.restarts):
            model = self.train_private(data, self.epsilon)  # <-
            acc = model.evaluate(data)
            if best_acc < acc:
                best_acc = acc
                self.model = model
""",
    )
