"""Reference oracles: privacy accountants written from the formulas, in float64, in log space.

Each oracle is the quantity a paper states, independent of any implementation under test, and
each is cross-checked in ``tests/test_reference_*.py`` against hand-computed values and, where
it computes the same quantity, the maintained ``dp-accounting`` package. ``docs/reference.md``
lists where the formulas and the code tradition disagree and which side each oracle follows.

* :mod:`.pategan` — PATE-GAN Theorem 5 moments accountant and ε̂ (vectorised).
* :mod:`.pate2017` — Papernot et al. 2017 data-dependent bound, validity condition, third term,
  data-independent fallback.
* :mod:`.gnmax` — GNMax / Confident-GNMax RDP, data-independent and data-dependent.
* :mod:`.rdp` — moments ↔ RDP, RDP → (ε, δ) (classic and improved conversions).
* :mod:`.gaussian` — classic σ(ε, δ), analytic Gaussian mechanism, Gaussian RDP.
"""
from . import gaussian, gnmax, pate2017, pategan, rdp
from .gaussian import analytic_delta, analytic_epsilon, analytic_sigma, classic_sigma, gaussian_rdp
from .gnmax import (
    confident_gnmax_rdp,
    gnmax_log_q,
    gnmax_rdp,
    gnmax_rdp_data_dependent,
    gnmax_rdp_data_independent,
    theorem6_rdp,
    threshold_rdp_data_dependent,
    threshold_rdp_data_independent,
)
from .pate2017 import pate2017_epsilon, pate2017_moments, validity_threshold
from .pategan import (
    PateGanAccountant,
    pategan_epsilon,
    pategan_log_q,
    pategan_moment_increment,
    pategan_moment_increments,
    pategan_moments,
    pategan_q,
    pategan_terms,
)
from .rdp import moments_epsilon, moments_to_rdp, rdp_epsilon, rdp_to_moments

__all__ = [
    "PateGanAccountant",
    "analytic_delta",
    "analytic_epsilon",
    "analytic_sigma",
    "classic_sigma",
    "confident_gnmax_rdp",
    "gaussian",
    "gaussian_rdp",
    "gnmax",
    "gnmax_log_q",
    "gnmax_rdp",
    "gnmax_rdp_data_dependent",
    "gnmax_rdp_data_independent",
    "moments_epsilon",
    "moments_to_rdp",
    "pate2017",
    "pate2017_epsilon",
    "pate2017_moments",
    "pategan",
    "pategan_epsilon",
    "pategan_log_q",
    "pategan_moment_increment",
    "pategan_moment_increments",
    "pategan_moments",
    "pategan_q",
    "pategan_terms",
    "rdp",
    "rdp_epsilon",
    "rdp_to_moments",
    "theorem6_rdp",
    "threshold_rdp_data_dependent",
    "threshold_rdp_data_independent",
    "validity_threshold",
]
