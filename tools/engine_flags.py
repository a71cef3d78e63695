"""Write an inference engine's server flag table from the source in its released wheel.

``python -m tools.engine_flags vllm 0.34.0`` (or ``sglang 0.5.23``) downloads
the engine's wheel without its dependencies (``pip download --no-deps
--only-binary :all:`` for CPython 3.12 on ``manylinux_2_28``/``manylinux_2_34``
x86-64, into a temporary folder), records its file name and sha256, and reads
the server's command-line flags from the Python source inside the wheel with
:mod:`ast`. Nothing is imported or run: both packages need torch and CUDA.
The table goes to ``data/engines/<engine>-<version>.json``.

vLLM (``vllm serve``), as the release builds its parser:

- ``vllm/entrypoints/common/cli_args.py``: ``make_arg_parser`` (its own
  ``add_argument`` calls), then every dataclass field of ``FrontendArgs`` and
  its bases as ``--field-name`` (``BaseFrontendArgs.add_cli_args``), with the
  edits of each ``_customize_cli_kwargs`` (``kwargs["f"]["type"] = ...``,
  ``del kwargs["f"]["nargs"]``, ``action``) applied.
- ``vllm/engine/arg_utils.py``: ``EngineArgs.add_cli_args`` and
  ``AsyncEngineArgs.add_cli_args``. Each ``add_argument`` call gives its
  option strings (the first ``--`` one is the key, the others its aliases,
  such as ``-tp``) and its keywords; ``**k["field"]`` after
  ``k = get_kwargs(SomeConfig)`` stands for what ``_compute_kwargs`` derives
  from that dataclass field, found in ``vllm/config/*.py`` (or wherever the
  module's imports lead). Edits between (``k["f"]["choices"].remove(X)``,
  ``k["f"]["type"] = ...``, ``**{**k["f"], "default": None}``) are applied.
- ``_compute_kwargs`` rules, mirrored on the annotation: a dataclass is a JSON
  value; ``bool | str | None`` an optional value (``nargs="?"``); ``bool`` a
  ``BooleanOptionalAction`` (``--x`` and ``--no-x``); a ``Literal`` gives
  ``choices`` (sorted), unless ``str`` is also allowed, when argparse only
  shows them (``metavar``) and the table lists them as ``known_values``
  (so too ``--quantization``'s ``QuantizationMethods``, which
  ``ModelConfig._verify_quantization`` enforces after parsing, in
  ``vllm/model_executor/layers/quantization/__init__.py``);
  ``list``/``tuple``/``set`` take one or more values; ``int``, ``float``,
  ``dict`` (JSON), ``str``. ``max_model_len`` and the token counts that accept
  ``1K``-style numbers get the type ``human_readable_int``.

SGLang (``python -m sglang.launch_server``):

- ``sglang/srt/server_args.py``: the namespace classes listed in
  ``_INPUT_NAMESPACES`` (each in ``sglang/srt/arg_groups/fields/*.py``), read
  field by field as ``add_cli_args_from_dataclass``
  (``sglang/srt/arg_groups/arg_utils.py``) does: only ``A[T, "help"]`` and
  ``A[T, Arg(...)]`` fields, ``no_cli`` skipped, the name ``Arg.cli_name`` or
  ``--field-name``, ``Arg.aliases``, ``Arg.choices`` or the ``Literal``'s
  values, ``bool`` as ``store_true``, ``list[X]`` as ``nargs="+"``; then the
  ``add_argument`` calls of ``ServerArgs.add_cli_args``.
- Constant choice lists (``choices=QUANTIZATION_CHOICES``) are looked up
  through the imports (``sglang/srt/arg_groups/choices.py``).

Approximated: choices computed at run time (from an environment variable, a
plugin registry or a function call, e.g. SGLang's ``--reasoning-parser`` and
vLLM's parsers) are recorded as ``null`` with ``"dynamic_choices": true``;
plugins that add choices when loaded (``load_general_plugins``,
``current_platform.pre_register_and_update``) are not seen; a custom
``argparse.Action`` takes a value unless its ``__init__`` defaults ``nargs``
to 0; ``type`` is the name of the converter (``int``, ``float``, ``str``,
``json``, ``human_readable_int``, or the function's name). The table keeps,
per flag, only what a check of a command line needs: ``takes_value``,
``nargs``, ``type``, ``choices``, ``known_values``, ``aliases``, ``negation``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

__all__ = ["ENTRY_POINTS", "Sources", "vllm_flags", "sglang_flags", "field_flag", "download", "main"]

ROOT = Path(__file__).resolve().parent.parent
ENTRY_POINTS = {"vllm": "vllm serve", "sglang": "python -m sglang.launch_server"}
_BUILTINS = {"int", "float", "str", "bool", "dict", "list", "tuple", "set", "frozenset", "bytes"}
_GENERICS = {
    "list": "list",
    "List": "list",
    "Sequence": "list",
    "tuple": "tuple",
    "Tuple": "tuple",
    "set": "set",
    "Set": "set",
    "frozenset": "set",
    "dict": "dict",
    "Dict": "dict",
    "Mapping": "dict",
}
_NO_VALUE_ACTIONS = {"store_true", "store_false", "store_const", "count", "help", "version"}
#: Values vLLM checks after parsing, where argparse takes any string: flag -> (module, ``Literal`` alias).
#: ``ModelConfig._verify_quantization`` (vllm/config/model.py) rejects a ``--quantization`` outside
#: ``QUANTIZATION_METHODS = list(get_args(QuantizationMethods))``.
VLLM_CHECKED_AFTER_PARSING = {"--quantization": ("vllm.model_executor.layers.quantization", "QuantizationMethods")}
_HUMAN_READABLE = {
    "max_num_batched_tokens",
    "max_num_scheduled_tokens",
    "kv_cache_memory_bytes",
    "safetensors_prefetch_block_size",
    "max_num_queued_tokens",
}


class Sources:
    """Python modules read from a wheel (or from ``{path: text}``), parsed once, with the paths read in ``read``.

    >>> src = Sources({"pkg/a.py": "X = 1", "pkg/b/__init__.py": "from pkg.a import X as Y"})
    >>> src.resolve("pkg.b", "Y")[0], sorted(src.read)
    ('pkg.a', ['pkg/a.py', 'pkg/b/__init__.py'])
    """

    def __init__(self, files):
        self._zip = files if isinstance(files, zipfile.ZipFile) else None
        self._files = None if self._zip else dict(files)
        self._names = set(self._zip.namelist()) if self._zip else set(self._files)
        self._trees: dict[str, ast.Module | None] = {}
        self.read: set[str] = set()

    def path(self, module: str) -> str | None:
        """The file holding ``module`` (``a.b`` -> ``a/b.py`` or ``a/b/__init__.py``), or ``None``."""
        base = module.replace(".", "/")
        return next((p for p in (base + ".py", base + "/__init__.py") if p in self._names), None)

    def tree(self, module: str) -> ast.Module | None:
        """The parsed module, or ``None`` when the wheel does not hold it."""
        if module not in self._trees:
            path = self.path(module)
            if path is None:
                self._trees[module] = None
            else:
                text = self._zip.read(path).decode() if self._zip else self._files[path]
                self._trees[module] = ast.parse(text)
                self.read.add(path)
        return self._trees[module]

    def resolve(self, module: str, name: str, depth: int = 0):
        """``(module, node)`` defining ``name`` as seen from ``module``, following ``from ... import``.

        ``node`` is a ``ClassDef``, a ``FunctionDef``, the value of an assignment, or the string ``"module"``
        (``name`` is a module); ``(None, None)`` when it cannot be found.
        """
        tree = self.tree(module)
        if tree is None or depth > 8:
            return None, None
        found = None
        for stmt in _module_level(tree):
            if isinstance(stmt, (ast.ClassDef, ast.FunctionDef)) and stmt.name == name:
                found = (module, stmt)
            elif isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                found = (module, stmt.value)
            elif (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == name
                and stmt.value is not None
            ):
                found = (module, stmt.value)
            elif isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if (alias.asname or alias.name) == name:
                        source = _absolute(module, stmt, self.path(module))
                        sub = f"{source}.{alias.name}"
                        if self.path(sub):
                            found = (sub, "module")
                        else:
                            target = self.resolve(source, alias.name, depth + 1)
                            found = target if target[0] else found
            elif isinstance(stmt, ast.Import):
                for alias in stmt.names:
                    if alias.asname == name:
                        found = (alias.name, "module")
        return found or (None, None)


def _module_level(tree: ast.Module):
    """Statements at module level, including those under ``if``/``try`` (``TYPE_CHECKING`` imports)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.If):
            yield from stmt.body
            yield from stmt.orelse
        elif isinstance(stmt, ast.Try):
            yield from stmt.body
        else:
            yield stmt


