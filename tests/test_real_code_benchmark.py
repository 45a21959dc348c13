"""benchmarks/real_code.py: label matching, precision figures and --check, on a tiny local corpus."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "real_code_bench", Path(__file__).resolve().parents[1] / "benchmarks" / "real_code.py"
)
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["real_code_bench"] = bench
_SPEC.loader.exec_module(bench)

SNIPPET = "return np.sqrt(2 * np.log(1.25 * (10 ^ int(delta)))) / epsilon"
NOISE_MODULE = f"""import numpy as np


def gaussian_sigma(epsilon, delta):
    {SNIPPET}
"""


def hit(line: int, snippet: str = "x = max(data)", rule: str = "DP202", path: str = "p/m.py") -> "bench.Hit":
    return bench.Hit("pkg", path, line, rule, snippet, "message")


def label(line: int, verdict: str = "tp", snippet: str = "x = max(data)", rule: str = "DP202",
          path: str = "p/m.py") -> "bench.Label":
    return bench.Label("pkg", path, line, rule, snippet, verdict, "reason")


# --------------------------------------------------------------------------- matching

def test_label_survives_a_line_shift() -> None:
    m = bench.match([hit(40)], [label(31)])
    assert [(h.line, l.line) for h, l in m.labelled] == [(40, 31)]
    assert m.unlabelled == [] and m.stale == []


def test_same_line_text_twice_pairs_by_nearest_line() -> None:
    hits = [hit(10), hit(90)]
    labels = [label(93, "fp"), label(12, "tp")]
    m = bench.match(hits, labels)
    assert {h.line: l.label for h, l in m.labelled} == {10: "tp", 90: "fp"}


def test_two_findings_on_one_line_pair_by_column() -> None:
    hits = [bench.Hit("pkg", "p/m.py", 5, "DP202", "b = (min(x), max(x))", "", col=6),
            bench.Hit("pkg", "p/m.py", 5, "DP202", "b = (min(x), max(x))", "", col=14)]
    labels = [bench.Label("pkg", "p/m.py", 5, "DP202", "b = (min(x), max(x))", "fp", "", col=14),
              bench.Label("pkg", "p/m.py", 5, "DP202", "b = (min(x), max(x))", "tp", "", col=6)]
    m = bench.match(hits, labels)
    assert {h.col: l.label for h, l in m.labelled} == {6: "tp", 14: "fp"}


def test_dumped_labels_load_back_one_per_line(tmp_path: Path) -> None:
    entries = [vars(label(20, "fp")) | {"col": 3}, vars(label(7, "tp", snippet="y = min(data)"))]
    path = tmp_path / "labels.json"
    path.write_text(bench.dump_labels(entries))
    loaded = bench.load_labels(path)
    assert [(l.line, l.label, l.snippet, l.col) for l in loaded] == [(7, "tp", "y = min(data)", 0),
                                                                      (20, "fp", "x = max(data)", 3)]
    assert len(path.read_text().splitlines()) == 2 + len(entries) + 1


def test_changed_line_text_leaves_finding_unlabelled_and_label_stale() -> None:
    m = bench.match([hit(10, "x = max(rows)")], [label(10)])
    assert [h.snippet for h in m.unlabelled] == ["x = max(rows)"]
    assert [l.snippet for l in m.stale] == ["x = max(data)"]


@pytest.mark.parametrize("field,value", [("rule", "DP201"), ("path", "p/other.py")])
def test_rule_and_path_must_agree(field: str, value: str) -> None:
    m = bench.match([hit(10, **{field: value})], [label(10)])
    assert len(m.unlabelled) == 1 and len(m.stale) == 1 and not m.labelled


def test_one_label_covers_only_one_finding() -> None:
    m = bench.match([hit(10), hit(11)], [label(10)])
    assert len(m.labelled) == 1 and [h.line for h in m.unlabelled] == [11]


def test_summary_precision_and_fp_rate() -> None:
    m = bench.match([hit(1), hit(2), hit(3), hit(4)],
                    [label(1, "tp"), label(2, "tp"), label(3, "fp"), label(4, "acceptable")])
    s = bench.summarise(m, lines=200_000)
    assert (s.tp, s.fp, s.acceptable, s.unlabelled) == (2, 1, 1, 0)
    assert s.precision == pytest.approx(2 / 3)
    assert s.fp_per_100k == pytest.approx(0.5)
    assert s.failures() == []
    assert bench.summarise(m, lines=50_000).failures() == ["FP/100k = 2.00 > 1.0"]


def test_internal_error_fails_the_check() -> None:
    s = bench.summarise(bench.match([], []), lines=1000, crashed=True)
    assert s.failures() == ["dpcheck reported an internal error (DP005)"]
    assert bench.summarise(bench.match([], []), lines=1000).failures() == []


def test_unknown_label_value_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps({"labels": [{"package": "pkg", "path": "m.py", "line": 1, "rule": "DP101",
                                            "snippet": "x", "label": "maybe", "reason": ""}]}))
    with pytest.raises(ValueError, match="maybe"):
        bench.load_labels(path)


# --------------------------------------------------------------------------- end to end

@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    module = tmp_path / "corpus" / "pkg" / "pkg" / "noise.py"
    module.parent.mkdir(parents=True)
    module.write_text(NOISE_MODULE)
    (module.parent / "clean.py").write_text("def add(a, b):\n    return a + b\n" * 600)
    return tmp_path / "corpus"


def run(corpus: Path, labels: Path, *extra: str) -> int:
    return bench.main(["--corpus-dir", str(corpus), "--labels", str(labels), "--no-speed", "--select", "DP101",
                       *extra])


def write_labels(path: Path, line: int, verdict: str) -> None:
    entry = {"package": "pkg", "path": "pkg/noise.py", "line": line, "rule": "DP101", "snippet": SNIPPET,
             "label": verdict, "reason": "XOR written for power"}
    path.write_text(json.dumps({"format": 1, "labels": [entry]}))


def test_check_fails_on_unlabelled_finding_and_stub_lists_it(corpus: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    stub = tmp_path / "stub.json"
    assert run(corpus, tmp_path / "none.json", "--check", "--stub", str(stub)) == 1
    out = capsys.readouterr().out
    assert "UNLABELLED findings (1)" in out and "pkg/pkg/noise.py:5" in out
    assert [(s["path"], s["line"], s["rule"], s["snippet"]) for s in json.loads(stub.read_text())] == [
        ("pkg/noise.py", 5, "DP101", SNIPPET)
    ]
    assert run(corpus, tmp_path / "none.json") == 0  # without --check the report never fails


def test_check_passes_with_a_label_written_before_a_line_shift(corpus: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.json"
    write_labels(labels, 5, "tp")
    module = corpus / "pkg" / "pkg" / "noise.py"
    module.write_text("# a header comment\n\n\n" + module.read_text())  # the finding moves to line 8
    assert run(corpus, labels, "--check") == 0
    out = capsys.readouterr().out
    assert "UNLABELLED" not in out and "Stale" not in out
    assert "precision TP/(TP+FP) = 1.00" in out


def test_check_fails_when_false_positives_exceed_the_rate(corpus: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.json"
    write_labels(labels, 5, "fp")
    assert run(corpus, labels, "--check") == 1
    out = capsys.readouterr().out
    assert "CHECK FAILED: FP/100k" in out and "precision TP/(TP+FP) = 0.00" in out


@pytest.mark.parametrize("verdict,code", [("fp", 0), ("acceptable", 0), ("tp", 1)])
def test_label_of_a_finding_no_longer_reported_is_stale(corpus: Path, tmp_path: Path, verdict: str, code: int,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    labels = tmp_path / "labels.json"
    write_labels(labels, 5, verdict)
    module = corpus / "pkg" / "pkg" / "noise.py"
    module.write_text(module.read_text().replace("10 ^ int(delta)", "10 ** int(delta)"))
    assert run(corpus, labels, "--check") == code  # a lost true positive is a regression
    out = capsys.readouterr().out
    assert "Stale labels (1)" in out
    assert ("LOST true positives (1)" in out) == (verdict == "tp")


def test_non_blank_lines_are_counted(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("a = 1\n\n   \nb = 2\n")
    assert bench.nonblank_lines(f) == 2


def test_speed_section_reports_both_tools_on_both_parts(corpus: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Only the report's structure is checked: timings are never asserted."""
    assert bench.main(["--corpus-dir", str(corpus), "--labels", str(tmp_path / "none.json"), "--select", "DP101"]) == 0
    out = capsys.readouterr().out
    noisy = len([line for line in NOISE_MODULE.splitlines() if line.strip()])
    assert f"whole corpus: {noisy + 1200:,} lines, 1 path(s)" in out  # clean.py: 600 × 2 lines
    assert f"DP-dense part (files mentioning epsilon/ε/noise/privacy): {noisy} lines, 1 path(s)" in out
    assert out.count("dpcheck/bandit:") == 2 and out.count("    bandit   wall") == 2


