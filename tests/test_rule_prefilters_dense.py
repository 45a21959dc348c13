"""The DP202/DP203/DP303 prefilters skip DP-dense code that holds nothing their rule could report
(so it is never parsed), and still admit the shapes each rule reports. That the gates never skip a
file with a finding is checked on every case and vendored file by ``test_rule_gates.py``."""
from __future__ import annotations

import subprocess
import sys

import pytest

from dpcheck.codetext import code_and_fstrings
from dpcheck.rule import run_rules
from dpcheck.rules import all_rules

RULES = {r.id: r for r in all_rules()}

# DP-dense text the rules cannot report in, and the smallest change that makes it reportable
PAIRS = [
    # DP202: ``argmax``/``clamp_min`` are not bounds; ``X.min(0)`` is
    ("DP202",
     "import numpy as np\ndef fit(self, X, epsilon):\n    k = np.argmax(self.scores(X))\n    return k / epsilon\n",
     "import numpy as np\ndef fit(self, X, epsilon):\n    lo = X.min(0)\n    return (X - lo) / epsilon\n"),
    # DP202: a bound of something not named like data (``scores``), then of the data
    ("DP202",
     "import numpy as np\ndef fit(self, scores, epsilon):\n    top = np.max(scores)\n    return scores / top\n",
     "import numpy as np\ndef fit(self, data, epsilon):\n    top = np.max(data)\n    return data / top\n"),
    # DP202: ``fit`` learns bounds only on a scaler/encoder
    ("DP202",
     "def fit(self, X, epsilon):\n    self.model.fit(X)\n",
     "from sklearn.preprocessing import MinMaxScaler\ndef fit(self, X, epsilon):\n    MinMaxScaler().fit(X)\n"),
    # DP203: a generator call with no label, label frequencies or condition sampler anywhere
    ("DP203",
     "class PATEGAN:\n    def sample(self, n, epsilon):\n        z = self.noise(n)\n        return self.generator(z)\n",
     "class PATEGAN:\n    def fit(self, X, y):\n        self.y = y\n    def sample(self, n):\n"
     "        return self.generator(self.noise(n), self.y)\n"),
    # DP203: labels, but the generator is never called with an argument
    ("DP203",
     "def fit(self, X, y):\n    self.y = y\n    out = self.generator()\n",
     "def fit(self, X, y):\n    self.y = y\n    out = self.generator(y)\n"),
    # DP303: noisy answers and a guarded return, but nothing charges a budget
    ("DP303",
     "import numpy as np\ndef label(self, votes, epsilon):\n    noisy = votes + np.random.laplace(size=3)\n"
     "    if noisy.max() > 1:\n        return noisy.argmax()\n    return -1\n",
     "import numpy as np\ndef label(self, votes, epsilon):\n    noisy = votes + np.random.laplace(size=3)\n"
     "    if noisy.max() > 1:\n        return noisy.argmax()\n    self.accountant.spend(epsilon, 0)\n    return -1\n"),
    # DP303: ``def spend(`` defines a charge, it does not make one; ``self.alpha += q`` does
    ("DP303",
     "def spend(self, votes, epsilon):\n    noisy = votes * 2\n    if noisy:\n        return noisy\n",
     "def spend(self, votes, epsilon):\n    noisy = votes * 2\n    if noisy:\n        return noisy\n"
     "    self.alpha += epsilon\n"),
]


@pytest.mark.parametrize("rule_id,skipped,admitted", PAIRS, ids=[f"{p[0]}-{i}" for i, p in enumerate(PAIRS)])
def test_gate_skips_unreportable_dense_code(rule_id: str, skipped: str, admitted: str) -> None:
    rule = RULES[rule_id]
    assert not rule.applies_to(skipped)
    assert rule.applies_to(admitted)


def test_comments_and_docstrings_do_not_open_the_dp303_gate() -> None:
    body = ("import numpy as np\ndef label(self, votes, epsilon):\n    {doc}\n"
            "    noisy = votes + np.random.laplace(size=3)\n    if noisy.max() > 1:\n        return noisy.argmax()\n")
    assert not RULES["DP303"].applies_to(body.format(doc='"""self.accountant.spend(epsilon)"""'))
    assert not RULES["DP303"].applies_to(body.format(doc="# self.accountant.spend(epsilon)"))
    assert RULES["DP303"].applies_to(body.format(doc="self.accountant.spend(epsilon)"))


def test_code_and_fstrings_keeps_fstring_fields_but_not_comments_or_strings() -> None:
    out = code_and_fstrings('x = f"{acct.spend(e)}"  # budget.charge(1)\ny = "ledger.step(2)"\n')
    assert "acct.spend(e)" in out
    assert "budget.charge" not in out and "ledger.step" not in out


def test_dp303_gate_admits_a_one_branch_charge_released_by_return_none() -> None:
    src = ("import numpy as np\ndef label(self, votes, epsilon):\n    noisy = votes + np.random.laplace(size=3)\n"
           "    if noisy.max() > 1:\n        self.accountant.spend(epsilon, 0)\n    return None\n")
    rule = RULES["DP303"]
    assert run_rules(src, [rule], prefiltered=True), "the rule reports the one-branch charge"
    assert rule.applies_to(src)


def test_dense_gates_finish_on_adversarial_text() -> None:
    # a hang check, not a speed: every helper scans linearly; a nested quantifier would not finish
    probe = (
        "from dpcheck.rules import all_rules\n"
        "base = 'epsilon noisy vote PATE generator( y labels\\nif x:\\n    return v\\n'\n"
        "cases = ['eps' * 4000 + '(', 'a.' * 4000 + 'step(', 'alpha' + '[' * 3000 + ' = alpha',\n"
        "         'x = (' * 3000, 'X' + '.min(' * 3000, 'y' * 20000, 'cond' * 4000 + '(',\n"
        "         'alpha ' * 4000 + '+=' * 3000, ']' * 3000 + ' += 1']\n"
        "rules = [r for r in all_rules() if r.id in ('DP202', 'DP203', 'DP303')]\n"
        "for case in cases:\n"
        "    for rule in rules:\n"
        "        rule.applies_to(base + case + '\\n')\n"
        "print('done')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "done"