def _absolute(module: str, stmt: ast.ImportFrom, path: str | None) -> str:
    if not stmt.level:
        return stmt.module
    parts = module.split(".")
    package = parts if path and path.endswith("__init__.py") else parts[:-1]
    package = package[: len(package) - (stmt.level - 1)]
    return ".".join(package + ([stmt.module] if stmt.module else []))


def _const(src: Sources, module: str, node, depth: int = 0, scope: dict | None = None):
    """The literal value of ``node`` (constants, lists, tuples, sets, names of such), or raise ``ValueError``.

    ``scope``: the assignments of a class body, for a class attribute (``Backend.ALL = (FULL, BREAKABLE)``).
    """
    if depth > 8:
        raise ValueError("too deep")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_const(src, module, e, depth + 1, scope) for e in node.elts]
    if isinstance(node, ast.Name) and scope and node.id in scope:
        return _const(src, module, scope[node.id], depth + 1, scope)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):  # Class.ATTR
        where, cls = src.resolve(module, node.value.id)
        if isinstance(cls, ast.ClassDef):
            body = {
                t.id: s.value
                for s in cls.body
                if isinstance(s, ast.Assign)
                for t in s.targets
                if isinstance(t, ast.Name)
            }
            if node.attr in body:
                return _const(src, where, body[node.attr], depth + 1, body)
    if isinstance(node, ast.Name):
        where, value = src.resolve(module, node.id)
        if isinstance(value, ast.AST) and not isinstance(value, (ast.ClassDef, ast.FunctionDef)):
            return _const(src, where, value, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"list", "sorted", "set"}:
        if len(node.args) == 1:
            return _const(src, module, node.args[0], depth + 1)
    if isinstance(node, ast.Call) and _last_name(node.func) == "get_args" and len(node.args) == 1:
        return [v for a in type_atoms(src, module, node.args[0]) if a[0] == "Literal" for v in a[1]]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _const(src, module, node.left, depth + 1) + _const(src, module, node.right, depth + 1)
    raise ValueError(f"not a constant: {ast.unparse(node)}")


