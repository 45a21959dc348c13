"""DP678: of several count tables filled from the records in one function, some get noise and a sibling is
returned exact."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, param_names, subscripted_name, walk
from dpcheck.rule import Rule

_ZEROS = frozenset({"zeros", "zeros_like", "Counter", "defaultdict"})
_DRAWS = frozenset({"laplace", "normal", "gauss", "randn", "standard_normal", "geometric", "discrete_laplace",
                    "discrete_gaussian", "Laplace", "Normal"})


class SiblingCountLeftExact(Rule):
    id = "DP678"
    name = "sibling-count-left-exact"
    category = "general"
    severity = "error"
    summary = ("several count tables are filled from the private records in one loop; some get noise, and a "
               "sibling table is returned without any")
    rationale = (
        "When one pass over the private records fills several count tables (start counts and transition counts "
        "at several levels, a histogram and its marginals) and the function adds noise to some of them before "
        "returning all of them, the tables returned without noise are exact functions of the records: a record "
        "changes them by a full count and no ε covers them, although the release is claimed ε-DP. Reported: a "
        "function whose tables are created empty (`np.zeros`, `Counter()`, `defaultdict`), filled in a loop "
        "over a parameter (`t[i, j] += 1`, `t[i] = t[i] + w`), and returned together, where at least one of them "
        "is reassigned with a noise draw and another is never noised. Bad: `a = a + laplace(...)`, "
        "`return a, b` with `b` only counted. Good: noise every table returned, with the budget split across "
        "them. Fix: add calibrated noise to every table derived from the records (and charge it)."
    )
    TRIGGERS = ("zeros", "Counter", "defaultdict")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noise draw, a loop, a ``return`` of a tuple and one function that binds two names to
        empty tables (``np.zeros``, ``Counter()``, ``defaultdict``)."""
        returns = facts.nodes(ast.Return)
        if not facts.calls_any(_DRAWS) or not facts.nodes(ast.For, ast.AsyncFor) \
                or not any(isinstance(r.value, ast.Tuple) for r in returns):  # type: ignore[attr-defined]
            return False
        tables: dict[int, set[str]] = {}
        for node in facts.nodes(ast.Assign):
            value = node.value  # type: ignore[attr-defined]
            if not (isinstance(value, ast.Call) and facts.call_lasts(value) & _ZEROS):
                continue
            fn = facts.enclosing_function(node)
            if fn is None:
                continue
            found = tables.setdefault(id(fn), set())
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))  # type: ignore[attr-defined]
            if len(found) >= 2:
                return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = set(param_names(node))
        body = list(walk(node.body, into_scopes=False))
        tables: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) and call_name(sub.value) in _ZEROS:
                tables |= {t.target.value for t in sub.targets if isinstance(t.target, cst.Name)}
        if len(tables) < 2:
            return
        filled: dict[str, cst.CSTNode] = {}
        noised: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.For) and any(isinstance(n, cst.Name) and n.value in params for n in walk(sub.iter)):
                for inner in walk(sub.body):
                    targets = [t.target for t in inner.targets] if isinstance(inner, cst.Assign) else [
                        inner.target] if isinstance(inner, cst.AugAssign) else []
                    for t in targets:
                        if isinstance(t, cst.Subscript) and subscripted_name(t) in tables:
                            filled.setdefault(subscripted_name(t), inner)  # type: ignore[arg-type]
        for sub in body:
            if isinstance(sub, (cst.Assign, cst.AugAssign)):
                targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
                names = {t.value for t in targets if isinstance(t, cst.Name)}
                value_names = {n.value for n in walk(sub.value) if isinstance(n, cst.Name)}
                if names & tables and (any(isinstance(c, cst.Call) and call_name(c) in _DRAWS
                                           for c in walk(sub.value)) or value_names & self._noise_names(body)):
                    noised |= names & tables
        if not noised:
            return
        for ret in body:
            if not isinstance(ret, cst.Return) or not isinstance(ret.value, cst.Tuple):
                continue
            returned = {e.value.value for e in ret.value.elements if isinstance(e.value, cst.Name)}
            if not returned & noised:
                continue
            for name in sorted(returned & set(filled) - noised):
                self.report(
                    filled[name],
                    f"`{name}` is counted from the records in the same pass as the tables that get noise "
                    f"({', '.join(sorted(returned & noised))}) and is returned exact: no ε covers it; add "
                    "calibrated noise to it too (splitting the budget)",
                )

    @staticmethod
    def _noise_names(body: list[cst.CSTNode]) -> set[str]:
        out: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and any(isinstance(c, cst.Call) and call_name(c) in _DRAWS
                                                   for c in walk(sub.value)):
                out |= {t.target.value for t in sub.targets if isinstance(t.target, cst.Name)}
        return out

    VALID = (
        # twin: every table gets its share of the budget
        """
import numpy as np
def transition_tables(trajectories, epsilon, n_coarse, n_fine):
    coarse = np.zeros((n_coarse, n_coarse))
    fine = np.zeros((n_fine, n_fine))
    for traj in trajectories:
        for a, b in zip(traj, traj[1:]):
            coarse[a // 10, b // 10] += 1
            fine[a, b] += 1
    coarse = coarse + np.random.laplace(0, 2 / epsilon, coarse.shape)
    fine = fine + np.random.laplace(0, 2 / epsilon, fine.shape)
    return coarse, fine
""",
        # twin with noise drawn into a name first
        """
import numpy as np
from collections import Counter
def first_and_pairs(sequences, epsilon, n):
    first = np.zeros(n)
    pairs = np.zeros((n, n))
    for seq in sequences:
        first[seq[0]] += 1
        for a, b in zip(seq, seq[1:]):
            pairs[a, b] += 1
    noise_first = np.random.laplace(0, 2 / epsilon, n)
    noise_pairs = np.random.laplace(0, 2 / epsilon, (n, n))
    first = first + noise_first
    pairs = pairs + noise_pairs
    return first, pairs
""",
        # the exact table stays local: only the noisy one is returned
        """
import numpy as np
def noisy_pairs(sequences, epsilon, n):
    seen = np.zeros(n)
    pairs = np.zeros((n, n))
    for seq in sequences:
        for a, b in zip(seq, seq[1:]):
            pairs[a, b] += 1
            seen[a] += 1
    pairs = pairs + np.random.laplace(0, 1 / epsilon, pairs.shape)
    return pairs, n
""",
        # ordinary ML: confusion matrix and per-class totals, dropout noise elsewhere, no privacy
        """
import numpy as np
def confusion(preds, labels, k):
    cm = np.zeros((k, k))
    totals = np.zeros(k)
    for p, y in zip(preds, labels):
        cm[y, p] += 1
        totals[y] += 1
    return cm, totals
""",
    )

    INVALID = (
        # the level-1 table is noised, the coarser levels are returned exact
        """
import numpy as np
def transition_tables(trajectories, epsilon, n_fine, n_mid, n_coarse):
    fine = np.zeros((n_fine, n_fine))
    mid = np.zeros((n_mid, n_mid))
    coarse = np.zeros((n_coarse, n_coarse))
    for traj in trajectories:
        for a, b in zip(traj, traj[1:]):
            fine[a, b] = fine[a, b] + 1
            mid[a // 10, b // 10] = mid[a // 10, b // 10] + 1  # <-
            coarse[a // 100, b // 100] += 1  # <-
    fine = fine + np.random.laplace(0, 1 / epsilon, fine.shape)
    return fine, mid, coarse
""",
        # start counts noised through a named draw, the pair counts returned exact
        """
import numpy as np
def first_and_pairs(sequences, epsilon, n):
    first = np.zeros(n)
    pairs = np.zeros((n, n))
    for seq in sequences:
        first[seq[0]] += 1
        for a, b in zip(seq, seq[1:]):
            pairs[a, b] += 1  # <-
    noise_first = np.random.laplace(0, 1 / epsilon, n)
    first = first + noise_first
    return first, pairs
""",
        # Counter tables, Gaussian noise on one
        """
import numpy as np
from collections import Counter
def item_stats(baskets, sigma, epsilon):
    singles = Counter()
    pairs = Counter()
    for basket in baskets:
        for item in basket:
            singles[item] += 1  # <-
        for a in basket:
            for b in basket:
                pairs[a, b] += 1
    pairs = {k: v + np.random.normal(0, sigma) for k, v in pairs.items()}
    return singles, pairs
""",
        # torch zeros, the histogram noised and its row totals kept exact
        """
import torch
def histogram_and_rows(records, epsilon, n_rows, n_cols):
    hist = torch.zeros(n_rows, n_cols)
    rows = torch.zeros(n_rows)
    for r, c in records:
        hist[r, c] += 1
        rows[r] += 1  # <-
    hist += torch.distributions.Laplace(0.0, 1.0 / epsilon).sample(hist.shape)
    return hist, rows
""",
    )
