"""DP571: an ε is reported for training whose optimizer is the plain one (DP optimizer imported but unused, or a flag that can turn it off)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.plain_training import LineHits, PlainEpsilon, plain_epsilon
from dpcheck.rule import Rule


class EpsilonForPlainOptimizer(Rule):
    id = "DP571"
    name = "epsilon-for-plain-optimizer"
    category = "general"
    severity = "error"
    summary = ("an ε is computed for a run whose optimizer is the plain one: the DP optimizer is imported and never "
               "used, or a switch can turn it off and the ε is reported whatever the switch says")
    rationale = (
        "An accountant's ε describes the noisy, clipped steps of a DP optimizer. Two ways a script reports it for "
        "steps that had no noise: (1) the DP optimizer or engine (`PrivacyEngine`, `DPKerasSGDOptimizer`, "
        "`DPGradientDescentGaussianOptimizer`) is imported but never used — the plain optimizer (`torch.optim.SGD`, "
        "`tf.keras.optimizers.SGD`, `GradientDescentOptimizer`) takes the steps, nothing in the module clips or draws "
        "noise — and `get_privacy_spent` / `compute_dp_sgd_privacy` / `get_epsilon` still turns σ, q and the step "
        "count into an ε; (2) a switch (`if args.dp:`, `DPOptimizer(base) if cfg['dp'] else base`) picks the DP or "
        "the plain optimizer, and the ε is computed outside any test of that switch, so the non-private run is "
        "reported with the ε of the private one. Reported at the ε computation. Not reported: an ε computed under "
        "the same switch (or after an early exit on it), a charge in the branch that adds the noise it accounts for "
        "(`if add_noise: accountant.accumulate(σ, n); x = add_gaussian_noise(x, σ)`), a module that clips or noises gradients by hand, an "
        "accountant-only script that trains nothing. Fix: use the DP optimizer, or compute and print ε only when "
        "the run is private."
    )
    TRIGGERS = ("privacy_spen", "get_epsilon", "compute_dp_sgd_privacy", "compute_eps", "rdp_to_eps", "get_eps",
                "eps_from_rdp", "get_privacy_budget")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return bool(facts.memo("plain_epsilon", lambda: plain_epsilon(facts.tree)))

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._hits: LineHits[PlainEpsilon] = LineHits(ctx, plain_epsilon)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        found = self._hits.take(node)
        if found is None:
            return
        self.report(node, f"an ε is computed here for a run that may have taken plain, noiseless steps: {found.why}; "
                          "use the DP optimizer, or report ε only for the private run")

    VALID = (
        # (fix44b-R1) the ε is for the function's own input noise (scale reads the accounted σ), not the optimizer
        """
import numpy as np
import torch
from opacus.optimizers import DPOptimizer
from tensorflow_privacy import compute_dp_sgd_privacy
def noisy_inputs(x, sigma, clip=1.0):
    n = x.shape[0]
    eps, _ = compute_dp_sgd_privacy.compute_dp_sgd_privacy(n, n, sigma, 1, 1 / n)
    return x + np.random.laplace(scale=clip * sigma, size=x.shape), eps
def make_opt(model, args):
    base = torch.optim.SGD(model.parameters(), lr=0.1)
    return DPOptimizer(base, noise_multiplier=args.sigma, max_grad_norm=1.0, expected_batch_size=32) if args.dp else base
""",
        # the accountant is charged in the branch that adds the noise it accounts for
        """
import torch
from torch import optim
class Sanitizer:
    def __init__(self, accountant):
        self.accountant = accountant
    def sanitize(self, grads, sigma, n, add_noise=True):
        if add_noise:
            self.accountant.accumulate_privacy_spending(sigma, n)
            grads = add_gaussian_noise(grads, sigma)
        return grads
def build(model, sanitizer, sigma, with_privacy):
    if with_privacy:
        opt = DPSGD(sanitizer=sanitizer, sigma=sigma, params=model.parameters())
    else:
        opt = optim.SGD(model.parameters(), lr=0.1)
    return opt
""",
        # a default privacy setting built when none is given (both arms are DP): not a DP/plain switch
        """
from opacus import PrivacyEngine
def fit(model, opt, loader, privacy=None):
    privacy = privacy if privacy is not None else DPSGD()
    engine = PrivacyEngine()
    model, opt, loader = engine.make_private(module=model, optimizer=opt, data_loader=loader,
                                             noise_multiplier=privacy.sigma, max_grad_norm=1.0)
    for x, y in loader:
        opt.zero_grad(); model.loss(x, y).backward(); opt.step()
    return engine.get_epsilon(privacy.delta)
