"""The black-box DP testing benchmark of StatDP (Ding et al., CCS 2018) as extended by DP-Sniper
(Bichsel et al., S&P 2021), written from the mechanisms' papers.

Every sampler takes one input vector and returns ``n`` outputs at once (rows), drawing all its
randomness from the given generator. Sentinel outputs follow the papers' ⊥ conventions.
Sources: report-noisy-max variants — Ding et al. 2018, Algs. 5–8; sparse vector variants — Lyu,
Su and Li, "Understanding the Sparse Vector Technique", VLDB 2017, Algs. 1–6; numerical SVT —
Wang et al., PLDI 2019; RAPPOR — Erlingsson et al., CCS 2014; floating-point Laplace and snapping
— Mironov, CCS 2012; truncated geometric — Ghosh, Roughgarden and Sundararajan, STOC 2009.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Sampler = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]
EPS = 0.1  # every benchmark mechanism claims ε = 0.1, as in StatDP and DP-Sniper
FALSE, ABORTED = -1000.0, -2000.0  # ⊥ values of the SVT variants that release numbers
SVT_THRESHOLD, SVT_C = 1.0, 1


@dataclass(frozen=True)
class BenchMechanism:
    name: str
    sample: Sampler
    claimed: float
    true_eps: float | None  # None: finite but not known in closed form; inf: no finite ε
    neighbourhood: str  # l1: one entry moves by ≤ 1; linf: every entry moves by ≤ 1
    length: int
    integer_input: bool
    sentinels: tuple[float, ...]
    dpsniper: float | None  # DP-Sniper's published lower bound (logistic regression, confidence 0.9)
    dpsniper_seconds: float | None  # its published search + final-estimate time
    note: str = ""

    @property
    def correct(self) -> bool:
        return self.true_eps is not None and self.true_eps <= self.claimed + 1e-12


def _laplace(x: np.ndarray, n: int, rng: np.random.Generator, scale: float) -> np.ndarray:
    return x[None, :] + rng.laplace(0.0, scale, size=(n, x.size))


def laplace(x, n, rng):
    return _laplace(x[:1], n, rng, 1 / EPS)


def truncated_geometric(x, n, rng, upper: int = 5):
    # two-sided geometric noise with α = e^-ε, then clamping to the public range (post-processing)
    p = 1 - math.exp(-EPS)
    noise = rng.geometric(p, size=n) - rng.geometric(p, size=n)
    return np.clip(x[0] + noise, 0, upper).astype(float)[:, None]


def noisy_hist1(x, n, rng):
    return _laplace(x, n, rng, 1 / EPS)


def noisy_hist2(x, n, rng):
    return _laplace(x, n, rng, EPS)  # the scale written as ε instead of 1/ε


def _rnm(x, n, rng, exponential: bool, release_value: bool):
    noise = rng.exponential(2 / EPS, size=(n, x.size)) if exponential else rng.laplace(0, 2 / EPS, size=(n, x.size))
    noisy = x[None, :] + noise
    out = noisy.max(axis=1) if release_value else noisy.argmax(axis=1).astype(float)
    return out[:, None]


def rnm1(x, n, rng):
    return _rnm(x, n, rng, exponential=False, release_value=False)


def rnm2(x, n, rng):
    return _rnm(x, n, rng, exponential=True, release_value=False)


def rnm3(x, n, rng):
    return _rnm(x, n, rng, exponential=False, release_value=True)


def rnm4(x, n, rng):
    return _rnm(x, n, rng, exponential=True, release_value=True)


def _first_c_positives(above: np.ndarray, c: int) -> np.ndarray:
    """Per row: which answers come after the c-th positive (the mechanism has stopped)."""
    positives_before = np.cumsum(above, axis=1) - above
    return positives_before >= c


def _svt_answers(above: np.ndarray, c: int, values: np.ndarray | None = None) -> np.ndarray:
    stopped = _first_c_positives(above, c)
    if values is None:
        out = above.astype(float)
        out[stopped] = -1.0
        return out
    out = np.where(above, values, FALSE)
    out[stopped] = ABORTED
    return out


def svt1(x, n, rng):
    e1 = e2 = EPS / 2
    rho = rng.laplace(0, 1 / e1, size=(n, 1))
    nu = rng.laplace(0, 2 * SVT_C / e2, size=(n, x.size))
    return _svt_answers(x[None, :] + nu >= SVT_THRESHOLD + rho, SVT_C)


def svt2(x, n, rng):
    # Alg. 2: the threshold noise is drawn again after every positive answer
    e1 = e2 = EPS / 2
    rho = rng.laplace(0, SVT_C / e1, size=n)
    nu = rng.laplace(0, 2 * SVT_C / e2, size=(n, x.size))
    fresh = rng.laplace(0, SVT_C / e1, size=(n, x.size))
    out = np.empty((n, x.size))
    count = np.zeros(n)
    for j in range(x.size):
        above = x[j] + nu[:, j] >= SVT_THRESHOLD + rho
        out[:, j] = np.where(count >= SVT_C, -1.0, above.astype(float))
        count += above & (count < SVT_C)
        rho = np.where(above, fresh[:, j], rho)
    return out


def svt3(x, n, rng, c: int = SVT_C):
    # Alg. 3: releases the noisy answer of each positive, with noise that ignores the budget split
    e1 = e2 = EPS / 2
    rho = rng.laplace(0, 1 / e1, size=(n, 1))
    noisy = x[None, :] + rng.laplace(0, c / e2, size=(n, x.size))
    return _svt_answers(noisy >= SVT_THRESHOLD + rho, c, noisy)


def svt4(x, n, rng, c: int = SVT_C):
    e1 = EPS / 4
    e2 = EPS - e1
    rho = rng.laplace(0, 1 / e1, size=(n, 1))
    nu = rng.laplace(0, 1 / e2, size=(n, x.size))
    return _svt_answers(x[None, :] + nu >= SVT_THRESHOLD + rho, c)


def svt5(x, n, rng):
    # Alg. 5: no noise on the queries and no cut-off
    rho = rng.laplace(0, 2 / EPS, size=(n, 1))
    return (x[None, :] >= SVT_THRESHOLD + rho).astype(float)


def svt6(x, n, rng):
    # Alg. 6: noisy queries, but no cut-off after c positives
    rho = rng.laplace(0, 2 / EPS, size=(n, 1))
    nu = rng.laplace(0, 2 / EPS, size=(n, x.size))
    return (x[None, :] + nu >= SVT_THRESHOLD + rho).astype(float)


def numerical_svt(x, n, rng):
    rho = rng.laplace(0, 3 / EPS, size=(n, 1))
    above = x[None, :] + rng.laplace(0, 6 * SVT_C / EPS, size=(n, x.size)) >= SVT_THRESHOLD + rho
    released = x[None, :] + rng.laplace(0, 3 * SVT_C / EPS, size=(n, x.size))
    return _svt_answers(above, SVT_C, released)


SVT34_C = 2  # DP-Sniper runs SVT34Parallel with both halves at c = 2 (SVT3 and SVT4 alone at c = 1)


def svt34_parallel(x, n, rng):
    return np.hstack([svt3(x, n, rng, SVT34_C), svt4(x, n, rng, SVT34_C)])


def laplace_parallel(x, n, rng, copies: int = 20):
    # twenty Laplace releases at ε/20 each compose to ε
    return x[0] + rng.laplace(0, copies / EPS, size=(n, copies))


def prefix_sum(x, n, rng):
    return np.cumsum(_laplace(x, n, rng, 1 / EPS), axis=1)


RAPPOR_HASHES, RAPPOR_BITS = 4, 20


def bloom_bits(value: float) -> np.ndarray:
    """The value's Bloom filter (RAPPOR step 1): RAPPOR_HASHES bits set by salted SHA-256."""
    bits = np.zeros(RAPPOR_BITS)
    for salt in range(RAPPOR_HASHES):
        digest = hashlib.sha256(f"{salt}:{int(value)}".encode()).digest()
        bits[int.from_bytes(digest[:8], "big") % RAPPOR_BITS] = 1.0
    return bits


