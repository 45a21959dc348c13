"""DP501–DP509 beyond their VALID/INVALID cases: quiet on ordinary ML code, the real spellings' structure,
and their documentation through ``dpcheck explain``."""
from __future__ import annotations

import subprocess
import sys

import pytest

from dpcheck.rule import run_rules
from dpcheck.rules import by_id

NEW_RULES = ("DP501", "DP502", "DP503", "DP504", "DP505", "DP506", "DP507", "DP508", "DP509")


def lines(source: str, rule_id: str) -> list[int]:
    return sorted(f.line for f in run_rules(source, [by_id(rule_id)]) if f.rule == rule_id)


# TD3's target-policy smoothing: clipped exploration noise, no privacy anywhere
TD3 = """
import torch
def target_action(self, next_state):
    noise = (torch.randn_like(self.action) * self.policy_noise).clamp(-self.noise_clip, self.noise_clip)
    noise = torch.randn_like(self.action) * self.policy_noise
    noise = noise.clamp(-self.noise_clip, self.noise_clip)
    return (self.actor_target(next_state) + noise).clamp(-self.max_action, self.max_action)
"""

# gradient-noise regularisation (Neelakantan et al.) followed by clipping, no privacy anywhere
GRADIENT_NOISE = """
import torch
def step(model, optimizer, eta, t, max_norm):
    for p in model.parameters():
        p.grad += torch.randn_like(p.grad) * (eta / (1 + t) ** 0.55)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
"""

# an Adam-style loop over a tolerance that names eps
TOLERANCE_LOOP = """
def solve(model, optimizer, eps, max_eps):
    while eps < max_eps:
        optimizer.step()
        eps = model.residual()
"""


@pytest.mark.parametrize(("source", "rule_id"), [
    (TD3, "DP502"), (GRADIENT_NOISE, "DP501"), (TOLERANCE_LOOP, "DP504"),
])
def test_quiet_on_ml_code(source: str, rule_id: str) -> None:
    assert lines(source, rule_id) == []


def test_truncated_noise_reported_once_dp_context_is_there() -> None:
    source = TD3.replace("def target_action(self, next_state):",
                         "def target_action(self, next_state, epsilon):\n    \"\"\"differentially private\"\"\"")
    assert lines(source, "DP502") == [5, 7]


def test_budget_loop_with_nested_epoch_loop() -> None:
    # borealis dp_wgan.py: the steps sit in an inner `while i < len(loader)`, ε is set in an `if private:`
    source = """
def train(self, x_train, data_loader, batch_size, sigma, lmbds, private=True):
    epsilon, steps, epoch = 0, 0, 0
    while epsilon < self.target_epsilon:
        i = 0
        while i < len(data_loader):
            self.discriminator.zero_grad()
            err = self.discriminator(next(iter(data_loader))).mean()
            err.backward()
            self.optimizerD.step()
            i += 1
            steps += 1
        epoch += 1
        if private:
            rdp = compute_rdp(batch_size / x_train.shape[0], sigma, steps, lmbds)
            epsilon, _, _ = get_privacy_spent(lmbds, rdp, target_delta=1e-5)
"""
    assert lines(source, "DP504") == [4]


def test_budget_loop_that_stops_before_the_step_is_quiet() -> None:
    source = """
def train(self, loader, eps_budget, delta):
    epsilon = 0.0
    while epsilon < eps_budget:
        if self.accountant.get_epsilon(delta) + self.epoch_cost > eps_budget:
            break
        train_one_epoch(self.model, loader)
        epsilon = self.accountant.get_epsilon(delta)
"""
    assert lines(source, "DP504") == []


def test_guard_elsewhere_in_the_module_counts_for_dp503() -> None:
    source = """
import numpy as np
def check(epsilon):
    if epsilon >= 1:
        raise ValueError("classical Gaussian needs epsilon < 1")

def sigma(epsilon, delta, sensitivity):
    check(epsilon)
    return np.sqrt(2 * np.log(1.25 / delta)) * sensitivity / epsilon
"""
    assert lines(source, "DP503") == []
    assert lines(source.replace("epsilon >= 1", "epsilon >= 10"), "DP503") == [9]


def test_noise_after_clip_in_a_comprehension_is_quiet() -> None:
    source = """
import tensorflow as tf
def train_step(self, grads):
    # differentially private step
    return [g + tf.random.normal(g.shape, stddev=self.sigma_u)
            for g in [tf.clip_by_norm(g, self.l2_norm_clip) for g in grads]]
"""
    assert lines(source, "DP501") == []


