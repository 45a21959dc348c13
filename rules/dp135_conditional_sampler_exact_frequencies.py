"""DP135: a conditional sampler built on the private training data: its exact category frequencies steer the
generator outside the DP mechanism."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import all_params, call_name, dotted, walk, words
from dpcheck.rule import Rule

#: calls that draw at random (the sampler's own draws of a category or a row)
_DRAWS = frozenset({"choice", "rand", "random", "multinomial", "randint", "categorical", "random_choice"})
#: calls that count the categories of their operand
_COUNTS = frozenset({"bincount", "value_counts", "unique", "sum", "count_nonzero"})


def _frequency_argument(call: cst.Call) -> bool:
    """An argument that asks for the sampling frequencies (``log_frequency``, ``self._log_frequency``,
    ``log_frequency=True``): the CTGAN sampler API, whose constructor counts each category of the data."""
    for arg in call.args:
        if arg.keyword is not None and "frequency" in words(arg.keyword.value):
            return True
        name = dotted(arg.value)
        if name is not None and "frequency" in words(name.split(".")[-1]):
            return True
    return False


def _counts(node: cst.CSTNode, tainted: set[str]) -> bool:
    """``np.sum(col, axis=0)``, ``vals.sum(axis=0)``, ``np.unique(x, return_counts=True)``, ``np.bincount(x)``,
    ``s.value_counts()`` of a value derived from the sampler's data parameter."""
    if not isinstance(node, cst.Call):
        return False
    name = call_name(node).split(".")[-1]
    if name not in _COUNTS:
        return False
    keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
    if name == "sum" and not ("axis" in keywords and isinstance(keywords["axis"], cst.Integer)
                              and keywords["axis"].value == "0"):
        return False
    if name == "unique" and "return_counts" not in keywords:
        return False
    if name == "count_nonzero" and "axis" not in keywords:
        return False
    operands: list[cst.CSTNode] = [a.value for a in node.args if a.keyword is None]
    if isinstance(node.func, cst.Attribute):
        operands.append(node.func.value)
    return any(isinstance(n, cst.Name) and n.value in tainted for op in operands for n in walk(op))


def _frequency_site(cls: cst.ClassDef) -> tuple[cst.CSTNode, str] | None:
    """The first count of the categories of ``__init__``'s data parameter, when the class also draws at random:
    a sampler whose probabilities are the data's category frequencies. Returns (node, parameter)."""
    init = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return None
    params = [p.name.value for p in all_params(init) if p.name.value not in ("self", "cls")]
    if not params:
        return None
    data = params[0]
    tainted = {data}
    statements = [n for n in walk(init.body) if isinstance(n, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For))]
    for _ in range(3):
        for stmt in statements:
            source = stmt.iter if isinstance(stmt, cst.For) else stmt.value
            if source is None or not any(isinstance(n, cst.Name) and n.value in tainted for n in walk(source)):
                continue
            targets: list[cst.CSTNode] = []
            if isinstance(stmt, cst.Assign):
                targets = [t.target for t in stmt.targets]
            elif isinstance(stmt, cst.For):
                targets = [stmt.target]
            else:
                targets = [stmt.target]
            tainted.update(n.value for t in targets for n in walk(t) if isinstance(n, cst.Name))
    sites = [n for n in walk(init.body) if _counts(n, tainted)]
    if not sites:
        return None
    # the counts, the names computed from them, and the attributes that keep them
    counted: set[str] = set()
    site_ids = {id(n) for n in sites}

    def _reads_counts(expr: cst.CSTNode) -> bool:
        return any(id(n) in site_ids or isinstance(n, cst.Name) and n.value in counted for n in walk(expr))

    kept: set[str] = set()
    for _ in range(3):
        for stmt in walk(init.body):
            if isinstance(stmt, cst.Assign) and _reads_counts(stmt.value):
                for t in stmt.targets:
                    name = dotted(t.target)
                    if name is not None and name.startswith("self."):
                        kept.add(name.split(".")[1])
                    counted.update(n.value for n in walk(t.target) if isinstance(n, cst.Name) and n.value != "self")
            elif isinstance(stmt, cst.Call) and call_name(stmt).split(".")[-1] in ("append", "extend") \
                    and isinstance(stmt.func, cst.Attribute) and any(_reads_counts(a.value) for a in stmt.args):
                name = dotted(stmt.func.value)
                if name is not None and name.startswith("self."):
                    kept.add(name.split(".")[1])
    if not kept:
        return None
    draws = any(_draws_from(method, kept) for method in cls.body.body
                if isinstance(method, cst.FunctionDef) and method.name.value != "__init__")
    return (sites[0], data) if draws else None