def _permanent_rr(bits: np.ndarray, n: int, rng: np.random.Generator, f: float) -> np.ndarray:
    keep = rng.random((n, bits.size)) >= f
    coin = (rng.random((n, bits.size)) < 0.5).astype(float)
    return np.where(keep, bits[None, :], coin)


def one_time_rappor(x, n, rng, f: float = 0.95):
    return _permanent_rr(bloom_bits(x[0]), n, rng, f)


def rappor(x, n, rng, f: float = 0.75, p: float = 0.45, q: float = 0.55):
    permanent = _permanent_rr(bloom_bits(x[0]), n, rng, f)
    report_one = np.where(permanent == 1.0, q, p)
    return (rng.random(permanent.shape) < report_one).astype(float)


def _rappor_bit_eps(f: float, p: float | None = None, q: float | None = None) -> float:
    if p is None or q is None:
        return math.log((1 - f / 2) / (f / 2))
    one = f / 2 * (p + q) + (1 - f) * q  # P(report 1 | true bit 1)
    zero = f / 2 * (p + q) + (1 - f) * p
    return max(math.log(one / zero), math.log((1 - zero) / (1 - one)))


def rappor_claims() -> dict[str, tuple[float, float]]:
    """(claimed, true for the pair 0 vs 1): the papers' bound over 2h bits, and the bits that differ."""
    differ = int(np.sum(bloom_bits(0) != bloom_bits(1)))
    one_time, full = _rappor_bit_eps(0.95), _rappor_bit_eps(0.75, 0.45, 0.55)
    return {"one-time-rappor": (2 * RAPPOR_HASHES * one_time, differ * one_time),
            "rappor": (2 * RAPPOR_HASHES * full, differ * full)}


def laplace_float_naive(x, n, rng):
    """Textbook Laplace in floating point: location plus scale·log of a uniform double."""
    u = rng.random(n) - 0.5
    noise = -(1 / EPS) * np.sign(u) * np.log1p(-2 * np.abs(u))
    return (x[0] + noise)[:, None]


