"""benchmarks/real_bugs.py: manifest schema, rebuilding sources from git mirrors, the label check and the
recall/precision arithmetic, on tiny synthetic mirrors made in tmp_path (no network)."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location("real_bugs_bench", _ROOT / "benchmarks" / "real_bugs.py")
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
sys.modules["real_bugs_bench"] = bench
_SPEC.loader.exec_module(bench)

SOURCE = "someone/dp-gan"
MODULE_V1 = """import numpy as np


def sigma(epsilon, delta):
    return np.sqrt(2 * np.log(1.25 * (10 ^ delta))) / epsilon
"""
#: the same module with two lines inserted above the bug: the label's lines no longer hold it
MODULE_V2 = MODULE_V1.replace("import numpy as np\n", "import numpy as np\nimport math\nimport os\n")
ANCHOR = "10 ^ delta"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def make_mirror(mirrors: Path, layout: str = "worktree", extra: dict[str, str] | None = None) -> tuple[str, str]:
    """A mirror as the fetch tool lays it out (``owner+name/repo`` with ``.git`` inside, or a bare
    ``repo``), holding two commits of one module; returns both commit ids."""
    work = mirrors.parent / "work"
    work.mkdir(parents=True)
    git(work, "init", "-q")
    (work / "pkg").mkdir()
    (work / "pkg" / "noise.py").write_text(MODULE_V1)
    (work / "data.csv").write_text("a,b\n1,2\n")
    for name, text in (extra or {}).items():
        (work / name).write_text(text)
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "one")
    first = git(work, "rev-parse", "HEAD")
    (work / "pkg" / "noise.py").write_text(MODULE_V2)
    git(work, "commit", "-q", "-am", "two")
    second = git(work, "rev-parse", "HEAD")
    target = mirrors / SOURCE.replace("/", "+") / "repo"
    target.parent.mkdir(parents=True)
    if layout == "bare":
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(target)], check=True)
    else:
        subprocess.run(["git", "clone", "-q", str(work), str(target)], check=True)
    return first, second


def manifest(commit: str, *, lines: tuple[int, int] = (5, 5), anchor: str = ANCHOR,
             findings: list[dict] | None = None, cls: str = "accountant-formula") -> dict:
    return {
        "batch": 7, "frozen_rules": "c8ebec1", "description": "synthetic",
        "sources": [{"source": SOURCE, "kind": "github", "commit": commit, "area": "pate"}],
        "bugs": [{"id": "B7-001", "source": SOURCE, "file": "pkg/noise.py", "lines": list(lines), "class": cls,
                  "why": "XOR for power", "static": True, "anchor": anchor}],
        "findings": findings or [],
    }


def write(folder: Path, data: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"batch{data['batch']}.json"
    path.write_text(json.dumps(data))
    return path


def run(tmp_path: Path, data: dict, *extra: str) -> int:
    manifests = tmp_path / "manifests"
    write(manifests, data)
    return bench.main(["--mirrors", str(tmp_path / "mirrors"), "--cache-dir", str(tmp_path / "cache"),
                       "--manifests", str(manifests), *extra])


# --------------------------------------------------------------------------- the committed manifests

def committed() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(bench.MANIFEST_DIR.glob("batch*.json"))]


def test_committed_manifests_are_valid() -> None:
    data = committed()
    assert data, "no manifest under benchmarks/real_bugs/"
    for m in data:
        assert bench.schema_errors(m, f"batch {m.get('batch')}") == []


def test_committed_bug_ids_are_unique_across_batches_and_classes_known() -> None:
    ids = [b["id"] for m in committed() for b in m["bugs"]]
    assert len(ids) == len(set(ids))
    assert {b["class"] for m in committed() for b in m["bugs"]} <= set(bench.CLASSES)


def test_batch1_meets_its_size_and_carries_the_papers_24_items() -> None:
    (batch1,) = [m for m in committed() if m["batch"] == 1]
    assert len(batch1["bugs"]) >= 40
    assert len({b["source"] for b in batch1["bugs"]}) >= 15
    assert sum(b["why"].startswith("[paper: ") for b in batch1["bugs"]) == 24
    assert all(len(b["anchor"]) <= 80 for b in batch1["bugs"])


# --------------------------------------------------------------------------- schema

@pytest.mark.parametrize("change, expected", [
    (lambda m: m["bugs"][0].update({"class": "typo"}), "class 'typo' not one of"),
    (lambda m: m["bugs"].append(dict(m["bugs"][0])), "id B7-001 used twice"),
    (lambda m: m["sources"][0].update({"commit": "abc"}), "needs a 40-hex 'commit'"),
    (lambda m: m["bugs"][0].update({"lines": [9, 3]}), "'lines' must be [first, last]"),
    (lambda m: m["bugs"][0].update({"source": "other/repo"}), "is not in 'sources'"),
    (lambda m: m["findings"].append({"source": SOURCE, "file": "f.py", "line": 1, "rule": "DP101",
                                     "label": "maybe", "bug": None}), "label 'maybe' not one of"),
    (lambda m: m["findings"].append({"source": SOURCE, "file": "f.py", "line": 1, "rule": "DP101",
                                     "label": "TP", "bug": "B9-999"}), "is not a bug id of this batch"),
    (lambda m: m["sources"].append({"source": "diffprivlib-0.5", "kind": "pypi", "area": "library"}),
     "is not name==version"),
    (lambda m: m["bugs"][0].update({"anchor": "x" * 81}), "anchor longer than 80"),
    (lambda m: m["bugs"][0].update({"withdrawn": " "}), "'withdrawn' must say why"),
    (lambda m: (m["bugs"][0].update({"withdrawn": "n is public in LDP"}),
                m["findings"].append({"source": SOURCE, "file": "f.py", "line": 1, "rule": "DP311",
                                      "label": "TP", "bug": m["bugs"][0]["id"]})),
     "labelled TP on withdrawn bug"),
])
def test_schema_errors_name_the_problem(change, expected: str) -> None:
    data = manifest("a" * 40)
    assert bench.schema_errors(data) == []
    change(data)
    errors = bench.schema_errors(data)
    assert any(expected in e for e in errors), errors


# --------------------------------------------------------------------------- rebuilding and the label check

@pytest.mark.parametrize("layout", ["worktree", "bare"])
def test_label_holds_at_its_commit_and_fails_when_the_anchor_moved(tmp_path: Path, layout: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    first, second = make_mirror(tmp_path / "mirrors", layout)
    assert run(tmp_path, manifest(first), "--labels-only") == 0
    rebuilt = tmp_path / "cache" / f"someone+dp-gan@{first[:12]}"
    assert (rebuilt / "pkg" / "noise.py").read_text() == MODULE_V1
    assert not (rebuilt / "data.csv").exists(), "only Python files are extracted"
    capsys.readouterr()
    assert run(tmp_path, manifest(second), "--labels-only") == 1
    out = capsys.readouterr().out
    assert "B7-001" in out and "not within pkg/noise.py:5-5" in out


def test_held_out_batch_is_rebuilt_only_when_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, _ = make_mirror(tmp_path / "mirrors")
    held = manifest(first) | {"frozen_rules": None}
    assert bench.schema_errors(held) == []
    assert run(tmp_path, held, "--labels-only") == 0
    captured = capsys.readouterr()
    assert "held-out batch(es) [7] not scanned" in captured.err
    assert "0 bug(s) in 0 batch(es)" in captured.out
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
    assert run(tmp_path, held, "--labels-only", "--batch", "7") == 0
    assert "1 bug(s) in 1 batch(es)" in capsys.readouterr().out
    assert "'frozen_rules' missing" in bench.schema_errors(manifest(first) | {"frozen_rules": 3})[0]


def test_label_on_a_missing_file_or_past_the_end_fails(tmp_path: Path) -> None:
    first, _ = make_mirror(tmp_path / "mirrors")
    root = bench.materialise(bench.Source(SOURCE, "github", "pate", first), tmp_path / "mirrors", tmp_path / "cache")
    bug = bench.Bug("B7-002", SOURCE, "pkg/gone.py", (1, 1), "other", "w", False, "x")
    assert "does not exist" in str(bench.check_bug(bug, root))
    bug = bench.Bug("B7-003", SOURCE, "pkg/noise.py", (40, 41), "other", "w", False, "x")
    assert "past the end" in str(bench.check_bug(bug, root))


def test_missing_mirror_is_an_error_naming_the_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mirrors").mkdir()
    assert run(tmp_path, manifest("b" * 40), "--labels-only") == 2
    err = capsys.readouterr().err
    assert "someone/dp-gan" in err and "no mirror" in err


def test_labels_only_fails_on_a_scan_path_the_rebuild_lacks(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A notebook named in ``paths`` is not rebuilt (only ``*.py`` is): the label check says so,
    rather than passing and leaving the first scan to stop on it."""
    first, _ = make_mirror(tmp_path / "mirrors")
    data = manifest(first)
    assert run(tmp_path, data, "--labels-only") == 0
    data["sources"][0]["paths"] = ["pkg", "train.ipynb"]
    assert run(tmp_path, data, "--labels-only") == 1
    captured = capsys.readouterr()
    assert "train.ipynb" in captured.out + captured.err