def _draws_from(method: cst.FunctionDef, kept: set[str]) -> bool:
    """A random draw in ``method`` reading one of the ``kept`` attributes (``p=self.probs[col]``), directly or
    through a name the method binds from it (``for p in self.probs``, ``probs = self.probs[c]``)."""
    def _kept(expr: cst.CSTNode) -> bool:
        return any(isinstance(a, cst.Attribute) and isinstance(a.value, cst.Name) and a.value.value == "self"
                   and a.attr.value in kept or isinstance(a, cst.Name) and a.value in bound for a in walk(expr))

    bound: set[str] = set()
    for _ in range(2):
        for n in walk(method):
            if isinstance(n, (cst.For, cst.CompFor)) and _kept(n.iter):
                bound.update(x.value for x in walk(n.target) if isinstance(x, cst.Name))
            elif isinstance(n, cst.Assign) and _kept(n.value):
                bound.update(x.value for t in n.targets for x in walk(t.target) if isinstance(x, cst.Name))
    return any(isinstance(n, cst.Call) and call_name(n).split(".")[-1] in _DRAWS and any(_kept(a.value) for a in n.args)
               for n in walk(method))


class ConditionalSamplerExactFrequencies(Rule):
    id = "DP135"
    name = "conditional-sampler-exact-frequencies"
    category = "general"
    severity = "error"
    summary = ("a conditional sampler is built on the private training data: the exact category frequencies it "
               "counts steer the generator and the released samples without noise")
    rationale = (
        "CTGAN-style synthesizers train by sampling: a data sampler counts every category of every discrete column "
        "of the training data (`np.sum(data[:, st:ed], axis=0)`, `log(count + 1)`) and draws the generator's "
        "conditional vectors from those frequencies, during training and when sampling the synthetic table. In a "
        "DP synthesizer (DP-CTGAN, PATE-CTGAN, an Opacus discriminator) only the discriminator's gradients are "
        "noised; the sampler's frequencies are exact counts of the private data, they reach the generator directly "
        "and shape the released rows, so the synthetic data reproduce the private marginals outside the guarantee. "
        "Reported, in DP code: a sampler constructed from the private training data (a parameter of the "
        "fit/train entry point, or its transform) with the frequency switch of the CTGAN API "
        "(`DataSampler(train_data, output_info, log_frequency)`, `ConditionalGenerator(data, info, "
        "self.log_frequency)`), or a class of the module whose constructor counts the categories of its data "
        "and whose methods draw from them (reported at the count). Not reported: samplers built on public or "
        "synthetic data, frequencies measured with noise, non-DP code. Fix: measure the category frequencies "
        "with a DP mechanism (noisy counts charged to the budget) or sample conditions uniformly."
    )
    TRIGGERS = ("frequency", "axis=0", "return_counts", "bincount", "value_counts")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A class or a call with a frequency argument, and a training entry point taking data."""
        return bool(facts.nodes(ast.Call)) and any("fit" in fn.name or "train" in fn.name for fn in facts.functions)

    VALID = (
        # a plain (non-DP) CTGAN: the sampler's frequencies are no privacy leak
        """
from ctgan.data_sampler import DataSampler
class CTGAN:
    def __init__(self, log_frequency=True, epochs=300):
        self._log_frequency = log_frequency
        self._epochs = epochs
    def fit(self, train_data, discrete_columns=()):
        train_data = self._transformer.transform(train_data)
        self._data_sampler = DataSampler(train_data, self._transformer.output_info_list, self._log_frequency)
        for _ in range(self._epochs):
            self._step(train_data)
""",
        # a non-DP CTGAN keeping its DP siblings' signature: the budget parameter is never read
        """
from ctgan.conditional import ConditionalGenerator
class CTGAN:
    def train(self, train_data, categorical_columns=(), log_frequency=True, update_epsilon=None):
        train_data = self.transformer.transform(train_data)
        self.cond_generator = ConditionalGenerator(train_data, self.transformer.output_info, log_frequency)
        for _ in range(self.epochs):
            self.step(train_data)
""",
        # PATE-CTGAN's teachers: one sampler per private partition, each teacher's answers noised by the aggregator
        """
from ctgan.conditional import ConditionalGenerator
class PATECTGAN:
    def __init__(self, epsilon, log_frequency=True):
        self.epsilon = epsilon
        self.log_frequency = log_frequency
    def train(self, data, categorical_columns=()):
        parts = self.split(self.transformer.transform(data))
        self.cond_generator_t = [ConditionalGenerator(d, self.transformer.output_info, self.log_frequency) for d in parts]
