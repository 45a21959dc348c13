"""DP401: data scaled before training, generator output returned without the inverse transform."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.astfacts import call_name as ast_call_name

from dpcheck.analysis.syntax import call_name, dotted, walk
from dpcheck.codetext import code_only
from dpcheck.rule import Rule
from dpcheck.analysis.generator import (
    ast_gen_taint,
    ast_generated,
    GEN_TEXT,
    ModuleIndex,
    assignments_in,
    contains_generator_call,
    WEAK_GEN_LITERALS,
    gan_context,
    gen_called_raw,
    strong_gen_raw,
    gen_text,
    has_any,
    index_for,
    is_gen_identifier,
    is_generator_call,
    taint,
    tokens,
)

_SCALE_TEXT = re.compile(r"Scaler|minmax|min_max|normali[sz]|standardi[sz]|\bmin\b|min\(|mean\(|_min|min_|lo\b")
_SCALERS = {"MinMaxScaler", "StandardScaler", "RobustScaler", "MaxAbsScaler", "QuantileTransformer", "PowerTransformer", "minmax_scale"}
_SCALE_FUNCS = {"normalize", "normalization", "normalise", "normalisation", "standardize", "standardise", "minmax"}
_INVERSE_WORDS = {
    "inverse", "denormalize", "denormalise", "denormalization", "renormalize", "renormalise",
    "renormalization", "unscale", "rescale", "descale", "unnormalize", "denorm", "decode",
    "reverse", "postprocess", "untransform", "destandardize",
}
_TRAINING_FUNCS = {
    "fit", "train", "training", "step", "update", "loss", "forward", "backward", "optimize", "optimise",
    "epoch", "iteration", "discriminator", "critic", "penalty", "teacher", "teachers", "student",
}
# functions that hand synthetic data back to the caller
_OUTPUT_FUNCS = {"postprocess", "post", "decode", "output", "sample", "generate", "synthesize", "synthesise", "finalize", "finalise", "format", "export"}
_CALL_KIND = {
    "min": "min", "amin": "min", "nanmin": "min",
    "max": "max", "amax": "max", "nanmax": "max",
    "mean": "mean", "nanmean": "mean", "average": "mean",
    "std": "std", "nanstd": "std", "ptp": "range",
}
_NAME_KIND = [
    (re.compile(r"(^|_)(min|mins|minimum|minima|lo|low|lower|lb)(_|$)|min$|^min"), "min"),
    (re.compile(r"(^|_)(max|maxs|maximum|maxima|hi|high|upper|ub)(_|$)|max$|^max"), "max"),
    (re.compile(r"(^|_)(mean|means|mu|avg)(_|$)"), "mean"),
    (re.compile(r"(^|_)(std|stds|stdev|scale)(_|$)"), "std"),
    (re.compile(r"(^|_)(range|ranges|ptp|span)(_|$)"), "range"),
]


#: raw-source prefilter of the three ways :meth:`OutputNotRescaled._scales` can hold (a scaler,
#: a scaling helper, a parenthesised difference divided by something)
_SCALE_LITERALS = (
    "Scaler", "minmax", "inMax", "inmax", "MINMAX", "ormali", "ORMALI", "tandardi", "TANDARDI",
)
_DIV_RAW = re.compile(r"\)[\s\\]*(?:#[^\n]*\n[\s\\]*)*/")
_SCALER_CALL = re.compile(
    r"\b(?:MinMaxScaler|StandardScaler|RobustScaler|MaxAbsScaler|QuantileTransformer|PowerTransformer|minmax_scale)\s*\("
)
#: ``def`` of a function whose name has a token of ``_SCALE_FUNCS`` (calls of it count as scaling)
_SCALE_DEF = re.compile(r"def\s+(\w*(?:[Nn]ormali[sz]|NORMALI[SZ]|[Ss]tandardi[sz]|STANDARDI[SZ]|[Mm]in[Mm]ax|MINMAX)\w*)\s*\(")
_DIV_AFTER_PAREN = re.compile(r"\)[\s\\]*/(?![/=])")
#: ``def`` of a function whose name may have a token of ``_OUTPUT_FUNCS``
_OUTPUT_DEF = re.compile(
    r"def\s+\w*(?i:post|decode|output|sample|generate|synthesi[sz]e|finali[sz]e|format|export)"
)
_DEF_NAME = re.compile(r"def\s+(\w+)\s*\(")


def _seeded_output(src: str, code: str) -> bool:
    """A ``def`` named like an output function (a token of ``_OUTPUT_FUNCS``) with a parameter
    that may name generator output: :meth:`OutputNotRescaled._releases` seeds its taint with it.
    On the raw source (``code is None``) a signature holding a quote or ``#`` counts as a match."""
    text = src if code is None else code
    for m in _DEF_NAME.finditer(text):
        if not tokens(m.group(1)) & _OUTPUT_FUNCS:
            continue
        depth, i = 1, m.end()
        while i < len(text) and depth:
            ch = text[i]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif code is None and ch in "\"'#":
                return True
            i += 1
        params = text[m.end():i]
        if code is None:
            if strong_gen_raw(params) or has_any(params, WEAK_GEN_LITERALS) and gan_context(src):
                return True
        elif gen_text(src, params):
            return True
    return False


