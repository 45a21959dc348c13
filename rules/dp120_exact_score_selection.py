"""DP120: a model structure or workload chosen by ranking exact mutual-information scores of the data, with no
randomised selection (no exponential mechanism, no noise on the scores)."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.scoreflow import holders, mentions
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: a private variant of the score (``dp_mutual_info``, ``noisy_mutual_information``)
_PRIVATE_WORDS = frozenset({"dp", "noisy", "noised", "private", "privatized", "privatised", "noise"})
#: a deterministic choice of the best-scoring candidates
_RANKING = frozenset({"sort", "sorted", "argsort", "argmax", "nlargest", "maximum_spanning_tree",
                      "minimum_spanning_tree", "maximum_spanning_edges", "topk", "most_common"})
#: a randomised choice or noise anywhere in the same function (the selection may be private)
_RANDOM_WORDS = frozenset({"exp", "exponential", "laplace", "gumbel", "normal", "gauss", "gaussian", "noise",
                           "noisy", "choice", "choices", "sample", "randn", "rand", "multinomial", "categorical",
                           "mechanism", "permute", "permutation"})


def _exact_mi_name(name: str) -> bool:
    pieces = words(name)
    return "mutual" in pieces and bool(pieces & {"info", "information", "inf", "mi"}) \
        and not pieces & _PRIVATE_WORDS


def _ast_call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _ranking(call: cst.Call) -> bool:
    name = call_name(call)
    if name in _RANKING:
        return True
    # ``max(scores, key=...)`` / ``max(d.items(), key=...)``: the best candidate by score
    return name in ("max", "min") and any(a.keyword is not None and a.keyword.value == "key" for a in call.args)


class ExactScoreSelection(Rule):
    id = "DP120"
    name = "exact-score-selection"
    category = "general"
    severity = "error"
    summary = ("a structure or workload chosen by ranking exact mutual-information scores of the private data, "
               "with no randomised selection")
    rationale = (
        "PrivBayes, DPSyn, PrivMRF and MST-style synthesizers pick which attribute pairs to model from "
        "mutual information, and that choice is released: the chosen marginals, the network and the "
        "synthetic rows follow it. Picking the top pairs of the exact scores (a sort, a top-k, an argmax, a "
        "maximum spanning tree) makes the structure a deterministic function of the data, outside any "
        "budget. Reported: a function of DP code that calls an exact mutual-information score "
        "(`mutual_info_score`, `mutual_information`, not a `dp_`/`noisy_` one) and ranks candidates in "
        "the same function (`sort`, `sorted`, `argmax`, `nlargest`, `maximum_spanning_tree`, `max(..., "
        "key=)`) with no noise or randomised draw there (no exponential-mechanism weights, Laplace/Gaussian "
        "/Gumbel noise, `choice`, `sample`). Not reported: scores returned to a caller that selects with "
        "the exponential mechanism, noisy scores, code with no DP context. Fix: select with the "
        "exponential mechanism (or report noisy max) on a share of ε, as PrivBayes does."
    )
    TRIGGERS = ("utual",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A call of an exact mutual-information score."""
        return any(_exact_mi_name(_ast_call_name(c)) for c in facts.calls)

    VALID = (
        # PrivBayes: scores returned, the caller samples with the exponential mechanism
        """
from sklearn.metrics import mutual_info_score
def candidate_scores(data, pairs, epsilon):
    return [mutual_info_score(data[a], data[b]) for a, b in pairs]
def choose(data, pairs, epsilon, sens):
    scores = candidate_scores(data, pairs, epsilon)
    w = np.exp(epsilon * np.array(scores) / (2 * sens))
    return pairs[np.random.choice(len(pairs), p=w / w.sum())]
""",
        # twin of the workload ranking: noisy scores before the sort
        """
import numpy as np
from sklearn.metrics import mutual_info_score
def build_workload(train, cols, top_pairs, epsilon, sens):
    pair_scores = []
    for a in cols:
        for b in cols:
            mi = mutual_info_score(train[a], train[b])
            pair_scores.append(((a, b), mi + np.random.laplace(0, sens / epsilon)))
    pair_scores.sort(key=lambda x: x[1], reverse=True)
    return [p for p, _ in pair_scores[:top_pairs]]
""",
        # twin of the spanning tree: a Gumbel-perturbed weight per edge (noisy max)
        """
import networkx as nx, numpy as np
from sklearn.metrics import mutual_info_score
class Synth:
    def fit(self, df, epsilon):
        G = nx.Graph()
        for a in df.columns:
            for b in df.columns:
                w = mutual_info_score(df[a], df[b]) + np.random.gumbel(0, 2 / epsilon)
                G.add_edge(a, b, weight=w)
        self.tree = nx.maximum_spanning_tree(G)
""",
        # a private score function
        """
def pick(data, attrs, epsilon):
    scores = {a: dp_mutual_info(data, a, epsilon) for a in attrs}
    return sorted(scores, key=scores.get)[-3:]
""",
        # the scores are cached and returned; only the candidate names are sorted (synthcity's PrivBayes)
        """
from itertools import combinations
class PrivBayes:
    def parent_scores(self, data, candidate, parents_all, k, epsilon):
        out, scores = [], []
        for ps in combinations(parents_all, k):
            key = "_".join(sorted(ps))
            score = self.mutual_info_score(data, list(ps), candidate)
            self.cache[candidate][key] = score
            out.append(ps)
            scores.append(score)
        return out, scores
""",
        # an evaluation of the synthetic data: nothing is chosen
        """
from sklearn.metrics import mutual_info_score
def evaluate(real, synth, cols, epsilon):
    return {c: abs(mutual_info_score(real[c], real['y']) - mutual_info_score(synth[c], synth['y'])) for c in cols}
""",
    )

    INVALID = (
        # workload of the top pairs by exact MI
        """
from sklearn.metrics import mutual_info_score
def build_workload(train, cols, top_pairs, epsilon):
    pair_scores = []
    for a in cols:
        for b in cols:
            mi = mutual_info_score(train[a], train[b])  # <-
            pair_scores.append(((a, b), mi))
    pair_scores.sort(key=lambda x: x[1], reverse=True)
    return [p for p, _ in pair_scores[:top_pairs]]
""",
        # Chow-Liu tree of a private Bayesian network
        """
import networkx as nx
from sklearn.metrics import mutual_info_score
class PrivBayes:
    def __init__(self, epsilon):
        self.epsilon = epsilon
    def fit(self, df):
        G = nx.Graph()
        for a in df.columns:
            for b in df.columns:
                G.add_edge(a, b, weight=mutual_info_score(df[a], df[b]))  # <-
        self.tree = nx.maximum_spanning_tree(G)
""",
        # the best parent by argmax
        """
import numpy as np
def best_parent(data, child, candidates, epsilon):
    scores = np.array([mutual_information(data[child], data[c]) for c in candidates])  # <-
    return candidates[int(np.argmax(scores))]
""",
        # top-k marginals with sorted() and max(key=)
        """
from sklearn.metrics import normalized_mutual_info_score as nmi
from sklearn import metrics
def select_marginals(df, pairs, k, epsilon):
    scored = {p: metrics.normalized_mutual_info_score(df[p[0]], df[p[1]]) for p in pairs}  # <-
    root = max(scored, key=scored.get)
    return [root] + sorted(scored, key=scored.get, reverse=True)[1:k]
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        nodes = list(walk(node.body, into_scopes=False))
        calls = [n for n in nodes if isinstance(n, cst.Call)]
        scores = [c for c in calls if _exact_mi_name(call_name(c))]
        if not scores:
            return
        scored = holders(nodes, scores)
        if not any(_ranking(c) and (mentions(c, scored) or any(id(s) in {id(n) for n in walk(c)} for s in scores))
                   for c in calls):
            return
        if any(words(call_name(c)) & _RANDOM_WORDS for c in calls):
            return
        fa = self.ctx.analysis
        if not fa.in_dp_context(scores[0]):
            return
        self.report(scores[0], f"`{fa.code(scores[0].func).strip()}` scores are ranked exactly in "
                               f"`{node.name.value}`: the chosen structure is a deterministic function of the "
                               "private data with no budget; select with the exponential mechanism (or noisy max) "
                               "on a share of ε")
