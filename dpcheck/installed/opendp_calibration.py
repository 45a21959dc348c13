"""OpenDP's documented way to calibrate a noise scale, as functions ``dpcheck test --noise`` can drive.

OpenDP has no "scale for (ε, δ)" function: its documentation solves for the scale with
``dp.binary_search_param`` over a measurement constructor and its privacy map (docstring of
``opendp.mod.binary_search_param``, "Parameter search" in the user guide,
https://docs.opendp.org/en/stable/api/user-guide/programming-framework/supporting-elements.html).
These two functions do exactly that on a float scalar with absolute distance (L1 = L2 sensitivity Δ):

* Laplace: ``make_laplace`` (ε-DP, ``MaxDivergence``), search for d_out = ε.
* Gaussian: ``make_gaussian`` is ρ-zCDP; ``make_zCDP_to_approxDP`` turns it into a privacy profile
  and ``make_fix_delta`` fixes δ, so the search is for d_out = (ε, δ). The conversion is not
  tight, so the σ found is larger than the analytic minimum: the property is a lower bound.

Runs with whichever opendp the env has (0.16.0 in the main env's ``real`` extra, 0.14.2 in the
smartnoise env).
"""
from __future__ import annotations


def _space() -> tuple:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)


def laplace_scale(epsilon: float, sensitivity: float) -> float:
    """Smallest Laplace scale OpenDP certifies (sensitivity, ε)-close."""
    import opendp.prelude as dp

    space = _space()
    return float(dp.binary_search_param(lambda s: dp.m.make_laplace(*space, scale=s),
                                        d_in=float(sensitivity), d_out=float(epsilon)))


def gaussian_scale(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest Gaussian σ OpenDP certifies (sensitivity, (ε, δ))-close via zCDP → approximate DP."""
    import opendp.prelude as dp

    space = _space()

    def chain(s: float) -> object:
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale=s)), float(delta))

    return float(dp.binary_search_param(chain, d_in=float(sensitivity), d_out=(float(epsilon), float(delta))))
