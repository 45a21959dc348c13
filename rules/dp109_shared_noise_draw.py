"""DP109: one scalar noise draw added to every coordinate of a vector release."""
from __future__ import annotations

import ast
from collections.abc import Callable

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, words
from dpcheck.rule import Rule
from dpcheck.analysis.clipping import ident

#: draws whose result is one number unless a size is given
_SCALAR_DRAWS = frozenset({"laplace", "normal", "gumbel", "gauss", "normalvariate", "exponential"})
#: calls that return a vector of counts / values
_VECTOR_CALLS = frozenset({
    "histogram", "histogramdd", "histogram2d", "bincount", "value_counts", "zeros", "ones", "full", "array",
    "asarray", "crosstab", "to_numpy", "zeros_like", "ones_like", "tensor", "cumsum", "marginal",
})
#: names that hold one value per bin / class / coordinate
_VECTOR_WORDS = frozenset({
    "counts", "hist", "histogram", "histo", "freqs", "frequencies", "marginal", "marginals", "grads",
    "gradients", "vector", "vec", "histograms", "coef", "coefs", "coefficients",
})
#: plural values of a vector release (``eig_vals``, ``scores``, ``embeddings``, ``centroids``): DP109's own
_RELEASE_VECTOR_WORDS = _VECTOR_WORDS | frozenset({
    "vals", "values", "eigenvalues", "eigvals", "eigs", "scores", "embeddings", "embedding", "logits", "probs",
    "probabilities", "centroids", "means", "sums", "estimates", "vecs", "vectors",
})
#: methods that return a parameter tensor itself (``param.detach()``, ``p.data``)
_TENSOR_VIEWS = frozenset({"detach", "clone", "data", "cpu", "numpy"})
#: iterables of a model's parameter tensors
_PARAMETER_ITERS = frozenset({"parameters", "named_parameters", "values", "items", "get_weights", "trainable_variables",
                              "trainable_weights"})
_REDUCERS = frozenset({"sum", "mean", "count", "size"})


def _scalar_draw(expr: cst.BaseExpression,
                 value_of: Callable[[cst.Name], cst.BaseExpression | None] | None = None) -> cst.Call | None:
    """``np.random.laplace(0, b)``, ``rng.normal(scale=s)``, ``random.gauss(0, s)``: one number (a centre
    held in a name bound to a number, ``mean = 0``, is a number too)."""
    if not isinstance(expr, cst.Call):
        return None
    name = call_name(expr)
    if name not in _SCALAR_DRAWS:
        return None
    func = dotted(expr.func) or ""
    if name == "normal" and func.split(".")[0] in ("torch", "tf", "jax", "jnp"):
        return None  # torch.normal(mean, std) takes its shape from tensor arguments
    positional = [a for a in expr.args if a.keyword is None]
    if any(a.star for a in expr.args):
        return None
    if any(a.keyword is not None and a.keyword.value in ("size", "shape", "sample_shape") and not _one(a.value)
           for a in expr.args):
        return None
    if name in ("gauss", "normalvariate"):
        return expr if func.startswith("random.") else None
    if name == "exponential":
        # ``exponential(scale, size)``: no centre; one number unless a size (the second positional) is given
        if func.split(".")[0] in ("torch", "tf", "jax", "jnp") or len(positional) > 2 \
                or len(positional) == 2 and not _one(positional[1].value):
            return None
        scale = positional[0].value if positional else next(
            (a.value for a in expr.args if a.keyword is not None and a.keyword.value in ("scale", "beta")), None)
        if scale is not None and value_of is not None and _array_valued(scale, value_of):
            return None
        return expr
    if len(positional) > 3 or len(positional) == 3 and not _one(positional[2].value):
        return None  # a size of 1 (``laplace(0, b, 1)``) is still one number, broadcast over the vector
    loc = positional[0].value if positional else next(
        (a.value for a in expr.args if a.keyword is not None and a.keyword.value in ("loc", "mean", "mu")), None)
    if isinstance(loc, cst.Name) and value_of is not None:
        loc = value_of(loc) or loc
    if loc is not None and number(loc) is None:
        return None  # noise centred on the values themselves: ``laplace(counts, b)`` has their shape
    scale = positional[1].value if len(positional) > 1 else next(
        (a.value for a in expr.args if a.keyword is not None and a.keyword.value in ("scale", "std", "sigma", "b")),
        None)
    if scale is not None and value_of is not None and _array_valued(scale, value_of):
        return None  # ``laplace(0, 4 / (steps * eps))`` with ``steps = np.arange(...)``: one draw per entry
    return expr


