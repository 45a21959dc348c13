"""``dpcheck scan --package NAME``: an installed package's source, found without importing it."""
from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest
from test_scan_support import cli, project, write  # noqa: F401 - fixture

from dpcheck.scan.packages import PackageNotFound, package_candidates

BOOBY_TRAP = "raise RuntimeError('dpcheck imported the scanned package')\n"


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A fake site-packages on sys.path with a package whose import raises, installed as the
    distribution ``fake-dp-synth`` (dist-info with a RECORD) under the import name ``fakesynth``."""
    site = tmp_path / "site"
    write(site, "fakesynth/__init__.py", BOOBY_TRAP)
    write(site, "fakesynth/nn/__init__.py", BOOBY_TRAP)
    write(site, "fakesynth/nn/gan.py", "leak(data)\n")
    write(site, "fakesynth/__pycache__/junk.py", "leak(cache)\n")
    write(site, "fakesynth/not_in_record.py", "x = 1\n")  # only the find_spec route sees it
    write(site, "lonely_module.py", "noisy = 1\n")
    write(site, "fake_dp_synth-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: fake-dp-synth\nVersion: 1.0\n")
    write(site, "fake_dp_synth-1.0.dist-info/RECORD", "\n".join([
        "fakesynth/__init__.py,,", "fakesynth/nn/__init__.py,,", "fakesynth/nn/gan.py,,",
        "fakesynth/__pycache__/junk.cpython-311.pyc,,", "fake_dp_synth-1.0.dist-info/METADATA,,",
        "fake_dp_synth-1.0.dist-info/RECORD,,", "../../../bin/fake-synth,,",
    ]) + "\n")
    monkeypatch.syspath_prepend(str(site))
    work = tmp_path / "work"
    project(work)
    monkeypatch.chdir(work)
    yield site
    assert "fakesynth" not in sys.modules and "fakesynth.nn" not in sys.modules


def test_distribution_name_uses_the_record(site):
    found = package_candidates("fake-dp-synth")
    assert [c.display for c in found] == ["fakesynth/__init__.py", "fakesynth/nn/__init__.py", "fakesynth/nn/gan.py"]
    assert all(Path(c.path).is_file() for c in found)
    # distribution names are normalised the way pip does
    assert [c.display for c in package_candidates("Fake_DP.Synth")] == [c.display for c in found]


def test_import_name_uses_find_spec_without_importing(site):
    found = package_candidates("fakesynth")
    assert [c.display for c in found] == [
        "fakesynth/__init__.py", "fakesynth/nn/__init__.py", "fakesynth/nn/gan.py", "fakesynth/not_in_record.py",
    ]
    assert [c.display for c in package_candidates("lonely_module")] == ["lonely_module.py"]


def test_cli_scans_the_package_with_site_relative_paths(site, cli):
    code, out, err = cli("scan", "--no-cache", "--format", "json", "--package", "fakesynth")
    assert code == 1, err
    data = json.loads(out)
    assert [(f["path"], f["rule"]) for f in data["findings"]] == [("fakesynth/nn/gan.py", "DP991")]
    assert data["summary"]["files"] == 4


def test_package_is_repeatable_and_combines_with_paths(site, cli, tmp_path):
    write(Path.cwd(), "mine.py", "leak(mine)\n")
    code, out, _ = cli("scan", "--no-cache", "mine.py", "--package", "fake-dp-synth", "--package", "lonely_module")
    assert code == 1
    paths = [line.split(":")[0] for line in out.splitlines() if ": DP99" in line]
    assert paths == ["fakesynth/nn/gan.py", "lonely_module.py", "mine.py"]


def test_unknown_package_is_a_usage_error(site, cli):
    code, out, err = cli("scan", "--package", "no-such-package-xyz")
    assert code == 2 and out == ""
    assert "no-such-package-xyz" in err and "not installed" in err
    with pytest.raises(PackageNotFound, match="top-level name"):
        package_candidates("fakesynth.nn")


def test_real_installed_package_libcst(cli, monkeypatch, tmp_path):
    project(tmp_path)
    monkeypatch.chdir(tmp_path)
    dist = importlib.metadata.distribution("libcst")
    expected = sorted(
        str(f) for f in dist.files or () if str(f).endswith((".py", ".pyi")) and "__pycache__" not in f.parts
        and not str(f).startswith("..")
    )
    found = package_candidates("libcst")
    assert sorted(c.display for c in found) == expected and len(found) > 100
    code, out, err = cli("scan", "--no-cache", "-j", "1", "--format", "json", "--package", "libcst")
    data = json.loads(out)
    assert code in (0, 1), err
    assert data["summary"]["files"] == len(expected)
    assert all(f["path"].startswith("libcst/") for f in data["findings"])


def test_exclude_applies_to_package_files(site, cli):
    code, out, err = cli("scan", "--no-cache", "--format", "json", "--package", "fakesynth", "--exclude", "fakesynth/nn/*")
    assert code == 0, err
    data = json.loads(out)
    assert data["findings"] == []
    assert data["summary"]["files"] == 2  # nn/__init__.py and nn/gan.py excluded
