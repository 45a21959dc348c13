"""DP528: noise added to model weights (or an average of clients' weights) in a module that bounds nothing."""
from __future__ import annotations

import re

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.clipping import NORM_CALLS, is_clip_bound, is_norm_value
from dpcheck.analysis.syntax import call_name, dotted, undotted, walk, words
from dpcheck.rule import Rule

#: draws of a tensor of noise
_DRAWS = frozenset({"randn", "randn_like", "normal", "normal_", "laplace", "Laplace", "Normal", "standard_normal",
                    "gauss", "gaussian"})
#: how model weights are read: a state dict, the parameters, a client's weights
_WEIGHT_CALLS = frozenset({"state_dict", "parameters", "named_parameters", "get_weights", "trainable_variables"})
_WEIGHT_WORDS = frozenset({"w", "weights", "weight", "param", "params", "parameter", "parameters", "state",
                           "model", "avg", "global", "server", "agg", "aggregated", "lora"})
#: words of a noise scale derived from a bound (the author clips somewhere, or meant to)
_BOUNDED_SCALE = frozenset({"clip", "clipping", "bound", "norm", "sensitivity", "sens", "c", "threshold", "thr",
                            "maxnorm", "lipschitz"})
_DP_WORDS = frozenset({"dp", "privacy", "private", "priv", "epsilon", "eps", "differential", "ldp", "cdp"})


#: a user helper that adds noise to what it is handed (``add_noise``, ``add_gaussian_noise``, ``add_dp_noise``)
_NOISE_HELPER = re.compile(r"(?i)add_(?:dp_|gaussian_|laplace_|laplacian_|random_)?noise(?:_to_(?:weights|params|parameters|model))?")

#: the function claims privacy for its noise (in code, a comment or a docstring)
_PRIVACY_CLAIM = re.compile(r"(?i)privacy|private|epsilon|differential")


def _last(call: cst.Call) -> str:
    return call_name(call).split(".")[-1]


#: words of a branch that simulates an adversary (its noise is the attack, not a mechanism)
_ATTACK_WORDS = frozenset({"attack", "attacker", "malicious", "byzantine", "poison", "poisoning", "adversary",
                           "adversarial"})


