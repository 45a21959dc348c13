"""DP106: Gaussian noise where the PATE(-GAN) Laplace mechanism is claimed, or noise on 0/1 labels."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import last_name as ast_last_name
from dpcheck.analysis.astfacts import number as ast_number

from dpcheck.analysis.syntax import call_name, last_name, number, walk
from dpcheck.codetext import code_only, prose_free
from dpcheck.rule import ScopedRule
from dpcheck.analysis.resolver import (
    token_text,
    Scope,
    code_gate,
    word_search,
    arg,
    call_parts,
    has_token,
    name_tokens,
    product_factors,
    strip_unary,
)

_GAUSS_SCALED = {"normal": (1, ("scale", "std", "stddev")), "random_normal": (2, ("stddev",))}
_GAUSS_UNIT = frozenset({"randn", "randn_like", "standard_normal", "normal_"})
#: draws ``_gaussian_scale``/``_laplace_scale`` may accept, by their last name
_NOISE_CALLS = frozenset({"laplace", "normal", "random_normal", "randn", "randn_like", "standard_normal", "normal_"})
_GAUSS_ROOTS = frozenset({"numpy", "torch", "tensorflow", "jax", "random", "cupy"})
#: a noise std named or computed from these is a DP calibration
_DP_TOKENS = frozenset({"epsilon", "eps", "delta", "lamda", "lambda", "lmbda", "lam", "lap", "laplace", "pate", "privacy"})
_LABEL_TOKENS = frozenset({"label", "labels", "target", "targets", "real", "fake"})
#: short names that count as labels only when the noisy sum is thresholded (``(y + noise) > 0.5``)
_WEAK_LABEL_TOKENS = frozenset({"y", "r", "t"})
#: a statistic's name: ``real_median`` is the exact median, not a real/fake label
_STATISTIC_TOKENS = frozenset({"median", "mean", "avg", "average", "sum", "total", "value", "val", "answer",
                               "result", "std", "var", "variance", "norm", "quantile", "percentile", "max",
                               "min", "stat", "statistic", "estimate"})
_VOTE_TOKENS = frozenset({"vote", "votes", "count", "counts", "histogram", "hist", "n0", "n1", "teacher", "teachers", "agg", "aggregate"})
#: Gaussian-noise PATE variants that come with their own (Rényi) accounting
_LAPLACE_Q = re.compile(r"\(\s*2\.?0?\s*\+[^\n]*abs[^\n]*/\s*\(?\s*4\.?0?\s*\*\s*[\w.]*exp\(")
_DP_TEXT = token_text(_DP_TOKENS)
_PATE_TEXT = re.compile(r"(?i:pate|teacher)|\bn[01]\b|\blamda|\blmbda")
_GNMAX_MARKERS = ("rdp", "gnmax", "renyi", "rényi", "gaussian_mechanism_accountant")
#: a call of a Gaussian/Laplace draw, or the import that renames one (``normal as gauss``)
#: the method says its noise is Laplace (a docstring, a comment or a Laplace draw elsewhere)
_LAPLACE_CLAIM = re.compile(r"[Ll]aplace|LAPLACE|\bLap\(")
_DRAW_TEXT = re.compile(r"(?:normal_?|random_normal|standard_normal|randn(?:_like)?|laplace)(?:[\s\\]*\(|\s+as\b)")


def _draw_added(text: str) -> bool:
    return "+" in text and word_search(_DRAW_TEXT, text)


def _quick(text: str) -> bool:
    return "+" in text and ("normal" in text or "randn" in text or "laplace" in text)


class GaussianForLaplace(ScopedRule):
    id = "DP106"
    name = "gaussian-for-laplace"
    category = "laplace_noise"
    severity = "error"
    summary = "Gaussian noise on PATE vote counts accounted as the Laplace mechanism, or DP noise added to 0/1 labels."
    rationale = (
        "PATE-GAN's PATE_λ answers each query by adding Laplace noise of scale 1/λ to the teachers' "
        "vote counts n0, n1 and taking the noisy argmax; its moments accountant (q = (2 + λ|n0−n1|)"
        "/(4·exp(λ|n0−n1|))) is derived for exactly that noise. Adding Gaussian noise instead breaks "
        "the accounting, and adding it to the 0/1 real/fake labels rather than to vote counts is "
        "not the PATE mechanism at all: the released label depends on one discriminator's data "
        "with no bound on its influence (the 2018 PATE-GAN release and its reprosyn port did this). "
        "Fix: draw Laplace(1/λ) noise on the vote counts; a Gaussian (GNMax) aggregator must be "
        "accounted with Gaussian/Rényi DP."
    )
    TRIGGERS = ("normal", "randn", "laplace")

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A finding adds (``+``) a Gaussian or Laplace draw made in code — a call whose last
        name is normal/normal_/random_normal/randn/randn_like/standard_normal/laplace, spelled
        at the call or in its import — and its scale is named after a DP parameter (a name or
        a subscript key, hence ``prose_free``) or the module carries the PATE Laplace
        accountant's q (searched in the raw source, as the rule does)."""
        if not (_quick(source) and _draw_added(source)):
            return False
        accounted = _LAPLACE_Q.search(source) is not None or _LAPLACE_CLAIM.search(source) is not None
        if not (accounted or _DP_TEXT.search(source)):
            return False  # cheap rejection on the raw source before stripping it
        if not code_gate(source, _draw_added, _quick):
            return False
        if accounted or _DP_TEXT.search(code_only(source)):
            return True
        return _DP_TEXT.search(prose_free(source))  # a string key: params["epsilon"]

    VALID = (
        # ``real`` as the exact value of a statistic: Laplace noise on the true median of gradient norms
        """
import numpy as np
def dp_median(norms, eps_med, L):
    real_median = float(np.median(norms))
    scale = (L / len(norms)) / eps_med
    noise = np.random.laplace(loc=0.0, scale=scale)
    return real_median + noise
""",
        "import numpy as np\n"
        "def gnmax(votes, sigma, orders):\n"
        "    noisy = votes + np.random.normal(0.0, sigma, size=votes.shape)\n"
        "    rdp = compute_rdp_gnmax(votes, sigma, orders)\n"
        "    return np.argmax(noisy, axis=1), rdp\n",
        "import numpy as np\n"
        "def smooth(labels, n):\n"
        "    return labels + 0.05 * np.random.randn(n)\n",
        "import numpy as np\n"
        "def pate(n0, n1, lamda):\n"
        "    noisy_n1 = n1 + np.random.laplace(0.0, 1 / lamda, size=n1.shape)\n"
        "    return noisy_n1 > n0\n",
        "import torch\n"
        "def sample(generator, n, dim, epsilon):\n"
        "    z = torch.randn(n, dim)\n"
        "    return generator(z + epsilon)\n",
        "import numpy as np\nx = data + np.random.normal(0, noise_std, data.shape)\n",
        "import numpy as np\n"
        "def output_perturbation(y, sensitivity, epsilon, delta):\n"
        "    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon\n"
        "    return y + np.random.normal(0, sigma, y.shape)\n",
        # label smoothing with a constant std in a module that uses Laplace noise on the votes
        '''"""PATE-GAN teachers answer with Laplace noise on their votes."""
import numpy as np
def smooth_targets(labels):
    return labels + np.random.normal(0.0, 0.05, labels.shape)
''',
        # the same stacked real/fake targets used as they are; the Laplace noise goes on the vote counts
        """
import numpy as np
def teacher_step(votes, lamda, mb_size=128):
    M_real = np.ones([mb_size,])
    M_fake = np.zeros([mb_size,])
    M_entire = np.concatenate((M_real, M_fake), 0)
    n1 = votes.sum(0) + np.random.laplace(0.0, 1.0 / lamda, size=votes.shape[1])
    return M_entire, n1
""",
        # a marginal synthesizer: Gaussian noise on marginal counts with its own Gaussian (zCDP) calibration; no PATE
        """
import numpy as np
def measure(data, workload, epsilon, delta, rng):
    sigma = gaussian_sigma_for_k_queries(epsilon, delta, len(workload))
    noisy = {}
    for attrs in workload:
        counts = marginal_counts(data, attrs)
        noisy[attrs] = counts + rng.normal(loc=0.0, scale=sigma, size=counts.shape)
    return noisy
""",
    )

    INVALID = (
        # twin of the exact median: the same Laplace noise added to the real/fake discriminator labels
        """
import numpy as np
def noisy_real_labels(real_labels, epsilon):
    noise = np.random.laplace(loc=0.0, scale=1.0 / epsilon, size=real_labels.shape)
    return real_labels + noise  # <-
""",
        "import numpy as np\n"
        "lamda = np.sqrt(2 * np.log(1.25 / delta)) / epsilon\n"
        "noise_real = np.random.normal(0.0, lamda, size=[n, 1])\n"
        "noise_fake = np.random.normal(0.0, lamda, size=[n, 1])\n"
        "r_real = ((1.0 + noise_real) > 0.5).astype(np.float32)  # <-\n"
        "r_fake = ((0.0 + noise_fake) > 0.5).astype(np.float32)  # <-\n",
        "import numpy as np\n"
        "def noisy_labels(y, epsilon, delta):\n"
        "    std = np.sqrt(2 * np.log(1.25 / delta)) / epsilon\n"
        "    return (y + std * np.random.randn(*y.shape)) > 0.5  # <-\n",
        "import torch\n"
        "class Pate:\n"
        "    def aggregate(self, votes):\n"
        "        noisy = votes + torch.normal(0.0, 1.0 / self.lamda, size=votes.shape)  # <-\n"
        "        return noisy.argmax(dim=1)\n"
        "    def q(self, n0, n1):\n"
        "        gap = torch.abs(n0 - n1)\n"
        "        return (2 + self.lamda * gap) / (4 * torch.exp(self.lamda * gap))\n",
        "import tensorflow as tf\n"
        "def teacher_labels(labels, lamda):\n"
        "    noise = tf.random.normal(tf.shape(labels), stddev=lamda)\n"
        "    labels += noise  # <-\n"
        "    return tf.cast(labels > 0.5, tf.float32)\n",
        # the same spelling where the counts are the teachers' votes
        """
import numpy as np
def measure(teacher_preds, classes, epsilon, delta, rng):
    sigma = gaussian_sigma_for_k_queries(epsilon, delta, len(classes))
    counts = np.stack([np.bincount(p, minlength=len(classes)) for p in teacher_preds])
    noisy = counts + rng.normal(loc=0.0, scale=sigma, size=counts.shape)  # <-
    return noisy.argmax(axis=1)
""",
        "import numpy as np\n"
        "def aggregate(votes, sigma, lamda, n0, n1):\n"
        "    noisy = votes + np.random.normal(0, sigma, votes.shape)  # <-\n"
        "    q = (2 + lamda * np.abs(n0 - n1)) / (4 * np.exp(lamda * np.abs(n0 - n1)))\n"
        "    return noisy, q\n",
        "import numpy as np\n"
        "def pate_labels(lamda, n):\n"
        "    y = np.ones(n)\n"
        "    return (y + np.random.laplace(0, 1 / lamda, n)) > 0.5  # <-\n",
        "import numpy as np\n"
        "def pate_label(n0, n1, eps):\n"
        "    n1_noisy = n1 + np.random.normal(scale=2.0 / eps)  # <-\n"
        "    return n1_noisy > n0\n",
        "from numpy.random import normal as gauss\n"
        "def pate_label(n0, n1, eps):\n"
        "    return n1 + gauss (0.0, 2.0 / eps) > n0  # <-\n",
        # keyword loc/scale/size, a scale with no DP name: the docstring claims Laplace on votes
        '''"""Student labels from PATE_lambda (Laplace noise on the teachers' votes)."""
import numpy as np
def student_labels(labels, noise_scale, n):
    noise = np.random.normal(loc=0.0, scale=noise_scale, size=n)
    return (labels + noise) > 0.5  # <-
''',
        # a numpy Generator (seeded, or built inline) drawing the label noise
        """
import numpy as np
class PateLabeller:
    def __init__(self, seed, lamda):
        self.rng = np.random.default_rng(seed)
        self.lamda = lamda
    def noisy_labels(self, labels):
        return labels + self.rng.normal(0.0, 1.0 / self.lamda, labels.shape)  # <-
    def once(self, target, lap_scale):
        return target + np.random.default_rng().normal(0, lap_scale, len(target))  # <-
""",
        # the original PATE-GAN: real/fake targets stacked from ones and zeros, the noise drawn into
        # its own variable and added on another line, then thresholded
        """
import numpy as np
def PATE_GAN(X_train, epsilon, delta, niter, num_teachers, mb_size=128):
    lamda = np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    for it in range(niter):
        for _ in range(num_teachers):
            M_real = np.ones([mb_size,])
            M_fake = np.zeros([mb_size,])
            M_entire = np.concatenate((M_real, M_fake), 0)
            Normal_Add = np.random.normal(loc=0.0, scale=lamda, size=mb_size * 2)
            M_entire = M_entire + Normal_Add  # <-
            M_entire = (M_entire > 0.5)
""",
        # torch.normal with mean/std keywords on fake labels, Laplace named only in a comment
        """
import torch
def teacher_answers(fake_labels, noise_std):
    # PATE: the answer is the noisy argmax of the votes, Laplace noise of scale 1/lambda
    return fake_labels + torch.normal(mean=0.0, std=noise_std, size=fake_labels.shape)  # <-
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is ``a + b`` / ``a += b`` with a Gaussian or Laplace draw in the module and
        an operand that may be labels or votes (``_target_kind``)."""
        if not facts.calls_any(_NOISE_CALLS):
            return False
        pairs = [(n.left, n.right) for n in facts.binops(ast.Add)]
        pairs += [(n.target, n.value) for n in facts.augassigns(ast.Add)]
        return any(
            _ast_may_be_noise(facts, noise) and _ast_may_be_target(facts, other)
            for left, right in pairs for noise, other in ((left, right), (right, left))
        )

    def __init__(self, ctx) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx)
        self._thresholded: set[int] = set()

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) == 1 and number(node.comparisons[0].comparator) is not None:
            self._thresholded.add(id(node.left))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if isinstance(node.operator, cst.Add):
            self._check(node, node.left, node.right)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self._check(node, node.target, node.value)

    def _check(self, node: cst.CSTNode, left: cst.BaseExpression, right: cst.BaseExpression) -> None:
        for noise_side, other in ((left, right), (right, left)):
            scale = self._gaussian_scale(noise_side, self.scope, 3)
            kind = "Gaussian"
            if scale is None:
                scale, kind = self._laplace_scale(noise_side, self.scope, 3), "Laplace"
            if scale is None:
                continue
            target = self._target_kind(other, thresholded=id(node) in self._thresholded)
            if target is None:
                continue
            # labels noised with a named scale where the method claims Laplace noise on votes
            claimed = target == "labels" and number(strip_unary(scale)) is None and self._laplace_claimed()
            if not (self._dp_calibrated(scale) or claimed or (target == "votes" and self._laplace_accounted())):
                continue
            if target == "labels":
                self.report(
                    node,
                    f"`{self.src(node)}` adds {kind} noise (scale `{self.src(scale, 30)}`) to 0/1 labels: "
                    "this is not the PATE mechanism and no accountant covers it; add Laplace(1/λ) noise "
                    "to the teachers' vote counts instead",
                )
                return
            if target == "votes" and kind == "Gaussian" and not self._accounts_gaussian() and self._pate_context():
                self.report(
                    node,
                    f"`{self.src(node)}` adds Gaussian noise (std `{self.src(scale, 30)}`) to vote counts, "
                    "but the PATE accounting here is for Laplace noise: draw Laplace(1/λ) noise or "
                    "account the Gaussian aggregator with Rényi DP (GNMax)",
                )
                return

    def _gaussian_scale(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> cst.BaseExpression | None:
        """The std of a Gaussian draw (directly, scaled, or through names); None if not Gaussian."""
        res = self.resolver
        expr = strip_unary(expr)
        if isinstance(expr, cst.Call):
            full, last = call_parts(expr, res.aliases)
            root = (full or "").split(".")[0]
            method = full is None or root not in _GAUSS_ROOTS
            if last in _GAUSS_SCALED and (not method or last == "normal"):
                index, keywords = _GAUSS_SCALED[last]
                if root == "tensorflow":
                    index = 2  # tf.random.normal(shape, mean, stddev)
                if method and not isinstance(expr.func, cst.Attribute):
                    return None
                return arg(expr, index, keywords)
            return None
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
            factors = product_factors(expr)
            unit = [f for f, s in factors if s > 0 and isinstance(f, cst.Call) and call_parts(f, res.aliases)[1] in _GAUSS_UNIT]
            scales = [f for f, s in factors if s > 0 and f not in unit and number(f) is None]
            if unit and scales:
                return scales[0]
            return None
        if depth > 0 and isinstance(expr, (cst.Name, cst.Attribute)):
            for value, vscope in res.referents(expr, scope):
                found = self._gaussian_scale(value, vscope, depth - 1)
                if found is not None:
                    return found
        return None

    def _laplace_scale(self, expr: cst.BaseExpression, scope: Scope, depth: int) -> cst.BaseExpression | None:
        expr = strip_unary(expr)
        if isinstance(expr, cst.Call) and call_parts(expr, self.resolver.aliases)[1] == "laplace":
            return arg(expr, 1, "scale")
        if depth > 0 and isinstance(expr, (cst.Name, cst.Attribute)):
            for value, vscope in self.resolver.referents(expr, scope):
                found = self._laplace_scale(value, vscope, depth - 1)
                if found is not None:
                    return found
        return None

    def _dp_calibrated(self, scale: cst.BaseExpression) -> bool:
        for node, _ in self.resolver.expand(scale, self.scope, max_hops=4, limit=400):
            if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)) and has_token(node, _DP_TOKENS):
                return True
        return False

    def _target_kind(self, expr: cst.BaseExpression, *, thresholded: bool) -> str | None:
        value = number(expr)
        if value is not None:
            return "labels" if value in (0.0, 1.0) else None
        if isinstance(expr, cst.Call) and call_parts(expr, self.resolver.aliases)[1] in (
            "ones", "zeros", "ones_like", "zeros_like"
        ):
            return "labels"
        if (has_token(expr, _LABEL_TOKENS) and not self._exact_statistic(expr)) or (
                thresholded and has_token(expr, _WEAK_LABEL_TOKENS)):
            return "labels"
        if has_token(expr, _VOTE_TOKENS):
            return "votes"
        if isinstance(expr, cst.Name) and self._stacked_constants(expr):
            return "labels"
        return None

    @staticmethod
    def _exact_statistic(expr: cst.BaseExpression) -> bool:
        """``real_median``, ``real_mean``, ``fake_count``: ``real`` says the exact (un-noised) value of a statistic,
        not a discriminator's real/fake target."""
        name = last_name(expr)
        tokens = set(name_tokens(name)) if name else set()
        return bool(tokens & {"real", "fake"}) and not tokens & {"label", "labels", "target", "targets"} \
            and bool(tokens & _STATISTIC_TOKENS)

    def _stacked_constants(self, name: cst.Name) -> bool:
        """``M = np.concatenate((np.ones(n), np.zeros(n)))`` (directly or through names bound to
        the two parts): the original PATE-GAN's real/fake targets, named neither labels nor votes."""
        fa = self.ctx.analysis
        for value in fa.referents(name):
            if not (isinstance(value, cst.Call) and call_name(value) in _STACKS and value.args):
                continue
            parts = [n for n in walk(value.args[0].value) if isinstance(n, (cst.Call, cst.Name))
                     and n is not value.args[0].value]
            kinds = set()
            for part in parts:
                held = [part] if isinstance(part, cst.Call) else fa.referents(part)
                for item in held:
                    if isinstance(item, cst.Call) and call_name(item) in ("ones", "zeros", "ones_like", "zeros_like"):
                        kinds.add(call_name(item).split("_")[0])
            if kinds == {"ones", "zeros"}:
                return True
        return False

    def _laplace_accounted(self) -> bool:
        """The module carries the PATE Laplace accountant's q = (2 + λ|n0−n1|)/(4·exp(λ|n0−n1|))."""
        return _LAPLACE_Q.search(self.ctx.source) is not None

    def _laplace_claimed(self) -> bool:
        return self._laplace_accounted() or _LAPLACE_CLAIM.search(self.ctx.source) is not None

    def _pate_context(self) -> bool:
        """The module is about PATE (teachers, PATE_λ, the vote gap n0/n1): Gaussian noise on the counts of a
        marginal or a histogram released with its own Gaussian accounting is not a PATE aggregator."""
        return self._laplace_accounted() or _PATE_TEXT.search(self.ctx.source) is not None

    def _accounts_gaussian(self) -> bool:
        source = self.ctx.source.lower()
        return any(marker in source for marker in _GNMAX_MARKERS)


