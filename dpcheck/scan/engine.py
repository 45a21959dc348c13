"""The scan engine: discover files, reuse cached results, analyse the rest in parallel.

Per file: stat → (cached by stat?) → read → (cached by content?) → decode (PEP 263) →
text prefilter (no selected rule's ``applies_to`` holds → syntax check only, never parsed by
libcst) → CPython ``ast`` parse and second prefilter (``Rule.admits``: can the rule report
here at all?) → one libcst parse if a rule is left → all remaining rules in one traversal →
inline suppressions. Scanned code is only ever read as text: never imported, never executed.
"""
from __future__ import annotations

import ast
import contextlib
import gc
import io
import os
import sys
import time
import tokenize
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from dpcheck import __version__
from dpcheck.categories import ACKNOWLEDGED
from dpcheck.finding import Finding
from dpcheck.scan import diagnostics as diag
from dpcheck.scan import outside_reads, py2, tolerant
from dpcheck.scan.cache import ResultCache, content_hash, flow_key, from_rows, make_salt, to_rows
from dpcheck.scan.catalog import RuleCatalog
from dpcheck.scan.config import DEFAULT_EXCLUDES, ScanConfig
from dpcheck.scan.discovery import Candidate, discover, is_regular, relative_to_root
from dpcheck.scan.globs import matches
from dpcheck.scan.selection import is_enabled

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    import libcst as cst

    from dpcheck.rule import Rule

# libcst, the rules and the analysis core are imported inside the functions that analyse a file:
# a warm re-scan answered from the cache never imports them (start-up would dominate it).
_PACKAGE = Path(__file__).resolve().parents[1]
#: the cross-module phase reports under this rule's id (``dpcheck.analysis.project.RULE_ID``)
FLOW_RULE_ID = "DP202"

#: collector thresholds while scanning: a parsed tree is a million short-lived acyclic objects,
#: and CPython's default (a collection every 700 allocations) re-traverses them again and again
_SCAN_GC_THRESHOLD = (100_000, 50, 100)


@contextlib.contextmanager
def _scan_gc() -> Iterator[None]:
    """Freeze what exists (modules, rules: never garbage) and collect rarely while scanning."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*_SCAN_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*old)
        gc.unfreeze()


@dataclass
class ScanStats:
    files: int = 0
    lines: int = 0
    cache_hits: int = 0
    analysed: int = 0
    parsed: int = 0
    seconds: float = 0.0


@dataclass
class ScanResult:
    findings: list[Finding]
    stats: ScanStats
    rules: list[type[Rule]]
    #: a rule crashed somewhere (DP005): the exit code must be 2
    crashed: bool = False
    hidden_by_baseline: int = 0
    notes: list[str] = field(default_factory=list)
    #: acknowledged findings gate (exit code 1) like any other
    strict: bool = False

    def gating(self) -> list[Finding]:
        """The findings that make the exit code 1: all but ``acknowledged`` ones unless strict."""
        if self.strict:
            return list(self.findings)
        return [f for f in self.findings if f.category != ACKNOWLEDGED]

    def acknowledged(self) -> int:
        return sum(1 for f in self.findings if f.category == ACKNOWLEDGED)


@dataclass
class Analysis:
    findings: list[Finding]
    parsed: bool
    crashed: bool
    #: the file's project-flow summary (``dpcheck.analysis.project``), when one was asked for
    summary: dict | None = None
    #: False for a result that may differ next time (a file over the time limit)
    cacheable: bool = True


def _parse(source: str) -> cst.Module:
    import libcst as cst

    return cst.parse_module(source)


def decode(data: bytes) -> str:
    """Decode like the interpreter: BOM / PEP 263 cookie, else UTF-8. Raises ``ValueError``."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise ValueError(str(exc)) from exc
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"line {line}: byte {data[exc.start]:#04x} is not valid {encoding}") from exc
    except LookupError as exc:
        raise ValueError(f"unknown encoding {encoding!r}") from exc