class ModelNoiseWithoutClip(Rule):
    id = "DP528"
    name = "model-noise-without-clip"
    category = "general"
    severity = "error"
    summary = ("'DP' noise of a fixed scale is added to model weights or to the average of clients' weights, and "
               "nothing in the module clips an update, a gradient or a weight: no sensitivity bounds what the noise hides")
    rationale = (
        "Noise on a model (DP-FedAvg at the server, a client's local DP, a noisy released model) protects a record or "
        "a client only relative to a bound on how far that record or client can move the weights: each update is "
        "clipped to norm C and the noise std is σ·C (divided by the cohort for an average). Code that adds "
        "`torch.randn(w.shape) * dp` or `torch.randn_like(avg) * noise_scale` to the averaged state dict, or "
        "`param + normal(0, s, param.shape)` to a trained model, with neither any clipping in the module nor a bound "
        "in the noise scale, calibrates to nothing: one client's update (or one record's effect on a model trained "
        "without per-example clipping) is unbounded, and the noise — however it is called — gives no ε. "
        "Reported: the addition of a tensor-shaped draw (sized by the weights, `randn_like`) to model weights (a state "
        "dict entry, a parameter, an average of clients' weights), when the draw's scale names no clip bound or "
        "sensitivity, the module calls no clip/clamp and scales nothing by a norm, and the code is DP code. Not "
        "reported: noise scaled by a clip bound or sensitivity (σ·C), modules that clip anything, inputs and "
        "activations (augmentation), code with no privacy context. Fix: clip each update (or per-example gradient) "
        "to norm C and draw noise of std σ·C."
    )
    TRIGGERS = ("randn", "normal", "laplace", "Laplace", "gauss", "noise(")

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return facts.calls_any(_DRAWS) or any(_NOISE_HELPER.fullmatch(n) for n in facts.called)

    VALID = (
        # (S5 h48) a simulated poisoning client perturbs its own weights: the noise is the attack, not a mechanism
        """
import numpy as np
class Peer:
    def share(self, weights, differential_privacy_sigma):
        out = [w for w in weights]
        if self.role == "byzantine":
            print(f"{self.name} runs a weight-perturbation attack")
            out = [w + np.random.normal(0, 2.0, w.shape) for w in out]
        return out
""",
        # ordinary ML: weight noise as a regulariser, no privacy claim
        """
import torch
def jitter_weights(model, std=0.01):
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * std)
""",
        # a robustness defence against backdoors: noise on client weights with no privacy claim
        """
import torch
class NoiseDefense:
    def __init__(self, stddev):
        self.stddev = stddev
    def _add_noise(self, param):
        noisy_param = dict()
        for k in param.keys():
            noisy_param[k] = param[k] + torch.randn(param[k].size()) * self.stddev
        return noisy_param
""",
        # the client updates are clipped before the noisy average
        """
import torch
def dp_fedavg(global_w, client_ws, clip, sigma):
    deltas = []
    for w in client_ws:
        d = {k: w[k] - global_w[k] for k in w}
        total = torch.sqrt(sum((v ** 2).sum() for v in d.values()))
        deltas.append({k: v * min(1.0, clip / total) for k, v in d.items()})
    out = {}
    for k in global_w:
        avg = torch.stack([d[k] for d in deltas]).mean(0)
        out[k] = global_w[k] + avg + torch.randn_like(avg) * sigma * clip / len(deltas)
    return out
""",
        # the noise std is sigma times the clip bound: the clipping is done where the updates are made
        """
import torch
def private_average(states, noise_multiplier, max_norm):
    avg = {}
    for k in states[0]:
        avg[k] = torch.mean(torch.stack([s[k] for s in states]), dim=0)
        avg[k] = avg[k] + torch.normal(0, noise_multiplier * max_norm / len(states), avg[k].shape)
    return avg
""",
        # (fix46-QB) the local update is rescaled to the clip bound in the training loop; the noise helper only adds
        """
import torch
class PrivateClient:
    def train_round(self, model, start, batches):
        for x, y in batches:
            model.step(x, y)
            flat = torch.cat([p.detach().flatten() for p in model.parameters()])
            delta = flat - start
            total_norm = torch.linalg.vector_norm(delta)
            if total_norm > self.clip_bound:
                factor = self.clip_bound / total_norm
                model.load_flat(start + delta * factor)

    def noisy_delta(self, model, start):
        # differential privacy: Gaussian noise on the already clipped update
        out = {}
        for name, param in model.named_parameters():
            out[name] = param.detach() - start[name] + torch.randn_like(param) * self.sigma
        return out
""",
        # weight noise for exploration / flat minima in ordinary training code (no privacy context)
        """
import torch
def perturb(model, std=0.01):
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * std)
""",
        # input augmentation in DP code: inputs are not weights
        """
import torch
def dp_train_step(model, inputs, epsilon, noise_std=0.1):
    inputs = inputs + torch.randn_like(inputs) * noise_std
    return model(inputs)
""",
        # a module that clips gradients with torch
        """
import torch
def local_dp(model, loss, dp_sigma, max_grad_norm):
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    for name, p in model.named_parameters():
        p.data = p.data + torch.normal(0, dp_sigma, p.shape)
""",
    )
    VALID = VALID + (
        # the twin of the constant-sensitivity client: its update is clipped to the sensitivity before the noise
        """
import numpy as np
import torch
def add_gaussian_noise(params, epsilon, delta, sensitivity):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return [param + np.random.normal(0.0, sigma, param.shape) for param in params]
class Client:
    def __init__(self, model, loader, epsilon=1.0, delta=1e-5, sensitivity=1.0):
        self.model, self.loader, self.sensitivity = model, loader, sensitivity
        self.epsilon, self.delta = epsilon, delta
    def fit(self, opt, loss_fn):
        for x, y in self.loader:
            opt.zero_grad()
            loss_fn(self.model(x), y).backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.sensitivity)
            opt.step()
        params = [p.detach().numpy() for p in self.model.parameters()]
        return add_gaussian_noise(params, self.epsilon, self.delta, self.sensitivity)
""",
        # the update is scaled by min(1, S / ||Δ||) by hand before the noise of std S·σ
        """
import torch
def one_shot(model, loader, opt, loss_fn, sigma, sensitivity=1.0):
    start = {k: v.clone() for k, v in model.state_dict().items()}
    for x, y in loader:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    delta = {k: model.state_dict()[k] - start[k] for k in start}
    total = torch.sqrt(sum((d ** 2).sum() for d in delta.values()))
    factor = min(1.0, sensitivity / (total.item() + 1e-6))
    for k in delta:
        delta[k] *= factor
    noise_std = sensitivity * sigma
    for k in delta:
        noise = torch.normal(0, noise_std, size=delta[k].shape)
        delta[k] += noise
    return delta
""",
        # output perturbation: the sensitivity is derived (2 / (n λ)), not a constant, and nothing is trained here
        """
import numpy as np
def output_perturbation(weights, n, lam, epsilon):
    sensitivity = 2.0 / (n * lam)
    return weights + np.random.laplace(0, sensitivity / epsilon, weights.shape)
""",
        # (T4 h48) twin of the helper case: the client updates are clipped before the noise helper
        """
from privacy import add_noise
import torch
def aggregate_private(global_model, client_models, noise_scale, clip_norm):
    for m in client_models:
        torch.nn.utils.clip_grad_norm_(m.parameters(), clip_norm)
        for p in m.parameters():
            p.data = add_noise(p.data, noise_scale * clip_norm)
""",
        # (T4 h48) twin: a mechanism helper told the sensitivity of a bounded average
        """
def private_stats(self, rows):
    avg_visits = sum(min(r.visits, 10) for r in rows) / len(rows)
    return self.laplace.add_noise(avg_visits, sensitivity=10 / len(rows))
""",
        # (T4 h48) ordinary ML: an augmentation helper adds noise to the input images
        """
from augment import add_noise
def train_step(model, images, labels, opt, privacy_note="none"):
    images = add_noise(images, 0.1)
    loss = model(images, labels)
    loss.backward()
    opt.step()
""",
    )
    INVALID = (
        # (T4 h48) a noise helper from another module is handed each client's parameters; nothing clips them
        """
from privacy import add_noise
def aggregate_private(global_model, client_models, noise_scale):
    # differential privacy on the client models
    for m in client_models:
        for p in m.parameters():
            p.data = add_noise(p.data, noise_scale)  # <-
""",
        # (S5 h48 twin) the same branch, but it is the privacy step: noise of a fixed std on unclipped weights
        """
import numpy as np
class Peer:
    def share(self, weights, differential_privacy_sigma):
        out = [w for w in weights]
        if self.role == "private":
            print(f"{self.name} applies differential privacy")
            out = [w + np.random.normal(0, differential_privacy_sigma, w.shape) for w in out]  # <-
        return out
""",
        # (fix46-QB twin) the norm is computed and printed, but the update is never rescaled to the bound
        """
import torch
class PrivateClient:
    def train_round(self, model, start, batches):
        for x, y in batches:
            model.step(x, y)
            flat = torch.cat([p.detach().flatten() for p in model.parameters()])
            total_norm = (flat - start).pow(2).sum().sqrt()
            print("update norm", total_norm, "bound", self.bound)

    def noisy_delta(self, model, start):
        # differential privacy: Gaussian noise on the update
        out = {}
        for name, param in model.named_parameters():
            out[name] = param.detach() - start[name] + torch.randn_like(param) * self.sigma  # <-
        return out
""",
        # a client trains, then adds Gaussian noise calibrated to a sensitivity of 1.0 that nothing enforces
        """
import numpy as np
import torch
def add_gaussian_noise(params, epsilon, delta, sensitivity):
    sigma = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon
    return [param + np.random.normal(0.0, sigma, param.shape) for param in params]
class Client:
    def __init__(self, model, loader, epsilon=1.0, delta=1e-5, sensitivity=1.0):
        self.model, self.loader, self.sensitivity = model, loader, sensitivity
        self.epsilon, self.delta = epsilon, delta
    def fit(self, opt, loss_fn):
        for x, y in self.loader:
            opt.zero_grad()
            loss_fn(self.model(x), y).backward()
            opt.step()
        params = [p.detach().numpy() for p in self.model.parameters()]
        return add_gaussian_noise(params, self.epsilon, self.delta, self.sensitivity)  # <-
""",
        # FedAvg of unclipped client weights, noise of a fixed 'dp' std
        """
import copy
import torch
def average_weights(w, dp):
    w_avg = copy.deepcopy(w[0])
    for k in w_avg.keys():
        for i in range(1, len(w)):
            w_avg[k] = w_avg[k] + w[i][k]
        w_avg[k] = torch.div(w_avg[k], len(w)) + torch.mul(torch.randn(w_avg[k].shape), dp)  # <-
    return w_avg
""",
        # a secure aggregation adding 'differential privacy noise' of a configured scale to the stacked mean
        """
import torch
def secure_aggregate(global_model, client_states, privacy_noise=0.1):
    out = {}
    for key in global_model.state_dict():
        avg = torch.mean(torch.stack([cs[key] for cs in client_states], dim=0), dim=0)
        noise = torch.randn_like(avg) * privacy_noise
        out[key] = avg + noise  # <-
    return out
""",
        # a client's local DP: its trained LoRA weights noised in place, nothing clipped
        """
import torch
def add_dp_noise(model, dp_std=0.1):
    for key in model.state_dict().keys():
        model.state_dict()[key] += torch.randn(model.state_dict()[key].shape) * dp_std  # <-
""",
        # a server step from unclipped client differences, weighted, plus N(0, dp^2)
        """
import copy
import torch
def attentive_step(w_server, w_clients, weights_of, lr, dp):
    w_next = copy.deepcopy(w_server)
    for k in w_server.keys():
        step = torch.zeros_like(w_server[k])
        for i in range(len(w_clients)):
            step += (w_server[k] - w_clients[i][k]) * weights_of[k][i]
        w_next[k] = w_server[k] - lr * step + torch.mul(torch.randn(w_server[k].shape), dp)  # <-
    return w_next
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._bounds = False
        for sub in walk(node):
            if isinstance(sub, cst.FunctionDef) and words(sub.name.value) & {"clip", "clipping", "clamp", "project"}:
                self._bounds = True  # the module defines its clip (``def clipping(w, clipthr)``)
                return
            if isinstance(sub, cst.Call):
                name = call_name(sub)
                if words(name) & {"clip", "clamp", "clipping", "clamped", "clipped", "project", "projection"} \
                        or _last(sub) in ("clip", "clamp", "clip_", "clamp_", "minimum"):
                    self._bounds = True
                    return
            elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Divide, cst.Multiply)) \
                    and any(isinstance(n, cst.Call) and (_last(n) in NORM_CALLS or "norm" in words(_last(n)))
                            for n in walk(sub.right)) \
                    and any(isinstance(n, (cst.Name, cst.Attribute)) and is_clip_bound(n) for n in walk(sub)):
                self._bounds = True  # ``v * min(1, C / ‖v‖)``
                return
            elif isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Divide) \
                    and any(isinstance(n, (cst.Name, cst.Attribute)) and is_clip_bound(n) for n in walk(sub.left)) \
                    and any(isinstance(n, (cst.Name, cst.Attribute)) and is_norm_value(n) for n in walk(sub.right)):
                self._bounds = True  # ``scale = self.clip_bound / total_norm`` (the norm computed the line before)
                return

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._bounds:
            return
        self._assigns: dict[str, list[tuple[int, cst.BaseExpression]]] = {}
        fa = self.ctx.analysis
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.Assign) and len(sub.targets) == 1:
                name = dotted(sub.targets[0].target)
                if name is not None:
                    self._assigns.setdefault(name, []).append((fa.line_of(sub), sub.value))
        for sub in walk(node, into_scopes=False):
            if isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, cst.Add):
                for weights, noise in ((sub.left, sub.right), (sub.right, sub.left)):
                    if self._check(node, sub, weights, noise):
                        break
            elif isinstance(sub, cst.AugAssign) and isinstance(sub.operator, cst.AddAssign):
                self._check(node, sub, sub.target, sub.value)
            elif isinstance(sub, cst.Call) and _NOISE_HELPER.fullmatch(call_name(sub)) and len(sub.args) >= 2:
                # (one argument: the helper holds its own calibration, configured elsewhere)
                self._check_helper(node, sub)

    @staticmethod
    def _parameter_data(fn: cst.FunctionDef, expr: cst.BaseExpression) -> bool:
        """``p.data`` / ``p`` where ``p`` is bound by ``for p in model.parameters()`` (or ``named_parameters``)."""
        base = expr.value if isinstance(expr, cst.Attribute) and expr.attr.value in ("data", "weight") else expr
        if not isinstance(base, cst.Name):
            return False
        for loop in walk(fn, into_scopes=False):
            if isinstance(loop, cst.For) and any(isinstance(t, cst.Name) and t.value == base.value
                                                 for t in walk(loop.target)) \
                    and any(isinstance(c, cst.Call) and _last(c) in _WEIGHT_CALLS for c in walk(loop.iter)):
                return True
        return False

    def _check_helper(self, fn: cst.FunctionDef, call: cst.Call) -> None:
        """(T4 h48, adeola-jo/PrivacyFederatedLearning) ``param.data = add_noise(param.data, noise_scale)``: a noise
        helper (defined elsewhere) handed the model weights and a scale that names no bound, in a module that clips
        nothing."""
        fa = self.ctx.analysis
        line = fa.line_of(call)
        weights = call.args[0].value
        if call.args[0].keyword is not None or not (self._weights(weights, line)
                                                    or self._parameter_data(fn, weights)):
            return
        if self._attack_branch(call):
            return
        scale_names: set[str] = set()
        for a in call.args[1:]:
            scale_names |= self._names(a.value, line)
            if a.keyword is not None:
                scale_names.add(a.keyword.value)  # ``add_noise(v, sensitivity=1.0)``: the helper scales by a bound
        scale_words: set[str] = set()
        for name in scale_names:
            scale_words |= words(name.split(".")[-1])
        if scale_words & _BOUNDED_SCALE or any((e := undotted(n)) is not None and is_clip_bound(e) for n in scale_names):
            return
        if not (scale_words & _DP_WORDS or _PRIVACY_CLAIM.search(fa.code(fn))):
            return
        self.report(call, f"`{call_name(call)}` adds noise to model weights (`{fa.code(weights).strip()[:40]}`), but its "
                          "scale names no clip bound or sensitivity and nothing in this module clips an update, a "
                          "gradient or a weight: one client's (or record's) influence on the weights is unbounded, so "
                          "the noise gives no ε; clip each update to norm C and draw noise of std σ·C")

    def _value(self, name: str, line: int) -> cst.BaseExpression | None:
        found = None
        for at, value in self._assigns.get(name, ()):
            if at < line and (found is None or at >= found[0]):
                found = (at, value)
        return found[1] if found else None

    def _draw(self, expr: cst.BaseExpression, line: int, depth: int = 0) -> tuple[cst.Call, cst.BaseExpression] | None:
        """The tensor draw in ``expr`` (``torch.randn(shape) * s``, ``torch.mul(torch.randn(shape), s)``, a name
        bound to one) and the whole noise expression (its scale included)."""
        if isinstance(expr, cst.Name) and depth < 2:
            value = self._value(expr.value, line)
            return self._draw(value, line, depth + 1) if value is not None else None
        if isinstance(expr, cst.Call) and _last(expr) in _DRAWS:
            return expr, expr
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.Divide)) \
                or isinstance(expr, cst.Call) and _last(expr) in ("mul", "multiply"):
            parts = [expr.left, expr.right] if isinstance(expr, cst.BinaryOperation) else [a.value for a in expr.args]
            for part in parts:
                if isinstance(part, cst.Call) and _last(part) in _DRAWS:
                    return part, expr
        return None

    def _names(self, expr: cst.CSTNode, line: int, depth: int = 0) -> set[str]:
        out = {d for n in walk(expr) if isinstance(n, (cst.Name, cst.Attribute)) and (d := dotted(n))}
        if depth < 2:
            for name in list(out):
                value = self._value(name, line)
                if value is not None:
                    out |= self._names(value, line, depth + 1)
        return out

    def _weights(self, expr: cst.BaseExpression, line: int) -> bool:
        """Model weights: a state-dict entry, a parameter, a client-weights average."""
        names = self._names(expr, line)
        calls = {_last(n) for n in walk(expr) if isinstance(n, cst.Call)}
        for name in names:
            value = self._value(name, line)
            if value is not None:
                calls |= {_last(n) for n in walk(value) if isinstance(n, cst.Call)}
        if calls & _WEIGHT_CALLS:
            return True
        pieces = set()
        for name in names:
            pieces |= words(name.split(".")[-1])
        if pieces & {"grad", "grads", "gradient", "gradients", "x", "inputs", "input", "data", "images", "emb",
                     "embeddings", "hidden", "features", "latent", "z"}:
            return False
        return bool(pieces & _WEIGHT_WORDS)

    def _assumed_sensitivity(self, scale_words: set[str]) -> bool:
        """The scale's only bound is a sensitivity this module fixes to a number (``sensitivity=1.0``), and the
        module trains the model whose weights are noised without clipping anything: a constant assumed, never
        enforced (g3 2026-11-27: PNdew/PPan-In-FL adds N(0, σ(Δ=1)) to a client's trained parameters)."""
        named = scale_words & _BOUNDED_SCALE
        if not named or named - {"sensitivity", "sens", "sensitivities"}:
            return False
        fa = self.ctx.analysis
        if not any(isinstance(f, cst.FunctionDef) and fa.trains(f.body) for f in walk(self.ctx.module)):
            return False
        for sub in walk(self.ctx.module):
            # any norm computed or a ``min(1, S / total)`` factor: the module bounds something after all
            if isinstance(sub, cst.Call) and ("norm" in words(_last(sub)) or _last(sub) in NORM_CALLS or (
                    _last(sub) in ("min", "minimum") and any(isinstance(n, cst.BinaryOperation) and isinstance(
                        n.operator, cst.Divide) for a in sub.args for n in walk(a.value)))):
                return False
        for sub in walk(self.ctx.module):
            pairs: list[tuple[cst.CSTNode, cst.BaseExpression | None]] = []
            if isinstance(sub, cst.Param) and sub.default is not None:
                pairs.append((sub.name, sub.default))
            elif isinstance(sub, cst.Assign) and len(sub.targets) == 1:
                pairs.append((sub.targets[0].target, sub.value))
            for target, value in pairs:
                name = dotted(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
                if name is None or value is None or not isinstance(value, (cst.Integer, cst.Float)):
                    continue
                if words(name.split(".")[-1]) & named:
                    return True
        return False

    def _attack_branch(self, site: cst.CSTNode) -> bool:
        """(S5 h48, TetNyiAung client_dp.py) The noise sits in a branch that simulates an attacker: its test or
        the strings it prints name an attack (``if cid == "client_9": print("Noise Injection attack")``,
        ``if self.malicious:``). That noise is the adversary's poisoning, not a privacy mechanism."""
        fa = self.ctx.analysis
        for anc in fa.ancestors(site):
            if isinstance(anc, cst.FunctionDef):
                break
            if not isinstance(anc, cst.If) or not any(n is site for n in walk(anc.body)):
                continue
            texts = [fa.code(anc.test)]
            texts += [str(n.evaluated_value) for n in walk(anc.body) if isinstance(n, cst.SimpleString)]
            texts += [fa.code(n) for n in walk(anc.body) if isinstance(n, cst.FormattedString)]
            if any(words(t) & _ATTACK_WORDS or re.search(r"(?i)\battack|malicious|byzantine|poison", t)
                   for t in texts):
                return True
        return False

    def _check(self, fn: cst.FunctionDef, site: cst.CSTNode, weights: cst.BaseExpression,
               noise: cst.BaseExpression) -> bool:
        line = self.ctx.analysis.line_of(site)
        found = self._draw(noise, line)
        if found is None:
            return False
        draw, whole = found
        if not self._weights(weights, line):
            return False
        if self._attack_branch(site):
            return False
        # the draw is shaped like the weights (``randn_like(avg)``, ``randn(w[k].shape)``, ``size=p.shape``)
        target_names = {n.split(".")[0] for n in self._names(weights, line)} - {"self", "np", "torch", "args"}
        draw_names = {n.split(".")[0] for n in self._names(draw, line, 2)}
        if not draw_names & target_names:
            return False
        scale_names = self._names(whole, line) - self._names(weights, line)
        scale_words: set[str] = set()
        for name in scale_names:
            scale_words |= words(name.split(".")[-1])
        assumed = False
        if scale_words & _BOUNDED_SCALE or any((e := undotted(n)) is not None and is_clip_bound(e) for n in scale_names):
            if not self._assumed_sensitivity(scale_words):
                return False
            assumed = True
        fa = self.ctx.analysis
        if not (scale_words & _DP_WORDS or _PRIVACY_CLAIM.search(fa.code(fn))):
            return False  # noise on weights with no privacy claim (a 'weak DP' robustness defence, exploration)
        if assumed:
            # a noise helper handed the weights: the caller that passes the unclipped trained weights is the bug
            params = {p.name.value for p in fn.params.params}
            calls = [c for c in walk(self.ctx.module) if isinstance(c, cst.Call) and _last(c) == fn.name.value] \
                if target_names & params or any(words(p) & _WEIGHT_WORDS for p in params) else []
            for at in calls or [site]:
                self.report(at, f"noise (`{fa.code(draw).strip()[:40]}`) on model weights is calibrated to a "
                                "sensitivity this module fixes to a constant, but the weights are trained here and "
                                "nothing clips an update, a gradient or a weight: the assumed sensitivity is never "
                                "enforced, so the noise gives no ε; clip the update (or per-example gradients) to "
                                "that bound before the noise")
            return True
        self.report(
            site,
            f"noise (`{fa.code(draw).strip()[:40]}`) is added to model weights, but its scale names no clip bound or "
            "sensitivity and nothing in this module clips an update, a gradient or a weight: one client's (or "
            "record's) influence on the weights is unbounded, so the noise gives no ε; clip each update to norm C "
            "and draw noise of std σ·C",
        )
        return True
