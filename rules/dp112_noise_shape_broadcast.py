"""DP112: one noise value broadcast over many released coordinates (a scalar draw added to an array, or
per-row noise expanded over the columns)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.noisedraws import last_assignment
from dpcheck.analysis.syntax import call_name, dotted, last_name, number, param_names, walk, words
from dpcheck.rule import Rule
from dpcheck.rules.dp109_shared_noise_draw import _PARAMETER_ITERS, _TENSOR_VIEWS, _VECTOR_WORDS, _loop_targets

#: numpy / scipy / Python-random draws that return one number when no size is given
_SCALAR_DRAWS = {  # name -> how many positional arguments come before ``size``
    "laplace": 2, "normal": 2, "gumbel": 2, "logistic": 2, "exponential": 1,
    "gauss": 2, "normalvariate": 2, "expovariate": 1,
}
#: the first dotted segment of libraries whose draws take a shape first (never a scalar by omission)
_SHAPE_FIRST = frozenset({"torch", "tf", "jax", "jnp", "jr", "keras"})
#: calls that build an array with two or more axes, or a matrix product
_MATRIX_CALLS = frozenset({"outer", "vstack", "hstack", "column_stack", "stack", "cov", "corrcoef",
                           "pivot_table", "as_matrix"})
_PRODUCTS = frozenset({"dot", "matmul", "tensordot"})
#: draws whose shape argument is the noise's shape
_ROW_DRAWS = frozenset({"normal", "randn", "laplace", "rand", "gumbel", "logistic", "standard_normal", "random_normal"})
#: calls that reduce over the batch (the noise of one element's shape on a sum is the DP-SGD shape)
_BATCH_REDUCERS = frozenset({"sum", "mean", "nansum", "nanmean", "reduce_sum", "reduce_mean", "average", "einsum",
                             "matmul", "dot", "norm", "max", "min", "len", "median", "std", "var", "bincount",
                             "histogram", "count_nonzero", "reduce", "accumulate", "cumsum"})
_EXPAND_CALLS = frozenset({"view", "reshape", "unsqueeze", "expand_dims"})


def _scalar_draw(expr: cst.BaseExpression) -> cst.Call | None:
    """``np.random.laplace(0, b)``, ``rng.normal(0.0, s)``, ``random.gauss(0, s)``, possibly times a factor."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)):
        return _scalar_draw(expr.left) or _scalar_draw(expr.right)
    if not isinstance(expr, cst.Call):
        return None
    name = call_name(expr)
    if name not in _SCALAR_DRAWS:
        return None
    func = dotted(expr.func) or ""
    if func.split(".")[0] in _SHAPE_FIRST or func == name:
        return None
    if any(a.star for a in expr.args):
        return None
    if any(a.keyword is not None and a.keyword.value in ("size", "shape", "n", "k") for a in expr.args):
        return None
    positional = [a for a in expr.args if a.keyword is None]
    if len(positional) > _SCALAR_DRAWS[name]:
        return None
    return expr


def _two_axis_uses(module: cst.Module) -> set[str]:
    """Names used with two axes anywhere in the module: ``R[u, i]``, ``R[:, j]``, ``R.T``, ``R.shape[1]``,
    ``n, m = R.shape``."""
    out: set[str] = set()
    for node in walk(module):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and len(node.slice) >= 2:
            out.add(node.value.value)
        elif isinstance(node, cst.Attribute) and node.attr.value == "T" and isinstance(node.value, cst.Name):
            out.add(node.value.value)
        elif isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "shape" and isinstance(node.value.value, cst.Name) \
                and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                and number(node.slice[0].slice.value) == 1:
            out.add(node.value.value.value)
        elif isinstance(node, cst.Assign) and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value == "shape" and isinstance(node.value.value, cst.Name) \
                and any(isinstance(t.target, cst.Tuple) and len(t.target.elements) >= 2 for t in node.targets):
            out.add(node.value.value.value)
    return out


_UNARY_WORDS = frozenset({"unary", "onehot", "encoded", "encoding", "bits", "bitvector", "bitmap"})
_COIN_CALLS = frozenset({"uniform", "rand", "random", "random_sample", "binomial"})