#: calls that build an array: a scale computed from one broadcasts the draw to its shape
_ARRAY_BUILDERS = frozenset({"arange", "linspace", "array", "asarray", "cumsum", "ones", "zeros", "full",
                             "ones_like", "zeros_like", "full_like", "tile", "repeat", "geomspace", "logspace"})


#: calls that reduce an array to one number: an array built inside them is no longer one
_TO_NUMBER = frozenset({"max", "min", "sum", "mean", "median", "norm", "len", "amax", "amin", "std", "var", "prod",
                       "item", "float", "int", "percentile", "quantile", "nanmax", "nanmin", "nansum", "count_nonzero"})


def _array_valued(expr: cst.CSTNode, value_of: Callable[[cst.Name], cst.BaseExpression | None],
                  depth: int = 0) -> bool:
    """``expr`` builds an array or reads a name assigned from one (``steps = np.arange(1, n + 1)``, then
    ``std = c / steps``), followed through up to three assignments; a reduction (``np.max(np.array(x))``)
    is a number."""
    if isinstance(expr, cst.Call):
        name = call_name(expr)
        if name in _TO_NUMBER:
            return False
        if name in _ARRAY_BUILDERS:
            return True
    if isinstance(expr, cst.Name):
        if depth >= 3:
            return False
        value = value_of(expr)
        return value is not None and _array_valued(value, value_of, depth + 1)
    return any(_array_valued(child, value_of, depth) for child in expr.children)


def _one(expr: cst.BaseExpression) -> bool:
    """``1`` or ``(1,)``: a size that draws a single number."""
    if isinstance(expr, (cst.Tuple, cst.List)) and len(expr.elements) == 1:
        expr = expr.elements[0].value
    return number(expr) == 1


def _ast_one(expr: ast.AST) -> bool:
    if isinstance(expr, (ast.Tuple, ast.List)) and len(expr.elts) == 1:
        expr = expr.elts[0]
    return isinstance(expr, ast.Constant) and expr.value == 1


