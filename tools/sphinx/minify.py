"""Sphinx extension: the interactive pages' own scripts and styles ship without comments and indentation.

The planner's scripts mirror ``lib`` function by function, and each
function's comment names the Python it follows: the repository keeps them
readable. A reader's browser needs none of that, and the planner page's own
files must stay under 200 kB (``tests/browser/test_planner.py``). When the
build ends, :func:`minify_scripts` rewrites each page-only script
(:data:`tools.sphinx.html_tweaks.PAGE_ONLY`) in the built site with
``calmjs.parse``'s ES5 printer: comments and needless whitespace removed,
and each function's local names shortened (``obfuscate``; the globals, the
properties and the strings are untouched, so the names the pages and the
tests call keep working). The scripts must therefore be ES5 (``var``,
``function``, no template literals); one that is not stops the build with
its name. Each page-only style sheet is minified with
:func:`minified_css` (comments, indentation and the spaces around ``{ } ; , >``
and after ``:`` removed; strings untouched), under a first line that says where its source
is. The pages that load them lose the indentation of their lines outside
``<pre>``, ``<textarea>`` and ``<script>`` (:func:`unindented_html`). The
browser tests run on these files, so they test what readers get.

>>> print(minified("// the sum\\nfunction add(first, second) {\\n  return first + second;  // both\\n}\\n", "add.js"))
/* _static/add.js of the book's repository, minified (the source there is commented). */
function add(b,a){return b+a;}
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from calmjs.parse import es5
from calmjs.parse.exceptions import ECMASyntaxError
from calmjs.parse.unparsers.es5 import minify_print

if __package__:
    from .html_tweaks import PAGE_ONLY
else:  # loaded by Sphinx with tools/ on the path (tools.sphinx.html_tweaks)
    from html_tweaks import PAGE_ONLY

__all__ = [
    "minified",
    "minified_css",
    "minified_js",
    "minify_pages",
    "minify_scripts",
    "unindented_html",
    "PAGES",
    "SCRIPTS",
    "HEADER",
]

#: The files that are minified in the built site: every page-only script and style sheet.
SCRIPTS = sorted(name for name in PAGE_ONLY if name.endswith((".js", ".css")))

#: The pages whose lines lose their indentation: every page that loads a page-only file.
PAGES = sorted({page for pages in PAGE_ONLY.values() for page in pages})

#: An element whose whitespace matters, or a line's indentation.
_INDENTATION = re.compile(r"(<(pre|textarea|script)\b.*?</\2>)|\n[ \t]+", re.S)

#: A CSS string (kept as it is) or a comment; then, once comments are gone, a string, the whitespace around
#: a character that needs none (``{ } ; , >``) or after a colon, or other whitespace.
_CSS_COMMENTS = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|/\*.*?\*/""", re.S)
_CSS_SPACES = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')|\s*([{};,>])\s*|(:)\s+|\s+""")

#: How a minified file begins (so that a file already minified is left as it is).
HEADER = "/* _static/{name} of the book's repository, minified (the source there is commented). */\n"


def minified(source: str, name: str) -> str:
    """``source`` without comments or needless whitespace, under a line naming ``_static/<name>``."""
    return HEADER.format(name=name) + (minified_css(source) if name.endswith(".css") else minified_js(source, name))


def minified_js(source: str, name: str) -> str:
    """An ES5 script without comments or needless whitespace, each function's local names shortened.

    >>> minified_js("var total = 0;  // the sum\\nfunction add(first, second) { var sum = first + second; return sum; }", "a.js")
    'var total=0;function add(c,b){var a=c+b;return a;}'
    >>> minified_js("var t = `x`;", "b.js")
    Traceback (most recent call last):
    ...
    ValueError: b.js must be ES5 to be minified (no let, const, arrows or template literals): ...
    """
    try:
        return minify_print(es5(source), obfuscate=True, obfuscate_globals=False)
    except ECMASyntaxError as error:
        first = str(error).splitlines()[0]
        raise ValueError(
            f"{name} must be ES5 to be minified (no let, const, arrows or template literals): {first}"
        ) from None


def minified_css(source: str) -> str:
    """A style sheet without comments or needless whitespace; strings are left as they are.

    >>> print(minified_css("a > b,  c {  /* lib's */ content: 'a  ;b' ;  margin: 0 auto; }\\n@media (width < 40rem) { }"))
    a>b,c{content:'a  ;b';margin:0 auto}@media (width < 40rem){}
    """
    text = _CSS_COMMENTS.sub(lambda m: m[1] or " ", source)
    text = _CSS_SPACES.sub(lambda m: m[1] or m[2] or m[3] or " ", text)
    return text.replace(";}", "}").strip()


def unindented_html(html: str) -> str:
    """``html`` with each line's indentation removed, outside ``<pre>``, ``<textarea>`` and ``<script>``.

    >>> unindented_html("<div>\\n    <p>a\\n      b</p>\\n<pre>  x\\n    y</pre>\\n  </div>")
    '<div>\\n<p>a\\nb</p>\\n<pre>  x\\n    y</pre>\\n</div>'
    """
    return _INDENTATION.sub(lambda m: m[1] or "\n", html)


def minify_pages(outdir: Path) -> list[str]:
    """Remove the indentation (:func:`unindented_html`) of each of :data:`PAGES` under ``outdir``; return them."""
    done = []
    for page in PAGES:
        path = Path(outdir) / f"{page}.html"
        if path.is_file():
            path.write_text(unindented_html(path.read_text(encoding="utf-8")), encoding="utf-8")
            done.append(page)
    return done


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
        minify_pages(Path(app.outdir))


def setup(app: Any) -> dict:
    app.connect("build-finished", _minify)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
