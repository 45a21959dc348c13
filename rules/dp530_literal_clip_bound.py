"""DP530: a hand-written per-example clip factor uses a literal bound while the module configures the clip bound
(a flag, an argument) that the optimizer, the noise or the report refers to."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import is_clip_bound, is_norm_value
from dpcheck.analysis.syntax import call_name, number, string_text, undotted, walk, words
from dpcheck.rule import Rule

_MAXIMUM = frozenset({"maximum", "max"})
_MINIMUM = frozenset({"minimum", "min"})
#: calls that declare a configurable value (absl flags, argparse, click)
_DECLARE = frozenset({"DEFINE_float", "DEFINE_integer", "DEFINE_string", "add_argument", "option"})


def _last(call: cst.Call) -> str:
    return call_name(call).split(".")[-1]


def _literal_ratio(expr: cst.BaseExpression, norm_side: str) -> float | None:
    """``norm / 2.0`` (norm_side='left') or ``2.0 / norm`` (norm_side='right'): the literal."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)):
        return None
    norm, lit = (expr.left, expr.right) if norm_side == "left" else (expr.right, expr.left)
    value = number(lit)
    if value is None or value <= 0 or not is_norm_value(norm):
        return None
    return value


class LiteralClipBound(Rule):
    id = "DP530"
    name = "literal-clip-bound"
    category = "general"
    severity = "error"
    summary = ("a hand-written per-example clip factor (`1 / max(‖g‖ / 2.0, 1)`, `min(1, 2.0 / ‖g‖)`) uses a literal "
               "bound while the module configures the clip bound it reports")
    rationale = (
        "DP-SGD's sensitivity is the bound each example's gradient is clipped to, and the noise σ·C and the ε the "
        "accountant reports refer to the configured C (`--l2_norm_clip`, `max_grad_norm=`). A hand-written clip "
        "factor with the bound typed in as a literal (`tf.maximum(global_norm / 2.0, 1.)`, `min(1, 1.0 / norm)`) "
        "does not follow that configuration: change the flag and the clipping stays at the literal, so the noise, "
        "the optimizer and the report no longer describe the clipping that ran. Reported: the factor "
        "`max(‖g‖ / c, 1)` or `min(1, c / ‖g‖)` with c a number, in a module that declares a clip-bound flag or "
        "argument (`flags.DEFINE_float('l2_norm_clip', …)`, `add_argument('--max_grad_norm')`) or passes a "
        "non-literal clip bound (`l2_norm_clip=FLAGS.l2_norm_clip`). Not reported: the factor with a named bound "
        "(`max(norm / clip, 1)`), modules with no configured bound (a literal C used consistently), "
        "`clip_grad_norm_(…, 1.0)` for ordinary training stability. Fix: use the configured bound in the factor."
    )
    TRIGGERS = ("norm",)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return True

    VALID = (
        # the helper is handed the configured bound
        """
import tensorflow as tf
from absl import flags
flags.DEFINE_float("l2_norm_clip", 1.0, "clip")
FLAGS = flags.FLAGS
def clip_all(grads, l2_norm_clip):
    norm = tf.linalg.global_norm(grads)
    return [g / tf.maximum(norm / l2_norm_clip, 1.0) for g in grads]
def train_step(per_example_grads, sigma):
    clipped = tf.vectorized_map(lambda g: clip_all(g, FLAGS.l2_norm_clip), per_example_grads)
    return clipped, sigma * FLAGS.l2_norm_clip
""",
        # min(1, C / norm) with the configured C
        """
import numpy as np
def train(engine_cls, per_example, sigma, cfg):
    engine = engine_cls(clip_norm=cfg.clip_norm, noise_multiplier=sigma)
    norms = np.linalg.norm(per_example, axis=1)
    factor = np.minimum(1.0, cfg.clip_norm / norms)
    return engine.noise((per_example * factor[:, None]).sum(0))
""",
        # batch-norm / Adam eps and a diffusion noise schedule beside a configured clip: no clip factor
        """
import argparse, torch
parser = argparse.ArgumentParser()
parser.add_argument("--max_grad_norm", type=float, default=1.0)
def schedule(t, norm_layer):
    bn = torch.nn.BatchNorm1d(8, eps=1e-5)
    beta = torch.clamp(torch.tensor(t / 1000.0), max=0.02)
    return bn, beta, max(norm_layer / 4.0, 0.5)
""",
        # the factor uses the configured bound
        """
import tensorflow as tf
from absl import flags
flags.DEFINE_float("l2_norm_clip", 1.0, "clip")
FLAGS = flags.FLAGS
def clip_factor(grads):
    global_norm = tf.norm(tf.concat([tf.reshape(tf.norm(g), [1]) for g in grads], axis=0))
    return tf.math.reciprocal(tf.maximum(global_norm / FLAGS.l2_norm_clip, 1.0))
""",
        # a literal bound in a script that configures no clip bound: the literal is the bound
        """
import torch
def clip_per_example(grads, sigma):
    norms = grads.flatten(1).norm(dim=1)
    factor = torch.clamp(1.0 / norms, max=1.0)
    noise = torch.randn_like(grads[0]) * sigma * 1.0
    return (grads * factor[:, None]).sum(0) + noise
""",
        # ordinary training: gradient-norm clipping for stability beside an argparse clip for the DP run
        """
import argparse, torch
parser = argparse.ArgumentParser()
parser.add_argument("--max_grad_norm", type=float, default=1.0)
def step(model, loss, opt):
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
    opt.step()
""",
        # Huber-like loss margin, a max of a ratio that is not a gradient norm
        """
import argparse, numpy as np
parser = argparse.ArgumentParser()
parser.add_argument("--clip", type=float, default=1.0)
def huber_weight(residual, delta=1.0):
    return np.minimum(1.0, 1.5 / np.abs(residual))
""",
    )

    INVALID = (
        # a clipping helper handed a literal bound while the flag goes to the report
        """
import tensorflow as tf
from absl import flags
flags.DEFINE_float("l2_norm_clip", 1.0, "clip")
FLAGS = flags.FLAGS
def clip_all(grads, l2_norm_clip):
    norm = tf.linalg.global_norm(grads)
    return [g / tf.maximum(norm / l2_norm_clip, 1.0) for g in grads]
def train_step(per_example_grads, sigma):
    clipped = tf.vectorized_map(lambda g: clip_all(g, 3.0), per_example_grads)  # <-
    return clipped, sigma * FLAGS.l2_norm_clip
""",
        # min(1, c / norm) with a literal c beside a clip_norm keyword handed to the engine
        """
import numpy as np
def train(engine_cls, per_example, sigma, cfg):
    engine = engine_cls(clip_norm=cfg.clip_norm, noise_multiplier=sigma)
    norms = np.linalg.norm(per_example, axis=1)
    factor = np.minimum(1.0, 0.5 / norms)  # <-
    return engine.noise((per_example * factor[:, None]).sum(0))
""",
        # the configured flag goes to the optimizer; the hand-written factor clips to 2.0
        """
import tensorflow as tf
from absl import flags
flags.DEFINE_float("l2_norm_clip", 1.0, "clip")
FLAGS = flags.FLAGS
def make_opt(opt_cls):
    return opt_cls(l2_norm_clip=FLAGS.l2_norm_clip, noise_multiplier=1.1)
def clip_factor(grads):
    global_norm = tf.norm(tf.concat([tf.reshape(tf.norm(g), [1]) for g in grads], axis=0))
    return tf.math.reciprocal(tf.maximum(global_norm / 2.0, 1.0))  # <-
""",
        # argparse bound, but the per-sample factor is min(1, 1.0 / norm)
        """
import argparse, torch
parser = argparse.ArgumentParser()
parser.add_argument("--max_grad_norm", type=float, default=4.0)
def private_grad(per_sample, sigma, args):
    grad_norm = per_sample.flatten(1).norm(dim=1)
    scale = torch.minimum(torch.ones_like(grad_norm), 1.0 / grad_norm)  # <-
    noise = torch.randn_like(per_sample[0]) * sigma * args.max_grad_norm
    return (per_sample * scale[:, None]).sum(0) + noise
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._configured = self._configured_bound(node)
        self._helpers = self._clip_params(node) if self._configured else {}

    @staticmethod
    def _configured_bound(module: cst.Module) -> str | None:
        for sub in walk(module):
            if not isinstance(sub, cst.Call):
                continue
            if _last(sub) in _DECLARE and sub.args:
                first = sub.args[0].value
                if isinstance(first, (cst.SimpleString, cst.ConcatenatedString)):
                    text = string_text(first).lstrip("-")
                    option = undotted(text.replace("-", "_"))
                    if option is not None and is_clip_bound(option) and not words(text) & {"value", "grad"}:
                        return text
                    if words(text) >= {"clip"} or text in ("max_grad_norm", "l2_norm_clip", "clip_norm"):
                        return text
            for a in sub.args:
                if a.keyword is not None and a.keyword.value in ("l2_norm_clip", "max_grad_norm", "clip_norm",
                                                                 "clipping_norm") and number(a.value) is None:
                    return a.keyword.value
        return None

    def _clip_params(self, module: cst.Module) -> dict[str, int]:
        """Module functions taking the clip bound as a parameter: name -> its position."""
        out: dict[str, int] = {}
        for sub in walk(module):
            if isinstance(sub, cst.FunctionDef):
                for i, p in enumerate(sub.params.params):
                    if p.name.value not in ("clip", "C") and is_clip_bound(p.name):
                        out[sub.name.value] = i
                        break
        return out

    def visit_Call(self, node: cst.Call) -> None:
        if not self._configured:
            return
        last = _last(node)
        if last in self._helpers:
            position = self._helpers[last]
            args = [a.value for a in node.args if a.keyword is None]
            given = args[position] if position < len(args) else None
            if given is not None and number(given) is not None and number(given) > 0:
                self.report(node, f"the clip bound of `{last}` is given as the literal {number(given):g}, while the "
                                  f"module configures the clip bound `{self._configured}` that the optimizer/noise/"
                                  "report use: the sensitivity that ran is not the one accounted; pass the "
                                  "configured bound")
            return
        args = [a.value for a in node.args if a.keyword is None]
        if len(args) != 2:
            return
        literal = None
        if last in _MAXIMUM:
            for ratio, one in ((args[0], args[1]), (args[1], args[0])):
                if number(one) == 1.0:
                    literal = _literal_ratio(ratio, "left")
                    if literal is not None:
                        break
        elif last in _MINIMUM:
            for ratio, one in ((args[0], args[1]), (args[1], args[0])):
                if number(one) == 1.0 or isinstance(one, cst.Call) and _last(one) in ("ones_like", "ones"):
                    literal = _literal_ratio(ratio, "right")
                    if literal is not None:
                        break
        if literal is None:
            return
        self.report(node, f"this per-example clip factor clips to the literal {literal:g}, while the module configures "
                          f"the clip bound `{self._configured}` that the optimizer/noise/report use: the sensitivity "
                          "that ran is not the one accounted; use the configured bound here")
