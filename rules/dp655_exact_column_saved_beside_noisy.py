"""DP655: a table is saved with the exact column still in it, next to the noisy copy made of that column."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, loop_iter, refs, target_names, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS
from dpcheck.rule import Rule

#: words of a helper or a value that carries the noisy release (``apply_laplace_noise``, ``noisy_locations``)
_NOISY_WORDS = frozenset({"noise", "noisy", "noised", "laplace", "gaussian", "perturb", "perturbed", "privatize",
                          "privatized", "privatise", "privatised", "sanitize", "sanitized", "randomize", "randomized",
                          "mechanism", "dp", "ldp", "geometric", "obfuscate", "obfuscated"})
#: the module speaks of a privacy release (the noisy helper may take ε from a module-level setting)
_PRIVACY_TEXT = re.compile(r"(?i)epsilon|\beps\b|differential|\bprivacy\b|\bdp\b|_dp\b")
#: calls that write a table out
_SAVES = frozenset({"to_csv", "to_parquet", "to_excel", "to_json", "to_pickle", "to_feather", "to_sql", "to_hdf",
                    "to_orc", "write_csv", "write_parquet"})
#: calls on the table that remove or rename a column
_REMOVES = frozenset({"drop", "pop", "rename", "drop_vars", "remove"})


def _key(sub: cst.Subscript) -> str | None:
    """``'col'`` of ``df['col']``."""
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    value = sub.slice[0].slice.value
    if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str):
        return value.evaluated_value
    return None


def _noisy(expr: cst.BaseExpression) -> bool:
    for n in walk(expr):
        if isinstance(n, cst.Call):
            name = call_name(n) or ""
            if isinstance(n.func, cst.Attribute) and name.split(".")[-1] in NOISE_DRAWS and "random" in name:
                return True
            if words(name.split(".")[-1]) & _NOISY_WORDS:
                return True
            if any(isinstance(a.value, (cst.Name, cst.Attribute)) and words((dotted(a.value) or "").split(".")[-1])
                   & _NOISY_WORDS for a in n.args):
                return True  # ``df['x'].apply(add_noise)``
        elif isinstance(n, cst.Name) and words(n.value) & _NOISY_WORDS:
            return True
    return False


def _columns(expr: cst.CSTNode, table: str) -> set[str]:
    return {k for n in walk(expr) if isinstance(n, cst.Subscript) and dotted(n.value) == table
            and (k := _key(n)) is not None}


class ExactColumnSavedBesideNoisy(Rule):
    id = "DP655"
    name = "exact-column-saved-beside-noisy"
    category = "general"
    severity = "error"
    summary = "a table is saved with the exact column still in it, beside the noisy copy made from that column"
    rationale = (
        "Writing the noisy values into a new column (`df['age_noisy'] = add_laplace(df['age'], eps)`, "
        "`data['location'] = noisy_points` made from `data['Location']`) leaves the original column in the "
        "table. When that table is then written out as the private release (`df.to_csv(...)`, `to_parquet`, "
        "`to_json`), every record's exact value ships next to its noisy copy and the noise protects nothing. "
        "Reported: a column assigned a noisy value computed from another column of the same table, in a function "
        "or module that later saves the table, with no drop, pop, rename, `del` or overwrite of the source "
        "column and no re-selection of the table in between. Not reported: noise written back into the same "
        "column, a source column dropped or overwritten before saving, a saved selection of columns. Fix: "
        "overwrite the column in place (`df['age'] = noisy`) or drop the exact one before saving "
        "(`df.drop(columns=['age']).to_csv(...)`)."
    )
    TRIGGERS = tuple(sorted(_SAVES))
    requires_dp_context = False

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        """The report needs DP context at the assignment or privacy words in the module."""
        return (facts.may_have_dp_context or _PRIVACY_TEXT.search(facts.source) is not None) \
            and cls.may_report(facts)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is ``t['new'] = …`` on a table ``t`` that a ``t.to_csv(…)``-like call saves."""
        saved = {call.func.value.id for call in facts.calls  # type: ignore[union-attr]
                 if isinstance(call.func, ast.Attribute) and call.func.attr in _SAVES
                 and isinstance(call.func.value, ast.Name)}
        if not saved:
            return False
        for node in facts.nodes(ast.Assign):
            targets = node.targets  # type: ignore[attr-defined]
            if len(targets) != 1 or not isinstance(t := targets[0], ast.Subscript) \
                    or not isinstance(t.value, ast.Name) or t.value.id not in saved:
                continue
            # ``t['a',]`` is libcst's one-element subscript of ``'a'`` too
            key = t.slice.elts[0] if isinstance(t.slice, ast.Tuple) and len(t.slice.elts) == 1 else t.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                return True
        return False

    VALID = (
        # the noisy values overwrite the column itself
        """
import numpy as np
import pandas as pd
def release(path, epsilon):
    df = pd.read_csv(path)
    df["income"] = df["income"] + np.random.laplace(0, 1000 / epsilon, len(df))
    df.to_csv("income_private.csv", index=False)
""",
        # the exact column is dropped before the table is written
        """
import pandas as pd
def laplace_mech(col, eps):
    return col + np.random.laplace(0, 1 / eps, len(col))
scores = pd.read_csv("scores.csv")
scores["points_dp"] = laplace_mech(scores["points"], 0.5)
scores = scores.drop(columns=["points"])
scores.to_csv("scores_dp.csv", index=False)
""",
        # only a selection of columns is saved
        """
import pandas as pd
def publish(df, eps):
    df["visits_noisy"] = add_geometric_noise(df["visits"], eps)
    df[["region", "visits_noisy"]].to_csv("visits_release.csv")
""",
        # ordinary ML: augmented features written next to the clean ones for a training run, no privacy claim
        """
import numpy as np
import pandas as pd
def augment(df, sigma=0.05):
    df["signal_aug"] = df["signal"] + np.random.normal(0, sigma, len(df))
    df.to_parquet("train_augmented.parquet")
""",
    )

    INVALID = (
        # a noisy copy in a new column, the exact one kept, and the whole table saved as the private data
        """
import numpy as np
import pandas as pd
def laplace_release(values, epsilon):
    return values + np.random.laplace(0, 1 / epsilon, values.shape)
games = pd.read_csv("sessions.csv")
eps = 0.5
games["Minutes_Private"] = laplace_release(games["Minutes"], eps)  # <-
games.to_csv("sessions_private.csv", index=False)
""",
        # noisy points built in a loop over the exact column, written to a differently spelled column
        """
import numpy as np
import pandas as pd
def geo_noise(point, epsilon):
    return tuple(np.add(point, np.random.laplace(0, 1 / epsilon, 2)))
table = pd.read_csv("trips.csv")
points = table["Pickup"]
released = []
for p in points:
    released.append(geo_noise(p, 1.0))
table["pickup"] = released  # <-
table.to_csv("trips_noisy.csv", index=False)
""",
        # inside a function, with apply and a noise helper, saved as parquet
        """
import numpy as np
def dp_release(frame, epsilon, out):
    noise_fn = lambda v: v + np.random.laplace(0, 1 / epsilon)
    frame["salary_dp"] = frame["salary"].apply(noise_fn)  # <-
    frame.to_parquet(out)
""",
        # a randomized-response helper on a categorical column; the table is saved as JSON for the analysts
        """
import numpy as np
def randomized_response(values, epsilon, categories):
    keep = np.random.rand(len(values)) < np.exp(epsilon) / (np.exp(epsilon) + len(categories) - 1)
    return np.where(keep, values, np.random.choice(categories, len(values)))
def share(survey, epsilon, categories):
    survey["answer_rr"] = randomized_response(survey["answer"].to_numpy(), epsilon, categories)  # <-
    survey.to_json("survey_ldp.json", orient="records")
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._scope(node)
        for fn in walk(node):
            if isinstance(fn, cst.FunctionDef):
                self._scope(fn)

    def _scope(self, scope: cst.CSTNode) -> None:
        stmts = [n for n in walk(scope, into_scopes=False)
                 if isinstance(n, (cst.Assign, cst.AugAssign, cst.For, cst.Del, cst.Expr, cst.Call))]
        for i, st in enumerate(stmts):
            if not isinstance(st, cst.Assign) or len(st.targets) != 1:
                continue
            target = st.targets[0].target
            if not isinstance(target, cst.Subscript) or not isinstance(target.value, cst.Name):
                continue
            table, new = target.value.value, _key(target)
            if new is None:
                continue
            traced, noisy_feed = self._traced(stmts[:i], st.value, table)
            if not (_noisy(st.value) or noisy_feed):
                continue
            sources = _columns(st.value, table) or traced
            if not sources or new in sources:
                continue
            save = self._saved_before_removal(stmts[i + 1:], table, sources)
            if save is None:
                continue
            src = sorted(sources)[0]
            fa = self.ctx.analysis
            if not (fa.in_dp_context(st) or _PRIVACY_TEXT.search(self.ctx.source)):
                continue
            self.report(st, f"`{table}['{new}']` holds the noisy copy of `{table}['{src}']`, but the exact column "
                            f"stays in `{table}`, which is saved on line {fa.line_of(save)}: every record's true "
                            f"value ships next to its noisy one; overwrite `{table}['{src}']` or drop it before "
                            "saving")

    @staticmethod
    def _traced(before: list[cst.CSTNode], value: cst.BaseExpression,
                table: str) -> tuple[set[str], bool]:
        """Columns of ``table`` the names in ``value`` were built from (assignments and ``append`` loops), and
        whether noise entered on the way."""
        names = refs(value)
        cols: set[str] = set()
        noisy = False
        for _ in range(3):
            for st in before:
                if isinstance(st, cst.Assign) and not isinstance(st.targets[0].target, cst.Subscript) \
                        and any(target_names(t.target) & names for t in st.targets):
                    names |= refs(st.value)
                    cols |= _columns(st.value, table)
                    noisy = noisy or _noisy(st.value)
                elif isinstance(st, cst.For) and any(
                        isinstance(c, cst.Call) and isinstance(c.func, cst.Attribute)
                        and c.func.attr.value in {"append", "extend"} and dotted(c.func.value) in names
                        for c in walk(st.body)):
                    it = loop_iter(st)
                    if it is not None:
                        names |= refs(it)
                        cols |= _columns(it, table)
                    noisy = noisy or _noisy(st.body)
        return cols, noisy

    @staticmethod
    def _saved_before_removal(after: list[cst.CSTNode], table: str, sources: set[str]) -> cst.CSTNode | None:
        for st in after:
            if isinstance(st, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == table
                    or isinstance(t.target, cst.Subscript) and dotted(t.target.value) == table
                    and _key(t.target) in sources for t in st.targets):
                return None  # the table re-selected, or the source column overwritten
            if isinstance(st, cst.Del) and _columns(st, table) & sources:
                return None
            if isinstance(st, cst.Call) and isinstance(st.func, cst.Attribute):
                method = st.func.attr.value
                if method in _REMOVES and dotted(st.func.value) == table:
                    return None
                if method in _SAVES and isinstance(st.func.value, cst.Name) and st.func.value.value == table:
                    return st
        return None
