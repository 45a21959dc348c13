"""DP302: the data-dependent PATE bound used without its validity condition on q."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.syntax import call_name, dotted, number, value_refs, walk
from dpcheck.rule import Rule
from dpcheck.analysis.generator import (
    ModuleIndex,
    code,
    index_for,
    target_key,
    tokens,
)

# tensor conversions that leave the value unchanged: ``(4 * torch.exp(x)).to(device)``
_PASSTHROUGH = {"to", "double", "float", "cuda", "cpu", "detach", "type", "squeeze", "unsqueeze", "reshape", "view", "clone"}
_TWO_PLUS = re.compile(r"\b2(?:\.0*)?\s*\+")
# the 4 next to the exponential (or log 4 in log space), on one line
_FOUR_EXP = re.compile(
    r"\b4(?:\.0*)?\s*\*\s*[\w.]*(?:exp\b|e\s*\*\*)|exp\b[^\n]*[*/]\s*4(?:\.0*)?\b|log\(\s*4|1\.386"
)
_CHECK_WORDS = {"valid", "validity", "check", "condition", "applicable", "admissible", "smooth", "holds"}


def _is_exp(call: cst.Call) -> cst.BaseExpression | None:
    """The exponent of ``exp(y)`` / ``y.exp()`` in any library spelling, else None."""
    if call_name(call) != "exp":
        return None
    if call.args:
        return call.args[0].value
    if isinstance(call.func, cst.Attribute):
        return call.func.value
    return None


def is_pate_q(expr: cst.BaseExpression, index: ModuleIndex) -> bool:
    """``(2 + γΔ) / (4·exp(γΔ))`` in any arrangement: a ``2 + x``, a literal 4 and ``exp(x)``
    with the same names in x, all within one arithmetic expression."""
    if not isinstance(expr, cst.BinaryOperation):
        return False
    adds: list[cst.BaseExpression] = []
    exps: list[cst.BaseExpression] = []
    has_four = False
    stack: list[cst.BaseExpression] = [expr]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, cst.Power):
            # ``math.e ** x`` is exp(x)
            if (dotted(cur.left) or "").split(".")[-1] == "e":
                exps.append(cur.right)
        elif isinstance(cur, cst.BinaryOperation):
            if isinstance(cur.operator, cst.Add):
                for a, b in ((cur.left, cur.right), (cur.right, cur.left)):
                    if number(a) == 2.0:
                        adds.append(b)
            stack.extend((cur.left, cur.right))
        elif isinstance(cur, cst.UnaryOperation):
            stack.append(cur.expression)
        elif isinstance(cur, cst.Call):
            exponent = _is_exp(cur)
            if exponent is not None:
                exps.append(exponent)
            elif isinstance(cur.func, cst.Attribute) and cur.func.attr.value in _PASSTHROUGH:
                stack.append(cur.func.value)
        elif number(cur) == 4.0:
            has_four = True
    if not (has_four and adds and exps):
        return False
    add_keys = [_factors(a, index) for a in adds]
    exp_keys = [_factors(e, index) for e in exps]
    return any(a == e for a in add_keys for e in exp_keys)


def is_pate_log_q(expr: cst.BaseExpression, index: ModuleIndex) -> bool:
    """log q in log space: ``log(2 + γΔ) − log(4) − γΔ`` (the terms in any order)."""
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Subtract, cst.Add))):
        return False
    leaves: list[cst.BaseExpression] = []
    stack: list[cst.BaseExpression] = [expr]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, (cst.Add, cst.Subtract)):
            stack.extend((cur.left, cur.right))
        elif isinstance(cur, cst.UnaryOperation) and isinstance(cur.operator, cst.Minus):
            stack.append(cur.expression)
        else:
            leaves.append(cur)
    gaps: list[list[str]] = []
    has_log4 = False
    for leaf in leaves:
        value = number(leaf)
        if value is not None and abs(value - 1.3862943611198906) < 1e-3:
            has_log4 = True
        if isinstance(leaf, (cst.Name, cst.Attribute)) and _is_log4_name(dotted(leaf) or "", index):
            has_log4 = True
        if not (isinstance(leaf, cst.Call) and call_name(leaf) in {"log", "log1p"} and leaf.args):
            continue
        arg = leaf.args[0].value
        if number(arg) == 4.0:
            has_log4 = True
        elif isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Add):
            for a, b in ((arg.left, arg.right), (arg.right, arg.left)):
                if number(a) == 2.0:
                    gaps.append(_factors(b, index))
    if not (has_log4 and gaps):
        return False
    return any(_factors(leaf, index) in gaps for leaf in leaves)


def _is_log4_name(name: str, index: ModuleIndex) -> bool:
    """A constant bound to ``log(4)`` somewhere in the module (``_LOG4 = np.log(4.0)``)."""
    if not name:
        return False
    for stmt in index.assigns:
        if isinstance(stmt, cst.Assign) and any(target_key(t.target) == name for t in stmt.targets):
            value = stmt.value
            if isinstance(value, cst.Call) and call_name(value) == "log" and value.args and number(value.args[0].value) == 4.0:
                return True
            if isinstance(value, cst.Call) and call_name(value) == "float" and value.args:
                inner = value.args[0].value
                if isinstance(inner, cst.Call) and call_name(inner) == "log" and inner.args and number(inner.args[0].value) == 4.0:
                    return True
    return False


def _factors(expr: cst.BaseExpression, index: ModuleIndex) -> list[str]:
    """Sorted source of the factors of a product, sign dropped: ``-(a*b)`` == ``b*a``."""
    out: list[str] = []
    stack = [expr]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.UnaryOperation) and isinstance(cur.operator, cst.Minus):
            stack.append(cur.expression)
        elif isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, cst.Multiply):
            stack.extend((cur.left, cur.right))
        else:
            out.append(code(index.module, cur).replace("(", "").replace(")", ""))
    return sorted(out)


class UncheckedBoundCondition(Rule):
    id = "DP302"
    name = "unchecked-bound-condition"
    category = "general"
    severity = "warning"
    summary = "data-dependent PATE moment bound used without checking q < (e^{2γ}−1)/(e^{4γ}−1)"
    rationale = (
        "PATE's data-dependent moment bound (Papernot et al. 2017, Theorem 3) computes, from the "
        "vote gap Δ = |n0−n1|, q = (2 + γΔ)/(4·exp(γΔ)) and bounds the log-moment by "
        "log((1−q)((1−q)/(1−e^{2γ}q))^l + q·e^{2γl}). That bound only holds when "
        "q < (e^{2γ}−1)/(e^{4γ}−1); PATE-GAN's Theorem 5 and every implementation with an "
        "accountant drop the condition (audit paper, Appendix A.2), so for close votes the "
        "accountant adds a term the theorem does not cover; it stays sound only while the vote "
        "noise really is Laplace of scale 1/γ (then the term is at least 2γl), and any other "
        "departure (noise scale, sensitivity) goes unchecked. Fix: "
        "compare q with (exp(2γ)−1)/(exp(4γ)−1) and use the data-independent bound 2γ²l(l+1) "
        "(PATE also takes γl) whenever the condition fails."
    )
    TRIGGERS = ("exp(", "e **", "e**")

    VALID = (
        # condition checked inline
        """
