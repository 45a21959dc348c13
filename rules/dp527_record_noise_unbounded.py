"""DP527: each record perturbed with noise sized for a fixed sensitivity that nothing enforces on the records."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.dataindex import identifiers
from dpcheck.analysis.syntax import call_name, dotted, number, scope_assignments, undotted, walk, words
from dpcheck.analysis.noisedraws import last_assignment
from dpcheck.rule import Rule

#: called names that draw noise
_DRAWS = frozenset({"laplace", "Laplace", "normal", "Normal", "gauss", "gaussian"})
#: keyword / positional places of a draw's size
_SIZE_KEYWORDS = frozenset({"size", "shape", "sample_shape"})
_BUDGET = frozenset({"eps", "epsilon", "epsilons", "budget", "rho"})
_SENSITIVITY = frozenset({"sensitivity", "sens", "sensitivities", "deltaf"})
#: the words of a parameter that holds records (a table, a column, the responses) rather than an answer
_RECORD_WORDS = frozenset({"data", "df", "frame", "dataframe", "values", "records", "rows", "samples", "dataset",
                           "column", "series", "features", "points", "responses", "readings", "measurements",
                           "observations", "inputs", "raw", "X", "y", "Y", "salaries", "ages", "incomes"})
#: words of a parameter that is an aggregate or an answer (a histogram's bins have sensitivity 1 whatever the data)
_ANSWER_WORDS = frozenset({"hist", "histogram", "count", "counts", "freq", "freqs", "frequency", "frequencies",
                           "marginal", "marginals", "answer", "answers", "query", "queries", "result", "results",
                           "tally", "table", "contingency", "bins", "cnt", "mean", "means", "sum", "sums", "stat",
                           "stats", "statistic", "statistics", "grad", "grads", "gradient", "gradients", "update",
                           "updates", "weights", "params", "model", "noise", "mask", "onehot", "one_hot",
                           "indicator", "indicators", "bits", "labels", "label", "probs", "scores"})
#: element-wise copies and conversions that keep every record's value
_KEEP = frozenset({"copy", "asarray", "array", "to_numpy", "values", "astype", "float", "tensor", "as_tensor",
                   "from_numpy", "reshape", "flatten", "ravel", "squeeze", "DataFrame", "Series", "deepcopy"})
#: calls (or words of calls) that bound their argument
_BOUND_CALLS = frozenset({"clip", "clamp", "clip_", "clamp_", "minimum", "maximum", "tanh", "sigmoid", "sign",
                          "digitize", "cut", "qcut"})
_BOUND_WORDS = frozenset({"clip", "clamp", "normalize", "normalise", "bound", "bounded", "truncate", "project",
                          "rescale", "squash", "winsorize", "quantize", "discretize", "minmax", "encode", "binarize"})
#: readers of a raw table of records (h44-Q1)
_RAW_READERS = frozenset({"read_csv", "read_excel", "read_parquet", "read_table", "read_json", "read_sql",
                          "loadtxt", "genfromtxt", "read_feather"})
#: scalers whose output is unbounded (``transform`` of them keeps an outlier an outlier)
_UNBOUNDED_SCALERS = re.compile(r"\b(?:StandardScaler|RobustScaler|PowerTransformer)\s*\(")


def _last(call: cst.Call) -> str:
    return call_name(call).split(".")[-1]


class RecordNoiseUnbounded(Rule):
    id = "DP527"
    name = "record-noise-unbounded"
    category = "general"
    severity = "error"
    summary = ("each record (a table, a column, the responses) gets noise of scale Δ/ε for a fixed Δ (a literal or a "
               "default) while nothing clips the records to a range of width Δ")
    rationale = (
        "Input perturbation (local DP, a 'DP' copy of a table, noisy responses) is ε-DP for one record only when the "
        "record's value cannot move by more than the sensitivity Δ the Laplace/Gaussian scale Δ/ε was sized for, "
        "i.e. when every value is clipped to a range of width Δ. A helper that adds `laplace(0, Δ/ε, size=len(data))` "
        "to the raw records with Δ a literal (`1 / epsilon`) or a parameter's default (`sensitivity=1.0`) and never "
        "clips them gives no guarantee: an age of 90, a salary, a standard-scaled value of 7 is moved by noise of "
        "scale 1/ε and remains recognisable. Reported: an addition of such a draw, sized by the records (its size "
        "or shape is read from them), to a parameter that holds records (or a copy, a column subset or a "
        "`StandardScaler` transform of it), in a module that clips, clamps or normalises nothing. Not reported: "
        "histograms, counts, answers, gradients and model updates (their sensitivity is the query's or the clip's), "
        "a sensitivity the caller must pass (no default), noise whose scale does not divide by the budget (jitter, "
        "augmentation), modules with any clipping. A bare `1 / ε` is reported only when a call in the module "
        "passes the parameter a table read raw from a file (`pd.read_csv(..)`), else it may be a histogram. Fix: clip each value to [lo, hi] and use Δ = hi − lo (or pass "
        "bounds and derive Δ from them)."
    )
    TRIGGERS = ("aplace", "normal", "gauss")

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return facts.calls_any(_DRAWS)

    VALID = (
        # (T2 h48 twin) the same helper given each column's value counts: histogram cells of sensitivity 1
        """