def _ast_scalar(call: ast.Call) -> bool:
    """``_scalar_draw``'s argument test on CPython's ``ast`` (loosened: any ``gauss``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > 3 \
            or len(call.args) == 3 and not _ast_one(call.args[2]):
        return False
    keywords = {k.arg: k.value for k in call.keywords}
    if any(k in keywords and not _ast_one(keywords[k]) for k in ("size", "shape", "sample_shape")):
        return False
    loc = call.args[0] if call.args else next((keywords[k] for k in ("loc", "mean", "mu") if k in keywords), None)
    return loc is None or isinstance(loc, (ast.Constant, ast.UnaryOp, ast.Name)) or len(call.args) < 2 and not keywords


class SharedNoiseDraw(Rule):
    id = "DP109"
    name = "shared-noise-draw"
    category = "general"
    severity = "error"
    summary = "one scalar noise draw added to a whole vector (histogram, counts, gradient)"
    rationale = (
        "A vector release (a histogram, per-class counts, a summed gradient) needs independent "
        "noise in every coordinate. `counts + np.random.laplace(0, b)` draws ONE number and adds "
        "it to every count: the differences between counts are released exactly, the noise "
        "cancels from any contrast, and one record's count can be read off the released vector. "
        "The Laplace/Gaussian mechanism's guarantee is for i.i.d. noise per coordinate. "
        "Not reported: a draw with `size=`/a shape argument, a draw centred on the values "
        "(`np.random.laplace(counts, b)`), a per-element loop or comprehension, code with no DP "
        "context. Fix: `counts + np.random.laplace(0, b, size=counts.shape)`."
    )
    TRIGGERS = ("laplace", "normal", "gumbel", "gauss", "exponential")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is an addition (or subtraction, ``+=``/``-=``) with a draw call as an operand, or a call
        handing ε to a mechanism (which may be a scalar one given a vector)."""
        if any(k.arg in ("eps", "epsilon") for c in facts.calls for k in c.keywords):
            return True
        if not facts.calls_any(_SCALAR_DRAWS):
            return False
        pairs = [(b.left, b.right) for op in (ast.Add, ast.Sub) for b in facts.binops(op)]
        pairs += [(a.target, a.value) for op in (ast.Add, ast.Sub) for a in facts.augassigns(op)]
        drawn = {t.id for a in facts.nodes(ast.Assign) for t in a.targets  # type: ignore[attr-defined]
                 if isinstance(t, ast.Name) and isinstance(a.value, ast.Call)  # type: ignore[attr-defined]
                 and facts.call_lasts(a.value) & _SCALAR_DRAWS}  # type: ignore[attr-defined]
        return any(isinstance(side, ast.Call) and facts.call_lasts(side) & _SCALAR_DRAWS and (
                   _ast_scalar(side) or facts.call_lasts(side) & {"gauss", "normalvariate"})
                   or isinstance(side, ast.Name) and side.id in drawn
                   for pair in pairs for side in pair)

    VALID = (
        # twin: one exponential draw per category (still one-sided, but not shared)
        """
import numpy as np
def noisy_category_counts(frame, column, epsilon):
    counts = frame[column].value_counts()
    return counts + np.random.exponential(1.0 / epsilon, len(counts))
""",
        # ordinary ML: one exponential jitter for a learning-rate schedule
        """
import numpy as np
def schedule(lrs, epsilon=1e-8):
    base = np.array(lrs)
    return base * (1 + 0.01 * np.random.exponential(1.0)) + epsilon
""",
        # a scale that is itself a vector (one per step of a sequential test) draws one number per entry
        """
import numpy as np
def dp_sequential_means(data, epsilon, seed=None):
    rng = np.random.RandomState(seed)
    steps = np.arange(1, len(data) + 1).astype(float)
    means = np.cumsum(data) / steps
    noise = rng.laplace(0, 4 / (steps * epsilon))
    std = np.sqrt(2 * np.log(1.25 / 1e-5)) / (epsilon * steps)
    return means + noise, means + rng.normal(0, std)
""",
        # twins of the scalar-mechanism cases: the vector form of the helper, the helper given one count, and a
        # draw per eigenvalue
        """
import numpy as np
class Laplace:
    @staticmethod
    def release(*, value, epsilon, sensitivity):
        return value + np.random.laplace(0, sensitivity / epsilon)
    @staticmethod
    def release_vector(*, values, epsilon, sensitivity):
        return values + np.random.laplace(0, sensitivity / epsilon, size=len(values))
def private_sum(rows, epsilon, bound):
    clipped = np.clip(rows, -bound, bound)
    total = np.sum(clipped, axis=0)
    return Laplace.release_vector(values=total, epsilon=epsilon, sensitivity=2 * bound)
def private_count(rows, epsilon):
    return Laplace.release(value=len(rows), epsilon=epsilon, sensitivity=1)
def noisy_spectrum(A, k, epsilon):
    eig_vals, eig_vecs = np.linalg.eigh(A)
    return eig_vals[-k:] + np.random.laplace(0.0, np.sqrt(2 * k) / epsilon, size=k)
""",
        # augmentation jitter in a DP training script: not a release
        """
import numpy as np
def augment(features, epsilon_margin=0.1):
    return features + np.random.normal(0, 0.05, size=features.shape)
""",
        # twins of the size-1 draws: one draw per pixel, per coordinate, per row; a draw per element in the loop
        """
import cv2
import numpy as np
mean = 0
def noisy_images(paths, sensitivity, epsilon):
    beta = sensitivity / epsilon
    for path in paths:
        img = cv2.imread(path)
        laplacian_noise = np.random.laplace(mean, beta, img.shape)
        out = np.zeros(img.shape, np.float32)
        out[:, :, :] = img[:, :, :] + laplacian_noise
        cv2.imwrite(path + ".noisy", out)
""",
        """
import numpy as np
def dp_step(per_example_grads, clip, sigma):
    grads = per_example_grads.sum(axis=0)
    grads = grads + np.random.normal(0, sigma * clip, size=grads.shape)
    return grads / len(per_example_grads)
""",
        """
import numpy as np
def release_column(table, epsilon, rng):
    out = table[:, 0].copy()
    for i in range(len(out)):
        noise = rng.laplace(0, 1 / epsilon, 1)
        out[i] = table[i, 0] + noise
    return table[:, 0] + rng.laplace(0, 1 / epsilon, table.shape[0]), out
""",
        # one draw per bin
        """
import numpy as np
def dp_histogram(x, bins, epsilon):
    counts, edges = np.histogram(x, bins=bins)
    return counts + np.random.laplace(0, 1 / epsilon, size=counts.shape), edges
""",
        # a comprehension draws per element
        """
import numpy as np
def noisy_counts(counts, epsilon):
    return [c + np.random.laplace(0, 1.0 / epsilon) for c in counts]
""",
        # a scalar release: one count, one draw
        """
import numpy as np
def noisy_total(data, epsilon):
    total = len(data)
    return total + np.random.laplace(0, 1.0 / epsilon)
""",
        # draws centred on the counts have their shape
        """
import numpy as np
def release(data, epsilon):
    counts = np.bincount(data)
    return np.random.laplace(counts, 1.0 / epsilon)
""",
        # one element of the vector at a time
        """
import numpy as np
def release(hist, epsilon):
    out = np.zeros(len(hist))
    for i in range(len(hist)):
        out[i] = hist[i] + np.random.laplace(0, 2.0 / epsilon)
    return out
""",
        # one draw per coordinate: a size argument, or torch's shape-taking spelling
        """
import numpy as np
import torch
def fit(reg, X, y, Deltaf, epsilon, module, noise_scale):
    reg.fit(X, y)
    w = reg.coef_ + np.random.laplace(0, Deltaf / epsilon, size=reg.coef_.shape)
    state = module.state_dict()
    for name, param in module.named_parameters():
        state[name] = param.detach() + torch.normal(0, noise_scale, size=param.shape)
    return w
""",
    )

    INVALID = (
        # one exponential draw shared by every category count of a noisy histogram
        """
import numpy as np
def noisy_category_counts(frame, column, epsilon):
    counts = frame[column].value_counts()
    shared = np.random.exponential(1.0 / epsilon)
    return counts + shared  # <-
""",
        # eeprivacy operations.py: the clamped vector sum goes through the scalar Laplace helper; spectral_graph.py:
        # one draw for all k eigenvalues
        """
import numpy as np
class Laplace:
    @staticmethod
    def release(*, value, epsilon, sensitivity):
        return value + np.random.laplace(0, sensitivity / epsilon)
def private_sum(rows, epsilon, bound):
    clipped = np.clip(rows, -bound, bound)
    total = np.sum(clipped, axis=0)
    return Laplace.release(value=total, epsilon=epsilon, sensitivity=2 * bound)  # <-
def noisy_spectrum(A, k, epsilon):
    eig_vals, eig_vecs = np.linalg.eigh(A)
    eig_vals = eig_vals[-k:]
    return eig_vals + np.random.laplace(0.0, np.sqrt(2 * k) / epsilon)  # <-
""",
        # a draw of size 1 kept in a name and added to every pixel of an image (a slice is an array);
        # a size-1 keyword; a one-element shape tuple on a column slice
        """
import cv2
import numpy as np
mean = 0
def noisy_images(paths, sensitivity, epsilon):
    beta = sensitivity / epsilon
    for path in paths:
        img = cv2.imread(path)
        laplacian_noise = np.random.laplace(mean, beta, 1)
        out = np.zeros(img.shape, np.float32)
        out[:, :, :] = img[:, :, :] + laplacian_noise  # <-
        cv2.imwrite(path + ".noisy", out)
""",
        """
import numpy as np
def dp_step(per_example_grads, clip, sigma):
    grads = per_example_grads.sum(axis=0)
    grads = grads + np.random.normal(0, sigma * clip, size=1)  # <-
    return grads / len(per_example_grads)
""",
        """
import numpy as np
def release_column(table, epsilon, rng):
    return table[:, 0] + rng.laplace(0, 1 / epsilon, (1,))  # <-
""",
        # dp-federated_sharing agt_dp_linreg_obj.py / akathikar learning.py: one scalar draw for the whole
        # coefficient vector, and for every coordinate of each parameter tensor
        """
import numpy as np
def fit(reg, X, y, Deltaf, epsilon, module, random_state, noise_scale):
    reg.fit(X, y)
    w = reg.coef_ + np.random.laplace(0, Deltaf / epsilon)  # <-
    state_dict = module.state_dict()
    for name, param in module.named_parameters():
        state_dict[name] = param.detach() + random_state.normal(loc=0, scale=noise_scale)  # <-
    return w
""",
        # the histogram gets one shared draw
        """
import numpy as np
def dp_histogram(x, bins, epsilon):
    counts, edges = np.histogram(x, bins=bins)
    noisy = counts + np.random.laplace(0, 1 / epsilon)  # <-
    return noisy, edges
""",
        # class counts from pandas, scale by keyword
        """
import numpy as np
def label_distribution(df, epsilon):
    counts = df["label"].value_counts().sort_index()
    noisy = counts + np.random.laplace(scale=2.0 / epsilon)  # <-
    return noisy / noisy.sum()
""",
        # summed gradients of DP-SGD with one Gaussian number
        """
import numpy as np
def dp_step(per_example_grads, l2_norm_clip, noise_multiplier):
    grads = per_example_grads.sum(axis=0)
    grads += np.random.normal(0, noise_multiplier * l2_norm_clip)  # <-
    return grads / len(per_example_grads)
""",
        # a generator's draw on a vector named for counts
        """
import numpy as np
rng = np.random.default_rng()
def release(freqs, epsilon, sensitivity=1.0):
    return freqs + rng.laplace(0.0, sensitivity / epsilon)  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        """``LaplaceMechanism.execute(value=exact_sum, epsilon=e, sensitivity=s)`` where ``execute`` returns
        ``value + np.random.laplace(0, b)`` (one draw) and ``exact_sum`` is a vector (a sum over an axis, a
        histogram): the scalar mechanism adds one number to every coordinate."""
        if not node.args or not any(
                words(a.keyword.value if a.keyword is not None else getattr(a.value, "value", "") or "")
                & {"eps", "epsilon"} for a in node.args if a.keyword is not None or isinstance(a.value, cst.Name)):
            return  # a mechanism is handed its ε
        callee = self._scalar_mechanism(node)
        if callee is None:
            return
        name, params, index, method = callee
        offset = 1 if method else 0
        value = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == params[index]), None)
        if value is None:
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            at = index - offset
            value = positional[at] if 0 <= at < len(positional) else None
        if value is None:
            return
        vector = self._vector(value)
        if vector is None:
            return
        self.report(node, f"`{name}` adds one scalar draw to its `{params[index]}` (a single-value mechanism), and "
                          f"`{vector}` is a vector: every coordinate gets the same noise, so the differences between "
                          f"coordinates are released exactly; use the mechanism's vector form (one draw per "
                          f"coordinate, `size=len(...)`)")

    def _scalar_mechanism(self, call: cst.Call) -> tuple[str, list[str], int, bool] | None:
        """(name, parameters, index of the value parameter, is a bound method) of the called function, defined
        in this module or in a project module it imports (``from pkg.mechanisms import LaplaceMechanism``), when
        it returns its parameter plus one scalar draw."""
        func = call.func
        if isinstance(func, cst.Name):
            owner, name = None, func.value
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner, name = func.value.value, func.attr.value
        else:
            return None
        trees = self._callee_trees(owner or name)
        for tree in trees:
            scopes: list[tuple[list[ast.stmt], bool]] = [(tree.body, False)]
            if owner is not None:
                scopes = [(n.body, True) for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner]
            for body, in_class in scopes:
                for fn in body:
                    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name != name:
                        continue
                    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
                    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)]
                    index = _adds_scalar_draw(fn, params)
                    if index is None:
                        continue
                    bound = in_class and not static
                    return f"{owner + '.' if owner else ''}{name}", params, index, bound
        return None

    def _callee_trees(self, name: str) -> list[ast.Module]:
        """This module, and the project module that ``from … import name`` (or ``import … as name``) names."""
        import os

        from dpcheck.analysis.global_rng import _candidates, _module_imports_aliased, _roots, _tree

        out: list[ast.Module] = []
        if "_own_tree" not in self.__dict__:
            try:
                self.__dict__["_own_tree"] = ast.parse(self.ctx.module.code)
            except (SyntaxError, ValueError):
                self.__dict__["_own_tree"] = None
        if self.__dict__["_own_tree"] is not None:
            out.append(self.__dict__["_own_tree"])
        path = self.ctx.path
        if not path or not os.path.isfile(path):
            return out
        me = os.path.abspath(path)
        folder, roots = os.path.dirname(me), _roots(me)
        for module, level, _, alias in _module_imports_aliased(self.ctx.module):
            if alias != name or "." not in module and level == 0:
                continue
            parent = module.rsplit(".", 1)[0] if "." in module else ""
            for candidate in _candidates(folder, roots, parent, level, ()):
                tree = _tree(candidate)
                if tree is not None:
                    out.append(tree)
        return out

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, (cst.Add, cst.Subtract)):
            self._check(node, node.left, node.right)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._check(node, node.target, node.value)

    def _check(self, node: cst.CSTNode, left: cst.BaseExpression, right: cst.BaseExpression) -> None:
        for draw_side, other in ((right, left), (left, right)):
            value_of = self.ctx.analysis.value_of
            draw = _scalar_draw(draw_side, value_of)
            if draw is None and isinstance(draw_side, cst.Name):
                # ``noise = np.random.laplace(mean, beta, 1)`` then ``img[:, :, :] + noise``
                value = value_of(draw_side)
                draw = _scalar_draw(value, value_of) if isinstance(value, cst.Call) else None
                if draw is not None and self.ctx.analysis.enclosing_loops(draw_side, comprehensions=True) \
                        != self.ctx.analysis.enclosing_loops(draw, comprehensions=True):
                    draw = None  # drawn afresh in an inner loop: one number per element
            if draw is None:
                continue
            vector = self._vector(other)
            if vector is None:
                continue
            code = self.ctx.analysis.code(draw).strip()
            self.report(
                node,
                f"`{code}` draws one number and adds it to every coordinate of `{vector}`: the differences "
                "between coordinates are released without noise and the mechanism's guarantee (i.i.d. noise "
                f"per coordinate) does not hold; draw one value per coordinate (`size={vector}.shape`)",
            )
            return

    def _vector(self, expr: cst.BaseExpression) -> str | None:
        """The name of a vector-valued operand, when it is visibly one."""
        fa = self.ctx.analysis
        if isinstance(expr, cst.Call) and call_name(expr) in _VECTOR_CALLS:
            return fa.code(expr).strip()
        # ``param.detach()`` / ``p.data`` of a loop over a model's parameter tensors
        base = expr
        while isinstance(base, cst.Call) and isinstance(base.func, cst.Attribute) \
                and base.func.attr.value in _TENSOR_VIEWS and not base.args:
            base = base.func.value
        while isinstance(base, cst.Attribute) and base.attr.value in _TENSOR_VIEWS:
            base = base.value
        if isinstance(base, cst.Name) and self._parameter_tensor(base):
            return fa.code(expr).strip()
        if isinstance(expr, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in expr.slice):
            return fa.code(expr).strip()  # ``img[:, :, :]``: a slice is an array, whatever it is called
        if not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        name = ident(expr)
        if name is None:
            return None
        # sklearn's fitted coefficient vector (``reg.coef_``)
        if isinstance(expr, cst.Attribute) and expr.attr.value == "coef_":
            return name
        loops = fa.enclosing_loops(expr, comprehensions=True)
        if loops and any(name in {ident(t) for t in _loop_targets(loop)} for loop in loops):
            return None
        if isinstance(expr, cst.Name):
            value = fa.value_of(expr)
            if value is not None and self._vector_value(value):
                return name
        return name if words(name) & _RELEASE_VECTOR_WORDS else None

    def _parameter_tensor(self, name: cst.Name) -> bool:
        """A loop target bound to a model's parameter tensors: ``for n, param in model.named_parameters()``."""
        for loop in self.ctx.analysis.enclosing_loops(name, comprehensions=True):
            iterable = loop.iter if isinstance(loop, (cst.For, cst.CompFor)) else getattr(getattr(loop, "for_in", None), "iter", None)
            if not (isinstance(iterable, cst.Call) and call_name(iterable) in _PARAMETER_ITERS):
                continue
            if call_name(iterable) in ("values", "items") and "state_dict" not in self.ctx.analysis.code(iterable):
                continue
            targets = _loop_targets(loop)
            names = {t.value for tgt in targets for t in ([tgt] if isinstance(tgt, cst.Name) else
                     [e.value for e in getattr(tgt, "elements", [])]) if isinstance(t, cst.Name)}
            if name.value in names:
                return True
        return False

    def _vector_value(self, value: cst.BaseExpression) -> bool:
        """Is an assigned value a vector: a histogram/bincount/zeros call, an axis reduction, or a
        tuple element of ``np.histogram``?"""
        if isinstance(value, cst.Call):
            name = call_name(value)
            if name in _VECTOR_CALLS:
                return True
            if name in _REDUCERS:
                return any(a.keyword is not None and a.keyword.value in ("axis", "dim") or
                           (a.keyword is None and number(a.value) is not None) for a in value.args) \
                    or (name in ("size", "count") and "groupby" in self.ctx.analysis.code(value))
            if name == "sort_index" and isinstance(value.func, cst.Attribute):
                return self._vector_value(value.func.value)
        if isinstance(value, cst.Tuple):
            return False
        return False


def _adds_scalar_draw(fn: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> int | None:
    """The index of the parameter ``fn`` returns plus one scalar noise draw (``return value + np.random.laplace(0,
    b)``, or through a local bound to the draw); None when it draws per element or does something else."""
    draws: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and _is_ast_scalar_draw(node.value):
            draws.add(node.targets[0].id)
    found: set[int] = set()
    for node in ast.walk(fn):
        if isinstance(node, (ast.For, ast.While, ast.ListComp, ast.GeneratorExp)):
            return None  # a loop: the draw may be per element
        if not (isinstance(node, ast.Return) and isinstance(node.value, ast.BinOp)
                and isinstance(node.value.op, (ast.Add, ast.Sub))):
            continue
        for side, other in ((node.value.left, node.value.right), (node.value.right, node.value.left)):
            if isinstance(side, ast.Name) and side.id in params and (
                    _is_ast_scalar_draw(other) or isinstance(other, ast.Name) and other.id in draws):
                found.add(params.index(side.id))
    return next(iter(found)) if len(found) == 1 else None


def _is_ast_scalar_draw(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SCALAR_DRAWS):
        return False
    receiver = node.func.value
    root = receiver.id if isinstance(receiver, ast.Name) else receiver.value.id \
        if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) else ""
    if root in ("torch", "tf", "jax", "jnp") or node.func.attr == "normal" and root == "torch":
        return False
    return _ast_scalar(node) and len(node.args) >= 1 and isinstance(node.args[0], ast.Constant)


def _loop_targets(loop: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(loop, cst.For):
        return [loop.target]
    if isinstance(loop, cst.CompFor):
        return [loop.target]
    out: list[cst.CSTNode] = []
    for_in = getattr(loop, "for_in", None)
    while for_in is not None:
        out.append(for_in.target)
        for_in = for_in.inner_for_in
    return out