# ---------------------------------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------------------------------


def type_atoms(src: Sources, module: str, node, depth: int = 0) -> set:
    """The set of types an annotation allows, flattened like vLLM's ``get_type_hints``.

    Atoms: ``"int"``, ``"float"``, ``"str"``, ``"bool"``, ``"None"``, ``"dict"``, ``("list"|"tuple"|"set", elem,
    nargs)``, ``("Literal", values)``, ``("dataclass", name)``, ``("class", name)``.

    >>> src = Sources({"m.py": "from typing import Literal\\nMode = Literal['a', 'b']"})
    >>> sorted(map(str, type_atoms(src, "m", ast.parse("Mode | None", mode="eval").body)))
    ["('Literal', ('a', 'b'))", 'None']
    """
    if depth > 12:
        return {("class", "?")}
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return {"None"}
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return type_atoms(src, module, ast.parse(node.value, mode="eval").body, depth + 1)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return type_atoms(src, module, node.left, depth + 1) | type_atoms(src, module, node.right, depth + 1)
    if isinstance(node, ast.Subscript):
        base = _last_name(node.value)
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base in {"Annotated", "A"}:
            return type_atoms(src, module, elts[0], depth + 1)
        if base == "Optional":
            return type_atoms(src, module, elts[0], depth + 1) | {"None"}
        if base == "Union":
            return set().union(*(type_atoms(src, module, e, depth + 1) for e in elts))
        if base == "Literal":
            values = []
            for e in elts:
                try:
                    value = _const(src, module, e)
                except ValueError:  # a nested Literal alias: Literal["none", Effort]
                    value = [v for a in type_atoms(src, module, e, depth + 1) if a[0] == "Literal" for v in a[1]]
                values.extend(value if isinstance(value, list) else [value])
            return {("Literal", tuple(values))}
        if base in _GENERICS:
            kind = _GENERICS[base]
            if kind == "dict":
                return {"dict"}
            ellipsis = any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elts)
            inner = type_atoms(src, module, elts[0], depth + 1)
            elem = "str" if len(inner) > 1 else _scalar(next(iter(inner)))
            nargs = len(elts) if kind == "tuple" and not ellipsis else "+"
            return {(kind, elem, nargs)}
        if base in {"Final", "ClassVar", "Required", "NotRequired"}:
            return type_atoms(src, module, elts[0], depth + 1)
        return type_atoms(src, module, node.value, depth + 1)
    name = _last_name(node)
    if name in _BUILTINS:
        return (
            {name if name not in _GENERICS else (_GENERICS[name], "str", "+")}
            if name in {"list", "tuple", "set", "frozenset"}
            else {name}
        )
    if name in {"Any", "Callable", "object", None}:
        return {("class", name or "?")}
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        where, what = src.resolve(module, node.value.id)
        where, value = src.resolve(where, name) if what == "module" else (None, None)
    else:
        where, value = src.resolve(module, name)
    if isinstance(value, ast.ClassDef):
        return {_class_atom(src, where, value)}
    if isinstance(value, ast.AST) and not isinstance(value, ast.FunctionDef):
        if isinstance(value, ast.Call) and _last_name(value.func) in {"TypeAliasType", "NewType"}:
            return type_atoms(src, where, value.args[1], depth + 1)
        return type_atoms(src, where, value, depth + 1)
    return {("class", name)}


