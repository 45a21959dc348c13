"""Code that cannot release anything: functions, methods, classes and modules nothing in the scanned
project reaches.

A finding that claims a release (a private bound, a private domain, a noise draw of the wrong kind) is
false when the code it sits in never runs: a helper no module calls, a method no code names, an unused
copy of a module nobody imports, a function whose only call is commented out. The scanned tree is the
project: its scripts (a ``__main__`` block or top-level statements), its packages' modules that something
imports, and (for a project users install, or a package that re-exports a module) every public name.

:func:`unreachable_spans` answers, for one file of the scan, the line spans of its definitions that are
unreachable. It reads every scanned file once with CPython's ``ast`` (cached per set of files), and it is
conservative: any mention that could be a use counts as one, e.g.

* a function is used when its own module names it outside its body (and outside other unreachable
  definitions), when a module that imports it from a module matching its file (absolute, relative or by
  bare name, ``import *`` included) names it, when a module that imports its module reads it as an
  attribute, or when any string of the project names it (registries, ``getattr``);
* a method is used when any code of the project reads an attribute of its name, or a string names it;
  dunders, methods of classes with a base from outside the project (a framework may call a hook) and
  test functions always count as used;
* a module that nothing imports and that runs nothing on import (only definitions, imports and constant
  assignments; no ``__main__`` block) is unreachable with everything in it.

A scan of one file is not a project: nothing is unreachable there.
"""
from __future__ import annotations

import ast
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from dpcheck import dead_branches
from dpcheck.scan.config import DEFAULT_MAX_FILE_SIZE

#: a project users install: its public functions are an API whose callers are outside the tree
_BUILD_FILES = ("setup.py", "pyproject.toml", "setup.cfg", "PKG-INFO")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF_NAME = re.compile(r"\b(?:def|class)\s+[A-Za-z_][A-Za-z0-9_]*")
#: at most this many files are indexed (a larger scan: nothing is unreachable)
_MAX_FILES = 3000


@dataclass
class _Def:
    name: str
    kind: str  # function | class | method
    start: int
    end: int
    node: ast.AST
    cls: "_Def | None" = None
    external_base: bool = False


@dataclass
class _File:
    path: str
    parts: tuple[str, ...]  # path components without ``.py``
    tree: ast.Module | None
    defs: list[_Def] = field(default_factory=list)
    #: imported module (resolved to candidate path suffixes) -> local alias, for ``import m``
    module_aliases: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    #: local name -> (module suffix candidates, original name), for ``from m import f``
    from_names: dict[str, list[tuple[tuple[str, ...], str]]] = field(default_factory=dict)
    star_modules: list[tuple[str, ...]] = field(default_factory=list)
    #: every module this file imports (suffix candidates)
    imported_modules: list[tuple[str, ...]] = field(default_factory=list)
    runs: bool = False  # a script: statements beyond definitions, imports and constants
    #: the words of a file ``ast`` cannot read (Python 2, syntax errors): any of them may be a use
    words: "set[str] | None" = field(default_factory=set)


def _suffix_match(target: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    """Does the module named by path suffix ``target`` name the file ``parts`` (a package's
    ``__init__`` answers for the package)?"""
    if not target:
        return False
    for p in (parts, parts[:-1] if parts and parts[-1] == "__init__" else None):
        if p and len(p) >= len(target) and tuple(p[-len(target):]) == target:
            return True
    return False


def _resolve(module: str | None, level: int, here: tuple[str, ...]) -> tuple[str, ...]:
    """The path suffix an import names: absolute ``a.b`` -> (a, b); relative from the file's folder."""
    mod = tuple(module.split(".")) if module else ()
    if level == 0:
        return mod
    base = here[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)] if len(base) >= level - 1 else ()
    return tuple(base) + mod


def _runs(stmt: ast.stmt) -> bool:
    """Does a module-level statement do work on import (beyond defining names)?"""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.Pass)):
        return False
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return False  # a docstring
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        value = stmt.value
        return value is not None and any(isinstance(n, ast.Call) for n in ast.walk(value)) and not _harmless(value)
    if isinstance(stmt, ast.Try):
        return any(_runs(s) for s in stmt.body)
    if isinstance(stmt, ast.If):
        return True  # ``if __name__ == "__main__"`` or a conditional set-up
    return True


