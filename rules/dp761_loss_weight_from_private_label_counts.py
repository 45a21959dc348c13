"""DP761: a class/loss weight for private training is the exact ratio of the private data's label counts."""
from __future__ import annotations

import ast
import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

_COUNT_CALLS = frozenset({"value_counts", "bincount", "count_nonzero", "Counter", "unique"})
_BALANCED = frozenset({"compute_class_weight", "compute_sample_weight"})
_DRAWS = re.compile(r"laplace|normal|gauss|randn|noise|geometric|privat|dp_count|noisy", re.IGNORECASE)


def _counts(module: cst.Module, expr: cst.CSTNode) -> bool:
    """A count of records per class: ``df[y].value_counts()[k]``, ``np.bincount(y)``, ``(y == 1).sum()``,
    ``np.sum(y == 0)``, ``len(df[df.y == 1])``, ``Counter(y)[k]``, ``np.unique(y, return_counts=True)``."""
    for sub in walk(expr):
        if not isinstance(sub, cst.Call):
            continue
        name = call_name(sub)
        if name in _COUNT_CALLS:
            if name == "unique" and "return_counts" not in module.code_for_node(sub):
                continue
            if name == "Counter" and not sub.args:
                continue
            return True
        if name in ("sum", "len", "count_nonzero") and any(
                isinstance(c, cst.Comparison) and any(isinstance(t.operator, (cst.Equal, cst.NotEqual))
                                                      for t in c.comparisons)
                for c in walk(sub)):
            return True
    return False



_MARGIN_EPSILON = re.compile(r"(?i)insensitive|huber|\bsvr\b|\bsvm\b|margin")
_BUDGET_PARAMS = frozenset({"epsilon", "eps", "target_epsilon", "noise_multiplier", "delta", "target_delta"})
_DP_TRAINING = re.compile(r"(?i)privacy|opacus|noise_multiplier|make_private|dp_?sgd|dpkeras|laplace|differential|\bdp\b")

class LossWeightFromPrivateLabelCounts(Rule):
    id = "DP761"
    name = "loss-weight-from-private-label-counts"
    category = "general"
    severity = "warning"
    summary = ("a class weight for the loss is the exact ratio of the private training data's label counts: one "
               "record changes the weight of every example of that class, outside the ε")
    rationale = (
        "Weighting the loss by class (`pos_weight`, `class_weight`, `fraud_weight`) with the exact counts of the "
        "private training labels — `df[y].value_counts()[0] / df[y].value_counts()[1]`, `(y == 0).sum() / "
        "(y == 1).sum()`, `len(y) / (k * np.bincount(y))`, `compute_class_weight('balanced', y=y_train)` — "
        "makes a statistic of the records a hyperparameter of DP training. Adding or removing one record "
        "changes the weight, which scales the gradient of every example of that class, and DP-SGD's clipping "
        "and accounting cover neither the weight nor its release (it is usually also saved or logged). "
        "Reported, in DP code: a name holding 'weight' bound to a ratio of per-class counts or to a balanced "
        "class-weight helper, with no noise in the computation. Not reported: weights from noisy counts, from "
        "a config or a public dataset's constants, non-ratio uses of counts. Fix: take the weight from public "
        "knowledge, or compute it from noisy counts and charge that ε."
    )
    TRIGGERS = ("value_counts", "bincount", "sum", "compute_class_weight", "Counter", "count_nonzero", "unique")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a count call (or a balanced-weight helper) in the file."""
        # DP training in the file, not only an ``epsilon`` (SVR's margin, SGD's epsilon-insensitive loss)
        return facts.calls_any(_COUNT_CALLS | _BALANCED | {"sum", "len"})

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    VALID = (
        # ordinary ML (scikit-learn's SVM): balanced class weights beside an epsilon that is a loss margin
        """
from sklearn.utils.class_weight import compute_class_weight
class LinearSVRLike:
    def __init__(self, epsilon=0.1, class_weight="balanced"):
        self.epsilon = epsilon
        self.class_weight = class_weight
    def fit(self, X, y, classes):
        self.class_weight_ = compute_class_weight(self.class_weight, classes=classes, y=y)
        return self
""",
        # twin of the value_counts case: the weight comes from noisy counts (charged elsewhere)
        """
import numpy as np
def prepare(train_df, epsilon):
    counts = train_df["label"].value_counts() + np.random.laplace(0, 2 / epsilon, 2)
    pos_weight = max(counts[0], 1) / max(counts[1], 1)
    return pos_weight
""",
        # twin of the comparison-sum case: a fixed weight from the config
        """
import torch
def make_loss(cfg, noise_multiplier):
    pos_weight = torch.tensor([cfg.pos_weight])
    return torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
""",
        # twin of the bincount case: the class frequencies of a public reference set, hard-coded
        """
