"""Equivalence of the fast and the plain path of shadow runs (issue 14, deliverable 3).

For every built-in implementation with a fast path: R runs per world on each path (worst case,
paper settings, independent seeds), featurised with both attacks (Querybased cell counts,
GroundHog column statistics), then a two-sample KS test per feature and world and a classifier
two-sample test per world, Holm-corrected at family-wise α = 0.05 per implementation
(:mod:`dpcheck.audit.runners.equivalence`). Its power is stated two ways: ``detectable_shift_sd``, the
smallest shift of one continuous feature (in s.d.) the KS test detects with 80 % probability at
Holm's first threshold (simulated, fixed seed), and a power check that runs the same tests between
the fast path and the fast path with a tenth of the iterations (a change the tests may or may not
see: where the accountant stops training early or the output is fixed by data-derived bounds, a
tenth of the iterations releases the same distribution).

    python benchmarks/fast_path_equivalence.py                       # all, R = 200, writes the report
    python benchmarks/fast_path_equivalence.py --impl original --runs 50 --json /tmp/eq.json
    DPCHECK_SMALL=1 python benchmarks/fast_path_equivalence.py --json /tmp/eq.json   # R = 30
    python benchmarks/fast_path_equivalence.py --power-only --impl borealis-fixed   # power of an existing entry

``--power-only`` recomputes only the fast runs of an existing entry (same seeds, so the same runs:
a fast run depends on its seed only) and adds the power check and the detectable shift, recorded
with ``power_command``; the entry's ``command`` stays the one that produced the two-sample test.

Entries of an existing ``--json`` file for other implementations are kept (one run per
implementation at a time is enough).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from dpcheck.audit.core.settings import paper_hyperparams
from dpcheck.audit.runners import equivalence, fastpath

REPORT = Path(__file__).resolve().parent.parent / "reports" / "fast_path_equivalence.json"


def power_check(impl: str, runs: int, fast: equivalence.PathRuns, seed: int, alpha: float) -> dict:
    """Fast path vs fast path with a tenth of the iterations: does the test notice?"""
    hp = paper_hyperparams(impl, "worstcase")
    halved = dict(hp, max_iterations=max(1, int(hp.get("max_iterations", 100)) // 10))
    other = equivalence.path_runs(equivalence.spec_for(impl, runs, seed + 2, hyperparams=halved), runs, "fast")
    res = equivalence.compare(impl, fast, other, alpha=alpha, seed=seed)
    return {"change": f"max_iterations {hp.get('max_iterations')} -> {halved['max_iterations']}",
            "detected": not res.equivalent, "rejected_tests": len(res.rejected), "tests": res.tests}


def save(out: Path, entry: dict, argv: list[str] | None) -> None:
    """Merge one implementation's entry into the report (re-read first: other runs may have written)."""
    report = json.loads(out.read_text()) if out.is_file() else {}
    entries = {e["impl"]: e for e in report.get("implementations", [])}
    entry = dict(entry, command="python benchmarks/fast_path_equivalence.py "
                 + " ".join(argv if argv is not None else sys.argv[1:]))
    entries[entry["impl"]] = entry
    report = {
        "description": "fast vs plain path of shadow runs: per-feature KS and classifier two-sample tests on "
                       "the attack features (Querybased + GroundHog), Holm-corrected, family-wise alpha per "
                       "implementation; worst case, paper settings; independent seeds per path",
        "implementations": [entries[k] for k in sorted(entries)],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")


def add_power(out: Path, args: argparse.Namespace, argv: list[str] | None) -> int:
    report = json.loads(out.read_text()) if out.is_file() else {}
    entries = {e["impl"]: e for e in report.get("implementations", [])}
    missing = [i for i in args.impl if i not in entries]
    if missing:
        print(f"--power-only needs an existing entry in {out} for: {', '.join(missing)}", file=sys.stderr)
        return 2
    command = "python benchmarks/fast_path_equivalence.py " + " ".join(argv if argv is not None else sys.argv[1:])
    for impl in args.impl:
        entry = entries[impl]
        runs, seed, alpha = entry["runs_per_world"], args.seed, entry["alpha"]
        fast = equivalence.path_runs(equivalence.spec_for(impl, runs, seed + 1), runs, "fast")
        power = power_check(impl, runs, fast, seed, alpha)
        shift = equivalence.detectable_shift(runs, entry["tests"], alpha)
        # re-read: other runs may have written meanwhile
        report = json.loads(out.read_text())
        for e in report["implementations"]:
            if e["impl"] == impl:
                e.update(power_check=power, detectable_shift_sd=shift, power_command=command)
        out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"{impl:<18} R={runs}/world  detectable shift {shift:.2f} sd (80 % power); power check "
              f"({power['change']}): {'detected' if power['detected'] else 'not detected'} "
              f"({power['rejected_tests']} of {power['tests']} tests rejected)", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    small = bool(os.environ.get("DPCHECK_SMALL"))
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impl", nargs="+", default=sorted(fastpath.FAST_FUNCTIONS), help="implementations")
    p.add_argument("--runs", type=int, default=30 if small else 200, help="runs per world per path")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise level per implementation")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-power", action="store_true", help="skip the power check")
    p.add_argument("--power-only", action="store_true",
                   help="add the power check and detectable shift to an existing entry (fast runs only)")
    p.add_argument("--json", default=str(REPORT), help=f"report file (default {REPORT})")
    args = p.parse_args(argv)
    unknown = [i for i in args.impl if not fastpath.has_fast_path(i)]
    if unknown:
        print(f"no fast path for: {', '.join(unknown)}", file=sys.stderr)
        return 2
    out = Path(args.json)
    if args.power_only:
        return add_power(out, args, argv)
    failed = False
    for impl in args.impl:
        res, plain, fast = equivalence.equivalence(impl, args.runs, alpha=args.alpha, seed=args.seed)
        entry = res.to_dict()
        if not args.no_power:
            entry["power_check"] = power_check(impl, args.runs, fast, args.seed, args.alpha)
        entry["plain_runs_per_min"] = round(120 * args.runs / res.plain_seconds, 1)
        entry["fast_runs_per_min"] = round(120 * args.runs / res.fast_seconds, 1)
        failed |= not res.equivalent
        power = entry.get("power_check", {})
        print(f"{impl:<18} R={args.runs}/world  {res.tests} tests, {len(res.rejected)} rejected (Holm, α={args.alpha})"
              f"  detectable shift {res.detectable_shift_sd:.2f} sd (80 % power)"
              f"  min KS p {res.min_p_ks:.3f}  C2ST acc {res.c2st_accuracy}  AUC plain/fast "
              f"{res.attack['auc_plain']:.3f}/{res.attack['auc_fast']:.3f}  -> "
              f"{'equivalent' if res.equivalent else 'DIFFERENT'}"
              + (f"; power check ({power['change']}): {'detected' if power['detected'] else 'not detected'}"
                 if power else ""), flush=True)
        save(out, entry, argv)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
