"""DP137: the value that holds the release takes the noisy value on one path and the exact private value on another."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.noisedraws import PURE_DRAWS
from dpcheck.analysis.syntax import call_name, walk, words
from dpcheck.rule import Rule

#: words of a called helper that draws the mechanism's noise (``StaircaseNoise(b)``, ``laplace_mech(x, eps)``)
_NOISE_CALL_WORDS = frozenset({"noise", "laplace", "gaussian", "staircase", "perturb", "privatize", "privatise",
                               "randomize", "randomise", "mechanism", "mech", "mvn", "normal", "multivariate"})
#: words of a noise draw's arguments that are its calibration, not the value it protects
_KNOB_WORDS = frozenset({"scale", "eps", "epsilon", "budget", "sigma", "std", "sensitivity", "sens", "delta",
                         "size", "shape", "loc", "mean", "b", "lam", "beta", "rho", "np", "numpy", "torch",
                         "random", "window", "windowsize", "len", "float", "int", "abs"})


#: words that show the module spends a privacy budget
_BUDGET_WORDS = frozenset({"epsilon", "eps", "budget", "windowepsilon", "privacy", "ldp", "sensitivity", "rho",
                           "multiplier"})


#: words of a name that says it holds the noised output
_NOISY_SINK_WORDS = frozenset({"noisy", "noised", "sanitized", "sanitised", "perturbed", "privatized", "privatised"})


#: string labels a branch gives itself when it is the declared no-noise mode
_OFF_LABELS = frozenset({"none", "no_dp", "nodp", "no-dp", "non_private", "nonprivate", "non-private", "off",
                         "disabled", "no_noise", "nonoise", "plain"})


def _release_name(name: str) -> bool:
    low = name.lower()
    return "releas" in low or "publish" in low or bool(words(name) & _NOISY_SINK_WORDS)


def _noise_call(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.Call):
        return False
    name = call_name(node) or ""
    return name in PURE_DRAWS or bool(words(name) & _NOISE_CALL_WORDS)


def _scope_nodes(body: cst.CSTNode) -> list[cst.CSTNode]:
    """Every node of a scope, in order, without the bodies of nested functions, classes and lambdas."""
    out: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [body]
    while stack:
        node = stack.pop()
        out.append(node)
        if node is not body and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(reversed(list(node.children)))
    return out


class ReleaseTakesExactValue(Rule):
    id = "DP137"
    name = "release-takes-exact-value"
    category = "general"
    severity = "error"
    summary = ("the variable or list holding the release gets the noisy value on one path and the exact private "
               "value (the first count, the current element) on another")
    rationale = (
        "A streaming or iterative mechanism publishes `noisy = x + Lap(b)` and keeps it as its last release; "
        "when another path stores the exact value in the same place (`last_release = window[0]` to start the "
        "stream, `published.append(x)` on a skipped step), that exact count is published or used as the "
        "approximation of later steps without any noise, although the run books (or claims) a budget for every "
        "step. Reported: a name containing `release`/`publish` that is assigned (or appended) the result of a "
        "noise draw in one place and, in the same function or script, the very value the draw protects (the "
        "draw's argument, an element of the sequence it iterates) in another. "
        "Not reported: the other path storing the last noisy release or another noisy value, a release "
        "initialised with a constant or a public value, code with no DP context. Fix: release a noisy first "
        "value (spend budget on it) and approximate skipped steps by the last noisy release."
    )
    TRIGGERS = ("except", "releas", "publish", "noisy", "noised", "saniti", "perturbed", "privati")
    #: the module-level script of a streaming mechanism is often outside the DP context the analysis sees (the
    #: ε lives in a helper's parameter); the module must name a budget instead
    requires_dp_context = False

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        return True

    VALID = (
        # twin: the stream starts from a noisy first release
        """
