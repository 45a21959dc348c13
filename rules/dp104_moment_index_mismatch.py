"""DP104: terms of one moment-accountant update that use different moment orders."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts

from dpcheck.analysis.syntax import number
from dpcheck.rule import ScopedRule
from dpcheck.analysis.resolver import (
    ast_bounded_roots,
    ast_moment_term,
    bound_text,
    log_text,
    moment_term_text,
    LOG_NAMES,
    Resolver,
    Scope,
    code_gate,
    bounded_operands,
    is_math_call,
    moment_shape,
    names_in,
    product_factors,
    strip_unary,
)


def _order_offset(expr: cst.BaseExpression, order: set[str]) -> int | None:
    """0 for ``l``, c for ``l + c`` / ``c + l``, −c for ``l − c``; None for anything else."""
    expr = strip_unary(expr)
    if isinstance(expr, cst.Name) and expr.value in order:
        return 0
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        sign = 1 if isinstance(expr.operator, cst.Add) else -1
        left, right = strip_unary(expr.left), number(expr.right)
        if isinstance(left, cst.Name) and left.value in order and right is not None and right == int(right):
            return sign * int(right)
        lnum, r = number(expr.left), strip_unary(expr.right)
        if sign > 0 and lnum is not None and lnum == int(lnum) and isinstance(r, cst.Name) and r.value in order:
            return int(lnum)
    return None


def _slip(expr: cst.BaseExpression, order: set[str]) -> int | None:
    """``2·λ·l + c``: an order offset c added outside the product it belongs in."""
    expr = strip_unary(expr)
    if not (isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract))):
        return None
    constant = number(expr.right)
    if constant is None or constant != int(constant) or constant == 0:
        return None
    factors = product_factors(expr.left)
    has_order = any(_order_offset(f, order) is not None for f, s in factors if s > 0)
    others = [f for f, s in factors if _order_offset(f, order) is None and number(f) is None]
    if has_order and others:
        return int(constant) if isinstance(expr.operator, cst.Add) else -int(constant)
    return None


def _order_offsets(expr: cst.BaseExpression, order: set[str]) -> list[int]:
    """Order offsets of the factors of a product such as ``2·λ·(l+1)`` ([1]) or ``k(k−1)`` ([0, −1])."""
    return [o for f, s in product_factors(expr) if s > 0 and (o := _order_offset(f, order)) is not None]


def _exponent_order(offsets: list[int]) -> int | None:
    """The order an exponential's argument is written at. Linear (PATE's e^{2λl}): its one order
    factor. Two factors one apart, k(k−1): the Gaussian term e^{k(k−1)/2σ²} of a sampled-Gaussian
    binomial expansion, which goes with q^k, so the larger factor is the order."""
    if len(offsets) == 2 and abs(offsets[0] - offsets[1]) == 1:
        return max(offsets)
    return min(offsets) if offsets else None


def _rdp_of_order(expr: cst.BaseExpression, order: set[str]) -> int | None:
    """``(l − 1) · eps_of_alpha(l, b)``: a factor that is a call taking the order (the RDP ε at that order);
    the offset of the order it is called at."""
    for f, s in product_factors(expr):
        if s > 0 and isinstance(f, cst.Call):
            offsets = [o for a in f.args if (o := _order_offset(a.value, order)) is not None]
            if len(offsets) == 1:
                return offsets[0]
    return None


def _gate_text(text: str) -> bool:
    return (log_text(text) or bound_text(text)) and moment_term_text(text)


def _quick(text: str) -> bool:
    return ("**" in text or "pow" in text) and "-" in text and "1" in text


class MomentIndexMismatch(ScopedRule):
    id = "DP104"
    name = "moment-index-mismatch"
    category = "moments_accountant"
    severity = "error"
    summary = "Terms of one moment-accountant update use different moment orders (l vs l+1, 2λl+1)."
    rationale = (
        "Each moment α(l) of the PATE accountant is min(2λ²l(l+1), log((1−q)((1−q)/(1−e^{2λ}q))^l "
        "+ q·e^{2λl})): the power, the exponential and the bound must all use the same order l. "
        "Code that loops over a 0-based index often shifts it in one term (`** (l + 1)`) but not "
        "in another, or slips the offset outside the product (`exp(2 * lamda * l + 1)` where "
        "`exp(2 * lamda * (l + 1))` was meant, as in synthcity's PATE-GAN). The term is then no "
        "bound on the moment at any order, and the ε̂ derived from it can be far too small. "
        "The same holds for the sampled-Gaussian binomial expansion Σ C(α,k)(1−q)^{α−k} q^k "
        "e^{k(k−1)/2σ²}: its quadratic exponent k(k−1) is order k, the larger factor. "
        "Fix: use one order variable, e.g. `order = l + 1`, in every term."
    )
    TRIGGERS = ("**", "pow")

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A finding needs a moment term, (1 − q)·(…)**l + q·exp(…), written in code
        (:func:`moment_term_text`), inside a log call or a min/clamp/clip/where bound
        (:func:`log_text`, :func:`bound_text`): only those calls are checked."""
        return code_gate(source, _gate_text, _quick)

    VALID = (
        "import numpy as np\n"
        "for l_idx in range(L):\n"
        "    l = l_idx + 1\n"
        "    t = (1 - q) * ((1 - q) / (1 - np.exp(2 * lamda) * q)) ** l + q * np.exp(2 * lamda * l)\n"
        "    alpha[l_idx] += np.clip(np.log(t), 0, 2 * lamda**2 * l * (l + 1))\n",
        "import numpy as np\n"
        "for i in range(L):\n"
        "    term = (1 - q) * np.power((1 - q) / (1 - np.exp(2 * lam) * q), i + 1) + q * np.exp(2 * lam * (i + 1))\n"
        "    alpha[i] += np.minimum(2 * lam**2 * (i + 1) * (i + 2), np.log(term))\n",
        "import torch\n"
        "def acc(q, lam, l):\n"
        "    a = 2 * lam ** 2 * l * (l + 1)\n"
        "    t_one = (1 - q) * torch.pow((1 - q) / (1 - torch.exp(2 * lam) * q), l)\n"
        "    t_two = q * torch.exp(2 * lam * l)\n"
        "    return torch.clamp(torch.log(t_one + t_two), max=a)\n",
        "import numpy as np\ny = np.exp(2 * rate * t + 1)\nz = np.log(1 + np.exp(a * n + 1))\n",
        "import math\n"
        "def log_moment(q, gamma, order):\n"
        "    first = (1 - q) * math.pow((1 - q) / (1 - math.exp(gamma) * q), order)\n"
        "    second = q * math.exp(gamma * order)\n"
        "    return min(0.5 * gamma ** 2 * order * (order + 1), math.log(first + second), gamma * order)\n",
        # sampled-Gaussian RDP by its binomial expansion: q^k goes with e^{k(k-1)/2σ²}
        "import math\n"
        "import scipy.special\n"
        "def epsilon_prime(alpha, p, sigma1):\n"
        "    tot = 0\n"
        "    for k in range(2, alpha + 1):\n"
        "        comb = scipy.special.comb(alpha, k)\n"
        "        tot += comb * ((1 - p) ** (alpha - k)) * (p ** k) * math.exp((k - 1) * k / (sigma1 ** 2))\n"
        "    logarand = ((1 - p) ** (alpha - 1)) * (1 + (alpha - 1) * p) + tot\n"
        "    return 1 / (alpha - 1) * math.log(logarand)\n",
        "import numpy as np\n"
        "from scipy.special import binom\n"
        "def sgm_rdp(q, sigma, order):\n"
        "    terms = [binom(order, j) * (1 - q) ** (order - j) * q ** j * np.exp(j * (j - 1) / (2 * sigma ** 2))\n"
        "             for j in range(order + 1)]\n"
        "    return np.log(np.sum(terms)) / (order - 1)\n",
        # Zhu & Wang's Poisson-subsampled RDP: e^{(l-1)·ε(l)} is the RDP of order l written as a moment
        "import math\n"
        "def subsampled_rdp(alpha, gamma, rdp):\n"
        "    total = (1 - gamma) ** (alpha - 1) * (alpha * gamma - gamma + 1)\n"
        "    for l in range(2, alpha + 1):\n"
        "        total += math.comb(alpha, l) * (1 - gamma) ** (alpha - l) * gamma ** l * math.exp((l - 1) * rdp(l))\n"
        "    return math.log(total) / (alpha - 1)\n",
    )
    INVALID = (
        # the twin: the RDP taken at the next order, e^{(l-1)·ε(l+1)} with γ^l
        "import math\n"
        "def subsampled_rdp(alpha, gamma, rdp):\n"
        "    total = (1 - gamma) ** (alpha - 1) * (alpha * gamma - gamma + 1)\n"
        "    for l in range(2, alpha + 1):\n"
        "        total += math.comb(alpha, l) * (1 - gamma) ** (alpha - l) * gamma ** l * math.exp((l - 1) * rdp(l + 1))  # <-\n"
        "    return math.log(total) / (alpha - 1)\n",
        "import numpy as np\n"
        "for l_idx in range(L):\n"
        "    alpha[l_idx] += np.clip(\n"
        "        np.log((1 - q) * np.power((1 - q) / (1 - np.exp(2 * lamda) * q), l_idx + 1)\n"
        "               + q * np.exp(2 * lamda * l_idx + 1)),  # <-\n"
        "        0, 2 * lamda**2 * (l_idx + 1) * (l_idx + 2))\n",
        "import numpy as np\n"
        "for l in range(L):\n"
        "    t = (1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** (l + 1) + q * np.exp(2 * lam * l)  # <-\n"
        "    alpha[l] += min(2 * lam**2 * (l + 1) * (l + 2), np.log(t))\n",
        "import math\n"
        "def moment(q, lam, l):\n"
        "    first = (1 - q) * ((1 - q) / (1 - math.exp(2 * lam) * q)) ** l\n"
        "    second = q * math.exp(2 * lam * (l + 1))  # <-\n"
        "    return math.log(first + second)\n",
        "import torch\n"
        "def acc(q, lam, i):\n"
        "    t_one = (1 - q) * torch.pow((1 - q) / (1 - torch.exp(2 * lam) * q), i + 1)\n"
        "    t_two = q * torch.exp(2 * lam * i + 1)  # <-\n"
        "    return torch.clamp(torch.log(t_one + t_two), max=2 * lam ** 2 * (i + 1) * (i + 2))\n",
        "import numpy as np\n"
        "for l in orders:\n"
        "    t = np.log((1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** l + q * np.exp(2 * lam * l))\n"
        "    alpha[l] += np.minimum(t, 2 * lam**2 * (l + 1) * (l + 2))  # <-\n",
        "import torch\n"
        "def acc(q, lam, ls):\n"
        "    t = (1 - q) * ((1 - q) / (1 - (2 * lam).exp() * q)) ** (ls + 1) + q * (2 * lam * ls + 1).exp()  # <-\n"
        "    return torch.log(t)\n",
        "import math\n"
        "class Moments:\n"
        "    def term(self, q, k):\n"
        "        first = (1 - q) * ((1 - q) / (1 - math.e ** (2 * self.lam) * q)) ** k\n"
        "        return first + q * math.e ** (2 * self.lam * (k - 1))  # <-\n"
        "    def add(self, q, k):\n"
        "        self.alpha[k] += min(2 * self.lam ** 2 * k * (k + 1), math.log(self.term(q, k)))\n",
        # the Gaussian term of the binomial expansion one order too high: e^{j(j+1)/2σ²} with q^j
        "import numpy as np\n"
        "from scipy.special import binom\n"
        "def sgm_rdp(q, sigma, order):\n"
        "    terms = [binom(order, j) * (1 - q) ** (order - j) * q ** j * np.exp(j * (j + 1) / (2 * sigma ** 2))  # <-\n"
        "             for j in range(order + 1)]\n"
        "    return np.log(np.sum(terms)) / (order - 1)\n",
        "import math\n"
        "def sgm_term(alpha, q, sigma, k):\n"
        "    return math.comb(alpha, k) * (1 - q) ** (alpha - k) * q ** (k + 1) * math.exp(k * (k - 1) / (2 * sigma ** 2))  # <-\n"
        "def sgm_log_moment(alpha, q, sigma):\n"
        "    return math.log(sum(sgm_term(alpha, q, sigma, k) for k in range(alpha + 1)))\n",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding checks a moment term under a ``log`` or a bounding call."""
        roots = ast_bounded_roots(facts)
        for call in facts.calls:
            if facts.call_lasts(call) & LOG_NAMES and (call.args or call.keywords):
                first = call.args[0] if call.args else call.keywords[0].value
                roots.append(first.value if isinstance(first, ast.Starred) else first)
        return ast_moment_term(facts, roots)

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._reported: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        res = self.resolver
        if is_math_call(node, res.aliases, LOG_NAMES) and node.args:
            self._check(res, [node.args[0].value], [])
            return
        operands = bounded_operands(node, res.aliases)
        if operands:
            extras = [a.value for a in node.args if all(a.value is not o for o in operands)]
            self._check(res, operands, extras)

    def _check(self, res: Resolver, operands: list[cst.BaseExpression], others: list[cst.BaseExpression]) -> None:
        scope = self.scope
        for operand in operands:
            shape = moment_shape(res, operand, scope)
            if not shape.is_term:
                continue
            for _, base, exponent, psc in shape.powers:
                order = names_in(res, exponent, psc)
                power_offset = _order_offset(exponent, order)
                if power_offset is None:
                    continue
                self._compare_exps(res, shape.exps, order, power_offset, exponent)
                bounds = [o for o in (*operands, *others) if o is not operand]
                self._compare_bounds(res, bounds, scope, order, power_offset, exponent)
                return

    def _compare_exps(self, res, exps, order, power_offset, exponent) -> None:  # type: ignore[no-untyped-def]
        power_text = self.src(exponent, 20)
        for node, argument, esc in exps:
            if id(node) in self._reported:
                continue
            argument, _ = res.resolve_simple(argument, esc)
            slip = _slip(argument, order)
            if slip is not None:
                self._reported.add(id(node))
                self.report(
                    node,
                    f"`{self.src(node)}` adds {slip} outside the product (e^{{{slip}}}·e^{{2λl}} instead of "
                    f"e^{{2λ(l+{slip})}}, off by a factor e^{{{slip}−2λ}}) while the power uses order "
                    f"`{power_text}`: the moment term mixes orders and ε̂ is wrong; write 2·λ·(l + {slip})",
                )
                continue
            offset = _exponent_order(_order_offsets(argument, order))
            rdp_order = _rdp_of_order(argument, order)
            if rdp_order is not None and offset == rdp_order - 1:
                offset = rdp_order  # e^{(l−1)·ε(l)}: order l's RDP written as a moment (Zhu & Wang's bound)
            if offset is not None and offset != power_offset:
                self._reported.add(id(node))
                self.report(
                    node,
                    f"`{self.src(node)}` uses moment order l{offset:+d} but the power term uses `{power_text}` "
                    f"(l{power_offset:+d}): the two terms of one moment use different orders and ε̂ is wrong; "
                    "use the same order in both",
                )

    def _compare_bounds(self, res, bounds, scope: Scope, order, power_offset, exponent) -> None:  # type: ignore[no-untyped-def]
        for bound in bounds:
            if id(bound) in self._reported:
                continue
            expr, _ = res.resolve_simple(bound, scope)
            offsets = [o for f, s in product_factors(expr) if s > 0 and (o := _order_offset(f, order)) is not None]
            if len(offsets) == 2 and min(offsets) != power_offset:
                self._reported.add(id(bound))
                self.report(
                    bound,
                    f"the bound `{self.src(bound)}` is 2λ²·l(l+1) at order l{min(offsets):+d} but the moment term "
                    f"uses order `{self.src(exponent, 20)}`: the min compares different moments; use one order",
                )
