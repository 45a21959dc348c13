"""DP404: a driver script scales the training data and never maps the synthetic output back."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import ident

#: element-wise squashing / scaling functions whose output is not in the data's units
_SQUASH = frozenset({"expit", "sigmoid", "logistic", "minmax_scale", "maxabs_scale", "scale", "tanh"})
_SCALERS = frozenset({"MinMaxScaler", "StandardScaler", "MaxAbsScaler", "RobustScaler", "QuantileTransformer"})
_GENERATE = frozenset({"generate", "sample", "synthesize", "synthesise", "sample_data", "generate_data"})
_INVERSE = frozenset({"logit", "inverse_transform", "inverse", "renormalization", "renormalize", "denormalize",
                      "unscale", "arctanh", "atanh", "inverse_scale"})
_TRAIN_WORDS = frozenset({"train", "training", "x", "data", "df", "real"})


class ScriptOutputNotRescaled(Rule):
    id = "DP404"
    name = "script-output-not-rescaled"
    category = "processing"
    severity = "error"
    summary = "a driver script scales the training data (expit, a scaler) and uses the generated data without the inverse"
    rationale = (
        "Synthetic data must come out in the units of the input. A driver script that squashes "
        "or scales the private training data at module level (`X_train = expit(X_train)`, "
        "`MinMaxScaler().fit_transform(X_train)`) before training a generator, then takes the "
        "generator's samples (`syn = model.generate(n)`) and never applies the inverse (`logit`, "
        "`inverse_transform`) releases data in the transformed space: every downstream consumer "
        "reads wrong values (borealis' evaluate script, audited as a processing bug in the "
        "PATE-GAN reproducibility study). DP401 covers the same defect inside functions. "
        "Not reported: a script that inverts the transform anywhere, one that generates nothing, "
        "code with no DP context. Fix: keep the fitted transform and map the samples back "
        "(`logit(syn)`, `scaler.inverse_transform(syn)`) before releasing or evaluating them."
    )
    TRIGGERS = ("expit", "sigmoid", "logistic", "Scaler", "minmax_scale", "maxabs_scale", "tanh")
    requires_dp_context = True

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A finding needs a generation call and no inverse transform named in the text."""
        if not super().applies_to(source):
            return False
        return any(f"{g}(" in source for g in _GENERATE) and not any(f"{i}(" in source for i in _INVERSE)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a generation call and a scaling call."""
        return bool(facts.called & _GENERATE) and bool(facts.called & (_SQUASH | {"fit_transform"}))

    VALID = (
        # the samples are mapped back with logit
        """
from scipy.special import expit, logit
import pate_gan
X_train = expit(X_train)
model = pate_gan.PATE_GAN(d, z, teachers, target_epsilon, target_delta)
model.train(X_train, y_train)
syn_data = logit(model.generate(n))
""",
        # a fitted scaler inverted before use
        """
from sklearn.preprocessing import MinMaxScaler
from models import dp_wgan
scaler = MinMaxScaler()
X_train = scaler.fit_transform(X_train)
model = dp_wgan.DP_WGAN(d, z, target_epsilon, target_delta)
model.train(X_train)
X_syn = scaler.inverse_transform(model.generate(len(X_train)))
""",
        # the same calls inside functions are DP401's business
        """
from scipy.special import expit
def run(X_train, model, target_epsilon):
    X_train = expit(X_train)
    model.train(X_train, target_epsilon)
    return model
""",
        # a script that scales but generates nothing
        """
from scipy.special import expit
X_train = expit(X_train)
clf = train_private_classifier(X_train, target_epsilon=1.0)
""",
    )

    INVALID = (
        # borealis' evaluate.py
        """
from scipy.special import expit
from models import pate_gan
X_train = np.nan_to_num(train.values)
if opt.normalize_data:
    X_train = expit(X_train)  # <-
    X_test = expit(X_test)
model = pate_gan.PATE_GAN(input_dim, z_dim, opt.num_teachers, opt.target_epsilon, opt.target_delta)
model.train(X_train, y_train)
syn_data = model.generate(X_train.shape[0], class_ratios)  # <-
X_syn, y_syn = syn_data[:, :-1], syn_data[:, -1]
""",
        # two branches: the model trained on the scaled data is reported, the one trained on the raw
        # frame (Private-PGM in borealis' driver) is not
        """
from scipy.special import expit
X_train = expit(X_train)  # <-
if opt.model == "pate-gan":
    model = PATE_GAN(d, target_epsilon=1.0)
    model.train(X_train, y_train)
elif opt.model == "private-pgm":
    model = Private_PGM(target_epsilon=1.0)
    model.train(train, config)
if opt.model == "pate-gan":
    X_syn = model.generate(n)  # <-
elif opt.model == "private-pgm":
    X_syn = model.generate()
