"""False alarms of the mechanism audit over seeds, on correct benchmark mechanisms.

    python benchmarks/mechanism_false_alarms.py                 # 20 seeds → reports/mechanism_false_alarms.*
    python benchmarks/mechanism_false_alarms.py --seeds 40 --out /tmp/fa

Each seed runs the whole audit (pair search on pilot outputs, classifier and set chosen on
validation outputs, bound on fresh test outputs) on a mechanism whose true ε equals its claim;
any verdict "violation" is a false alarm. With k alarms in N seeds the one-sided 95 %
Clopper–Pearson upper bound on the per-audit false-alarm rate is what the seeds certify.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from scipy.stats import beta as beta_dist

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcheck.mechaudit.runner import Budget, audit  # noqa: E402
from dpcheck.mechaudit.target import from_benchmark  # noqa: E402

MECHANISMS = ("laplace", "noisy-hist1", "report-noisy-max1")
BUDGET = Budget(pilot=30_000, train=20_000, validation=100_000, test=300_000)
CLASSIFIERS = ("logistic", "boosting")


def cp_upper_one_sided(k: int, n: int, confidence: float = 0.95) -> float:
    return 1.0 if k >= n else float(beta_dist.ppf(confidence, k + 1, n - k))


def markdown(summary: list[dict], total: dict, command: str, seeds: int, budget: Budget) -> str:
    lines = ["# Mechanism audit: false alarms over seeds", "",
             f"Written by `{command}`. Each mechanism is correct (true ε = claimed ε = 0.1); each seed runs the "
             f"full audit (pair search, then a confirmatory run on fresh outputs) with budget pilot "
             f"{budget.pilot:,} / train {budget.train:,} / validation {budget.validation:,} / test "
             f"{budget.test:,} outputs per input and classifiers {', '.join(CLASSIFIERS)}; verdict "
             "\"violation\" when the Clopper–Pearson lower bound at confidence 0.95 exceeds the claim.", "",
             "| mechanism | seeds | alarms | max ε_emp (0.95) | max ε_emp (0.9) | median ε_emp (0.95) "
             "| 95 % CP upper bound on the false-alarm rate | mean time s |",
             "|---|---|---|---|---|---|---|---|"]
    for s in summary + [total]:
        lines.append(f"| {s['mechanism']} | {s['seeds']} | {s['alarms']} | {s['max_eps_95']:.4f} | "
                     f"{s['max_eps_90']:.4f} | {s['median_eps_95']:.4f} | {100 * s['rate_upper_95']:.1f} % | "
                     f"{s['mean_seconds']:.1f} |")
    lines += ["", f"What the seeds certify: with {total['alarms']} alarms in {total['seeds']} audits over the three "
              f"mechanisms, the false-alarm rate per audit (at this budget, on these mechanisms) is at most "
              f"{100 * total['rate_upper_95']:.1f} % with 95 % confidence (one-sided Clopper–Pearson); per "
              f"mechanism, {summary[0]['alarms']} alarms in {seeds} seeds certify at most "
              f"{100 * summary[0]['rate_upper_95']:.1f} % for {summary[0]['mechanism']} (and likewise in the "
              "table). Nothing stronger follows from these runs.", ""]
    return "\n".join(lines)


def summarise(name: str, rows: list[dict]) -> dict:
    e95 = sorted(r["eps_lower"]["0.95"] for r in rows)
    alarms = sum(r["verdict"] == "violation" for r in rows)
    return {"mechanism": name, "seeds": len(rows), "alarms": alarms, "max_eps_95": e95[-1],
            "max_eps_90": max(r["eps_lower"]["0.9"] for r in rows), "median_eps_95": e95[len(e95) // 2],
            "rate_upper_95": cp_upper_one_sided(alarms, len(rows)),
            "mean_seconds": sum(r["seconds"] for r in rows) / len(rows)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--only", help="comma-separated mechanism names (default: the three)")
    ap.add_argument("--budget", help="PILOT,TRAIN,VALIDATION,TEST outputs per input "
                    f"(default {BUDGET.pilot},{BUDGET.train},{BUDGET.validation},{BUDGET.test})")
    ap.add_argument("--out", default=str(ROOT / "reports" / "mechanism_false_alarms"))
    args = ap.parse_args(argv)
    command = "python benchmarks/mechanism_false_alarms.py " + " ".join(argv if argv is not None else sys.argv[1:])
    budget = Budget(*(int(v) for v in args.budget.split(","))) if args.budget else BUDGET
    names = args.only.split(",") if args.only else list(MECHANISMS)
    runs: dict[str, list[dict]] = {}
    for name in names:
        runs[name] = []
        for seed in range(args.first_seed, args.first_seed + args.seeds):
            bench = from_benchmark(name).bench
            assert bench is not None and bench.correct
            r = audit(from_benchmark(name), hood=bench.neighbourhood, length=bench.length, seed=seed,
                      classifiers=CLASSIFIERS, integer=bench.integer_input, budget=budget).to_dict()
            r["seed"] = seed
            del r["pilot"]
            runs[name].append(r)
            print(f"{name} seed {seed}: ε_emp {r['eps_lower']} {r['verdict']} ({r['seconds']} s)", flush=True)
    summary = [summarise(n, runs[n]) for n in names]
    total = summarise("all three", [r for n in names for r in runs[n]])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(
        {"command": command.strip(), "budget": vars(budget), "classifiers": list(CLASSIFIERS),
         "summary": summary, "total": total, "runs": runs}, indent=2) + "\n")
    text = markdown(summary, total, command.strip(), args.seeds, budget)
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