def _main_guard_only(tree: ast.Module) -> bool:
    """Does the module do work on import only inside ``if __name__ == "__main__":`` blocks?"""
    for stmt in tree.body:
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare) and "__main__" in ast.dump(stmt.test) \
                and "__name__" in ast.dump(stmt.test):
            continue
        if _runs(stmt):
            return False
    return True


def _harmless(value: ast.AST) -> bool:
    """Set-up calls that configure rather than run (``logging.getLogger(__name__)``, ``TypeVar``…)."""
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name not in {"getLogger", "TypeVar", "namedtuple", "compile", "dict", "set", "frozenset", "list",
                            "tuple", "field", "dataclass", "Path", "join", "dirname", "abspath", "getenv", "get",
                            "device", "NewType", "defaultdict", "OrderedDict", "partial"}:
                return False
    return True


_PLAIN_DECORATORS = frozenset({
    "staticmethod", "classmethod", "property", "setter", "getter", "deleter", "lru_cache", "cache", "wraps",
    "jit", "njit", "cached_property", "abstractmethod", "no_grad", "inference_mode", "vmap", "autojit",
})


def _registering(dec: ast.expr) -> bool:
    """A decorator that may hand the function to someone who calls it (anything but the plain wrappers)."""
    node = dec.func if isinstance(dec, ast.Call) else dec
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""
    return name not in _PLAIN_DECORATORS


