"""Neighbouring inputs: which pairs a mechanism's claim covers, and the candidate pairs to try.

Query-vector neighbourhoods: ``l1`` (the entries move by at most 1 in total: one count changes),
``linf`` (every entry moves by at most 1: counting queries on one changed record). Candidates
follow StatDP's patterns (one above, one below, one above rest below, one below rest above, half
half, all above, all below, X shape) around a base vector, plus random neighbours.
"""
from __future__ import annotations

import numpy as np

NEIGHBOURHOODS = ("l1", "linf")
TOL = 1e-9


def check_pair(a: np.ndarray, b: np.ndarray, hood: str) -> None:
    if hood not in NEIGHBOURHOODS:
        raise ValueError(f"unknown neighbourhood {hood!r}; choose from {', '.join(NEIGHBOURHOODS)}")
    if a.shape != b.shape:
        raise ValueError(f"the two inputs differ in length ({a.size} and {b.size})")
    diff = np.abs(a - b)
    size = diff.sum() if hood == "l1" else diff.max(initial=0.0)
    if size > 1 + TOL:
        raise ValueError(f"inputs {a.tolist()} and {b.tolist()} are not neighbours under {hood} "
                         f"(distance {size:g} > 1)")


def candidate_pairs(length: int, hood: str, rng: np.random.Generator, random_pairs: int = 2,
                    base_value: float = 1.0, integer: bool = False) -> list[tuple[np.ndarray, np.ndarray]]:
    """StatDP's patterns and random neighbours; with ``integer`` every input stays whole."""
    base = np.full(length, base_value)
    up, down = base + 1, base - 1
    half = length // 2
    shapes: list[np.ndarray] = []
    for first in (1.0, -1.0):
        d = np.zeros(length)
        d[0] = first
        shapes.append(d)
    if hood == "linf" and length > 1:
        for first in (1.0, -1.0):
            d = np.full(length, -first)
            d[0] = first
            shapes.append(d)
        d = np.concatenate([np.ones(half), -np.ones(length - half)])
        shapes.append(d)
        shapes += [up - base, down - base]
    pairs = [(base, base + d) for d in shapes]
    if hood == "linf" and length > 1:
        x_a = np.concatenate([np.ones(half), np.zeros(length - half)])
        pairs.append((x_a, 1 - x_a))
    for _ in range(random_pairs):
        pairs.append((base, base + _random_extreme(length, hood, rng, integer)))
    seen, unique = set(), []
    for a, b in pairs:
        key = (tuple(a), tuple(b))
        if key not in seen:
            check_pair(a, b, hood)
            seen.add(key)
            unique.append((a, b))
    return unique


def _random_extreme(length: int, hood: str, rng: np.random.Generator, integer: bool) -> np.ndarray:
    """A random move to the edge of the neighbourhood, where additive noise leaks the most."""
    if hood == "linf":
        return rng.choice([-1.0, 1.0], size=length)
    d = np.zeros(length)
    if integer:
        d[rng.integers(length)] = rng.choice([-1.0, 1.0])
        return d
    d = rng.uniform(-1, 1, size=length)
    return d / np.abs(d).sum()
