"""``dpcheck test``: run the dynamic property checks on implementations."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dpcheck import impls
from dpcheck.categories import CATEGORIES
from dpcheck.checks import CHECK_MODULES, CheckResult, get_check
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


def run_checks(names: list[str], categories: list[str], *, progress: bool = True) -> list[CheckResult]:
    results: list[CheckResult] = []
    for name in names:
        for category in categories:
            if progress:
                print(f"  {name:<20} {category:<20}", end="", file=sys.stderr, flush=True)
            start = time.perf_counter()
            try:
                result = get_check(category)(name)
            except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
                result = CheckResult(name, category, CHECK_MODULES[category], "error", f"{type(exc).__name__}: {exc}")
            result.seconds = round(time.perf_counter() - start, 3)
            if progress:
                print(f" {result.status} ({result.seconds:.1f}s)", file=sys.stderr)
            results.append(result)
    return results


def write_json(results: list[CheckResult], path: Path) -> None:
    from dpcheck import __version__

    payload = {"schema": SCHEMA_VERSION, "dpcheck": __version__, "results": [r.to_dict() for r in results]}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str))
    tmp.replace(path)


def read_json(path: Path) -> list[CheckResult]:
    payload = json.loads(path.read_text())
    if payload.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"{path}: unsupported test-results schema {payload.get('schema')!r}")
    return [CheckResult.from_dict(r) for r in payload["results"]]


def run(args: argparse.Namespace) -> int:
    names = impls.resolve(args.impl)
    for name in names:
        if name not in impls.NAMES and ":" not in name:
            raise UsageError(f"unknown implementation {name!r}; built-in: {', '.join(impls.NAMES)}")
    categories = args.category or [c for c in CATEGORIES if c in CHECK_MODULES]
    results = run_checks(names, categories, progress=not args.quiet)
    _print_results(results, verbose=not args.quiet)
    if args.json_out:
        write_json(results, Path(args.json_out))
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
    if verbose:
        for r in results:
            if r.failed and "counterexample" in r.evidence:
                console.print(f"[bold]{r.impl} / {r.category}[/] counterexample: {r.evidence['counterexample']}")
