"""Sphinx extension: small corrections to the HTML that Jupyter Book and its theme write.

Four of them, all applied just before each page is written:

* **No internet script.** Jupyter Book 1.x always loads ``sphinx_thebe``,
  which writes the address of a script on a public CDN into every page (used
  only to run code live, which this book does not offer). The book must work
  offline, so :func:`is_thebe` entries are dropped from every page.
* **Page-only assets.** Jupyter Book 1.x adds every ``.js`` and ``.css`` file
  under ``_static`` to every page. The what-if calculator
  (``book/calculator.md``) and the layout planner (``book/planner.md``) need
  their files on their own page only; elsewhere they would only add weight.
  :data:`PAGE_ONLY` names such files.
* **Theme files we replace** (:data:`THEME_REPLACEMENTS`) are not listed a
  second time: the theme's own template loads them.
* **Bibliography roles.** Docutils marks each entry of a bibliography
  ``role="doc-biblioentry"`` inside a ``role="list"``. That role is
  deprecated and not a list item, so assistive technology (and axe-core,
  rule ``aria-required-children``) sees a list without items.
  :func:`fix_roles` makes each entry a plain ``listitem``.

* **Punctuation stays with its maths.** A line may break between inline
  maths (an inline block once MathJax has typeset it) and the ``).`` after
  it, so a line could start with ``).``. :func:`keep_punctuation_with_maths`
  wraps each inline formula and the punctuation that follows it in a
  ``<span class="math-nowrap">`` (``_static/fit.css``).

And one when the build ends:

* **No error logs in the site.** When a notebook fails to execute, myst-nb
  writes its traceback to ``<outdir>/reports/<page>.err.log``, inside the
  folder that is published and zipped for workshops, with the machine's
  absolute paths in it. :func:`move_reports` moves that folder out, to
  ``_build/reports/<builder>/``, where the log stays readable.

It also loads (:data:`EXTENSIONS`) :mod:`tools.sphinx.planner_data` and
:mod:`tools.sphinx.calculator_data`, which write the planner's and the calculator's
numbers from ``lib`` into the built book, :mod:`tools.sphinx.workshop_pages` (the
workshop's pages from its plan), :mod:`tools.sphinx.data_files` (the data files,
downloadable), :mod:`tools.sphinx.bundle_sizes` (the workshop bundle's sizes in
the guide), :mod:`tools.sphinx.run_note` (how to run a chapter) and
:mod:`tools.sphinx.minify` (the interactive pages' scripts minified), so that
``_config.yml`` names one local extension.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

#: Asset file name -> the only pages (Sphinx docnames) that load it.
PAGE_ONLY = {
    "calculator.js": ("book/calculator",),
    "calculator-data.js": ("book/calculator",),
    "calculator.css": ("book/calculator",),
    "cheatsheet.css": ("book/cheatsheet",),
    "exercise-sheet.css": ("book/exercise-sheet",),
    "planner.js": ("book/planner",),
    "planner-model.js": ("book/planner",),
    "planner-collectives.js": ("book/planner",),
    "planner-capacity.js": ("book/planner",),
    "planner.css": ("book/planner",),
    "planner-data.js": ("book/planner",),
    "planner-map.js": ("book/planner",),
    "planner-config.js": ("book/planner",),
    "planner-sizing.js": ("book/planner",),
    "planner-chart.js": ("book/planner",),
    "scenario-link.js": ("book/calculator", "book/planner"),
    "search-offline.js": ("search",),
}

#: Sibling extensions in ``tools/`` that this one sets up (the folder is on the
#: path as ``tools/`` under Sphinx, as the package ``tools`` under pytest).
EXTENSIONS = [
    f"{__package__}.{name}" if __package__ else name
    for name in (
        "planner_data",
        "calculator_data",
        "workshop_pages",
        "data_files",
        "bundle_sizes",
        "run_note",
        "minify",
    )
]

#: Files of ours that replace a theme file of the same name (see
#: ``_static/scripts/fontawesome.js``). The theme's template already loads
#: them; Jupyter Book would list them a second time, so they are dropped from
#: the page's script and stylesheet lists.
THEME_REPLACEMENTS = {"fontawesome.js"}

#: ARIA roles replaced in the page body, old -> new.
ROLE_FIXES = {
    'role="doc-biblioentry"': 'role="listitem"',
}


def asset_name(asset: Any) -> str:
    """The bare file name of a script or stylesheet entry, without folder or query.

    >>> asset_name("_static/calculator.js?v=1234")
    'calculator.js'
    """
    return _address(asset).rsplit("/", 1)[-1]


def _address(asset: Any) -> str:
    """The address of a script or stylesheet entry (Sphinx object or string), without query."""
    return str(getattr(asset, "filename", "") or asset).split("?")[0]


def is_thebe(asset: Any) -> bool:
    """Whether a script entry is Thebe's (its CDN loader, or inline code naming it).

    >>> is_thebe("https://unpkg.com/thebe@0.8.2/lib/index.js"), is_thebe("_static/sphinx-thebe.js?v=1")
    (True, True)
    >>> is_thebe("_static/doctools.js")
    False
    """
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return "thebe" in _address(asset).lower() or "THEBE" in body


def keep(asset: Any, pagename: str, single_page: bool = False) -> bool:
    """Whether ``pagename`` should load ``asset``; a ``single_page`` build holds every page.

    >>> keep("calculator.js", "book/calculator"), keep("calculator.js", "book/intro")
    (True, False)
    >>> keep("_static/planner-data.js?v=1", "book/planner"), keep("planner.css", "book/calculator")
    (True, False)
    >>> keep("copybutton.js", "book/intro"), keep("scripts/fontawesome.js", "book/intro")
    (True, False)
    >>> keep("calculator.js", "book/intro", single_page=True)
    True
    >>> keep("scenario-link.js", "book/planner"), keep("scenario-link.js", "book/intro")
    (True, False)
    """
    name = asset_name(asset)
    if name in THEME_REPLACEMENTS or is_thebe(asset):
        return False
    pages = PAGE_ONLY.get(name)
    return pages is None or pagename in pages or single_page


def fix_roles(body: str) -> str:
    """Replace the ARIA roles of :data:`ROLE_FIXES` in a page body.

    >>> fix_roles('<div role="list"><div class="citation" role="doc-biblioentry">x</div></div>')
    '<div role="list"><div class="citation" role="listitem">x</div></div>'
    """
    for old, new in ROLE_FIXES.items():
        body = body.replace(old, new)
    return body


#: An inline formula as Sphinx writes it, then the closing punctuation that follows it.
_MATH_THEN_PUNCTUATION = re.compile(
    r'(<span class="math notranslate nohighlight">\\\([^<]*?\\\)</span>)([)\]},.;:!?%’”]+)'
)


def keep_punctuation_with_maths(body: str) -> str:
    r"""Wrap inline maths and the punctuation right after it in one unbreakable span.

    >>> keep_punctuation_with_maths('(at <span class="math notranslate nohighlight">\\(K = 2\\)</span>). Then')
    '(at <span class="math-nowrap"><span class="math notranslate nohighlight">\\(K = 2\\)</span>).</span> Then'
    >>> keep_punctuation_with_maths('<span class="math notranslate nohighlight">\\(x\\)</span> and '
    ...                             '<span class="math notranslate nohighlight">\\(y\\)</span>.')
    '<span class="math notranslate nohighlight">\\(x\\)</span> and <span class="math-nowrap"><span class="math notranslate nohighlight">\\(y\\)</span>.</span>'
    """
    return _MATH_THEN_PUNCTUATION.sub(r'<span class="math-nowrap">\1\2</span>', body)


def singlehtml_handlers(handlers: dict) -> dict:
    """Visitors for the ``singlehtml`` builder: its own, then the ``html`` ones it lacks.

    Sphinx uses a builder's own visitors when any extension registers one for it
    by name, and then ignores the ``html`` ones. sphinx-exercise registers
    ``singlehtml`` visitors, so myst-nb's (``HideCodeCellNode``) went missing
    and the single-page build (``make pdf``) failed.

    >>> singlehtml_handlers({"html": {"a": 1, "b": 2}, "singlehtml": {"b": 3}})
    {'a': 1, 'b': 3}
    """
    return {**handlers.get("html", {}), **handlers.get("singlehtml", {})}


def _complete_singlehtml(app: Any) -> None:
    if app.builder.name == "singlehtml":
        handlers = app.registry.translation_handlers
        handlers["singlehtml"] = singlehtml_handlers(handlers)


def _tweak(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    single_page = app.builder.name == "singlehtml"
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [asset for asset in context[key] if keep(asset, pagename, single_page)]
    if isinstance(context.get("body"), str):
        context["body"] = keep_punctuation_with_maths(fix_roles(context["body"]))


def move_reports(outdir: Path, builder: str) -> Path | None:
    """Move ``outdir/reports`` (myst-nb's execution error logs) to ``outdir/../reports/builder``.

    Returns where the logs went, or ``None`` when there were none.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     log = Path(tmp, "html", "reports", "notebooks", "10.err.log")
    ...     log.parent.mkdir(parents=True)
    ...     _ = log.write_text("Traceback")
    ...     moved = move_reports(Path(tmp, "html"), "html")
    ...     moved.relative_to(tmp).as_posix(), (moved / "notebooks" / "10.err.log").read_text(), log.exists()
    ('reports/html', 'Traceback', False)
    """
    reports = Path(outdir) / "reports"
    if not reports.is_dir():
        return None
    target = Path(outdir).parent / "reports" / builder
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(reports), str(target))
    return target


def _move_reports(app: Any, exception: Exception | None) -> None:
    moved = move_reports(Path(app.outdir), app.builder.name)
    if moved is not None:
        print(f"html_tweaks: notebook error logs moved out of the site, to {moved}")


def setup(app: Any) -> dict:
    for extension in EXTENSIONS:
        app.setup_extension(extension)
    app.connect("builder-inited", _complete_singlehtml)
    app.connect("build-finished", _move_reports)
    app.connect("html-page-context", _tweak, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
