"""The set of values the private data holds, kept as the domain or the codebook of a DP pipeline.

A loader or a ``preprocess.py`` with no privacy word in it reads each column's observed values
(``np.unique(df[c])``, ``df[c].unique()``, ``set(col)``, ``pd.factorize(col)``, ``Counter(col)``,
``col.value_counts().index``) and keeps them as the attribute's domain: a value-to-code mapping
(``{v: i for i, v in enumerate(values)}``, ``values.index(v)``), a per-column table entry
(``domain[c] = len(values)``, ``inverse[c] = uniques``), or a domain file the DP code reads back
(``f.write(",".join(np.unique(col)))``, ``json.dump``). The randomiser's alphabet, the histogram's
cells and the synthetic output's categories are then exactly the values present in the records:
a value only one record holds is in the domain, and so in the release, or not, with no noise.

:func:`sites` gives ``[line, col, what]`` at each such read (CPython ``ast``, never imports the
code). The project phase reports them as DP202 only in files the project's DP code reaches
(``preprocessing.join``), like the other preprocessing sites. Left out: the prediction target's
class set (``np.unique(y)``, ``set(labels)``), a table's schema (``df.columns``), values that are
only counted or looped over, and data named synthetic, public, held-out or a model's values.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable

from dpcheck.analysis.astfacts import func_name
from dpcheck.analysis.kept_domain import NOT_PRIVATE, _GIVEN, _LABELS, _LIBS, _SCHEMA, _words

#: calls that hand back (a container of) the values of their argument
_CARRY = frozenset({"list", "tuple", "sorted", "array", "asarray", "sort", "tolist", "dropna", "astype", "to_numpy",
                    "to_list", "copy", "flatten", "ravel", "squeeze"})
#: functions / methods whose result is the set of values their argument holds
_SET_FUNCS = frozenset({"unique", "set", "factorize", "Counter", "fromkeys"})
#: of those, the ones also used for index sets and dependency graphs (``dict_users[i] = set(idxs)``):
#: a value set only when enumerated into codes
_LOOSE = frozenset({"set", "Counter", "fromkeys"})
_SET_METHODS = frozenset({"unique", "factorize", "value_counts", "drop_duplicates"})
#: calls that write their argument out (a domain file the DP code reads back)
_WRITES = frozenset({"write", "writelines", "dump", "dumps", "save", "savetxt", "to_csv", "to_json"})
#: words of a function returning the domain it builds
_DOMAIN_WORDS = frozenset({"domain", "domains", "alphabet", "alphabets", "codebook", "vocab", "vocabulary",
                           "categories", "levels", "mapping", "encoding", "encoder"})
#: words of data that is not the private records (beside ``kept_domain.NOT_PRIVATE``)
_NOT_DATA = frozenset({"word", "words", "token", "tokens", "text", "texts", "file", "files", "path", "paths",
                       "line", "lines", "key", "keys", "name", "names", "cols", "columns",
                       "attrs", "attributes", "features", "fields",
                       "id", "ids", "idx", "index", "indices", "node", "nodes", "edge", "edges", "client",
                       "clients", "user", "users", "item", "items", "group", "groups", "split", "splits",
                       "dtype", "dtypes", "type", "types", "arg", "args", "param", "params", "str", "string", "char", "chars", "query", "queries", "workload", "marginal",
                       "marginals", "clique", "cliques", "cluster", "clusters", "mapping", "map", "partition",
                       "grouping", "pii", "gt_"})
#: words of an identifier column (users, items, stays, clients): its values key the rows
_IDS = frozenset({"id", "ids", "uid", "iid", "user", "users", "item", "items", "movie", "movieid", "userid",
                  "itemid", "client", "clients", "key", "keys", "index", "idx"})
_WHAT = "the set of values the data holds kept as "
#: (T2 h48) a ranking's top values (``value_counts().nlargest(k)``)
_TOP = frozenset({"nlargest", "head"})


def _kept_categories(node: ast.AST, held: dict[str, ast.Call]) -> ast.Call | None:
    """(T2 h48) The value-set read behind a keep-or-merge of categories: ``v if v in top else "OTHER"``,
    ``col.where(col.isin(top), "Other")``, ``np.where(col.isin(top), col, "Other")``: the categories that
    survive into the DP pipeline (and its release) are those the records hold, the others merged."""
    def member_set(test: ast.AST) -> ast.Call | None:
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.In, ast.NotIn)):
            return _reads(test.comparators[0], held)
        if isinstance(test, ast.Call) and func_name(test.func) == "isin" and len(test.args) == 1:
            return _reads(test.args[0], held)
        if isinstance(test, ast.UnaryOp):
            return member_set(test.operand)
        return None

    if isinstance(node, ast.IfExp) and (isinstance(node.body, ast.Constant) or isinstance(node.orelse, ast.Constant)):
        return member_set(node.test)
    if isinstance(node, ast.Call) and func_name(node.func) in {"where", "mask"} and node.args \
            and any(isinstance(a, ast.Constant) for a in [*node.args[1:], *(k.value for k in node.keywords)]):
        return member_set(node.args[0])
    return None


def may_hold(source: str) -> bool:
    """Cheap text gate of :func:`sites`."""
    return "set(" in source or "factorize(" in source or "unique(" in source


def _root(expr: ast.AST) -> tuple[str | None, bool]:
    """The named value ``expr`` reads the records from, and whether it reads a table's schema."""
    node = expr
    schema = False
    for _ in range(16):
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and _words(key.value) & _IDS:
                schema = True  # an identifier column: the rows' keys, not an attribute's domain
            node = node.value
        elif isinstance(node, ast.Attribute):
            if _words(node.attr) & _IDS:
                schema = True
            if node.attr in _SCHEMA:
                schema = True
            if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                return node.attr, schema
            if node.attr in {"values", "loc", "iloc", "str", "cat"}:
                node = node.value
            elif isinstance(node.value, ast.Name) and node.value.id not in _LIBS:
                node = node.value
            else:
                return node.attr, schema
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and func_name(node.func) in _CARRY | {"fillna", "map", "apply"} \
                    and not (isinstance(node.func.value, ast.Name) and node.func.value.id in _LIBS):
                node = node.func.value
            elif func_name(node.func) in _CARRY and node.args:
                node = node.args[0]
            else:
                return None, schema
        elif isinstance(node, ast.Name):
            return node.id, schema
        else:
            return None, schema
    return None, schema


