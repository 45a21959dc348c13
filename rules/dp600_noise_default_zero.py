"""DP600: the noise of a DP mechanism is configured with a default of zero, so the DP path adds no noise unless
the caller remembers to set it."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: words of a setting that is the mechanism's noise level
_NOISE_WORDS = frozenset({"noise", "sigma", "multiplier", "nm"})
#: words of a setting that is something else about noise (a GAN's latent size, a seed, a schedule, a type)
_OTHER_WORDS = frozenset({"dim", "dims", "size", "latent", "seed", "type", "kind", "schedule", "steps", "decay",
                          "ratio", "prob", "p", "rate", "level", "min", "max", "lr", "eps", "epsilon", "z",
                          "label", "labels", "aug", "augment", "augmentation", "input", "data", "feature",
                          "features", "clip", "dropout", "warmup", "init", "distill", "temperature", "scheduler"})
#: keywords of a DP mechanism that take the noise level
_NOISE_KEYWORDS = frozenset({"noise_multiplier", "sigma", "noise_scale", "noise_std", "noise_sigma"})
#: calls that build a DP-SGD optimizer or engine from a noise level
_DP_BUILDERS = frozenset({"make_private", "PrivacyEngine", "DPOptimizer", "DPSGD", "DPAdam", "attach",
                          "DPKerasSGDOptimizer", "DPKerasAdamOptimizer", "DPKerasAdagradOptimizer",
                          "DPGradientDescentGaussianOptimizer", "DPAdamGaussianOptimizer",
                          "VectorizedDPKerasSGDOptimizer", "VectorizedDPKerasAdamOptimizer",
                          "DPAdagradGaussianOptimizer", "DPMomentumGaussianOptimizer", "GradSampleModule"})


#: words of a module that claims privacy (the noise level it passes on is then a DP noise level)
_PRIVACY_TEXT = re.compile(r"(?i)privacy|private|opacus|dp_?sgd|accountant|noise_multiplier|epsilon|\bdp\b")


def _zero(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Integer) and node.evaluated_value == 0 \
        or isinstance(node, cst.Float) and node.evaluated_value == 0.0


def _noise_setting(name: str) -> bool:
    w = words(name)
    return bool(w & _NOISE_WORDS) and not w & _OTHER_WORDS


def _dest(call: cst.Call) -> str | None:
    """The attribute ``add_argument('--noise', '-n', ...)`` stores to (``dest=`` or the long option)."""
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "dest" and isinstance(a.value, cst.SimpleString):
            return a.value.evaluated_value  # type: ignore[return-value]
    options = [a.value.evaluated_value for a in call.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
    longs = [o for o in options if isinstance(o, str) and o.startswith("--")]
    pick = longs[0] if longs else next((o for o in options if isinstance(o, str)), None)
    if pick is None:
        return None
    return pick.lstrip("-").replace("-", "_") or None


class NoiseDefaultZero(Rule):
    id = "DP600"
    name = "noise-default-zero"
    category = "general"
    severity = "error"
    summary = ("the noise level handed to a DP optimizer or engine (a noise multiplier, σ) defaults to 0: the DP "
               "path clips but adds no noise unless the flag is set")
    rationale = (
        "A DP-SGD run is private only through its noise. When the command-line option or the function parameter "
        "that becomes the engine's `noise_multiplier` (Opacus `make_private`, `DPOptimizer`, TF Privacy's "
        "`DPKeras*Optimizer`) defaults to 0, every run that does not set it trains with clipping only: the model "
        "is released as DP with no noise at all, and nothing in the code says that 0 means 'not private'. "
        "Reported at the default: `add_argument('--noise', default=0.0)` whose value reaches a noise keyword "
        "(`noise_multiplier=args.noise`) or a DP optimizer's arguments, or a parameter `noise_multiplier=0` passed "
        "on the same way. Not reported: a default that is tested (`if args.noise > 0:` picks the private path, "
        "0 is an explicit off switch), a GAN's `noise_dim`, a seed, augmentation noise, a default that never "
        "reaches a DP optimizer, test modules. Fix: make the noise a required option (or default to a calibrated value), and "
        "refuse a zero noise level on the DP path."
    )
    TRIGGERS = ("noise", "sigma")
    requires_dp_context = True

    VALID = (
        # a diffusion pipeline's noise_scale defaults to 0 (no re-noising of the latents): no privacy anywhere
        """
class VideoPipeline:
    def prepare(self, latents, noise_scale, generator=None):
        return latents

    def __call__(self, prompt, noise_scale: float = 0.0, generator=None):
        latents = self.prepare(self.encode(prompt), noise_scale=noise_scale, generator=generator)
        return self.decode(latents)
""",
        # ordinary ML: Adam's eps, a diffusion schedule's noise and a label-noise rate default to zero
        """
