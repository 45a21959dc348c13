"""DP804: a sensitivity table gives SUM / AVG / MEAN queries a fixed literal sensitivity (often the count's 1.0)
while nothing in the file clips the summed column."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words naming an aggregate whose sensitivity depends on the value range
_VALUE_AGGS = frozenset({"sum", "avg", "average", "mean", "total"})
_SENS_WORDS = frozenset({"sensitivity", "sensitivities", "sens"})
#: anything in the file that can bound the column (a clip, a clamp, SQL LEAST/GREATEST, a bounds check)
_BOUNDED = re.compile(r"(?i)\bclip|clamp|\bLEAST\s*\(|\bGREATEST\s*\(|normali[sz]e\s*\(|MinMaxScaler|\bbounds?\b")


_AGG_CALLS = frozenset({"mean", "sum", "average", "nanmean", "nansum", "fmean"})
#: words of a helper that adds noise to a value
_MECHANISM_WORDS = frozenset({"laplace", "gaussian", "mechanism", "noise", "noisy", "dp", "privatize", "privatise",
                              "private", "geometric", "perturb"})


def _key_words(key: cst.BaseExpression | None) -> frozenset[str]:
    if isinstance(key, cst.SimpleString):
        value = key.evaluated_value
        return words(value) if isinstance(value, str) else frozenset()
    if isinstance(key, (cst.Name, cst.Attribute)):
        return words((dotted(key) or "").split(".")[-1])
    return frozenset()


def _literal(value: cst.BaseExpression) -> bool:
    return isinstance(value, (cst.Integer, cst.Float))


class SumSensitivityLiteralUnclipped(Rule):
    id = "DP804"
    name = "sum-sensitivity-literal-unclipped"
    category = "laplace_noise"
    severity = "error"
    summary = ("a sensitivity table gives SUM / AVG / MEAN queries a fixed number (like the count's 1.0) while "
               "nothing clips the aggregated column to a range of that width")
    rationale = (
        "A COUNT changes by one when one record is added or removed, but a SUM changes by the record's whole value "
        "and an AVERAGE by up to (upper - lower)/n: their sensitivities depend on the column's range. DP query "
        "services often keep a per-operation table `{COUNT: 1.0, SUM: 1.0, AVERAGE: 1.0}` with a comment such as "
        "'assuming normalized data', and then run the SUM or AVG straight on the stored column. Nothing makes the "
        "assumption true: one record with a large value moves the answer far more than the noise covers, so the "
        "claimed ε does not hold. Reported: in a dict bound to a name (or built in a function) speaking of "
        "sensitivity, an entry keyed by a sum/avg/mean operation (`QueryOperation.SUM`, `\"avg\"`) whose value "
        "is a bare number, in a file with no clipping or bounding of values (`clip`, `clamp`, SQL `LEAST`/"
        "`GREATEST`, declared bounds); and a mean or sum of a column (`m = df[\"age\"].mean()`) passed as the value "
        "of a noise helper (`laplace_mechanism(m, args.sensitivity, eps)`) with a sensitivity argument, in such a "
        "file. Bad: `self.sensitivity = {Op.COUNT: 1.0, Op.SUM: 1.0}` with "
        "`SELECT SUM(col)`. Good: clip each value to [lower, upper] before summing and use `upper - lower` (or "
        "max(|lower|, |upper|)) as the SUM's sensitivity. Fix: declare column bounds, clip to them in the query, "
        "and derive the SUM/AVG sensitivity from them."
    )
    TRIGGERS = ("ensitiv", "ENSITIV")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a dict or a call, and no clipping spelled anywhere in the file."""
        return bool(facts.nodes(ast.Dict, ast.Call)) and not _BOUNDED.search(facts.source)

    def visit_Module(self, node: cst.Module) -> None:
        self._bounded = bool(_BOUNDED.search(self.ctx.module.code))
        self._targets: list[bool] = []
        self._functions: list[bool] = []

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        self._targets.append(any(words((dotted(t.target) or "").split(".")[-1]) & _SENS_WORDS for t in node.targets))

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._targets.pop()

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._targets.append(bool(words((dotted(node.target) or "").split(".")[-1]) & _SENS_WORDS))

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._targets.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(bool(words(node.name.value) & _SENS_WORDS))
        self._aggregate_calls(node.body)

    def leave_Module(self, original_node: cst.Module) -> None:
        self._aggregate_calls(original_node)

    def _aggregate_calls(self, scope: cst.CSTNode) -> None:
        """A mean or sum of a raw column handed to a noise helper with a sensitivity argument."""
        if self._bounded:
            return
        body = list(walk(scope, into_scopes=False))
        aggregates: dict[str, str] = {}
        for sub in body:
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and isinstance(sub.value, cst.Call) and call_name(sub.value) in _AGG_CALLS:
                aggregates[sub.targets[0].target.value] = call_name(sub.value)
        if not aggregates:
            return
        for sub in body:
            if not isinstance(sub, cst.Call) or not sub.args:
                continue
            first = sub.args[0]
            if first.keyword is not None or not isinstance(first.value, cst.Name) \
                    or first.value.value not in aggregates:
                continue
            if not words(call_name(sub)) & _MECHANISM_WORDS:
                continue
            sens = [a for a in sub.args[1:] if (a.keyword is not None and words(a.keyword.value) & _SENS_WORDS)
                    or (a.keyword is None and isinstance(a.value, (cst.Name, cst.Attribute))
                        and words((dotted(a.value) or "").split(".")[-1]) & _SENS_WORDS)]
            if sens:
                self.report(
                    sub,
                    f"the {aggregates[first.value.value]} `{first.value.value}` of a column nothing clips is "
                    f"released with the fixed sensitivity `{self.ctx.module.code_for_node(sens[0].value)}`: one "
                    "record can move it by an unbounded amount, so no fixed sensitivity covers it. Clip the "
                    "column to declared bounds and derive the sensitivity from them",
                )

    def visit_Dict(self, node: cst.Dict) -> None:
        if self._bounded:
            return
        if not (self._targets and self._targets[-1]) and not (self._functions and self._functions[-1]):
            return
        elements = [el for el in node.elements if isinstance(el, cst.DictElement)]
        if not any(_key_words(el.key) & {"count"} or _key_words(el.key) & _VALUE_AGGS for el in elements):
            return
        for el in elements:
            agg = _key_words(el.key) & _VALUE_AGGS
            if agg and _literal(el.value):
                self.report(
                    el.value,
                    f"the {sorted(agg)[0].upper()} query gets the fixed sensitivity "
                    f"`{self.ctx.module.code_for_node(el.value)}`, but nothing clips the aggregated column: one "
                    "record can move a sum (or an average) by its whole value, so the noise does not cover it. "
                    "Clip the column to declared bounds and derive the sensitivity from them",
                )

    VALID = (
        # twin: the column is clipped in SQL to [0, 1] before summing, so 1.0 is the SUM's sensitivity
        """
import numpy as np
class Op:
    COUNT = "count"
    SUM = "sum"
    AVG = "avg"
class PrivateQueries:
    def __init__(self):
        self.sensitivity = {Op.COUNT: 1.0, Op.SUM: 1.0, Op.AVG: 1.0}
    def run(self, db, op, col, table, epsilon):
        if op == Op.SUM:
            sql = f"SELECT SUM(LEAST(GREATEST({col}, 0), 1)) FROM {table}"
        else:
            sql = f"SELECT COUNT(*) FROM {table}"
        true_value = db.execute(sql).scalar()
        return true_value + np.random.laplace(0, self.sensitivity[op] / epsilon)
""",
        # twin: the sensitivities come from declared column bounds
        """
import numpy as np
def query_sensitivity(op, lo, hi, n):
    sensitivities = {"count": 1.0, "sum": max(abs(lo), abs(hi)), "mean": (hi - lo) / n}
    return sensitivities[op]
def release(values, op, lo, hi, epsilon):
    values = np.clip(values, lo, hi)
    s = query_sensitivity(op, lo, hi, len(values))
    return float(np.sum(values)) + np.random.laplace(0, s / epsilon)
""",
        # ordinary ML: loss weights keyed by reduction, not a sensitivity
        """
import torch
loss_weights = {"sum": 1.0, "mean": 0.5}
def total_loss(losses, reduction="mean"):
    return loss_weights[reduction] * torch.stack(losses).mean()
""",
        # twin of the helper: values are clipped to [0, 1] before the sum or mean, so 1 is right
        """
import numpy as np
def get_sensitivity(kind, n):
    return {"count": 1, "sum": 1, "mean": 1 / n}[kind]
def dp_answer(values, kind, epsilon):
    values = np.clip(values, 0.0, 1.0)
    exact = len(values) if kind == "count" else getattr(np, kind)(values)
    return exact + np.random.laplace(0, get_sensitivity(kind, len(values)) / epsilon)
""",
        # twin of the CLI: the column is clipped to [0, 100] and the mean's sensitivity is 100 / n
        """
import numpy as np
import pandas as pd
def laplace_mechanism(value, sensitivity, epsilon):
    return value + np.random.laplace(0, sensitivity / epsilon)
def main(epsilon=1.0):
    df = pd.read_csv("people.csv")
    ages = df["age"].clip(0, 100)
    mean_age = ages.mean()
    mean_sensitivity = 100 / len(ages)
    print(laplace_mechanism(mean_age, mean_sensitivity, epsilon))
""",
    )

    INVALID = (
        # a CLI: the raw mean age is released with a user sensitivity (default 1.0) and never clipped
        """
import argparse
import numpy as np
import pandas as pd
def laplace_mechanism(value, sensitivity, epsilon):
    return value + np.random.laplace(0, sensitivity / epsilon)
def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sensitivity", type=float, default=1.0)
    p.add_argument("--epsilon", type=float, default=1.0)
    args = p.parse_args()
    df = pd.read_csv("people.csv")
    avg_income = df["income"].mean()
    noisy = laplace_mechanism(avg_income, args.sensitivity, args.epsilon)  # <-
    print(noisy)
""",
        # a query service's per-operation table: SUM and AVERAGE get the count's 1.0, the column is summed raw
        """
import numpy as np
from enum import Enum
class Agg(Enum):
    COUNT = "count"
    SUM = "sum"
    AVERAGE = "average"
class LaplaceQueryService:
    def __init__(self):
        self.sensitivity = {
            Agg.COUNT: 1.0,
            Agg.SUM: 1.0,  # <-
            Agg.AVERAGE: 1.0,  # <-
        }
    def answer(self, db, agg, column, table, epsilon):
        fn = {"count": "COUNT", "sum": "SUM", "average": "AVG"}[agg.value]
        exact = db.execute(f"SELECT {fn}({column}) FROM {table}").scalar()
        return exact + np.random.laplace(0, self.sensitivity[agg] / epsilon)
""",
        # string keys inside a sensitivity helper
        """
import numpy as np
def get_sensitivity(kind):
    return {"count": 1, "sum": 1, "mean": 1}[kind]  # <-
def dp_answer(df, column, kind, epsilon):
    exact = len(df) if kind == "count" else getattr(df[column], kind)()
    return exact + np.random.laplace(0, get_sensitivity(kind) / epsilon)
""",
        # a module-level table with SQL aggregate names
        """
\"\"\"Laplace mechanism for epsilon-differentially private aggregates over the visits table.\"\"\"
import numpy as np
SENSITIVITY = {"COUNT": 1.0, "SUM": 10.0, "AVG": 1.0}  # <-
def private_aggregate(conn, agg, column, epsilon):
    exact = conn.execute(f"SELECT {agg}({column}) FROM visits").fetchone()[0]
    return exact + np.random.laplace(0.0, SENSITIVITY[agg] / epsilon)
""",
        # an annotated table of sensitivities, total spending summed raw
        """
\"\"\"Laplace mechanism for epsilon-differentially private spending totals.\"\"\"
import numpy as np
sensitivities: dict = {
    "count": 1,
    "total": 100,  # <-
}
def noisy_total(df, epsilon):
    return df["spend"].sum() + np.random.laplace(0, sensitivities["total"] / epsilon)
""",
    )
