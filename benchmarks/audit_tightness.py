"""Tightness of the audit on mechanisms with an exact guarantee (issue 13, deliverable 4).

For each exact reference mechanism (dpcheck/targets/exact_targets.py) this runs one audit at R
runs per world with the ``release-linear`` attack (train 10 %, threshold 10 %, test 80 %) and
compares its bound with the **ceiling** (dpcheck/audit/ceiling.py): the bound the optimal test
would certify on its expected error counts with all R runs as test runs. Then it repeats smaller
audits over independent seeds to count false alarms (a bound above the true ε, or μ).

Statistics, fixed in advance: ε_emp by Clopper–Pearson (the (ε, δ) verdict) and the Bayesian
bound; for the Gaussian mechanism also μ_emp by CP and by the joint Jeffreys posterior with the
headline the maximum of the two, each at confidence 1 − (1 − c)/2 (the confidence split across
the two methods); the ceiling is computed with the same method at the same confidence.

  python benchmarks/audit_tightness.py                     # R = 2000, anchor R = 5000, 20 seeds at R = 500
  python benchmarks/audit_tightness.py --runs 300 --anchor-runs 0 --seeds 3 --seed-runs 100   # quick
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from dpcheck.audit import ceiling as ce
from dpcheck.audit import gdp
from dpcheck.audit.engine import AuditResult, run_audit
from dpcheck.audit.executor import make_executor
from dpcheck.audit.spec import AuditSpec
from dpcheck.audit.store import Store
from dpcheck.targets.exact_targets import mu_for

OUT = Path("reports/audit_tightness")
SPLIT = (0.1, 0.1, 0.8)
ATTACK = "release-linear"
DATASET = "worstcase-categorical"
CONFIDENCE = 0.95
EPSILON, DELTA = 1.0, 1e-5
ANCHOR_MU = 0.455  # the 2026 MST/AIM audit's Gaussian setting: μ_emp 0.426 of μ 0.455 at 5,000 runs per world

#: (target, ceiling mechanism, knobs)
PLAN: list[tuple[str, str, dict[str, Any]]] = [
    ("reference:laplace-histogram", "laplace", {}),
    ("reference:randomized-response", "randomized-response", {}),
    ("reference:gaussian-marginals", "gaussian", {}),
]


def audit(target: str, runs: int, seed: int, knobs: dict[str, Any], *, store: Store, executor: Any) -> AuditResult:
    spec = AuditSpec(target, dataset=DATASET, attack=ATTACK, epsilon=EPSILON, delta=DELTA, runs=runs, seed=seed,
                     hyperparams=knobs, split=SPLIT, confidence=CONFIDENCE)
    return run_audit(spec, store=store, executor=executor)


def claimed_mu(knobs: dict[str, Any]) -> float:
    return float(knobs.get("mu", mu_for(EPSILON, DELTA)))


def mu_bounds(r: AuditResult) -> dict[str, float]:
    """μ_emp by both methods (each at confidence 1 − (1 − c)/2) at the GDP threshold the audit chose
    on its validation part; the headline is their maximum (dpcheck.audit.engine.gdp_bounds)."""
    if r.gdp is None:
        raise RuntimeError(f"{r.impl}: the audit returned no GDP bound")
    return {**r.gdp["by_method"], "headline": r.gdp["mu_emp"]}


def row(target: str, mechanism: str, knobs: dict[str, Any], r: AuditResult, seconds: float) -> dict[str, Any]:
    out: dict[str, Any] = {
        "target": target, "mechanism": mechanism, "knobs": knobs, "runs": r.runs, "test_per_world": r.test_per_world,
        "fp": r.fp, "fn": r.fn, "auc": round(r.auc, 4), "epsilon": EPSILON, "delta": DELTA,
        "eps_cp": round(r.eps_cp, 4), "eps_bayes": round(r.eps_bayes, 4), "minutes": round(seconds / 60, 2),
    }
    if mechanism == "gaussian":
        mu = claimed_mu(knobs)
        split = r.gdp["confidence_each"] if r.gdp else 1.0 - (1.0 - r.bound_confidence) / 2.0
        bounds = mu_bounds(r)
        ceilings = {m: ce.ceiling("gaussian", r.runs, confidence=split, mu=mu, method=m).value for m in gdp.METHODS}
        ceiling = max(ceilings.values())
        out.update({"gdp_fp": r.gdp["fp"], "gdp_fn": r.gdp["fn"], "mu": round(mu, 4), "mu_emp": {k: round(v, 4) for k, v in bounds.items()},
                    "ceiling_mu": {k: round(v, 4) for k, v in ceilings.items()}, "ceiling": round(ceiling, 4),
                    "tightness": round(bounds["headline"] / ceiling, 3) if ceiling > 0 else None, "of_truth": round(bounds["headline"] / mu, 3),
                    "eps_from_mu_emp": round(gdp.gdp_epsilon(bounds["headline"], DELTA), 4),
                    "note": "μ-GDP mechanism: ε from μ_emp is a valid lower bound here"})
    else:
        ceiling = ce.ceiling(mechanism, r.runs, confidence=r.bound_confidence, epsilon=EPSILON, delta=DELTA).value
        out.update({"ceiling": round(ceiling, 4), "tightness": round(r.eps_cp / ceiling, 3) if ceiling > 0 else None,
                    "of_truth": round(r.eps_cp / EPSILON, 3)})
    return out


def false_alarms(target: str, mechanism: str, knobs: dict[str, Any], seeds: int, runs: int, *,
                 store: Store, executor: Any) -> dict[str, Any]:
    values = []
    for s in range(seeds):
        r = audit(target, runs, 5000 + s, knobs, store=store, executor=executor)
        values.append(mu_bounds(r)["headline"] if mechanism == "gaussian" else r.eps_cp)
    truth = claimed_mu(knobs) if mechanism == "gaussian" else EPSILON
    return {"seeds": seeds, "runs": runs, "quantity": "μ_emp" if mechanism == "gaussian" else "ε_emp (CP)",
            "truth": round(truth, 4), "exceedances": sum(v > truth for v in values),
            "max": round(max(values), 4), "mean": round(sum(values) / len(values), 4)}


def markdown(report: dict[str, Any]) -> str:
    lines = ["# Audit tightness on exact mechanisms", "", f"Generated by `{report['command']}`.", "",
             report["method"], "",
             "| mechanism | claim | R | test runs | ceiling at R | ε_emp CP | ε_emp Bayes | μ_emp (CP / Jeffreys) "
             "| tightness (of ceiling) | of truth | AUC | minutes |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        claim = f"μ = {r['mu']}" if "mu" in r else f"ε = {r['epsilon']}"
        mu = f"{r['mu_emp']['clopper-pearson']} / {r['mu_emp']['jeffreys-joint']}" if "mu_emp" in r else "—"
        lines.append(f"| {r['target']} | {claim} | {r['runs']} | {r['test_per_world']} | {r['ceiling']} | {r['eps_cp']} "
                     f"| {r['eps_bayes']} | {mu} | {'—' if r['tightness'] is None else format(r['tightness'], '.0%')} | {r['of_truth']:.0%} | {r['auc']} "
                     f"| {r['minutes']} |")
    lines += ["", "## False alarms over independent seeds", "",
              "| mechanism | seeds | R | quantity | truth | exceedances | max | mean |", "|---|---|---|---|---|---|---|---|"]
    for name, fa in report["false_alarms"].items():
        lines.append(f"| {name} | {fa['seeds']} | {fa['runs']} | {fa['quantity']} | {fa['truth']} | {fa['exceedances']} "
                     f"| {fa['max']} | {fa['mean']} |")
    return "\n".join(lines) + "\n"


def plot(report: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    labels = [f"{r['target'].split(':')[1]}\nR={r['runs']}" for r in rows]
    xs = range(len(rows))
    ax.bar([x - 0.2 for x in xs], [r["ceiling"] for r in rows], width=0.4, label="ceiling at R", color="#9e9e9e")
    ax.bar([x + 0.2 for x in xs], [r["mu_emp"]["headline"] if "mu_emp" in r else r["eps_cp"] for r in rows],
           width=0.4, label="dpcheck (ε_emp CP, or μ_emp)", color="#1565c0")
    ax.scatter(list(xs), [r.get("mu", r["epsilon"]) for r in rows], marker="_", s=900, color="#c62828",
               label="true ε (or μ)", zorder=3)
    ax.set_xticks(list(xs), labels, fontsize=8)
    ax.legend(fontsize=8)
    ax.set_title("Audit bound vs the optimal test's ceiling (confidence 0.95)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=2000, help="R per world of the tightness audits")
    p.add_argument("--anchor-runs", type=int, default=5000, help="R of the Gaussian anchor (μ = 0.455); 0 skips")
    p.add_argument("--seeds", type=int, default=20, help="independent seeds of the false-alarm check")
    p.add_argument("--seed-runs", type=int, default=500, help="R per world of each false-alarm audit")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", type=Path, default=OUT, help="writes OUT.json, OUT.md, OUT.png")
    args = p.parse_args(argv)

    executor = make_executor(workers=args.workers)
    rows, alarms = [], {}
    plan = list(PLAN) + ([("reference:gaussian-marginals", "gaussian", {"mu": ANCHOR_MU})] if args.anchor_runs else [])
    try:
        with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "tightness.sqlite") as store:
            for target, mechanism, knobs in plan:
                runs = args.anchor_runs if knobs.get("mu") == ANCHOR_MU else args.runs
                started = time.perf_counter()
                r = audit(target, runs, 0, knobs, store=store, executor=executor)
                rows.append(row(target, mechanism, knobs, r, time.perf_counter() - started))
                print(json.dumps(rows[-1]), flush=True)
            for target, mechanism, knobs in PLAN:
                alarms[target] = false_alarms(target, mechanism, knobs, args.seeds, args.seed_runs,
                                              store=store, executor=executor)
                print(target, alarms[target], flush=True)
    finally:
        executor.close()
    report = {
        "command": "python benchmarks/audit_tightness.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "method": (f"Attack `{ATTACK}` on the released array, split {'/'.join(str(int(100 * s)) for s in SPLIT)} "
                   f"(train/threshold/test), dataset {DATASET}, ε = {EPSILON}, δ = {DELTA}, confidence {CONFIDENCE}. "
                   "Ceiling: the optimal test's bound on its expected error counts with all R runs as test runs "
                   "(dpcheck/audit/ceiling.py), same statistic and confidence as the reported bound. For the Gaussian "
                   "mechanism the headline μ_emp is the maximum of CP and joint-Jeffreys, each at confidence 0.975."),
        "rows": rows, "false_alarms": alarms,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report))
    plot(report, args.out.with_suffix(".png"))
    print(markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