import numpy as np
def stream(counts, eps):
    last_release = None
    published = []
    for t, x in enumerate(counts):
        if t == 0:
            last_release = np.random.laplace(x, 1 / eps)
        elif abs(x - last_release) > 1 / eps:
            last_release = np.random.laplace(x, 1 / eps)
        published.append(last_release)
    return published
""",
        # twin: a skipped step republishes the last noisy release
        """
import numpy as np
def absorb(window, eps, threshold):
    published = []
    lastrelease = 0.0
    for value in window:
        if abs(value - lastrelease) > threshold:
            noisy = value + np.random.laplace(0, 2 / eps)
            lastrelease = noisy
            published.append(noisy)
        else:
            published.append(lastrelease)
    return published
""",
        # the release index (public position), not the value
        """
import numpy as np
def positions(window, eps):
    release_index = 0
    releases = []
    for i, v in enumerate(window):
        if np.random.laplace(v, 1 / eps) > 10:
            release_index = i
            releases.append(np.random.laplace(v, 1 / eps))
    return releases, release_index
""",
        # ML: a released checkpoint list and an Adam eps; no noise draw
        """
import torch
def train(models, eps=1e-8):
    released = []
    for m in models:
        opt = torch.optim.Adam(m.parameters(), eps=eps)
        released.append(m)
    return released
""",
        # a missing gradient is passed through as None; the noise goes on every real gradient
        """
import torch
def add_noise(gradients, noise_multiplier, max_grad_norm):
    noisy_gradients = []
    for grad in gradients:
        if grad is not None:
            noisy_gradients.append(grad + torch.randn_like(grad) * noise_multiplier * max_grad_norm)
        else:
            noisy_gradients.append(grad)
    return noisy_gradients
""",
        # twin: a failed draw is re-raised; the explicit σ = 0 mode is another rule's matter
        """
import torch
from torch.distributions import MultivariateNormal
def noisy_embedding(K, f, noise_multiplier, n):
    try:
        dist = MultivariateNormal(torch.zeros_like(f), K * noise_multiplier / n)
        f_tilde = f + dist.sample()
    except RuntimeError as err:
        raise ValueError("noise covariance is not positive definite") from err
    return f_tilde
""",
        # an explicit, recorded no-noise mode
        """
import torch
def clip_and_noise(flat, mechanism, sigma, clip):
    if mechanism == "gaussian":
        flat_noisy = flat + torch.normal(0.0, sigma * clip, flat.shape)
        mech = "gaussian"
    else:
        flat_noisy = flat
        mech = "none"
    return flat_noisy, mech
""",
    )

    INVALID = (
        # the stream's first "release" is the exact first count
        """
import numpy
def budget_absorption(stream_counts, eps, w):
    lastrelease = None
    for count, timestamp in enumerate(stream_counts):
        if count == 0:
            lastrelease = stream_counts[0]  # <-
        elif abs(timestamp - lastrelease) > 2 * w / eps:
            noisycount = numpy.random.laplace(timestamp, 2 * w / eps)
            lastrelease = noisycount
    return lastrelease
""",
        # a skipped step publishes the exact current count
        """
import numpy as np
def staircase_stream(window, eps, threshold):
    published = []
    for value in window:
        if np.random.laplace(abs(value), 1 / eps) > threshold:
            published.append(value + staircase_noise(eps))
        else:
            published.append(value)  # <-
    return published
""",
        # module-level script: first element of the sliding window taken as the release
        """
import numpy
epsilon = 1.0
sliding = stream[0:10]
for i, x in enumerate(sliding):
    if i == 0:
        last_release = sliding[0]  # <-
    else:
        last_release = numpy.random.laplace(x, 10 / epsilon)
""",
        # an unknown mechanism name silently returns the clipped update as the "perturbed" one
        """
import numpy as np
def randomizer(vector, clip, eps, mechanism):
    vector = np.clip(vector, -clip, clip)
    if mechanism == "laplace":
        perturbed = add_laplace(vector, sensitivity=2 * clip, epsilon=eps)
    else:
        perturbed = vector  # <-
    return perturbed
