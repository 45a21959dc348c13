"""DP203: the training labels (or their class ratios) reach the generator at sampling time."""
from __future__ import annotations

import ast

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts, read_names
from dpcheck.analysis.astfacts import target_names as ast_target_names
from dpcheck.analysis.astfacts import call_name as ast_call_name
from dpcheck.analysis.astfacts import dotted as ast_dotted

from dpcheck.analysis.syntax import call_name, dotted, param_names, refs, walk, words
from dpcheck.analysis.taint import has_training_step
from dpcheck.codetext import prose_free
from dpcheck.rule import Rule
from dpcheck.analysis.dataindex import (
    Dp2Index,
    has_noise,
    index_for,
    is_noise_call,
)

_LABEL_WORDS = {"y", "labels", "label", "targets", "target"}
_NOT_LABEL = {
    "ratio", "ratios", "prior", "priors", "public", "pub", "dim", "dims", "col", "column", "cols",
    "columns", "idx", "index", "indices", "name", "names", "num", "n", "count", "fake", "gen",
    "generated", "synth", "synthetic", "pred", "preds", "hat", "size", "noise", "noisy", "dp",
    "encoder", "smooth", "real", "fn", "key", "type", "dtype", "shape", "loss", "weight", "weights",
    "test", "val", "valid", "validation", "eval", "holdout",
}
_SAMPLING_FUNC = {"sample", "samples", "generate", "gen", "synth", "synthesize", "synthesise", "synthetic", "produce"}
_RATIO_FUNCS = {"mean", "bincount", "value_counts", "Counter", "average", "histogram", "nanmean"}
_DRAW_FUNCS = {"choice", "multinomial", "binomial", "bernoulli", "categorical", "Categorical", "sample", "Bernoulli", "Multinomial", "OneHotCategorical"}
_PRESERVE = {
    "reshape", "asarray", "array", "tensor", "as_tensor", "from_numpy", "astype", "float", "long",
    "to", "cpu", "numpy", "copy", "one_hot", "to_categorical", "repeat", "tile", "concatenate", "cat",
    "hstack", "vstack", "column_stack", "stack", "expand_dims", "unsqueeze", "squeeze", "ravel",
    "flatten", "view", "permutation", "get_dummies", "FloatTensor", "LongTensor", "Tensor", "type",
    "transform", "expand", "repeat_interleave", "to_numpy", "double", "int", "c_", "r_", "list",
    "sum", "detach", "clone", "convert_to_tensor", "constant", "cast", "to_dict", "tolist", "to_list",
    "sort_index", "sort_values",
}
_GENERATOR_WORDS = {"generator", "gen", "g", "netg", "decoder", "generate"}
_LABELS, _RATIOS = "labels", "class ratios"

#: prefilter texts (``LabelDistributionLeak.applies_to``): where the rule's taint can start
_LABEL_PIECE = re.compile(r"(?i:label|target)|(?:(?<![A-Za-z0-9])[yY]|(?<=[a-z0-9])Y)(?![a-z0-9])")
_LAST_COLUMN = re.compile(r"-\s*1\s*\]")
_FREQUENCY_CALL = re.compile(r"\bvalue_counts\b|\breturn_counts\b")
_SAMPLER_CALL = re.compile(r"(?i:sampler|cond)\w*\s*\(")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _run_around(text: str, start: int, end: int) -> str:
    """The identifier-like run of letters, digits and ``_`` holding ``text[start:end]``."""
    while start > 0 and text[start - 1] in _ALNUM:
        start -= 1
    while end < len(text) and text[end] in _ALNUM:
        end += 1
    return text[start:end]


_SINK_CANDIDATE = re.compile(
    r"(?i:gen|sampl|synth|decoder|netg|run|predict|forward|__call__|produce|condition|condvec)\w*\s*\("
    r"|(?<![A-Za-z0-9])G\s*\("
)
_SAMPLING_DEF = re.compile(r"\bdef[ \t]+(\w+)")


def _has_sink(code: str) -> bool:
    """A necessary condition of any finding: a function named for sampling (whose returned labels
    are reported), or a call ``_is_generator_call``/``_is_sampling_call`` could accept that has
    an argument for the labels to reach."""
    if any(words(name) & _SAMPLING_FUNC for name in _SAMPLING_DEF.findall(code)):
        return True
    for m in _SINK_CANDIDATE.finditer(code):
        paren = m.end() - 1
        rest = code[paren + 1:paren + 200].lstrip()
        if rest.startswith(")"):
            continue  # no argument
        end = paren
        while end > 0 and code[end - 1] in " \t\r\n":
            end -= 1
        start = end
        while start > 0 and (code[start - 1] in _ALNUM or code[start - 1] == "."):
            start -= 1
        chain = code[start:end]
        receiver, _, name = chain.rpartition(".")
        last = receiver.rpartition(".")[2]
        if name == "run" or name in {"G", "netG", "net_G"} or words(name) & {"generator", "netg", "decoder"}:
            return True
        if name in {"predict", "sample", "forward", "__call__"} and (
                words(last) & _GENERATOR_WORDS or last in {"G", "netG"} or not receiver):
            return True
        if name in _SAMPLING_CALLS and not (
                receiver.split(".")[0] in {"np", "numpy", "random", "torch", "rng", "tf"} or _is_data_name(last)):
            return True
    return False