def analyse(data: bytes, path: str, rules: Sequence[type[Rule]]) -> Analysis:
    """Findings of ``rules`` on one file's bytes (suppressions applied); never raises for bad input."""
    try:
        source = decode(data)
    except ValueError as exc:
        return Analysis([diag.diagnostic(diag.UNDECODABLE, path, f"cannot decode: {exc}")], False, False)
    return analyse_source(source, path, [rules[i] for i in applicable(rules, source, path)])


def applicable(rules: Sequence[type[Rule]], source: str, path: str, *, gate: bool | None = None) -> list[int]:
    """Indices of the rules whose prefilter lets ``source`` through. A type stub (``.pyi``) holds
    signatures only — no statement ever runs — so no rule applies; it is still syntax-checked.
    With the ``ast`` gate on (``gate``, default: the environment), a rule marked
    ``TEXT_AFTER_GATE`` is checked on its triggers only; ``analyse_source`` completes the check."""
    if path.endswith(".pyi"):
        return []
    from dpcheck.analysis.astfacts import gate_enabled

    defer = gate_enabled() if gate is None else gate
    return [i for i, rule in enumerate(rules)
            if (rule.triggered(source) if defer and rule.TEXT_AFTER_GATE else rule.applies_to(source))]


def analyse_source(
    source: str,
    path: str,
    selected: Sequence[type[Rule]],
    flow: bool = False,
    *,
    gate: bool | None = None,
    max_depth: int = tolerant.DEFAULT_MAX_DEPTH,
) -> Analysis:
    """Parse once and run ``selected`` (rules whose triggers occur in ``source``).

    CPython's ``ast`` comes first: it decides the syntax (a file it parses is never DP000), the
    limits (``max_depth``; deeper files are DP007, never handed to libcst) and, with the second
    prefilter on (``gate``, default: on unless ``DPCHECK_AST_GATE=0``), which selected rules may
    still report (``Rule.admits``); a file left with none is never parsed with libcst. Python 2
    and tab-mixed sources are converted (``dpcheck.scan.py2``) and their findings mapped back; a
    statement libcst cannot parse is blanked out and reported (DP007), the rest analysed. What
    CPython refuses but libcst's wider grammar accepts is analysed as before. ``flow``: also
    compute the project-flow summary.
    """
    from dpcheck.analysis.astfacts import gate_enabled

    tree = tolerant.python_tree(source)
    converted: py2.Converted | None = None
    if isinstance(tree, tolerant.NotParsed):
        problem = tree
        if problem.limit:
            return _not_analysed(path, f"CPython cannot parse it: {problem.message}", problem.line, flow)
        converted = py2.convert(source)
        tree = tolerant.python_tree(converted.text) if converted is not None else problem
        if isinstance(tree, tolerant.NotParsed):
            if converted is not None:  # past the Python 2 spellings: the error that is left
                problem = replace(tree, col=converted.original_column(tree.line, tree.col))
            return _cst_only(source, path, selected, flow, problem)
    text = converted.text if converted is not None else source
    if selected and (gate_enabled() if gate is None else gate):
        selected = _gated(selected, tree, text)
        # the rest of the text prefilters deferred by ``applicable``
        selected = [r for r in selected if not r.TEXT_AFTER_GATE or r.applies_to(text)]
    if not selected:
        return Analysis([], False, False, _flow_summary(flow, text, path, tree))
    deep = tolerant.too_complex(tree, max_depth)  # only libcst needs the limit
    if deep is not None:
        return _not_analysed(path, f"{deep[1]} (--max-depth to raise the limit)", deep[0], flow)
    try:
        module, parsed_text, blanked = tolerant.cst_module(text, tree, lambda t: _parse(t))
    except Exception as exc:  # noqa: BLE001 - valid Python libcst refuses is not a syntax error
        line = tolerant.cst_error_line(exc) if hasattr(exc, "message") else 1
        reason = tolerant.short(getattr(exc, "message", f"{type(exc).__name__}: {exc}"))
        return _not_analysed(path, f"libcst cannot parse this valid Python ({reason})", line, flow, text, tree)
    findings, crashed = _run_rules(module, parsed_text, path, selected, tree if parsed_text == text else None)
    findings.extend(
        diag.diagnostic(diag.NOT_ANALYSED, path, f"lines {b.first}-{b.last} not analysed: libcst cannot parse this "
                        f"valid Python ({b.reason}); the rest of the file was", b.first)
        for b in blanked
    )
    if converted is not None:
        findings = _map_back(findings, converted, source)
    return Analysis(_unsuppressed(findings, source), True, crashed, _flow_summary(flow, text, path, tree))


