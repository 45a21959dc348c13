"""DP403: latent noise drawn from one distribution in training and another at generation."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, read_names
from dpcheck.analysis.astfacts import call_name as ast_call_name
from dpcheck.analysis.astfacts import dotted as ast_dotted

from dpcheck.analysis.syntax import call_name, value_refs, walk
from dpcheck.codetext import code_only
from dpcheck.rule import Rule
from dpcheck.analysis.generator import (
    GEN_TEXT,
    gen_text,
    has_any,
    ModuleIndex,
    index_for,
    is_gen_identifier,
    is_generator_call,
    target_key,
    tokens,
)

_UNIFORM = {"rand", "rand_like", "uniform", "uniform_", "random", "random_sample", "random_uniform", "Uniform"}
_NORMAL = {"randn", "randn_like", "normal", "normal_", "standard_normal", "random_normal", "gauss", "Normal", "truncated_normal"}
_LATENT = {"z", "zs", "latent", "latents", "codes"}
_TRAIN = {"fit", "train", "training", "step", "update", "learn", "optimize", "optimise", "epoch", "iteration", "loop"}
_GENERATE = {"sample", "samples", "generate", "generation", "synthesize", "synthesise", "produce", "draw", "inference", "infer", "predict"}
_UNIFORM_TEXT = re.compile(r"\brand\(|rand_like|uniform|random\(|random_sample")
_NORMAL_TEXT = re.compile(r"randn|normal|gauss")


#: a substring of every match of ``_UNIFORM_TEXT`` / ``_NORMAL_TEXT``
_UNIFORM_LITERALS = ("rand(", "rand_like", "uniform", "random(", "random_sample")
_NORMAL_LITERALS = ("randn", "normal", "gauss")
_CALL_RAW = r"\w*(?:[\s\\]|#[^\n]*(?![^\n]))*\("
#: literal-prefixed (fast) raw-source forms of ``_NORMAL_CALL`` / ``_UNIFORM_CALL``
_NORMAL_RAW = tuple(re.compile(lit + _CALL_RAW) for lit in ("randn", "normal", "Normal", "gauss"))
_UNIFORM_RAW = tuple(re.compile(lit + _CALL_RAW) for lit in ("rand", "uniform", "Uniform", "random"))
_UNIFORM_CALL = re.compile(r"\b(?:rand|rand_like|uniform_?|random|random_sample|random_uniform|Uniform)[\s\\]*\(")
_NORMAL_CALL = re.compile(
    r"\b(?:randn|randn_like|normal_?|standard_normal|random_normal|gauss|Normal|truncated_normal)[\s\\]*\("
)
#: an identifier with a token of ``_LATENT`` (``tokens`` splits on ``_``, ``.`` and camel case)
_LATENT_TEXT = re.compile(
    r"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))(?i:z|zs|latents?|codes)(?:(?![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))"
)


def gate_text(src: str) -> bool:
    """The rule's own precondition, on the raw source (``gate`` refines it for the prefilter)."""
    return bool(_UNIFORM_TEXT.search(src) and _NORMAL_TEXT.search(src) and GEN_TEXT.search(src))


def _family_of_draw(call: cst.Call) -> str | None:
    name = call_name(call)
    if name in _UNIFORM:
        return "uniform"
    if name in _NORMAL:
        return "normal"
    return None


