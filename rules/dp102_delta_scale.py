"""DP102: Gaussian-mechanism σ with δ multiplied into the log instead of divided."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import product_factors as ast_product_factors
from dpcheck.analysis.astfacts import number as ast_number

from dpcheck.analysis.syntax import number
from dpcheck.codetext import prose_free
from dpcheck.rule import ScopedRule
from dpcheck.analysis.resolver import (
    token_text,
    POW_NAMES,
    code_gate,
    word_search,
    Scope,
    call_parts,
    has_token,
    is_math_call,
    product_factors,
    strip_unary,
)

_LOGS = frozenset({"log", "log2", "log10"})
_SQRT = frozenset({"sqrt"})
_DELTA = frozenset({"delta", "δ"})
_GAUSS_CONST = 1.25
_DELTA_TEXT = token_text(_DELTA)
_TEN = r"(?:10(?:\.0*)?|1(?:\.0*)?[eE]\+?0*1)(?![\w.])"
#: δ given as an exponent of 10: ``10 ** d``, ``(10)^d``, ``pow(10, d)``, ``np.power(10.0, d)``
_TEN_BASE_TEXT = re.compile(rf"{_TEN}[\s)\\]*(?:\*\*|\^)")
_TEN_POW_CALL_TEXT = re.compile(rf"pow\w*\(\s*(?:\w+\s*=\s*)?\(*{_TEN}")


def _ten_power(text: str) -> bool:
    """``10 ** d``, ``(10)^d``, ``1e1 ** d``, ``pow(10, d)``, ``np.power(10.0, d)``."""
    if "pow" in text and _TEN_POW_CALL_TEXT.search(text) is not None:
        return True
    return ("**" in text or "^" in text) and any(
        m.start() == 0 or not (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_.")
        for m in _TEN_BASE_TEXT.finditer(text))
_LOG_TEXT = re.compile(r"log(?:2|10)?\b")
_SQRT_TEXT = re.compile(r"sqrt\b")


def _quick(text: str) -> bool:
    return "log" in text and ("sqrt" in text or "25" in text or "2.5" in text)
#: 1.25 as a literal (``1.25``, ``1.250``, ``125e-2``, ``12.5e-1``, ``.125e1``)
_GAUSS_CONST_TEXTS = ("1.25", "125e", "125E", "12.5e", "12.5E")


def _delta_named(source: str) -> bool:
    return _DELTA_TEXT.search(prose_free(source))


_RECIPROCAL = frozenset({"inv", "inverse", "reciprocal", "recip"})


class DeltaScale(ScopedRule):
    id = "DP102"
    name = "delta-scale"
    category = "delta_scale"
    severity = "error"
    summary = "Gaussian-mechanism σ computed with log(1.25·δ) or log(δ/1.25) instead of log(1.25/δ)."
    rationale = (
        "The Gaussian mechanism is (ε, δ)-DP for σ = Δ·sqrt(2·ln(1.25/δ))/ε. Multiplying δ into the "
        "logarithm (`log(1.25 * delta)`, `log(1.25 * 10**delta)`) or inverting the fraction "
        "(`log(delta / 1.25)`) makes the log negative for any useful δ: σ becomes NaN, or far "
        "smaller than required once the argument is clipped or δ is passed as an exponent, so "
        "the released noise is too small for the claimed guarantee. The reprosyn port of "
        "PATE-GAN computed `sqrt(2 * log(1.25 * 10**delta)) / epsilon`. "
        "Fix: `sqrt(2 * log(1.25 / delta)) / epsilon`."
    )
    TRIGGERS = ("log",)

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """Every finding is on a ``log``/``log2``/``log10`` call (directly or inside ``sqrt``;
        the name ``log`` is spelled at the call or in its import) whose argument has the constant
        1.25 — or, inside ``sqrt``, any constant above 1 — and a δ factor. Without a literal 1.25
        the finding needs ``sqrt`` and a δ factor that is a name or key carrying ``delta``/``δ``
        (names and string keys, hence ``prose_free``) or δ given as an exponent of 10."""
        def test(text: str) -> bool:
            if not word_search(_LOG_TEXT, text):
                return False
            if any(t in text for t in _GAUSS_CONST_TEXTS):
                return True
            return (word_search(_SQRT_TEXT, text)
                    and (_ten_power(text) or _delta_named(source)))

        return code_gate(source, test, _quick)

    VALID = (
        "import numpy as np\nsigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon\n",
        "import math\ndef sigma(eps, delta, sens=1.0):\n    return sens * math.sqrt(2.0 * math.log(1.25 / delta)) / eps\n",
        "from numpy import log, sqrt\nstd = sqrt(-2 * log(self.delta / 1.25)) / self.epsilon\n",
        "import torch\nratio = 1.25 * (1 / target_delta)\nsigma = torch.sqrt(2 * torch.log(torch.tensor(ratio))) / eps\n",
        "import numpy as np\ngrowth = np.log(1.25 * volume)\n",
        "import math\nc = math.sqrt(2 * math.log(1.25 * delta ** -1)) / epsilon\n",
    )
    INVALID = (
        "import numpy as np\n"
        "def gaussian_std(epsilon, delta):\n"
        "    return np.sqrt(2 * np.log(1.25 * 10**delta)) / epsilon  # <-\n",
        "import math\nsigma = math.sqrt(2 * math.log(1.25 * self.delta)) / self.eps  # <-\n",
        "from numpy import log as ln, sqrt\n"
        "def calibrate(eps, d):\n"
        "    arg = 1.25 * d\n"
        "    return sqrt(2.0 * ln(arg)) / eps  # <-\n",
        "import torch\nnoise_std = torch.sqrt(2 * torch.log(delta / 1.25)) / epsilon  # <-\n",
        "import numpy as np\nlamda = np.sqrt(2*np.log(1.25*(10^(delta))))/epsilon  # <-\n",
        "import math\n"
        "class Mech:\n"
        "    def __init__(self, eps, delta):\n"
        "        self.delta = delta\n"
        "        self.eps = eps\n"
        "    def sigma(self):\n"
        "        log_term = math.log(self.delta * 1.25)  # <-\n"
        "        return math.sqrt(2 * log_term) / self.eps\n",
        "import numpy as np\nsigma = np.sqrt(2 * np.log(2 * params['delta'])) / params['epsilon']  # <-\n",
        "import numpy as np\ndef std(d, e):\n    return np.sqrt(2 * np.log(2 * 10 ** d)) / e  # <-\n",
        "from math import log, sqrt\ns = sqrt(2 * log(125e-2 * d)) / e  # <-\n",
        "import numpy as np\nprint(f\"sigma={np.sqrt(2 * np.log(1.25 * delta)) / eps}\")  # <-\n",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a ``log`` call whose argument has the literal factor 1.25 (any literal
        above 1 when the log sits under a ``sqrt``)."""
        if not facts.calls_any(_LOGS):
            return False
        sqrt = facts.calls_any(_SQRT)
        for call in facts.calls:
            if not (call.args or call.keywords) or not facts.call_lasts(call) & _LOGS:
                continue
            argument = call.args[0] if call.args else call.keywords[0].value
            if isinstance(argument, ast.Starred):
                argument = argument.value
            # ``_check_sqrt`` reaches a log that is a factor under a sqrt or a name's whole value
            gaussian = sqrt and _under_sqrt_or_assigned(facts, call)
            for value in facts.resolutions(argument):
                factors = ast_product_factors(value)
                # both verdicts need δ (or, under sqrt, any factor) in the numerator ...
                if not any(sign > 0 and ast_number(f) is None for f, sign in factors):
                    continue
                # ... and the 1.25 (any literal above 1 under sqrt) as a factor
                constants = [v for f, _ in factors if (v := ast_number(f)) is not None]
                if any(v == _GAUSS_CONST or (gaussian and v > 1) for v in constants):
                    return True
        return False

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._done: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        aliases = self.resolver.aliases
        if is_math_call(node, aliases, _SQRT) and node.args:
            self._check_sqrt(node)
        elif is_math_call(node, aliases, _LOGS) and node.args and id(node) not in self._done:
            verdict = self._classify(node, self.scope, gaussian=False)
            if verdict == "multiplied":
                self._report(node, verdict)

    def _check_sqrt(self, sqrt: cst.Call) -> None:
        """``sqrt(c · log(…))`` is the Gaussian σ shape: check each log factor with its sign."""
        scope = self.scope
        negative = _negations(sqrt.args[0].value)
        for raw, sign in product_factors(sqrt.args[0].value):
            if sign < 0 or number(raw) is not None:
                continue
            factor, fscope = self.resolver.resolve_simple(strip_unary(raw), scope)
            if not (isinstance(factor, cst.Call) and is_math_call(factor, self.resolver.aliases, _LOGS)):
                continue
            self._done.add(id(factor))
            verdict = self._classify(factor, fscope, gaussian=True)
            if verdict == "multiplied" or (verdict == "flipped" and negative % 2 == 0):
                self._report(factor, verdict)

    def _classify(self, log: cst.Call, scope: Scope, *, gaussian: bool) -> str | None:
        argument, ascope = self.resolver.resolve_simple(log.args[0].value, scope)
        constant_sign = 0
        delta_sign = 0
        unknown_sign = 0
        exact = False
        for raw, sign in product_factors(argument):
            value = number(raw)
            if value is not None:
                if value == _GAUSS_CONST or (gaussian and value > 1):
                    constant_sign = sign
                    exact = exact or value == _GAUSS_CONST
                continue
            if self._is_delta(raw, ascope):
                delta_sign = sign
            elif not has_token(raw, _RECIPROCAL):
                unknown_sign = sign
        if gaussian and exact and delta_sign == 0:
            # sqrt(2·log(1.25·x)): the 1.25 fixes the Gaussian-mechanism formula, x plays δ
            delta_sign = unknown_sign
        if constant_sign == 0 or delta_sign == 0:
            return None
        if constant_sign > 0 and delta_sign > 0:
            return "multiplied"
        if constant_sign < 0 and delta_sign > 0:
            return "flipped"
        return None

    def _is_delta(self, node: cst.BaseExpression, scope: Scope) -> bool:
        node = strip_unary(node)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Power, cst.BitXor)):
            if number(node.left) == 10 and number(node.right) is None:
                return True  # 10**delta: δ given as its exponent
            return number(node.right) is not None and self._is_delta(node.left, scope) and number(node.right) > 0
        if isinstance(node, cst.Call):
            _, last = call_parts(node, self.resolver.aliases)
            if last in POW_NAMES and node.args and number(node.args[0].value) == 10:
                return True
            return False
        if has_token(node, _DELTA):
            return True
        resolved, _ = self.resolver.resolve_simple(node, scope)
        return resolved is not node and has_token(resolved, _DELTA)

    def _report(self, node: cst.Call, verdict: str) -> None:
        text = self.src(node)
        if verdict == "multiplied":
            msg = (
                f"`{text}` multiplies δ into the Gaussian-mechanism log instead of dividing: the log is "
                "negative for δ < 0.8, so σ is NaN or far too small (δ=1e-5 needs sqrt(2·ln(1.25e5)) ≈ 4.84/ε); "
                "use log(1.25 / delta)"
            )
        else:
            msg = (
                f"`{text}` inverts the Gaussian-mechanism fraction (δ/1.25 instead of 1.25/δ): the log is "
                "negative, so σ = sqrt(2·log(…))/ε is NaN; use log(1.25 / delta)"
            )
        self.report(node, msg)


def _negations(node: cst.CSTNode) -> int:
    """Minus signs multiplied into a product (``-2 * x``, ``2 * -x``, ``-(2 * x)``)."""
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Minus) + _negations(node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
        return _negations(node.left) + _negations(node.right)
    value = number(node)
    return int(value is not None and value < 0)


def _under_sqrt_or_assigned(facts: AstFacts, call: ast.Call) -> bool:
    parent = facts.parents.get(call)
    if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and parent.value is call:
        return True
    while parent is not None:
        if isinstance(parent, ast.Call) and facts.call_lasts(parent) & _SQRT:
            return True
        parent = facts.parents.get(parent)
    return False
