"""Rules DP201-DP203 and DP301: flows that are awkward as single VALID/INVALID strings, and the
findings expected on the vendored implementations (Table 2 rows; corrected twins clean)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.rule import run_rules
from dpcheck.rules import by_id

RULE_IDS = ("DP201", "DP202", "DP203", "DP301")
VENDORED = Path(__file__).resolve().parents[1] / "vendored_impls"

#: Table 2 cells covered by these four rules, per implementation
EXPECTED = {
    "original": {"DP201", "DP202", "DP203", "DP301"},
    "updated": {"DP201", "DP202"},
    "synthcity": {"DP201", "DP202"},
    "turing": {"DP201", "DP301"},
    "borealis": {"DP202"},
    "smartnoise": set(),
}


def lines(rule_id: str, source: str) -> list[int]:
    return sorted(f.line for f in run_rules(source, [by_id(rule_id)]) if f.rule == rule_id)


# ---- DP201 ---------------------------------------------------------------------------------
def test_dp201_constructor_called_every_iteration_redraws_partition():
    src = """
import numpy as np
class Teachers:
    def __init__(self, X, k):
        perm = np.random.permutation(len(X))
        self.parts = np.array_split(X[perm], k)
def fit(X, k, iters, epsilon):
    for _ in range(iters):
        teachers = Teachers(X, k)
        teachers.train()
"""
    assert lines("DP201", src) == [5]


def test_dp201_constructor_called_once_is_fine():
    src = """
import numpy as np
class Teachers:
    def __init__(self, X, k):
        perm = np.random.permutation(len(X))
        self.parts = np.array_split(X[perm], k)
def fit(X, k, iters):
    teachers = Teachers(X, k)
    for _ in range(iters):
        teachers.train()
"""
    assert lines("DP201", src) == []


def test_dp201_partition_redrawn_through_a_helper_called_every_iteration():
    src = """
import numpy as np
class Teachers:
    def fit(self, X):
        perm = np.random.permutation(len(X))
        for t in range(self.n_teachers):
            self.models[t].fit(X[perm[t * self.m:(t + 1) * self.m]])
class PATEGAN:
    def _train_teachers(self, X, epsilon):
        self.teachers.fit(X)
    def fit(self, X):
        for it in range(self.max_iter):
            self._train_teachers(X)
            self._train_student()
"""
    assert lines("DP201", src) == [5]


def test_dp201_stale_index_inside_budget_loop_and_nested_subscript():
    src = """
def pategan(x, k, epsilon):
    parts = []
    for i in range(k):
        parts.append(x[i::k])
    eps_hat = 0
    while eps_hat < epsilon:
        for j in range(k):
            batch = parts[i][sample(len(parts[j]))]
            teachers[j].fit(batch)
        eps_hat = account()
"""
    assert lines("DP201", src) == [9]


def test_dp201_shared_loader_and_comprehension_batches():
    src = """
import numpy as np
class PATE:
    def train(self, X, bs):
        for i in range(self.num_teachers):
            for xb in self.train_loader:
                self.teachers[i].step(xb)
        batches = [X[np.random.choice(len(X), bs)] for _ in range(self.num_teachers)]
"""
    assert lines("DP201", src) == [6, 8]


def test_dp201_per_teacher_loaders_and_generated_rows_are_fine():
    src = """
import numpy as np
class PATE:
    def train(self, bs):
        fake = self.generator.sample(bs * 4)
        for i in range(self.num_teachers):
            for xb in self.loaders[i]:
                g_idx = np.random.choice(len(fake), bs)
                self.teachers[i].step(xb, fake[g_idx])
"""
    assert lines("DP201", src) == []


def test_dp201_random_split_inside_training_loop():
    src = """
from torch.utils.data import random_split
def train(dataset, teachers, sizes, epochs, epsilon):
    for epoch in range(epochs):
        shards = random_split(dataset, sizes)
        for teacher, shard in zip(teachers, shards):
            teacher.fit(shard)
"""
    assert lines("DP201", src) == [5]


def test_dp201_dataloader_over_all_rows_per_teacher():
    src = """
