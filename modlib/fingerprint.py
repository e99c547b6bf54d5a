"""What a stored result's numbers depend on: the code its computing function can reach.

Used by :mod:`modlib.results` for every chapter's stored results (see the contributor notes).

A result records the fingerprint of its *entry*, the function that computes it (e.g. chapter 1's
``run_group``). :func:`of` starts from the entry and follows every top-level function, class and
constant of ``modlib`` that the code names, through imports, module-qualified names and the methods
of the classes it reaches, and hashes each of them (a *unit*) as code only:

- comments, layout and docstrings do not count, nor a module's ``SETTINGS`` table (each result's
  config records the settings it used);
- local variables are renamed in order of first appearance, so renaming one changes nothing; a
  comprehension's variable, and a lambda's or inner function's argument, is its own in that
  comprehension, lambda or function only, not a module-level name of the same spelling;
- a reference to another unit is written without the module it lives in (``masks.attach`` and a
  bare ``attach`` imported from it read the same), so moving a unit to another module, or a module
  into a package, changes nothing; which unit each reference reaches is hashed too (``links``);
- units the entry cannot reach (an unused helper, another chapter's code) do not count.

Anything else that could change a number does: a constant, a default, a loss term, a new call.
Methods are followed by name (``x.step`` reaches every reached class's ``step``), dunder methods and
``forward``/``backward`` always, and every method of a class with a base outside ``modlib`` (a
``torch.nn.Module`` is called by torch), so the set reached may be larger than what runs, never
smaller. Modules that store, check, draw or report results compute none and are not followed
(:data:`NOT_FOLLOWED`).

The static rule is checked against what executes: :func:`recording` records the code object of
every ``modlib`` function that runs while a result is computed, and :func:`outside` names those
that fall outside the result's fingerprint, with the module-level values they read
(:func:`values_read`); a test does so for smoke results of every chapter.

The source hashed is the source the process runs: :func:`install` (called when ``modlib`` is
imported) compiles every ``modlib`` module from a copy of its bytes taken as it is imported, so a
file edited while a long run goes on does not lend the run its new fingerprint. Modules not yet
imported are read from disk.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import copy
import dis
import functools
import hashlib
import importlib.abc
import importlib.machinery
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "modlib"
PACKAGE_DIR = Path(__file__).resolve().parent
# Modules (by their last name) that store, check, draw or report results and compute none.
NOT_FOLLOWED = frozenset({"results", "fingerprint", "batch", "jobs", "restamp", "migrate", "profiles", "student",
                          "plots", "widgets", "findings", "checks", "figures", "explorer", "exercises"})
IMPLICIT = frozenset({"forward", "backward", "setup_context"})  # methods torch calls by itself
SOURCES: dict[str, bytes] = {}  # module -> the bytes it was compiled from in this process


# ---------------------------------------------------------------- the source each module runs

class _SnapshotLoader(importlib.machinery.SourceFileLoader):
    """Compiles a ``modlib`` module from bytes it keeps in :data:`SOURCES` (no bytecode cache)."""

    def get_code(self, fullname):
        source = self.get_data(self.path)
        SOURCES[fullname] = source
        return self.source_to_code(source, self.path)


class _SnapshotFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith(PACKAGE + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = _SnapshotLoader(spec.loader.name, spec.loader.path)
        return spec


def install() -> None:
    """Keep the source of every ``modlib`` module imported from now on (idempotent)."""
    if not any(isinstance(f, _SnapshotFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SnapshotFinder())


def module_file(module: str) -> Path | None:
    """The source file of ``module`` (``"modlib.masks"``, ``"modlib.weight_masks"``), or None."""
    if module != PACKAGE and not module.startswith(PACKAGE + "."):
        return None
    parts = module.split(".")[1:]
    base = PACKAGE_DIR.joinpath(*parts)
    for candidate in (base.with_suffix(".py") if parts else None, base / "__init__.py"):
        if candidate is not None and candidate.is_file():
            return candidate
    return None


def source(module: str) -> bytes:
    """The source ``module`` runs in this process if it was imported, else the file on disk."""
    if module in SOURCES and module in sys.modules:
        return SOURCES[module]
    path = module_file(module)
    if path is None:
        raise ValueError(f"{module!r} is not a module of {PACKAGE}")
    return path.read_bytes()


def modules() -> list[str]:
    """Every module of the package, by name."""
    out = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
        out.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


# ---------------------------------------------------------------- one module's units

@dataclass(eq=False)
class Unit:
    """A top-level function, class (without its methods), method, constant, or a module's other
    top-level statements, with the names its code uses."""

    module: str
    name: str  # "f", "C", "C.m", "X" (a constant), "<top-level code>"
    nodes: list
    bases_external: bool = False
    digest: str = ""
    refs: list = field(default_factory=list)  # [(token, module, name)] references to other units
    attrs: set = field(default_factory=set)  # attribute names and strings used: reach methods


@dataclass
class _Module:
    name: str
    units: dict  # top-level name -> Unit
    methods: dict  # class name -> {method name -> Unit}
    aliases: dict  # local name -> ("module", m) | ("name", m, attr)
    other: Unit | None


def _package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def _aliases(tree: ast.Module, module: str, is_package: bool) -> dict:
    """The names under which ``module`` imports other ``modlib`` modules or their names (anywhere in
    the file, as the old store did: an import inside a function counts too)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == PACKAGE or a.name.startswith(PACKAGE + "."):
                    out[a.asname or a.name.split(".")[0]] = ("module", a.asname and a.name or PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = _package_of(module, is_package)
                for _ in range(node.level - 1):
                    pkg = pkg.rpartition(".")[0]
                base = f"{pkg}.{base}" if base else pkg
            if base != PACKAGE and not base.startswith(PACKAGE + "."):
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                out[a.asname or a.name] = ("module", sub) if module_file(sub) else ("name", base, a.name)
    return out


def _is_settings(node: ast.stmt) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return any(getattr(t, "id", None) in ("SETTINGS", "__all__") for t in targets)


def _is_main_guard(node: ast.stmt) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and getattr(node.test.left, "id", None) == "__name__")


