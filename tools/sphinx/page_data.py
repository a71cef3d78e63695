"""Numbers from ``lib`` for a page's script, written into the built book as a script file.

A page opened from disk (``file://``) may not ``fetch()`` a JSON file in
Chromium, so a tool page's numbers travel as a script that sets one global,
``window.NAME = {...};``. :func:`as_script` writes that text, :func:`write`
the file, and :func:`connect` makes a Sphinx extension write it into
``_static`` when the HTML builder starts and list it among the scripts
(``tools.sphinx.html_tweaks`` keeps it on its own page). Used by
:mod:`tools.sphinx.calculator_data`.

>>> as_script("CALC", {"b": 2, "a": 1})
'window.CALC = {"a":1,"b":2};\\n'
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["as_script", "write", "connect", "main"]


def as_script(global_name: str, data: dict) -> str:
    """``data`` as a script that sets ``window.<global_name>``.

    Compact JSON, keys sorted, so the file changes only when a number does.
    Refuses NaN and infinities, which JSON cannot carry.
    """
    payload = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return f"window.{global_name} = {payload};\n"


def write(folder: str | Path, file_name: str, text: str) -> Path:
    """Write ``text`` to ``folder/file_name`` (the folder is created if missing); return the path."""
    target = Path(folder) / file_name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def connect(app: Any, file_name: str, text: Callable[[], str]) -> None:
    """In a Sphinx ``setup``: write ``text()`` as ``_static/<file_name>`` of HTML builds, and load it."""

    def _write_into_output(app: Any) -> None:
        if getattr(app.builder, "format", None) == "html":
            write(Path(app.outdir) / "_static", file_name, text())

    app.connect("builder-inited", _write_into_output)
    app.add_js_file(file_name)


def main(argv: list[str] | None, description: str, file_name: str, text: Callable[[], str]) -> int:
    """A data module's command line: ``FOLDER`` writes ``file_name`` there, ``-`` prints it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("folder", help=f"where to write {file_name} (- prints it instead)")
    args = parser.parse_args(argv)
    if args.folder == "-":
        sys.stdout.write(text())
    else:
        print(write(args.folder, file_name, text()))
    return 0
