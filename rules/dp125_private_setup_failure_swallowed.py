"""DP125: a failure of the private setup or training is caught and the run goes on without privacy."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts

from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: keyword arguments that carry the privacy mechanism's parameters
_DP_KEYWORDS = frozenset({"sigma", "noise_multiplier", "noise_scale", "noise_std", "epsilon", "target_epsilon",
                          "target_eps", "eps", "max_grad_norm", "l2_norm_clip", "clip_norm", "clipping_norm",
                          "target_delta", "dp_epsilon", "privacy_budget", "noise"})
#: words of calls (or of the objects they build) that set privacy up
_DP_CALL_WORDS = frozenset({"private", "privacy", "dp", "privatize", "privatise", "accountant"})
#: words of a target that, set to None / False, turn privacy off
_DP_TARGET_WORDS = frozenset({"privacy", "private", "dp", "engine", "accountant", "noise"})
_EXITS = frozenset({"exit", "quit", "abort", "_exit"})


def _off(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value in ("None", "False")


def _dp_call(call: cst.Call) -> bool:
    """A call given a privacy parameter (not None), or one whose name says it sets privacy up."""
    if any(a.keyword is not None and a.keyword.value in _DP_KEYWORDS and not _off(a.value) for a in call.args):
        return True
    return bool(words(call_name(call).split(".")[-1]) & _DP_CALL_WORDS)


def _plain_twin(call: cst.Call, dp: cst.Call) -> bool:
    """``call`` is the same callee as ``dp`` without its privacy keywords (missing, None or False)."""
    if call_name(call) != call_name(dp) or dotted(call.func) != dotted(dp.func):
        return False  # another object's ``fit`` (a model trained inside a private context) is not a retry
    keys = {a.keyword.value for a in dp.args if a.keyword is not None and a.keyword.value in _DP_KEYWORDS
            and not _off(a.value)}
    if not keys:
        return False
    given = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    values = {dotted(a.value) for a in dp.args if a.keyword is not None and a.keyword.value in keys} - {None}
    passed = {dotted(n) for a in call.args for n in walk(a.value) if isinstance(n, (cst.Name, cst.Attribute))}
    if values & passed:
        return False  # the same noise parameters passed positionally (another signature), not dropped
    return all(k not in given or _off(given[k]) for k in keys)


class PrivateSetupFailureSwallowed(Rule):
    id = "DP125"
    name = "private-setup-failure-swallowed"
    category = "general"
    severity = "error"
    summary = ("an exception from the private setup or training is caught and the run continues without privacy "
               "(the engine set to None, or the same call retried without its noise parameters)")
    rationale = (
        "When attaching the privacy engine, or calling the trainer with its noise parameters, fails and the "
        "handler turns privacy off (`self.privacy_engine = None`, `use_dp = False`) or retries the call without "
        "`sigma` / `noise_multiplier` / `epsilon`, the run completes non-privately, yet its outputs, metrics and "
        "reports keep the ε they were configured with (or print ε = 0). Nothing tells the reader that the "
        "guarantee silently vanished. Reported: a `try` whose body makes such a call, and a handler that does not "
        "re-raise or exit and either sets a privacy object or flag to None / False or makes the same call without "
        "the privacy keywords (in the handler or after the `try`). Not reported: optional imports, handlers that "
        "raise or exit. Fix: let the failure propagate (or stop the run) instead of continuing without noise."
    )
    TRIGGERS = ("except",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a ``try`` and a call given a privacy keyword or named for privacy."""
        if not any(isinstance(n, ast.Try) for n in ast.walk(facts.tree)):
            return False
        return bool(facts.identifiers & _DP_KEYWORDS) or any(words(n) & _DP_CALL_WORDS for n in facts.called)

    VALID = (
        # the failure propagates
        """
import logging
def setup(engine_cls, model, optimizer, loader, target_epsilon):
    try:
        return engine_cls().make_private_with_epsilon(module=model, optimizer=optimizer, data_loader=loader,
                                                      target_epsilon=target_epsilon, target_delta=1e-5, epochs=1)
    except Exception as exc:
        logging.error("privacy setup failed: %s", exc)
        raise
""",
        # an optional import
        """
try:
    from opacus import PrivacyEngine
except ImportError:
    PrivacyEngine = None
""",
        # the retry keeps the noise parameters (an older signature)
        """
def run(trainer, data, sigma):
    try:
        return trainer.train(data=data, sigma=sigma, sample_rate=0.01)
    except TypeError:
        pass
    return trainer.train(data=data, sigma=sigma)
""",
        # a tutorial: the failing call is shown, then another model is fitted inside the private optimizer's context
        """
def demo(bolt, model, optimizer, x, y, epsilon):
    try:
        bolt.fit(x, y, epsilon=epsilon, n_samples=None)
    except ValueError as err:
        print(err)
    with optimizer(epsilon=epsilon) as _:
        model.fit(x, y, epochs=2)
""",
        # a signature fallback that passes the same noise parameters positionally
        """
def statement(compute, n, batch, epochs, noise_multiplier, delta):
    try:
        return compute(number_of_examples=n, batch_size=batch, num_epochs=epochs,
                       noise_multiplier=noise_multiplier, delta=delta)
    except TypeError:
        return compute(n, batch, epochs, noise_multiplier, delta)
""",
        # the handler stops the run
        """
import sys
def start(model, noise_multiplier, make_private):
    try:
        model = make_private(model, noise_multiplier=noise_multiplier)
    except RuntimeError:
        sys.exit("DP setup failed")
    return model
""",
    )
    INVALID = (
        # the engine dropped on failure
        """
class Client:
    def __init__(self, engine_cls, model, loader, target_epsilon):
        try:
            self.dp_engine = engine_cls(model, loader, target_epsilon=target_epsilon, max_grad_norm=1.0)
        except Exception:
            print("continuing without DP")
            self.dp_engine = None  # <-
""",
        # the trainer retried with the noise switched off
        """
def fit(trainer, table, noise_multiplier):
    try:
        return trainer.train(table, noise_multiplier=noise_multiplier)
    except TypeError:
        pass
    return trainer.train(table, noise_multiplier=None)  # <-
""",
        # retried without the privacy keywords inside the handler
        """
def train_synth(model, data, eps):
    try:
        model.fit(data, epsilon=eps)
    except ValueError:
        model.fit(data)  # <-
    return model
""",
        # a flag turned off
        """
def prepare(model, optimizer, engine, clip):
    use_dp = True
    try:
        model, optimizer = engine.make_private(model, optimizer, max_grad_norm=clip)
    except AttributeError:
        use_dp = False  # <-
    return model, optimizer, use_dp
""",
    )

    def visit_Try(self, node: cst.Try) -> None:
        dps = [c for c in walk(node.body) if isinstance(c, cst.Call) and _dp_call(c)]
        if not dps:
            return
        for handler in node.handlers:
            if any(isinstance(n, cst.Raise) for n in walk(handler.body)) or any(
                    isinstance(n, cst.Call) and call_name(n).split(".")[-1] in _EXITS for n in walk(handler.body)):
                continue
            site = self._off_in_handler(handler) or self._plain_retry(handler.body, dps)
            if site is None and self._passes(handler):
                site = self._retry_after(node, dps)
            if site is not None:
                self.report(
                    site,
                    "a failure of the private setup / training is caught and the run continues without privacy "
                    "(no noise), while its results keep the configured ε; let the error propagate or stop the run",
                )
                return

    @staticmethod
    def _off_in_handler(handler: cst.ExceptHandler) -> cst.CSTNode | None:
        for n in walk(handler.body):
            if isinstance(n, cst.Assign) and _off(n.value) and any(
                    words((dotted(t.target) or "").split(".")[-1]) & _DP_TARGET_WORDS for t in n.targets):
                return n
        return None

    @staticmethod
    def _plain_retry(body: cst.CSTNode, dps: list[cst.Call]) -> cst.CSTNode | None:
        for n in walk(body):
            if isinstance(n, cst.Call) and any(_plain_twin(n, dp) for dp in dps):
                return n
        return None

    @staticmethod
    def _passes(handler: cst.ExceptHandler) -> bool:
        """The handler only passes, continues or logs."""
        for stmt in walk(handler.body):
            if isinstance(stmt, (cst.Return, cst.Assign, cst.AugAssign, cst.Break)):
                return False
        return True

    def _retry_after(self, node: cst.Try, dps: list[cst.Call]) -> cst.CSTNode | None:
        parent = self.ctx.analysis.parent(node)
        body = getattr(parent, "body", None)
        if not isinstance(body, (list, tuple)):
            return None
        after = False
        for stmt in body:
            if stmt is node:
                after = True
                continue
            if after:
                site = self._plain_retry(stmt, dps)
                if site is not None:
                    return site
        return None
