"""DP-Sniper's own code next to dpcheck's mechanism audit, same mechanism, same input pair.

    git --git-dir=/work/.mirror/eth-sri+dp-sniper/repo archive HEAD | tar -x -C /tmp/dps
    pip install --target /tmp/dps_deps mmh3          # its one missing pure-Python dependency, outside the project
    python benchmarks/dpsniper_side_by_side.py --dpsniper /tmp/dps --deps /tmp/dps_deps

Per mechanism: dpcheck's audit runs first (its own pair search on pilot outputs, then the
confirmatory run); DP-Sniper (eth-sri/dp-sniper, imported from DIR in a subprocess, never copied
into this project) then runs on the pair dpcheck chose: its DPSniper attack (logistic regression
as in its exp_default) on that one pair (DDSearch over a one-pair generator), then its
high-precision estimate. Both report a lower bound on ε at confidence 0.9; the report prints the
ratio of the bounds and of the wall times. DP-Sniper's sample sizes are reduced from its paper's
(DDConfig: n_train = n = n_check = 10.7M, n_final = 200M) by --dpsniper-budget; dpcheck's by
--budget. --seed fixes dpcheck's run; DP-Sniper's worker processes reseed numpy from OS entropy
(its utils/my_multiprocessing.py), so its numbers reproduce in distribution only.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("OMP_NUM_THREADS", "1")

# dpcheck catalog name → DP-Sniper class, constructor arguments, classifier input width, ⊥ flags (its exp_default)
DPSNIPER = {
    "report-noisy-max3": ("dpsniper.mechanisms.report_noisy_max", "ReportNoisyMax3", {}, 1, None),
    "svt3": ("dpsniper.mechanisms.sparse_vector_technique", "SparseVectorTechnique3", {"c": 1, "t": 1.0}, 30,
             [-1000.0, -2000.0]),
    "noisy-hist1": ("dpsniper.mechanisms.noisy_hist", "NoisyHist1", {}, 5, None),
    "noisy-hist2": ("dpsniper.mechanisms.noisy_hist", "NoisyHist2", {}, 5, None),
}
DEFAULT_DPSNIPER_BUDGET = "1000000,1000000,1000000,10000000"  # n_train, n, n_check, n_final
DEFAULT_BUDGET = "50000,100000,1000000,10000000"  # dpcheck: pilot, train, validation, test


class OnePair:
    """DP-Sniper's input-pair generator protocol (get_input_pairs) for one fixed pair. Top level, so that
    DP-Sniper's spawned workers can unpickle it from this script."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def get_input_pairs(self):
        yield self.a, self.b


def child(args: argparse.Namespace) -> int:
    """Runs inside the subprocess, with DP-Sniper's directory and its dependencies on sys.path."""
    import importlib

    import numpy as np

    from dpsniper.attack.dpsniper import DPSniper
    from dpsniper.classifiers.classifier_factory import LogisticRegressionFactory
    from dpsniper.classifiers.feature_transformer import FlagsFeatureTransformer
    from dpsniper.classifiers.torch_optimizer_factory import SGDOptimizerFactory
    from dpsniper.search.ddconfig import DDConfig
    from dpsniper.search.ddsearch import DDSearch
    from dpsniper.utils.initialization import initialize_dpsniper

    module, cls, kwargs, width, flags = DPSNIPER[args.mechanism]
    mechanism = getattr(importlib.import_module(module), cls)(**kwargs)
    n_train, n, n_check, n_final = (int(v) for v in args.dpsniper_budget.split(","))
    config = DDConfig(n_train=n_train, n=n, n_check=n_check, n_final=n_final, n_processes=1, confidence=0.9)
    factory = LogisticRegressionFactory(
        feature_transform=FlagsFeatureTransformer(flags) if flags else None, in_dimensions=width,
        optimizer_factory=SGDOptimizerFactory(learning_rate=0.3, momentum=0.3, step_size=500),
        regularization_weight=0.001, epochs=10, label=cls)
    a, b = (np.asarray(v, dtype=float) for v in json.loads(args.pair))
    np.random.seed(args.seed)
    start = time.perf_counter()
    with initialize_dpsniper(config, out_dir=args.workdir, torch_threads=1):
        witness = DDSearch(mechanism, DPSniper(mechanism, factory, config), OnePair(a, b), config).run()
        searched = time.perf_counter() - start
        witness.compute_eps_high_precision(mechanism, config)
    print(json.dumps({"eps_lower_0.9": float(witness.lower_bound), "eps_estimate": float(witness.eps),
                      "seconds": time.perf_counter() - start, "search_seconds": searched,
                      "attack": str(witness.attack), "config": str(config)}))
    return 0


def run_dpsniper(name: str, pair: list, args: argparse.Namespace) -> dict:
    workdir = Path(args.workdir) / name
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (args.dpsniper, args.deps or "") if p),
               OMP_NUM_THREADS="1")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--mechanism", name, "--pair", json.dumps(pair),
           "--dpsniper-budget", args.dpsniper_budget, "--seed", str(args.seed), "--workdir", str(workdir),
           "--dpsniper", args.dpsniper]
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"DP-Sniper failed on {name}:\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_seconds"] = wall  # including its start-up (torch import, worker spawn)
    return result


