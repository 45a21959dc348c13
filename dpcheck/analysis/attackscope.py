"""Code that runs a membership-inference attack (shadow models, an attack classifier)."""
from __future__ import annotations

import libcst as cst

from dpcheck.analysis.syntax import words

#: words of a module or function that runs a membership-inference attack: it measures a released
#: model and releases nothing of its own
_ATTACK_WORDS = frozenset({"mia", "membership", "attack", "attacks", "shadow"})


def attack_scope(fn: cst.FunctionDef | None, path: str) -> bool:
    """(QC, IF_DP core/mia.py) Is the code in a membership-inference module (``mia.py``,
    ``membership_inference.py``) or in a function named for the attack (``shadow_model_attack``)? Its
    scalers and counts train the attacker or pick evaluation samples; unlike ``measuring_scope`` the
    fits here are expected (the attack model is trained)."""
    stem = path.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if words(stem) & _ATTACK_WORDS:
        return True
    return fn is not None and bool(words(fn.name.value) & _ATTACK_WORDS)
