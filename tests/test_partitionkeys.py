"""Key sets that only partition the records (dpcheck.analysis.partitionkeys)."""
from __future__ import annotations

import ast

from dpcheck.analysis.partitionkeys import key_column, partition_keys


def _line_of(source: str, marker: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if marker in text)


def test_key_column_spellings() -> None:
    for code in ("d['k'].unique()", "d['k'].drop_duplicates()", "np.unique(d['k'])", "set(d['k'])"):
        assert key_column(ast.parse(code, mode="eval").body) == "k"
    assert key_column(ast.parse("d['k'].max()", mode="eval").body) is None


def test_loop_selecting_rows_partitions() -> None:
    source = "def f(d):\n    ks = d['k'].unique()  # here\n    for k in ks:\n        rows = d[d['k'] == k]\n    return len(ks)\n"
    assert partition_keys(ast.parse(source), _line_of(source, "# here"))


def test_key_read_elsewhere_is_not_a_partition() -> None:
    source = "def f(d):\n    ks = d['k'].unique()  # here\n    for k in ks:\n        rows = d[d['k'] == k]\n        print(k)\n"
    assert not partition_keys(ast.parse(source), _line_of(source, "# here"))


def test_rows_of_another_column_are_not_this_partition() -> None:
    source = "def f(d):\n    ks = d['k'].unique()  # here\n    for k in ks:\n        rows = d[d['j'] == k]\n"
    assert not partition_keys(ast.parse(source), _line_of(source, "# here"))


def test_helper_given_the_keys() -> None:
    helper = "def g(ids, d):\n    for i in ids:\n        x = d[d['k'] == i]\n"
    source = helper + "def f(d):\n    ks = d['k'].unique()  # here\n    return g(ks, d)\n"
    assert partition_keys(ast.parse(source), _line_of(source, "# here"))
    leaking = helper.replace("        x = d[d['k'] == i]\n", "        x = d[d['k'] == i]\n    return ids\n")
    source = leaking + "def f(d):\n    ks = d['k'].unique()  # here\n    return g(ks, d)\n"
    assert not partition_keys(ast.parse(source), _line_of(source, "# here"))
