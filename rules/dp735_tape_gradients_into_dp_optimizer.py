"""DP735: gradients from a plain ``tf.GradientTape`` (or ``tf.gradients``) handed to a TF-Privacy DP optimizer's
``apply_gradients``, which neither clips nor noises."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, func_name
from dpcheck.analysis.astnames import dotted
from dpcheck.analysis.plain_training import LineHits
from dpcheck.rule import Rule

#: TF-Privacy optimizer classes (TF1 ``DP…GaussianOptimizer``, Keras ``DPKeras…Optimizer``, the vectorized ones)
_TFP_DP = re.compile(r"^(?:Vectorized)?DP(?:Keras)?\w*(?:Gaussian)?Optimizer\w*$|^make_(?:keras_|gaussian_)?"
                     r"optimizer_class$|^make_vectorized_\w*optimizer_class$")
#: calls that compute the DP gradient (microbatch clipping + noise) of a TF-Privacy optimizer
_DP_GRADIENTS = frozenset({"compute_gradients", "_compute_gradients", "get_gradients", "minimize"})


def _key(node: ast.AST | None) -> str | None:
    return dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None


def _is_tfp_dp(value: ast.AST) -> bool:
    """``DPAdamGaussianOptimizer(…)``, ``DPKerasSGDOptimizer(…)``, ``make_optimizer_class(Adam)(…)``."""
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if isinstance(f, ast.Call):
        return bool(_TFP_DP.match(func_name(f.func)))
    return bool(_TFP_DP.match(func_name(f))) and func_name(f) not in ("DPOptimizer",)


@dataclass(frozen=True)
class TapeIntoDP:
    line: int
    optimizer: str
    grads: str
    source: str   #: ``tape.gradient`` / ``tf.gradients``


def _scope_of(parents: dict[ast.AST, ast.AST], node: ast.AST) -> ast.AST | None:
    p = parents.get(node)
    while p is not None and not isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        p = parents.get(p)
    return p


def tape_into_dp(tree: ast.Module) -> list[TapeIntoDP]:
    # ``DPMomentum = make_optimizer_class(tf.train.MomentumOptimizer)``: a DP optimizer class by another name
    classes = {n.targets[0].id for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
               and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Call)
               and func_name(n.value.func).startswith("make_") and _TFP_DP.match(func_name(n.value.func))}
    dp_opts: dict[str, int] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and (_is_tfp_dp(n.value) or isinstance(
                n.value, ast.Call) and isinstance(n.value.func, ast.Name) and n.value.func.id in classes):
            k = _key(n.targets[0])
            if k:
                dp_opts.setdefault(k, n.lineno)
    if not dp_opts:
        return []
    parents: dict[ast.AST, ast.AST] = {}
    for p in ast.walk(tree):
        for c in ast.iter_child_nodes(p):
            parents[c] = p
    out: list[TapeIntoDP] = []
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "apply_gradients"):
            continue
        opt = _key(n.func.value)
        if opt not in dp_opts or not n.args:
            continue
        arg = n.args[0]
        if isinstance(arg, ast.Call) and func_name(arg.func) == "zip" and arg.args:
            arg = arg.args[0]
        grads = _key(arg)
        if grads is None:
            continue
        scope = _scope_of(parents, n)
        if scope is None:
            continue
        # the last binding of ``grads`` before the step in its function
        binds: list[tuple[int, ast.AST]] = []
        for s in ast.walk(scope):
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s is not scope:
                continue
            if isinstance(s, ast.Assign) and s.lineno < n.lineno:
                for t in s.targets:
                    names = [_key(x) for x in ast.walk(t)]
                    if grads in names:
                        binds.append((s.lineno, s.value))
            elif isinstance(s, (ast.AugAssign, ast.AnnAssign)) and s.lineno < n.lineno and _key(s.target) == grads:
                binds.append((s.lineno, s.value if s.value is not None else s))
            elif isinstance(s, (ast.For, ast.comprehension)) and grads in [_key(x) for x in ast.walk(s.target)]:
                binds.append((getattr(s, "lineno", 0), s))
        if not binds:
            continue
        last = max(binds, key=lambda b: b[0])[1]
        if not isinstance(last, ast.Call):
            continue
        name = func_name(last.func)
        if name in _DP_GRADIENTS:
            continue
        if name == "gradient" and isinstance(last.func, ast.Attribute):
            source = f"{_key(last.func.value) or 'tape'}.gradient"
        elif name == "gradients" and _key(last.func) in ("tf.gradients", "gradients"):
            source = "tf.gradients"
        else:
            continue
        out.append(TapeIntoDP(n.lineno, opt, grads, source))  # type: ignore[arg-type]
    return out


class TapeGradientsIntoDPOptimizer(Rule):
    id = "DP735"
    name = "tape-gradients-into-dp-optimizer"
    category = "general"
    severity = "error"
    summary = ("gradients from a plain `tf.GradientTape` (or `tf.gradients`) are passed to a TF-Privacy DP "
               "optimizer's `apply_gradients`, which applies them without clipping or noise")
    rationale = (
        "TF-Privacy's optimizers (`DPAdamGaussianOptimizer`, `DPGradientDescentGaussianOptimizer`, "
        "`DPKerasAdamOptimizer`, the vectorized ones and `make_optimizer_class(...)` results) clip per microbatch "
        "and add Gaussian noise in `compute_gradients` / `minimize` (Keras: `_compute_gradients`, `get_gradients`, "
        "`minimize` with a tape). Their `apply_gradients` is the base optimizer's: it applies whatever it is "
        "given. Gradients taken from an ordinary `tf.GradientTape()` with `tape.gradient(loss, vars)` (or "
        "`tf.gradients`) and handed to `dp_opt.apply_gradients(zip(grads, vars))` are the exact, unclipped batch "
        "gradient, so the model (typically a GAN discriminator, the one network that reads the real records) is "
        "trained without DP while the script still computes and prints ε from the noise multiplier. Reported: "
        "the `apply_gradients` call of an optimizer bound to a TF-Privacy DP optimizer, when the gradients it "
        "applies were last bound from `<tape>.gradient(...)` or `tf.gradients(...)` in the same function. Not "
        "reported: gradients from the DP optimizer's own `compute_gradients`/`_compute_gradients(..., tape=tape)`, "
        "`minimize(loss, var_list, tape=tape)`, plain optimizers. Fix: call "
        "`opt.minimize(loss, var_list, tape=tape)` or `grads_and_vars = opt.compute_gradients(loss_fn, var_list, "
        "gradient_tape=tape)` with a per-example (vector) loss, then `apply_gradients`."
    )
    TRIGGERS = ("apply_gradients",)
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an ``apply_gradients`` call and a call of a TF-Privacy optimizer class."""
        called = facts.called
        return "apply_gradients" in called and any(_TFP_DP.match(c) for c in called)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._hits: LineHits[TapeIntoDP] = LineHits(ctx, tape_into_dp)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        hit = self._hits.take(node)
        if hit is None:
            return
        self.report(node, f"`{hit.optimizer}` is a TF-Privacy DP optimizer, but `{hit.grads}` come from "
                          f"`{hit.source}`, not from its `compute_gradients`/`minimize`: `apply_gradients` "
                          "applies them unclipped and without noise, so this model trains without DP; use "
                          "`minimize(loss, var_list, tape=tape)` or the optimizer's `compute_gradients`")

    VALID = (
        # twin of 1: the DP optimizer computes the (clipped, noised) gradients itself
        """
import tensorflow as tf
from tensorflow_privacy import DPAdamGaussianOptimizer
d_opt = DPAdamGaussianOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=8, learning_rate=1e-4)
g_opt = tf.train.AdamOptimizer(1e-4)
def train_step(real, z):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = gen(z)
        d_vec = d_loss_vector(disc(real), disc(fake))
        g_loss = gen_loss(disc(fake))
    d_gv = d_opt.compute_gradients(lambda: d_vec, disc.trainable_variables, gradient_tape=d_tape)
    d_opt.apply_gradients(d_gv)
    g_grads = g_tape.gradient(g_loss, gen.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, gen.trainable_variables))
""",
        # twin of 2: Keras DP optimizer used through minimize with the tape
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasSGDOptimizer
class Trainer:
    def __init__(self, model, sigma):
        self.model = model
        self.opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma, num_microbatches=32)

    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.keras.losses.sparse_categorical_crossentropy(y, self.model(x))
        self.opt.minimize(loss, self.model.trainable_variables, tape=tape)
