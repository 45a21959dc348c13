"""DP303: a data-dependent answer released before (or without) charging the accountant."""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, read_names, spread
from dpcheck.analysis.astfacts import call_name as ast_call_name
from dpcheck.analysis.astfacts import dotted as ast_dotted
from dpcheck.analysis.astfacts import target_key as ast_target_key
from dpcheck.analysis.syntax import call_name, dotted, value_refs, walk
from dpcheck.codetext import code_and_fstrings, prose_free
from dpcheck.rule import Rule
from dpcheck.analysis.generator import (
    ModuleIndex,
    assignments_in,
    index_for,
    target_key,
    taint,
    tokens,
)

_LEDGER = {"alpha", "alphas", "moment", "moments", "accountant", "budget", "epsilon", "privacy", "spent", "rdp", "eps", "ledger", "odometer"}
_CHARGE_VERBS = {"step", "compose", "spend", "charge", "accumulate", "update", "add", "record", "consume", "track"}
_CHARGE_WORDS = {"accountant", "account", "moments", "budget", "privacy", "charge", "spend"}
_SOURCE_CALLS = {"laplace", "normal", "gaussian", "gumbel", "predict", "proba", "vote", "votes", "teacher", "teachers", "aggregate", "aggregation", "pate", "noisy", "lamda", "lambda"}
_SOURCE_NAMES = {"vote", "votes", "n0", "n1", "noisy", "teacher", "teachers", "predictions", "preds"}
_TEXT_SOURCES = re.compile(r"laplace|vote|teacher|noisy|pate|[Nn]oise")
_TEXT_LEDGER = re.compile(r"ccountant|moment|alpha|budget|epsilon|privacy|rdp|spent|ledger|odometer")


#: names of settings, not answers: ``self.n_teachers``, ``num_votes``, ``teacher_count``
_SETTING_TOKENS = {"n", "num", "number", "count", "size", "k", "nb", "max", "min", "threshold", "mode", "verbose"}
#: model components, not answers: ``if not self.teachers:`` tests the configuration
_COMPONENT_TOKENS = {"self", "teacher", "teachers", "model", "models", "student", "ensemble", "aggregator"}
#: receivers that hold an accountant when assigned from something named so (``self.acc = accountant``)
_ACCOUNTANT_WORDS = {"accountant", "ledger", "odometer", "budget", "moments", "rdp"}

#: prefilter texts (``UnaccountedRelease.applies_to``); each is necessary for a finding
_CALL_WORD = re.compile(
    r"(?i:account|moment|budget|privacy|charge|spend|spent|alpha|epsilon|eps|rdp|ledger|odometer)\w*[\s)]*\("
)
_VERB_CALL = re.compile(r"\.\s*(?:" + "|".join(sorted(_CHARGE_VERBS)) + r")[\s)]*\(")
_AUG = re.compile(r"[+-]=")
#: one assignment target (``x``, ``self.x``, ``x[i]``, ``x: T``) and the rest of its line
_ASSIGN = re.compile(
    r"(?m)(?:^|[;:])[ \t]*([A-Za-z_][\w.]*)[ \t]*(?:\[[^\n]*?\])?[ \t]*(?::[^=\n]*)?=(?!=)([^\n]*)"
)
_DOTTED = re.compile(r"[A-Za-z_][\w.]*")
_CHAINED = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)[ \t]*=(?!=)")
_ACCOUNTANT_TEXT = re.compile(r"(?i:ccountant|ledger|odometer|budget|moments|rdp)")
_SOURCE_TEXT = re.compile(
    r"(?i:laplace|normal|gaussian|gumbel|pred|proba|vote|teacher|aggregat|pate|noisy|lamda|lambda|n0|n1)"
)
_IF = re.compile(r"\bif\b")
#: ``return None`` counts: a charge on one branch is reported when any later return has a value
_RELEASE = re.compile(r"\bcontinue\b|\breturn\b(?![ \t]*(?:\n|;|\Z))")
_DEFINED = re.compile(r"\b(?:def|class)[ \t]+$")
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_OPEN, _CLOSE = "([{", ")]}"


def _name_before(text: str, end: int, extra: str = "") -> str:
    """The identifier (or dotted chain when ``extra`` is ``"."``) ending at ``end``."""
    start = end
    while start > 0 and (text[start - 1] in _IDENT_CHARS or text[start - 1] in extra):
        start -= 1
    return text[start:end]


def _target_text(code: str, op: int) -> str:
    """The text before an augmented-assignment operator back to its statement's start: its line,
    and earlier lines while the target's brackets are open there or a line ends with ``\\``."""
    start = code.rfind("\n", 0, op) + 1
    for _ in range(50):
        text = code[start:op]
        closing = sum(text.count(c) for c in _CLOSE) > sum(text.count(c) for c in _OPEN)
        previous = code.rfind("\n", 0, max(0, start - 1)) + 1
        if start == 0 or not (closing or code[previous:start].rstrip().endswith("\\")):
            break
        start = previous
    return code[start:op]


def _statement_rest(code: str, match: re.Match[str]) -> str:
    """The rest of an assignment's statement: its line, and the next lines while brackets are
    open or a line ends with a backslash (strings are already blanked in ``code``)."""
    rest = match.group(2)
    pos = match.end()
    depth = sum(rest.count(c) for c in _OPEN) - sum(rest.count(c) for c in _CLOSE)
    lines = 0
    while (depth > 0 or rest.rstrip().endswith("\\")) and pos < len(code) and lines < 200:
        nxt = code.find("\n", pos + 1)
        nxt = len(code) if nxt < 0 else nxt
        line = code[pos:nxt]
        depth += sum(line.count(c) for c in _OPEN) - sum(line.count(c) for c in _CLOSE)
        rest += line
        pos, lines = nxt, lines + 1
    return rest