def run_dpcheck(name: str, budget: str, seed: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from dpcheck.mechaudit.runner import Budget, audit
    from dpcheck.mechaudit.target import from_benchmark

    target = from_benchmark(name)
    bench = target.bench
    assert bench is not None
    start = time.perf_counter()
    result = audit(target, hood=bench.neighbourhood, length=bench.length, seed=seed, integer=bench.integer_input,
                   classifiers=("logistic", "boosting"), budget=Budget(*(int(v) for v in budget.split(","))),
                   progress=lambda m: print(m, flush=True))
    row = result.to_dict()
    row["wall_seconds"] = time.perf_counter() - start
    row["true_eps"], row["dpsniper_published"] = bench.true_eps, bench.dpsniper
    return row


def markdown(rows: list[dict], command: str, args: argparse.Namespace) -> str:
    lines = ["# DP-Sniper side by side", "",
             f"Written by `{command}`. DP-Sniper: eth-sri/dp-sniper run from a local checkout in a subprocess (one "
             f"process, one torch thread), logistic regression as in its exp_default, on the pair dpcheck chose, "
             f"DDConfig (n_train, n, n_check, n_final) = ({args.dpsniper_budget}) — its paper uses (10.7M, 10.7M, "
             f"10.7M, 200M). dpcheck: its own pair search and confirmatory run, budget (pilot, train, validation, "
             f"test) = ({args.budget}), classifiers logistic and boosting. Both bounds at confidence 0.9; seed "
             f"{args.seed} (dpcheck only: DP-Sniper's workers reseed from OS entropy, so its row reproduces in "
             "distribution only); dpcheck's time includes its pair search, DP-Sniper's does not (it is given the "
             "pair); DP-Sniper's time is the subprocess's wall time, torch import and worker start included.",
             "", "| mechanism | true ε | pair | dpcheck ε (0.9) | DP-Sniper ε (0.9) | bound ratio dpcheck/DP-Sniper "
             "| dpcheck s | DP-Sniper s | time ratio | DP-Sniper published (paper budget) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d, s = r["dpcheck"], r["dpsniper"]
        ours, theirs = d["eps_lower"]["0.9"], s["eps_lower_0.9"]
        ratio = f"{ours / theirs:.2f}" if theirs > 0 else "—"
        true = "∞" if d["true_eps"] == float("inf") else f"{d['true_eps']:g}"
        lines.append(f"| {r['name']} | {true} | {d['pair'][0]} vs {d['pair'][1]} | {ours:.4f} | {theirs:.4f} | {ratio} "
                     f"| {d['wall_seconds']:.0f} | {s['wall_seconds']:.0f} | "
                     f"{d['wall_seconds'] / s['wall_seconds']:.2f} | {d['dpsniper_published']} |")
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dpsniper", required=True, help="a checkout of eth-sri/dp-sniper (its directory)")
    ap.add_argument("--deps", help="a directory holding its missing dependencies (pip install --target)")
    ap.add_argument("--only", help=f"comma-separated, from {', '.join(DPSNIPER)}")
    ap.add_argument("--budget", default=DEFAULT_BUDGET, help="dpcheck PILOT,TRAIN,VALIDATION,TEST")
    ap.add_argument("--dpsniper-budget", default=DEFAULT_DPSNIPER_BUDGET, help="DP-Sniper N_TRAIN,N,N_CHECK,N_FINAL")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--workdir", default="/tmp/dpsniper_side_by_side")
    ap.add_argument("--out", default=str(ROOT / "reports" / "dpsniper_side_by_side"))
    ap.add_argument("--merge", action="store_true", help="keep an existing report's other rows (each row names its "
                    "command)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--mechanism", help=argparse.SUPPRESS)
    ap.add_argument("--pair", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args)
    if not (Path(args.dpsniper) / "dpsniper").is_dir():
        ap.error(f"{args.dpsniper} holds no dpsniper package")
    names = args.only.split(",") if args.only else list(DPSNIPER)
    unknown = [n for n in names if n not in DPSNIPER]
    if unknown:
        ap.error(f"unknown mechanisms: {', '.join(unknown)}")
    raw = argv if argv is not None else sys.argv[1:]
    command = "python benchmarks/dpsniper_side_by_side.py " + " ".join(raw)
    rows = []
    for name in names:
        ours = run_dpcheck(name, args.budget, args.seed)
        print(f"{name}: dpcheck {ours['eps_lower']} ({ours['wall_seconds']:.0f} s)", flush=True)
        theirs = run_dpsniper(name, [ours["pair"][0], ours["pair"][1]], args)
        print(f"{name}: DP-Sniper {theirs['eps_lower_0.9']:.4f} ({theirs['wall_seconds']:.0f} s)", flush=True)
        del ours["pilot"]
        rows.append({"name": name, "dpcheck": ours, "dpsniper": theirs, "command": command.strip()})
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.merge and out.with_suffix(".json").exists():
        old = json.loads(out.with_suffix(".json").read_text())
        for row in old["rows"]:
            row.setdefault("command", old["command"])
        fresh = {r["name"]: r for r in rows}
        rows = [fresh.pop(r["name"], r) for r in old["rows"]] + list(fresh.values())
        command = "python benchmarks/dpsniper_side_by_side.py (rows merged; each row names its command in the JSON)"
    out.with_suffix(".json").write_text(json.dumps({"command": command.strip(), "rows": rows}, indent=2) + "\n")
    text = markdown(rows, command.strip(), args)
    out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