import numpy as np
import pandas as pd
def lap(v, eps):
    return (v + np.random.laplace(0, 1 / eps, v.shape[0])).round()
frame = pd.read_csv("survey.csv", header=None)
released = [lap(frame.iloc[:, c].value_counts().values, 0.5) for c in (1, 3)]
""",
        # (h44-Q1 twin) the raw table clipped before the 1/ε noise
        """
import numpy as np
import pandas as pd
def add_lap(frame, epsilon):
    noise = np.random.laplace(loc=0, scale=1 / epsilon, size=frame.shape)
    return frame + noise
table = pd.read_csv("scores.csv").clip(0, 1)
released = add_lap(table, 0.5)
""",
        # (h44-Q1) a histogram built from the table gets the 1/ε identity release: not records
        """
import numpy as np
import pandas as pd
def add_lap(data, epsilon):
    return data + np.random.laplace(0, 1 / epsilon, size=data.shape)
raw = pd.read_csv("visits.csv")
counts = raw["ward"].value_counts().values
released = add_lap(counts, 1.0)
""",
        # the identity baseline of a histogram: every cell has sensitivity 1
        """
import numpy as np
def identity_algo(data, epsilon, seed=0):
    rng = np.random.default_rng(seed)
    return data + rng.laplace(0.0, 1.0 / epsilon, data.shape)
""",
        # the values are clipped to the range the sensitivity spans
        """
import numpy as np
def perturb(values, lo, hi, epsilon=1.0):
    values = np.clip(values, lo, hi)
    noise = np.random.laplace(0, (hi - lo) / epsilon, size=len(values))
    return values + noise
""",
        # a histogram: each bin has sensitivity 1 whatever the records are
        """
import numpy as np
def noisy_histogram(counts, epsilon=1.0, sensitivity=1.0):
    return counts + np.random.laplace(0, sensitivity / epsilon, size=counts.shape)
""",
        # the caller must pass the sensitivity (no default): it is the caller's bound
        """
import numpy as np
def laplace_mechanism(data, epsilon, sensitivity):
    return data + np.random.laplace(0, sensitivity / epsilon, data.shape)
""",
        # jitter of a kernel method: its scale has no budget in a denominator
        """
import numpy as np
def jitter(X, eps=1e-8):
    return X + np.random.normal(0, eps, X.shape)
""",
        # data augmentation in training code
        """
import torch
def augment(inputs, sigma=0.1):
    return inputs + torch.normal(0.0, sigma, size=inputs.shape)
""",
        # DP-SGD noise on a clipped gradient sum
        """
import numpy as np
def privatize(grads, epsilon, delta, clip=1.0):
    sigma = clip * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return grads + np.random.normal(0, sigma, grads.shape)