import numpy as np
def moment(n0, n1, lam, l):
    d = lam * np.abs(n0 - n1)
    q = (2 + d) / (4 * np.exp(d))
    if q < (np.exp(2 * lam) - 1) / (np.exp(4 * lam) - 1):
        t = np.log((1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** l + q * np.exp(2 * lam * l))
        return min(2 * lam ** 2 * l * (l + 1), t)
    return 2 * lam ** 2 * l * (l + 1)
""",
        # vectorised fallback with torch.where
        """
import torch
def update(alpha, n0, n1, lam, orders):
    gap = lam * torch.abs(n0 - n1)
    q = (2 + gap) / (4 * torch.exp(gap))
    bound = (torch.exp(torch.tensor(2 * lam)) - 1) / (torch.exp(torch.tensor(4 * lam)) - 1)
    indep = 2 * lam ** 2 * orders * (orders + 1)
    dep = torch.log((1 - q) * ((1 - q) / (1 - torch.exp(torch.tensor(2 * lam)) * q)) ** orders + q * torch.exp(2 * lam * orders))
    return alpha + torch.where(q < bound, torch.minimum(dep, indep), indep).sum(0)
""",
        # q from a helper, checked by the caller through a named predicate
        """
import math
def smooth_q(votes, gamma):
    gap = abs(votes[0] - votes[1])
    return (2.0 + gamma * gap) / (4.0 * math.exp(gamma * gap))

def condition_holds(q, gamma):
    return q < (math.exp(2 * gamma) - 1) / (math.exp(4 * gamma) - 1)

def log_moment(votes, gamma, l):
    q = smooth_q(votes, gamma)
    if not condition_holds(q, gamma):
        return 2 * gamma ** 2 * l * (l + 1)
    return math.log((1 - q) * ((1 - q) / (1 - math.exp(2 * gamma) * q)) ** l + q * math.exp(2 * gamma * l))
""",
        # attribute q compared with a precomputed threshold in another method
        """
from numpy import exp, log
class Accountant:
    def __init__(self, lamda):
        self.lamda = lamda
        self.limit = (exp(2 * lamda) - 1) / (exp(4 * lamda) - 1)
    def q_of(self, n0, n1):
        self.q = (2 + self.lamda * abs(n0 - n1)) / (4 * exp(self.lamda * abs(n0 - n1)))
    def term(self, l):
        if self.q >= self.limit:
            return 2 * self.lamda ** 2 * l * (l + 1)
        return log((1 - self.q) * ((1 - self.q) / (1 - exp(2 * self.lamda) * self.q)) ** l + self.q * exp(2 * self.lamda * l))
""",
        # log q moved to a device, then tested in log space against -log(1 + e^{2γ})
        """
import numpy as np
import torch
def moments(votes, k, lap_scale, l_list, device="cpu"):
    log_q = (torch.log(2 + lap_scale * torch.abs(2 * votes - k)) - np.log(4.0)
             - lap_scale * torch.abs(2 * votes - k)).to(device)
    valid = log_q < -np.logaddexp(0.0, 2 * lap_scale)
    indep = 2 * lap_scale ** 2 * l_list * (l_list + 1)
    return torch.where(valid, torch.minimum(indep, dependent_term(log_q, lap_scale, l_list)), indep)
""",
        # unrelated exponential expressions
        """
import numpy as np
def softplus_ratio(x):
    return (2 + x) / (4 * np.exp(2 * x))
def logistic(x):
    return 1 / (1 + np.exp(-x))
""",
    )

    INVALID = (
        # the PATE-GAN accountant as published (numpy, inline)
        """
import numpy as np
def update(alpha, n0, n1, lamda, L):
    q = (2 + lamda * np.abs(n0 - n1)) / (4 * np.exp(lamda * np.abs(n0 - n1)))  # <-
    for l in range(L):
        t1 = 2 * (lamda ** 2) * l * (l + 1)
        t2 = (1 - q) * (((1 - q) / (1 - q * np.exp(2 * lamda))) ** l) + q * np.exp(2 * lamda * l)
        alpha[l] += min(t1, np.log(t2))
    return alpha
""",
        # torch, attribute lambda, intermediate gap
        """
import torch
class Moments:
    def step(self, votes):
        gap = torch.abs(votes[:, 0] - votes[:, 1])
        q = (2 + self.lap_scale * gap) / (4 * torch.exp(self.lap_scale * gap))  # <-
        for i, l in enumerate(self.l_list):
            a = 2 * self.lap_scale ** 2 * l * (l + 1)
            t_one = (1 - q) * torch.pow((1 - q) / (1 - q * torch.exp(2 * self.lap_scale)), l)
            t_two = q * torch.exp(2 * self.lap_scale * l)
            self.alpha[i] += torch.clamp(torch.log(t_one + t_two), max=a).sum()
""",
        # helper returns q; the caller uses it unchecked
        """
import math
def data_dependent_q(n0, n1, lam):
    return (2 + lam * abs(n0 - n1)) / (4 * math.exp(lam * abs(n0 - n1)))  # <-

def log_moment(n0, n1, lam, l):
    q = data_dependent_q(n0, n1, lam)
    return math.log((1 - q) * ((1 - q) / (1 - math.exp(2 * lam) * q)) ** l + q * math.exp(2 * lam * l))
""",
        # from-imports, different arrangement of the quotient
        """
from numpy import abs as npabs, exp, log
def accountant(alpha, counts, lam, L):
    diff = lam * npabs(counts[0] - counts[1])
    q = (2 + diff) * exp(-diff) / 4  # <-
    for l in range(1, L + 1):
        alpha[l - 1] += min(2 * lam * lam * l * (l + 1), log((1 - q) * ((1 - q) / (1 - exp(2 * lam) * q)) ** l + q * exp(2 * lam * l)))
""",
        # q compared only against a trivial constant (not the validity condition)
        """
import numpy as np
def moments(alpha, n0, n1, lam, L):
    delta = np.abs(n0 - n1)
    q = (2 + lam * delta) / (4 * np.exp(lam * delta))  # <-
    q = np.clip(q, 1e-12, None)
    assert np.all(q > 0)
    for l in range(L):
        alpha[l] += np.minimum(2 * lam ** 2 * l * (l + 1), np.log((1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** l + q * np.exp(2 * lam * l))).sum()
""",
        # log-space computation of q, then exponentiated (synthcity)
        """
import numpy as np
def update_alpha(self, n0, n1):
    q = np.log(2 + self.lamda * np.abs(n0 - n1)) - np.log(4.0) - self.lamda * np.abs(n0 - n1)  # <-
    q = np.exp(q)
    for j in range(self.alpha):
        self.alpha_dict[j] += np.log((1 - q) * ((1 - q) / (1 - q * np.exp(2 * self.lamda))) ** (j + 1) + q * np.exp(2 * self.lamda * (j + 1))).sum()
""",
        # device move around the denominator (smartnoise)
        """
import torch
def moments_acc(k, votes, lap_scale, l_list, device="cpu"):
    q = (2 + lap_scale * torch.abs(2 * votes - k)) / (4 * torch.exp(lap_scale * torch.abs(2 * votes - k))).to(device)  # <-
    t = (1 - q) * torch.pow((1 - q) / (1 - q * torch.exp(torch.tensor(2 * lap_scale))), l_list) + q * torch.exp(2 * lap_scale * l_list)
    return torch.clamp(torch.log(t), max=2 * lap_scale ** 2 * l_list * (l_list + 1)).sum(1)
""",
        # log space with a named log(4) constant, q returned by a helper
        """
import numpy as np
LOG4 = np.log(4.0)
def log_q_from_gap(gap, gamma):
    x = gamma * np.asarray(gap)
    return np.log(2.0 + x) - LOG4 - x  # <-
def term(gap, gamma, l):
    lq = log_q_from_gap(gap, gamma)
    return np.logaddexp(np.log1p(-np.exp(lq)) * (l + 1), lq + 2 * gamma * l)
""",
        # Euler's number spelled as a power
        """
import math
def q_of(votes, lam):
    gap = abs(votes[1] - votes[0])
    q = (2 + lam * gap) / (4 * math.e ** (lam * gap))  # <-
    return q
""",
        # tensorflow spelling
        """
import tensorflow as tf
def tf_moment(n0, n1, lamda, l):
    gap = lamda * tf.abs(n0 - n1)
    q = (2.0 + gap) / (4.0 * tf.exp(gap))  # <-
    return tf.minimum(2 * lamda ** 2 * l * (l + 1), tf.math.log((1 - q) * ((1 - q) / (1 - tf.exp(2 * lamda) * q)) ** l + q * tf.exp(2 * lamda * l)))
""",
    )

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """The trigger substrings, then a textual check the finding cannot exist without."""
        return super().applies_to(source) and cls.gate(source)

    @staticmethod
    def gate(src: str) -> bool:
        return bool(_TWO_PLUS.search(src) and _FOUR_EXP.search(src))

    def visit_Module(self, node: cst.Module) -> None:
        if not self.gate(self.ctx.source):
            return
        index = index_for(self.ctx)
        for binop in index.binops:
            if isinstance(index.parents.get(binop), cst.BinaryOperation):
                continue
            if not (is_pate_q(binop, index) or is_pate_log_q(binop, index)):
                continue
            if any(isinstance(a, (cst.Comparison, cst.Assert)) for a in index.ancestors(binop)):
                continue  # the value is being compared (a test against a reference), not used
            checked = self._q_names(binop, index)
            if checked and self._is_checked(checked, index):
                continue
            self.report(
                binop,
                "data-dependent PATE bound uses q = (2+λΔ)/(4·e^{λΔ}) without checking "
                "q < (e^{2λ}−1)/(e^{4λ}−1): outside that range the theorem behind the term does not "
                "apply, so ε̂ rests on an unproven bound; check the condition and fall back to the "
                "data-independent bound 2λ²l(l+1) when it fails",
            )

    # names through which the value of q is read
    def _q_names(self, binop: cst.BinaryOperation, index: ModuleIndex) -> set[str]:
        node: cst.CSTNode = binop
        parent = index.parents.get(node)
        # ``q = (…).to(device)``: a conversion keeps the value, so its target names q too
        while isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _PASSTHROUGH:
            call = index.parents.get(parent)
            if not (isinstance(call, cst.Call) and call.func is parent):
                break
            node, parent = call, index.parents.get(call)
        names: set[str] = set()
        if isinstance(parent, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            names.update(k for t in targets if (k := target_key(t)) is not None)
        elif isinstance(parent, cst.Return):
            func = index.enclosing_function(parent)
            if func is not None:
                fname = func.name.value
                for stmt in index.assigns:
                    value = stmt.value
                    if isinstance(value, cst.Call) and call_name(value) == fname:
                        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
                        names.update(k for t in targets if (k := target_key(t)) is not None)
        # plain renames: ``q_val = float(q)``, ``q = q.detach()``
        for _ in range(2):
            for stmt in index.assigns:
                if stmt.value is None or isinstance(stmt, cst.AugAssign):
                    continue
                heads = {n.split(".")[0] for n in names if "." in n}
                read = value_refs(stmt.value) - heads
                if read and read <= names:
                    targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
                    names.update(k for t in targets if (k := target_key(t)) is not None)
        return names

    def _is_checked(self, names: set[str], index: ModuleIndex) -> bool:
        # a module that defines its own validity predicate is assumed to apply it
        for func in index.functions:
            if tokens(func.name.value) & _CHECK_WORDS and any(isinstance(n, cst.Comparison) for n in walk(func.body)):
                return True
        for cmp in index.compares:
            read = value_refs(cmp)
            if not read & names:
                continue
            operands = [cmp.left, *(c.comparator for c in cmp.comparisons)]
            others = [o for o in operands if not (value_refs(o) & names)]
            if any(number(o) is None and not _trivial(o) for o in others):
                return True
        for call in index.calls:
            args = [a.value for a in call.args]
            hits = [i for i, a in enumerate(args) if value_refs(a) & names]
            if not hits:
                continue
            fname = call_name(call)
            if tokens(fname) & _CHECK_WORDS:
                return True
            for func in index.functions_named(fname):
                params = [p.name.value for p in func.params.params]
                if params and params[0] == "self" and isinstance(call.func, cst.Attribute):
                    params = params[1:]
                inner = {params[i] for i in hits if i < len(params)}
                if inner and any(
                    value_refs(n) & inner for n in walk(func.body) if isinstance(n, cst.Comparison)
                ):
                    return True
        return False


def _trivial(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation):
        return number(expr.expression) is not None
    return isinstance(expr, cst.Name) and expr.value in {"None", "True", "False"}