""",
        # twin of 3: the TF1 DP optimizer's own compute_gradients with a per-example loss vector
        """
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer import make_optimizer_class
DPMomentum = make_optimizer_class(tf.train.MomentumOptimizer)
def build(x, y, params, sigma):
    opt = DPMomentum(l2_norm_clip=params.clip, noise_multiplier=sigma, num_microbatches=params.mb,
                     learning_rate=0.1, momentum=0.9)
    vec_loss = tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=net(x))
    grads_and_vars = opt.compute_gradients(vec_loss, tf.trainable_variables())
    return opt.apply_gradients(grads_and_vars)
""",
        # twin of 4: the vectorized DP optimizer's minimize takes the per-example loss and the tape
        """
import tensorflow as tf
from tensorflow_privacy import VectorizedDPKerasAdamOptimizer
def fit(model, dataset, sigma, epochs):
    optimizer = VectorizedDPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma, num_microbatches=16)
    for _ in range(epochs):
        for records, labels in dataset:
            with tf.GradientTape() as tape:
                per_example = tf.keras.losses.binary_crossentropy(labels, model(records))
            optimizer.minimize(per_example, model.trainable_variables, tape=tape)
""",
        # a plain optimizer fed tape gradients beside a DP one: not this rule's concern
        """
import tensorflow as tf
from tensorflow_privacy import DPKerasAdamOptimizer
dp_opt = DPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=1.0, num_microbatches=1)
opt = tf.keras.optimizers.Adam(1e-3)
def pub_step(model, x_public, y_public):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x_public) - y_public))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
""",
        # ML: ordinary TF2 training with a tape, no DP anywhere
        """
