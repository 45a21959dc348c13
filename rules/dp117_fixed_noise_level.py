"""DP117: noise on a private value whose level is a fixed number, not derived from the budget or a sensitivity."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.noisedraws import charges_accountant, last_assignment, never_referenced
from dpcheck.analysis.syntax import call_name, dotted, number, param_names, walk, words
from dpcheck.rule import Rule

#: draws with a location and a scale (numpy/torch/random/distributions)
_LOC_SCALE = frozenset({"normal", "laplace", "gauss", "Normal", "Laplace", "normalvariate", "random_normal"})
#: standard draws that a factor scales (``torch.randn(g.shape) * 0.1``)
_STANDARD = frozenset({"randn", "randn_like", "standard_normal", "standard_laplace"})
_SCALE_KEYWORDS = ("scale", "std", "stddev", "sigma", "b")
_LOC_KEYWORDS = ("loc", "mean", "mu")
_SHAPE_KEYWORDS = ("size", "shape", "sample_shape")
#: words naming a value a mechanism releases: a gradient, the model, a model update, a count table
_TARGET_WORDS = frozenset({
    "grad", "grads", "gradient", "gradients", "param", "params", "parameter", "parameters", "weight", "weights",
    "state", "update", "updates", "table", "tables", "count", "counts", "hist", "histogram", "model", "sketch",
    "answer", "answers", "embedding", "embeddings", "aggregate", "aggregated", "marginal", "marginals", "freq",
    "frequency", "frequencies", "statistic", "statistics", "query", "queries",
})
_NOISE_WORDS = frozenset({"noise", "noisy", "perturbation"})
#: a function named for privatising what it perturbs (``add_gaussian_noise``, ``privatize``, ``dp_update``)
_PRIVATISING_WORDS = frozenset({"noise", "noisy", "privatize", "privatise", "private", "privacy", "dp",
                                "ldp", "cdp", "sanitize", "sanitise"})


def _shape_first(call: cst.Call) -> bool:
    """TensorFlow's draws take ``(shape, mean, stddev)`` positionally: ``tf.random.normal``, ``tf.random_normal``."""
    name = dotted(call.func) or ""
    return call_name(call) == "random_normal" or name.startswith(("tf.", "tensorflow."))


#: function names that claim differential privacy (not merely noise: ``noisy_relu`` is no mechanism)
_DP_NAMED = frozenset({"dp", "private", "privatize", "privatise", "ldp", "cdp", "sanitize", "sanitise"})
#: any of these read in the function means the level may be calibrated or scaled elsewhere in it
_CALIBRATION_WORDS = frozenset({"epsilon", "eps", "budget", "rho", "delta", "sensitivity", "sens", "scale", "sigma",
                                "std", "stddev", "noise", "multiplier", "lam", "lambda", "beta", "b", "clip", "bound",
                                "norm", "var", "variance"})


def _scale_and_shape(call: cst.Call) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None, bool]:
    """(scale, shape, centred) of a location/scale draw; ``centred`` is False for a non-zero literal location."""
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if _shape_first(call):
        shape_arg = keywords.get("shape", positional[0] if positional else None)
        positional = positional[1:] if positional and "shape" not in keywords else positional
        if shape_arg is not None:
            keywords.setdefault("shape", shape_arg)
    scale = next((keywords[k] for k in _SCALE_KEYWORDS if k in keywords), None)
    if scale is None and len(positional) >= 2:
        scale = positional[1]
    location = next((keywords[k] for k in _LOC_KEYWORDS if k in keywords), positional[0] if positional else None)
    centred = location is None or number(location) in (None, 0)
    shape = next((keywords[k] for k in _SHAPE_KEYWORDS if k in keywords), None)
    if shape is None and len(positional) >= 3:
        shape = positional[2]
    return scale, shape, centred


def _shape_of_target(shape: cst.CSTNode | None) -> bool:
    """The draw is sized like a released value: ``grad.shape``, ``model.state_dict()[k].shape``, ``table.shape``."""
    if shape is None:
        return False
    if not _sized(shape):
        return False
    return any(isinstance(n, cst.Name) and words(n.value) & _TARGET_WORDS for n in walk(shape))