def _has_label_source(code: str) -> bool:
    """A necessary condition of any finding: a name or string key with a label word piece
    (``y_train``, ``labels``, ``df["target"]``), a last-column read ``[..., -1]``, category
    frequencies (``value_counts``, ``return_counts``) or a call of a condition sampler
    (``DataSampler(``, ``sample_condvec(``); every label/ratio the rule tracks starts at one."""
    if _LAST_COLUMN.search(code) or _FREQUENCY_CALL.search(code):
        return True
    for m in _SAMPLER_CALL.finditer(code):
        if words(_run_around(code, m.start(), m.start())) & {"sampler", "condvec", "cond"}:
            return True
    return any(words(_run_around(code, m.start(), m.end())) & _LABEL_WORDS for m in _LABEL_PIECE.finditer(code))


class LabelDistributionLeak(Rule):
    id = "DP203"
    name = "label-distribution-leak"
    category = "labels_distribution"
    severity = "error"
    requires_dp_context = True
    summary = "training labels or class ratios computed from the training data are fed to the generator at sampling time"
    rationale = (
        "A conditional generator needs labels to condition on when it samples. Feeding it the "
        "real training labels (one synthetic row per real row with the same label, as "
        "`original` does) or labels drawn from the exact class ratios of the training data "
        "(`np.bincount(y) / len(y)`, `value_counts(normalize=True)`, `y.mean()`) releases the "
        "label distribution of the private data unperturbed: it never went through the "
        "PATE mechanism, so it is outside the (ε, δ) guarantee and the synthetic data "
        "reproduces it exactly. The same holds for conditions drawn by a sampler built from "
        "the training data's category frequencies (a CTGAN-style `DataSampler(train_data)`, or "
        "`train[cond_col].value_counts(normalize=True)` of any conditioning column). "
        "Labels that go into the DP mechanism itself (a `generate(X, y, …)` that trains the "
        "teachers, the noisy-vote aggregation, a helper of the same file that noises a statistic "
        "of the labels and returns only draws from it, as supervised RON-Gauss does) are not reported. Fix: sample labels from a DP estimate of the class ratios "
        "(noisy counts charged to the budget) or take them as public input."
    )
    TEXT_AFTER_GATE = True
    TRIGGERS = (
        "netG", "G_sample", "run(G", "run([G", "generator(", "Generator(", "enerator.", ".G(", " G(",
        "gen(", "self.gen", "gen.predict", "ecoder(", ".generate(", ".sample(", ".synthesi",
        "def sample", "def generate", "def synth", "def _sample", "def _generate", ".sample_condvec(",
    )

    @classmethod
    def applies_to(cls, source: str) -> bool:
        """A generator or sampling call (the trigger substrings) and something the labels or
        frequencies are traced from (``_has_label_source``), read without comments and docstrings."""
        if not super().applies_to(source):
            return False
        code = prose_free(source)
        return any(t in code for t in cls.TRIGGERS) and _has_label_source(code) and _has_sink(code)

    VALID = (
        # frequencies of a public reference table, or noisy counts, drive the conditions
        """
import numpy as np
class DPCondGAN:
    def fit(self, train, public_df, cond_col, epsilon):
        self.freqs = public_df[cond_col].value_counts(normalize=True)
        counts = train[cond_col].value_counts() + np.random.laplace(0, 1 / epsilon, self.k)
        self.noisy = counts.clip(lower=0) / counts.clip(lower=0).sum()
    def sample(self, n):
        cond = np.random.choice(self.freqs.index, size=n, p=self.freqs.values)
        more = np.random.choice(self.noisy.index, size=n, p=self.noisy.values)
        return self.generator(cond), self.generator(more)
""",
        # labels from a DP estimate of the class ratios
        """
import numpy as np
class CondPATEGAN:
    def fit(self, X, y, epsilon):
        counts = np.bincount(y, minlength=self.k) + np.random.laplace(scale=2 / epsilon, size=self.k)
        self.ratios = np.clip(counts, 0, None) / np.clip(counts, 0, None).sum()
    def sample(self, n):
        y = np.random.choice(self.k, size=n, p=self.ratios)
        return self.generator(self.z(n), y)
""",
        # labels supplied by the caller as public input
        """
class CondGAN:
    def fit(self, X, y):
        self.y_train = y
    def sample(self, n, labels):
        return self.generator(self.latent(n), labels)
""",
        # conditioning on the real batch labels during training is fine
        """
import torch
def train(G, D, x_train, y_train, iters, opt):
    for it in range(iters):
        idx = torch.randint(0, len(x_train), (64,))
        fake = G(torch.randn(64, 8), y_train[idx])
        loss = D(fake).mean()
        loss.backward()
        opt.step()
""",
        # uniform over the classes seen (the class set, not its distribution)
        """
import numpy as np
class Model:
    def fit(self, X, y):
        self.classes = np.unique(y)
    def generate(self, n):
        c = np.random.choice(self.classes, n)
        return self.generator(np.random.randn(n, 4), c)
""",
        # ratios as a parameter of generate (borealis)
        """
import torch
class PATE_GAN:
    def generate(self, num_rows, class_ratios=None):
        categories = torch.multinomial(class_ratios, num_rows, replacement=True).float()
        return self.generator(self._latent(num_rows, categories))
""",
        # train-and-sample in one call: the labels go into the teachers' training, not the sampler
        """
import pandas as pd
df = pd.read_csv("adult.csv")
X_train, y_train = df.drop(columns="income"), df["income"]
synth = PATEGAN(epsilon=1.0, delta=1e-5)
rows = synth.generate(X_train, y_train, n_samples=1000)
more = synth.sample(500, data=df, labels=y_train)
""",
        # labels feed the noisy-vote aggregation (the DP mechanism) inside fit and sample
        """
import numpy as np
class PATE:
    def fit(self, X, y, epsilon):
        self.y_train = y
        for it in range(self.iters):
            self.generate(X, y, 64, epsilon)
    def sample(self, n):
        labels = self.aggregate_votes(self.teachers, self.y_train)
        return self.generator(np.random.randn(n, 8), labels)
""",
        # a conditional GAN with no privacy claim may reuse its training class ratios
        """
import numpy as np
class ConditionalGAN:
    def fit(self, X, y):
        self.class_ratios = np.bincount(y) / len(y)
    def sample(self, n):
        c = np.random.choice(len(self.class_ratios), n, p=self.class_ratios)
        return self.generator(np.random.randn(n, 8), c)
""",
        # supervised RON-Gauss: the labels join the features in a covariance that is noised, and
        # the helper returns only draws from the noisy covariance
        """
import numpy as np
class RONGauss:
    def generate(self, X, y=None, n_samples=None, max_y=None):
        return self._supervised_rongauss(X, y, n_samples or len(X), max_y)
    def _supervised_rongauss(self, X, y, n_samples, max_y):
        (n, p) = X.shape
        augmented_mat = np.hstack((X, y.reshape(len(y), 1)))
        cov_matrix = np.inner(augmented_mat.T, augmented_mat.T) / n
        b = (2.0 + 4.0 * max_y + max_y ** 2) / (n * self.epsilon_cov)
        noise = np.random.normal(scale=b, size=(p + 1, p + 1))
        cov_dp = cov_matrix + noise
        synth_data = np.random.multivariate_normal(np.zeros(p + 1), cov_dp, n_samples)
        return synth_data[:, :-1], synth_data[:, -1]
""",
        # the same with a module-level helper: noisy mean and covariance of the joint table
        """
import numpy as np
def _noisy_joint(X, labels, eps):
    joint = np.column_stack([X, labels])
    mean = joint.mean(0) + np.random.laplace(0, 2 / (len(X) * eps), joint.shape[1])
    noisy_cov = np.cov(joint.T) + np.random.laplace(0, 4 / (len(X) * eps), (joint.shape[1],) * 2)
    rows = np.random.multivariate_normal(mean, noisy_cov, len(X))
    return rows[:, :-1], rows[:, -1]
def generate(X, labels, epsilon):
    return _noisy_joint(X, labels, epsilon)
""",
        # a condition sampler built from public metadata (no training data) at sampling time
        """
import torch
class DPCTGANLike:
    def fit(self, data, epsilon, delta):
        self._sampler = CondSampler(self.metadata.categories, epsilon=epsilon)
    def sample(self, n):
        cond = self._sampler.sample_condvec(n)
        return self._generator(torch.cat([torch.randn(n, 8), torch.as_tensor(cond)], 1))
""",
    )

    INVALID = (
        # original: generation fed the real training labels, one row per real row
        """
import numpy as np
def PATE_GAN(X_train, Y_train, epsilon, delta, niter):
    No = len(X_train)
    for it in range(niter):
        sess.run(D_solver, feed_dict={X: X_train})
    def generate(n):
        New_Y_train = Y_train[np.arange(n) % No]
        New_X_train = sess.run(G_sample, feed_dict={Z: sample_Z(n), Y: np.reshape(New_Y_train, [n, 1])})  # <-
        return New_X_train, New_Y_train
    return generate
""",
        # stored training labels resampled at generation time (torch)
        """
import torch
import torch.nn.functional as F
class DPCGAN:
    def fit(self, x, y):
        self.y = torch.as_tensor(y)
    def sample(self, n):
        labels = self.y[torch.randint(0, len(self.y), (n,))]
        z = torch.randn(n, self.z_dim)
        return self.generator(torch.cat([z, F.one_hot(labels, self.k)], 1))  # <-
""",
        # exact class ratios of the training labels
        """
import numpy as np
class PATEGAN:
    def fit(self, X, y):
        self.class_ratios = np.bincount(y) / len(y)
    def sample(self, n):
        c = np.random.choice(len(self.class_ratios), n, p=self.class_ratios)
        return self.G(self.noise(n), c)  # <-
""",
        # pandas value_counts of the label column, keras generator
        """
import numpy as np
class Synth:
    def train(self, df, epsilon, target="label"):
        self.p = df[target].value_counts(normalize=True)
    def generate(self, n):
        y = np.random.choice(self.p.index, size=n, p=self.p.values)
        return self.gen.predict([np.random.normal(size=(n, 16)), y])  # <-
""",
        # label column of the training data returned with the synthetic features
        """
import numpy as np
class Model:
    '''Differentially private generator.'''
    def fit(self, data):
        self.labels = data[:, -1]
    def sample(self, n):
        x = self.generator(np.random.rand(n, 8))
        return np.column_stack([x, self.labels[:n]])  # <-
""",
        # Bernoulli prior from the training labels' mean, after the training loop
        """
import torch
def run(x_train, y_train, netG, opt, epochs, n, noise_multiplier):
    for _ in range(epochs):
        loss = netG(x_train).mean()
        loss.backward()
        opt.step()
    prior = y_train.float().mean()
    y_syn = torch.bernoulli(prior.expand(n))
    return netG(torch.randn(n, 4), y_syn)  # <-
""",
        # class frequencies of the label column handed to a conditional sampler
        """
import numpy as np
class CTGANLike:
    def fit(self, train_data, target_col, epsilon):
        self.freq = train_data[target_col].value_counts(normalize=True).to_dict()
    def sample(self, n):
        return self.sampler.sample_conditions(n, self.freq)  # <-
""",
        # unique/return_counts ratios and a 0/1 label mean, each used to draw the conditions
        """
import numpy as np
import torch
class DPCGAN:
    def fit(self, X, y, noise_multiplier):
        classes, counts = np.unique(y, return_counts=True)
        self.p = counts / counts.sum()
        self.pos_rate = y.mean()
    def generate(self, n):
        cond = np.random.choice(len(self.p), size=n, p=self.p)
        flags = np.random.binomial(1, self.pos_rate, size=n)
        return self.generator(torch.randn(n, 8), cond), self.generator(torch.randn(n, 8), flags)  # <-
""",
        # torch bincount over the labels divided by their number, sampled with multinomial
        """
import torch
class PrivateSynth:
    def train(self, x_train, y_train, epsilon):
        self.probs = torch.bincount(y_train).float() / len(y_train)
    def synthesize(self, n):
        labels = torch.multinomial(self.probs, n, replacement=True)
        return self.netG(torch.randn(n, 16), labels)  # <-
""",
        # a train-and-sample function whose sampler is conditioned on the real labels afterwards
        """
def train_and_sample(X, y, epsilon, n):
    gen = fit_gan(X, y, epsilon)
    return gen.sample(n, conditions=y)  # <-
""",
        # category frequencies of a conditioning column (any column, not only the label)
        """
import numpy as np
import pandas as pd
class DPCondGAN:
    def fit(self, train, cond_col, epsilon):
        self.freqs = train[cond_col].value_counts(normalize=True)
        self.counts = pd.Series(train[cond_col]).value_counts()
        self.per_col = {c: train[c].astype(str).value_counts(normalize=True) for c in self.cat_cols}
        self._train_dp(train, epsilon)
    def sample(self, n):
        cond = np.random.choice(self.freqs.index, size=n, p=self.freqs.values)
        first = self.generator(cond)  # <-
        p = self.counts / self.counts.sum()
        other = np.random.choice(p.index, size=n, p=p.values)
        second = self.generator(other)  # <-
        sex = np.random.choice(self.per_col["sex"].index, size=n, p=self.per_col["sex"].values)
        third = self.generator(sex)  # <-
        return first, second, third
""",
        # a helper that adds noise to the features but hands the real labels back
        """
import numpy as np
class NoisyResampler:
    def _draw(self, X, y, n, scale):
        idx = np.random.randint(0, len(y), n)
        x_syn = X[idx] + np.random.laplace(0, scale, (n, X.shape[1]))
        labels = y[idx]
        return x_syn, labels
    def generate(self, X, y, n, epsilon):
        return self._draw(X, y, n, scale=2 / epsilon)  # <-
""",
        # CTGAN-style condition sampler built from the training data, drawn from at sampling time
        """
import torch
class DPCTGANLike:
    def fit(self, data, epsilon, delta):
        train_data = self._transformer.transform(data)
        self._data_sampler = DataSampler(train_data, self._transformer.transformers)
    def sample(self, n):
        z = torch.randn(n, self.dim)
        c1, m1, col, opt = self._data_sampler.sample_condvec(n)
        z = torch.cat([z, torch.from_numpy(c1)], dim=1)
        cond = self._data_sampler.sample_original_condvec(n)
        return self._generator(z), self._generator(torch.cat([z, torch.as_tensor(cond)], 1))  # <-
""",
    )

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding is a generator or sampling call whose arguments read a name of the rule's
        label/ratio environment, or a sampling function returning one. The environment is
        over-approximated for the whole file at once (``_ast_env``): no scopes, no order, nothing
        removed (noise, reassignment), every source counted whatever it reads."""
        candidates: list[ast.AST] = [
            arg for call in facts.calls if _ast_generator_or_sampling(call)
            for arg in (*call.args, *(k.value for k in call.keywords))
        ]
        for func in facts.functions:
            if words(func.name) & _SAMPLING_FUNC:
                candidates.extend(n.value for n in ast.walk(func) if isinstance(n, ast.Return) and n.value is not None)
        if not candidates:
            return False
        env = _ast_env(facts)
        return any(read_names(expr) & env for expr in candidates)

    def visit_Module(self, node: cst.Module) -> None:
        src = self.ctx.source
        index = index_for(self.ctx)
        class_env: dict[cst.ClassDef, dict[str, str]] = {}
        for cls in index.classes:
            env: dict[str, str] = {}
            methods = [m for m in cls.body.body if isinstance(m, cst.FunctionDef)]
            for _ in range(2):
                for fn in methods:
                    local = _function_env(fn, dict(env), index)
                    env.update({k: v for k, v in local.items() if k.startswith("self.")})
            class_env[cls] = env
        envs: dict[cst.FunctionDef, dict[str, str]] = {}
        for fn in index.functions:  # pre-order: outer functions come before nested ones
            outer = index.enclosing_function(fn)
            cls = index.enclosing_class(fn)
            start: dict[str, str] = {}
            if cls is not None and (outer is None or index.inside(outer, cls)):
                start.update(class_env.get(cls, {}))
            if outer is not None and outer in envs:
                start.update(envs[outer])
            for p in param_names(fn):
                start.pop(p, None)
            envs[fn] = _function_env(fn, start, index)
            self._check(fn, envs[fn], index)
        self._check(index.module, _module_env(index.module), index)

    def _check(self, scope: cst.CSTNode, env: dict[str, str], index: Dp2Index) -> None:
        tainted = set(env)
        if not tainted:
            return
        fn = scope if isinstance(scope, cst.FunctionDef) else None
        body = fn.body if fn is not None else scope
        sampling = fn is not None and bool(words(fn.name.value) & _SAMPLING_FUNC)
        train_loops = [lp for lp in index.loops if index.enclosing_function(lp) is fn and has_training_step(lp)]
        reported = False
        for call in walk(body, into_scopes=False):
            if not isinstance(call, cst.Call):
                continue
            if any(index.inside(call, lp) for lp in train_loops):
                continue
            if _is_generator_call(call):
                if not sampling and not any(index.last[lp] < index.order[call] for lp in train_loops):
                    continue
            elif not _is_sampling_call(call) or _trains_too(call):
                continue
            hit = _tainted_in_args(call, tainted)
            if hit is None:
                continue
            self._report(call, hit, env[hit])
            reported = True
        if reported or not sampling:
            return
        for ret in walk(body, into_scopes=False):
            if isinstance(ret, cst.Return) and ret.value is not None:
                hits = sorted(n for n in _released_refs(ret.value, fn, index) if env.get(n) == _LABELS)
                if hits:
                    self._report(ret, hits[0], _LABELS)

    def _report(self, node: cst.CSTNode, name: str, kind: str) -> None:
        what = "the training labels, or conditions drawn with their exact frequencies," if kind == _LABELS \
            else "the class ratios of the training labels"
        self.report(
            node,
            f"{what} (`{name}`) reach the generator at sampling time, so the synthetic data "
            "reproduces the real label distribution outside the privacy budget; sample labels "
            "from a DP estimate of the class ratios or take them as public input",
        )


def _released_refs(expr: cst.BaseExpression, fn: cst.FunctionDef, index: Dp2Index) -> set[str]:
    """``refs`` of a returned value, less the arguments of a call to a helper of this module whose
    own returns never carry the matching parameter unnoised: ``return self._supervised(X, y, …)``
    where the helper adds noise to a statistic of ``y`` and returns only draws from it releases the
    mechanism's output, not the labels."""
    if not isinstance(expr, cst.Call):
        return refs(expr)
    helper = _local_callee(expr, fn, index)
    if helper is None:
        return refs(expr)
    params = param_names(helper)
    if isinstance(expr.func, cst.Attribute):
        params = params[1:]  # ``self``
    out = refs(expr.func.value) if isinstance(expr.func, cst.Attribute) else set()
    position = 0
    for arg in expr.args:
        if arg.star:
            return refs(expr)
        if arg.keyword is not None:
            param = arg.keyword.value
        elif position < len(params):
            param, position = params[position], position + 1
        else:
            return refs(expr)
        if param not in params or _returns_unnoised(helper, param):
            out |= refs(arg.value)
    return out


