"""Audit throughput on the worst-case Querybased setting (2 teachers, ε = 1, δ = 1e-5, 100 iterations).

Prints, per implementation:
  * shadow runs per minute with 1 and with 2 local workers (fresh store, ``--sample`` runs per world),
    on the plain path and — for built-in implementations with one — on the fast path, side by side
    with the ratio (target ≥ 5×; ``--paths plain`` or ``--paths fast`` measures one of them),
  * the projected time of a full R = 1000-per-world audit (target ≤ 30 min on 2 cores),
  * with ``--verdict``: the wall-clock time to a verdict with --until-verdict (target ≤ 10 min),
  * with ``--full``: a real R = 1000 audit (ε_emp CP and Bayesian, AUC, minutes).

Examples:
  python benchmarks/audit_speed.py --impl ref-laplace --sample 50
  python benchmarks/audit_speed.py --impl buggy --sample 10 --verdict
  python benchmarks/audit_speed.py --impl original --full --workers 2
  python benchmarks/audit_speed.py --impl all --sample 10 --fast-sample 32 --workers 1 \
      --json reports/audit_speed.json --md reports/audit_speed.md      # the committed plain-vs-fast table

The plain rate excludes the warm-up (imports, process start); the fast rate excludes the first
batch of its size (graph and session build, paid once per worker), which is printed separately.
With one worker the runs execute in this process, so rates per CPU-minute are printed too: on a
machine shared with other jobs the wall-clock rates of the two paths are measured at different
loads, their CPU-time rates are not, and the target is judged on the CPU-time ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from dpcheck import impls
from dpcheck.audit.core.settings import paper_hyperparams
from dpcheck.audit.core.spec import DEFAULT_CHECKPOINTS, AuditSpec
from dpcheck.audit.core.store import Store
from dpcheck.audit.runners import fastpath
from dpcheck.audit.runners.engine import execute_runs, run_audit
from dpcheck.audit.runners.executor import make_executor

VERDICT_TARGET_MIN = 10.0
FULL_TARGET_MIN = 30.0
FAST_TARGET_RATIO = 5.0


def runs_per_minute(impl: str, workers: int, sample: int, store_dir: Path, seed: int,
                    path: str = "plain") -> float:
    return timed_rate(impl, workers, sample, store_dir, seed, path)[0]


def timed_rate(impl: str, workers: int, sample: int, store_dir: Path, seed: int,
               path: str = "plain") -> tuple[float, float, float | None]:
    """(runs per minute of wall time after the warm-up, seconds of the warm-up, runs per minute of
    this process's CPU time — with one worker the runs execute in-process, so this rate does not
    depend on what else the machine is running; None with more workers) on ``path``."""
    spec = AuditSpec(impl, runs=max(sample, 5), seed=seed, hyperparams=paper_hyperparams(impl, "worstcase"))
    executor = make_executor(workers=workers, path=path)
    try:
        # warm-up: plain, two runs per worker (imports, process start-up); fast, one batch of every
        # size the measurement uses (graph and session build)
        warm = sample if path == "fast" else workers
        with Store(store_dir / f"warm-{impl}-{workers}-{path}.sqlite") as store:
            start = time.perf_counter()
            execute_runs(spec.with_(seed=seed + 10_000), warm, store=store, executor=executor)
            warm_seconds = time.perf_counter() - start
        with Store(store_dir / f"rate-{impl}-{workers}-{path}.sqlite") as store:
            start, cpu_start = time.perf_counter(), time.process_time()
            executed, _ = execute_runs(spec, sample, store=store, executor=executor)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    finally:
        executor.close()
    return 60.0 * executed / elapsed, warm_seconds, (60.0 * executed / cpu if workers == 1 else None)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", action="append", help="names, 'buggy', 'twins', 'all' or ref-* (default buggy)")
    p.add_argument("--sample", type=int, default=10, help="runs per world for the rate measurement")
    p.add_argument("--fast-sample", type=int, default=64,
                   help="runs per world for the fast path's rate (several batches; default 64)")
    p.add_argument("--paths", nargs="+", choices=("plain", "fast"), default=["plain", "fast"],
                   help="paths to measure (default both, side by side)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to measure")
    p.add_argument("--verdict", action="store_true", help="also time --until-verdict (2 workers)")
    p.add_argument("--full", action="store_true", help="also run a full R=1000 audit (2 workers)")
    p.add_argument("--runs", type=int, default=1000, help="R per world for --verdict/--full")
    p.add_argument("--store", help="keep the stores here instead of a temporary directory")
    p.add_argument("--json", dest="json_out", help="write the numbers as JSON (with the command and the load)")
    p.add_argument("--md", dest="md_out", help="write the plain-vs-fast table as markdown (see markdown())")
    p.add_argument("--real", nargs=argparse.REMAINDER, metavar="ARGS",
                   help="real-library targets instead: runs benchmarks/real_speed.py with ARGS (e.g. --real --only "
                        "diffprivlib:mean)")
    args = p.parse_args(argv)
    if args.real is not None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from real_speed import main as real_main

        return real_main(args.real)
    names = impls.resolve(args.impl or ["buggy"])
    rows = []
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        store_dir = Path(args.store or tmp)
        store_dir.mkdir(parents=True, exist_ok=True)
        for name in names:
            row: dict = {"impl": name}
            for workers in args.workers:
                rates, cpu_rates = {}, {}
                for path in args.paths:
                    if path == "fast" and not fastpath.has_fast_path(name):
                        continue
                    sample = args.fast_sample if path == "fast" else args.sample
                    rate, warm, cpu_rate = timed_rate(name, workers, sample, store_dir, seed=7, path=path)
                    rates[path] = rate
                    suffix = "" if path == "plain" else "_fast"
                    row[f"runs_per_min_{workers}w{suffix}"] = round(rate, 2)
                    if cpu_rate is not None:
                        cpu_rates[path] = cpu_rate
                        row[f"runs_per_cpu_min_{workers}w{suffix}"] = round(cpu_rate, 2)
                    if path == "fast":
                        row[f"fast_setup_s_{workers}w"] = round(warm, 2)
                    print(f"{name:<20} {workers} worker(s): {rate:8.1f} shadow runs/min ({path}"
                          + (f", {cpu_rate:.1f} per CPU-minute" if cpu_rate is not None else "")
                          + (f"; first batches incl. graph build {warm:.1f} s)" if path == "fast" else ")"),
                          flush=True)
                if len(rates) == 2:
                    ratio = rates["fast"] / rates["plain"]
                    row[f"fast_ratio_{workers}w"] = round(ratio, 2)
                    cpu_ratio = cpu_rates["fast"] / cpu_rates["plain"] if len(cpu_rates) == 2 else None
                    if cpu_ratio is not None:
                        row[f"fast_cpu_ratio_{workers}w"] = round(cpu_ratio, 2)
                    print(f"{name:<20} {workers} worker(s): fast/plain = {ratio:.1f}x wall"
                          + (f", {cpu_ratio:.1f}x CPU" if cpu_ratio is not None else "")
                          + f" ({'meets' if (cpu_ratio or ratio) >= FAST_TARGET_RATIO else 'BELOW'} the "
                          f"{FAST_TARGET_RATIO:.0f}x target{', judged on CPU time' if cpu_ratio else ''})", flush=True)
            measured = [k for k in row if k.startswith("runs_per_min_")]
            best = max(row[k] for k in measured)
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
    data = {
        "command": "python benchmarks/audit_speed.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "cpus": os.cpu_count(),
        "load_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "rows": rows,
    }
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(data, indent=2) + "\n")
    if args.md_out:
        Path(args.md_out).write_text(markdown(data), encoding="utf-8")
    return 0


def _cell(value: float | None, fmt: str, unit: str = "") -> str:
    return "–" if value is None else format(value, fmt) + unit


def markdown(data: dict) -> str:
    """The plain-vs-fast table of one ``--workers 1`` run (what docs/audit.md cites), from its JSON."""
    lines = [
        "# Audit throughput: plain path vs fast path",
        "",
        f"Written by `{data['command']}` on {data['cpus']} shared cores (1-minute load "
        f"{data['load_1min'][0]} at the start, {data['load_1min'][1]} at the end). Worst-case "
        "Querybased setting, paper hyperparameters, one in-process worker. Wall rates depend on the "
        "load; the CPU-time rates (runs per CPU-minute of this process) do not, and the "
        f"{FAST_TARGET_RATIO:.0f}× target is judged on the CPU-time ratio.",
        "",
        "| implementation | plain runs/min | fast runs/min | ratio (wall) | plain per CPU-min | fast per CPU-min "
        "| ratio (CPU) | fast first batch s | projected R = 1000 audit, min |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    ratios = []
    for row in data["rows"]:
        cpu_ratio = row.get("fast_cpu_ratio_1w")
        if cpu_ratio is not None:
            ratios.append((cpu_ratio, row["impl"]))
        lines.append(
            f"| {row['impl']} | {_cell(row.get('runs_per_min_1w'), '.0f')} | {_cell(row.get('runs_per_min_1w_fast'), '.0f')} "
            f"| {_cell(row.get('fast_ratio_1w'), '.1f', '×')} | {_cell(row.get('runs_per_cpu_min_1w'), '.0f')} "
            f"| {_cell(row.get('runs_per_cpu_min_1w_fast'), '.0f')} | {_cell(cpu_ratio, '.1f', '×')} "
            f"| {_cell(row.get('fast_setup_s_1w'), '.1f')} | {_cell(row.get('projected_full_min'), '.1f')} |")
    if ratios:
        low, high = min(ratios), max(ratios)
        below = sorted(name for ratio, name in ratios if ratio < FAST_TARGET_RATIO)
        lines += ["", f"Fast/plain CPU-time ratio: {low[0]:.1f}× ({low[1]}) to {high[0]:.1f}× ({high[1]}); "
                      f"below the {FAST_TARGET_RATIO:.0f}× target: {', '.join(below) if below else 'none'}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
