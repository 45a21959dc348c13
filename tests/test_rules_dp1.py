"""DP101–DP106 beyond their code cases: categories, messages, and the vendored implementations."""
from __future__ import annotations

from pathlib import Path

import pytest

from dpcheck.categories import CATEGORIES
from dpcheck.rule import run_rules
from dpcheck.rules import all_rules, by_id

DP1 = [r for r in all_rules() if r.id.startswith("DP1")]
VENDORED = Path(__file__).resolve().parents[1] / "vendored_impls"


def scan(source: str, rule_id: str):
    return [f for f in run_rules(source, [by_id(rule_id)]) if f.rule == rule_id]


def test_dp1_family_is_complete():
    # the first eleven are fixed; later DP1xx rules are added after them
    ids = [r.id for r in DP1]
    assert ids[:11] == ["DP101", "DP102", "DP103", "DP104", "DP105", "DP106", "DP107", "DP108", "DP109",
                        "DP110", "DP111"]


@pytest.mark.parametrize(
    ("source", "category"),
    [
        ("lamda = np.sqrt(2 * np.log(1.25 * (10 ^ int(delta)))) / epsilon\n", "delta_scale"),
        ("s = self.sigma ^ 2\n", "delta_scale"),
        ("tol = 2 ^ -5\n", "general"),
        ("err = (a / b) ^ 2\n", "general"),
    ],
)
def test_xor_category_depends_on_dp_parameter(source, category):
    (finding,) = scan(source, "DP101")
    assert finding.category == category
    assert "`**`" in finding.message


def test_xor_message_gives_the_integer_result():
    (finding,) = scan("x = 10 ^ 5\n", "DP101")
    assert "15" in finding.message and "100000" in finding.message


def test_delta_scale_follows_a_helper_variable_and_attribute():
    source = (
        "import math\n"
        "class G:\n"
        "    def __init__(self, d):\n"
        "        self.delta = d\n"
        "    def std(self, eps):\n"
        "        inner = 1.25 * self.delta\n"
        "        return math.sqrt(2 * math.log(inner)) / eps\n"
    )
    (finding,) = scan(source, "DP102")
    assert finding.line == 7 and "1.25 / delta" in finding.message


def test_delta_scale_sign_flip_is_fine_when_negated():
    assert not scan("import numpy as np\ns = np.sqrt(-2 * np.log(delta / 1.25)) / eps\n", "DP102")
    assert scan("import numpy as np\ns = np.sqrt(2 * np.log(delta / 1.25)) / eps\n", "DP102")


def test_missing_log_through_a_method_returning_the_term():
    source = (
        "import torch\n"
        "class Accountant:\n"
        "    def _data_dependent(self, q, l):\n"
        "        t_one = (1 - q) * ((1 - q) / (1 - torch.exp(2 * self.lam) * q)).pow(l)\n"
        "        t_two = q * torch.exp(2 * self.lam * l)\n"
        "        return t_one + t_two\n"
        "    def update(self, q, l):\n"
        "        bound = 2 * self.lam ** 2 * l * (l + 1)\n"
        "        self.alpha += torch.minimum(self._data_dependent(q, l), bound)\n"
    )
    (finding,) = scan(source, "DP103")
    assert finding.line == 9 and finding.category == "moments_accountant"
    fixed = source.replace("torch.minimum(self._data_dependent(q, l), bound)", "torch.minimum(torch.log(self._data_dependent(q, l)), bound)")
    assert not scan(fixed, "DP103")


def test_missing_log_quiet_when_log_rebinds_the_name():
    source = (
        "import numpy as np\n"
        "def f(q, lam, l):\n"
        "    t = (1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** l + q * np.exp(2 * lam * l)\n"
        "    t = np.log(t)\n"
        "    return np.clip(t, 0, 2 * lam ** 2 * l * (l + 1))\n"
    )
    assert not scan(source, "DP103")


