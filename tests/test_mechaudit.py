"""Mechanism audits: the benchmark mechanisms, neighbourhoods, encodings, the threshold attack, the CLI."""
from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from dpcheck.audit.core.stats import cp_upper as audit_cp_upper
from dpcheck.mechaudit import catalog
from dpcheck.mechaudit.attack import choose_threshold, cp_lower, cp_upper, eps_bound
from dpcheck.mechaudit.encode import learn_layout, trailing_zero_bits
from dpcheck.mechaudit.neighbours import candidate_pairs, check_pair
from dpcheck.mechaudit.runner import Budget, audit
from dpcheck.mechaudit.target import MechanismError, from_benchmark, from_function, probe

SMALL = Budget(pilot=1_500, train=2_000, validation=5_000, test=20_000)


@pytest.mark.parametrize("name", list(catalog.CATALOG))
def test_every_benchmark_mechanism_is_vectorised_and_seeded(name: str) -> None:
    m = catalog.CATALOG[name]
    x = np.ones(m.length)
    one = m.sample(x, 50, np.random.default_rng(3))
    again = m.sample(x, 50, np.random.default_rng(3))
    assert one.ndim == 2 and one.shape[0] == 50
    np.testing.assert_array_equal(one, again)
    assert m.neighbourhood in ("l1", "linf")


def test_correct_and_incorrect_mechanisms_are_the_papers() -> None:
    incorrect = {n for n, m in catalog.CATALOG.items() if not m.correct}
    assert incorrect == {"noisy-hist2", "report-noisy-max3", "report-noisy-max4", "svt3", "svt4", "svt5", "svt6",
                         "svt34-parallel", "prefix-sum", "laplace-float-naive"}


def test_rappor_truth_counts_the_bloom_bits_that_differ() -> None:
    differ = int(np.sum(catalog.bloom_bits(0) != catalog.bloom_bits(1)))
    claimed, true = catalog.rappor_claims()["one-time-rappor"]
    assert claimed == pytest.approx(8 * math.log(0.525 / 0.475))
    assert true == pytest.approx(differ * math.log(0.525 / 0.475))


def test_svt_stops_after_c_positives() -> None:
    out = catalog.svt1(np.full(10, 1000.0), 20, np.random.default_rng(0))
    assert (out[:, 0] == 1).all() and (out[:, 1:] == -1).all()
    values = catalog.svt3(np.full(10, 1000.0), 20, np.random.default_rng(0))
    assert (values[:, 1:] == catalog.ABORTED).all() and (values[:, 0] > 500).all()


def test_neighbourhoods_refuse_distant_pairs() -> None:
    check_pair(np.array([1.0, 1.0]), np.array([2.0, 1.0]), "l1")
    with pytest.raises(ValueError, match="not neighbours under l1"):
        check_pair(np.array([1.0, 1.0]), np.array([2.0, 2.0]), "l1")
    check_pair(np.array([1.0, 1.0]), np.array([2.0, 0.0]), "linf")
    with pytest.raises(ValueError, match="unknown neighbourhood"):
        check_pair(np.array([1.0]), np.array([1.0]), "hamming")
    for hood in ("l1", "linf"):
        pairs = candidate_pairs(5, hood, np.random.default_rng(0))
        assert len(pairs) >= (4 if hood == "l1" else 9)
        whole = candidate_pairs(5, hood, np.random.default_rng(0), integer=True)
        assert all(np.array_equal(b, np.round(b)) for _, b in whole)


def test_layout_flags_sentinels_nan_and_infinities() -> None:
    out = np.array([[1.5, 0.0], [catalog.FALSE, 1.0], [np.nan, 2.0], [np.inf, 0.0], [2.5, 1.0]] * 40)
    out[::5, 0] = np.random.default_rng(0).normal(size=40)  # numbers that do not recur
    out[4::5, 0] = np.random.default_rng(1).normal(size=40)
    layout = learn_layout(out, sentinels=(catalog.FALSE,))
    assert layout.columns[0].categories is None and catalog.FALSE in layout.columns[0].sentinels
    assert layout.columns[1].categories == (0.0, 1.0, 2.0)
    feats = layout.transform(out[:5])
    assert np.isfinite(feats).all()
    assert feats[1, 0] == 0.0 and feats[1, 1] == 1.0  # ⊥ zeroed and flagged
    assert feats[2, 2] == 1.0 and feats[3, 3] == 1.0  # NaN flag, +inf flag


def test_trailing_zero_bits() -> None:
    vals = np.array([1.0, 1.5, 1.0 + 2.0 ** -52, 0.75, 3.0 * 2.0 ** -40])
    np.testing.assert_array_equal(trailing_zero_bits(vals), [52, 51, 0, 51, 51])


def test_clopper_pearson_agrees_with_the_audit_statistics() -> None:
    assert cp_upper(np.array([3]), 100, 0.05)[0] == pytest.approx(audit_cp_upper(3, 100, 0.05))
    assert cp_lower(np.array([97]), 100, 0.05)[0] == pytest.approx(1 - audit_cp_upper(3, 100, 0.05))
    exact = eps_bound(np.array([5000]), 10_000, np.array([5000]), 10_000, delta=0.0, confidence=0.95)[0]
    assert exact == 0.0


def test_threshold_finds_a_planted_set() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(0, 1, 20_000)
    b = rng.normal(0, 1, 20_000)
    b[:4000] = 10.0  # b puts 20 % of its mass where a never goes
    threshold, bound = choose_threshold(-a, -b, delta=0.0, confidence=0.95)
    assert not threshold.above and not threshold.a_in_numerator
    assert bound > 5


