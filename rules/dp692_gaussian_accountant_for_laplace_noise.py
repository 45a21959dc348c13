"""DP692: a function draws Laplace noise at a multiplier and steps a subsampled-Gaussian (RDP) accountant
with the same multiplier."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, string_text, walk, words
from dpcheck.rule import Rule

_LAPLACE = frozenset({"laplace", "Laplace"})
#: Gaussian accountants: Opacus' ``accountant.step(noise_multiplier=…)``, TF Privacy's ``compute_rdp(q, σ, …)``
_RDP_CALLS = frozenset({"compute_rdp", "compute_rdp_sample", "compute_rdp_from_ledger"})


def _dotted_reads(expr: cst.CSTNode) -> set[str]:
    out: set[str] = set()
    for n in walk(expr):
        if isinstance(n, (cst.Name, cst.Attribute)):
            d = dotted(n)
            if d is not None and d != "self":
                out.add(d)
    return out


def _multiplier(call: cst.Call) -> cst.BaseExpression | None:
    name = call_name(call)
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("noise_multiplier", "sigma"):
            return arg.value
    if name in _RDP_CALLS:
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if len(positional) >= 2:
            return positional[1]
    return None


def _gauss_guard(test: cst.BaseExpression) -> bool:
    """The ``if`` test selects the Gaussian option (``noise_type == 'gaussian'``, ``!= 'laplace'``)."""
    text = string_text(test).lower()
    names = {w for n in walk(test) if isinstance(n, cst.Name) for w in words(n.value)}
    if "gauss" in text or {"gauss", "gaussian", "normal"} & names:
        return True
    negated = any(isinstance(c.operator, (cst.NotEqual, cst.IsNot, cst.NotIn))
                  for n in walk(test) if isinstance(n, cst.Comparison) for c in n.comparisons)
    return "laplace" in text and negated


class GaussianAccountantForLaplaceNoise(Rule):
    id = "DP692"
    name = "gaussian-accountant-for-laplace-noise"
    category = "general"
    severity = "error"
    summary = ("Laplace noise is drawn at a multiplier and an RDP / subsampled-Gaussian accountant is stepped with "
               "that multiplier: the ε reported is the Gaussian mechanism's, not the Laplace noise's")
    rationale = (
        "Opacus' `RDPAccountant.step(noise_multiplier=σ, sample_rate=q)` and TF Privacy's `compute_rdp(q, σ, …)` "
        "compute the Rényi DP of the subsampled Gaussian mechanism with std σ·C on an L2-clipped sum. Laplace "
        "noise of scale σ·C is a different mechanism: its privacy depends on the L1 sensitivity of the clipped "
        "sum (up to √d·C for a d-dimensional gradient clipped in L2), and its RDP curve differs from the "
        "Gaussian's, so the ε the accountant reports for it is not a valid bound. Reported: a function that "
        "draws Laplace noise (`torch.distributions.Laplace`, `np.random.laplace`) whose scale reads the same "
        "multiplier (directly or through one assignment) it passes to `accountant.step(noise_multiplier=…)` or "
        "`compute_rdp`, where the accountant call is not limited to the Gaussian option (`if noise_type == "
        "'gaussian'`). Fix: account the Laplace option with a Laplace analysis (and its L1 sensitivity), or "
        "refuse it when an RDP accountant is used."
    )
    TRIGGERS = ("aplace",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a Laplace draw and a Gaussian accountant call (``step(noise_multiplier=…)``,
        ``compute_rdp``) in one function."""
        if not facts.calls_any(_LAPLACE):
            return False
        accountant = [c for c in facts.calls if facts.call_lasts(c) & _RDP_CALLS
                      or (isinstance(c.func, ast.Attribute) and c.func.attr == "step"
                          and any(k.arg in ("noise_multiplier", "sigma") for k in c.keywords))]
        if not accountant:
            return False
        laplace = [c for c in facts.calls if facts.call_lasts(c) & _LAPLACE]
        return bool(facts.functions_holding(accountant) & facts.functions_holding(laplace))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        body = list(walk(node.body))
        done = self.__dict__.setdefault("_done", set())
        draws = [c for c in body if isinstance(c, cst.Call) and call_name(c) in _LAPLACE]
        if not draws:
            return
        assigned: dict[str, set[str]] = {}
        for stmt in body:
            if isinstance(stmt, cst.Assign):
                reads = _dotted_reads(stmt.value)
                for t in stmt.targets:
                    d = dotted(t.target)
                    if d is not None:
                        assigned.setdefault(d, set()).update(reads)
        scale_reads: set[str] = set()
        for draw in draws:
            reads = set()
            for arg in draw.args:
                if arg.keyword is None or arg.keyword.value not in ("loc", "size", "device", "dtype"):
                    reads |= _dotted_reads(arg.value)
            for r in list(reads):
                reads |= assigned.get(r, set())
            scale_reads |= reads
        guarded: set[int] = set()
        for stmt in body:
            if isinstance(stmt, cst.If) and _gauss_guard(stmt.test):
                guarded |= {id(n) for n in walk(stmt.body)}
        for call in body:
            if not isinstance(call, cst.Call) or id(call) in guarded:
                continue
            name = call_name(call)
            if name not in _RDP_CALLS and name != "step":
                continue
            mult = _multiplier(call)
            if mult is None:
                continue
            shared = _dotted_reads(mult) & scale_reads
            if shared and id(call) not in done:
                done.add(id(call))
                self.report(
                    call,
                    f"the Gaussian (RDP) accountant is charged with `{sorted(shared)[0]}` while the noise drawn at "
                    "that multiplier can be Laplace: the ε reported is the subsampled Gaussian's, not a bound for "
                    "the Laplace noise; account the Laplace option separately (L1 sensitivity) or refuse it",
                )

    VALID = (
        # twin: the accountant is stepped only for the Gaussian option
        """
import torch
class DPRecModel:
    def noisy_step(self, grads):
        for g in grads:
            if self.noise_type == "gaussian":
                g += torch.normal(0.0, self.noise_scale * self.clip, size=g.shape)
            elif self.noise_type == "laplace":
                g += torch.distributions.Laplace(0.0, self.noise_scale * self.clip).sample(g.shape)
        if self.noise_type == "gaussian":
            self.accountant.step(noise_multiplier=self.noise_scale, sample_rate=self.q)
""",
        # twin: Gaussian noise only
        """
import torch
class DPRecModel:
    def noisy_step(self, grads):
        for g in grads:
            g += torch.normal(0.0, self.noise_scale * self.clip, size=g.shape)
        self.accountant.step(noise_multiplier=self.noise_scale, sample_rate=self.q)
""",
        # Laplace noise on a count with its own ε; the RDP accountant charges the Gaussian DP-SGD steps
        """
import numpy as np
from opacus.accountants import RDPAccountant
def train_and_count(model, steps, sigma, q, labels, count_eps):
    acc = RDPAccountant()
    for _ in range(steps):
        acc.step(noise_multiplier=sigma, sample_rate=q)
    noisy_count = len(labels) + np.random.laplace(0, 1.0 / count_eps)
    return acc, noisy_count
""",
        # ordinary ML: Laplace-distributed data augmentation, a scheduler step
        """
import numpy as np
def augment(batch, scale, scheduler):
    batch = batch + np.random.laplace(0, scale, batch.shape)
    scheduler.step()
    return batch
""",
    )

    INVALID = (
        """
import torch
class DPRecModel:
    def noisy_step(self, grads):
        for g in grads:
            if self.noise_type == "gaussian":
                g += torch.normal(0.0, self.noise_scale * self.clip, size=g.shape)
            elif self.noise_type == "laplace":
                g += torch.distributions.Laplace(0.0, self.noise_scale * self.clip).sample(g.shape)
        self.accountant.step(noise_multiplier=self.noise_scale, sample_rate=self.q)  # <-
""",
        """
import numpy as np
from tensorflow_privacy.privacy.analysis.rdp_accountant import compute_rdp, get_privacy_spent
def laplace_dpsgd(grads, clip, sigma, q, steps, orders):
    b = sigma * clip
    noisy = [g + np.random.laplace(0, b, g.shape) for g in grads]
    rdp = compute_rdp(q, sigma, steps, orders)  # <-
    return noisy, get_privacy_spent(orders, rdp, target_delta=1e-5)[0]
""",
        """
import torch
def private_update(model, clip, noise_multiplier, accountant, rate, use_laplace):
    for p in model.parameters():
        std = noise_multiplier * clip
        if use_laplace:
            noise = torch.distributions.Laplace(0.0, std).sample(p.grad.shape)
        else:
            noise = torch.randn_like(p.grad) * std
        p.grad += noise
    accountant.step(noise_multiplier=noise_multiplier, sample_rate=rate)  # <-
""",
        """
import numpy as np
class LaplaceFedServer:
    def aggregate(self, updates):
        mean = sum(updates) / len(updates)
        noisy = mean + np.random.laplace(0.0, self.sigma * self.clip / len(updates), mean.shape)
        self.accountant.step(noise_multiplier=self.sigma, sample_rate=self.client_rate)  # <-
        return noisy
""",
    )
