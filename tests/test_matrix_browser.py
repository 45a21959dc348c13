"""The HTML matrix in a real headless Chromium (Debian's, installed by scripts/ci_browser.sh).

No skip when the browser is missing: CI installs it, and a report nobody can open is a failure.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dpcheck.commands.matrix import committed_target_audit, write_reports
from dpcheck.matrix.collect import build_row
from dpcheck.matrix.model import Matrix
from dpcheck.matrix.targets import build_target_row

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"
CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1280, 800


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201 - a playwright Browser
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # root in CI containers: Chromium's sandbox needs user namespaces it may not get
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page with a vendored row (with both Cervical audits), a main-env target and a target from a
    separate env, plus plots."""
    from cervical_fixtures import audit_file, choice

    from dpcheck.matrix import cervical

    out = tmp_path_factory.mktemp("matrix")
    for png in ("audit_worstcase.png", "audit_real.png"):
        shutil.copy(REPORTS / png, out / png)
    folder = tmp_path_factory.mktemp("reports") / "audit_cervical"
    audit_file(folder, "updated", "target397", target=397, eps_cp=1.71, verdict="violation")
    audit_file(folder, "updated", "selected", target=123, eps_cp=1.8, verdict="violation",
               selection=choice(123, {123: 0.97, 397: 0.9}))
    rows = [build_row("updated", root=ROOT, property_results=[])]
    rows[0].cervical = cervical.by_impl(cervical.aggregate(folder))["updated"]
    for name in ("diffprivlib:GaussianNB-nobounds", "smartnoise-synth:pategan"):
        rows.append(build_target_row(name, root=ROOT, audit=committed_target_audit(name, REPORTS)))
    write_reports(Matrix(rows, True, "test_matrix_browser"), out)
    return out / "violation_matrix.html"


def _open(browser, path: Path):  # noqa: ANN001, ANN202 - playwright objects
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    page.on("requestfailed", lambda req: errors.append(f"request failed: {req.url}"))
    page.goto(path.as_uri(), wait_until="load")
    return page, errors


@pytest.mark.parametrize("which", ["generated", "committed"])
def test_matrix_page_in_chromium(browser, generated: Path, which: str) -> None:  # noqa: ANN001
    path = generated if which == "generated" else REPORTS / "violation_matrix.html"
    page, errors = _open(browser, path)
    try:
        assert errors == [], errors
        headers = page.locator("thead th")
        texts = [t.replace("\n", "").replace("\u200b", "") for t in headers.all_inner_texts()]
        assert texts[0] == "impl" and "labels_distribution" in texts, texts
        assert texts[-2:] == ["audit ε_emp", "audit: Cervical GroundHog"], texts
        for i in range(headers.count()):
            th = headers.nth(i)
            box = th.bounding_box()
            assert th.is_visible() and box is not None, texts[i]
            assert box["x"] >= 0 and box["x"] + box["width"] <= WIDTH, (texts[i], box)
        # nothing sticks out sideways: the page needs no horizontal scrolling at 1280 px
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH

        rows = page.locator("tbody tr")
        names = [rows.nth(i).locator("th").first.inner_text().splitlines()[0] for i in range(rows.count())]
        real = [i for i, n in enumerate(names) if n.startswith("diffprivlib:")]
        assert real, names
        # the audit column of a real-library row shows its stored result
        audit_cell = rows.nth(real[0]).locator("td.audit")
        assert audit_cell.is_visible() and "(" in audit_cell.inner_text(), audit_cell.inner_text()

        # the Cervical column: every built-in row shows what the matrix JSON (or the fixture) holds
        expected = _cervical_cells(path)
        for i, name in enumerate(names):
            cell = rows.nth(i).locator("td.cervical")
            assert cell.is_visible() and cell.inner_text().strip() == expected.get(name, "—"), name
        audited = [i for i, n in enumerate(names) if expected.get(n, "—") != "—"]
        cervical_details = [rows.nth(i).locator("td.cervical details") for i in audited[:1]]

        # evidence opens on click: a marked cell, the audit cell, a real row's library line, a Cervical cell
        marked = page.locator("td.s-V details, td.s-B details").first
        for details in (marked, audit_cell.locator("details"), rows.nth(real[0]).locator("th details"),
                        *cervical_details):
            items = details.locator("ul")
            assert not items.is_visible()
            details.locator("summary").click()
            assert details.evaluate("d => d.open") is True
            assert items.is_visible() and items.locator("li").count() >= 1
        assert "diffprivlib 0.6.6" in rows.nth(real[0]).locator("th").inner_text()

        sizes = page.evaluate("[...document.images].map(i => [i.alt, i.complete, i.naturalWidth])")
        assert sizes, "no plot embedded"
        assert all(complete and width > 0 for _, complete, width in sizes), sizes
        assert errors == [], errors
    finally:
        page.close()


def _cervical_cells(page: Path) -> dict[str, str]:
    """impl -> the text its Cervical cell must show: from the matrix JSON next to the committed page,
    from the fixture for the generated one (target 397 over the selected target)."""
    from dpcheck.matrix import cervical

    if page.parent == REPORTS:
        rows = json.loads((REPORTS / "violation_matrix.json").read_text())["rows"]
        return {r["impl"]: "\n".join(cervical.cell_parts(r["audit_cervical"])) if r["audit_cervical"] else "—"
                for r in rows}
    return {"updated": "V 1.71 (397)\nV 1.80 (#123)"}


def test_generated_page_has_a_separate_env_row(browser, generated: Path) -> None:  # noqa: ANN001
    page, errors = _open(browser, generated)
    try:
        row = page.locator("tbody tr", has_text="smartnoise-synth:pategan")
        assert "smartnoise-synth 1.0.8, smartnoise env" in row.locator("th").inner_text()
        assert "pass" in row.locator("td.audit").inner_text()
        assert errors == [], errors
    finally:
        page.close()
