"""DP121: exponential-mechanism weights computed and then the best one taken (argmax) instead of sampled."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.scoreflow import holders, mentions
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

_EPSILON_WORDS = frozenset({"eps", "epsilon", "ep", "epsilons", "budget"})
#: names in an exponent that are not a candidate's score
_NOT_SCORE_WORDS = _EPSILON_WORDS | {"sens", "sensitivity", "delta", "self", "np", "math", "torch", "len", "k", "n",
                                     "num", "size", "count", "scale", "e", "exp", "float", "int", "abs", "max", "min",
                                     "log", "sqrt", "t", "steps", "rounds", "depth", "beta", "alpha", "global"}
#: a random draw in the same function: the weights may be sampled from
_DRAWS = frozenset({"choice", "choices", "multinomial", "categorical", "Categorical", "random", "uniform", "rand",
                    "sample", "searchsorted", "gumbel", "rvs", "randint", "shuffle", "binomial", "exponential",
                    "laplace", "normal", "random_sample", "randn", "torch_multinomial", "permutation", "bernoulli",
                    "randomise", "randomize", "release", "sample_from"})
_SENSITIVITY_WORDS = frozenset({"sens", "sensitivity", "du", "delta_u"})
_PICKS = frozenset({"argmax", "nanargmax", "max", "sorted", "argsort", "nlargest", "topk"})


def _name_words(node: cst.CSTNode) -> list[frozenset[str]]:
    return [words(n.value) for n in walk(node) if isinstance(n, cst.Name)]


#: array-library modules: ``np.sum(w)`` makes the module a "holder" of the weights in ``holders``
_MODULES = frozenset({"np", "numpy", "torch", "math", "jnp", "jax", "tf", "scipy", "sp", "pd", "random"})


def _exponent(node: cst.CSTNode) -> cst.CSTNode | None:
    """The exponent of ``exp(x)`` / ``math.e ** x`` / ``np.e ** x``; None otherwise."""
    if isinstance(node, cst.Call) and call_name(node) == "exp" and len(node.args) == 1:
        return node.args[0].value
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power) \
            and isinstance(node.left, cst.Attribute) and node.left.attr.value == "e":
        return node.right
    return None


def _score_weight(node: cst.CSTNode) -> bool:
    """``exp(eps * score / (2 * sens))``: ε times a candidate's score in an exponent."""
    exponent = _exponent(node)
    if exponent is None:
        return False
    pieces = _name_words(exponent)
    has_eps = any(p & _EPSILON_WORDS for p in pieces)
    has_score = any(not p & _NOT_SCORE_WORDS for p in pieces) or any(
        isinstance(n, cst.Subscript) for n in walk(exponent))
    return has_eps and has_score


def _ast_exponential(node: ast.AST) -> bool:
    if isinstance(node, ast.Call):
        func = node.func
        return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "exp"
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.left, ast.Attribute) \
        and node.left.attr == "e"


