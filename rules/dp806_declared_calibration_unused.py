"""DP806: a script declares its sensitivity or privacy budget (`sensitivity = 1.0`, `epsilon = 1.0`) but never reads
it; the noise it draws uses some other scale."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"laplace", "normal", "gauss", "Laplace", "Normal", "geometric", "add_laplace_noise",
                    "add_gaussian_noise", "laplace_noise", "gaussian_noise"})
_SENS_WORDS = frozenset({"sensitivity", "sens", "sensitiviy"})
_BUDGET_NAMES = frozenset({"epsilon", "privacy_budget", "privacy_epsilon", "dp_epsilon", "target_epsilon",
                           "epsilon_budget", "total_epsilon"})


def _kind(name: str, value: float) -> str | None:
    w = words(name)
    if w & _SENS_WORDS and value > 0:
        return "sensitivity"
    if name.lower() in _BUDGET_NAMES and 0.01 <= value <= 100:
        return "privacy budget"
    return None


class DeclaredCalibrationUnused(Rule):
    id = "DP806"
    name = "declared-calibration-unused"
    category = "laplace_noise"
    severity = "error"
    summary = ("the sensitivity or the ε of the release is declared (`sensitivity = 1.0`, `privacy_budget = 1.0`) "
               "but never read, so the noise drawn in the same file is not calibrated to it")
    rationale = (
        "Scripts that add Laplace or Gaussian noise to a data set often declare the mechanism's parameters at the "
        "top (`sensitivity = 1.0`, `privacy_budget = 1.0`) and then draw the noise with a different, hard-coded "
        "scale (`noise_scale = 0.1`, `np.random.laplace(0, 0.5, n)`). The declared values are never used: the "
        "noise actually added has nothing to do with the stated sensitivity/ε, and the claimed guarantee (often "
        "reported as 'ε = 1') is whatever the hard-coded scale gives, here ten times weaker. Reported: in DP code "
        "that draws noise, an assignment of a number to a name speaking of sensitivity, or to `epsilon` / "
        "`privacy_budget`, that no expression anywhere in the file reads. Bad: `sensitivity = 1.0`, "
        "`epsilon = 1.0`, `laplace(0, 0.1, shape)`. Good: `laplace(0, sensitivity / epsilon, shape)`. Fix: "
        "derive the noise scale from the declared sensitivity and ε (or remove the declarations and state the "
        "guarantee the scale really gives)."
    )
    TRIGGERS = ("ensitiv", "epsilon", "privacy_budget", "ENSITIV", "EPSILON")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noise draw and a module- or function-level assignment of a number to a
        sensitivity/ε name that no ``Load`` reads."""
        if not facts.calls_any(_DRAWS):
            return False
        loads = {n.id for n in facts.nodes(ast.Name) if isinstance(n.ctx, ast.Load)}  # type: ignore[attr-defined]
        for node in facts.nodes(ast.Assign):
            for t in node.targets:  # type: ignore[attr-defined]
                if isinstance(t, ast.Name) and t.id not in loads and (
                        words(t.id) & _SENS_WORDS or t.id.lower() in _BUDGET_NAMES):
                    return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        not_reads: set[int] = set()
        decls: list[tuple[cst.Assign, str, str]] = []
        draws = False
        for sub in walk(node):
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    not_reads.add(id(t.target))
                if len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                    value = number(sub.value)
                    name = sub.targets[0].target.value
                    if value is not None and _kind(name, value):
                        decls.append((sub, name, _kind(name, value) or ""))
            elif isinstance(sub, cst.AnnAssign):
                not_reads.add(id(sub.target))
            elif isinstance(sub, cst.Attribute):
                not_reads.add(id(sub.attr))
            elif isinstance(sub, cst.Arg) and sub.keyword is not None:
                not_reads.add(id(sub.keyword))
            elif isinstance(sub, cst.Param):
                not_reads.add(id(sub.name))
            elif isinstance(sub, (cst.FunctionDef, cst.ClassDef)):
                not_reads.add(id(sub.name))
            elif isinstance(sub, cst.ImportAlias):
                for n in walk(sub):
                    not_reads.add(id(n))
            elif isinstance(sub, cst.Call) and call_name(sub) in _DRAWS:
                draws = True
        if not draws or not decls:
            return
        reads = {sub.value for sub in walk(node) if isinstance(sub, cst.Name) and id(sub) not in not_reads}
        for stmt, name, kind in decls:
            if name not in reads:
                self.report(
                    stmt,
                    f"the {kind} `{name}` is declared but never used: the noise drawn in this file is not "
                    f"calibrated to it, so the stated guarantee does not hold. Scale the noise by "
                    "sensitivity / ε",
                )

    VALID = (
        # twin: the declared sensitivity and budget set the scale
        """
import numpy as np
import pandas as pd
sensitivity = 1.0
privacy_budget = 1.0
def add_laplace(data, scale):
    return data + np.random.laplace(0, scale, data.shape)
table = pd.read_csv("swipes.csv")
noisy = add_laplace(table, sensitivity / privacy_budget)
noisy.to_csv("noisy_swipes.csv")
""",
        # twin: the parameters are read inside the function that draws
        """
import numpy as np
epsilon = 0.5
sensitivity = 2.0
def release(counts):
    return counts + np.random.laplace(0.0, sensitivity / epsilon, len(counts))
""",
        # the parameters are passed by keyword
        """
import numpy as np
from mylib import laplace_mechanism
epsilon = 1.0
sens = 1.0
def run(values):
    noise = np.random.laplace(0, 1.0, len(values))
    return laplace_mechanism(values, epsilon=epsilon, sensitivity=sens), noise.std()
""",
        # ordinary ML: a numerical epsilon of an optimiser, Gaussian noise augmentation
        """
import numpy as np
eps = 1e-8
def augment(images):
    return images + np.random.normal(0, 0.05, images.shape)
""",
    )

    INVALID = (
        # declared sensitivity and budget, noise with a hard-coded scale
        """
import numpy as np
import pandas as pd
def add_laplace(data, scale):
    return data + np.random.laplace(0, scale, data.shape)
table = pd.read_csv("swipes.csv")
sensitivity = 1.0  # <-
privacy_budget = 1.0  # <-
noise_scale = 0.1
noisy = add_laplace(table, noise_scale)
noisy.to_csv("noisy_swipes.csv")
""",
        # epsilon declared in the function, the draw uses a literal
        """
import numpy as np
def dp_release(counts):
    epsilon = 0.5  # <-
    return counts + np.random.laplace(0, 1.0, len(counts))
""",
        # a Gaussian variant: sensitivity declared, sigma fixed
        """
\"\"\"Gaussian mechanism for differentially private release of the readings.\"\"\"
import numpy as np
SENSITIVITY = 10.0  # <-
def privatize(values, sigma=0.3):
    return values + np.random.normal(0, sigma, values.shape)
""",
        # a diffprivlib-style comment but the scale ignores the declared values
        """
import numpy as np
epsilon = 2.0  # <-
l1_sensitivity = 1  # <-
def noisy_hist(hist):
    return hist + np.random.laplace(scale=0.25, size=hist.shape)
""",
    )
