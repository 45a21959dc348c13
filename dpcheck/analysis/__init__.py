"""The analysis core shared by every lint rule: built lazily, once per file, never executing code.

Rules reach it as ``self.ctx.analysis`` (a ``FileAnalysis``)::

    fa = self.ctx.analysis
    fa.qualified_name(node)     # 'numpy.random.normal' for np.random.normal (import aliases resolved);
                                # for a Call, of the called name; None if not a dotted name
    fa.resolve_local(name)      # the Assign/AugAssign/For/FunctionDef/ClassDef/Param/Import binding a Name
    fa.value_of(name)           # the expression that binding assigns (None for params/defs/imports)
    fa.binding(name)            # the full Binding (name, target, value, stmt, kind, scope)
    fa.dp_context(node)         # DPContext of the innermost function, else class, else module:
                                #   .is_dp, .reasons ('parameter epsilon', 'calls numpy.random.laplace
                                #   with a DP-named scale', 'docstring claims differential privacy',
                                #   'class name DPGAN', 'called from fit, which has DP context'), .hints
    fa.in_dp_context(node)      # the node's function, an enclosing function/class or the module is DP
    fa.has_dp_code()            # any scope of the file is DP (a cheap early exit for a rule)
    fa.dp_generator_named()     # 'pategan' if the module names a DP generator (identifier/string)
    fa.is_private(expr)         # value derived from private training data (counts/shapes excluded;
                                #   allow_shape=True counts len(X)/X.shape of private data too)
    fa.is_record_values(expr)   # is_private without counts/shapes
    fa.private_origin(expr)     # why: 'parameter `X` of `fit`', 'self.data stored in `fit` at line 12'
    fa.acknowledged(node)       # reason if node is in a non-private fallback the code flags with a
                                #   privacy-leak warning, else None
    fa.is_training_entry(fn)    # fit/train/fit_transform/..., or a sampler whose body trains
    fa.referents(expr)          # values a Name / self.attr / local call may hold (one hop, all bindings)
    fa.callee(call)             # the module's own function a call runs (helper(x), self.m(x))
    fa.derived_names(scope, is_source, seed)  # names of a scope derived from a source predicate
    fa.is_noise(expr)           # a random draw used as noise
    fa.ancestors(node), fa.parent(node), fa.enclosing_function(node), fa.enclosing_class(node),
    fa.enclosing_loops(node), fa.enclosing_statement(node), fa.scope_of(node), fa.inside(a, b),
    fa.nodes(cst.Call), fa.functions_named(n), fa.method(cls, n), fa.bindings_in(scope),
    fa.attribute_bindings(cls, attr), fa.returns_of(fn), fa.trains(body), fa.code(node), fa.line_of(node)

``ctx.metadata(PositionProvider)`` is a :class:`~dpcheck.analysis.positions.Positions`: the same
ranges as libcst's provider, but only the statements holding the nodes asked about are regenerated.

DP context: a scope shows a strong signal (a parameter/variable/attribute/keyword named like a
privacy parameter: epsilon, ε, noise_multiplier, privacy_budget, target_delta, lamda, names with the
words epsilon/privacy/dp/rdp/pate; a call of a DP library, of an accountant (compute_rdp,
get_privacy_spent, *accountant*, PrivacyEngine…) or of a noise draw whose scale has a DP name; a
docstring or class/function name claiming DP/PATE; a module naming a DP generator such as
``pategan`` in an identifier or string) or two different weak ones (eps, delta, rho, sigma,
budget, sensitivity, teachers…; ``eps=1e-8`` is a stability constant and never counts; names of
imported modules such as ``eval_privacy`` never count). Classes take DP context from their
methods; functions and classes a DP function of the module calls or constructs inherit it.

Private data: see :mod:`dpcheck.analysis.taint`. Acknowledged leaks: see
:mod:`dpcheck.analysis.acknowledged`. Pure node helpers (``dotted``, ``call_name``, ``last_name``,
``words``, ``walk``, ``string_text``, ``number``): :mod:`dpcheck.analysis.syntax`; the DP
vocabulary: :mod:`dpcheck.analysis.vocabulary`.
"""
from __future__ import annotations

from pathlib import Path

from dpcheck.analysis.core import FileAnalysis
from dpcheck.analysis.dpcontext import DPContext
from dpcheck.analysis.index import Binding, SyntaxIndex
from dpcheck.analysis.taint import Origin

__all__ = ["Binding", "DPContext", "FileAnalysis", "Origin", "SyntaxIndex", "source_files"]


def source_files() -> list[str]:
    """The core's own source files: a scan cache must be invalidated when any of them changes."""
    return sorted(str(p) for p in Path(__file__).parent.glob("*.py"))
