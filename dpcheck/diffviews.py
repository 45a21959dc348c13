"""Differential views: all implementations on the same votes / data, side by side.

``accountant``: ε̂ and the moments over T iterations against the Theorem 5 reference (Figure 4
of the audit paper). Implementations exposing ``accountant_update`` get the very same vote
sequence; the others are observed through their probe during a real run on the same data.
``partition``: distinct records seen by each teacher over a run (Figure 2).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dpcheck import impls
from dpcheck.checks.observe import probe_dataset
from dpcheck.probe import RecordingProbe
from dpcheck.reference import pategan_epsilon, pategan_moment_increment

DELTA = 1e-5
OWN_RUN_TEACHERS = 5
OWN_RUN_ITERATIONS = 200


@dataclass
class Curve:
    impl: str
    source: str  # "same votes" | "own run"
    eps_hat: np.ndarray
    moments: np.ndarray  # (T, L)


@dataclass
class AccountantView:
    iterations: int
    lamda: float
    num_moments: int
    reference: Curve
    curves: list[Curve] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def vote_sequence(iterations: int, batch: int, teachers: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A fixed, reproducible sequence of teacher vote counts, shape (T, batch)."""
    rng = np.random.default_rng(seed)
    p_real = rng.beta(0.3, 0.3, size=(iterations, batch))  # mostly confident teachers
    n1 = rng.binomial(teachers, p_real).astype(float)
    return teachers - n1, n1


def _eps_curve(moments: np.ndarray) -> np.ndarray:
    return np.array([pategan_epsilon(m, DELTA) for m in moments])


def accountant_view(names: list[str], *, iterations: int = 1000, lamda: float = 1e-3, num_moments: int = 100,
                    teachers: int = 5, batch: int = 64, seed: int = 0) -> AccountantView:
    n0, n1 = vote_sequence(iterations, batch, teachers, seed)
    ref_moments = np.cumsum([pategan_moment_increment(n0[t], n1[t], lamda, num_moments) for t in range(iterations)], axis=0)
    view = AccountantView(iterations, lamda, num_moments, Curve("reference (Theorem 5)", "same votes",
                                                                 _eps_curve(ref_moments), ref_moments))
    for name in names:
        adapter = impls.get(name)
        hook = getattr(adapter, "accountant_update", None)
        if callable(hook):
            inc = [np.asarray(hook(n0[t], n1[t], lamda=lamda, num_moments=num_moments), float) for t in range(iterations)]
            moments = np.cumsum(inc, axis=0)
            view.curves.append(Curve(name, "same votes", _eps_curve(moments), moments))
            continue
        probe = RecordingProbe()
        # a real run cannot be fed our votes: it trains with its own (few) teachers for a bounded time
        own_teachers, own_iterations = min(teachers, OWN_RUN_TEACHERS), min(iterations, OWN_RUN_ITERATIONS)
        data = probe_dataset(rows=max(10 * own_teachers, 50))
        try:
            adapter.fit(data.data, epsilon=1e12, delta=DELTA, seed=seed, probe=probe, bounds=(data.lower, data.upper),
                        max_iterations=own_iterations, num_teachers=own_teachers, lamda=lamda,
                        num_moments=num_moments)
        except Exception as exc:  # noqa: BLE001 - shown in the view, the others go on
            view.skipped[name] = f"fit failed: {type(exc).__name__}: {exc}"
            continue
        events = probe.of("accountant")
        if not events:
            view.skipped[name] = "no accountant"
            continue
        moments = np.array([np.asarray(e.args[0], float) for e in events])
        view.curves.append(Curve(name, "own run", np.array([float(e.args[1]) for e in events]), moments))
    return view


def partition_view(names: list[str], *, iterations: int = 20, teachers: int = 5, rows: int = 200,
                   seed: int = 0) -> dict[str, dict[int, int] | str]:
    """Distinct records seen per teacher over a run (or why none were seen)."""
    data = probe_dataset(rows=rows)
    out: dict[str, dict[int, int] | str] = {}
    for name in names:
        probe = RecordingProbe()
        try:
            impls.get(name).fit(data.data, epsilon=1e12, delta=DELTA, seed=seed, probe=probe,
                                bounds=(data.lower, data.upper), max_iterations=iterations, num_teachers=teachers,
                                lamda=1e-3)
        except Exception as exc:  # noqa: BLE001
            out[name] = f"fit failed: {type(exc).__name__}: {exc}"
            continue
        seen: dict[int, set[int]] = defaultdict(set)
        for e in probe.of("teacher_data"):
            seen[int(e.args[0])].update(int(i) for i in np.asarray(e.args[1]).ravel())
        out[name] = {t: len(s) for t, s in sorted(seen.items())} if seen else "no teacher events"
    return out


def plot_accountant(view: AccountantView, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    x = np.arange(1, view.iterations + 1)
    for curve in [view.reference, *view.curves]:
        style = dict(color="black", linewidth=2.5, linestyle="--") if curve is view.reference else {}
        label = f"{curve.impl} ({curve.source})"
        ax1.plot(np.arange(1, curve.eps_hat.size + 1), curve.eps_hat, label=label, **style)
        ax2.plot(np.arange(1, view.num_moments + 1), curve.moments[-1], label=label, **style)
    ax1.set(xlabel="iteration", ylabel="ε̂", yscale="log", title=f"ε̂ over {x.size} iterations (λ={view.lamda:g}, δ={DELTA:g})")
    ax2.set(xlabel="moment order l", ylabel="α(l) at the last iteration", yscale="log", title="moments accountant")
    ax1.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_partition(counts: dict[str, dict[int, int] | str], rows: int, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    valid = {k: v for k, v in counts.items() if isinstance(v, dict)}
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(valid)), 4))
    width = 0.8 / max(1, max((len(v) for v in valid.values()), default=1))
    for i, (name, per_teacher) in enumerate(valid.items()):
        for t, n in per_teacher.items():
            ax.bar(i + t * width, n, width=width, color=f"C{t % 10}")
    ax.axhline(rows, color="black", linestyle="--", linewidth=1, label=f"all {rows} records")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(valid))], list(valid), rotation=30, ha="right")
    ax.set(ylabel="distinct records seen", title="records seen per teacher (one bar per teacher)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