def _class_atom(src: Sources, module: str, cls: ast.ClassDef):
    if _is_dataclass(cls):
        return ("dataclass", cls.name)
    bases = {_last_name(b) for b in cls.bases}
    if "TypedDict" in bases:
        return ("class", cls.name)
    if bases & {"dict", "Dict"}:
        return "dict"
    if bases & {"str", "StrEnum"}:
        return ("class", cls.name)
    return ("class", cls.name)


def _is_dataclass(cls: ast.ClassDef) -> bool:
    names = {_last_name(d.func if isinstance(d, ast.Call) else d) for d in cls.decorator_list}
    return bool(names & {"dataclass", "config"})


def _last_name(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _scalar(atom) -> str:
    return atom if atom in {"int", "float", "str", "bool"} else "str"


def field_flag(src: Sources, module: str, field: str, annotation) -> dict:
    """What vLLM's ``_compute_kwargs`` makes of a dataclass field: ``{"type", "choices", "known_values", ...}``.

    >>> src = Sources({"m.py": ""})
    >>> flag = field_flag(src, "m", "tp", ast.parse("int", mode="eval").body)
    >>> flag["type"], flag["takes_value"]
    ('int', True)
    >>> field_flag(src, "m", "eager", ast.parse("bool", mode="eval").body)["action"]
    'BooleanOptionalAction'
    >>> field_flag(src, "m", "m", ast.parse("Literal['b', 'a'] | None", mode="eval").body)["choices"]
    ['a', 'b']
    """
    atoms = type_atoms(src, module, annotation)
    kinds = {a if isinstance(a, str) else a[0] for a in atoms}
    flag = {"takes_value": True, "nargs": None, "type": "str", "choices": None, "known_values": None, "action": None}
    if "dataclass" in kinds:
        flag["type"] = "json"
    elif kinds == {"bool", "str", "None"}:
        flag["nargs"] = "?"
    elif "bool" in kinds:
        flag.update(takes_value=False, action="BooleanOptionalAction", type=None)
    elif "Literal" in kinds:
        values = next(a[1] for a in atoms if not isinstance(a, str) and a[0] == "Literal")
        flag["type"] = type(values[0]).__name__
        flag["known_values" if "str" in kinds else "choices"] = sorted(values)
    elif kinds & {"tuple", "list", "set"}:
        kind = next(k for k in ("tuple", "list", "set") if k in kinds)
        _, elem, nargs = next(a for a in atoms if not isinstance(a, str) and a[0] == kind)
        flag.update(type=elem, nargs=nargs)
    elif "int" in kinds:
        flag["type"] = (
            "human_readable_int_or_auto"
            if field == "max_model_len"
            else "human_readable_int"
            if field in _HUMAN_READABLE
            else "int"
        )
    elif "float" in kinds:
        flag["type"] = "float"
    elif "dict" in kinds:
        flag["type"] = "json_or_str" if "str" in kinds or "class" in kinds else "json"
    return flag


# ---------------------------------------------------------------------------------------------------------------------
# add_argument calls
# ---------------------------------------------------------------------------------------------------------------------


def _dataclass_fields(src: Sources, module: str, cls: ast.ClassDef, depth: int = 0) -> dict:
    """``{field: (module, annotation)}`` of a dataclass and its bases (bases first)."""
    out: dict = {}
    for base in cls.bases:
        where, node = src.resolve(module, _last_name(base) or "")
        if isinstance(node, ast.ClassDef) and depth < 8:
            out.update(_dataclass_fields(src, where, node, depth + 1))
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if (
                _last_name(stmt.annotation.value if isinstance(stmt.annotation, ast.Subscript) else stmt.annotation)
                == "ClassVar"
            ):
                continue
            out[stmt.target.id] = (module, stmt.annotation)
    return out


def _action_takes_value(src: Sources, module: str, action, nargs_given=..., /) -> bool:
    """Whether an ``action=`` takes a value: argparse's own by name, a custom class by its ``nargs`` default."""
    if isinstance(action, ast.Constant):
        return action.value not in _NO_VALUE_ACTIONS
    name = _last_name(action)
    if name == "BooleanOptionalAction":
        return False
    if nargs_given is not ...:  # nargs=None given: one value
        return nargs_given != 0
    where, cls = src.resolve(module, name or "")
    if isinstance(cls, ast.ClassDef):
        for stmt in cls.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == "__init__":
                args = stmt.args.args + stmt.args.kwonlyargs
                defaults = [None] * (len(stmt.args.args) - len(stmt.args.defaults)) + stmt.args.defaults
                defaults += stmt.args.kw_defaults
                for arg, default in zip(args, defaults):
                    if arg.arg == "nargs" and isinstance(default, ast.Constant):
                        return default.value != 0
    return True


def _call_flag(src: Sources, module: str, call: ast.Call, derived: dict | None) -> tuple[list, dict]:
    """Option strings and table entry of one ``add_argument`` call (``derived``: the kwargs a ``**`` spreads)."""
    names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    flag = (
        dict(derived)
        if derived
        else {"takes_value": True, "nargs": None, "type": "str", "choices": None, "known_values": None, "action": None}
    )
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    for k in call.keywords:  # **{**k["f"], "default": None}
        if k.arg is None and isinstance(k.value, ast.Dict):
            for key, value in zip(k.value.keys, k.value.values):
                if key is not None and isinstance(key, ast.Constant):
                    keywords[key.value] = value
    _apply(src, module, flag, keywords)
    return names, flag


def _apply(src: Sources, module: str, flag: dict, keywords: dict) -> None:
    """Apply explicit ``add_argument`` keywords (or kwargs edits) to a table entry."""
    nargs = keywords.get("nargs")
    nargs_value = _const(src, module, nargs) if nargs is not None else None
    if "nargs" in keywords:
        flag["nargs"] = nargs_value
        flag["takes_value"] = nargs_value != 0
    if "type" in keywords:
        flag["type"] = _type_name(keywords["type"])
    if "action" in keywords:
        action = keywords["action"]
        flag["action"] = action.value if isinstance(action, ast.Constant) else _last_name(action)
        flag["takes_value"] = _action_takes_value(src, module, action, nargs_value if "nargs" in keywords else ...)
        if not flag["takes_value"]:
            flag["type"] = None
    if "choices" in keywords:
        try:
            flag["choices"] = sorted(set(_const(src, module, keywords["choices"])) - {None}, key=str)
            flag.pop("dynamic", None)
        except ValueError:
            flag["choices"] = None
            flag["dynamic"] = True


def _type_name(node) -> str:
    text = ast.unparse(node)
    if "json" in text:
        return "json"
    if isinstance(node, ast.Call):  # optional_type(int), parse_type(json.loads)
        return _type_name(node.args[0]) if node.args else text
    if isinstance(node, ast.Lambda):  # lambda s: s.lower().replace("-", "_") normalises before choices are checked
        return "str_lower_underscore" if 'lower().replace("-", "_")' in ast.unparse(node).replace("'", '"') else "str"
    return _last_name(node) or text


def _record(table: dict, names: list, flag: dict) -> None:
    long_names = [n for n in names if n.startswith("--")]
    if not long_names:
        return  # positional
    key = long_names[0]
    entry = {
        "takes_value": flag["takes_value"],
        "nargs": flag["nargs"] if flag["takes_value"] else None,
        "type": flag["type"] if flag["takes_value"] else None,
        "choices": flag["choices"] if flag["takes_value"] else None,
        "known_values": flag["known_values"] if flag["takes_value"] else None,
        "aliases": sorted(n for n in names if n != key),
        "negation": (f"--no-{key[2:]}" if flag.get("action") == "BooleanOptionalAction" else None),
    }
    if flag.get("dynamic") and flag["takes_value"]:
        entry["dynamic_choices"] = True
    table[key] = entry


def _is_add_argument(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"


def _subscript_path(node) -> tuple | None:
    """``k["f"]["choices"]`` -> ``("k", "f", "choices")``."""
    keys = []
    while isinstance(node, ast.Subscript):
        if not isinstance(node.slice, ast.Constant):
            return None
        keys.append(node.slice.value)
        node = node.value
    return (node.id, *reversed(keys)) if isinstance(node, ast.Name) else None


class _KwargsWalker(ast.NodeVisitor):
    """Walk a function that builds a parser from ``get_kwargs`` dicts and ``add_argument`` calls, in source order."""

    def __init__(self, src: Sources, module: str, table: dict, kwargs: dict | None = None):
        self.src, self.module, self.table = src, module, table
        self.kwargs = kwargs if kwargs is not None else {}  # var -> {field: flag}
        self.single: dict = {}  # var -> flag, after ``var = k["field"]``

    def kwargs_of(self, cls_name: str) -> dict:
        where, cls = self.src.resolve(self.module, cls_name)
        if not isinstance(cls, ast.ClassDef):
            raise ValueError(f"cannot find the class {cls_name} from {self.module}")
        return {
            name: field_flag(self.src, mod, name, ann)
            for name, (mod, ann) in _dataclass_fields(self.src, where, cls).items()
        }

    def visit_Assign(self, node):
        value = node.value
        target = node.targets[0]
        if (
            isinstance(value, ast.Call)
            and _last_name(value.func) == "get_kwargs"
            and isinstance(target, ast.Name)
            and isinstance(value.args[0], ast.Name)
        ):
            self.kwargs[target.id] = self.kwargs_of(value.args[0].id)
        if isinstance(target, ast.Name) and isinstance(value, ast.Subscript):  # v = k["f"], get_kwargs(C)["f"]
            path = _subscript_path(value)
            inner = value.value
            if path and len(path) == 2 and path[0] in self.kwargs:
                self.single[target.id] = self.kwargs[path[0]][path[1]]
            elif (
                isinstance(inner, ast.Call)
                and _last_name(inner.func) == "get_kwargs"
                and isinstance(value.slice, ast.Constant)
            ):
                self.single[target.id] = self.kwargs_of(inner.args[0].id)[value.slice.value]
        path = _subscript_path(target)
        flag = None
        if path and len(path) == 3 and path[0] in self.kwargs and path[1] in self.kwargs[path[0]]:
            flag, key = self.kwargs[path[0]][path[1]], path[2]
        elif path and len(path) == 2 and path[0] in self.single:
            flag, key = self.single[path[0]], path[1]
        if flag is not None and key in {"type", "action", "nargs", "choices"}:
            _apply(self.src, self.module, flag, {key: value})
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            path = _subscript_path(target)
            if path and len(path) == 3 and path[0] in self.kwargs and path[2] == "nargs":
                self.kwargs[path[0]][path[1]]["nargs"] = None
        self.generic_visit(node)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "remove":  # k["f"]["choices"].remove(X)
            path = _subscript_path(func.value)
            if path and path[-1] == "choices" and (path[0] in self.kwargs or path[0] in self.single):
                flag = self.kwargs[path[0]][path[1]] if len(path) == 3 else self.single[path[0]]
                value = _const(self.src, self.module, node.args[0])
                for key in ("choices", "known_values"):
                    if flag[key] and value in flag[key]:
                        flag[key] = [v for v in flag[key] if v != value]
        if _is_add_argument(node):
            derived = None
            for k in node.keywords:
                spread = k.value
                if k.arg is None and isinstance(spread, ast.Dict):  # **{**k["f"], ...}
                    spread = next((v for key, v in zip(spread.keys, spread.values) if key is None), None)
                path = _subscript_path(spread) if k.arg is None and spread is not None else None
                if path and len(path) == 2 and path[0] in self.kwargs:
                    derived = self.kwargs[path[0]][path[1]]
                elif k.arg is None and isinstance(spread, ast.Name) and spread.id in self.single:
                    derived = self.single[spread.id]
            names, flag = _call_flag(self.src, self.module, node, derived)
            _record(self.table, names, flag)
        self.generic_visit(node)


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == name), None)


