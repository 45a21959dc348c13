"""(R3 b66) An accountant's events and modules are no mechanism and hold no noisy value."""
from __future__ import annotations

import libcst as cst
import pytest

from dpcheck.analysis.domainflow import is_mechanism, noisy_refs


@pytest.mark.parametrize("code,mechanism", [
    ("dp_event.GaussianDpEvent(sigma)", False),  # the accountant's description of a Gaussian step
    ("LaplaceDpEvent(scale)", False),
    ("gaussian_mechanism(value, sigma)", True),  # the twin: the mechanism itself
    ("laplace_noise(value, scale)", True),
])
def test_accounting_event_is_no_mechanism(code: str, mechanism: bool) -> None:
    call = cst.parse_expression(code)
    assert isinstance(call, cst.Call)
    assert is_mechanism(call) is mechanism


@pytest.mark.parametrize("code,names", [
    ("accountant.compose(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(nm)), t)", set()),
    ("totals[k] = noisy_counts[k] + 1", {"noisy_counts"}),  # the twin: a noised value is used
])
def test_accounting_module_holds_no_noisy_value(code: str, names: set[str]) -> None:
    assert noisy_refs(cst.parse_statement(code)) == names