def _local_callee(call: cst.Call, fn: cst.FunctionDef, index: Dp2Index) -> cst.FunctionDef | None:
    """The function of this module ``call`` runs: ``self.name(…)`` a method of ``fn``'s class,
    ``name(…)`` a module-level function; None when not found here or not one definition."""
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        cls = index.enclosing_class(fn)
        found = [m for m in (cls.body.body if cls is not None else ())
                 if isinstance(m, cst.FunctionDef) and m.name.value == func.attr.value]
    elif isinstance(func, cst.Name):
        found = [f for f in index.functions if f.name.value == func.value
                 and index.enclosing_function(f) is None and index.enclosing_class(f) is None]
    else:
        return None
    return found[0] if len(found) == 1 and found[0] is not fn else None


def _noise_added(expr: cst.BaseExpression, noise: set[str]) -> bool:
    """A noise draw, or a sum with one (``cov + noise``, ``mean + np.random.laplace(…)``): what
    comes out is the mechanism's output."""
    if isinstance(expr, cst.Call):
        return is_noise_call(expr)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)):
        return any(has_noise(side) or refs(side) & noise or _noise_added(side, noise) for side in (expr.left, expr.right))
    return False


def _returns_unnoised(helper: cst.FunctionDef, param: str) -> bool:
    """Does a value of ``param`` reach a ``return`` of ``helper`` without noise added to it on the
    way? Flow-insensitive: an assignment, loop variable or ``append`` reading a carrier carries it
    (through any call), unless its value is a noise draw or a sum with noise."""
    flows: list[tuple[list[str], cst.BaseExpression]] = []
    for node in walk(helper.body, into_scopes=False):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and node.value is not None:
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            keys = [k for t in targets for k in refs(t) if k != "self"]
            flows.append((keys, node.value))
        elif isinstance(node, cst.For):
            flows.append(([k for k in refs(node.target)], node.iter))
        elif isinstance(node, cst.Call) and call_name(node) in {"append", "extend", "insert"} and node.args \
                and isinstance(node.func, cst.Attribute) and (key := dotted(node.func.value)) is not None:
            flows.append(([key], node.args[-1].value))
    noise = {k for keys, value in flows if has_noise(value) for k in keys}
    carriers = {param}
    changed = True
    while changed:
        changed = False
        for keys, value in flows:
            if set(keys) <= carriers or not refs(value) & carriers or _noise_added(value, noise):
                continue
            carriers.update(keys)
            changed = True
    return any(isinstance(r, cst.Return) and r.value is not None and refs(r.value) & carriers
               for r in walk(helper.body, into_scopes=False))