class ExponentialWeightsArgmax(Rule):
    id = "DP121"
    name = "exponential-weights-argmax"
    category = "general"
    severity = "error"
    summary = ("exponential-mechanism weights exp(ε·score/2Δ) computed, then the best candidate taken "
               "deterministically (argmax / max) instead of sampled")
    rationale = (
        "The exponential mechanism is private because the candidate is *drawn* with probability "
        "proportional to exp(ε·u/2Δu). Taking the argmax of those weights returns the candidate with the "
        "best exact score, a deterministic function of the data: the ε in the exponent protects nothing "
        "(exp is monotone, so the argmax of the weights is the argmax of the scores). Reported: in one "
        "function, weights computed as `exp(...)` or `e ** (...)` of an exponent holding an ε name and a "
        "score, followed by a deterministic pick of them (`argmax`, `max`, `== max(...)`, `sorted`, top-k) "
        "with no random draw in the function (`choice`, `multinomial`, `random`, `searchsorted` of a "
        "cumulative sum, Gumbel noise). Not reported: `exp(ε)` constants of randomized response (no score), "
        "weights that are sampled from, an exponential in a denominator (`p / ((1 - p) * exp(-r * ε) + p)`, a "
        "closed-form risk or bound whose worst case is taken, not a candidate's weight). Fix: sample the index with probabilities proportional to the "
        "weights (`rng.choice(len(w), p=w / w.sum())`), or add Gumbel noise before the argmax."
    )
    TRIGGERS = ("exp", "e **", "e**")

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """An exponential and a maximum in the file."""
        return any(_ast_exponential(n) for n in facts.nodes(ast.Call, ast.BinOp)) and any(
            (c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "")) in _PICKS
            for c in facts.calls)

    VALID = (
        # a worst-case risk: the exponential sits in the denominator of a guessing-advantage bound
        """
import numpy as np
def edge_risk(times, radius, epsilon):
    risks = []
    for t in times:
        p = np.mean(np.abs(np.asarray(times) - t) <= radius)
        risks.append(p / ((1 - p) * np.exp(-radius * epsilon) + p) - p)
    return max(risks)
""",
        # the weights are sampled from
        """
import numpy as np
def choose_split(candidates, scores, epsilon, sens):
    w = np.exp(epsilon * np.array(scores) / (2 * sens))
    return candidates[np.random.choice(len(candidates), p=w / w.sum())]
""",
        # twin of the dict spelling: inverse-CDF sampling from the weights
        """
import math, random
def choose_attribute(dic, ep):
    sens = 2
    Psc = {k: math.e ** (ep * dic[k] / sens) for k in dic}
    total = sum(Psc.values())
    r, acc = random.random() * total, 0.0
    for k, w in Psc.items():
        acc += w
        if acc >= r:
            return k
""",
        # report noisy max: Gumbel noise before the argmax
        """
import numpy as np
def select(utilities, epsilon, sens, rng):
    logits = epsilon * utilities / (2 * sens)
    w = np.exp(logits - logits.max())
    return int(np.argmax(np.log(w) + rng.gumbel(size=len(w))))
""",
        # randomized response constants: no score in the exponent
        """
import numpy as np
def perturb(bits, epsilon):
    p = np.exp(epsilon) / (np.exp(epsilon) + 1)
    keep = np.exp(epsilon) > 1
    return max(p, 0.5), keep
""",
        # not DP code: a numerical softmax argmax with a stability constant
        """
import numpy as np
def predict(logits, eps=1e-8):
    w = np.exp(logits - logits.max()) + eps
    return int(np.argmax(w / (w.sum() + eps)))
""",
        # top-k of the raw similarities first, exponential weights after, then sampled (and a clamp with max)
        """
import torch
def dp_candidates(sims, eps, k):
    top, idx = sims.topk(k, dim=1)
    w = torch.exp(eps * top / 2)
    probs = torch.softmax(w, dim=-1)
    return idx.gather(1, torch.multinomial(probs, 1)), max(float(w.max()), 0.0)
""",
        # the release is a library mechanism's draw; the argmax only measures the spread of the distribution
        """
import numpy as np
def dp_quartiles(array, utility, eps, sensitivity, mechanism, conf_level):
    idx = mechanism(epsilon=eps, sensitivity=sensitivity, utility=utility(array)).randomise()
    probabilities = np.array([np.exp(eps * u / (2 * sensitivity)) for u in utility(array)])
    probabilities = probabilities / probabilities.sum()
    top = int(np.argmax(probabilities))
    return array[idx], probabilities[top] >= conf_level
""",
        # torch.multinomial on the softmax weights
        """
import torch
def pick(scores, eps, sensitivity):
    w = torch.exp(eps * scores / (2 * sensitivity))
    idx = torch.multinomial(w / w.sum(), 1)
    return idx.item(), torch.argmax(scores)
""",
        # the max inside the exponent is a stability shift; the probabilities are returned to a sampler
        """
import numpy as np
def level_probabilities(counts, eps_step, delta_ld):
    gaps = counts + np.log(np.arange(1, len(counts) + 1) / delta_ld) / eps_step
    probs = np.exp(eps_step * (gaps - max(gaps))) / np.sum(np.exp(eps_step * (gaps - max(gaps))))
    return probs / np.sum(probs)
""",
        # the weights ordered and accumulated to shade the top-95 % mass in a figure: nothing is chosen
        """
import numpy as np
def mass_table(candidates, scores, epsilon, sensi):
    w = np.exp(-epsilon * scores / (2 * sensi))
    p = w / np.sum(w)
    order = np.argsort(p)[::-1]
    mass = np.cumsum(p[order])
    inside = mass <= 0.95
    inside[np.argmax(mass > 0.95)] = True
    return {"candidate": candidates, "p": p, "top": [i in order[inside] for i in range(len(p))]}
""",
        # not DP code: softmax over logits with a max shift, and a temperature sort for display
        """
import numpy as np
def softmax_rank(logits, temperature):
    z = np.exp((logits - np.max(logits)) / temperature)
    return z / z.sum()
""",
    )

    INVALID = (
        # the twin: normalised exponential weights (exp in the numerator too) maximised
        """
import numpy as np
def pick_edge(utility, epsilon, sens):
    w = np.exp(epsilon * utility / (2 * sens)) / np.sum(np.exp(epsilon * utility / (2 * sens)))
    return int(np.argmax(w))  # <-
""",
        # a max shift in the exponent, then the best weight taken anyway
        """
import numpy as np
def pick_level(gaps, eps, sensitivity):
    w = np.exp(eps * (gaps - max(gaps)) / (2 * sensitivity))
    return int(np.argmax(w / w.sum()))  # <-
""",
        # the weights ordered and the first k returned: a deterministic top-k
        """
import numpy as np
def top_k_items(items, counts, epsilon, sens, k):
    w = np.exp(epsilon * counts / (2 * sens))
    order = np.argsort(w)[::-1]  # <-
    return [items[i] for i in order[:k]], np.cumsum(counts)
""",
        # the dict of weights, then the key equal to the maximum
        """
import math
def chooseBestFeature(dic, ep):
    Psc = {}
    sens = 2
    for k in dic.keys():
        Psc[k] = math.e ** (ep * dic[k] / sens)
    for k in Psc.keys():
        if Psc[k] == max(Psc.values()):  # <-
            return k
""",
        # normalised probabilities, then argmax
        """
import numpy as np
def exponential_mechanism(candidates, utility, epsilon, sensitivity):
    scores = np.array([utility(c) for c in candidates])
    probs = np.exp(epsilon * scores / (2 * sensitivity))
    probs = probs / probs.sum()
    return candidates[np.argmax(probs)]  # <-
""",
        # max with a key on the weights
        """
import numpy as np
def select_threshold(thresholds, gains, eps, delta_u):
    weights = {t: np.exp(eps * g / (2 * delta_u)) for t, g in zip(thresholds, gains)}
    return max(weights, key=weights.get)  # <-
""",
        # torch weights and .argmax()
        """
import torch
def dp_select_expert(utility, epsilon, sens):
    w = torch.exp(epsilon * utility / (2.0 * sens))
    return int(w.argmax())  # <-
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        nodes = list(walk(node.body, into_scopes=False))
        denominators = {id(n) for b in nodes if isinstance(b, cst.BinaryOperation) and isinstance(b.operator, cst.Divide)
                        for n in walk(b.right)}
        # ``p / ((1 - p) * exp(-r * eps) + p)``: an exponential in a denominator is part of a closed-form
        # bound (a guessing advantage, a risk), not a candidate's weight; ``exp(u) / exp(u).sum()`` keeps the
        # numerator's weight
        weights = [n for n in nodes if id(n) not in denominators and _score_weight(n)]
        if not weights:
            return
        calls = [n for n in nodes if isinstance(n, cst.Call)]
        if any(call_name(c) in _DRAWS for c in calls):
            return
        held = holders(nodes, weights, _MODULES)
        weight_ids = {id(w) for w in weights}
        # a pick inside an exponent is a stability shift (``exp(ε·(u - max(u)))``), not a choice
        in_exponent = {id(n) for w in weights for n in walk(_exponent(w))}
        cumulated = [c for c in calls if call_name(c) == "cumsum"]
        fa = self.ctx.analysis
        order = {id(n): i for i, n in enumerate(nodes)}
        first_weight = min(order[id(w)] for w in weights)
        for call in calls:
            if call_name(call) not in _PICKS or order[id(call)] < first_weight:
                continue
            # ``max(a, 0.0)`` clamps a value; a pick ranges over one collection
            if len([a for a in call.args if a.keyword is None]) > 1 and call_name(call) in ("max", "sorted"):
                continue
            if not (mentions(call, held) or any(id(n) in weight_ids for n in walk(call))):
                continue
            if id(call) in in_exponent:
                continue
            # ``argmax(mass > 0.95)``: the first index where a condition holds, not the best candidate
            if call.args and isinstance(call.args[0].value, cst.Comparison):
                continue
            # the weights put in order and accumulated: the mass of the top candidates (a credible set)
            # is measured, nothing is chosen
            if call_name(call) in ("argsort", "sorted") and cumulated:
                ordered = holders(nodes, [call], _MODULES)
                if any(mentions(c, ordered) or any(n is call for n in walk(c)) for c in cumulated):
                    continue
            # the exponent divides by a sensitivity: the weights are an exponential mechanism's even where
            # the module names its budget tersely (``ep``)
            if not fa.in_dp_context(call) and not any(
                    p & _SENSITIVITY_WORDS for w in weights for p in _name_words(_exponent(w))):
                return
            self.report(call, "exponential-mechanism weights are maximised, not sampled: "
                              f"`{fa.code(call).strip()}` returns the candidate with the best exact score, so the "
                              "choice is a deterministic function of the data and ε protects nothing; draw the "
                              "index with probability proportional to the weights (or add Gumbel noise)")
            return