def test_index_mismatch_reports_the_exp_term_only_once():
    source = (
        "import numpy as np\n"
        "for j in range(L):\n"
        "    t = np.log((1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** (j + 1) + q * np.exp(2 * lam * j + 1))\n"
        "    alpha[j] += np.clip(t, 0, 2 * lam ** 2 * (j + 1) * (j + 2))\n"
    )
    findings = scan(source, "DP104")
    assert [f.line for f in findings] == [3]
    assert "outside the product" in findings[0].message


def test_scale_inversion_follows_arguments_across_functions():
    source = (
        "import numpy as np\n"
        "def aggregate(n0, n1, b):\n"
        "    return n1 + np.random.laplace(0, b) > n0\n"
        "def account(n0, n1, lam_inv):\n"
        "    return (2 + lam_inv * np.abs(n0 - n1)) / (4 * np.exp(lam_inv * np.abs(n0 - n1)))\n"
        "def step(n0, n1, cfg):\n"
        "    y = aggregate(n0, n1, cfg.lamda)\n"
        "    return y, account(n0, n1, cfg.lamda)\n"
    )
    (finding,) = scan(source, "DP105")
    assert finding.line == 3 and "1/b" in finding.message
    consistent = source.replace("np.random.laplace(0, b)", "np.random.laplace(0, 1 / b)")
    assert not scan(consistent, "DP105")


def test_scale_inversion_quiet_on_unrelated_parameters():
    source = (
        "import numpy as np\n"
        "def noise(b):\n"
        "    return np.random.laplace(0, b)\n"
        "def decay(rate, t):\n"
        "    return np.exp(rate * t)\n"
        "noise(2.0); decay(0.1, 3)\n"
    )
    assert not scan(source, "DP105")


def test_gaussian_votes_quiet_with_rdp_accounting():
    votes = (
        "import numpy as np\n"
        "def agg(votes, lamda):\n"
        "    return np.argmax(votes + np.random.normal(0, 1 / lamda, votes.shape), axis=1)\n"
    )
    assert scan(votes, "DP106")
    assert not scan(votes + "def cost(sigma, orders):\n    return compute_rdp(sigma, orders)\n", "DP106")


# ---------------------------------------------------------------- vendored implementations
EXPECTED_UPSTREAM: dict[str, set[tuple[str, str]]] = {
    "original/upstream.py": {("DP101", "delta_scale"), ("DP102", "delta_scale"), ("DP106", "laplace_noise")},
    "turing/upstream.py": {("DP102", "delta_scale"), ("DP106", "laplace_noise")},
    "updated/upstream.py": {("DP105", "laplace_noise")},
    # DP110: δ = 1/(n·√n) from the private record count when no δ is passed (outside Table 2)
    "synthcity/upstream.py": {("DP104", "moments_accountant"), ("DP110", "general")},
    "borealis/upstream_helper.py": {("DP103", "moments_accountant")},
    "borealis/upstream_pate_gan.py": set(),
}


def _scan_file(path: Path) -> set[tuple[str, str]]:
    return {(f.rule, f.category) for f in run_rules(path.read_text(encoding="utf-8"), DP1, str(path))}


@pytest.mark.parametrize("relpath", sorted(EXPECTED_UPSTREAM))
def test_upstream_vendored_findings(relpath):
    assert _scan_file(VENDORED / relpath) == EXPECTED_UPSTREAM[relpath]


def test_smartnoise_upstream_missing_log():
    files = sorted((VENDORED / "smartnoise").glob("upstream*.py"))
    assert files, "vendored smartnoise upstream is missing"
    found = set().union(*(_scan_file(f) for f in files))
    assert ("DP103", "moments_accountant") in found
    assert ("DP110", "general") in found  # δ from the record count, as in synthcity
    assert {c for r, c in found if r != "DP110"} <= {"moments_accountant"}


@pytest.mark.parametrize("impl", ["original", "updated", "synthcity", "turing", "borealis", "smartnoise"])
def test_corrected_twins_are_clean(impl):
    files = sorted((VENDORED / impl).glob("fixed*.py"))
    assert files, f"no corrected twin for {impl}"
    for path in files:
        found = _scan_file(path)
        assert not {(r, c) for r, c in found if c in CATEGORIES}, f"{path.name}: {found}"