def _is_label_name(name: str) -> bool:
    ws = words(name.split(".")[-1])
    return bool(ws & _LABEL_WORDS) and not (ws & _NOT_LABEL) and not (ws & {"x", "z"})


def _is_data_name(name: str) -> bool:
    ws = words(name.split(".")[-1])
    return bool(ws & {"x", "data", "df", "dataset", "train", "table", "records"}) and not (ws & {"fake", "gen", "synth", "z"})


def _function_env(fn: cst.FunctionDef, env: dict[str, str], index: Dp2Index) -> dict[str, str]:
    data_params = {p for p in param_names(fn) if _is_data_name(p) and not _is_label_name(p)}
    if data_params or not (words(fn.name.value) & _SAMPLING_FUNC):
        # a sampling function that also takes the training data trains first: its labels are private
        for p in param_names(fn):
            if _is_label_name(p):
                env[p] = _LABELS
    for sub in walk(fn.body, into_scopes=False):
        if isinstance(sub, (cst.Assign, cst.AnnAssign)) and sub.value is not None:
            targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else [sub.target]
            for target in targets:
                if isinstance(target, (cst.Tuple, cst.List)) and isinstance(sub.value, (cst.Tuple, cst.List)) \
                        and len(target.elements) == len(sub.value.elements):
                    for t_el, v_el in zip(target.elements, sub.value.elements):
                        _bind(env, t_el.value, _kind(v_el.value, env, data_params))
                elif isinstance(target, (cst.Tuple, cst.List)):
                    kind = _kind(sub.value, env, data_params)
                    elements = [el.value for el in target.elements]
                    if isinstance(sub.value, cst.Call) and call_name(sub.value) == "unique":
                        for el in elements[:-1]:
                            _bind(env, el, None)
                        _bind(env, elements[-1], kind)
                    else:
                        for el in elements:
                            _bind(env, el, kind)
                else:
                    _bind(env, target, _kind(sub.value, env, data_params))
    return env