def _text(path: str) -> str:
    """The text of a regular file within the scan's size limit. A FIFO, device or huge file named ``*.py`` is
    never opened (opening a FIFO blocks until a writer comes): OSError, like an unreadable file."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_size > DEFAULT_MAX_FILE_SIZE:
        raise OSError(f"not a regular file within the size limit: {path}")
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _index_file(path: str, root: str) -> _File:
    rel = os.path.relpath(path, root)
    parts = tuple(os.path.splitext(rel)[0].split(os.sep))
    try:
        tree = ast.parse(_text(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        f = _File(path, parts, None)
        try:
            f.words = set(_WORD.findall(_text(path)))
        except OSError:
            f.words = None
        return f
    f = _File(path, parts, tree)
    for stmt in tree.body:
        f.runs = f.runs or _runs(stmt)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            f.defs.append(_Def(stmt.name, "function", stmt.lineno, stmt.end_lineno or stmt.lineno, stmt))
        elif isinstance(stmt, ast.ClassDef):
            c = _Def(stmt.name, "class", stmt.lineno, stmt.end_lineno or stmt.lineno, stmt)
            f.defs.append(c)
            for sub in stmt.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    f.defs.append(_Def(sub.name, "method", sub.lineno, sub.end_lineno or sub.lineno, sub, c))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                target = tuple(a.name.split("."))
                f.imported_modules.append(target)
                f.module_aliases.setdefault(a.asname or a.name.split(".")[0], []).append(
                    target if a.asname else target)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(node.module, node.level, parts)
            f.imported_modules.append(target)
            for a in node.names:
                if a.name == "*":
                    f.star_modules.append(target)
                    continue
                local = a.asname or a.name
                f.from_names.setdefault(local, []).append((target, a.name))
                # ``from pkg import mod``: the name may be a module
                f.imported_modules.append(target + (a.name,))
                f.module_aliases.setdefault(local, []).append(target + (a.name,))
    return f


class _Project:
    def __init__(self, files: Sequence[str]) -> None:
        self.root = os.path.commonpath([os.path.dirname(p) for p in files]) if files else ""
        self.files = {p: _index_file(p, self.root) for p in files}
        self.installable = self._installable()
        self.strings: set[str] = set()
        self.unread = any(f.tree is None and f.words is None for f in self.files.values())
        for f in self.files.values():
            if f.tree is None and f.words:
                self.strings.update(f.words)
        #: per file: Name loads (name -> lines), attribute reads (attr -> list of (value name, line))
        self.names: dict[str, dict[str, list[int]]] = {}
        self.attrs: dict[str, dict[str, list[tuple[str | None, int]]]] = {}
        self.all_attrs: dict[str, set[str]] = {}  # attr -> files
        project_classes: set[str] = set()
        project_parts: set[str] = set()
        for f in self.files.values():
            project_classes.update(d.name for d in f.defs if d.kind == "class")
            project_parts.update(f.parts)
        project_parts.add(os.path.basename(self.root))  # the scanned folder may itself be the package
        for p in self.files:  # every folder and module name under the scanned root (``generative_models``)
            project_parts.update(os.path.splitext(part)[0] for part in os.path.relpath(p, self.root).split(os.sep))
        for p, f in self.files.items():
            names: dict[str, list[int]] = {}
            attrs: dict[str, list[tuple[str | None, int]]] = {}
            if f.tree is not None:
                # docstrings and bare string statements (often code switched off) name nothing that runs
                bare = {id(n.value) for n in ast.walk(f.tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
                for node in ast.walk(f.tree):
                    if isinstance(node, ast.Name):
                        names.setdefault(node.id, []).append(node.lineno)
                    elif isinstance(node, ast.Attribute):
                        base = node.value.id if isinstance(node.value, ast.Name) else None
                        attrs.setdefault(node.attr, []).append((base, node.lineno))
                        self.all_attrs.setdefault(node.attr, set()).add(p)
                    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 2000 \
                            and id(node) not in bare:
                        self.strings.update(_WORD.findall(node.value))
                # (h42-1) ``from transformers import Trainer``: a base imported from a library stays external even
                # when a project class elsewhere shares its name
                outside = {a.asname or a.name for n in f.tree.body if isinstance(n, ast.ImportFrom)
                           and not n.level and n.module and n.module.split(".")[0] not in project_parts
                           for a in n.names}
                for d in f.defs:
                    if d.kind == "class":
                        bases = [b for b in d.node.bases]  # type: ignore[attr-defined]
                        # ``class GaussianNB(sk_nb.GaussianNB)``: a dotted base, or a base named like the class
                        # itself, comes from another package whose methods may call this class's hooks
                        d.external_base = any(
                            not (isinstance(b, ast.Name) and b.id != d.name
                                 and (b.id in project_classes and b.id not in outside or b.id == "object"))
                            for b in bases) or bool(d.node.keywords)  # type: ignore[attr-defined]
            self.names[p], self.attrs[p] = names, attrs
        self.text_uses = self._text_uses()
        #: imported name -> (importing file, local name, module suffix candidates)
        self.importers: dict[str, list[tuple[str, str, list[tuple[str, ...]]]]] = {}
        self.star_files = [q for q, g in self.files.items() if g.star_modules]
        #: name -> files defining a function, class or method of that name
        self.definers: dict[str, set[str]] = {}
        for q, g in self.files.items():
            for local, origins in g.from_names.items():
                for t, orig in origins:
                    self.importers.setdefault(orig, []).append((q, local, [t]))
            for d in g.defs:
                self.definers.setdefault(d.name, set()).add(q)
        #: last component of an imported module -> (importing file, module suffix)
        self.by_last: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        for q, g in self.files.items():
            for t in g.imported_modules:
                if t:
                    self.by_last.setdefault(t[-1], []).append((q, t))
        self.dead_modules = self._dead_modules()
        self._dead: dict[str, list[_Def]] = {}
        self._calls: dead_branches.Index | None = None
        self._branches: dict[str, list[tuple[int, int]]] = {}
        self._spans: dict[tuple[str, bool], list[tuple[int, int]]] = {}
        self._code_texts: dict[str, str | None] = {}

    def _text_uses(self) -> dict[str, int]:
        """How often each word occurs in the project's text (code, strings and comments alike) other than as
        the name of a ``def``/``class``."""
        counts: dict[str, int] = {}
        for p in self.files:
            try:
                text = _text(p)
            except OSError:
                self.unread = True
                continue
            for word in _WORD.findall(_DEF_NAME.sub(" ", text)):
                counts[word] = counts.get(word, 0) + 1
        return counts

    def _unnamed_defs(self, p: str) -> list[_Def]:
        """The definitions of ``p`` whose name the project's text never mentions but where it is defined."""
        f = self.files[p]
        if f.tree is None or self.unread:
            return []
        return [d for d in f.defs if not self._always_live(d, False) and not self.text_uses.get(d.name)]

    def _installable(self) -> bool:
        folders = {self.root}
        for p in self.files:
            d = os.path.dirname(p)
            while d.startswith(self.root) and d not in folders:
                folders.add(d)
                d = os.path.dirname(d)
        d = self.root
        for _ in range(4):  # an installed package: its ``*.dist-info`` sits beside it in site-packages
            d = os.path.dirname(d)
            folders.add(d)
        return any(_build_folder(d) for d in folders)

    def _imports_of(self, parts: tuple[str, ...], skip: str) -> list[str]:
        """The files (other than ``skip``) that import the module at ``parts``."""
        keys = {parts[-1]} | ({parts[-2]} if len(parts) > 1 and parts[-1] == "__init__" else set())
        return sorted({q for k in keys for q, t in self.by_last.get(k, ()) if q != skip and _suffix_match(t, parts)})

    def _dead_modules(self) -> set[str]:
        if self.installable or self.unread:
            return set()
        out: set[str] = set()
        for p, f in self.files.items():
            base = os.path.basename(p)
            if f.tree is None or f.runs or base in ("__init__.py", "conftest.py", "setup.py", "__main__.py") \
                    or base.startswith("test") or base.endswith("_test.py"):
                continue
            if not f.defs or self._imports_of(f.parts, p):
                continue
            if f.parts[-1] in self.strings:  # importlib / a registry names the module
                continue
            out.add(p)
        return out

    def _used_elsewhere(self, p: str, d: _Def) -> bool:
        """Is top-level ``d`` of file ``p`` named by another module that imports it or its module?"""
        f = self.files[p]
        for q, local, targets in self.importers.get(d.name, ()):
            if q != p and any(_suffix_match(t, f.parts) for t in targets):
                if os.path.basename(q) == "__init__.py" or self.names[q].get(local):
                    return True  # re-exported by a package, or read
        for q in self.star_files:
            if q != p and self.names[q].get(d.name) and any(_suffix_match(t, f.parts) for t in self.files[q].star_modules):
                return True
        for q in self.all_attrs.get(d.name, ()):
            if q == p:
                continue
            g = self.files[q]
            aliases = {a for a, targets in g.module_aliases.items() if any(_suffix_match(t, f.parts) for t in targets)}
            reads = self.attrs[q].get(d.name, ())
            if aliases and any(base in aliases for base, _ in reads):
                return True
            if any(base is None for base, _ in reads) and any(_suffix_match(t, f.parts) for t in g.imported_modules):
                return True  # ``pkg.mod.f(...)``: a dotted read we do not resolve
        return False

    def _dead_defs(self, p: str) -> list[_Def]:
        f = self.files[p]
        if f.tree is None:
            return []
        if self.unread:
            return []
        if p in self.dead_modules:
            return [d for d in f.defs if d.kind != "method"]
        reexported = any(os.path.basename(q) == "__init__.py" and any(_suffix_match(t, f.parts) for t in g.star_modules)
                         for q, g in self.files.items() if q != p)
        dead: list[_Def] = []
        candidates = [d for d in f.defs if not self._always_live(d, reexported)]
        changed = True
        while changed:
            changed = False
            for d in candidates:
                if d in dead:
                    continue
                if not self._mentioned(p, d, dead):
                    dead.append(d)
                    changed = True
        return dead

    def _always_live(self, d: _Def, reexported: bool) -> bool:
        if d.name.startswith("__") or d.name.startswith("test") or d.name in self.strings or d.name == "main":
            return True
        if any(_registering(dec) for dec in getattr(d.node, "decorator_list", ())):
            return True  # ``@app.route``, ``@register``, ``@pytest.fixture``: something else calls it
        public = not d.name.startswith("_")
        if d.kind == "method":
            if d.cls is None:
                return False
            # a public method of a public class of an installed library is API, like its functions
            return d.cls.external_base or (public and not d.cls.name.startswith("_") and self.installable)
        return public and (self.installable or reexported)

    def _mentioned(self, p: str, d: _Def, dead: list[_Def]) -> bool:
        """Is ``d`` named by code outside its own body and outside ``dead``?"""
        def outside(line: int, q: str) -> bool:
            if q != p:
                return True
            if d.start <= line <= d.end:
                return False
            return not any(x.start <= line <= x.end for x in dead if x is not d)
        if d.kind == "method":
            for q in self.all_attrs.get(d.name, ()):
                if q in self.dead_modules:
                    continue
                if any(outside(line, q) for _, line in self.attrs[q][d.name]):
                    return True
            return any(outside(line, p) for line in self.names[p].get(d.name, ()))
        if any(outside(line, p) for line in self.names[p].get(d.name, ())):
            return True
        if d.kind == "class" and any(outside(line, p) for _, line in self.attrs[p].get(d.name, ())):
            return True
        return self._used_elsewhere(p, d)

    def spans(self, p: str, strict: bool = False) -> list[tuple[int, int]]:
        """Line spans of the definitions of ``p`` that are unreachable *and* certainly release nothing.

        A never-called public function of a script, or of a module nobody imports, is often a latent
        helper somebody runs from a notebook or will call tomorrow (its bugs are real), so only the
        definitions with stronger evidence count:

        * a function of a module the project imports (a helper module, not a script) whose name
          occurs nowhere in the project's text but at definitions (no call, import, string or comment), or
          that is a superseded copy (a reachable definition of the same name exists elsewhere);
        * a function of a helper module named, outside definitions and comments, only by ``from m import
          name`` lines of modules that never read it (not a package ``__init__``: a re-export is API);
        * a private method (``_name``) nothing reads, a method named nowhere whose name another,
          reachable method carries (a superseded variant), or a ``@staticmethod``/``@classmethod`` named
          nowhere (no framework calls a static method as a hook);
        * a class or function of a test module (``tests/``, ``test_*.py``, ``*_test.py``) named nowhere:
          tests assert on toy data and release nothing.
        * a numbered step of a script with a ``__main__`` block (``part_a``) named nowhere while another step
          of its family (``part_c``, ``part_f_graph``) is used: the entry point skipped it.

        ``strict`` (for :data:`STRICT_RULES`, whose finding is a calibration that only matters when something
        instantiates or calls it) also counts a class of a helper module and a public method named nowhere in
        the project's text but at their definitions.
        """
        key = (p, strict)
        if key not in self._spans:
            self._spans[key] = self._spans_of(p, strict)
        return self._spans[key]

    def _spans_of(self, p: str, strict: bool) -> list[tuple[int, int]]:
        f = self.files.get(p)
        if f is None or f.tree is None:
            return []
        base = os.path.basename(p)
        test_module = base.startswith("test_") or "tests" in f.parts[:-1] or "test" in f.parts[:-1]
        # (fp47) a module others import whose only work on its own is a ``__main__`` self-test is a helper
        # module too: its functions named nowhere are called by neither the importers nor the self-test
        helper_module = (not f.runs or _main_guard_only(f.tree)) and bool(self._imports_of(f.parts, p))
        out: list[tuple[int, int]] = []
        for d in self.dead_in(p):
            unnamed = not self.text_uses.get(d.name)
            if d.kind == "function":
                keep = (helper_module and (unnamed or self._live_twin(d))) or (test_module and unnamed)
                # (dead45) imported by name into modules that never read it (no ``__init__`` re-export: that
                # is API and keeps it live): the import is a leftover, nothing calls the function
                if not keep and helper_module and not unnamed and self._import_only(d):
                    keep = True
                # (dead46) a step of a script's numbered family (``part_a`` beside ``part_c``, ``part_f_1``) named
                # nowhere while a sibling of the family is used: the entry point runs the others, not this one
                if not keep and unnamed and f.runs and self._skipped_step(p, d):
                    keep = True
            elif d.kind == "class":
                # an unnamed class of a helper module stays: it is often a latent helper (a preprocessor, an
                # optimizer) a notebook instantiates, and its bugs are real
                keep = test_module and unnamed
                if not keep and strict and unnamed and helper_module:
                    keep = True
            else:
                keep = d.name.startswith("_") or (unnamed and self._live_twin(d))
                # (dead45) a static or class method named nowhere but at its ``def``: no framework calls a
                # staticmethod as a hook, and no code of the project names it
                if not keep and unnamed and any(isinstance(dec, ast.Name) and dec.id in ("staticmethod", "classmethod")
                                                for dec in getattr(d.node, "decorator_list", ())):
                    keep = True
            # (dp202fp45) a function or method whose every call is commented out: the author switched it off
            if not keep and d.kind != "class" and not unnamed and self._switched_off(p, d):
                keep = True
            if not keep and strict and d.kind == "method" and unnamed:
                keep = True
            if keep:
                out.append((d.start, d.end))
        return out

    def dead_module_methods(self, p: str) -> list[tuple[int, int]]:
        """(S5 h48) Spans of the public methods named nowhere in the project's text, in a module nothing reaches
        (QCU-LDP ``gaussian_mechanism`` beside the ``gaussian_with_fail`` the experiments call)."""
        f = self.files.get(p)
        if f is None or f.tree is None or p not in self.dead_modules:
            return []
        return [(d.start, d.end) for d in f.defs if d.kind == "method" and not self.text_uses.get(d.name)
                and not d.name.startswith("__")]

    def unnamed_helper_methods(self, p: str) -> list[tuple[int, int]]:
        """(T2 h48) Spans of the public methods of a helper module (one the project imports, that runs nothing on
        its own) whose name occurs nowhere in the project's text but at their ``def`` (no call, no string, no
        comment), of a class that other modules of the project import and use: MissingLink
        ``DifferentialPrivacy.compute_dp_statistics`` beside the methods the API calls. Methods of a class with a
        base from outside the project stay live (``_always_live``)."""
        f = self.files.get(p)
        if f is None or f.tree is None:
            return []
        # the scanned folder may itself be a package (``backend/app`` scanned, ``from app.services.x import``)
        imported = self._imports_of(f.parts, p) or self._imports_of((os.path.basename(self.root), *f.parts), p)
        if not ((not f.runs or _main_guard_only(f.tree)) and imported):
            return []
        if self.unread:
            return []
        return [(d.start, d.end) for d in f.defs if d.kind == "method" and not d.name.startswith("__")
                and d.cls is not None and self._used_by_other_module(p, d.cls.name)
                and not self._always_live(d, False) and not self.text_uses.get(d.name)]

    def _used_by_other_module(self, p: str, name: str) -> bool:
        """Does another module of the project import class ``name`` from ``p`` and name it? Its consumers are in
        the scanned tree, so a method none of them (nor anything else) names is not part of what they use: a
        benchmark's or a user's partial tree with the library module alone says nothing about its callers."""
        importers = [(q, local) for q, local, _targets in self.importers.get(name, ()) if q != p]
        if any(os.path.basename(q) == "__init__.py" for q, _ in importers):
            return False  # re-exported by a package: an API whose callers may be outside the tree
        return any(self.names.get(q, {}).get(local) for q, local in importers)

    def _skipped_step(self, p: str, d: _Def) -> bool:
        """Is top-level function ``d`` of script ``p`` (a ``__main__`` block runs it) a numbered step
        ``<stem>_<short suffix>`` (``part_a``) of a family (``part_c``, ``part_f_graph``) of which another member
        is named by the project's code? The script's entry point runs the family but skipped this one."""
        f = self.files[p]
        if f.tree is None or "_" not in d.name.strip("_"):
            return False
        if not any(isinstance(s, ast.If) and "__main__" in ast.dump(s.test) for s in f.tree.body):
            return False
        stem, _, suffix = d.name.partition("_")
        stem += "_"
        # a numbered step (``part_a``, ``q_3b``, ``step_2``), not a named variant (``train_dp`` beside
        # ``train_dp2``: a latent alternative whose bugs are real)
        if len(stem) < 2 or not 0 < len(suffix) <= 3 or not suffix.isalnum():
            return False
        return any(o is not d and o.kind == "function" and o.name.startswith(stem) and self.text_uses.get(o.name)
                   for o in f.defs)

    def _code_text(self, q: str) -> str | None:
        """``q``'s text with its comments and import statements blanked (``None`` when it cannot be read or
        tokenized): what is left names only code that runs, strings included."""
        if q in self._code_texts:
            return self._code_texts[q]
        import io
        import tokenize

        out: str | None = None
        f = self.files.get(q)
        try:
            text = _text(q)
            lines = text.splitlines(keepends=True)
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type == tokenize.COMMENT:
                    (r, c0), (_, c1) = tok.start, tok.end
                    line = lines[r - 1]
                    lines[r - 1] = line[:c0] + " " * (c1 - c0) + line[c1:]
            if f is not None and f.tree is not None:
                for node in ast.walk(f.tree):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        for r in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                            lines[r - 1] = "\n"
            out = "".join(lines)
        except (OSError, SyntaxError, tokenize.TokenError, IndentationError, IndexError, ValueError):
            out = None
        self._code_texts[q] = out
        return out

    def _named_only_at_definitions(self, d: _Def) -> list[tuple[str, _File]] | None:
        """The project files whose text names ``d`` (with their graphs), when every mention in their code
        is a definition of the name (its own, or a same-named one elsewhere); None when some code reads it,
        or a file that names it cannot be read or parsed. Comments and strings are not code here."""
        if self.unread or len(d.name) < 4:
            return None
        word = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(d.name) + r"(?![A-Za-z0-9_])")
        naming: list[tuple[str, _File]] = []
        for q, g in self.files.items():
            try:
                text = _text(q)
            except OSError:
                return None
            if d.name not in text:
                continue
            code = self._code_text(q)
            if code is None:
                return None
            for m in word.finditer(code):
                if not re.search(r"\b(?:def|class)\s+$", code[max(0, m.start() - 40):m.start()]):
                    return None
            naming.append((q, g))
        return naming

    def _import_only(self, d: _Def) -> bool:
        """Is ``d`` (unreachable: no code reads its name) named in the project's text only at definitions, in
        comments and in import statements, at least one of them an import? The import is a leftover."""
        naming = self._named_only_at_definitions(d)
        if naming is None or any(g.tree is None for _, g in naming):
            return False
        imported = False
        for q, g in naming:
            if any(isinstance(n, ast.ImportFrom) and any(a.name == d.name for a in n.names) for n in ast.walk(g.tree)):
                if os.path.basename(q) == "__init__.py":
                    return False  # a package re-exports it: public API
                imported = True
        return imported

    def _switched_off(self, p: str, d: _Def) -> bool:
        """Is ``d`` (unreachable: no code reads its name) named in the project's text only in comments and
        import statements, at least once in a commented-out line of code calling it (``# y = name(x)``, not
        prose)? Its callers were switched off: it never runs. Any other mention (a string, a registry, code)
        keeps it."""
        naming = self._named_only_at_definitions(d)
        return naming is not None and any(self._commented_call(q, d.name) for q, _ in naming)

    def _commented_call(self, q: str, name: str) -> bool:
        """Does a comment of ``q`` hold a line of code calling ``name`` (``#  q = self.name(x)``: a
        statement that parses, not prose that mentions it)?"""
        import io
        import tokenize

        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(_text(q)).readline))
        except (OSError, SyntaxError, tokenize.TokenError, IndentationError, ValueError):
            return False
        for tok in tokens:
            if tok.type != tokenize.COMMENT or name not in tok.string:
                continue
            code = tok.string.lstrip("#").strip()
            try:
                tree = ast.parse(code)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and (
                        (isinstance(node.func, ast.Name) and node.func.id == name)
                        or (isinstance(node.func, ast.Attribute) and node.func.attr == name)):
                    return True
        return False

    def branch_spans(self, p: str) -> list[tuple[int, int]]:
        """Line spans of ``p``'s parameter branches that no call in the project selects
        (:mod:`dpcheck.dead_branches`). In an installable project every public function is an
        API whose outside callers may pass anything: only private ones are decided."""
        if p not in self._branches:
            f = self.files.get(p)
            if f is None or f.tree is None or self.unread or any(g.tree is None for g in self.files.values()):
                self._branches[p] = []
            else:
                if self._calls is None:
                    self._calls = dead_branches.Index(g.tree for g in self.files.values() if g.tree is not None)
                self._branches[p] = dead_branches.dead_branch_spans(f.tree, self._calls, private_only=self._packaged(p))
        return self._branches[p]

    def _packaged(self, p: str) -> bool:
        """Is file ``p`` part of a package users install (a build file or ``*.dist-info`` in a folder that
        holds it)? A vendored ``lib/setup.py`` makes only ``lib/`` an API, not the scripts beside it."""
        if not self.installable:
            return False
        d = os.path.dirname(p)
        for _ in range(64):
            if _build_folder(d):
                return True
            up = os.path.dirname(d)
            if up == d:
                break
            d = up
        return False

    def _live_twin(self, d: _Def) -> bool:
        """Is there a reachable definition of the same kind and name elsewhere in the project?"""
        for q in sorted(self.definers.get(d.name, ())):
            dead = self.dead_in(q)
            if any(y is not d and y.name == d.name and y.kind == d.kind and y not in dead for y in self.files[q].defs):
                return True
        return False

    def dead_in(self, p: str) -> list[_Def]:
        """The unreachable definitions of ``p`` (computed on demand)."""
        if p not in self._dead:
            self._dead[p] = self._dead_defs(p) if p in self.files else []
        return self._dead[p]