from torch.utils.data import DataLoader, Subset
def train(train_data, teachers, parts, noise_multiplier):
    for i, teacher in enumerate(teachers):
        shared = DataLoader(train_data, batch_size=64, shuffle=True)
        own = DataLoader(Subset(train_data, parts[i]), batch_size=64)
"""
    assert lines("DP201", src) == [5]


# ---- DP202 ---------------------------------------------------------------------------------
def test_dp202_bounds_stored_in_fit_and_used_in_another_method():
    src = """
import numpy as onp
class PATEGAN:
    def __init__(self, epsilon, delta):
        self.epsilon, self.delta = epsilon, delta
    def fit(self, data):
        self.lo = onp.amin(data, axis=0)
        self.hi = data.max(axis=0)
    def transform(self, data):
        return (data - self.lo) / (self.hi - self.lo)
"""
    assert lines("DP202", src) == [7, 8]


def test_dp202_inline_scaler_and_opt_in_inference_guard():
    src = """
from sklearn.preprocessing import MinMaxScaler
def preprocess(x_train, metadata, infer_ranges=False, epsilon=1.0, delta=1e-5):
    if infer_ranges:
        lower = x_train.min(0)
        return (x_train - lower)
    return MinMaxScaler().fit_transform(x_train)
"""
    assert lines("DP202", src) == [7]


def test_dp202_quiet_without_dp_context_and_on_labels():
    plain = """
import numpy as np
def scale(x):
    return (x - np.min(x, 0)) / np.ptp(x, 0)
"""
    labels = """
import numpy as np
def pategan(X, y, epsilon, delta):
    n_classes = int(np.max(y)) + 1
    return n_classes
"""
    assert lines("DP202", plain) == []
    assert lines("DP202", labels) == []


def test_dp202_recommender_table_sizes_used_vs_only_printed_or_left_unused():
    head = """
import logging
import pandas as pd
from opacus import PrivacyEngine
def train(path, model_cls, n_users, n_catalogue):
    data = pd.read_csv(path)
"""
    tail = """
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=None, data_loader=None, noise_multiplier=1.0, max_grad_norm=1.0)
"""
    used = head + """
    num_users, num_items = data["user"].max() + 1, data["item"].max() + 1
    model = model_cls(num_users, num_items)
""" + tail
    leftover = head + """
    num_users_pre, num_items_pre = data["user"].max() + 1, data["item"].max() + 1
    print(f"users: {num_users_pre}")
    logging.info("density %.3f", 1.0 / (num_items_pre * num_users_pre))
    model = model_cls(n_users, n_catalogue)
""" + tail
    looped = head + """
    model = None
    for epoch in range(3):
        if model is not None:
            model = model_cls(num_items)
        num_items = data["item"].max() + 1
""" + tail
    assert lines("DP202", used) == [8, 8]
    assert lines("DP202", leftover) == []
    assert lines("DP202", looped) == [12]


def test_dp202_class_count_dividing_a_metric_sum_vs_scaling_or_calibrating():
    head = """
import numpy as np
import pandas as pd
def run(path, epsilon):
    data = pd.read_csv(path)
    y = data["label"].values
"""
    averaged = head + """
    precis = [0.5, 0.7]
    prec = sum(precis) / (max(y) + 1)
    rec = np.sum(per_class_recall) / (y.max() + 1)
    return prec, rec, np.random.laplace(0, 1 / epsilon)
"""
    scaled = head + """
    y_scaled = sum(y) / (max(y) + 1)
    return y_scaled + np.random.laplace(0, 1 / epsilon)
"""
    calibrated = head + """
    noise_scale = 2.0
    per_class = sum([noise_scale]) / (max(y) + 1)
    return np.random.laplace(0, per_class / epsilon)
"""
    assert lines("DP202", averaged) == []
    assert lines("DP202", scaled) == [8]
    assert lines("DP202", calibrated) == [9]


# ---- DP204 ---------------------------------------------------------------------------------
def test_dp204_data_range_handed_to_a_helper_given_the_budget():
    found = """
import numpy as np
from .mechanisms import LaplaceMechanism
class Statistics:
    @classmethod
    def sum(cls, data, epsilon, axis=None):
        lower = np.min(data, axis=axis)
        upper = np.max(data, axis=axis)
        value = np.sum(data, axis=axis)
        return LaplaceMechanism.anonymize_sum_with_budget(value, lower, upper, epsilon)
