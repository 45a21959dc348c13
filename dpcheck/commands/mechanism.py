"""``dpcheck mechanism``: black-box ε audit of one DP function on neighbouring inputs."""
from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

NAME = "mechanism"
HELP = ("Epsilon audit of a DP function (MODULE:FUNCTION taking x, epsilon, rng[, n]) or a benchmark mechanism: "
        "input-pair search, classifier threshold attack, Clopper-Pearson lower bound.")
ORDER = 45


def _vector(text: str) -> list[float]:
    try:
        return [float(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 100:
        raise argparse.ArgumentTypeError(f"need at least 100 outputs, got {value}")
    return value


def add_arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--mechanism", metavar="MODULE:FUNCTION", help="your function: f(x, epsilon, rng) or, "
                      "vectorised, f(x, epsilon, rng, n) returning n outputs (docs/byo.md)")
    what.add_argument("--benchmark", metavar="NAME", help="a benchmark mechanism (dpcheck mechanism --list)")
    what.add_argument("--list", action="store_true", help="list the benchmark mechanisms and exit")
    p.add_argument("--epsilon", type=float, help="the ε the function claims (needed with --mechanism)")
    p.add_argument("--delta", type=float, default=0.0)
    p.add_argument("--neighbourhood", choices=("l1", "linf"), help="l1: one entry moves by ≤ 1; linf: every "
                   "entry moves by ≤ 1 (needed with --mechanism)")
    p.add_argument("--length", type=int, help="input vector length for the pair search (needed with --mechanism "
                   "unless --pair is given)")
    p.add_argument("--pair", nargs=2, type=_vector, metavar=("A", "B"), help="audit this pair, e.g. 0,0,0 1,1,1")
    p.add_argument("--integer-input", action="store_true", help="the function takes whole numbers: the pair "
                   "search keeps its inputs whole")
    p.add_argument("--sentinel", type=float, action="append", default=[], help="an output value meaning ⊥ (repeatable)")
    p.add_argument("--float-attack", action="store_true", help="add floating-point bit features (Mironov's attack)")
    p.add_argument("--classifier", action="append", choices=("logistic", "logistic-signs", "logistic-diff-signs", "boosting", "boosting-bits", "table"),
                   help="attack classifier (repeatable; default logistic and boosting, plus boosting-bits with "
                        "--float-attack; logistic-signs adds each continuous output's sign against its median, "
                        "logistic-diff-signs also the signs of consecutive differences (running sums), "
                        "table keys on exact output values); the best on validation outputs is used")
    p.add_argument("--samples", type=_positive_int, default=10_000_000, help="test outputs per input (10,000,000)")
    p.add_argument("--train", type=_positive_int, default=100_000, help="training outputs per input (100,000)")
    p.add_argument("--validation", type=_positive_int, default=400_000, help="validation outputs per input (400,000)")
    p.add_argument("--pilot", type=_positive_int, default=150_000, help="pilot outputs per input and pair (150,000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="FILE", help="write the result as JSON")


def run(args: argparse.Namespace) -> int:
    from dpcheck.cli import EXIT_FINDINGS, EXIT_OK, UsageError
    from dpcheck.mechaudit import catalog
    from dpcheck.mechaudit.runner import Budget, audit
    from dpcheck.mechaudit.target import MechanismError, from_benchmark, from_function

    if args.list:
        for m in catalog.CATALOG.values():
            true = "unknown" if m.true_eps is None else ("∞" if math.isinf(m.true_eps) else f"{m.true_eps:.3g}")
            print(f"{m.name:<22} claims ε={m.claimed:.3g}  true ε={true:<8} {m.neighbourhood:<5} "
                  f"{'correct' if m.correct else 'incorrect'}  {m.note}")
        return EXIT_OK
    try:
        if args.benchmark:
            try:
                target = from_benchmark(catalog.get(args.benchmark).name)
            except KeyError as exc:
                raise UsageError(str(exc.args[0])) from None
            hood, length = target.bench.neighbourhood, target.bench.length  # type: ignore[union-attr]
            args.integer_input = args.integer_input or target.bench.integer_input  # type: ignore[union-attr]
        else:
            if args.epsilon is None or args.neighbourhood is None:
                raise UsageError("--mechanism needs --epsilon (the claim) and --neighbourhood")
            if not (0 < args.epsilon < 100 and math.isfinite(args.epsilon)):
                raise UsageError(f"--epsilon must lie in (0, 100), got {args.epsilon}")
            if args.pair is None and not args.length:
                raise UsageError("--mechanism needs --length (for the pair search) or --pair A B")
            target = from_function(args.mechanism, args.epsilon, tuple(args.sentinel))
            hood, length = args.neighbourhood, args.length or len(args.pair[0])
        if not (0 <= args.delta < 1):
            raise UsageError(f"--delta must lie in [0, 1), got {args.delta}")
        if args.sentinel:
            target.sentinels = tuple(sorted(set(target.sentinels) | set(args.sentinel)))
        pair = None if args.pair is None else (np.array(args.pair[0]), np.array(args.pair[1]))
        classifiers = tuple(args.classifier or (("logistic", "boosting", "boosting-bits") if args.float_attack
                                                else ("logistic", "boosting")))
        result = audit(target, hood=hood, length=length, pair=pair, delta=args.delta, seed=args.seed,
                       integer=args.integer_input,
                       budget=Budget(args.pilot, args.train, args.validation, args.samples), classifiers=classifiers,
                       progress=lambda m: print(m, file=sys.stderr, flush=True))
    except (MechanismError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    print(f"{result.target}: pair {result.pair[0]} vs {result.pair[1]}, attack {result.classifier}, "
          f"{result.test_per_input:,} test outputs per input (black-box on the release)")
    print(f"  ε claimed {result.claimed:.4g}; ε_emp ≥ {result.eps_lower['0.9']:.4f} (confidence 0.9), "
          f"≥ {result.eps_lower['0.95']:.4f} (0.95); point estimate {result.eps_point:.4f}; "
          f"verdict {result.verdict}; {result.seconds:.0f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result.to_dict(), fh, indent=2)
    return EXIT_FINDINGS if result.verdict == "violation" else EXIT_OK