def _parse(module: str, text: bytes) -> _Module:
    """The units of ``module`` with source ``text`` (their digests are made when first needed)."""
    tree = ast.parse(text)
    is_package = (module_file(module) or Path()).name == "__init__.py"
    units, methods, other = {}, {}, []
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_main_guard(node):
            continue
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module's docstring
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            units[node.name] = Unit(module, node.name, [node])
        elif isinstance(node, ast.ClassDef):
            own = {n.name: Unit(module, f"{node.name}.{n.name}", [n]) for n in node.body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            shell = copy.copy(node)
            shell.body = [n for n in node.body if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            units[node.name], methods[node.name] = Unit(module, node.name, [shell]), own
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_settings(node):
            continue
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and all(
                isinstance(t, (ast.Name, ast.Tuple)) for t in (getattr(node, "targets", None) or [node.target])):
            targets = getattr(node, "targets", None) or [node.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            unit = Unit(module, ",".join(names), [node])
            units.update({n: unit for n in names})
        else:
            other.append(node)
    return _Module(module, units, methods, _aliases(tree, module, is_package),
                   Unit(module, "<top-level code>", other) if other else None)


_STATE = [""]  # the package's sources that the modules parsed now were read under


def _state() -> str:
    """A digest of every module's source (as :func:`source` reads it): what a unit's references
    reach depends on other modules too, so parsed modules are kept per state."""
    h = hashlib.sha256()
    for module in modules():
        h.update(module.encode() + b"\0" + source(module) + b"\0")
    return h.hexdigest()


@functools.lru_cache(maxsize=4)
def _parsed(state: str) -> dict:
    return {}  # module -> _Module, filled as they are needed


def _index(module: str) -> _Module:
    cache = _parsed(_STATE[0])
    if module not in cache:
        cache[module] = _parse(module, source(module))
    return cache[module]


def _ready(unit: Unit) -> Unit:
    """``unit`` with its digest, references and attribute names made."""
    if not unit.digest:
        _canonicalise(unit, _index(unit.module))
    return unit


# ---------------------------------------------------------------- code only, names made neutral

_BUILTINS = frozenset(dir(builtins))


def _bound_otherwise(nodes) -> set[str]:
    """Names a unit binds other than by assignment: arguments, nested defs and classes, imports of
    other packages, global and nonlocal declarations. These keep their spelling. The unit's own
    ``def``/``class`` name is not among them (inside a method ``conditions``, a bare ``conditions``
    is the module's), nor a name imported from ``modlib`` in the unit's body (it is followed, see
    :func:`_unit_aliases`)."""
    out = set()
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.arg):
                out.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not root:
                out.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and not _imports_modlib(node):
                out |= {a.asname or a.name.split(".")[0] for a in node.names}
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                out |= set(node.names)
    return out


def _binds(scope) -> set[str]:
    """Names ``scope`` binds other than by assignment, in its own body only: a function's or
    lambda's arguments, and the functions and classes defined, other packages imported and names
    declared nonlocal directly in it (not inside a function, lambda or class it defines,
    whose own names are bound there). A function's or class's own name is bound where it is
    defined, not in it. ``scope`` may also be a statement at a module's or class's top level."""
    out = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        out |= {x.arg for x in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg] if x is not None}
        todo = list(scope.body) if isinstance(scope.body, list) else [scope.body]
    elif isinstance(scope, ast.ClassDef):
        todo = list(scope.body)
    else:
        todo = [scope]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue  # its decorators, defaults and bases bind nothing here that counts
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not _imports_modlib(node):
            out |= {a.asname or a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.Nonlocal):
            out |= set(node.names)  # a ``global`` name is the module's: it stays followed
        todo.extend(ast.iter_child_nodes(node))
    return out


def _imports_modlib(node: ast.Import | ast.ImportFrom) -> bool:
    """Whether an import statement imports from ``modlib`` (a relative import does too)."""
    if isinstance(node, ast.ImportFrom):
        return bool(node.level) or node.module == PACKAGE or (node.module or "").startswith(PACKAGE + ".")
    return any(a.name == PACKAGE or a.name.startswith(PACKAGE + ".") for a in node.names)


def _unit_aliases(unit: Unit) -> dict:
    """The names under which the unit's own body imports ``modlib`` modules or their names (as
    :func:`_aliases`): they mean what the import says, before any module-level name."""
    is_package = (module_file(unit.module) or Path()).name == "__init__.py"
    return _aliases(ast.Module(body=list(unit.nodes), type_ignores=[]), unit.module, is_package)


def _locals(unit: Unit, mod: _Module) -> dict[str, str]:
    """Local variables of a function or method unit -> neutral names, in order of first appearance.
    Only names that nothing outside the unit could mean (not a module-level name, an import or a
    builtin) and that are bound only by assignment are renamed, so the renaming is one-to-one and
    cannot turn one program into another."""
    if not isinstance(unit.nodes[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    nodes = list(ast.walk(unit.nodes[0]))
    if any(isinstance(n, ast.Call) and getattr(n.func, "id", None) in ("locals", "vars", "eval", "exec")
           for n in nodes):
        return {}
    fixed = _bound_otherwise(unit.nodes) | set(mod.units) | set(mod.aliases) | _BUILTINS
    stored = [n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
    stored += [n.name for n in nodes if isinstance(n, ast.ExceptHandler) and n.name]
    order = {}
    for n in nodes:
        name = n.id if isinstance(n, ast.Name) else (n.name if isinstance(n, ast.ExceptHandler) else None)
        if name and name in stored and name not in fixed and name not in order:
            order[name] = f"\u27e8v{len(order)}\u27e9"
    return order


def _resolve(mod: _Module, name: str, depth: int = 0, aliases: dict | None = None):
    """What ``name`` means at the top of ``mod`` (or first by ``aliases``, a unit's own imports):
    ("unit", module, name), ("module", module), ("external", module, name) or None (a builtin,
    another package, or nothing)."""
    if depth > 20:
        return None
    alias = (aliases or {}).get(name)
    if alias is None and name in mod.units:
        return ("unit", mod.name, name)
    alias = alias or mod.aliases.get(name)
    if alias is None:
        return None
    if alias[0] == "module":
        return alias
    _, target, attr = alias
    if module_file(target) is None or target.rsplit(".", 1)[-1] in NOT_FOLLOWED:
        return ("external", target, attr)
    return _resolve(_index(target), attr, depth + 1)


def _member(module: str, attr: str):
    """``module.attr`` as a unit, a submodule, or an external name."""
    sub = f"{module}.{attr}"
    if module_file(sub) is not None:
        return ("module", sub)
    if module.rsplit(".", 1)[-1] in NOT_FOLLOWED or module_file(module) is None:
        return ("external", module, attr)
    return _resolve(_index(module), attr) or ("external", module, attr)


def _canonicalise(unit: Unit, mod: _Module) -> None:
    """Set ``unit.digest``, ``unit.refs`` and ``unit.attrs`` from its code with docstrings removed,
    locals renamed and references to other units written without their module."""
    renamed = _locals(unit, mod)
    own_imports = _unit_aliases(unit)
    refs, attrs = [], set()
    # names bound other than by assignment around the node visited: a function's or lambda's
    # arguments in its body only, a comprehension's variables in it only (see Neutral)
    top = set().union(*(_binds(n) for n in unit.nodes
                        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))))
    inner: list[set] = [top]

    def meaning(node):
        """("unit"|"module"|"external", ...) when ``node`` names something of modlib."""
        if isinstance(node, ast.Name) and node.id not in renamed and node.id not in inner[-1]:
            return _resolve(mod, node.id, aliases=own_imports)
        if isinstance(node, ast.Attribute):
            base = meaning(node.value)
            if base and base[0] == "module":
                return _member(base[1], node.attr)
        return None

    class Neutral(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in renamed:
                return ast.copy_location(ast.Name(id=renamed[node.id], ctx=node.ctx), node)
            if isinstance(node.ctx, ast.Load):
                return self._named(node) or node
            return node

        def visit_Attribute(self, node):
            named = self._named(node) if isinstance(node.ctx, ast.Load) else None
            if named is not None:
                return named
            attrs.add(node.attr)
            self.generic_visit(node)
            return node

        def _named(self, node):
            what = meaning(node)
            if what is None:
                return None
            if what[0] == "unit":
                token = f"\u27e8{PACKAGE}\u27e9{what[2]}"
                refs.append((token, what[1], what[2]))
            elif what[0] == "module":
                token = f"\u27e8{PACKAGE} module\u27e9"
                if what[1].rsplit(".", 1)[-1] not in NOT_FOLLOWED:
                    refs.append((token, what[1], None))  # a module used as a value: all of it counts
            else:
                token = f"\u27e8{PACKAGE}\u27e9{what[2]}"  # a name of a module not followed
            return ast.copy_location(ast.Name(id=token, ctx=ast.Load()), node)

        def _comprehension(self, node, results):
            """A comprehension's variables are its own (a ``run`` in ``[... for run in xs]`` is
            not the module's ``run``); its first iterable is evaluated outside it."""
            outer, bound = inner[-1], set()
            for i, gen in enumerate(node.generators):
                if i > 0:
                    inner.append(outer | bound)
                gen.iter = self.visit(gen.iter)
                if i > 0:
                    inner.pop()
                bound = (bound if i else set()) | {n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)}
                inner.append(outer | bound)
                gen.target = self.visit(gen.target)
                gen.ifs = [self.visit(x) for x in gen.ifs]
                inner.pop()
            inner.append(outer | bound)
            for name in results:
                setattr(node, name, self.visit(getattr(node, name)))
            inner.pop()
            return node

        def _statements(self, body):
            out = []
            for stmt in body:
                stmt = self.visit(stmt)
                out += stmt if isinstance(stmt, list) else [] if stmt is None else [stmt]
            return out

        def _function(self, node):
            """A function's or lambda's arguments, and what it defines, are its own names in its
            body only (in ``lambda run: run`` the ``run`` is the argument, but a ``run(...)`` next to
            the lambda is the module's); its decorators, defaults and annotations are evaluated
            where it is defined."""
            outer, a = inner[-1], node.args
            for arg in [*a.posonlyargs, *a.args, a.vararg, *a.kwonlyargs, a.kwarg]:
                if arg is not None and arg.annotation is not None:
                    arg.annotation = self.visit(arg.annotation)
            a.defaults = [self.visit(d) for d in a.defaults]
            a.kw_defaults = [d if d is None else self.visit(d) for d in a.kw_defaults]
            if not isinstance(node, ast.Lambda):
                node.decorator_list = [self.visit(d) for d in node.decorator_list]
                node.returns = node.returns if node.returns is None else self.visit(node.returns)
            inner.append(outer | _binds(node))
            node.body = self.visit(node.body) if isinstance(node, ast.Lambda) else self._statements(node.body)
            inner.pop()
            return node

        visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

        def visit_ClassDef(self, node):
            """A class's bases and decorators are evaluated where it is defined, its body with the
            names it binds."""
            outer = inner[-1]
            node.bases = [self.visit(b) for b in node.bases]
            node.keywords = [self.visit(k) for k in node.keywords]
            node.decorator_list = [self.visit(d) for d in node.decorator_list]
            inner.append(outer | _binds(node))
            node.body = self._statements(node.body)
            inner.pop()
            return node

        def visit_ListComp(self, node):
            return self._comprehension(node, ("elt",))

        visit_SetComp = visit_GeneratorExp = visit_ListComp

        def visit_DictComp(self, node):
            return self._comprehension(node, ("key", "value"))

        def visit_ExceptHandler(self, node):
            if node.name in renamed:
                node.name = renamed[node.name]
            self.generic_visit(node)
            return node

        def visit_ImportFrom(self, node):
            if node.level or (node.module or "").startswith(PACKAGE):
                return ast.ImportFrom(module=PACKAGE, names=node.names, level=0)
            return node

        def visit_Import(self, node):
            names = [ast.alias(name=PACKAGE if a.name.startswith(PACKAGE) else a.name, asname=a.asname)
                     for a in node.names]
            return ast.Import(names=names)

        def visit_Constant(self, node):
            if isinstance(node.value, str) and node.value.isidentifier():
                attrs.add(node.value)  # getattr(obj, "name") may reach a method
            return node

    dumps = []
    for root in unit.nodes:
        root = _without_docstrings(copy.deepcopy(root))
        dumps.append(dump(Neutral().visit(root)))
    if len(unit.nodes) == 1 and isinstance(unit.nodes[0], ast.ClassDef):
        bases = [meaning(b) for b in unit.nodes[0].bases]
        unit.bases_external = any(b is None or b[0] != "unit" for b, node in zip(bases, unit.nodes[0].bases)
                                  if getattr(node, "id", None) != "object")
    text = f"{unit.name}\n" + "\n".join(dumps)
    unit.digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    unit.refs, unit.attrs = refs, attrs


NEWER_FIELDS = {"type_params"}  # fields Python 3.12 added to the tree (empty unless the code uses them)


def dump(node) -> str:
    """``node`` as text, the same on every Python this book supports: what ``ast.dump(node,
    include_attributes=False)`` prints on Python 3.11, the version the store's fingerprints were
    first taken with. ``ast.dump`` itself prints otherwise on 3.12 (an empty ``type_params=[]``
    in every function and class) and on 3.13 (no empty lists or None), which would make every
    stored result look stale to a reader on another Python than the one that made it."""
    if isinstance(node, list):
        return "[" + ", ".join(dump(x) for x in node) + "]"
    if not isinstance(node, ast.AST):
        return repr(node)
    fields = []
    for name in node._fields:
        value = getattr(node, name, None)
        if (value is None and getattr(type(node), name, ...) is None) or (name in NEWER_FIELDS and value == []):
            continue  # an optional field left empty (3.11 prints none), or one 3.11 does not have
        fields.append(f"{name}={dump(value)}")
    return f"{type(node).__name__}({', '.join(fields)})"


def _without_docstrings(tree):
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


# ---------------------------------------------------------------- what an entry reaches

def _entry(code) -> tuple[str, list[str] | None]:
    """``(module, [top-level names] or None for the whole module)`` of an entry: a function or class
    of modlib, or a string ``"modlib.x:name"`` / ``"modlib.x"``."""
    if callable(code) and not isinstance(code, str):
        code = getattr(code, "func", code)  # functools.partial
        module, qualname = getattr(code, "__module__", ""), getattr(code, "__qualname__", "")
        if module == "__main__":  # run as ``python -m modlib.x``
            module = getattr(getattr(sys.modules["__main__"], "__spec__", None), "name", module)
        name = qualname.split(".<locals>")[0]
        if module_file(module) is None:
            raise ValueError(f"code={code!r} is not a function of {PACKAGE}")
        return module, [name]
    if not isinstance(code, str):
        raise ValueError(f"code={code!r}: expected a function of {PACKAGE} or 'module:name'")
    module, _, name = code.partition(":")
    if module_file(module) is None:
        known = ", ".join(m for m in modules() if m.rsplit(".", 1)[-1] not in NOT_FOLLOWED)
        raise ValueError(f"code={code!r} is not a module of {PACKAGE}; choose one of {known}")
    return module, [name] if name else None


def describe(code) -> str:
    """``"module:name"`` of an entry, as results record it."""
    module, names = _entry(code)
    return f"{module}:{names[0]}" if names else module


def reach(code) -> list[Unit]:
    """Every unit the entry ``code`` can reach (see the module's docstring)."""
    _STATE[0] = _state()
    module, names = _entry(code)
    mod = _index(module)
    if names is None:
        start = list({id(u): u for u in mod.units.values()}.values()) + ([mod.other] if mod.other else [])
    else:
        missing = [n for n in names if n.split(".")[0] not in mod.units]
        if missing:
            raise ValueError(f"code={code!r}: {module} has no top-level {missing[0]!r}; "
                             f"choose one of {', '.join(sorted(mod.units))}")
        start = [mod.units[n.split(".")[0]] for n in names]
    seen: dict[int, Unit] = {}
    attrs: set[str] = set()
    classes: list[tuple[_Module, Unit]] = []
    todo = list(start)
    while todo:
        while todo:
            unit = _ready(todo.pop())
            if id(unit) in seen:
                continue
            seen[id(unit)] = unit
            attrs |= unit.attrs
            owner = _index(unit.module)
            if owner.other is not None and id(owner.other) not in seen:
                todo.append(owner.other)
            if unit.name in owner.methods:
                classes.append((owner, unit))
            for _, target_module, target in unit.refs:
                target_mod = _index(target_module)
                if target is None:  # a whole module used as a value
                    todo += list(target_mod.units.values())
                else:
                    todo.append(target_mod.units[target])
        for owner, cls in classes:  # methods reached by name, implicitly, or through torch
            for name, method in owner.methods[cls.name].items():
                if id(method) not in seen and (cls.bases_external or name in attrs or name in IMPLICIT
                                              or (name.startswith("__") and name.endswith("__"))):
                    todo.append(method)
    return sorted(seen.values(), key=lambda u: (u.name, u.digest))


def of(code) -> list[str]:
    """The fingerprint of the entry ``code``: ``["name digest", ...]`` for every unit it reaches,
    and a last entry hashing which unit each reference reaches (modules that are imported are read
    as they were imported, the others from disk)."""
    units = reach(code)
    links = sorted(f"{u.digest} {token} {_ready(_index(m).units[t]).digest if t else m}"
                   for u in units for token, m, t in u.refs)
    return [f"{u.name} {u.digest}" for u in units] + \
           [f"<links> {hashlib.sha256(chr(10).join(links).encode()).hexdigest()[:16]}"]


# ---------------------------------------------------------------- what actually ran

@contextlib.contextmanager
def recording():
    """Within it, the code object of every ``modlib`` function that starts running, in any thread,
    is added to the set it yields (``sys.setprofile``: slow, for tests)."""
    ran: set = set()
    prefix = str(PACKAGE_DIR) + os.sep

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(prefix):
            ran.add(frame.f_code)

    before = sys.getprofile()
    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        yield ran
    finally:
        sys.setprofile(before)
        threading.setprofile(None)


def _module_of(path: str) -> str:
    parts = Path(path).relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(code) -> Unit | None:
    """The unit whose source holds the code object ``code`` (a function, method, lambda or
    comprehension of ``modlib``: the innermost top-level function, method or statement around it),
    or None for a module's own import-time code."""
    mod = _index(_module_of(code.co_filename))
    found = None
    for unit in [*mod.units.values(), *(m for ms in mod.methods.values() for m in ms.values()),
                 *([mod.other] if mod.other else [])]:
        for node in unit.nodes:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            if first <= code.co_firstlineno <= node.end_lineno and (
                    found is None or "." in unit.name and "." not in found.name):
                found = unit  # a method is inside its class's lines: the method is the unit
    return found


def values_read(c) -> list[Unit]:
    """The module-level values (constant units: ``X = ...``) that the code object ``c`` of modlib
    reads, by a bare name (``GATE``) or through a modlib module (``masks.GATE``): its bytecode's
    global loads and the attribute loaded right after a module, resolved as the fingerprint
    resolves names in its module."""
    mod = _index(_module_of(c.co_filename))
    out, before = [], None
    for ins in dis.get_instructions(c):
        what = None
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
            what = _resolve(mod, ins.argval)
        elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and before and before[0] == "module" \
                and before[1].rsplit(".", 1)[-1] not in NOT_FOLLOWED:
            what = _member(before[1], ins.argval)
        if what and what[0] == "unit":
            unit = _index(what[1]).units.get(what[2])
            if unit is not None and isinstance(unit.nodes[0], (ast.Assign, ast.AnnAssign)):
                out.append(unit)
        before = what
    return out


def outside(code, ran, compute=None) -> list[str]:
    """``"module:unit"`` of each code object in ``ran`` (see :func:`recording`) that the entry
    ``code``'s fingerprint does not cover, and of each module-level value such code reads
    (:func:`values_read`) that it does not cover. Left out: modules that compute nothing
    (:data:`NOT_FOLLOWED`), as the fingerprint leaves them out, and ``compute``, the callable a
    caller hands to :func:`modlib.results.fetch` (a lambda that calls ``code``)."""
    _STATE[0] = _state()
    covered = {(u.module, u.name) for u in reach(code)}
    out = set()
    for c in ran - {getattr(compute, "__code__", None)}:
        module = _module_of(c.co_filename)
        if module.rsplit(".", 1)[-1] in NOT_FOLLOWED:
            continue
        unit = unit_of(c)
        if unit is not None and (unit.module, unit.name) not in covered:
            out.add(f"{unit.module}:{unit.name}")
        out |= {f"{v.module}:{v.name}" for v in values_read(c) if (v.module, v.name) not in covered}
    return sorted(out)


def changes(old: list[str] | dict | None, new: list[str]) -> str:
    """What differs between two fingerprints, by unit name."""
    if old == new:
        return "no change"
    if not isinstance(old, list):
        return "it was made under the store's previous code rule" if old else "it records no code fingerprint"
    split = lambda fp: {(e.rpartition(" ")[0], e.rpartition(" ")[2]) for e in fp}
    a, b = split(old), split(new)
    names = lambda s: {n for n, _ in s}
    changed = sorted(names(a - b) & names(b - a) - {"<links>"})  # links follow the units' digests
    removed, added = sorted(names(a - b) - names(b)), sorted(names(b - a) - names(a))
    parts = [f"{what}: {', '.join(n)}" for what, n in (("changed", changed), ("no longer reached", removed),
                                                      ("newly reached", added)) if n]
    return "; ".join(parts) or "the same units, but a reference now reaches another of them"
