"""The terminal matrix reads at 80, 100 and 160 columns: nothing wider than the terminal, no word
broken, the compact layout (abbreviated headers, key below) when the full one does not fit."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from dpcheck.matrix.model import COLUMNS, Cell, Matrix, Row
from dpcheck.matrix.terminal import SHORT, render, wrap_name

ROOT = Path(__file__).resolve().parents[1]


def _committed_matrix() -> Matrix:
    data = json.loads((ROOT / "reports" / "violation_matrix.json").read_text())
    rows = [Row(r["impl"], {c: Cell(c, v["status"]) for c, v in r["cells"].items()}, r["audit"], [], [], r["target"],
                r["audit_cervical"]) for r in data["rows"]]
    return Matrix(rows, True, data["generated_by"])


def _printed(width: int, compact: bool | None = None) -> str:
    console = Console(width=width, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    render(_committed_matrix(), console, compact)
    return console.export_text()


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z][A-Za-z0-9_]*", text))


@pytest.mark.parametrize("width", [80, 100, 160])
def test_no_line_is_wider_than_the_terminal_and_no_name_is_cut(width: int) -> None:
    text = _printed(width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text  # rich's ellipsis: something did not fit
    words = _words(text)
    for row in _committed_matrix().rows:
        for part in re.findall(r"[A-Za-z0-9]+", row.impl):
            assert part in words, (row.impl, part)


def test_full_layout_where_it_fits_compact_below() -> None:
    wide, narrow = _printed(160), _printed(100)
    for column in COLUMNS:  # full headers wrap between words only
        for word in column.split("_"):
            assert word in _words(wide), word
    assert "Columns:" not in wide
    key = " ".join(narrow.split("Columns:")[1].split())
    assert all(f"{SHORT[c]} = {c.replace('_', ' ')}" in key for c in COLUMNS), key
    assert "distribution" not in narrow.split("Columns:")[0]


def test_compact_flag_forces_the_compact_layout() -> None:
    assert "Columns:" in _printed(160, compact=True)
    assert "Columns:" not in _printed(160, compact=False)


def test_names_wrap_after_colon_or_hyphen() -> None:
    assert wrap_name("diffprivlib:LogisticRegression-nobounds", 19) == "diffprivlib:\nLogisticRegression-\nnobounds"
    assert wrap_name("synthcity-fixed", 19) == "synthcity-fixed"
    assert wrap_name("a:verylongnamewithoutbreaks", 5) == "a:\nverylongnamewithoutbreaks"


def test_matrix_command_compact_flag(capsys: pytest.CaptureFixture[str]) -> None:
    from dpcheck.cli import main

    assert main(["matrix", "--quick", "--no-write", "--compact", "--impl", "smartnoise-fixed"]) == 0
    out = capsys.readouterr().out
    assert "Columns: pate = pate, part = data partition" in out
