"""``dpcheck matrix``: static + property (+ audit) evidence joined into the violation matrix."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dpcheck import impls
from dpcheck.cli import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError

NAME = "matrix"
HELP = "Build the violation matrix (implementations x categories) with the evidence behind every cell."
ORDER = 50

REPORT_STEM = "violation_matrix"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", nargs="+", default=["all"], metavar="NAME",
                   help="'all' (default), 'buggy', 'twins', built-in names, or package.module:Factory")
    p.add_argument("--quick", action="store_true", help="static + property evidence only, no audits")
    p.add_argument("--out", default="reports", metavar="DIR", help="report folder (default: reports/)")
    p.add_argument("--runs", type=int, default=None, metavar="R",
                   help="audit runs per world (default: the audit's --until-verdict schedule)")
    p.add_argument("--store", metavar="FILE",
                   help="SQLite store of audit runs (default: dpcheck audit's); runs already in it are reused")
    p.add_argument("--workers", type=int, default=None, metavar="N", help="audit worker processes (cores)")
    p.add_argument("--audit-results", metavar="FILE", action="append", default=[],
                   help="reuse results written by `dpcheck audit --json FILE` (repeatable) instead of "
                        "running audits; rows without one show no audit")
    p.add_argument("--test-results", metavar="FILE",
                   help="reuse property-check results written by `dpcheck test --json FILE` instead of re-running them")
    p.add_argument("--no-write", action="store_true", help="print the table only, write no files")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found")


def run(args: argparse.Namespace) -> int:
    from dpcheck.matrix.collect import build_row
    from dpcheck.matrix.model import Matrix
    from dpcheck.matrix.render import terminal

    names = impls.resolve(args.impl)
    for name in names:
        if name not in impls.NAMES and ":" not in name:
            raise UsageError(f"unknown implementation {name!r}; built-in: {', '.join(impls.NAMES)}")
    root = Path.cwd()
    reused: dict[str, list] = {}
    if args.test_results:
        from dpcheck.commands.test import read_json

        try:
            for result in read_json(Path(args.test_results)):
                reused.setdefault(result.impl, []).append(result)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"cannot read --test-results {args.test_results}: {exc}") from exc
    audits = _read_audits(args.audit_results)
    rows = []
    for i, name in enumerate(names, 1):
        def progress(msg: str, i: int = i) -> None:
            print(f"[{i}/{len(names)}] {msg}", file=sys.stderr, flush=True)

        audit = audits.get(name) if audits or args.quick else _audit(name, args, progress)
        rows.append(build_row(name, root=root, audit=audit, progress=progress, property_results=reused.get(name)))
    command = "dpcheck matrix" + (" --quick" if args.quick else "") + "".join(
        f" --audit-results {p}" for p in args.audit_results) + (
        "" if args.impl == ["all"] else " --impl " + " ".join(args.impl))
    matrix = Matrix(rows, args.quick, command)
    terminal(matrix)
    if not args.no_write:
        for path in write_reports(matrix, Path(args.out)):
            print(f"wrote {path}", file=sys.stderr)
    if any(row.errors for row in rows):
        for row in rows:
            for err in row.errors:
                print(f"dpcheck: error: {row.impl}: {err}", file=sys.stderr)
        return EXIT_ERROR
    marked = any(row.marked() for row in rows)
    return EXIT_FINDINGS if marked and not args.exit_zero else EXIT_OK


def write_reports(matrix, out: Path) -> list[Path]:  # noqa: ANN001 - a Matrix
    from dpcheck.matrix.render import html_page, markdown, to_json
    from dpcheck.output import sarif
    from dpcheck.rules import all_rules
    from dpcheck.scan.engine import ScanResult, ScanStats

    out.mkdir(parents=True, exist_ok=True)
    images = sorted(out.glob("*.png"))
    static = ScanResult(sorted({f for row in matrix.rows for f in row.findings}), ScanStats(), list(all_rules()))
    written = []
    for suffix, text in ((".md", markdown(matrix)), (".json", to_json(matrix)), (".html", html_page(matrix, images)),
                         (".sarif", _portable_sarif(sarif.payload(static)))):
        path = out / f"{REPORT_STEM}{suffix}"
        tmp = path.with_suffix(suffix + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written


def _portable_sarif(log: dict) -> str:
    """Committed reports must not depend on where the repository was checked out."""
    import json

    for run in log["runs"]:
        run["originalUriBaseIds"] = {"%SRCROOT%": {"description": {"text": "the repository root"}}}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _read_audits(paths: list[str]) -> dict[str, dict]:
    """impl -> its worst-case Querybased result from ``dpcheck audit --json`` files."""
    import json

    out: dict[str, dict] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("kind") != "audit":
                raise ValueError("not a `dpcheck audit --json` file")
            for result in data["results"]:
                if result["attack"] == "querybased":
                    out[result["impl"]] = {"epsilon_emp": result["eps_cp"], **result}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"cannot read --audit-results {path}: {exc}") from exc
    return out


def _audit(name: str, args: argparse.Namespace, progress) -> dict | None:  # noqa: ANN001
    """The worst-case Querybased audit of ``dpcheck audit`` for one implementation."""
    import json
    import tempfile

    from dpcheck.cli import main as cli_main

    progress(f"{name}: audit (worst case, Querybased)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "audit.json"
        argv = ["audit", "--impl", name, "--json", str(out), "--no-progress"]
        argv += ["--runs", str(args.runs)] if args.runs else ["--until-verdict"]
        argv += ["--store", args.store] if args.store else []
        argv += ["--workers", str(args.workers)] if args.workers else []
        code = cli_main(argv)
        if code not in (EXIT_OK, EXIT_FINDINGS) or not out.exists():
            return {"verdict": "error", "exit_code": code}
        result = json.loads(out.read_text())["results"][0]
    return {"epsilon_emp": result.get("eps_cp"), **result}