def _charges_text(code: str) -> bool:
    """Text a charge of ``_direct_charge`` or of an accountant receiver needs (a necessary
    condition, never sufficient): a call named with a charging word or a verb and a ledger word,
    ``+=``/``-=`` on a ledger, ``ledger = … ledger …``, or a charging verb called on a ledger or on
    a name assigned from something named like an accountant (``self.acc = RDPAccountant()``)."""
    for m in _CALL_WORD.finditer(code):
        end = m.end() - 1
        while end > 0 and code[end - 1] in " \t\r\n)":
            end -= 1
        name = _name_before(code, end)
        if _DEFINED.search(code, max(0, end - len(name) - 12), end - len(name)):
            continue  # ``def spend(`` / ``class Accountant(``: not a call
        toks = tokens(name)
        if toks & _CHARGE_WORDS or (toks & _CHARGE_VERBS and toks & _LEDGER):
            return True
    for m in _AUG.finditer(code):
        if any(tokens(w) & _LEDGER for w in _DOTTED.findall(_target_text(code, m.start()))):
            return True
    receivers = {_name_before(code, m.start(), ".") for m in _VERB_CALL.finditer(code)}
    if any(tokens(r) & _LEDGER for r in receivers):
        return True
    for m in _ASSIGN.finditer(code):
        key = m.group(1)
        ledger_key = bool(tokens(key) & _LEDGER)
        # ``a = b = RDPAccountant()`` binds ``b`` too
        bound = {key, *_CHAINED.findall(m.group(2))} & receivers
        if not ledger_key and not bound:
            continue
        rest = _statement_rest(code, m)
        if ledger_key and re.search(r"(?<![\w.])" + re.escape(key) + r"(?!\w)", rest):
            return True
        if bound and _ACCOUNTANT_TEXT.search(rest):
            return True
    return False


def _is_source(expr: cst.BaseExpression) -> bool:
    for node in walk(expr):
        if isinstance(node, cst.Call) and tokens(call_name(node)) & _SOURCE_CALLS:
            return True
        if isinstance(node, (cst.Name, cst.Attribute)):
            toks = tokens(node.value if isinstance(node, cst.Name) else node.attr.value)
            if toks & _SOURCE_NAMES and not toks & _SETTING_TOKENS:
                return True
    return False


#: tests of a value's type or representation, not of its value
_FORMAT_TESTS = frozenset({"isinstance", "is_tensor", "hasattr", "callable", "is_floating_point", "issparse"})


def _reads_answer(expr: cst.CSTNode, tainted: set[str]) -> bool:
    """Does a branch test read the teachers' answers? Presence tests (``votes is None``), the size
    of a container (``len(self.teachers)``) and bare references to model components or settings
    (``not self.teachers``, ``self.n_teachers == 0``) read the configuration, not the data."""
    if isinstance(expr, cst.Comparison) and all(
        isinstance(c.operator, (cst.Is, cst.IsNot)) and isinstance(c.comparator, cst.Name)
        and c.comparator.value == "None" for c in expr.comparisons
    ):
        return False
    if isinstance(expr, cst.Call):
        if call_name(expr) == "len" and len(expr.args) == 1 and dotted(expr.args[0].value) is not None:
            return False
        if call_name(expr) in _FORMAT_TESTS:
            return False  # ``isinstance(preds, dict)``: the answers' format, the same for every dataset
        if tokens(call_name(expr)) & _SOURCE_CALLS:
            return True
    if isinstance(expr, (cst.Name, cst.Attribute)):
        key = dotted(expr)
        if key is not None:
            parts = key.split(".")
            if any(".".join(parts[:i]) in tainted for i in range(1, len(parts) + 1)):
                return True
            toks = tokens(key)
            return bool(toks & _SOURCE_NAMES and not toks & _SETTING_TOKENS and not toks <= _COMPONENT_TOKENS)
    return any(_reads_answer(child, tainted) for child in expr.children)


def _direct_charge(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.AugAssign):
        # spending adds to a ledger (or takes from what is left); ``epsilon *= 2`` re-tunes
        if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            return False
        key = target_key(node.target)
        return key is not None and bool(tokens(key) & _LEDGER)
    if isinstance(node, cst.Assign) and len(node.targets) == 1:
        key = target_key(node.targets[0].target)
        return key is not None and bool(tokens(key) & _LEDGER) and key in value_refs(node.value)
    if isinstance(node, cst.Call):
        name = call_name(node)
        toks = tokens(name)
        # ``update_alpha``, ``_accumulate_moments``: a charging verb on a ledger, even when the
        # method is inherited and its body is not in this file
        if toks & _CHARGE_WORDS or (toks & _CHARGE_VERBS and toks & _LEDGER):
            return True
        if name in _CHARGE_VERBS and isinstance(node.func, cst.Attribute):
            receiver = dotted(node.func.value) or ""
            return bool(tokens(receiver) & _LEDGER)
    return False