class LatentMismatch(Rule):
    id = "DP403"
    name = "latent-mismatch"
    category = "general"
    severity = "warning"
    requires_dp_context = True
    summary = "latent noise drawn from one distribution in training and another at generation (rand vs randn)"
    rationale = (
        "A generator learns a map from its training latent distribution P_Z to the data. If "
        "training feeds uniform noise (`torch.rand`, `np.random.uniform`) but generation feeds "
        "normal noise (`torch.randn`, `np.random.normal`), or the reverse, the released samples "
        "come from inputs the generator never saw (negative and >1 values), so they do not "
        "follow the distribution that training — and any utility or audit result — refers to "
        "(smartnoise trains with `rand` and generates with `randn`). Fix: draw latent noise with "
        "one sampler, ideally one helper used by both training and generation."
    )
    TRIGGERS = ("randn", "normal", "gauss", "Normal")

    VALID = (
        # one helper for both
        """
import numpy as np
def sample_Z(m, n):
    return np.random.uniform(-1.0, 1.0, size=[m, n])
class GAN:
    def fit(self, x):
        for _ in range(100):
            self.step(x, sample_Z(64, self.z_dim))
    def sample(self, n):
        return self.G(sample_Z(n, self.z_dim))
""",
        # randn in both places
        """
import torch
class Synth:
    def train(self, loader):
        for x in loader:
            z = torch.randn(len(x), self.dim)
            loss = self.d(self.generator(z)).mean()
    def generate(self, n):
        z = torch.randn(n, self.dim)
        return self.generator(z)
""",
        # uniform interpolation weight in WGAN-GP is not latent noise
        """
import torch
class WGAN:
    def train(self, real):
        for _ in range(10):
            z = torch.randn(len(real), 16)
            fake = self.generator(z)
            alpha = torch.rand(len(real), 1)
            inter = alpha * real + (1 - alpha) * fake
            gp = self.penalty(self.critic(inter))
    def sample(self, n):
        return self.generator(torch.randn(n, 16))
""",
        # Gaussian label noise in training, uniform latent in both
        """
import numpy as np
class PG:
    def fit(self, x):
        for it in range(self.iters):
            z = np.random.uniform(0, 1, (64, self.dim))
            fake = self.G(z)
            labels = np.ones(64) + np.random.normal(0, self.lamda, 64)
    def generate(self, n):
        z = np.random.uniform(0, 1, (n, self.dim))
        return self.G(z)
""",
        # a GAN that claims no privacy (the smartnoise shape without PATE)
        """
import torch
class TabularGAN:
    def train(self, data):
        noise = torch.rand(self.batch_size, self.latent_dim)
        self.update(self.generator(noise))
    def generate(self, n):
        noise = torch.randn(n, self.latent_dim)
        return self.generator(noise).detach().numpy()
""",
    )

    INVALID = (
        # smartnoise shape
        """
import torch
class PATEGAN:
    def train(self, data):
        for epoch in range(self.epochs):
            noise = torch.rand(self.batch_size, self.latent_dim)
            fake = self.generator(noise)
            self.update(fake)
    def generate(self, n):
        noise = torch.randn(n, self.latent_dim)  # <-
        return self.generator(noise).detach().numpy()
""",
        # numpy spellings, the reverse direction
        """
import numpy as np
class Model:
    def fit(self, X, epsilon):
        for it in range(self.n_iter):
            Z_mb = np.random.normal(size=(self.batch, self.z_dim))
            self.train_step(X, Z_mb)
    def sample(self, n):
        z = np.random.uniform(0.0, 1.0, size=(n, self.z_dim))  # <-
        return self.sess.run(self.G_sample, feed_dict={self.Z: z})
""",
        # training helper sampler vs direct randn at generation, aliased imports
        """
import numpy as npr
def sample_z(m, n):
    return npr.random.uniform(0.0, 1.0, size=[m, n])
def pate_gan(x, params, n_out):
    eps_hat = 0.0
    while eps_hat < params["epsilon"]:
        Z_mb = sample_z(params["batch_size"], params["z_dim"])
        eps_hat = train_step(x, Z_mb)
    latent = npr.random.randn(n_out, params["z_dim"])  # <-
    return sess.run(G_sample, feed_dict={Z: latent})
""",
        # in-place torch initialisers, draw passed straight into the generator
        """
import torch
class DPGen:
    def fit(self, loader):
        for x in loader:
            fake = self.netG(torch.empty(len(x), 32).uniform_(-1, 1))
            self.opt_step(fake, x)
    def sample(self, n):
        return self.netG(torch.empty(n, 32).normal_())  # <-
""",
        # rng generator object, rand_like vs randn_like
        """
import torch
class CondGen:
    \"\"\"Conditional generator trained with DP-SGD.\"\"\"
    def training_step(self, batch):
        z = torch.rand_like(batch[:, : self.zdim])
        return self.generator(z)
    def synthesize(self, template):
        z = torch.randn_like(template[:, : self.zdim])  # <-
        return self.generator(z)
""",
        # TF2 Keras: uniform latents in train_step, normal in sample
        """
import tensorflow as tf
class KerasPrivateGAN:
    def train_step(self, real):
        z = tf.random.uniform((self.batch, self.zdim))
        return self.generator(z, training=True)
    def sample(self, n):
        z = tf.random.normal((n, self.zdim))  # <-
        return self.generator(z, training=False).numpy()
""",
    )

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """The trigger substrings, then a textual check the finding cannot exist without."""
        return super().applies_to(source) and cls.gate(source)

    @staticmethod
    def gate(src: str) -> bool:
        """Necessary conditions of a finding, cheapest first (raw source, then code only):

        * ``gate_text`` — ``visit_Module`` requires it on the raw source;
        * a uniform draw and a normal draw, both called in code: the training family and a
          different generation family (helpers only forward a draw made in their body);
        * a latent draw (:meth:`_latent`): inside a generator call or assigned to a name that
          is passed to one — so a generator call in code — or assigned to a latent-named
          target (``z``, ``Z_mb``, ``noiseZ``, ``latents``, ``codes``).
        """
        if not has_any(src, _UNIFORM_LITERALS) or not has_any(src, _NORMAL_LITERALS):
            return False
        if not any(p.search(src) for p in _NORMAL_RAW) or not any(p.search(src) for p in _UNIFORM_RAW):
            return False
        code = code_only(src)
        if not _UNIFORM_CALL.search(code) or not _NORMAL_CALL.search(code):
            return False
        if not gate_text(src):
            return False
        return bool(_LATENT_TEXT.search(code) or gen_text(src, code, called=True))

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding compares a latent draw of one family with a latent draw of the other: both
        families need a call that may be latent (``_latent``), a draw or a call of a function
        holding a draw of that family (``_helpers``)."""
        generator_calls = [c for c in facts.calls if _ast_generator_call(c)]
        for family in (_UNIFORM, _NORMAL):
            helpers = {f.name for f in facts.functions
                       if any(isinstance(n, ast.Call) and ast_call_name(n) in family for n in ast.walk(f))}
            if not any((ast_call_name(c) in family or ast_call_name(c) in helpers)
                       and _ast_may_be_latent(facts, c, bool(generator_calls)) for c in facts.calls):
                return False
        return True

    def visit_Module(self, node: cst.Module) -> None:
        if not gate_text(self.ctx.source):
            return
        index = index_for(self.ctx)
        helpers = self._helpers(index)
        groups: dict[cst.ClassDef | None, dict[str, list[tuple[cst.Call, str]]]] = {}
        for call in index.calls:
            family = _family_of_draw(call)
            func = index.enclosing_function(call)
            if family is None:
                helper = helpers.get(call_name(call))
                if helper is None or (func is not None and func.name.value == call_name(call)):
                    continue
                family = helper
            elif func is not None and func.name.value in helpers:
                continue  # the sampler's own definition; its call sites are counted
            if not self._latent(call, func, index):
                continue
            phase = self._phase(call, func, index)
            if phase is None:
                continue
            group = groups.setdefault(index.enclosing_class(call), {"train": [], "generate": []})
            group[phase].append((call, family))
        for group in groups.values():
            train_families = {f for _, f in group["train"]}
            if len(train_families) != 1:
                continue
            (trained,) = train_families
            example = next(c for c, f in group["train"])
            train_code = _short(index.module.code_for_node(example.func))
            for call, family in group["generate"]:
                if family == trained:
                    continue
                self.report(
                    call,
                    f"latent noise is {family} at generation (`{_short(index.module.code_for_node(call.func))}`) "
                    f"but {trained} in training (`{train_code}`): the generator is evaluated off "
                    "its training distribution; draw latent noise with the same sampler in both",
                )

    @staticmethod
    def _helpers(index: ModuleIndex) -> dict[str, str]:
        """Functions that return a draw (directly or through one local name) -> its family."""
        out: dict[str, str] = {}
        for func in index.functions:
            local: dict[str, str] = {}
            families: set[str] = set()
            for n in walk(func.body):
                if isinstance(n, cst.Assign) and isinstance(n.value, cst.Call):
                    fam = _family_of_draw(n.value)
                    if fam:
                        for t in n.targets:
                            key = target_key(t.target)
                            if key:
                                local[key] = fam
                elif isinstance(n, cst.Return) and n.value is not None:
                    v = n.value
                    if isinstance(v, cst.Call) and _family_of_draw(v):
                        families.add(_family_of_draw(v) or "")
                    elif isinstance(v, cst.Name) and v.value in local:
                        families.add(local[v.value])
            if len(families) == 1:
                out[func.name.value] = families.pop()
        return out

    @staticmethod
    def _latent(call: cst.Call, func: cst.FunctionDef | None, index: ModuleIndex) -> bool:
        stmt = None
        for anc in index.ancestors(call):
            if isinstance(anc, cst.Call) and is_generator_call(anc):
                return True
            if isinstance(anc, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                stmt = anc
                break
        if not isinstance(stmt, cst.Assign) or stmt.value is not call and not _is_chain_of(stmt.value, call):
            return False
        keys = {k for t in stmt.targets if (k := target_key(t.target)) is not None}
        if any(tokens(k) & _LATENT for k in keys):
            return True
        scope = func.body if func is not None else index.module
        for n in walk(scope):
            if isinstance(n, cst.Call) and is_generator_call(n):
                if any(value_refs(a.value) & keys for a in n.args):
                    return True
        return False

    @staticmethod
    def _phase(call: cst.Call, func: cst.FunctionDef | None, index: ModuleIndex) -> str | None:
        name_tokens = tokens(func.name.value) if func is not None else set()
        is_train = bool(name_tokens & _TRAIN)
        is_gen = bool(name_tokens & _GENERATE)
        if is_gen and not is_train:
            return "generate"
        if is_train and is_gen:
            return None
        if index.enclosing_loops(call):
            return "train"
        # a function that trains in a loop and then generates after it (TF1 scripts)
        scope = func.body if func is not None else index.module
        loops = [n for n in walk(scope) if isinstance(n, (cst.For, cst.While))]
        if any(index.order[loop] < index.order[call] for loop in loops):
            return "generate"
        return "train" if is_train else None


def _is_chain_of(value: cst.BaseExpression, call: cst.Call) -> bool:
    """``torch.empty(n, d).uniform_()`` / ``torch.randn(n, d).to(device)``: ``call`` inside a method chain."""
    cur: cst.BaseExpression = value
    while isinstance(cur, cst.Call):
        if cur is call:
            return True
        func = cur.func
        if not isinstance(func, cst.Attribute):
            return False
        cur = func.value
    return cur is call


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 30 else text[:27] + "..."


def _ast_generator_call(call: ast.Call) -> bool:
    """``is_generator_call`` widened: any generator spelling, any ``run``."""
    name = ast_dotted(call.func)
    return ast_call_name(call) == "run" or (name is not None and is_gen_identifier(name, weak=True))


def _ast_may_be_latent(facts: AstFacts, call: ast.Call, any_generator_call: bool) -> bool:
    """``_latent`` widened: under a generator call, or the value of an assignment whose target is
    latent-named or (any generator call in the file) may be passed to a generator."""
    parent = facts.parents.get(call)
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.Call) and _ast_generator_call(parent):
            return True
        parent = facts.parents.get(parent)
    if not isinstance(parent, ast.Assign):
        return False
    return any_generator_call or any(tokens(k) & _LATENT for t in parent.targets for k in read_names(t))
