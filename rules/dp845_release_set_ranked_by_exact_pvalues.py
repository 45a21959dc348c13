"""DP845: the items that get randomized and released are the top k of a ranking by exact p-values of the
private cohort."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words of a key holding exact association test results
_PVALUE = frozenset({"pval", "pvals", "pvalue", "pvalues", "p_val", "p_value", "p_values", "pv"})
#: words of a call that randomizes / privatizes what it is given
_PRIVATIZE = frozenset({"noisy", "noise", "randomized", "randomize", "randomise", "perturb", "perturbed", "private",
                        "privatize", "privatise", "dp", "laplace", "gaussian", "rr", "ldp", "obfuscate"})
#: calls that write a result out
_SAVE = frozenset({"csv", "save", "savetxt", "write", "dump", "json", "parquet", "pickle", "send", "publish",
                   "upload", "excel", "hdf"})


def _pvalue_key(node: cst.CSTNode) -> bool:
    for n in walk(node):
        text = None
        if isinstance(n, cst.SimpleString):
            text = str(n.evaluated_value)
        elif isinstance(n, (cst.Name, cst.Attribute)):
            text = (dotted(n) or "").split(".")[-1]
        if text is None:
            continue
        low = text.lower()
        if low in _PVALUE or words(text) & _PVALUE or low.replace("-", "_") in ("p_val", "p_value", "p_values"):
            return True
    return False


def _ranking(value: cst.BaseExpression) -> bool:
    """``df.sort_values(by="p_val")``, ``np.argsort(pvals)``, ``sorted(..., key=lambda r: r.pvalue)``,
    ``df.nsmallest(k, "p_value")``."""
    for n in walk(value):
        if not isinstance(n, cst.Call):
            continue
        name = call_name(n)
        if name in ("sort_values", "nsmallest", "argsort", "sorted", "sort_index", "argpartition") \
                and any(_pvalue_key(a.value) for a in n.args):
            return True
        if name in ("argsort", "argpartition") and isinstance(n.func, cst.Attribute) and _pvalue_key(n.func.value):
            return True
    return False


class ReleaseSetRankedByExactPvalues(Rule):
    id = "DP845"
    name = "release-set-ranked-by-exact-pvalues"
    category = "general"
    severity = "error"
    summary = ("the items that are randomized and released (SNPs, features) are the top k of a ranking by exact "
               "p-values of the private data")
    rationale = (
        "Randomized response or noise protects the values it perturbs, not the choice of what is perturbed. When "
        "the released items (the k SNPs of a 'noisy dataset', the features kept) and their order are picked by "
        "exact association p-values computed on the same private cohort, the release reveals which items are "
        "most associated with the phenotype in this cohort, outside any ε; one participant can move an item in "
        "or out of the top k. Reported: a ranking by a p-value key (`df.sort_values(by='p_val')`, "
        "`np.argsort(pvals)`, `nsmallest(k, 'p_value')`) whose result, sliced to the top k (directly or through "
        "`reindex`/`iloc`/`loc` of another frame), is passed to a randomizing or privatizing call. Good: select "
        "the items with a private selection (report-noisy-min, exponential mechanism) charged to the budget, or "
        "from public data."
    )
    TRIGGERS = ("val", "pv", "p_")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a sorting call and a slice."""
        return facts.calls_any({"sort_values", "nsmallest", "argsort", "sorted", "argpartition"}) \
            and bool(facts.nodes(ast.Slice) or facts.calls_any({"head", "nsmallest"}))

    def visit_Module(self, node: cst.Module) -> None:
        self._scan(node.body, into=False)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scan(node.body, into=False)

    def _scan(self, body: cst.CSTNode | list, into: bool) -> None:
        nodes = [n for part in (body if isinstance(body, (list, tuple)) else [body])
                 for n in walk(part, into_scopes=False)]
        ranked: dict[str, cst.CSTNode] = {}
        topped: set[str] = set()
        for stmt in nodes:
            if not isinstance(stmt, cst.Assign):
                continue
            names = [dotted(t.target) for t in stmt.targets if isinstance(t.target, (cst.Name, cst.Attribute))]
            names = [n for n in names if n]
            if _ranking(stmt.value):
                for name in names:
                    ranked[name] = stmt
                continue
            read = {dotted(n) for n in walk(stmt.value) if isinstance(n, (cst.Name, cst.Attribute))}
            origin = next((ranked[r] for r in read if r in ranked), None)
            if origin is not None:
                cut = self._top_k(stmt.value, ranked, topped)
                for name in names:
                    ranked.setdefault(name, origin)
                    if cut is not None:
                        topped.add(name)
        if not ranked:
            return
        for call in nodes:
            if not isinstance(call, cst.Call) or not words(call_name(call)) & _PRIVATIZE:
                continue
            if not self._released(call, nodes):
                continue
            for arg in call.args:
                origin = self._top_k(arg.value, ranked, topped)
                if origin is not None:
                    self.report(origin, "the items passed to the randomizer are the top of a ranking by exact "
                                        "p-values of the private data: which items are released, and their order, "
                                        "leak the cohort outside any ε; select them privately (noisy top-k) or "
                                        "from public data")
                    return

    def _released(self, call: cst.Call, nodes: list[cst.CSTNode]) -> bool:
        """The randomized result leaves the code: the call is returned or a bare statement (a release call), or
        the name it is bound to is saved, written or returned later. A result only re-analysed in a simulation
        (``perform_gwas(noisy)``) releases nothing."""
        fa = self.ctx.analysis
        stmt = fa.enclosing_statement(call)
        if isinstance(stmt, cst.Return) or isinstance(stmt, cst.Expr) and stmt.value is call:
            return True
        for anc in fa.ancestors(call):
            if isinstance(anc, cst.Return):
                return True
            if isinstance(anc, cst.Assign):
                names = {dotted(t.target) for t in anc.targets}
                break
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return False
        else:
            return False
        names.discard(None)
        for n in nodes:
            if isinstance(n, cst.Return) and n.value is not None and any(
                    dotted(m) in names for m in walk(n.value) if isinstance(m, (cst.Name, cst.Attribute))):
                return True
            if isinstance(n, cst.Call) and words(call_name(n)) & _SAVE:
                read = {dotted(m) for m in walk(n) if isinstance(m, (cst.Name, cst.Attribute))}
                if read & names:
                    return True
        return False

    @staticmethod
    def _top_k(expr: cst.BaseExpression, ranked: dict[str, cst.CSTNode], topped: set[str]) -> cst.CSTNode | None:
        """The ranking behind a top-k cut in ``expr``: a slice or ``head`` of a ranked name, or a name bound to one."""
        d0 = dotted(expr) if isinstance(expr, (cst.Name, cst.Attribute)) else None
        if d0 in topped:
            return ranked[d0]
        for n in walk(expr):
            target = None
            if isinstance(n, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in n.slice):
                target = n.value
                if isinstance(target, cst.Attribute) and target.attr.value in ("iloc", "loc"):
                    target = target.value
            elif isinstance(n, cst.Call) and call_name(n) in ("head", "nsmallest") and isinstance(n.func, cst.Attribute):
                target = n.func.value
            d = dotted(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
            if d in ranked:
                return ranked[d]
        return None

    VALID = (
        # twin of the release: a simulation re-analyses the randomized top-k and writes only its own scores
        """
def simulate(E, gwas, users, k, epsilon, out):
    ranked = gwas.sort_values(by="p_val", ascending=True)
    rows = E.reindex(ranked.index)
    noisy = generate_noisy_dataframe(rows[0:k], users, epsilon)
    scores = association_test(noisy, users)
    scores.mean().to_csv(out)
""",
        # twin: the SNPs are fixed in advance (a public panel), not ranked on the cohort
        """
import pandas as pd
def share(genotypes, panel, users, epsilon):
    chosen = genotypes.reindex(panel)
    return randomized_response_frame(chosen[0:len(panel)], users, epsilon)
""",
        # twin: the ranking uses a public reference study's p-values
        """
import numpy as np
def release(G, public_study, k, epsilon):
    order = np.argsort(public_study.beta)
    top = G[:, order[:k]]
    return perturb_genotypes(top, epsilon)
""",
        # the exact ranking is only printed for the researcher, the randomizer gets all SNPs
        """
def report(stats, table, epsilon):
    ranked = stats.sort_values(by="p_val")
    print(ranked[:10])
    return noisy_table(table, epsilon)
""",
        # ordinary ML: feature selection by p-value for a non-private model
        """
from sklearn.linear_model import LogisticRegression
def fit_top(X, y, pvals, k):
    order = pvals.argsort()
    Xs = X[:, order[:k]]
    return LogisticRegression().fit(Xs, y)
""",
    )
    INVALID = (
        # the shared SNPs are the top-k rows by exact p-value of the cohort
        """
def publish(D, gwas, users, k, epsilon):
    ranked = gwas.sort_values(by="p_val", ascending=True)  # <-
    rows = D.reindex(ranked.index)
    return generate_noisy_dataframe(rows[0:k], users, epsilon)
""",
        # numpy argsort of the p-values, top-k columns randomized
        """
import numpy as np
def release(G, pvalues, k, epsilon):
    order = np.argsort(pvalues)  # <-
    top = G[:, order[:k]]
    return perturb_genotypes(top, epsilon)
""",
        # nsmallest by p-value, then the head goes to randomized response
        """
def share(results, genotypes, k, eps):
    best = results.nsmallest(k, "p_value")  # <-
    picked = genotypes.loc[best.index]
    return randomize(picked.head(k), eps)
""",
        # module-level script: sorted() on a p-value key
        """
import sys
stats = load_stats(sys.argv[1])
ordered = sorted(stats, key=lambda s: s.pval)  # <-
ldp_release(ordered[:50], float(sys.argv[2]))
""",
    )