class UnaccountedRelease(Rule):
    id = "DP303"
    name = "unaccounted-release"
    category = "general"
    severity = "error"
    summary = "a data-dependent branch releases its result before or without charging the privacy accountant"
    rationale = (
        "Every answer computed from the teachers' votes consumes privacy budget, including the "
        "decision of which branch to take. When a function that labels samples with the noisy "
        "teacher ensemble returns early (e.g. synthcity returns all-zero labels when the noisy "
        "votes mark at least half of the batch as real) or skips to the next iteration before "
        "the moments accountant is updated, that answer reaches the student/generator but is "
        "never counted in ε̂, so the reported guarantee is too optimistic. Fix: charge the "
        "accountant for every aggregation query before any return/continue that can release "
        "teacher-derived output, or charge it on every branch. Branches that test a setting "
        "(`self.n_teachers == 0`, `not self.teachers`, `len(self.teachers) == 0`, `mode`, `epsilon is None`) and return no answer, and branches "
        "taken after the cost was charged (Confident-GNMax charges its threshold check first, "
        "also by opening the ledger with it: `rdp = threshold_cost(…)` before `if …: rdp += …`), "
        "and refusals (`return None`, `np.full(k, None)`, `[None] * k`: a budget stop declining "
        "to answer) are fine."
    )
    TEXT_AFTER_GATE = True
    TRIGGERS = ("alpha", "moment", "ccountant", "budget", "epsilon", "privacy", "rdp", "spent", "ledger", "odometer")

    VALID = (
        # (fp47) a repeated query re-serves the answer stored after it was charged and noised: post-processing
        """
import numpy as np
def noisy_count(self, item, eps):
    if item in self.history:
        return self.history[item]
    self.budget.spend(eps)
    noisy = self.count(item) + np.random.laplace(0, 1 / eps)
    self.history[item] = noisy
    return noisy
""",
        # ordinary ML: a memoised embedding lookup, no privacy ledger
        """
def embed(self, token):
    if token in self.memo:
        return self.memo[token]
    vec = self.encoder(token)
    self.memo[token] = vec
    return vec
""",
        # a test of the answers' format (a tensor or a dict of them), not of their values
        """
import numpy as np
def label_and_account(x, teachers, alpha, lam, L):
    votes = np.array([t.predict(x) for t in teachers]).sum(0)
    noisy = votes + np.random.laplace(scale=1 / lam, size=votes.shape)
    r = (noisy > len(teachers) / 2).astype(int)
    if isinstance(r, np.ndarray):
        for l in range(L):
            alpha[l] += 2 * lam ** 2 * l * (l + 1)
    return r
""",
        # accountant updated before the data-dependent early exit
        """
import numpy as np
def label_batch(self, x):
    n0, n1 = self.teachers.votes(x)
    noisy = (n1 + np.random.laplace(scale=1 / self.lamda, size=n1.shape)) / (n0 + n1) > 0.5
    q = (2 + self.lamda * np.abs(n0 - n1)) / (4 * np.exp(self.lamda * np.abs(n0 - n1)))
    for l in range(self.L):
        self.alpha[l] += self.moment_term(q, l)
    if noisy.mean() >= 0.5:
        return np.zeros(len(x))
    return noisy.astype(float)
""",
        # guard on the input only (no teacher output involved)
        """
def aggregate(self, x):
    if len(x) == 0:
        return []
    votes = self.teachers.predict(x)
    self.accountant.step(votes)
    return self.noisy_argmax(votes)
""",
        # both branches charge
        """
import numpy as np
def charge(alpha, votes, lam, L):
    n1 = votes.sum()
    if n1 > len(votes) / 2:
        alpha += np.full(L, 2 * lam ** 2)
    else:
        alpha += np.full(L, lam ** 2)
    return alpha
""",
        # continue taken before any query was made
        """
def train(self, batches):
    for batch in batches:
        if batch is None:
            continue
        votes = self.teachers.vote(batch)
        self.moments_accountant.update(votes)
        labels = votes.argmax(1)
        self.student.fit(batch, labels)
""",
        # no accountant in the function at all
        """
import numpy as np
def noisy_labels(votes, scale):
    noisy = votes + np.random.laplace(scale=scale, size=votes.shape)
    if noisy.max() < 0:
        return np.zeros(len(votes))
    return noisy.argmax(1)
""",
        # branches on settings (teacher count, mode, ε left unset) release no answer
        """
import numpy as np
import torch
def _update_alpha(self, n0, n1):
    self.alpha += np.log1p(np.abs(n0 - n1)).sum()
def fake_labels(self, X, mode="pate", epsilon=None):
    if self.n_teachers == 0:
        return torch.zeros(len(X))
    if mode == "uniform" or epsilon is None:
        return torch.ones(len(X))
    n0, n1, labels = self.teachers.pate_lamda(X)
    self._update_alpha(n0, n1)
    return torch.from_numpy(labels)
""",
        # Confident-GNMax: the threshold check is charged first, then the answer in the branch
        """
import numpy as np
def confident_answer(self, votes):
    noisy_max = votes.max() + np.random.normal(0, self.sigma_threshold)
    self.accountant.charge(self.threshold_cost)
    if noisy_max >= self.threshold:
        noisy = votes + np.random.normal(0, self.sigma_answer, votes.shape)
        self.accountant.charge(self.answer_cost)
        return noisy.argmax()
    return None
""",
        # AIM-style re-tuning: a data-dependent test halves sigma and doubles epsilon (no charge)
        """
import numpy as np
def select_and_measure(self, data, rounds):
    rho_used, sigma, epsilon = 0.0, 1.0, 0.1
    measurements = []
    for _ in range(rounds):
        rho_used += 0.5 / sigma ** 2
        y = data + np.random.normal(0, sigma, data.shape)
        measurements.append(y)
        if np.abs(y - self.estimate(measurements)).sum() <= sigma:
            sigma /= 2
            epsilon *= 2
    return self.synthesize(measurements)
""",
        # configuration tests (no teachers yet, an empty or missing ensemble) before any query
        """
import numpy as np
class PATEGAN:
    def _update_alpha(self, n0, n1):
        self.alpha += np.log1p(np.abs(n0 - n1)).sum()
    def fake_labels(self, X):
        if not self.teachers:
            return np.zeros(len(X))
        n0, n1, labels = self.teachers.pate_lamda(X)
        self._update_alpha(n0, n1)
        return labels
    def label_rows(self, X, teachers=None):
        if teachers is None or len(teachers) == 0:
            return np.ones(len(X))
        if len(self.teacher_models) < 2 or self.aggregator is None:
            return np.full(len(X), 0.5)
        votes = np.stack([t.predict(X) for t in teachers]).sum(0)
        self.accountant.step(votes)
        return votes + np.random.laplace(0, 1 / self.lamda, votes.shape)
""",
        # DPSU's per-user weight budget, reset for every user: an allowance, not a ledger
        """
import numpy as np
def policy_union(groups, gamma, scale, rho):
    histogram = {}
    for items in groups:
        budget = 1
        for item in items:
            cost = gamma - histogram.get(item, 0.0)
            if cost <= budget:
                histogram[item] = gamma
                budget -= cost
            else:
                histogram[item] = histogram.get(item, 0.0) + budget
                break
    released = []
    for item in histogram:
        histogram[item] += np.random.laplace(0, scale)
        if histogram[item] > rho:
            released.append(item)
    return released
""",
        # Confident-GNMax helper: the ledger opens with the threshold test's cost, the answer's
        # cost is added only when the teachers are confident enough to answer
        """
import numpy as np
def gnmax_thresh_aggregator(votes, thresh_cnt, sigma_thresh, sigma, orders):
    log_pr_answered = compute_logpr_answered(thresh_cnt, sigma_thresh, votes)
    rdp_budget = compute_rdp_threshold(log_pr_answered, sigma_thresh, orders)
    if np.random.normal(np.max(votes), sigma_thresh) >= thresh_cnt:
        res = np.argmax(np.random.normal(votes, sigma))
        rdp_budget += rdp_gaussian(compute_logq_gaussian(votes, sigma), sigma, orders)
    else:
        res = -1
    return res, rdp_budget
""",
        # the same, the ledger extended by ``eps = eps + …`` and a refusal as None
        """
import numpy as np
def confident_label(votes, threshold, sigma1, sigma2, orders):
    eps_rdp = float(threshold_rdp(votes, threshold, sigma1, orders))
    label = None
    if votes.max() + np.random.normal(0, sigma1) > threshold:
        label = int(np.argmax(votes + np.random.normal(0, sigma2, votes.shape)))
        eps_rdp = eps_rdp + gnmax_rdp(votes, sigma2, orders)
    return label, eps_rdp
""",
        # a budget stop: over the budget the query declines, returning a vector of None
        """
import numpy as np
class Aggregator:
    def aggregate(self, votes):
        self.eps_ma += self.cost(votes)
        return np.argmax(np.bincount(votes) + np.random.laplace(0, self.scale, self.k))
    def threshold_aggregate(self, votes, max_epsilon):
        if self.hit_max:
            return np.full(self.k, None)
        noisy_eps = self.epsilon_after(self.data_dependent_cost(votes))
        if noisy_eps > max_epsilon:
            self.hit_max = True
            return np.full(self.k, None)
        return self.aggregate(votes)
    def label_or_refuse(self, votes, max_epsilon):
        if self.epsilon_after(self.data_dependent_cost(votes)) > max_epsilon:
            return [None] * self.k
        if np.max(votes) < self.tau:
            return np.array([np.nan] * self.k)
        return self.aggregate(votes)
""",
        # verbose logging branch before the charge returns nothing
        """
def label(self, x):
    votes = self.teacher_votes(x)
    if self.verbose:
        print("votes computed")
    self.budget.spend(self.gamma)
    return self.noisy_argmax(votes)
""",
    )

    INVALID = (
        # synthcity shape: all-zero labels returned and the accountant update skipped
        """
import numpy as np
def _pate_label(self, X):
    n0, n1, labels = self.teachers.pate_lamda(X)
    if np.sum(labels) >= len(labels) / 2:
        return np.zeros(len(X))  # <-
    q = (2 + self.lamda * np.abs(n0 - n1)) / (4 * np.exp(self.lamda * np.abs(n0 - n1)))
    for j in range(self.num_moments):
        self.alpha[j] += np.log((1 - q) * ((1 - q) / (1 - q * np.exp(2 * self.lamda))) ** (j + 1) + q * np.exp(2 * self.lamda * (j + 1))).sum()
    return labels
""",
        # early exit on noisy votes before an accountant object is charged
        """
import torch
def query(self, x):
    votes = torch.stack([t(x) > 0.5 for t in self.teachers]).sum(0)
    noisy = votes + torch.distributions.Laplace(0, 1 / self.lam).sample(votes.shape)
    if (noisy > len(self.teachers) / 2).all():
        return torch.ones(len(x))  # <-
    self.accountant.step(votes)
    return (noisy > len(self.teachers) / 2).float()
""",
        # continue skips the moments update after the student already used the labels
        """
import numpy as np
def train_student(self, steps):
    for _ in range(steps):
        fake = self.sample_fake()
        preds = np.stack([t.predict(fake) for t in self.teachers])
        labels = (preds.sum(0) + np.random.laplace(0, 1 / self.lamda, len(fake))) > len(self.teachers) / 2
        self.student.train_on_batch(fake, labels)
        if labels.all():
            continue  # <-
        self.update_moments(preds)
""",
        # conditional charge: the accountant is updated only on one data-dependent branch
        """
import numpy as np
def label_and_account(x, teachers, alpha, lam, L):
    votes = np.array([t.predict(x) for t in teachers]).sum(0)
    noisy = votes + np.random.laplace(scale=1 / lam, size=votes.shape)
    r = (noisy > len(teachers) / 2).astype(int)
    if r.mean() < 0.5:  # <-
        for l in range(L):
            alpha[l] += 2 * lam ** 2 * l * (l + 1)
    return r
""",
        # method-name charge, early return of the noisy vote tensor
        """
import numpy as np
class Aggregator:
    def answer(self, x):
        counts = self.teacher_counts(x)
        noisy = counts + np.random.normal(0, self.sigma, counts.shape)
        if noisy.max() - np.sort(noisy)[-2] > self.margin:
            return noisy.argmax()  # <-
        self._charge_budget(counts)
        return noisy.argmax()
""",
        # the accountant lives in a method; the early return skips it
        """
import numpy as np
import torch
class Plugin:
    def _update_alpha(self, n0, n1):
        self.alpha_dict += np.log1p(np.abs(n0 - n1)).sum()
    def _fake_labels(self, X):
        n0, n1, y_mb = self.teachers.pate_lamda(X)
        if np.sum(y_mb) >= len(X) / 2:
            return torch.zeros(len(X))  # <-
        self._update_alpha(n0, n1)
        return torch.from_numpy(y_mb)
""",
        # methods: an inherited ``update_alpha``, an accountant held as ``self.acc``, an inline ledger
        """
import numpy as np
class Labeler(BasePATE):
    def __init__(self, accountant, lamda):
        self.acc = accountant
        self.lamda = lamda
    def fake_labels(self, X):
        n0, n1, noisy = self.teachers.pate_lamda(X)
        if noisy.mean() > 0.9:
            return np.ones(len(X))  # <-
        self.update_alpha(n0, n1)
        return noisy
    def student_labels(self, X):
        n0, n1 = self.count_votes(X)
        noisy = n1 + np.random.laplace(0, 1 / self.lamda, n1.shape)
        if np.sum(noisy) >= len(X) / 2:
            return np.zeros(len(X))  # <-
        self.acc.step(n0, n1)
        return noisy
    def soft_labels(self, X):
        votes = self.teacher_votes(X)
        noisy = votes + np.random.laplace(0, 1 / self.lamda, votes.shape)
        if (noisy > 0).all():
            return noisy  # <-
        self.alpha += np.log1p(np.abs(votes)).sum()
        return noisy
""",
        # (fp47) twin: the cache is filled with a fresh answer nobody charged (no store after the charge)
        """
import numpy as np
def noisy_count(self, item, eps):
    if item in self.history:
        return self.history[item]  # <-
    noisy = self.count(item) + np.random.laplace(0, 1 / eps)
    self.history[item] = noisy
    self.budget.spend(eps)
    return noisy
""",
        # a cached path returns the noisy answer before the budget is spent (setting-only test)
        """
import numpy as np
def answer_query(self, x, use_cache=True):
    counts = self.teacher_counts(x)
    noisy = counts + np.random.laplace(0, 1 / self.gamma, counts.shape)
    label = noisy.argmax()
    if use_cache and self.cache_enabled:
        self.cache[x] = label
        return label  # <-
    self.budget.spend(self.gamma)
    return label
""",
        # a ledger opened empty: the threshold test is never charged, only the answer
        """
import numpy as np
def thresh_aggregate(votes, thresh, sigma_thresh, sigma, orders):
    rdp_budget = np.zeros(len(orders))
    if np.random.normal(np.max(votes), sigma_thresh) >= thresh:  # <-
        res = np.argmax(np.random.normal(votes, sigma))
        rdp_budget += rdp_gaussian(votes, sigma, orders)
    else:
        res = -1
    return res, rdp_budget
""",
        # a filled vector of the noisy winner is an answer, not a refusal
        """
import numpy as np
def answer(self, votes):
    noisy = votes + np.random.laplace(0, self.scale, votes.shape)
    if noisy.max() > self.tau:
        return np.full(self.k, noisy.argmax())  # <-
    self.budget.spend(self.gamma)
    return None
""",
        # early return inside the query loop skips the ledger entry of the last batch
        """
import numpy as np
def label_all(self, batches, eps_per_query):
    answers = []
    for xb in batches:
        votes = np.stack([t.predict(xb) for t in self.teachers]).sum(0)
        noisy = votes + np.random.laplace(scale=2 / eps_per_query, size=votes.shape)
        answers.append(noisy.argmax())
        if len(answers) >= self.max_answers:
            return answers  # <-
        self.spent["epsilon"] += eps_per_query
    return answers
""",
    )

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """The trigger substrings, then the rule's own text condition read without comments and
        docstrings (string keys such as ``budget["spent"]`` still count), a word an answer is
        traced from, an ``if`` with a ``return``/``continue`` that can release it, and the text of
        a charge (``_charges_text``): a file that never charges a ledger has nothing to report."""
        if not (super().applies_to(source) and cls.gate(source)):
            return False
        if not cls.gate(prose_free(source)):
            return False
        code = code_and_fstrings(source)
        return bool(
            _SOURCE_TEXT.search(code) and _IF.search(code) and _RELEASE.search(code) and _charges_text(code)
        )

    @staticmethod
    def gate(src: str) -> bool:
        return bool(_TEXT_SOURCES.search(src) and _TEXT_LEDGER.search(src))

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """The findings' shapes in one function (its own nodes, source positions for order): a
        release (``return`` with a value, ``continue``) inside an ``if`` with a charge
        (``is_charge`` of ``visit_Module``) at or after it, where the ``if`` may test an answer or
        the release may return one; or an ``if`` that may test an answer holding a charge, with
        a ``return`` with a value after it. Answers are over-approximated (``_ast_answers``)."""
        if not cls.gate(facts.source) or not facts.nodes(ast.If) or not facts.nodes(ast.Return, ast.Continue):
            return False  # ``visit_Module`` needs ``gate`` on the raw source
        direct = [n for n in facts.nodes(ast.Call, ast.Assign, ast.AugAssign) if _ast_direct_charge(n)]
        ledgers = _ast_ledgers(facts)
        charges = direct + [
            c for c in facts.calls if isinstance(c.func, ast.Attribute) and c.func.attr in _CHARGE_VERBS
            and ast_dotted(c.func.value) in ledgers
        ] if ledgers else list(direct)
        if not charges:
            return False
        chargers = _ast_chargers(facts, direct)
        if chargers:
            charges += [c for c in facts.calls if ast_call_name(c) in chargers]
        by_function: dict[ast.AST, list[ast.AST]] = {}
        for charge in charges:
            func = facts.enclosing_function(charge)
            if func is not None:
                by_function.setdefault(func, []).append(charge)
        own: dict[ast.AST, tuple[list[ast.If], list[ast.AST], list[ast.Return]]] = {}
        for node in facts.nodes(ast.If, ast.Return, ast.Continue):
            func = facts.enclosing_function(node)
            if func not in by_function:
                continue
            ifs, releases, returns = own.setdefault(func, ([], [], []))  # type: ignore[arg-type]
            if isinstance(node, ast.If):
                ifs.append(node)
            elif isinstance(node, ast.Continue):
                releases.append(node)
            elif node.value is not None:  # type: ignore[attr-defined]
                returns.append(node)  # type: ignore[arg-type]
                if not (isinstance(node.value, ast.Constant) and node.value.value is None):  # type: ignore[attr-defined]
                    releases.append(node)
        for func, (ifs, releases, returns) in own.items():
            if not ifs or not (releases or returns):
                continue
            answers = _ast_answers(func)
            last_charge = max(_start(c) for c in by_function[func])
            for guard in ifs:
                tests = _ast_may_read(guard.test, answers)
                for r in releases:
                    if _start(r) <= last_charge and _within(r, guard) and (
                            tests or isinstance(r, ast.Return) and _ast_may_read(r.value, answers)):  # type: ignore[arg-type]
                        return True
                if tests and any(_within(c, guard) for c in by_function[func]) \
                        and any(_start(r) > _start(guard) for r in returns):
                    return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        if not self.gate(self.ctx.source):
            return
        index = index_for(self.ctx)
        chargers = _charging_functions(index)
        ledgers = _accountant_receivers(index)

        def is_charge(n: cst.CSTNode) -> bool:
            if _direct_charge(n):
                return True
            if not isinstance(n, cst.Call):
                return False
            if call_name(n) in chargers:
                return True
            return isinstance(n.func, cst.Attribute) and call_name(n) in _CHARGE_VERBS \
                and dotted(n.func.value) in ledgers

        for func in index.functions:
            charges = [n for n in walk(func.body) if is_charge(n) and index.enclosing_function(n) is func
                       and not _reset_each_iteration(n, func, index)]
            if charges:
                self._check(func, charges, index)

    def _check(self, func: cst.FunctionDef, charges: list[cst.CSTNode], index: ModuleIndex) -> None:
        assigns = assignments_in(func, index) + _mutations(func)
        params = {p.name.value for p in func.params.params}
        seed = {p for p in params if tokens(p) & _SOURCE_NAMES and not tokens(p) <= _COMPONENT_TOKENS}
        tainted = taint(assigns, _is_source, seed)

        def data_dependent(test: cst.BaseExpression) -> bool:
            return bool(value_refs(test) & tainted) or _is_source(test)

        def tests_answer(test: cst.BaseExpression) -> bool:
            return _reads_answer(test, tainted)

        first = min(index.order[c] for c in charges)
        for node in walk(func.body):
            if not isinstance(node, (cst.Return, cst.Continue)) or index.enclosing_function(node) is not func:
                continue
            if isinstance(node, cst.Return) and (node.value is None or _no_answer(node.value)):
                continue
            if index.order[node] > first:
                continue
            guard = _enclosing_if(node, func, index)
            if guard is None or any(_inside(c, guard, index) for c in charges):
                continue
            # (fp47) ``if key in self.history: return self.history[key]`` re-serves an answer the same function
            # stored after charging for it: post-processing of a counted release, no new ε
            if isinstance(node, cst.Return) and _memo_hit(node.value, guard.test, func, charges, index):
                continue
            # a test on the answers, or an answer released whatever the test (``if self.cache:
            # return noisy.argmax()``); a test of a setting returning no answer releases nothing
            released = isinstance(node, cst.Return) and data_dependent(node.value)
            if not (tests_answer(guard.test) or released):
                continue
            if isinstance(node, cst.Continue):
                loop = next(iter(index.enclosing_loops(node)), None)
                if loop is None or not any(_inside(c, loop, index) for c in charges):
                    continue
            self.report(
                node,
                "a branch decided by the noisy teacher votes releases its result before the "
                "privacy accountant is charged: that answer is never counted in ε̂; charge the "
                "accountant before any return/continue that releases teacher-derived output",
            )
        # charges made on one data-dependent branch only
        for node in walk(func.body):
            if not isinstance(node, cst.If) or index.enclosing_function(node) is not func:
                continue
            if not tests_answer(node.test):
                continue
            inside = [c for c in charges if _inside(c, node.body, index)]
            if not inside or (node.orelse is not None and any(_inside(c, node.orelse, index) for c in charges)):
                continue
            if any(index.order[c] > index.order[node] and not _inside(c, node, index) for c in charges):
                continue
            if any(index.order[c] < index.order[node] for c in charges if not _inside(c, node, index)):
                continue
            if _opened_with_cost(node, inside, func, index):
                continue
            later_release = any(
                isinstance(r, cst.Return) and r.value is not None and index.order[r] > index.order[node]
                and not _inside(r, node, index) and index.enclosing_function(r) is func
                for r in walk(func.body)
            )
            if later_release:
                self.report(
                    node.test,
                    "the privacy accountant is charged only on one branch of a test on the noisy "
                    "teacher votes, yet the result is returned on both: the uncharged answers are "
                    "missing from ε̂; charge the accountant on every branch",
                )


