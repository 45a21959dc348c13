"""Audit throughput on the worst-case Querybased setting (2 teachers, ε = 1, δ = 1e-5, 100 iterations).

Prints, per implementation:
  * shadow runs per minute with 1 and with 2 local workers (fresh store, ``--sample`` runs per world),
  * the projected time of a full R = 1000-per-world audit (target ≤ 30 min on 2 cores),
  * with ``--verdict``: the wall-clock time to a verdict with --until-verdict (target ≤ 10 min),
  * with ``--full``: a real R = 1000 audit (ε_emp CP and Bayesian, AUC, minutes).

Examples:
  python benchmarks/audit_speed.py --impl ref-laplace --sample 50
  python benchmarks/audit_speed.py --impl buggy --sample 10 --verdict
  python benchmarks/audit_speed.py --impl original --full --workers 2
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from dpcheck import impls
from dpcheck.audit.engine import execute_runs, run_audit
from dpcheck.audit.executor import make_executor
from dpcheck.audit.settings import paper_hyperparams
from dpcheck.audit.spec import DEFAULT_CHECKPOINTS, AuditSpec
from dpcheck.audit.store import Store

VERDICT_TARGET_MIN = 10.0
FULL_TARGET_MIN = 30.0


def runs_per_minute(impl: str, workers: int, sample: int, store_dir: Path, seed: int) -> float:
    spec = AuditSpec(impl, runs=max(sample, 5), seed=seed, hyperparams=paper_hyperparams(impl, "worstcase"))
    executor = make_executor(workers=workers)
    try:
        # warm-up: two runs per worker so imports and process start-up are mostly not counted
        with Store(store_dir / f"warm-{impl}-{workers}.sqlite") as store:
            execute_runs(spec.with_(seed=seed + 10_000), workers, store=store, executor=executor)
        with Store(store_dir / f"rate-{impl}-{workers}.sqlite") as store:
            start = time.perf_counter()
            executed, _ = execute_runs(spec, sample, store=store, executor=executor)
            elapsed = time.perf_counter() - start
    finally:
        executor.close()
    return 60.0 * executed / elapsed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", action="append", help="names, 'buggy', 'twins', 'all' or ref-* (default buggy)")
    p.add_argument("--sample", type=int, default=10, help="runs per world for the rate measurement")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to measure")
    p.add_argument("--verdict", action="store_true", help="also time --until-verdict (2 workers)")
    p.add_argument("--full", action="store_true", help="also run a full R=1000 audit (2 workers)")
    p.add_argument("--runs", type=int, default=1000, help="R per world for --verdict/--full")
    p.add_argument("--store", help="keep the stores here instead of a temporary directory")
    p.add_argument("--json", dest="json_out", help="write the numbers as JSON")
    args = p.parse_args(argv)
    names = impls.resolve(args.impl or ["buggy"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store_dir = Path(args.store or tmp)
        store_dir.mkdir(parents=True, exist_ok=True)
        for name in names:
            row: dict = {"impl": name}
            for workers in args.workers:
                rate = runs_per_minute(name, workers, args.sample, store_dir, seed=7)
                row[f"runs_per_min_{workers}w"] = round(rate, 2)
                print(f"{name:<20} {workers} worker(s): {rate:8.1f} shadow runs/min", flush=True)
            best = max(row[f"runs_per_min_{w}w"] for w in args.workers)
            projected = 2 * args.runs / best
            row["projected_full_min"] = round(projected, 1)
            print(f"{name:<20} projected R={args.runs} audit: {projected:.1f} min "
                  f"({projected / FULL_TARGET_MIN:.2f}x the {FULL_TARGET_MIN:.0f}-min target)", flush=True)
            if args.verdict or args.full:
                executor = make_executor(workers=max(args.workers))
                try:
                    with Store(store_dir / f"audit-{name}.sqlite") as store:
                        spec = AuditSpec(name, runs=args.runs, hyperparams=paper_hyperparams(name, "worstcase"))
                        if args.verdict:
                            start = time.perf_counter()
                            res = run_audit(spec, store=store, executor=executor, until_verdict=True,
                                            checkpoints=DEFAULT_CHECKPOINTS)
                            minutes = (time.perf_counter() - start) / 60
                            row.update(verdict=res.verdict, verdict_min=round(minutes, 2), verdict_runs=res.runs,
                                       verdict_eps_cp=round(res.eps_cp, 3))
                            print(f"{name:<20} --until-verdict: {res.verdict} at R={res.runs} "
                                  f"(ε_emp CP {res.eps_cp:.3f}, Bayes {res.eps_bayes:.3f}, AUC {res.auc:.3f}) in "
                                  f"{minutes:.1f} min ({minutes / VERDICT_TARGET_MIN:.2f}x the "
                                  f"{VERDICT_TARGET_MIN:.0f}-min target)", flush=True)
                        if args.full:
                            start = time.perf_counter()
                            res = run_audit(spec, store=store, executor=executor)
                            minutes = (time.perf_counter() - start) / 60
                            row.update(full_min=round(minutes, 2), eps_cp=round(res.eps_cp, 3),
                                       eps_bayes=round(res.eps_bayes, 3), auc=round(res.auc, 3),
                                       full_verdict=res.verdict, runs_reused=res.runs_reused)
                            print(f"{name:<20} R={args.runs}: ε_emp CP {res.eps_cp:.3f}, Bayes {res.eps_bayes:.3f}, "
                                  f"AUC {res.auc:.3f}, {res.verdict}, {minutes:.1f} min "
                                  f"({res.runs_reused} runs reused from --verdict)", flush=True)
                finally:
                    executor.close()
            rows.append(row)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