def _exp_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` of ``exp(x)`` / ``np.e ** x`` / ``math.e ** x``."""
    if isinstance(expr, cst.Call) and call_name(expr) == "exp" and len(expr.args) == 1:
        return expr.args[0].value
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Power) and last_name(expr.left) == "e":
        return expr.right
    return None


def _keep_probability(expr: cst.BaseExpression) -> str | None:
    """The budget in ``exp(eps) / (1 + exp(eps))`` (any order, ``e ** eps``): binary randomized response's
    keep probability at the full budget; None for ``exp(eps / 2) / …`` or anything else."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Divide)):
        return None
    top = _exp_of(expr.left)
    bottom = expr.right
    if top is None or not isinstance(top, (cst.Name, cst.Attribute)):
        return None
    name = last_name(top) or ""
    if not words(name) & {"epsilon", "eps", "budget"} or words(name) & {"half", "per", "bit", "each"}:
        return None
    if not (isinstance(bottom, cst.BinaryOperation) and isinstance(bottom.operator, cst.Add)):
        return None
    sides = [bottom.left, bottom.right]
    if not any(number(x) == 1 for x in sides):
        return None
    other = [x for x in sides if number(x) != 1]
    inner = _exp_of(other[0]) if other else None
    return name if inner is not None and last_name(inner) == name else None



def _vector_named(expr: cst.BaseExpression) -> bool:
    """Named like a histogram / counts / gradient vector: DP109 reports a scalar draw on those."""
    name = last_name(expr)
    return name is not None and bool(words(name) & _VECTOR_WORDS)


def _matrix_value(expr: cst.BaseExpression, two_axis: set[str]) -> bool:
    """An array value: a stack/outer/covariance, or a matrix product with a transposed or two-axis operand
    (``np.dot(v, w)`` of two vectors is a number)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.MatrixMultiply):
        operands = [expr.left, expr.right]
    elif isinstance(expr, cst.Call) and call_name(expr) in _PRODUCTS:
        operands = [a.value for a in expr.args if a.keyword is None]
    else:
        return isinstance(expr, cst.Call) and call_name(expr) in _MATRIX_CALLS
    return any(isinstance(o, cst.Attribute) and o.attr.value == "T" or isinstance(o, cst.Name) and o.value in two_axis
               for o in operands)


def _expanded(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The tensor in ``t.view(-1, 1)``, ``t.reshape(-1, 1)``, ``t.unsqueeze(1)``, ``t[:, None]``,
    ``np.expand_dims(t, 1)``: one value per row stretched over the columns."""
    if isinstance(expr, cst.Call) and call_name(expr) in _EXPAND_CALLS and isinstance(expr.func, cst.Attribute):
        args = [a.value for a in expr.args if a.keyword is None]
        values = [number(a) if not (isinstance(a, cst.UnaryOperation) and isinstance(a.operator, cst.Minus))
                  else (-(number(a.expression) or 0)) for a in args]
        name = call_name(expr)
        if name == "expand_dims" and len(args) == 2 and values[1] in (1, -1):
            return args[0]
        if name == "unsqueeze" and values in ([1], [-1]):
            return expr.func.value
        if name in ("view", "reshape") and values == [-1, 1]:
            return expr.func.value
        return None
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 2:
        first, second = (s.slice for s in expr.slice)
        if isinstance(first, cst.Slice) and isinstance(second, cst.Index) and (
                isinstance(second.value, cst.Name) and second.value.value == "None"
                or last_name(second.value) == "newaxis"):
            return expr.value
    return None


#: torch.distributions families whose ``sample()`` without a shape has the parameters' shape
_DIST_FAMILIES = frozenset({"Laplace", "Normal", "Gumbel", "Cauchy", "StudentT", "Logistic"})
#: calls that wrap one value without changing its shape
_WRAPPERS = frozenset({"tensor", "as_tensor", "from_numpy", "float", "float32", "float64"})
#: calls that build an array of a given size
_ARRAY_BUILDERS = frozenset({"zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like",
                             "bincount", "arange", "linspace"})
#: calls that join arrays into one, and methods that flatten one
_JOINED = frozenset({"concatenate", "cat", "hstack", "concat"})
_FLATTENED = frozenset({"flatten", "ravel"})
#: calls that reduce an array to one number
_REDUCED = frozenset({"sum", "mean", "max", "min", "norm", "item", "count", "len", "median", "std", "var", "dot",
                      "float", "int", "prod", "trace", "det"})
#: annotations of an array parameter
_ARRAY_TYPES = frozenset({"Tensor", "ndarray", "Array", "FloatTensor", "ArrayLike", "NDArray"})
#: coins / draws that return one value without a size, assigned to a masked selection
_MASK_DRAWS = {"binomial": 2, "laplace": 2, "normal": 2, "uniform": 2, "random": 0, "rand": 0, "random_sample": 0,
               "randint": 2, "choice": 1, "geometric": 1, "exponential": 1, "gumbel": 2}


def _scalar_literal(expr: cst.BaseExpression) -> bool:
    """``0``, ``0.0``, ``-1``, ``torch.tensor(0.0)``, ``torch.tensor([0.0])``: a location with no data shape."""
    if isinstance(expr, cst.UnaryOperation):
        return _scalar_literal(expr.expression)
    if number(expr) is not None:
        return True
    if isinstance(expr, cst.Call) and call_name(expr) in ("tensor", "as_tensor", "array", "float") and expr.args:
        inner = expr.args[0].value
        if isinstance(inner, cst.List) and len(inner.elements) == 1:
            inner = inner.elements[0].value
        return number(inner) is not None or isinstance(inner, cst.UnaryOperation) and \
            number(inner.expression) is not None
    return False


def _scalar_distribution(expr: cst.BaseExpression | None) -> bool:
    """``torch.distributions.Laplace(loc=0, scale=b)`` / ``Normal(torch.tensor([0.0]), s)``: a distribution whose
    location is a number, so each ``sample()`` without a shape is one value."""
    if not isinstance(expr, cst.Call) or call_name(expr) not in _DIST_FAMILIES:
        return False
    func = dotted(expr.func) or ""
    if "distributions" not in func.split(".") and not func.startswith(("dist.", "D.", "td.", "tdist.")) \
            and func not in _DIST_FAMILIES:
        return False
    if any(a.star for a in expr.args):
        return False
    loc = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "loc"), None)
    if loc is None:
        positional = [a.value for a in expr.args if a.keyword is None]
        loc = positional[0] if positional else None
    return loc is not None and _scalar_literal(loc)


def _annotated_array(fn: cst.FunctionDef, name: str) -> bool:
    p = fn.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        if param.name.value == name and param.annotation is not None:
            ann = param.annotation.annotation
            if isinstance(ann, cst.Subscript):
                ann = ann.value
            return last_name(ann) in _ARRAY_TYPES
    return False


def _shape_argument(draw: cst.Call) -> bool:
    """A draw given something shaped (``x.shape``, ``len(x)``, a tuple): its size is there, whatever the library."""
    for arg in draw.args:
        v = arg.value
        if isinstance(v, (cst.Tuple, cst.List)) or isinstance(v, cst.Attribute) and v.attr.value in ("shape", "size"):
            return True
        if isinstance(v, cst.Call) and call_name(v) in ("len", "size"):
            return True
    return False


def _shape_read(fn: cst.FunctionDef, name: str) -> bool:
    """The function reads ``name.shape`` / ``name.size`` / ``name.ndim`` or ``len(name)``: ``name`` has coordinates."""
    for node in walk(fn, into_scopes=False):
        if isinstance(node, cst.Attribute) and node.attr.value in ("shape", "size", "ndim") \
                and isinstance(node.value, cst.Name) and node.value.value == name:
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len" \
                and len(node.args) == 1 and isinstance(node.args[0].value, cst.Name) \
                and node.args[0].value.value == name:
            return True
    return False


def _array_built(value: cst.BaseExpression | None) -> bool:
    """``np.zeros(k)``, ``torch.zeros(d)``, ``np.bincount(x)``: an array with a size that is not 1; a concatenation
    or flattening (``np.concatenate([p.ravel() for p in params])``, ``w.flatten()``); an array of a list."""
    if not isinstance(value, cst.Call):
        return False
    name = call_name(value)
    if name in _JOINED:
        return True
    if name in _FLATTENED and isinstance(value.func, cst.Attribute) and not value.args:
        return True
    if name in ("array", "asarray", "tensor", "as_tensor") and value.args and isinstance(
            value.args[0].value, (cst.List, cst.ListComp, cst.Tuple)):
        first = value.args[0].value
        return isinstance(first, cst.ListComp) or len(first.elements) > 1
    if name not in _ARRAY_BUILDERS:
        return False
    positional = [a.value for a in value.args if a.keyword is None]
    if not positional:
        return False
    first = positional[0]
    if number(first) is not None:
        return number(first) != 1 or len(positional) > 1 and call_name(value) in ("arange", "linspace")
    if isinstance(first, (cst.Tuple, cst.List)):
        return not all(number(e.value) == 1 for e in first.elements) and bool(first.elements)
    return True


def _mask_name(index: cst.BaseExpression, fn: cst.CSTNode | None, before: int, line_of) -> bool:
    """``bits == 1`` or a name bound to a comparison (``ones, zeros = (x == 1), (x == 0)``): a boolean mask."""
    if isinstance(index, cst.Comparison):
        return True
    if not isinstance(index, cst.Name) or fn is None:
        return False
    for node in walk(fn, into_scopes=False):
        if not isinstance(node, cst.Assign) or line_of(node) >= before:
            continue
        for t in node.targets:
            target, value = t.target, node.value
            pairs = [(target, value)]
            if isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) \
                    and len(target.elements) == len(value.elements):
                pairs = [(a.value, b.value) for a, b in zip(target.elements, value.elements)]
            for tg, v in pairs:
                if isinstance(tg, cst.Name) and tg.value == index.value:
                    return isinstance(v, cst.Comparison)
    return False


#: draws of a noise radius (the norm of a K-norm / objective-perturbation noise vector)
_RADIUS_DRAWS = frozenset({"gamma", "exponential", "laplace", "erlang", "chisquare"})
_CUBE_DRAWS = frozenset({"uniform", "rand", "random_sample", "rand_like", "uniform_"})


def _cube_draw(value: cst.BaseExpression) -> bool:
    """``np.random.uniform(-1, 1, size=d)``, ``torch.rand(d) * 2 - 1``, ``rng.random(d) - 0.5``: a vector drawn
    uniformly from a box (with a size, and no Gaussian draw)."""
    calls = [n for n in walk(value) if isinstance(n, cst.Call)]
    if any(call_name(c) in ("normal", "randn", "standard_normal", "randn_like", "gauss") for c in calls):
        return False
    for c in calls:
        name = call_name(c)
        if name == "uniform_" or name == "rand_like":
            return True
        if name in ("rand", "random_sample", "random") and c.args and not (dotted(c.func) or "").startswith("random."):
            return True
        if name == "uniform" and (len([a for a in c.args if a.keyword is None]) >= 3 or any(
                a.keyword is not None and a.keyword.value in ("size", "shape") for a in c.args)):
            return True
    return False


def _l2_norm_of(value: cst.BaseExpression) -> str | None:
    """The name whose L2 norm ``value`` is: ``np.linalg.norm(v)``, ``v.norm()``, ``np.sqrt(np.sum(v ** 2))``."""
    if isinstance(value, cst.Call) and call_name(value) in ("norm", "vector_norm", "sqrt"):
        if call_name(value) == "norm" and any(a.keyword is None and number(a.value) not in (None, 2) for a in
                                              value.args[1:]):
            return None
        names = {n.value for n in walk(value) if isinstance(n, cst.Name)} - {"np", "torch", "linalg", "math", "tf",
                                                                             "jnp", "numpy", "sum", "sqrt", "norm"}
        return next(iter(names)) if len(names) == 1 else None
    return None


class NoiseShapeBroadcast(Rule):
    id = "DP112"
    name = "noise-shape-broadcast"
    category = "general"
    severity = "error"
    summary = ("noise over a vector done wrong: one draw broadcast over many coordinates (no size, a torch "
               "distribution sampled without a shape, one coin for a masked selection, or per-row noise expanded "
               "over columns), or each bit/column randomized with the full ε")
    rationale = (
        "A vector or matrix release needs an independent draw per coordinate. numpy's "
        "`laplace(0, b)` / `normal(0, s)` without `size` (and Python's `random.gauss`) return one "
        "number; added to an array it shifts every entry by the same amount, so any difference or "
        "contrast between entries is released without noise (a commented-out `#, R.shape` does "
        "this). Likewise per-row noise `noise.view(-1, 1)`, `noise[:, None]`, `unsqueeze(1)` added to "
        "a [rows, features] tensor gives all features of a row one value. The array is recognised "
        "by two-axis use of its name in the module (`R[u, i]`, `R.T`, `n, m = R.shape`) or a matrix "
        "product; the draw through one local assignment. Not reported: a draw with `size`/`shape`, "
        "torch/tf/jax draws (their shape comes first), a scalar operand, code with no DP context, a "
        "sizeless draw in a function that sizes its other draws of that distribution (a 1 x 1 statistic). "
        "The same one-draw mistake is reported when the array is known by its role rather than its axes: a "
        "parameter annotated as a tensor/ndarray (`grads: torch.Tensor`), a local or `self.` attribute built "
        "with a size (`np.zeros(k)`, never set to a number in its class), and for the torch spelling too: "
        "`torch.distributions.Laplace(loc=0, scale=b).sample()` (a number as location, no sample shape) added "
        "with `+` or `.add()` to such an array. And a sizeless coin assigned to a masked selection "
        "(`flags[bits == 1] = np.random.binomial(1, p)`) keeps or flips every selected entry together. "
        "Fix: draw with the array's shape (`np.random.laplace(0, b, R.shape)`, `dist.sample(g.shape)`, "
        "`size=mask.sum()`). "
        "The mirror mistake: binary randomized response with keep probability e^ε/(1+e^ε) applied to every "
        "bit of a unary (one-hot) encoding (two encodings differ in two bits: 2ε; symmetric unary "
        "encoding needs e^(ε/2)/(1+e^(ε/2))), or a coin per row and column compared with it (every "
        "column of a record spends the whole ε). "
        "A third vector-noise mistake: the direction of a K-norm / objective-perturbation noise vector "
        "(radius from a Gamma draw) taken as a uniform draw from the cube divided by its L2 norm "
        "(`u = np.random.uniform(-1, 1, d); u / np.linalg.norm(u)`, `torch.rand(d) * 2 - 1`): that "
        "direction is not uniform on the sphere, so the noise density is not ∝ exp(-ε‖b‖/Δ) as the "
        "proof needs. Reported in a function that reads ε or draws a radius; not for a Gaussian draw "
        "normalised (the correct direction) or a box draw that is not normalised. Fix: normalise "
        "`np.random.normal(size=d)`."
    )
    TRIGGERS = ("aplace", "normal", "gumbel", "gauss", "xponential", "logistic", "None", "view", "reshape",
                "unsqueeze", "expand_dims", "newaxis", "exp", "e **", "e**", "uniform", "rand", "sample", "binomial",
                "choice", "geometric")
    requires_dp_context = True

    VALID = (
        # twins of the one-draw-per-array cases: the draw takes the array's shape
        """
import torch
def add_laplace(update: torch.Tensor, sensitivity: float, epsilon: float) -> torch.Tensor:
    dist = torch.distributions.Laplace(loc=0.0, scale=sensitivity / epsilon)
    return update.add(dist.sample(update.shape))
""",
        # the location is the data itself: one draw per coordinate
        """
import torch
def perturb(x, epsilon, sensitivity):
    return torch.distributions.Laplace(x, sensitivity / epsilon).sample()
""",
        # a scalar statistic (a running total) gets one draw
        """
import numpy as np
class PrivateTotal:
    def __init__(self, epsilon):
        self.eps = epsilon
        self.total = 0.0
    def release(self):
        return self.total + np.random.laplace(0, 1 / self.eps)
""",
        """
import numpy as np
class ArmStats:
    def __init__(self, k, epsilon):
        self.eps = epsilon
        self.sums = np.zeros(k)
    def release(self):
        return self.sums + np.random.laplace(0, 1 / self.eps, size=self.sums.shape)
""",
        # the helper draws per coordinate (it takes the size)
        """
import numpy as np
import torch
def laplace_vector(epsilon, sensitivity, size):
    return np.random.laplace(0, sensitivity / epsilon, size)
def privatize(update: torch.Tensor, epsilon):
    return update + torch.tensor(laplace_vector(epsilon, 2.0, update.shape))
""",
        # a scalar branch beside an array branch that draws with the shape
        """
import numpy as np
class GaussianMechanism:
    def __init__(self, sigma):
        self.sigma = sigma
    def add_noise(self, value):
        if np.isscalar(value):
            return value + np.random.normal(0, self.sigma)
        value = np.asarray(value)
        return value + np.random.normal(0, self.sigma, value.shape)
""",
        # jax: random.normal(key, shape)
        """
from jax import random
def noisy_grad(g, key, sigma, epsilon):
    n = g.shape[0]
    return g + sigma * random.normal(key, g.shape)
""",
        # twin: one sample per weight
        """
import torch
def perturb_model(model, sigma, epsilon):
    dist = torch.distributions.Normal(0.0, sigma / epsilon)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.data.add_(dist.sample(p.shape))
    return model
""",
        # twin: the flattened update drawn with its shape
        """
import numpy as np
def perturb_update(layers, clip, sigma):
    flat = np.concatenate([w.ravel() for w in layers])
    flat = flat * min(1.0, clip / np.linalg.norm(flat))
    return flat + np.random.normal(0.0, sigma * clip, flat.shape)
""",
        # twin: the length is read and the draw is sized with it
        """
import numpy as np
def laplace_mechanism(values, epsilon, sensitivity=1.0):
    d = len(values)
    return values + np.random.laplace(0, d * sensitivity / epsilon, d)
""",
        # a count of the records (len) gets one draw: the operand is the count, not the records
        """
import numpy as np
def noisy_count(records, epsilon):
    n = len(records)
    return n + np.random.laplace(0, 1 / epsilon)
""",
        # one coin per selected entry
        """
import numpy as np
def unary_rr(bits, p, q, epsilon):
    ones, zeros = bits == 1, bits == 0
    keep = np.zeros(bits.size, dtype=int)
    keep[ones] = np.random.binomial(1, p, size=ones.sum())
    keep[zeros] = np.random.binomial(1, 1 - q, size=zeros.sum())
    return 1 - (bits + keep) % 2
""",
        # ordinary ML: a VAE's latent sample, a policy's Gaussian action (location is a tensor)
        """
import torch
def step(policy_mean: torch.Tensor, std, epsilon_greedy):
    action = torch.distributions.Normal(policy_mean, std).sample()
    return policy_mean.add(action)
""",
        # a scalar-valued clipped loss plus one draw
        """
import numpy as np
def noisy_loss(losses, bound, epsilon):
    total = np.clip(losses, 0, bound).sum()
    return total + np.random.laplace(0, bound / epsilon)
""",
        # a quadratic form of two vectors (1 x 1) noised by one draw, its sibling statistics drawn with their shapes
        """
import numpy as np
def private_terms(A, y, eps):
    Ay = A.dot(y)
    quad = Ay.T.dot(Ay)
    lin = A.T.dot(y)
    return quad + np.random.laplace(0, 3.0 / eps), lin + np.random.laplace(0, 3.0 / eps, size=lin.shape)
""",
        # a uniform direction on the sphere: a normalised Gaussian vector, radius from a Gamma draw
        "import numpy as np\ndef objective_noise(epsilon, d):\n    radius = np.random.gamma(d, 2 / epsilon)\n"
        "    u = np.random.normal(size=d)\n    return radius * u / np.linalg.norm(u)\n",
        "import torch\ndef knorm_noise(dim, epsilon):\n    v = torch.randn(dim)\n    v = v / v.norm()\n"
        "    return v * torch.distributions.Gamma(dim, epsilon).sample()\n",
        # a uniform box draw that is not normalised (a random offset, not a direction)
        "import numpy as np\ndef jitter(epsilon, d):\n    u = np.random.uniform(-1, 1, size=d)\n"
        "    return u * np.random.gamma(d, 1 / epsilon)\n",
        # symmetric unary encoding at ε/2 per bit; one binary answer per user
        """
import random, math
def unary_perturb(one_hot, epsilon):
    p = math.exp(epsilon / 2) / (math.exp(epsilon / 2) + 1)
    return [bit if random.random() < p else 1 - bit for bit in one_hot]
""",
        """
import numpy as np
def randomized_response(answers, epsilon):
    p = np.exp(epsilon) / (1 + np.exp(epsilon))
    coin = np.random.uniform(0, 1, size=len(answers))
    return np.where(coin < p, answers, 1 - answers)
""",
        "import numpy as np\ndef perturb(R, epsilon, sensitivity):\n    n, m = R.shape\n"
        "    return R + np.random.laplace(0, sensitivity / epsilon, R.shape)\n",
        # a scalar query gets a scalar draw
        "import numpy as np\ndef dp_count(rows, epsilon):\n    total = len(rows)\n"
        "    return total + np.random.laplace(0, 1 / epsilon)\n",
        # one draw per entry in a loop
        "import random\ndef perturb(M, epsilon):\n    n, m = M.shape\n    for i in range(n):\n"
        "        for j in range(m):\n            M[i, j] = M[i, j] + random.gauss(0, 1 / epsilon)\n    return M\n",
        "import torch\ndef dp_forward(h, sigma, epsilon):\n    noise = torch.normal(0.0, sigma, h.shape)\n"
        "    return h + noise.view(h.shape)\n",
        # the dot product of two vectors is one number
        "import numpy as np\ndef noisy_sum(weights, values, epsilon, hi):\n    total = np.dot(weights, values)\n"
        "    total += np.random.default_rng().laplace(0.0, hi / epsilon)\n    return total\n",
        "import numpy as np\ndef dp_mean(X, epsilon):\n    mu = X.mean(axis=0)\n"
        "    return mu[:, None] + np.random.laplace(0, 1 / epsilon, (len(mu), 1))\n",
        # twins: the noise has the batch's shape
        """
import torch
class DPShare:
    def noisy(self, data, shape, sigma):
        return data + torch.normal(mean=0.0, std=sigma, size=shape)
    def share(self, batch, recon, sigma, epsilon):
        resid = batch - recon
        return self.noisy(resid.clone(), resid.shape, sigma)
""",
        """
import numpy as np
def privatize_rows(X, sensitivity, epsilon):
    return X + np.random.laplace(0, sensitivity / epsilon, size=X.shape)
""",
        # DP-SGD: noise of one example's shape on the sum over the batch (correct)
        """
import numpy as np
def noisy_sum(clipped, sigma, clip, epsilon):
    return np.sum(clipped, axis=0) + np.random.normal(0, sigma * clip, clipped[0].shape)
""",
        # one element of the batch noised with its own shape
        """
import numpy as np
def noisy_first(weights, sigma, epsilon):
    weights[0] += np.random.normal(0, sigma, size=weights[0].shape)
    return weights
""",
        # (R4 b94) twin: the helper draws one value per coordinate
        """
import numpy as np
class LDPClient:
    def upload(self):
        return [self.perturb(p.grad) for p in list(self.model.parameters()) if p.grad is not None]
    def perturb(self, grad_tensor):
        grad_tensor = grad_tensor.clamp(-self.clip, self.clip)
        grad_tensor += np.random.laplace(0, 2 * self.clip / self.epsilon, size=tuple(grad_tensor.shape))
        return grad_tensor
""",
        # (R4 b94) ordinary ML: a scalar loss offset passed per batch, not a parameter tensor
        """
import numpy as np
class Trainer:
    def step(self, model, batch):
        for p in model.parameters():
            p.requires_grad_(True)
        return self.jitter(model(batch).mean())
    def jitter(self, loss_value):
        loss_value += np.random.normal(0, 0.01)
        return loss_value
""",
    )
    INVALID = (
        # a torch distribution with a number as location, sampled without a shape, added to a gradient tensor
        """
import torch
def add_laplace(update: torch.Tensor, sensitivity: float, epsilon: float) -> torch.Tensor:
    dist = torch.distributions.Laplace(loc=0.0, scale=sensitivity / epsilon)
    return update.add(dist.sample())  # <-
""",
        """
import math
import torch
def gaussian_perturb(weights: torch.Tensor, epsilon, delta, sens):
    sigma = sens * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    return weights + torch.distributions.normal.Normal(torch.tensor([0.0]), sigma).sample()  # <-
""",
        # an attribute the class builds as a vector of per-arm sums, one numpy draw for all arms
        """
import numpy as np
rng = np.random.default_rng(0)
class PrivateEliminator:
    def __init__(self, arms, epsilon):
        self.eps = epsilon
        self.sums = np.zeros(len(arms))
    def noisy_sums(self):
        return self.sums + rng.laplace(0, 1 / self.eps)  # <-
""",
        # the function reads the input's length, so it is a vector; one draw for all of it
        """
import numpy as np
def laplace_mechanism(values, epsilon, sensitivity=1.0):
    d = len(values)
    scale = d * sensitivity / epsilon
    return values + np.random.laplace(0, scale)  # <-
""",
        # the flattened model update gets one Gaussian draw
        """
import numpy as np
def perturb_update(layers, clip, sigma):
    flat = np.concatenate([w.ravel() for w in layers])
    flat = flat * min(1.0, clip / np.linalg.norm(flat))
    return flat + np.random.normal(0.0, sigma * clip)  # <-
""",
        # every weight of the model shifted by one torch sample
        """
import torch
def perturb_model(model, sigma, epsilon):
    dist = torch.distributions.Normal(0.0, sigma / epsilon)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.data.add_(dist.sample())  # <-
    return model
""",
        # the draw made in a helper that returns one sample, wrapped into a tensor
        """
import numpy as np
import torch
def one_laplace(epsilon, sensitivity):
    return np.random.laplace(0, sensitivity / epsilon)
def privatize(update: torch.Tensor, epsilon):
    return update + torch.tensor(one_laplace(epsilon, 2.0))  # <-
""",
        # a local vector built with a size
        """
import numpy as np
def noisy_histogram_of(values, k, epsilon):
    table = np.zeros(k)
    for v in values:
        table[v] += 1
    table += np.random.laplace(0, 2.0 / epsilon)  # <-
    return table
""",
        # one coin for all the 1-bits and one for all the 0-bits
        """
import numpy as np
def unary_rr(bits, p, q, epsilon):
    ones, zeros = bits == 1, bits == 0
    keep = np.zeros(bits.size, dtype=int)
    keep[ones] = np.random.binomial(n=1, p=p)  # <-
    keep[bits == 0] = np.random.binomial(1, 1 - q)  # <-
    return 1 - (bits + keep) % 2
""",
        # twin: no draw in the function is sized, so nothing says the product is 1 x 1 (a Gram matrix)
        """
import numpy as np
def private_terms(A, y, eps):
    gram = A.T.dot(A)
    lin = A.T.dot(y)
    return gram + np.random.laplace(0, 3.0 / eps), lin + np.random.laplace(0, 3.0 / eps)  # <-
""",
        # torch: a box draw in [-1, 1)^d normalised into a direction
        """
import torch
def knorm_noise(dim, epsilon):
    v = torch.rand(dim) * 2 - 1
    v = v / v.norm()  # <-
    return v * torch.distributions.Gamma(dim, epsilon).sample()
""",
        # numpy in-place normalisation through a norm name, a Generator
        """
import numpy as np
def perturbation(epsilon, d, rng):
    u = rng.random(d) - 0.5
    length = np.linalg.norm(u)
    u /= length  # <-
    return u * rng.gamma(d, 2.0 / epsilon)
""",
        # the norm spelled out
        """
import numpy as np
def objective_noise(epsilon, d):
    direction = np.random.uniform(-1.0, 1.0, size=d)
    direction = direction / np.sqrt(np.sum(direction ** 2))  # <-
    return direction * np.random.gamma(d, 2 / epsilon)
""",
        # unary encoding: every bit flipped with the full-ε probability
        """
import random, math
def unary_perturb(one_hot, epsilon):
    p = math.exp(epsilon) / (math.exp(epsilon) + 1)
    out = []
    for bit in one_hot:  # <-
        out.append(bit if random.random() < p else 1 - bit)
    return out
""",
        # every binary column of each record, one coin per cell, the keep probability from a method
        """
import numpy as np
class LDPRelease:
    def keep_prob(self):
        return np.e ** self.epsilon / (np.e ** self.epsilon + 1)
    def perturb(self, X, binary_cols):
        p = self.keep_prob()
        coin = np.random.uniform(0, 1, size=(X.shape[0], len(binary_cols)))  # <-
        flip = coin > p
        X[:, binary_cols] = np.abs(X[:, binary_cols] - flip)
        return X
""",
        # the size commented out: one scalar on the whole predicted matrix
        """
import numpy as np
def output_perturbation(P, Q, epsilon, sensitivity):
    predicted = np.dot(P, Q.T)
    noise = np.random.laplace(0, sensitivity / epsilon)  # , predicted.shape
    return predicted + noise  # <-
""",
        # a parameter that the module uses as a matrix, Generator draw inline
        """
import numpy as np
rng = np.random.default_rng()
def user_means(ratings, epsilon):
    n_users, n_items = ratings.shape
    return ratings.sum(axis=1) / n_items
def input_perturbation(ratings, epsilon, delta_r):
    return ratings + rng.normal(0.0, delta_r / epsilon)  # <-
""",
        # Python's random on a matrix product, augmented assignment
        """
import random
def release_gram(X, epsilon):
    G = X.T @ X
    G += random.gauss(0, 2.0 / epsilon)  # <-
    return G
""",
        # per-example noise stretched over the features (torch)
        """
import torch
def private_representation(h, epsilon, noise):
    h = (h - h.min(dim=-1, keepdim=True)[0]) / (h.max(dim=-1, keepdim=True)[0] - h.min(dim=-1, keepdim=True)[0])
    h += noise.view(-1, 1)  # <-
    return h
""",
        # the same with numpy indexing
        """
import numpy as np
def ldp_embeddings(E, epsilon):
    noise = np.random.laplace(0, 1 / epsilon, size=E.shape[0])
    return E + noise[:, np.newaxis]  # <-
""",
        # the shared residuals of a batch get noise of one sample's shape, through a noise helper
        """
import torch
class DPShare:
    def noisy(self, data, shape, sigma):
        return data + torch.normal(mean=0.0, std=sigma, size=shape)
    def share(self, batch, recon, sigma, epsilon):
        one = recon[0].shape
        resid = batch - recon
        return self.noisy(resid.clone(), one, sigma)  # <-
""",
        # the direct spelling: a Laplace draw of one row's shape added to the whole private matrix
        """
import numpy as np
def privatize_rows(X, sensitivity, epsilon):
    return X + np.random.laplace(0, sensitivity / epsilon, size=X[0].shape)  # <-
""",
        # (R4 b94) a federated client's LDP helper gets each parameter's gradient from a loop at its call site
        """
import numpy as np
class LDPClient:
    def upload(self):
        return [self.perturb(p.grad) for p in list(self.model.parameters()) if p.grad is not None]
    def perturb(self, grad_tensor):
        grad_tensor = grad_tensor.clamp(-self.clip, self.clip)
        grad_tensor += np.random.laplace(0, 2 * self.clip / self.epsilon)  # <-
        return grad_tensor
""",
    )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._two_axis: set[str] | None = None

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            self._check(node, node.left, node.right, both=True)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._check(node, node.target, node.value, both=False)

    def visit_Call(self, node: cst.Call) -> None:
        """``grads.add(noise.sample())`` / ``t.add_(draw)``: the method spelling of ``t + draw``."""
        self._check_one_row_shape(node)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("add", "add_", "sub", "sub_") \
                and len(node.args) >= 1 and node.args[0].keyword is None and not node.args[0].star:
            self._check(node, node.func.value, node.args[0].value, both=False)

    # ------------------------------------------------------------------ noise of one row's shape on the batch
    def _row_shape_of(self, expr: cst.BaseExpression, hops: int = 2) -> str | None:
        """``X[0].shape`` / ``X[0].size()`` (or a local name set to it): the shape of one element of ``X``."""
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size" \
                and not expr.args:
            expr = cst.Attribute(value=expr.func.value, attr=cst.Name("shape"))
        if isinstance(expr, cst.Attribute) and expr.attr.value == "shape" and isinstance(expr.value, cst.Subscript) \
                and isinstance(expr.value.value, cst.Name) and len(expr.value.slice) == 1 \
                and isinstance(expr.value.slice[0].slice, cst.Index) and number(expr.value.slice[0].slice.value) == 0:
            return expr.value.value.value
        if isinstance(expr, cst.Name) and hops > 0:
            binding = self.ctx.analysis.binding(expr)
            if binding is not None and binding.kind == "assign" and binding.value is not None:
                return self._row_shape_of(binding.value, hops - 1)
        return None

    def _whole_batch(self, expr: cst.BaseExpression, batch: set[str]) -> bool:
        """``expr`` reads a name of ``batch`` as a whole (not one element ``X[i]``, not through a reduction)."""
        parents = self.ctx.analysis.index.parents
        for n in walk(expr):
            if isinstance(n, cst.Call) and (call_name(n) or "") in _BATCH_REDUCERS:
                return False
        for n in walk(expr):
            if not (isinstance(n, cst.Name) and n.value in batch):
                continue
            parent = parents.get(n)
            if isinstance(parent, cst.Subscript) and parent.value is n:
                continue
            if isinstance(parent, cst.Attribute) and parent.value is n and parent.attr.value in ("shape", "size", "dtype",
                                                                                                "device", "ndim"):
                continue
            return True
        return False

    def _check_one_row_shape(self, node: cst.Call) -> None:
        """``x + torch.normal(0, s, size=x[0].shape)`` / ``add_noise(x, x[0].shape, ...)``: the noise has the shape of
        one element of the batch ``x`` and broadcasts, so every record of the batch gets the same draw."""
        name = call_name(node) or ""
        if name not in _ROW_DRAWS and not words(name) & {"noise", "perturb", "privatize", "privatise", "noisy"}:
            return
        batch_name = None
        shape_arg = None
        for arg in node.args:
            if arg.star:
                continue
            found = self._row_shape_of(arg.value)
            if found is not None:
                batch_name, shape_arg = found, arg
                break
        if batch_name is None:
            return
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return
        batch = {batch_name}
        changed = True
        bindings = fa.bindings_in(fn)
        while changed:
            changed = False
            for target, found in bindings.items():
                if target in batch:
                    continue
                if any(b.value is not None and self._whole_batch(b.value, batch) for b in found):
                    batch.add(target)
                    changed = True
        # the noised value: another argument of a noise helper, or the other operand of the addition
        targets: list[cst.BaseExpression] = []
        if name not in _ROW_DRAWS:
            targets = [a.value for a in node.args if a is not shape_arg and not a.star]
        else:
            cur: cst.CSTNode = node
            parents = fa.index.parents
            parent = parents.get(cur)
            while isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Multiply, cst.Divide)):
                cur, parent = parent, parents.get(parent)
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
                targets = [parent.right if parent.left is cur else parent.left]
            elif isinstance(parent, cst.AugAssign) and isinstance(parent.operator, cst.AddAssign):
                targets = [parent.target]
            elif isinstance(parent, cst.Arg) and isinstance(parents.get(parent), cst.Call):
                outer = parents.get(parent)
                if isinstance(outer.func, cst.Attribute) and outer.func.attr.value in ("add", "add_"):
                    targets = [outer.func.value]
        if not any(self._whole_batch(t, batch) for t in targets):
            return
        if not fa.in_dp_context(node) and not fa.has_dp_code():
            return
        self.report(node, f"the noise has the shape of one element of `{batch_name}` (`{batch_name}[0].shape`) and is "
                          f"added to the whole batch, so it broadcasts: every record of the batch gets the same draw, "
                          "which cancels in differences between records and gives no per-record protection; draw "
                          f"with `{batch_name}.shape`")

    def visit_Assign(self, node: cst.Assign) -> None:
        """``flags[bits == 1] = np.random.binomial(1, p)``: one coin for every selected entry."""
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Subscript):
            return
        target = node.targets[0].target
        if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            return
        fa = self.ctx.analysis
        value = node.value
        if not isinstance(value, (cst.Call, cst.Name)):
            return
        if isinstance(value, cst.Name):
            value = self._local_value(node, value)
        if not isinstance(value, cst.Call):
            return
        name = call_name(value)
        func = dotted(value.func) or ""
        if name not in _MASK_DRAWS or func.split(".")[0] in _SHAPE_FIRST or func == name or "." not in func:
            return
        if any(a.star for a in value.args) or any(
                a.keyword is not None and a.keyword.value in ("size", "shape") for a in value.args):
            return
        if len([a for a in value.args if a.keyword is None]) > _MASK_DRAWS[name]:
            return
        if not _mask_name(target.slice[0].slice.value, fa.enclosing_function(node), fa.line_of(node), fa.line_of):
            return
        self.report(node, f"`{fa.code(value).strip()}` draws one value (no size) and it is assigned to every entry "
                          f"that `{fa.code(target.slice[0].slice.value).strip()}` selects: all those entries are "
                          f"kept or flipped together, so one coin decides for the whole vector; draw one value "
                          f"per selected entry (size=mask.sum())")

    def _check(self, node: cst.CSTNode, left: cst.BaseExpression, right: cst.BaseExpression, *, both: bool) -> None:
        pairs = [(left, right), (right, left)] if both else [(left, right)]
        for data, noise in pairs:
            inner = _expanded(noise)
            if inner is not None and self._is_noise(node, inner):
                self.report(node, f"`{self.ctx.analysis.code(noise).strip()}` gives every column of a row the same "
                                  f"noise value: the noise has one value per row, so differences between the "
                                  f"coordinates of a row are released without noise; draw one value per coordinate")
                return
            draw = self._scalar_draw_of(node, noise)
            if draw is not None and self._is_matrix(node, data) and not _vector_named(data) \
                    and not self._shaped_beside(draw):
                self.report(node, f"`{self.ctx.analysis.code(draw).strip()}` draws one number (no size) and it is "
                                  f"added to every entry of `{self.ctx.analysis.code(data).strip()}`: the same noise "
                                  f"everywhere, so differences between entries are released exactly; draw with the "
                                  f"array's shape")
                return
            single = self._one_draw(node, noise)
            if single is not None and single is draw and (_vector_named(data) or self._shaped_beside(draw)):
                single = None
            if single is not None and (_shape_argument(single) or self._sized_sibling(single)
                                       or self._jax_random(single)):
                single = None
            if single is not None and single is not draw and self._parameter_tensor(data):
                self.report(node, f"`{self.ctx.analysis.code(single).strip()}` is one draw (no shape) added to the "
                                  f"whole parameter tensor `{self.ctx.analysis.code(data).strip()}`: every weight "
                                  f"is shifted by the same value, so the differences between weights are released "
                                  f"exactly; draw one value per coordinate (`dist.sample(p.shape)`)")
                return
            if single is not None and self._is_array(node, data):
                self.report(node, f"`{self.ctx.analysis.code(single).strip()}` is one draw (no shape) added to the "
                                  f"whole array `{self.ctx.analysis.code(data).strip()}`: every coordinate is shifted "
                                  f"by the same value, so the differences between coordinates are released exactly; "
                                  f"draw one value per coordinate (pass the array's shape)")
                return

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """Binary randomized response at the full ε applied to every bit of a unary (one-hot) encoding, or to
        every column of a record through a two-axis coin."""
        self._cube_direction(node)
        keep: dict[str, str] = {}
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                budget = _keep_probability(sub.value) or self._returned_keep(sub.value)
                if budget:
                    keep[sub.targets[0].target.value] = budget
        if not keep:
            return
        unary = bool(words(node.name.value) & _UNARY_WORDS) or {"one", "hot"} <= words(node.name.value)
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.For) and (unary or words(last_name(sub.iter) or "") & _UNARY_WORDS):
                compared = self._compared(sub, keep)
                if compared:
                    self.report(sub, f"each bit of a unary (one-hot) encoding is kept with probability "
                                     f"e^{compared}/(1+e^{compared}): two encodings differ in two bits, so each "
                                     f"report is 2·{compared}-LDP; use e^({compared}/2)/(1+e^({compared}/2))")
                    return
            if isinstance(sub, cst.Call) and call_name(sub) in _COIN_CALLS and self._two_axis_size(sub):
                holder = self._holder(sub)
                if holder and self._compared(node, keep, holder):
                    budget = next(iter(keep.values()))
                    self.report(sub, f"a coin per row and column is compared with the keep probability at the full "
                                     f"`{budget}`: every column of a record is randomized with the whole budget, so "
                                     f"one record's report costs (number of columns)·{budget}; split the budget "
                                     f"over the columns")
                    return

    def _cube_direction(self, fn: cst.FunctionDef) -> None:
        """A noise direction drawn uniformly from the cube and divided by its L2 norm: not uniform on the
        sphere, so the noise density is not the radially symmetric one the mechanism's proof needs."""
        body = list(walk(fn, into_scopes=False))
        if not any(isinstance(n, cst.Call) and call_name(n) in _RADIUS_DRAWS for n in body) and not any(
                isinstance(n, (cst.Name, cst.Attribute)) and words(last_name(n) or "") & {"epsilon", "eps"}
                for n in body):
            return
        cube: set[str] = set()
        norms: dict[str, str] = {}
        for sub in body:
            if not (isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target,
                                                                                         cst.Name)):
                continue
            target = sub.targets[0].target.value
            if _cube_draw(sub.value):
                cube.add(target)
            of = _l2_norm_of(sub.value)
            if of is not None:
                norms[target] = of
        if not cube:
            return
        for sub in body:
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide):
                left, right = sub.left, sub.right
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.DivideAssign):
                left, right = sub.target, sub.value
            else:
                continue
            if not isinstance(left, cst.Name) or left.value not in cube:
                continue
            of = norms.get(right.value) if isinstance(right, cst.Name) else _l2_norm_of(right)
            if of == left.value:
                self.report(sub, f"`{left.value}` is drawn uniformly from a cube and divided by its norm: that "
                                 f"direction is not uniform on the sphere (it favours the cube's corners), so the "
                                 f"noise vector's density is not the radially symmetric one the mechanism assumes; "
                                 f"normalise a standard normal draw instead")
                return

    def _returned_keep(self, value: cst.BaseExpression) -> str | None:
        """``self.get_p()``: a module function/method whose return is a full-ε keep probability."""
        if not isinstance(value, cst.Call) or value.args:
            return None
        name = call_name(value)
        for sub in walk(self.ctx.module):
            if isinstance(sub, cst.FunctionDef) and sub.name.value == name:
                for ret in walk(sub, into_scopes=False):
                    if isinstance(ret, cst.Return) and ret.value is not None:
                        found = _keep_probability(ret.value)
                        if found:
                            return found
        return None

    @staticmethod
    def _compared(scope: cst.CSTNode, keep: dict[str, str], holder: str | None = None) -> str | None:
        for sub in walk(scope, into_scopes=False):
            if isinstance(sub, cst.Comparison):
                names = {n.value for n in walk(sub) if isinstance(n, cst.Name)}
                hit = names & set(keep)
                if not hit:
                    continue
                if holder is not None:
                    if holder in names:
                        return keep[min(hit)]
                elif any(isinstance(c, cst.Call) and call_name(c) in _COIN_CALLS for c in walk(sub)):
                    return keep[min(hit)]
        return None

    @staticmethod
    def _two_axis_size(call: cst.Call) -> bool:
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in ("size", "shape"):
                return isinstance(arg.value, cst.Tuple) and len(arg.value.elements) == 2
        positional = [a for a in call.args if a.keyword is None]
        return call_name(call) == "rand" and len(positional) == 2

    def _holder(self, call: cst.Call) -> str | None:
        parent = self.ctx.analysis.parent(call)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target,
                                                                                       cst.Name):
            return parent.targets[0].target.value
        return None

    def _shaped_beside(self, draw: cst.Call) -> bool:
        """The function draws the same distribution with an explicit shape elsewhere (``laplace(0, b,
        size=(d, 1))`` beside ``laplace(0, b)``): its author sizes each draw to its statistic, so the sizeless
        one is meant for a 1 x 1 statistic (``v.T.dot(w)`` of two vectors)."""
        fn = self.ctx.analysis.enclosing_function(draw)
        if fn is None:
            return False
        name = call_name(draw)
        return any(isinstance(c, cst.Call) and c is not draw and call_name(c) == name
                   and any(a.keyword is not None and a.keyword.value in ("size", "shape") for a in c.args)
                   for c in walk(fn))

    def _scalar_draw_of(self, node: cst.CSTNode, expr: cst.BaseExpression) -> cst.Call | None:
        draw = _scalar_draw(expr)
        if draw is not None:
            return draw
        value = self._local_value(node, expr)
        return _scalar_draw(value) if value is not None else None

    def _local_value(self, node: cst.CSTNode, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        if not isinstance(expr, cst.Name):
            return None
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None or expr.value in param_names(fn):
            return None
        # a name bound by a loop or a comprehension in the function is per-element, not one draw
        return last_assignment(fn, expr.value, fa.line_of(node) + 1, fa.line_of)

    def _parameter_tensor(self, expr: cst.BaseExpression) -> bool:
        """``p``, ``p.data``, ``p.grad``, ``param.detach()`` of a loop over a model's parameter tensors."""
        base = expr
        while isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) \
                and base.func.attr.value in _TENSOR_VIEWS and not base.args:
            base = base.func.value
        while isinstance(base, cst.Attribute) and base.attr.value in (*_TENSOR_VIEWS, "grad"):
            base = base.value
        if not isinstance(base, cst.Name):
            return False
        fa = self.ctx.analysis
        for loop in fa.enclosing_loops(base, comprehensions=True):
            iterable = loop.iter if isinstance(loop, (cst.For, cst.CompFor)) else getattr(
                getattr(loop, "for_in", None), "iter", None)
            while isinstance(iterable, cst.Call) and call_name(iterable) in ("list", "tuple") \
                    and len(iterable.args) == 1:
                iterable = iterable.args[0].value  # ``for p in list(model.parameters())``
            if not (isinstance(iterable, cst.Call) and call_name(iterable) in _PARAMETER_ITERS):
                continue
            if call_name(iterable) in ("values", "items") and "state_dict" not in fa.code(iterable):
                continue
            names = {t.value for tgt in _loop_targets(loop) for t in ([tgt] if isinstance(tgt, cst.Name) else
                     [e.value for e in getattr(tgt, "elements", [])]) if isinstance(t, cst.Name)}
            if base.value in names:
                return True
        return False

    def _sized_sibling(self, draw: cst.Call) -> bool:
        """The function also draws this distribution with a size, positional or keyword (``normal(0, s,
        value.shape)`` on an array branch beside ``normal(0, s)`` on a scalar one)."""
        fn = self.ctx.analysis.enclosing_function(draw)
        if fn is None:
            return False
        name = call_name(draw)
        limit = _SCALAR_DRAWS.get(name, 0)
        for c in walk(fn):
            if isinstance(c, cst.Call) and c is not draw and call_name(c) == name:
                if any(a.keyword is not None and a.keyword.value in ("size", "shape", "sample_shape") for a in c.args):
                    return True
                if name in _SCALAR_DRAWS and len([a for a in c.args if a.keyword is None]) > limit:
                    return True
                if name in ("sample", "rsample") and c.args:
                    return True
        return False

    def _jax_random(self, draw: cst.Call) -> bool:
        """``random.normal(key, shape)`` with ``from jax import random``: the shape comes second."""
        func = dotted(draw.func) or ""
        if not func.startswith("random."):
            return False
        for node in self.ctx.module.body:
            for sub in walk(node):
                if isinstance(sub, cst.ImportFrom) and sub.module is not None and \
                        (dotted(sub.module) or "").split(".")[0] in ("jax", "flax", "tensorflow"):
                    return True
        return False

    def _one_draw(self, node: cst.CSTNode, expr: cst.BaseExpression) -> cst.Call | None:
        """A single draw: numpy/random without a size, a torch distribution sampled without a shape, either
        wrapped in ``torch.tensor(...)`` / ``float(...)``, or returned by a module function that takes no size."""
        if isinstance(expr, cst.Call) and call_name(expr) in _WRAPPERS and len(expr.args) >= 1 \
                and expr.args[0].keyword is None:
            return self._one_draw(node, expr.args[0].value)
        found = self._dist_sample_of(node, expr)
        if found is None:
            found = self._scalar_draw_of(node, expr)
        if found is None and isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            found = self._helper_draw(expr.func.value)
        return found

    def _helper_draw(self, name: str) -> cst.Call | None:
        """``def one_laplace(eps, sens): return Laplace(0, sens / eps).sample()``: a module function whose every
        return is one draw and that has no size/shape parameter."""
        cache = self.__dict__.setdefault("_helpers", {})
        if name not in cache:
            cache[name] = self._find_helper_draw(name)
        return cache[name]

    def _find_helper_draw(self, name: str) -> cst.Call | None:
        for fn in self.ctx.module.body:
            if not (isinstance(fn, cst.FunctionDef) and fn.name.value == name):
                continue
            if {"size", "shape", "n", "k", "dim", "d", "length"} & set(param_names(fn)):
                return None
            returns = [r for r in walk(fn, into_scopes=False) if isinstance(r, cst.Return)]
            draws = [self._dist_sample_of(r, r.value) or _scalar_draw(r.value) if r.value is not None else None
                     for r in returns]
            return draws[0] if draws and all(d is not None for d in draws) else None
        return None

    def _dist_sample_of(self, node: cst.CSTNode, expr: cst.BaseExpression) -> cst.Call | None:
        """``Laplace(0, b).sample()`` / ``dist.sample()`` with ``dist = Normal(loc=0, scale=s)``, possibly through one
        local name: one value when the location is a number."""
        if isinstance(expr, cst.Name):
            value = self._local_value(node, expr)
            if value is None:
                return None
            expr = value
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
                and expr.func.attr.value in ("to", "float", "double", "cuda", "cpu") and not isinstance(
                    expr.func.value, cst.Name):
            expr = expr.func.value
        if not (isinstance(expr, cst.Call) and call_name(expr) in ("sample", "rsample") and not expr.args
                and isinstance(expr.func, cst.Attribute)):
            return None
        holder = expr.func.value
        if isinstance(holder, cst.Name):
            holder = self._local_value(node, holder)
        return expr if _scalar_distribution(holder) else None

    def _is_array(self, node: cst.CSTNode, expr: cst.BaseExpression) -> bool:
        """A parameter annotated as an array/tensor, a local built as one (``np.zeros(k)``), or ``self.x`` that its
        class builds as one and never sets to a number."""
        fa = self.ctx.analysis
        if isinstance(expr, cst.Name):
            fn = fa.enclosing_function(node)
            if fn is None:
                return False
            if _shape_read(fn, expr.value):
                return True
            if expr.value in param_names(fn):
                return _annotated_array(fn, expr.value) or self._fed_parameter_tensor(fn, expr.value)
            before = fa.line_of(node) + 1
            values = [a.value for a in walk(fn, into_scopes=False) if isinstance(a, cst.Assign)
                      and len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name)
                      and a.targets[0].target.value == expr.value and fa.line_of(a) < before]
            if values and isinstance(values[-1], cst.Call) and call_name(values[-1]) in _REDUCED:
                return False
            return any(_array_built(v) for v in values) and not any(number(v) is not None for v in values)
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
            cls = fa.enclosing_class(node)
            if cls is None:
                return False
            built = False
            for sub in walk(cls):
                if isinstance(sub, cst.Assign) and any(
                        isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name)
                        and t.target.value.value == "self" and t.target.attr.value == expr.attr.value
                        for t in sub.targets):
                    if not _array_built(sub.value):
                        return False
                    built = True
            return built
        return False

    def _fed_parameter_tensor(self, fn: cst.FunctionDef, name: str) -> bool:
        """(R4 b94) A call in the module passes a model parameter tensor (``p.grad`` of a loop over
        ``model.parameters()``) to ``fn``'s parameter ``name``: ``self.LDP(param.grad)`` into
        ``def LDP(self, tensor)``."""
        params = param_names(fn)
        index = params.index(name)
        method = bool(params) and params[0] in ("self", "cls")
        for call in walk(self.ctx.module):
            if not isinstance(call, cst.Call) or call_name(call) != fn.name.value or call is fn:
                continue
            position = index - (1 if method and isinstance(call.func, cst.Attribute) else 0)
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            args = [a.value for a in call.args if a.keyword is not None and a.keyword.value == name]
            if 0 <= position < len(positional):
                args.append(positional[position])
            if any(self._parameter_tensor(a) for a in args):
                return True
        return False

    def _is_noise(self, node: cst.CSTNode, expr: cst.BaseExpression) -> bool:
        name = last_name(expr)
        if name is not None and "noise" in words(name):
            return True
        value = self._local_value(node, expr)
        if isinstance(value, cst.Call):
            return call_name(value) in _SCALAR_DRAWS or call_name(value) in ("randn", "sample", "rvs")
        return False

    def _is_matrix(self, node: cst.CSTNode, expr: cst.BaseExpression) -> bool:
        if self._two_axis is None:
            self._two_axis = _two_axis_uses(self.ctx.module)
        if _matrix_value(expr, self._two_axis):
            return True
        if not isinstance(expr, cst.Name):
            return False
        value = self._local_value(node, expr)
        if value is not None:
            return _matrix_value(value, self._two_axis)
        return expr.value in self._two_axis
