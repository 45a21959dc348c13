"""DP515: noise that never reaches the released value (a rebound loop variable, a loop that skips items)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.rule import Rule

#: called names that draw noise (any library) ...
_DRAWS = frozenset({
    "normal", "laplace", "gauss", "gumbel", "randn", "randn_like", "standard_normal", "normal_like",
    "gaussian", "random_normal", "normalvariate", "standard_cauchy", "exponential",
})
#: ... and words naming a noise helper (``LapNoise``, ``add_gaussian``, ``gaussian_mechanism``)
_NOISE_WORDS = frozenset({"noise", "lap", "laplace", "laplacian", "gauss", "gaussian", "perturb", "perturbation"})
_SHAPE_WORDS = frozenset({"size", "shape", "like"})
#: words naming a deterministic operator, not a draw (``laplacian_smoothing``, ``gaussian_filter``, ``gauss_kernel``)
_DETERMINISTIC_WORDS = frozenset({"smoothing", "smooth", "filter", "blur", "kernel", "matrix", "operator", "pyramid"})


def _noise_call(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    name = call_name(node)
    if name in _DRAWS:
        return True
    named = words(name)
    return bool(named & _NOISE_WORDS) and not (named & _DETERMINISTIC_WORDS and "noise" not in named)


def _noise(expr: cst.CSTNode) -> bool:
    """``expr`` draws noise or reads a value named noise."""
    for node in walk(expr):
        if _noise_call(node):
            return True
        if isinstance(node, cst.Name) and "noise" in words(node.value):
            return True
    return False


def _shaped(expr: cst.CSTNode) -> bool:
    """The noise has a shape (``size=``, ``g.shape``, ``randn_like(g)``): an array added in place."""
    for node in walk(expr):
        if isinstance(node, cst.Arg) and node.keyword is not None and words(node.keyword.value) & _SHAPE_WORDS:
            return True
        if isinstance(node, cst.Attribute) and node.attr.value in ("shape", "size"):
            return True
        if isinstance(node, cst.Call) and (words(call_name(node)) & _SHAPE_WORDS or call_name(node) in ("len", "randn")):
            return True
    return False


def _loop_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _loop_names(e.value)]
    return []


#: methods that yield a model's tensors themselves: ``+=`` on an item changes the model
_TENSOR_ITEMS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})


def _tensor_items(it: cst.BaseExpression) -> bool:
    """``model.parameters()``, ``net.named_parameters()`` (possibly in ``zip``/``enumerate``/``list``)."""
    return any(isinstance(n, cst.Call) and call_name(n) in _TENSOR_ITEMS for n in walk(it))


def _picked_parameter(expr: cst.BaseExpression) -> bool:
    """``list(model.parameters())[0]``, ``[*net.parameters()][1]``, ``next(model.parameters())``: one tensor taken
    out of a model's parameters by a constant position."""
    if isinstance(expr, cst.Call) and call_name(expr) == "next" and expr.args:
        return _tensor_items(expr.args[0].value)
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) \
            and number(expr.slice[0].slice.value) is not None:
        return _tensor_items(expr.value)
    return False


def _grad_noise(stmt: cst.CSTNode) -> tuple[cst.BaseExpression | None, cst.BaseExpression | None]:
    """(the gradient, what is added) for ``g += v``, ``g = g + v``, ``g.add_(v)`` where ``g`` ends in ``.grad``
    (or ``.grad.data``)."""
    def is_grad(e: cst.BaseExpression) -> bool:
        while isinstance(e, cst.Attribute) and e.attr.value == "data":
            e = e.value
        return isinstance(e, cst.Attribute) and e.attr.value == "grad"

    if isinstance(stmt, cst.AugAssign) and isinstance(stmt.operator, cst.AddAssign) and is_grad(stmt.target):
        return stmt.target, stmt.value
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and is_grad(stmt.targets[0].target) \
            and isinstance(stmt.value, cst.BinaryOperation) and isinstance(stmt.value.operator, cst.Add):
        return stmt.targets[0].target, stmt.value
    if isinstance(stmt, cst.Call) and call_name(stmt) in ("add_", "add") and isinstance(stmt.func, cst.Attribute) \
            and is_grad(stmt.func.value) and stmt.args:
        return stmt.func.value, stmt.args[0].value
    return None, None


def _reads(node: cst.CSTNode, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(node))


def _skipped_range(it: cst.BaseExpression) -> tuple[str, str] | None:
    """``range(len(X) - k)`` or ``range(k, len(X))`` with k >= 1: (X, what is skipped)."""
    if not (isinstance(it, cst.Call) and call_name(it) == "range" and isinstance(it.func, cst.Name)):
        return None
    args = [a.value for a in it.args if a.keyword is None and not a.star]

    def length_of(expr: cst.BaseExpression) -> str | None:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len" and expr.args:
            return dotted(expr.args[0].value)
        return None

    if len(args) == 1 and isinstance(args[0], cst.BinaryOperation) and isinstance(args[0].operator, cst.Subtract):
        k = number(args[0].right)
        x = length_of(args[0].left)
        if x and k is not None and k >= 1:
            return x, f"the last {int(k)} items" if k > 1 else "the last item"
    if len(args) == 2:
        k = number(args[0])
        x = length_of(args[1])
        if x and k is not None and k >= 1:
            return x, f"the first {int(k)} items" if k > 1 else "the first item"
    return None


_SANITIZER_WORDS = frozenset({"sanitize", "sanitized", "privatize", "privatise", "clip", "perturb", "mechanism", "dp", "noise",
                              "noisy", "noised", "randomize", "randomise"})


def _sanitized(expr: cst.CSTNode) -> bool:
    """``expr`` is noised or goes through a clip/noise helper."""
    return _noise(expr) or any(isinstance(n, cst.Call) and words(call_name(n)) & _SANITIZER_WORDS for n in walk(expr))


