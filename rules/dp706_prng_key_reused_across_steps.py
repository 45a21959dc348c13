"""DP706: a JAX training step draws its DP noise from the same PRNG key at every step."""
from __future__ import annotations

import ast

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, call_params, dotted, param_names, walk, words
from dpcheck.rule import Rule

#: jax.random draws whose first argument is the key and that serve as DP noise
_NOISE_DRAWS = frozenset({"normal", "laplace", "gumbel", "truncated_normal", "multivariate_normal", "cauchy",
                          "logistic", "t", "double_sided_maxwell"})
#: calls that make keys
_KEY_MAKERS = frozenset({"PRNGKey", "key", "split", "fold_in", "wrap_key_data"})
_KEY_WORDS = frozenset({"key", "keys", "rng", "rngs", "prng", "subkey", "subkeys", "seed"})
_NOT_JAX = ("np.", "numpy.", "torch.", "tf.", "onp.", "scipy.", "random.Random")
#: decorators / wrappers that trace a function once (its Python globals are frozen into the trace)
_TRACERS = frozenset({"jit", "pmap", "pjit", "filter_jit"})


def _jax_random(call: cst.Call) -> bool:
    """``jax.random.normal(k, …)``, ``random.normal(k, …)`` (``from jax import random``), ``jr.normal(k, …)``."""
    name = dotted(call.func) or ""
    if "." not in name or name.startswith(_NOT_JAX):
        return False
    head = name.rsplit(".", 1)[0]
    return head.endswith("random") or head in ("jr", "jrandom", "jrnd", "jrng")


def _key_like(name: str) -> bool:
    return bool(words(name) & _KEY_WORDS) or name in ("k", "r", "sk")


def _assigned(scope: cst.CSTNode) -> set[str]:
    """Names (re)bound anywhere in ``scope``: assignments, augmented assignments, loop and ``with`` targets."""
    out: set[str] = set()
    for sub in walk(scope):
        targets: list[cst.CSTNode] = []
        if isinstance(sub, cst.Assign):
            targets = [t.target for t in sub.targets]
        elif isinstance(sub, (cst.AugAssign, cst.AnnAssign)):
            targets = [sub.target]
        elif isinstance(sub, (cst.For, cst.CompFor)):
            targets = [sub.target]
        elif isinstance(sub, cst.NamedExpr):
            targets = [sub.target]
        elif isinstance(sub, cst.WithItem) and sub.asname is not None:
            targets = [sub.asname.name]
        for t in targets:
            out |= {n.value for n in walk(t) if isinstance(n, cst.Name)}
    return out


