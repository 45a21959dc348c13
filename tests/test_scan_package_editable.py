"""``scan --package`` follows editable installs (a real ``pip install -e``) and finds packages
installed in dpcheck's target envs — always without importing them."""
from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from test_scan_support import write

from dpcheck.scan.packages import package_candidates

BOOBY_TRAP = "raise RuntimeError('dpcheck imported the scanned package')\n"
XOR = "def sigma(delta):\n    return 10 ^ int(delta)\n"
BUILD = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'


@pytest.fixture(scope="module")
def editable_site(tmp_path_factory) -> Path:
    """A fresh venv with two real editable installs: ``flat-dp`` (flat layout: setuptools writes
    its import-hook finder) and ``src-dp`` (src layout: a ``.pth`` path line)."""
    root = tmp_path_factory.mktemp("editable")
    write(root, "flat/pyproject.toml", BUILD + '[project]\nname = "flat-dp"\nversion = "0.1"\n'
          '[tool.setuptools]\npackages = ["flatdp"]\n')
    write(root, "flat/flatdp/__init__.py", BOOBY_TRAP)
    write(root, "flat/flatdp/mech.py", XOR)
    write(root, "srcl/pyproject.toml", BUILD + '[project]\nname = "src-dp"\nversion = "0.1"\n'
          '[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    write(root, "srcl/src/srcdp/__init__.py", BOOBY_TRAP)
    write(root, "srcl/src/srcdp/mech.py", XOR)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python*/site-packages"))
    # the new venv borrows pip, setuptools and wheel from this one: no index, no network
    (site / "zz_borrow.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for project in ("flat", "srcl"):
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                        "--no-build-isolation", "-e", str(root / project)], check=True, timeout=300,
                       capture_output=True)
    assert list(site.glob("__editable___flat_dp_*_finder.py")), "setuptools wrote its import hook"
    return site


def names(found) -> list[str]:
    return sorted(c.display for c in found)


def test_editable_install_with_setuptools_finder(editable_site, monkeypatch):
    monkeypatch.syspath_prepend(str(editable_site))
    assert names(package_candidates("flat-dp")) == ["flatdp/__init__.py", "flatdp/mech.py"]
    assert names(package_candidates("flatdp")) == ["flatdp/__init__.py", "flatdp/mech.py"]
    assert "flatdp" not in sys.modules


def test_editable_install_with_pth_path(editable_site, monkeypatch):
    monkeypatch.syspath_prepend(str(editable_site))
    assert names(package_candidates("src-dp")) == ["srcdp/__init__.py", "srcdp/mech.py"]
    assert "srcdp" not in sys.modules


def test_packages_in_dpchecks_target_envs_are_found(tmp_path, monkeypatch):
    site = tmp_path / "envs" / "smartnoise" / "lib" / "python3.11" / "site-packages"
    write(site, "fakesn/__init__.py", BOOBY_TRAP)
    write(site, "fakesn/pytorch/dpgan.py", XOR)
    write(site, "fake_sn-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: fake-sn\nVersion: 1.0\n")
    write(site, "fake_sn-1.0.dist-info/RECORD", "fakesn/__init__.py,,\nfakesn/pytorch/dpgan.py,,\n")
    monkeypatch.setenv("DPCHECK_ENV_DIR", str(tmp_path / "envs"))
    assert names(package_candidates("fakesn")) == ["fakesn/__init__.py", "fakesn/pytorch/dpgan.py"]
    assert names(package_candidates("fake-sn")) == ["fakesn/__init__.py", "fakesn/pytorch/dpgan.py"]
    assert "fakesn" not in sys.modules