def test_an_incorrect_mechanism_is_a_violation_and_its_correct_twin_passes() -> None:
    bad = audit(from_benchmark("noisy-hist2"), hood="l1", length=5, budget=SMALL, seed=1, classifiers=("logistic",))
    assert bad.verdict == "violation" and bad.eps_lower["0.95"] > 2
    good = audit(from_benchmark("noisy-hist1"), hood="l1", length=5, budget=SMALL, seed=1,
                 classifiers=("logistic", "boosting"))
    assert good.verdict == "pass" and good.eps_lower["0.95"] <= 0.1
    assert good.pilot and all("pilot_bound" in row for row in good.pilot)


def test_the_report_noisy_max_value_leak_is_found_on_its_pair() -> None:
    r = audit(from_benchmark("report-noisy-max3"), hood="linf", length=5, seed=2,
              pair=(np.zeros(5), np.ones(5)), classifiers=("logistic",),
              budget=Budget(train=5_000, validation=50_000, test=300_000))
    assert r.verdict == "violation" and r.eps_lower["0.95"] > 0.15


def _module(tmp_path: Path, body: str) -> str:
    (tmp_path / "usermech.py").write_text(textwrap.dedent(body))
    sys.path.insert(0, str(tmp_path))
    sys.modules.pop("usermech", None)
    return "usermech"


def test_a_user_function_is_probed_before_the_audit(tmp_path: Path) -> None:
    mod = _module(tmp_path, """
        import numpy as np
        def raises(x, epsilon, rng):
            raise RuntimeError("boom")
        def unseeded(x, epsilon, rng, n):
            return np.random.laplace(size=n)
        def shapes(x, epsilon, rng):
            return rng.laplace(size=int(rng.integers(1, 4)))
        def no_rng(x, epsilon):
            return x
        def fine(x, epsilon, rng):
            return float(np.sum(x) + rng.laplace(0, 1 / epsilon))
    """)
    try:
        x = np.ones(3)
        with pytest.raises(MechanismError, match="raised on input"):
            probe(from_function(f"{mod}:raises", 1.0), x)
        with pytest.raises(MechanismError, match="ignores its rng"):
            probe(from_function(f"{mod}:unseeded", 1.0), x)
        with pytest.raises(MechanismError, match="shape"):
            probe(from_function(f"{mod}:shapes", 1.0), x)
        with pytest.raises(MechanismError, match="must take parameters x, epsilon, rng"):
            from_function(f"{mod}:no_rng", 1.0)
        with pytest.raises(MechanismError, match="importing your module"):
            from_function("no_such_module_anywhere:f", 1.0)
        assert probe(from_function(f"{mod}:fine", 1.0), x) == 1
    finally:
        sys.path.remove(str(tmp_path))


def _cli(*args: str, cwd: Path | None = None, extra_path: str = "") -> subprocess.CompletedProcess:
    env_path = f"{extra_path}" if extra_path else ""
    import os
    env = {**os.environ, "PYTHONPATH": env_path}
    return subprocess.run([sys.executable, "-m", "dpcheck", "mechanism", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=600)


def test_cli_audits_the_readme_example() -> None:
    root = Path(__file__).resolve().parent.parent
    small = ["--samples", "20000", "--train", "2000", "--validation", "5000", "--classifier", "logistic"]
    bad = _cli("--mechanism", "noisy_sum:noisy_sum_buggy", "--epsilon", "0.5", "--neighbourhood", "l1",
               "--pair", "0,0,0", "1,0,0", *small, extra_path=str(root / "examples" / "mechanism"))
    assert bad.returncode == 1, bad.stderr
    assert "violation" in bad.stdout
    good = _cli("--mechanism", "noisy_sum:noisy_sum", "--epsilon", "0.5", "--neighbourhood", "l1",
                "--pair", "0,0,0", "1,0,0", *small, extra_path=str(root / "examples" / "mechanism"))
    assert good.returncode == 0, good.stderr
    assert "verdict pass" in good.stdout


def test_cli_refuses_bad_input() -> None:
    far = _cli("--benchmark", "laplace", "--pair", "0", "3", "--classifier", "logistic")
    assert far.returncode == 2 and "not neighbours" in far.stderr
    typo = _cli("--benchmark", "report-noisy-max")
    assert typo.returncode == 2 and "did you mean" in typo.stderr
    listing = _cli("--list")
    assert listing.returncode == 0 and "svt34-parallel" in listing.stdout


def test_frequency_table_orders_discrete_outputs_by_their_ratio() -> None:
    from dpcheck.mechaudit.attack import TooManyOutputs, fit_scorer
    rng = np.random.default_rng(4)
    a = rng.choice([0.0, 1.0, 2.0], p=[0.6, 0.3, 0.1], size=(20_000, 1))
    b = rng.choice([0.0, 1.0, 2.0], p=[0.2, 0.3, 0.5], size=(20_000, 1))
    scorer = fit_scorer("table", a, b, (), seed=0)
    scores = scorer.score(np.array([[0.0], [1.0], [2.0], [7.0]]))
    assert scores[0] > scores[1] > scores[2] and scores[3] == 0.0  # 7 was never seen
    with pytest.raises(TooManyOutputs):
        fit_scorer("table", rng.normal(size=(6000, 1)), rng.normal(size=(6000, 1)), (), seed=0)


def test_the_committed_benchmark_report_is_rendered_from_its_json(tmp_path: Path) -> None:
    import importlib.util
    import shutil
    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("mech_bench", root / "benchmarks" / "mechanisms.py")
    bench = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(bench)
    shutil.copy(root / "reports" / "mechanism_benchmark.json", tmp_path / "mb.json")
    assert bench.main(["--render", "--out", str(tmp_path / "mb")]) == 0
    assert (tmp_path / "mb.md").read_text() == (root / "reports" / "mechanism_benchmark.md").read_text()