import torch
PUBLIC_FREQ = [0.9, 0.1]
def criterion(clip, noise_multiplier):
    class_weight = torch.tensor([1 / f for f in PUBLIC_FREQ])
    return torch.nn.CrossEntropyLoss(weight=class_weight)
""",
        # ordinary ML: counts reported, not turned into a weight
        """
def summary(df):
    n_pos = (df["y"] == 1).sum()
    n_neg = (df["y"] == 0).sum()
    return n_pos, n_neg
""",
    )

    INVALID = (
        # pandas value_counts ratio saved for the DP training step
        """
import numpy as np
def prepare(train_df, out, epsilon):
    fraud_weight = (  # <-
        train_df["is_fraud"].value_counts()[0] / train_df["is_fraud"].value_counts()[1]
    )
    np.savetxt(out, np.array([fraud_weight]))
""",
        # comparison sums over the private labels, fed to the loss of an Opacus model
        """
import torch
def make_loss(y_train, noise_multiplier):
    pos_weight = torch.tensor([(y_train == 0).sum() / (y_train == 1).sum()])  # <-
    return torch.nn.BCEWithLogitsLoss(pos_weight=pos_weight)
""",
        # inverse frequency from bincount
        """
import numpy as np
import torch
def criterion(labels, n_classes, clip, noise_multiplier):
    class_weights = len(labels) / (n_classes * np.bincount(labels))  # <-
    return torch.nn.CrossEntropyLoss(weight=torch.tensor(class_weights))
""",
        # sklearn's balanced helper on the private labels
        """
from sklearn.utils.class_weight import compute_class_weight
def weights_for(y, epsilon):
    cw = compute_class_weight("balanced", classes=[0, 1], y=y)
    self_weights = dict(enumerate(cw))  # <-
    return self_weights
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]  # noqa: D107
        super().__init__(ctx)
        self._params: list[set[str]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._params.append({p.name.value for p in node.params.params + node.params.kwonly_params})

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._params.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        # DP training named in the file, or a budget handed to the function computing the weight; an
        # ``epsilon`` elsewhere is often an estimator's margin (SVR, SGD's epsilon-insensitive loss)
        if not _DP_TRAINING.search(self.ctx.source) and not (
                self._params and self._params[-1] & _BUDGET_PARAMS and not _MARGIN_EPSILON.search(self.ctx.source)):
            return
        if len(node.targets) != 1:
            return
        module = self.ctx.module
        target = node.targets[0].target
        tname = module.code_for_node(target)
        if not any(w.startswith("weight") for w in words(tname.rsplit(".", 1)[-1].strip("]['\""))) \
                and "weight" not in tname.lower():
            return
        value = node.value
        text = module.code_for_node(value)
        if _DRAWS.search(text):
            return
        balanced = any(isinstance(s, cst.Call) and call_name(s) in _BALANCED for s in walk(value))
        if not balanced:
            balanced = self._from_balanced_helper(value)
        ratio = any(isinstance(s, cst.BinaryOperation) and isinstance(s.operator, cst.Divide)
                    and (_counts(module, s.left) or _counts(module, s.right))
                    and (_counts(module, s.left) or _counts(module, s.right) and self._sized(s.left))
                    for s in walk(value))
        if not (balanced or ratio):
            return
        if self._noised_counts(value):
            return
        self.report(
            node,
            "this loss/class weight is the exact ratio of the private training labels' counts: one record "
            "changes the weight of every example of its class, and neither DP-SGD's clipping nor its ε covers "
            "it; take the weight from public knowledge or from noisy counts",
        )

    def _sized(self, expr: cst.CSTNode) -> bool:
        """``len(labels)``, ``df.shape[0]``, ``y.size``: the number of records."""
        text = self.ctx.module.code_for_node(expr)
        return bool(re.search(r"\blen\(|shape\[0\]|\.size\b|\.sum\(\)", text))

    def _from_balanced_helper(self, value: cst.CSTNode) -> bool:
        """``dict(enumerate(cw))`` where ``cw = compute_class_weight(...)`` in the same function."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(value)
        if fn is None:
            return False
        names = {s.value for s in walk(value) if isinstance(s, cst.Name)}
        for sub in walk(fn.body):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and sub.targets[0].target.value in names and any(
                    isinstance(s, cst.Call) and call_name(s) in _BALANCED for s in walk(sub.value)):
                return True
        return False

    def _noised_counts(self, value: cst.CSTNode) -> bool:
        """A name in the ratio was bound (in the same function) to an expression with a noise draw."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(value)
        if fn is None:
            return False
        names = {s.value for s in walk(value) if isinstance(s, cst.Name)}
        for sub in walk(fn.body):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and sub.targets[0].target.value in names \
                    and _DRAWS.search(self.ctx.module.code_for_node(sub.value)):
                return True
        return False