#: calls that build a container or convert a value; a ledger opened with one of them starts empty
_CONSTRUCTORS = {
    "zeros", "zeros_like", "empty", "empty_like", "ones", "ones_like", "full", "full_like", "array",
    "asarray", "tensor", "as_tensor", "list", "dict", "tuple", "float", "int", "copy", "deepcopy",
    "defaultdict", "Counter", "len", "range", "arange", "OrderedDict",
}
#: values a query answers with when it declines to answer
_NO_ANSWER = {"None", "nan", "NaN", "NAN", "math.nan", "np.nan", "numpy.nan", "torch.nan", "np.NaN", "np.NAN"}


def _memo_hit(value: cst.BaseExpression, test: cst.BaseExpression, func: cst.FunctionDef,
              charges: list[cst.CSTNode], index: ModuleIndex) -> bool:
    """Is ``return value`` under ``test`` a cache hit: ``value`` reads ``cache[key]`` (or ``cache.get(key)``),
    ``test`` is ``key in cache``, and ``func`` stores ``cache[...] = ...`` after its first charge?"""
    cache: str | None = None
    if isinstance(value, cst.Subscript):
        cache = dotted(value.value)
    elif isinstance(value, cst.Call) and call_name(value) == "get" and isinstance(value.func, cst.Attribute):
        cache = dotted(value.func.value)
    if cache is None:
        return False
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.In) and dotted(test.comparisons[0].comparator) == cache):
        return False
    first = min(index.order[c] for c in charges)
    for node in walk(func.body):
        if isinstance(node, cst.Assign) and index.order.get(node, -1) > first and any(
                isinstance(t.target, cst.Subscript) and dotted(t.target.value) == cache for t in node.targets):
            return True
    return False


