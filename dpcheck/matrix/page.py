"""The matrix as one self-contained HTML page (no scripts; the plots embedded as PNG data URIs).

Reading it needs no documentation: a one-line legend over the table (the details behind a link),
"not applicable" drawn unlike "checked and passed", headers that wrap between words (abbreviated
under 1100 px), and evidence that opens *below its row* — a click on a cell opens a ``<details>``
whose evidence sits in an evidence row under the table row (shown with CSS ``:has()``), so it
pushes the rows below down instead of covering them.
"""
from __future__ import annotations

import base64
import html
import struct
from pathlib import Path

from dpcheck.matrix import cervical
from dpcheck.matrix.model import COLUMNS, Cell, Matrix, Row
from dpcheck.matrix.text import (MEANING, SYMBOL, audit_facts, audit_short, audit_text, cell_text, header_words,
                                 target_line)
from dpcheck.matrix.terminal import SHORT

esc = html.escape
#: evidence panels: one per category column, then the two audit columns and the real row's library
PANELS = (*COLUMNS, "audit", "cervical", "meta")
#: plots shown first (the audit columns' own), the rest in name order
FIRST = ("audit_worstcase.png", "audit_twins.png", "audit_cervical.png", "audit_real.png")
#: a plot this much wider than tall spans the page and is shown at its own size (its labels stay
#: readable), scrolled sideways inside its frame
WIDE_ASPECT = 3.5
CSS_STATUS = {s: "s-" + s.replace(" ", "-") for s in SYMBOL}
#: the one-line legend over the table (MEANING, shortened; the page's "How to read" section says more)
LEGEND_WORDS = {"V": "privacy violation", "B": "other bug", "F": "finding outside Table 2",
                "clean": "checked and passed", "not applicable": "not applicable", "not checked": "not checked"}


def _panel_css() -> str:
    rules = [f"tr.row:has(.p-{i} details[open])+tr.ev .ev-{i}{{display:block}}" for i in range(len(PANELS))]
    return "\n".join(["tr.ev{display:none}", "tr.row:has(details[open])+tr.ev{display:table-row}",
                      "tr.ev .ev{display:none}", *rules])


CSS = """
body{font-family:system-ui,sans-serif;font-size:14px;margin:.5em;line-height:1.3}
header{display:flex;flex-wrap:wrap;align-items:baseline;column-gap:1em}
h1{font-size:19px;margin:.1em 0 .3em} h2{font-size:17px;margin:1em 0 .4em}
p.legend{margin:.1em 0 .5em;font-size:13px} .legend .item{white-space:nowrap;margin-right:.5em}
.chip{display:inline-block;min-width:1.6em;text-align:center;border:1px solid #bbb;border-radius:3px;
  margin-right:.25em;font-weight:bold}
table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:2px 3px;vertical-align:top;text-align:center;
  overflow-wrap:normal;word-break:normal;hyphens:manual}
thead th{font-size:12px;background:#f5f5f5;vertical-align:bottom}
th.impl{text-align:left;font-size:13px} th.impl small{display:block;font-weight:normal;color:#555;font-size:11px}
td.audit,td.cervical{font-size:12px;text-align:right} .nw{white-space:nowrap}
summary{cursor:pointer;font-weight:bold;list-style:none;text-decoration:underline dotted #999}
summary::-webkit-details-marker{display:none}
details[open]>summary{outline:2px solid #1565c0;outline-offset:1px}
.s-V{color:#b71c1c;background:#ffebee} .s-B{color:#e65100;background:#fff3e0} .s-F{color:#6a1b9a;background:#f3e5f5}
.s-clean{color:#2e7d32;background:#f1f8e9} td.s-clean summary{font-size:18px;line-height:16px;text-decoration:none}
.s-not-applicable{color:#616161;font-weight:normal;
  background:repeating-linear-gradient(135deg,#e6e6e6 0 4px,#fafafa 4px 8px)}
.s-not-applicable summary{font-weight:normal;font-style:italic;font-size:11px}
.s-not-checked{color:#795548;background:#fffde7}
td.v-violation summary{color:#b71c1c} td.v-pass summary{color:#2e7d32}
td.v-outside-claim summary{color:#e65100} td.v-not-confirmed summary{color:#6d4c41}
tr.ev td{text-align:left;background:#fafafa;font-size:12px;padding:.4em .6em}
tr.ev .ev{margin:.2em 0 .5em} tr.ev ul{margin:.2em 0;padding-left:1.4em}
li.bad{color:#b71c1c} li.ok{color:#33691e} li.na{color:#616161} li.ack{color:#795548}
.short{display:none}
@media (min-width:1101px){td.audit summary,td.cervical summary{white-space:nowrap}}
@media (max-width:1100px){.long{display:none} .short{display:inline} td.cervical summary{white-space:nowrap}}
#charts{display:grid;grid-template-columns:1fr 1fr;grid-auto-flow:row dense;gap:.6em}
#charts h2{grid-column:1/-1}
figure{margin:0;min-width:0} figure.wide{grid-column:1/-1} img{width:100%;height:auto;border:1px solid #eee}
.scroll{overflow-x:auto} .scroll img{width:auto;max-width:none}
figcaption{font-size:12px;color:#555}
@media (max-width:1000px){#charts{grid-template-columns:1fr}}
"""