def test_commit_absent_from_the_mirror_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_mirror(tmp_path / "mirrors")
    assert run(tmp_path, manifest("c" * 40), "--labels-only") == 2
    err = capsys.readouterr().err
    assert "c" * 40 in err and "not in the mirror" in err


def test_changed_pypi_archive_is_an_error(tmp_path: Path) -> None:
    archive = tmp_path / "pkg-1.0-py3-none-any.whl"
    archive.write_bytes(b"one")
    source = bench.Source("pkg==1.0", "pypi", "library", sha256="0" * 64)
    with pytest.raises(bench.SourceError, match="pkg==1.0.*changed"):
        bench.check_sha(source, archive)


# --------------------------------------------------------------------------- scoring

def finding(file: str, line: int, rule: str = "DP202", source: str = "s") -> "bench.Finding":
    return bench.Finding(source, file, line, rule, "", "")


def bug(bid: str, file: str, lines: tuple[int, int], cls: str, static: bool = True, why: str = "why") -> "bench.Bug":
    return bench.Bug(bid, "s", file, lines, cls, why, static, "a")


def label(file: str, line: int, verdict: str, rule: str = "DP202") -> "bench.FindingLabel":
    return bench.FindingLabel("s", file, line, rule, verdict, None, "")


def test_recall_counts_a_finding_within_two_lines_of_the_range() -> None:
    bugs = [bug("a", "m.py", (10, 12), "partition", why="[paper: x/y] …"), bug("b", "m.py", (30, 30), "partition"),
            bug("c", "n.py", (5, 5), "noise-scale", static=False), bug("d", "m.py", (50, 50), "noise-scale")]
    findings = [finding("m.py", 14), finding("m.py", 33), finding("m.py", 5), finding("n.py", 48)]
    result = bench.score(bugs, findings, [], lines=1000)
    assert (result.per_class["partition"].found, result.per_class["partition"].bugs) == (1, 2)
    assert (result.per_class["noise-scale"].found, result.per_class["noise-scale"].bugs) == (0, 2)
    assert (result.static.found, result.static.bugs) == (1, 3)
    assert (result.all.found, result.all.bugs) == (1, 4)
    assert result.missed == ["b", "c", "d"]
    assert (result.paper.found, result.paper.bugs) == (1, 1)
    assert "other" not in result.per_class


