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

#: a chunk sent to a worker holds about this many bytes of source
_CHUNK_BYTES = 256 * 1024
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


def _valid_python(source: str) -> ast.Module | None:
    """CPython's own parser (to an AST only, ~10x faster than libcst): the tree if the syntax is valid."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compile(source, "<scanned>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def analyse_source(
    source: str, path: str, selected: Sequence[type[Rule]], flow: bool = False, *, gate: bool | None = None
) -> Analysis:
    """Parse once and run ``selected`` (rules whose triggers occur in ``source``).

    Second prefilter (``gate``, default: on unless ``DPCHECK_AST_GATE=0``): the file is parsed
    with CPython's ``ast`` and each selected rule is asked ``Rule.admits``; only rules that may
    still report are run, and a file left with none is never parsed with libcst. Without
    selected rules only the syntax is checked; a failure is confirmed with libcst (whose grammar
    spans more Python versions) before DP000 is reported. ``flow``: also compute the
    project-flow summary, from the same ``ast`` tree when there is one.
    """
    import libcst as cst

    from dpcheck.analysis.astfacts import gate_enabled
    from dpcheck.rule import RuleCrash, run_rules

    tree: ast.Module | None = None
    tried = False
    if selected and (gate_enabled() if gate is None else gate):
        tree, tried = _valid_python(source), True
        if tree is not None:
            selected = _gated(selected, tree, source)
        # the rest of the text prefilters deferred by ``applicable``
        selected = [r for r in selected if not r.TEXT_AFTER_GATE or r.applies_to(source)]
    if not selected:
        if not tried:
            tree = _valid_python(source)
        if tree is not None:
            return Analysis([], False, False, _flow_summary(flow, source, path, tree))
    try:
        module = _parse(source)
    except cst.ParserSyntaxError as exc:
        finding = diag.diagnostic(
            diag.SYNTAX_ERROR, path, f"syntax error: {exc.message}", exc.editor_line, exc.editor_column
        )
        return Analysis([finding], True, False, _flow_summary(flow, source, path, tree))
    except (RecursionError, MemoryError, ValueError) as exc:
        finding = diag.diagnostic(diag.SYNTAX_ERROR, path, f"cannot parse: {type(exc).__name__}: {exc}")
        return Analysis([finding], True, False, _flow_summary(flow, source, path, tree))
    findings: list[Finding] = []
    crashed = False
    remaining = list(selected)
    while remaining:
        try:
            findings.extend(run_rules(source, remaining, path, module=module, prefiltered=True))
            break
        except RuleCrash as exc:
            crashed = True
            detail = f"{type(exc.original).__name__}: {exc.original}"
            findings.append(diag.diagnostic(diag.RULE_CRASH, path, f"rule {exc.rule_id} crashed on this file: {detail}"))
            survivors = [r for r in remaining if r.id != exc.rule_id]
            if len(survivors) == len(remaining):
                break
            remaining = survivors
    return Analysis(_unsuppressed(findings, source), True, crashed, _flow_summary(flow, source, path, tree))


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


def safe_analyse(source: str, path: str, selected: Sequence[type[Rule]], flow: bool = False) -> Analysis:
    """``analyse_source``, with any engine failure on this file turned into a DP005 finding.
    ``flow``: also compute the file's project-flow summary."""
    try:
        return analyse_source(source, path, selected, flow)
    except Exception as exc:  # noqa: BLE001 - one file must not stop the scan
        message = f"internal error while analysing this file: {type(exc).__name__}: {exc}"
        return Analysis([diag.diagnostic(diag.RULE_CRASH, path, message)], True, True)


def _summary(source: str, path: str, tree: ast.Module | None = None) -> dict | None:
    from dpcheck.analysis import project

    try:
        return project.summarize(source, path, tree)
    except Exception:  # noqa: BLE001 - a summary is optional: without it no cross-module finding
        return None