def _no_answer(expr: cst.BaseExpression) -> bool:
    """A refusal, not an answer: ``None``, NaN, or a container filled with it (``np.full(k, None)``,
    ``[None] * k``, ``np.array([None] * k)``, ``np.full_like(votes, np.nan)``)."""
    if dotted(expr) in _NO_ANSWER:
        return True
    if isinstance(expr, cst.Call):
        name = call_name(expr)
        if name == "float" and len(expr.args) == 1 and isinstance(expr.args[0].value, cst.SimpleString):
            return expr.args[0].value.evaluated_value.lower() == "nan"
        if name in {"full", "full_like"}:
            fill = [a.value for a in expr.args if a.keyword is not None and a.keyword.value == "fill_value"]
            fill = fill or [a.value for a in expr.args if a.keyword is None][1:2]
            return bool(fill) and _no_answer(fill[0])
        if name in {"array", "asarray", "repeat", "tile", "list", "tuple"} and expr.args:
            return _no_answer(expr.args[0].value)
        return False
    if isinstance(expr, (cst.List, cst.Tuple)):
        return bool(expr.elements) and all(
            not isinstance(el, cst.StarredElement) and _no_answer(el.value) for el in expr.elements
        )
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return any(isinstance(side, (cst.List, cst.Tuple)) and _no_answer(side)
                   for side in (expr.left, expr.right))
    return False