def _function(src: Sources, module: str, name: str) -> ast.FunctionDef:
    where, node = src.resolve(module, name)
    if not isinstance(node, ast.FunctionDef):
        raise ValueError(f"{module} defines no function {name}")
    return node


def _class(src: Sources, module: str, name: str) -> tuple[str, ast.ClassDef]:
    where, node = src.resolve(module, name)
    if not isinstance(node, ast.ClassDef):
        raise ValueError(f"{module} defines no class {name}")
    return where, node


def vllm_flags(src: Sources) -> dict:
    """The ``vllm serve`` flag table read from vLLM's source (see the module docstring)."""
    table: dict = {}
    cli = "vllm.entrypoints.common.cli_args"
    make = _function(src, cli, "make_arg_parser")
    walker = _KwargsWalker(src, cli, table)
    for stmt in make.body:  # its own add_argument calls; the class methods are read below
        walker.visit(stmt)
    where, frontend = _class(src, cli, "FrontendArgs")
    kwargs = {"frontend_kwargs": _KwargsWalker(src, where, {}).kwargs_of("FrontendArgs")}
    chain, (mod, cls) = [], (where, frontend)
    while cls is not None:
        chain.append((mod, cls))
        base = next((_last_name(b) for b in cls.bases), None)
        mod, cls = src.resolve(mod, base) if base else (None, None)
        cls = cls if isinstance(cls, ast.ClassDef) else None
    for mod, cls in reversed(chain):  # super()._customize_cli_kwargs first
        method = _method(cls, "_customize_cli_kwargs")
        if method:
            _KwargsWalker(src, mod, {}, kwargs).visit(method)
    for name, flag in kwargs["frontend_kwargs"].items():
        _record(table, [f"--{name.replace('_', '-')}"], flag)
    arg_utils = "vllm.engine.arg_utils"
    for cls_name in ("EngineArgs", "AsyncEngineArgs"):
        where, cls = _class(src, arg_utils, cls_name)
        _KwargsWalker(src, where, table).visit(_method(cls, "add_cli_args"))
    for flag, (module, alias) in VLLM_CHECKED_AFTER_PARSING.items():
        values = [v for a in type_atoms(src, module, ast.Name(alias)) if a[0] == "Literal" for v in a[1]]
        table[flag]["known_values"] = sorted(values) or None
    return table