""",
        # a module that normalises the records first
        """
import numpy as np
def normalise(df):
    return (df - df.min()) / (df.max() - df.min())
def perturb_table(df, epsilon=1.0, sensitivity=1.0):
    return df + np.random.laplace(0, sensitivity / epsilon, size=df.shape)
""",
        # a scalar answer, not records
        """
import numpy as np
def noisy_answer(value, epsilon=1.0, sensitivity=1.0):
    return value + np.random.laplace(0, sensitivity / epsilon)
""",
    )
    INVALID = (
        # (T2 h48) a neutrally named helper handed the raw columns of a CSV by position
        """
import numpy as np
import pandas as pd
def lap(v, eps):
    return (v + np.random.laplace(0, 1 / eps, v.shape[0])).round()  # <-
frame = pd.read_csv("survey.csv", header=None)
for c, e in [(1, 0.5), (3, 1.0)]:
    frame.iloc[:, c] = lap(frame.iloc[:, c], e)
""",
        # (h44-Q1) a table read raw from a CSV given 1/ε Laplace noise per value
        """
import numpy as np
import pandas as pd
def add_lap(data, epsilon):
    noise = np.random.laplace(loc=0, scale=1 / epsilon, size=data.shape)
    return data + noise  # <-
table = pd.read_csv("scores.csv")
table["noisy"] = add_lap(table["score"], 0.5)
""",
        # (h44-Q1) np.loadtxt records passed by keyword from a main()
        """
import numpy as np
def perturb(values, epsilon):
    return values + np.random.laplace(0, 1.0 / epsilon, values.shape)  # <-
def main():
    rows = np.loadtxt("readings.txt")
    print(perturb(values=rows, epsilon=1.0))
""",
        # the numeric columns of a table perturbed with a default sensitivity of 1
        """
import numpy as np
def add_laplace_noise(data, epsilon=0.1, sensitivity=1.0, seed=None):
    scale = sensitivity / epsilon
    rng = np.random.default_rng(seed)
    out = data.copy()
    cols = data.select_dtypes(include="number").columns
    noise = rng.laplace(0, scale, size=(len(data), len(cols)))
    out[cols] = data[cols] + noise  # <-
    return out
""",
        # the Gaussian twin: sigma from the classical formula with a default sensitivity
        """
import numpy as np
def add_gaussian_noise(data, epsilon=0.5, delta=1e-5, sensitivity=1.0):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    noise = np.random.normal(0, sigma, size=data.shape)
    return data + noise  # <-
""",
        # a list of raw values turned into an array, a hard-wired sensitivity through a helper scale
        """
import numpy as np
def privatize_values(values, epsilon=1.0, sensitivity=1.0):
    scale = sensitivity / epsilon
    noise = np.random.laplace(loc=0.0, scale=scale, size=len(values))
    arr = np.array(values)
    noisy = arr + noise  # <-
    return noisy.tolist()
""",
        # responses of a regression perturbed with sensitivity 1, never clipped
        """
import numpy as np
def noisy_responses(y, epsilon=1.0, sensitivity=1.0):
    b = sensitivity / epsilon
    noise = np.random.laplace(0, b, size=len(y))
    return y + noise  # <-
""",
        # standard-scaled values (unbounded) get noise of scale 1/epsilon
        """
import numpy as np
from sklearn.preprocessing import StandardScaler
class NoisyScaler:
    def __init__(self, epsilon=1.0):
        self.epsilon = epsilon
        self.scaler = StandardScaler()
    def fit(self, X):
        self.scaler.fit(X)
    def transform(self, X):
        X_scaled = self.scaler.transform(X)
        noise = np.random.laplace(0, 1 / self.epsilon, X_scaled.shape)
        return X_scaled + noise  # <-