def _charge_key(charge: cst.CSTNode) -> str | None:
    """The ledger an accumulating charge adds to: ``rdp += c``, ``rdp = rdp + c``."""
    if isinstance(charge, cst.AugAssign) and isinstance(charge.operator, cst.AddAssign):
        return target_key(charge.target)
    if isinstance(charge, cst.Assign) and len(charge.targets) == 1 and isinstance(charge.value, cst.BinaryOperation) \
            and isinstance(charge.value.operator, cst.Add):
        return target_key(charge.targets[0].target)
    return None


def _opened_with_cost(branch: cst.If, inside: list[cst.CSTNode], func: cst.FunctionDef, index: ModuleIndex) -> bool:
    """Confident-GNMax: ``rdp = threshold_cost(...)`` before ``if noisy_max >= T: rdp += answer_cost``.
    The ledger the branch adds to was opened with a computed cost (a call that is no container
    constructor) before the test, so the test itself was charged and only the answer remains."""
    keys = {key for key in map(_charge_key, inside) if key is not None}
    if not keys or len(keys) != len(inside):
        return False
    opened: set[str] = set()
    for node in walk(func.body):
        if not isinstance(node, cst.Assign) or len(node.targets) != 1 or index.enclosing_function(node) is not func:
            continue
        if index.order[node] >= index.order[branch] or _inside(node, branch, index):
            continue
        key = target_key(node.targets[0].target)
        if key not in keys or key in value_refs(node.value):
            continue
        if any(isinstance(n, cst.Call) and call_name(n) not in _CONSTRUCTORS for n in walk(node.value)):
            opened.add(key)
        else:
            opened.discard(key)  # re-opened empty: what was charged before is gone
    return opened == keys