def _private(data: ast.AST) -> bool:
    name, schema = _root(data)
    if name is None or schema or name in _LIBS:
        return False
    w = _words(name)
    return not w & (NOT_PRIVATE | _LABELS | _GIVEN | _NOT_DATA) and name not in {"_", "i", "j", "v", "x_"} \
        and not re.fullmatch(r"y+\d*", name)  # ``yy``, ``y2``: the prediction target's class set


def value_set(expr: ast.AST) -> ast.Call | None:
    """The read of ``expr`` (through ``sorted``/``list``/``.tolist()``…) when it is the set of values
    private-looking data holds: ``np.unique(d)``, ``d.unique()``, ``set(d)``, ``pd.factorize(d)``,
    ``d.value_counts().index``, ``Counter(d).keys()``, ``dict.fromkeys(d)``."""
    node = expr
    for _ in range(8):
        if isinstance(node, ast.Attribute) and node.attr == "index" and isinstance(node.value, ast.Call) \
                and func_name(node.value.func) == "value_counts":
            node = node.value
            continue
        # (T2 h48) the most frequent values: ``col.value_counts().nlargest(k).index``, ``.head(k).index``
        if isinstance(node, ast.Attribute) and node.attr == "index" and isinstance(node.value, ast.Call) \
                and func_name(node.value.func) in _TOP and isinstance(node.value.func, ast.Attribute) \
                and isinstance(node.value.func.value, ast.Call) and func_name(node.value.func.value.func) == "value_counts":
            node = node.value.func.value
            continue
        if not isinstance(node, ast.Call):
            return None
        name = func_name(node.func)
        method = isinstance(node.func, ast.Attribute) and not (
            isinstance(node.func.value, ast.Name) and node.func.value.id in _LIBS | {"dict"})
        if name in {"keys"} and method and isinstance(node.func.value, ast.Call) \
                and func_name(node.func.value.func) == "Counter":
            node = node.func.value
            continue
        if name in _CARRY:
            if method and name not in {"list", "tuple", "sorted", "set"}:
                node = node.func.value  # type: ignore[union-attr]
                continue
            if node.args and not method:
                node = node.args[0]
                continue
            return None
        if method and name in _SET_METHODS and name != "value_counts" or name == "value_counts" and method \
                and node is not expr:
            data = node.func.value  # type: ignore[union-attr]
            return node if _private(data) else None
        if not method and name in _SET_FUNCS and node.args and not node.keywords \
                and not isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.List,
                                                  ast.Tuple, ast.Constant, ast.JoinedStr)):
            return node if _private(node.args[0]) else None
        return None
    return None


