"""DP301: code that claims PATE/DP training but trains a fixed number of iterations, unaccounted."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import call_name as ast_call_name
from dpcheck.analysis.vocabulary import TRAIN_STEP_CALLS

from dpcheck.analysis.syntax import call_name, param_names, refs, walk, words
from dpcheck.analysis.taint import has_training_step
from dpcheck.rule import Rule
from dpcheck.analysis.dataindex import (
    PATE_RE,
    Dp2Index,
    identifiers,
    index_for,
    range_arg,
)

_ACCOUNTING = re.compile(
    r"(?i)accountant|moments_?acc|compute_rdp|rdp_|privacy_spent|get_epsilon|privacy_engine|"
    r"make_private|eps(ilon)?_?hat|eps(ilon)?_spent|spent_eps|budget_spent|vote|aggregat|"
    r"noise_multiplier|gnmax|confident"
)


def _is_eps(name: str) -> bool:
    return bool(words(name.split(".")[-1]) & {"epsilon", "eps"})


class NoPrivacyAccounting(Rule):
    id = "DP301"
    name = "no-privacy-accounting"
    category = "pate"
    severity = "error"
    summary = "code claims PATE/DP training but runs a fixed iteration count with no accountant or noisy teacher votes"
    rationale = (
        "PATE-GAN's guarantee comes from three pieces working together: k teachers trained on "
        "disjoint partitions, a noisy aggregation of their votes (PATE_λ) that labels the "
        "student's data, and a moments accountant that charges every noisy answer and stops "
        "training once the estimated ε̂ reaches the target ε. Code that is named and "
        "parameterised as PATE-GAN (epsilon, delta, num_teachers) but trains one discriminator "
        "for a fixed number of iterations, with neither vote aggregation nor accountant "
        "(original, turing), spends an unbounded, unmeasured privacy budget: its epsilon "
        "argument only scales some noise and nothing ties the output to (ε, δ). Fix: implement "
        "the teacher ensemble with Laplace-noised vote counts and drive training with the "
        "accountant (`while epsilon_hat < epsilon:`)."
    )
    TRIGGERS = ("PATE", "Pate", "pategan", " pate", ".pate", "_pate", "(pate", "teacher", "Teacher")

    VALID = (
        # an evaluation driver: it only calls a PATE-GAN generator imported from elsewhere; its own loop fits
        # one forest per dataset to compare feature importances
        """
from sklearn.ensemble import RandomForestClassifier
from synth.pate import pate_gan
def importances(datasets, labels):
    out = []
    for j in range(len(datasets)):
        forest = RandomForestClassifier(200)
        forest.fit(datasets[j], labels[j])
        out.append(forest.feature_importances_)
    return out
def run(df, which):
    if which == "pate_gan":
        return pate_gan(df.values, {"k": 10})
""",
        # ordinary ML: a training loop in a module without any DP claim
        """
import torch
def train(model, loader, epochs=10):
    opt = torch.optim.Adam(model.parameters())
    for ep in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            model.loss(x, y).backward()
            opt.step()
""",
        # "PATENT" is not PATE: a federated client's plain local trainer in a module with a patent banner
        '''
# PATENT PENDING: adaptive aggregation research code
import torch
def local_fit(net, batches, rounds):
    """Privacy-preserving only in that raw data stays on the client."""
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for r in range(rounds):
        for xb, yb in batches:
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(xb), yb).backward()
            opt.step()
''',
        # a generic semi-supervised trainer that imports helpers from a PATE package; no DP claim of its own
        """