import tensorflow as tf
opt = tf.keras.optimizers.Adam(1e-3, epsilon=1e-7)
@tf.function
def step(model, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.keras.losses.mse(y, model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))
""",
    )

    INVALID = (
        # 1. DP-GAN in TF2: the discriminator's DP optimizer is handed plain tape gradients
        """
import tensorflow as tf
from tensorflow_privacy import DPAdamGaussianOptimizer
g_opt = tf.train.AdamOptimizer(1e-4)
d_opt = DPAdamGaussianOptimizer(l2_norm_clip=1.0, noise_multiplier=1.1, num_microbatches=8, learning_rate=1e-4)
def train_step(real, z):
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = gen(z)
        d_loss = disc_loss(disc(real), disc(fake))
        g_loss = gen_loss(disc(fake))
    g_grads = g_tape.gradient(g_loss, gen.trainable_variables)
    d_grads = d_tape.gradient(d_loss, disc.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, gen.trainable_variables))
    d_opt.apply_gradients(zip(d_grads, disc.trainable_variables))  # <-
""",
        # 2. a class with a Keras DP optimizer; the step takes the gradient from the tape itself
        """
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer_keras import DPKerasSGDOptimizer
class Trainer:
    def __init__(self, model, sigma):
        self.model = model
        self.opt = DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma, num_microbatches=32)

    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, self.model(x)))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.model.trainable_variables))  # <-
""",
        # 3. TF1 graph: tf.gradients into a class made by make_optimizer_class
        """
import tensorflow as tf
from tensorflow_privacy.privacy.optimizers.dp_optimizer import make_optimizer_class
DPMomentum = make_optimizer_class(tf.train.MomentumOptimizer)
def build(x, y, params, sigma):
    opt = DPMomentum(l2_norm_clip=params.clip, noise_multiplier=sigma, num_microbatches=params.mb,
                     learning_rate=0.1, momentum=0.9)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=net(x)))
    grads = tf.gradients(loss, tf.trainable_variables())
    return opt.apply_gradients(zip(grads, tf.trainable_variables()))  # <-
""",
        # 4. the vectorized Keras DP optimizer inside a training loop, fed the tape's gradient
        """
import tensorflow as tf
from tensorflow_privacy import VectorizedDPKerasAdamOptimizer
def fit(model, dataset, sigma, epochs):
    optimizer = VectorizedDPKerasAdamOptimizer(l2_norm_clip=1.0, noise_multiplier=sigma, num_microbatches=16)
    for _ in range(epochs):
        for records, labels in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.keras.losses.binary_crossentropy(labels, model(records)))
            gradients = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))  # <-
""",
    )
