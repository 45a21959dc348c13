"""DP129: gradient noise drawn with a literal std while the accountant is run with a configured noise multiplier."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.syntax import call_name, last_name, number, walk, words
from dpcheck.rule import Rule

#: Gaussian draws and where their standard deviation sits (keyword names; positional index)
_DRAWS = {"normal": (("stddev", "scale", "std"), 1), "gauss": (("sigma",), 1)}
_MULTIPLIER_WORDS = frozenset({"multiplier", "noise_multiplier", "sigma", "z"})
_GRAD_WORDS = frozenset({"grad", "grads", "gradient", "gradients"})


def _literal(expr: cst.BaseExpression | None) -> float | None:
    """The value of a literal or of arithmetic of literals (``2.0 * 0.5``)."""
    if expr is None:
        return None
    value = number(expr)
    if value is not None:
        return value
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        left, right = _literal(expr.left), _literal(expr.right)
        if left is not None and right is not None:
            return left * right if isinstance(expr.operator, cst.Multiply) else (left / right if right else None)
    return None


def _multiplier_name(name: str | None) -> bool:
    return name is not None and ("noise_multiplier" in name.lower() or {"noise", "multiplier"} <= words(name))


def _reads_multiplier(node: cst.CSTNode) -> bool:
    return any(isinstance(n, (cst.Name, cst.Attribute)) and _multiplier_name(last_name(n)) for n in walk(node))


class LiteralStdBesideAccountedMultiplier(Rule):
    id = "DP129"
    name = "literal-std-beside-accounted-multiplier"
    category = "general"
    severity = "error"
    summary = ("gradient noise is drawn with a literal standard deviation while the privacy accountant is run "
               "with the configured noise multiplier")
    rationale = (
        "DP-SGD's guarantee is computed by an accountant from the noise multiplier z (and the sampling rate): "
        "`compute_rdp(q, noise_multiplier=FLAGS.noise_multiplier, ...)`. The noise actually added to the summed "
        "clipped gradients must then be N(0, (z·C)²). A hand-written noise step whose std is a literal "
        "(`noise_stddev = 2.0 * 0.5`) adds the same noise whatever multiplier is configured, so the reported ε "
        "describes a different mechanism (any z above the literal's ratio to C over-states the privacy). "
        "Reported: a Gaussian draw in a function that handles gradients, whose std is a literal or a local bound "
        "only to literal arithmetic, in a module that passes a configured (non-literal) noise multiplier to a "
        "call (the accountant or an optimizer) and never reads it in that function. "
        "Not reported: a std computed from the multiplier and the clip bound, a std parameter, noise outside "
        "gradient code (augmentation, diffusion). Fix: draw with std `noise_multiplier * l2_norm_clip`."
    )
    TRIGGERS = ("noise_multiplier", "NOISE_MULTIPLIER")
    requires_dp_context = True

    VALID = (
        # twin: the std is the configured multiplier times the clip bound
        """
import tensorflow as tf
from absl import flags
FLAGS = flags.FLAGS
def compute_epsilon(steps):
    rdp = compute_rdp(q=FLAGS.batch_size / 60000, noise_multiplier=FLAGS.noise_multiplier, steps=steps, orders=[2, 4, 8])
    return get_privacy_spent([2, 4, 8], rdp, target_delta=1e-5)[0]
def add_noise(summed_gradient):
    noise_stddev = FLAGS.noise_multiplier * FLAGS.l2_norm_clip
    noise = tf.random.normal(tf.shape(input=summed_gradient), stddev=noise_stddev)
    return tf.add(summed_gradient, noise)
""",
        # the std is a parameter of the noise step: its caller calibrates it
        """
\"\"\"Differentially private SGD in numpy.\"\"\"
import numpy as np
def account(steps, args):
    return compute_rdp(q=0.01, noise_multiplier=args.noise_multiplier, steps=steps, orders=[2, 8])
def noisy_grad(grads, std):
    return grads + np.random.normal(0, std, grads.shape)
""",
        # augmentation noise with a literal std in a module that also runs DP-SGD through an optimizer
        """
import torch
def make_optimizer(model, args):
    return DPOptimizer(model.parameters(), noise_multiplier=args.noise_multiplier, max_grad_norm=1.0)
