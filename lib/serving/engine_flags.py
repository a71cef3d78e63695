"""The flags an engine's server accepts at a named release, and a check of a command line against them.

The tables are committed in ``data/engines/`` (``vllm-0.34.0.json``,
``sglang-0.5.23.json``), written by ``tools/engine_flags.py`` from the source
in the release's wheel, whose sha256 each table records; nothing is fetched
here. :func:`flag_table` reads one; :func:`check_command` lists what is wrong
with a ``vllm serve`` or ``python -m sglang.launch_server`` line: an unknown
flag, a flag without its value or with a value it does not take, a value
outside the flag's choices (or outside the values the engine checks after
parsing, such as vLLM's ``--quantization``), a number that does not parse.
Like vLLM's own parser, ``--max_num_seqs`` is read as ``--max-num-seqs`` and
``--compilation-config.level 3`` as a key of a JSON flag.

>>> flag_table("vllm")["flags"]["--tensor-parallel-size"]["aliases"]
['-tp']
>>> check_command("vllm serve m --tensor-parallel-size 2 --enforce-eager", "vllm")
[]
>>> check_command("vllm serve m --tensor-parallel-size two --kv-cache-dtype fp9", "vllm")
["--tensor-parallel-size: 'two' is not an integer", "--kv-cache-dtype: 'fp9' is not among the values vLLM 0.34.0 knows"]
"""

from __future__ import annotations

import copy
import functools
import json
import re
import shlex
from pathlib import Path

__all__ = ["ENGINE_VERSIONS", "DATA_DIR", "flag_table", "check_command"]

#: The release of each engine whose committed table commands are checked against by default.
ENGINE_VERSIONS = {"vllm": "0.34.0", "sglang": "0.5.23"}
_NAMES = {"vllm": "vLLM", "sglang": "SGLang"}
_HUMAN_READABLE = re.compile(r"^\d+(\.\d+)?[kKmMgGtT]?$")


def _data_dir() -> Path:
    """``data/engines`` of the repository, or of the nearest folder above the working directory that has one."""
    checkout = Path(__file__).resolve().parents[2] / "data" / "engines"
    if checkout.is_dir():
        return checkout
    for folder in (Path.cwd(), *Path.cwd().parents):
        if (folder / "data" / "engines").is_dir():
            return folder / "data" / "engines"
    return checkout


#: Where the tables live (``data/engines`` at the top of the repository).
DATA_DIR = _data_dir()


@functools.cache
def _load(engine: str, version: str) -> dict:
    path = DATA_DIR / f"{engine}-{version}.json"
    if not path.is_file():
        known = sorted(p.stem for p in DATA_DIR.glob("*.json"))
        raise ValueError(f"no flag table for {engine} {version} in {DATA_DIR}; committed: {known}")
    return json.loads(path.read_text())


def flag_table(engine: str, version: str | None = None) -> dict:
    """The committed table of ``engine`` at ``version`` (default :data:`ENGINE_VERSIONS`).

    Keys: ``engine``, ``version``, ``wheel``, ``sha256``, ``entry_point``,
    ``sources`` and ``flags`` (``{"--name": {"takes_value", "nargs", "type",
    "choices", "known_values", "aliases", "negation"}}``; see
    ``data/engines/README.md``).

    >>> table = flag_table("sglang", "0.5.23")
    >>> table["entry_point"], table["flags"]["--tp-size"]["aliases"]
    ('python -m sglang.launch_server', ['--tensor-parallel-size'])
    """
    if engine not in ENGINE_VERSIONS:
        raise ValueError(f"engine must be one of {sorted(ENGINE_VERSIONS)}, got {engine!r}")
    return copy.deepcopy(_load(engine, version or ENGINE_VERSIONS[engine]))


@functools.cache
def _spellings(engine: str, version: str) -> dict:
    """Every accepted spelling -> (table key, whether it is the ``--no-`` form)."""
    out = {}
    for key, flag in _load(engine, version)["flags"].items():
        out[key] = (key, False)
        for alias in flag["aliases"]:
            out[alias] = (key, False)
        if flag["negation"]:
            out[flag["negation"]] = (key, True)
    return out


