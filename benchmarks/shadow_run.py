"""Unit cost of an audit: one training run (fit + sample) per implementation.

For each of the twelve built-in implementations, prints the wall time, CPU time and peak memory
of one shadow run on
  * ``worstcase``: 4 rows of (0,0,0) plus the target (1,1,1), 3 integer columns, 2 teachers;
  * ``cervical``: Kaggle Cervical Cancer (cleaned as the audit does, training split), 5 teachers;
with ε = 1, δ = 1e-5, λ = 1e-3 and at most ``--max-iterations`` (default 1,000) iterations, the
public bounds of the dataset, and as many synthetic rows as the dataset has.

Every run is a fresh subprocess pinned to one CPU core, so the framework import is not counted in
the run time and the memory figures are per run: ``peak_rss`` is the process peak, ``delta_rss``
its growth over the state right after the imports. The target is ≤ 10 s per worst-case run; the
verdict uses the run's CPU time (the process is single-threaded and pinned to one core, so on an
idle core CPU time and wall time agree, while on a shared machine the wall time also counts the
time the core spent on other processes — the load average is printed for that reason).

    python benchmarks/shadow_run.py                         # all twelve, both datasets
    python benchmarks/shadow_run.py --impl original turing-fixed --dataset worstcase
    python benchmarks/shadow_run.py --max-iterations 100 --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

TARGET_SECONDS = 10.0
EPSILON, DELTA, LAMDA = 1.0, 1e-5, 1e-3
TEACHERS = {"worstcase": 2, "cervical": 5}


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(impl: str, dataset: str, max_iterations: int, seed: int) -> dict[str, Any]:
    """One run inside this (fresh) process; returns the measurements."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    from dpcheck import impls
    from dpcheck.audit.worlds import datasets

    if dataset == "worstcase":
        ds = datasets.worst_case()
        data, (lower, upper) = ds.with_target, ds.bounds
    else:
        train, _, _, lower, upper = datasets.cervical_clean()
        data = train
    adapter = impls.get(impl)
    framework = getattr(adapter, "framework", "?")
    if framework == "tensorflow":
        import tensorflow  # noqa: F401 - imported before the clock starts
    elif framework == "torch":
        import torch

        torch.set_num_threads(1)
    baseline = _rss_mib()
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    adapter.fit(data, epsilon=EPSILON, delta=DELTA, seed=seed, bounds=(lower, upper),
                num_teachers=TEACHERS[dataset], lamda=LAMDA, max_iterations=max_iterations)
    fit_wall = time.perf_counter() - start_wall
    out = adapter.sample(len(data))
    return {
        "impl": impl, "dataset": dataset, "framework": framework, "rows": int(data.shape[0]),
        "columns": int(data.shape[1]), "max_iterations": max_iterations, "ok": True,
        "fit_s": fit_wall, "run_s": time.perf_counter() - start_wall, "cpu_s": time.process_time() - start_cpu,
        "peak_rss_mib": _peak_rss_mib(), "delta_rss_mib": _rss_mib() - baseline,
        "sample_shape": list(out.shape),
    }


def measure(impl: str, dataset: str, max_iterations: int, seed: int, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", impl, dataset, str(max_iterations), str(seed)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"impl": impl, "dataset": dataset, "ok": False, "error": f"timed out after {timeout:g} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"impl": impl, "dataset": dataset, "ok": False, "error": tail[:200]}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        impl, dataset, iterations, seed = argv[1:5]
        try:
            result = child(impl, dataset, int(iterations), int(seed))
        except Exception as exc:  # noqa: BLE001 - reported per implementation
            result = {"impl": impl, "dataset": dataset, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
        print(json.dumps(result))
        return 0

    from dpcheck.impls import NAMES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--impl", nargs="+", default=list(NAMES), help="implementations (default: all twelve)")
    parser.add_argument("--dataset", nargs="+", choices=sorted(TEACHERS), default=["worstcase", "cervical"])
    parser.add_argument("--max-iterations", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run before giving up")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args(argv)

    results = []
    header = (f"{'implementation':18s} {'dataset':10s} {'fit s':>7s} {'run s':>7s} {'cpu s':>7s} "
              f"{'peak MiB':>9s} {'Δ MiB':>7s}  {'cpu ≤10 s':9s}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    print(header)
    print("-" * len(header))
    for dataset in args.dataset:
        for impl in args.impl:
            r = measure(impl, dataset, args.max_iterations, args.seed, args.timeout)
            results.append(r)
            if not r["ok"]:
                print(f"{impl:18s} {dataset:10s} unavailable: {r['error']}", flush=True)
                continue
            within = "yes" if r["cpu_s"] <= TARGET_SECONDS else "NO"
            print(f"{impl:18s} {dataset:10s} {r['fit_s']:7.2f} {r['run_s']:7.2f} {r['cpu_s']:7.2f} "
                  f"{r['peak_rss_mib']:9.0f} {r['delta_rss_mib']:7.1f}  {within if dataset == 'worstcase' else '':5s}",
                  flush=True)
    worst = [r for r in results if r["ok"] and r["dataset"] == "worstcase"]
    if worst:
        slowest = max(worst, key=lambda r: r["cpu_s"])
        print(f"\nworst case: {sum(r['cpu_s'] <= TARGET_SECONDS for r in worst)}/{len(worst)} within "
              f"{TARGET_SECONDS:g} s of CPU; slowest {slowest['impl']} {slowest['cpu_s']:.2f} s "
              f"({slowest['cpu_s'] / TARGET_SECONDS:.2f}× the target; wall {slowest['run_s']:.2f} s)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
