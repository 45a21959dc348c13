"""DP651: a contribution cap (winsorization cap, clip bound, per-user maximum) set to an exact quantile or
maximum of the private data, in the pandas, numpy, torch or Spark spelling."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: words naming a per-record cap
_CAP_WORDS = frozenset({"cap", "caps", "winsor", "winsorize", "winsorization", "winsorisation", "winsorise",
                        "clip", "clipping", "contribution", "contributions", "contrib"})
#: ``max_cells_per_card``, ``max_contributions_per_user``: a per-unit maximum is a contribution bound
_PER_UNIT = frozenset({"per"})
#: statistic calls (any receiver): quantiles, and a maximum of one operand
_QUANTILE_CALLS = frozenset({"percentile", "nanpercentile", "quantile", "nanquantile", "approxQuantile",
                             "percentile_approx", "approx_percentile"})
_MAX_CALLS = frozenset({"max", "amax", "nanmax"})
_SQL_STAT = re.compile(r"(?i)^\s*(?:percentile_approx|approx_percentile|percentile|max)\s*\(")
#: words of an operand or a target that is public, noised or a gradient norm (DP520's case)
_NOT_PRIVATE = frozenset({"public", "pub", "noisy", "noised", "noise", "dp", "private", "synthetic", "synth",
                          "config", "cfg", "args", "schema", "norm", "norms", "grad", "grads", "gradient",
                          "gradients", "loss", "losses", "epsilon", "eps", "sigma", "budget", "bounds", "lower",
                          "upper", "default", "defaults", "settings", "params"})
_PRIVACY_TEXT = re.compile(r"(?i)privacy|private|laplace|sensitivity|differential|\bdp\b|\bepsilon\b(?!\s*=\s*1e-)")
#: branches of the module being scanned that no call selects (``_dead_branches``), set per module
_DEAD: set[int] = set()
_MODULES = ("np", "numpy", "torch", "tf", "jnp", "math", "pd", "F", "functions", "sf", "statistics")


#: calls whose arguments are only shown or logged
_REPORT_CALLS = frozenset({"print", "info", "debug", "warning", "log", "write", "format", "add_scalar", "log_metrics"})


def _attribute_reported_only(module: cst.Module, name: str) -> bool:
    """Every read of ``.name`` in the module is a value of a dict, an argument of a print/log call or a
    piece of an f-string: a statistic kept for display (``self.max_clip = coef.max().item()`` beside
    "stats for debugging"), never a bound anything is clipped to. False when nothing here reads it."""
    targets: set[int] = set()
    for sub in walk(module):
        if isinstance(sub, cst.Assign):
            targets.update(id(t.target) for t in sub.targets)
        elif isinstance(sub, (cst.AugAssign, cst.AnnAssign)):
            targets.add(id(sub.target))

    def named(expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Attribute) and expr.attr.value == name

    reads = shown = 0
    for sub in walk(module):
        if named(sub) and id(sub) not in targets:
            reads += 1
        elif isinstance(sub, cst.DictElement) and named(sub.value):
            shown += 1
        elif isinstance(sub, cst.FormattedStringExpression) and named(sub.expression):
            shown += 1
        elif isinstance(sub, cst.Call) and call_name(sub) in _REPORT_CALLS:
            shown += sum(1 for a in sub.args if named(a.value))
    return reads > 0 and shown >= reads


def _names_cap(name: str) -> bool:
    pieces = words(name)
    if pieces & _NOT_PRIVATE or "noisy" in name.lower():
        return False
    return bool(pieces & _CAP_WORDS) or ("max" in pieces and bool(pieces & _PER_UNIT))


def _operand_words(call: cst.Call) -> set[str]:
    out: set[str] = set()
    nodes: list[cst.CSTNode] = [a.value for a in call.args]
    if isinstance(call.func, cst.Attribute):
        nodes.append(call.func.value)
    for node in nodes:
        for n in walk(node):
            if isinstance(n, cst.Name):
                out |= words(n.value)
            elif isinstance(n, cst.SimpleString):
                out |= words(str(n.evaluated_value))
    return out


def _data_operand_words(call: cst.Call) -> set[str]:
    """Words of the operand a statistic reads (the receiver of a method, else the first argument), not of
    its level (``np.percentile(x, cap_pct)``)."""
    node: cst.CSTNode | None = None
    if isinstance(call.func, cst.Attribute) and (dotted(call.func.value) or "").split(".")[0] not in _MODULES:
        node = call.func.value
    elif call.args and not isinstance(call.args[0].value, (cst.FormattedString, cst.SimpleString)):
        node = call.args[0].value
    if node is None:
        return set()
    return {w for n in walk(node) if isinstance(n, cst.Name) for w in words(n.value)}


def _flag_value(expr: cst.BaseExpression | None) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if isinstance(expr, cst.Integer):
        return expr.value not in ("0",)
    return None


def _dead_branches(module: cst.Module) -> set[int]:
    """ids of the branches of ``a if flag else b`` (``flag`` or ``not flag``, a parameter of the enclosing
    function) that no call of that function in the module selects: every call binds ``flag`` to a literal
    (or leaves its literal default) that picks the other branch. A function whose name is used other than
    as a callee, or that no call reaches, is left alone."""
    dead: set[int] = set()
    functions = [n for n in walk(module) if isinstance(n, cst.FunctionDef)]
    for fn in functions:
        name = fn.name.value
        uses = [n for n in walk(module) if isinstance(n, cst.Name) and n.value == name]
        calls = [n for n in walk(module) if isinstance(n, cst.Call) and isinstance(n.func, cst.Name)
                 and n.func.value == name]
        if not calls or len(uses) != len(calls) + 1:
            continue
        params = list(fn.params.params) + list(fn.params.kwonly_params)
        positional = [p.name.value for p in fn.params.params]
        for ifexp in walk(fn.body):
            if not isinstance(ifexp, cst.IfExp):
                continue
            test, negate = ifexp.test, False
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, negate = test.expression, True
            if not isinstance(test, cst.Name):
                continue
            param = next((p for p in params if p.name.value == test.value), None)
            if param is None:
                continue
            decisions = set()
            for call in calls:
                bound: bool | None = None
                if any(a.star for a in call.args):
                    decisions.add(None)
                    break
                kw = next((a for a in call.args if a.keyword is not None and a.keyword.value == param.name.value), None)
                pos = [a for a in call.args if a.keyword is None]
                if kw is not None:
                    bound = _flag_value(kw.value)
                elif param.name.value in positional and positional.index(param.name.value) < len(pos):
                    bound = _flag_value(pos[positional.index(param.name.value)].value)
                else:
                    bound = _flag_value(param.default)
                decisions.add(None if bound is None else bound != negate)
            if len(decisions) == 1 and None not in decisions:
                dead.add(id(ifexp.orelse if decisions == {True} else ifexp.body))
    return dead


def _statistic(expr: cst.BaseExpression) -> str | None:
    """The name of an exact statistic of records in ``expr``: a quantile call, ``F.expr("percentile_approx(..)")``,
    a one-operand maximum (``np.max(x)``, ``x.max()``, ``F.max("n")``); None if none, or if it is noised."""
    if any(isinstance(n, cst.Call) and call_name(n) in PURE_DRAWS for n in walk(expr)):
        return None
    skipped = {id(d) for b in walk(expr) if id(b) in _DEAD for d in walk(b)}
    for n in walk(expr):
        if id(n) in skipped:
            continue
        if not isinstance(n, cst.Call):
            continue
        name = call_name(n)
        if _operand_words(n) & _NOT_PRIVATE or _data_operand_words(n) & _CAP_WORDS:
            continue  # public, noised, or a statistic of caps already computed (reported where they are)
        if name in _QUANTILE_CALLS:
            return name
        if name == "expr" and n.args:
            first = n.args[0].value
            text = first.evaluated_value if isinstance(first, cst.SimpleString) else \
                "".join(p.value for p in first.parts if isinstance(p, cst.FormattedStringText)) \
                if isinstance(first, cst.FormattedString) else ""
            if isinstance(text, str) and _SQL_STAT.match(text):
                return text.split("(")[0].strip()
        if name in _MAX_CALLS:
            positional = [a for a in n.args if a.keyword is None]
            receiver = dotted(n.func.value) if isinstance(n.func, cst.Attribute) else None
            module_call = receiver is not None and receiver.split(".")[0] in _MODULES
            if isinstance(n.func, cst.Attribute) and not module_call and not positional:
                return name  # ``df["amount"].max()``
            if (module_call or isinstance(n.func, cst.Name)) and len(positional) == 1 \
                    and not isinstance(positional[0].value, (cst.List, cst.Tuple, cst.Set, cst.GeneratorExp,
                                                             cst.ListComp, cst.Integer, cst.Float)):
                return name  # ``np.max(counts)``, ``F.max("num_cells")``, ``max(amounts)``
    return None


class ContributionCapFromData(Rule):
    id = "DP651"
    name = "contribution-cap-from-data"
    category = "metadata"
    severity = "error"
    summary = ("a per-record cap (winsorization cap, clip bound, per-user maximum) is set to an exact quantile or "
               "maximum of the private data: the sensitivity it defines leaks the data and is not a bound")
    rationale = (
        "A DP release clips each record's contribution to a cap and adds noise scaled to that cap. The cap must "
        "be public (domain knowledge, a config value) or estimated with a DP quantile charged to the budget. "
        "A cap computed exactly from the records — `cap = df.stat.approxQuantile('amount', [0.99], 0.001)[0]`, "
        "`F.expr('percentile_approx(amount, 0.99)').alias('cap')`, `winsor_cap = np.percentile(amounts, 99)`, "
        "`self.max_cells_per_card = int(stats['max'])` from `agg(F.max('num_cells'))` — is a function of the "
        "largest records: one record moves it, so the noise scale and the clipping change with that record and "
        "the stated epsilon does not hold. Reported where such a statistic (no noise in the expression) is "
        "assigned to, returned as or aliased as a cap (a name with `cap`, `winsor`, `clip`, `contribution`, or "
        "`max_..._per_...`), in code that speaks of privacy. Not reported: a cap from a config, a public data "
        "set, a noised estimate; a statistic of gradient norms (DP520); code with no privacy vocabulary; a statistic in the branch "
        "of `a if flag else b` that no call of the function selects (every call passes the flag as a literal "
        "choosing the other branch). "
        "Bad: `cap = np.percentile(df['amount'], 99); x = df['amount'].clip(upper=cap)`. Good: "
        "`cap = config.amount_cap` or `cap = dp_quantile(df['amount'], 0.99, epsilon_q)`. Fix: take the cap "
        "from public knowledge or estimate it privately and add that epsilon to the budget."
    )
    TRIGGERS = ("cap", "winsor", "clip", "contrib", "per_")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return True

    VALID = (
        # a per-step statistic of the clip coefficients kept for a debug report, never a bound
        """
