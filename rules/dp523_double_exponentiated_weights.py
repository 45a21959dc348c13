"""DP523: exponential-mechanism weights exp(ε·u) passed to a softmax, which exponentiates them again."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, call_name as ast_call_name
from dpcheck.analysis.syntax import call_name, last_name, walk, words
from dpcheck.rule import Rule

#: calls that exponentiate their first argument before normalising it
_EXPONENTIATING = frozenset({"softmax", "log_softmax", "logsumexp", "gumbel_softmax"})
_EPS_WORDS = frozenset({"eps", "epsilon"})


def _reads_eps(expr: cst.CSTNode) -> bool:
    return any(isinstance(n, (cst.Name, cst.Attribute)) and words(last_name(n) or "") & _EPS_WORDS
               for n in walk(expr))


class DoubleExponentiatedWeights(Rule):
    id = "DP523"
    name = "double-exponentiated-weights"
    category = "general"
    severity = "error"
    summary = "exponential-mechanism weights exp(ε·u/2Δ) are passed through a softmax, which exponentiates again"
    rationale = (
        "The exponential mechanism picks candidate r with probability ∝ exp(ε·u_r/(2Δu)). A softmax "
        "(or log-softmax, logsumexp, Gumbel-softmax) already computes exp(x_r)/Σ exp(x): it must be given the "
        "logits ε·u/(2Δu). Given the weights `w = exp(eps * u / 2)` instead, it samples with probability ∝ "
        "exp(exp(ε·u/2)), so the ratio between two candidates' probabilities reaches exp(e^{ε/2} − 1) rather "
        "than e^{ε/2}: for ε = 8 that is e^{53} instead of e^4, and the selection is far from ε-DP. "
        "Reported: a softmax-like call whose input is an `exp(…)` reading ε, inline or through a name the "
        "same function assigned from it. Not reported: `softmax(eps * u / 2)` (logits), `w / w.sum()` "
        "(normalising the weights directly), an `exp` that does not read ε. "
        "Fix: pass the logits to the softmax, or normalise the exp-weights by their sum."
    )
    TRIGGERS = ("softmax", "logsumexp")
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """An exponentiating call and an ``exp`` call in the same file."""
        names = {ast_call_name(c) for c in facts.calls}
        return bool(names & _EXPONENTIATING) and "exp" in names

    VALID = (
        # the softmax is given the logits ε·u/2
        """
import torch
def sample_token(scores, eps):
    logits = eps * scores / 2
    probs = torch.softmax(logits, dim=-1)
    return torch.multinomial(probs, 1)
""",
        # the exp-weights are normalised by their sum
        """
import numpy as np
def exp_mech(scores, epsilon, sensitivity):
    w = np.exp(epsilon * (scores - scores.max()) / (2 * sensitivity))
    return np.random.choice(len(w), p=w / w.sum())
""",
        # a softmax over the exp of something that is not a privacy score (no ε): temperature scaling
        """
import torch
def attention(q, k, log_temp):
    temp = torch.exp(log_temp)
    return torch.softmax(q @ k.T / temp, dim=-1)
""",
        # the name is reassigned to logits before the softmax
        """
import numpy as np
from scipy.special import softmax
def select(scores, eps):
    w = np.exp(eps * scores / 2)
    w = np.log(w)
    return np.random.choice(len(w), p=softmax(w))
""",
    )

    INVALID = (
        # ICL text sanitisation: normalised similarities exponentiated with ε, then a softmax
        """
import torch
def candidate_probs(sims, eps):
    sims = (sims - sims.min()) / (sims.max() - sims.min())
    weights = torch.exp(eps * sims / 2)
    return torch.softmax(weights, dim=-1)  # <-
""",
        # inline, with scipy's softmax and a sampler
        """
import numpy as np
from scipy.special import softmax
def choose(utilities, epsilon, sensitivity):
    p = softmax(np.exp(epsilon * utilities / (2 * sensitivity)))  # <-
    return np.random.choice(len(utilities), p=p)
""",
        # a Gumbel-softmax over exp-weights read from the mechanism's ε
        """
import torch
import torch.nn.functional as F
class TokenEM:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def draw(self, utility):
        scores = torch.exp(self.epsilon * utility / 2)
        return F.gumbel_softmax(scores, tau=1.0, hard=True)  # <-
""",
        # log-sum-exp normaliser over the weights
        """
import numpy as np
from scipy.special import logsumexp
def log_probs(u, eps):
    w = np.exp(eps * u / 2)
    return np.log(w) - logsumexp(w)  # <-
""",
    )

    def visit_Call(self, node: cst.Call) -> None:
        if call_name(node) not in _EXPONENTIATING or not node.args:
            return
        arg = node.args[0].value
        source = self._exp_weights(node, arg)
        if source is None:
            return
        fa = self.ctx.analysis
        self.report(node, f"`{call_name(node)}` exponentiates its input, which is already the exponential-mechanism "
                          f"weight `{fa.code(source)}` (line {fa.line_of(source)}): candidates are drawn with "
                          f"probability ∝ exp(exp(ε·u/2)), far beyond the ε the selection is charged; pass the "
                          f"logits ε·u/(2Δu) to the softmax, or normalise the weights by their sum")

    def _exp_weights(self, node: cst.Call, arg: cst.BaseExpression) -> cst.Call | None:
        """The ``exp(…ε…)`` call ``arg`` is, or the one the nearest earlier assignment of ``arg``'s name holds."""
        if isinstance(arg, cst.Call) and call_name(arg) == "exp" and arg.args and _reads_eps(arg.args[0].value):
            return arg
        if not isinstance(arg, cst.Name):
            return None
        fa = self.ctx.analysis
        fn = fa.enclosing_function(node)
        if fn is None:
            return None
        line = fa.line_of(node)
        latest: cst.Assign | None = None
        for sub in walk(fn, into_scopes=False):
            if isinstance(sub, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and fa.line_of(sub) < line:
                targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
                if any(isinstance(t, cst.Name) and t.value == arg.value for t in targets):
                    if latest is None or fa.line_of(sub) >= fa.line_of(latest):
                        latest = sub if isinstance(sub, cst.Assign) else None
                        if latest is None:
                            return None
        if latest is None:
            return None
        value = latest.value
        if isinstance(value, cst.Call) and call_name(value) == "exp" and value.args and _reads_eps(value.args[0].value):
            return value
        return None
