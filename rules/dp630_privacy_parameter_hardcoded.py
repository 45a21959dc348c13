"""DP630: a privacy parameter the function is given is replaced by a constant before the accountant or the
mechanism reads it (``prob = 0.01`` after ``def __init__(self, prob, …)``; ``compute_epsilon(num_compositions=1000)``
in a function given ``steps``)."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, number, param_names, walk, words
from dpcheck.analysis.vocabulary import ACCOUNTANT_CALL
from dpcheck.rule import Rule

#: words of a parameter that sets the privacy of what the function builds or reports
_PRIVACY_PIECES = frozenset({"prob", "probability", "sigma", "multiplier", "epsilon", "delta", "sensitivity",
                             "steps", "niter", "compositions", "sampling", "sample"})
_PRIVACY_NAMES = frozenset({"q", "eps", "mu", "rho", "sample_rate", "sampling_rate", "noise_scale", "clip_norm",
                            "max_grad_norm", "l2_norm_clip", "iterations", "num_iterations", "niter"})
#: words of a parameter that is no privacy parameter (learning rates, dropout, a numerical epsilon of an optimiser)
_NOT_PRIVACY = frozenset({"learning", "lr", "dropout", "decay", "momentum", "temperature", "label", "smoothing",
                          "warmup", "log", "print", "eval", "save", "test", "val", "tol", "tolerance", "init"})
#: keywords of an accountant call that count the compositions charged
_STEP_KEYWORDS = frozenset({"num_compositions", "compositions", "steps", "num_steps", "n_steps", "niter",
                            "num_iterations", "iterations", "epochs", "num_epochs", "rounds", "num_rounds", "T"})
#: parameters that carry the number of steps actually taken
_STEP_PARAMS = frozenset({"steps", "num_steps", "n_steps", "niter", "iterations", "num_iterations", "step", "epochs",
                          "num_epochs", "rounds", "num_rounds", "total_steps", "global_step", "compositions",
                          "num_compositions"})


_NUMBER_BOUND = re.compile(r"\b\w+\s*=\s*-?\d")


def _privacy_param(name: str) -> bool:
    pieces = words(name)
    if pieces & _NOT_PRIVACY:
        return False
    return name in _PRIVACY_NAMES or bool(pieces & _PRIVACY_PIECES)


def _literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


class PrivacyParameterHardcoded(Rule):
    id = "DP630"
    name = "privacy-parameter-hardcoded"
    category = "general"
    severity = "error"
    summary = ("a privacy parameter the function is given (sampling rate, σ, ε, δ, steps) is replaced by a constant "
               "before the mechanism or the accountant reads it")
    rationale = (
        "A function that builds a mechanism or reports ε from its arguments (`def __init__(self, prob, sigma, "
        "niter)`, `def get_eps(sigma, sample_rate, steps)`) promises that the guarantee is the one of those "
        "arguments. A statement that unconditionally rebinds such a parameter to a number (`prob = 0.01`, a "
        "debugging leftover) or an accountant call inside the function given a literal composition count "
        "(`compute_epsilon(num_compositions=1000)`) while the function receives the number of steps makes the "
        "accountant analyse another mechanism than the one that ran: whatever rate or step count training "
        "used, ε is the constant's, and it is too small as soon as the real rate or step count is larger. "
        "Reported: a parameter named for a privacy quantity (a rate, a probability, σ, a noise multiplier, ε, "
        "δ, a sensitivity, a step count) assigned a number as a plain statement of the function body and read "
        "afterwards; an accountant call (`compute_epsilon`, `get_privacy_spent`, …) whose step or composition "
        "keyword is a number in a function given a step-count parameter. Not reported: a default filled in "
        "under a condition (`if prob is None: prob = 0.01`), learning rates, dropout and optimiser epsilons, a "
        "literal count in a function that receives none. Fix: use the argument."
    )
    TRIGGERS = ("=",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A function with a privacy-named or step-count parameter, and a number bound to a name or a keyword."""
        if not _NUMBER_BOUND.search(facts.source):
            return False
        return any(_privacy_param(a.arg) or a.arg in _STEP_PARAMS for fn in facts.functions
                   for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs])

    VALID = (
        # (twin) the mechanism uses the rate it is given
        """
class NoisySGDMechanism(Mechanism):
    def __init__(self, prob, sigma, niter):
        self.params = {"prob": prob, "sigma": sigma, "niter": niter}
        mech = GaussianMechanism(sigma=sigma)
        sub = amplify_by_sampling(mech, prob)
        self.rdp = compose([sub], [niter])
""",
        # a default filled in under a condition
        """
def subsampled_gaussian(sigma, prob=None, niter=1):
    if prob is None:
        prob = 0.01
    return compose([amplify_by_sampling(GaussianMechanism(sigma), prob)], [niter])
""",
        # (twin) the PRV accountant charged the steps the function is given
        """
from prv_accountant import Accountant
def prv_epsilon(sigma, sample_rate, steps, delta):
    acc = Accountant(noise_multiplier=sigma, sampling_probability=sample_rate, delta=delta, max_compositions=steps)
    return acc.compute_epsilon(num_compositions=steps)
""",
        # a literal step count in a function that receives none (a fixed experiment)
        """
def demo_epsilon(sigma, sample_rate, delta):
    return compute_epsilon(noise_multiplier=sigma, q=sample_rate, steps=1000, delta=delta)
""",
        # ordinary ML code: a numerical epsilon and a learning rate rebound, no accountant
        """
import torch
def make_optimizer(params, lr, eps, weight_decay):
    lr = 0.001
    return torch.optim.Adam(params, lr=lr, eps=eps, weight_decay=weight_decay)
""",
        # ordinary ML code: a dropout probability reset for evaluation
        """
def build(model, dropout_prob, eval_mode):
    dropout_prob = 0.0
    return model.with_dropout(dropout_prob)
""",
    )
    INVALID = (
        # the sampling probability the mechanism is given is overwritten by a constant
        """
class NoisySGDMechanism(Mechanism):
    def __init__(self, prob, sigma, niter):
        self.params = {"prob": prob, "sigma": sigma, "niter": niter}
        mech = GaussianMechanism(sigma=sigma)
        prob = 0.01  # <-
        sub = amplify_by_sampling(mech, prob)
        self.rdp = compose([sub], [niter])
""",
        # a δ parameter replaced before the accountant reads it
        """
def report_epsilon(accountant, target_delta):
    target_delta = 1e-5  # <-
    return accountant.get_epsilon(delta=target_delta)
""",
        # the PRV accountant charged 1000 compositions whatever steps were taken
        """
from prv_accountant import Accountant
def prv_epsilon(sigma, sample_rate, steps, delta):
    acc = Accountant(noise_multiplier=sigma, sampling_probability=sample_rate, delta=delta, max_compositions=steps)
    return acc.compute_epsilon(num_compositions=1000)  # <-
""",
        # a tf-privacy statement in a helper given the epochs trained, charging a fixed 20
        """
from tensorflow_privacy import compute_dp_sgd_privacy
def report(n_train, batch_size, sigma, epochs, delta):
    return compute_dp_sgd_privacy(n=n_train, batch_size=batch_size, noise_multiplier=sigma, epochs=20, delta=delta)  # <-
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if not isinstance(node.body, cst.IndentedBlock):
            return
        params = param_names(node)
        fa = self.ctx.analysis
        privacy = {p for p in params if _privacy_param(p)}
        statements = list(node.body.body)
        for i, statement in enumerate(statements):
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name) and _literal(small.value)):
                    continue
                name = small.targets[0].target.value
                if name not in privacy:
                    continue
                later = [n for s in statements[i + 1:] for n in walk(s, into_scopes=False)
                         if isinstance(n, cst.Name) and n.value == name]
                if not later:
                    continue
                self.report(small, f"`{name}` is a parameter of `{node.name.value}`, and this statement replaces it "
                                   f"by `{fa.code(small.value).strip()}` before it is read: the mechanism or "
                                   f"accountant built below uses the constant, not the {name} it was given, so the "
                                   "ε it stands for is another mechanism's; use the argument")
        steps = [p for p in params if p in _STEP_PARAMS]
        if not steps:
            return
        for call in walk(node.body, into_scopes=False):
            if not isinstance(call, cst.Call):
                continue
            called = call_name(call)
            if not (ACCOUNTANT_CALL.match(called) or words(called) & {"epsilon", "eps"} and words(called) & {
                    "compute", "get"}):
                continue
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value in _STEP_KEYWORDS and _literal(arg.value) \
                        and (number(arg.value) or 0) > 1:
                    self.report(arg, f"`{called}` is charged `{fa.code(arg.value).strip()}` "
                                     f"{arg.keyword.value} while `{node.name.value}` is given `{steps[0]}`, the "
                                     "number of steps or epochs run: ε is reported for the constant, too small for any "
                                     f"longer run; pass `{steps[0]}`")
                    return