def _sized(shape: cst.CSTNode) -> bool:
    return any(isinstance(n, cst.Attribute) and n.attr.value in ("shape", "size") or
               isinstance(n, cst.Call) and call_name(n) in ("size", "numel", "get_shape", "shape") for n in walk(shape))


class FixedNoiseLevel(Rule):
    id = "DP117"
    name = "fixed-noise-level"
    category = "general"
    severity = "error"
    summary = ("noise added to a gradient, model, update or count table with a level that is a fixed number "
               "(`torch.randn(g.shape) * 0.1`, `std=800`, a constant `VARIANCE = 3.86`), not derived from ε or a "
               "sensitivity")
    rationale = (
        "A mechanism's noise level is set by the budget and the sensitivity it protects: Δ/ε for Laplace, "
        "σ·C for DP-SGD with a noise multiplier σ that an accountant turns into ε. Code that perturbs the "
        "value it releases (a gradient, the model weights, a client update, a sketch or count table) with a "
        "draw whose scale is a literal number, directly or through a local, a `self` attribute or a module "
        "constant bound only to that number, adds the same noise whatever ε the run reports and whatever "
        "the values' range is: `model.state_dict()[k] += torch.randn(shape) * 0.1` or "
        "`grad += torch.normal(0, 800, grad.shape)` give no stated guarantee, and a constant named "
        "`VARIANCE` passed as the std is not even the level it names. Reported: a centred Gaussian or "
        "Laplace draw (or a standard draw times a factor) whose level resolves to a number other than 0 "
        "and 1, sized like a value named for a gradient, parameter, weight, update, model state or count "
        "table (`size=grad.shape`, `randn_like(update)`), or like a parameter of a function named for privatising, "
        "and added to a value (`+`, `tf.add`) or bound to a noise name or to a local that is added later. TensorFlow's "
        "shape-first signature is read, and a product of fixed numbers (`stddev=sigma * cg`) is a fixed level. "
        "Not reported: weight initialisation and other draws that are not added (`w = normal(0, 0.02, "
        "w.shape)`), draws around a non-zero literal mean (simulated data), augmentation of inputs, a "
        "level of 1 (a standard draw scaled later), files that charge an accountant (a literal σ whose "
        "ε is computed), code with no DP context and outside a function named for adding noise or privatising "
        "(`add_gaussian_noise`, `privatize`, `dp_update`). Fix: compute the level from the budget and the "
        "enforced sensitivity (Δ/ε, σ·C with an accountant), or drop the DP claim."
    )
    TRIGGERS = ("normal", "laplace", "Laplace", "gauss", "randn")
    #: a DP context, or (checked per draw) a function named for adding noise to what it releases
    requires_dp_context = False

    VALID = (
        # the level comes from the budget and the clip bound
        "import torch\ndef privatize(grads, clip, epsilon):\n    for g in grads:\n"
        "        g += torch.normal(0, clip / epsilon, size=g.shape)\n",
        # weight initialisation: drawn, not added
        "import numpy as np\ndef init(weights, epsilon):\n"
        "    weights = np.random.normal(0, 0.02, size=weights.shape)\n    return weights\n",
        # input augmentation: the noised value is an image, not a released statistic
        "import torch\ndef augment(x, epsilon):\n    return x + torch.randn_like(x) * 0.03\n",
        # a literal noise multiplier whose ε an accountant computes
        "import torch\nfrom opacus.accountants import RDPAccountant\nSIGMA = 1.3\n"
        "def step(params, epsilon):\n    for p in params:\n"
        "        p.grad += torch.normal(0, SIGMA, size=p.grad.shape)\n"
        "    RDPAccountant().step(noise_multiplier=SIGMA, sample_rate=0.01)\n",
        # no DP claim: a weight jitter in a function not named for noise
        "import torch\ndef shrink_perturb(model):\n    for p in model.parameters():\n"
        "        p.data += torch.randn(p.data.shape) * 0.01\n",
        # simulated data around a constant mean
        "import numpy as np\ndef simulate(counts, epsilon):\n"
        "    return counts + np.random.normal(5.0, 2.0, size=counts.shape)\n",
        # a standard draw scaled later by the calibrated level
        "import numpy as np\ndef release(table, epsilon, sens):\n"
        "    noise = np.random.normal(0, 1, size=table.shape)\n    return table + noise * sens / epsilon\n",
        # TensorFlow draw whose std is the multiplier set from the caller times the bound
        "import tensorflow as tf\nclass Critic:\n    def __init__(self, multiplier):\n"
        "        self.multiplier = multiplier\n    def privatize_grad(self, g, n):\n"
        "        dims = g.get_shape().as_list()\n        bound = 40.0\n"
        "        z = tf.random_normal(dims, mean=0.0, stddev=self.multiplier * bound)\n"
        "        return tf.add(g, z / n)\n",
        # tf.random.normal with a std from its parameters
        "import tensorflow as tf\ndef add_noise(update, sigma, clip):\n"
        "    return update + tf.random.normal(tf.shape(update), stddev=sigma * clip)\n",
        # a local drawn in a function named for DP but multiplied in, not added: a layer's kernel
        "import tensorflow as tf\ndef dp_layer(x):\n    kernel = tf.random_normal(x.get_shape(), stddev=0.02)\n"
        "    return tf.matmul(x, kernel)\n",
        # a function named for DP whose unit draw is scaled by the budget it reads
        "import numpy as np\ndef dp_select(tokens, epsilon):\n    votes = {}\n    for t in tokens:\n"
        "        votes[t] = votes.get(t, 0) + 1\n"
        "    return max(votes, key=lambda k: votes[k] + np.random.laplace(0, 1) * 2 / epsilon)\n",
        # named for DP, no budget, but the draw is not added (a random tie-break)
        "import random\ndef dp_pick(candidates):\n    return sorted(candidates, key=lambda c: random.gauss(0, 1))[0]\n",
        # a unit draw added in a function not named for DP
        "import numpy as np\ndef jitter(points):\n    return [p + np.random.normal(0, 1) for p in points]\n",
        # torch.add of a standard draw scaled by the clip bound over ε
        "import torch\nCLIP = 5.0\ndef dp_aggregate(delta_w, epsilon):\n"
        "    z = torch.randn(delta_w.shape) * (CLIP / epsilon)\n    return torch.add(delta_w, z)\n",
    )
    INVALID = (
        # a federated client perturbs its model weights with a hard-coded std
        """
import torch
def add_gaussian_noise(model):
    for key in model.state_dict().keys():
        model.state_dict()[key] += torch.randn(model.state_dict()[key].shape) * 0.1  # <-
""",
        # a critic's gradients with a literal std (keyword spelling)
        """
import torch
def dp_step(param, epsilon):
    for grad in param.accumulated_grads:
        grad += torch.normal(mean=0, std=800, size=tuple(grad.shape))  # <-
""",
        # a module constant, named variance, passed as the std of the sketch's noise
        """
import numpy as np
VARIANCE = 3.86
class Client:
    def privatize(self, epsilon):
        variance = VARIANCE
        noise_mat = np.random.normal(0, variance, size=self.cms.table.shape)  # <-
        return self.cms.table + noise_mat
""",
        # Laplace on a count histogram with a level fixed in the constructor
        """
import numpy as np
class Release:
    def __init__(self, epsilon):
        self.epsilon = epsilon
        self.b = 2.5
    def publish(self, counts):
        return counts + np.random.laplace(0.0, self.b, size=counts.shape)  # <-
""",
        # a gradient update: the factor on the left, numpy standard draw
        """
import numpy as np
def noisy_update(update):
    update = update + 0.05 * np.random.standard_normal(update.shape)  # <-
    return update
""",
        # TensorFlow 1: the std is a product of two hand-set numbers, the shape comes through a local, the draw
        # is bound to a plain name and added with tf.add
        """
import tensorflow as tf
class Critic:
    def privatize_grad(self, g, n):
        dims = g.get_shape().as_list()
        level = 0.5
        bound = 40.0
        z = tf.random_normal(dims, mean=0.0, stddev=level * bound)  # <-
        return tf.add(g, z / n)
""",
        # TensorFlow 2: shape first, a literal std
        """
import tensorflow as tf
def add_noise(update):
    return update + tf.random.normal(tf.shape(update), stddev=0.8)  # <-
""",
        # a "private" selection that adds unit Laplace noise to each vote count and reads no budget at all
        """
import numpy as np
def dp_select(tokens):
    votes = {}
    for t in tokens:
        votes[t] = votes.get(t, 0) + 1
    for t in votes:
        votes[t] = votes[t] + np.random.laplace(0, 1, 1)[0]  # <-
    return max(votes, key=votes.get)
""",
        # a private count with a fixed Gaussian level, scalar draw
        """
import random
def private_count(rows):
    return len(rows) + random.gauss(0, 2.0)  # <-
""",
        # privatise a mean: the draw on the left of the sum
        """
import numpy as np
def privatise_mean(values):
    return np.random.normal(0.0, 0.5) + np.mean(values)  # <-
""",
        # torch.add of a standard draw scaled by a product of module constants
        """
import torch
SIGMA = 1.1
CLIP = 5.0
def dp_aggregate(delta_w):
    z = torch.randn(delta_w.shape) * (SIGMA * CLIP)  # <-
    return torch.add(delta_w, z)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._charged = any(isinstance(n, cst.Call) and charges_accountant(n) for n in walk(node))

    def visit_Call(self, node: cst.Call) -> None:
        if self._charged:
            return
        name = call_name(node)
        if name in _LOC_SCALE:
            scale, shape, centred = _scale_and_shape(node)
            if not centred or scale is None:
                return
            host: cst.CSTNode = node
        elif name in _STANDARD:
            factor = self._factor(node)
            if factor is None:
                return
            scale, host = factor
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            shape = positional[0] if len(positional) == 1 else cst.Tuple([cst.Element(p) for p in positional]) \
                if positional else None
            if name == "randn_like" and positional:
                shape = cst.Attribute(positional[0], cst.Name("shape"))
        else:
            return
        level = self._level(node, scale, depth=0)
        if level is None or level == 0:
            return
        if not self._budgetless_private_sum(node, host):
            if level == 1 or not self._sized_like_release(node, shape) or not self._added(host):
                return
        if not self._claims_privacy(node):
            return
        if self._dead_script_helper(node):
            return
        code = self.ctx.analysis.code(scale).strip()
        via = "" if number(scale) is not None else f" (`{code}` is bound to {level:g})"
        self.report(node, f"this noise on a released value has the fixed level {level:g}{via}: it does not come "
                          f"from ε or the sensitivity, so the run gets the same noise for every budget it reports "
                          f"and no stated guarantee; compute the level from ε and the enforced bound")

    def _dead_script_helper(self, call: cst.Call) -> bool:
        """A module-level function named nowhere else in the project, in a loose script module (no package
        ``__init__.py`` beside it): an uncalled experiment helper releases nothing. A function of a package module
        is importable API and stays reported (g3 2026-11-27: FL-boop-blip/DPFed's dp_client_update is dead; the
        uncalled DP_select of tjdgh3946/PubDP-ICL's openicl package was labelled TP)."""
        import os

        path = getattr(self.ctx, "path", None)
        if not path or os.path.isfile(os.path.join(os.path.dirname(path), "__init__.py")):
            return False
        return never_referenced(self.ctx, self.ctx.analysis.enclosing_function(call))

    def _claims_privacy(self, call: cst.Call) -> bool:
        fa = self.ctx.analysis
        if fa.in_dp_context(call):
            return True
        fn = fa.enclosing_function(call)
        return fn is not None and bool(words(fn.name.value) & _PRIVATISING_WORDS)

    def _budgetless_private_sum(self, call: cst.Call, host: cst.CSTNode) -> bool:
        """In a function named for DP (``dp_select``, ``privatize``) that reads no budget, scale or sensitivity
        at all, a draw that is directly an operand of ``+`` is the whole noise, whatever its size: even a unit
        level is not scaled later."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(call)
        if fn is None or not words(fn.name.value) & _DP_NAMED:
            return False
        parent = fa.parent(host)
        while isinstance(parent, cst.Subscript) or isinstance(parent, (cst.SubscriptElement, cst.Index)):
            host, parent = parent, fa.parent(parent)
        if not (isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add)):
            return False
        for node in walk(fn):
            if isinstance(node, (cst.Name, cst.Attribute)):
                name = node.value if isinstance(node, cst.Name) else node.attr.value
                if words(name) & _CALIBRATION_WORDS:
                    return False
        return True

    def _sized_like_release(self, call: cst.Call, shape: cst.BaseExpression | None) -> bool:
        """Sized like a released value, directly or through a local (``s = tensor.get_shape()``); in a function
        named for privatising, the shape of any of its parameters counts (``def dpnoise(self, tensor)``)."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(call)
        if isinstance(shape, cst.Name) and fn is not None and shape.value not in param_names(fn):
            shape = last_assignment(fn, shape.value, fa.line_of(call) + 1, fa.line_of) or shape
        if _shape_of_target(shape):
            return True
        if shape is None or fn is None or not words(fn.name.value) & _PRIVATISING_WORDS or not _sized(shape):
            return False
        params = set(param_names(fn)) - {"self", "cls"}
        return any(isinstance(n, cst.Name) and n.value in params for n in walk(shape))

    def _factor(self, call: cst.Call) -> tuple[cst.BaseExpression, cst.CSTNode] | None:
        parent = self.ctx.analysis.parent(call)
        if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Multiply):
            other = parent.right if parent.left is call else parent.left
            return other, parent
        return None

    def _level(self, call: cst.Call, expr: cst.BaseExpression, depth: int) -> float | None:
        value = number(expr)
        if value is not None or depth > 2:
            return value
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
            # a product of fixed numbers is a fixed level (``stddev=sigma * cg`` with both literals)
            left = self._level(call, expr.left, depth + 1)
            right = self._level(call, expr.right, depth + 1)
            if left is None or right is None:
                return None
            if isinstance(expr.operator, cst.Multiply):
                return left * right
            return left / right if right else None
        fa = self.ctx.analysis
        bound: cst.BaseExpression | None = None
        if isinstance(expr, cst.Name):
            fn = fa.enclosing_function(call)
            if fn is not None and expr.value in param_names(fn):
                return None
            if fn is not None:
                bound = last_assignment(fn, expr.value, fa.line_of(call) + 1, fa.line_of)
            if bound is None:
                bound = self._module_constant(expr.value)
        elif isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            values = [s.value for s in walk(self.ctx.module) if isinstance(s, cst.Assign) and any(
                isinstance(t.target, cst.Attribute) and dotted(t.target) == dotted(expr) for t in s.targets)]
            bound = values[0] if len(values) == 1 else None
        return None if bound is None else self._level(call, bound, depth + 1)

    def _module_constant(self, name: str) -> cst.BaseExpression | None:
        values = [s.value for stmt in self.ctx.module.body if isinstance(stmt, cst.SimpleStatementLine)
                  for s in stmt.body if isinstance(s, cst.Assign) and len(s.targets) == 1
                  and isinstance(s.targets[0].target, cst.Name) and s.targets[0].target.value == name]
        return values[0] if len(values) == 1 else None

    def _added(self, host: cst.CSTNode) -> bool:
        """The draw is added to a value (``x + draw``, ``x += draw``) or bound to a noise name."""
        fa = self.ctx.analysis
        child = host
        for parent in fa.ancestors(host):
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
                return True
            if isinstance(parent, cst.AugAssign):
                return isinstance(parent.operator, (cst.AddAssign, cst.SubtractAssign)) and parent.value is child
            if isinstance(parent, cst.Arg) and isinstance(grand := fa.parent(parent), cst.Call) \
                    and call_name(grand) == "add":
                return True  # ``tf.add(tensor, draw)``, ``torch.add(x, draw)``
            if isinstance(parent, cst.Assign):
                return any(isinstance(t.target, cst.Name) and (words(t.target.value) & _NOISE_WORDS or
                                                             self._added_later(parent, t.target.value))
                           for t in parent.targets)
            if isinstance(parent, (cst.SimpleStatementLine, cst.FunctionDef, cst.Lambda, cst.Arg)):
                return False
            child = parent
        return False

    def _added_later(self, assign: cst.Assign, name: str) -> bool:
        """The local bound to the draw is later an operand of an addition in the same function."""
        fa = self.ctx.analysis
        fn = fa.enclosing_function(assign)
        if fn is None:
            return False
        after = fa.line_of(assign)
        for node in walk(fn, into_scopes=False):
            if not (isinstance(node, cst.Name) and node.value == name) or fa.line_of(node) <= after:
                continue
            for parent in fa.ancestors(node):
                if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Add, cst.Subtract)):
                    return True
                if isinstance(parent, cst.AugAssign):
                    return isinstance(parent.operator, (cst.AddAssign, cst.SubtractAssign))
                if isinstance(parent, cst.Call) and call_name(parent) == "add":
                    return True
                if isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                    break
        return False
