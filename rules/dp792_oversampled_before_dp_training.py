"""DP792: the private training set is oversampled (SMOTE, ADASYN, RandomOverSampler) and then trained on with
DP-SGD, whose per-example guarantee assumes each record is one example."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: imbalanced-learn oversamplers: they add synthetic or duplicated copies of private records
_OVERSAMPLERS = frozenset({
    "SMOTE", "ADASYN", "BorderlineSMOTE", "SVMSMOTE", "KMeansSMOTE", "SMOTENC", "SMOTEN", "RandomOverSampler",
    "SMOTETomek", "SMOTEENN",
})
_RESAMPLE = frozenset({"fit_resample", "fit_sample"})
#: calls that set up per-example DP training (TF Privacy, Opacus, JAX/own DP-SGD)
_DP_TRAINING = frozenset({
    "DPKerasSGDOptimizer", "DPKerasAdamOptimizer", "DPKerasAdagradOptimizer", "VectorizedDPKerasSGDOptimizer",
    "VectorizedDPKerasAdamOptimizer", "DPGradientDescentGaussianOptimizer", "DPAdamGaussianOptimizer",
    "DPSequential", "DPModel", "make_private", "make_private_with_epsilon", "PrivacyEngine",
    "make_keras_optimizer_class", "DPSGD", "DPAdam", "dp_sgd", "DPOptimizer", "make_optimizer_class",
})
#: where resampled arrays become training examples
_TRAIN_SINKS = frozenset({"fit", "train", "DataLoader", "TensorDataset", "from_tensor_slices", "train_on_batch",
                          "fit_generator", "train_model", "train_dp"})


class OversampledBeforeDpTraining(Rule):
    id = "DP792"
    name = "oversampled-before-dp-training"
    category = "general"
    severity = "error"
    summary = ("the private training set is oversampled (SMOTE / ADASYN / RandomOverSampler) before DP-SGD: "
               "one record becomes many examples, and the per-example guarantee no longer bounds it")
    rationale = (
        "DP-SGD bounds the influence of one training example: clipping and noise per example, and an accountant "
        "that assumes each record is one example sampled at rate q. Oversampling the private data first "
        "(SMOTE interpolates each minority record into several synthetic neighbours, RandomOverSampler copies "
        "it) makes one person present in many examples, so the stated ε holds for an example, not a record "
        "(group privacy over k copies multiplies ε by about k), and the dataset size handed to the accountant "
        "no longer matches the records. Reported: a `fit_resample` of an oversampler whose output is trained on "
        "in the same function, in a file that sets up DP training (a DP Keras optimizer, Opacus `make_private`, "
        "`PrivacyEngine`). Fix: balance with class weights in the loss, or resample inside the DP mechanism "
        "(the guarantee then covers the copies), or account for group privacy over the oversampling factor."
    )
    TRIGGERS = ("fit_resample", "fit_sample")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an oversampler, a resample call and a DP training set-up in the file."""
        return facts.calls_any(_OVERSAMPLERS) and facts.calls_any(_RESAMPLE) and facts.calls_any(_DP_TRAINING)

    def visit_Module(self, node: cst.Module) -> None:
        self._classes: list[bool] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(any(isinstance(n, cst.Call) and call_name(n) in _DP_TRAINING for n in walk(node)))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # the DP training is set up in this function or in its class (a trainer whose ``build`` makes the
        # DP optimizer); a module-level baseline beside a DP function is not reported
        in_dp_class = bool(getattr(self, "_classes", None)) and self._classes[-1]
        if not in_dp_class and not any(isinstance(n, cst.Call) and call_name(n) in _DP_TRAINING
                                       for n in walk(node)):
            return
        body = list(walk(node.body, into_scopes=False))
        samplers: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) \
                    and call_name(sub.value) in _OVERSAMPLERS:
                samplers |= {t.target.value for t in sub.targets if isinstance(t.target, cst.Name)}
        for sub in body:
            if not (isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call)
                    and call_name(sub.value) in _RESAMPLE and isinstance(sub.value.func, cst.Attribute)):
                continue
            owner = sub.value.func.value
            if not ((isinstance(owner, cst.Name) and owner.value in samplers)
                    or (isinstance(owner, cst.Call) and call_name(owner) in _OVERSAMPLERS)):
                continue
            outs = {n.value for t in sub.targets for n in walk(t.target) if isinstance(n, cst.Name)}
            if not outs or words(" ".join(outs).replace(" ", "_")) & {"public", "synthetic", "synth"}:
                continue
            derived = set(outs)
            for later in body:
                if isinstance(later, cst.Assign) and {n.value for n in walk(later.value)
                                                      if isinstance(n, cst.Name)} & derived:
                    derived |= {n.value for t in later.targets for n in walk(t.target) if isinstance(n, cst.Name)}
            trained = any(isinstance(c, cst.Call) and call_name(c) in _TRAIN_SINKS
                          and any(isinstance(n, cst.Name) and n.value in derived for a in c.args for n in walk(a.value))
                          for c in body)
            if not trained:
                continue
            self.report(
                sub.value,
                "the private training set is oversampled before DP training: a record becomes several examples, "
                "so DP-SGD's per-example ε does not bound a record; use class weights, or account for the copies",
            )

    VALID = (
        # twin: class weights in the loss instead of oversampling
        """
import numpy as np
from tensorflow_privacy import DPKerasAdamOptimizer
def train(model, X, y, noise_multiplier):
    pos = y.mean()
    weights = {0: 0.5 / (1 - pos), 1: 0.5 / pos}
    opt = DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=noise_multiplier, num_microbatches=1)
    model.compile(optimizer=opt, loss="binary_crossentropy")
    return model.fit(X, y, class_weight=weights, batch_size=64)
""",
        # the non-private baseline oversamples; the DP model trains on the raw data
        """
from imblearn.over_sampling import SMOTE
from opacus import PrivacyEngine
def baseline(model, X, y):
    Xr, yr = SMOTE().fit_resample(X, y)
    return model.fit(Xr, yr)
def private(model, optimizer, loader, sigma):
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                   noise_multiplier=sigma, max_grad_norm=1.0)
    return model, optimizer, loader
""",
        # undersampling removes records; it adds no copies
        """
from imblearn.under_sampling import RandomUnderSampler
from tensorflow_privacy import DPKerasSGDOptimizer
def train(model, X, y):
    Xr, yr = RandomUnderSampler().fit_resample(X, y)
    model.compile(optimizer=DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=1),
                  loss="mse")
    return model.fit(Xr, yr)
""",
        # ordinary ML: SMOTE before a plain classifier, no DP anywhere
        """
from imblearn.over_sampling import SMOTE
from sklearn.ensemble import RandomForestClassifier
def fit_forest(X, y):
    Xr, yr = SMOTE(random_state=0).fit_resample(X, y)
    return RandomForestClassifier().fit(Xr, yr)
""",
    )

    INVALID = (
        # SMOTE on the private windows, then fit with a DP Keras optimizer built elsewhere in the class
        """
from imblearn.over_sampling import SMOTE
from tensorflow_privacy import DPKerasAdamOptimizer
class Trainer:
    def build(self, sigma):
        opt = DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma, num_microbatches=16)
        self.model.compile(optimizer=opt, loss="binary_crossentropy")
    def train(self, epochs):
        n, t, f = self.X.shape
        sm = SMOTE(sampling_strategy=0.3)
        Xr, yr = sm.fit_resample(self.X.reshape(n, t * f), self.y)  # <-
        Xr = Xr.reshape(-1, t, f)
        return self.model.fit(Xr, yr, epochs=epochs)
""",
        # random oversampling into an Opacus loader
        """
import torch
from imblearn.over_sampling import RandomOverSampler
from opacus import PrivacyEngine
def private_fit(model, optimizer, X, y, sigma):
    Xb, yb = RandomOverSampler().fit_resample(X, y)  # <-
    ds = torch.utils.data.TensorDataset(torch.tensor(Xb), torch.tensor(yb))
    loader = torch.utils.data.DataLoader(ds, batch_size=64)
    model, optimizer, loader = PrivacyEngine().make_private(module=model, optimizer=optimizer,
                                                            data_loader=loader, noise_multiplier=sigma,
                                                            max_grad_norm=1.0)
    return model, optimizer, loader
""",
        # ADASYN before make_private_with_epsilon
        """
from imblearn.over_sampling import ADASYN
from opacus import PrivacyEngine
from torch.utils.data import DataLoader, TensorDataset
def setup(model, opt, X, y, eps, delta, epochs):
    X2, y2 = ADASYN(n_neighbors=5).fit_resample(X, y)  # <-
    loader = DataLoader(TensorDataset(X2, y2), batch_size=128)
    return PrivacyEngine().make_private_with_epsilon(module=model, optimizer=opt, data_loader=loader,
                                                     target_epsilon=eps, target_delta=delta, epochs=epochs,
                                                     max_grad_norm=1.0)
""",
        # SMOTETomek, then a tf.data pipeline trained with a vectorized DP optimizer
        """
import tensorflow as tf
from imblearn.combine import SMOTETomek
from tensorflow_privacy import VectorizedDPKerasSGDOptimizer
def run(model, X, y, sigma):
    sampler = SMOTETomek()
    Xs, ys = sampler.fit_resample(X, y)  # <-
    ds = tf.data.Dataset.from_tensor_slices((Xs, ys)).batch(32)
    model.compile(optimizer=VectorizedDPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma,
                                                          num_microbatches=32), loss="mse")
    return model.fit(ds)
""",
    )
