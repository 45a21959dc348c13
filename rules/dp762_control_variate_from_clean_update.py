"""DP762: a DP client noises its model update, but the control variate (or momentum) it keeps and uploads is
computed from the clean update."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

_NOISE_CALL = re.compile(r"noise|normal|randn|gauss|laplace", re.IGNORECASE)
#: control variates, their deltas and momentum/velocity buffers built from the update
_SIDE_WORDS = frozenset({"control", "controls", "variate", "variates", "cv", "c", "momentum", "velocity",
                         "correction", "drift", "cdelta"})


def _side_target(module: cst.Module, target: cst.BaseExpression) -> bool:
    """``self.c_delta[k]``, ``c_plus[k]``, ``self.control[k]``, ``momentum[name]``: a side state of the update."""
    base = target
    while isinstance(base, cst.Subscript):
        base = base.value
    if isinstance(base, cst.Attribute):
        name = base.attr.value
    elif isinstance(base, cst.Name):
        name = base.value
    else:
        return False
    return bool(words(name) & _SIDE_WORDS)


class ControlVariateFromCleanUpdate(Rule):
    id = "DP762"
    name = "control-variate-from-clean-update"
    category = "general"
    severity = "error"
    summary = ("the model update is noised, but the control variate (or momentum) kept for the server is "
               "computed from the clean update")
    rationale = (
        "Output-perturbation DP clients (DP-FedAvg 'last noise', DP-SCAFFOLD) add noise to the parameter "
        "difference before upload. SCAFFOLD also uploads a control-variate delta, `c_plus = c_local - c_global "
        "- diff / (K·lr)`, and momentum variants upload optimizer buffers; computed from the clean `diff` "
        "rather than the noisy one, they carry the exact update to the server (diff = -(K·lr)(c_delta + "
        "c_global)) and no ε covers them. Reported: in one function, a name `d` that is noised (`noisy = d + "
        "noise`) and also read, un-noised, into a control-variate/momentum target (`c_plus[k]`, "
        "`self.c_delta[k]`, `momentum[k]`). Not reported: the side state computed from the noisy value, or "
        "kept locally from a value that is never noised in that function. Fix: derive the control variate "
        "from the noisy difference (post-processing), or noise it separately and charge it."
    )
    TRIGGERS = ("noise", "normal", "randn")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A noise-named call and a control-variate/momentum identifier in the file."""
        return bool(_NOISE_CALL.search(facts.source)) and any(
            words(i) & _SIDE_WORDS for i in facts.identifiers)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    VALID = (
        # twin of the SCAFFOLD case: the control variate is computed from the noisy difference
        """
import torch
def finish_round(model, start, c_local, c_global, steps, lr, noise_multiplier):
    upload, c_plus = {}, {}
    for name, p in model.named_parameters():
        diff = p.data - start[name]
        noisy_diff = diff + torch.normal(0.0, noise_multiplier, diff.shape)
        upload[name] = noisy_diff
        c_plus[name] = c_local[name] - c_global[name] - noisy_diff / (steps * lr)
    return upload, c_plus
""",
        # twin of the momentum case: the momentum buffer follows the noisy gradient
        """
import torch
def private_step(params, grads, momentum, beta, clip, noise_multiplier):
    for k, g in grads.items():
        noisy = g + torch.randn_like(g) * clip * noise_multiplier
        momentum[k] = beta * momentum[k] + noisy
        params[k] -= momentum[k]
""",
        # twin of the method case: the delta stored on self is derived from the noisy upload
        """
class DPScaffoldClient:
    def post_process(self, sigma_dp):
        for key, delta in self.deltas.items():
            noise = self.make_noise(std=sigma_dp, like=delta)
            self.noisy[key] = delta + noise
            self.c_delta[key] = -self.c_global[key] - self.noisy[key] / (self.local_steps * self.lr)
""",
        # twin of the numpy case: the velocity follows the noisy sum
        """
import numpy as np
def dp_round(clipped_sum, velocity, beta, clip, noise_multiplier, rng):
    noisy_sum = clipped_sum + rng.normal(0.0, clip * noise_multiplier, clipped_sum.shape)
    velocity = beta * velocity + noisy_sum
    return noisy_sum, velocity
""",
        # the noisy sum rebinds its own name: centroids from it are post-processing (private k-means)
        """
import numpy as np
def private_kmeans(x, c, epsilon):
    sums = np.zeros_like(c)
    for row in x:
        sums[np.argmin(((c - row) ** 2).sum(1))] += row
    sums = sums + np.random.laplace(0, 2 / epsilon, sums.shape)
    c = sums / len(x)
    return c
""",
        # ordinary ML: SCAFFOLD without DP noise at all
        """
def scaffold_update(model, start, c_local, c_global, steps, lr):
    c_plus = {}
    for name, p in model.named_parameters():
        diff = p.data - start[name]
        c_plus[name] = c_local[name] - c_global[name] - diff / (steps * lr)
    return c_plus
""",
    )

    INVALID = (
        # SCAFFOLD: noisy difference uploaded, control variate from the clean one
        """
import torch
def finish_round(model, start, c_local, c_global, steps, lr, noise_multiplier):
    upload, c_plus = {}, {}
    for name, p in model.named_parameters():
        diff = p.data - start[name]
        noisy_diff = diff + torch.normal(0.0, noise_multiplier, diff.shape)
        upload[name] = noisy_diff
        c_plus[name] = c_local[name] - c_global[name] - diff / (steps * lr)  # <-
    return upload, c_plus
""",
        # momentum built from the clipped gradient before the noise
        """
import torch
def private_step(params, grads, momentum, beta, clip, noise_multiplier):
    for k, g in grads.items():
        noisy = g + torch.randn_like(g) * clip * noise_multiplier
        momentum[k] = beta * momentum[k] + g  # <-
        params[k] -= noisy
""",
        # numpy: a velocity buffer returned with the noisy update, built from the clean clipped sum
        """
import numpy as np
def dp_round(clipped_sum, velocity, beta, clip, noise_multiplier, rng):
    noisy_sum = clipped_sum + rng.normal(0.0, clip * noise_multiplier, clipped_sum.shape)
    velocity = beta * velocity + clipped_sum  # <-
    return noisy_sum, velocity
""",
        # a method: the delta of the control variate stored on self from the clean update
        """
class DPScaffoldClient:
    def post_process(self, sigma_dp):
        for key, delta in self.deltas.items():
            noise = self.make_noise(std=sigma_dp, like=delta)
            self.noisy[key] = delta + noise
            self.c_delta[key] = -self.c_global[key] - delta / (self.local_steps * self.lr)  # <-
""",
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        module = self.ctx.module
        noised: set[str] = set()
        noise_names: set[str] = set()
        for sub in walk(node.body):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0].target, cst.Name) \
                    and any(isinstance(c, cst.Call) and _NOISE_CALL.search(call_name(c)) for c in walk(sub.value)) \
                    and not isinstance(sub.value, cst.BinaryOperation):
                noise_names.add(sub.targets[0].target.value)
        for sub in walk(node.body):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
                for mine, other in ((sub.left, sub.right), (sub.right, sub.left)):
                    if not isinstance(mine, cst.Name):
                        continue
                    noisy = any(isinstance(c, cst.Call) and _NOISE_CALL.search(call_name(c)) for c in walk(other)) \
                        or (isinstance(other, cst.Name) and other.value in noise_names)
                    if noisy:
                        noised.add(mine.value)
        # ``d = d + noise`` rebinds the name to the noisy value: later reads are not of the clean update
        noised -= {sub.targets[0].target.value for sub in walk(node.body)
                   if isinstance(sub, cst.Assign) and len(sub.targets) == 1
                   and isinstance(sub.targets[0].target, cst.Name) and isinstance(sub.value, cst.BinaryOperation)
                   and sub.targets[0].target.value in {n.value for n in (sub.value.left, sub.value.right)
                                                        if isinstance(n, cst.Name)}}
        if not noised:
            return
        changed = True
        while changed:  # copies of a noised name: ``d_cpu = d.cpu()``, ``d2 = d.detach().clone()``
            changed = False
            for sub in walk(node.body):
                if isinstance(sub, cst.Assign) and len(sub.targets) == 1 \
                        and isinstance(sub.targets[0].target, cst.Name) \
                        and sub.targets[0].target.value not in noised:
                    root = sub.value
                    while isinstance(root, (cst.Call, cst.Attribute)):
                        root = root.func if isinstance(root, cst.Call) else root.value
                    if isinstance(root, cst.Name) and root.value in noised and root is not sub.value:
                        noised.add(sub.targets[0].target.value)
                        changed = True
        for sub in walk(node.body):
            if not (isinstance(sub, cst.Assign) and len(sub.targets) == 1):
                continue
            target = sub.targets[0].target
            if not _side_target(module, target):
                continue
            reads = {n.value for n in walk(sub.value) if isinstance(n, cst.Name)}
            clean = reads & noised
            if clean and not any(isinstance(c, cst.Call) and _NOISE_CALL.search(call_name(c)) for c in walk(sub.value)):
                name = sorted(clean)[0]
                self.report(
                    sub,
                    f"`{name}` (or the value it copies) is noised in this function, but this control variate/momentum is "
                    f"computed from the clean `{name}`: it carries the exact update to the server outside the ε; derive it from the "
                    "noisy value",
                )