""",
        # a failed noise draw falls back to the exact statistic
        """
import torch
from torch.distributions import MultivariateNormal
def noisy_embedding(K, f, noise_multiplier, n):
    try:
        dist = MultivariateNormal(torch.zeros_like(f), K * noise_multiplier / n)
        f_tilde = f + dist.sample()
    except Exception:
        f_tilde = f  # <-
    return f_tilde
""",
        # the released list gets the raw value when the noise helper is skipped
        """
import numpy as np
def private_counts(counts, epsilon, noise_on):
    released_counts = []
    for c in counts:
        if noise_on:
            released_counts.append(np.random.laplace(c, 1 / epsilon))
        else:
            released_counts.append(c)  # <-
    return released_counts
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._budgeted = any(isinstance(n, cst.Name) and words(n.value.lower()) & _BUDGET_WORDS
                             for n in _scope_nodes(node) + [m for f in _scope_nodes(node)
                                                            if isinstance(f, cst.FunctionDef) for m in _scope_nodes(f.params)])
        if self._budgeted:
            self._scan(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if getattr(self, "_budgeted", False):
            self._scan(node.body)

    def _scan(self, body: cst.CSTNode) -> None:
        nodes = _scope_nodes(body)
        noisy: set[str] = set()
        protected: set[str] = set()
        loops: dict[str, str] = {}
        for n in nodes:
            if isinstance(n, cst.For):
                it = n.iter
                if isinstance(it, cst.Call) and call_name(it) == "enumerate" and it.args:
                    it = it.args[0].value
                target = n.target
                if isinstance(target, cst.Tuple) and len(target.elements) == 2:
                    target = target.elements[1].value
                if isinstance(target, cst.Name) and isinstance(it, cst.Name):
                    loops[target.value] = it.value
        for _ in range(2):
            for n in nodes:
                if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                    if self._noisy(n.value, noisy, protected):
                        noisy.add(n.targets[0].target.value)
            for n in nodes:  # the values a draw appended or assigned to a release protects
                if isinstance(n, cst.Call) and _noise_call(n):
                    self._protect(n, protected)
            for n in nodes:  # ``x + noise(b)``: the value the added noise protects
                if isinstance(n, cst.BinaryOperation) and isinstance(n.operator, (cst.Add, cst.Subtract)):
                    for side, other in ((n.left, n.right), (n.right, n.left)):
                        if isinstance(side, cst.Name) and not (words(side.value) & _KNOB_WORDS) \
                                and self._noisy(other, noisy, set()) and not self._noisy(side, noisy, set()):
                            protected.add(side.value)
        protected -= noisy
        # the values a protected value is computed from (``norm = transform(clip(grads))``) are protected too
        sources: dict[str, set[str]] = {}
        for n in nodes:
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                sources.setdefault(n.targets[0].target.value, set()).update(
                    m.value for m in walk(n.value) if isinstance(m, cst.Name) and not (words(m.value) & _KNOB_WORDS))
        for _ in range(3):
            for name in list(protected):
                protected |= {s for s in sources.get(name, ()) if s not in noisy and s != name}
        for name in list(protected):
            if name in loops:
                protected.add(loops[name])
        events: dict[str, list[tuple[cst.CSTNode, cst.BaseExpression]]] = {}
        for n in nodes:
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name):
                if _release_name(n.targets[0].target.value):
                    events.setdefault(n.targets[0].target.value, []).append((n, n.value))
            elif isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "append" \
                    and isinstance(n.func.value, cst.Name) and _release_name(n.func.value.value) and len(n.args) == 1:
                events.setdefault(n.func.value.value, []).append((n, n.args[0].value))
        self._failed_noise(nodes, noisy)
        for sink, evs in events.items():
            if not any(self._noisy(v, noisy, set()) for _, v in evs):
                continue
            for stmt, value in evs:
                if self._noisy(value, noisy, set()):
                    continue
                base = value.value if isinstance(value, cst.Subscript) else value
                if isinstance(base, cst.Name) and base.value in protected and base.value != sink \
                        and not self._declared_off(stmt, base.value):
                    self.report(stmt, f"`{sink}` holds the noisy release elsewhere, but here it takes the exact "
                                      f"private value `{self.ctx.analysis.code(value).strip()}` with no noise, "
                                      "which is then published (or used as the approximation of later steps) "
                                      "while a budget is claimed for it; release a noisy value here")

    def _failed_noise(self, nodes: list[cst.CSTNode], noisy: set[str]) -> None:
        """``try: v = x + dist.sample()`` / ``except: v = x``: when drawing the noise fails, the exact value is used."""
        for t in nodes:
            if not isinstance(t, cst.Try):
                continue
            guarded: dict[str, set[str]] = {}
            for n in walk(t.body):
                if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name) \
                        and isinstance(n.value, cst.BinaryOperation) and isinstance(n.value.operator, (cst.Add, cst.Subtract)) \
                        and self._noisy(n.value, noisy, set()):
                    guarded[n.targets[0].target.value] = {
                        side.value for side in (n.value.left, n.value.right)
                        if isinstance(side, cst.Name) and side.value not in noisy}
            for handler in t.handlers:
                for n in walk(handler.body):
                    if isinstance(n, cst.Assign) and len(n.targets) == 1 and isinstance(n.targets[0].target, cst.Name) \
                            and isinstance(n.value, cst.Name) and n.value.value in guarded.get(n.targets[0].target.value, ()):
                        self.report(n, f"when drawing the noise fails, the handler sets `{n.targets[0].target.value}` to "
                                       f"the exact value `{n.value.value}` and the run goes on releasing it as the noisy "
                                       "statistic; re-raise (or stop) instead of falling back to the un-noised value")

    def _declared_off(self, stmt: cst.CSTNode, name: str) -> bool:
        """The exact value is stored on a path that is no release: the value is ``None`` there (``if g is None``),
        or the branch labels itself as the no-noise mode (``mech = "none"``)."""
        fa = self.ctx.analysis
        block = None
        for anc in fa.ancestors(stmt):
            if isinstance(anc, (cst.FunctionDef, cst.ClassDef)):
                break
            if block is None and isinstance(anc, cst.IndentedBlock):
                block = anc
            if isinstance(anc, (cst.If, cst.While)):
                for cmp in (n for n in walk(anc.test) if isinstance(n, cst.Comparison)):
                    sides = [cmp.left] + [c.comparator for c in cmp.comparisons]
                    if any(isinstance(s, cst.Name) and s.value == "None" for s in sides) and any(
                            isinstance(s, cst.Name) and s.value == name for s in sides):
                        return True
        if block is not None:
            for n in walk(block):
                if isinstance(n, cst.SimpleString) and n.evaluated_value.strip().lower() in _OFF_LABELS:
                    return True
        return False

    @staticmethod
    def _noisy(value: cst.BaseExpression, noisy: set[str], _protected: set[str]) -> bool:
        stack: list[cst.CSTNode] = [value]
        while stack:
            n = stack.pop()
            if isinstance(n, cst.Name) and n.value in noisy:
                return True
            if _noise_call(n):
                return True
            if isinstance(n, cst.Lambda):
                continue
            stack.extend(n.children)
        return False

    @staticmethod
    def _protect(call: cst.Call, protected: set[str]) -> None:
        """The argument names of a draw that are not its calibration: the value it protects."""
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value not in ("loc", "mean", "x", "value"):
                continue
            value = arg.value
            if isinstance(value, cst.Call) and call_name(value) == "abs" and value.args:
                value = value.args[0].value
            if isinstance(value, cst.Name) and not (words(value.value) & _KNOB_WORDS):
                protected.add(value.value)
