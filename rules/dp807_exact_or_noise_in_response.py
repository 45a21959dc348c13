"""DP807: the response or report returned with a noisy answer also carries the exact value (`original_mean`,
`true_count`) or the drawn noise itself (`noise_added`)."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.syntax import base_name, call_name, dotted, walk, words
from dpcheck.analysis.astfacts import AstFacts
from dpcheck.rule import Rule

_EXACT_WORDS = frozenset({"original", "true", "exact", "actual", "real", "raw", "unnoised"})
_NOISY_WORDS = frozenset({"noisy", "dp", "private", "noised", "perturbed", "privatized", "privatised", "sanitized"})
#: a key that names a parameter, a path or a metric rather than a value of the data
_NOT_VALUE_WORDS = frozenset({"epsilon", "eps", "delta", "budget", "path", "file", "dir", "name", "positive",
                              "filename", "filenames", "filepath", "url", "uri", "id", "format", "ext", "key",
                              "positives", "negative", "negatives", "label", "labels", "type", "shape", "dtype",
                              "columns", "column", "scale", "std", "sigma", "multiplier", "level", "mechanism",
                              "distribution", "bound", "bounds", "sensitivity", "params", "config"})
_NOISE_VALUE_WORDS = frozenset({"added", "value", "values", "amount", "drawn", "sample", "sampled", "realized",
                                "realised", "applied", "vector"})
_RESPONSE_WORDS = frozenset({"response", "result", "results", "report", "output", "jsonify", "json", "payload",
                             "answer"})
_TEXT = re.compile(r"(?i)original|true_|exact|actual|real_|raw_|noise")


def _key_words(key: cst.BaseExpression | None) -> frozenset[str]:
    if isinstance(key, cst.SimpleString):
        value = key.evaluated_value
        return words(value) if isinstance(value, str) else frozenset()
    return frozenset()


def _exact_key(w: frozenset[str]) -> bool:
    return bool(w & _EXACT_WORDS) and not w & _NOT_VALUE_WORDS and not w & _NOISY_WORDS and "noise" not in w


def _noise_key(w: frozenset[str]) -> bool:
    return "noise" in w and not w & _NOT_VALUE_WORDS and (w == {"noise"} or bool(w & _NOISE_VALUE_WORDS))


#: error and utility measures: a function computing them compares the noisy output with the exact one
_ERROR_WORDS = frozenset({"mse", "mae", "rmse", "asr", "snr", "accuracy", "preservation", "utility"})


def _measures_error(body: list[cst.CSTNode]) -> bool:
    """The function binds, or returns under a key, an error or utility measure (``mse_vals``, ``"mean_squared_error"``,
    ``rmse = ...``): it evaluates a mechanism on data it already holds and releases nothing."""
    for n in body:
        if isinstance(n, cst.Name) and words(n.value) & _ERROR_WORDS:
            return True
        if isinstance(n, cst.SimpleString) and isinstance(n.evaluated_value, str) and (
                words(n.evaluated_value) & _ERROR_WORDS or "squared_error" in n.evaluated_value
                or "absolute_error" in n.evaluated_value):
            return True
    return False


def _is_value(expr: cst.BaseExpression) -> bool:
    """Not a literal, not None: a value computed from something."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return False
    if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
        return False
    return True


class ExactOrNoiseInResponse(Rule):
    id = "DP807"
    name = "exact-or-noise-in-response"
    category = "general"
    severity = "error"
    summary = ("the report or API response returned with the noisy answer also carries the exact value "
               "(`original_mean`, `true_count`) or the drawn noise (`noise_added`)")
    rationale = (
        "A DP service answers with a noisy value; if the same response or report also contains the exact answer "
        "(`\"original_mean\": float(df[c].mean())` next to `\"noisy_mean\"`) or the noise that was drawn "
        "(`noise_added=noise`, from which `result - noise_added` is exact), the caller gets the private value "
        "without any noise, and the claimed ε protects nothing. This is common in query APIs and data-release "
        "backends that return 'transparency' fields. Reported: in DP code, an entry of a dict literal, or a "
        "keyword of a response/result/report constructor, whose key speaks of the exact value (original, true, "
        "exact, actual, raw) beside a key speaking of the noisy one, or names the drawn noise (`noise`, "
        "`noise_added`, `noise_value`), when the dict is returned (directly or through the name it is stored "
        "in) or built into a response. Not reported: parameters such as `noise_scale`, `noise_multiplier`, "
        "epsilon. Bad: `return {\"noisy\": y + n, \"noise\": n}`. Good: return the noisy value and the public "
        "parameters (ε, scale) only. Fix: drop the exact value and the noise draw from what leaves the service."
    )
    TRIGGERS = ("noise", "original", "true_", "exact", "actual", "raw_", "real_")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a dict or a keyword argument, and a key text speaking of the exact value or the noise."""
        return bool(facts.nodes(ast.Dict, ast.keyword)) and bool(_TEXT.search(facts.source))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body, into_scopes=False))
        if _measures_error(body):
            return  # a utility evaluation: the exact value is the reference its error is measured against
        returned: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Return) and sub.value is not None:
                returned |= {n.value for n in walk(sub.value) if isinstance(n, cst.Name)}
        for sub in body:
            if isinstance(sub, cst.Return) and sub.value is not None:
                self._check(sub.value, released=True)
            elif isinstance(sub, cst.Assign):
                roots = {base_name(t.target) for t in sub.targets}
                self._check(sub.value, released=bool(roots & returned))
            elif isinstance(sub, cst.Expr):
                self._check(sub.value, released=False)

    def _check(self, expr: cst.BaseExpression, *, released: bool) -> None:
        for sub in walk(expr, into_scopes=False):
            if isinstance(sub, cst.Dict) and released:
                pairs = [(_key_words(el.key), el.value, el) for el in sub.elements if isinstance(el, cst.DictElement)]
                self._pairs(pairs)
            elif isinstance(sub, cst.Call) and (words(call_name(sub)) & _RESPONSE_WORDS or
                                                 call_name(sub) in ("dict", "JSONResponse")) and (
                    released or words(call_name(sub)) & _RESPONSE_WORDS):
                pairs = [(words(a.keyword.value), a.value, a) for a in sub.args if a.keyword is not None]
                self._pairs(pairs)

    def _pairs(self, pairs: list[tuple[frozenset[str], cst.BaseExpression, cst.CSTNode]]) -> None:
        noisy_sibling = any(w & _NOISY_WORDS and not w & _NOT_VALUE_WORDS for w, _, _ in pairs)
        for w, value, node in pairs:
            if not _is_value(value):
                continue
            if _exact_key(w) and noisy_sibling:
                self.report(node, "the exact value is returned beside its noisy version: the caller reads the "
                                  "private answer without noise. Release only the noisy value")
            elif _noise_key(w) and len(pairs) > 1 and isinstance(value, (cst.Name, cst.Attribute)) \
                    and not words((dotted(value) or "").split(".")[-1]) & _NOT_VALUE_WORDS:
                self.report(node, "the drawn noise is returned beside the noisy answer: subtracting it gives the "
                                  "exact value. Release only the noisy value and public parameters (ε, scale)")

    VALID = (
        # a utility evaluation of a mechanism: the exact moments are the reference of the error it reports
        """