class PrngKeyReusedAcrossSteps(Rule):
    id = "DP706"
    name = "prng-key-reused-across-steps"
    category = "general"
    severity = "error"
    summary = ("a JAX DP step draws its noise from a PRNG key that is the same at every step (a key never split in "
               "the loop, or folded with a Python global frozen when the step was jitted): every step adds the "
               "same noise vector")
    rationale = (
        "JAX keys are values: `jax.random.normal(key, shape)` returns the same array every time it is given the "
        "same key. DP-SGD's guarantee needs fresh, independent noise at each step; noise that repeats is "
        "cancelled by differencing two steps' updates (and its sum grows like T·σ instead of √T·σ in one "
        "direction), so the accountant's ε does not hold. Reported, in DP code that uses JAX: (1) a jitted "
        "function (`@jax.jit`, `jit(step)`) that folds a Python global into its key (`random.fold_in(key, i)` "
        "with `i` not a parameter): the global is read once, when the function is traced, so the folded key is "
        "the same at every call, while the loop that calls the step passes the same key each time; (2) a loop "
        "that calls a step function with a key it never rebinds in the loop, where the step derives nothing "
        "per call from its other arguments; (3) a noise draw inside a training loop from a key never rebound "
        "in that loop. Not reported: keys split in the loop (`key, sub = random.split(key)`), keys folded with "
        "a loop variable or a parameter (`fold_in(key, step)` with `step` an argument), draws outside loops, "
        "uniform/bernoulli draws (dropout, shuffles). Fix: `key, sub = jax.random.split(key)` at each step and "
        "pass `sub`, or fold the step number passed as an argument into the key."
    )
    TRIGGERS = ("jax",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A file that imports JAX, makes or splits keys, and draws Gaussian/Laplace noise."""
        if not any("jax" in q for names in facts.aliases.values() for q in names):
            return False
        return facts.calls_any(_KEY_MAKERS) and facts.calls_any(_NOISE_DRAWS)

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    VALID = (
        # (twin) the decorated step takes the step number as an argument and folds that in
        """
import jax
import jax.numpy as jnp
KEY = jax.random.PRNGKey(0)

@jax.jit
def private_step(params, grads, sigma, step_count):
    k = jax.random.fold_in(KEY, step_count)
    return params - 0.1 * (grads + sigma * jax.random.normal(k, grads.shape))
""",
        # the step number is an argument of the jitted step and is folded into the key
        """
import jax
from jax import random

def noisy_step(key, step, params, grads, sigma, clip):
    k = random.fold_in(key, step)
    return [p - 0.1 * (g + sigma * clip * random.normal(k, g.shape)) for p, g in zip(params, grads)]

step_fn = jax.jit(noisy_step)
key = random.PRNGKey(0)
for t in range(1000):
    params = step_fn(key, t, params, grads_of(params), 1.1, 1.0)
""",
        # the key is split at every step of the loop
        """
import jax
import jax.numpy as jnp

def dp_train(params, batches, key, noise_multiplier, l2_clip):
    for xb, yb in batches:
        key, sub = jax.random.split(key)
        g = clipped_sum(params, xb, yb, l2_clip)
        g = g + noise_multiplier * l2_clip * jax.random.normal(sub, g.shape)
        params = params - 0.05 * g / len(xb)
    return params
""",
        # ordinary ML code: a dropout mask drawn once per epoch is not DP noise
        """
import jax

def train(params, data, key, rate):
    for epoch in range(10):
        mask = jax.random.bernoulli(key, rate, params.shape)
        params = update(params * mask, data)
    return params
""",
        # the jitted function folds a module-level constant into a key that the loop refreshes
        """
import jax
from jax import random
OFFSET = 7

@jax.jit
def private_update(rng, params, grads, sigma):
    rng = random.fold_in(rng, OFFSET)
    return params - 0.1 * (grads + sigma * random.normal(rng, grads.shape))

rng = random.PRNGKey(1)
for t in range(100):
    rng, step_rng = random.split(rng)
    params = private_update(step_rng, params, grad_fn(params), 1.0)
""",
    )

    INVALID = (
        # a decorated step folds a global counter into a global key: both are frozen when it is traced
        """
import jax
import jax.numpy as jnp
KEY = jax.random.PRNGKey(0)
step_count = 0

@jax.jit
def private_step(params, grads, sigma):
    k = jax.random.fold_in(KEY, step_count)  # <-
    return params - 0.1 * (grads + sigma * jax.random.normal(k, grads.shape))
""",
        # the jitted step ignores its step argument and folds the global loop counter, frozen at trace time
        """
import jax
from jax import random

def dp_update(key, step, params, grads, noise_multiplier, clip):
    rng = random.fold_in(key, it)  # <-
    return params - 0.1 * (grads + noise_multiplier * clip * random.normal(rng, grads.shape))

update = jax.jit(dp_update)
key = random.PRNGKey(0)
it = 0
for epoch in range(5):
    for xb, yb in loader:
        params = update(key, it, params, grad_fn(params, xb, yb), 1.1, 1.0)
        it += 1
""",
        # the same key is handed to the noisy step at every iteration
        """
import jax

def noisy_grad(params, xb, yb, key, sigma, clip):
    g = clipped_sum(params, xb, yb, clip)
    return g + sigma * clip * jax.random.normal(key, g.shape)

def dp_train(params, batches, seed, sigma, clip):
    key = jax.random.PRNGKey(seed)
    for xb, yb in batches:
        g = noisy_grad(params, xb, yb, key, sigma, clip)  # <-
        params = params - 0.05 * g / len(xb)
    return params
""",
        # the draw inside the private training loop reuses one key
        """
import jax
import jax.numpy as jnp

def dp_sgd(params, batches, noise_multiplier, l2_clip):
    key = jax.random.PRNGKey(42)
    for step, (xb, yb) in enumerate(batches):
        g = clipped_sum(params, xb, yb, l2_clip)
        g = g + noise_multiplier * l2_clip * jax.random.normal(key, g.shape)  # <-
        params = params - 0.05 * g / len(xb)
    return params
""",
    )

    def visit_Module(self, node: cst.Module) -> None:
        fa = self.ctx.analysis
        functions = {f.name.value: f for f in node.body if isinstance(f, cst.FunctionDef)}
        traced: dict[str, str] = {}  # alias or name -> function name, for traced functions
        for name, fn in functions.items():
            if any(words(call_name(d.decorator) if isinstance(d.decorator, cst.Call) else dotted(d.decorator) or "")
                   & _TRACERS or any(isinstance(n, (cst.Name, cst.Attribute)) and (dotted(n) or "").split(".")[-1]
                                     in _TRACERS for n in walk(d.decorator)) for d in fn.decorators):
                traced[name] = name
        aliases: dict[str, str] = {name: name for name in functions}
        for sub in walk(node):
            if isinstance(sub, cst.Assign) and isinstance(sub.value, cst.Call) \
                    and call_name(sub.value).split(".")[-1] in _TRACERS and sub.value.args \
                    and isinstance(sub.value.args[0].value, cst.Name) and sub.value.args[0].value.value in functions:
                target = functions[sub.value.args[0].value.value].name.value
                for t in sub.targets:
                    if isinstance(t.target, cst.Name):
                        traced[t.target.value] = target
                        aliases[t.target.value] = target
        noisy = {name for name, fn in functions.items() if self._draws(fn, functions, set())}
        if not noisy and not any(self._noise_draw(c) for c in walk(node) if isinstance(c, cst.Call)):
            return
        loop_calls = self._loop_calls(node, aliases)
        frozen: set[str] = set()
        # (1) a traced step folding a global into its key, called in a loop with an unchanging key
        for alias, name in traced.items():
            fn = functions[name]
            if name in frozen or name not in noisy:
                continue
            params = set(param_names(fn))
            local = _assigned(fn.body) | params
            for call in walk(fn.body):
                if not (isinstance(call, cst.Call) and call_name(call).split(".")[-1] == "fold_in"
                        and len(call.args) >= 2 and isinstance(call.args[1].value, cst.Name)):
                    continue
                key_arg, data = call.args[0].value, call.args[1].value.value
                if data in local or data in functions or not isinstance(key_arg, cst.Name):
                    continue
                if key_arg.value in params and not any(
                        self._same_key(c, loop, functions[name], key_arg.value) for c, loop in loop_calls
                        if aliases.get(call_name(c)) == name):
                    continue
                frozen.add(name)
                self.report(call, f"`{fa.code(call).strip()}` in the jitted `{name}` folds the Python global "
                                  f"`{data}` into the key: JAX reads it once, when the step is traced, so the key "
                                  "(and the noise drawn from it) is the same at every step while the loop passes "
                                  f"the same `{fa.code(key_arg).strip()}`; fold in the step argument, or split a "
                                  "fresh key per step")
                break
        # (2) a loop that hands the same key to a noisy step function
        for call, loop in loop_calls:
            name = aliases.get(call_name(call))
            if name is None or name in frozen or name not in noisy:
                continue
            fn = functions[name]
            for pname in param_names(fn):
                if _key_like(pname) and self._same_key(call, loop, fn, pname) and not self._refreshes(fn, pname):
                    passed = self._argument(call, fn, pname)
                    self.report(call, f"the loop calls `{call_name(call)}` with the key `{fa.code(passed).strip()}`, "
                                      "which it never splits or rebinds, and the step draws its noise from that "
                                      "key without folding in anything that changes per call: every step adds "
                                      "the same noise; split the key in the loop (`key, sub = "
                                      "jax.random.split(key)`) and pass `sub`")
                    break
        # (3) a draw in a loop from a key the loop never rebinds
        for loop in walk(node):
            if not isinstance(loop, (cst.For, cst.While)):
                continue
            if any(isinstance(outer, (cst.For, cst.While)) for outer in fa.enclosing_loops(loop)):
                continue  # the outermost loop decides
            rebound = _assigned(loop)
            for draw in walk(loop.body):
                if not (isinstance(draw, cst.Call) and self._noise_draw(draw)):
                    continue
                key = draw.args[0].value
                if isinstance(key, cst.Name) and _key_like(key.value) and key.value not in rebound \
                        and not self._inner_scope(draw, loop):
                    self.report(draw, f"`{fa.code(draw).strip()[:60]}` draws the noise inside the loop from the "
                                      f"key `{key.value}`, which the loop never splits or rebinds: every step adds "
                                      "the same noise; split the key at each step")

    # ---- helpers --------------------------------------------------------------------------------------
    @staticmethod
    def _noise_draw(call: cst.Call) -> bool:
        return call_name(call).split(".")[-1] in _NOISE_DRAWS and _jax_random(call) and bool(call.args) \
            and call.args[0].keyword is None

    def _draws(self, fn: cst.FunctionDef, functions: dict[str, cst.FunctionDef], seen: set[str]) -> bool:
        """``fn`` draws noise, or calls a module function that does (one level of helpers at a time)."""
        seen.add(fn.name.value)
        for call in walk(fn):
            if isinstance(call, cst.Call):
                if self._noise_draw(call):
                    return True
                name = call_name(call)
                if name in functions and name not in seen and self._draws(functions[name], functions, seen):
                    return True
        return False

    def _inner_scope(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        fn = self.ctx.analysis.enclosing_function(node)
        return fn is not None and any(fn is f for f in walk(loop) if isinstance(f, cst.FunctionDef))

    def _loop_calls(self, module: cst.Module, aliases: dict[str, str]) -> list[tuple[cst.Call, cst.CSTNode]]:
        """Calls of module functions (or their jitted aliases) inside a loop, with the innermost loop."""
        fa = self.ctx.analysis
        out = []
        for call in walk(module):
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in aliases:
                loops = fa.enclosing_loops(call)
                if loops:
                    out.append((call, loops[0]))  # the innermost loop: one call per step
        return out

    @staticmethod
    def _argument(call: cst.Call, fn: cst.FunctionDef, pname: str) -> cst.BaseExpression | None:
        names = call_params(call, fn)
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if any(a.star for a in call.args):
            return None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == pname:
                return arg.value
        if pname in names and names.index(pname) < len(positional):
            return positional[names.index(pname)].value
        return None

    def _same_key(self, call: cst.Call, loop: cst.CSTNode, fn: cst.FunctionDef, pname: str) -> bool:
        """``call`` passes for ``pname`` a name the loop never rebinds (and that names a key)."""
        passed = self._argument(call, fn, pname)
        return isinstance(passed, cst.Name) and _key_like(passed.value) and passed.value not in _assigned(loop)

    @staticmethod
    def _refreshes(fn: cst.FunctionDef, pname: str) -> bool:
        """``fn`` derives a per-call key: folds/splits its key with another parameter, or never uses the key for a
        draw at all (only passes it on to code we do not see)."""
        params = set(param_names(fn)) - {pname}
        local = _assigned(fn.body)
        for call in walk(fn.body):
            if isinstance(call, cst.Call) and call_name(call).split(".")[-1] in ("fold_in", "split") and call.args \
                    and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == pname:
                rest = [a.value for a in call.args[1:]]
                if any(isinstance(n, cst.Name) and (n.value in params or n.value in local)
                       for r in rest for n in walk(r)):
                    return True
        uses = [n for n in walk(fn.body) if isinstance(n, cst.Name) and n.value == pname]
        return not uses
