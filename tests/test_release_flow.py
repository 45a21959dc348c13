"""release_flow.never_released: a value only scored stays; a written, stored or returned one leaves."""
from __future__ import annotations

import libcst as cst
import pytest

from dpcheck.analysis.release_flow import never_released
from dpcheck.analysis.syntax import walk


def _released(source: str) -> bool:
    module = cst.parse_module(source)
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    for node in walk(module):
        for child in node.children:
            parents[child] = node
    start = next(n for n in walk(module) if isinstance(n, cst.Assign)
                 and isinstance(n.targets[0].target, cst.Name) and n.targets[0].target.value == "syn")
    scope = next((n for n in walk(module) if isinstance(n, cst.FunctionDef)), module)
    return not never_released("syn", scope, parents.get, start)


_SCORED = """
def run(df):
    syn = gan.generate(len(df))
    table = decode(syn)
    table["y"] = table["y"] > 0.5
    scores = Evaluator(df).evaluate(match(df, table))
    plot_marginals(df, table)
    pd.DataFrame([scores]).to_csv("metrics.csv")
"""


@pytest.mark.parametrize("tail, released", [
    ("", False),
    ("    table.to_csv('syn.csv')\n", True),
    ("    return scores, table\n", True),
    ("    self.table = table\n", True),
    ("    out = []\n    out.append(table)\n    return out\n", True),
    ("    publish_rows(table)\n", True),
    ("    pickle.dump(table, f)\n", True),
    ("    print(table.shape)\n", True),
    ("    table.drop(columns=['y'], inplace=True)\n", False),
])
def test_release_after_scoring(tail: str, released: bool) -> None:
    assert _released(_SCORED + tail) is released
