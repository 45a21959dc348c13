"""One-run auditing (dpcheck/audit/runners/onerun.py): the bound, the game, the CLI."""
from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from dpcheck.audit.runners import onerun
from dpcheck.cli import main


def brute_tail(r: int, v: int, epsilon: float) -> float:
    q = math.exp(epsilon) / (1 + math.exp(epsilon))
    return sum(math.comb(r, j) * q ** j * (1 - q) ** (r - j) for j in range(max(v, 0), r + 1))


@pytest.mark.parametrize("r,v,eps", [(10, 7, 0.5), (50, 40, 1.0), (200, 150, 1.3), (30, 30, 2.0), (40, 0, 0.2)])
def test_pure_p_value_is_the_binomial_tail(r, v, eps):
    assert onerun.p_value(r + 5, r, v, eps, 0.0) == pytest.approx(brute_tail(r, v, eps), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("m,r,v,eps,delta", [(100, 40, 30, 0.7, 1e-3), (1000, 60, 45, 1.0, 1e-4)])
def test_approximate_p_value_adds_the_delta_term(m, r, v, eps, delta):
    f = lambda u: brute_tail(r, u, eps)  # noqa: E731
    expected = f(v) + 2 * m * delta * max((f(v - i) - f(v)) / i for i in range(1, m + 1))
    assert onerun.p_value(m, r, v, eps, delta) == pytest.approx(min(expected, 1.0), rel=1e-9)


def test_bound_sits_where_the_p_value_crosses_beta():
    eps = onerun.epsilon_lower_bound(1000, 500, 380, delta=0.0, confidence=0.95)
    assert onerun.p_value(1000, 500, 380, eps, 0.0) == pytest.approx(0.05, rel=1e-6)
    assert onerun.p_value(1000, 500, 380, eps + 0.01, 0.0) > 0.05


def test_more_correct_guesses_give_a_larger_bound_and_half_gives_zero():
    bounds = [onerun.epsilon_lower_bound(2000, 1000, v, delta=1e-5, confidence=0.95) for v in range(450, 1001, 25)]
    assert all(b2 >= b1 for b1, b2 in zip(bounds, bounds[1:]))
    assert bounds[-1] > bounds[0]
    assert onerun.epsilon_lower_bound(2000, 1000, 500, delta=1e-5, confidence=0.95) == 0.0
    assert onerun.epsilon_lower_bound(2000, 1000, 530, delta=0.0, confidence=0.95) < 0.02


def test_perfect_guesses_reach_the_closed_form_and_delta_only_weakens():
    q = 0.05 ** (1 / 300)
    assert onerun.certifiable_max(300, 300, delta=0.0, confidence=0.95) == pytest.approx(math.log(q / (1 - q)), rel=1e-6)
    for v in (180, 220, 260):
        assert (onerun.epsilon_lower_bound(5000, 300, v, delta=1e-4, confidence=0.95)
                <= onerun.epsilon_lower_bound(5000, 300, v, delta=0.0, confidence=0.95))


def test_guesses_take_the_extremes_lexicographically():
    scores = np.array([[0, 0.1], [5, 0.0], [0, 0.9], [2, 0.5], [0, 0.2]])
    t = onerun.guess(scores, 2, 1, np.random.default_rng(0))
    assert t.tolist() == [-1, 1, 0, 1, 0]
    assert onerun.score_guesses(t, [False, True, False, False, True]) == (3, 2)


def test_guess_counts_and_bad_values():
    assert onerun.guess_counts(100, None) == (25, 25)
    assert onerun.guess_counts(100, 0.1) == (5, 5) and onerun.guess_counts(100, 7) == (4, 3)
    for bad in (0, -1, 101, 2.5):
        with pytest.raises(onerun.OneRunRefused):
            onerun.guess_counts(100, bad)


def randomized_response(epsilon: float):
    """Per canary, the inclusion bit kept with probability e^ε/(1+e^ε): ε-DP per canary by construction."""
    def run(included: np.ndarray, seed: int) -> np.ndarray:
        flip = np.random.default_rng(seed).random(len(included)) < 1 / (1 + math.exp(epsilon))
        return (included ^ flip).astype(float)
    return run


def test_epsilon_dp_toy_stays_below_epsilon_and_is_tight_with_many_canaries():
    bounds = [onerun.play(randomized_response(1.0), 1000, guesses=1.0, epsilon=1.0, delta=0.0, confidence=0.95,
                          seed=s).eps_lower for s in range(20)]
    assert sum(b > 1.0 for b in bounds) <= 2  # 95 % confidence: about one in twenty may exceed
    assert np.mean(bounds) > 0.75
    big = onerun.play(randomized_response(1.0), 20000, guesses=1.0, epsilon=1.0, delta=0.0, confidence=0.95, seed=1)
    assert 0.9 < big.eps_lower <= 1.0 and big.verdict == "pass"


def test_no_signal_gives_no_bound():
    noise = lambda included, seed: np.random.default_rng(seed).random(len(included))  # noqa: E731
    r = onerun.play(noise, 2000, guesses=None, epsilon=1.0, delta=1e-5, confidence=0.95, seed=3)
    assert r.eps_lower < 0.3 and r.r == 1000


class CopyCanaries:
    """A leaky toy synthesizer: it releases its training rows."""

    name = "copy-canaries"

    def fit(self, data, *, epsilon, delta, seed, bounds=None, **hp):
        self.rows = np.asarray(data, dtype=float)
        return self

    def sample(self, n):
        return np.resize(self.rows, (n, self.rows.shape[1]))


def test_leaky_toy_gives_the_largest_bound():
    r = onerun.audit_one_run(CopyCanaries(), 400, guesses=0.5, seed=2, synth_rows=2000)
    assert r.v == r.r == 200 and r.eps_lower == pytest.approx(r.certifiable) and r.eps_lower > 4
    every = onerun.audit_one_run(CopyCanaries(), 400, guesses=1.0, seed=2, synth_rows=2000)
    assert every.v == 400 - abs(every.k_in - every.included)  # guessing all: only the surplus "in" guesses miss
    assert r.verdict == "violation"


def test_exact_laplace_histogram_is_bounded_and_nontrivial():
    r = onerun.audit_one_run("reference:laplace-histogram", 1000, seed=11)
    assert 0.3 < r.eps_lower <= 1.0 and r.r == 500


def test_release_scores_read_each_canary_cell():
    ds = onerun.canary_dataset(5)
    histogram = np.arange(2 * ds.cells, dtype=float)
    assert onerun.release_scores(histogram, ds).tolist() == [2 * c + 1 for c in range(8, 13)]
    marginals = np.arange(ds.cells + 2, dtype=float)
    assert onerun.release_scores(marginals, ds).tolist() == list(range(8, 13))
    with pytest.raises(onerun.OneRunRefused, match="cannot score"):
        onerun.release_scores(np.zeros(7), ds)


def test_synthetic_scores_count_copies_then_closeness():
    ds = onerun.canary_dataset(3)
    synth = np.array([[8, 1], [8, 1], [9.2, 1], [20, 0]])
    s = onerun.synthetic_scores(synth, ds)
    assert s[:, 0].tolist() == [2, 1, 0]
    assert s[2, 1] < s[1, 1] <= 1.0


@pytest.mark.parametrize("argv,needle", [
    (["--impl", "diffprivlib:GaussianNB", "--one-run", "50"], "cannot take the one-run canary dataset"),
    (["--impl", "synthcity:pategan", "--one-run", "50"], "virtualenv"),
    (["--impl", "ref-laplace", "--one-run", "50", "--dataset", "worstcase"], "--dataset does not apply"),
    (["--impl", "ref-laplace", "--one-run", "99999"], "2 to"),
    (["--impl", "ref-laplace", "--one-run", "50", "--guesses", "lots"], "--guesses"),
    (["--impl", "no-such-impl", "--one-run", "50"], "unknown implementation"),
])
def test_refusals_exit_2(tmp_path, capsys, argv, needle):
    assert main(["audit", *argv, "--store", str(tmp_path / "s.sqlite")]) == 2
    assert needle in capsys.readouterr().err


def test_cli_prints_bound_guesses_and_cost(capsys):
    assert main(["audit", "--impl", "ref-broken", "--one-run", "200", "--guesses", "50%"]) == 1
    out = capsys.readouterr().out
    assert "ε_lower = " in out and "100 guesses (50 in / 50 out)" in out and "cost: 1 run" in out


@pytest.mark.slow
def test_cli_end_to_end(tmp_path, capsys):
    m = "200" if os.environ.get("DPCHECK_SMALL") else "1000"
    out = tmp_path / "one.json"
    code = main(["audit", "--impl", "reference:laplace-histogram", "--impl", "original", "--impl", "ref-broken",
                 "--one-run", m, "--json", str(out)])
    results = {r["impl"]: r for r in json.loads(out.read_text())["results"]}
    assert code == 1  # ref-broken
    assert results["ref-broken"]["verdict"] == "violation"
    assert results["reference:laplace-histogram"]["eps_lower"] <= 1.0
    assert results["original"]["eps_lower"] <= 1.0 and results["original"]["r"] == int(m) // 2
    assert "original: one-run audit" in capsys.readouterr().out
