"""DP716: the next clipping bound of DP-SGD is set from exact statistics (histogram, percentile, clipped ratio) of
the private per-sample gradient norms, with no noise and nothing charged."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, target_nodes, walk, words
from dpcheck.analysis.vocabulary import NOISE_DRAWS
from dpcheck.rule import Rule

#: words of a value holding per-sample gradient norms: ``grad_norms``, ``per_sample_norms``
_NORM_WORDS = frozenset({"norm", "norms"})
_GRAD_WORDS = frozenset({"grad", "grads", "gradient", "gradients", "sample", "samples", "per"})
#: a call returning the exact fraction of clipped samples
_CLIPPED = frozenset({"clipped", "clip", "clipping", "unclipped"})
_FRACTION = frozenset({"ratio", "fraction", "frac", "proportion", "rate", "quantile"})
#: words of a call or value that carries noise: the statistic is privatised
_NOISY = frozenset({"noise", "noisy", "noised", "laplace", "gaussian", "gauss", "private", "privatize",
                    "privatized", "dp", "perturb", "perturbed", "randomized"})
#: calls taking an exact statistic of the norms
_STATS = frozenset({"percentile", "nanpercentile", "quantile", "nanquantile", "median", "nanmedian", "histogram",
                    "histc", "bincount", "mean", "std", "max", "amax", "kthvalue", "topk", "sort", "sorted"})
#: calls that put a value into a collector object (``hist.add_batch(norms)``, ``self.norms.extend(n)``)
_COLLECT = frozenset({"append", "extend", "add_batch", "add", "update", "record", "observe", "push", "collect",
                      "accumulate", "add_norms", "track", "log_norms"})
#: names of a clipping bound
_CLIP_NAMES = frozenset({"max_grad_norm", "l2_norm_clip", "clip_norm", "clipping_norm", "max_norm", "norm_bound",
                         "clip", "clip_c", "clipping_c"})
_C_WORDS = frozenset({"c", "new", "best", "trial", "optimal", "opt", "next", "current", "cur", "updated", "self",
                      "candidate", "raw"})
_CLIP_TAIL = frozenset({"bound", "threshold", "norm", "value", "level", "radius", "c", "max"})
_NOT_BOUND = frozenset({"factor", "factors", "coef", "coeff", "scale", "scales", "mask", "ratio", "fraction",
                        "count", "counts", "grads", "grad", "gradient", "gradients", "per", "history", "hist", "loss",
                        "losses", "weight", "weights"})


def _is_norm_name(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    if last == "grad_sample":
        return True
    w = words(last)
    return bool(w & _NORM_WORDS) and bool(w & _GRAD_WORDS) and not (w & {"max", "clip", "clipping", "bound"})


def _is_clip_target(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    if last in _CLIP_NAMES:
        return True
    w = words(last)
    if "c" in w and w <= _C_WORDS:
        return True
    return bool(w & {"clip", "clipping"}) and bool(w & _CLIP_TAIL) and not (w & _NOT_BOUND)


def _noisy_call(call: cst.Call) -> bool:
    name = call_name(call) or ""
    return name in NOISE_DRAWS or bool(words(name) & _NOISY)


class ClipBoundFromExactGradientNorms(Rule):
    id = "DP716"
    name = "clip-bound-from-exact-gradient-norms"
    category = "general"
    severity = "error"
    summary = ("the clipping bound is set from exact statistics (histogram, percentile, clipped ratio) of the "
               "private per-sample gradient norms, with no noise and no ε charged")
    rationale = (
        "Adaptive clipping picks the next bound C from the distribution of the per-sample gradient norms. Those "
        "norms are functions of the private records: a percentile, a histogram or the exact fraction of clipped "
        "samples moves when one record changes, and C then sets the noise scale of every later step and is "
        "visible in the released model. DP adaptive clipping (Andrew et al.) releases that statistic with noise "
        "(a noisy clipped count) and charges it; code that reads the exact one spends privacy nobody accounts "
        "for. Reported: in one function, a value derived from per-sample gradient norms (`grad_norms`, "
        "`per_sample_norms`, `p.grad_sample`, a collector they were added to, an exact `get_clipped_ratio()`) "
        "reaching a clipping-bound name (`max_grad_norm`, `clip_norm`, `C`, `new_c`, `best_c`) without passing "
        "through a noise draw or a noisy helper; the report sits on the exact statistic when the function takes "
        "one, else on the bound that is set. Bad: `c = np.percentile(norms, 90)`; "
        "`optimizer.max_grad_norm = controller.update(hist_of_norms)`. Good: `frac = (unclipped + "
        "np.random.normal(0, s)) / b` before updating C, with the query composed into ε."
    )
    TRIGGERS = ("norm", "clip")
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A finding needs a norm-named value (or ``grad_sample``, or a clipped-ratio call) and a clip-bound name
        that is assigned."""
        ids = facts.identifiers
        if not any(_is_norm_name(i) for i in ids) and not any(
                words(i) & _CLIPPED and words(i) & _FRACTION for i in ids):
            return False
        for node in facts.nodes(ast.Assign, ast.AugAssign, ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            for t in targets:
                for sub in ast.walk(t):
                    name = sub.attr if isinstance(sub, ast.Attribute) else sub.id if isinstance(sub, ast.Name) \
                        else None
                    if name and _is_clip_target(name):
                        return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        """Functions of this module that noise what they compute (directly or through another of them): a
        bound updated by ``_updated_clipping_norm(…)`` whose body draws a noisy clipped rate is private."""
        bodies = {sub.name.value: sub for sub in walk(node) if isinstance(sub, cst.FunctionDef)}
        noisy: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, fn in bodies.items():
                if name in noisy:
                    continue
                if any(isinstance(c, cst.Call) and (_noisy_call(c) or call_name(c) in noisy) for c in walk(fn.body)):
                    noisy.add(name)
                    changed = True
        self._noisy_helpers = noisy

    def _noisy(self, call: cst.Call) -> bool:
        return _noisy_call(call) or call_name(call) in getattr(self, "_noisy_helpers", ())

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        tainted: dict[str, cst.CSTNode | None] = {}
        noise_names: set[str] = set()
        candidates: list[tuple[cst.CSTNode, cst.CSTNode | None, bool]] = []

        def judge(expr: cst.CSTNode, stmt: cst.CSTNode) -> tuple[bool, cst.CSTNode | None]:
            hit, origin, stat = False, None, False
            for sub in walk(expr):
                if isinstance(sub, cst.Call):
                    if self._noisy(sub):
                        return False, None
                    name = call_name(sub) or ""
                    w = words(name)
                    if w & _CLIPPED and w & _FRACTION and not name.startswith("set"):
                        hit, origin = True, origin or stmt
                    if name in _STATS:
                        stat = True
                d = dotted(sub) if isinstance(sub, (cst.Name, cst.Attribute)) else None
                if d is None:
                    continue
                if d in tainted:
                    hit = True
                    origin = origin or tainted[d]
                elif d in noise_names:
                    return False, None
                elif _is_norm_name(d):
                    hit = True
            if hit and origin is None and stat:
                origin = stmt
            return hit, origin

        for stmt in walk(node.body, into_scopes=False):
            if isinstance(stmt, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
                if stmt.value is None:
                    continue
                targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
                names = [d for t in targets for n in target_nodes(t) if (d := dotted(n))]
                if any(isinstance(c, cst.Call) and self._noisy(c) for c in walk(stmt.value)):
                    noise_names.update(names)
                    continue
                hit, origin = judge(stmt.value, stmt)
                if not hit:
                    continue
                for name in names:
                    tainted[name] = origin
                    if _is_clip_target(name):
                        candidates.append((stmt, origin, "." in name))
            elif isinstance(stmt, cst.Call) and isinstance(stmt.func, cst.Attribute) \
                    and stmt.func.attr.value in _COLLECT:
                owner = dotted(stmt.func.value)
                if owner and any(judge(a.value, stmt)[0] for a in stmt.args):
                    tainted.setdefault(owner, None)
        candidates = [c for c in candidates if c[2] or not self._noiseless_mode(c[0], node)]
        if not candidates:
            return
        with_origin = [o for _, o, _ in candidates if o is not None]
        applied = [s for s, _, attr in candidates if attr]
        at = with_origin[0] if with_origin else applied[0] if applied else candidates[0][0]
        self.report(
            at,
            "the clipping bound is set from an exact statistic of the private per-sample gradient norms: it moves "
            "with one record and no ε covers it; release the statistic with noise (e.g. a noisy clipped count) "
            "and charge it, or keep C fixed",
        )

    def _noiseless_mode(self, stmt: cst.CSTNode, fn: cst.FunctionDef) -> bool:
        """(S5 h48, ryx103/dp_llm training.py) The local bound is moved inside one arm of a mode switch
        (``elif strategy == "Adaptive Clipping":``) that draws no noise, and the function never reassigns the
        switch: the runs that add noise take another arm and never see the adapted bound, and the arm that
        adapts it releases nothing private."""
        fa = self.ctx.analysis
        for anc in fa.ancestors(stmt):
            if anc is fn:
                return False
            if not isinstance(anc, cst.If) or not any(n is stmt for n in walk(anc.body)):
                continue
            test = anc.test
            if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1
                    and isinstance(test.comparisons[0].operator, (cst.Equal, cst.In))
                    and any(isinstance(n, cst.SimpleString) for n in walk(test.comparisons[0].comparator))):
                continue
            switch = dotted(test.left)
            if switch is None:
                continue
            if any(isinstance(c, cst.Call) and (self._noisy(c) or call_name(c) in NOISE_DRAWS)
                   for c in walk(anc.body)):
                return False
            for sub in walk(fn.body):
                targets = [t.target for t in sub.targets] if isinstance(sub, cst.Assign) else \
                    [sub.target] if isinstance(sub, (cst.AugAssign, cst.AnnAssign)) else []
                if any(dotted(n) == switch for t in targets for n in target_nodes(t)):
                    return False
            return True
        return False

    VALID = (
        # (S5 h48) only the noiseless "adaptive" arm of a strategy switch moves the local bound
        """
import torch
def fit(model, loader, opt, mode, clip_norm, noise_multiplier, dp_epsilon):
    for x, y in loader:
        opt.zero_grad()
        model.loss(x, y).backward()
        if mode == "dpsgd":
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
            for p in model.parameters():
                p.grad += torch.normal(0, noise_multiplier * clip_norm, p.grad.shape)
        elif mode == "adaptive":
            grad_norm = total_grad_norm(model)
            if grad_norm > clip_norm:
                clip_norm = grad_norm * 1.2
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        opt.step()
""",
        # ordinary ML: gradient clipping tuned to the observed norms, no privacy anywhere
        """
import torch
def train(model, loader, opt):
    clip_norm = 1.0
    for x, y in loader:
        model.loss(x, y).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        clip_norm = 0.9 * clip_norm + 0.1 * float(grad_norm)
        opt.step()
""",
        # twin: the bound is updated by a helper of the module that draws the noisy clipped count itself
        """
import numpy as np
def _noisy_rate(count, batch_size, std, rng):
    return (count + rng.normal(0, std)) / batch_size
def _next_bound(bound, count, batch_size, std, rng, target=0.5, lr=0.2):
    return bound * np.exp(-lr * (_noisy_rate(count, batch_size, std, rng) - target))
def step(state, grad_norms, batch_size, rng):
    num_clipped = float((grad_norms > state.clip_norm).sum())
    new_clipping_norm = _next_bound(state.clip_norm, num_clipped, batch_size, state.std, rng)
    state.clip_norm = new_clipping_norm
    return state
""",
        # twin: the clipped fraction is released with Gaussian noise before C moves (Andrew et al.)
        """
import numpy as np
class QuantileClip:
    def update(self, grad_norms, batch_size, sigma_b):
        unclipped = float(np.sum(grad_norms <= self.clip_norm))
        noisy_frac = (unclipped + np.random.normal(0, sigma_b)) / batch_size
        self.clip_norm = self.clip_norm * np.exp(-0.2 * (noisy_frac - 0.5))
""",
        # twin: noise drawn into a name first, then C is updated from the noisy count
        """
import numpy as np
def next_bound(per_sample_norms, c, sigma_b, eta, target):
    below = (per_sample_norms <= c).sum()
    noise = np.random.normal(0.0, sigma_b)
    frac = (below + noise) / len(per_sample_norms)
    new_c = c * np.exp(-eta * (frac - target))
    return new_c
""",
        # twin: the controller reads a noisy clipped ratio
        """
def after_epoch(controller, hist, optimizer, eps_hist):
    ratio = hist.get_noisy_clipped_ratio(eps_hist)
    optimizer.max_grad_norm = controller.from_ratio(ratio)
""",
        # the norms are clipped with a fixed bound; the factor is not a bound
        """
import torch
def clip_rows(grad_sample, max_grad_norm):
    per_sample_norms = grad_sample.reshape(len(grad_sample), -1).norm(2, dim=1)
    clip_factor = (max_grad_norm / (per_sample_norms + 1e-6)).clamp(max=1.0)
    return grad_sample * clip_factor[:, None]
""",
        # ordinary ML, no privacy: AutoClip sets the clip value from the gradient-norm history
        """
import numpy as np
import torch
def autoclip(model, history, pct):
    total = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    history.append(total.item())
    clip_value = np.percentile(history, pct)
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip_value)
""",
    )

    INVALID = (
        # (S5 h48 twin) the adapted bound is in the arm that adds noise
        """
import torch
def fit(model, loader, opt, mode, clip_norm, noise_multiplier, dp_epsilon):
    for x, y in loader:
        opt.zero_grad()
        model.loss(x, y).backward()
        if mode == "adaptive_dpsgd":
            grad_norm = total_grad_norm(model)
            if grad_norm > clip_norm:
                clip_norm = grad_norm * 1.2  # <-
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
            for p in model.parameters():
                p.grad += torch.normal(0, noise_multiplier * clip_norm, p.grad.shape)
        opt.step()
""",
        """
import numpy as np
class PercentileClipper:
    def choose(self, noise_multiplier):
        sigma = noise_multiplier
        norms = np.array(self.epoch_grad_norms)
        best_c, best_err = self.c, float("inf")
        for p in (80, 90, 95, 99):
            trial_c = np.percentile(norms, p)  # <-
            err = np.mean(np.maximum(norms - trial_c, 0) ** 2) + (trial_c * sigma) ** 2
            if err < best_err:
                best_c, best_err = trial_c, err
        return best_c
""",
        """
def train_epoch(model, loader, optimizer, tracker, controller, privacy_engine, delta):
    for x, y in loader:
        optimizer.zero_grad()
        model.loss(x, y).backward()
        per_sample_norms = [p.grad_sample.flatten(1).norm(dim=1) for p in model.parameters()]
        tracker.add_batch(per_sample_norms)
        optimizer.step()
    eps = privacy_engine.accountant.get_epsilon(delta=delta)
    new_bound = controller.update(tracker)
    optimizer.max_grad_norm = new_bound  # <-
    return eps
""",
        """
class RatioController:
    def step(self, hist, epsilon_hist):
        if self.private_query:
            ratio = hist.get_noisy_clipped_ratio(epsilon_hist)
        else:
            ratio = hist.get_clipped_ratio()  # <-
        self.c = self._adjust(ratio)
        return self.c
""",
        """
import numpy as np
def dp_train(model, batches, noise_multiplier, clip_norm, epochs):
    for _ in range(epochs):
        seen = []
        for xb in batches:
            norms = per_sample_grad_norms(model, xb)
            seen.extend(norms.tolist())
            noisy_step(model, xb, clip_norm, noise_multiplier)
        clip_norm = float(np.median(seen))  # <-
    return model
""",
    )