def test_a_finding_labelled_fp_does_not_find_the_bug_it_lies_on() -> None:
    bugs = [bug("a", "m.py", (10, 10), "noise-scale"), bug("b", "m.py", (30, 30), "noise-scale")]
    findings = [finding("m.py", 10), finding("m.py", 30), finding("m.py", 31, rule="DP101")]
    labels = [label("m.py", 10, "FP"), label("m.py", 30, "FP"), label("m.py", 31, "ACK", rule="DP101")]
    result = bench.score(bugs, findings, labels, lines=1000)
    assert result.missed == ["a"], "a is hit only by a false alarm; b also by an acknowledged finding"
    assert (result.static.found, result.static.bugs) == (1, 2)
    result = bench.score(bugs, findings, [], lines=1000)
    assert result.missed == [], "an unlabelled finding counts until it is judged"


def test_a_withdrawn_bug_is_left_out_of_every_recall_figure() -> None:
    kept = bug("a", "m.py", (10, 12), "private-size-parameter")
    gone = bench.Bug("b", "s", "m.py", (30, 30), "private-size-parameter", "why", True, "a",
                     withdrawn="the count is public to an LDP server")
    result = bench.score([kept, gone], [finding("m.py", 30)], [], lines=1000)
    assert (result.static.found, result.static.bugs) == (0, 1)
    assert (result.per_class["private-size-parameter"].found, result.per_class["private-size-parameter"].bugs) == (0, 1)
    assert result.missed == ["a"]
    assert [b.id for b in result.withdrawn] == ["b"]
    assert result.as_json()["withdrawn"] == {"b": "the count is public to an LDP server"}