def _list(items: list[str]) -> str:
    return f"<ul>{''.join(items)}</ul>"


def _evidence_item(e) -> str:  # noqa: ANN001 - an Evidence
    cls = "bad" if not e.passed else ("ok" if e.applicable else "na")
    return f"<li class='{cls}'><b>{esc(e.kind)}</b> <code>{esc(e.ref)}</code>: {esc(e.message)}</li>"


def _clickable(index: int, cls: str, label: str, title: str) -> str:
    return (f"<td class='p-{index} {cls}' title='{esc(title)}'><details><summary>{label}</summary>"
            f"</details></td>")


def _name_html(name: str) -> str:
    """A name that may wrap after ':' (and, as browsers do, after '-'), never inside a word."""
    return esc(name).replace(":", ":<wbr>")


def _cells(row: Row) -> tuple[list[str], list[str]]:
    """The row's cells and its evidence panels."""
    tds, panels = [], []
    for i, c in enumerate(COLUMNS):
        cell: Cell = row.cells[c]
        meaning = MEANING[cell.status]
        tds.append(_clickable(i, CSS_STATUS[cell.status], esc(cell_text(cell)), f"{header_words(c)}: {meaning}"))
        items = [_evidence_item(e) for e in cell.evidence] or ["<li>no check ran</li>"]
        panels.append(f"<div class='ev ev-{i}'><b>{esc(row.impl)} · {esc(header_words(c))}: "
                      f"{esc(cell_text(cell))} ({esc(meaning)})</b>{_list(items)}</div>")
    a, v = PANELS.index("audit"), PANELS.index("cervical")
    if row.audit:
        verdict = str(row.audit.get("verdict", "")).replace(" ", "-")
        label = (f"<span class='long'>{esc(audit_text(row.audit))}</span>"
                 f"<span class='short'>{esc(audit_short(row.audit))}</span>")
        tds.append(_clickable(a, f"audit v-{esc(verdict)}", label, "worst-case audit"))
        facts = [f"<li><b>{esc(k)}</b>: {esc(val)}</li>" for k, val in audit_facts(row.audit)]
        panels.append(f"<div class='ev ev-{a}'><b>{esc(row.impl)} · worst-case audit</b>{_list(facts)}</div>")
    else:
        tds.append("<td class='audit' title='no stored audit result: not a pass'>—</td>")
    if row.cervical:
        entries = [row.cervical.get(kind) for kind in cervical.KINDS]
        verdict = "violation" if any(e and e.get("verdict") == "violation" for e in entries) else "other"
        parts = cervical.cell_parts(row.cervical)
        label = ("<span class='long'>" + " / ".join(f"<span class='nw'>{esc(p)}</span>" for p in parts) + "</span>"
                 "<span class='short'>" + " / ".join(esc(p.rsplit(" (", 1)[0]) for p in parts) + "</span>")
        tds.append(_clickable(v, f"cervical v-{verdict}", label, "Cervical GroundHog audits"))
        facts = [f"<li><b>{esc(k)}</b>: {esc(val)}</li>" for e in entries if e for k, val in cervical.entry_facts(e)]
        facts += [f"<li><b>{esc(kind)}</b>: not audited</li>" for kind, e in zip(cervical.KINDS, entries) if not e]
        panels.append(f"<div class='ev ev-{v}'><b>{esc(row.impl)} · Cervical GroundHog audits</b>"
                      f"{_list(facts)}</div>")
    else:
        tds.append("<td class='cervical' title='not audited on Cervical: not a pass'>—</td>")
    return tds, panels


def _name_th(row: Row) -> tuple[str, str]:
    """The row header, and for a real-library row the panel with its library, env and acknowledged findings."""
    if not row.target:
        return f"<th scope='row' class='impl'>{_name_html(row.impl)}</th>", ""
    t = row.target
    m = PANELS.index("meta")
    facts = [f"<li>{esc(t['library'])} {esc(str(t['version']))}, {esc(t['env'])} env: <code>{esc(t['location'])}</code></li>",
             f"<li>static scan of {t['files_scanned']} installed file(s)</li>",
             f"<li>{esc(t['property_checks'])}</li>"]
    facts += [f"<li class='ack'><b>acknowledged</b> <code>{esc(a['ref'])}</code>: {esc(a['message'])}</li>"
              for a in t["acknowledged"]]
    facts += [f"<li>not analysed <code>{esc(a['ref'])}</code>: {esc(a['message'])}</li>" for a in t.get("not_analysed", [])]
    if t.get("note"):
        facts.append(f"<li>{esc(t['note'])}</li>")
    th = (f"<th scope='row' class='impl p-{m}'>{_name_html(row.impl)}<details class='meta'><summary><small>"
          f"{esc(target_line(row))}</small></summary></details></th>")
    return th, f"<div class='ev ev-{m}'><b>{esc(row.impl)} · {esc(target_line(row))}</b>{_list(facts)}</div>"


