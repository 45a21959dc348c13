"""DP728: an aggregation switch on a non-privacy option (``simple_average``, ``weighted``) whose one branch
clips and noises the accumulated update while the other sums the raw values into the same result."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, string_text, subscripted_name, target_names, walk, words
from dpcheck.rule import Rule

_DRAWS = frozenset({"laplace", "normal", "gauss", "randn", "randn_like", "standard_normal", "normal_",
                    "gumbel", "Laplace", "Normal", "discrete_laplace", "discrete_gaussian"})
#: a helper called on the noised side (``add_gaussian_noise``); a draw is the other sign
_NOISE_WORDS = frozenset({"noise", "noisy", "noised", "privatize", "privatise", "perturb"})
#: anything of these on the plain side (a call, a name read) means it is not raw: already noised, or private
_GUARD_WORDS = _NOISE_WORDS | frozenset({"dp", "clip", "clipped", "sanitize", "sanitise", "mechanism", "private",
                                         "privatized", "privatised", "laplace", "gaussian"})
_REDUCTIONS = frozenset({"sum", "mean", "average", "stack", "nansum", "nanmean", "add", "reduce"})
#: a switch named for privacy is an explicit non-private mode, not a hidden one
_PRIVACY_WORDS = frozenset({"dp", "ldp", "cdp", "private", "privacy", "priv", "nodp", "noise", "noisy", "sigma",
                            "epsilon", "eps", "secure", "clip", "clipping", "mechanism", "baseline", "nonprivate",
                            "plain", "vanilla", "attack", "attacker", "malicious", "byzantine", "adversary",
                            "budget", "laplace", "gaussian", "rho", "multiplier", "test", "eval", "evaluate",
                            "debug", "training", "train"})


def _has_draw(node: cst.CSTNode) -> bool:
    return any(isinstance(sub, cst.Call) and call_name(sub) in _DRAWS for sub in walk(node))


def _noisy(stmt: cst.CSTNode) -> bool:
    """A call named for noise, or a draw added to a value (``acc += … randn``, ``x = x + randn(…)``); a fresh
    draw stored on its own (``images = torch.randn(B, 3, H, W)``, synthetic inputs) noises nothing."""
    for sub in walk(stmt):
        if isinstance(sub, cst.Call) and words(call_name(sub)) & _NOISE_WORDS:
            return True
    if isinstance(stmt, cst.AugAssign):
        return _has_draw(stmt.value)
    return any(isinstance(sub, cst.BinaryOperation) and isinstance(sub.operator, (cst.Add, cst.Subtract))
               and _has_draw(sub) for sub in walk(stmt))


def _guarded(node: cst.CSTNode) -> bool:
    """Calls, names or attributes on the plain side named for noise, clipping or privacy."""
    for sub in walk(node):
        ident = sub.value if isinstance(sub, cst.Name) else sub.attr.value if isinstance(sub, cst.Attribute) else None
        if ident is not None and words(ident) & _GUARD_WORDS:
            return True
        if isinstance(sub, cst.Call) and call_name(sub) in _DRAWS:
            return True
    return False


def _accumulates(stmt: cst.CSTNode, name: str) -> bool:
    """``acc += …``, ``acc = acc + …``, ``acc = torch.stack(…).mean(0)``: a sum of the inputs, not a copy."""
    if isinstance(stmt, cst.AugAssign):
        return True
    if not isinstance(stmt, cst.Assign):
        return False
    for sub in walk(stmt.value):
        # the name inside arithmetic (``acc = acc + w``), not a method of it (``images = images.cuda()``)
        if isinstance(sub, cst.BinaryOperation) and any(
                isinstance(side, cst.Name) and side.value == name for side in walk(sub)):
            return True
        if isinstance(sub, cst.Call) and call_name(sub) in _REDUCTIONS:
            return True
    return False


def _stores(block: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
    """Accumulator names a block assigns (``avg += …``, ``avg = …``, ``avg[k] += …``) -> the statements."""
    out: dict[str, list[cst.CSTNode]] = {}
    for sub in walk(block, into_scopes=False):
        if isinstance(sub, cst.AugAssign):
            name = subscripted_name(sub.target)
            if name:
                out.setdefault(name, []).append(sub)
        elif isinstance(sub, cst.Assign):
            for t in sub.targets:
                for name in target_names(t.target) | ({subscripted_name(t.target)} - {None}):
                    out.setdefault(name, []).append(sub)
    return out


def _test_words(test: cst.CSTNode) -> set[str]:
    out: set[str] = set()
    for sub in walk(test):
        if isinstance(sub, cst.Name):
            out |= words(sub.value)
        elif isinstance(sub, cst.Attribute):
            out |= words(sub.attr.value)
        elif isinstance(sub, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            out |= words(string_text(sub))
    return out


class BranchAggregatesWithoutNoise(Rule):
    id = "DP728"
    name = "branch-aggregates-without-noise"
    category = "general"
    severity = "error"
    summary = ("an aggregation switch on an option unrelated to privacy clips and noises the update in one "
               "branch and sums the raw updates into the same result in the other")
    rationale = (
        "A DP-FedAvg server (or a DP sum) is private only if every path that builds the released aggregate "
        "clips each contribution and adds the calibrated noise. When the aggregation is split by an option "
        "that has nothing to do with privacy — simple versus sample-weighted averaging, `--noaverage`, a "
        "`weighted` flag — and only one branch clips and noises, the other branch releases the exact "
        "(weighted) sum of raw client models while the run still charges and prints ε: the README's command "
        "line can select the unprotected branch. Reported: an `if`/`else` whose test names no privacy word "
        "(dp, privacy, noise, sigma, epsilon, clip, baseline, attack, …), where one branch stores into an "
        "accumulator with a noise draw (or a call named for noise/clipping) and the other stores into the "
        "same accumulator with neither. "
        "Bad: `if self.simple_average: avg += clip(w) + sigma * randn(...)` / `else: avg += n * w`. "
        "Good: clip and noise in both branches (or only the weights differ), or name the switch as a "
        "non-private mode and report no ε for it."
    )
    TRIGGERS = ("else",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs an ``if`` with an ``else`` and a noise draw or a call named for noise."""
        if not any(n.orelse for n in facts.nodes(ast.If)):  # type: ignore[attr-defined]
            return False
        return facts.calls_any(_DRAWS) or any(words(n) & _NOISE_WORDS for n in facts.called)

    def visit_If(self, node: cst.If) -> None:
        if not isinstance(node.orelse, cst.Else):
            return
        if _test_words(node.test) & _PRIVACY_WORDS:
            return
        for noised_block, plain_block in ((node.body, node.orelse.body), (node.orelse.body, node.body)):
            noised = {name for name, stmts in _stores(noised_block).items() if any(_noisy(s) for s in stmts)}
            if not noised:
                continue
            plain = _stores(plain_block)
            if _guarded(plain_block):
                continue
            tested = {n.value for n in walk(node.test) if isinstance(n, cst.Name)}
            for name in sorted(noised & set(plain)):
                # ``if counts is None: counts = noisy(...) else: counts = counts.groupby(...).sum()``: the
                # caller's value is re-summed, not the raw records
                if name in tested or words(name) & {"noise", "noisy", "sigma", "std", "scale"}:
                    continue
                sums = [s for s in plain[name] if _accumulates(s, name)]
                if not sums:
                    continue
                stmt = next((s for s in sums if isinstance(s, cst.AugAssign)), sums[0])
                self.report(
                    stmt,
                    f"this branch builds `{name}` from the raw values, without the clipping and noise the other "
                    "branch of the same switch applies, and the switch is not a privacy option: a run that "
                    "takes it releases an exact aggregate while ε is still charged; clip and noise here too",
                )
                return

    VALID = (
        # ordinary ML: a benchmark switch between loaded batches and synthetic inputs (a fresh draw is data,
        # not noise; moving a tensor to the device sums nothing)
        """
import torch
def bench(train_loader, model, optimizer, criterion, from_loader, B, H, W):
    if from_loader:
        for images, target in train_loader:
            images = images.cuda(non_blocking=True)
            loss = criterion(model(images), target.cuda())
            loss.backward()
            optimizer.step()
    else:
        images = torch.randn(B, 3, H, W).cuda()
        target = torch.arange(B).cuda()
        loss = criterion(model(images), target)
        loss.backward()
        optimizer.step()
    return loss
""",
        # twin: both averaging modes clip and noise, only the weights differ
        """
import torch
def aggregate(updates, w_clip, sigma, simple_average, total):
    avg = torch.zeros_like(updates[0][1])
    if simple_average:
        for n, u in updates:
            u = u / max(1, torch.norm(u) / w_clip)
            avg += u + sigma * w_clip * torch.randn(u.shape)
        avg /= len(updates)
    else:
        for n, u in updates:
            u = u / max(1, torch.norm(u) / w_clip)
            avg += n * (u + sigma * w_clip * torch.randn(u.shape))
        avg /= total
    return avg
""",
        # the switch is the privacy option itself
        """
import numpy as np
def server_step(models, use_dp, sigma):
    agg = np.zeros_like(models[0])
    if use_dp:
        for m in models:
            agg += m + np.random.normal(0, sigma, m.shape)
    else:
        for m in models:
            agg += m
    return agg / len(models)
""",
        # noise added after the switch, to whatever it built
        """
import numpy as np
def release(values, weights, weighted, epsilon):
    if weighted:
        total = float(np.dot(values, weights))
    else:
        total = float(values.sum())
    total = total + np.random.laplace(0, 1 / epsilon)
    return total
""",
        # the other branch reads statistics that were noised before the switch, or a caller's value
        """
import numpy as np
def conditionals(net, data, epsilon, k):
    noisy_first = noisy_marginal(net[:k], data, epsilon)
    out = {}
    for i, (child, parents) in enumerate(net):
        if i >= k:
            stats = noisy_marginal(parents + [child], data, epsilon)
        else:
            stats = noisy_first.loc[:, parents + [child]].groupby(parents).sum()
        out[child] = stats
    return out
""",
        # noised counts computed only when the caller passed none; else the caller's counts are re-grouped
        """
def distribution(self, data, attrs, counts=None):
    if counts is None:
        counts = self.noisy_counts(data, attrs)
    else:
        counts = counts[attrs + ["count"]].groupby(attrs).sum()
    return counts
""",
        # ordinary ML: augmentation noise only on the training branch
        """
import torch
def forward(x, layer, training):
    if training:
        h = layer(x + 0.05 * torch.randn_like(x))
    else:
        h = layer(x)
    return h
""",
    )

    INVALID = (
        # the non-simple averaging path sums the raw weighted local models
        """
import torch
class DPServer:
    def aggregate(self, solns, repeat):
        avg = torch.zeros_like(self.latest)
        if self.simple_average:
            for i, (n, sol) in enumerate(solns):
                sol = sol / max(1, torch.norm(sol) / self.w_clip)
                avg += (sol + self.sigma * self.w_clip * torch.randn(sol.shape)) * repeat[i]
            avg /= self.per_round
        else:
            for n, sol in solns:
                avg += n * sol  # <-
            avg /= self.total_samples
        return avg
""",
        # numpy, the noisy branch in the else and a helper named for noise
        """
import numpy as np
def dp_combine(client_deltas, counts, mode, sigma, clip):
    out = np.zeros_like(client_deltas[0])
    if mode == "weighted":
        for d, c in zip(client_deltas, counts):
            out = out + c * d  # <-
        out = out / sum(counts)
    else:
        for d in client_deltas:
            out = out + add_gaussian_noise(clip_update(d, clip), sigma)
        out = out / len(client_deltas)
    return out
""",
        # a dict of layer averages, noised only when averaging per client
        """
import torch
def dp_fedavg(states, per_client, sigma):
    avg = {}
    for key in states[0]:
        if per_client:
            avg[key] = sum(s[key] for s in states) / len(states) + sigma * torch.randn_like(states[0][key])
        else:
            avg[key] = torch.stack([s[key] for s in states]).mean(0)  # <-
    return avg
""",
        # a momentum variant that skips the noise
        """
import numpy as np
def server_update(global_w, deltas, momentum, buf, beta, noise_std):
    mean_delta = np.mean(deltas, axis=0)
    if momentum:
        buf = beta * buf + mean_delta  # <-
    else:
        buf = mean_delta + np.random.normal(0, noise_std, mean_delta.shape)
    return global_w + buf, buf
""",
    )