def _is_flag(word: str) -> bool:
    return word.startswith("-") and len(word) > 1 and not re.fullmatch(r"-\d+(\.\d*)?", word)


def _value_problems(name: str, flag: dict, value: str, engine: str, version: str) -> list[str]:
    problems = []
    kind = flag["type"]
    checked = value.lower().replace("-", "_") if kind == "str_lower_underscore" else value
    if kind == "int" and not re.fullmatch(r"[+-]?\d+", value):
        problems.append(f"{name}: {value!r} is not an integer")
    elif kind in {"human_readable_int", "human_readable_int_or_auto"} and not (
        _HUMAN_READABLE.match(value) or (kind.endswith("auto") and value in {"auto", "-1"})
    ):
        problems.append(f"{name}: {value!r} is not an integer (such as 8192 or 8K)")
    elif kind == "float":
        try:
            float(value)
        except ValueError:
            problems.append(f"{name}: {value!r} is not a number")
    choices = flag["choices"]
    if choices is not None and checked not in [str(c) for c in choices]:
        problems.append(f"{name}: {value!r} is not one of its choices {choices}")
    known = flag["known_values"]
    if known is not None and checked not in [str(c) for c in known]:
        problems.append(f"{name}: {value!r} is not among the values {_NAMES[engine]} {version} knows")
    return problems


def check_command(line: str, engine: str, version: str | None = None) -> list[str]:
    """The problems of a server command line against ``engine``'s table at ``version``; empty when it is sound.

    The line starts with the table's entry point (``vllm serve MODEL`` or
    ``python -m sglang.launch_server``). Each problem names its flag.

    >>> check_command("python -m sglang.launch_server --model-path m --tp 2 --mem-fraction-static", "sglang")
    ['--tp: unknown flag for SGLang 0.5.23', '--mem-fraction-static: missing its value']
    >>> check_command("vllm serve m --enforce-eager=yes --all2all-backend deepep", "vllm")[0]
    '--enforce-eager: takes no value, got yes'
    """
    version = version or ENGINE_VERSIONS[engine]
    table = _load(engine, version)
    flags, spellings, entry = table["flags"], _spellings(engine, version), table["entry_point"].split()
    words = shlex.split(line)
    if words[: len(entry)] != entry:
        return [f"the line must start with {table['entry_point']!r}, got {line!r}"]
    words = words[len(entry) :]
    if engine == "vllm" and words and not _is_flag(words[0]):
        words = words[1:]  # the model, vllm serve's positional model_tag
    problems: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not _is_flag(word):
            problems.append(f"{word}: a word that is no flag's value")
            continue
        name, inline = word.split("=", 1) if "=" in word else (word, None)
        if engine == "vllm" and name.startswith("--"):
            head, dot, rest = name.partition(".")
            name = head.replace("_", "-") + dot + rest
            if dot and head.replace("_", "-") in flags and flags[head.replace("_", "-")]["type"] == "json":
                name = head.replace("_", "-")  # --compilation-config.level 3: one key of a JSON flag
        if name not in spellings:
            problems.append(f"{name}: unknown flag for {_NAMES[engine]} {version}")
            if inline is None and i < len(words) and not _is_flag(words[i]):
                i += 1  # skip its value too
            continue
        key, negated = spellings[name]
        flag = flags[key]
        if negated or not flag["takes_value"]:
            if inline is not None:
                problems.append(f"{name}: takes no value, got {inline}")
            continue
        nargs = flag["nargs"]
        if inline is not None:
            values = [inline]
        else:
            count = nargs if isinstance(nargs, int) else (1 if nargs in (None, "?") else len(words))
            values = []
            while i < len(words) and len(values) < count and not _is_flag(words[i]):
                values.append(words[i])
                i += 1
        needed = nargs if isinstance(nargs, int) else (1 if nargs in (None, "+") else 0)
        if len(values) < needed:
            problems.append(f"{name}: missing its value")
        for value in values:
            problems += _value_problems(name, flag, value, engine, version)
    return problems