import torch
from lib.pate.utils import accuracy, build_optimizer
def train_model(model, loader, config):
    opt = build_optimizer(model, config)
    for epoch in range(config.epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return accuracy(model, loader)
""",
        # teachers' one-hot predictions summed, Laplace-noised and arg-maxed (PATE's aggregation, unnamed)
        """
import numpy as np
class TeacherEnsemble:
    def __init__(self, models, epsilon, epochs):
        self.models, self.epsilon, self.epochs = models, epsilon, epochs
    def fit(self, parts):
        for m, (x, y) in zip(self.models, parts):
            for _ in range(self.epochs):
                m.partial_fit(x, y)
    def predict(self, X):
        onehots = np.stack([np.eye(10)[m.predict(X)] for m in self.models])
        hist = onehots.sum(axis=0)
        return (hist + np.random.laplace(0, 1 / self.epsilon, hist.shape)).argmax(axis=1)
""",
        # budget-driven loop with an accountant
        """
import numpy as np
def pategan(x, epsilon, delta, k, lamda):
    alpha = np.zeros(20)
    epsilon_hat = 0.0
    while epsilon_hat < epsilon:
        for _ in range(5):
            train_teachers(x, k)
        alpha += moments(lamda)
        epsilon_hat = np.min((alpha + np.log(1 / delta)) / np.arange(1, 21))
""",
        # fixed epochs, but teacher votes are noised and an accountant is queried
        """
import numpy as np
class PATEGAN:
    def fit(self, X):
        for epoch in range(self.epochs):
            votes = sum(t.predict(fake) for t in self.teachers)
            noisy = votes + np.random.laplace(scale=1 / self.lamda, size=votes.shape)
            self.student.fit(fake, noisy > len(self.teachers) / 2)
            if self.accountant.epsilon(self.delta) > self.epsilon:
                break
""",
        # no PATE/DP claim: an ordinary GAN training loop
        """
def train_gan(G, D, data, n_iters):
    for it in range(n_iters):
        D.train_on_batch(data)
        G.train_on_batch(data)
""",
        # fixed iteration count with an explicit epsilon break
        """
def pate_train(model, data, epsilon, iters):
    eps = 0.0
    for it in range(iters):
        model.step(data)
        eps = model.spent()
        if eps >= epsilon:
            break
""",
        # PATE utility without a training loop
        """
import numpy as np
def pate_labels(votes, lamda):
    return np.argmax(votes + np.random.laplace(scale=1 / lamda, size=votes.shape), axis=1)
""",
    )

    INVALID = (
        # twin of the evaluation driver: this module's own function is the PATE-GAN and its fixed loop
        # trains the discriminator with no accountant
        """
from sklearn.ensemble import RandomForestClassifier
def pate_gan(data, params):
    for it in range(params["iters"]):  # <-
        disc.fit(data, ones)
    return gen
def run(df, which):
    if which == "pate_gan":
        return pate_gan(df.values, {"k": 10, "iters": 100})
""",
        # the twin that names itself a PATE trainer beyond its imports, with a fixed epoch count
        """
import torch
from lib.pate.utils import accuracy, build_optimizer
def train_pate_student(model, loader, config, epsilon):
    opt = build_optimizer(model, config)
    for epoch in range(config.epochs):  # <-
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return accuracy(model, loader)
""",
        # original: single WGAN-GP discriminator, fixed niter, no accountant
        """
import numpy as np
def PATE_GAN(X_train, Y_train, epsilon, delta, niter, num_teachers):
    lamda = np.sqrt(2 * np.log(1.25 * (10 ** delta))) / epsilon
    for it in range(niter):  # <-
        for _ in range(num_teachers):
            sess.run(D_solver, feed_dict={X: X_train})
        sess.run(G_solver, feed_dict={Z: z})
""",
        # turing: a class named PATEGAN trained for self.n_iters
        """
import numpy as np
class PATEGAN:
    def __init__(self, epsilon=1.0, delta=1e-5, num_teachers=10, n_iters=100):
        self.epsilon, self.delta, self.num_teachers, self.n_iters = epsilon, delta, num_teachers, n_iters
    def fit(self, data):
        for it in range(self.n_iters):  # <-
            for _ in range(self.num_teachers):
                self.sess.run(self.D_solver, feed_dict={self.X: data})
            self.sess.run(self.G_solver)
""",
        # torch, docstring claims differential privacy, fixed epochs with tqdm
        '''
from tqdm import tqdm
class DPGan:
    """Differentially private GAN in the PATE style."""
    def train(self, loader, epsilon, epochs=300):
        for epoch in tqdm(range(epochs)):  # <-
            for real in loader:
                d_loss = self.d_loss(real)
                d_loss.backward()
                self.opt_d.step()
''',
        # keras, teachers named but never aggregated, fixed iteration count
        """
def train(teachers, generator, data, epsilon, delta, iterations=1000):
    for step in range(iterations):  # <-
        for teacher in teachers:
            teacher.train_on_batch(data, labels)
        generator.train_on_batch(noise, ones)
""",
        # the training loop sits in a helper; the module claims PATE-GAN
        """
# PATE-GAN implementation
def _loop(model, x, n):
    for i in range(n):  # <-
        model.fit(x)
def fit(x, epsilon=1.0):
    _loop(make_model(epsilon), x, 500)
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a ``for`` over ``range``/``trange``/``tqdm(range(…))`` with a training step
        in it (``_training_loops``), in a module with no accounting identifier (``_accounted``)."""
        for node in facts.nodes(ast.Name, ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.attr  # type: ignore[attr-defined]
            if _ACCOUNTING.search(name):
                return False
        for loop in facts.nodes(ast.For):
            if _ast_range_loop(loop.iter) and any(  # type: ignore[attr-defined]
                    isinstance(n, ast.Call) and _ast_training_call(n) for n in ast.walk(loop)):
                return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        src = self.ctx.source
        lowered = src.lower()
        # a PATE package only named in an import path (``from lib.pate.utils import accuracy``) is no claim:
        # a generic trainer the PATE pipeline reuses for teachers and student, its privacy accounted elsewhere
        claimed = "\n".join(line for line in src.splitlines()
                              if not re.match(r"\s*(?:from\s+\S+\s+)?import\s", line))
        claim = bool(PATE_RE.search(claimed)) or ("teacher" in lowered and "epsilon" in lowered)
        if not claim:
            return
        index = index_for(self.ctx)
        loops = self._training_loops(index)
        if not loops or self._accounted(index):
            return
        # a driver that only calls a PATE generator imported from elsewhere (``synth = pategan(data, params)``,
        # ``method == 'pategan'``) claims nothing for its own loops: unless a loop sits in a function that
        # takes or uses an epsilon, its loops are evaluation or other models' fits, not the PATE training
        if not _own_claim(src) and not any(self._dp_function(index, lp) for lp in loops):
            return
        loop = self._pick(index, loops)
        n = self._count_expr(loop)
        self.report(
            loop,
            f"this PATE/DP model trains for a fixed {n} iterations with no teacher-vote "
            "aggregation and no privacy accountant, so the spent (ε, δ) is neither tracked nor "
            "bounded; aggregate Laplace-noised teacher votes and loop `while epsilon_hat < "
            "epsilon` with a moments accountant",
        )

    @staticmethod
    def _noisy_argmax(module: cst.Module) -> bool:
        """A function that sums counts (``predictions.sum(axis=0)``, ``bincount``), adds a noise draw and
        takes the ``argmax``: report-noisy-max over the teachers' votes, i.e. PATE's aggregation, whatever
        it is named."""
        from dpcheck.analysis.noisedraws import PURE_DRAWS

        for fn in walk(module):
            if not isinstance(fn, cst.FunctionDef):
                continue
            called = {call_name(c) for c in walk(fn) if isinstance(c, cst.Call)}
            if called & PURE_DRAWS and "argmax" in called and called & {"sum", "bincount", "count_nonzero"}:
                return True
        return False

    @staticmethod
    def _accounted(index: Dp2Index) -> bool:
        ids = identifiers(index.module)
        if any(_ACCOUNTING.search(name) for name in ids):
            return True
        if NoPrivacyAccounting._noisy_argmax(index.module):
            return True
        for sub in walk(index.module):
            if isinstance(sub, cst.While) and any(_is_eps(n) for n in refs(sub.test)):
                return True
            if isinstance(sub, cst.If) and any(_is_eps(n) for n in refs(sub.test)):
                body = sub.body
                if any(isinstance(s, (cst.Break, cst.Return, cst.Raise)) for s in walk(body)):
                    return True
            if isinstance(sub, cst.Comparison) and sum(1 for n in refs(sub) if _is_eps(n)) >= 2:
                return True
        return False

    @staticmethod
    def _training_loops(index: Dp2Index) -> list[cst.For]:
        out: list[cst.For] = []
        for loop in index.loops:
            if not isinstance(loop, cst.For):
                continue
            count = range_arg(loop.iter)
            if count is None or any(_is_eps(n) for n in refs(count)):
                continue
            if not has_training_step(loop.body):
                continue
            if any(isinstance(a, (cst.For, cst.While)) and a in out for a in index.ancestors(loop)):
                continue
            if any(isinstance(a, cst.For) and range_arg(a.iter) is not None and has_training_step(a.body)
                   for a in index.ancestors(loop)):
                continue
            out.append(loop)
        return out

    @staticmethod
    def _dp_function(index: Dp2Index, loop: cst.For) -> bool:
        fn = index.enclosing_function(loop)
        if fn is None:
            return False
        names = set(param_names(fn)) | refs(fn.body)
        return any(_is_eps(n) for n in names)

    @staticmethod
    def _pick(index: Dp2Index, loops: list[cst.For]) -> cst.For:
        preferred = [lp for lp in loops if NoPrivacyAccounting._dp_function(index, lp)]
        return (preferred or loops)[0]

    def _count_expr(self, loop: cst.For) -> str:
        count = range_arg(loop.iter)
        return f"`{self.ctx.module.code_for_node(count)}`" if count is not None else "number of"


def _own_claim(src: str) -> bool:
    """The module itself claims PATE: a comment, a docstring or other prose string, or a function or class
    it defines matches ``PATE_RE``. Not a claim: import lines, calls of an imported generator
    (``synth = pategan(data, params_pate)``) and one-word dispatch strings (``method == 'pategan'``)."""
    import io
    import tokenize
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return True
    prev = ""
    for tok in toks:
        text = tok.string
        if tok.type == tokenize.NAME:
            defined = prev in {"def", "class"}
            prev = text
            if not defined:
                continue
        elif tok.type == tokenize.STRING:
            prev = ""
            if re.fullmatch(r"[rbuRBU]*(['\"])\w+\1", text):
                continue
        elif tok.type == tokenize.COMMENT:
            prev = ""
        else:
            if tok.type == tokenize.OP:
                prev = ""
            continue
        if PATE_RE.search(text):
            return True
    return False


def _ast_range_loop(expr: ast.AST) -> bool:
    """``range_arg`` would find a count in ``expr``."""
    while isinstance(expr, ast.Call) and ast_call_name(expr) in {"tqdm", "track", "enumerate"} \
            and (expr.args or expr.keywords):
        expr = expr.args[0] if expr.args else expr.keywords[0].value
    return isinstance(expr, ast.Call) and ast_call_name(expr) in {"range", "trange", "xrange"} and bool(
        [a for a in expr.args if not isinstance(a, ast.Starred)] or any(isinstance(a, ast.Starred) for a in expr.args))


def _ast_training_call(call: ast.Call) -> bool:
    """A call ``has_training_step`` may count (``step``/``run`` on any receiver)."""
    name = ast_call_name(call)
    return name in TRAIN_STEP_CALLS or name in {"step", "run"} and isinstance(call.func, ast.Attribute)
