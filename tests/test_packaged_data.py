"""The Cervical data ships inside the distribution: a built wheel, installed non-editable into
a scratch folder, finds and cleans it with no ``../shared`` and no environment variable."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dpcheck.audit.worlds import datasets

ROOT = Path(__file__).resolve().parents[1]


def test_packaged_file_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(datasets.CERVICAL_ENV, raising=False)
    path = datasets.cervical_path()
    assert path.name == datasets.CERVICAL_FILE and path.parent.name == "data" and path.is_file()
    assert path.parent.parent == Path(datasets.__file__).resolve().parents[2]


def test_env_override_must_exist(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(datasets.CERVICAL_ENV, str(tmp_path / "missing.csv"))
    with pytest.raises(FileNotFoundError, match="missing.csv"):
        datasets.cervical_path()


@pytest.mark.slow
def test_wheel_ships_the_data_and_uses_it(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(tmp_path / "dist"), str(ROOT)], check=True)
    wheel = next((tmp_path / "dist").glob("dpcheck-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"dpcheck/data/cervical_cancer.csv.gz", "dpcheck/data/README.md"} <= names
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                    str(wheel)], check=True)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import dpcheck; assert dpcheck.__file__.startswith(sys.argv[1]), dpcheck.__file__;"
        "from dpcheck.audit.worlds import datasets as d; p = d.cervical_path();"
        "assert str(p).startswith(sys.argv[1]), p; train = d.cervical_clean()[0]; print(train.shape)"
    )
    env = {k: v for k, v in os.environ.items() if k != datasets.CERVICAL_ENV}
    out = subprocess.run([sys.executable, "-c", probe, str(target)], check=True, capture_output=True,
                         text=True, cwd=tmp_path, env=env)
    assert out.stdout.strip() == "(686, 29)"