""",
    )

    # -- module ---------------------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._clips = False
        self._scalers = bool(_UNBOUNDED_SCALERS.search(self.ctx.source))
        for sub in walk(node):
            if isinstance(sub, cst.Call):
                last = _last(sub)
                if last in _BOUND_CALLS or words(call_name(sub)) & _BOUND_WORDS or isinstance(sub.func, cst.Name) \
                        and last in ("min", "max") and len(sub.args) >= 2:
                    self._clips = True  # ``min(max(v, lo), hi)``; a method ``.max()`` is a statistic, no bound
                    return
            elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) \
                    and isinstance(sub.left, cst.BinaryOperation) and isinstance(sub.left.operator, cst.Subtract):
                self._clips = True  # (x - lo) / (hi - lo): a min-max normalisation
                return
            elif isinstance(sub, cst.Assert):
                self._clips = True
                return

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._clips:
            return
        self._fn = node
        self._defaults: dict[str, cst.BaseExpression | None] = {}
        for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            self._defaults[p.name.value] = p.default
        self._assigns = scope_assignments(node, self.ctx.analysis.line_of, annotated=True)
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
                for data, noise in ((sub.left, sub.right), (sub.right, sub.left)):
                    if self._check(sub, data, noise):
                        break

    # -- helpers --------------------------------------------------------------------------------------------
    def _value(self, name: str, line: int) -> cst.BaseExpression | None:
        found = None
        for at, target, value in self._assigns:
            if target == name and at < line and (found is None or at >= found[0]):
                found = (at, value)
        return found[1] if found else None

    def _records(self, expr: cst.BaseExpression, line: int) -> str | None:
        """The parameter holding records that ``expr`` is (through copies, conversions, column subsets and an
        unbounded scaler's ``transform``), if any."""
        for _ in range(4):
            if isinstance(expr, cst.Subscript):
                expr = expr.value
                continue
            if isinstance(expr, cst.Call):
                last = _last(expr)
                if last in _KEEP or last == "transform" and self._scalers:
                    self._scaled = self._scaled or last == "transform"
                    args = [a.value for a in expr.args if a.keyword is None]
                    if args and (last != "copy" or not isinstance(expr.func, cst.Attribute)):
                        expr = args[0]
                    elif isinstance(expr.func, cst.Attribute):
                        expr = expr.func.value
                    else:
                        return None
                    continue
                return None
            if isinstance(expr, cst.Attribute) and expr.attr.value == "values":
                expr = expr.value
                continue
            if isinstance(expr, cst.Name):
                if expr.value in self._defaults:
                    # (T2 h48) ``lap(x, eps)`` handed ``df.iloc[:, c]`` of a table read raw: ``x`` holds records
                    return expr.value if self._record_named(expr.value) or self._fed_raw_table(expr.value) else None
                value = self._value(expr.value, line)
                if value is None:
                    return None
                expr = value
                continue
            return None
        return None

    def _fed_raw_table(self, param: str) -> bool:
        """(h44-Q1) a call in this module passes ``param`` a table read raw from a file (``pd.read_csv(..)``,
        ``np.loadtxt(..)``, directly or through a name): its values are records, not a histogram's cells."""
        fn = self._fn
        params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
        if param not in params:
            return False
        index = params.index(param)
        fa = self.ctx.analysis
        for call in walk(self.ctx.module):
            if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == fn.name.value):
                continue
            args = [a.value for a in call.args if a.keyword is None and not a.star]
            given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == param),
                         args[index] if index < len(args) else None)
            for _ in range(4):
                if isinstance(given, cst.Subscript):  # a column of the table: ``data["col"]``
                    given = given.value
                    continue
                if isinstance(given, cst.Attribute) and given.attr.value in ("iloc", "loc", "values", "iat", "at"):
                    given = given.value  # (T2 h48) ``df.iloc[:, c]``
                    continue
                if isinstance(given, cst.Name):
                    scope = fa.enclosing_function(call) or self.ctx.module
                    given = last_assignment(scope, given.value, fa.line_of(call) + 1, fa.line_of)
                    continue
                break
            if isinstance(given, cst.Call) and _last(given) in _RAW_READERS:
                return True
        return False

    @staticmethod
    def _record_named(name: str) -> bool:
        w = words(name) | {name}
        return bool(w & _RECORD_WORDS) and not w & _ANSWER_WORDS

    def _draw(self, expr: cst.BaseExpression, line: int) -> cst.Call | None:
        for _ in range(2):
            if isinstance(expr, cst.Name):
                value = self._value(expr.value, line)
                if value is None:
                    return None
                expr = value
                continue
            break
        if isinstance(expr, cst.Call) and _last(expr) in _DRAWS:
            return expr
        return None

    def _scale_sensitivity(self, scale: cst.BaseExpression, line: int) -> str | None:
        """``Δ / ε`` (or ``Δ·c / ε``) with Δ a literal or a parameter with a default: the fixed Δ."""
        for _ in range(3):
            if isinstance(scale, cst.Name) and scale.value not in self._defaults:
                value = self._value(scale.value, line)
                if value is None:
                    return None
                scale = value
                continue
            break
        if isinstance(scale, cst.Call):  # ``compute_scale(sensitivity, epsilon)``: a helper given Δ and ε
            args = [a.value for a in scale.args]
            if any(words((dotted(a) or "").split(".")[-1]) & _BUDGET for a in args):
                for a in args:
                    if isinstance(a, cst.Name) and words(a.value) & _SENSITIVITY \
                            and self._defaults.get(a.value) is not None:
                        return f"{a.value}={self.ctx.analysis.code(self._defaults[a.value]).strip()}"
            return None
        if not (isinstance(scale, cst.BinaryOperation) and isinstance(scale.operator, cst.Divide)):
            return None
        if not any(words((dotted(n) or "").split(".")[-1]) & _BUDGET
                   for n in walk(scale.right) if isinstance(n, (cst.Name, cst.Attribute))):
            return None
        numer = scale.left
        if number(numer) is not None:
            return self.ctx.analysis.code(numer).strip()
        parts = [numer]
        if isinstance(numer, cst.BinaryOperation) and isinstance(numer.operator, cst.Multiply):
            parts = [numer.left, numer.right]
        for part in parts:
            if isinstance(part, cst.Name) and part.value in self._defaults and words(part.value) & _SENSITIVITY:
                default = self._defaults[part.value]
                if default is not None:
                    return f"{part.value}={self.ctx.analysis.code(default).strip()}"
            elif number(part) is not None and len(parts) == 1:
                return self.ctx.analysis.code(part).strip()
        return None

    def _check(self, site: cst.BinaryOperation, data: cst.BaseExpression, noise: cst.BaseExpression) -> bool:
        line = self.ctx.analysis.line_of(site)
        draw = self._draw(noise, line)
        if draw is None:
            return False
        self._scaled = False
        records = self._records(data, line)
        if records is None:
            return False
        scaled = self._scaled
        positional = [a.value for a in draw.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in draw.args if a.keyword is not None}
        scale = keywords.get("scale", keywords.get("b", positional[1] if len(positional) > 1 else None))
        size = next((v for k, v in keywords.items() if k in _SIZE_KEYWORDS), positional[2] if len(positional) > 2
                    else None)
        if scale is None or size is None:
            return False
        # the draw is sized by the records: its size reads the same data (or a copy of it)
        sized_by = identifiers(size)
        aliases = {records} | {name for _, name, value in self._assigns
                               if (target := undotted(name)) is not None and self._records(target, line) == records}
        if not sized_by & aliases:
            return False
        sensitivity = self._scale_sensitivity(scale, line)
        if sensitivity is None:
            return False
        if "=" not in sensitivity and not scaled and not self._fed_raw_table(records):
            return False  # a bare ``1 / ε`` on a parameter: a histogram's identity release looks the same
        self.report(
            site,
            f"every record of `{records}` gets {_last(draw)} noise sized for the fixed sensitivity `{sensitivity}`, "
            f"but nothing in this module clips `{records}` to a range of that width: one record's value can move by "
            "far more than the noise hides, so the stated ε does not hold; clip the values to [lo, hi] and use "
            "Δ = hi − lo",
        )
        return True
