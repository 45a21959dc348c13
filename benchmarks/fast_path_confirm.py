"""Re-check on the plain path the committed verdicts that ran on a fast path that is not exact (issue 26.1).

The torch fast paths (``fastpath.EXACT``) replay the plain path's draws and arithmetic, so their
released data equals the plain path's to float32 rounding (``tests/test_audit_fast.py``). The
TF1 fast paths (original, updated, turing and their twins) and ``synthcity`` (its sklearn
teachers are solved by a batched Newton solver) draw differently by construction; for them the
R = 200 two-sample test of ``benchmarks/fast_path_equivalence.py`` only fails to reject. So every
verdict that matters — every violation and every corrected twin's pass — of a committed report
that ran on such a fast path is re-run here on the plain path alone (fresh store, in-process,
``--plain``), with the committed spec and ``R`` runs per world (often fewer than the fast audit:
the smallest R that decides the verdict, fixed here before the run). Each confirmation is an audit of
its own at a fixed R (no checkpoints) and the spec's confidence (0.95), on fresh plain runs only. A
violation is confirmed when that bound proves ε_emp > ε; a pass is confirmed when it shows no
violation — its certifiable maximum says whether it could have alarmed.

    python benchmarks/fast_path_confirm.py                    # every entry of CONFIRMATIONS
    python benchmarks/fast_path_confirm.py --only twins:turing-fixed bb:updated

Results go to ``reports/fast_path_confirmation.json`` (merged per entry, with the command that
wrote it; ``--lists-only`` rewrites only the lists of exact, not-exact and unconfirmed). ``UNCONFIRMED`` lists the committed fast-path verdicts of non-exact implementations not
(yet) re-checked, with the plain-path cost that kept them out; ``tests/test_audit_fast.py`` checks
that every such verdict in reports/ is in one of the two lists.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from dpcheck.audit.runners import fastpath

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "reports" / "fast_path_confirmation.json"

#: label -> (committed report, index of the result in it, plain runs per world)
CONFIRMATIONS: dict[str, tuple[str, int, int]] = {
    "twins:original-fixed": ("reports/audit_twins.json", 0, 50),
    "twins:updated-fixed": ("reports/audit_twins.json", 1, 50),
    "twins:synthcity-fixed": ("reports/audit_twins.json", 2, 100),
    "twins:turing-fixed": ("reports/audit_twins.json", 3, 50),
    "bb:original": ("reports/audit_whitebox/bb_original.json", 0, 50),
    "bb:original-fixed": ("reports/audit_whitebox/bb_original.json", 1, 50),
    "bb:updated": ("reports/audit_whitebox/bb_updated.json", 0, 40),
    "bb:updated-fixed": ("reports/audit_whitebox/bb_updated.json", 1, 40),
    "cervical:synthcity-selected": ("reports/audit_cervical/synthcity__selected.json", 0, 50),
    "cervical:synthcity-target397": ("reports/audit_cervical/synthcity__target397.json", 0, 100),
    "real-confirm:synthcity": ("reports/audit_real/confirm/synthcity.json", 0, 50),
    "cervical:updated-target397": ("reports/audit_cervical/updated__target397.json", 0, 100),
    "canary:craft-original": ("reports/audit_canaries/cervical_craft_original.json", 0, 50),
    "canary:craft-original-fixed": ("reports/audit_canaries/cervical_craft_original-fixed.json", 0, 50),
    "canary:craft-updated": ("reports/audit_canaries/cervical_craft_updated.json", 0, 50),
    "canary:craft-updated-fixed": ("reports/audit_canaries/cervical_craft_updated-fixed.json", 0, 50),
    "cervical:original-fixed-selected": ("reports/audit_cervical/original-fixed__selected.json", 0, 50),
    "cervical:original-fixed-target397": ("reports/audit_cervical/original-fixed__target397.json", 0, 50),
    "cervical:turing-fixed-selected": ("reports/audit_cervical/turing-fixed__selected.json", 0, 50),
    "cervical:turing-fixed-target397": ("reports/audit_cervical/turing-fixed__target397.json", 0, 50),
    "cervical:updated-fixed-selected": ("reports/audit_cervical/updated-fixed__selected.json", 0, 50),
    "cervical:updated-fixed-target397": ("reports/audit_cervical/updated-fixed__target397.json", 0, 50),
    "cervical:updated-selected": ("reports/audit_cervical/updated__selected.json", 0, 100),
    "search:turing-fixed": ("reports/audit_search.json", 1, 100),
    "search:turing": ("reports/audit_search.json", 0, 100),
    "cervical:original-selected": ("reports/audit_cervical/original__selected.json", 0, 100),
    "cervical:original-target397": ("reports/audit_cervical/original__target397.json", 0, 250),
}
#: "report#index" of committed fast-path verdicts of non-exact implementations not re-run on the plain path: why
UNCONFIRMED: dict[str, str] = {
}


def load_result(path: str, index: int) -> dict:
    return json.loads((ROOT / path).read_text())["results"][index]


def confirm(label: str) -> dict:
    from dpcheck.audit.core.spec import AuditSpec
    from dpcheck.audit.core.store import Store
    from dpcheck.audit.runners.engine import run_audit
    from dpcheck.audit.runners.executor import InlineExecutor

    path, index, runs = CONFIRMATIONS[label]
    fast = load_result(path, index)
    raw = dict(fast["spec"])
    raw["split"] = tuple(raw["split"])
    spec = replace(AuditSpec(**raw), runs=runs)
    violation = fast["verdict"] == "violation"
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "plain.sqlite") as store:
        res = run_audit(spec, store=store, executor=InlineExecutor("plain"), until_verdict=False)
    if res.run_paths.get("plain") != 2 * res.runs or res.run_paths.get("fast") or res.run_paths.get("fallback"):
        raise RuntimeError(f"{label}: not every analysed run came from the plain path: {res.run_paths}")
    plain_violation = res.verdict == "violation"
    return {
        "label": label, "report": path, "index": index, "impl": spec.impl, "dataset": spec.dataset,
        "attack": spec.attack, "target": spec.target, "hyperparams": spec.hyperparams,
        "fast": {"verdict": fast["verdict"], "runs": fast["runs"], "eps_cp": fast["eps_cp"], "auc": fast["auc"],
                 "certifiable_cp": fast["certifiable_cp"], "run_paths": fast.get("run_paths")},
        "plain": {"verdict": res.verdict, "runs": res.runs, "runs_planned": runs, "eps_cp": res.eps_cp,
                  "eps_bayes": res.eps_bayes, "auc": res.auc, "certifiable_cp": res.certifiable_cp,
                  "bound_confidence": res.bound_confidence, "until_verdict": False,
                  "run_paths": res.run_paths, "seconds": round(time.perf_counter() - started, 1)},
        "confirmed": plain_violation == violation,
    }


def save(out: Path, entry: dict | None, argv: list[str] | None) -> None:
    report = json.loads(out.read_text()) if out.is_file() else {}
    entries = {e["label"]: e for e in report.get("confirmations", [])}
    if entry is not None:
        entry = dict(entry, command="python benchmarks/fast_path_confirm.py "
                     + " ".join(argv if argv is not None else sys.argv[1:]))
        entries[entry["label"]] = entry
    report = {
        "description": "committed verdicts computed on a non-exact fast path, re-run on the plain path only "
                       "(fresh store, in-process); the bound uses plain runs only",
        "exact": sorted(fastpath.EXACT),
        "not_exact": sorted(set(fastpath.FAST_FUNCTIONS) - fastpath.EXACT),
        "confirmations": [entries[k] for k in sorted(entries)],
        "unconfirmed": UNCONFIRMED,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", nargs="+", default=list(CONFIRMATIONS), help="labels to run (default: all)")
    p.add_argument("--json", default=str(REPORT), help=f"report file (default {REPORT})")
    p.add_argument("--lists-only", action="store_true",
                   help="rewrite only the exact / not-exact / unconfirmed lists of the report (no runs)")
    args = p.parse_args(argv)
    if args.lists_only:
        save(Path(args.json), None, argv)
        return 0
    unknown = [x for x in args.only if x not in CONFIRMATIONS]
    if unknown:
        print(f"unknown labels: {', '.join(unknown)}; choose from {', '.join(CONFIRMATIONS)}", file=sys.stderr)
        return 2
    refuted = False
    for label in args.only:
        entry = confirm(label)
        refuted |= not entry["confirmed"]
        f, pl = entry["fast"], entry["plain"]
        print(f"{label:<24} fast {f['verdict']} (R={f['runs']}, ε_emp {f['eps_cp']:.2f})  plain {pl['verdict']} "
              f"(R={pl['runs']}, ε_emp {pl['eps_cp']:.2f}, AUC {pl['auc']:.2f}, certifiable {pl['certifiable_cp']:.2f}, "
              f"{pl['seconds']:.0f} s)  -> {'confirmed' if entry['confirmed'] else 'NOT CONFIRMED'}", flush=True)
        save(Path(args.json), entry, argv)
    return 1 if refuted else 0


if __name__ == "__main__":
    sys.exit(main())