def _run_rules(
    module: cst.Module, source: str, path: str, selected: Sequence[type[Rule]], tree: ast.Module | None = None,
) -> tuple[list[Finding], bool]:
    """Every selected rule on ``module`` in one traversal; a crashing rule becomes DP005 and the
    others run again without it."""
    from dpcheck.rule import RuleCrash, run_rules

    findings: list[Finding] = []
    crashed = False
    remaining = list(selected)
    while remaining:
        try:
            findings.extend(run_rules(source, remaining, path, module=module, prefiltered=True, tree=tree))
            break
        except RuleCrash as exc:
            crashed = True
            detail = f"{type(exc.original).__name__}: {exc.original}"
            findings.append(diag.diagnostic(diag.RULE_CRASH, path, f"rule {exc.rule_id} crashed on this file: {detail}"))
            survivors = [r for r in remaining if r.id != exc.rule_id]
            if len(survivors) == len(remaining):
                break
            remaining = survivors
    return findings, crashed


def _cst_only(
    source: str, path: str, selected: Sequence[type[Rule]], flow: bool, problem: tolerant.NotParsed
) -> Analysis:
    """CPython refuses ``source`` and no conversion helps: libcst, whose grammar spans more
    Python versions, may still read it; else DP000 at CPython's line."""
    import libcst as cst

    syntax_error = diag.diagnostic(
        diag.SYNTAX_ERROR, path, f"syntax error: {problem.message}", problem.line, problem.col
    )
    depth, line = tolerant.bracket_depth(source)
    if depth > tolerant.MAX_BRACKETS:
        return Analysis([syntax_error], False, False, _flow_summary(flow, source, path, None))
    try:
        module = _parse(source)
    except (cst.ParserSyntaxError, RecursionError, MemoryError, ValueError):
        return Analysis([syntax_error], True, False, _flow_summary(flow, source, path, None))
    if not selected:
        return Analysis([], True, False, _flow_summary(flow, source, path, None))
    findings, crashed = _run_rules(module, source, path, selected)
    return Analysis(_unsuppressed(findings, source), True, crashed, _flow_summary(flow, source, path, None))


def _not_analysed(
    path: str, reason: str, line: int, flow: bool, source: str = "", tree: ast.Module | None = None
) -> Analysis:
    finding = diag.diagnostic(diag.NOT_ANALYSED, path, f"not analysed: {reason}", line)
    return Analysis([finding], False, False, _flow_summary(flow, source, path, tree) if tree is not None else None)


def _map_back(findings: list[Finding], converted: py2.Converted, source: str) -> list[Finding]:
    """Findings on the converted text, at their columns (and snippets) in the original."""
    lines = source.split("\n")
    out = []
    for f in findings:
        snippet = lines[f.line - 1].strip() if f.snippet and 0 < f.line <= len(lines) else f.snippet
        end_col = converted.original_column(f.end_line, f.end_col) if f.end_line and f.end_col else f.end_col
        out.append(replace(f, col=converted.original_column(f.line, f.col), end_col=end_col, snippet=snippet))
    return out


def _gated(selected: Sequence[type[Rule]], tree: ast.Module, source: str) -> list[type[Rule]]:
    """The rules that may still report on the file, by their ``admits`` on its ``ast`` facts.
    A gate that fails keeps its rule (the rule itself then decides)."""
    from dpcheck.analysis.astfacts import AstFacts

    facts = AstFacts(tree, source)
    kept = []
    for rule in selected:
        try:
            may = rule.admits(facts)
        except Exception:  # noqa: BLE001 - a gate must never lose a finding
            may = True
        if may:
            kept.append(rule)
    return kept


