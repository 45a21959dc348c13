"""DP660: a noise helper's default sensitivity (1.0) applied to each raw record, with nothing clipping the records."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.syntax import (COMPREHENSIONS, call_name, dotted, loop_iter, loop_targets, number,
                                     param_names, refs, scope_assignments, walk, words)
from dpcheck.rule import Rule

_SENS_WORDS = frozenset({"sensitivity", "sens", "sensitivities", "deltaf"})
_BUDGET = frozenset({"eps", "epsilon", "budget", "rho", "privacy"})
_DRAWS = frozenset({"laplace", "Laplace", "normal", "gauss", "gaussian", "exponential"})
_NOISE_WORDS = frozenset({"laplace", "laplacian", "noise", "gauss", "gaussian", "perturb"})
#: a record's iterable whose elements have sensitivity 1 by construction (counts, bins, answers) or are not data
_ANSWER_WORDS = frozenset({"hist", "histogram", "count", "counts", "freq", "freqs", "frequency", "frequencies",
                           "marginal", "marginals", "answer", "answers", "query", "queries", "result", "results",
                           "tally", "bins", "cnt", "sums", "grad", "grads", "gradients", "updates", "params",
                           "weights", "bits", "labels", "probs", "scores", "indicators", "votes", "epsilons",
                           "eps", "range", "enumerate"})
#: calls that bound a value
_BOUND_CALLS = frozenset({"clip", "clamp", "clip_", "clamp_", "minimum", "maximum", "tanh", "sigmoid", "digitize",
                          "cut", "qcut"})
_BOUND_WORDS = frozenset({"clip", "clamp", "normalize", "normalise", "bound", "bounded", "truncate", "project",
                          "rescale", "winsorize", "minmax", "binarize"})
#: conversions that turn a field of a text record into its number
_PARSE = frozenset({"float", "int", "Decimal", "timestamp", "to_numeric"})


def _last(call: cst.Call) -> str:
    return (call_name(call) or "").split(".")[-1]


def _sens_name(name: str) -> bool:
    return bool((words(name) | {name.lower()}) & _SENS_WORDS)


def _noise_call(last: str) -> bool:
    return last in _DRAWS or bool(words(last) & _NOISE_WORDS)


def _bounds(last: str) -> bool:
    """A call ``_clips`` takes for a bound on the values (by its name as written)."""
    return last in _BOUND_CALLS or bool(words(last) & _BOUND_WORDS)


def _ast_defaulted(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Parameters of ``fn`` with a default value."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    out = {a.arg for a in positional[len(positional) - len(args.defaults):]} if args.defaults else set()
    out |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None}
    return out


def _sens_param(fn: cst.FunctionDef) -> tuple[str, int, str] | None:
    """The sensitivity parameter with a numeric default: (name, position, default text)."""
    for i, p in enumerate((*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)):
        if _sens_name(p.name.value) and p.default is not None \
                and number(p.default) is not None:
            return p.name.value, i, str(number(p.default))
    return None


class DefaultSensitivityPerRecord(Rule):
    id = "DP660"
    name = "default-sensitivity-per-record"
    category = "general"
    severity = "error"
    summary = ("each raw record (a timestamp, a value parsed from a data line) gets noise of scale Δ/ε where Δ is a "
               "noise helper's default sensitivity (`sensitivity=1`), and nothing clips the records to a range of "
               "width Δ")
    rationale = (
        "Adding Laplace/Gaussian noise of scale Δ/ε to one value is ε-DP only when neighbouring inputs differ by at "
        "most Δ in that value. A helper `laplace_mechanism(value, epsilon, sensitivity=1)` used on every record of "
        "a column without passing a sensitivity (a list comprehension over timestamps, a loop over the lines of a "
        "CSV that adds `laplace_noise(sensitivity, epsilon)` to `float(fields[col])`) silently assumes each value "
        "lies in a range of width 1 (one second, one dollar); nothing enforces it, so a value is moved by noise far "
        "smaller than its spread and stays recognisable. Reported: (a) a call of such a helper inside a loop or "
        "comprehension over records that omits the sensitivity, (b) a loop inside the helper that adds noise scaled "
        "by the defaulted sensitivity to a value parsed from each record; only in modules that clip, clamp or "
        "normalise nothing. Not reported: counts, histograms and answers (sensitivity 1 is right there), a "
        "sensitivity the call passes, noise whose scale has no budget. Bad: `[laplace_mechanism(t, eps) for t in "
        "timestamps]` with `sensitivity=1` by default. Good: `ts = np.clip(timestamps, lo, hi)` and "
        "`laplace_mechanism(t, eps, sensitivity=hi - lo)`. Fix: clip each value to [lo, hi] and pass Δ = hi − lo."
    )
    TRIGGERS = ("sens", "eltaf", "eltaF")

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a module that bounds nothing (no clip/clamp/normalise call, no ``min``/``max`` of two
        values, no ``assert``, read as ``_clips`` reads them), a function with a defaulted sensitivity parameter,
        a noise draw and an addition."""
        if facts.nodes(ast.Assert):
            return False
        for call in facts.calls:
            last = ast_call_name(call)
            if _bounds(last) or isinstance(call.func, ast.Name) and last in ("min", "max") \
                    and len(call.args) + len(call.keywords) >= 2:
                return False
        if not facts.binops(ast.Add) or not any(_noise_call(n) for c in facts.calls for n in facts.call_lasts(c)):
            return False
        return any(_sens_name(p) for fn in facts.functions for p in _ast_defaulted(fn))

    INVALID = (
        # a per-value helper with a defaulted sensitivity mapped over raw timestamps
        """
import numpy as np
def laplace_release(value, epsilon, sensitivity=1):
    scale = sensitivity / epsilon
    return value + np.random.laplace(0, scale)
seconds = [t.timestamp() for t in login_times]
noisy = [laplace_release(s, 0.1) for s in seconds]  # <-
""",
        # the same with a for loop and a Gaussian helper
        """
import random
def gaussian_perturb(x, eps, delta, sens=1.0):
    sigma = sens * (2 * __import__("math").log(1.25 / delta)) ** 0.5 / eps
    return x + random.gauss(0, sigma)
out = []
for salary in salaries:
    out.append(gaussian_perturb(salary, 1.0, 1e-5))  # <-
""",
        # a CSV line loop that adds noise sized by the defaulted sensitivity to a parsed field
        """
import numpy as np
def draw_noise(sens, epsilon):
    return np.random.laplace(0, sens / epsilon)
def noisy_copy(src, dst, epsilon, sensitivity=1.0, col=0):
    with open(src) as fin, open(dst, "w") as fout:
        for line in fin:
            fields = line.strip().split(",")
            number = float(fields[col])
            fields[col] = str(number + draw_noise(sensitivity, epsilon))  # <-
            fout.write(",".join(fields) + "\\n")
""",
        # a field of each row of a table read from a file
        """
import numpy as np
import pandas as pd
def privatize_value(v, epsilon, sensitivity=1.0):
    return v + np.random.laplace(0.0, sensitivity / epsilon)
table = pd.read_csv("patients.csv")
released = [privatize_value(float(row["weight"]), 0.5) for _, row in table.iterrows()]  # <-
""",
    )
    VALID = (
        # twin: the timestamps are clipped and the width is passed as the sensitivity
        """
import numpy as np
def laplace_release(value, epsilon, sensitivity=1):
    scale = sensitivity / epsilon
    return value + np.random.laplace(0, scale)
lo, hi = 0.0, 86400.0
seconds = np.clip([t.timestamp() % 86400 for t in login_times], lo, hi)
noisy = [laplace_release(s, 0.1, sensitivity=hi - lo) for s in seconds]
""",
        # twin: the sensitivity is passed from a bound the caller enforces
        """
import random
def gaussian_perturb(x, eps, delta, sens=1.0):
    sigma = sens * (2 * __import__("math").log(1.25 / delta)) ** 0.5 / eps
    return x + random.gauss(0, sigma)
out = []
for salary in salaries:
    out.append(gaussian_perturb(min(max(salary, 0), 200000), 1.0, 1e-5, sens=200000))
""",
        # twin: the parsed field is clipped to [0, sensitivity]
        """
import numpy as np
def draw_noise(sens, epsilon):
    return np.random.laplace(0, sens / epsilon)
def noisy_copy(src, dst, epsilon, sensitivity=1.0, col=0):
    with open(src) as fin, open(dst, "w") as fout:
        for line in fin:
            fields = line.strip().split(",")
            number = min(max(float(fields[col]), 0.0), sensitivity)
            fields[col] = str(number + draw_noise(sensitivity, epsilon))
            fout.write(",".join(fields) + "\\n")
""",
        # counts: each bin has sensitivity 1, the default is right
        """
import numpy as np
def laplace_release(value, epsilon, sensitivity=1):
    return value + np.random.laplace(0, sensitivity / epsilon)
noisy = [laplace_release(c, 0.5) for c in counts]
""",
        # ordinary ML: jitter with a default noise level, no budget in the scale
        """
import numpy as np
def jitter(x, sensitivity=1.0, scale=0.01):
    return x + np.random.normal(0, scale * sensitivity)
augmented = [jitter(img) for img in images]
""",
    )

    # -- module ---------------------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        if self._clips(node):
            return
        helpers: dict[str, tuple[cst.FunctionDef, str, int, str]] = {}
        for fn in walk(node):
            if not isinstance(fn, cst.FunctionDef):
                continue
            found = _sens_param(fn)
            if found is None:
                continue
            sens, index, default = found
            if self._loop_form(fn, sens, default):
                continue
            value = self._value_helper(fn, sens)
            if value is not None:
                helpers[fn.name.value] = (fn, sens, index, default)
        if helpers:
            self._calls(node, helpers)

    @staticmethod
    def _clips(node: cst.Module) -> bool:
        for sub in walk(node):
            if isinstance(sub, cst.Call):
                last = _last(sub)
                if _bounds(last):
                    return True
                if isinstance(sub.func, cst.Name) and last in ("min", "max") and len(sub.args) >= 2:
                    return True
            elif isinstance(sub, cst.Assert):
                return True
        return False

    # -- the draw ---------------------------------------------------------------------------------------------
    def _scaled_by(self, fn: cst.FunctionDef, expr: cst.BaseExpression, sens: str) -> bool:
        """``expr`` is (or names) a noise draw whose arguments read ``sens`` and a budget, directly or through a
        local assignment."""
        assigns = {t: v for _, t, v in scope_assignments(fn, self.ctx.analysis.line_of)}
        for _ in range(3):
            if isinstance(expr, cst.Name) and expr.value in assigns:
                expr = assigns[expr.value]
                continue
            break
        if not isinstance(expr, cst.Call):
            return False
        last = _last(expr)
        if not _noise_call(last):
            return False
        names: set[str] = set()
        for a in expr.args:
            names |= refs(a.value)
        for _ in range(2):  # one hop through ``scale = sensitivity / epsilon``
            for n in list(names):
                if n in assigns:
                    names |= refs(assigns[n])
        return sens in names and any(words(n.split(".")[-1]) & _BUDGET for n in names)

    def _value_helper(self, fn: cst.FunctionDef, sens: str) -> str | None:
        """``return value + draw(sens / eps)``: the value parameter."""
        params = param_names(fn)
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Return) and isinstance(sub.value, cst.BinaryOperation) \
                    and isinstance(sub.value.operator, cst.Add):
                for value, noise in ((sub.value.left, sub.value.right), (sub.value.right, sub.value.left)):
                    if isinstance(value, cst.Name) and value.value in params and value.value != sens \
                            and self._scaled_by(fn, noise, sens):
                        return value.value
        return None

    def _loop_form(self, fn: cst.FunctionDef, sens: str, default: str) -> bool:
        """(b): a loop in ``fn`` adds a draw scaled by ``sens`` to a number parsed from each record."""
        line_of = self.ctx.analysis.line_of
        assigns = scope_assignments(fn, line_of)
        for loop in walk(fn, into_scopes=False):
            if not isinstance(loop, cst.For):
                continue
            if words(dotted(loop.iter) or "") & _ANSWER_WORDS:
                continue
            for sub in walk(loop.body, into_scopes=False):
                if not (isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add)):
                    continue
                for value, noise in ((sub.left, sub.right), (sub.right, sub.left)):
                    if self._parsed(value, assigns, line_of(sub)) and self._scaled_by(fn, noise, sens):
                        self.report(sub, self._message(value, sens, default))
                        return True
        return False

    def _parsed(self, expr: cst.BaseExpression, assigns, line: int) -> bool:
        for _ in range(3):
            if isinstance(expr, cst.Name):
                found = None
                for at, target, v in assigns:
                    if target == expr.value and at <= line:
                        found = v
                if found is None:
                    return False
                expr = found
                continue
            break
        return isinstance(expr, cst.Call) and _last(expr) in _PARSE and bool(expr.args) \
            and isinstance(expr.args[0].value, cst.Subscript)

    # -- call sites ---------------------------------------------------------------------------------------------
    def _calls(self, node: cst.Module, helpers: dict) -> None:
        for loop in walk(node):
            if not (isinstance(loop, cst.For) or isinstance(loop, COMPREHENSIONS)):
                continue
            it = loop_iter(loop)
            if it is None or words(dotted(it) or (call_name(it) if isinstance(it, cst.Call) else "") or "") \
                    & _ANSWER_WORDS:
                continue
            targets = loop_targets(loop)
            if not targets or any(words(t) & _ANSWER_WORDS for t in targets):
                continue
            body = loop.body if isinstance(loop, cst.For) else getattr(loop, "elt", getattr(loop, "value", None))
            if body is None:
                continue
            for call in walk(body):
                if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name)
                        and call.func.value in helpers):
                    continue
                fn, sens, index, default = helpers[call.func.value]
                positional = [a for a in call.args if a.keyword is None]
                if any(a.star for a in call.args) or len(positional) > index \
                        or any(a.keyword is not None and a.keyword.value == sens for a in call.args):
                    continue
                if not positional or not self._of_record(positional[0].value, targets):
                    continue
                self.report(call, self._message(positional[0].value, sens, default))

    @staticmethod
    def _of_record(arg: cst.BaseExpression, targets: set[str]) -> bool:
        """The loop's record itself, a field of it (``row["age"]``, ``row.age``) or its number (``float(v)``)."""
        for _ in range(3):
            if isinstance(arg, cst.Call) and _last(arg) in _PARSE and arg.args:
                arg = arg.args[0].value
            elif isinstance(arg, cst.Subscript):
                arg = arg.value
            elif isinstance(arg, cst.Attribute) and dotted(arg) not in targets:
                arg = arg.value
            else:
                break
        return (isinstance(arg, (cst.Name, cst.Attribute))) and dotted(arg) in targets

    def _message(self, value: cst.BaseExpression, sens: str, default: str) -> str:
        what = self.ctx.analysis.code(value).strip()
        return (f"each record `{what}` gets noise sized by the default `{sens}={default}`, but nothing clips the "
                f"records to a range of that width, so one record can differ by far more than the noise hides and "
                f"the stated ε does not hold; clip the values to [lo, hi] and pass {sens}=hi − lo")