def _sglang_field(src: Sources, module: str, name: str, annotation):
    """Option strings and entry of one SGLang namespace field, or ``None`` when it has no flag."""
    if not (isinstance(annotation, ast.Subscript) and _last_name(annotation.value) in {"A", "Annotated"}):
        return None
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    meta = next(
        (
            e
            for e in elts[1:]
            if isinstance(e, ast.Constant)
            and isinstance(e.value, str)
            or isinstance(e, ast.Call)
            and _last_name(e.func) == "Arg"
        ),
        None,
    )
    if meta is None:
        return None
    arg = {k.arg: k.value for k in meta.keywords} if isinstance(meta, ast.Call) else {}
    if "no_cli" in arg and _const(src, module, arg["no_cli"]):
        return None
    cli_name = _const(src, module, arg["cli_name"]) if "cli_name" in arg else "--" + name.replace("_", "-")
    names = [cli_name] + (_const(src, module, arg["aliases"]) if "aliases" in arg else [])
    flag = {"takes_value": True, "nargs": None, "type": "str", "choices": None, "known_values": None, "action": None}
    keywords = {}
    if "action" in arg:
        keywords["action"] = arg["action"]
        if "action_kwargs" in arg and isinstance(arg["action_kwargs"], ast.Dict):
            for key, value in zip(arg["action_kwargs"].keys, arg["action_kwargs"].values):
                if isinstance(key, ast.Constant) and key.value == "nargs":
                    keywords["nargs"] = value
        _apply(src, module, flag, keywords)
        return names, flag
    atoms = type_atoms(src, module, elts[0]) - {"None"}
    atom = next(iter(atoms)) if len(atoms) == 1 else ("class", "union")
    kind = atom if isinstance(atom, str) else atom[0]
    if kind == "Literal":
        values = list(atom[1])
        flag["choices"] = sorted(values, key=str)
        flag["type"] = _scalar(type(values[0]).__name__) if values else "str"
    elif kind == "list" and "type_parser" not in arg:
        flag.update(type=atom[1], nargs="+")
    elif kind == "bool":
        flag.update(takes_value=False, type=None, action="store_true")
        return names, flag
    else:
        flag["type"] = kind if kind in {"int", "float", "str"} else "str"
    if "type_parser" in arg:
        flag["type"] = _type_name(arg["type_parser"])
    for key in ("choices", "nargs"):
        if key in arg:
            keywords[key] = arg[key]
    _apply(src, module, flag, keywords)
    return names, flag