def test_gate_check_compares_findings_with_the_gate_on_and_off(corpus: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert run(corpus, tmp_path / "none.json", "--gate-check") == 0
    out = capsys.readouterr().out
    assert "Gate check: 1 findings with the ast gate, 1 without" in out
    assert "identical findings" in out


def test_sdist_unpacks_without_its_top_folder(tmp_path: Path) -> None:
    """A source-only package (autodp, pyvacy) unpacks like a wheel: its files at the root."""
    import tarfile

    src = tmp_path / "pkg-1.0" / "pkg"
    src.mkdir(parents=True)
    (src / "mod.py").write_text("x = 1\n")
    archive = tmp_path / "pkg-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(tmp_path / "pkg-1.0", arcname="pkg-1.0")
    target = tmp_path / "out" / "pkg-1.0"
    target.parent.mkdir()
    bench.unpack(archive, target)
    assert (target / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (target / ".complete").read_text().strip() == "pkg-1.0.tar.gz"


def test_sdist_download_is_found_by_name_and_version(tmp_path: Path) -> None:
    (tmp_path / "pyvacy-0.0.32.tar.gz").write_bytes(b"")
    (tmp_path / "pyvacy-0.0.3.tar.gz").write_bytes(b"")
    found = bench.download(bench.Dist("pyvacy", "0.0.32", sdist=True), tmp_path)
    assert found.name == "pyvacy-0.0.32.tar.gz"
