"""DP656: attaching the DP machinery sits in a try whose except handler carries on, so training runs without it."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.astnames import walk as ast_walk
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: calls that wrap a model/optimizer/loader with per-example clipping and noise
_ATTACH = frozenset({"make_private", "make_private_with_epsilon", "attach", "attach_dp", "make_dp", "privatize",
                     "DPKerasSGDOptimizer", "DPKerasAdamOptimizer", "DPGradientDescentGaussianOptimizer",
                     "DPOptimizerClass", "make_keras_optimizer_class", "DPSGD", "DPAdam", "PrivacyEngine",
                     "setup_privacy", "setup_dp", "enable_dp", "add_dp", "apply_dp", "wrap_dp", "init_dp",
                     "init_privacy_engine"})
#: words of a training step that consumes the (possibly non-private) model afterwards
_TRAIN_WORDS = frozenset({"train", "fit", "step", "backward", "epoch", "update", "local"})


#: calls after which the handler stops
_EXITS = frozenset({"exit", "_exit", "abort", "fail"})


def _attaches(call: cst.Call) -> bool:
    return _attaching((call_name(call) or "").split(".")[-1])


def _attaching(name: str) -> bool:
    if name in _ATTACH:
        return True
    w = words(name)
    return bool(w & {"dp", "privacy", "private"} and w & {"attach", "make", "setup", "enable", "apply", "wrap",
                                                          "init", "add"})


def _stops(handler: cst.ExceptHandler) -> bool:
    """The handler refuses to continue: it raises, returns, exits, or skips the rest of the loop pass."""
    for n in walk(handler.body):
        if isinstance(n, (cst.Raise, cst.Return, cst.Continue, cst.Break)):
            return True
        if isinstance(n, cst.Call) and (call_name(n) or "").split(".")[-1] in _EXITS:
            return True
    return False


def _ast_stops(handler: ast.ExceptHandler) -> bool:
    """``_stops`` on CPython's tree (the called name as written, as ``_stops`` reads it)."""
    for stmt in handler.body:
        for n in ast_walk(stmt):
            if isinstance(n, (ast.Raise, ast.Return, ast.Continue, ast.Break)):
                return True
            if isinstance(n, ast.Call) and ast_call_name(n) in _EXITS:
                return True
    return False


class DpAttachFailureFallsBack(Rule):
    id = "DP656"
    name = "dp-attach-failure-falls-back"
    category = "general"
    severity = "error"
    summary = "attaching DP (make_private, a DP optimizer) is wrapped in try/except and training goes on without it"
    rationale = (
        "When `privacy_engine.make_private(...)` (or an `attach_dp` helper, a DP optimizer constructor) sits in a "
        "`try` whose `except` only prints a warning, any failure — an unsupported layer, a bad argument, a "
        "version mismatch — leaves the plain model, optimizer and loader in place, and the code that follows "
        "trains them with no clipping and no noise. The result is still aggregated, saved or reported as part "
        "of a DP run (a federated client averaged into the global model whose ε is computed from the other "
        "clients). Reported: such a `try` whose handler neither raises, returns, exits nor skips the rest of "
        "the pass, followed by training in the same block. Fix: let the error propagate (or `raise` in the "
        "handler), or skip the client/run and exclude it from the release; never train on after DP failed to "
        "attach."
    )
    TRIGGERS = tuple(sorted(_ATTACH)) + ("dp", "DP", "privacy")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a ``try`` whose body calls an attaching function and one of whose handlers carries on,
        in a file that calls a training step."""
        if not any(words(n) & _TRAIN_WORDS for call in facts.calls for n in facts.call_lasts(call)):
            return False
        for node in facts.nodes(ast.Try):
            if not any(isinstance(c, ast.Call) and any(_attaching(n) for n in facts.call_lasts(c))
                       for stmt in node.body for c in ast_walk(stmt)):  # type: ignore[attr-defined]
                continue
            if any(not _ast_stops(h) for h in node.handlers):  # type: ignore[attr-defined]
                return True
        return False

    VALID = (
        # the failure is fatal: the handler re-raises
        """
def run_client(model, optimizer, loader, engine, sigma, clip):
    try:
        model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                       noise_multiplier=sigma, max_grad_norm=clip)
    except Exception as err:
        print("could not attach DP", err)
        raise
    for epoch in range(3):
        train_epoch(model, loader, optimizer)
