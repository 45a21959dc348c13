"""DP733: one noise vector of the hidden size is drawn and broadcast onto every token's representation."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, name_words, number, param_names, walk
from dpcheck.rule import Rule

_DRAWS = frozenset({"laplace", "normal", "randn", "gauss", "standard_normal", "normal_", "sample"})
#: words of a per-token matrix (a sequence of hidden states / embeddings)
_TOKEN_WORDS = frozenset({"hidden", "token", "tokens", "embeds", "embeddings", "sequence", "seq", "encoder",
                          "last_hidden_state", "states", "word", "words"})


def _last_dim_of(expr: cst.CSTNode) -> str | None:
    """``x.shape[-1]`` / ``x.size(-1)`` / ``x.shape[2]`` (the last of a 3-d tensor is not decided: -1 only) -> x."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape" \
            and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index) \
            and number(expr.slice[0].slice.value) == -1:
        return last_name(expr.value.value)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size" \
            and len(expr.args) == 1 and number(expr.args[0].value) == -1:
        return last_name(expr.func.value)
    return None


class OneNoiseVectorForAllTokens(Rule):
    id = "DP733"
    name = "one-noise-vector-for-all-tokens"
    category = "general"
    severity = "error"
    summary = ("the noise has the shape of one row (the hidden size) and is broadcast onto every token's "
               "representation: all tokens share the same noise")
    rationale = (
        "Privatizing a text's encoder states or token embeddings (DP-BART, embedding perturbation) needs an "
        "independent noise draw for every token row. A draw of shape `(k,)` with `k = h.shape[-1]` added to a "
        "(tokens x k) matrix broadcasts one vector onto every row: the differences between token "
        "representations are released exactly, and the sum of the noise over the rows is not the noise the "
        "calibration assumed (one draw is charged once, yet covers every token's sensitivity). Reported: a "
        "draw whose size is the last dimension of a tensor (`x.shape[-1]`, `x.size(-1)`, or a name bound to "
        "it) added to that tensor, when the tensor is a token matrix (named for hidden states, tokens or "
        "embeddings, or passed so by the module's calls). Fix: draw noise of the tensor's full shape "
        "(`size=h.shape`)."
    )
    TRIGGERS = ("shape[-1]", "size(-1)")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a noise draw and a ``-1`` index or argument (literals are read without sign)."""
        return facts.calls_any(_DRAWS) and 1.0 in facts.numbers

    def visit_Module(self, node: cst.Module) -> None:
        #: function name -> argument expressions of its calls in this module
        call_args: dict[str, list[cst.Call]] = {}
        for sub in walk(node):
            if isinstance(sub, cst.Call) and call_name(sub):
                call_args.setdefault(call_name(sub), []).append(sub)
        for fn in walk(node):
            if not isinstance(fn, cst.FunctionDef):
                continue
            params = param_names(fn)
            dims: dict[str, str] = {}  # name -> tensor whose last dim it holds
            for sub in walk(fn.body, into_scopes=False):
                if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name):
                    owner = _last_dim_of(sub.value)
                    if owner:
                        dims[sub.targets[0].target.value] = owner
            for sub in walk(fn.body, into_scopes=False):
                if not (isinstance(sub, cst.Call) and call_name(sub) in _DRAWS):
                    continue
                size = next((a.value for a in sub.args if a.keyword is not None
                             and a.keyword.value in ("size", "shape", "sample_shape")), None)
                if size is None and call_name(sub) == "randn" and len(sub.args) == 1:
                    size = sub.args[0].value
                if size is None:
                    continue
                if isinstance(size, cst.Tuple) and len(size.elements) == 1:
                    size = size.elements[0].value
                owner = dims.get(size.value) if isinstance(size, cst.Name) else _last_dim_of(size)
                if not owner or not self._added_to(fn, owner):
                    continue
                if not self._token_matrix(fn, owner, params, call_args):
                    continue
                self.report(sub, f"the noise has shape ({owner}.shape[-1],): one vector broadcast onto every "
                                 f"token row of `{owner}`, so all tokens share it and their differences are "
                                 f"released exactly; draw noise of the full shape ({owner}.shape)")

    @staticmethod
    def _added_to(fn: cst.FunctionDef, owner: str) -> bool:
        for sub in walk(fn.body, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
                if last_name(sub.left) == owner or last_name(sub.right) == owner:
                    return True
            if isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign) and last_name(sub.target) == owner:
                return True
        return False

    @staticmethod
    def _token_matrix(fn: cst.FunctionDef, owner: str, params: list[str],
                      call_args: dict[str, list[cst.Call]]) -> bool:
        if name_words(cst.Name(owner)) & _TOKEN_WORDS:
            return True
        if owner not in params:
            return False
        index = params.index(owner) - (1 if params and params[0] in ("self", "cls") else 0)
        for call in call_args.get(fn.name.value, ()):
            for i, a in enumerate(a for a in call.args if a.keyword is None):
                if i == index and name_words(a.value) & _TOKEN_WORDS:
                    return True
            for a in call.args:
                if a.keyword is not None and a.keyword.value == owner and name_words(a.value) & _TOKEN_WORDS:
                    return True
        # a string key of a subscript in the argument (``out["last_hidden_state"]``)
        for call in call_args.get(fn.name.value, ()):
            for a in call.args:
                for n in walk(a.value):
                    if isinstance(n, cst.SimpleString) and "hidden" in n.value:
                        return True
        return False

    VALID = (
        # twin: noise of the full (tokens x hidden) shape
        """