def _reads(expr: ast.AST, held: dict[str, ast.Call]) -> ast.Call | None:
    """The value-set read ``expr`` is (inline) or holds (through a name bound to one)."""
    found = value_set(expr)
    if found is not None:
        return found
    node = expr
    for _ in range(4):
        if isinstance(node, ast.Name):
            return held.get(node.id)
        if isinstance(node, ast.Call) and func_name(node.func) in _CARRY | {"len"}:
            if isinstance(node.func, ast.Attribute) and func_name(node.func) not in {"list", "sorted", "tuple"}:
                node = node.func.value
            elif node.args:
                node = node.args[0]
            else:
                return None
        else:
            return None
    return None


def _enumerated(iterable: ast.AST, held: dict[str, ast.Call]) -> tuple[ast.Call, int] | None:
    """``enumerate(S)`` (-> S, 1: the value is the second target) or ``zip(..., S, ...)`` (-> S, its
    position) over a value set ``S``."""
    if isinstance(iterable, ast.Call) and func_name(iterable.func) == "enumerate" and iterable.args:
        found = _reads(iterable.args[0], held)
        return (found, 1) if found is not None else None
    if isinstance(iterable, ast.Call) and func_name(iterable.func) == "zip" and iterable.args:
        for position, arg in enumerate(iterable.args):
            found = _reads(arg, held)
            if found is not None:
                return found, position
    return None


def _codes(iterable: ast.AST, target: ast.AST, held: dict[str, ast.Call]) -> tuple[ast.Call, str, str] | None:
    """A loop pairing each observed value with a code: the read, the value's name, the code's name."""
    found = _enumerated(iterable, held)
    if found is None or not (isinstance(target, ast.Tuple) and len(target.elts) == 2
                             and all(isinstance(e, ast.Name) for e in target.elts)):
        return None
    read, position = found
    if isinstance(iterable, ast.Call) and func_name(iterable.func) == "zip" and not (
            len(iterable.args) == 2 and isinstance(iterable.args[1 - position], ast.Call)
            and func_name(iterable.args[1 - position].func) in {"range", "arange", "count"}):
        return None  # values zipped with other things (client frames, fake values): not codes
    names = [e.id for e in target.elts]  # type: ignore[attr-defined]
    return read, names[position], names[1 - position]


def _sorted(expr: ast.AST, ordered: set[str]) -> bool:
    """An ordered list of the values (``sorted(set(col))``, a name bound to one): a codebook, not a set."""
    if isinstance(expr, ast.Name):
        return expr.id in ordered
    return isinstance(expr, ast.Call) and func_name(expr.func) in {"sorted", "sort"}