def test_two_findings_of_one_rule_on_one_line_take_the_label_whose_match_is_in_the_message() -> None:
    def finding(msg: str) -> "bench.Finding":
        return bench.Finding(SOURCE, "a.py", 3, "DP202", "privacy", msg)
    def label(lab: str, match: str = "") -> "bench.FindingLabel":
        return bench.FindingLabel(SOURCE, "a.py", 3, "DP202", lab, None, "", match)
    users, items = finding("the max of `data[user_col]`"), finding("the max of `data[item_col]`")
    result = bench.score([], [users, items], [label("FP", "user_col"), label("TP", "item_col")], 100)
    assert (result.tp, result.fp) == (1, 1) and result.false_positives == [users]
    result = bench.score([], [users, items], [label("TP", "item_col")], 100)
    assert result.unlabelled == [users], "a match that does not occur leaves the finding unlabelled"
    result = bench.score([], [users, items], [label("FP", "user_col"), label("TP")], 100)
    assert (result.tp, result.fp) == (1, 1), "a label without match covers the rest"


def test_precision_and_fp_rate_and_unlabelled() -> None:
    findings = [finding("m.py", 1), finding("m.py", 2), finding("m.py", 3), finding("m.py", 4),
                finding("m.py", 5), finding("m.py", 5, rule="DP101")]
    labels = [label("m.py", 1, "TP"), label("m.py", 2, "TP"), label("m.py", 3, "TP"), label("m.py", 4, "FP"),
              label("m.py", 5, "ACK")]
    result = bench.score([], findings, labels, lines=200_000)
    assert (result.tp, result.fp, result.ack) == (3, 1, 1)
    assert result.precision == pytest.approx(0.75)
    assert result.fp_per_100k == pytest.approx(0.5)
    assert [(f.line, f.rule) for f in result.unlabelled] == [(5, "DP101")]
    assert [f.line for f in result.false_positives] == [4]


def test_scan_end_to_end_unlabelled_finding_fails_check_then_labelled_passes(tmp_path: Path) -> None:
    first, _ = make_mirror(tmp_path / "mirrors")
    out = tmp_path / "numbers.json"
    assert run(tmp_path, manifest(first), "--check", "--json", str(out)) == 1
    numbers = json.loads(out.read_text())["results"][0]
    assert numbers["all"] == {"bugs": 1, "found": 1, "recall": 1.0}
    rules = {f["rule"] for f in numbers["unlabelled"]}
    assert "DP101" in rules
    labels = [{"source": SOURCE, "file": f["file"], "line": f["line"], "rule": f["rule"], "label": "TP",
               "bug": "B7-001", "note": ""} for f in numbers["unlabelled"]]
    assert run(tmp_path, manifest(first, findings=labels), "--check", "--json", str(out)) == 0
    numbers = json.loads(out.read_text())["results"][0]
    assert numbers["findings"]["TP"] == len(labels) and numbers["precision"] == 1.0
    assert numbers["unread_lines"] == 0


def test_a_file_no_parser_reads_is_counted_as_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, _ = make_mirror(tmp_path / "mirrors", extra={"broken.py": "def (:\n    x = [1,\n\n    y\n"})
    out = tmp_path / "numbers.json"
    run(tmp_path, manifest(first), "--json", str(out))
    numbers = json.loads(out.read_text())["results"][0]
    assert numbers["unread_files"] == {f"{SOURCE}/broken.py": 3}
    assert numbers["unread_lines"] == 3
    assert f"{SOURCE}/broken.py" in capsys.readouterr().out


def test_sources_extracted_from_different_folders_do_not_share_a_cache(tmp_path: Path) -> None:
    first, _ = make_mirror(tmp_path / "mirrors", extra={"other.py": "x = 1\n"})
    whole = bench.Source(SOURCE, "github", "pate", first)
    part = bench.Source(SOURCE, "github", "pate", first, paths=("pkg",))
    assert whole.folder != part.folder
    assert not (bench.materialise(part, tmp_path / "mirrors", tmp_path / "cache") / "other.py").exists()
    assert (bench.materialise(whole, tmp_path / "mirrors", tmp_path / "cache") / "other.py").exists()


def test_rules_snapshot_built_by_two_runs_at_once(tmp_path: Path) -> None:
    """Two benchmark runs asking for the same ``--rules-at`` snapshot at once both get a complete one."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        built = list(pool.map(lambda _: bench.frozen_rules("HEAD", tmp_path), range(2)))
    assert built[0] == built[1]
    assert (built[0] / ".complete").exists() and (built[0] / "dpcheck" / "rules").is_symlink()
    assert [p.name for p in tmp_path.iterdir()] == [built[0].name]  # no building folder left behind


def test_rules_snapshot_left_incomplete_is_rebuilt(tmp_path: Path) -> None:
    sha = git(_ROOT, "rev-parse", "HEAD")
    stale = tmp_path / f"dpcheck@{sha[:12]}"
    (stale / "dpcheck").mkdir(parents=True)
    (stale / "dpcheck" / "rules").symlink_to("../nowhere")  # an interrupted build: no .complete
    built = bench.frozen_rules("HEAD", tmp_path)
    assert built == stale and (built / ".complete").exists() and (built / "rules").is_dir()


def test_rules_snapshot_in_a_relative_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--cache-dir cache`` (relative) once failed the snapshot's import probe, which runs inside it."""
    monkeypatch.chdir(tmp_path)
    built = bench.frozen_rules("HEAD", Path("cache"))
    assert built.is_absolute() and built.parent == tmp_path / "cache" and (built / ".complete").exists()


