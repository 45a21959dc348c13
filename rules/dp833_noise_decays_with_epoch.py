"""DP833: the noise scale shrinks with the epoch or round number while the privacy accounting assumes it is
constant."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, loop_targets, param_names, refs, target_names, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"normal", "normal_", "randn", "randn_like", "gauss", "standard_normal", "laplace", "Normal",
                    "Laplace", "gaussian"})
#: words of a noise-scale name
_SCALE = frozenset({"sigma", "std", "stddev", "sd", "noise", "multiplier"})
#: words of a counter of epochs / rounds (not their total)
_COUNTER = frozenset({"epoch", "round", "rnd", "iteration", "ep"})
_TOTAL = frozenset({"epochs", "rounds", "num", "n", "total", "max", "iterations", "nb"})
#: words of a call that accounts for the noise actually used (a per-step schedule is then fine)
_ACCOUNT = frozenset({"account", "accountant", "rdp", "privacy", "spent", "epsilon", "eps", "compose", "step",
                      "accumulate", "track", "record"})


def _counter(name: str) -> bool:
    w = words(name)
    return bool(w & _COUNTER) and not w & _TOTAL


def _counter_in(expr: cst.CSTNode, counters: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in counters for n in walk(expr))


def _shrinks(expr: cst.CSTNode, counters: set[str]) -> bool:
    """``c ** epoch`` (c < 1 or a decay name), ``exp(-k * epoch)``, ``x / (1 + 0.5 * epoch)``."""
    for n in walk(expr):
        if isinstance(n, cst.BinaryOperation):
            if isinstance(n.operator, cst.Power) and _counter_in(n.right, counters):
                base = n.left
                if isinstance(base, cst.Float) and float(base.value) < 1:
                    return True
                if isinstance(base, cst.Name) and words(base.value) & {"decay", "gamma"}:
                    return True
            if isinstance(n.operator, cst.Divide) and _counter_in(n.right, counters):
                return True
        if isinstance(n, cst.Call) and call_name(n) == "exp" and n.args:
            arg = n.args[0].value
            if isinstance(arg, cst.UnaryOperation) and isinstance(arg.operator, cst.Minus) \
                    and _counter_in(arg, counters):
                return True
            if isinstance(arg, cst.BinaryOperation) and _counter_in(arg, counters) and any(
                    isinstance(m, cst.UnaryOperation) and isinstance(m.operator, cst.Minus) for m in walk(arg)):
                return True
    return False


class NoiseDecaysWithEpoch(Rule):
    id = "DP833"
    name = "noise-decays-with-epoch"
    category = "general"
    severity = "error"
    summary = "the noise std (or multiplier) shrinks with the epoch or round number; the accountant assumes a constant one"
    rationale = (
        "A schedule that lowers the noise as training proceeds (`sigma * 0.95 ** epoch`, "
        "`std / (1 + 0.5 * epoch)`, `z * exp(-k * round)`) releases the later steps with less noise than the "
        "noise multiplier the accountant was given (or solved for), so the reported ε covers only the first "
        "epoch's noise level and understates the loss of every later one. Reported: inside a loop over an "
        "epoch or round counter (or a function taking one), a noise-scale name bound from an expression that "
        "shrinks with the counter and used in a noise draw, when the shrunk value is never handed to an "
        "accounting call. Not reported: schedules that grow the noise, or whose per-step value is passed to "
        "the accountant. Fix: keep the noise multiplier constant, or account each step with the noise it "
        "actually used (RDP composes per-step σ_t)."
    )
    TRIGGERS = ("epoch", "round")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noise draw and a power, a division or an ``exp``."""
        return facts.calls_any(_DRAWS) and bool(facts.binops(ast.Pow) or facts.binops(ast.Div)
                                                or facts.calls_any(frozenset({"exp"})))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        counters = {p for p in param_names(node) if _counter(p)}
        body = list(walk(node.body, into_scopes=False))
        for loop in body:
            if isinstance(loop, cst.For):
                counters |= {t for t in loop_targets(loop) if _counter(t)}
        if not counters:
            return
        draws: set[str] = set()
        accounted: set[str] = set()
        for sub in body:
            if isinstance(sub, cst.Call):
                name = call_name(sub)
                arg_refs: set[str] = set()
                for a in sub.args:
                    arg_refs |= refs(a.value)
                if name in _DRAWS:
                    draws |= arg_refs
                if words(name) & _ACCOUNT:
                    accounted |= arg_refs
            elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Multiply) and any(
                    isinstance(c, cst.Call) and call_name(c) in _DRAWS for c in (sub.left, sub.right)):
                draws |= refs(sub)
        for sub in body:
            if not isinstance(sub, cst.Assign):
                continue
            names: set[str] = set()
            for t in sub.targets:
                names |= target_names(t.target)
            scaled = {n for n in names if words(n) & _SCALE}
            if not scaled or not _shrinks(sub.value, counters):
                continue
            if not any(words(r) & (_SCALE | {"clip", "clipping", "sensitivity"}) for r in refs(sub.value)):
                continue
            if scaled & draws and not scaled & accounted:
                self.report(sub, "the noise scale shrinks with the epoch/round counter, but the accountant "
                                 "assumes the initial noise multiplier for every step: later steps are "
                                 "under-noised for the reported ε")

    VALID = (
        # twin: constant noise multiplier
        """
import torch
def train(model, loader, epochs, noise_multiplier, clip):
    for epoch in range(epochs):
        noise_std = noise_multiplier * clip
        for x, y in loader:
            for p in model.parameters():
                p.grad += torch.normal(0, noise_std, p.grad.shape)
""",
        # twin: the decayed multiplier is accounted step by step
        """
import torch
def train(model, loader, epochs, noise_multiplier, clip, accountant):
    for epoch in range(epochs):
        sigma_t = noise_multiplier * (0.95 ** epoch)
        for x, y in loader:
            for p in model.parameters():
                p.grad += torch.normal(0, sigma_t * clip, p.grad.shape)
            accountant.step(noise_multiplier=sigma_t, sample_rate=0.01)
""",
        # the noise grows with the round: more noise never hurts privacy
        """
import numpy as np
def rounds(update, sigma, num_rounds):
    for rnd in range(num_rounds):
        sigma_r = sigma * (1.05 ** rnd)
        update = update + np.random.normal(0, sigma_r, update.shape)
    return update
""",
        # ordinary ML: a decaying exploration noise in RL, no DP claim in the names
        """
import numpy as np
def act(policy, state, epoch, base_std):
    std = base_std * 0.99 ** epoch
    return policy(state) + np.random.normal(0, std)
""",
    )
    INVALID = (
        """
import torch
def train(model, loader, epochs, noise_multiplier, clip):
    for epoch in range(epochs):
        sigma_t = noise_multiplier * (0.95 ** epoch)  # <-
        for x, y in loader:
            for p in model.parameters():
                p.grad += torch.normal(0, sigma_t * clip, p.grad.shape)
""",
        """
import math, torch
def local_update(model, loader, local_epochs, clip_bound, noise_multiplier):
    for ep in range(local_epochs):
        noise_stddev = clip_bound * noise_multiplier / (1 + ep * 0.5)  # <-
        for x, y in loader:
            for p in model.parameters():
                p.grad.add_(torch.randn_like(p.grad) * noise_stddev)
""",
        """
import numpy as np
def client_round(weights, clip, sigma, round_idx):
    noise_sd = sigma * clip * np.exp(-0.1 * round_idx)  # <-
    return weights + np.random.normal(0, noise_sd, weights.shape)
""",
        """
import numpy as np
def dp_train(w, grads_fn, clip, noise_multiplier, decay, epochs):
    for epoch in range(epochs):
        dyn_noise = noise_multiplier * decay ** epoch  # <-
        g = grads_fn(w)
        w = w - 0.1 * (g + np.random.normal(0, dyn_noise * clip, g.shape))
    return w
""",
    )
