"""DP795: privacy noise drawn by a stateless/keyed sampler whose seed or key is a literal in the code."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, name_words, number, walk, words, name_values
from dpcheck.rule import Rule

#: TensorFlow's stateless samplers: the same (shape, seed) always gives the same numbers
_TF_STATELESS = frozenset({
    "stateless_normal", "stateless_truncated_normal", "stateless_uniform", "stateless_binomial",
    "stateless_categorical", "stateless_gamma", "stateless_poisson", "stateless_parameterized_truncated_normal",
    "stateless_random_normal", "stateless_random_uniform",
})
#: JAX samplers that take the key first
_JAX_DRAWS = frozenset({"normal", "laplace", "uniform", "bernoulli", "gumbel", "truncated_normal", "categorical",
                        "exponential", "choice", "logistic", "cauchy", "t", "randint"})
_KEY_MAKERS = frozenset({"PRNGKey", "key"})
#: words of a privacy noise scale (the draw's std/scale, or the function around it)
_PRIVACY_WORDS = frozenset({"epsilon", "eps", "sensitivity", "sigma", "multiplier", "privacy", "dp", "ldp", "delta",
                            "budget", "clip", "laplace", "gaussian", "mechanism"})
_SCALE_KEYWORDS = frozenset({"stddev", "scale", "std", "b"})


def _literal_seed(expr: cst.BaseExpression | None, consts: dict[str, cst.BaseExpression]) -> bool:
    """``[42, 43]``, ``(1, 2)``, ``42``, ``tf.constant([1, 2])``, or a name bound once to one of those."""
    if expr is None:
        return False
    if isinstance(expr, cst.Name) and expr.value in consts:
        expr = consts[expr.value]
    if isinstance(expr, cst.Call) and call_name(expr) in ("constant", "convert_to_tensor", "array") and expr.args:
        expr = expr.args[0].value
    if isinstance(expr, (cst.List, cst.Tuple)):
        return bool(expr.elements) and all(number(e.value) is not None for e in expr.elements)
    return number(expr) is not None


def _literal_key(expr: cst.BaseExpression | None, consts: dict[str, cst.BaseExpression]) -> bool:
    """``jax.random.PRNGKey(0)`` / ``jr.key(42)`` written into the draw (or a local bound once to it)."""
    if isinstance(expr, cst.Name) and expr.value in consts:
        expr = consts[expr.value]
    return isinstance(expr, cst.Call) and call_name(expr) in _KEY_MAKERS and len(expr.args) == 1 \
        and number(expr.args[0].value) is not None \
        and ("random" in (dotted(expr.func) or "") or call_name(expr) == "PRNGKey")


class StatelessNoiseFixedSeed(Rule):
    id = "DP795"
    name = "stateless-noise-fixed-seed"
    category = "general"
    severity = "error"
    summary = "privacy noise drawn by a stateless sampler (`tf.random.stateless_*`, a JAX draw) with a literal seed/key"
    rationale = (
        "A stateless sampler is a pure function of its seed: `tf.random.stateless_normal(shape, seed=[42, 43])` "
        "returns the same numbers on every call, and `jax.random.laplace(jax.random.PRNGKey(0), shape)` the same "
        "noise every time. Used for a mechanism's noise, the noise is a constant anyone with the code can "
        "recompute and subtract (or, across two calls, cancel by differencing), so the release is the exact "
        "value. Reported: a TF stateless draw whose `seed` is a literal (or a name bound once to a literal), or a "
        "JAX draw whose key is `PRNGKey(<literal>)` written in the call, when the draw's scale comes from ε, "
        "a sensitivity or σ (or the function computing it does) in DP code. Not reported: a seed or key "
        "passed in, split from a carried key, or generated (`tf.random.Generator`, `make_seeds`), and "
        "stateless draws for weights or augmentation in ordinary ML. Fix: draw from a non-deterministic "
        "generator (`tf.random.normal` without a seed, `secrets`-seeded key) or thread a fresh key per call."
    )
    TRIGGERS = ("stateless_", "PRNGKey", "random.key(")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a stateless draw, or a JAX draw with an inline key maker."""
        called = facts.called
        return bool(called & _TF_STATELESS) or bool(called & _KEY_MAKERS and called & _JAX_DRAWS)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._consts: list[dict[str, cst.BaseExpression]] = [{}]
        self._values: list[dict[str, list[cst.BaseExpression]]] = [{}]
        self._functions: list[cst.FunctionDef] = []

    def visit_Module(self, node: cst.Module) -> None:
        self._consts = [self._bound_once(node.body)]

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)
        outer = dict(self._consts[-1])
        outer.update(self._bound_once([n for n in walk(node.body, into_scopes=False) if isinstance(n, cst.Assign)]))
        self._consts.append(outer)
        values = {k: list(v) for k, v in self._values[-1].items()}
        for k, v in name_values(node.body).items():
            values.setdefault(k, []).extend(v)
        self._values.append(values)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()
        self._consts.pop()
        self._values.pop()

    @staticmethod
    def _bound_once(nodes) -> dict[str, cst.BaseExpression]:  # type: ignore[no-untyped-def]
        seen: dict[str, list[cst.BaseExpression]] = {}
        for stmt in nodes:
            assigns = [stmt] if isinstance(stmt, cst.Assign) else (
                [s for s in stmt.body if isinstance(s, cst.Assign)] if isinstance(stmt, cst.SimpleStatementLine)
                else [])
            for a in assigns:
                for t in a.targets:
                    if isinstance(t.target, cst.Name):
                        seen.setdefault(t.target.value, []).append(a.value)
        return {k: v[0] for k, v in seen.items() if len(v) == 1}

    def _privacy_scale(self, node: cst.Call, scale: cst.BaseExpression | None) -> bool:
        exprs: list[cst.CSTNode] = []
        if scale is not None:
            exprs.append(scale)
            values = self._values[-1]
            for n in walk(scale):
                if isinstance(n, cst.Name):
                    exprs.extend(values.get(n.value, ()))
        if any(name_words(e) & _PRIVACY_WORDS for e in exprs):
            return True
        # no scale argument (``jax.random.normal(key, s) * sigma``): the function around the draw
        for fn in self._functions:
            if words(fn.name.value) & _PRIVACY_WORDS or \
                    name_words(fn.params) & {"epsilon", "eps", "sensitivity", "sigma", "multiplier"}:
                return True
        return False

    def visit_Call(self, node: cst.Call) -> None:
        # a unit test's fixed key makes its inputs reproducible; a test function releases nothing
        if any(fn.name.value.startswith("test") for fn in self._functions):
            return
        name = call_name(node)
        consts = self._consts[-1]
        if name in _TF_STATELESS:
            positional = [a.value for a in node.args if a.keyword is None]
            seed = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "seed"), None)
            if seed is None and len(positional) >= 2:
                seed = positional[1]
            if not _literal_seed(seed, consts):
                return
            scale = next((a.value for a in node.args if a.keyword is not None
                          and a.keyword.value in _SCALE_KEYWORDS | {"maxval"}), None)
            if scale is None and len(positional) >= 4:
                scale = positional[3]
            if not self._privacy_scale(node, scale):
                return
            self.report(node, f"`{name}` is a pure function of its literal seed: the noise is the same on every "
                              "call and anyone with the code can recompute and subtract it; draw from an "
                              "unseeded generator or pass a fresh seed per release")
            return
        if name in _JAX_DRAWS and node.args and node.args[0].keyword is None and \
                _literal_key(node.args[0].value, consts):
            func = dotted(node.func) or ""
            if "random" not in func and not func.startswith(("jr.", "jrandom.")):
                return
            scale = next((a.value for a in node.args if a.keyword is not None
                          and a.keyword.value in _SCALE_KEYWORDS), None)
            if not self._privacy_scale(node, scale):
                return
            self.report(node, f"`{name}` draws with a key made from a literal seed: the noise is the same on every "
                              "call and recomputable from the code; split a fresh key per release")

    VALID = (
        # a unit test of clipping sensitivity: the fixed key makes the test data reproducible
        """
import jax
def test_clip_sum_sensitivity():
    data = jax.random.normal(jax.random.key(0), (15, 4))
    neighbor = data.at[3].set([-10, 10, 20, 20])
    assert clipped_sum(data).shape == clipped_sum(neighbor).shape
""",
        # twin: unseeded stateful draw
        """
import tensorflow as tf
class NoiseLayer:
    def add_noise(self, x, sensitivity, epsilon):
        scale = sensitivity / epsilon
        return x + tf.random.normal(tf.shape(x), mean=0.0, stddev=scale)
""",
        # twin: a fresh seed from a generator per call
        """
import tensorflow as tf
gen = tf.random.Generator.from_non_deterministic_state()
def privatize(x, sensitivity, epsilon):
    seed = gen.make_seeds(2)[:, 0]
    noise = tf.random.stateless_normal(tf.shape(x), seed=seed, stddev=sensitivity / epsilon)
    return x + noise
""",
        # twin: the JAX key is threaded through the caller
        """
import jax
def gaussian_release(key, value, sigma):
    key, sub = jax.random.split(key)
    return value + sigma * jax.random.normal(sub, value.shape), key
""",
        # ordinary ML: reproducible augmentation with a fixed stateless seed
        """
import tensorflow as tf
def augment(image):
    jitter = tf.random.stateless_normal(tf.shape(image), seed=[1, 2], stddev=0.05)
    return tf.image.stateless_random_flip_left_right(image + jitter, seed=(3, 4))
""",
    )

    INVALID = (
        # a Keras noise layer with a fixed stateless seed
        """
import tensorflow as tf
class PrivateOutputs:
    def add_noise_to_outputs(self, x, sensitivity):
        scale = sensitivity / self.epsilon
        noise = tf.random.stateless_normal(tf.shape(x), seed=[7, 11], mean=0.0, stddev=scale)  # <-
        return x + noise
""",
        # the seed is a module constant, passed positionally
        """
import tensorflow as tf
SEED = (2024, 1)
def dp_histogram(counts, epsilon):
    b = 1.0 / epsilon
    u = tf.random.stateless_uniform(tf.shape(counts), SEED, -0.5, 0.5)  # <-
    return counts - b * tf.sign(u) * tf.math.log(1 - 2 * tf.abs(u))
""",
        # JAX noise with a literal key inside the release function
        """
import jax
def laplace_mechanism(value, sensitivity, epsilon):
    noise = jax.random.laplace(jax.random.PRNGKey(0), value.shape) * sensitivity / epsilon  # <-
    return value + noise
""",
        # a key bound once to a literal in the function
        """
import jax.random as jr
def noisy_grad(grads, clip, noise_multiplier):
    key = jr.PRNGKey(1234)
    return grads + clip * noise_multiplier * jr.normal(key, grads.shape)  # <-
""",
    )