def _analyse_chunk(
    chunk: list[tuple[str, str, list[int]]], rules: Sequence[type[Rule]], flow: bool = False
) -> list[Analysis]:
    return [safe_analyse(source, path, [rules[i] for i in which], flow) for path, source, which in chunk]


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
    #: indices into the engine's rules of those whose triggers occur in the source
    which: list[int]


class Engine:
    def __init__(
        self,
        config: ScanConfig,
        rules: Sequence[type[Rule]],
        *,
        use_cache: bool = True,
        jobs: int | None = None,
    ) -> None:
        self.config = config
        #: a :class:`RuleCatalog` stays unimported until a file needs analysing
        self.rules: Sequence[type[Rule]] = rules if isinstance(rules, RuleCatalog) else list(rules)
        self.jobs = max(1, jobs or config.jobs or os.cpu_count() or 1)
        ids = rule_ids(self.rules)
        #: the cross-module phase reports under DP202's id, so it runs when DP202 does
        self.flow = FLOW_RULE_ID in ids
        self._last_hit_sha: str | None = None
        self.cache: ResultCache | None = None
        if use_cache:
            salt = make_salt(__version__, ids, rule_code_files(self.rules), f"max={config.max_file_size}")
            self.cache = ResultCache(config.default_cache_dir(), salt)

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
        for candidate in _chain_unique(candidates, extra):
            stats.files += 1
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
            if self.cache is not None and not analysis.crashed:
                self.cache.store(
                    os.path.abspath(item.candidate.path), item.st, item.sha, item.lines, to_rows(analysis.findings)
                )
                self.cache.store_summary(item.sha, analysis.summary)
            if analysis.summary is not None:
                summaries[os.path.abspath(item.candidate.path)] = (item.candidate.display, analysis.summary)
                shas[os.path.abspath(item.candidate.path)] = item.sha
            collect(analysis.findings)
        if self.flow and len(summaries) > 1:
            findings.extend(self._project_findings(summaries, findings, root, shas))
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
            which = applicable(self.rules, source, shown)
            return _Pending(candidate, st, sha, lines, source, which)
        if cache is not None:
            cache.store(abspath, st, sha, lines, to_rows(found))
        return found

    def _run(self, pending: list[_Pending]) -> Iterator[tuple[_Pending, Analysis]]:
        if self.jobs == 1 or len(pending) < 2:
            yield from self._run_inline(pending)
            return
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
        from concurrent.futures.process import BrokenProcessPool

        chunks: list[list[_Pending]] = [[]]
        size = 0
        for item in pending:
            if size >= _CHUNK_BYTES:
                chunks.append([])
                size = 0
            chunks[-1].append(item)
            size += len(item.source)
        context = multiprocessing.get_context("fork") if sys.platform == "linux" else None
        finished_ids: set[int] = set()

        def submit(pool: ProcessPoolExecutor, chunk: list[_Pending]) -> Future[list[Analysis]]:
            payload = [(p.candidate.display, p.source, p.which) for p in chunk]
            return pool.submit(_analyse_chunk, payload, list(self.rules), self.flow)

        try:
            with ProcessPoolExecutor(max_workers=min(self.jobs, len(chunks)), mp_context=context) as pool:
                queue = iter(chunks)
                futures = {submit(pool, chunk): chunk for _, chunk in zip(range(self.jobs * 2), queue)}
                while futures:
                    done, _ = wait(futures, return_when=FIRST_COMPLETED)
                    for future in done:
                        chunk = futures.pop(future)
                        yield from zip(chunk, future.result())
                        finished_ids.update(id(item) for item in chunk)
                        nxt = next(queue, None)
                        if nxt is not None:
                            futures[submit(pool, nxt)] = nxt
        except BrokenProcessPool:
            # a worker died (e.g. killed for memory): finish the rest in this process
            yield from self._run_inline([item for item in pending if id(item) not in finished_ids])

    def _run_inline(self, items: list[_Pending]) -> Iterator[tuple[_Pending, Analysis]]:
        for item in items:
            yield item, safe_analyse(
                item.source, item.candidate.display, [self.rules[i] for i in item.which], self.flow
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
