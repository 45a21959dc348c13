"""DP631: the accountant is given the physical batch size while the module trains (and calibrates) with the batch
accumulated over several micro-steps (``effective_batch_size = batch_size * gradient_accumulation_steps``)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.analysis.vocabulary import ACCOUNTANT_CALL
from dpcheck.rule import Rule

_ACCUM_WORDS = frozenset({"accumulation", "accum", "accumulate", "accumulated", "grad_accum"})
#: keywords of an accountant call (or of the parameters object handed to it) that carry the batch size
_BATCH_KEYWORDS = frozenset({"batch_size", "batch_sizes", "lot_size", "expected_batch_size"})
#: calls that take the batch size for an accountant: accountant calls and their parameter objects
_PARAM_OBJECTS = frozenset({"DpParams", "DPParams", "PrivacyParams", "DpConfig", "AccountingParams"})


def _factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _factors(expr.left) + _factors(expr.right)
    return [expr]


def _accumulated(expr: cst.BaseExpression) -> str | None:
    """``batch_size * gradient_accumulation_steps``: the batch factor's dotted name."""
    factors = _factors(expr)
    if len(factors) < 2:
        return None
    batch = [f for f in factors if dotted(f) and words(dotted(f).split(".")[-1]) & {"batch", "bs"}
             and not words(dotted(f).split(".")[-1]) & _ACCUM_WORDS]
    accum = [f for f in factors if dotted(f) and (words(dotted(f).split(".")[-1]) & _ACCUM_WORDS
                                                  or "accum" in dotted(f).split(".")[-1].lower())]
    if len(batch) == 1 and accum:
        return dotted(batch[0])
    return None


class AccountantPhysicalBatch(Rule):
    id = "DP631"
    name = "accountant-physical-batch"
    category = "general"
    severity = "error"
    summary = ("the accountant is given the physical batch size while training accumulates gradients over several "
               "micro-steps into a larger batch (`batch_size * gradient_accumulation_steps`)")
    rationale = (
        "With gradient accumulation one noisy update sums the clipped gradients of `batch_size × "
        "accumulation_steps` examples: that is the batch the sampling rate q = B/N and the number of updates "
        "refer to. A module that works out this effective batch (`effective_batch_size = batch_size * "
        "gradient_accumulation_steps`, used to calibrate or train) and then hands an accountant call, or the "
        "parameters object it reads (`DpParams(batch_size=…)`), the physical `batch_size` computes ε for a "
        "sampling rate `accumulation_steps` times too small: a user-supplied noise multiplier is then accepted "
        "(or ε reported) although it overspends the budget. Reported: a `batch_size=` keyword of an accountant "
        "call or of its parameter object whose value is the batch factor of such a product in the same module. "
        "Not reported: the effective batch passed, modules without gradient accumulation. Fix: give the "
        "accountant the accumulated batch size."
    )
    TRIGGERS = ("accum",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A module naming gradient accumulation and a batch-size keyword."""
        return "accum" in facts.source and "batch_size" in facts.source

    VALID = (
        # (twin) the accountant reads the accumulated batch
        """
class Config:
    @property
    def effective_batch_size(self):
        return self.batch_size * self.gradient_accumulation_steps
    def check(self):
        eps = self._accountant.compute_epsilon(self.train_steps, DpParams(noise_multipliers=self.sigma,
                                               batch_size=self.effective_batch_size, num_samples=self.n, delta=self.delta))
        return eps <= self.epsilon
""",
        # no accumulation in the module
        """
def report(accountant, sigma, batch_size, n, steps, delta):
    return accountant.compute_epsilon(steps, DpParams(noise_multipliers=sigma, batch_size=batch_size, num_samples=n, delta=delta))
""",
        # (twin) a local effective batch handed to compute_epsilon
        """
def epsilon_for(args, n):
    total_batch = args.per_device_batch_size * args.grad_accum_steps
    return compute_epsilon(noise_multiplier=args.sigma, batch_size=total_batch, n=n, steps=args.steps)
""",
        # ordinary ML code: accumulation steps and a data loader's batch size, no accountant
        """
import torch
def make_loader(ds, cfg):
    effective = cfg.batch_size * cfg.accumulation_steps
    print("effective batch", effective)
    return torch.utils.data.DataLoader(ds, batch_size=cfg.batch_size, shuffle=True)
""",
    )
    INVALID = (
        # the noise check uses the physical batch size; calibration uses the accumulated one
        """
class Config:
    @property
    def effective_batch_size(self):
        return self.batch_size * self.gradient_accumulation_steps
    def calibrate(self):
        return calibrate_sigma(self.epsilon, self.delta, batch_sizes=self.effective_batch_size)
    def check(self):
        eps = self._accountant.compute_epsilon(self.train_steps, DpParams(noise_multipliers=self.sigma,
                                               batch_size=self.batch_size, num_samples=self.n, delta=self.delta))  # <-
        return eps <= self.epsilon
""",
        # a local effective batch used for training, the physical one for ε
        """
def epsilon_for(args, n):
    total_batch = args.per_device_batch_size * args.grad_accum_steps
    train(args, total_batch)
    return compute_epsilon(noise_multiplier=args.sigma, batch_size=args.per_device_batch_size, n=n, steps=args.steps)  # <-
""",
        # an RDP accountant helper given the micro-batch while updates accumulate several
        """
def run(cfg, model, n):
    logical_batch = cfg.micro_batch * cfg.accumulation_steps
    for step in range(cfg.steps):
        model.accumulate_and_step(logical_batch)
    return get_privacy_spent_for(noise_multiplier=cfg.sigma, batch_size=cfg.micro_batch, n=n, steps=cfg.steps)  # <-
""",
        # Opacus-style accountant step given the physical batch rate
        """
def account(accountant, cfg, n):
    virtual = cfg.batch_size * cfg.accum_steps
    accountant.step(noise_multiplier=cfg.sigma, sample_rate=virtual / n)
    return compute_epsilon_from(batch_size=cfg.batch_size, n=n, steps=cfg.steps)  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        raw: set[str] = set()
        for sub in walk(node):
            if isinstance(sub, (cst.Assign, cst.Return)) and sub.value is not None:
                name = _accumulated(sub.value)
                if name is not None:
                    raw.add(name)
        if not raw:
            return
        fa = self.ctx.analysis
        for call in walk(node):
            if not isinstance(call, cst.Call):
                continue
            called = call_name(call)
            if not (ACCOUNTANT_CALL.match(called) or called in _PARAM_OBJECTS
                    or words(called) & {"epsilon", "privacy"} and words(called) & {"compute", "get"}):
                continue
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in _BATCH_KEYWORDS and dotted(arg.value) in raw:
                    self.report(arg, f"the accountant is given `{fa.code(arg.value).strip()}`, the physical batch, "
                                     "while this module accumulates gradients into batches of "
                                     f"`{fa.code(arg.value).strip()} × accumulation steps`: ε is computed for a "
                                     "sampling rate that many times too small; pass the accumulated batch size")
                    break
