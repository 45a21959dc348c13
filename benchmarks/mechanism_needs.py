"""Exact numbers behind docs/mechanisms.md: the best sets a mechanism offers and the samples they need.

    python benchmarks/mechanism_needs.py

No sampling: outcome probabilities come from numerical integration over the sparse vector's
threshold noise, or from binomial / multinomial counts of per-coordinate signs. For each row it
prints the largest log-ratio of a set the numerator input hits with probability ≥ 1 % (the
audit's floor, as DP-Sniper's), and the test outputs per input N at which the Clopper–Pearson bound
(0.05 on each side, confidence 0.9) of the best set reaches a target, at expected counts.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy.stats import beta, binom, laplace, multinomial

FLOOR = 0.01
RHO_GRID = np.linspace(-1500.0, 1500.0, 300_001)


def cp_bound(p_num: float, p_den: float, n: float) -> float:
    k_num, k_den = p_num * n, p_den * n
    low = beta.ppf(0.05, k_num, n - k_num + 1)
    high = beta.ppf(0.95, k_den + 1, n - k_den)
    return float(np.log(low / high))


def samples_needed(p_num: float, p_den: float, target: float) -> float:
    """Smallest N (within 2 %) whose expected-count bound reaches target; inf if the ratio is below it."""
    if math.log(p_num / p_den) <= target:
        return math.inf
    lo, hi = 1e3, 1e16
    while hi / lo > 1.02:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if cp_bound(p_num, p_den, mid) >= target else (mid, hi)
    return hi


def nested_sets(p_num: np.ndarray, p_den: np.ndarray) -> Iterable[tuple[float, float]]:
    """The Neyman–Pearson sets: outcomes taken in decreasing order of their log-ratio."""
    order = np.argsort(-(np.log(p_num) - np.log(p_den)))
    yield from zip(np.cumsum(p_num[order]), np.cumsum(p_den[order]))


def best_sets(p_num: np.ndarray, p_den: np.ndarray, target: float) -> str:
    sets = list(nested_sets(p_num, p_den))
    above = [(math.log(a / b), a) for a, b in sets if a >= FLOOR]
    ratio, mass = max(above) if above else (math.nan, math.nan)
    n, n_ratio, n_mass = min((samples_needed(a, b, target), math.log(a / b), a) for a, b in sets)
    fewest = "never (no set's log-ratio exceeds it)" if math.isinf(n) else \
        f"N = {n:.3g} per input (set of log-ratio {n_ratio:.4f}, mass {n_mass:.3g})"
    return f"best set with mass >= 1 %: log-ratio {ratio:.4f} (mass {mass:.4f}); to certify {target:g}: {fewest}"


def svt_first_positive(x: np.ndarray, threshold: float, rho_scale: float, nu_scale: float) -> np.ndarray:
    """P(the first answer above the noisy threshold is query k), k = 1..len(x), then P(none)."""
    weight = laplace.pdf(RHO_GRID, scale=rho_scale)
    weight /= weight.sum()
    none_yet = np.ones_like(RHO_GRID)
    out = []
    for value in x:
        above = laplace.sf(threshold + RHO_GRID - value, scale=nu_scale)
        out.append(float(np.sum(weight * none_yet * above)))
        none_yet = none_yet * (1 - above)
    out.append(float(np.sum(weight * none_yet)))
    return np.array(out)


def svt_cells(a: np.ndarray, b: np.ndarray, rho: float, nu: float, released: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Outcome cells under a and b; with ``released`` (NumericalSVT) the value x_k + Lap(released) splits a
    cell into its two tails, log-ratio ±|a_k − b_k|/released (the middle, of small mass, is left out)."""
    pa, pb = svt_first_positive(a, 1.0, rho, nu), svt_first_positive(b, 1.0, rho, nu)
    if released is None:
        return pa, pb
    cells_a, cells_b = [], []
    for k in range(len(pa)):
        if k < len(a) and a[k] != b[k]:
            shrink = math.exp(-abs(a[k] - b[k]) / released)
            cells_a += [pa[k] / 2, pa[k] / 2 * shrink]
            cells_b += [pb[k] / 2 * shrink, pb[k] / 2]
        else:
            cells_a.append(pa[k])
            cells_b.append(pb[k])
    return np.array(cells_a), np.array(cells_b)


def report(name: str, a: np.ndarray, b: np.ndarray, cells: tuple[np.ndarray, np.ndarray], target: float) -> None:
    pa, pb = cells
    for label, num, den in (("a", pa, pb), ("b", pb, pa)):
        pair = f"{a.astype(int).tolist()} vs {b.astype(int).tolist()}"
        print(f"{name} {pair}, numerator {label}: {best_sets(num, den, target)}")


def main() -> None:
    half = np.array([1.0] * 5 + [0.0] * 5)
    one_up = np.array([0.0] * 7 + [1.0] + [0.0] * 2)
    for name, rho, nu, released, a, b in (
            ("svt1/svt2", 20.0, 40.0, None, half, half[::-1].copy()),
            ("svt1/svt2", 20.0, 40.0, None, one_up, 1 - one_up),
            ("numerical-svt", 30.0, 60.0, 30.0, np.ones(10), np.array([0.0] + [2.0] * 9)),
            ("numerical-svt", 30.0, 60.0, 30.0, np.ones(10), np.array([2.0] * 5 + [0.0] * 5)),
            ("numerical-svt", 30.0, 60.0, 30.0, np.array([0.0] * 8 + [1.0, 0.0]), np.array([1.0] * 8 + [0.0, 1.0]))):
        report(name, a, b, svt_cells(a, b, rho, nu, released), 0.09)

    # laplace-parallel: K of 20 coordinates x + Lap(200) on [1]'s side of the midpoint 1.5 (pair [1] vs [2])
    p_one = 1 - 0.5 * math.exp(-0.5 / 200)
    k = np.arange(21)
    report("laplace-parallel", np.ones(1), np.full(1, 2.0),
           (binom.pmf(k, 20, p_one), binom.pmf(k, 20, 1 - p_one)), 0.09)

    # prefix-sum: the noisy entries x_i + Lap(10) (differences of the outputs); pair [1]*5+[0]*5 vs reverse;
    # per entry a's tail (log-ratio +0.1), b's tail (−0.1), the middle (0 here, which only lowers a set's ratio)
    tail, other = 0.5, 0.5 * math.exp(-0.1)
    middle = 1 - tail - other
    cells = [(u, v, 10 - u - v) for u in range(11) for v in range(11 - u)]
    pa = np.array([multinomial.pmf(c, 10, [tail, other, middle]) for c in cells])
    pb = np.array([multinomial.pmf(c, 10, [other, tail, middle]) for c in cells])
    report("prefix-sum", half, half[::-1].copy(), (pa, pb), 0.9)

    # report-noisy-max3: {max < 0} in [0,…,0]'s frame, log-ratio exactly 0.25
    p0 = 0.5 ** 5
    for n in (2e8, 4e8):
        print(f"report-noisy-max3 set {{y < 0}}: mass {p0:.4f}, expected bound at N={n:.0e}: "
              f"{cp_bound(p0, p0 * math.exp(-0.25), n):.5f}")
    # rappor: the 6 differing Bloom bits all on [1]'s side
    one, zero = 0.5125, 0.4875
    for n in (2e7, 1e8):
        print(f"rappor top cell: mass {one ** 6:.4f}, expected bound at N={n:.0e}: {cp_bound(one ** 6, zero ** 6, n):.5f}")


if __name__ == "__main__":
    main()
