"""DP738: the exact private record count sets δ, the synthetic output size, a grid size or a threshold."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, walk, words
from dpcheck.rule import Rule

#: a name counting the private records: ``trajectory_number``, ``n_records``, ``num_users``, ``record_count1``
_COUNT = re.compile(
    r"^(?:total_)?(?:(?:trajector(?:y|ies)|records?|users?|rows?|points?|individuals?|participants?|persons?|"
    r"clients?)_(?:number|count|num)|(?:n|num|number_of|total)_(?:trajector(?:y|ies)|records|rows|users|points|"
    r"individuals|participants|persons))\d*$")
#: words of a count that is already public, noised or about other data
_NOT_EXACT = frozenset({"noisy", "noised", "dp", "synthetic", "synth", "generated", "fake", "public", "test",
                        "val", "valid", "eval", "estimated", "est", "released", "target", "max", "min", "expected",
                        "to", "generate", "gen", "batch"})
#: names of the data a ``len(...)``/``.shape[0]`` may count (the private training data, not a held-out split)
_HELD_OUT = frozenset({"test", "val", "valid", "validation", "eval", "holdout", "public", "synthetic", "synth",
                       "fake", "generated", "batch", "noisy", "noise"})
_TEXT = ("len(", "shape[0]", "_number", "n_", "num_", "_count")


def _count_name(name: str | None) -> bool:
    return name is not None and bool(_COUNT.match(name)) and not words(name) & _NOT_EXACT


def _exact_count(expr: cst.BaseExpression) -> str | None:
    """``len(loader.dataset)``, ``data.shape[0]``, ``tset.trajectory_number``, ``n_records``: the count read."""
    if isinstance(expr, cst.Call) and call_name(expr) == "int" and len(expr.args) == 1:
        return _exact_count(expr.args[0].value)
    if isinstance(expr, cst.Call) and call_name(expr) == "len" and len(expr.args) == 1 \
            and isinstance(expr.func, cst.Name):
        pieces = {w for n in walk(expr.args[0].value) if isinstance(n, cst.Name) for w in words(n.value)}
        return None if pieces & _HELD_OUT else "len"
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
            and expr.value.attr.value == "shape" and len(expr.slice) == 1 \
            and isinstance(expr.slice[0].slice, cst.Index) and isinstance(expr.slice[0].slice.value, cst.Integer) \
            and expr.slice[0].slice.value.value == "0":
        pieces = {w for n in walk(expr.value.value) if isinstance(n, cst.Name) for w in words(n.value)}
        return None if pieces & _HELD_OUT else "shape"
    if isinstance(expr, (cst.Name, cst.Attribute)) and _count_name(last_name(expr)):
        return "name"
    return None


def _holds_count(expr: cst.BaseExpression, bound: set[str]) -> cst.BaseExpression | None:
    for sub in walk(expr):
        if isinstance(sub, cst.BaseExpression) and (_exact_count(sub) == "name"
                                                    or isinstance(sub, cst.Name) and sub.value in bound):
            return sub
    return None


def _output_size_name(name: str | None) -> bool:
    """``trajectory_number_to_generate``, ``n_synthetic``, ``num_synth_rows``, ``synthetic_size``."""
    if name is None:
        return False
    pieces = words(name)
    return bool(pieces & {"generate", "synthetic", "synth", "to_generate"}) \
        and bool(pieces & {"number", "num", "n", "count", "size", "rows", "records", "samples"})


class ExactPrivateCountSetsReleaseSize(Rule):
    id = "DP738"
    name = "exact-private-count-sets-release-size"
    category = "general"
    severity = "warning"
    summary = ("the exact number of private records sets δ, the number of synthetic records released, a grid "
               "size or a subdivision threshold, with no noise")
    rationale = (
        "The number of records in the private data set is itself private under add/remove-one DP. When it "
        "sets a released quantity without noise, the release reveals it exactly: δ = compute_delta(n) stored "
        "with the model, a synthetic data set with exactly as many trajectories/rows as the input, a grid of "
        "K = sqrt(n / c) cells, or a threshold n · 0.05 / cells that decides which cells are subdivided. "
        "Reported (the count spelled `len(data)`, `len(loader.dataset)`, `data.shape[0]`, `.trajectory_number`, "
        "`n_records`, …, not a held-out, public or noisy one): (a) a δ-named target assigned a call of a "
        "`*delta*` helper on the count; (b) a synthetic-output-size target (`*_to_generate`, `n_synthetic`) "
        "assigned the count; (c) `sqrt(count / c)`; (d) a `*threshold*` function returning arithmetic on the "
        "count. Fix: fix δ, the output size and the grid size from public values, or use a noisy count charged "
        "to the budget."
    )
    TRIGGERS = _TEXT
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``len``/``shape``/count-named identifier and a δ, generate/synthetic, ``sqrt`` or
        threshold word."""
        idents = facts.identifiers
        if not ("len" in idents or "shape" in idents or any(_COUNT.match(i) for i in idents)):
            return False
        return any("delta" in i.lower() or "generate" in i.lower() or "synth" in i.lower() or "threshold"
                   in i.lower() for i in idents) or "sqrt" in idents

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            name = last_name(t.target)
            if name is None:
                continue
            if "delta" in words(name):
                self._delta(node.value, name)
            elif _output_size_name(name) and _exact_count(node.value) is not None:
                self.report(node, f"`{name}` is set to the exact number of private records: the synthetic "
                                  "output then has exactly as many records as the input and reveals its size; "
                                  "use a public size or a noisy count charged to the budget")

    def _delta(self, value: cst.BaseExpression, name: str) -> None:
        for call in walk(value):
            if isinstance(call, cst.Call) and "delta" in words(call_name(call)) and call.args \
                    and any(_exact_count(a.value) is not None for a in call.args):
                self.report(call, f"`{name}` is computed from the exact size of the private data set: δ then "
                                  "depends on (and, stored with the model, reveals) the private record count; fix δ "
                                  "from a public bound on the size")
                return

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) != "sqrt" or len(node.args) != 1:
            return
        arg = node.args[0].value
        if isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Divide) \
                and any(isinstance(n, cst.BaseExpression) and _exact_count(n) == "name" for n in walk(arg.left)):
            self.report(node, "the grid size sqrt(count / c) is computed from the exact number of private records "
                              "with no noise: the number of cells reveals it; use a noisy count charged to the "
                              "budget or a public size")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if "threshold" not in words(node.name.value):
            return
        body = list(walk(node.body, into_scopes=False))
        bound: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and _exact_count(sub.value) == "name":
                bound |= {t.target.value for t in sub.targets if isinstance(t.target, cst.Name)}
        for sub in body:
            if isinstance(sub, cst.Return) and isinstance(sub.value, cst.BinaryOperation) \
                    and _holds_count(sub.value, bound) is not None:
                self.report(sub, f"the threshold returned by `{node.name.value}` is arithmetic on the exact number "
                                 "of private records: which cells it selects depends on the private count with no "
                                 "noise; use a noisy count charged to the budget")

    VALID = (
        # twin of (a): δ fixed from a public bound on the data set size
        """
def setup_privacy(model, loader, public_size_bound=100_000):
    model.delta = compute_delta(public_size_bound)
    return model
""",
        # twin of (b): the output size is a public parameter; a noisy count is fine too
        """
import numpy as np
def generate(cfg, tset, epsilon):
    if cfg.trajectory_number_to_generate < 0:
        cfg.trajectory_number_to_generate = int(tset.trajectory_number + np.random.laplace(0, 1 / epsilon))
    n_synthetic = cfg.n_output
    return n_synthetic
""",
        # twin of (c) and (d): grid size and threshold from the noisy count
        """
import numpy as np
class Grid:
    def level1_size(self, noisy_trajectory_number, c):
        return np.round(np.sqrt(noisy_trajectory_number / c))
    def subdivision_threshold(self):
        noisy_count = self.noisy_trajectory_number
        return noisy_count * 0.05 / self.cells
""",
        # ordinary ML: batches per epoch and a test-set threshold
        """
import math
def plan(train_loader, test_data, batch_size):
    steps = math.sqrt(len(train_loader) / batch_size)
    n_generate = len(test_data)
    def score_threshold(scores):
        return sum(scores) / len(scores)
    return steps, n_generate
""",
    )

    INVALID = (
        # (a) δ from the exact training set size, kept with the model
        """
def setup_privacy(model, loader, delta=None):
    model.delta = make_delta(len(loader.dataset)) if delta is None else delta  # <-
    return model
""",
        # (b) as many synthetic records as private ones
        """
def generate(cfg, tset, records):
    if cfg.trajectory_number_to_generate < 0:
        cfg.trajectory_number_to_generate = tset.trajectory_number  # <-
    n_synthetic_rows = records.shape[0]  # <-
    return n_synthetic_rows
""",
        # (c) and (d): grid size and subdivision threshold from the exact count
        """
import numpy as np
class Grid:
    def level1_size(self, trajectory_number, c):
        return np.round(np.sqrt(trajectory_number / c))  # <-
    def subdivision_threshold(self):
        count = self.trajectory_number
        return count * 0.05 / self.cells  # <-
""",
        # (a) and (b) in other spellings: a helper on ``x.shape[0]``, an attribute output size
        """
class DPSynthesizer:
    def fit(self, train_x, epsilon, delta=None):
        self.delta = delta or delta_for(train_x.shape[0])  # <-
        self.num_synthetic_rows = len(train_x)  # <-
        return self
""",
    )