def _module_env(module: cst.Module) -> dict[str, str]:
    """Script code: label-like names assigned at top level hold the training labels."""
    env: dict[str, str] = {}
    data: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if not isinstance(small, (cst.Assign, cst.AnnAssign)) or small.value is None:
                continue
            pairs: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            for target in targets:
                if isinstance(target, (cst.Tuple, cst.List)) and isinstance(small.value, (cst.Tuple, cst.List)) \
                        and len(target.elements) == len(small.value.elements):
                    pairs.extend((t.value, v.value) for t, v in zip(target.elements, small.value.elements))
                elif isinstance(target, (cst.Tuple, cst.List)):
                    pairs.extend((t.value, small.value) for t in target.elements)
                else:
                    pairs.append((target, small.value))
            for target, value in pairs:
                name = dotted(target)
                if name is None:
                    continue
                kind = _kind(value, env, data)
                literal = isinstance(value, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.SimpleString,
                                             cst.Integer, cst.Float)) or (
                    isinstance(value, cst.Call) and call_name(value) in {"list", "tuple", "dict", "set", "range"})
                if kind is None and _is_label_name(name) and not has_noise(value) and not literal:
                    env[name] = _LABELS
                elif kind is not None:
                    env[name] = kind
                else:
                    env.pop(name, None)
                if _is_data_name(name):
                    data.add(name)
    return env


