"""A file whose findings depend on other files (a rule read them) is left out of the per-file cache."""
from __future__ import annotations

import os
from pathlib import Path

import libcst as cst

from dpcheck.rule import Rule
from dpcheck.rules.dp305_subsampling_assumed import SubsamplingAssumed
from dpcheck.scan import outside_reads
from dpcheck.scan.engine import safe_analyse
from test_dp305_importer import DRIVER, LOCAL


class _ReadsSibling(Rule):
    """Test-only rule: reports when ``settings.py`` beside the file holds a fixed seed."""

    id = "DP993"
    name = "test-reads-sibling"
    category = "general"
    summary = "sibling seed"

    def visit_Module(self, node: cst.Module) -> None:
        sibling = os.path.join(os.path.dirname(self.ctx.path), "settings.py")
        if os.path.isfile(sibling):
            with open(sibling, encoding="utf-8") as handle:
                if "SEED = 0" in handle.read():
                    self.report(node.body[0], "seed fixed in settings.py")


class _ReadsNothing(_ReadsSibling):
    id = "DP994"

    def visit_Module(self, node: cst.Module) -> None:
        self.report(node.body[0], "always")


def test_a_rule_that_reads_a_sibling_makes_the_result_uncacheable(tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text("SEED = 0\n")
    main = tmp_path / "main.py"
    main.write_text("import settings\n")
    analysis = safe_analyse(main.read_text(), str(main), [_ReadsSibling])
    assert [f.rule for f in analysis.findings] == ["DP993"] and not analysis.cacheable
    analysis = safe_analyse(main.read_text(), str(main), [_ReadsNothing])
    assert analysis.findings and analysis.cacheable


def test_reads_of_the_file_itself_and_of_installed_code_do_not_count(tmp_path: Path) -> None:
    main = tmp_path / "main.py"
    main.write_text("x = 1\n")
    with outside_reads.watching() as seen:
        main.read_text()
        Path(os.__file__).read_text()
    assert seen and not outside_reads.reads_beyond(seen, str(main))
    with outside_reads.watching() as seen:
        os.listdir(tmp_path)
    assert outside_reads.reads_beyond(seen, str(main))


def test_dp305_reading_its_importer_is_not_cached(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "local_dp.py").write_text(LOCAL)
    (pkg / "driver.py").write_text(DRIVER)
    local = pkg / "local_dp.py"
    analysis = safe_analyse(LOCAL, str(local), [SubsamplingAssumed])
    assert any(f.rule == "DP305" for f in analysis.findings)
    assert not analysis.cacheable  # an edit of driver.py must be able to change this result