import torch
class DPEngine:
    '''Differentially private optimizer: per-example clipping and Gaussian noise.'''
    def step(self, per_example_norms, max_grad_norm, noise_multiplier):
        coef = torch.clamp(max_grad_norm / (per_example_norms + 1e-6), max=1.0)
        self.max_clip = coef.max().item()
        self.min_clip = coef.min().item()
        return coef
    def stats(self):
        print(f"clip coefficients up to {self.max_clip}")
        return {"max_clip": self.max_clip, "min_clip": self.min_clip}
""",
        # ordinary ML: a layer norm's epsilon and a padding size from the batch's own maximum
        """
import torch
class PatchPooler(torch.nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.variance_epsilon = eps
    def forward(self, ids, counts):
        max_segments_per_patch = int(counts.max().item())
        return ids.new_zeros(ids.shape[0], max_segments_per_patch)
""",
        # twin: the cap comes from the configuration, the data only clipped to it
        """
import numpy as np
def dp_total(df, epsilon, config):
    cap = config.amount_cap
    clipped = df["amount"].clip(upper=cap)
    return clipped.sum() + np.random.laplace(0, cap / epsilon)
""",
        # twin: a cap from a public reference table
        """
import numpy as np
def dp_total(df, public_df, epsilon):
    cap = np.percentile(public_df["amount"], 99)
    return df["amount"].clip(upper=cap).sum() + np.random.laplace(0, cap / epsilon)
""",
        # twin (Spark): the per-card maximum is a fixed contribution bound; the query only counts
        """
from pyspark.sql import functions as F
def cells_stats(df, epsilon, max_cells_per_card=5):
    per_card = df.groupBy("card").agg(F.countDistinct("cell").alias("n"))
    sensitivity = max_cells_per_card ** 0.5
    return per_card, sensitivity / epsilon
""",
        # twin of the named aggregation: the per-group cap is a noised quantile
        """
import numpy as np
def caps(df, epsilon):
    '''Laplace mechanism over capped amounts.'''
    return df.groupby("mcc")["amount"].agg(
        [("cap", lambda s: np.percentile(s, 99) + np.random.laplace(0, 1 / epsilon))])
""",
        # the data-dependent cap sits in a branch no call selects: every call passes per_signal_max=False
        """
import numpy as np
def perturb(x, noise_multiplier, per_signal_max=False):
    # Laplace noise for each signal (epsilon from the accountant)
    clip = 1.0 if not per_signal_max else np.max(x)
    return x + np.random.laplace(scale=clip * noise_multiplier, size=x.shape)
def run(x):
    return perturb(x, 1.1, per_signal_max=False)
""",
        # ordinary ML (no privacy): winsorising a feature at its 99th percentile, gradient clipping by a norm
        """
import numpy as np
def clean(df):
    cap = df["income"].quantile(0.99)
    df["income"] = df["income"].clip(upper=cap)
    clip_value = 1.0
    return df, clip_value
""",
    )

    INVALID = (
        # twin of the debug statistic: the same exact maximum then clips the values and sizes the noise
        """
import torch
class DPEngine:
    '''Differentially private sum: values clipped to a cap, Laplace noise.'''
    def fit(self, values):
        self.max_clip = values.max().item()  # <-
    def release(self, values, epsilon):
        clipped = torch.clamp(values, max=self.max_clip)
        return {"sum": clipped.sum() + torch.distributions.Laplace(0, self.max_clip / epsilon).sample(),
                "max_clip": self.max_clip}
""",
        # Spark: the winsorization cap is the exact approxQuantile of the private amounts
        """
class Preprocessor:
    '''Differential privacy pipeline: amounts are capped, then Laplace noise is added.'''
    def _compute_cap(self, df):
        q = self.config.winsorize_percentile / 100.0
        cap = df.stat.approxQuantile("amount", [q], 0.001)[0]  # <-
        return cap
""",
        # Spark: a per-group cap aliased from percentile_approx, and the per-card maximum from F.max
        """
from pyspark.sql import functions as F
def group_caps(df, pct, epsilon):
    rows = df.groupBy("mcc").agg(
        F.expr(f"percentile_approx(amount, {pct / 100})").alias("cap"),  # <-
        F.count("*").alias("n"),
    ).collect()
    stats = df.groupBy("card").agg(F.countDistinct("cell").alias("k")).agg(F.max("k").alias("max")).first()
    max_cells_per_card = int(stats["max"])  # <-
    return rows, max_cells_per_card, epsilon
""",
        # numpy / pandas: a clip bound and a per-user maximum read from the records before the noisy sum
        """
import numpy as np
def dp_sum(df, epsilon):
    clip_bound = np.percentile(df["amount"], 95)  # <-
    max_rows_per_user = df.groupby("user").size().max()  # <-
    total = df["amount"].clip(upper=clip_bound).sum()
    return total + np.random.laplace(0, clip_bound * max_rows_per_user / epsilon)
""",
    )

    INVALID = INVALID + (
        # twin of the dead branch: a caller selects the per-signal maximum
        """
import numpy as np
def perturb(x, noise_multiplier, per_signal_max=False):
    # Laplace noise for each signal (epsilon from the accountant)
    clip = 1.0 if not per_signal_max else np.max(x)  # <-
    return x + np.random.laplace(scale=clip * noise_multiplier, size=x.shape)
def run(x):
    return perturb(x, 1.1, per_signal_max=True)
""",
        # pandas named aggregation and torch: per-group caps and a stored cap, exact quantiles of the records
        """
import numpy as np
import torch
class CappedRelease:
    '''Laplace mechanism over capped amounts (epsilon-DP).'''
    def fit(self, df, amounts):
        self.caps = df.groupby("mcc")["amount"].agg([("cap", lambda s: np.percentile(s, 99))])  # <-
        per_group = df.groupby("mcc").agg(cap=("amount", lambda s: s.quantile(0.99)))  # <-
        self.winsor_cap = torch.quantile(amounts, 0.99).item()  # <-
        return per_group
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        if not _PRIVACY_TEXT.search(self.ctx.source):
            return
        path = (self.ctx.path or "").replace("\\", "/")
        base = path.rsplit("/", 1)[-1]
        if base.startswith("test_") or base.endswith("_test.py") or "/tests/" in f"/{path}":
            return
        _DEAD.clear()
        _DEAD.update(_dead_branches(node))
        assigned: dict[str, list[cst.BaseExpression]] = {}
        for sub in walk(node):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                assigned.setdefault(sub.targets[0].target.value, []).append(sub.value)
        for sub in walk(node):
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    target = t.target
                    name = target.value if isinstance(target, cst.Name) else \
                        target.attr.value if isinstance(target, cst.Attribute) else None
                    if name and _names_cap(name):
                        if not (isinstance(target, cst.Attribute) and _attribute_reported_only(node, name)):
                            self._check(sub, sub.value, name, assigned)
                        break
            elif isinstance(sub, cst.Arg) and sub.keyword is not None and _names_cap(sub.keyword.value):
                # pandas named aggregation ``agg(cap=("amount", lambda s: np.percentile(s, 99)))``
                stat = _statistic(sub.value)
                if stat:
                    self._emit(sub, sub.keyword.value, stat)
            elif isinstance(sub, cst.Tuple) and len(sub.elements) == 2 \
                    and isinstance(sub.elements[0].value, cst.SimpleString) \
                    and _names_cap(str(sub.elements[0].value.evaluated_value)) \
                    and isinstance(sub.elements[1].value, (cst.Lambda, cst.Call)):
                # ``agg([("cap", lambda x: np.percentile(x, q))])``
                stat = _statistic(sub.elements[1].value)
                if stat:
                    self._emit(sub, str(sub.elements[0].value.evaluated_value), stat)
            elif isinstance(sub, cst.Call) and call_name(sub) == "alias" and isinstance(sub.func, cst.Attribute) \
                    and sub.args and isinstance(sub.args[0].value, cst.SimpleString) \
                    and _names_cap(str(sub.args[0].value.evaluated_value)):
                stat = _statistic(sub.func.value)
                if stat:
                    self._emit(sub, str(sub.args[0].value.evaluated_value), stat)

    def _check(self, at: cst.CSTNode, value: cst.BaseExpression, name: str,
               assigned: dict[str, list[cst.BaseExpression]]) -> None:
        stat = _statistic(value)
        if stat is None:
            # one step back: ``int(stats["max"])`` where ``stats = df.agg(F.max("n").alias("max")).first()``
            for n in walk(value):
                if isinstance(n, cst.Subscript) and isinstance(n.value, cst.Name) and n.value.value in assigned:
                    key = n.slice[0].slice if n.slice and isinstance(n.slice[0].slice, cst.Index) else None
                    keytext = key.value.evaluated_value if key is not None and isinstance(key.value, cst.SimpleString) \
                        else None
                    for source in assigned[n.value.value]:
                        if keytext is not None and not any(
                                call_name(c) == "alias" and c.args and isinstance(c.func, cst.Attribute)
                                and isinstance(c.args[0].value, cst.SimpleString)
                                and c.args[0].value.evaluated_value == keytext and _statistic(c.func.value)
                                for c in walk(source) if isinstance(c, cst.Call)):
                            continue
                        stat = _statistic(source)
                        if stat:
                            break
                    if stat:
                        break
        if stat:
            self._emit(at, name, stat)

    def _emit(self, at: cst.CSTNode, name: str, stat: str) -> None:
        self.report(at, f"the cap `{name}` is an exact `{stat}` of the private data: it moves with the largest "
                        "records, so the clipping and the noise scale it sets leak them and the stated epsilon does "
                        "not hold; take the cap from public knowledge or a config, or estimate it with a DP "
                        "quantile charged to the budget")