def augment(images):
    return images + torch.normal(0.0, 0.1, images.shape)
""",
        # ordinary ML code: a literal-std weight init, no accountant
        """
import numpy as np
def init_weights(shape, eps=1e-8):
    return np.random.normal(0.0, 0.02, shape) + eps
""",
    )

    INVALID = (
        # TF DP-SGD tutorial: the accountant reads the flag, the noise step a literal product
        """
import tensorflow as tf
from absl import flags
FLAGS = flags.FLAGS
def compute_epsilon(steps):
    rdp = compute_rdp(q=FLAGS.batch_size / 60000, noise_multiplier=FLAGS.noise_multiplier, steps=steps, orders=[2, 4, 8])
    return get_privacy_spent([2, 4, 8], rdp, target_delta=1e-5)[0]
def add_noise(summed_gradient):
    noise_stddev = 2.0 * 0.5
    noise = tf.random.normal(tf.shape(input=summed_gradient), stddev=noise_stddev)  # <-
    return tf.add(summed_gradient, noise)
""",
        # numpy: the accountant from args, the gradient noise hard-coded inline
        """
\"\"\"Differentially private SGD in numpy.\"\"\"
import numpy as np
def account(steps, args):
    return compute_rdp(q=0.01, noise_multiplier=args.noise_multiplier, steps=steps, orders=[2, 8])
def noisy_grad(grads, clip):
    return grads + np.random.normal(0, 0.8, grads.shape)  # <-
""",
        # torch: an accountant object built from self.noise_multiplier, the step adds std 1.5 noise
        """
import torch
class Trainer:
    def __init__(self, noise_multiplier, clip):
        self.noise_multiplier, self.clip = noise_multiplier, clip
        self.accountant = RDPAccountant(noise_multiplier=self.noise_multiplier, sample_rate=0.01)
    def step(self, model):
        for p in model.parameters():
            p.grad += torch.normal(0.0, 1.5, p.grad.shape)  # <-
""",
        # the standard normal scaled by a literal local std, in a gradient helper
        """
import numpy as np
def epsilon_spent(cfg, steps):
    return compute_dp_sgd_privacy(n=60000, batch_size=256, noise_multiplier=cfg.noise_multiplier, epochs=steps)
def private_gradient(gradient):
    sigma_noise = 4.0
    return gradient + np.random.normal(loc=0.0, scale=sigma_noise, size=gradient.shape)  # <-
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._accounted = any(
            isinstance(sub, cst.Arg) and sub.keyword is not None and _multiplier_name(sub.keyword.value)
            and _literal(sub.value) is None and _reads_multiplier(sub.value)
            for sub in walk(node))

    def visit_Call(self, node: cst.Call) -> None:
        if not getattr(self, "_accounted", False):
            return
        spec = _DRAWS.get(call_name(node) or "")
        if spec is None:
            return
        keywords, index = spec
        std: cst.BaseExpression | None = None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in keywords:
                std = arg.value
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if std is None:
            at = 2 if dotted_tf(node) else index
            std = positional[at] if len(positional) > at else None
        if std is None:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or _reads_multiplier(fn):
            return
        if not any(isinstance(n, cst.Name) and words(n.value) & _GRAD_WORDS for n in walk(fn)) \
                and not any(isinstance(n, cst.Attribute) and n.attr.value == "grad" for n in walk(fn)):
            return
        value = _literal(std)
        shown = std
        if value is None and isinstance(std, cst.Name):
            bound = fa.value_of(std)
            value = _literal(bound) if bound is not None else None
            shown = bound if bound is not None else std
        if value is None or value == 0:
            return
        self.report(node, f"gradient noise drawn with the literal std `{fa.code(shown).strip()}`, while this module "
                          f"runs its accountant (or optimizer) with a configured noise multiplier: the noise added "
                          f"does not follow the multiplier the reported ε is computed for; draw with std "
                          f"`noise_multiplier * clip_norm`")


def dotted_tf(call: cst.Call) -> bool:
    """``tf.random.normal(shape, mean, stddev)``: TensorFlow's second positional is the mean."""
    func = call.func
    while isinstance(func, cst.Attribute):
        func = func.value
    return isinstance(func, cst.Name) and func.value in ("tf", "tensorflow")