def _flow_summary(flow: bool, source: str, path: str, tree: ast.Module | None) -> dict | None:
    from dpcheck.analysis import project

    if not flow or not project.wanted(source, path):
        return None
    return _summary(source, path, tree)


def _unsuppressed(findings: list[Finding], source: str) -> list[Finding]:
    if "dpcheck" not in source:
        return sorted(set(findings))
    from dpcheck.rule import suppressed_ids

    lines = source.splitlines()
    kept = []
    for f in findings:
        line = lines[f.line - 1] if 0 < f.line <= len(lines) and not diag.is_diagnostic_id(f.rule) else ""
        ids = suppressed_ids(line)
        if ids is None or (ids and not any(f.rule.startswith(i) for i in ids)):
            kept.append(f)
    return sorted(set(kept))


def safe_analyse(
    source: str, path: str, selected: Sequence[type[Rule]], flow: bool = False,
    max_depth: int = tolerant.DEFAULT_MAX_DEPTH,
) -> Analysis:
    """``analyse_source``, with any engine failure on this file turned into a DP005 finding.
    ``flow``: also compute the file's project-flow summary."""
    try:
        with outside_reads.watching() as seen:
            analysis = analyse_source(source, path, selected, flow, max_depth=max_depth)
        if outside_reads.reads_beyond(seen, path):
            analysis.cacheable = False  # the result also depends on files the cache key does not cover
        return analysis
    except MemoryError:
        return _not_analysed(path, "over the memory limit while analysing it (--max-memory to raise it)", 1, False)
    except Exception as exc:  # noqa: BLE001 - one file must not stop the scan
        message = f"internal error while analysing this file: {type(exc).__name__}: {exc}"
        return Analysis([diag.diagnostic(diag.RULE_CRASH, path, message)], True, True)


def prefilter_and_analyse(
    source: str, path: str, rules: Sequence[type[Rule]], flow: bool, max_depth: int = tolerant.DEFAULT_MAX_DEPTH
) -> Analysis:
    """The rules whose text prefilter admits ``source``, then :func:`safe_analyse`."""
    try:
        selected = [rules[i] for i in applicable(rules, source, path)]
    except Exception as exc:  # noqa: BLE001 - one file must not stop the scan
        message = f"internal error in a rule's text prefilter: {type(exc).__name__}: {exc}"
        return Analysis([diag.diagnostic(diag.RULE_CRASH, path, message)], False, True)
    return safe_analyse(source, path, selected, flow, max_depth)


def _summary(source: str, path: str, tree: ast.Module | None = None) -> dict | None:
    from dpcheck.analysis import project

    try:
        return project.summarize(source, path, tree)
    except Exception:  # noqa: BLE001 - a summary is optional: without it no cross-module finding
        return None


def engine_code_files() -> list[str]:
    """dpcheck's own code that decides per-file results: this engine, the rule interface and
    traversal, the diagnostics and the whole analysis core (project flow included)."""
    own = [_PACKAGE / "scan" / "engine.py", _PACKAGE / "rule.py", _PACKAGE / "cstwalk.py", _PACKAGE / "codetext.py",
           Path(diag.__file__)]
    return [str(p) for p in own] + sorted(str(p) for p in (_PACKAGE / "analysis").glob("*.py"))


def rule_code_files(rules: Iterable[type[Rule]]) -> list[str]:
    """The code files a cache entry depends on. A :class:`RuleCatalog` names its package's files
    without importing them; rule classes given directly (tests, benchmarks) name their modules."""
    files = engine_code_files()
    if isinstance(rules, RuleCatalog):
        return files + rules.files
    import inspect

    for rule in rules:
        try:
            files.append(inspect.getfile(rule))
        except TypeError:
            pass
    return files


def rule_ids(rules: Sequence[type[Rule]]) -> list[str]:
    return list(rules.ids) if isinstance(rules, RuleCatalog) else [r.id for r in rules]


@dataclass
class _Pending:
    candidate: Candidate
    st: os.stat_result
    sha: str
    lines: int
    source: str