def sglang_flags(src: Sources) -> dict:
    """The ``python -m sglang.launch_server`` flag table read from SGLang's source (see the module docstring)."""
    table: dict = {}
    module = "sglang.srt.server_args"
    tree = src.tree(module)
    spaces = next(
        s.value
        for s in tree.body
        if isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_INPUT_NAMESPACES" for t in s.targets)
    )
    for name in spaces.elts:
        where, cls = _class(src, module, name.id)
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                found = _sglang_field(src, where, stmt.target.id, stmt.annotation)
                if found:
                    _record(table, found[0], found[1])
    # the class statement, not the msgspec.defstruct(...) rebinding of the name after it
    server_args = next(s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == "ServerArgs")
    _KwargsWalker(src, module, table).visit(_method(server_args, "add_cli_args"))
    return table


# ---------------------------------------------------------------------------------------------------------------------
# Download and write
# ---------------------------------------------------------------------------------------------------------------------


def download(engine: str, version: str, folder: Path) -> Path:
    """Download ``engine==version``'s wheel for CPython 3.12 on x86-64 Linux into ``folder``, without dependencies."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--python-version",
            "3.12",
            "--platform",
            "manylinux_2_34_x86_64",
            "--platform",
            "manylinux_2_28_x86_64",
            "--platform",
            "manylinux2014_x86_64",
            "-d",
            str(folder),
            f"{engine}=={version}",
        ],
        check=True,
    )
    wheels = sorted(folder.glob(f"{engine}-{version}-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one wheel of {engine} {version} in {folder}, found {wheels}")
    return wheels[0]


def table_of(engine: str, version: str, wheel: Path) -> dict:
    """The JSON document for ``wheel`` (see ``data/engines/README.md``)."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with zipfile.ZipFile(wheel) as archive:
        src = Sources(archive)
        flags = vllm_flags(src) if engine == "vllm" else sglang_flags(src)
    return {
        "engine": engine,
        "version": version,
        "wheel": wheel.name,
        "sha256": digest,
        "entry_point": ENTRY_POINTS[engine],
        "sources": sorted(src.read),
        "flags": flags,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("engine", choices=sorted(ENTRY_POINTS))
    parser.add_argument("version")
    parser.add_argument("--wheel", type=Path, help="read this wheel instead of downloading it")
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "engines")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        wheel = args.wheel or download(args.engine, args.version, Path(folder))
        document = table_of(args.engine, args.version, wheel)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.engine}-{args.version}.json"
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"{path}: {len(document['flags'])} flags from {document['wheel']} (sha256 {document['sha256']})")


if __name__ == "__main__":
    main()
