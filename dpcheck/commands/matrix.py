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


#: real-library targets the default matrix shows next to the vendored implementations: one model
#: with its public bounds/norm and its documented data-dependent fallback (main env, `dpcheck[real]`)
DEFAULT_REAL = ("diffprivlib:GaussianNB", "diffprivlib:GaussianNB-nobounds",
                "diffprivlib:LogisticRegression", "diffprivlib:LogisticRegression-nobounds")
#: audit results the quick matrix reads from --audit-dir when no --audit-results is given
DEFAULT_AUDIT_FILES = ("audit_worstcase.json", "audit_twins.json")
#: the attacks whose result fills the audit column (synthesizers / released arrays)
AUDIT_ATTACKS = ("querybased", "release")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--impl", nargs="+", default=None, metavar="NAME",
                   help="'all' (the six vendored implementations and their twins), 'buggy', 'twins', built-in "
                        "names, real-library targets LIBRARY:NAME (e.g. smartnoise-synth:pategan), 'real' (every "
                        "real target), or package.module:Factory; default: 'all' plus "
                        + ", ".join(DEFAULT_REAL) + " when diffprivlib is installed")
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
    p.add_argument("--audit-dir", default="reports", metavar="DIR",
                   help="where stored audit results are read from when no audit runs (--quick without "
                        "--audit-results: " + ", ".join(DEFAULT_AUDIT_FILES) + "; real targets, also with "
                        "--audit-results: audit_real/LIBRARY__NAME.json); default: reports/")
    p.add_argument("--test-results", metavar="FILE",
                   help="reuse property-check results written by `dpcheck test --json FILE` instead of re-running them")
    p.add_argument("--compact", action="store_true",
                   help="the 80-column terminal table (abbreviated headers, key below); default: the full table "
                        "when the terminal is wide enough, else the compact one")
    p.add_argument("--no-write", action="store_true", help="print the table only, write no files")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when violations are found")


def resolve_names(requested: list[str] | None) -> list[str]:
    """Implementation and target names in order; real targets are recognised before the
    ``package.module:Factory`` form they share the colon with."""
    from dpcheck.targets import registry

    if requested is None:
        names = list(impls.NAMES)
        try:
            available = locate_all([n for n in DEFAULT_REAL if registry.is_target(n)])
        except UsageError as exc:
            print(f"dpcheck: note: the default real-library rows are left out: {exc}", file=sys.stderr)
            available = []
        return names + available
    out: list[str] = []
    for name in requested:
        if name == "real":
            out.extend(t.name for t in registry.all_targets() if t.library != "dpcheck")
        elif registry.is_target(name):
            out.append(name)
        else:
            try:
                registry.check_name(name)  # a misspelt LIBRARY:NAME, not a package.module:Factory
            except KeyError as exc:
                raise UsageError(exc.args[0]) from None
            for n in impls.resolve([name]):
                if n not in impls.NAMES and ":" not in n:
                    raise UsageError(f"unknown implementation {n!r}; built-in: {', '.join(impls.NAMES)}; real "
                                     f"targets: 'real' or LIBRARY:NAME;{registry.suggestion(n)}")
                out.append(n)
    return list(dict.fromkeys(out))


def locate_all(names: list[str]) -> list[str]:
    """Check up front that every real target's library is installed (exit 2 naming the command)."""
    from dpcheck.matrix.targets import locate
    from dpcheck.targets import registry
    from dpcheck.targets.base import TargetError

    for name in names:
        try:
            locate(registry.get(name))
        except TargetError as exc:
            raise UsageError(str(exc)) from exc
    return names


def run(args: argparse.Namespace) -> int:
    from dpcheck.matrix.collect import build_row
    from dpcheck.matrix.model import Matrix
    from dpcheck.matrix.render import terminal
    from dpcheck.matrix.targets import build_target_row
    from dpcheck.targets import registry

    names = resolve_names(args.impl)
    targets = {n for n in names if registry.is_target(n)}
    locate_all(sorted(targets))
    root = Path.cwd()
    reused: dict[str, list] = {}
    if args.test_results:
        from dpcheck.commands.test import read_json

        try:
            for result in read_json(Path(args.test_results)):
                reused.setdefault(result.impl, []).append(result)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"cannot read --test-results {args.test_results}: {exc}") from exc
    audit_dir = Path(args.audit_dir)
    run_audits = not args.quick and not args.audit_results
    if args.audit_results:
        audits = _read_audits(args.audit_results)
    elif args.quick:
        audits = _read_audits([str(audit_dir / f) for f in DEFAULT_AUDIT_FILES if (audit_dir / f).is_file()])
    else:
        audits = {}
    cervical_audits = read_cervical(audit_dir, root)
    rows = []
    for i, name in enumerate(names, 1):
        def progress(msg: str, i: int = i) -> None:
            print(f"[{i}/{len(names)}] {msg}", file=sys.stderr, flush=True)

        if run_audits:
            audit = _audit(name, args, progress)
        elif name in audits or name not in targets:
            audit = audits.get(name)
        else:
            audit = committed_target_audit(name, audit_dir)
        if name in targets:
            rows.append(build_target_row(name, root=root, audit=audit, progress=progress))
        else:
            rows.append(build_row(name, root=root, audit=audit, progress=progress, property_results=reused.get(name)))
            rows[-1].cervical = cervical_audits.get(name) if name in impls.NAMES else None
    command = "dpcheck matrix" + (" --quick" if args.quick else "") + "".join(
        f" --audit-results {p}" for p in args.audit_results) + (
        "" if args.impl is None else " --impl " + " ".join(args.impl))
    matrix = Matrix(rows, args.quick, command)
    terminal(matrix, True if args.compact else None)
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
    """impl -> its worst-case result (Querybased, or the release attack of a mechanism target) from
    ``dpcheck audit --json`` files; a replace-one result never hides the add/remove one."""
    import json

    out: dict[str, dict] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            if data.get("kind") != "audit":
                raise ValueError("not a `dpcheck audit --json` file")
            for result in data["results"]:
                if result["attack"] not in AUDIT_ATTACKS:
                    continue
                replace = "+replace" in str(result.get("dataset") or "")
                if replace and result["impl"] in out:
                    continue
                out[result["impl"]] = {"epsilon_emp": result["eps_cp"], **result, "source": str(path)}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"cannot read --audit-results {path}: {exc}") from exc
    return out


def read_cervical(audit_dir: Path, root: Path) -> dict[str, dict]:
    """impl -> its committed Cervical GroundHog audits (``audit_cervical.json`` of ``audit_dir``, else
    the per-audit files of ``audit_dir/audit_cervical/``), for the second audit column; never runs one."""
    from dpcheck.matrix import cervical

    try:
        return cervical.by_impl(cervical.load(audit_dir, root=root))
    except cervical.CervicalReportError as exc:
        raise UsageError(f"cannot read the Cervical audits: {exc}") from exc


def committed_audit_file(name: str, audit_dir: Path) -> Path:
    """Where ``benchmarks/audit_real.py`` keeps a real target's audit: ':' becomes '__'."""
    return audit_dir / "audit_real" / (name.replace(":", "__") + ".json")


def committed_target_audit(name: str, audit_dir: Path) -> dict | None:
    """The committed audit of a real target under the relation its library claims (see
    :mod:`dpcheck.matrix.claims`); None when there is none."""
    from dpcheck.matrix.claims import target_audit
    from dpcheck.targets import registry

    try:
        return target_audit(name, registry.get(name).neighbours, audit_dir)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


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
    return {"epsilon_emp": result.get("eps_cp"), **result, "source": "dpcheck audit (this run)"}
