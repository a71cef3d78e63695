"""Sphinx extension: the interactive pages' own scripts ship without comments and indentation.

The planner's scripts mirror ``lib`` function by function, and each
function's comment names the Python it follows: the repository keeps them
readable. A reader's browser needs none of that, and the planner page's own
files must stay under 200 kB (``tests/browser/test_planner.py``). When the
build ends, :func:`minify_scripts` rewrites each page-only script
(:data:`tools.sphinx.html_tweaks.PAGE_ONLY`) in the built site with ``jsmin``
(comments and needless whitespace removed; strings, template literals and
the code's meaning untouched), under a first line that says where its source
is. The browser tests run on these files, so they test what readers get.

>>> print(minified("// the sum\\nfunction add(a, b) {\\n  return a + b;  // both\\n}\\n", "add.js"))
/* _static/add.js of the book's repository, minified (the source there is commented). */
function add(a,b){return a+b;}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jsmin import jsmin

if __package__:
    from .html_tweaks import PAGE_ONLY
else:  # loaded by Sphinx with tools/ on the path (tools.sphinx.html_tweaks)
    from html_tweaks import PAGE_ONLY

__all__ = ["minified", "minify_scripts", "SCRIPTS", "HEADER"]

#: The scripts that are minified in the built site: every page-only ``.js`` file.
SCRIPTS = sorted(name for name in PAGE_ONLY if name.endswith(".js"))

#: How a minified file begins (so that a file already minified is left as it is).
HEADER = "/* _static/{name} of the book's repository, minified (the source there is commented). */\n"


def minified(source: str, name: str) -> str:
    """``source`` without comments or needless whitespace, under a line naming ``_static/<name>``."""
    return HEADER.format(name=name) + jsmin(source, quote_chars="'\"`")


def minify_scripts(outdir: Path) -> list[str]:
    """Minify each of :data:`SCRIPTS` found under ``outdir/_static``; return the names rewritten.

    A file that already begins with :data:`HEADER` (a build that did not copy
    it again) is left as it is.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     script = Path(tmp, "_static", "planner.js")
    ...     script.parent.mkdir()
    ...     _ = script.write_text("var a = 1;   // one\\n")
    ...     minify_scripts(Path(tmp)), script.read_text().splitlines()[1], minify_scripts(Path(tmp))
    (['planner.js'], 'var a=1;', [])
    """
    done = []
    for name in SCRIPTS:
        path = Path(outdir) / "_static" / name
        if path.is_file():
            source = path.read_text(encoding="utf-8")
            if not source.startswith(HEADER.format(name=name)):
                path.write_text(minified(source, name), encoding="utf-8")
                done.append(name)
    return done


def _minify(app: Any, exception: Exception | None) -> None:
    if exception is None and app.builder.format == "html":
        minify_scripts(Path(app.outdir))


def setup(app: Any) -> dict:
    app.connect("build-finished", _minify)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