def _ast_may_be_target(facts: AstFacts, expr: ast.AST) -> bool:
    """Could ``_target_kind`` (thresholded or not) call ``expr`` labels or votes?"""
    value = ast_number(expr)
    if value is not None:
        return value in (0.0, 1.0)
    if isinstance(expr, ast.Call) and facts.call_lasts(expr) & {"ones", "zeros", "ones_like", "zeros_like"}:
        return True
    name = ast_last_name(expr)
    if isinstance(expr, ast.Name) and any(
            isinstance(v, ast.Call) and facts.call_lasts(v) & _STACKS for v in facts.resolutions(expr, hops=1)):
        return True
    return name is not None and (
        name in _ANY_TARGET_TOKENS or any(t in _ANY_TARGET_TOKENS for t in name_tokens(name))
    )


_ANY_TARGET_TOKENS = _LABEL_TOKENS | _VOTE_TOKENS | _WEAK_LABEL_TOKENS
#: calls that stack real/fake targets into one vector
_STACKS = frozenset({"concatenate", "cat", "hstack", "vstack", "stack", "concat"})


def _ast_noisy_names(facts: AstFacts) -> tuple[set[str], set[str]]:
    """Names and ``self``/``cls`` attributes assigned (``=``, ``+=``, annotated) a value that may be
    a draw, closed under assignment: what ``Resolver.referents`` can lead to from a name."""
    names: set[str] = set()
    attrs: set[str] = set()
    assigns: list[tuple[list[ast.AST], ast.AST]] = []
    for node in facts.nodes(ast.Assign, ast.AugAssign, ast.AnnAssign):
        if node.value is not None:  # type: ignore[attr-defined]
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            assigns.append((targets, node.value))  # type: ignore[attr-defined]
    changed = True
    while changed:
        changed = False
        for targets, value in assigns:
            if not _ast_may_be_noise(facts, value, (names, attrs)):
                continue
            for target in targets:
                for sub in ast.walk(target):
                    if isinstance(sub, ast.Name) and sub.id not in names:
                        names.add(sub.id)
                        changed = True
                    elif isinstance(sub, ast.Attribute) and sub.attr not in attrs:
                        attrs.add(sub.attr)
                        changed = True
    return names, attrs


def _ast_may_be_noise(facts: AstFacts, expr: ast.AST, noisy: tuple[set[str], set[str]] | None = None) -> bool:
    """Could ``_gaussian_scale``/``_laplace_scale`` find a draw in ``expr``: a draw call, a product
    with a draw in it, or a name/``self`` attribute whose assigned values may be one?"""
    while isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    if isinstance(expr, ast.Call):
        return bool(facts.call_lasts(expr) & _NOISE_CALLS)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return any(isinstance(n, ast.Call) and facts.call_lasts(n) & _NOISE_CALLS for n in ast.walk(expr))
    if isinstance(expr, (ast.Tuple, ast.List)):
        return any(_ast_may_be_noise(facts, el, noisy) for el in expr.elts)
    if isinstance(expr, (ast.Name, ast.Attribute)):
        names, attrs = noisy if noisy is not None else facts.memo("dp106-noisy", lambda: _ast_noisy_names(facts))
        if isinstance(expr, ast.Name):
            return expr.id in names
        return isinstance(expr.value, ast.Name) and expr.value.id in ("self", "cls") and expr.attr in attrs
    return False