def _scope_sites(body: list[ast.stmt], name: str, out: dict[int, list[object]],
                 inherited: tuple[dict[str, ast.Call], set[str]] = ({}, set())) -> tuple[dict[str, ast.Call], set[str]]:
    """Record the sites of one scope; hand back its value-set names for the functions nested in it."""
    held: dict[str, ast.Call] = dict(inherited[0])
    ordered: set[str] = set(inherited[1])
    #: names bound to text or a structure that holds a value set (``line = ",".join(np.unique(c))``)
    mentions: dict[str, ast.Call] = {}
    nodes = [n for stmt in body for n in _walk(stmt)]
    for node in nodes:  # names bound to a value set (``vals = np.unique(col)``, ``codes, uniq = pd.factorize(c)``)
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found = _reads(node.value, held)
                    if found is not None:
                        held[target.id] = found
                        if _sorted(node.value, ordered):
                            ordered.add(target.id)
                    else:
                        held.pop(target.id, None)
                    inner = next((f for sub in ast.walk(node.value) if isinstance(sub, ast.Call)
                                  for f in [value_set(sub)] if f is not None), None)
                    if inner is not None:
                        mentions[target.id] = inner
                elif isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(node.value, ast.Call) \
                        and func_name(node.value.func) == "factorize" and isinstance(target.elts[1], ast.Name):
                    found = value_set(node.value)
                    if found is not None:
                        held[target.elts[1].id] = found
    for node in nodes:
        found: ast.Call | None = None
        what = ""
        if isinstance(node, ast.DictComp) and len(node.generators) == 1:
            gen = node.generators[0]
            coded = _codes(gen.iter, gen.target, held)
            if coded is not None and {_name(node.key), _name(node.value)} == set(coded[1:]):
                found = coded[0]
            what = "a value-to-code mapping"
        elif isinstance(node, ast.Call) and func_name(node.func) == "dict" and len(node.args) == 1 \
                and isinstance(node.args[0], ast.Call) and func_name(node.args[0].func) == "zip":
            coded = _codes(node.args[0], ast.Tuple(elts=[ast.Name("a"), ast.Name("b")]), held)
            found = coded[0] if coded is not None else None
            what = "a value-to-code mapping"
        elif isinstance(node, ast.For):
            coded = _codes(node.iter, node.target, held)
            if coded is not None and any(
                    isinstance(n, ast.Assign) and any(
                        isinstance(t, ast.Subscript) and {x.id for x in ast.walk(t.slice) if isinstance(x, ast.Name)}
                        & set(coded[1:]) for t in n.targets) and {
                        x.id for x in ast.walk(n.value) if isinstance(x, ast.Name)} & set(coded[1:]) | (
                        {"const"} if isinstance(n.value, ast.Constant) else set())
                    for stmt in node.body for n in ast.walk(stmt)):
                found = coded[0]
            what = "a value-to-code mapping"
        elif isinstance(node, ast.Call) and func_name(node.func) == "index" and isinstance(node.func, ast.Attribute) \
                and len(node.args) == 1:
            found = _reads(node.func.value, held)
            what = "the codes of a value (its position among the observed values)"
            if found is not None and func_name(found.func) in _LOOSE and not _sorted(node.func.value, ordered):
                found = None
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            found = _reads(node.value, held)
            what = "a per-attribute domain entry"
            if found is not None and func_name(found.func) in _LOOSE:
                found = None
        elif isinstance(node, ast.Call) and func_name(node.func) in _WRITES:
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                for sub in ast.walk(arg):
                    if isinstance(sub, (ast.Name, ast.Call)):
                        found = (_reads(sub, held) or mentions.get(sub.id)) if isinstance(sub, ast.Name) \
                            else value_set(sub)
                        if found is not None:
                            break
                if found is not None:
                    break
            what = "a domain written out for the DP code to read back"
        elif _kept_categories(node, held) is not None:
            found = _kept_categories(node, held)
            what = "the categories that survive, the others merged into one"
        elif isinstance(node, ast.Call) and any(isinstance(a, ast.Lambda) for a in node.args) and any(
                _kept_categories(sub, held) is not None for a in node.args if isinstance(a, ast.Lambda)
                for sub in ast.walk(a.body)):
            found = next(f for a in node.args if isinstance(a, ast.Lambda) for sub in ast.walk(a.body)
                         for f in [_kept_categories(sub, held)] if f is not None)
            what = "the categories that survive, the others merged into one"
        elif isinstance(node, ast.Return) and node.value is not None and _words(name) & _DOMAIN_WORDS:
            found = _reads(node.value, held)
            what = f"the domain `{name}` returns"
        if found is not None and found.lineno not in out:
            out[found.lineno] = [found.lineno, found.col_offset + 1,
                                 f"{_WHAT}{what} (the mechanism's domain or the release's categories are then "
                                 f"exactly the values present in the records)"]
    return held, ordered


def _name(expr: ast.AST) -> str | None:
    return expr.id if isinstance(expr, ast.Name) else None


def _walk(stmt: ast.AST):
    """The nodes of ``stmt`` in source order, not entering nested functions or classes."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        yield node
        children = [c for c in ast.iter_child_nodes(node)
                    if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))]
        stack.extend(reversed(children))


def _dead_functions(tree: ast.Module) -> set[int]:
    """Top-level functions of a script (a module that runs a loop, or calls one of its own functions,
    at its top level) that nothing in it names: left-over helpers, they run on nothing."""
    own = {f.name for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    runs = any(isinstance(s, (ast.For, ast.While)) or isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
               and isinstance(s.value.func, ast.Name) and s.value.func.id in own for s in tree.body)
    if not runs:
        return set()
    named = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)} | {
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return {id(f) for f in tree.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name not in named}


def sites(tree: ast.Module, evaluating: Callable[[list[ast.stmt], str], bool]) -> list[list[object]]:
    """``[line, col, what]`` of each read of the data's value set kept as a domain or codebook; ``evaluating``
    tells a function that scores or reports (preprocessing's test), whose reads release nothing."""
    out: dict[int, list[object]] = {}
    top = [s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    _scope_sites(top, "", out)
    dead = _dead_functions(tree)
    stack: list[tuple[ast.AST, tuple[dict[str, ast.Call], set[str]]]] = [(tree, ({}, set()))]
    while stack:
        node, inherited = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if evaluating(child.body, child.name) or id(child) in dead:
                    continue
                stack.append((child, _scope_sites(child.body, child.name, out, inherited)))
            elif isinstance(child, ast.ClassDef):
                stack.append((child, ({}, set())))
            elif not isinstance(child, ast.Lambda):
                stack.append((child, inherited))
    return [out[k] for k in sorted(out)]