"""
    other = """
import numpy as np
def private_mean(x, eps):
    lo, hi = x.min(), x.max()
    return dp_mean(np.mean(x), lo, hi, len(x), budget=eps)
"""
    public = """
import numpy as np
from .mechanisms import LaplaceMechanism
def dp_sum(data, epsilon, lower, upper):
    value = np.sum(np.clip(data, lower, upper))
    return LaplaceMechanism.anonymize_sum_with_budget(value, lower, upper, epsilon)
"""
    labels = """
import numpy as np
def run(x_train, y_train, epsilon):
    n_classes = len(np.unique(y_train))
    return train_dp_model(x_train, y_train, n_classes, epsilon)
"""
    assert lines("DP204", found) == [7, 8]
    assert lines("DP204", other) == [4, 4]
    # the prefilter admits both (no draw or mechanism-named call in either file)
    assert all(by_id("DP204").may_report(AstFacts(ast.parse(src), src)) for src in (found, other))
    svr = """
import numpy as np
def fit(data, epsilon):
    lower = np.min(data)
    upper = np.max(data)
    return libsvm.fit(np.sum(data), lower, upper, epsilon)
"""
    assert lines("DP204", public) == []
    assert lines("DP204", labels) == []
    assert lines("DP204", svr) == []


def test_dp202_scaling_helpers_and_norm_bounds():
    src = """
'''PATE-GAN preprocessing.'''
import numpy as np
from sklearn.preprocessing import minmax_scale
def prepare(X):
    clip = np.max(np.linalg.norm(X, axis=1))
    return minmax_scale(X) / clip
"""
    assert lines("DP202", src) == [6, 7]


_FALLBACK = """
import warnings
import numpy as np
class PrivacyLeakWarning(RuntimeWarning):
    pass
class DPKMeans:
    def fit(self, X, epsilon=1.0):
        if self.bounds is None:{warn}
            self.bounds = (np.min(X, axis=0), np.max(X, axis=0))
        return np.clip(X, self.bounds[0], self.bounds[1])
"""
_WARN = """
            warnings.warn("Bounds not given: computed from the data, privacy leaks", PrivacyLeakWarning)"""


def test_dp202_reports_the_fallback_that_the_code_flags_as_a_note():
    found = run_rules(_FALLBACK.format(warn=_WARN), [by_id("DP202")])
    assert [f.line for f in found] == [10, 10]
    assert {(f.category, f.severity) for f in found} == {("acknowledged", "note")}


def test_dp202_the_same_fallback_without_a_warning_is_a_violation():
    found = run_rules(_FALLBACK.format(warn=""), [by_id("DP202")])
    assert [f.line for f in found] == [9, 9]
    assert {(f.category, f.severity) for f in found} == {("metadata", "error")}


def test_dp202_target_bounds_and_encoders_but_not_shifts_or_class_counts():
    src = """
import numpy as np
from sklearn.preprocessing import LabelEncoder
class DPRegressor:
    def fit(self, X, y, epsilon):
        y = (y - y.min()) / np.ptp(y)
        self.n_classes = int(np.max(y)) + 1
        self.codes = {c: LabelEncoder().fit(X[c]) for c in self.categorical}
        m = np.max(X)
        return np.log(np.sum(np.exp(X - m))) + m
"""
    assert lines("DP202", src) == [6, 6, 8]


_SPANS = """
from synthcity.metrics.eval_privacy import kAnonymization
class Anonymizer:
    def spans(self, X, part):
        return {c: X[c][part].max() - X[c][part].min() for c in X.columns}
"""


def test_dp202_helper_outside_a_dp_claim_needs_private_data_from_the_core():
    assert lines("DP202", _SPANS) == []
    helper = _SPANS.replace("class Anonymizer:", "class Anonymizer:\n    def fit(self, X, epsilon):\n"
                            "        return self.spans(X, X.index)")
    assert lines("DP202", helper) == [7, 7]


# ---- DP203 ---------------------------------------------------------------------------------
def test_dp203_categorical_distribution_and_unique_counts():
    src = """
