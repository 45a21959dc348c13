"""``dpcheck diff accountant|partition``: run implementations side by side, plot and print."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpcheck import impls
from dpcheck.cli import EXIT_OK, UsageError

NAME = "diff"
HELP = "Differential views: accountants on the same votes (Figure 4), records seen per teacher (Figure 2)."
ORDER = 35


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("view", choices=("accountant", "partition"))
    p.add_argument("--impl", nargs="+", default=["all"], metavar="NAME")
    p.add_argument("--iterations", type=int, default=None,
                   help="iterations (default: 1000 for accountant, 20 for partition)")
    p.add_argument("--teachers", type=int, default=None,
                   help="teachers (default: 50 for accountant, so consensus votes exercise the data-dependent term; 5 for partition)")
    p.add_argument("--lamda", type=float, default=0.1,
                   help="λ for the accountant view (default 0.1: at λ=1e-3 the data-independent term "
                        "2λ²l(l+1) wins every min and all accountants agree)")
    p.add_argument("--out", default="reports", metavar="DIR", help="where the PNG goes (default: reports/)")


def run(args: argparse.Namespace) -> int:
    from dpcheck import diffviews

    names = impls.resolve(args.impl)
    for name in names:
        if name not in impls.NAMES and ":" not in name:
            from dpcheck.targets.registry import suggestion

            raise UsageError(f"unknown implementation {name!r}; built-in: {', '.join(impls.NAMES)};"
                             + suggestion(name, list(impls.NAMES)))
    if args.iterations is not None and args.iterations < 1:
        raise UsageError("--iterations must be ≥ 1")
    out = Path(args.out)
    if args.view == "accountant":
        view = diffviews.accountant_view(names, iterations=args.iterations or 1000, teachers=args.teachers or 50,
                                         lamda=args.lamda)
        path = diffviews.plot_accountant(view, out / "diff_accountant.png")
        ref = view.reference
        print(f"{'implementation':<24} {'drive':<11} {'ε̂ at end':>14} {'ratio to ref':>13} {'α(1) at end':>14}")
        print(f"{ref.impl:<24} {ref.source:<11} {ref.eps_hat[-1]:>14.6g} {1.0:>13.4g} {ref.moments[-1][0]:>14.6g}")
        for c in view.curves:
            same = c.source == "same votes"
            ratio = f"{c.eps_hat[-1] / ref.eps_hat[-1]:.4g}" if same else "n/a"
            print(f"{c.impl:<24} {c.source:<11} {c.eps_hat[-1]:>14.6g} {ratio:>13} {c.moments[-1][0]:>14.6g}")
        for name, why in view.skipped.items():
            print(f"{name:<24} skipped: {why}")
    else:
        rows = 200
        teachers = args.teachers or 5
        counts = diffviews.partition_view(names, iterations=args.iterations or 20, teachers=teachers, rows=rows)
        path = diffviews.plot_partition(counts, rows, out / "diff_partition.png")
        print(f"distinct records seen per teacher ({rows} records, {teachers} teachers)")
        for name, per_teacher in counts.items():
            shown = per_teacher if isinstance(per_teacher, str) else " ".join(f"t{t}={n}" for t, n in per_teacher.items())
            print(f"  {name:<22} {shown}")
    print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK
