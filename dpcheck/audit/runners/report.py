"""Rendering audit results: terminal table, JSON, and a PNG of ε_emp against the claimed ε."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from dpcheck.audit.runners.engine import AuditResult

JSON_SCHEMA_VERSION = 1
VERDICT_STYLE = {"violation": "bold red", "pass": "green", "underpowered": "yellow"}


def _fmt(x: float) -> str:
    return "nan" if isinstance(x, float) and math.isnan(x) else f"{x:.2f}"


def print_table(results: list[AuditResult], console: Any = None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console(width=None if sys.stdout.isatty() else 160)
    table = Table(title="dpcheck audit — empirical ε lower bounds (membership game)")
    for col in ("implementation", "attack", "R", "ε claimed", "ε_emp CP", "ε_emp Bayes", "AUC", "verdict",
                "certifiable max"):
        table.add_column(col, justify="left" if col in ("implementation", "attack", "verdict") else "right")
    for r in results:
        runs = f"{r.runs}" if r.runs == r.runs_planned else f"{r.runs}/{r.runs_planned}"
        table.add_row(r.impl, f"{r.attack} ({r.dataset})", runs, _fmt(r.epsilon), _fmt(r.eps_cp), _fmt(r.eps_bayes),
                      _fmt(r.auc), f"[{VERDICT_STYLE.get(r.verdict, '')}]{r.verdict}[/]", _fmt(r.certifiable_cp))
    console.print(table)
    for r in results:
        note = (f"{r.impl}, {r.threat_model}: R={r.runs} runs per world ({r.test_per_world} test), δ={r.delta:g}, "
                f"errors on test FP={r.fp} FN={r.fn}; bounds at confidence {r.bound_confidence:.4g}")
        if r.until_verdict and len(r.checkpoints) and r.bound_confidence != r.confidence:
            plan = r.runs_planned
            note += (f" — --until-verdict: α={1 - r.confidence:g} split evenly (Bonferroni) over the checkpoints "
                     f"fixed in advance up to R={plan}, so every bound holds jointly at {r.confidence:g}")
        note += f"; {r.runs_executed} runs executed now, {r.runs_reused} reused from the store"
        console.print(note, highlight=False)
        if r.verdict == "underpowered":
            console.print(f"  [yellow]R={r.runs} cannot certify more than ε={r.certifiable_cp:.2f} ≤ claimed "
                          f"{r.epsilon:g}: increase --runs[/]")
        failed = r.failed_runs or {}
        if failed.get("with_target") or failed.get("without_target"):
            console.print(f"  [bold]failed runs[/] (the library raised): {failed['with_target']}/{failed['runs_per_world']}"
                          f" with the target, {failed['without_target']}/{failed['runs_per_world']} without"
                          + (" — failing in one world more than the other is membership evidence, and the attack "
                             "sees it" if failed["with_target"] != failed["without_target"] else ""), highlight=False)
        if r.output_size:
            console.print(f"  [bold red]finding[/] ({r.output_size['category']}): {r.output_size['message']}",
                          highlight=False)


def to_json(results: list[AuditResult], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    from dpcheck import __version__

    return {"schema": JSON_SCHEMA_VERSION, "dpcheck": __version__, "kind": "audit",
            "results": [r.to_dict() for r in results], **(extra or {})}


def write_json(results: list[AuditResult], path: str | Path, extra: dict[str, Any] | None = None) -> None:
    from dpcheck.audit.core.files import write_text_atomic

    write_text_atomic(path, json.dumps(to_json(results, extra), indent=2, default=str))


def plot(results: list[AuditResult], path: str | Path) -> None:
    """Bars of ε_emp (CP and Bayesian) per implementation, the claimed ε as a dashed line, and
    the certifiable maximum as a dotted marker."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    labels = [f"{r.impl}\n{r.attack}" for r in results]
    x = np.arange(len(results))
    fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(results) + 1) + 2.5, 3.6))
    ax.bar(x - 0.2, [r.eps_cp for r in results], 0.4, label="ε_emp (Clopper–Pearson)", color="#4477aa")
    ax.bar(x + 0.2, [r.eps_bayes for r in results], 0.4, label="ε_emp (Bayesian)", color="#88ccee")
    ax.scatter(x, [r.certifiable_cp for r in results], marker="_", s=400, color="black",
               label="certifiable max (CP)")
    for eps in sorted({r.epsilon for r in results}):
        ax.axhline(eps, color="red", linestyle="--", linewidth=1, label=f"claimed ε = {eps:g}")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("ε")
    ax.set_title("Empirical privacy loss vs claimed ε")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    from dpcheck.audit.core.files import write_atomic

    suffix = Path(path).suffix.lstrip(".") or "png"
    try:
        write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=120, format=suffix))
    finally:
        plt.close(fig)
