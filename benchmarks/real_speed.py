"""Shadow runs per minute of every audited real-library target, and the projected time to a verdict.

For each audit result committed in reports/audit_real/*.json (the same spec: target, dataset,
ε, δ, hyperparameters) this times a small sample of fresh shadow runs with 1 worker in a fresh
store — one warm-up run per world first (it pays for imports and for starting the target env's
worker), then ``--sample`` runs per world (``--slow-sample`` for targets whose committed one-fit
time is above ``--slow-seconds``) — and prints

  * runs/min with 1 worker and seconds per run,
  * the projected time to the committed verdict: the warm-up (start-up, paid once per worker, in
    parallel) + 2 worlds × R reached × s/run / 2 workers (target: ≤ 10 min on 2 cores, issue 12),
    next to the committed audit's own wall time. The projection counts shadow runs only; the
    committed time also has the attack's evaluation at each checkpoint and the load of the machine
    when it ran (2 cores shared with other jobs).

Writes reports/audit_real/speed.json, which ``python benchmarks/audit_real.py report`` turns into a
section of reports/audit_real.md. ``benchmarks/audit_speed.py --real`` runs this script.

    python benchmarks/real_speed.py                          # every committed target
    python benchmarks/real_speed.py --only diffprivlib:mean smartnoise-synth:mwem --sample 6
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = ROOT / "reports" / "audit_real"
OUT = RESULTS_DIR / "speed.json"
VERDICT_TARGET_MIN = 10.0
AUDIT_WORKERS = 2
#: registered targets without a committed audit: measured at this R so the report can say why
UNAUDITED = {"dpmm:mst": ("worstcase-categorical", 50)}


def committed() -> list[dict[str, Any]]:
    """One row per committed audit result: its spec, R reached, audit seconds, one-fit seconds."""
    rows = []
    for path in sorted(RESULTS_DIR.glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("kind") != "audit":
            continue
        for result in data.get("results", []):
            info = result.get("target_info") or {}
            rows.append({"target": result["impl"], "dataset": result["dataset"], "spec": result["spec"],
                         "runs_to_verdict": result["runs"], "verdict": result["verdict"],
                         "committed_seconds": result.get("seconds"),
                         "one_fit_seconds": info.get("one_fit_seconds", result.get("run_seconds_mean"))})
    for name, (dataset, runs) in UNAUDITED.items():
        rows.append({"target": name, "dataset": dataset, "runs_to_verdict": runs, "verdict": None,
                     "committed_seconds": None, "one_fit_seconds": None,
                     "spec": {"impl": name, "dataset": dataset, "attack": "querybased"}})
    return rows


def make_spec(spec: dict[str, Any], runs: int, seed: int) -> Any:
    from dpcheck.audit.core.spec import AuditSpec

    fields = {k: v for k, v in spec.items() if k in AuditSpec.__dataclass_fields__}
    if "split" in fields:
        fields["split"] = tuple(fields["split"])
    fields.update(runs=max(runs, 5), seed=seed, phase="audit")
    return AuditSpec(**fields)


def measure(spec_dict: dict[str, Any], sample: int, store_dir: Path, seed: int = 101) -> dict[str, Any]:
    """Seconds per shadow run (both worlds) over ``sample`` runs per world, after a warm-up."""
    from dpcheck.audit.core.store import Store
    from dpcheck.audit.runners.engine import execute_runs
    from dpcheck.audit.runners.executor import make_executor

    executor = make_executor(workers=1)
    tag = f"{spec_dict['impl'].replace(':', '_')}-{spec_dict.get('dataset', '')}-{os.getpid()}"
    try:
        with Store(store_dir / f"warm-{tag}.sqlite") as store:
            start = time.perf_counter()
            execute_runs(make_spec(spec_dict, 5, seed + 10_000), 1, store=store, executor=executor)
            warm = time.perf_counter() - start
        with Store(store_dir / f"rate-{tag}.sqlite") as store:
            spec = make_spec(spec_dict, sample, seed)
            start = time.perf_counter()
            executed, _ = execute_runs(spec, sample, store=store, executor=executor)
            elapsed = time.perf_counter() - start
            failed = sum(1 for r in store.load(spec.generation_hash(), sample) if r.synth.size == 0)
    finally:
        close = getattr(executor, "close", None)
        if close:
            close()
    return {"executed": executed, "seconds": elapsed, "failed": failed, "warm_up": warm}


def row_for(entry: dict[str, Any], sample: int, store_dir: Path) -> dict[str, Any]:
    timing = measure(entry["spec"], sample, store_dir)
    per_run = timing["seconds"] / max(timing["executed"], 1)
    projected = (timing["warm_up"] + 2 * entry["runs_to_verdict"] * per_run / AUDIT_WORKERS) / 60
    return {
        "target": entry["target"], "dataset": entry["dataset"], "sample": sample,
        "runs_executed": timing["executed"], "runs_failed": timing["failed"], "seconds": round(timing["seconds"], 2),
        "warm_up_seconds": round(timing["warm_up"], 2), "seconds_per_run": round(per_run, 3), "runs_per_min": round(60 / per_run, 1),
        "runs_to_verdict": entry["runs_to_verdict"], "verdict": entry["verdict"],
        "projected_minutes": round(projected, 2),
        "committed_minutes": round(entry["committed_seconds"] / 60, 2) if entry["committed_seconds"] else None,
        "within_target": "yes" if projected <= VERDICT_TARGET_MIN else "no",
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="*", help="target names (default: every committed audit)")
    p.add_argument("--sample", type=int, default=4, help="runs per world to time (default 4)")
    p.add_argument("--slow-sample", type=int, default=2, help="runs per world for slow targets (default 2)")
    p.add_argument("--slow-seconds", type=float, default=5.0,
                   help="a committed one-fit time above this makes a target slow (default 5 s)")
    p.add_argument("--json", dest="json_out", default=str(OUT), help=f"output (default {OUT.relative_to(ROOT)})")
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    entries = [e for e in committed() if not args.only or e["target"] in args.only]
    out_path = Path(args.json_out)
    previous = json.loads(out_path.read_text()).get("rows", []) if out_path.is_file() and args.only else []
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for entry in entries:
            slow = (entry["one_fit_seconds"] or 0) > args.slow_seconds or entry["target"] in UNAUDITED
            sample = args.slow_sample if slow else args.sample
            try:
                row = row_for(entry, sample, Path(tmp))
            except Exception as exc:  # noqa: BLE001 - one target that cannot run here must not stop the rest
                print(f"{entry['target']:<40} {entry['dataset']:<32} ERROR {type(exc).__name__}: "
                      f"{str(exc).splitlines()[0]}", flush=True)
                continue
            rows.append(row)
            print(f"{row['target']:<40} {row['dataset']:<32} {row['runs_per_min']:8.1f} runs/min "
                  f"({row['seconds_per_run']:.2f} s/run, {sample}/world, {row['runs_failed']} failed); R={row['runs_to_verdict']} → "
                  f"{row['projected_minutes']:.1f} min projected with {AUDIT_WORKERS} workers "
                  f"({row['projected_minutes'] / VERDICT_TARGET_MIN:.2f}x the {VERDICT_TARGET_MIN:.0f}-min target)",
                  flush=True)
    measured = {(r["target"], r["dataset"]) for r in rows}
    rows = [r for r in previous if (r["target"], r["dataset"]) not in measured] + rows
    rows.sort(key=lambda r: (r["target"], r["dataset"]))
    over = [r for r in rows if r["within_target"] == "no"]
    notes = [f"{len(rows) - len(over)} of {len(rows)} targets reach their verdict within {VERDICT_TARGET_MIN:.0f} min "
             f"(projected, {AUDIT_WORKERS} workers)."]
    notes += [f"`{r['target']}` ({r['dataset']}): {r['projected_minutes']:.1f} min projected — one run takes "
              f"{r['seconds_per_run']:.1f} s here, so R = {r['runs_to_verdict']} per world cannot fit in "
              f"{VERDICT_TARGET_MIN:.0f} min on 2 cores." for r in over]
    payload = {"kind": "speed", "workers_measured": 1, "audit_workers": AUDIT_WORKERS,
               "load_average": list(os.getloadavg()), "rows": rows, "notes": notes}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {out_path} ({len(rows)} targets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
