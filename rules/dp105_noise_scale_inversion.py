"""DP105: Laplace noise of scale λ where the accountant uses λ as an inverse scale."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import number as ast_number
from dpcheck.analysis.astfacts import product_factors as ast_product_factors

from dpcheck.analysis.noisedraws import user_helper_without_scale
from dpcheck.analysis.syntax import number
from dpcheck.rule import ScopedRule
from dpcheck.analysis.resolver import (
    ast_identity,
    ast_identity_closure,
    ast_identity_links,
    ABS_NAMES,
    EXP_NAMES,
    EXP_TEXT,
    code_gate,
    word_search,
    arg,
    call_parts,
    identity_keys,
    is_math_call,
    product_factors,
    strip_unary,
    unwrap,
)
#: calls ``_laplace_scale`` may accept, by their last name
_LAPLACE_CALLS = frozenset({"laplace", "Laplace", "rvs"})
_LAPLACE_TEXT = re.compile("aplace", re.I)
_ABS_TEXT = re.compile(r"(?:abs|absolute|fabs)\b")


def _gate_text(text: str) -> bool:
    return _LAPLACE_TEXT.search(text) is not None and (
        ("exp" in text and word_search(EXP_TEXT, text)) or ("abs" in text and word_search(_ABS_TEXT, text)))


def _quick(text: str) -> bool:
    return ("exp" in text or "abs" in text) and "aplace" in text.lower()


class NoiseScaleInversion(ScopedRule):
    id = "DP105"
    name = "noise-scale-inversion"
    category = "laplace_noise"
    severity = "error"
    summary = "Laplace noise drawn with scale λ while the accountant treats λ as an inverse scale (1/λ)."
    rationale = (
        "In PATE and PATE-GAN, λ is an inverse noise scale: votes get Lap(1/λ) noise and the moments "
        "accountant's terms (q = (2 + λ|n0−n1|)/(4·exp(λ|n0−n1|)), e^{2λl}, 2λ²l(l+1)) are derived "
        "for that noise. Drawing `laplace(scale=λ)` instead adds noise λ² times the accounted scale "
        "— for the usual λ ≪ 1 far too little — while ε̂ is still computed as if Lap(1/λ) had "
        "been used, so the reported budget is not met (mlforhealthlabpub's 2021 PATE-GAN did "
        "this). Fix: draw `laplace(scale=1/λ)`, or use λ consistently as a scale everywhere."
    )
    TRIGGERS = ("aplace",)

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A finding is a Laplace draw (a call named ``laplace``/``Laplace``, or ``rvs`` of a
        distribution whose import names laplace — either way spelled in code) whose scale
        parameter also appears in an ``exp``/``expm1`` call or next to an ``abs``/``fabs``/
        ``absolute`` factor (the accountant's inverse-scale sites)."""
        return code_gate(source, _gate_text, _quick)

    VALID = (
        # the module's own ``laplace(value, epsilon)`` helper beside an exponential mechanism
        "import math, numpy as np\n"
        "def laplace(val, epsilon):\n    return val + np.random.laplace(0, 1e6 / epsilon)\n"
        "def exponential(score, epsilon):\n    return math.exp(epsilon * score / 2)\n"
        "def run(value, epsilon):\n    return laplace(value, epsilon), exponential(value, epsilon)\n",
        "import numpy as np\n"
        "def pate_label(n0, n1, lamda):\n"
        "    noisy = n1 + np.random.laplace(loc=0.0, scale=1 / lamda)\n"
        "    q = (2 + lamda * np.abs(n0 - n1)) / (4 * np.exp(lamda * np.abs(n0 - n1)))\n"
        "    return noisy, q\n",
        "import numpy as np\n"
        "def laplace_mech(value, sensitivity, epsilon):\n"
        "    return value + np.random.laplace(0, sensitivity / epsilon)\n",
        "import numpy as np\n"
        "b = 2.0\n"
        "noise = np.random.laplace(scale=b, size=10)\n"
        "density = np.exp(-np.abs(x) / b) / (2 * b)\n",
        "import torch\n"
        "class Aggregator:\n"
        "    def __init__(self, lap_scale):\n"
        "        self.lap_scale = lap_scale\n"
        "        self.dist = torch.distributions.Laplace(0.0, 1.0 / self.lap_scale)\n"
        "    def q(self, gap):\n"
        "        return (2 + self.lap_scale * gap) / (4 * torch.exp(self.lap_scale * gap))\n",
        "import numpy as np\nrng = np.random.default_rng(0)\nz = rng.laplace(0.0, scale, n)\nw = np.exp(-t * rate)\n",
    )
    INVALID = (
        "import numpy as np\n"
        "def student_labels(votes, lamda, L, alpha):\n"
        "    n0, n1 = votes\n"
        "    noisy = n1 + np.random.laplace(loc=0.0, scale=lamda, size=n1.shape)  # <-\n"
        "    q = (2 + lamda * np.abs(n0 - n1)) / (4 * np.exp(lamda * np.abs(n0 - n1)))\n"
        "    for l in range(L):\n"
        "        alpha[l] += np.exp(2 * lamda * (l + 1))\n"
        "    return noisy\n",
        "import numpy as np\n"
        "class PateGan:\n"
        "    def __init__(self, lamda=1.0):\n"
        "        self.lamda = lamda\n"
        "    def aggregate(self, n0, n1):\n"
        "        noise = np.random.laplace(0, self.lamda, size=len(n1))  # <-\n"
        "        return (n1 + noise) / (n0 + n1) > 0.5\n"
        "    def account(self, n0, n1):\n"
        "        gap = np.abs(n0 - n1)\n"
        "        return (2 + self.lamda * gap) / (4 * np.exp(self.lamda * gap))\n",
        "import torch\n"
        "def noisy_votes(votes, lap_scale):\n"
        "    dist = torch.distributions.laplace.Laplace(torch.tensor([0.0]), torch.tensor([lap_scale]))  # <-\n"
        "    return votes + dist.sample(votes.shape)\n"
        "def moments(votes, k, lap_scale, l):\n"
        "    q = (2 + lap_scale * torch.abs(2 * votes - k)) / (4 * torch.exp(lap_scale * torch.abs(2 * votes - k)))\n"
        "    return q * torch.exp(2 * lap_scale * l)\n",
        "import numpy as np\n"
        "def train(data, parameters):\n"
        "    lamda = parameters['lamda']\n"
        "    noise_scale = lamda\n"
        "    noisy = np.random.laplace(scale=noise_scale, size=64)  # <-\n"
        "    gap = np.abs(n0 - n1)\n"
        "    q = (2 + lamda * gap) / (4 * np.exp(lamda * gap))\n",
        "import numpy as np\n"
        "def label(n0, n1, noise):\n"
        "    return n1 + np.random.laplace(0.0, noise) > n0  # <-\n"
        "def update(alpha, n0, n1, noise_mult):\n"
        "    return alpha + np.exp(2 * noise_mult)\n"
        "def run(n0, n1, alpha, lam):\n"
        "    label(n0, n1, lam)\n"
        "    return update(alpha, n0, n1, lam)\n",
        "from scipy import stats\n"
        "import numpy as np\n"
        "def pate(votes, cfg):\n"
        "    noise = stats.laplace.rvs(loc=0, scale=cfg['lam'], size=votes.shape)  # <-\n"
        "    q = (2 + cfg['lam'] * np.abs(votes[:, 0] - votes[:, 1])) / 4\n"
        "    return votes + noise, q\n",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a Laplace draw (``laplace``/``Laplace``/``rvs``) matched with an inverse-scale
        site: an ``exp`` call or a product with an ``abs`` factor."""
        if not (facts.calls_any(_LAPLACE_CALLS) and facts.calls_any(EXP_NAMES | ABS_NAMES)):
            return False
        scales = []
        for call in facts.calls:
            lasts = facts.call_lasts(call)
            if lasts & _LAPLACE_CALLS:
                scales.append(_ast_arg(call, 1, "scale"))
                if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
                    scales.append(_ast_arg(call.func.value, 1, "scale"))
        # ``visit_Call`` goes on only with a bare parameter as the scale (after unwrapping) ...
        names = {n for s in scales if s is not None and (n := ast_identity(facts, s)) is not None}
        if not names:
            return False
        # ... that shares an identity key with a bare factor of an exp argument or of a product with abs
        links = ast_identity_links(facts)
        wanted = ast_identity_closure(links, names)
        for site in _ast_inverse_sites(facts):
            for factor in _ast_numerator_params(site):
                found = ast_identity(facts, factor)
                if found is not None and ast_identity_closure(links, {found}) & wanted:
                    return True
        return False

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._inverse_sites: list[tuple[cst.CSTNode, set[tuple[str, ...]], str]] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        scale = self._laplace_scale(node)
        if scale is None or user_helper_without_scale(node, self.ctx.analysis.callee(node), 1):
            return
        res = self.resolver
        expr, escope = res.resolve_simple(unwrap(scale, res.aliases), self.scope)
        expr = unwrap(expr, res.aliases)
        if not isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
            return  # 1/λ, sensitivity/ε, a literal: not a bare parameter used as the scale
        keys = identity_keys(res, unwrap(scale, res.aliases), self.scope) | identity_keys(res, expr, escope)
        if not keys:
            return
        for site, site_keys, shape in self._sites():
            if keys & site_keys:
                name = self.src(scale, 30)
                self.report(
                    node,
                    f"Laplace noise has scale `{name}` but the accountant uses it as an inverse scale "
                    f"(`{self.src(site, 40)}`, {shape}): the noise is {name}² times the accounted "
                    f"1/{name}, far too small for {name} < 1; use scale=1/{name}",
                )
                return

    def _laplace_scale(self, call: cst.Call) -> cst.BaseExpression | None:
        full, last = call_parts(call, self.resolver.aliases)
        lowered = (full or "").lower()
        if last in ("laplace", "Laplace") or (last == "rvs" and "laplace" in lowered):
            if last == "laplace" and full is not None and full.endswith("stats.laplace"):
                return arg(call, 1, "scale")  # frozen scipy distribution laplace(loc, scale)
            return arg(call, 1, "scale")
        if last == "rvs" and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Call):
            inner = call.func.value
            if call_parts(inner, self.resolver.aliases)[1] == "laplace":
                return arg(inner, 1, "scale")
        return None

    def _sites(self) -> list[tuple[cst.CSTNode, set[tuple[str, ...]], str]]:
        """Every place where a quantity is used as an inverse noise scale, with its identity keys."""
        if self._inverse_sites is not None:
            return self._inverse_sites
        res = self.resolver
        sites: list[tuple[cst.CSTNode, set[tuple[str, ...]], str]] = []
        for call, scope in res.index.all_calls:
            if call.args and is_math_call(call, res.aliases, EXP_NAMES):
                for factor in _numerator_params(call.args[0].value):
                    sites.append((call, identity_keys(res, factor, scope), "exp(λ·…)"))
        for product, scope in res.index.products:
            factors = product_factors(product)
            if any(s > 0 and isinstance(f, cst.Call) and is_math_call(f, res.aliases, ABS_NAMES) for f, s in factors):
                for factor in _numerator_params(product):
                    sites.append((product, identity_keys(res, factor, scope), "λ·|n0−n1|"))
        self._inverse_sites = sites
        return sites


def _numerator_params(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """Bare names/attributes/subscripts multiplied (not divided) into a product."""
    expr = strip_unary(expr)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return _numerator_params(expr.left) + _numerator_params(expr.right)
    factors = product_factors(expr)
    if len(factors) < 2 and not isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript)):
        return []
    return [
        f for f, s in factors if s > 0 and number(f) is None and isinstance(f, (cst.Name, cst.Attribute, cst.Subscript))
    ]


def _ast_arg(call: ast.Call, index: int, keyword: str) -> ast.AST | None:
    """``arg`` on ``ast``: the keyword, else the ``index``-th positional argument."""
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    positional = [a for a in call.args if not isinstance(a, ast.Starred)]
    return positional[index] if index < len(positional) else None


def _ast_inverse_sites(facts: AstFacts) -> list[ast.AST]:
    """Exp arguments and products with an ``abs`` factor (``_sites``)."""
    out: list[ast.AST] = []
    for call in facts.calls:
        if (call.args or call.keywords) and facts.call_lasts(call) & EXP_NAMES:
            out.append(call.args[0] if call.args else call.keywords[0].value)
    for product in facts.binops(ast.Mult):
        if any(sign > 0 and isinstance(f, ast.Call) and facts.call_lasts(f) & ABS_NAMES
               for f, sign in ast_product_factors(product)):
            out.append(product)
    return out


def _ast_numerator_params(expr: ast.AST) -> list[ast.AST]:
    """``_numerator_params`` on ``ast``."""
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return _ast_numerator_params(expr.left) + _ast_numerator_params(expr.right)
    factors = ast_product_factors(expr)
    if len(factors) < 2 and not isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
        return []
    return [f for f, s in factors if s > 0 and ast_number(f) is None and isinstance(f, (ast.Name, ast.Attribute, ast.Subscript))]
