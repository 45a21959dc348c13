"""File discovery: suffixes, default and configured excludes, explicit files, symlinks."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_scan_support import project, scan, write

from dpcheck.scan.config import DEFAULT_EXCLUDES
from dpcheck.scan.discovery import discover
from dpcheck.scan.globs import matches


def names(root: Path, paths=None, exclude=()) -> list[str]:
    found = discover(paths or [root], root=root, exclude=exclude, default_excludes=DEFAULT_EXCLUDES)
    return sorted(Path(os.path.relpath(c.path, root)).as_posix() for c in found)


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("tests/fixtures/a.py", "tests/fixtures/**", True),
        ("tests/fixtures/deep/a.py", "tests/fixtures/**", True),
        ("src/tests/fixtures/a.py", "tests/fixtures/**", False),
        ("pkg/build/x.py", "build", True),
        ("pkg/rebuild/x.py", "build", False),
        ("pkg/msg_pb2.py", "*_pb2.py", True),
        ("pkg/sub/msg.py", "*_pb2.py", False),
        ("a/b/c.py", "a/*/c.py", True),
        ("a/b/x/c.py", "a/*/c.py", False),
        ("a/b/x/c.py", "a/**/c.py", True),
        ("a/c.py", "a/**/c.py", True),
        ("gen/x.py", "gen/", True),
    ],
)
def test_glob(path, pattern, expected):
    assert matches(path, pattern) is expected


def test_finds_python_files_and_skips_default_folders(tmp_path):
    for rel in ["a.py", "pkg/b.py", "pkg/c.pyi", "pkg/readme.md", ".git/x.py", ".venv/lib/y.py",
                "node_modules/z.py", "build/w.py", "pkg/__pycache__/v.py", "demo.egg-info/u.py"]:
        write(tmp_path, rel, "x = 1\n")
    assert names(tmp_path) == ["a.py", "pkg/b.py", "pkg/c.pyi"]


def test_exclude_globs_and_explicit_files(tmp_path):
    for rel in ["src/keep.py", "src/gen/skip.py", "src/m_pb2.py", "tests/fixtures/bad.py"]:
        write(tmp_path, rel, "x = 1\n")
    excl = ["src/gen/**", "*_pb2.py", "tests/fixtures/**"]
    assert names(tmp_path, exclude=excl) == ["src/keep.py"]
    # a file named on the command line is scanned even when a glob or default exclude covers it
    explicit = [tmp_path / "src/m_pb2.py"]
    assert names(tmp_path, paths=explicit, exclude=excl) == ["src/m_pb2.py"]


def test_pyproject_exclude_is_applied_and_cli_replaces_it(tmp_path):
    project(tmp_path, 'exclude = ["vendor/**"]\n')
    write(tmp_path, "vendor/v.py", "leak(x)\n")
    write(tmp_path, "app/a.py", "leak(x)\n")
    assert [f.path.endswith("a.py") for f in scan(tmp_path).findings] == [True]
    replaced = scan(tmp_path, exclude=("app/**",))
    assert [Path(f.path).name for f in replaced.findings] == ["v.py"]


def test_symlink_loop_and_broken_link_give_one_diagnostic_each(tmp_path):
    project(tmp_path)
    write(tmp_path, "pkg/ok.py", "leak(x)\n")
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "again")  # folder loop
    os.symlink("self.py", tmp_path / "pkg" / "self.py")  # file loop
    os.symlink("missing.py", tmp_path / "pkg" / "dangling.py")
    result = scan(tmp_path)
    got = sorted((Path(f.path).name, f.rule) for f in result.findings)
    assert got == [("again", "DP004"), ("dangling.py", "DP004"), ("ok.py", "DP991"), ("self.py", "DP004")]
    messages = {Path(f.path).name: f.message for f in result.findings}
    assert "loop" in messages["again"] and "loop" in messages["self.py"]
    assert "broken symlink" in messages["dangling.py"]


def test_symlinked_folder_outside_the_tree_is_followed_once(tmp_path):
    project(tmp_path / "proj")
    write(tmp_path, "shared/s.py", "leak(x)\n")
    os.symlink(tmp_path / "shared", tmp_path / "proj" / "link1")
    os.symlink(tmp_path / "shared", tmp_path / "proj" / "link2")
    found = names(tmp_path / "proj")
    assert found == ["link1/s.py"], "one folder, entered once (through the first link in path order)"


def test_default_excludes_apply_below_the_scanned_folder_only(tmp_path):
    # scanning a tree that itself lives inside a virtualenv (e.g. site-packages) must work
    tree = tmp_path / ".venv" / "lib" / "site-packages" / "pkg"
    write(tree, "a.py", "x = 1\n")
    write(tree, "build/b.py", "x = 1\n")
    write(tree, "sub/c.py", "x = 1\n")
    project(tmp_path / "elsewhere")
    found = sorted(Path(c.path).name for c in discover(
        [tree], root=tmp_path / "elsewhere", exclude=["sub/**"], default_excludes=DEFAULT_EXCLUDES))
    assert found == ["a.py"]
