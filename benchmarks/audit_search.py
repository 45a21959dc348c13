"""Worst-case settings search on turing, smartnoise and their twins → reports/audit_search.{json,md}.

For each implementation: a pilot of ``--pilot-runs`` runs per world on every point of its built-in
grid (dpcheck.audit.runners.search.DEFAULT_GRIDS; a twin gets its buggy version's grid), the most
distinguishing point fixed, then a confirmatory Querybased audit on the worst case with fresh runs,
``--until-verdict`` at the default checkpoints cut at ``--runs``. Pilot runs never enter the bound.

    python benchmarks/audit_search.py [--impl turing smartnoise …] [--pilot-runs 100] [--runs 1000] [--workers 2]

The runs are stored in ``--store`` (default .dpcheck/audit_search.sqlite), so a rerun resumes.
smartnoise and its twin take the torch fast path (bit-identical to the plain path, docs/audit.md);
``--plain`` runs everything on the plain path.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dpcheck.audit.core.progress import TextProgress  # noqa: E402
from dpcheck.audit.core.settings import paper_hyperparams  # noqa: E402
from dpcheck.audit.core.spec import DEFAULT_CHECKPOINTS, AuditSpec  # noqa: E402
from dpcheck.audit.core.store import Store  # noqa: E402
from dpcheck.audit.runners import search  # noqa: E402
from dpcheck.audit.runners.engine import checkpoint_plan  # noqa: E402
from dpcheck.audit.runners.executor import make_executor  # noqa: E402

IMPLS = ("turing", "turing-fixed", "smartnoise", "smartnoise-fixed")


def audit_one(impl: str, args: argparse.Namespace, store: Store, executor) -> dict:
    spec = AuditSpec(impl, dataset="worstcase", attack="querybased", runs=args.runs, seed=args.seed,
                     hyperparams=paper_hyperparams(impl, "worstcase"), confidence=args.confidence)
    points = search.expand(search.default_grid(impl))
    started = time.perf_counter()
    result = search.run_search(spec, points, store=store, executor=executor, progress=TextProgress(),
                               pilot_runs=args.pilot_runs, until_verdict=True, checkpoints=DEFAULT_CHECKPOINTS)
    out = result.to_dict()
    out["minutes"] = (time.perf_counter() - started) / 60
    return out


def fmt_point(point: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items())


def markdown(payload: dict) -> str:
    lines = ["# Worst-case settings search (`dpcheck audit --search`)", "",
             f"Worst case (D′ = four (0,0,0), target (1,1,1)), Querybased, ε = 1, δ = 10⁻⁵, paper settings as the "
             f"base; pilot {payload['pilot_runs']} runs per world per grid point (phase `pilot`, never in the "
             f"bound); confirmatory audit on fresh runs, `--until-verdict` at checkpoints "
             f"{', '.join(map(str, payload['checkpoints']))}, confidence {payload['confidence']} jointly "
             "(Bonferroni over the checkpoints). Command: `" + payload["command"] + "`.", "",
             "| implementation | grid points | chosen setting | R per world | ε_emp CP | ε_emp Bayes | AUC | "
             "test FP/FN | certifiable max | verdict | minutes |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in payload["results"]:
        lines.append(f"| {r['impl']} | {len(r['search']['grid'])} | {fmt_point(r['search']['chosen'])} | {r['runs']} | "
                     f"{r['eps_cp']:.2f} | {r['eps_bayes']:.2f} | {r['auc']:.2f} | {r['fp']}/{r['fn']} | {r['certifiable_cp']:.2f} | {r['verdict']} | {r['minutes']:.1f} |")
    lines += ["", "Pilot: the CV AUC (5-fold, over all pilot runs of the point) ranks the points; the test-part "
              f"numbers (ε_emp CP at confidence {payload['confidence']}, AUC, FP/FN, certifiable maximum) are "
              "shown, not used:", "",
              "| implementation | grid point | pilot CV AUC | test ε_emp CP | test AUC | FP/FN | certifiable |",
              "|---|---|---|---|---|---|---|"]
    for r in payload["results"]:
        for i, p in enumerate(r["search"]["pilot"]):
            mark = " **(chosen)**" if i == r["search"]["chosen_index"] else ""
            if "failed" in p:
                reason = p["failed"].rsplit("failed: ", 1)[-1]  # the implementation's own message
                lines.append(f"| {r['impl']} | {fmt_point(p['point'])} | failed: {reason} | | | | |")
                continue
            lines.append(f"| {r['impl']} | {fmt_point(p['point'])}{mark} | {p['cv_auc']:.3f} | {p['eps_cp']:.2f} | "
                         f"{p['auc']:.2f} | {p['fp']}/{p['fn']} | {p['certifiable_cp']:.2f} |")
    lines += ["", f"Rule: {search.RULE}.", "", search.STATEMENT[0].upper() + search.STATEMENT[1:] + ".", ""]
    extra = payload.get("supplementary", [])
    if extra:
        lines += ["## Supplementary audits at settings fixed by reading the code (not by the pilot)", "",
                  "Each is its own audit with its own confidence; the search's result above does not depend "
                  "on them.", "", "| implementation | setting | why | R per world | ε_emp CP | AUC | test FP/FN | "
                  "certifiable max | verdict | command |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in extra:
            lines.append(f"| {r['impl']} | {fmt_point(r['setting'])} | {r['why']} | {r['runs']} | {r['eps_cp']:.2f} | "
                         f"{r['auc']:.2f} | {r['fp']}/{r['fn']} | {r['certifiable_cp']:.2f} | {r['verdict']} | "
                         f"`{r['command']}` |")
        lines.append("")
    return "\n".join(lines)


def rewrite_markdown(json_path: Path) -> None:
    """Regenerate the markdown report from a stored JSON result."""
    payload = json.loads(json_path.read_text())
    json_path.with_suffix(".md").write_text(markdown(payload))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", nargs="+", default=list(IMPLS))
    p.add_argument("--pilot-runs", type=int, default=100)
    p.add_argument("--runs", type=int, default=1000, help="confirmatory cap, runs per world")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--plain", action="store_true")
    p.add_argument("--store", default=str(ROOT / ".dpcheck" / "audit_search.sqlite"))
    p.add_argument("--out", default=str(ROOT / "reports" / "audit_search"))
    args = p.parse_args(argv)
    if os.environ.get("DPCHECK_SMALL") == "1":
        args.pilot_runs, args.runs = min(args.pilot_runs, 10), min(args.runs, 20)
    store = Store(args.store)
    results = []
    started = time.perf_counter()
    try:
        for impl in args.impl:
            path = "plain" if args.plain else ("fast" if impl.startswith("smartnoise") else "auto")
            executor = make_executor(workers=args.workers, path=path)
            try:
                results.append({**audit_one(impl, args, store, executor), "run_path_requested": path})
            finally:
                executor.close()
            r = results[-1]
            print(f"{impl}: chose {r['search']['chosen']}, R={r['runs']}, ε_emp CP {r['eps_cp']:.3f}, "
                  f"AUC {r['auc']:.3f}, certifiable {r['certifiable_cp']:.2f}, {r['verdict']}, "
                  f"{r['minutes']:.1f} min", flush=True)
    finally:
        store.close()
    payload = {"description": "worst-case settings search (dpcheck.audit.runners.search): pilot over a grid, confirmatory "
                              "audit on fresh runs", "command": "python benchmarks/audit_search.py " + " ".join(
                                  sys.argv[1:] if argv is None else argv),
               "pilot_runs": args.pilot_runs, "runs_cap": args.runs,
               "checkpoints": checkpoint_plan(args.runs, DEFAULT_CHECKPOINTS),
               "confidence": args.confidence, "workers": args.workers, "machine": platform.platform(),
               "minutes_total": (time.perf_counter() - started) / 60, "results": results}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(payload, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(payload))
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
