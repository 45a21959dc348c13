"""DP582 stays quiet on a bisection helper no file of the project calls, and reports it once a script calls it."""
from __future__ import annotations

from dpcheck.rule import run_rules
from dpcheck.rules import all_rules

HELPER = '''
def calibrate_sigma(target_epsilon, delta, q, steps):
    low, high = 0.1, 50.0
    while high - low > 0.01:
        mid = (low + high) / 2
        eps = epsilon_of(mid, q, steps, delta)
        if eps > target_epsilon:
            low = mid
        else:
            high = mid
    return (low + high) / 2
'''


def _dp582(path):
    rule = next(r for r in all_rules() if r.id == "DP582")
    return [f.line for f in run_rules(path.read_text(), [rule], path=str(path)) if f.rule == "DP582"]


def test_uncalled_helper_is_quiet(tmp_path):
    helper = tmp_path / "noise_tools.py"
    helper.write_text(HELPER)
    (tmp_path / "train.py").write_text("from noise_tools import epsilon_of\nprint(epsilon_of(1.0, 0.01, 100, 1e-5))\n")
    assert _dp582(helper) == []


def test_called_helper_is_reported(tmp_path):
    helper = tmp_path / "noise_tools.py"
    helper.write_text(HELPER)
    (tmp_path / "train.py").write_text("from noise_tools import calibrate_sigma\nsigma = calibrate_sigma(1.0, 1e-5, 0.01, 100)\n")
    assert _dp582(helper) == [11]
