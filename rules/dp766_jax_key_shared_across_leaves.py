"""DP766: one JAX PRNG key draws the noise of every parameter leaf (a closure key in a function mapped over the
gradient tree, or in a comprehension over the leaves)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.astfacts import AstFacts
from dpcheck.analysis.syntax import call_name, dotted, walk, words
from dpcheck.rule import Rule
from dpcheck.rules.dp706_prng_key_reused_across_steps import _KEY_MAKERS, _NOISE_DRAWS, _assigned, _jax_random

#: calls that apply a function to every leaf of a tree (or every element of a sequence)
_MAPPERS = frozenset({"tree_map", "tree_multimap", "map", "tree_map_with_path", "vmap", "starmap"})


def _params(fn: cst.Lambda | cst.FunctionDef) -> set[str]:
    p = fn.params
    out = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            out.add(star.name.value)
    return out


def _shared_draws(scope: cst.CSTNode, local: set[str]) -> list[cst.Call]:
    """Noise draws in ``scope`` whose key is a plain name not bound in it (nor split/folded there)."""
    out: list[cst.Call] = []
    for n in walk(scope):
        if not (isinstance(n, cst.Call) and _jax_random(n) and call_name(n) in _NOISE_DRAWS and n.args):
            continue
        key = n.args[0].value
        if isinstance(key, cst.Name) and key.value not in local:
            out.append(n)
    return out


class JaxKeySharedAcrossLeaves(Rule):
    id = "DP766"
    name = "jax-key-shared-across-leaves"
    category = "general"
    severity = "error"
    summary = ("the DP noise of every gradient leaf is drawn from one JAX key (a closure key in a function "
               "mapped over the tree, or in a comprehension over the leaves): leaves of one shape get the same noise")
    rationale = (
        "`jax.random.normal(key, shape)` is a pure function of the key and the shape. A noise function "
        "`lambda g: g + std * random.normal(rng, g.shape)` mapped over the gradient tree (`tree_map`, "
        "`jax.tree.map`, `map`, `vmap`), or a comprehension `[g + std * random.normal(key, g.shape) for g in "
        "leaves]`, draws with the same key for every leaf: leaves of equal shape receive identical noise and "
        "leaves of other shapes receive prefixes of one stream, so the difference of two equal-shape leaves is "
        "released without noise and the Gaussian mechanism's guarantee per coordinate fails. Reported: a "
        "Gaussian/Laplace draw of `jax.random` whose key is a name from outside the lambda, nested function or "
        "comprehension, when that function is passed to a tree/sequence map or the draw sits in a comprehension "
        "over several values. Not reported: keys passed in per leaf (`tree_map(f, grads, keys)`), keys split or "
        "folded inside (`fold_in(key, i)`), one draw for the whole flattened vector. Fix: "
        "`keys = random.split(rng, len(leaves))` and one key per leaf."
    )
    TRIGGERS = ("jax",)
    requires_dp_context = True

    @classmethod
    def may_report(cls, facts: AstFacts) -> bool:
        """A file that imports JAX, draws Gaussian/Laplace noise and maps a function or has a comprehension."""
        if not any("jax" in q for names in facts.aliases.values() for q in names):
            return False
        return facts.calls_any(_NOISE_DRAWS) and facts.calls_any(_KEY_MAKERS | _MAPPERS | frozenset({"normal"}))

    @classmethod
    def admits(cls, facts: AstFacts) -> bool:
        return facts.may_have_dp_context and cls.may_report(facts)

    def visit_Module(self, node: cst.Module) -> None:
        defs = {f.name.value: f for f in walk(node) if isinstance(f, cst.FunctionDef)}
        lambdas: dict[str, cst.Lambda] = {}
        for a in walk(node):
            if isinstance(a, cst.Assign) and isinstance(a.value, cst.Lambda):
                for t in a.targets:
                    if isinstance(t.target, cst.Name):
                        lambdas[t.target.value] = a.value
        seen: set[int] = set()
        for call in walk(node):
            if not (isinstance(call, cst.Call) and call_name(call) in _MAPPERS and call.args):
                continue
            fn_expr = call.args[0].value
            fn: cst.Lambda | cst.FunctionDef | None = None
            if isinstance(fn_expr, cst.Lambda):
                fn = fn_expr
            elif isinstance(fn_expr, cst.Name):
                fn = lambdas.get(fn_expr.value) or defs.get(fn_expr.value)
            if fn is None:
                continue
            local = _params(fn) | (_assigned(fn.body) if isinstance(fn, cst.FunctionDef) else set())
            for draw in _shared_draws(fn.body if isinstance(fn, cst.FunctionDef) else fn.body, local):
                if id(draw) not in seen:
                    seen.add(id(draw))
                    self._flag(draw, "the function mapped over the leaves")
        for comp in walk(node):
            if not isinstance(comp, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
                continue
            local: set[str] = set()
            f = comp.for_in
            while f is not None:
                local |= {n.value for n in walk(f.target) if isinstance(n, cst.Name)}
                f = f.inner_for_in
            elt = comp.elt if not isinstance(comp, cst.DictComp) else comp.value
            for draw in _shared_draws(elt, local):
                if id(draw) not in seen:
                    seen.add(id(draw))
                    self._flag(draw, "the comprehension over the leaves")

    def _flag(self, draw: cst.Call, where: str) -> None:
        key = dotted(draw.args[0].value) or "key"
        self.report(draw, f"`{key}` draws the noise in {where} with the same key for every leaf: leaves of one "
                          "shape get identical noise, so their differences are released exactly; split the key "
                          "per leaf (`random.split(key, n_leaves)`)")

    VALID = (
        # twin: one key per leaf
        """