_CACHE: dict[tuple[str, ...], _Project] = {}


def project(files: Iterable[str]) -> _Project | None:
    key = tuple(sorted({os.path.abspath(f) for f in files if f.endswith(".py")}))
    if len(key) < 2 or len(key) > _MAX_FILES:
        return None
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = _Project(key)
    return _CACHE[key]


def _build_folder(d: str) -> bool:
    """Does folder ``d`` hold a build file or an installed distribution's metadata?"""
    if any(os.path.isfile(os.path.join(d, b)) for b in _BUILD_FILES):
        return True
    try:
        return any(n.endswith((".dist-info", ".egg-info")) for n in os.listdir(d))
    except OSError:
        return False


def unreachable_spans(path: str, files: Iterable[str]) -> list[tuple[int, int]]:
    """Line spans (first, last) of the definitions in ``path`` nothing in the scanned ``files`` reaches."""
    proj = project(files)
    if proj is None:
        return []
    return proj.spans(os.path.abspath(path))


#: rules whose findings claim a release (a bound, a domain, a noise draw, an accountant's input): in code
#: nothing runs they describe nothing that happens
RULES = frozenset({
    "DP202", "DP204", "DP112", "DP106", "DP305", "DP503", "DP113", "DP318", "DP525",
    # (dead46) a Gaussian draw at the Laplace scale, a sensitivity's norm, noise over the private size: a
    # calibration of a release that never happens
    "DP616", "DP108", "DP126", "DP731", "DP733",
    # (fp47) the δ of an accountant no code calls reaches no reported ε
    "DP110",
})