_SAMPLING_CALLS = {
    "generate", "sample", "synthesize", "synthesise", "generate_data", "generate_samples",
    "sample_data", "synthesize_data", "generate_synthetic", "sample_conditions", "sample_conditional",
    "conditional_sample", "sample_condvec", "generate_conditional", "sample_with_conditions",
}


def _trains_too(call: cst.Call) -> bool:
    """``model.generate(X_train, y_train, n)``: the call trains on the data it is given, so the labels
    feed the DP mechanism (teachers, noisy votes) rather than the sampler."""
    for arg in call.args:
        base = arg.value
        while isinstance(base, cst.Subscript) or (isinstance(base, cst.Attribute) and base.attr.value in {"values", "iloc", "loc"}):
            base = base.value
        name = dotted(base)
        if name is not None and _is_data_name(name) and not _is_label_name(name):
            return True
    return False


def _is_sampling_call(call: cst.Call) -> bool:
    name = call_name(call)
    if name not in _SAMPLING_CALLS or not isinstance(call.func, cst.Attribute):
        return name in _SAMPLING_CALLS and isinstance(call.func, cst.Name)
    receiver = dotted(call.func.value) or ""
    last = receiver.split(".")[-1]
    if receiver.split(".")[0] in {"np", "numpy", "random", "torch", "rng", "tf"} or _is_data_name(last):
        return False
    return True


