"""Ordinary ML code stays quiet (issue 21, item 5): epsilon/eps/delta/sigma/noise of non-DP
estimators and training loops, in the spellings of scikit-learn, torch, transformers and diffusers,
produce no finding of any rule, per file and across modules; the same code claiming DP does."""
from __future__ import annotations

import pytest
from test_scan_support import project, scan, write

from dpcheck.rule import run_rules
from dpcheck.rules import all_rules

RULES = all_rules()

SPELLINGS = {
    # scikit-learn: epsilon-insensitive loss, Huber's epsilon, DBSCAN's radius, SGD and Adam constants
    "linear_svr": """
import numpy as np
class LinearSVR:
    def __init__(self, epsilon=0.0, tol=1e-4, C=1.0, loss="epsilon_insensitive"):
        self.epsilon, self.tol, self.C, self.loss = epsilon, tol, C, loss
    def fit(self, X, y, sample_weight=None):
        self.y_min_, self.y_max_ = y.min(), y.max()
        X_min = X.min()
        self.coef_ = np.linalg.lstsq(X - X_min, y, rcond=None)[0]
        return self
""",
    "huber": """
import numpy as np
def _huber_loss_and_gradient(w, X, y, epsilon, alpha, sample_weight=None):
    linear_loss = y - X @ w
    abs_linear_loss = np.abs(linear_loss)
    outliers_mask = abs_linear_loss > epsilon * np.max(abs_linear_loss)
    return np.sum(outliers_mask) + alpha * np.dot(w, w)
class HuberRegressor:
    def __init__(self, epsilon=1.35, max_iter=100, alpha=0.0001):
        self.epsilon, self.max_iter, self.alpha = epsilon, max_iter, alpha
    def fit(self, X, y):
        return _huber_loss_and_gradient(np.zeros(X.shape[1]), X, y, self.epsilon, self.alpha)
""",
    "dbscan": """
import numpy as np
class DBSCAN:
    def __init__(self, eps=0.5, min_samples=5):
        self.eps, self.min_samples = eps, min_samples
    def fit(self, X, y=None):
        lo, hi = X.min(axis=0), X.max(axis=0)
        self.labels_ = np.unique(np.floor((X - lo) / (hi - lo + self.eps)), axis=0)
        return self
""",
    # torch: Adam's eps, batch norm's eps, Huber loss delta, gradient-norm clipping of ordinary training
    "torch_training": """
import torch
class Trainer:
    def __init__(self, model, lr=1e-3, eps=1e-8, max_grad_norm=1.0, delta=1.0, label_smoothing=0.1):
        self.opt = torch.optim.Adam(model.parameters(), lr=lr, eps=eps)
        self.bn = torch.nn.BatchNorm1d(16, eps=1e-5)
        self.loss = torch.nn.HuberLoss(delta=delta)
        self.max_grad_norm = max_grad_norm
    def train(self, loader):
        for x, y in loader:
            x = x + 0.1 * torch.randn_like(x)
            loss = self.loss(self.model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
            self.opt.step()
""",
    # transformers: label smoothing epsilon
    "label_smoother": """
import torch
class LabelSmoother:
    def __init__(self, epsilon=0.1, ignore_index=-100):
        self.epsilon, self.ignore_index = epsilon, ignore_index
    def __call__(self, logits, labels):
        log_probs = -torch.nn.functional.log_softmax(logits, dim=-1)
        smoothed = log_probs.sum(dim=-1) / log_probs.size(-1)
        return (1 - self.epsilon) * log_probs.gather(-1, labels) + self.epsilon * smoothed
""",
    # diffusers: a noise schedule, sigmas and add_noise
    "scheduler": """
import numpy as np
import torch
class EulerScheduler:
    def __init__(self, num_train_timesteps=1000, beta_start=0.0001, beta_end=0.02, prediction_type="epsilon"):
        betas = np.linspace(beta_start, beta_end, num_train_timesteps)
        self.alphas_cumprod = np.cumprod(1.0 - betas)
        self.sigmas = ((1 - self.alphas_cumprod) / self.alphas_cumprod) ** 0.5
        self.init_noise_sigma = self.sigmas.max()
    def add_noise(self, original_samples, noise, timesteps):
        sigma = torch.tensor(self.sigmas)[timesteps].flatten()
        return original_samples + noise * sigma
    def scale_model_input(self, sample, sigma):
        return sample / ((sigma ** 2 + 1) ** 0.5)
""",
    # data augmentation noise
    "augment": """
import numpy as np
def augment(images, noise_std=0.05, sigma=1.0):
    noisy = images + np.random.normal(0, noise_std, images.shape)
    return noisy, noisy.std() * sigma
""",
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_ml_spelling_is_quiet(name):
    found = run_rules(SPELLINGS[name], RULES, f"{name}.py")
    assert [(f.rule, f.line, f.snippet) for f in found] == []


def test_the_same_estimator_claiming_dp_is_reported():
    claimed = SPELLINGS["dbscan"].replace(
        "class DBSCAN:", "class DBSCAN:\n    '''Differentially private clustering (epsilon is the privacy budget).'''")
    assert {f.rule for f in run_rules(claimed, RULES, "dp_dbscan.py")} == {"DP202"}


ESTIMATOR = """\
from .validation import check_sample_weight


class SGDRegressor:
    def __init__(self, loss="squared_error", epsilon=0.1, alpha=0.0001):
        self.loss, self.epsilon, self.alpha = loss, epsilon, alpha

    def fit(self, X, y, sample_weight=None):
        return check_sample_weight(sample_weight, X)
"""
VALIDATION = """\
import numpy as np


def check_sample_weight(sample_weight, X):
    X_min = X.min()
    return np.ones(len(X)) if sample_weight is None else sample_weight - X_min
"""


def test_estimator_epsilon_does_not_start_the_project_join(tmp_path):
    project(tmp_path)
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/validation.py", VALIDATION)
    write(tmp_path, "pkg/linear.py", ESTIMATOR)
    assert [(f.rule, f.path) for f in scan(tmp_path, [str(tmp_path / "pkg")], rules=RULES).findings] == []
    write(tmp_path, "pkg/linear.py", ESTIMATOR.replace("alpha=0.0001):", "alpha=0.0001):  # privacy budget epsilon"))
    found = scan(tmp_path, [str(tmp_path / "pkg")], rules=RULES).findings
    assert [(f.rule, f.path.rsplit("/", 1)[-1], f.line) for f in found] == [("DP202", "validation.py", 5)]
