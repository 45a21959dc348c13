"""``dpcheck test``: run the dynamic property checks on implementations."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dpcheck import impls
from dpcheck.categories import CATEGORIES
from dpcheck.checks import CHECK_MODULES, CheckResult
from dpcheck.checks.runner import run_checks
from dpcheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError

NAME = "test"
HELP = "Run property and differential tests (probes + reference oracles) on implementations."
ORDER = 30

SCHEMA_VERSION = 1


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", action="append", metavar="NAME",
                   help="built-in name, 'all', 'buggy', 'twins', or package.module:Factory (repeatable; default all)")
    p.add_argument("--category", action="append", choices=sorted(CHECK_MODULES), metavar="CATEGORY",
                   help=f"restrict to categories (repeatable): {', '.join(sorted(CHECK_MODULES))}")
    p.add_argument("--json", dest="json_out", metavar="FILE", help="write results as JSON (the matrix reads it)")
    p.add_argument("--quiet", action="store_true", help="print only the summary table")
    g = p.add_argument_group("installed functions (no probes; docs/testing.md)")
    g.add_argument("--accountant", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="an installed moments accountant, driven by Hypothesis against PATE-GAN Theorem 5 (repeatable)")
    g.add_argument("--noise", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="an installed noise-scale/calibration function, against the minimal Laplace/Gaussian scale "
                        "(repeatable)")
    g.add_argument("--map", dest="mapping", metavar="NAME|FILE",
                   help="signature mapping: pategan-moments, laplace-scale, gaussian-scale or a JSON file "
                        "(default: the known mapping of the function, else pategan-moments for --accountant)")
    g.add_argument("--env", metavar="NAME",
                   help="where the function runs: main (this process) or a target env such as smartnoise "
                        "(default: inferred from the module)")
    g.add_argument("--examples", type=int, default=200, metavar="N", help="Hypothesis examples per search (200)")
    g.add_argument("--lambda-max", type=float, metavar="X",
                   help="accountants: largest λ drawn (default 0.3, below ln(2)/2; 10 also tests the region where "
                        "Theorem 5's data-dependent term is undefined)")
    g.add_argument("--epsilon-max", type=float, metavar="X",
                   help="noise: largest ε drawn (default: the mapping's, 10 for most; 1 for diffprivlib's classic Gaussian)")


def write_json(results: list[CheckResult], path: Path) -> None:
    from dpcheck import __version__

    payload = {"schema": SCHEMA_VERSION, "dpcheck": __version__, "results": [r.to_dict() for r in results]}
    from dpcheck.audit.core.files import write_text_atomic

    write_text_atomic(path, json.dumps(payload, indent=2, default=str))


def read_json(path: Path) -> list[CheckResult]:
    payload = json.loads(path.read_text())
    if payload.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"{path}: unsupported test-results schema {payload.get('schema')!r}")
    return [CheckResult.from_dict(r) for r in payload["results"]]


def run_installed(args: argparse.Namespace, *, progress: bool = True) -> list[CheckResult]:
    """``--accountant``/``--noise``: one result per function; one that cannot be reached is an error."""
    from dpcheck.installed import mapping
    from dpcheck.installed.caller import CallerError, make_caller
    from dpcheck.installed.properties import CATEGORY, check_installed

    if args.examples < 1:
        raise UsageError("--examples must be at least 1")
    results: list[CheckResult] = []
    for kind, functions in (("accountant", args.accountant), ("noise", args.noise)):
        for function in functions:
            start = time.perf_counter()
            try:
                smap = mapping.load(args.mapping, function, kind)
                if (smap.kind == "accountant") != (kind == "accountant"):
                    raise mapping.MappingError(f"--{kind} {function}: mapping {smap.name or smap.property} "
                                               f"is a {smap.kind} mapping")
            except mapping.MappingError as exc:
                category = "moments_accountant" if kind == "accountant" else "laplace_noise"
                results.append(CheckResult(function, category, f"installed.{kind}", "error", str(exc)))
                continue
            if args.lambda_max is not None:
                smap = smap.with_(lambda_range=(smap.lambda_range[0], args.lambda_max))
            if args.epsilon_max is not None:
                smap = smap.with_(epsilon=(min(smap.epsilon[0], args.epsilon_max), args.epsilon_max))
            env = args.env or mapping.env_for(function)
            if progress:
                print(f"  {function:<40} {smap.property} in {env}", end="", file=sys.stderr, flush=True)
            try:
                result = check_installed(function, make_caller(function, smap, env), args.examples)
            except (CallerError, mapping.MappingError) as exc:
                result = CheckResult(function, CATEGORY[smap.property], f"installed.{smap.property}", "error",
                                     str(exc), {"env": env})
            except Exception as exc:  # noqa: BLE001 - a worker crash must not look like a pass
                result = CheckResult(function, CATEGORY[smap.property], f"installed.{smap.property}", "error",
                                     f"{type(exc).__name__}: {str(exc).splitlines()[0]}", {"env": env})
            result.seconds = round(time.perf_counter() - start, 3)
            if progress:
                print(f" {result.status} ({result.seconds:.1f}s)", file=sys.stderr)
            results.append(result)
    return results


def run(args: argparse.Namespace) -> int:
    installed = bool(args.accountant or args.noise)
    results = run_installed(args, progress=not args.quiet) if installed else []
    if installed and not args.impl:
        return _finish(results, args)
    names = impls.resolve(args.impl)
    for name in names:
        from dpcheck.targets.registry import check_name, suggestion

        if name not in impls.NAMES and ":" not in name:
            raise UsageError(f"unknown implementation {name!r}; built-in: {', '.join(impls.NAMES)};"
                             + suggestion(name, list(impls.NAMES)))
        try:
            check_name(name)  # a misspelt LIBRARY:NAME, not a package.module:Factory
        except KeyError as exc:
            raise UsageError(exc.args[0]) from None
    categories = args.category or [c for c in CATEGORIES if c in CHECK_MODULES]
    results += run_checks(names, categories, progress=not args.quiet)
    return _finish(results, args)


def _finish(results: list[CheckResult], args: argparse.Namespace) -> int:
    _print_results(results, verbose=not args.quiet)
    if args.json_out:
        from dpcheck.audit.core.files import os_error_text

        try:
            write_json(results, Path(args.json_out))
        except OSError as exc:
            raise UsageError(f"cannot write --json {args.json_out}: {os_error_text(exc)}") from None
    if any(r.status == "error" for r in results):
        return EXIT_ERROR
    return EXIT_FINDINGS if any(r.failed for r in results) else EXIT_OK


def _print_results(results: list[CheckResult], *, verbose: bool) -> None:
    from rich.table import Table

    from dpcheck.console import console as make_console

    console = make_console()
    table = Table(title="dpcheck test — dynamic checks")
    for col in ("implementation", "category", "verdict", "evidence"):
        table.add_column(col, overflow="fold")
    style = {"fail": "bold red", "pass": "green", "not_applicable": "dim", "error": "bold yellow"}
    for r in results:
        verdict = {"fail": CATEGORIES[r.category] if r.category in CATEGORIES else "fail"}.get(r.status, r.status)
        table.add_row(r.impl, r.category, f"[{style[r.status]}]{verdict}[/]", r.summary)
    console.print(table)
    for r in results:
        if r.check.startswith("installed.") and r.status in ("pass", "fail"):
            ev = r.evidence
            line = (f"[bold]{r.impl}[/] ({ev.get('map')}, env {ev.get('env')}): {r.status}, "
                    f"{ev.get('examples')} examples, max relative error vs the oracle "
                    f"{ev.get('max_relative_error', float('nan')):.3g}")
            if ev.get("looseness_max") is not None:
                line += f", scale / minimal scale {ev['looseness_min']:.4g}–{ev['looseness_max']:.4g}"
            if "counterexample" in ev:
                line += f"; shrunk counterexample {ev['counterexample']}"
            console.print(line)
    if verbose:
        for r in results:
            if r.failed and "counterexample" in r.evidence and not r.check.startswith("installed."):
                console.print(f"[bold]{r.impl} / {r.category}[/] counterexample: {r.evidence['counterexample']}")
