"""The matrix in a terminal: the full layout when it fits, else a compact one (80 columns).

Nothing is ever broken inside a word: headers wrap between words, names between their parts
(after ``:`` and ``-``), and every column is at least as wide as its longest word. The compact
layout abbreviates the category headers (the key is printed under the table), shows an audit as
``V 1.19`` and each Cervical audit on its own line.
"""
from __future__ import annotations

import re

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from dpcheck.matrix import cervical
from dpcheck.matrix.model import COLUMNS, Matrix, Row
from dpcheck.matrix.text import LEGEND, audit_short, audit_text, cell_text, header_words, target_line

#: compact headers: an abbreviation of whole words, explained in the key under the table
SHORT = {"pate": "pate", "data_partition": "part", "moments_accountant": "acct", "metadata": "meta",
         "laplace_noise": "lapl", "delta_scale": "dlt", "labels_distribution": "lbl", "teachers": "tchr",
         "processing": "proc", "general": "gen"}
STYLE = {"V": "bold red", "B": "bold yellow", "F": "magenta", "clean": "green", "not applicable": "dim",
         "not checked": "dim"}
#: the widest a name column gets: longer names wrap after ':' or '-'
NAME_WIDTH = {"full": 28, "compact": 19}
_PARTS = re.compile(r"[^:\-\s]*[:\-]|[^:\-\s]+")


def wrap_name(name: str, width: int) -> str:
    """``name`` in lines of at most ``width`` characters, broken only after ``:`` or ``-`` (a part
    longer than ``width`` keeps its own line whole)."""
    lines: list[str] = []
    for part in _PARTS.findall(name):
        if lines and len(lines[-1]) + len(part) <= width:
            lines[-1] += part
        else:
            lines.append(part)
    return "\n".join(lines)


def _wrap_words(text: str, width: int) -> str:
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _name_cell(row: Row, width: int) -> str:
    name = wrap_name(row.impl, width)
    if row.target:
        name += f"\n[dim]{_wrap_words(target_line(row), width)}[/]"
    return name


def build(matrix: Matrix, compact: bool) -> Table:
    mode = "compact" if compact else "full"
    parts = [len(p) for r in matrix.rows for p in _PARTS.findall(r.impl)] or [4]
    names = [len(r.impl) for r in matrix.rows] or [4]
    width = max(max(parts), min(NAME_WIDTH[mode], max(names)))
    table = Table(title="dpcheck violation matrix", box=box.SIMPLE_HEAD if compact else box.HEAVY_HEAD,
                  padding=0, pad_edge=False, show_edge=not compact)
    table.add_column("impl", no_wrap=True)
    for c in COLUMNS:
        header = SHORT[c] if compact else _wrap_words(header_words(c), max(len(w) for w in c.split("_")))
        table.add_column(header, justify="center", no_wrap=True)
    table.add_column("audit" if compact else "audit ε_emp", justify="right", no_wrap=True)
    table.add_column("Cerv." if compact else "audit:\nCervical", justify="right", no_wrap=True)
    for row in matrix.rows:
        cells = [f"[{STYLE[row.cells[c].status]}]{cell_text(row.cells[c])}[/]" for c in COLUMNS]
        if compact:
            audit = audit_short(row.audit)
            parts = cervical.cell_parts(row.cervical) if row.cervical else ["—"]
            cerv = "\n".join(p.rsplit(" (", 1)[0] for p in parts)
        else:
            audit = _wrap_words(audit_text(row.audit), 16)
            cerv = "\n".join(cervical.cell_parts(row.cervical)) if row.cervical else "—"
        table.add_row(_name_cell(row, width), *cells, audit, cerv)
    return table


def key_lines(matrix: Matrix, compact: bool) -> list[str]:
    lines = [LEGEND + "."]
    if compact:
        lines.append("Columns: " + ", ".join(f"{SHORT[c]} = {header_words(c)}" for c in COLUMNS)
                     + "; audit = worst-case audit: verdict (V violation, P pass, NC not confirmed, OC leak outside the "
                       "library's claim) and ε_emp; Cerv. = Cervical GroundHog audit, "
                       "target 397 over dpcheck's selected target.")
    if any(row.cervical for row in matrix.rows):
        lines.append(cervical.legend(cervical.letters_used([row.cervical for row in matrix.rows])) + ".")
    return lines


def fits(console: Console, table: Table) -> bool:
    """True when ``table`` needs no more than the console's width (every column is no_wrap)."""
    unbounded = console.options.update_width(10_000)
    return Measurement.get(console, unbounded, table).minimum <= console.width


def render(matrix: Matrix, console: Console, compact: bool | None = None) -> None:
    """Print the matrix: ``compact`` None picks the full layout when it fits the console."""
    if compact is None:
        compact = not fits(console, build(matrix, False))
    console.print(build(matrix, compact))
    for line in key_lines(matrix, compact):
        console.print(line, style="dim", highlight=False)


def terminal(matrix: Matrix, compact: bool | None = None) -> None:
    from dpcheck.console import console

    render(matrix, console(), compact)
