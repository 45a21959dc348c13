"""``dpcheck scan PATH…``: run the lint rules over source trees."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from dpcheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from dpcheck.scan.config import (
    ConfigError,
    ScanConfig,
    load_config,
    parse_size,
    positive_int,
    positive_seconds,
    split_codes,
)

NAME = "scan"
HELP = "Statically scan Python files for DP bugs (never imports or runs them)."
ORDER = 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: . unless --package is given)")
    p.add_argument("--package", action="append", metavar="NAME",
                   help="also scan an installed package: distribution or top-level import name (repeatable; never imported)")
    p.add_argument("--format", choices=("text", "json", "sarif", "github"), default="text", help="output format")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--select", action="append", metavar="IDS",
                   help="rule ids or prefixes to run, comma-separated (e.g. DP1,DP201); replaces the config's")
    p.add_argument("--ignore", action="append", metavar="IDS", help="rule ids or prefixes to skip; replaces the config's")
    p.add_argument("--category", action="append", metavar="CATS",
                   help="report only these categories, comma-separated (diagnostics are always reported)")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="path globs to skip (repeatable); replaces the config's")
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.dpcheck] from this file instead of the nearest pyproject.toml")
    p.add_argument("-j", "--jobs", type=int, metavar="N", help="parallel processes (default: number of cores)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    p.add_argument("--cache-dir", metavar="DIR", help="cache folder (default .dpcheck/cache at the project root; env DPCHECK_CACHE_DIR)")
    p.add_argument("--max-file-size", metavar="SIZE", help="skip larger files with a DP003 diagnostic (default 2MB)")
    p.add_argument("--max-depth", metavar="N",
                   help="files nested deeper than N levels are reported as not analysed, DP007 (default 400)")
    p.add_argument("--file-timeout", metavar="SECONDS",
                   help="stop analysing a file after this many seconds of CPU time (or 10x that of wall clock) "
                        "and report it as not analysed, DP007 (default 120)")
    p.add_argument("--max-memory", metavar="SIZE",
                   help="address-space limit of each analysing process, e.g. 4G (default 4G)")
    p.add_argument("--baseline", metavar="FILE", help="hide findings recorded in this baseline")
    p.add_argument("--write-baseline", metavar="FILE", help="record all current findings in FILE and exit 0")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings (internal errors still exit 2)")
    p.add_argument("--strict", action="store_true", default=None,
                   help="acknowledged findings (notes) gate too: they count for --category and the exit code")


def resolve_config(args: argparse.Namespace) -> ScanConfig:
    try:
        start = Path(args.paths[0]) if args.paths else Path.cwd()
        config = load_config(start, Path(args.config) if args.config else None)
        categories = split_codes(args.category)
        overrides = {
            "select": split_codes(args.select),
            "ignore": split_codes(args.ignore),
            "exclude": tuple(args.exclude) if args.exclude else None,
            "categories": tuple(c.lower() for c in categories) if categories is not None else None,
            "max_file_size": parse_size(args.max_file_size) if args.max_file_size else None,
            "cache_dir": Path(args.cache_dir).resolve() if args.cache_dir else None,
            "jobs": args.jobs,
            "strict": True if args.strict else None,
            "max_depth": positive_int(args.max_depth, "--max-depth") if args.max_depth is not None else None,
            "file_timeout": positive_seconds(args.file_timeout, "--file-timeout") if args.file_timeout else None,
            "max_memory": parse_size(args.max_memory) if args.max_memory else None,
        }
        if args.jobs is not None and args.jobs < 1:
            raise ConfigError("--jobs must be at least 1")
        return config.with_overrides(**overrides)
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    from dpcheck.output import FORMATS
    from dpcheck.scan.baseline import filter_baseline, load_baseline, write_baseline
    from dpcheck.scan.catalog import RuleCatalog
    from dpcheck.scan.engine import Engine
    from dpcheck.scan.selection import check_categories

    if not args.paths and not args.package:
        args.paths = ["."]
    args.paths = args.paths or []
    config = resolve_config(args)
    try:
        # the rules are imported only if some file is not answered by the cache
        rules = RuleCatalog(config.select, config.ignore, None if args.no_cache else config.default_cache_dir())
        if config.categories is not None:
            check_categories(config.categories)
        baseline = load_baseline(Path(args.baseline)) if args.baseline else None
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    from dpcheck.scan.discovery import present

    missing = [p for p in args.paths if not present(p)]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")

    extra = []
    if args.package:
        from dpcheck.scan.packages import PackageNotFound, package_candidates
    for name in args.package or ():
        try:
            extra.extend(package_candidates(name))
        except PackageNotFound as exc:
            raise UsageError(str(exc)) from exc

    if config.exclude:  # package files: the globs match paths relative to the installation folder
        from dpcheck.scan.globs import matches_any

        extra = [c for c in extra if not matches_any(c.display, config.exclude)]
    result = Engine(config, rules, use_cache=not args.no_cache, isolate=True).scan(args.paths, extra)

    if args.write_baseline:
        n = write_baseline(Path(args.write_baseline), result.findings)
        print(f"dpcheck: wrote {n} finding(s) to baseline {args.write_baseline}", file=sys.stderr)
        return EXIT_ERROR if result.crashed else EXIT_OK
    if baseline is not None:
        result.findings, result.hidden_by_baseline = filter_baseline(result.findings, baseline, Path(args.baseline))

    report = FORMATS[args.format](result)
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report, encoding="utf-8")
    else:
        sys.stdout.write(report)
    if result.crashed:
        return EXIT_ERROR
    if result.gating() and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_OK