def _head() -> str:
    cols = "".join(f"<th scope='col'><span class='long'>{esc(header_words(c))}</span>"
                   f"<abbr class='short' title='{esc(header_words(c))}'>{esc(SHORT[c])}</abbr></th>" for c in COLUMNS)
    return (f"<tr><th scope='col' class='impl'>implementation</th>{cols}"
            "<th scope='col' class='audit'>audit ε_emp<br><small>worst case</small></th>"
            "<th scope='col' class='cervical'>audit: Cervical<br><small>GroundHog</small></th></tr>")


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (0, 0 when it is not a PNG)."""
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0
    return struct.unpack(">II", head[16:24])


def _figures(images: list[Path]) -> str:
    out = []
    for img in sorted(images, key=lambda p: (FIRST.index(p.name) if p.name in FIRST else len(FIRST), p.name)):
        width, height = png_size(img)
        data = base64.b64encode(img.read_bytes()).decode()
        tag = f"<img alt='{esc(img.name)}' src='data:image/png;base64,{data}'>"
        if height and width / height > WIDE_ASPECT:  # at its own size, scrolled sideways inside its frame
            out.append(f"<figure class='wide'><div class='scroll'>{tag}</div><figcaption>{esc(img.name)} "
                       "(full size: scroll sideways)</figcaption></figure>")
        else:
            out.append(f"<figure>{tag}<figcaption>{esc(img.name)}</figcaption></figure>")
    return "".join(out)


def legend_line() -> str:
    chips = "".join(f"<span class='item'><span class='chip {CSS_STATUS[s]}'>{esc(SYMBOL[s])}</span>"
                    f"{esc(LEGEND_WORDS[s])}</span>" for s in SYMBOL)
    return (f"<p class='legend'>{chips} <span class='item'>· click a cell for its evidence · "
            "<a href='#about'>how to read this page</a> · <a href='#charts'>charts</a></span></p>")


def about(matrix: Matrix, scope: str, sources: list[str], cervical_sources: list[str]) -> str:
    """The details the legend line leaves out."""
    letters = cervical.letters_used([row.cervical for row in matrix.rows])
    items = [f"Generated by <code>{esc(matrix.generated_by)}</code>{esc(scope)}.",
             "Columns: the nine categories of Table 2 of the PATE-GAN audit plus <i>general</i> (findings outside "
             "it); a cell is V/B/F when any piece of its evidence fails, <i>checked and passed</i> when a check that "
             "applies to the code ran and passed, <i>not applicable</i> when the checks that ran look for code the "
             "row does not have (e.g. a PATE moments accountant in a library without PATE), <i>no check ran</i> "
             "otherwise — neither of the last two is a pass.",
             "audit ε_emp: the worst-case audit's empirical lower bound on ε, its verdict and runs per world. A "
             "real library is judged under the neighbouring relation it claims: <i>outside claim</i> = it leaks "
             "only under a relation the library does not claim (e.g. add/remove when it treats the row count as "
             "public); <i>not confirmed</i> = not significant after the Holm correction over every audit of "
             "<code>reports/audit_real.json</code>. Short forms: V, P, U (underpowered), NC, OC.",
             esc(cervical.legend(letters)) + ".",
             "A real-library row's second line opens its library, version, environment and acknowledged findings."]
    if sources:
        items.append("Audit column read from " + ", ".join(f"<code>{esc(s)}</code>" for s in sources) + ".")
    if cervical_sources:
        items.append("Cervical column read from " + ", ".join(f"<code>{esc(s)}</code>" for s in cervical_sources) + ".")
    return "<section id='about'><h2>How to read this page</h2>" + _list([f"<li>{i}</li>" for i in items]) + "</section>"


def html_page(matrix: Matrix, images: list[Path] | None, scope: str, sources: list[str],
              cervical_sources: list[str]) -> str:
    body = []
    for row in matrix.rows:
        th, meta = _name_th(row)
        tds, panels = _cells(row)
        body.append(f"<tr class='row'>{th}{''.join(tds)}</tr>"
                    f"<tr class='ev'><td colspan='{len(COLUMNS) + 3}'>{meta}{''.join(panels)}</td></tr>")
    totals = matrix.totals()
    charts = f"<section id='charts'><h2>Charts</h2>{_figures(images or [])}</section>" if images else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dpcheck violation matrix</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>{CSS}{_panel_css()}
</style></head><body>
<header><h1>dpcheck violation matrix</h1>{legend_line()}</header>
<table class="matrix"><thead>{_head()}</thead><tbody>{''.join(body)}</tbody></table>
<p>Totals: {totals['V']} V, {totals['B']} B.</p>
{charts}
{about(matrix, scope, sources, cervical_sources)}
</body></html>
"""
