"""DP827: the privacy noise is added only to the samples a generative model outputs, not to its training."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule

#: calls that draw synthetic records from a fitted generative model
_SAMPLE_CALLS = frozenset({"sample", "generate", "sample_from", "sample_rows", "generate_samples", "synthesize",
                           "sample_synthetic", "generate_synthetic", "sample_data"})
#: words of a receiver that is a generative model of the records
_GENERATOR_WORDS = frozenset({"generator", "synthesizer", "synthesiser", "copula", "ctgan", "tvae", "gan", "vae",
                              "model", "sampler", "bayesnet", "network"})
#: words of a call or receiver that adds privacy noise
_PRIVACY_WORDS = frozenset({"privacy", "private", "dp", "laplace", "privatize", "privatise", "perturb",
                            "mechanism", "sanitize"})
#: a generator trained privately (then noise on the output is extra, not the guarantee)
_DP_MODEL_WORDS = frozenset({"dp", "private", "privacy", "pate", "dpctgan", "dpgan", "patectgan", "mst", "aim",
                             "privbayes"})
_DRAWS = frozenset({"laplace", "normal", "gauss", "randn_like", "standard_normal"})


def _chain_words(expr: cst.BaseExpression) -> set[str]:
    out: set[str] = set()
    while isinstance(expr, (cst.Attribute, cst.Call, cst.Subscript)):
        if isinstance(expr, cst.Attribute):
            out |= words(expr.attr.value)
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        else:
            expr = expr.value
    if isinstance(expr, cst.Name):
        out |= words(expr.value)
    return out


class NoiseOnlyOnGeneratedSamples(Rule):
    id = "DP827"
    name = "noise-only-on-generated-samples"
    category = "general"
    severity = "error"
    summary = ("synthetic records are drawn from a generative model fitted on the private data without DP, and "
               "privacy noise is added only to the drawn samples")
    rationale = (
        "A copula, CTGAN, TVAE or Bayesian network fitted on the raw records memorises them: its samples can "
        "reproduce rare records and their exact statistics. Adding Laplace or Gaussian noise to the samples "
        "afterwards (`synthetic = self.generator.sample(n)` then `synthetic = self.privacy.add_noise(synthetic)`) "
        "perturbs values that are already a function of the whole training set, and the noise is calibrated to "
        "one sample's sensitivity, not to the fit's: the release is not ε-DP for the training records. "
        "Reported: a value assigned from `<generator>.sample(...)`/`.generate(...)` of a non-private model, "
        "and later passed to a privacy-noise call (`add_noise`, `add_laplace_noise`, `<privacy>.apply(...)`) "
        "or added to a Laplace draw. Fix: train the generator with DP (DP-SGD, PATE-GAN, DP marginals such as "
        "MST/AIM) and release its samples as post-processing."
    )
    TRIGGERS = ("sample", "generate", "synthesize")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a sample call and a noise call or draw in the file."""
        called = facts.called
        if not called & _SAMPLE_CALLS:
            return False
        return bool(called & _DRAWS) or any(words(c) & {"noise", "laplace", "privatize", "perturb"} for c in called)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        fa = self.ctx.analysis
        body = list(walk(node.body, into_scopes=False))
        sampled: dict[str, tuple[int, cst.Call]] = {}
        for sub in body:
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and isinstance(sub.value, cst.Call) and call_name(sub.value) in _SAMPLE_CALLS \
                    and isinstance(sub.value.func, cst.Attribute):
                receiver = _chain_words(sub.value.func.value)
                if not receiver & _GENERATOR_WORDS or receiver & _DP_MODEL_WORDS:
                    continue
                if (dotted(sub.value.func.value) or "").split(".")[0] in ("np", "numpy", "random", "torch", "rng",
                                                                            "df", "data", "pd"):
                    continue
                sampled[sub.targets[0].target.value] = (fa.line_of(sub), sub.value)
        if not sampled:
            return
        for sub in body:
            if not isinstance(sub, cst.Call):
                continue
            line = fa.line_of(sub)
            name = call_name(sub) or ""
            args = [a.value for a in sub.args]
            hit = None
            helper_words = words(name) | (_chain_words(sub.func.value) if isinstance(sub.func, cst.Attribute) else set())
            if words(name) & {"noise", "laplace", "privatize", "privatise", "perturb", "sanitize"} \
                    and helper_words & (_PRIVACY_WORDS | {"noise"}) and name not in _DRAWS:
                hit = next((a.value for a in args if isinstance(a, cst.Name) and a.value in sampled), None)
            elif name in _DRAWS and words(dotted(sub.func) or "") & {"random", "np", "numpy"} \
                    and any(isinstance(n, cst.Name) and words(n.value) & {"epsilon", "eps", "sensitivity"}
                            for n in walk(sub)):
                parent = fa.parent(sub)
                if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Add):
                    other = parent.left if parent.right is sub else parent.right
                    if isinstance(other, cst.Name) and other.value in sampled:
                        hit = other.value
            if hit is None or line <= sampled[hit][0]:
                continue
            at, sample_call = sampled[hit]
            self.report(sub, f"privacy noise is added only to `{hit}`, the samples of "
                             f"`{fa.code(sample_call.func)[:40]}` (line {at}), a model fitted on the private records "
                             f"without DP: the samples already carry the training data, so noise on them gives no "
                             f"ε-DP guarantee; train the generator with DP instead")
            sampled.pop(hit)

    VALID = (
        # twin: the generator is trained with DP, its samples are released as they are
        """
class Forge:
    def generate(self, n):
        synthetic = self.dp_generator.sample(n)
        return self.transformer.inverse_transform(synthetic)
""",
        # twin: noise goes into the fitted statistics, the samples are post-processing
        """
import numpy as np
class NoisyCopula:
    def fit(self, data, epsilon):
        self.means = data.mean(axis=0) + np.random.laplace(0, 1 / (len(data) * epsilon), data.shape[1])
    def release(self, n):
        synthetic = self.copula.sample(n)
        return synthetic
""",
        # a DP-trained synthesizer named as such
        """
class Runner:
    def run(self, n):
        rows = self.dpctgan.sample(n)
        rows = self.privacy.add_noise(rows)
        return rows
""",
        # ordinary ML: a diffusion model's samples get noise for the next step, no privacy
        """
import torch
def step(model, n, sigma):
    x = model.sample(n)
    return x + sigma * torch.randn_like(x)
""",
    )

    INVALID = (
        """
class Forge:
    def generate(self, n):
        synthetic = self.generator.sample(n)
        if self.privacy is not None:
            synthetic = self.privacy.add_noise(synthetic)  # <-
        return self.transformer.inverse_transform(synthetic)
""",
        """
import numpy as np
class Release:
    def run(self, n, epsilon, sensitivity):
        rows = self.copula.sample(n)
        noisy = rows + np.random.laplace(0, sensitivity / epsilon, rows.shape)  # <-
        return noisy
""",
        """
def publish(synthesizer, n, mechanism, epsilon):
    data = synthesizer.sample(num_rows=n)
    return mechanism.add_laplace_noise(data, epsilon)  # <-
""",
        """
class Pipeline:
    def make(self, n):
        samples = self.model.generate(n)
        samples = self.dp.perturb_columns(samples)  # <-
        return samples
""",
    )
