"""DP304: PATE teachers that are sklearn-style non-neural models re-fitted every iteration."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.syntax import call_name, refs, walk
from dpcheck.rule import Rule
from dpcheck.analysis.generator import (
    ModuleIndex,
    index_for,
    target_key,
    tokens,
)

_MODELS = {
    "LogisticRegression", "LogisticRegressionCV", "SGDClassifier", "LinearSVC", "RidgeClassifier",
    "RidgeClassifierCV", "Perceptron", "PassiveAggressiveClassifier", "LinearDiscriminantAnalysis",
    "GaussianNB", "BernoulliNB", "SVC", "KNeighborsClassifier", "DecisionTreeClassifier",
    "RandomForestClassifier", "ExtraTreesClassifier", "GradientBoostingClassifier",
    "HistGradientBoostingClassifier", "XGBClassifier", "LGBMClassifier",
}
_LIBRARIES = ("sklearn", "xgboost", "lightgbm")
_TEACHER = {"teacher", "teachers"}
_GENERATED = {"fake", "fakes", "gen", "generated", "synth", "synthetic", "hat", "g"}
_COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)
#: names of a generative model; PATE-GAN needs one, classic PATE (teachers label a student) has none
_GAN = {"generator", "generators", "gan", "discriminator", "fake", "fakes", "netg", "gen"}


class NonNeuralTeachers(Rule):
    id = "DP304"
    name = "non-neural-teachers"
    category = "teachers"
    severity = "warning"
    summary = "PATE teachers are sklearn linear (non-neural) models re-fitted from scratch every iteration"
    rationale = (
        "In PATE-GAN each teacher is a neural discriminator trained by SGD on its own partition "
        "against the generator's current samples, so the teachers improve together with the "
        "generator. Implementations that create sklearn models (LogisticRegression, "
        "SGDClassifier, LinearSVC, …) and fit them from scratch on every iteration (updated, "
        "synthcity) run a different algorithm: a linear teacher cannot separate the generator's "
        "samples from real ones once marginals match, the votes carry little signal and the "
        "utility and privacy results reported for PATE-GAN do not apply. Fix: use neural "
        "teacher discriminators, created once and updated by gradient steps each iteration. Not "
        "reported: classic PATE for classification (the teachers' votes label a student and the module "
        "has no generative model), where sklearn teachers per partition are legitimate."
    )
    TRIGGERS = tuple(sorted(_MODELS))

    VALID = (
        # neural teachers
        """