""",
        # twin of 1: the engine is used, its ε is reported
        """
import torch
from opacus import PrivacyEngine
def train(model, loader, args):
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    model, opt, loader = PrivacyEngine().make_private(module=model, optimizer=opt, data_loader=loader,
                                                      noise_multiplier=args.sigma, max_grad_norm=args.clip)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
""",
        # twin of 2: ε reported only in the DP branch
        """
import torch
from opacus.optimizers import DPOptimizer
from opacus.accountants import RDPAccountant
def main(args, model, loader):
    accountant = RDPAccountant()
    if args.dp:
        opt = DPOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), noise_multiplier=args.sigma, max_grad_norm=1.0,
                          expected_batch_size=args.bs)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        if args.dp:
            accountant.step(noise_multiplier=args.sigma, sample_rate=args.q)
    if args.dp:
        print("epsilon", accountant.get_epsilon(delta=1e-5))
""",
        # twin of 3: the DP Keras optimizer is the one compiled
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer, compute_dp_sgd_privacy
def main(args):
    model = build()
    optimizer = DPKerasSGDOptimizer(l2_norm_clip=args.clip, noise_multiplier=args.sigma, num_microbatches=args.bs, learning_rate=0.1)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")
    model.fit(x_train, y_train, epochs=args.epochs, batch_size=args.bs)
    eps, _ = compute_dp_sgd_privacy(len(x_train), args.bs, args.sigma, args.epochs, 1e-5)
    print("epsilon =", eps)
""",
        # gradients clipped and noised by hand before the plain optimizer steps
        """
import torch
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent
def train(model, loader, sigma, C, q, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), C)
        for p in model.parameters():
            p.grad += torch.normal(0, sigma * C, p.grad.shape) / len(x)
        opt.step()
    rdp = compute_rdp(q, sigma, steps, [2, 4, 8, 16])
    return get_privacy_spent([2, 4, 8, 16], rdp, target_delta=1e-5)[0]
""",
        # an accountant-only script: computes ε for a planned run, trains nothing
        """
from tensorflow_privacy import compute_dp_sgd_privacy
from tensorflow_privacy import DPKerasAdamOptimizer
for sigma in (0.8, 1.0, 1.2):
    print(sigma, compute_dp_sgd_privacy(60000, 256, sigma, 60, 1e-5))
""",
        # ML: Adam and an `eps` tolerance, no DP
        """
import torch
def train(model, loader, eps=1e-8):
    opt = torch.optim.Adam(model.parameters(), eps=eps)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    print("eps", eps)
""",
    )

    INVALID = (
        # (fix44b-R1 twin) the helper's draw does not use the accounted σ: the ε is not its noise's
        """
import numpy as np
import torch
from opacus.optimizers import DPOptimizer
from tensorflow_privacy import compute_dp_sgd_privacy
def noisy_inputs(x, sigma, clip=1.0):
    n = x.shape[0]
    eps, _ = compute_dp_sgd_privacy.compute_dp_sgd_privacy(n, n, sigma, 1, 1 / n)  # <-
    return x + np.random.laplace(scale=0.1, size=x.shape), eps
def make_opt(model, args):
    base = torch.optim.SGD(model.parameters(), lr=0.1)
    return DPOptimizer(base, noise_multiplier=args.sigma, max_grad_norm=1.0, expected_batch_size=32) if args.dp else base
""",
        # the twin: the charge is taken whether or not the noise is added
        """
import torch
from torch import optim
class Sanitizer:
    def __init__(self, accountant):
        self.accountant = accountant
    def sanitize(self, grads, sigma, n, add_noise=True):
        self.accountant.accumulate_privacy_spending(sigma, n)  # <-
        if add_noise:
            grads = add_gaussian_noise(grads, sigma)
        return grads
def build(model, sanitizer, sigma, with_privacy):
    if with_privacy:
        opt = DPSGD(sanitizer=sanitizer, sigma=sigma, params=model.parameters())
    else:
        opt = optim.SGD(model.parameters(), lr=0.1)
    return opt
""",
        # 1. PrivacyEngine imported and never built; the plain SGD trains and an ε is printed from the RDP accountant
        """
import torch
from opacus import PrivacyEngine
from opacus.accountants.analysis.rdp import compute_rdp, get_privacy_spent
def train(model, loader, args):
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    rdp = compute_rdp(args.q, args.sigma, args.steps, args.orders)
    eps = get_privacy_spent(args.orders, rdp, target_delta=args.delta)[0]  # <-
    print(f"trained with eps={eps:.2f}")
""",
        # 2. a flag picks the plain optimizer, the ε is reported whatever the flag
        """
import torch
from opacus.optimizers import DPOptimizer
from opacus.accountants import RDPAccountant
def main(args, model, loader):
    accountant = RDPAccountant()
    if args.dp:
        opt = DPOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), noise_multiplier=args.sigma, max_grad_norm=1.0,
                          expected_batch_size=args.bs)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        accountant.step(noise_multiplier=args.sigma, sample_rate=args.q)
    print("epsilon", accountant.get_epsilon(delta=1e-5))  # <-
""",
        # 3. TF2: the DP optimizer is imported, the plain SGD is compiled, the ε is still printed
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer, compute_dp_sgd_privacy
def main(args):
    model = build()
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
    # optimizer = DPKerasSGDOptimizer(l2_norm_clip=args.clip, noise_multiplier=args.sigma, num_microbatches=args.bs)
    model.compile(optimizer=optimizer, loss="sparse_categorical_crossentropy")
    model.fit(x_train, y_train, epochs=args.epochs, batch_size=args.bs)
    eps, _ = compute_dp_sgd_privacy(len(x_train), args.bs, args.sigma, args.epochs, 1e-5)  # <-
    print("epsilon =", eps)
""",
        # 4. TF1: a DP optimizer class imported, GradientDescentOptimizer used, the moments accountant reports ε
        """
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer import DPGradientDescentGaussianOptimizer
from tensorflow_privacy.privacy.analysis.rdp_accountant import compute_rdp, get_privacy_spent
class Trainer:
    def __init__(self, sigma, clip, lr):
        self.sigma, self.clip = sigma, clip
        self.train_op = tf.train.GradientDescentOptimizer(lr).minimize(self.loss)

    def privacy(self, q, steps, delta):
        rdp = compute_rdp(q=q, noise_multiplier=self.sigma, steps=steps, orders=ORDERS)
        return get_privacy_spent(ORDERS, rdp, target_delta=delta)  # <-
""",
        # 5. a config dict turns DP off; the plain optimizer is used and the ε still logged
        """
import torch
from opacus.optimizers import DPOptimizer
from opacus.accountants.utils import get_noise_multiplier
from opacus.accountants import RDPAccountant
CONFIG = {"dp": False, "epsilon": 3.0, "delta": 1e-5, "clip": 1.0}
def fit(model, loader, cfg=CONFIG):
    sigma = get_noise_multiplier(target_epsilon=cfg["epsilon"], target_delta=cfg["delta"], sample_rate=0.01, epochs=10)
    base = torch.optim.Adam(model.parameters())
    opt = DPOptimizer(base, noise_multiplier=sigma, max_grad_norm=cfg["clip"], expected_batch_size=64) if cfg["dp"] else base
    acc = RDPAccountant()
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        acc.step(noise_multiplier=sigma, sample_rate=0.01)
    return model, acc.get_epsilon(cfg["delta"])  # <-
""",
        # 6. benchmark spelling (SPRINT's AC-GAN): a clip value of 0 (the default) compiles the discriminator with the
        # plain Adam instead of NoisyAdam, and the moments accountant still charges the noise every epoch
        """
import argparse
from keras.optimizers import Adam
from custom_keras.noisy_optimizers import NoisyAdam
from privacy_accountant import accountant
parser = argparse.ArgumentParser()
parser.add_argument("--noise", type=float, default=0)
parser.add_argument("--clip_value", type=float, default=0)
args = parser.parse_args()
priv_accountant = accountant.GaussianMomentsAccountant(60000)
if args.clip_value > 0:
    discriminator.compile(optimizer=NoisyAdam(lr=2e-4, clipnorm=args.clip_value, noise=args.noise), loss="bce")
else:
    discriminator.compile(optimizer=Adam(lr=2e-4), loss="bce")
for epoch in range(10):
    discriminator.train_on_batch(X, y)
    op = priv_accountant.accumulate_privacy_spending([None, None], args.noise, 64)  # <-
""",
    )
