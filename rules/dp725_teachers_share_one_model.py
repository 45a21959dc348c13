"""DP725: every entry of a PATE teacher ensemble is the same model object, so one network is trained on
all the partitions."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import dotted, last_name, loop_targets, target_names, walk, words
from dpcheck.rule import Rule

_TEACHER = frozenset({"teacher", "teachers"})
_MODEL = frozenset({"model", "models", "net", "network", "clf", "classifier", "estimator", "learner", "teacher",
                    "module", "mdl", "cnn", "mlp"})
_SCOPE_LOOPS = (cst.For, cst.While)


def _teacher_container(expr: cst.CSTNode | None) -> str | None:
    """``teachers``, ``self.teacher_models``, ``self.teachers[k]`` -> the container's name when it names
    teachers."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    name = last_name(expr)
    return name if name and words(name) & _TEACHER else None


def _model_ref(expr: cst.CSTNode) -> str | None:
    """A bare model reference (``model``, ``self.model``, ``base_net``), not a call or a copy."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        name = dotted(expr)
        if name and words(name.split(".")[-1]) & _MODEL:
            return name
    return None


def _object_expr(expr: cst.CSTNode) -> bool:
    """An element that is one object when repeated: a name, an attribute or a constructor call, not a
    literal placeholder (``None``, ``0``, ``''``)."""
    if isinstance(expr, cst.Name):
        return expr.value not in {"None", "True", "False"}
    return isinstance(expr, (cst.Attribute, cst.Call))


class TeachersShareOneModel(Rule):
    id = "DP725"
    name = "teachers-share-one-model"
    category = "pate"
    severity = "error"
    summary = ("the teacher ensemble holds the same model object k times, so one network is trained on every "
               "partition and each record reaches all the votes")
    rationale = (
        "PATE's noisy vote count has sensitivity 2 (one vote moves) only because each teacher is a separate "
        "model trained on a disjoint partition: a record changes one teacher. When every entry of the teacher "
        "list or dict is the same object — `[model] * k`, `[Net()] * k` (the constructor runs once), "
        "`[model for _ in range(k)]`, or a loop that appends / stores `model` or `self.model` each time — the "
        "'k teachers' are one network trained in turn on all partitions; a record can change every vote and "
        "the Laplace/Gaussian noise on the histogram is calibrated to a sensitivity that does not hold. "
        "Reported: such a list multiplication or comprehension bound to a name with 'teacher' in it, and a loop "
        "that appends/assigns to a teacher container a model name the loop body does not rebind to a fresh "
        "object (an alias such as `m = self.model` counts as not fresh). Not reported: a constructor call or "
        "`copy.deepcopy(model)` per iteration, the loop's own target (`for m in models`). "
        "Bad: `for i in range(k): self.teachers[i] = self.model`. Good: `self.teachers[i] = make_model()` "
        "or `copy.deepcopy(self.model)`."
    )
    TRIGGERS = ("teacher", "Teacher")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a list multiplication, a list comprehension, or an ``append`` / subscript store
        into a name with 'teacher' in it."""
        for node in facts.identifiers:
            if "teacher" in node.lower():
                return True
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not _teacher_container(node.targets[0].target):
            return
        value = node.value
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
            for side in (value.left, value.right):
                if isinstance(side, cst.List) and len(side.elements) == 1 \
                        and _object_expr(side.elements[0].value):
                    self._report(node, "list multiplication repeats one object")
                    return
        if isinstance(value, cst.ListComp):
            ref = _model_ref(value.elt)
            if ref and ref.split(".")[0] not in loop_targets(value):
                self._report(node, f"the comprehension puts the same `{ref}` in every slot")

    def visit_For(self, node: cst.For) -> None:
        bound = loop_targets(node)
        body = list(walk(node.body, into_scopes=False))
        rebound: dict[str, list[cst.BaseExpression | None]] = {}
        for sub in body:
            if isinstance(sub, cst.Assign):
                for t in sub.targets:
                    for name in target_names(t.target):
                        rebound.setdefault(name, []).append(sub.value)
            elif isinstance(sub, (cst.AnnAssign, cst.AugAssign)):
                for name in target_names(sub.target):
                    rebound.setdefault(name, []).append(getattr(sub, "value", None))
            elif isinstance(sub, (cst.For, cst.CompFor)):
                for name in target_names(sub.target):
                    rebound.setdefault(name, []).append(None)
            elif isinstance(sub, cst.WithItem) and sub.asname is not None:
                for name in target_names(sub.asname.name):
                    rebound.setdefault(name, []).append(None)
        for sub in body:
            stored = None
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) \
                    and sub.func.attr.value in {"append", "insert"} and sub.args \
                    and _teacher_container(sub.func.value):
                stored = sub.args[-1].value
            elif isinstance(sub, cst.Assign) and len(sub.targets) == 1 \
                    and isinstance(sub.targets[0].target, cst.Subscript) \
                    and _teacher_container(sub.targets[0].target):
                stored = sub.value
            if stored is None:
                continue
            ref = _model_ref(stored)
            if ref is None or ref in bound or ref.split(".")[0] in bound:
                continue
            if self._fresh(ref, rebound, bound, set()):
                continue
            self._report(sub, f"every pass of the loop stores the same `{ref}`")

    @classmethod
    def _fresh(cls, ref: str, rebound: dict[str, list[cst.BaseExpression | None]], bound: set[str],
               seen: set[str]) -> bool:
        """Whether the loop body rebinds ``ref`` to a new object (a call, a loop-dependent value) each pass;
        an alias of an outer model (``m = self.model``) is not new."""
        if ref in seen:
            return False
        seen.add(ref)
        for value in rebound.get(ref, []):
            if value is None:
                return True
            alias = _model_ref(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
            if isinstance(value, (cst.Name, cst.Attribute)) and dotted(value):
                name = dotted(value) or ""
                if name in bound or name.split(".")[0] in bound:
                    return True
                if not cls._fresh(alias or name, rebound, bound, seen):
                    continue
                return True
            return True
        return False

    def _report(self, node: cst.CSTNode, how: str) -> None:
        self.report(
            node,
            f"the teacher ensemble holds one model object ({how}): the 'teachers' are a single network trained "
            "on all partitions, so one record can change every vote and the noisy vote count's sensitivity does "
            "not hold; build a fresh model per teacher (a constructor call or `copy.deepcopy`)",
        )

    VALID = (
        # twin of the loop case: a fresh copy per teacher
        """
import copy
import numpy as np
class TeacherPool:
    def __init__(self, base, k, epsilon):
        self.base, self.k, self.epsilon = base, k, epsilon
        self.teachers = {}
        for i in range(k):
            self.teachers['t%d' % i] = copy.deepcopy(self.base)
    def vote(self, x):
        counts = np.bincount([t(x).argmax() for t in self.teachers.values()], minlength=10)
        return np.argmax(counts + np.random.laplace(0, 1 / self.epsilon, 10))
""",
        # twin of the multiplication case: a constructor per teacher in a comprehension
        """
import numpy as np
def make_teachers(build, k, epsilon):
    teachers = [build() for _ in range(k)]
    return teachers, np.random.laplace(0, 2 / epsilon, k)
""",
        # each teacher trained into its own name inside the loop; placeholders multiplied
        """
import numpy as np
def train_teachers(parts, make_clf, epsilon):
    teacher_models = [None] * len(parts)
    for i, (x, y) in enumerate(parts):
        clf = make_clf()
        clf.fit(x, y)
        teacher_models[i] = clf
    noise = np.random.laplace(0, 1 / epsilon)
    return teacher_models, noise
""",
        # the loop's own target stored
        """
import numpy as np
def collect(models, epsilon):
    teachers = []
    for model in models:
        teachers.append(model)
    return teachers, np.random.laplace(0, 1 / epsilon)
""",
        # ordinary ML: knowledge distillation, no DP, a teacher list of distinct checkpoints
        """
import torch
def load_teachers(paths, arch):
    teachers = []
    for p in paths:
        net = arch()
        net.load_state_dict(torch.load(p))
        teachers.append(net)
    return teachers
""",
    )

    INVALID = (
        # a dict of teachers filled with an alias of one attribute
        """
import torch
class Teachers:
    def __init__(self, model, k, epsilon):
        self.model, self.k, self.epsilon = model, k, epsilon
        self.teachers = {}
        for i in range(k):
            net = self.model
            self.teachers['teacher_%d' % i] = net  # <-
    def noisy_votes(self, counts):
        return counts + torch.distributions.Laplace(0.0, 1 / self.epsilon).sample(counts.shape)
""",
        # list multiplication of a constructor call: it runs once
        """
import numpy as np
def build(n_teachers, epsilon, Net):
    teachers = [Net()] * n_teachers  # <-
    scale = 2 / epsilon
    return teachers, np.random.laplace(0, scale, n_teachers)
""",
        # one model appended k times, then trained per partition
        """
import numpy as np
def pate_teachers(parts, model, epsilon):
    teacher_list = []
    for _ in range(len(parts)):
        teacher_list.append(model)  # <-
    for t, (x, y) in zip(teacher_list, parts):
        t.fit(x, y)
    return teacher_list, np.random.laplace(0, 1 / epsilon)
""",
        # comprehension repeating one model
        """
import numpy as np
def ensemble(model, k, epsilon):
    teachers = [model for _ in range(k)]  # <-
    return teachers, np.random.laplace(0, 1 / epsilon, k)
""",
    )
