"""DP315: the clipping or noise sits in a branch whose test the loop around it never satisfies."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: identifiers that make a block the private step: its clipping or its noise
_DP_WORDS = frozenset({"clip", "clipped", "clipping", "noise", "noisy", "laplace", "gaussian", "sigma",
                       "sensitivity", "privatize", "privatise", "perturb", "perturbed"})


def _loop_end(loop: cst.For) -> tuple[str, cst.BaseExpression] | None:
    """``for v in range(E)`` / ``range(s, E)`` -> (v, E); ``for v, x in enumerate(X)`` -> (v, ``len(X)``)
    as the text ``len(X)`` (matched by code below)."""
    it = loop.iter
    if not isinstance(it, cst.Call) or not it.args or any(a.keyword is not None or a.star for a in it.args):
        return None
    if call_name(it) == "range" and len(it.args) in (1, 2) and isinstance(loop.target, cst.Name):
        return loop.target.value, it.args[-1].value
    if call_name(it) == "enumerate" and len(it.args) == 1 and isinstance(loop.target, cst.Tuple) \
            and loop.target.elements and isinstance(loop.target.elements[0].value, cst.Name):
        return loop.target.elements[0].value.value, it.args[0].value
    return None


def _dp_block(block: cst.CSTNode) -> bool:
    for node in walk(block):
        if isinstance(node, cst.Call) and call_name(node) in PURE_DRAWS:
            return True
        if isinstance(node, cst.Name) and words(node.value) & _DP_WORDS:
            return True
    return False


def _clips(block: cst.CSTNode) -> bool:
    """A per-update clipping: a clip-named value and a norm computed in the block (without DP words in the
    file, the repository may still be DP: an update clipped to a norm is its private step)."""
    names = {n.value for n in walk(block) if isinstance(n, cst.Name)}
    return any(words(n) & {"clip", "clipped", "clipping"} for n in names) and any(
        isinstance(n, cst.Call) and call_name(n) == "norm" for n in walk(block))


class DpBranchNeverRuns(Rule):
    id = "DP315"
    name = "dp-branch-never-runs"
    category = "general"
    severity = "error"
    summary = "the clipping or noise is guarded by `if i == N` inside `for i in range(N)`, which never holds: no DP step runs"
    rationale = (
        "`range(N)` yields 0 … N−1 and `enumerate(xs)` yields 0 … len(xs)−1, so a test "
        "`i == N` (or `i >= N`, `i == len(xs)`) on the loop's own counter is never true inside the loop. "
        "When that branch holds the per-update clipping or the noise (a Gaussian or Laplace draw, "
        "`clip…`/`noise…` names), the code trains and returns the plain, unclipped, noise-free "
        "model while the run is presented as differentially private. Reported: the `if` whose test "
        "compares the counter of an enclosing `for … in range(…)`/`enumerate(…)` loop with the loop's "
        "exclusive end, and whose body clips or adds noise. Not reported: `i == N - 1` (the last pass), "
        "a test on another variable, a branch without DP work, code with no DP context. Fix: test "
        "`i == N - 1` (or move the private step after the loop) and check that the noise is applied."
    )
    TRIGGERS = ("==", ">=")
    #: a clipped update in the dead branch is enough evidence (the DP words may live in other modules)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A ``for`` over ``range``/``enumerate`` and a comparison, in a file with DP words."""
        return bool(facts.called & {"range", "enumerate"}) and any(
            isinstance(op, (ast.Eq, ast.GtE)) for cmp in facts.nodes(ast.Compare) for op in cmp.ops)  # type: ignore[attr-defined]

    VALID = (
        # twin: the last local epoch is N - 1
        """
import torch
def update(model, loader, local_ep, clip, sigma):
    for it in range(local_ep):
        train_one_epoch(model, loader)
        if it == local_ep - 1:
            for p in model.parameters():
                p.grad = p.grad / max(1.0, p.grad.norm() / clip) + torch.normal(0, sigma * clip, p.grad.shape)
    return model.state_dict()
""",
        # twin: the private step after the loop
        """
import numpy as np
def release(values, rounds, scale):
    total = 0.0
    for r in range(rounds):
        total += values[r]
    return total + np.random.laplace(0, scale)
""",
        # a test on another counter
        """
import numpy as np
def train(batches, epochs, sigma, every):
    step = 0
    for e in range(epochs):
        step += 1
        if step == every:
            noise = np.random.normal(0, sigma)
            step = 0
    return e
""",
        # the branch at the end of an enumeration, without DP work
        """
import numpy as np
def log_all(batches, epsilon):
    for i, b in enumerate(batches):
        if i == len(batches):
            print("done", epsilon)
    return np.mean(batches)
""",
    )

    INVALID = (
        # the local clipping and noise guarded by the loop's exclusive end
        """
import torch
def update(model, loader, local_ep, clip, sigma):
    for it in range(local_ep):
        train_one_epoch(model, loader)
        if it == local_ep:  # <-
            for p in model.parameters():
                p.grad = p.grad / max(1.0, p.grad.norm() / clip) + torch.normal(0, sigma * clip, p.grad.shape)
    return model.state_dict()
""",
        # the noise added at the "last" batch of an enumeration
        """
import numpy as np
def dp_sum(batches, epsilon, sensitivity):
    total = 0.0
    for i, b in enumerate(batches):
        total += float(np.clip(b, 0, 1).sum())
        if i == len(batches):  # <-
            total += np.random.laplace(0, sensitivity / epsilon)
    return total
""",
        # range(start, end) and a >= test: never reached either
        """
import tensorflow as tf
def local_train(weights, grads_fn, start, rounds, noise_multiplier, l2_clip):
    for r in range(start, rounds):
        grads = grads_fn(weights)
        if r >= rounds:  # <-
            grads = tf.clip_by_global_norm(grads, l2_clip)[0]
            grads = [g + tf.random.normal(tf.shape(g), stddev=noise_multiplier * l2_clip) for g in grads]
        weights = [w - 0.1 * g for w, g in zip(weights, grads)]
    return weights
""",
        # an attribute bound
        """
import numpy as np
class Client:
    def update(self, w, data):
        for epoch in range(self.args.local_ep):
            w = self.sgd(w, data)
            if epoch == self.args.local_ep:  # <-
                w = w + np.random.laplace(0, self.sensitivity / self.epsilon, w.shape)
        return w
""",
    )

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return
        op = test.comparisons[0].operator
        if not isinstance(op, (cst.Equal, cst.GreaterThanEqual)):
            return
        fa = self.ctx.analysis
        left, right = test.left, test.comparisons[0].comparator
        for loop in fa.ancestors(node):
            if isinstance(loop, (cst.FunctionDef, cst.ClassDef)):
                return
            if not isinstance(loop, cst.For):
                continue
            bound = _loop_end(loop)
            if bound is None:
                continue
            var, end = bound
            if not (isinstance(left, cst.Name) and left.value == var):
                continue
            enumerated = call_name(loop.iter) == "enumerate"
            end_code = fa.code(end).strip()
            matches = fa.code(right).strip() == end_code if not enumerated else (
                isinstance(right, cst.Call) and call_name(right) == "len" and len(right.args) == 1
                and fa.code(right.args[0].value).strip() == end_code)
            if not matches or not _dp_block(node.body):
                continue
            if not (fa.in_dp_context(node) or _clips(node.body)):
                continue
            self.report(node, f"`{fa.code(test).strip()}` never holds inside `for {var} in "
                              f"{fa.code(loop.iter).strip()}` (the counter stops one short of the end), so the "
                              "clipping / noise in this branch never runs: the update is released unclipped and "
                              "noise-free while the run is presented as private; test the last pass "
                              "(`== end - 1`) or move the private step after the loop")
            return