""",
        # the client is skipped when DP cannot be attached
        """
def federated_round(clients, sigma, clip):
    updates = []
    for c in clients:
        try:
            c.model, c.opt, c.loader = attach_dp(c.model, c.opt, c.loader, sigma, clip)
        except RuntimeError:
            log.warning("client %s skipped: DP unavailable", c.cid)
            continue
        updates.append(local_train(c))
    return average(updates)
""",
        # attach without try: an error stops the run
        """
def run(model, optimizer, loader, engine):
    model, optimizer, loader = engine.make_private_with_epsilon(module=model, optimizer=optimizer,
        data_loader=loader, target_epsilon=3.0, target_delta=1e-5, epochs=5, max_grad_norm=1.0)
    fit(model, optimizer, loader, epochs=5)
""",
        # ordinary ML: an optional compile step in a try, nothing about privacy
        """
import torch
def prepare(model, loader, opt):
    try:
        model = torch.compile(model)
    except Exception:
        print("compile failed, running eagerly")
    for batch in loader:
        opt.zero_grad()
        model(batch).mean().backward()
        opt.step()
""",
    )

    INVALID = (
        # a federated client: the warning says it continues without DP and then trains
        """
def client_update(local_model, optimizer, loader, args):
    if args.dp:
        try:
            local_model, optimizer, loader, engine = attach_dp(local_model, optimizer, loader,
                                                               noise_multiplier=args.noise, max_grad_norm=args.clip)
        except Exception as e:  # <-
            print("DP attach failed, continuing without DP", e)
    for epoch in range(args.local_epochs):
        train_one_epoch(local_model, loader, optimizer)
    return local_model.state_dict()
""",
        # Opacus engine in a try; the handler only logs, then fit runs on the plain objects
        """
from opacus import PrivacyEngine
def train_private(model, optimizer, loader, epochs, sigma):
    engine = PrivacyEngine()
    try:
        model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                                                       noise_multiplier=sigma, max_grad_norm=1.0)
    except ValueError as exc:  # <-
        logger.warning("opacus refused the model: %s", exc)
    fit(model, optimizer, loader, epochs)
    return engine
""",
        # TF Privacy optimizer built in a try; a bare except falls back to plain Adam
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasAdamOptimizer
def build_and_train(model, x, y, clip, z):
    try:
        opt = DPKerasAdamOptimizer(l2_norm_clip=clip, noise_multiplier=z, num_microbatches=1, learning_rate=1e-3)
    except:  # <-
        opt = tf.keras.optimizers.Adam(1e-3)
    model.compile(optimizer=opt, loss="mse")
    model.fit(x, y, epochs=5)
""",
        # a DP setup helper on a trainer object, the failure only flips a flag
        """
class Trainer:
    def run(self):
        try:
            self.setup_privacy(self.cfg.epsilon, self.cfg.delta)
        except Exception:  # <-
            self.private = False
        for step in range(self.cfg.steps):
            self.train_step()
""",
    )

    def visit_Try(self, node: cst.Try) -> None:
        if not any(isinstance(n, cst.Call) and _attaches(n) for n in walk(node.body)):
            return
        handlers = [h for h in node.handlers if not _stops(h)]
        if not handlers:
            return
        fa = self.ctx.analysis
        cur: cst.CSTNode | None = node
        found = False
        for _ in range(6):
            if cur is None or isinstance(cur, (cst.FunctionDef, cst.ClassDef)):
                break
            blk = fa.parent(cur)
            if isinstance(blk, (cst.IndentedBlock, cst.Module)):
                stmts = list(blk.body)
                if cur in stmts and any(self._trains(s) for s in stmts[stmts.index(cur) + 1:]):
                    found = True
                    break
                cur = fa.parent(blk)
            else:
                cur = blk
        if not found:
            return
        self.report(handlers[0], "if attaching DP fails here the handler only carries on, and the training below "
                                 "then runs on the plain model and optimizer with no clipping or noise while the "
                                 "run is still counted as private; re-raise (or skip this client/run and leave it "
                                 "out of the release)")

    @staticmethod
    def _trains(stmt: cst.CSTNode) -> bool:
        return any(isinstance(n, cst.Call) and words((call_name(n) or "").split(".")[-1]) & _TRAIN_WORDS
                   for n in walk(stmt))