def _raw_item(expr: cst.BaseExpression) -> bool:
    """A value taken as it is: ``v``, ``delta[k]``, ``p.data``, ``v.clone()``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and call_name(expr) in ("clone", "copy", "detach"):
        expr = expr.func.value
    return isinstance(expr, (cst.Name, cst.Subscript, cst.Attribute)) and number(expr) is None \
        and not (isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"))


#: factorizations of a matrix: every factor is a function of the data
_FACTORIZATIONS = frozenset({"svd", "svds", "randomized_svd", "svd_lowrank", "pca_lowrank", "eig", "eigh", "qr", "lu",
                             "eigsh", "eigs"})


#: words of a flag that turns the noise off on purpose (``if not self.no_noise``, ``if use_dp``)
_SWITCH_WORDS = frozenset({"noise", "dp", "private", "privacy", "nonprivate", "enable", "enabled", "use", "flag",
                           "mode", "baseline", "disable", "disabled", "debug"})


def _switch(test: cst.BaseExpression) -> bool:
    """A bare flag (``self.no_noise``, ``not use_dp``, ``args.dp is False``), not a selection of items."""
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and (
            isinstance(test.comparisons[0].comparator, cst.Name)
            and test.comparisons[0].comparator.value in ("True", "False", "None") or number(test.comparisons[0].comparator) is not None):
        test = test.left
    if isinstance(test, cst.Name):
        return bool(words(test.value) & _SWITCH_WORDS)
    if isinstance(test, cst.Attribute):
        return bool(words(test.attr.value) & _SWITCH_WORDS)
    return False


#: words naming the trainable adapter of a parameter-efficient fine-tune (``lora_A``, ``adapter.down``,
#: ``prompt_embeddings``): the other entries of its state dict are the frozen, public base weights
_ADAPTER_WORDS = frozenset({"lora", "adapter", "adapters", "peft", "prompt", "prefix"})


def _infinite_or_tiny(node: cst.CSTNode) -> bool:
    """``inf``, ``np.inf``, ``float('inf')``, ``math.inf``, or a literal below 1e-6."""
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    if isinstance(node, cst.Name) and node.value == "inf" or isinstance(node, cst.Attribute) and node.attr.value == "inf":
        return True
    if isinstance(node, cst.Call) and call_name(node) == "float" and node.args \
            and isinstance(node.args[0].value, cst.SimpleString) and "inf" in node.args[0].value.value.lower():
        return True
    v = number(node)
    return v is not None and 0 < abs(v) < 1e-6


def _per_item_budget_test(test: cst.BaseExpression) -> bool:
    """``eps[key] == inf or eps[key] < 1e-11``: an ε computed per entry (an ε-named subscript) compared with
    infinity or a negligible number; the entries it selects are left unnoised, although that ε is itself a
    function of the data. A scalar ``if epsilon == inf`` is the caller asking for no privacy and is not this."""
    for cmp in walk(test):
        if not isinstance(cmp, cst.Comparison):
            continue
        sides = [cmp.left, *(c.comparator for c in cmp.comparisons)]
        item = any(isinstance(x, cst.Subscript) and words(dotted(x.value) or "") & {"eps", "epsilon", "epsilons"}
                   for x in sides)
        if item and any(_infinite_or_tiny(x) for x in sides):
            return True
    return False


_SCALE_WORDS = frozenset({"std", "stddev", "stdev", "sigma", "scale", "noise", "multiplier"})


def _scale_positive_test(test: cst.BaseExpression) -> bool:
    """(fix44b-R1) ``noise_std > 0 and np.isfinite(noise_std)``: the branch noises exactly when the noise scale is
    positive; its ``else`` runs for a zero scale, where adding zero noise would release the same value, so the raw
    arm releases nothing the noised arm would hide (a zero noise multiplier is an ε = ∞ run, not a missed item).
    Every conjunct must test the scale; ``sigma > 0 and name in selected`` is still a selection of items."""
    parts: list[cst.BaseExpression] = []
    stack = [test]
    while stack:
        t = stack.pop()
        if isinstance(t, cst.BooleanOperation) and isinstance(t.operator, cst.And):
            stack.extend((t.left, t.right))
        else:
            parts.append(t)

    def scale(e: cst.BaseExpression) -> bool:
        return isinstance(e, (cst.Name, cst.Attribute)) and bool(
            words((dotted(e) or "").split(".")[-1]) & _SCALE_WORDS)

    positive = False
    for t in parts:
        if isinstance(t, cst.Comparison) and len(t.comparisons) == 1 \
                and isinstance(t.comparisons[0].operator, (cst.GreaterThan, cst.NotEqual)) \
                and number(t.comparisons[0].comparator) == 0 and scale(t.left):
            positive = True
        elif isinstance(t, cst.Call) and call_name(t).split(".")[-1] == "isfinite" and t.args \
                and scale(t.args[0].value):
            continue
        else:
            return False
    return positive


def _trainable_selection(test: cst.BaseExpression) -> bool:
    """The branch selects the trained entries: ``p.requires_grad``, or ``'lora' in name`` (an adapter's key)."""
    for node in walk(test):
        if isinstance(node, cst.Attribute) and node.attr.value == "requires_grad":
            return True
        if isinstance(node, cst.Comparison) and isinstance(node.left, cst.SimpleString) and any(
                isinstance(c.operator, cst.In) for c in node.comparisons) \
                and isinstance(node.left.evaluated_value, str) and words(node.left.evaluated_value) & _ADAPTER_WORDS:
            return True
    return False


def _holder(expr: cst.CSTNode, attr: str) -> str | None:
    """``clf`` of ``clf.coef_`` (``self.model`` of ``self.model.intercept_``)."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == attr:
        return dotted(expr.value)
    return None


def _reads_fit(expr: cst.CSTNode) -> bool:
    """``expr`` computes with a fitted ``coef_``/``intercept_`` (``X @ (w + noise)``), outside the arguments of a
    noise draw (``laplace(0, b, clf.coef_.shape)`` only takes a shape from it)."""
    if _noise_call(expr):
        return False
    if _holder(expr, "coef_") or _holder(expr, "intercept_"):
        return True
    return any(_reads_fit(c) for c in expr.children)


def _noised_sides(fn: cst.FunctionDef) -> list[cst.BaseExpression]:
    """The operands that noise is added to in ``fn`` (``w`` of ``w + noise``, ``noise + w``, ``w - lap(b)``)."""
    out: list[cst.BaseExpression] = []
    for sub in walk(fn, into_scopes=False):
        if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Add, cst.Subtract)):
            out.extend(side for side, other in ((sub.left, sub.right), (sub.right, sub.left))
                       if _noise(other) and not _noise(side) and not _reads_fit(other))
    return out


class NoiseMissesValue(Rule):
    id = "DP515"
    name = "noise-misses-value"
    category = "general"
    severity = "error"
    summary = ("noise that misses part of the release: a rebound loop variable, a loop skipping items, leftover "
               "keys filled raw, unnoised factors of a factorization, a noised copy never read")
    rationale = (
        "Noise protects only the values it is added to. Two loop shapes leave the released values "
        "raw while the code looks noised. (1) `for v in values: v += noise` or `v = v + noise` "
        "rebinds the loop variable: the container (numbers, a list, a dict's values) is untouched, "
        "and the function returns or uploads the original data (`for k, w in weights.items(): "
        "w = w + np.random.laplace(0, b)`). (2) A noise loop over `range(len(grads) - 1)` or "
        "`range(1, len(grads))` adds noise to every item but one: that item (a layer's bias, the "
        "first feature) is released exact. (3) A container filled with noised values (`out[k] = "
        "clip_and_noise(v)` for the keys that match a layer group) whose remaining keys are then "
        "filled with the raw values (`if k not in out: out[k] = v`, or the `else` of the branch "
        "that noises): those entries are released exact. (4) A factorization of the private matrix "
        "(`U, S, Vt = np.linalg.svd(M)`, `eigh`, `qr`) whose release noises some factors only "
        "(`U @ np.diag(S + noise) @ Vt`): the raw singular vectors are functions of every record; also the "
        "entries whose own ε (an ε computed per entry, `eps[key]`) is infinite or negligible, kept raw while "
        "the others are noised (`if eps[key] == inf or eps[key] < 1e-11: out[key] = v`). "
        "(5) `noisy = x + noise` never read while the function returns the raw `x`. (6) Noise added to the "
        "gradient of one parameter picked out of the model (`W = list(model.parameters())[0]`, `next(…)`) while "
        "the optimizer steps every parameter: the bias and the other layers train on exact gradients. (7) A fitted "
        "linear model released with noise on `coef_` and its `intercept_` as fitted (`X @ (clf.coef_.T + noise) + "
        "clf.intercept_`): the intercept is trained on the same records. "
        "Not reported: a scalar `if epsilon == inf` (the caller asks for no privacy) inside a path that "
        "noises otherwise, a loop variable read after the noise "
        "(appended, written back, returned), noise with a shape added in place (`g += "
        "torch.normal(0, s, g.shape)` on an array or tensor), the `else` of a branch that selects the trained "
        "entries (`p.requires_grad`, an adapter's key such as `'lora' in name`: the rest are frozen base weights), "
        "a module that configures `fit_intercept`, loops that add no noise, code with no "
        "DP context. Fix: write the noised value back (`values[i] = values[i] + noise`, build a new "
        "list) and loop over every item (`for i in range(len(grads))`)."
    )
    TRIGGERS = ("for ", "if ", "svd", "eig", "qr(", "lu(", "noise", "laplace", "normal", "gauss")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Every shape needs noise or a sanitiser: an identifier in the text that draws, names or applies it."""
        return any(i in _DRAWS or words(i) & (_NOISE_WORDS | _SANITIZER_WORDS) for i in facts.identifiers)

    VALID = (
        # (fix44b-R1) the raw arm runs only for a zero noise scale: adding zero noise would release the same sum
        """
import torch
import numpy as np
def noisy_sums(clipped, bounds, multiplier):
    out = {}
    for key, g in clipped.items():
        summed = g.sum(0)
        noise_std = bounds[key] * multiplier
        if noise_std > 0 and np.isfinite(noise_std):
            out[key] = summed + torch.normal(0.0, noise_std, size=summed.shape)
        else:
            out[key] = summed
    return out
""",
        # a scalar ε of infinity is the caller asking for no privacy; the per-key and single-ε paths each noise
        """
import numpy as np
def noisy_times(times, epsilon, sens):
    out = {}
    if isinstance(epsilon, dict):
        for key in times:
            out[key] = times[key] + np.random.laplace(0, sens / epsilon[key])
    else:
        for key in times:
            if epsilon == np.inf:
                out[key] = times[key]
            else:
                out[key] = times[key] + np.random.laplace(0, sens / epsilon)
    return out
""",
        # the noised element is written back by index
        """
import numpy as np
def perturb(values, epsilon):
    for i in range(len(values)):
        values[i] = values[i] + np.random.laplace(0, 1 / epsilon)
    return values
""",
        # the noised loop variable is collected
        """
import random
def ldp_report(ratings, epsilon):
    out = []
    for r in ratings:
        r = r + random.gauss(0, 2 / epsilon)
        out.append(r)
    return out
""",
        # a shaped draw added in place to each tensor: it reaches the tensor
        """
import torch
def privatize(grads, sigma, clip):
    for g in grads:
        g += torch.normal(0, sigma * clip, size=g.shape)
    return grads
""",
        # every gradient gets noise
        """
import numpy as np
def noisy_grads(gradient, sigma, clip):
    for ii in range(len(gradient)):
        gradient[ii] += np.random.normal(0, sigma * clip, size=gradient[ii].shape)
    return gradient
""",
        # a loop that skips the last item but adds no noise (layer construction)
        """
def build(sizes, epsilon):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append((sizes[i], sizes[i + 1]))
    return layers
""",
        # every key noised; a missing key is filled with zeros, not the raw value
        """
import torch
def sanitize(update, groups, noise_multiplier, clip):
    out = {}
    for g in groups:
        for k, v in update.items():
            if g in k:
                out[k] = clip_and_noise(v, clip, noise_multiplier)
    for k in update:
        if k not in out:
            out[k] = 0
    return out
""",
        # both branches noise, with different helpers
        """
import numpy as np
def privatize(weights, epsilon, sigma):
    out = {}
    for name, w in weights.items():
        if name.endswith("bias"):
            out[name] = w + np.random.laplace(0, 1 / epsilon, w.shape)
        else:
            out[name] = add_gaussian_noise(w, sigma)
    return out
""",
        # Analyze-Gauss: the matrix is noised before the factorization
        """
import numpy as np
def dp_pca(X, k, sigma, epsilon):
    C = X.T @ X + np.random.normal(0, sigma, (X.shape[1], X.shape[1]))
    U, S, Vt = np.linalg.svd(C)
    return U[:, :k] @ np.diag(S[:k])
""",
        # a factorization with no noise anywhere (ordinary PCA)
        """
import numpy as np
def pca(X, k, epsilon):
    U, S, Vt = np.linalg.svd(X, full_matrices=False)
    return U[:, :k] @ np.diag(S[:k]) @ Vt[:k]
""",
        # the noised value is returned
        """
import numpy as np
def release_mean(x, epsilon, sensitivity):
    mean = float(np.mean(x))
    noisy = mean + np.random.laplace(0, sensitivity / epsilon)
    return noisy
""",
        # shaped noise through a local name, added in place to each array
        """
import numpy as np
def add_noise_to_params(model_params, noise_stddev):
    for param_array in model_params:
        noise = np.random.normal(0, noise_stddev, param_array.shape)
        param_array += noise.astype(param_array.dtype)
    return model_params
""",
        # a no-noise switch: the raw branch is an explicit non-private mode
        """
import tensorflow as tf
def noise_grads(self, m, sigma, clip):
    noised = {}
    for k, v in m.items():
        if not self.no_noise:
            noised[k] = v + tf.random.normal(tf.shape(v), stddev=clip * sigma)
        else:
            noised[k] = v
    return noised
""",

        # AdapLDP-FL's Update.py: a model's parameters noised in place under no_grad (the noise is rebound
        # by a conversion first; the items are the model's own tensors)
        """
import torch
def add_noise(self, net, epsilon, sensitivity):
    with torch.no_grad():
        for k, v in net.named_parameters():
            noise = laplace_noise(epsilon=epsilon, sensitivity=sensitivity, size=v.shape)
            noise = torch.from_numpy(noise).to(self.device)
            v += noise
        for p in net.parameters():
            p += gaussian_noise(sigma=epsilon)
    return net.state_dict()
""",
        # every parameter's gradient noised in a loop (one parameter is also picked out, for logging)
        """
import numpy as np
import torch
def train(model, optimizer, criterion, X, y, sigma):
    optimizer.zero_grad()
    criterion(model(X), y).backward()
    W = list(model.parameters())[0]
    for p in model.parameters():
        p.grad.data.add_(torch.normal(0, sigma, p.grad.shape))
    print(W.grad.norm())
    optimizer.step()
""",
        # the picked parameter is the only one the optimizer steps
        """
import torch
def train(model, criterion, X, y, noise_multiplier, lr):
    W = next(model.parameters())
    opt = torch.optim.SGD([W], lr=lr)
    criterion(model(X), y).backward()
    W.grad += torch.randn_like(W.grad) * noise_multiplier
    opt.step()
""",
        # the state dict's other entries are frozen base weights: only the adapter (or requires_grad) is trained
        """
import torch
def privatize_adapter(state_dict, clip, sigma):
    out = {}
    for name, param in state_dict.items():
        if 'lora' in name:
            out[name] = param + torch.normal(0.0, sigma * clip, param.shape)
        else:
            out[name] = param.clone()
    return out
""",
        """
import torch
def privatize_trained(model, clip, sigma):
    out = {}
    for name, p in model.named_parameters():
        if p.requires_grad:
            out[name] = p.detach() + torch.normal(0.0, sigma * clip, p.shape)
        else:
            out[name] = p.detach()
    return out
""",
        # the intercept is noised as well
        """
import numpy as np
class PrivateSVC:
    def __init__(self, clf, epsilon):
        self.clf, self.epsilon = clf, epsilon

    def predict(self, X):
        return np.dot(X, (self.clf.coef_.T + self.noise)) + (self.clf.intercept_ + self.bias_noise)
""",
        """
import numpy as np
def release(model, epsilon, sens):
    w = model.coef_ + np.random.laplace(0, sens / epsilon, model.coef_.shape)
    b = model.intercept_ + np.random.laplace(0, sens / epsilon)
    return w, b
""",
        # the model is fitted without an intercept
        """
import numpy as np
from sklearn.linear_model import LogisticRegression
def release(X, y, epsilon, sens):
    est = LogisticRegression(fit_intercept=False).fit(X, y)
    coef = est.coef_ + np.random.laplace(0, sens / epsilon, est.coef_.shape)
    return coef, est.intercept_
""",
        # (fix46-QB) deterministic Laplacian smoothing of the averaged update (not a draw) by tensor rank
        """
import torch
def smooth_and_apply(server_state, deltas, net, epsilon):
    mean_delta = {k: sum(d[k] for d in deltas) / len(deltas) for k in deltas[0]}
    for name, p in net.named_parameters():
        if p.dim() == 1:
            mean_delta[name] = laplacian_smoothing(mean_delta[name])
        elif p.dim() == 2:
            mean_delta[name] = laplacian_smoothing_2d(mean_delta[name])
        else:
            mean_delta[name] = mean_delta[name]
    return {k: server_state[k] + mean_delta[k] for k in mean_delta}
""",
        # (fix46-QB) ordinary ML: a Gaussian blur over the image channels
        """
def blur_all(images, sigma):
    out = {}
    for name, img in images.items():
        if img.ndim == 3:
            img = gaussian_filter(img, sigma)
        out[name] = img
    return out
""",
    )

    INVALID = (
        # (fix46-QB twin) Laplace noise drawn for 1-d and 2-d tensors only; the other tensors go out raw
        """
import torch
def noisy_apply(server_state, deltas, net, epsilon):
    mean_delta = {k: sum(d[k] for d in deltas) / len(deltas) for k in deltas[0]}
    for name, p in net.named_parameters():
        if p.dim() == 1:
            mean_delta[name] = mean_delta[name] + laplace_noise(mean_delta[name].shape, epsilon)
        elif p.dim() == 2:
            mean_delta[name] = mean_delta[name] + laplace_noise(mean_delta[name].shape, epsilon)
        else:
            mean_delta[name] = mean_delta[name]  # <-
    return {k: server_state[k] + mean_delta[k] for k in mean_delta}
""",
        # (fix44b-R1 twin) the scale test is combined with a selection of items: the unselected sums go out raw
        """
import torch
import numpy as np
def noisy_sums(clipped, bounds, multiplier, private_keys):
    out = {}
    for key, g in clipped.items():
        summed = g.sum(0)
        noise_std = bounds[key] * multiplier
        if noise_std > 0 and key in private_keys:
            out[key] = summed + torch.normal(0.0, noise_std, size=summed.shape)
        else:
            out[key] = summed  # <-
    return out
""",
        # the twin: a per-entry ε computed from the data, and the entries whose ε is infinite or tiny left raw
        """
import numpy as np
def noisy_times(times, epsilon, sens):
    out = {}
    for key in times:
        if epsilon[key] == np.inf or epsilon[key] < 1e-11:
            out[key] = times[key]  # <-
        else:
            out[key] = times[key] + np.random.laplace(0, sens / epsilon[key])
    return out
""",
        # the else branch of a layer-name selection: those trained entries stay raw
        """
import torch
def privatize(state_dict, clip, sigma):
    out = {}
    for name, param in state_dict.items():
        if 'weight' in name:
            out[name] = param + torch.normal(0.0, sigma * clip, param.shape)
        else:
            out[name] = param.clone()  # <-
    return out
""",
        # private_svc.py: noised weights, the fitted intercept added raw
        """
import numpy as np
class PrivateSVC:
    def __init__(self, clf, epsilon):
        self.clf, self.epsilon = clf, epsilon

    def predict(self, X):
        return np.dot(X, (self.clf.coef_.T + self.noise)) + self.clf.intercept_  # <-
""",
        # output perturbation of the weights, the intercept returned as fitted
        """
import numpy as np
def release(model, epsilon, sens):
    w = model.coef_ + np.random.laplace(0, sens / epsilon, model.coef_.shape)
    return w, model.intercept_  # <-
""",
        # a wrapper copying the fitted attributes: only coef_ is perturbed
        """
import numpy as np
class DPLinear:
    def __init__(self, est, epsilon, sigma):
        self.est, self.epsilon, self.sigma = est, epsilon, sigma

    def fit(self, X, y):
        self.est.fit(X, y)
        self.coef_ = self.est.coef_ - np.random.normal(0, self.sigma, self.est.coef_.shape)
        self.intercept_ = self.est.intercept_  # <-
        return self
""",
        # dp_LR's model.py: noise on the first parameter's gradient only; the bias is stepped exact
        """
import numpy as np
import torch
def train(model, optimizer, criterion, X, y, sigma, epsilon):
    optimizer.zero_grad()
    criterion(model(X), y).backward()
    if epsilon > 0:
        W = list(model.parameters())[0]
        noise = torch.from_numpy(np.random.normal(0, sigma, W.shape)).float()
        W.grad.data.add_(noise)  # <-
    optimizer.step()
""",
        # next() spelling, in place on the gradient
        """
import torch
def dp_step(model, optimizer, sigma, clip):
    w = next(model.parameters())
    w.grad += torch.normal(0, sigma * clip, w.grad.shape)  # <-
    optimizer.step()
""",
        # a list of the parameters indexed by position, rebinding the gradient
        """
import torch
def dp_step(net, opt, noise_multiplier, clip):
    params = list(net.parameters())
    params[0].grad = params[0].grad + torch.randn_like(params[0].grad) * noise_multiplier * clip  # <-
    opt.step()
""",
        # the same loop over a copy of the parameters' values, or over plain numbers: the model is untouched
        """
import torch
def add_noise(self, net, epsilon, sensitivity):
    weights = [float(v.sum()) for v in net.parameters()]
    for w in weights:
        noise = laplace_noise(epsilon=epsilon, sensitivity=sensitivity)
        noise = float(noise)
        w += noise  # <-
    return weights
""",
        # a Laplace helper added to the loop variable of a 1-d array
        """
import numpy as np
def lap(epsilon):
    return np.random.laplace(0, 1 / epsilon)
def release_dp(data, epsilon):
    for x in data:
        x += lap(epsilon)  # <-
    return data
""",
        # dict values rebound: the weights are uploaded raw
        """
import torch
def dp_upload(weights, sigma, clip):
    for name, w in weights.items():
        w = w + torch.normal(0, sigma * clip, size=w.shape)  # <-
    return weights
""",
        # nested rows: each scalar rebound
        """
import random
def local_dp(matrix, epsilon):
    for row in matrix:
        for cell in row:
            cell += random.gauss(0, 1 / epsilon)  # <-
    return matrix
""",
        # the noise loop skips the last variable (the output bias)
        """
import tensorflow as tf
def dp_step(opt, grads, variables, noise_multiplier, l2_clip):
    for k in range(len(grads) - 1):  # <-
        grads[k] = grads[k] + tf.random.normal(tf.shape(grads[k]), stddev=noise_multiplier * l2_clip)
    opt.apply_gradients(zip(grads, variables))
""",
        # the loop skips the first coordinate
        """
import numpy as np
def privatize(hist, epsilon):
    noisy = list(hist)
    for j in range(1, len(noisy)):  # <-
        noisy[j] += np.random.laplace(0, 1 / epsilon)
    return noisy
""",
        # leftover keys of a state dict copied raw after the grouped noising
        """
def sanitize(update, groups, noise_multiplier, clip):
    out = {}
    for g in groups:
        for k, v in update.items():
            if g in k:
                out[k] = clip_and_noise(v, clip, noise_multiplier)
    for k, v in update.items():
        if k not in out:
            out[k] = v  # <-
    return out
""",
        # the else branch of the noising if releases the raw entry
        """
import numpy as np
def privatize(weights, epsilon, noise_layers):
    out = {}
    for name in weights:
        if name in noise_layers:
            out[name] = weights[name] + np.random.laplace(0, 1 / epsilon, weights[name].shape)
        else:
            out[name] = weights[name].copy()  # <-
    return out
""",
        # a list-indexed release: noise only for the selected ids
        """
import torch
def release(grads, selected, sigma, clip):
    released = [None] * len(grads)
    for i, g in enumerate(grads):
        if i in selected:
            released[i] = g + torch.normal(0, sigma * clip, g.shape)
        else:
            released[i] = g  # <-
    return released
""",
        # torch: noise on the singular values only
        """
import torch
def private_low_rank(M, sigma, epsilon):
    U, S, V = torch.linalg.svd(M)
    S_dp = S + torch.normal(0, sigma, S.shape)
    return U @ torch.diag(S_dp) @ V  # <-
""",
        # eigen-decomposition with Laplace noise on the eigenvalues
        """
import numpy as np
def dp_covariance(X, epsilon):
    w, Q = np.linalg.eigh(X.T @ X)
    w_priv = w + np.random.laplace(0, 2 / epsilon, w.shape)
    return np.dot(Q, np.dot(np.diag(w_priv), Q.T))  # <-
""",
        # the noisy copy is computed and dropped; the exact mean is returned
        """
import numpy as np
def release_mean(x, epsilon, sensitivity):
    mean = float(np.mean(x))
    noisy_mean = mean + np.random.laplace(0, sensitivity / epsilon)  # <-
    return mean
""",
        # torch: noised gradient dropped, the raw gradient returned
        """
import torch
def private_grad(grad, sigma, clip):
    g = grad / max(1.0, float(grad.norm()) / clip)
    noisy_g = g + torch.normal(0, sigma * clip, g.shape)  # <-
    return g
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        """Shape (3): the same container gets noised values and, for the keys left over, raw ones."""
        fa = self.ctx.analysis
        noised: dict[str, list[cst.Assign]] = {}
        raw: list[tuple[str, cst.Assign]] = []
        for sub in walk(node, into_scopes=False):
            if not isinstance(sub, cst.Assign) or len(sub.targets) != 1:
                continue
            target = sub.targets[0].target
            if not isinstance(target, cst.Subscript):
                continue
            container = dotted(target.value)
            if container is None:
                continue
            if _sanitized(sub.value):
                noised.setdefault(container, []).append(sub)
            elif _raw_item(sub.value):
                raw.append((container, sub))
        self._factors(node)
        self._dead_noise(node)
        self._one_parameter(node)
        self._raw_intercept(node)
        for container, stmt in raw:
            if container not in noised or not self._same_source(stmt.value, noised[container]):
                continue
            guard = self._fallback_guard(stmt, container, noised[container])
            if guard:
                self.report(
                    stmt,
                    f"`{container}` gets noised values (line {fa.line_of(noised[container][0])}), but {guard} "
                    f"it is given the raw `{fa.code(stmt.value).strip()}`: those entries are released "
                    "without noise; noise every entry (or drop the ones you cannot noise)",
                )

    def _raw_intercept(self, fn: cst.FunctionDef) -> None:
        """Shape (7): a fitted linear model's ``coef_`` released with noise, its ``intercept_`` without."""
        if any(isinstance(n, cst.Arg) and n.keyword is not None and n.keyword.value == "fit_intercept"
               for n in walk(self.ctx.module)):
            return  # the intercept is configured (often switched off): not a default left raw
        coefs = {h for side in _noised_sides(fn) for n in walk(side) if (h := _holder(n, "coef_"))}
        if not coefs:
            return
        stores = {id(t.target) for sub in walk(fn, into_scopes=False) if isinstance(sub, cst.Assign)
                  for t in sub.targets}
        for sub in walk(fn, into_scopes=False):
            holder = _holder(sub, "intercept_")
            if holder is None or holder not in coefs or id(sub) in stores or self._intercept_noised(fn, holder):
                continue
            self.report(
                sub,
                f"`{holder}.coef_` is released with noise but `{holder}.intercept_` is released as fitted: the "
                "intercept is trained on the private data too and leaks it without noise; noise the intercept "
                "(or fit without one on centred data)",
            )
            return

    @staticmethod
    def _intercept_noised(fn: cst.FunctionDef, holder: str) -> bool:
        """Noise is added to ``holder.intercept_`` in ``fn``, or it is passed to a noise helper."""
        if any(_holder(n, "intercept_") == holder for side in _noised_sides(fn) for n in walk(side)):
            return True
        return any(_noise_call(sub) and any(_holder(n, "intercept_") == holder for a in sub.args for n in walk(a.value))
                   for sub in walk(fn, into_scopes=False))

    def _one_parameter(self, fn: cst.FunctionDef) -> None:
        """Shape (6): noise added to the gradient of one parameter picked out of ``model.parameters()``
        (``W = list(model.parameters())[0]``; ``W.grad.data.add_(noise)``) while the optimizer steps them all."""
        fa = self.ctx.analysis
        picked: dict[str, cst.BaseExpression] = {}
        lists: set[str] = set()  # ``params = list(model.parameters())``
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                if _picked_parameter(sub.value):
                    picked[sub.targets[0].target.value] = sub.value
                elif isinstance(sub.value, cst.Call) and call_name(sub.value) in ("list", "tuple") \
                        and _tensor_items(sub.value):
                    lists.add(sub.targets[0].target.value)
        if not any(isinstance(n, cst.Call) and call_name(n) == "step" for n in walk(fn, into_scopes=False)):
            return
        # a loop that noises every parameter's gradient covers the rest
        for loop in walk(fn, into_scopes=False):
            if isinstance(loop, cst.For) and _tensor_items(loop.iter) and _noise(loop.body):
                return
        for sub in walk(fn, into_scopes=False):
            target, value = _grad_noise(sub)
            if target is None or value is None or not _noise(value):
                continue
            holder = target
            while isinstance(holder, cst.Attribute) and holder.attr.value in ("grad", "data"):
                holder = holder.value
            source = picked.get(holder.value) if isinstance(holder, cst.Name) else (
                holder if _picked_parameter(holder) or isinstance(holder, cst.Subscript) and isinstance(
                    holder.value, cst.Name) and holder.value.value in lists and len(holder.slice) == 1
                    and isinstance(holder.slice[0].slice, cst.Index)
                    and number(holder.slice[0].slice.value) is not None else None)
            if source is None:
                continue
            if isinstance(holder, cst.Name) and any(
                    isinstance(n, cst.List) and any(isinstance(e.value, cst.Name) and e.value.value == holder.value
                                                    for e in n.elements) for n in walk(fn, into_scopes=False)):
                continue  # ``SGD([W], lr)``: the picked parameter is all the optimizer steps
            self.report(
                sub,
                f"noise is added to the gradient of one parameter only (`{fa.code(source).strip()}`), but the "
                "optimizer step updates every parameter: the others (a bias, the later layers) are trained on "
                "exact gradients and released unperturbed; noise every parameter's gradient",
            )
            return

    def _dead_noise(self, fn: cst.FunctionDef) -> None:
        """Shape (5): ``noisy = x + noise`` never read, while ``x`` itself is returned afterwards."""
        fa = self.ctx.analysis
        stores: set[int] = set()
        for sub in walk(fn):
            if isinstance(sub, cst.Assign):
                stores.update(id(t.target) for t in sub.targets if isinstance(t.target, cst.Name))
            if isinstance(sub, (cst.Global, cst.Nonlocal)):
                return
        reads = {sub.value for sub in walk(fn) if isinstance(sub, cst.Name) and id(sub) not in stores}
        for sub in walk(fn, into_scopes=False):
            if not (isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name)):
                continue
            name = sub.targets[0].target.value
            if name in reads or name.startswith("_") or not isinstance(sub.value, cst.BinaryOperation) \
                    or not isinstance(sub.value.operator, (cst.Add, cst.Subtract)):
                continue
            left, right = sub.value.left, sub.value.right
            base = left if _noise(right) and not _noise(left) else right if _noise(left) and not _noise(right) else None
            if not isinstance(base, (cst.Name, cst.Attribute, cst.Subscript)):
                continue
            line = fa.line_of(sub)
            base_code = fa.code(base).strip()
            later = [r for r in fa.returns_of(fn) if r.value is not None and fa.line_of(r) > line
                     and base_code in fa.code(r.value)]
            if later:
                self.report(
                    sub,
                    f"`{name}` holds the noised `{base_code}` but is never read; line {fa.line_of(later[0])} "
                    f"returns the raw `{base_code}`: release the noised value",
                )

    def _factors(self, fn: cst.FunctionDef) -> None:
        """Shape (4): factors of one factorization, some noised, multiplied back together."""
        fa = self.ctx.analysis
        for sub in walk(fn, into_scopes=False):
            if not (isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.value, cst.Call)
                    and call_name(sub.value) in _FACTORIZATIONS and isinstance(sub.targets[0].target, (cst.Tuple, cst.List))):
                continue
            if any(_sanitized(a.value) for a in sub.value.args):
                continue  # the matrix was noised first: the factors are post-processing
            factors = set(_loop_names(sub.targets[0].target))
            noised: set[str] = set()
            for _ in range(2):
                for stmt in walk(fn, into_scopes=False):
                    if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
                        continue
                    target = stmt.targets[0].target
                    base = target.value if isinstance(target, cst.Subscript) else target
                    if not isinstance(base, cst.Name) or base.value in factors:
                        continue
                    read = {n.value for n in walk(stmt.value) if isinstance(n, cst.Name)}
                    if (_sanitized(stmt.value) and read & factors) or read & noised:
                        noised.add(base.value)
            if not noised:
                continue
            for expr in walk(fn, into_scopes=False):
                if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.MatrixMultiply) \
                        or isinstance(expr, cst.Call) and call_name(expr) in ("dot", "matmul", "multi_dot", "einsum"):
                    read = {n.value for n in walk(expr) if isinstance(n, cst.Name)}
                    raw = sorted(read & factors)
                    if raw and read & noised:
                        self.report(
                            expr,
                            f"`{', '.join(raw)}` from `{call_name(sub.value)}` (line {fa.line_of(sub)}) enter the "
                            "release unperturbed: only the other factor is noised, and these factors are "
                            "functions of every record of the factorized matrix; noise the matrix (or every "
                            "factor) instead",
                        )
                        return

    @staticmethod
    def _same_source(value: cst.BaseExpression, noised: list[cst.Assign]) -> bool:
        """The raw value's root name (``v``, ``weights`` of ``weights[k]``) is what the noised entries read."""
        root = value
        if isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute):
            root = root.func.value
        while isinstance(root, (cst.Subscript, cst.Attribute)):
            root = root.value
        if not isinstance(root, cst.Name):
            return False
        return any(isinstance(n, cst.Name) and n.value == root.value for stmt in noised for n in walk(stmt.value))

    def _fallback_guard(self, stmt: cst.Assign, container: str, noised: list[cst.Assign]) -> str | None:
        fa = self.ctx.analysis
        child: cst.CSTNode = stmt
        for anc in fa.ancestors(stmt):
            if isinstance(anc, cst.FunctionDef):
                return None
            if isinstance(anc, cst.If):
                test = anc.test
                for cmp in walk(test):
                    if isinstance(cmp, cst.Comparison) and any(
                            isinstance(c.operator, cst.NotIn) and dotted(c.comparator) == container
                            for c in cmp.comparisons):
                        return f"for the keys not yet in it (`{fa.code(test).strip()}`)"
                if anc.orelse is not None and fa.inside(stmt, anc.orelse) and any(fa.inside(n, anc.body) for n in noised):
                    # the arm holding the raw value noises too (``if per_key: ... else: if eps == inf: raw
                    # else: noised``): this branch is not what separates the raw entries from the noised ones
                    if any(fa.inside(n, anc.orelse) for n in noised):
                        child = anc
                        continue
                    if not _switch(test) and not _trainable_selection(test) and not _scale_positive_test(test):
                        return "in the `else` of the branch that noises"
                if anc.orelse is not None and fa.inside(stmt, anc.body) and any(fa.inside(n, anc.orelse) for n in noised) \
                        and not any(fa.inside(n, anc.body) for n in noised) and _per_item_budget_test(test):
                    return f"when that entry's own budget is degenerate (`{fa.code(test).strip()}`)"
            child = anc
        del child
        return None

    def visit_For(self, node: cst.For) -> None:
        self._rebound(node)
        self._skipping(node)

    def _rebound(self, node: cst.For) -> None:
        names = _loop_names(node.target)
        if not names:
            return
        statements = [s for s in walk(node.body) if isinstance(s, (cst.Assign, cst.AugAssign))]
        for stmt in statements:
            if isinstance(stmt, cst.AugAssign):
                if not isinstance(stmt.operator, (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign)):
                    continue
                target, value = stmt.target, stmt.value
                if not isinstance(target, cst.Name) or target.value not in names or self._shaped_here(value) \
                        or _tensor_items(node.iter):
                    continue
            else:
                if len(stmt.targets) != 1 or not isinstance(stmt.targets[0].target, cst.Name):
                    continue
                target, value = stmt.targets[0].target, stmt.value
                if target.value not in names or not _reads(value, target.value):
                    continue
            if not _noise(value) or self._read_after(node, stmt, target.value):
                continue
            self.report(
                stmt,
                f"the noise is added to the loop variable `{target.value}`, which this rebinds: the "
                f"items of `{self.ctx.analysis.code(node.iter).strip()}` stay unperturbed and the "
                "loop's result is never used; write the noised value back (by index, or into a new "
                "collection that is released)",
            )

    def _shaped_here(self, value: cst.BaseExpression, depth: int = 3) -> bool:
        """Shaped noise, inline or through local names (``noise = normal(0, s, p.shape)``, then
        ``noise = torch.from_numpy(noise).to(device)``)."""
        if _shaped(value):
            return True
        if depth == 0:
            return False
        for node in walk(value):
            if isinstance(node, cst.Name):
                bound = self.ctx.analysis.value_of(node)
                if bound is not None and bound is not value and self._shaped_here(bound, depth - 1):
                    return True
        return False

    def _read_after(self, loop: cst.For, stmt: cst.CSTNode, name: str) -> bool:
        """Is ``name`` read after ``stmt`` (later in the loop body, or in its own target)?"""
        fa = self.ctx.analysis
        line = fa.line_of(stmt)
        for sub in walk(loop.body):
            if isinstance(sub, cst.Name) and sub.value == name and fa.line_of(sub) > line:
                return True
            if isinstance(sub, (cst.FunctionDef, cst.Lambda)) and _reads(sub, name):
                return True
        return False

    def _skipping(self, node: cst.For) -> None:
        skipped = _skipped_range(node.iter)
        if skipped is None or not isinstance(node.target, cst.Name):
            return
        seq, what = skipped
        index = node.target.value
        for sub in walk(node.body):
            if isinstance(sub, cst.AugAssign):
                targets, value = [sub.target], sub.value
            elif isinstance(sub, cst.Assign):
                targets, value = [t.target for t in sub.targets], sub.value
            else:
                continue
            for target in targets:
                if isinstance(target, cst.Subscript) and dotted(target.value) == seq and _reads(target.slice[0], index) \
                        and _noise(value) and not self._neighbour(target, index):
                    self.report(
                        node,
                        f"the noise loop runs over `{self.ctx.analysis.code(node.iter).strip()}`, so "
                        f"{what} of `{seq}` gets no noise and is released exact; loop over every "
                        f"item (`range(len({seq}))`)",
                    )
                    return

    @staticmethod
    def _neighbour(target: cst.Subscript, index: str) -> bool:
        """``x[i + 1]``: the loop pairs neighbours, so the range must stop early."""
        return any(isinstance(n, cst.BinaryOperation) for n in walk(target.slice[0]))
