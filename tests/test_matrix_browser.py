"""The HTML matrix in a real headless Chromium (Debian's, installed by scripts/ci_browser.sh), at
1280 and at 800 px wide.

No skip when the browser is missing: CI installs it, and a report nobody can open is a failure.
Screenshots of every page, width and opened cell go to pytest's temporary folder, and to
``$DPCHECK_SCREENSHOTS`` when it names a folder (for a review by eye).
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dpcheck.checks.result import CheckResult
from dpcheck.commands.matrix import committed_target_audit, write_reports
from dpcheck.matrix.applicability import row_scopes
from dpcheck.matrix.cells import make_cells, static_evidence
from dpcheck.matrix.collect import build_row
from dpcheck.matrix.model import Matrix, Row
from dpcheck.matrix.targets import PROPERTY_NOTE, build_target_row

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"
CHROMIUM = "/usr/bin/chromium"
HEIGHT = 800
WIDTHS = (1280, 800)

#: every word of the table's text whose glyphs sit on more than one line (a break inside a word);
#: a name may break after ':' or '-', so those end a word
BROKEN_WORDS = """() => {
  const broken = [];
  const cells = document.querySelectorAll('thead th, tr.row th, tr.row td');
  for (const cell of cells) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.data.matchAll(/[^\\s:\\-\\/]+[:\\-]?/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        if (tops.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201 - a playwright Browser
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # root in CI containers: Chromium's sandbox needs user namespaces it may not get
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folders = [tmp_path_factory.mktemp("screenshots")]
    if os.environ.get("DPCHECK_SCREENSHOTS"):
        folders.append(Path(os.environ["DPCHECK_SCREENSHOTS"]))
        folders[-1].mkdir(parents=True, exist_ok=True)
    return folders


def _separate_env_row(name: str) -> Row:
    """A row of a target from a separate env, as the page shows it. The scan of an env's
    site-packages is tested in test_matrix_targets.py; here only the page matters, so the row is
    built from its parts (no env needed) with the committed audit result."""
    from dpcheck.rules import all_rules

    rules = list(all_rules())
    evidence = static_evidence([], [r.id for r in rules], {r.id: r.category for r in rules},
                               row_scopes("synthesizer", name))
    target = {"library": "smartnoise-synth", "version": "1.0.8", "env": "smartnoise",
              "location": "~/.cache/dpcheck/envs/smartnoise/lib/python3.11/site-packages", "files_scanned": 120,
              "kind": "synthesizer", "dataset": "worstcase-categorical", "note": "", "property_checks": PROPERTY_NOTE,
              "acknowledged": [], "not_analysed": []}
    return Row(name, make_cells(evidence), committed_target_audit(name, REPORTS), [], [], target)


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page with a vendored row (with both Cervical audits and a property check that does not
    apply), a main-env target, a target from a separate env, and plots."""
    from cervical_fixtures import audit_file, choice

    from dpcheck.matrix import cervical

    out = tmp_path_factory.mktemp("matrix")
    for png in ("audit_worstcase.png", "audit_real.png"):
        shutil.copy(REPORTS / png, out / png)
    folder = tmp_path_factory.mktemp("reports") / "audit_cervical"
    audit_file(folder, "updated", "target397", target=397, eps_cp=1.71, verdict="violation")
    audit_file(folder, "updated", "selected", target=123, eps_cp=1.8, verdict="violation",
               selection=choice(123, {123: 0.97, 397: 0.9}))
    skipped = CheckResult("updated", "moments_accountant", "accountant.moments", "not_applicable", "no accountant")
    rows = [build_row("updated", root=ROOT, property_results=[skipped])]
    rows[0].cervical = cervical.by_impl(cervical.aggregate(folder))["updated"]
    rows.append(build_target_row("diffprivlib:GaussianNB-nobounds", root=ROOT,
                                 audit=committed_target_audit("diffprivlib:GaussianNB-nobounds", REPORTS)))
    rows.append(_separate_env_row("smartnoise-synth:pategan"))
    write_reports(Matrix(rows, True, "test_matrix_browser"), out)
    return out / "violation_matrix.html"


def _open(browser, path: Path, width: int):  # noqa: ANN001, ANN202 - playwright objects
    page = browser.new_page(viewport={"width": width, "height": HEIGHT})
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on("requestfailed", lambda req: errors.append(f"request failed: {req.url}"))
    page.goto(path.as_uri(), wait_until="load")
    return page, errors


def _shoot(page, shots: list[Path], name: str) -> None:  # noqa: ANN001
    for folder in shots:
        page.screenshot(path=str(folder / f"{name}.png"))


def _row_names(page) -> list[str]:  # noqa: ANN001
    rows = page.locator("tbody tr.row")
    return [rows.nth(i).locator("th").first.inner_text().replace("\n", "").split("diffprivlib 0")[0]
            .split("smartnoise-synth 1")[0] for i in range(rows.count())]


def _opens_below_its_row(page, details) -> None:  # noqa: ANN001
    """Clicking the cell opens its evidence in the panel under its row; the next row moves down
    and stays uncovered."""
    row = details.locator("xpath=ancestor::tr[1]")
    panels = row.locator("xpath=following-sibling::tr[1]")
    cls = details.locator("xpath=..").get_attribute("class") or ""
    index = next(c for c in cls.split() if c.startswith("p-")).removeprefix("p-")
    panel = panels.locator(f".ev-{index}")
    assert not panel.is_visible()
    details.locator("summary").click()
    assert details.evaluate("d => d.open") is True
    assert panel.is_visible() and panel.locator("li").count() >= 1
    below = row.locator("xpath=following-sibling::tr[contains(@class, 'row')][1]")
    if below.count():
        panel_box, below_box = panel.bounding_box(), below.bounding_box()
        assert panel_box and below_box and below_box["y"] >= panel_box["y"] + panel_box["height"] - 1
        below.scroll_into_view_if_needed()
        box = below.locator("th").first.bounding_box()
        hit = page.evaluate("([x, y]) => document.elementFromPoint(x, y).closest('tr')?.className",
                            [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
        assert hit == "row", hit
    details.locator("summary").click()  # closed again
    assert not panel.is_visible()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("which", ["generated", "committed"])
def test_matrix_page_in_chromium(browser, generated: Path, shots: list[Path], which: str, width: int) -> None:  # noqa: ANN001
    path = generated if which == "generated" else REPORTS / "violation_matrix.html"
    page, errors = _open(browser, path, width)
    try:
        _shoot(page, shots, f"{which}-{width}")
        assert errors == [], errors
        headers = page.locator("thead th")
        texts = [t.replace("\n", " ") for t in headers.all_inner_texts()]
        assert texts[0] == "implementation", texts
        assert ("labels distribution" if width > 1100 else "lbl") in texts, texts
        assert texts[-2].startswith("audit ε_emp") and texts[-1].startswith("audit: Cervical"), texts
        for i in range(headers.count()):
            th = headers.nth(i)
            box = th.bounding_box()
            assert th.is_visible() and box is not None, texts[i]
            assert box["x"] >= 0 and box["x"] + box["width"] <= width, (texts[i], box)
        # nothing sticks out sideways, and no word is broken across lines
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.evaluate(BROKEN_WORDS) == []

        # a one-line legend (two at 800 px) with the details behind a link; no letter nobody uses
        legend = page.locator("p.legend")
        assert legend.bounding_box()["height"] <= (24 if width > 1100 else 44), legend.bounding_box()
        assert legend.locator("a[href='#about']").is_visible()
        body = page.locator("body").inner_text()
        if "U 0" not in body and "U 1" not in body and "U 2" not in body:
            assert "U = underpowered" not in body

        names = _row_names(page)
        real = [i for i, n in enumerate(names) if n.startswith("diffprivlib:")]
        assert real, names
        rows = page.locator("tbody tr.row")
        # not applicable is drawn unlike checked-and-passed
        na, clean = rows.nth(real[0]).locator("td.s-not-applicable").first, page.locator("td.s-clean").first
        assert na.inner_text().strip() == "n/a" and clean.inner_text().strip() == "·"
        style = "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).backgroundImage, getComputedStyle(e).color]"
        assert na.evaluate(style) != clean.evaluate(style)
        # the audit column of a real-library row shows its stored result
        audit_cell = rows.nth(real[0]).locator("td.audit")
        assert audit_cell.is_visible() and audit_cell.inner_text().strip() not in ("", "—"), audit_cell.inner_text()

        # the Cervical column: every built-in row shows what the matrix JSON (or the fixture) holds
        expected = _cervical_cells(path, short=width <= 1100)
        for i, name in enumerate(names):
            cell = rows.nth(i).locator("td.cervical")
            assert cell.is_visible() and " ".join(cell.inner_text().split()) == expected.get(name, "—"), name
        audited = [i for i, n in enumerate(names) if expected.get(n, "—") != "—"]

        # evidence opens on click below its row: a marked cell, the audit cell, a real row's library
        # line, a Cervical cell
        marked = page.locator("td.s-V details, td.s-B details").first
        for details in (marked, audit_cell.locator("details"), rows.nth(real[0]).locator("th details"),
                        *[rows.nth(i).locator("td.cervical details") for i in audited[:1]]):
            _opens_below_its_row(page, details)
        marked.locator("summary").click()
        page.evaluate("window.scrollTo(0, 0)")
        _shoot(page, shots, f"{which}-{width}-open")
        marked.locator("summary").click()  # closed: the fold below is the page as it opens
        assert "diffprivlib 0.6.6" in rows.nth(real[0]).locator("th").inner_text()

        # plots: loaded, large enough to read (half the page, a wide one at its own size), the first one
        # starting above the fold
        sizes = page.evaluate("[...document.images].map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight,"
                              " i.getBoundingClientRect().width, i.getBoundingClientRect().top + window.scrollY])")
        assert sizes, "no plot embedded"
        for alt, complete, natural, natural_height, shown, top in sizes:
            assert complete and natural > 0, alt
            if natural / natural_height > 3.5:  # a wide chart: at its own size, scrolled inside its frame
                assert abs(shown - natural) <= 2, (alt, shown)  # its border aside
            else:
                assert shown >= (0.9 if width < 1000 else 0.45) * width, (alt, shown)
        assert min(top for *_, top in sizes) < HEIGHT, sizes
        assert errors == [], errors
    finally:
        page.close()


def _cervical_cells(page: Path, short: bool) -> dict[str, str]:
    """impl -> the text its Cervical cell must show: from the matrix JSON next to the committed page,
    from the fixture for the generated one (target 397, then the selected target; under 1100 px
    without the record numbers, which the opened cell lists)."""
    from dpcheck.matrix import cervical

    def text(parts: list[str]) -> str:
        return " / ".join(p.rsplit(" (", 1)[0] if short else p for p in parts)

    if page.parent == REPORTS:
        rows = json.loads((REPORTS / "violation_matrix.json").read_text())["rows"]
        return {r["impl"]: text(cervical.cell_parts(r["audit_cervical"])) if r["audit_cervical"] else "—"
                for r in rows}
    return {"updated": text(["V 1.71 (397)", "V 1.80 (#123)"])}


def test_generated_page_has_a_separate_env_row_and_a_check_that_did_not_apply(browser, generated: Path) -> None:  # noqa: ANN001
    page, errors = _open(browser, generated, WIDTHS[0])
    try:
        row = page.locator("tbody tr.row", has_text="smartnoise-synth:pategan")
        assert "smartnoise-synth 1.0.8, smartnoise env" in row.locator("th").inner_text()
        assert "pass" in row.locator("td.audit").inner_text()
        # the vendored row's moments_accountant cell lists the property check that did not apply
        updated = page.locator("tbody tr.row").first
        cell = updated.locator("td.p-2 details")
        cell.locator("summary").click()
        panel = updated.locator("xpath=following-sibling::tr[1]").locator(".ev-2")
        assert panel.locator("li.na", has_text="accountant.moments").count() == 1
        assert errors == [], errors
    finally:
        page.close()