_INVERSE_WORD = re.compile(
    r"inverse|denorm|renorm|unscale|rescale|descale|unnormali|decode|reverse|postprocess|untransform|destandardi"
)
_IDENT_END = re.compile(r"\w*")
_OPEN_PAREN = re.compile(r"\s*\(")
_DEF_BEFORE = re.compile(r"(?:def|class)\s+$")


def _scale_def(code: str) -> bool:
    """A local function named like a scaler (``def normalization(``) that is also called."""
    for m in _SCALE_DEF.finditer(code):
        name = m.group(1)
        if tokens(name) & _SCALE_FUNCS and re.search(rf"(?<!def )\b{name}\s*\(", code[: m.start()] + code[m.end():]):
            return True
    return False


def _centred_division(code: str) -> bool:
    """``(a - b) / c``: a parenthesised group with a top-level ``-`` right before ``/``."""
    for m in _DIV_AFTER_PAREN.finditer(code):
        if _group_has_minus(code, m.start()):
            return True
    return False


def _group_has_minus(code: str, close: int) -> bool:
    """Does the bracket group ending at ``code[close] == ')'`` hold a ``-`` outside nested
    brackets, or is it a redundant pair around such a group (``((a - b)) / c``)?"""
    depth = 0
    i = close - 1
    while i >= 0:
        ch = code[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                inner = code[i + 1:close].strip()
                if inner.startswith("(") and inner.endswith(")"):
                    return _group_has_minus(code, code.rindex(")", i, close))
                return False
            depth -= 1
        elif ch == "-" and depth == 0:
            return True
        i -= 1
    return False


def _inverse_call(code: str) -> bool:
    """A call (not a ``def``/``class`` name) whose name has a token of ``_INVERSE_WORDS``
    (``tokens`` lower-cases, so the words are looked up in the lower-cased code)."""
    lower = code.lower()
    for m in _INVERSE_WORD.finditer(lower):
        start = m.start()
        while start > 0 and (lower[start - 1].isalnum() or lower[start - 1] == "_"):
            start -= 1
        end = _IDENT_END.match(lower, m.end()).end()
        if not tokens(code[start:end]) & _INVERSE_WORDS or not _OPEN_PAREN.match(code, end):
            continue
        if _DEF_BEFORE.search(code, max(0, start - 16), start):
            continue
        return True
    return False


def gate_text(src: str) -> bool:
    """The rule's own precondition, on the raw source (``gate`` refines it for the prefilter)."""
    return bool("return" in src and GEN_TEXT.search(src) and _SCALE_TEXT.search(src))


class OutputNotRescaled(Rule):
    id = "DP401"
    name = "output-not-rescaled"
    category = "processing"
    severity = "warning"
    summary = "training data is scaled but the generator output is returned without the inverse transform"
    rationale = (
        "A generator trained on min-max (or standardised) data produces samples in [0, 1] (or "
        "unit scale). When the implementation scales its input — `(x - min)/(max - min)`, "
        "`MinMaxScaler().fit_transform(x)` — and returns the generator output as-is (updated, "
        "borealis), the synthetic data is not in the input's units, so every downstream use "
        "(utility metrics, audits, released tables) is wrong. Fix: keep the transform (with "
        "public or DP bounds) and apply its inverse — `x * (max - min) + min`, "
        "`scaler.inverse_transform(x)` — before returning samples. Only samples returned by a "
        "sampling or output entry point (`sample`, `generate`, `synthesize`, `postprocess`…) of a "
        "model whose own fit (class, enclosing function or module-level training code) scaled "
        "the data count, in code with a DP context; metric helpers and drivers that compare "
        "scaled real with scaled synthetic data return scores, not samples."
    )
    # a release needs generator output (scaling words are far too common to prefilter on)
    TRIGGERS = ("gen", "Gen", "GEN", "G_", "G(", "netG", "fake", "Fake", "synth", "Synth")

    VALID = (
        # original 2018 shape: scaled, then mapped back
        """
import numpy as np
def pategan(x, generator, n):
    mn, mx = np.min(x, 0), np.max(x, 0)
    x = (x - mn) / (mx - mn + 1e-8)
    train(x)
    out = generator(np.random.uniform(0, 1, (n, 4)))
    return out * (mx - mn + 1e-8) + mn
""",
        # sklearn scaler and inverse_transform
        """
from sklearn.preprocessing import MinMaxScaler
class Synth:
    def fit(self, data):
        self.scaler = MinMaxScaler()
        self.train(self.scaler.fit_transform(data))
    def sample(self, n):
        z = self.noise(n)
        return self.scaler.inverse_transform(self.generator(z).detach().numpy())
""",
        # no scaling at all
        """
import torch
class GAN:
    def sample(self, n):
        z = torch.randn(n, self.dim)
        return self.generator(z).detach().numpy()
""",
        # a named denormalisation helper
        """
import numpy as np
def normalization(data):
    lo, hi = np.nanmin(data, 0), np.nanmax(data, 0)
    return (data - lo) / (hi - lo + 1e-6), (lo, hi)

def renormalization(data, params):
    lo, hi = params
    return data * (hi - lo + 1e-6) + lo

def run(data, G):
    norm, params = normalization(data)
    fit(norm)
    return renormalization(G(len(data)), params)
""",
        # scaling of something that is not returned from a generator
        """
import numpy as np
def zscore(x):
    return (x - np.mean(x)) / np.std(x)
def summary(x):
    return zscore(x).max()
""",
        # a driver that compares scaled real with scaled synthetic data returns a score
        """
from sklearn.preprocessing import StandardScaler
def benchmark(real, model, epsilon):
    scaler = StandardScaler().fit(real)
    model.fit(real, epsilon=epsilon)
    synthetic = model.generator(model.noise(len(real)))
    return distance(scaler.transform(real), scaler.transform(synthetic))
""",
        # a metric helper next to a scaler; the model class never scales
        """
import numpy as np
from sklearn.preprocessing import MinMaxScaler
def utility(real, fake):
    scaler = MinMaxScaler().fit(real)
    return np.abs(scaler.transform(real).mean(0) - scaler.transform(fake).mean(0)).sum()
class DPGenerator:
    def sample(self, n):
        return self.generator(np.random.randn(n, self.dim))
""",
        # a GAN that claims no privacy: unscaled output is a utility bug, not a privacy bug
        """
import torch
from sklearn.preprocessing import MinMaxScaler
class TabularGAN:
    def fit(self, x):
        self.train_loop(MinMaxScaler().fit_transform(x))
    def sample(self, n):
        return self.generator(torch.randn(n, self.nz)).detach().numpy()
""",
        # fake batches drawn for the training loop are not released
        """
import torch
class Trainer:
    def fit(self, x):
        x = (x - x.min(0).values) / (x.max(0).values - x.min(0).values)
        self.loop(x)
    def sample_fake_batch(self, n):
        return self.netG(torch.randn(n, self.nz))
""",
    )

    INVALID = (
        # updated shape: min-max scaled with data bounds, output returned as generated
        """
import numpy as np
def pate_gan(x_train, params):
    data_min = np.min(x_train, axis=0)
    data_max = np.max(x_train, axis=0)
    x_train = (x_train - data_min) / (data_max - data_min + 1e-8)
    train_loop(x_train, params)
    x_hat = sess.run(G_sample, feed_dict={Z: sample_z(len(x_train), params["dim"])})
    return x_hat  # <-
""",
        # borealis shape: torch model scales with MinMaxScaler, generate() returns raw output
        """
import torch
from sklearn.preprocessing import MinMaxScaler
class PATE_GAN:
    def train(self, x):
        x = MinMaxScaler().fit_transform(x)
        self.fit_loop(torch.tensor(x))
    def generate(self, n):
        z = torch.rand(n, self.z_dim)
        synthetic = self.generator(z)
        return synthetic.detach().cpu().numpy()  # <-
""",
        # attribute bounds in __init__-like fit, method-call min/max, separate range variable
        """
class PrivateModel:
    def fit(self, X):
        self.lo = X.min(axis=0)
        rng = X.max(axis=0) - self.lo
        X = (X - self.lo) / rng
        self._train(X)
    def sample(self, n):
        return self.gen(self._latent(n)).numpy()  # <-
""",
        # standardisation, output of a netG call returned through an intermediate
        """
import numpy as np
def fit_and_sample(data, n, netG, epsilon):
    mu, sd = data.mean(0), data.std(0)
    data = (data - mu) / sd
    train(data)
    fake = netG(np.random.randn(n, 16))
    out = np.asarray(fake)
    return out  # <-
""",
        # torch min/max with .values
        """
import torch
def train_and_generate(x, generator, n):
    \"\"\"Trains the generator with DP-SGD, then samples n rows.\"\"\"
    lo = torch.min(x, dim=0).values
    hi = torch.max(x, dim=0).values
    x = (x - lo) / (hi - lo)
    optimise(generator, x)
    return generator(torch.randn(n, 8))  # <-
""",
        # StandardScaler, netG output returned from a sampling method
        """
from sklearn.preprocessing import StandardScaler
import torch
class DPGAN:
    def fit(self, X):
        self.scaler = StandardScaler().fit(X)
        self._loop(self.scaler.transform(X))
    def sample(self, n):
        with torch.no_grad():
            rows = self.netG(torch.randn(n, self.nz))
        return rows.numpy()  # <-
""",
        # sampler returned as a closure from the training function; rows and labels returned
        """
import numpy as np
def train_pategan(x, epsilon, delta):
    lo, hi = x.min(0), x.max(0)
    x = (x - lo) / (hi - lo)
    fit_teachers(x, epsilon, delta)
    def synthesize(n):
        rows = generator(np.random.uniform(size=(n, 8)))
        return rows, np.ones(n)  # <-
    return synthesize
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
        * forward scaling (:meth:`_scales`): a call of a sklearn scaler, a call of a local
          ``def normalize…/standardize…/minmax…``, or a ``(a - b) / c`` division — libcst only
          sees a subtraction as the left operand of ``/`` when it is parenthesised;
        * a release (:meth:`_releases`): a generator call (``G(z)``, ``self.gen.sample(n)``,
          ``sess.run(G_sample)``), or an output function (``def sample…/postprocess…``)
          whose generator-named parameter seeds the taint;
        * no inverse transform (:meth:`_inverts`): a call whose name has an inverse word
          (``scaler.inverse_transform(…)``, ``renormalization(…)``) rules every finding out.
        """
        if "return" not in src or not (has_any(src, _SCALE_LITERALS) or _DIV_RAW.search(src)):
            return False
        if not (gen_called_raw(src) or _OUTPUT_DEF.search(src) and _seeded_output(src, None)):
            return False
        code = code_only(src)
        if "return" not in code:
            return False
        if not (_SCALER_CALL.search(code) or _scale_def(code) or _centred_division(code)):
            return False
        if not (gen_text(src, code, called=True) or _seeded_output(src, code)):
            return False
        return not _inverse_call(code)

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a scaling site (``_scaling_sites``: a scaler call, a call of a local
        normalising function, a ``(x - a) / b``), no call named for inverting (``_inverts``), and a
        function returning a value that is named for sampling/output or holds a site itself."""
        defined = {f.name for f in facts.functions}
        sites: list[ast.AST] = []
        for call in facts.calls:
            name = ast_call_name(call)
            if tokens(name) & _INVERSE_WORDS:
                return False
            if name in _SCALERS or tokens(name) & _SCALE_FUNCS and name in defined:
                sites.append(call)
        sites += [b for b in facts.binops(ast.Div) if isinstance(b.left, ast.BinOp) and isinstance(b.left.op, ast.Sub)]
        if not sites:
            return False
        holders = {id(f) for s in sites if (f := facts.enclosing_function(s)) is not None}
        for func in facts.functions:
            words_ = tokens(func.name)
            if words_ & _HELPER_WORDS:
                continue
            if not (words_ & (_SAMPLING_FUNCS | _OUTPUT_FUNCS) or id(func) in holders):
                continue
            returns = [n for n in ast.walk(func) if isinstance(n, ast.Return) and n.value is not None
                       and facts.enclosing_function(n) is func]
            # a release returns generated samples (``_is_generated`` of ``_releases``)
            if returns and any(ast_generated(r.value, ast_gen_taint(func)) for r in returns):  # type: ignore[arg-type]
                return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        if not gate_text(self.ctx.source):
            return
        index = index_for(self.ctx)
        sites = self._scaling_sites(index)
        if not sites or self._inverts(index):
            return
        for func in index.functions:
            if not any(_model_scope(site, func, index) for site in sites):
                continue
            releases = self._releases(func, index, sites)
            # a model sampled here that claims no privacy has no privacy bug; a helper handed
            # samples from elsewhere (a driver's postprocess) cannot tell, so it is judged as is
            if releases and contains_generator_call(func.body) and not self.ctx.analysis.in_dp_context(func):
                continue
            for ret in releases:
                self.report(
                    ret,
                    "the training data is scaled before training but this generator output is "
                    "returned without the inverse transform, so samples are not in the input's "
                    "units; map them back with the stored transform (x·(max−min)+min or "
                    "scaler.inverse_transform)",
                )

    # ---- forward scaling ----------------------------------------------------------------------
    def _kinds(self, expr: cst.CSTNode, index: ModuleIndex, depth: int = 2) -> set[str]:
        out: set[str] = set()
        for node in walk(expr):
            if isinstance(node, cst.Call):
                kind = _CALL_KIND.get(call_name(node))
                if kind:
                    out.add(kind)
            elif isinstance(node, (cst.Name, cst.Attribute)):
                name = dotted(node)
                if name is None:
                    continue
                out |= self._name_kinds(name, index, depth)
        return out

    def _name_kinds(self, name: str, index: ModuleIndex, depth: int) -> set[str]:
        cache: dict[tuple[str, int], set[str]] = self.__dict__.setdefault("_kind_cache", {})
        key = (name, depth)
        if key not in cache:
            cache[key] = set()  # cycles (``x = x - x.min()``) resolve to "nothing known"
            last = name.split(".")[-1].lower()
            out = {kind for pat, kind in _NAME_KIND if pat.search(last)}
            values = self._values(index).get(name, ())
            # names rebound many times are generic (``x``, ``out``): their values say nothing
            if depth > 0 and len(values) <= 4:
                for value in values:
                    out |= self._kinds(value, index, depth - 1)
            cache[key] = out
        return cache[key]

    def _values(self, index: ModuleIndex) -> dict[str, list[cst.BaseExpression]]:
        cache = getattr(self, "_value_map", None)
        if cache is None:
            cache = {}
            for key, value, stmt in assignments_in(index.module, index):
                if not isinstance(stmt, (cst.For, cst.CompFor)):
                    cache.setdefault(key, []).append(value)
            self._value_map = cache
        return cache

    def _scaling_sites(self, index: ModuleIndex) -> list[cst.CSTNode]:
        """Calls of a scaler or of a local scaling helper, and ``(x - min) / range`` divisions."""
        out: list[cst.CSTNode] = []
        for call in index.calls:
            name = call_name(call)
            if name in _SCALERS or tokens(name) & _SCALE_FUNCS and index.functions_named(name):
                out.append(call)
        for binop in index.binops:
            if not isinstance(binop.operator, cst.Divide):
                continue
            left = binop.left
            if not (isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Subtract)):
                continue
            if not self._kinds(left.right, index) & {"min", "mean"}:
                continue
            if self._kinds(binop.right, index) & {"max", "std", "range"}:
                out.append(binop)
        return out

    def _inverts(self, index: ModuleIndex) -> bool:
        for call in index.calls:
            if tokens(call_name(call)) & _INVERSE_WORDS:
                return True
        for binop in index.binops:
            if not isinstance(binop.operator, cst.Add):
                continue
            if not any(
                isinstance(side, cst.BinaryOperation) and isinstance(side.operator, cst.Multiply)
                for side in (binop.left, binop.right)
            ):
                continue
            if self._kinds(binop, index, depth=1) & {"min", "mean"}:
                return True
        return False

    # ---- releases -----------------------------------------------------------------------------
    def _releases(self, func: cst.FunctionDef, index: ModuleIndex, sites: list[cst.CSTNode]) -> list[cst.Return]:
        """Returns of generator samples from a sampling or output entry point (``sample``,
        ``generate``, ``synthesize``, ``postprocess``…) or from a function that itself scales and
        trains (``pate_gan(x)``)."""
        name_tokens = tokens(func.name.value)
        if name_tokens & _HELPER_WORDS:
            return []  # a latent or fake batch for the training loop is not a release
        if not name_tokens & (_SAMPLING_FUNCS | _OUTPUT_FUNCS) and not (
            any(index.enclosing_function(s) is func for s in sites) and _trains(func, index)
        ):
            return []
        rets = [
            r for r in walk(func.body)
            if isinstance(r, cst.Return) and r.value is not None and index.enclosing_function(r) is func
        ]
        if not rets:
            return []
        assigns = assignments_in(func, index)
        seed: set[str] = set()
        if tokens(func.name.value) & _OUTPUT_FUNCS:
            seed = {p.name.value for p in func.params.params if is_gen_identifier(p.name.value)}
        # samples stay samples through conversions, not through metrics or other computations
        samples = [(k, v, st) for k, v, st in assigns if _samples_of(v) is not None]
        tainted = taint(samples, lambda v: _is_generated(_samples_of(v), set()), seed)
        out = []
        for ret in rets:
            value = _samples_of(ret.value)
            if value is None or isinstance(value, cst.Name) and value.value in {"None", "self"}:
                continue
            if _is_generated(value, tainted):
                out.append(ret)
        return out


#: names of sampling entry points (what hands synthetic rows to the user)
_SAMPLING_FUNCS = {"sample", "samples", "generate", "generation", "synthesize", "synthesise", "synthesis", "synthetic"}
#: helpers that draw batches for the training loop, not releases
_HELPER_WORDS = {"fake", "fakes", "batch", "minibatch", "noise", "latent", "z", "prior", "loss"}
#: conversions that keep samples samples: ``np.asarray(x)``, ``x.detach().cpu().numpy()``
_SAMPLE_WRAPPERS = {
    "asarray", "array", "numpy", "cpu", "detach", "to_numpy", "DataFrame", "tensor", "float", "double",
    "squeeze", "reshape", "clip", "clamp", "copy", "clone", "concatenate", "vstack", "cat", "stack",
}


def _samples_of(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The sample expression a value is a conversion of, or None for other computations
    (``utility(real, fake)``, ``fake.mean()``)."""
    cur = expr
    if isinstance(cur, (cst.Tuple, cst.List)) and cur.elements:
        cur = cur.elements[0].value  # ``return rows, labels``
    while isinstance(cur, cst.Call):
        name = call_name(cur)
        if name not in _SAMPLE_WRAPPERS and not contains_generator_call(cur.func) and not is_generator_call(cur):
            return None
        if is_generator_call(cur):
            return cur
        if isinstance(cur.func, cst.Attribute) and not (dotted(cur.func.value) or "").split(".")[0] in {"np", "numpy", "torch", "pd", "pandas", "tf"}:
            cur = cur.func.value
        elif cur.args:
            cur = cur.args[0].value
        else:
            return None
    return cur


def _is_generated(value: cst.BaseExpression | None, tainted: set[str]) -> bool:
    if value is None:
        return False
    if isinstance(value, cst.Call) and is_generator_call(value):
        return True
    name = dotted(value.value if isinstance(value, cst.Subscript) else value)
    return name is not None and name in tainted


def _trains(func: cst.FunctionDef, index: ModuleIndex) -> bool:
    """Does ``func`` call something named for training (``train_loop(x)``, ``fit(norm)``)?"""
    return any(
        isinstance(n, cst.Call) and tokens(call_name(n)) & {"fit", "train", "training", "optimise", "optimize", "loop"}
        for n in walk(func.body)
    )


def _model_scope(site: cst.CSTNode, func: cst.FunctionDef, index: ModuleIndex) -> bool:
    """Is the scaling ``site`` part of the model ``func`` samples from: inside ``func`` or a
    function enclosing it, in ``func``'s class, or — for a module-level function — at module
    level or in a module-level training function?"""
    owner = index.enclosing_function(site)
    scope: cst.CSTNode | None = func
    while scope is not None:
        if owner is scope:
            return True
        scope = index.enclosing_function(scope)
    cls = index.enclosing_class(func)
    if cls is not None:
        return index.enclosing_class(site) is cls
    if owner is None:
        return True
    preprocessing = {"fit", "train", "training", "preprocess", "prepare", "encode", "transform"} | _SCALE_FUNCS
    return index.enclosing_class(owner) is None and bool(tokens(owner.name.value) & preprocessing)