import numpy as np
def utility_report(original, private):
    orig = {"mean": float(np.mean(original)), "std": float(np.std(original))}
    priv = {"mean": float(np.mean(private)), "std": float(np.std(private))}
    mse = float(np.mean((np.asarray(original) - np.asarray(private)) ** 2))
    return {"mean_squared_error": mse, "original_moments": orig, "private_moments": priv}
""",
        # twin of the report: only the noisy statistic and public parameters
        """
import numpy as np
def release_column(values, epsilon, lower, upper):
    clipped = np.clip(values, lower, upper)
    noisy_mean = clipped.mean() + np.random.laplace(0, (upper - lower) / (len(values) * epsilon))
    report = {"noisy_mean": float(noisy_mean), "epsilon_used": epsilon, "bounds": [lower, upper]}
    return report
""",
        # twin of the query response: the noise scale is public, the draw stays inside
        """
import numpy as np
from pydantic import BaseModel
class QueryResponse(BaseModel):
    result: float
    epsilon: float
    noise_scale: float
def dp_count(rows, epsilon):
    scale = 1.0 / epsilon
    noisy = len(rows) + np.random.laplace(0, scale)
    return QueryResponse(result=noisy, epsilon=epsilon, noise_scale=scale)
""",
        # an evaluation dict kept local and only printed as an error summary
        """
import numpy as np
def evaluate(true_counts, epsilon):
    noisy = true_counts + np.random.laplace(0, 1 / epsilon, len(true_counts))
    err = np.abs(noisy - true_counts).mean()
    print(f"mean abs error {err:.3f}")
    return noisy
""",
        # ordinary ML: training result dict with raw loss and noise multiplier
        """
import torch
def train_step(model, batch, optimizer, noise_multiplier=1.0):
    loss = model(batch).mean()
    loss.backward()
    optimizer.step()
    return {"raw_loss_type": "mean", "loss": loss.item(), "noise_multiplier": noise_multiplier}
""",
    )

    INVALID = (
        # a data-release report with the exact mean beside the noisy one
        """
import numpy as np
def apply_dp(df, columns, epsilon):
    report = {"noise_statistics": {}}
    for c in columns:
        noisy = df[c].clip(0, 100) + np.random.laplace(0, 100 / epsilon, len(df))
        report["noise_statistics"][c] = {
            "original_mean": float(df[c].mean()),  # <-
            "noisy_mean": float(noisy.mean()),
        }
        df[c] = noisy
    return df, report
""",
        # a query endpoint returning the drawn noise in its response model
        """
import numpy as np
from pydantic import BaseModel
class QueryResponse(BaseModel):
    result: float
    noise_added: float
def laplace_sum(values, epsilon):
    noise = np.random.laplace(0, 1.0 / epsilon)
    return float(np.clip(values, 0, 1).sum()) + noise, noise
def query(values, epsilon):
    private_result, noise_added = laplace_sum(values, epsilon)
    response = QueryResponse(
        result=private_result,
        noise_added=noise_added,  # <-
    )
    return response
""",
        # a Flask handler returning the exact count and the noisy one
        """
import numpy as np
from flask import jsonify
def dp_count_handler(rows, epsilon):
    true_count = len(rows)
    noisy_count = true_count + np.random.laplace(0, 1 / epsilon)
    return jsonify({"noisy_count": noisy_count, "true_count": true_count})  # <-
""",
        # a dict returned with the noise value
        """
import numpy as np
def private_mean(values, epsilon, lo, hi):
    v = np.clip(values, lo, hi)
    noise = np.random.laplace(0, (hi - lo) / (len(v) * epsilon))
    return {"dp_mean": v.mean() + noise, "noise": noise}  # <-
""",
    )
