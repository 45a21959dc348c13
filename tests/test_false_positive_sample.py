"""Precision guard: real, non-DP code stays finding-free (benchmarks/false_positives.py measures the
full rate on the installed numpy, scipy, scikit-learn, pandas and torch).

Two samples: hand-written numeric / ML code in tests/fixtures/non_dp/ with the shapes the rules
look for used for non-DP reasons (``^`` on ints, ``np.random.laplace`` for augmentation, min/max
scaling, ``astype(int)`` on indices, teachers in knowledge distillation, bagging ensembles, a
plain GAN), and a fixed list of installed library files.
"""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from dpcheck.rules import all_rules
from dpcheck.scan.config import ScanConfig
from dpcheck.scan.engine import Engine, ScanResult

FIXTURES = Path(__file__).parent / "fixtures" / "non_dp"

LIBRARY_FILES = (
    "numpy/random/tests/test_smoke.py",
    "numpy/lib/_histograms_impl.py",
    "numpy/lib/_arraysetops_impl.py",
    "numpy/lib/_twodim_base_impl.py",
    "scipy/optimize/_minimize.py",
    "scipy/stats/_kde.py",
    "scipy/signal/_waveforms.py",
    "sklearn/base.py",
    "sklearn/ensemble/_bagging.py",
    "sklearn/ensemble/_weight_boosting.py",
    "sklearn/multiclass.py",
    "sklearn/preprocessing/_data.py",
    "sklearn/preprocessing/_discretization.py",
    "sklearn/neighbors/_kde.py",
    "pandas/core/ops/mask_ops.py",
    "pandas/core/arraylike.py",
    "pandas/core/reshape/tile.py",
    "torch/nn/init.py",
    "torch/distributions/laplace.py",
    "torch/optim/adam.py",
)


def _scan(paths: list[Path], root: Path) -> ScanResult:
    return Engine(ScanConfig(root=root), all_rules(), use_cache=False, jobs=1).scan(paths)


def _describe(result: ScanResult) -> list[str]:
    return [f"{f.path}:{f.line} {f.rule} {f.message}" for f in result.findings]


def _library_path(relative: str) -> Path:
    package = relative.split("/", 1)[0]
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, f"{package} is not installed"
    return Path(next(iter(spec.submodule_search_locations))).parent / relative


def test_hand_written_non_dp_code_is_finding_free() -> None:
    files = sorted(FIXTURES.glob("*.py"))
    assert len(files) >= 6
    result = _scan(files, FIXTURES)
    assert result.stats.files == len(files) and result.stats.lines > 350
    assert result.findings == [], _describe(result)


def test_installed_library_sample_is_finding_free() -> None:
    paths = [_library_path(p) for p in LIBRARY_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    assert not missing, f"sample files not found (library layout changed?): {missing}"
    result = _scan(paths, _library_path("numpy").parent)
    assert result.stats.files == len(paths) and result.stats.lines > 15_000
    assert result.findings == [], _describe(result)


@pytest.mark.parametrize("bug, rule", [
    ("    if not 0 < epsilon < 1:\n        raise ValueError('the classical Gaussian needs epsilon < 1')\n"
     "    sigma = math.sqrt(2 * math.log(1.25 / delta)) / epsilon\n    return sigma ^ 2\n", "DP101"),
    ("    return math.sqrt(2 * math.log(1.25 * delta)) / epsilon\n", "DP102"),
])
def test_the_same_scan_does_see_a_dp_bug(tmp_path: Path, bug: str, rule: str) -> None:
    """Control: the sample is clean because the code is, not because the scan ran no rule."""
    shutil.copy(FIXTURES / "statistics.py", tmp_path / "statistics.py")
    with open(tmp_path / "statistics.py", "a", encoding="utf-8") as out:
        out.write("\n\ndef gaussian_sigma(epsilon: float, delta: float) -> float:\n" + bug)
    result = _scan([tmp_path / "statistics.py"], tmp_path)
    assert [f.rule for f in result.findings] == [rule], _describe(result)