import torch.nn as nn
class PATEGAN:
    def __init__(self, d, k):
        self.teachers = [nn.Sequential(nn.Linear(d, d // 2), nn.ReLU(), nn.Linear(d // 2, 1)) for _ in range(k)]
""",
        # classic PATE on a classification task: sklearn teachers fitted once on their partition
        """
from sklearn.linear_model import LogisticRegression
def train_teachers(parts):
    teachers = []
    for x, y in parts:
        teacher = LogisticRegression(max_iter=500)
        teacher.fit(x, y)
        teachers.append(teacher)
    return teachers
""",
        # sklearn model in a loop, but not a teacher
        """
from sklearn.linear_model import LogisticRegression
def evaluate(synthetic_sets, x_test, y_test):
    scores = []
    for _ in range(5):
        for xs, ys in synthetic_sets:
            clf = LogisticRegression()
            clf.fit(xs, ys)
            scores.append(clf.score(x_test, y_test))
    return scores
""",
        # a local (neural) class with the same name
        """
import torch
class LogisticRegression(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = torch.nn.Linear(d, 1)
def make_teachers(d, k, rounds):
    for _ in range(rounds):
        teachers = [LogisticRegression(d) for _ in range(k)]
    return teachers
""",
        # one sklearn model distilled from a single public teacher: no teacher ensemble
        """
from sklearn.tree import DecisionTreeClassifier
from sklearn.linear_model import LogisticRegression
def train_student(x_pub, y_pub, epsilon):
    teacher = LogisticRegression().fit(x_pub, y_pub)
    clf = DecisionTreeClassifier(max_depth=3)
    clf.fit(x_pub, teacher.predict(x_pub))
    return clf
""",
        # classic PATE repeated over a grid of budgets: teachers re-fitted per experiment, their votes
        # label a student (DPML-syn PATE_learning.py)
        """
import numpy as np
from sklearn.linear_model import LogisticRegression
def pate_accuracy(x_teacher, y_teacher, x_student, x_test, y_test, n_teachers, eps_grid):
    accuracies = []
    for eps in eps_grid:
        teachers = []
        for k in range(n_teachers):
            teacher = LogisticRegression(max_iter=10000)
            teacher.fit(x_teacher[k::n_teachers], y_teacher[k::n_teachers])
            teachers.append(teacher)
        votes = np.array([t.predict(x_student) for t in teachers])
        labels = noisy_argmax(votes, eps)
        student = LogisticRegression(max_iter=10000)
        student.fit(x_student, labels)
        accuracies.append(student.score(x_test, y_test))
    return accuracies
""",
        # a template class for classic PATE on a labelled task: each teacher fitted once on its partition
        """
from sklearn.linear_model import LogisticRegression
class TeacherEnsemble:
    def __init__(self, template=LogisticRegression):
        self.model_template = LogisticRegression
    def train_teachers(self, parts):
        self.teachers = []
        for x, y in parts:
            teacher = self.model_template(max_iter=500)
            teacher.fit(x, y)
            self.teachers.append(teacher)
        return self.teachers
""",
    )

    INVALID = (
        # updated shape: a fresh LogisticRegression per teacher inside the budget loop
        """
import numpy as np
from sklearn.linear_model import LogisticRegression
def pategan(x, k, epsilon, generator):
    eps_hat = 0
    while eps_hat < epsilon:
        fake = generator(len(x) // k)
        for i in range(k):
            teacher = LogisticRegression()  # <-
            teacher.fit(np.vstack([parts[i], fake]), np.r_[np.ones(len(parts[i])), np.zeros(len(fake))])
            teachers[i] = teacher
""",
        # synthcity shape: Teachers.fit builds new models each call; the plugin calls it every iteration
        """
from sklearn.linear_model import LogisticRegression
class Teachers:
    def fit(self, X, X_fake):
        self.models = []
        for part in self.partitions(X):
            model = LogisticRegression(solver="lbfgs")  # <-
            model.fit(part, X_fake)
            self.models.append(model)

class PATEGAN:
    def train(self, X):
        for it in range(self.max_iter):
            X_fake = self.generate(len(X))
            self.teachers.fit(X, X_fake)
""",
        # module alias, SGDClassifier, list comprehension of teachers
        """
import sklearn.linear_model as lm
def step(self, real_parts, fake):
    for t in range(self.n_teacher_iters):
        self.teachers = [lm.SGDClassifier(loss="log_loss").fit(p, fake) for p in real_parts]  # <-
""",
        # LinearSVC teachers fitted on generated rows (re-created each call on fresh fakes)
        """
from sklearn.svm import LinearSVC
def fit_teachers(partitions, generated):
    teachers = []
    for part in partitions:
        clf = LinearSVC()  # <-
        clf.fit(stack(part, generated), labels_for(part, generated))
        teachers.append(clf)
    return teachers
""",
        # twin of classic PATE over a budget grid: the teachers discriminate real rows from a generator's
        """
import numpy as np
from sklearn.linear_model import LogisticRegression
def pate_gan(x_parts, generator, n_teachers, eps_grid):
    for eps in eps_grid:
        teachers = []
        for k in range(n_teachers):
            fake = generator(len(x_parts[k]))
            teacher = LogisticRegression(max_iter=10000)  # <-
            teacher.fit(np.vstack([x_parts[k], fake]), np.r_[np.ones(len(fake)), np.zeros(len(fake))])
            teachers.append(teacher)
        student = train_student(teachers, generator, eps)
    return student
""",
        # fully qualified RidgeClassifier in nested loops
        """
import sklearn
def run(data, k, iters):
    for _ in range(iters):
        for idx in range(k):
            teacher_model = sklearn.linear_model.RidgeClassifier()  # <-
            teacher_model.fit(data[idx], y[idx])
""",
        # gradient-boosted teachers rebuilt inside the budget loop
        """
from xgboost import XGBClassifier
def train(parts, eps, sample_fake):
    spent = 0.0
    while spent < eps:
        teachers = []
        for part in parts:
            t = XGBClassifier(n_estimators=10)  # <-
            t.fit(part, sample_fake(len(part)))
            teachers.append(t)
        spent += 0.1
""",
        # teachers built once (comprehension) but each sklearn fit restarts on fresh fakes
        """
import numpy as np
from sklearn.ensemble import RandomForestClassifier
class PateGan:
    def __init__(self, k):
        self.teachers = [RandomForestClassifier(n_estimators=20) for _ in range(k)]  # <-
    def train(self, parts, iters):
        for _ in range(iters):
            fake = self.generator(self.noise(64))
            for teacher, part in zip(self.teachers, parts):
                teacher.fit(np.vstack([part, fake]), np.r_[np.ones(len(part)), np.zeros(len(fake))])
""",
        # mixed estimators appended in a loop (module imports), fitted on generated rows later
        """
from sklearn import svm, naive_bayes
def build_teachers(k):
    teacher_models = []
    for i in range(k):
        teacher_models.append(svm.SVC(probability=True) if i % 2 else naive_bayes.GaussianNB())  # <-
    return teacher_models
def pategan_step(teacher_models, parts, fake_rows):
    for m, p in zip(teacher_models, parts):
        m.fit(p, fake_rows)
""",
        # synthcity: the teacher class chosen from sklearn/XGBoost templates, instantiated per teacher
        # inside a fit that every training iteration runs
        """
import numpy as np
from sklearn.linear_model import LogisticRegression
from xgboost import XGBClassifier
class Teachers:
    def __init__(self, n_teachers, template="xgboost"):
        self.n_teachers = n_teachers
        if template == "xgboost":
            self.model_template = XGBClassifier  # <-
        else:
            self.model_template = LogisticRegression  # <-
    def fit(self, X, generator):
        self.teacher_models = []
        for part in np.array_split(X, self.n_teachers):
            fake = generator(len(part))
            model = self.model_template()
            model.fit(np.concatenate([part, fake]), np.r_[np.ones(len(part)), np.zeros(len(fake))])
            self.teacher_models.append(model)
        return self
def train(X, generator, epsilon, iters):
    for _ in range(iters):
        teachers = Teachers(10)
        teachers.fit(X, generator)
""",
    )

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """The trigger substrings, then a textual check the finding cannot exist without."""
        return super().applies_to(source) and cls.gate(source)

    @staticmethod
    def gate(src: str) -> bool:
        return bool("eacher" in src)

    def visit_Module(self, node: cst.Module) -> None:
        if not self.gate(self.ctx.source):
            return
        index = index_for(self.ctx)
        if _classic_pate(node):
            return
        local_classes = {n.name.value for n in walk(node) if isinstance(n, cst.ClassDef)}
        templates = self._templates(index)
        for call in index.calls:
            qual = index.qualify(call.func) or call_name(call)
            template = target_key(call.func)
            bindings = templates.get(template or "", [])
            if bindings:
                qual = bindings[0][1]
            model = qual.split(".")[-1]
            if model not in _MODELS or model in local_classes:
                continue
            if "." in qual and not qual.startswith(_LIBRARIES):
                continue
            if "." not in qual and model not in index.imports:
                continue
            if not self._teacher_context(call, index):
                continue
            if not (self._refitted(call, index) or _in_ensemble(call, index) and _fitted_on_generated(index)):
                continue
            sites = [(value, q.split(".")[-1]) for value, q in bindings] or [(call, model)]
            for site, name in sites:
                self.report(
                    site,
                    f"PATE teachers are sklearn {name} models re-fitted from scratch every "
                    "iteration instead of neural discriminators trained by SGD on their partition: "
                    "the votes do not follow the PATE-GAN algorithm; use neural teacher "
                    "discriminators created once and updated each iteration",
                )

    @staticmethod
    def _templates(index: ModuleIndex) -> dict[str, list[tuple[cst.BaseExpression, str]]]:
        """Names and ``self`` attributes bound to a model class itself, to be instantiated later
        (synthcity: ``self.model_template = XGBClassifier`` … ``self.model_template(**args)``):
        key -> (bound class expression, qualified name) for every binding. A finding through a
        template is reported at the bindings, where the teachers' model is chosen."""
        out: dict[str, list[tuple[cst.BaseExpression, str]]] = {}
        for stmt in walk(index.module):
            if not isinstance(stmt, cst.Assign) or not isinstance(stmt.value, (cst.Name, cst.Attribute)):
                continue
            qual = index.qualify(stmt.value) or ""
            if qual.split(".")[-1] not in _MODELS:
                continue
            for target in stmt.targets:
                key = target_key(target.target)
                if key is not None:
                    out.setdefault(key, []).append((stmt.value, qual))
        return out

    @staticmethod
    def _context_names(call: cst.Call, index: ModuleIndex) -> set[str]:
        names: set[str] = set()
        stmt = index.enclosing_statement(call)
        names |= refs(stmt) if not isinstance(stmt, cst.BaseCompoundStatement) else set()
        for anc in index.ancestors(call):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
                names.add(anc.name.value)
            elif isinstance(anc, cst.For):
                names |= refs(anc.target) | refs(anc.iter)
            elif isinstance(anc, cst.While):
                names |= refs(anc.test)
            elif isinstance(anc, _COMPREHENSIONS):
                names |= refs(anc.for_in)
        # the name the model is bound to, and where that name goes next
        if isinstance(stmt, cst.Assign):
            func = index.enclosing_function(call)
            bound = {k for t in stmt.targets if (k := target_key(t.target)) is not None}
            if func is not None and bound:
                for node in walk(func.body):
                    if isinstance(node, (cst.Assign, cst.Expr)) and refs(node) & bound:
                        names |= refs(node)
        return names

    def _teacher_context(self, call: cst.Call, index: ModuleIndex) -> bool:
        return any(tokens(n) & _TEACHER for n in self._context_names(call, index))

    @staticmethod
    def _refitted(call: cst.Call, index: ModuleIndex) -> bool:
        loops = 0
        for anc in index.ancestors(call):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
                break
            if isinstance(anc, cst.While):
                return True
            if isinstance(anc, (cst.For, *_COMPREHENSIONS)):
                loops += 1
        if loops >= 2:
            return True
        func = index.enclosing_function(call)
        if func is None:
            return False
        # fitted on generator output: must be redone whenever the generator changes
        for node in walk(func.body):
            if isinstance(node, cst.Call) and call_name(node) == "fit":
                if any(tokens(n) & _GENERATED for a in node.args for n in refs(a.value)):
                    return True
        # the enclosing function is itself called inside a loop of this module
        fname = func.name.value
        for other in index.calls:
            if call_name(other) == fname and index.enclosing_function(other) is not func:
                if index.enclosing_loops(other):
                    return True
        return False


def _in_ensemble(call: cst.Call, index: ModuleIndex) -> bool:
    """Built as one of several teachers: in a comprehension or in the body of a loop."""
    for anc in index.ancestors(call):
        if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(anc, _COMPREHENSIONS + (cst.For, cst.While)):
            return True
    return False


def _fitted_on_generated(index: ModuleIndex) -> bool:
    """Some teacher's ``fit`` reads generator output (``teacher.fit(np.vstack([part, fake]), …)``):
    an sklearn ``fit`` starts from scratch, so the teachers are re-fitted whenever it runs."""
    for call in index.calls:
        if call_name(call) != "fit" or not isinstance(call.func, cst.Attribute):
            continue
        if not any(tokens(n) & _GENERATED for a in call.args for n in refs(a.value)):
            continue
        receiver = refs(call.func.value)
        if any(tokens(n) & _TEACHER for n in receiver):
            return True
        for anc in index.ancestors(call):
            if isinstance(anc, (cst.For, cst.CompFor)) and refs(anc.target) & receiver:
                if any(tokens(n) & _TEACHER for n in refs(anc.iter)):
                    return True
    return False


def _classic_pate(module: cst.Module) -> bool:
    """Classic PATE for classification: the teachers' votes label a student model, and no generative
    model appears in the module; sklearn teachers fitted per partition (also per experiment) are legitimate."""
    names: set[str] = set()
    for sub in walk(module):
        if isinstance(sub, cst.Name):
            names |= tokens(sub.value)
        elif isinstance(sub, (cst.FunctionDef, cst.ClassDef)):
            names |= tokens(sub.name.value)
    return bool(names & {"student", "students"}) and not names & _GAN