def test_a_file_past_the_engine_limits_is_counted_as_unread(tmp_path: Path) -> None:
    """DP007 (a file not analysed: here nested past --max-depth) leaves its lines unread."""
    deep = ("import numpy as np\nepsilon = 1.0\nnoise = np.random.laplace(0, 1 / epsilon)\n"
            "x = 1" + " + 1" * 500 + "\n")
    first, _ = make_mirror(tmp_path / "mirrors", extra={"deep.py": deep})
    out = tmp_path / "numbers.json"
    run(tmp_path, manifest(first), "--json", str(out))
    numbers = json.loads(out.read_text())["results"][0]
    assert numbers["unread_files"] == {f"{SOURCE}/deep.py": 4}


def test_dpcheck_path_of_a_checkout_scans_with_that_checkouts_rules(tmp_path: Path) -> None:
    """``--dpcheck-path`` on a worktree: its rules/, not the live repository's (which the editable
    install maps to ``dpcheck.rules``), is what the scan loads."""
    checkout = tmp_path / "wt"
    (checkout / "dpcheck").mkdir(parents=True)
    (checkout / "dpcheck" / "__init__.py").write_text("")
    (checkout / "rules").mkdir()
    (checkout / "rules" / "__init__.py").write_text("MARK = 'checkout'\n")
    root = bench.real_code.package_root(checkout)
    probe = subprocess.run([sys.executable, "-c", "import dpcheck.rules as r; print(r.MARK)"], cwd=tmp_path,
                           env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert probe.stdout.strip() == "checkout", probe.stderr
    assert (checkout / "dpcheck").exists() and not (checkout / "dpcheck" / "rules").exists()  # untouched
    with pytest.raises(SystemExit, match="no dpcheck package"):
        bench.real_code.package_root(tmp_path / "nothing")


def test_linked_recall_counts_only_findings_labelled_with_the_bug() -> None:
    """``static_linked``: a bug found only by a finding its reader tied to another bug (or to none
    listed) is found by where it lies, not by what it says; an unlabelled finding still counts."""
    bugs = [bug("a", "m.py", (10, 10), "noise-scale"), bug("b", "m.py", (30, 30), "noise-scale"),
            bug("c", "m.py", (50, 50), "noise-scale"), bug("d", "m.py", (70, 70), "noise-scale")]
    findings = [finding("m.py", 10), finding("m.py", 30), finding("m.py", 50), finding("m.py", 70)]
    tied = bench.FindingLabel("s", "m.py", 10, "DP202", "TP", "a", "")
    other = bench.FindingLabel("s", "m.py", 30, "DP202", "TP", "zz", "")
    unlisted = bench.FindingLabel("s", "m.py", 50, "DP202", "TP", None, "")
    result = bench.score(bugs, findings, [tied, other, unlisted], lines=1000)
    assert (result.static.found, result.static_linked.found, result.static_linked.bugs) == (4, 2, 4)
    assert result.as_json()["static_linked"] == {"bugs": 4, "found": 2, "recall": 0.5}


def test_available_only_leaves_out_and_names_a_source_without_mirror(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    first, _ = make_mirror(tmp_path / "mirrors")
    data = manifest(first)
    data["sources"].append({"source": "other/gone", "kind": "github", "commit": "d" * 40, "area": "pate"})
    data["bugs"].append({**data["bugs"][0], "id": "B7-002", "source": "other/gone"})
    numbers = tmp_path / "numbers.json"
    assert run(tmp_path, data, "--labels-only") == 2  # without the flag: an error, as before
    assert run(tmp_path, data, "--labels-only", "--available-only", "--json", str(numbers)) == 0
    out = capsys.readouterr().out
    assert "PARTIAL RUN: 1 source(s)" in out and "other/gone" in out and "labels hold: 1 bug(s)" in out
    written = json.loads(numbers.read_text())
    assert written["partial"] is True and len(written["skipped_sources"]) == 1
