"""The StatDP / DP-Sniper mechanism benchmark with dpcheck's mechanism audit.

    python benchmarks/mechanisms.py                       # every mechanism → reports/mechanism_benchmark.*
    python benchmarks/mechanisms.py --only svt3,report-noisy-max3 --test 100000000
    python benchmarks/mechanisms.py --test 200000 --out /tmp/quick   # a quick look

Per mechanism: claimed and true ε, dpcheck's Clopper–Pearson lower bound at confidence 0.9 and
0.95, outputs per input, wall time, verdict, and DP-Sniper's published lower bound (its reference
logs, logistic regression, confidence 0.9) with its published time. The floating-point rows use
the bit features (``--float-attack``), as DP-Sniper's floating-point experiment does.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcheck.mechaudit.catalog import CATALOG  # noqa: E402
from dpcheck.mechaudit.runner import Budget, audit  # noqa: E402
from dpcheck.mechaudit.target import from_benchmark  # noqa: E402

FLOAT_ROWS = ("laplace-float-naive", "laplace-snapping")


def run_one(name: str, budget: Budget, seed: int, float_attack: bool, classifiers: tuple[str, ...], log,
            pair: tuple[list[float], list[float]] | None = None) -> dict:
    target = from_benchmark(name)
    bench = target.bench
    assert bench is not None
    classifiers = classifiers + ("boosting-bits",) if float_attack else classifiers
    result = audit(target, hood=bench.neighbourhood, length=bench.length, seed=seed, classifiers=classifiers,
                   pair=None if pair is None else (np.array(pair[0], dtype=float), np.array(pair[1], dtype=float)),
                   integer=bench.integer_input,
                   budget=budget, progress=log)
    row = result.to_dict()
    row.update(name=name + (" (float view)" if float_attack and name not in FLOAT_ROWS else ""),
               true_eps=bench.true_eps, correct=bench.correct, dpsniper=bench.dpsniper,
               dpsniper_seconds=bench.dpsniper_seconds, float_attack=float_attack, note=bench.note,
               expected="pass" if bench.correct else "violation")
    return row


def _fmt(v: float | None) -> str:
    if v is None:
        return "—"
    return "∞" if math.isinf(v) else f"{v:.3f}"


def _pair(pair: list) -> str:
    return " vs ".join("[" + ",".join(f"{v:g}" for v in side) + "]" for side in pair)


def markdown(rows: list[dict], command: str) -> str:
    lines = ["# Mechanism benchmark (StatDP / DP-Sniper suite)", "",
             f"Written by `{command}`. Every mechanism claims ε = 0.1 unless stated; bounds are exact "
             "Clopper–Pearson lower bounds on fresh test outputs (pilot, training and validation outputs never "
             "enter them). DP-Sniper: its published lower bound and time (reference logs, logistic regression, "
             "confidence 0.9, its machine). Each row's command is in the JSON: a row run with `--pair` skips the pilot "
             "and uses a pair fixed before its test run; `--select-confidence` is the confidence that ranks the "
             "candidate sets on validation outputs. Times are wall seconds on a shared 2-core machine "
             "under other jobs' load.", "",
             "| mechanism | claimed ε | true ε | dpcheck ε_emp (0.9) | (0.95) | DP-Sniper (0.9) | ratio | pair | attack "
             "| test outputs/input | time s | DP-Sniper s | verdict | expected |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ratio = r["eps_lower"]["0.9"] / r["dpsniper"] if r["dpsniper"] else float("nan")
        mark = "" if r["verdict"] == r["expected"] else " ✗"
        lines.append(f"| {r['name']} | {r['claimed']:.3f} | {_fmt(r['true_eps'])} | {r['eps_lower']['0.9']:.3f} | "
                     f"{r['eps_lower']['0.95']:.3f} | {_fmt(r['dpsniper'])} | {ratio:.2f} | {_pair(r['pair'])} | {r['classifier']} | "
                     f"{r['test_per_input']:,} | "
                     f"{r['seconds']:.0f} | {r['dpsniper_seconds'] or 0:.0f} | {r['verdict']}{mark} | {r['expected']} |")
    wrong = [r["name"] for r in rows if r["verdict"] != r["expected"]]
    below = [r["name"] for r in rows if r["dpsniper"] and r["eps_lower"]["0.9"] < r["dpsniper"]]
    lines += ["", f"Verdicts as expected: {len(rows) - len(wrong)} of {len(rows)}"
              + (f" (not: {', '.join(wrong)})." if wrong else "."),
              f"dpcheck's bound at 0.9 ≥ DP-Sniper's published one: {len(rows) - len(below)} of {len(rows)}"
              + (f" (below: {', '.join(below)})." if below else "."), ""]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [r["name"] for r in rows]
    ours = [r["eps_lower"]["0.9"] for r in rows]
    theirs = [r["dpsniper"] or 0.0 for r in rows]
    fig, ax = plt.subplots(figsize=(11, 5))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], ours, width=0.4, label="dpcheck (0.9)")
    ax.bar([i + 0.2 for i in x], theirs, width=0.4, label="DP-Sniper published (0.9)")
    ax.axhline(0.1, color="grey", lw=0.8, ls="--", label="claimed ε = 0.1")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_xticks(list(x), names, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("ε lower bound")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated mechanism names")
    ap.add_argument("--test", type=int, default=10_000_000, help="test outputs per input (10,000,000)")
    ap.add_argument("--pilot", type=int, default=Budget.pilot, help="pilot outputs per input and pair")
    ap.add_argument("--train", type=int, default=Budget.train, help="training outputs per input")
    ap.add_argument("--validation", type=int, default=Budget.validation, help="validation outputs per input")
    ap.add_argument("--select-confidence", type=float, default=Budget.select_confidence,
                    help="confidence of the validation bound that picks the threshold and the classifier (0.9); "
                         "higher penalises small, noisy sets")
    ap.add_argument("--min-mass", type=float, default=Budget.min_mass,
                    help="smallest probability under the numerator input of a set the validation may choose (0.01, "
                         "DP-Sniper's c); lower it only with a large validation and a strict --select-confidence")
    ap.add_argument("--classifiers", default="logistic,boosting",
                    help="attack classifiers, comma-separated (logistic, logistic-signs, logistic-diff-signs, boosting, table; the "
                         "floating-point rows add boosting-bits)")
    ap.add_argument("--pair", help="a fixed input pair A:B for the one --only mechanism, e.g. 1,21,21,21,21:0,22,22,22,22 "
                    "(no pilot; checked against the mechanism's neighbourhood)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(ROOT / "reports" / "mechanism_benchmark"), help="path stem of the report")
    ap.add_argument("--merge", action="store_true", help="replace only these mechanisms' rows in an existing report "
                    "(each row keeps the command that produced it)")
    ap.add_argument("--render", action="store_true", help="only rewrite the markdown and the chart from the JSON")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.render:
        saved = json.loads(out.with_suffix(".json").read_text())
        out.with_suffix(".md").write_text(markdown(saved["rows"], saved["command"]))
        plot(saved["rows"], out.with_suffix(".png"))
        return 0
    names = args.only.split(",") if args.only else list(CATALOG)
    unknown = [n for n in names if n not in CATALOG]
    if unknown:
        ap.error(f"unknown mechanisms: {', '.join(unknown)}")
    pair = None
    if args.pair:
        if len(names) != 1:
            ap.error("--pair needs exactly one mechanism in --only")
        pair = tuple([float(v) for v in side.split(",")] for side in args.pair.split(":"))
    command = "python benchmarks/mechanisms.py " + " ".join(argv if argv is not None else sys.argv[1:])
    classifiers = tuple(args.classifiers.split(","))
    budget = Budget(pilot=args.pilot, train=args.train, validation=args.validation, test=args.test,
                    select_confidence=args.select_confidence, min_mass=args.min_mass)
    rows = []
    for name in names:
        start = time.perf_counter()
        rows.append(run_one(name, budget, args.seed, name in FLOAT_ROWS, classifiers,
                            lambda m: print(m, flush=True), pair))
        print(f"{name}: ε_emp {rows[-1]['eps_lower']} {rows[-1]['verdict']} ({time.perf_counter() - start:.0f} s)",
              flush=True)
    if not args.only:  # numpy's own Laplace in the floating-point view (Mironov's attack)
        rows.append(run_one("laplace", budget, args.seed, True, classifiers, lambda m: print(m, flush=True)))
        rows[-1]["expected"] = "violation"
        rows[-1]["note"] = "numpy's Generator.laplace seen through its floating-point outputs"
    for row in rows:
        row["command"] = command.strip()
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.merge and out.with_suffix(".json").exists():
        fresh = {r["name"]: r for r in rows}
        old = json.loads(out.with_suffix(".json").read_text())["rows"]
        rows = [fresh.pop(r["name"], r) for r in old] + list(fresh.values())
        command = "python benchmarks/mechanisms.py (rows merged; each row names its command)"
    out.with_suffix(".json").write_text(json.dumps({"command": command.strip(), "rows": rows}, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(rows, command.strip()))
    plot(rows, out.with_suffix(".png"))
    print(markdown(rows, command.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
