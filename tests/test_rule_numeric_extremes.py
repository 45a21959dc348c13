"""No rule crashes on literal arithmetic that overflows or divides by zero.

Several rules fold constants (σ formulas, RDP coefficients, sensitivities); scanned code can hold
``10.0 ** 400`` or ``1 / 0`` in exactly the places they read. A crash there would turn a file's
findings into an internal error, so every rule runs on such code in a DP context here.
"""
from __future__ import annotations

import pytest

from dpcheck.rule import run_rules
from dpcheck.rules import all_rules

EXTREMES = ("10.0 ** 400", "0 ** -1", "1 / 0", "1e308 * 10", "2 ** 10000", "(-8) ** 0.5", "0.0 ** -0.5", "1 % 0")

TEMPLATE = '''
import numpy as np
from opacus.accountants import RDPAccountant
orders = [1 + x / 10.0 for x in range(1, 100)]
def private_release(counts, epsilon, delta, sigma, sensitivity, steps, noise_multiplier, alpha):
    scale = sensitivity / (epsilon * {e})
    sigma = np.sqrt(2 * np.log(1.25 / delta)) * sensitivity / epsilon * {e}
    rdp = [o / (2 * ({e}) * sigma ** 2) for o in orders]
    rho = steps / ({e} * noise_multiplier ** 2)
    eps_total = epsilon * {e} + alpha / ({e})
    noisy = counts + np.random.laplace(0, scale * {e}, counts.shape)
    noisy = noisy + np.random.normal(0, sigma / ({e}), counts.shape)
    return noisy, rdp, rho, eps_total
'''


@pytest.mark.parametrize("expr", EXTREMES)
def test_all_rules_survive_extreme_literals(expr: str) -> None:
    source = TEMPLATE.format(e=expr)
    run_rules(source, all_rules(), f"extreme_{expr}.py")  # raises RuleCrash if any rule does