def _reset_each_iteration(charge: cst.CSTNode, func: cst.FunctionDef, index: ModuleIndex) -> bool:
    """``budget = 1`` at the top of each loop iteration, then ``budget -= cost``: a per-item
    allowance (DPSU's per-user weight), not a ledger of what the releases spent."""
    if not (isinstance(charge, cst.AugAssign) and isinstance(charge.target, cst.Name)):
        return False
    name = charge.target.value
    for node in (n for loop in index.enclosing_loops(charge) for n in walk(loop.body)):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and index.order[node] < index.order[charge] \
                and isinstance(node.targets[0].target, cst.Name) and node.targets[0].target.value == name \
                and isinstance(node.value, (cst.Integer, cst.Float)) and index.enclosing_function(node) is func:
            return True
    return False


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset  # type: ignore[attr-defined]


def _within(node: ast.AST, container: ast.AST) -> bool:
    end = (node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    return _start(container) <= _start(node) and end <= (container.end_lineno, container.end_col_offset)  # type: ignore[attr-defined]


def _ast_direct_charge(node: ast.AST) -> bool:
    """``_direct_charge`` on CPython's ``ast`` (an ``x = … x …`` assignment counts whatever it reads: a superset)."""
    if isinstance(node, ast.AugAssign):
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return False
        key = ast_target_key(node.target)
        return key is not None and bool(tokens(key) & _LEDGER)
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        key = ast_target_key(node.targets[0])
        return key is not None and bool(tokens(key) & _LEDGER) and key in read_names(node.value)
    if isinstance(node, ast.Call):
        name = ast_call_name(node)
        toks = tokens(name)
        if toks & _CHARGE_WORDS or (toks & _CHARGE_VERBS and toks & _LEDGER):
            return True
        if name in _CHARGE_VERBS and isinstance(node.func, ast.Attribute):
            return bool(tokens(ast_dotted(node.func.value) or "") & _LEDGER)
    return False


def _ast_answers(func: ast.AST) -> set[str]:
    """``taint`` of ``_check`` on ``ast``, widened: every parameter named like an answer seeds it,
    and any value holding an answer-like call or name, or a tainted name, taints its targets."""
    args = func.args  # type: ignore[attr-defined]
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    tainted = {p for p in params if tokens(p) & _SOURCE_NAMES}
    flows: list[tuple[list[str], ast.AST]] = []
    for node in ast.walk(func):
        if isinstance(node, ast.Assign):
            flows.append(([k for t in node.targets for k in _ast_target_keys(t)], node.value))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and node.value is not None:
            flows.append((_ast_target_keys(node.target), node.value))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            flows.append((_ast_target_keys(node.target), node.iter))
        elif isinstance(node, ast.Call) and ast_call_name(node) in {"append", "extend", "insert"} and node.args \
                and isinstance(node.func, ast.Attribute) and (key := ast_dotted(node.func.value)) is not None:
            flows.append(([key], node.args[-1]))
    pending = [(keys, read_names(value), _ast_may_read(value, set())) for keys, value in flows if keys]
    return spread(tainted, pending)


def _ast_target_keys(target: ast.AST) -> list[str]:
    if isinstance(target, (ast.Tuple, ast.List)):
        return [k for el in target.elts for k in _ast_target_keys(el.value if isinstance(el, ast.Starred) else el)]
    key = ast_target_key(target)
    return [key] if key is not None else []


def _ast_may_read(expr: ast.AST, answers: set[str]) -> bool:
    """``_reads_answer`` / ``data_dependent`` might hold: an answer-like call or name, or a name
    (or a prefix of it) that may hold an answer, anywhere in ``expr``."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and tokens(ast_call_name(node)) & _SOURCE_CALLS:
            return True
        if isinstance(node, (ast.Name, ast.Attribute)):
            key = ast_dotted(node)
            if key is None:
                if isinstance(node, ast.Attribute) and tokens(node.attr) & _SOURCE_NAMES:
                    return True
                continue
            if tokens(key) & _SOURCE_NAMES:
                return True
            parts = key.split(".")
            if any(".".join(parts[:i]) in answers for i in range(1, len(parts) + 1)):
                return True
    return False


def _ast_chargers(facts: AstFacts, direct: list[ast.AST]) -> set[str]:
    """``_charging_functions`` on ``ast``: functions holding a direct charge at any depth, and
    their callers, closed transitively (a superset of its two rounds)."""
    def functions_around(node: ast.AST) -> Iterator[str]:
        cur = facts.parents.get(node)
        while cur is not None:
            if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield cur.name
            cur = facts.parents.get(cur)

    out = {name for node in direct for name in functions_around(node)}
    if not out:
        return out
    defined = {f.name for f in facts.functions}
    callers: dict[str, set[str]] = {}
    for call in facts.calls:
        name = ast_call_name(call)
        if name in defined:
            for caller in functions_around(call):
                callers.setdefault(caller, set()).add(name)
    size = -1
    while size != len(out):
        size = len(out)
        out |= {caller for caller, called in callers.items() if called & out}
    return out


def _ast_ledgers(facts: AstFacts) -> set[str]:
    """``_accountant_receivers`` on ``ast``."""
    out: set[str] = set()
    for node in facts.nodes(ast.Assign, ast.AnnAssign):
        value = node.value  # type: ignore[attr-defined]
        if value is None:
            continue
        source = ast_dotted(value.func if isinstance(value, ast.Call) else value)
        if source is None or not tokens(source) & _ACCOUNTANT_WORDS:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        out.update(key for key in (ast_dotted(t) for t in targets) if key is not None)
    return out


def _mutations(func: cst.FunctionDef) -> list[tuple[str, cst.BaseExpression, cst.CSTNode]]:
    """``answers.append(noisy.argmax())`` puts the answer into ``answers`` (as an assignment would)."""
    out = []
    for node in walk(func.body):
        if isinstance(node, cst.Call) and call_name(node) in {"append", "extend", "insert"} and node.args:
            key = dotted(node.func.value) if isinstance(node.func, cst.Attribute) else None
            if key is not None:
                out.append((key, node.args[-1].value, node))
    return out


def _accountant_receivers(index: ModuleIndex) -> set[str]:
    """``self.acc`` / ``acct`` assigned from a value named like an accountant (``accountant``,
    ``RDPAccountant()``, ``self.privacy_budget``): ``self.acc.step(…)`` charges it."""
    out: set[str] = set()
    for node in index.assigns:
        if not isinstance(node, (cst.Assign, cst.AnnAssign)) or node.value is None:
            continue
        value = node.value.func if isinstance(node.value, cst.Call) else node.value
        source = dotted(value)
        if source is None or not tokens(source) & _ACCOUNTANT_WORDS:
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        out.update(key for key in (dotted(t) for t in targets) if key is not None)
    return out


def _charging_functions(index: ModuleIndex) -> set[str]:
    """Names of functions of this module that charge the accountant, directly or via another."""
    direct: set[str] = set()
    calls: dict[str, set[str]] = {}
    for f in index.functions:
        called = calls.setdefault(f.name.value, set())
        for n in walk(f.body):
            if _direct_charge(n):
                direct.add(f.name.value)
            if isinstance(n, cst.Call):
                called.add(call_name(n))
    for _ in range(2):
        direct |= {name for name, called in calls.items() if called & direct}
    return direct


def _enclosing_if(node: cst.CSTNode, func: cst.FunctionDef, index: ModuleIndex) -> cst.If | None:
    for anc in index.ancestors(node):
        if anc is func:
            return None
        if isinstance(anc, cst.If):
            return anc
    return None


def _inside(node: cst.CSTNode, container: cst.CSTNode, index: ModuleIndex) -> bool:
    return node is container or any(anc is container for anc in index.ancestors(node))