def _bind(env: dict[str, str], target: cst.BaseExpression, kind: str | None) -> None:
    name = dotted(target)
    if name is None:
        return
    if kind is None:
        env.pop(name, None)
    else:
        env[name] = kind


def _kind(expr: cst.BaseExpression, env: dict[str, str], data: set[str]) -> str | None:
    if has_noise(expr):
        return None
    if isinstance(expr, (cst.Name, cst.Attribute)):
        name = dotted(expr)
        if name in env:
            return env[name]
        if isinstance(expr, cst.Attribute) and expr.attr.value in {"values", "T", "index"}:
            return _kind(expr.value, env, data)
        return None
    if isinstance(expr, cst.Subscript):
        inner = _kind(expr.value, env, data)
        if inner is not None:
            return inner
        if dotted(expr.value) in data or (isinstance(expr.value, cst.Attribute) and dotted(expr.value.value) in data):
            if _label_column(expr, env):
                return _LABELS
        if isinstance(expr.value, cst.Call) and call_name(expr.value) in {"eye", "identity"}:
            for el in expr.slice:
                if isinstance(el.slice, cst.Index) and _kind(el.slice.value, env, data) == _LABELS:
                    return _LABELS
        return None
    if isinstance(expr, cst.Call):
        name = call_name(expr) or ""
        parts = [a.value for a in expr.args]
        if isinstance(expr.func, cst.Attribute):
            parts.append(expr.func.value)
        kinds = [k for k in (_kind(p, env, data) for p in parts) if k is not None]
        if name in {"unique"}:
            counts = any(a.keyword is not None and a.keyword.value == "return_counts" for a in expr.args)
            return _RATIOS if counts and _LABELS in kinds else None
        if name == "pop" and isinstance(expr.func, cst.Attribute) and dotted(expr.func.value) in data and expr.args:
            return _LABELS if _label_key(expr.args[0].value, env) else None
        if not kinds and (_sampler_of_data(name, expr, data) or _frequencies_of_data(name, expr, data)):
            return _RATIOS
        if not kinds:
            return None
        if name in _RATIO_FUNCS:
            return _RATIOS
        if "sample" in words(name) or "condvec" in words(name):
            return _LABELS
        if name in _DRAW_FUNCS:
            return _LABELS
        if name in _PRESERVE:
            return _LABELS if _LABELS in kinds else _RATIOS
        return None
    if isinstance(expr, cst.BinaryOperation):
        kinds = {_kind(expr.left, env, data), _kind(expr.right, env, data)} - {None}
        if not kinds:
            return None
        if isinstance(expr.operator, cst.Divide):
            return _RATIOS
        return _LABELS if _LABELS in kinds else _RATIOS
    if isinstance(expr, cst.Comparison):
        kinds = {_kind(expr.left, env, data)} | {_kind(c.comparator, env, data) for c in expr.comparisons}
        return _LABELS if _RATIOS in kinds else None
    if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return _kind(expr.elt, env, data)
    if isinstance(expr, cst.DictComp):
        return _kind(expr.value, env, data)
    if isinstance(expr, (cst.Tuple, cst.List)):
        kinds = {_kind(el.value, env, data) for el in expr.elements} - {None}
        return (_LABELS if _LABELS in kinds else _RATIOS) if kinds else None
    if isinstance(expr, cst.IfExp):
        kinds = {_kind(expr.body, env, data), _kind(expr.orelse, env, data)} - {None}
        return (_LABELS if _LABELS in kinds else _RATIOS) if kinds else None
    return None


def _sampler_of_data(name: str, call: cst.Call, data: set[str]) -> bool:
    """``DataSampler(train_data, …)``: a condition sampler built from the category frequencies of
    the training data (CTGAN-style); what it draws follows the real distribution."""
    if not words(name) & {"sampler", "condvec", "cond"}:
        return False
    for arg in call.args:
        ref = dotted(arg.value)
        if ref is not None and (ref in data or _is_data_name(ref)):
            return True
    return False


