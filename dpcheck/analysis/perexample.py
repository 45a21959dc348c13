"""Evidence that a module computes per-example gradients (so a batch-level clip may be deliberate)."""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

#: names of library DP engines (Opacus, TF-Privacy); a project that defines a class or function of
#: that name itself (a hand-written ``class PrivacyEngine`` that clips ``p.grad``) has no library engine
_LIBRARY_NAMES = ("make_private", "PrivacyEngine", "GradSampleModule", "DPOptimizer", "DPKeras", "DPAdam", "DPSGD")
_DEFINED = re.compile(r"^[ \t]*(?:def|class)[ \t]+(\w+)", re.M)


def per_example_machinery(source: str, markers: Iterable[str]) -> bool:
    """Does ``source`` mention one of ``markers`` other than as the name of its own class or function?"""
    return _machinery(source, tuple(markers))


@lru_cache(maxsize=16)  # rules ask once per scope, about the same file
def _machinery(source: str, markers: tuple[str, ...]) -> bool:
    text = source
    for name in set(_DEFINED.findall(source)):
        if any(name.startswith(lib) for lib in _LIBRARY_NAMES):
            text = re.sub(rf"\b{re.escape(name)}\b", "_local_", text)
    return any(marker in text for marker in markers)
