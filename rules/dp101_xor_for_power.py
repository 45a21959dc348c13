"""DP101: ``^`` (bitwise XOR) written where exponentiation was meant."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import last_name as ast_last_name
from dpcheck.analysis.astfacts import number as ast_number

from dpcheck.analysis.syntax import call_name, dotted, number, walk, words
from dpcheck.codetext import code_only

from dpcheck.rule import ScopedRule
from dpcheck.analysis.resolver import (
    EXP_NAMES,
    LOG_NAMES,
    fstring_text,
    has_token,
    is_math_call,
    name_tokens,
    strip_unary,
)

#: identifier tokens that name a DP parameter
DP_TOKENS = frozenset(
    {"delta", "epsilon", "eps", "sigma", "lamda", "lambda", "lmbda", "lam", "rho", "privacy", "budget"}
)
#: tokens that name a noise quantity; these count only against a non-boolean operand
NOISE_TOKENS = frozenset({"noise", "std", "stddev", "variance", "laplace", "gaussian", "scale"})
_FLOAT_FUNCS = frozenset({"sqrt", *EXP_NAMES, *LOG_NAMES, "sin", "cos", "tanh", "mean", "std", "var"})


#: a ``^`` after a ``{`` (in an f-string expression ``{…}``)
_CARET_IN_BRACES = re.compile(r"\{[^\n]*\^|\{[^}]*\^")


def _is_power_of_ten(value: float | None) -> bool:
    if value is None or value < 10 or value != int(value):
        return False
    n = int(value)
    while n % 10 == 0:
        n //= 10
    return n == 1


class XorForPower(ScopedRule):
    id = "DP101"
    name = "xor-for-power"
    category = "delta_scale"
    severity = "error"
    summary = "`^` is bitwise XOR in Python, not a power; a DP parameter or float raised with `^` is miscomputed."
    rationale = (
        "In Python `a ^ b` is bitwise exclusive-or, not exponentiation. Code transcribed from maths "
        "(`10^δ`, `2^-5`, `σ^2`) silently computes something unrelated on integers "
        "(`10 ^ 5 == 15`, not 100000) and fails or misbehaves on floats. When the operand is a DP "
        "parameter such as δ, ε, σ or λ, the noise calibration no longer matches the privacy "
        "guarantee the code claims; PATE-GAN's 2018 release computed its noise std as "
        "`sqrt(2*log(1.25*(10^delta)))/epsilon`. Not reported: a dead store (a local assigned the XOR "
        "and never read in its function). Fix: write `**` (or `pow`, `np.power`)."
    )
    TRIGGERS = ("^",)

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """Findings are on ``^`` / ``^=`` operators, so a ``^`` must occur in code, f-strings
        included (docstring maths such as ``x^2``, regular expressions and comments do not count)."""
        if "^" not in source:
            return False
        if "^" in code_only(source):
            return True
        return _CARET_IN_BRACES.search(source) is not None and "^" in fstring_text(source)

    VALID = (
        "flags = flags ^ mask\n",
        "def checksum(data):\n    h = 0\n    for b in data:\n        h = (h << 5) ^ b\n    return h ^ 0xFFFF\n",
        "parity = bits[0] ^ bits[1] ^ int(flip)\nx ^= 1\n",
        "import numpy as np\ndelta = 10 ** -5\nsigma = np.sqrt(2 * np.log(1.25 / delta)) / epsilon\n",
        "toggled = a ^ b\nsame = (x > 0) ^ (y > 0)\nkey = hash(name) ^ hash(kind)\n",
        "import numpy as np\nflipped = responses ^ (np.random.rand(n) < p)\nmixed = seed ^ 2654435761\n",
        "pattern = r'^[a-z]+$'\n# 10^delta in a comment\n",
        # a random seed bounded or set with ``^`` in an evaluation script: no privacy parameter
        "import random\nimport torch\n"
        "def main(args):\n"
        "    if args.random_seed is None:\n"
        "        args.random_seed = random.randint(1, 10 ^ 5)\n"
        "    random.seed(args.random_seed)\n"
        "    torch.manual_seed(args.random_seed)\n",
        "import numpy as np\n"
        "def make_rng(seed=None):\n"
        "    if seed is None:\n"
        "        seed = int(np.random.randint(0, 10 ^ 6))\n"
        "    eval_seed = 10 ^ 4\n"
        "    return np.random.default_rng(seed), np.random.default_rng(eval_seed)\n",
        # a dead store: the previous cost is initialised with ``^`` and never read again
        "import numpy as np\n"
        "class DPGD:\n"
        "    def fit(self, X, Y):\n"
        "        cost_prev = 10^10\n"
        "        for t in range(self.T):\n"
        "            self.weights -= self.lr * self.grad(X, Y)\n"
        "            cost = self.loss(X, Y)\n"
        "            self.costs.append(cost)\n",
    )
    INVALID = (
        "import numpy as np\n"
        "def noise_std(epsilon, delta):\n"
        "    lamda = np.sqrt(2 * np.log(1.25 * (10 ^ (delta)))) / epsilon  # <-\n"
        "    return lamda\n",
        "tol = 2 ^ -5  # <-\n",
        "import numpy as np\nsigma = np.sqrt(2 * np.log(1.25 / 10 ^ -5)) / eps  # <-\n",
        "import math\nsigma = math.sqrt(2.0 * math.log(1.25 / 10 ^ self.delta)) / eps  # <-\n",
        "variance = sigma ^ 2  # <-\n",
        "def calibrate(cfg):\n    eps = cfg['epsilon']\n    scale = 1.0 / (eps ^ 2)  # <-\n    return scale\n",
        "rate = 0.5 ^ steps  # <-\n",
        "import numpy as np\nlamda = np.sqrt(2 * np.log(1.25 * (10 ^ int(delta)))) / epsilon  # <-\n",
        "lr = 1e-3 * (10 ^ k)  # <-\n",
        "err = (pred / total) ^ 2  # <-\n",
        "import numpy as np\nnoise = np.random.normal(0, noise_std ^ 2, size=n)  # <-\n",
        "print(f\"delta = {10 ^ -delta}\")  # <-\n",
        # twin of the dead store: the stopping test reads the XOR-ed start value
        "import numpy as np\n"
        "class DPGD:\n"
        "    def fit(self, X, Y):\n"
        "        cost_prev = 10^10  # <-\n"
        "        for t in range(self.T):\n"
        "            self.weights -= self.lr * self.grad(X, Y)\n"
        "            cost = self.loss(X, Y)\n"
        "            if abs(cost_prev - cost) < self.tol:\n"
        "                break\n"
        "            cost_prev = cost\n",
        # a seed call on the same line does not cover an XOR outside its arguments
        "import numpy as np\nrng = np.random.default_rng(seed); tol = 10 ^ -6  # <-\n",
        # a seed-bounded draw that feeds the noise scale is a DP calibration
        "import random\nsigma = random.randint(1, 10 ^ 3) / epsilon  # <-\n",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """Every finding is a ``^`` or ``^=`` that ``_reason`` explains: a numeric literal, ``e``, a
        division or a call (float-valued) in an operand, or an operand name with a DP/noise token."""
        pairs = [(n.left, n.right) for n in facts.binops(ast.BitXor)]
        pairs += [(n.target, n.value) for n in facts.augassigns(ast.BitXor)]
        for left, right in pairs:
            if ast_number(left) is not None or ast_number(right) is not None:
                return True  # float, negative or power-of-ten operand, or the literal of "noise ^ 2"
            if _ast_dp_named(left) or _ast_dp_named(right):
                return True  # DP/noise-named operand, or ``math.e``
            if (_ast_floatish(facts, left) and _ast_floatish(facts, right)):
                return True
        return False

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._statement: cst.SimpleStatementLine | None = None

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statement = node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._statement = None

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.BitXor):
            self._check(node, node.left, node.right)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.BitXorAssign):
            self._check(node, node.target, node.value)

    def _check(self, node: cst.CSTNode, left: cst.BaseExpression, right: cst.BaseExpression) -> None:
        reason = self._reason(left, right)
        if reason is None or self._dead_store(node):
            return
        dp = any(has_token(n, DP_TOKENS) or has_token(n, NOISE_TOKENS) for n in _operand_names(left, right))
        if not dp and self._statement is not None:
            # sigma = sqrt(2*log(1.25 / 10^-5)) / eps: the XOR feeds a DP calibration
            dp = any(has_token(n, DP_TOKENS) for n in _names_in_statement(self._statement))
            if not dp and _feeds_seed(self._statement, node):
                return
        text = self.src(node)
        quantity = ""
        lv, rv = number(left), number(right)
        integers = all(isinstance(strip_unary(o), cst.Integer) for o in (left, right))
        if integers and lv is not None and rv is not None and abs(rv) <= 300:
            quantity = f" ({text} evaluates to {int(lv) ^ int(rv)}, not {_power(lv, rv)})"
        elif dp:
            quantity = " (e.g. 10 ^ 5 == 15, not 100000)"
        what = "the DP noise calibration is wrong" if dp else "the value is not the intended power"
        self.report(
            node,
            f"`{text}` is bitwise XOR, not exponentiation ({reason}): {what}{quantity}; use `**`",
            category=None if dp else "general",
        )

    def _dead_store(self, node: cst.CSTNode) -> bool:
        """``cost_prev = 10 ^ 10`` in a function that never reads ``cost_prev``: the value has no effect."""
        statement = self._statement
        if statement is None or len(statement.body) != 1:
            return False
        small = statement.body[0]
        if not isinstance(small, cst.Assign) or small.value is not node or len(small.targets) != 1 \
                or not isinstance(small.targets[0].target, cst.Name):
            return False
        name = small.targets[0].target.value
        fn = self.ctx.analysis.enclosing_function(node)
        if fn is None:
            return False
        target = small.targets[0].target
        return not any(isinstance(sub, cst.Name) and sub.value == name and sub is not target for sub in walk(fn))

    def _reason(self, left: cst.BaseExpression, right: cst.BaseExpression) -> str | None:
        for operand in (left, right):
            value = number(operand)
            if isinstance(operand, cst.Float) or (value is not None and value != int(value)):
                return "float operand"
            if value is not None and (value < -1 or (value == -1 and number(left) is not None)):
                return "negative exponent"
            if _is_power_of_ten(value) and operand is left:
                return "power-of-ten base"
            if dotted(operand) in ("math.e", "np.e", "numpy.e", "torch.e"):
                return "base e"
        names = _operand_names(left, right)
        if any(has_token(n, DP_TOKENS) for n in names):
            return "DP parameter operand"
        literal_other = number(right) is not None and number(right) not in (0.0, 1.0)
        if literal_other and any(has_token(n, NOISE_TOKENS) for n in names):
            return "noise quantity operand"
        if (self._floatish(left) and (self._floatish(right) or literal_other)) or (
            self._floatish(right) and number(left) is not None
        ):
            return "float operand"
        return None

    def _floatish(self, node: cst.BaseExpression) -> bool:
        """A true division, float literal or float-valued math call anywhere inside."""
        stack: list[cst.CSTNode] = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Float) or (isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Divide)):
                return True
            if isinstance(n, cst.Call):
                if is_math_call(n, self.resolver.aliases, _FLOAT_FUNCS):
                    return True
                continue
            if isinstance(n, (cst.Subscript, cst.Lambda)):
                continue
            stack.extend(n.children)
        return False


def _operand_names(*operands: cst.BaseExpression) -> list[cst.CSTNode]:
    """The operands themselves and the names/attributes/subscripts directly combined in them."""
    out: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = list(operands)
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Name, cst.Attribute, cst.Subscript)):
            out.append(n)
        elif isinstance(n, cst.BinaryOperation) and not isinstance(n.operator, cst.BitXor):
            stack.extend((n.left, n.right))
        elif isinstance(n, cst.UnaryOperation):
            stack.append(n.expression)
        elif isinstance(n, cst.Call) and len(n.args) == 1:
            stack.append(n.args[0].value)  # int(delta), float(eps)
    return out


#: calls that seed a generator or draw a public random integer: their arguments are no DP parameter
_SEED_CALLS = frozenset({
    "seed", "manual_seed", "manual_seed_all", "set_seed", "set_random_seed", "RandomState", "default_rng",
    "SeedSequence", "PRNGKey", "randint", "randrange", "integers",
})


def _feeds_seed(statement: cst.SimpleStatementLine, node: cst.CSTNode) -> bool:
    """``random.randint(1, 10 ^ 5)`` as a seed, ``seed = 10 ^ 6``: the XOR only bounds or sets
    a random seed (evaluation scripts, reproducibility), so it is no power of a privacy parameter."""
    for small in statement.body:
        if not any(n is node for n in walk(small)):
            continue
        targets: list[cst.BaseExpression] = []
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
            targets = [small.target]
        if any("seed" in words(name.split(".")[-1]) for t in targets if (name := dotted(t)) is not None):
            return True
        for call in walk(small):
            if isinstance(call, cst.Call) and call_name(call) in _SEED_CALLS \
                    and any(n is node for arg in call.args for n in walk(arg.value)):
                return True
    return False


def _names_in_statement(statement: cst.SimpleStatementLine) -> list[cst.CSTNode]:
    out: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [statement]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Name, cst.Attribute, cst.Subscript)):
            out.append(n)
            if isinstance(n, cst.Name):
                continue
        stack.extend(n.children)
    return out


def _power(base: float, exponent: float) -> str:
    try:
        return f"{base ** exponent:g}"
    except (OverflowError, ZeroDivisionError):
        return f"{base:g}**{exponent:g}"


_ANY_REASON_TOKENS = DP_TOKENS | NOISE_TOKENS


def _ast_dp_named(operand: ast.AST) -> bool:
    for node in ast.walk(operand):
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            name = ast_last_name(node)
            if name is not None and (name in _ANY_REASON_TOKENS or any(t in _ANY_REASON_TOKENS for t in name_tokens(name))):
                return True
            if isinstance(node, ast.Attribute) and node.attr == "e":
                return True
    return False


def _ast_floatish(facts: AstFacts, operand: ast.AST) -> bool:
    """``_floatish`` widened: a float literal, a true division or a float-valued math call anywhere."""
    for node in ast.walk(operand):
        if isinstance(node, ast.Constant) and type(node.value) is float:
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return True
        if isinstance(node, ast.Call) and facts.call_lasts(node) & _FLOAT_FUNCS:
            return True
    return False