import jax
from jax import random, tree_util
def private_grad(grads, rng, l2_clip, noise_multiplier):
    leaves, treedef = tree_util.tree_flatten(grads)
    keys = random.split(rng, len(leaves))
    std = l2_clip * noise_multiplier
    noised = [g + std * random.normal(k, g.shape) for g, k in zip(leaves, keys)]
    return tree_util.tree_unflatten(treedef, noised)
""",
        # twin: the keys are a tree mapped alongside the gradients
        """
import jax
def add_noise(grads, key, sigma, clip):
    leaves, treedef = jax.tree_util.tree_flatten(grads)
    keys = jax.tree_util.tree_unflatten(treedef, list(jax.random.split(key, len(leaves))))
    return jax.tree_util.tree_map(lambda g, k: g + sigma * clip * jax.random.normal(k, g.shape), grads, keys)
""",
        # twin: the key is folded with the leaf index inside the comprehension
        """
import jax.random as jr
def noisy(leaves, key, noise_multiplier, epsilon):
    return [x + noise_multiplier * jr.normal(jr.fold_in(key, i), x.shape) for i, x in enumerate(leaves)]
""",
        # one draw for the whole flattened gradient vector
        """
import jax
from jax.flatten_util import ravel_pytree
def dp_noise(grads, key, sigma, epsilon):
    flat, unravel = ravel_pytree(grads)
    return unravel(flat + sigma * jax.random.normal(key, flat.shape))
""",
        # ordinary ML: weight initialisation with a split key, no DP
        """
import jax
def init(key, sizes):
    keys = jax.random.split(key, len(sizes))
    return [jax.random.normal(k, (m, n)) * 0.01 for k, (m, n) in zip(keys, sizes)]
""",
    )
    INVALID = (
        # a lambda with a closure key mapped over the clipped gradient tree
        """
from jax import random, tree_util
def private_grad(grads, rng, l2_norm_clip, noise_multiplier):
    std = l2_norm_clip * noise_multiplier
    noise_fn = lambda g: g + std * random.normal(rng, g.shape)  # <-
    return tree_util.tree_map(noise_fn, grads)
""",
        # the lambda written inline in jax.tree.map
        """
import jax
def add_noise(grads, key, noise_multiplier, l2_clip):
    return jax.tree.map(lambda g: g + noise_multiplier * l2_clip * jax.random.normal(key, g.shape), grads)  # <-
""",
        # a comprehension over the flattened leaves with one key
        """
import jax.random as jr
from jax import tree_util
def noisy(grads, key, noise_multiplier, epsilon):
    leaves, treedef = tree_util.tree_flatten(grads)
    out = [x + noise_multiplier * jr.normal(key, x.shape) for x in leaves]  # <-
    return tree_util.tree_unflatten(treedef, out)
""",
        # a nested def with the closure key, Laplace noise on each leaf
        """
import jax
def perturb(params, key, sensitivity, epsilon):
    def leaf_noise(p):
        return p + (sensitivity / epsilon) * jax.random.laplace(key, p.shape)  # <-
    return jax.tree_util.tree_map(leaf_noise, params)
""",
    )