import numpy as np
import torch
class CondGAN:
    def fit(self, X, y, epsilon):
        values, counts = np.unique(y, return_counts=True)
        self.probs = torch.tensor(counts / counts.sum())
    def sample(self, n):
        c = torch.distributions.Categorical(probs=self.probs).sample((n,))
        return self.generator(torch.randn(n, 8), c)
"""
    assert lines("DP203", src) == [10]


def test_dp203_public_ratio_parameter_is_fine():
    src = """
import numpy as np
def pategan(X_train, Y_train, epsilon, delta, niter, label_ratio=0.5):
    for it in range(niter):
        sess.run(T_solver, feed_dict={T: X_train, C: Y_train})
    def generate(n):
        New_Y = (np.random.uniform(size=[n, 1]) < label_ratio).astype(float)
        return sess.run(G_sample, feed_dict={Z: sample_Z(n), C: New_Y}), New_Y
    return generate
"""
    assert lines("DP203", src) == []


def test_dp203_wrapped_model_generate_and_script_level_call():
    wrapped = """
class DPWrapper:
    def fit(self, X, y):
        self.y_train = y
    def sample(self, n):
        return self.model.generate(n, cond=self.y_train[:n])
"""
    script = """
import pandas as pd
df = pd.read_csv("train.csv")
X_train, y_train = df.drop(columns="label"), df["label"]
model = PATEGAN(epsilon=1.0)
model.fit(X_train, y_train)
synthetic = model.generate(len(X_train), y_train)
"""
    assert lines("DP203", wrapped) == [6]
    assert lines("DP203", script) == [7]


# ---- DP301 ---------------------------------------------------------------------------------
def test_dp301_accountant_class_elsewhere_in_module_is_fine():
    src = """
class MomentsAccountant:
    def spend(self, votes):
        ...
class PATEGAN:
    def fit(self, X, epsilon):
        for it in range(self.max_iter):
            self.opt.step()
"""
    assert lines("DP301", src) == []


def test_dp301_one_finding_per_module_at_the_outer_loop():
    src = """
# PATE-GAN
def pretrain(model, x, n):
    for _ in range(n):
        model.fit(x)
def fit(x, epsilon, n_iters):
    for it in range(n_iters):
        for _ in range(5):
            model.fit(x)
"""
    assert lines("DP301", src) == [7]


# ---- vendored implementations ----------------------------------------------------------------
def _scan(paths: list[Path]) -> set[str]:
    rules = [by_id(r) for r in RULE_IDS]
    found: set[str] = set()
    for path in paths:
        found |= {f.rule for f in run_rules(path.read_text(), rules, str(path))}
    return found


def _files(impl: str, fixed: bool) -> list[Path]:
    folder = VENDORED / impl
    out = []
    for path in sorted(folder.glob("*.py")):
        if path.name in {"__init__.py", "adapter.py"}:
            continue
        if path.name.startswith("fixed") == fixed:
            out.append(path)
    return out


@pytest.mark.parametrize("impl", sorted(EXPECTED))
def test_vendored_upstream_findings_match_table2(impl):
    files = _files(impl, fixed=False)
    assert files, f"no upstream sources in vendored_impls/{impl}"
    assert _scan(files) == EXPECTED[impl]


@pytest.mark.parametrize("impl", sorted(EXPECTED))
def test_vendored_fixed_twins_are_clean(impl):
    files = _files(impl, fixed=True)
    assert files, f"no corrected twin in vendored_impls/{impl}"
    assert _scan(files) == set()


def test_dp202_needs_dp_context_from_the_core_not_comments():
    """A DP generator named in a comment is not DP context; named in a docstring it is."""
    from dpcheck.rule import run_rules
    from dpcheck.rules.dp202_non_private_bounds import NonPrivateBounds

    body = (
        "from synthcity.metrics import eval_privacy\n"
        "def score(real_data, synth):\n"
        "    lo, hi = real_data.min(), real_data.max()\n"
        "    return eval_privacy.compare((real_data - lo) / (hi - lo), synth)\n"
    )
    assert not run_rules("# metrics for PATE-GAN outputs\n" + body, [NonPrivateBounds])
    found = run_rules('"""Metrics for PATE-GAN outputs."""\n' + body, [NonPrivateBounds])
    assert {f.line for f in found} == {4}