class Engine:
    def __init__(
        self,
        config: ScanConfig,
        rules: Sequence[type[Rule]],
        *,
        use_cache: bool = True,
        jobs: int | None = None,
        isolate: bool = False,
    ) -> None:
        """``isolate``: analyse in worker processes even with one job, so that a file that
        crashes or exhausts the parser cannot end the scan (the command line always does)."""
        self.config = config
        self.isolate = isolate
        #: a :class:`RuleCatalog` stays unimported until a file needs analysing
        self.rules: Sequence[type[Rule]] = rules if isinstance(rules, RuleCatalog) else list(rules)
        self.jobs = max(1, jobs or config.jobs or os.cpu_count() or 1)
        ids = rule_ids(self.rules)
        #: the cross-module phase reports under DP202's id, so it runs when DP202 does
        self.flow = FLOW_RULE_ID in ids
        self._last_hit_sha: str | None = None
        self.cache: ResultCache | None = None
        if use_cache:
            salt = make_salt(__version__, ids, rule_code_files(self.rules), f"max={config.max_file_size},depth={config.max_depth}")
            directory = config.default_cache_dir()
            if directory is None:
                print("dpcheck: warning: .dpcheck/cache leads outside the project (a symlink); not caching",
                      file=sys.stderr)
            else:
                self.cache = ResultCache(directory, salt)

    def scan(self, paths: Sequence[str | os.PathLike[str]], extra: Sequence[Candidate] = ()) -> ScanResult:
        """Scan ``paths`` (files or folders) and the ready-made ``extra`` candidates (e.g. the
        files of an installed package, with their display paths)."""
        with _scan_gc():
            return self._scan(paths, extra)

    def _scan(self, paths: Sequence[str | os.PathLike[str]], extra: Sequence[Candidate]) -> ScanResult:
        start = time.perf_counter()
        stats = ScanStats()
        findings: list[Finding] = []
        crashed = False
        root = str(self.config.root)
        excludes = self.config.exclude

        def collect(candidate_findings: list[Finding]) -> None:
            findings.extend(self._post_filter(candidate_findings, root))

        pending: list[_Pending] = []
        #: absolute path -> (display path, project-flow summary)
        summaries: dict[str, tuple[str, dict]] = {}
        #: absolute path -> content hash, for the files with a summary
        shas: dict[str, str] = {}
        candidates = discover(paths, root=self.config.root, exclude=excludes, default_excludes=DEFAULT_EXCLUDES)
        #: display path -> absolute path of every scanned file (the project, for reachability)
        scanned: dict[str, str] = {}
        for candidate in _chain_unique(candidates, extra):
            if not candidate.problem:
                scanned[candidate.display] = os.path.abspath(candidate.path)
            stats.files += not (candidate.problem or "").startswith("unlistable")
            result = self._prepare(candidate, stats)
            if isinstance(result, list):
                collect(result)
                sha = self._last_hit_sha
                if self.flow and sha is not None and self.cache is not None:
                    summary = self.cache.summary(sha)
                    if summary is not None:
                        summaries[os.path.abspath(candidate.path)] = (candidate.display, summary)
                        shas[os.path.abspath(candidate.path)] = sha
            else:
                pending.append(result)
        for item, analysis in self._run(pending):
            stats.parsed += analysis.parsed
            crashed |= analysis.crashed
            if self.cache is not None and not analysis.crashed and analysis.cacheable:
                self.cache.store(
                    os.path.abspath(item.candidate.path), item.st, item.sha, item.lines, to_rows(analysis.findings)
                )
                self.cache.store_summary(item.sha, analysis.summary)
            if analysis.summary is not None:
                summaries[os.path.abspath(item.candidate.path)] = (item.candidate.display, analysis.summary)
                shas[os.path.abspath(item.candidate.path)] = item.sha
            collect(analysis.findings)
        # One file is still a project: its own functions hand values to each other.
        if self.flow and summaries:
            findings.extend(self._project_findings(summaries, findings, root, shas))
        findings = _reachable(findings, scanned)
        if self.cache is not None:
            try:
                self.cache.save()
            except OSError as exc:
                print(f"dpcheck: warning: cannot write cache {self.cache.directory}: {exc}", file=sys.stderr)
        stats.seconds = time.perf_counter() - start
        return ScanResult(sorted(findings), stats, self.rules, crashed, strict=self.config.strict)

    def _project_findings(
        self, summaries: dict[str, tuple[str, dict]], known: list[Finding], root: str, shas: dict[str, str]
    ) -> list[Finding]:
        """The cross-module phase, joined from the per-file summaries. The join's result is
        cached under the set of (file, display path, content hash) it was computed from, so an
        unchanged tree needs neither the join nor the analysis modules."""
        key = flow_key((p, d, shas.get(p, "")) for p, (d, _) in summaries.items()) if self.cache is not None else None
        cached = self.cache.flow(key) if self.cache is not None and key is not None else None
        if cached is not None:
            flow = [Finding(path, *row) for path, *row in cached]
        else:
            try:
                from dpcheck.analysis import project

                flow = project.join({p: s for p, (_, s) in summaries.items()}, {p: d for p, (d, _) in summaries.items()})
            except Exception as exc:  # noqa: BLE001 - the per-file findings still stand
                print(f"dpcheck: warning: cross-module analysis failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                return []
            if self.cache is not None and key is not None and all(p in shas for p in summaries):
                self.cache.store_flow(key, [[f.path, *row] for f, row in zip(flow, to_rows(flow))])
        seen = {(f.path, f.line, f.rule) for f in known}
        by_path: dict[str, list[Finding]] = {}
        for f in flow:
            if (f.path, f.line, f.rule) not in seen:
                by_path.setdefault(f.path, []).append(f)
        return [f for group in by_path.values() for f in self._post_filter(group, root)]

    def _prepare(self, candidate: Candidate, stats: ScanStats) -> list[Finding] | _Pending:
        """Diagnostics or findings for ``candidate`` when no parse is needed, else what to parse.
        A cache hit leaves its content hash in ``self._last_hit_sha`` (for the flow summary)."""
        path, shown = candidate.path, candidate.display
        self._last_hit_sha = None
        if candidate.problem == "loop":
            return [diag.diagnostic(diag.BAD_SYMLINK, shown, "symlink loop: the path resolves to itself or a parent folder")]
        if candidate.problem and candidate.problem.startswith("unlistable"):
            reason = candidate.problem.partition(": ")[2]
            return [diag.diagnostic(diag.UNLISTABLE, shown, f"cannot list this folder ({reason}): its files were not scanned")]
        if candidate.problem == "broken":
            return [diag.diagnostic(diag.BAD_SYMLINK, shown, f"broken symlink: target {os.readlink(path)!r} does not exist")]
        try:
            st = os.stat(path)
        except OSError as exc:
            return [diag.diagnostic(diag.UNREADABLE, shown, f"cannot stat: {exc.strerror or exc}")]
        if not is_regular(st):
            return [diag.diagnostic(diag.NOT_A_FILE, shown, "not a regular file (FIFO, socket or device); skipped")]
        if st.st_size > self.config.max_file_size:
            return [diag.diagnostic(
                diag.TOO_LARGE, shown, f"file is {st.st_size} bytes, above the limit of {self.config.max_file_size}; skipped"
            )]
        abspath = os.path.abspath(path)
        cache = self.cache
        self._last_hit_sha = None
        if cache is not None:
            hit = cache.by_stat(abspath, st)
            if hit is not None:
                stats.cache_hits += 1
                stats.lines += hit[1]
                self._last_hit_sha = hit[2]
                return from_rows(hit[0], shown)
        try:
            data = read_bytes(path)
        except OSError as exc:
            return [diag.diagnostic(diag.UNREADABLE, shown, f"cannot read: {exc.strerror or exc}")]
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        stats.lines += lines
        sha = content_hash(data)
        if cache is not None:
            rows = cache.by_content(sha)
            if rows is not None:
                stats.cache_hits += 1
                cache.store(abspath, st, sha, lines, None)
                self._last_hit_sha = sha
                return from_rows(rows, shown)
        stats.analysed += 1
        try:
            source = decode(data)
        except ValueError as exc:
            found = [diag.diagnostic(diag.UNDECODABLE, shown, f"cannot decode: {exc}")]
        else:
            # the rules' text prefilters run where the file is analysed: under its limits
            return _Pending(candidate, st, sha, lines, source)
        if cache is not None:
            cache.store(abspath, st, sha, lines, to_rows(found))
        return found

    def _run(self, pending: list[_Pending]) -> Iterator[tuple[_Pending, Analysis]]:
        from dpcheck.scan import isolate

        if not pending:
            return
        if not isolate.available() or (not self.isolate and (self.jobs == 1 or len(pending) < 2)):
            yield from self._run_inline(pending)
            return
        rules = [self.rules[i] for i in range(len(self.rules))]  # imported once, before forking
        import libcst  # noqa: F401 - likewise

        import dpcheck.analysis.astfacts  # noqa: F401
        import dpcheck.rule  # noqa: F401

        def work(index: int) -> Analysis:
            item = pending[index]
            return prefilter_and_analyse(item.source, item.candidate.display, rules, self.flow, self.config.max_depth)

        cfg = self.config
        for outcome in isolate.run(work, len(pending), self.jobs, cfg.file_timeout, cfg.max_memory):
            item = pending[outcome.index]
            shown = item.candidate.display
            if outcome.timed_out:
                message = (f"not analysed: stopped after {cfg.file_timeout:g} s of CPU time (or {10 * cfg.file_timeout:g} s "
                           "without finishing; --file-timeout to raise the limit)")
                yield item, Analysis([diag.diagnostic(diag.NOT_ANALYSED, shown, message)], False, False, cacheable=False)
            elif outcome.died:
                message = (f"not analysed: the process analysing it {outcome.died}, twice (memory limit "
                           f"{cfg.max_memory} bytes: --max-memory)")
                yield item, Analysis([diag.diagnostic(diag.WORKER_DIED, shown, message)], False, True)
            else:
                yield item, outcome.value

    def _run_inline(self, items: list[_Pending]) -> Iterator[tuple[_Pending, Analysis]]:
        for item in items:
            yield item, prefilter_and_analyse(
                item.source, item.candidate.display, self.rules, self.flow, self.config.max_depth
            )

    def _post_filter(self, findings: list[Finding], root: str) -> list[Finding]:
        """Path- and configuration-dependent filters, applied after the cache."""
        if not findings:
            return findings
        cfg = self.config
        out = findings
        if cfg.per_file_ignores:
            rel = relative_to_root(findings[0].path, root)
            codes = [c for glob, ids in cfg.per_file_ignores if matches(rel, glob) for c in ids]
            if codes:
                out = [f for f in out if f.rule == diag.RULE_CRASH.id or not any(f.rule.startswith(c) for c in codes)]
        out = [f for f in out if not diag.is_diagnostic_id(f.rule) or f.rule == diag.RULE_CRASH.id
               or is_enabled(f.rule, cfg.select, cfg.ignore)]
        out = [replace(f, severity="note") if f.category == ACKNOWLEDGED and f.severity != "note" else f for f in out]
        if cfg.categories is not None:
            # without --strict an acknowledged finding is shown as a note whatever the filter says
            out = [f for f in out if f.category in cfg.categories or diag.is_diagnostic_id(f.rule)
                   or (f.category == ACKNOWLEDGED and not cfg.strict)]
        return out


def _reachable(findings: list[Finding], scanned: dict[str, str]) -> list[Finding]:
    """Drop release claims in code nothing in the scanned project reaches (``scan.reachability``)."""
    if len(scanned) < 2 or not findings:
        return findings
    try:
        from dpcheck.scan import reachability

        return reachability.drop_unreachable(findings, scanned.values(), scanned)
    except Exception as exc:  # noqa: BLE001 - the findings still stand
        print(f"dpcheck: warning: reachability analysis failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return findings


def _chain_unique(first: Iterable[Candidate], second: Iterable[Candidate]) -> Iterator[Candidate]:
    """Both streams of candidates, each file (by absolute path) once."""
    seen: set[str] = set()
    for candidate in (*first, *second):
        key = os.path.abspath(candidate.path)
        if key not in seen:
            seen.add(key)
            yield candidate


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()