""",
        # twin: a DP synthesizer whose sampler is built on public reference data
        """
from ctgan.data_sampler import DataSampler
class DPCTGAN:
    def __init__(self, epsilon, public_data, log_frequency=True):
        self.epsilon = epsilon
        self.public_data = public_data
        self._log_frequency = log_frequency
    def fit(self, train_data, noise_multiplier=1.1):
        public = self._transformer.transform(self.public_data)
        self._data_sampler = DataSampler(public, self._transformer.output_info_list, self._log_frequency)
        self._train_discriminator(train_data, noise_multiplier)
""",
        # twin: the local sampler draws conditions from noisy counts handed to it, not from the data
        """
import numpy as np
class CondSampler:
    def __init__(self, noisy_counts):
        self.probs = [c / c.sum() for c in noisy_counts]
    def sample(self, n):
        return [np.random.choice(len(p), n, p=p) for p in self.probs]

class DPSynth:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def fit(self, data):
        counts = [np.sum(data[:, g], axis=0) + np.random.laplace(0, 2 / self.epsilon, len(g)) for g in self.groups]
        self.sampler = CondSampler(counts)
""",
        # a DP model that only averages columns: no sampler, no draws
        """
import numpy as np
class Stats:
    def __init__(self, data):
        self.col_totals = np.sum(data, axis=0)

class DPMean:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def fit(self, data):
        stats = Stats(data)
        return stats.col_totals.mean() + np.random.laplace(0, 1 / self.epsilon)
""",
        # a data set that counts its classes for a report and draws augmentations unrelated to the counts
        """
import numpy as np
class Records:
    def __init__(self, data, labels):
        self.data = data
        self.class_counts = np.bincount(labels)
    def augment(self, i):
        return self.data[i] + np.random.rand(*self.data[i].shape) * 0.01

class DPTrainer:
    def __init__(self, noise_multiplier, max_grad_norm):
        self.noise_multiplier = noise_multiplier
    def train(self, X, y):
        self.records = Records(X, y)
""",
        # ordinary ML: a class-balanced sampler in non-DP training
        """
import numpy as np
class BalancedSampler:
    def __init__(self, labels):
        counts = np.bincount(labels)
        self.p = (1.0 / counts)[labels]
        self.p = self.p / self.p.sum()
    def draw(self, n):
        return np.random.choice(len(self.p), n, p=self.p)

def train(model, X, y, epochs=10):
    sampler = BalancedSampler(y)
    for _ in range(epochs):
        idx = sampler.draw(64)
        model.step(X[idx], y[idx])
""",
    )

    INVALID = (
        # the CTGAN library's sampler built on the transformed private data of a DP-SGD synthesizer
        """
import opacus
from ctgan.data_sampler import DataSampler
class DPCTGAN:
    def __init__(self, epsilon, delta=1e-5, log_frequency=True):
        self.epsilon, self.delta = epsilon, delta
        self._log_frequency = log_frequency
    def fit_transformer(self, data, discrete_columns):
        self._transformer.fit(data, discrete_columns)
        transformed = self._transformer.transform(data)
        self._data_sampler = DataSampler(  # <-
            transformed, self._transformer.output_info_list, self._log_frequency)
""",
        # the older API: a ConditionalGenerator on the private table, an Opacus discriminator
        """
from ctgan.conditional import ConditionalGenerator
from opacus import PrivacyEngine
class DPCTGAN:
    def __init__(self, epsilon, log_frequency=True):
        self.epsilon = epsilon
        self.log_frequency = log_frequency
    def train(self, data, categorical_columns=()):
        train_data = self.transformer.transform(data)
        self.cond_generator = ConditionalGenerator(train_data, self.transformer.output_info, self.log_frequency)  # <-
        engine = PrivacyEngine(self.discriminator, noise_multiplier=1.0, max_grad_norm=1.0)
""",
        # a sampler class of the module counts the private categories and draws the conditions from them
        """
import numpy as np
from opacus import PrivacyEngine
class DataSampler:
    def __init__(self, data, output_info, log_frequency=True):
        self.conditional_probs = []
        for st, size in output_info:
            column_data = data[:, st:st + size]
            category_counts = np.sum(column_data, axis=0)  # <-
            probs = np.log(category_counts + 1) if log_frequency else category_counts
            self.conditional_probs.append(probs / np.sum(probs))
    def sample_condvec(self, batch_size):
        col = np.random.choice(len(self.conditional_probs))
        return np.random.choice(len(self.conditional_probs[col]), batch_size, p=self.conditional_probs[col])