def test_engine_per_round_needs_an_epsilon_read() -> None:
    source = """
class clientAVG(Client):
    def train(self):
        self.model, self.optimizer, loader, privacy_engine = initialize_dp(self.model, self.optimizer, self.dl, 1.0)
        for x, y in loader:
            self.optimizer.step()
"""
    assert lines(source, "DP505") == []
    read = source + "        eps, delta = get_dp_params(privacy_engine)\n"
    assert lines(read, "DP505") == [4]
    # the same method outside a client class is a one-shot training run
    assert lines(read.replace("class clientAVG(Client):", "class Trainer:"), "DP505") == []



def test_engine_per_round_in_a_file_no_import_can_name() -> None:
    """A sync tool's conflict copy (a file name with spaces and brackets) whose per-round method nothing calls:
    no server reaches it. The same file under an importable name, or calling the method itself, still fires."""
    source = """
from opacus import PrivacyEngine
class DPClient:
    def train(self, model, opt, loader, delta):
        engine = PrivacyEngine()
        model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                                 noise_multiplier=1.0, max_grad_norm=1.0)
        return engine.get_epsilon(delta)
"""
    rule = [by_id("DP505")]

    def found(text: str, path: str) -> list[int]:
        return sorted(f.line for f in run_rules(text, rule, path=path) if f.rule == "DP505")

    assert found(source, "fl/client_dp (alice's conflicted copy 2017-11-27).py") == []
    assert found(source, "fl/client_dp.py") == [5]
    called = source + "for r in range(10):\n    DPClient().train(m, o, l, 1e-5)\n"
    assert found(called, "fl/client_dp (alice's conflicted copy 2017-11-27).py") == [5]


# ordinary ML code: a seeded generator for data augmentation noise and a seeded training script
SEEDED_ML = """
import numpy as np
import torch
class GaussianNoiseAugment:
    def __init__(self, sigma, eps=1e-8, seed=0):
        self.rng = np.random.RandomState(seed)
        self.sigma = sigma

    def __call__(self, x):
        return x + self.rng.normal(0, self.sigma, size=x.shape)

def main(args, epoch):
    torch.manual_seed(args.seed + epoch)
    noise = torch.randn(16, 100)
    return noise
"""


# ordinary training: gradient clipping with weight noise for regularisation, and a noise schedule over √batch
CLIPPED_ML = """
import math
import torch
def train(model, optimizer, loader, max_norm, noise_std, batch_size):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        for p in model.parameters():
            p.data += torch.randn_like(p) * noise_std / math.sqrt(batch_size)
"""


def test_batch_clipping_and_std_formula_quiet_on_ml_code() -> None:
    assert lines(CLIPPED_ML, "DP508") == []
    assert lines(CLIPPED_ML, "DP509") == []


def test_seeded_noise_quiet_on_ml_code() -> None:
    assert lines(SEEDED_ML, "DP507") == []


def test_seeded_noise_in_a_dp_mechanism_class() -> None:
    source = """
import numpy as np
class LaplaceMechanism:
    def __init__(self, epsilon, sensitivity, seed=7):
        self.rng = np.random.default_rng(seed)
        self.epsilon, self.sensitivity = epsilon, sensitivity

    def release(self, x):
        return x + self.rng.laplace(0, self.sensitivity / self.epsilon)
"""
    assert lines(source, "DP507") == [5]
    assert lines(source.replace("seed=7", "seed=None"), "DP507") == []


def test_dp503_stands_down_when_an_accountant_charges_the_sigma() -> None:
    source = """
import numpy as np
def train(args, loader, steps, q):
    args.sigma = np.sqrt(2 * np.log(1.25 / args.delta)) / args.epsilon
    for _ in range(steps):
        add_noise(loader, args.sigma)
    return get_privacy_spent(orders, compute_rdp(q, args.sigma, steps, orders), target_delta=args.delta)
"""
    assert lines(source, "DP503") == []
    uncharged = source.replace("compute_rdp(q, args.sigma, steps, orders)", "rdp_cached")
    assert lines(uncharged, "DP503") == [4]


@pytest.mark.parametrize("rule_id", NEW_RULES)
def test_explain_shows_the_doc(rule_id: str) -> None:
    rule = by_id(rule_id)
    out = subprocess.run([sys.executable, "-m", "dpcheck", "explain", rule_id], capture_output=True, text=True,
                         check=True).stdout
    assert rule.name in out and rule.rationale[:60] in out