#: (fp47) rules whose finding is a calibration (a classical Gaussian σ, an accountant's δ) that matters only when
#: code instantiates its class or calls its method: a class or public method the project never names is dead
STRICT_RULES = frozenset({"DP503", "DP110"})
#: (S5 h48) rules whose finding also goes in a public method named nowhere of a module nothing reaches
DEAD_MODULE_METHOD_RULES = frozenset({"DP616"})
#: (T2 h48) rules whose finding (a bound or domain read from the private data) also goes in a public method of a
#: helper module that the project's text names nowhere but at its ``def``: the release it describes never runs
UNNAMED_METHOD_RULES = frozenset({"DP115", "DP204"})


def drop_unreachable(findings: list, files: Iterable[str], by_display: dict[str, str] | None = None,
                     rules: frozenset[str] = RULES, branch_rules: frozenset[str] | None = None) -> list:
    """``findings`` less those of ``rules`` inside unreachable definitions, and those of ``branch_rules``
    (default: every rule; a branch that never runs does nothing a rule could describe) inside branches
    no call or flag of the project selects. ``by_display`` maps a finding's (display) path to the file's
    absolute path."""
    files = list(files)
    proj = project(files)
    if proj is None or not findings:
        return findings
    out = []
    for f in findings:
        path = os.path.abspath((by_display or {}).get(f.path, f.path))
        if f.rule in rules and any(a <= f.line <= b for a, b in proj.spans(path, f.rule in STRICT_RULES)):
            continue
        if f.rule in rules and f.rule in DEAD_MODULE_METHOD_RULES and any(
                a <= f.line <= b for a, b in proj.dead_module_methods(path)):
            continue
        if f.rule in UNNAMED_METHOD_RULES and any(a <= f.line <= b for a, b in proj.unnamed_helper_methods(path)):
            continue
        if (f.rule in branch_rules if branch_rules is not None else not f.rule.startswith("DP0")) and any(a <= f.line <= b for a, b in proj.branch_spans(path)):
            continue
        out.append(f)
    return out