""",
        # a fitted scaler in a script, never inverted
        """
from sklearn.preprocessing import MinMaxScaler
from snsynth import Synthesizer
scaler = MinMaxScaler()
train_data = scaler.fit_transform(raw)  # <-
synth = Synthesizer.create("dpctgan", epsilon=1.0)
synth.fit(train_data)
synthetic = synth.sample(1000)  # <-
synthetic.to_csv("out.csv")
""",
        # torch's sigmoid squashing of the data
        """
import torch
X = torch.sigmoid(X)  # <-
gan = DPGAN(epsilon=3.0)
gan.fit(X)
samples = gan.generate(500)  # <-
""",
        # tanh squashing, sample() at the end of the script
        """
import numpy as np
data = np.tanh(data)  # <-
model = PrivateGenerator(target_epsilon=1.0)
model.fit(data)
out = model.sample(len(data))  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        fa = self.ctx.analysis
        scalings: list[cst.Call] = []
        generations: list[cst.Call] = []
        for call in fa.nodes(cst.Call):
            if fa.enclosing_function(call) is not None:
                continue
            name = call_name(call)
            if name in _INVERSE:
                return
            parent = fa.parent(call)
            if not isinstance(parent, cst.Assign):
                continue
            targets = [ident(t.target) for t in parent.targets]
            if name in _SQUASH and call.args and self._training_data(targets):
                scalings.append(call)
            elif name == "fit_transform" and call.args and self._training_data(targets) \
                    and "Scaler" in fa.code(parent):
                scalings.append(call)
            elif name == "fit_transform" and call.args and self._training_data(targets) and any(
                    isinstance(n, cst.Call) and call_name(n) in _SCALERS for n in walk(node)):
                scalings.append(call)
            elif name in _GENERATE and isinstance(call.func, cst.Attribute):
                generations.append(call)
        if not scalings or not generations:
            return
        first = scalings[0]
        if not any(fa.line_of(g) > fa.line_of(first) for g in generations):
            return
        gen = next(g for g in generations if fa.line_of(g) > fa.line_of(first))
        for call in scalings:
            self.report(
                call,
                f"`{fa.code(call).strip()}` transforms the training data, but the samples generated on line "
                f"{fa.line_of(gen)} are never mapped back (no `logit`/`inverse_transform` in this script): the "
                "synthetic data is released in the transformed space; keep the transform and invert it",
            )
        scaled = {t for call in scalings for t in self._targets(call)}
        for call in generations:
            if fa.line_of(call) > fa.line_of(first) and self._trained_on_scaled(call, scaled, node):
                self.report(
                    call,
                    f"the generated samples are used without the inverse of the scaling on line {fa.line_of(first)} "
                    "(`logit`, `inverse_transform`): they are not in the input's units",
                )

    def _targets(self, call: cst.Call) -> set[str]:
        parent = self.ctx.analysis.parent(call)
        if isinstance(parent, cst.Assign):
            return {n for t in parent.targets if (n := ident(t.target)) is not None}
        return set()

    def _trained_on_scaled(self, gen: cst.Call, scaled: set[str], module: cst.Module) -> bool:
        """Was the model sampled here trained on the scaled data? It is when the generation reads a
        scaled name itself, or when the training calls (``.train``/``.fit``) of the same model in the
        branches for the same choice (the string constants of the enclosing ``if`` tests) read one.
        Without such training calls it is assumed (a script's one model)."""
        fa = self.ctx.analysis
        if _reads(gen, scaled):
            return True
        receiver = ident(gen.func.value) if isinstance(gen.func, cst.Attribute) else None
        choice = _branch_strings(gen, fa)
        trainings = [
            call for call in fa.nodes(cst.Call)
            if call_name(call) in ("train", "fit") and isinstance(call.func, cst.Attribute)
            and ident(call.func.value) == receiver and fa.enclosing_function(call) is None
            and (not choice or _branch_strings(call, fa) & choice)
        ]
        return not trainings or any(_reads(call, scaled) for call in trainings)

    @staticmethod
    def _training_data(targets: list[str | None]) -> bool:
        return any(t is not None and (t in ("X", "D") or words(t) & _TRAIN_WORDS) and "test" not in words(t)
                   for t in targets)


def _reads(call: cst.Call, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for a in call.args for n in walk(a.value))


def _branch_strings(node: cst.CSTNode, fa) -> set[str]:  # noqa: ANN001 - FileAnalysis
    """String constants of the tests of the ``if``/``elif`` branches whose body holds ``node``."""
    out: set[str] = set()
    child = node
    for anc in fa.ancestors(node):
        if isinstance(anc, cst.If) and child is anc.body:
            out |= {n.evaluated_value for n in walk(anc.test)
                    if isinstance(n, cst.SimpleString) and isinstance(n.evaluated_value, str)}
        child = anc
    return out