import argparse
import torch
def train(model, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--adam_eps", default=0.0, type=float)
    parser.add_argument("--noise_schedule_min", default=0.0, type=float)
    parser.add_argument("--label_noise_rate", default=0, type=float)
    args = parser.parse_args()
    return torch.optim.Adam(model.parameters(), eps=args.adam_eps or 1e-8)
""",
        # the default is calibrated; setting 0 is the user's choice
        """
import argparse
from opacus import PrivacyEngine
def main(model, optimizer, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise", default=1.1, type=float)
    args = parser.parse_args()
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=args.noise, max_grad_norm=1.0)
""",
        # zero is an explicit off switch that picks the non-private path
        """
import argparse
from opacus import PrivacyEngine
def main(model, optimizer, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise-multiplier", default=0.0, type=float)
    args = parser.parse_args()
    if args.noise_multiplier > 0:
        model, optimizer, loader = PrivacyEngine().make_private(
            module=model, optimizer=optimizer, data_loader=loader,
            noise_multiplier=args.noise_multiplier, max_grad_norm=1.0)
    return model, optimizer, loader
""",
        # a GAN's latent noise size and an augmentation strength default to zero: no DP noise level
        """
import argparse
import torch
def build(gen, disc, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise_dim", default=0, type=int)
    parser.add_argument("--aug_noise", default=0.0, type=float)
    args = parser.parse_args()
    z = torch.randn(64, args.noise_dim)
    return gen(z + args.aug_noise * torch.randn_like(z))
""",
        # the noise default of a helper that is never handed to a DP optimizer
        """
import numpy as np
def jitter(x, sigma=0.0, epsilon=1.0):
    return x + np.random.normal(0, sigma, x.shape)
""",
        # twin: the only call passes the configured noise multiplier, so the zero default is never used
        """
from opacus.optimizers import DPOptimizer
class Client:
    def local_step(self, opt, noise_multiplier=0.0, max_grad_norm=1.0):
        return DPOptimizer(opt, noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm,
                           expected_batch_size=32)
def run_round(clients, opts, args):
    return [c.local_step(o, noise_multiplier=args.noise_multiplier) for c, o in zip(clients, opts)]
""",
        # ordinary ML: a denoising step whose input noise defaults to 0 and is passed by its caller
        """
import torch
def corrupt(x, noise_std=0.0):
    return x + noise_std * torch.randn_like(x)
def train_step(model, x):
    return model(corrupt(x, noise_std=0.1))
""",
    )
    INVALID = (
        # a client step whose only caller omits the noise multiplier: every run uses the zero default
        """
from opacus.optimizers import DPOptimizer
class Client:
    def local_step(self, opt, noise_multiplier=0.0, max_grad_norm=1.0):  # <-
        return DPOptimizer(opt, noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm,
                           expected_batch_size=32)
def run_round(clients, opts, args):
    return [c.local_step(o, max_grad_norm=args.clip) for c, o in zip(clients, opts)]
""",
        # the option stored under another name (dest=) and handed to the DP optimizer
        """
import argparse
from opacus.optimizers import DPOptimizer
def build(opt):
    parser = argparse.ArgumentParser()
    parser.add_argument("-z", "--z-noise", dest="noise_mult", type=float, default=0.0)  # <-
    args = parser.parse_args()
    return DPOptimizer(opt, noise_multiplier=args.noise_mult, max_grad_norm=1.0, expected_batch_size=64)
""",
        # the Opacus noise multiplier defaults to zero: a clipped-only run by default
        """
import argparse
from opacus import PrivacyEngine
def main(model, optimizer, loader):
    parser = argparse.ArgumentParser()
    parser.add_argument("--noise", default=0.0, type=float, help="noise multiplier")  # <-
    args = parser.parse_args()
    engine = PrivacyEngine()
    return engine.make_private(module=model, optimizer=optimizer, data_loader=loader,
                               noise_multiplier=args.noise, max_grad_norm=1.0)
""",
        # a function parameter defaulting to zero handed to the DP optimizer
        """
from opacus.optimizers import DPOptimizer
def private_optimizer(opt, batch_size, noise_multiplier=0, max_grad_norm=1.0):  # <-
    return DPOptimizer(opt, noise_multiplier=noise_multiplier, max_grad_norm=max_grad_norm,
                       expected_batch_size=batch_size)
""",
        # TF Privacy with the sigma option defaulting to zero
        """
import argparse
from tensorflow_privacy import DPKerasSGDOptimizer
def build():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sigma", type=float, default=0)  # <-
    args = parser.parse_args()
    return DPKerasSGDOptimizer(l2_norm_clip=1.0, noise_multiplier=args.sigma, num_microbatches=32,
                               learning_rate=0.1)
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        parts = self.ctx.path.replace("\\", "/").split("/")
        if parts[-1].startswith("test_") or parts[-1].endswith("_test.py") or "tests" in parts[:-1]:
            return  # a test runs the optimizer with and without noise on purpose
        nodes = list(walk(node))
        calls = [n for n in nodes if isinstance(n, cst.Call)]
        tested = self._tested(nodes)
        # (1) command-line options
        for call in calls:
            if call_name(call) != "add_argument":
                continue
            default = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "default"), None)
            if not _zero(default):
                continue
            dest = _dest(call)
            if dest is None or not _noise_setting(dest) or dest in tested:
                continue
            if self._reaches_dp(calls, lambda e, d=dest: isinstance(e, cst.Attribute) and e.attr.value == d):
                self._report(call, f"`--{dest}`")
        # (2) function parameters
        for fn in (n for n in nodes if isinstance(n, cst.FunctionDef)):
            for p in (*fn.params.params, *fn.params.kwonly_params):
                if not _zero(p.default) or not _noise_setting(p.name.value) or p.name.value in tested:
                    continue
                own = [c for c in walk(fn.body) if isinstance(c, cst.Call)]
                name = p.name.value
                if self._reaches_dp(own, lambda e, n=name: isinstance(e, cst.Name) and e.value == n) \
                        and not self._always_passed(fn, name):
                    self._report(p, f"`{name}`")

    def _always_passed(self, fn: cst.FunctionDef, param: str) -> bool:
        """Every call of ``fn`` found in the project (this file and the ``.py`` files under its project root) passes
        ``param`` with a value that is not a literal 0 (``client.local_train(…, noise_multiplier=args.noise_multiplier)``):
        the zero default is never used on a run path. False when no call is found."""
        import ast
        import os

        from dpcheck.analysis.noisedraws import project_root

        params = [p.name.value for p in (*fn.params.posonly_params, *fn.params.params)]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        position = params.index(param) if param in params else None
        name = fn.name.value
        if not self.ctx.path or not os.path.isfile(self.ctx.path):
            texts = [self.ctx.source]
        else:
            root = project_root(self.ctx.path)
            texts = []
            for folder, dirs, names in os.walk(root):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("venv", "site-packages"))
                for n in sorted(names):
                    if n.endswith(".py") and len(texts) < 400:
                        try:
                            with open(os.path.join(folder, n), encoding="utf-8", errors="replace") as handle:
                                text = handle.read(500_000)
                        except OSError:
                            continue
                        if f"{name}(" in text:
                            texts.append(text)
        calls = 0
        for text in texts:
            try:
                tree = ast.parse(text)
            except (SyntaxError, ValueError):
                return False
            for call in ast.walk(tree):
                if not isinstance(call, ast.Call) or (call.func.id if isinstance(call.func, ast.Name) else
                                                      getattr(call.func, "attr", None)) != name:
                    continue
                calls += 1
                value = next((k.value for k in call.keywords if k.arg == param), None)
                if value is None and position is not None and position < len(call.args) \
                        and not any(isinstance(a, ast.Starred) for a in call.args[:position + 1]):
                    value = call.args[position]
                if value is None or isinstance(value, ast.Constant) and value.value in (0, 0.0, None):
                    return False
        return calls > 0

    @staticmethod
    def _tested(nodes: list[cst.CSTNode]) -> set[str]:
        """Settings compared anywhere (``if args.noise > 0``, ``noise_multiplier == 0``): zero is a switch."""
        out: set[str] = set()
        for n in nodes:
            if isinstance(n, (cst.Comparison, cst.If, cst.IfExp)):
                test = n if isinstance(n, cst.Comparison) else n.test
                for sub in walk(test):
                    if isinstance(sub, cst.Attribute):
                        out.add(sub.attr.value)
                    elif isinstance(sub, cst.Name):
                        out.add(sub.value)
        return out

    def _reaches_dp(self, calls: list[cst.Call], is_setting) -> bool:  # type: ignore[no-untyped-def]
        # a noise keyword alone (``noise_scale=`` of a diffusion pipeline) is DP only in a module that
        # says privacy; a DP builder is DP wherever it is called
        keyword_counts = _PRIVACY_TEXT.search(self.ctx.source) is not None
        for call in calls:
            builder = call_name(call) in _DP_BUILDERS
            for a in call.args:
                direct = is_setting(a.value)
                if direct and (builder or keyword_counts and a.keyword is not None
                               and a.keyword.value in _NOISE_KEYWORDS):
                    return True
        return False

    def _report(self, node: cst.CSTNode, what: str) -> None:
        self.report(node, f"{what} is the noise level of the DP optimizer and defaults to 0: a run that does not "
                          "set it clips but adds no noise, and is released as DP; make it required or default it "
                          "to a calibrated value, and refuse 0 on the private path")