SNAP_BOUND = 100.0


def laplace_snapping(x, n, rng):
    """Mironov's snapping mechanism: clamp, add noise, round to a power-of-two grid, clamp."""
    scale = (1 + SNAP_BOUND * 2.0 ** -49) / EPS
    grid = 2.0 ** math.ceil(math.log2(scale))
    u = rng.random(n)
    u = np.where(u == 0.0, np.finfo(float).tiny, u)
    sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    noisy = np.clip(x[0], -SNAP_BOUND, SNAP_BOUND) + sign * scale * np.log(u)
    return np.clip(np.round(noisy / grid) * grid, -SNAP_BOUND, SNAP_BOUND)[:, None]


def _catalog() -> dict[str, BenchMechanism]:
    rc = rappor_claims()
    inf = math.inf
    rows = [
        # name, sampler, claimed, true ε, neighbourhood, length, integer input, sentinels, DP-Sniper, time, note
        ("laplace", laplace, EPS, EPS, "l1", 1, False, (), 0.0968, 21.4, ""),
        ("truncated-geometric", truncated_geometric, EPS, EPS, "l1", 1, True, (), 0.1156, 19.5, ""),
        ("noisy-hist1", noisy_hist1, EPS, EPS, "l1", 5, True, (), 0.0978, 37.7, ""),
        ("noisy-hist2", noisy_hist2, EPS, 1 / EPS, "l1", 5, True, (), 4.6020, 40.6,
         "Lap(ε) written for Lap(1/ε)"),
        ("report-noisy-max1", rnm1, EPS, EPS, "linf", 5, False, (), 0.0923, 61.8, ""),
        ("report-noisy-max2", rnm2, EPS, EPS, "linf", 5, False, (), 0.0975, 58.4, ""),
        ("report-noisy-max3", rnm3, EPS, 0.25, "linf", 5, False, (), 0.2478, 62.4,
         "releases the noisy maximum's value"),
        ("report-noisy-max4", rnm4, EPS, inf, "linf", 5, False, (), 0.3463, 62.9,
         "releases the maximum's value under one-sided exponential noise"),
        ("svt1", svt1, EPS, EPS, "linf", 10, False, (-1.0,), 0.0858, 126.0, ""),
        ("svt2", svt2, EPS, EPS, "linf", 10, False, (-1.0,), 0.0859, 159.9, ""),
        ("svt3", svt3, EPS, inf, "linf", 10, False, (FALSE, ABORTED), 0.1716, 160.3,
         "releases noisy answers (Lyu et al.: no finite ε)"),
        ("svt4", svt4, EPS, (1 + 6 * SVT_C) / 4 * EPS, "linf", 10, False, (-1.0,), 0.1687, 130.5,
         "query noise independent of c (Lyu et al.: ((1+6c)/4)ε)"),
        ("svt5", svt5, EPS, inf, "linf", 10, False, (), 1.7612, 58.9, "no noise on the queries"),
        ("svt6", svt6, EPS, inf, "linf", 10, False, (), 0.2720, 95.5, "no cut-off after c positives"),
        ("numerical-svt", numerical_svt, EPS, EPS, "linf", 10, False, (FALSE, ABORTED), 0.0343, 151.7, ""),
        ("svt34-parallel", svt34_parallel, EPS, inf, "linf", 10, False, (FALSE, ABORTED, -1.0), 0.2610, 363.9,
         "SVT3 and SVT4 released together, both at c = 2 (DP-Sniper's setting)"),
        ("laplace-parallel", laplace_parallel, EPS, EPS, "l1", 1, False, (), 0.0350, 104.4,
         "twenty Laplace releases at ε/20"),
        ("prefix-sum", prefix_sum, EPS, 10 * EPS, "linf", 10, False, (), 0.5040, 97.0,
         "prefix sums of noisy entries: sensitivity 10 under ℓ∞"),
        ("rappor", rappor, rc["rappor"][0], rc["rappor"][1], "l1", 1, True, (), 0.2930, 144.9,
         "claim: the paper's ε over 2h bits; true: the bits where 0 and 1 differ"),
        ("one-time-rappor", one_time_rappor, rc["one-time-rappor"][0], rc["one-time-rappor"][1], "l1", 1, True, (),
         0.5978, 89.1, "claim: the paper's ε over 2h bits; true: the bits where 0 and 1 differ"),
        ("laplace-float-naive", laplace_float_naive, EPS, inf, "l1", 1, False, (), 0.2521, 1816.8,
         "floating-point Laplace (Mironov 2012): outputs one input cannot produce leak it"),
        ("laplace-snapping", laplace_snapping, EPS, EPS, "l1", 1, False, (), 0.0979, 1256.6,
         "Mironov's snapping mechanism"),
    ]
    return {r[0]: BenchMechanism(*r) for r in rows}


CATALOG = _catalog()


def get(name: str) -> BenchMechanism:
    try:
        return CATALOG[name]
    except KeyError:
        import difflib
        close = difflib.get_close_matches(name, list(CATALOG), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(CATALOG)}"
        raise KeyError(f"no benchmark mechanism {name!r}{hint}") from None
