"""The worked "bring your own implementation" example (examples/tiny_pate) comes out clean:
no static finding in a Table 2 category, every dynamic check passes, ``dpcheck test`` exits 0."""
from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from dpcheck import impls
from dpcheck.categories import CATEGORIES
from dpcheck.checks import CHECK_MODULES, get_check
from dpcheck.checks.observe import probe_dataset
from dpcheck.cli import main
from dpcheck.probe import RecordingProbe
from dpcheck.reference import pategan_epsilon, pategan_moment_increment
from dpcheck.rules import all_rules
from dpcheck.scan.config import ScanConfig
from dpcheck.scan.engine import Engine

ROOT = Path(__file__).resolve().parents[1]
# examples/ is not installed: make it importable the way a user's own package would be
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examples.tiny_pate.model import TinyPate, moments_increment  # noqa: E402

SPEC = "examples.tiny_pate.model:TinyPate"


def _fit(**hyperparams: object) -> tuple[TinyPate, RecordingProbe]:
    data = probe_dataset()
    probe = RecordingProbe()
    params = dict(bounds=(data.lower, data.upper), **hyperparams)
    model = TinyPate().fit(data.data, epsilon=1.0, delta=1e-5, seed=3, probe=probe, **params)
    return model, probe


def test_static_scan_has_no_table2_finding() -> None:
    folder = ROOT / "examples" / "tiny_pate"
    result = Engine(ScanConfig(root=ROOT), all_rules(), use_cache=False, jobs=1).scan([folder])
    assert result.stats.files == 2 and result.stats.lines > 100
    table2 = [f for f in result.findings if f.category in CATEGORIES]
    assert table2 == [], [f"{f.path}:{f.line} {f.rule} {f.message}" for f in table2]
    assert not result.crashed


@pytest.mark.parametrize("category", sorted(CHECK_MODULES))
def test_dynamic_check_passes(category: str) -> None:
    result = get_check(category)(SPEC)
    assert result.status == "pass", (result.summary, result.evidence)


def test_dpcheck_test_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "--impl", SPEC, "--quiet"]) == 0
    assert "tiny_pate" in capsys.readouterr().out


def test_adapter_protocol_and_registry() -> None:
    adapter = impls.get(SPEC)
    assert isinstance(adapter, impls.Implementation)
    assert adapter.framework == "numpy"
    assert [p.resolve() for p in impls.source_files(adapter)] == [ROOT / "examples" / "tiny_pate" / "model.py"]


def test_own_accountant_matches_the_oracle_and_epsilon_is_tracked() -> None:
    n0, n1 = np.array([0, 2, 5, 9, 30]), np.array([10, 2, 4, 0, 0])
    for lam in (1e-4, 0.02, 0.3, 0.5, 1.5):
        np.testing.assert_allclose(moments_increment(n0, n1, lam, 30), pategan_moment_increment(n0, n1, lam, 30),
                                   rtol=1e-12)
    _, probe = _fit(lamda=0.01, batch_size=32, num_teachers=4)
    moments, eps_hat = probe.of("accountant")[-1].args
    assert eps_hat == pytest.approx(pategan_epsilon(moments, 1e-5), rel=1e-12)
    assert eps_hat >= 1.0 and probe.of("training_end")[0].kwargs["reason"] == "budget"


def test_bounds_are_required_and_reported_as_public() -> None:
    data = probe_dataset()
    with pytest.raises(ValueError, match="public bounds"):
        TinyPate().fit(data.data, epsilon=1.0, delta=1e-5, seed=0)
    _, probe = _fit(max_iterations=1)
    assert [e.kwargs["source"] for e in probe.of("bounds")] == ["parameter"]


def test_samples_are_reproducible_and_follow_the_data_at_a_large_budget() -> None:
    data = probe_dataset(rows=400, seed=11)
    # a skewed integer column: most mass in the lowest quarter of its range
    data.data[:, 1] = np.where(np.arange(400) % 5 == 0, data.data[:, 1], data.lower[1] + (data.data[:, 1] % 10))
    # a weak-noise regime (λ = 0.5, huge ε) where the noisy votes carry signal
    kwargs = dict(epsilon=1e5, delta=1e-5, bounds=(data.lower, data.upper), num_teachers=5, lamda=0.5,
                  max_iterations=200)
    first = TinyPate().fit(data.data, seed=5, **kwargs).sample(2000)
    second = TinyPate().fit(data.data, seed=5, **kwargs).sample(2000)
    np.testing.assert_array_equal(first, second)
    share_low = float(np.mean(first[:, 1] < data.lower[1] + 10))
    assert share_low > 0.6  # the data has 0.855, uniform over the bounds gives about 0.25
    assert np.all(first[:, 1] == np.rint(first[:, 1])) and set(np.unique(first[:, 2])) <= {0.0, 1.0}


def test_unknown_hyperparameter_is_rejected() -> None:
    data = probe_dataset()
    with pytest.raises(TypeError, match="num_teacher"):
        TinyPate().fit(data.data, epsilon=1.0, delta=1e-5, seed=0, bounds=(data.lower, data.upper), num_teacher=3)


MUTANTS = '''
import numpy as np

from examples.tiny_pate.model import TinyPate


class InvertedScale(TinyPate):
    """Laplace noise drawn with scale lamda instead of 1/lamda (the audit's DP105 bug)."""

    @staticmethod
    def _vote_noise(lamda, shape, rng):
        return rng.laplace(0.0, lamda, size=shape), lamda


class OverlappingTeachers(TinyPate):
    """Every teacher trains on a random half of all rows."""

    @staticmethod
    def _partition(rows, teachers, rng):
        return [np.sort(rng.choice(rows, rows // 2, replace=False)) for _ in range(teachers)]


class MissingLog(TinyPate):
    """The data-dependent moment term used without its log (the audit's DP103 bug)."""

    @staticmethod
    def accountant_update(n0, n1, *, lamda, num_moments):
        gap = np.abs(np.asarray(n0, float) - np.asarray(n1, float)).reshape(-1, 1)
        l = np.arange(1, num_moments + 1, dtype=float)
        q = (2 + lamda * gap) / (4 * np.exp(lamda * gap))
        with np.errstate(all="ignore"):
            t = (1 - q) * ((1 - q) / (1 - np.exp(2 * lamda) * q)) ** l + q * np.exp(2 * lamda * l)
        return np.minimum(2 * lamda**2 * l * (l + 1), t).sum(axis=0)
'''


@pytest.fixture(scope="module")
def mutants(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("mutants")
    (folder / "tiny_pate_mutants.py").write_text(MUTANTS)
    sys.path.insert(0, str(folder))
    yield "tiny_pate_mutants"
    sys.path.remove(str(folder))
    sys.modules.pop("tiny_pate_mutants", None)


@pytest.mark.parametrize("mutant, category", [
    ("InvertedScale", "laplace_noise"),
    ("OverlappingTeachers", "data_partition"),
    ("MissingLog", "moments_accountant"),
])
def test_checks_catch_a_bug_planted_in_the_example(mutants: str, mutant: str, category: str) -> None:
    """The example passes because it is correct: the same checks fail each one-line mutation."""
    result = get_check(category)(f"{mutants}:{mutant}")
    assert result.status == "fail", (result.summary, result.evidence)
