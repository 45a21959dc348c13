"""DP103: the PATE data-dependent moment term bounded by 2λ²l(l+1) without taking its log."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts

from dpcheck.rule import ScopedRule
from dpcheck.analysis.resolver import (
    ast_bounded_roots,
    ast_moment_term,
    bound_text,
    moment_term_text,
    EXP_NAMES,
    LOG_NAMES,
    code_gate,
    bounded_operands,
    constant_bound,
    is_math_call,
    moment_shape,
)


def _gate_text(text: str) -> bool:
    return bound_text(text) and moment_term_text(text)


def _quick(text: str) -> bool:
    return ("**" in text or "pow" in text) and "-" in text and "1" in text


class MissingLogInAccountant(ScopedRule):
    id = "DP103"
    name = "missing-log-in-accountant"
    category = "moments_accountant"
    severity = "error"
    summary = "The PATE data-dependent moment term is compared with 2λ²l(l+1) without its log."
    rationale = (
        "The PATE/PATE-GAN moments accountant adds, per answered query, "
        "α(l) += min(2λ²l(l+1), log((1−q)((1−q)/(1−e^{2λ}q))^l + q·e^{2λl})). The first argument is "
        "a bound on the log-moment, so the data-dependent term must be in log space too. Clamping "
        "the raw term (`torch.clamp(t_one + t_two, max=a)`, `min(a, t)`, `np.minimum`, `np.clip`) "
        "compares exp(α) with α: the accumulated α(l) and hence ε̂ no longer follow the stated "
        "bound, so the reported privacy budget is not the one actually spent (the borealis and "
        "smartnoise PATE-GANs did this). Fix: clamp `log(t_one + t_two)`."
    )
    TRIGGERS = ("**", "pow")

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A finding needs a moment term, (1 − q)·(…)**l + q·exp(…), written in code
        (:func:`moment_term_text`), bounded by a min/clamp/clip/where call or a conditional
        expression (:func:`bound_text`)."""
        return code_gate(source, _gate_text, _quick)

    VALID = (
        "import torch\n"
        "def moments(q, lam, l):\n"
        "    a = 2 * lam ** 2 * l * (l + 1)\n"
        "    t_one = (1 - q) * torch.pow((1 - q) / (1 - torch.exp(2 * lam) * q), l)\n"
        "    t_two = q * torch.exp(2 * lam * l)\n"
        "    t = torch.log(t_one + t_two)\n"
        "    return torch.clamp(t, max=a).sum()\n",
        "import numpy as np\n"
        "for l in range(1, L + 1):\n"
        "    bound = 2 * lamda**2 * l * (l + 1)\n"
        "    term = np.log((1 - q) * ((1 - q) / (1 - np.exp(2 * lamda) * q)) ** l + q * np.exp(2 * lamda * l))\n"
        "    alpha[l - 1] += np.minimum(bound, term)\n",
        "import math\n"
        "def step(q, lam, l):\n"
        "    t = (1 - q) * ((1 - q) / (1 - math.exp(2 * lam) * q)) ** l + q * math.exp(2 * lam * l)\n"
        "    t = math.log(t)\n"
        "    return min(2 * lam * lam * l * (l + 1), t)\n",
        "import numpy as np\nprobs = np.clip(np.exp(logits) / (1 - p) ** k, 0, 1)\ny = np.minimum(x, 1 - np.exp(-rate * t))\n",
        "import torch\nloss = torch.clamp(1 - torch.exp(-d), min=0)\nscaled = torch.minimum(w ** n, limit)\n",
        "import math\n"
        "def log_moment(q, gamma, order):\n"
        "    if q < 0.5:\n"
        "        first = (1 - q) * math.pow((1 - q) / (1 - math.exp(gamma) * q), order)\n"
        "        second = q * math.exp(gamma * order)\n"
        "        try:\n"
        "            result = math.log(first + second)\n"
        "        except ValueError:\n"
        "            result = gamma * order\n"
        "    else:\n"
        "        result = gamma * order\n"
        "    return min(0.5 * gamma ** 2 * order * (order + 1), result, gamma * order)\n",
        "import numpy as np\n"
        "def delta_at(rdp, eps, alpha):\n"
        "    return np.minimum(np.exp((alpha - 1) * (rdp(alpha) - eps)) / alpha * (1 - 1 / alpha) ** (alpha - 1), 1.0)\n",
    )
    INVALID = (
        "import torch\n"
        "def moments_acc(num_teachers, votes, lap_scale, l_list):\n"
        "    q = (2 + lap_scale * torch.abs(2 * votes - num_teachers)) / (4 * torch.exp(lap_scale * torch.abs(2 * votes - num_teachers)))\n"
        "    update = []\n"
        "    for l in l_list:\n"
        "        a = 2 * lap_scale ** 2 * l * (l + 1)\n"
        "        t_one = (1 - q) * torch.pow((1 - q) / (1 - q * torch.exp(2 * lap_scale)), l)\n"
        "        t_two = q * torch.exp(2 * lap_scale * l)\n"
        "        t = t_one + t_two\n"
        "        update.append(torch.clamp(t, max=a).sum())  # <-\n"
        "    return torch.stack(update)\n",
        "import numpy as np\n"
        "for l in range(1, L + 1):\n"
        "    term = (1 - q) * ((1 - q) / (1 - np.exp(2 * lamda) * q)) ** l + q * np.exp(2 * lamda * l)\n"
        "    alpha[l - 1] += np.minimum(2 * lamda**2 * l * (l + 1), term)  # <-\n",
        "import math\n"
        "def data_dependent(q, lam, l):\n"
        "    return (1 - q) * math.pow((1 - q) / (1 - math.exp(2 * lam) * q), l) + q * math.exp(2 * lam * l)\n"
        "def update(alpha, q, lam, orders):\n"
        "    for l in orders:\n"
        "        alpha[l] += min(2 * lam ** 2 * l * (l + 1), data_dependent(q, lam, l))  # <-\n",
        "import numpy as np\n"
        "class Accountant:\n"
        "    def term(self, q, l):\n"
        "        return (1 - q) * ((1 - q) / (1 - np.exp(2 * self.lam) * q)) ** l + q * np.exp(2 * self.lam * l)\n"
        "    def step(self, q):\n"
        "        for i, l in enumerate(self.orders):\n"
        "            bound = 2 * self.lam ** 2 * l * (l + 1)\n"
        "            self.alpha[i] += np.clip(self.term(q, l), 0, bound)  # <-\n",
        "import torch\n"
        "def acc(q, lam, ls):\n"
        "    t = (1 - q) * ((1 - q) / (1 - (2 * lam).exp() * q)) ** ls + q * (2 * lam * ls).exp()\n"
        "    return t.clamp(max=2 * lam ** 2 * ls * (ls + 1)).sum()  # <-\n",
        "import tensorflow as tf\n"
        "def acc(q, lam, l):\n"
        "    t1 = (1.0 - q) * tf.pow((1.0 - q) / (1.0 - tf.exp(2.0 * lam) * q), l)\n"
        "    t2 = q * tf.exp(2.0 * lam * l)\n"
        "    return tf.minimum(t1 + t2, 2.0 * lam ** 2 * l * (l + 1))  # <-\n",
        "import numpy as np\n"
        "def acc(q, lam, l):\n"
        "    t = (1 - q) * np.power((1 - q) / (1 - np.exp(2 * lam) * q), l) + q * np.exp(2 * lam * l)\n"
        "    a = 2 * lam ** 2 * l * (l + 1)\n"
        "    return a if t > a else t  # <-\n",
        "import torch\n"
        "def acc(q, lam, l):\n"
        "    t = (1 - q) * torch.pow((1 - q) / (1 - torch.exp(2 * lam) * q), l) + q * torch.exp(2 * lam * l)\n"
        "    a = 2 * lam ** 2 * l * (l + 1)\n"
        "    return torch.where(t < a, t, a).sum()  # <-\n",
        "import math\n"
        "def acc(q, lam, l):\n"
        "    t = (1. - q) * pow((1. - q) / (1. - math.e ** (2 * lam) * q), l) + q * pow(math.e, 2 * lam * l)\n"
        "    return min(2 * lam ** 2 * l * (l + 1), t)  # <-\n",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding bounds (min/clamp/where or ``a if a < b else b``) a moment term."""
        roots = ast_bounded_roots(facts)
        for node in facts.nodes(ast.IfExp):
            roots += [node.body, node.orelse]  # type: ignore[attr-defined]
        return ast_moment_term(facts, roots)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._inside_log = 0

    def visit_Call(self, node: cst.Call) -> None:
        aliases = self.resolver.aliases
        if is_math_call(node, aliases, LOG_NAMES):
            self._inside_log += 1
            return
        if self._inside_log:
            return
        operands = bounded_operands(node, self.resolver.aliases)
        if operands:
            self._check(node, operands)

    def leave_Call(self, original_node: cst.Call) -> None:
        if is_math_call(original_node, self.resolver.aliases, LOG_NAMES):
            self._inside_log -= 1

    def visit_IfExp(self, node: cst.IfExp) -> None:
        test = node.test
        if self._inside_log or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return
        if not isinstance(test.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)):
            return
        code = self.ctx.module.code_for_node
        sides = {code(test.left).strip(), code(test.comparisons[0].comparator).strip()}
        if {code(node.body).strip(), code(node.orelse).strip()} == sides:
            self._check(node, [node.body, node.orelse])

    def _is_sum(self, operand: cst.BaseExpression, stop) -> bool:  # type: ignore[no-untyped-def]
        return any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Add)
                   for n, _ in self.resolver.expand(operand, self.scope, stop=stop))

    def _check(self, node: cst.CSTNode, operands: list[cst.BaseExpression]) -> None:
        res = self.resolver
        aliases = res.aliases

        def is_log(n: cst.CSTNode) -> bool:
            return isinstance(n, cst.Call) and is_math_call(n, aliases, LOG_NAMES)

        for operand in operands:
            if isinstance(operand, cst.Call) and is_math_call(operand, aliases, EXP_NAMES):
                return  # min(exp(bound), t): compared in exp space, log taken afterwards
        for operand in operands:
            if isinstance(node, cst.Call) and constant_bound(node, operands, operand, aliases):
                continue  # min(p, 1.0): a cap at a number, not the 2λ²l(l+1) bound
            if not self._is_sum(operand, is_log):
                continue  # the term is (1−q)(…)^l + q·e^{2λl}; a product such as e^{…}·(1−1/α)^{α−1} is not it
            if moment_shape(res, operand, self.scope, stop=is_log).is_term:
                self.report(
                    node,
                    f"`{self.src(node)}` bounds the raw moment term (1−q)((1−q)/(1−e^{{2λ}}q))^l + q·e^{{2λl}} "
                    "without its log, so α(l) mixes exp(α) with the 2λ²l(l+1) bound and ε̂ is wrong; "
                    "take log(term) before the min/clamp",
                )
                return