class DPCTGANSynthesizer:
    def __init__(self, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta
    def fit(self, data, discrete_columns):
        transformed = self.transformer.transform(data)
        self.data_sampler = DataSampler(transformed, self.transformer.output_info)
        self.engine = PrivacyEngine()
""",
        # the same sampler spelled with per-group sums of a tensor
        """
import numpy as np
class CondSampler:
    def __init__(self, data, groups):
        self.probs = []
        for group in groups:
            vals = data[:, group].numpy()
            counts = vals.sum(axis=0)  # <-
            self.probs.append(counts / counts.sum())
    def sample_condvec(self, n):
        return [np.random.choice(len(p), n, p=p) for p in self.probs]

class DPGAN:
    def __init__(self, target_epsilon, max_grad_norm):
        self.target_epsilon = target_epsilon
        self.max_grad_norm = max_grad_norm
    def train(self, X):
        self.sampler = CondSampler(X, self.groups)
""",
    )

    def __init__(self, ctx) -> None:  # noqa: ANN001 - FileContext
        super().__init__(ctx)
        self._classes: dict[str, cst.ClassDef] | None = None
        self._reported: set[int] = set()

    def _local_classes(self) -> dict[str, cst.ClassDef]:
        if self._classes is None:
            self._classes = {}
            for node in self.ctx.analysis.nodes(cst.ClassDef):
                self._classes.setdefault(node.name.value, node)  # type: ignore[attr-defined]
        return self._classes

    def _unused_budget_only(self, node: cst.Call) -> bool:
        """The only DP evidence is a budget parameter the function never reads (a non-DP class keeping the
        signature of its DP siblings: ``def train(self, data, ..., update_epsilon=None)``)."""
        fa = self.ctx.analysis
        reasons = fa.dp_context(node).reasons
        fn = fa.enclosing_function(node)
        if fn is None or not reasons or not all(r.startswith("parameter ") for r in reasons):
            return False
        names = {r.split(" ", 1)[1].strip("`") for r in reasons}
        return not any(isinstance(n, cst.Name) and n.value in names for n in walk(fn.body))

    def _per_partition(self, node: cst.Call, data: cst.BaseExpression) -> bool:
        """One sampler per data partition (``[Sampler(d, …) for d in self.data_partitions]``): PATE teachers, each
        trained on its own private partition, whose answers the aggregator noises."""
        if not isinstance(data, cst.Name):
            return False
        for loop in self.ctx.analysis.enclosing_loops(node, comprehensions=True):
            target = loop.target if isinstance(loop, (cst.For, cst.CompFor)) else None
            if target is None and isinstance(loop, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
                target = loop.for_in.target
            if target is not None and any(isinstance(n, cst.Name) and n.value == data.value for n in walk(target)):
                return True
        return False

    def visit_Call(self, node: cst.Call) -> None:
        fa = self.ctx.analysis
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if not positional or not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        data = positional[0]
        if not isinstance(data, (cst.Name, cst.Attribute)) or not fa.is_record_values(data):
            return
        if not fa.in_dp_context(node) or self._unused_budget_only(node) or self._per_partition(node, data):
            return
        callee = node.func.value if isinstance(node.func, cst.Name) else node.func.attr.value
        cls = self._local_classes().get(callee)
        if cls is not None and fa.enclosing_class(node) is not cls:
            found = _frequency_site(cls)
            if found is not None:
                site, param = found
                if id(site) not in self._reported:
                    self._reported.add(id(site))
                    self.report(
                        site,
                        f"`{callee}` counts the categories of its `{param}` and draws from those frequencies, and "
                        f"line {fa.line_of(node)} builds it on the private training data `{fa.code(data).strip()}`: "
                        "the exact marginals steer the generator and the released samples outside the DP mechanism; "
                        "measure the frequencies with noise charged to the budget, or sample conditions uniformly",
                    )
                return
        if cls is None and _frequency_argument(node) and callee[:1].isupper():
            self.report(
                node,
                f"`{callee}` is built on the private training data `{fa.code(data).strip()}` with sampling "
                "frequencies: it counts every category exactly and draws the generator's conditional vectors from "
                "those counts, so un-noised private marginals reach the generator and the synthetic rows outside "
                "the DP mechanism; measure the frequencies with noise charged to the budget, or sample uniformly",
            )