import numpy as np
import torch
class Rewriter:
    def noise(self, vector, epsilon, sensitivity):
        Z = torch.from_numpy(np.random.laplace(0, sensitivity / epsilon, size=vector.shape))
        return vector + Z
    def privatize(self, enc, epsilon):
        enc["last_hidden_state"] = self.noise(enc["last_hidden_state"], epsilon, 1.0)
        return enc
""",
        # twin: per-token torch noise
        """
import torch
def perturb_hidden(hidden_states, sensitivity, epsilon):
    noise = torch.randn(hidden_states.shape) * sensitivity / epsilon
    return hidden_states + noise
""",
        # a single vector (a gradient) gets noise of its own length
        """
import numpy as np
def noisy_gradient(grad, sigma, clip):
    k = grad.shape[-1]
    return grad + np.random.normal(0, sigma * clip, size=k)
""",
        # ordinary ML: a learned bias of the hidden size, no noise
        """
import torch
def add_bias(hidden_states, bias):
    k = hidden_states.shape[-1]
    return hidden_states + bias[:k]
""",
    )

    INVALID = (
        # one (k,) draw broadcast onto every encoder state
        """
import numpy as np
import torch
class Rewriter:
    def noise(self, vector, epsilon, sensitivity):
        k = vector.shape[-1]
        Z = torch.from_numpy(np.random.laplace(0, sensitivity / epsilon, size=k))  # <-
        return vector + Z
    def privatize(self, enc, epsilon):
        enc["last_hidden_state"] = self.noise(enc["last_hidden_state"], epsilon, 1.0)
        return enc
""",
        # torch randn of the hidden size on the token states
        """
import torch
def perturb_hidden(hidden_states, sensitivity, epsilon):
    noise = torch.randn(hidden_states.size(-1)) * sensitivity / epsilon  # <-
    return hidden_states + noise
""",
        # Gaussian (k,) noise on token embeddings passed by a caller
        """
import numpy as np
def add_noise(x, sigma):
    dim = x.shape[-1]
    x += np.random.normal(0, sigma, size=(dim,))  # <-
    return x
def privatize_text(model, ids, epsilon, delta):
    token_embeddings = model.embed(ids)
    return add_noise(token_embeddings, (2 * np.log(1.25 / delta)) ** 0.5 / epsilon)
""",
        # a named token matrix, the draw's size read inline
        """
import numpy as np
def noisy_tokens(token_vectors, epsilon):
    return token_vectors + np.random.laplace(0, 2.0 / epsilon, size=token_vectors.shape[-1])  # <-
""",
    )
