"""DP775: the exact inputs of a noise mechanism written into the released output beside its noisy results."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: a callee that returns a noised / obfuscated version of what it is given
_MECH_WORDS = frozenset({
    "noise", "noisy", "laplace", "laplacian", "gauss", "gaussian", "perturb", "perturbed", "perturbation",
    "privatize", "privatise", "privatized", "randomize", "randomise", "obfuscate", "obfuscation", "geoind",
    "geo", "sanitize", "sanitise", "mechanism", "planar", "mask", "jitter",
})
_NOT_DATA = frozenset({"eps", "epsilon", "delta", "sensitivity", "sens", "scale", "sigma", "b", "rng", "seed",
                       "budget", "radius", "r", "k", "z", "p", "theta", "angle", "rho", "alpha", "beta", "mu",
                       "round", "rounds", "epoch", "epochs", "step", "steps", "iterations", "iters", "num", "n",
                       "clients", "batch", "lr", "clip", "norm", "multiplier", "config", "args", "cfg"})
#: a call that writes rows or a table out
_WRITES = frozenset({"write", "writerow", "writerows", "to_csv", "savetxt", "to_excel", "to_parquet", "to_json",
                     "dump", "writelines"})
#: a flag naming the exact originals as part of what is written out
_FLAG_VERBS = frozenset({"include", "keep", "with", "save", "write", "output", "store", "export", "add", "append",
                         "emit", "dump", "show"})
_FLAG_RAW = frozenset({"original", "orig", "raw", "exact", "true", "real", "truth", "unperturbed", "clean",
                       "originals", "unnoised"})
_FLAG_RE = re.compile(r"(include|keep|with|save|write|output|store|export|add|append|emit|dump)_?"
                      r"(original|orig|raw|exact|true|real|truth|unperturbed|unnoised)", re.I)


def _flag(name: str) -> bool:
    pieces = words(name)
    return bool(pieces & _FLAG_VERBS) and bool(pieces & _FLAG_RAW)


def _true(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _mech(call: cst.Call) -> bool:
    return bool(words(call_name(call)) & _MECH_WORDS)


def _names(expr: cst.CSTNode) -> set[str]:
    return {n.value for n in walk(expr) if isinstance(n, cst.Name)}


class ExactValuesWrittenBesideNoisy(Rule):
    id = "DP775"
    name = "exact-values-written-beside-noisy"
    category = "general"
    severity = "error"
    summary = ("the exact values given to a noise mechanism (true coordinates, raw values) are written into the "
               "output file next to the noisy ones")
    rationale = (
        "A release is private only if it holds nothing but the mechanism's output. When the file or table written "
        "out keeps the exact input of the mechanism beside its noisy result (the true latitude/longitude next to "
        "the planar-Laplace point, the raw value next to the perturbed one), everyone who reads the output reads "
        "the private values, and the noise protects nothing. Reported: (a) a flag such as `include_original`, "
        "`keep_raw`, `with_true` switched on (`= True` assigned and passed on, a `=True` keyword, a `True` "
        "default) in a module that calls a noise mechanism; (b) in one function, a write (`writer.writerow(s)`, "
        "`f.write`, `to_csv`, `savetxt`) whose arguments hold both a value given to a noise-named call (or a list "
        "it was appended to) and that call's result. Bad: `writer.writerows(zip(lats, lons, noisy_lats, "
        "noisy_lons))` with `lats` the true inputs. Good: write only the noisy columns; keep the originals "
        "in a separate, non-released evaluation file. Fix: drop the exact columns from the released output."
    )
    TRIGGERS = ("write", "to_csv", "savetxt", "dump", "True")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A noise-named call, and either a flag naming the originals or a write call."""
        if not any(words(n) & _MECH_WORDS for n in facts.called):
            return False
        return bool(_FLAG_RE.search(facts.source)) or bool(facts.called & _WRITES)

    # --- (a) the flag --------------------------------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name) or not _true(node.value):
            return
        name = node.targets[0].target.value
        if not _flag(name):
            return
        fa = self.ctx.analysis
        scope = fa.enclosing_function(node) or self.ctx.module
        passed = any(isinstance(c, cst.Call) and any(isinstance(a.value, cst.Name) and a.value.value == name
                                                      for a in c.args)
                     for c in walk(scope))
        if passed:
            self.report(node, f"`{name} = True` is passed on: the released output keeps the exact values beside the "
                              f"noisy ones, so the noise protects nothing; release only the noisy values")

    def visit_Call(self, node: cst.Call) -> None:
        for a in node.args:
            if a.keyword is not None and _flag(a.keyword.value) and _true(a.value):
                self.report(a, f"`{a.keyword.value}=True`: the released output keeps the exact values beside the "
                               f"noisy ones; release only the noisy values")
        if call_name(node) in _WRITES - {"dump"}:
            self._write(node)

    def visit_Param(self, node: cst.Param) -> None:
        if node.default is not None and _true(node.default) and _flag(node.name.value):
            self.report(node, f"`{node.name.value}=True` by default: the output keeps the exact values beside the "
                              f"noisy ones unless every caller turns it off; default to False")

    # --- (b) the data flow -------------------------------------------------------------------------------------
    def _write(self, call: cst.Call) -> None:
        fa = self.ctx.analysis
        fn = fa.enclosing_function(call)
        if fn is None:
            return
        raw: set[str] = set()
        noisy: set[str] = set()
        body = list(walk(fn.body, into_scopes=False))
        for sub in body:
            if not isinstance(sub, cst.Assign) or not isinstance(sub.value, cst.Call) or not _mech(sub.value):
                continue
            for t in sub.targets:
                noisy |= _names(t.target)
            for a in sub.value.args:
                if isinstance(a.value, cst.Name) and not words(a.value.value) & _NOT_DATA \
                        and (a.keyword is None or not words(a.keyword.value) & _NOT_DATA):
                    raw.add(a.value.value)
        raw -= noisy
        if not raw or not noisy:
            return
        raw_lists: set[str] = set()
        noisy_lists: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Call) and call_name(sub) in ("append", "extend") \
                    and isinstance(sub.func, cst.Attribute) and isinstance(sub.func.value, cst.Name) \
                    and len(sub.args) == 1:
                held = _names(sub.args[0].value)
                if held & raw and not held & noisy:
                    raw_lists.add(sub.func.value.value)
                elif held & noisy:
                    noisy_lists.add(sub.func.value.value)
        written = set().union(*(_names(a.value) for a in call.args)) if call.args else set()
        exact = written & (raw | raw_lists)
        if exact and written & (noisy | noisy_lists):
            self.report(call, f"the write holds `{sorted(exact)[0]}`, an exact input of the noise mechanism, beside "
                              f"its noisy result: the released file reveals the private values; write only the "
                              f"noisy values")

    VALID = (
        # (h47-91) twin of the flag case: the originals are kept out of the released file
        """
import numpy as np
def planar_laplace(lon, lat, epsilon):
    r = np.random.gamma(2, 1 / epsilon)
    t = np.random.uniform(0, 2 * np.pi)
    return lon + r * np.cos(t), lat + r * np.sin(t)
def process(points, path, epsilon, include_original=False):
    noisy = [planar_laplace(lo, la, epsilon) for lo, la in points]
    with open(path, "w") as f:
        for lo, la in noisy:
            f.write(f"{lo},{la}\\n")
def main():
    include_original = False
    process([(1.0, 2.0)], "out.csv", 0.1, include_original)
""",
        # (h47-91) twin of the data-flow case: only the noisy columns are written
        """
import csv, math, random
def add_noise(epsilon, lat, lon):
    r = random.expovariate(epsilon)
    a = random.random() * 2 * math.pi
    return lat + r * math.cos(a), lon + r * math.sin(a)
def run(lat, lon, epsilon, path):
    noisy_lats, noisy_lons = [], []
    for _ in range(100):
        nlat, nlon = add_noise(epsilon, lat, lon)
        noisy_lats.append(nlat)
        noisy_lons.append(nlon)
    writer = csv.writer(open(path, "w"))
    writer.writerows(zip(noisy_lats, noisy_lons))
""",
        # (h47-91) twin: only the mechanism's output is saved
        """
import numpy as np
def laplace_mechanism(x, epsilon, sensitivity):
    return x + np.random.laplace(0, sensitivity / epsilon, np.shape(x))
def release(values, epsilon, path):
    noisy = laplace_mechanism(values, epsilon, 1.0)
    np.savetxt(path, noisy)
""",
        # ordinary ML: augmentation writes clean and noisy images side by side for a denoiser (no ε, no release)
        """
import numpy as np
def make_pairs(images, sigma, path):
    rows = []
    for img in images:
        noisy = img + np.random.normal(0, sigma, img.shape)
        rows.append((img, noisy))
    np.save(path, rows)
""",
    )
    INVALID = (
        # (h47-91) a flag that writes the original coordinates beside the perturbed ones is switched on
        """
import numpy as np
def planar_laplace(lon, lat, epsilon):
    r = np.random.gamma(2, 1 / epsilon)
    t = np.random.uniform(0, 2 * np.pi)
    return lon + r * np.cos(t), lat + r * np.sin(t)
def process(points, path, epsilon, keep_raw=False):
    noisy = [planar_laplace(lo, la, epsilon) for lo, la in points]
    with open(path, "w") as f:
        for (lo, la), (nlo, nla) in zip(points, noisy):
            f.write(f"{lo},{la},{nlo},{nla}\\n" if keep_raw else f"{nlo},{nla}\\n")
def main():
    epsilon = 0.1
    keep_raw = True  # <-
    process([(1.0, 2.0)], "out.csv", epsilon, keep_raw)
    process([(1.0, 2.0)], "out2.csv", epsilon, keep_raw=True)  # <-
""",
        # (h47-91) the exact input lat/lon collected into columns and written in the same rows as the noisy ones
        """
import csv, math, random
def add_noise(epsilon, lat, lon):
    r = random.expovariate(epsilon)
    a = random.random() * 2 * math.pi
    return lat + r * math.cos(a), lon + r * math.sin(a)
def run(lat, lon, epsilon, path):
    lats, lons, noisy_lats, noisy_lons = [], [], [], []
    for _ in range(100):
        nlat, nlon = add_noise(epsilon, lat, lon)
        lats.append(lat)
        lons.append(lon)
        noisy_lats.append(nlat)
        noisy_lons.append(nlon)
    writer = csv.writer(open(path, "w"))
    writer.writerows(zip(lats, lons, noisy_lats, noisy_lons))  # <-
""",
        # (h47-91) the exact vector stacked beside the mechanism's output in the saved release
        """
import numpy as np
def laplace_mechanism(x, epsilon, sensitivity):
    return x + np.random.laplace(0, sensitivity / epsilon, np.shape(x))
def release(values, epsilon, path):
    noisy = laplace_mechanism(values, epsilon, 1.0)
    np.savetxt(path, np.column_stack([values, noisy]))  # <-
""",
        # (h47-91) a default that keeps the true value in every released row
        """
import numpy as np
def privatize_values(values, epsilon, path, with_true=True):  # <-
    noisy = values + np.random.laplace(0, 1 / epsilon, len(values))
    np.savetxt(path, np.column_stack([values, noisy]) if with_true else noisy)
""",
    )
