"""DP731: the noise draw of a release is itself clipped to a range before it is added."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, last_name, name_words, walk
from dpcheck.rule import Rule

#: calibrated draws: Laplace always, a Gaussian when its scale is calibrated (ε, sensitivity, σ of DP)
_LAPLACE = frozenset({"laplace", "Laplace", "laplace_noise", "sample_laplace", "discrete_laplace"})
_GAUSS = frozenset({"normal", "gauss", "normalvariate", "Normal"})
_CALIBRATED = frozenset({"eps", "epsilon", "sensitivity", "sens", "delta", "privacy", "dp", "rho", "mu", "sigma"})
_CLIPS = frozenset({"clip", "clamp", "clip_by_value", "clamp_"})


def _draw(expr: cst.CSTNode) -> bool:
    """Is ``expr`` (or a call inside it) a calibrated noise draw?"""
    for n in walk(expr):
        if isinstance(n, cst.Call):
            name = call_name(n)
            if name in _LAPLACE:
                return True
            if name in _GAUSS and any(name_words(a.value) & _CALIBRATED for a in n.args):
                return True
    return False


class NoiseDrawClamped(Rule):
    id = "DP731"
    name = "noise-draw-clamped"
    category = "general"
    severity = "error"
    summary = "the calibrated noise itself is clipped to a range before it is added to the released value"
    rationale = (
        "The Laplace and Gaussian mechanisms need noise with unbounded support: clipping the noise draw to "
        "[-c, c] (`np.clip(z, -c, c)`, `z.clamp(...)`) before adding it makes the release `f(x) + clip(z)` "
        "lie in [f(x) - c, f(x) + c], a window that moves with the data. An output just outside the window of a "
        "neighbouring dataset has probability 0 there and positive probability here, so no ε holds (a truncated "
        "mechanism needs its own, larger calibration). Clipping the *released value* to its public range is "
        "post-processing and fine. Reported: `clip`/`clamp` applied to a name bound to a Laplace draw, or to a "
        "Gaussian draw whose scale names ε / the sensitivity, or to such a draw inline. Fix: add the noise "
        "unclipped and clip the noisy result instead."
    )
    TRIGGERS = ("clip", "clamp")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a clip/clamp call and a Laplace or Gaussian draw in the file."""
        return facts.calls_any(_CLIPS) and facts.calls_any(_LAPLACE | _GAUSS)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        noise: set[str] = set()
        for sub in walk(node.body, into_scopes=False):
            if isinstance(sub, cst.Assign) and _draw(sub.value) and isinstance(sub.value, cst.Call) \
                    and call_name(sub.value) not in _CLIPS:
                noise |= {n for t in sub.targets if (n := last_name(t.target))}
        for sub in walk(node.body, into_scopes=False):
            if not isinstance(sub, cst.Call) or call_name(sub) not in _CLIPS:
                continue
            if isinstance(sub.func, cst.Attribute) and call_name(sub) in ("clamp", "clamp_", "clip") \
                    and not (isinstance(sub.func.value, cst.Name) and sub.func.value.value in ("np", "numpy", "torch", "tf", "jnp")):
                target = sub.func.value  # ``z.clamp(-c, c)``
            elif sub.args:
                target = sub.args[0].value
            else:
                continue
            if (isinstance(target, (cst.Name, cst.Attribute)) and last_name(target) in noise) or \
                    (isinstance(target, cst.Call) and _draw(target)):
                self.report(sub, "the noise draw is clipped before it is added: the release can only move a bounded "
                                 "distance from the true value, so neighbouring datasets have disjoint output "
                                 "windows and ε does not hold; add the noise unclipped and clip the noisy value")

    VALID = (
        # twin: the noisy mean is clipped to the public range (post-processing)
        """
import numpy as np
def release_mean(x, epsilon, a, b):
    x = np.clip(x, a, b)
    z = np.random.laplace(scale=(b - a) / (len(x) * epsilon))
    return np.clip(np.mean(x) + z, a, b)
""",
        # twin: torch noise added, result clamped
        """
import torch
def noisy_embedding(h, sensitivity, epsilon):
    noise = torch.distributions.Laplace(0.0, sensitivity / epsilon).sample(h.shape)
    return (h + noise).clamp(-1.0, 1.0)
""",
        # twin: Gaussian noise on the clipped gradient
        """
import numpy as np
def noisy_grad(g, clip_norm, sigma):
    g = g / max(1.0, np.linalg.norm(g) / clip_norm)
    z = np.random.normal(0, sigma * clip_norm, g.shape)
    return np.clip(g, -1, 1) + z
""",
        # ordinary ML: TD3 target-policy smoothing clips its exploration noise
        """
import torch
def target_action(actor, next_state, policy_noise, noise_clip, max_action):
    a = actor(next_state)
    noise = (torch.randn_like(a) * policy_noise).clamp(-noise_clip, noise_clip)
    return (a + noise).clamp(-max_action, max_action)
""",
    )

    INVALID = (
        # the Laplace draw is clamped to the data range before it is added
        """
import numpy as np
def release_mean(x, epsilon, a, b):
    x = np.clip(x, a, b)
    z = np.random.laplace(scale=(b - a) / (len(x) * epsilon))
    z = np.clip(z, -(b - a), b - a)  # <-
    return np.mean(x) + z
""",
        # torch: the sampled noise is clamped in place
        """
import torch
def noisy_embedding(h, sensitivity, epsilon):
    noise = torch.distributions.Laplace(0.0, sensitivity / epsilon).sample(h.shape)
    noise = noise.clamp(-3 * sensitivity, 3 * sensitivity)  # <-
    return h + noise
""",
        # a Gaussian draw calibrated to ε, clipped inline
        """
import numpy as np
def release_sum(values, sensitivity, epsilon, delta):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return values.sum() + np.clip(np.random.normal(0, sigma), -10 * sensitivity, 10 * sensitivity)  # <-
""",
        # a private count with its noise capped at the bound
        """
import numpy as np
def noisy_count(records, epsilon, cap):
    noise = np.random.laplace(0, 1.0 / epsilon)
    capped = np.clip(noise, -cap, cap)  # <-
    return len(records) + capped
""",
    )