def _frequencies_of_data(name: str, call: cst.Call, data: set[str]) -> bool:
    """Category frequencies of a column of the training data, whichever column it is (the
    conditioning column of a conditional sampler, not only the label): ``train[c].value_counts()``,
    ``df["cat"].value_counts(normalize=True)``, ``np.unique(data[c], return_counts=True)``."""
    if name == "value_counts" and isinstance(call.func, cst.Attribute):
        source = call.func.value
    elif name == "unique" and any(a.keyword is not None and a.keyword.value == "return_counts" for a in call.args):
        source = call.args[0].value if call.args and call.args[0].keyword is None else None
    else:
        return False
    while source is not None and dotted(source) is None:
        if isinstance(source, (cst.Subscript, cst.Attribute)):
            source = source.value
        elif isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) \
                and source.func.attr.value not in {"Series", "DataFrame", "array", "asarray"}:
            source = source.func.value  # ``df[c].astype(str)``, ``df[c].fillna("?")``
        elif isinstance(source, cst.Call) and source.args:
            source = source.args[0].value  # ``pd.Series(df[c])``
        else:
            source = None
    found = dotted(source) if source is not None else None
    if found is None or words(found.split(".")[-1]) & {"public", "pub", "reference"}:
        return False
    return found in data or _is_data_name(found.split(".")[-1])


def _label_key(expr: cst.BaseExpression, env: dict[str, str]) -> bool:
    if isinstance(expr, cst.SimpleString):
        return bool(words(expr.evaluated_value or "") & _LABEL_WORDS)
    name = dotted(expr)
    return name is not None and bool(words(name.split(".")[-1]) & (_LABEL_WORDS | {"col", "column"})) and \
        bool(words(name.split(".")[-1]) & _LABEL_WORDS)


def _label_column(expr: cst.Subscript, env: dict[str, str]) -> bool:
    elements = list(expr.slice)
    if not elements or not isinstance(elements[-1].slice, cst.Index):
        return False
    key = elements[-1].slice.value
    if isinstance(key, cst.UnaryOperation) and isinstance(key.operator, cst.Minus) and isinstance(key.expression, cst.Integer):
        return key.expression.value == "1"
    return _label_key(key, env)


def _is_generator_call(call: cst.Call) -> bool:
    func = call.func
    name = call_name(call) or ""
    if name == "run" and call.args:
        return any(words(n.split(".")[-1]) & {"g", "gen", "generator", "generated"} for n in refs(call.args[0].value))
    if name in {"predict", "sample", "forward", "__call__"} and isinstance(func, cst.Attribute):
        receiver = dotted(func.value) or ""
        return bool(words(receiver.split(".")[-1]) & _GENERATOR_WORDS) or receiver.split(".")[-1] in {"G", "netG"}
    if name in {"G", "netG", "net_G"}:
        return True
    return bool(words(name) & {"generator", "netg", "decoder"})


def _tainted_in_args(call: cst.Call, tainted: set[str]) -> str | None:
    for arg in call.args:
        for name in sorted(refs(arg.value)):
            if name in tainted:
                return name
    return None


def _ast_generator_or_sampling(call: ast.Call) -> bool:
    """``_is_generator_call`` or ``_is_sampling_call`` might accept ``call`` (a superset: ``run``
    counts whatever it runs, a sampling name whatever its receiver)."""
    name = ast_call_name(call)
    if name == "run" or name in _SAMPLING_CALLS or name in {"G", "netG", "net_G"}:
        return True
    if name in {"predict", "sample", "forward", "__call__"} and isinstance(call.func, ast.Attribute):
        last = (ast_dotted(call.func.value) or "").split(".")[-1]
        if words(last) & _GENERATOR_WORDS or last in {"G", "netG"}:
            return True
    return bool(words(name) & {"generator", "netg", "decoder"})


def _ast_env(facts: AstFacts) -> set[str]:
    """Every name any scope's environment (``_function_env``, ``_module_env``, class envs) may hold."""
    env: set[str] = set()
    for func in facts.functions:
        args = func.args
        env.update(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if _is_label_name(a.arg))
    assigns: list[tuple[set[str], set[str], bool]] = []
    for node in facts.nodes(ast.Assign, ast.AnnAssign):
        value = node.value  # type: ignore[attr-defined]
        if value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        names = {n for t in targets for n in ast_target_names(t)}
        if names:
            assigns.append((names, read_names(value), _ast_has_source(facts, value)))
    for stmt in facts.tree.body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            env.update(n for t in targets for n in ast_target_names(t) if _is_label_name(n))
    changed = True
    while changed:
        changed = False
        for names, read, source in assigns:
            if not names <= env and (source or read & env):
                env |= names
                changed = True
    return env


def _ast_label_key(expr: ast.AST) -> bool:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return bool(words(expr.value) & _LABEL_WORDS)
    name = ast_dotted(expr)
    return name is not None and bool(words(name.split(".")[-1]) & _LABEL_WORDS)


def _ast_has_source(facts: AstFacts, value: ast.AST) -> bool:
    """Shapes ``_kind`` types without a typed operand: a label column of a subscript, ``pop`` of a
    label key, a sampler built from data, category frequencies (whatever they read)."""
    for node in ast.walk(value):
        if isinstance(node, ast.Subscript):
            key = node.slice.elts[-1] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
            if isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub) and isinstance(key.operand, ast.Constant) \
                    and type(key.operand.value) is int:
                return True
            if not isinstance(key, ast.Slice) and _ast_label_key(key):
                return True
        elif isinstance(node, ast.Call):
            name = ast_call_name(node)
            if name == "pop" and node.args and _ast_label_key(node.args[0]):
                return True
            if name == "value_counts" or words(name) & {"sampler", "condvec", "cond"}:
                return True
            if name == "unique" and any(k.arg == "return_counts" for k in node.keywords):
                return True
    return False
