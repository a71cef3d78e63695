""""Run this chapter yourself": a note under each chapter's title (a Sphinx extension, loaded by ``html_tweaks``).

The theme's download button offers a chapter's ``.ipynb``, which imports the
book's library ``lib``: on its own it does not run. Each chapter page of the
HTML book therefore says, under its title, where ``lib`` is (the repository,
``repository.url`` in ``_config.yml``, or a workshop bundle) and gives the two
commands that run the chapter from a copy of it. The single-page build (the
PDF) leaves the note out.

>>> note = run_note("notebooks/02_time_budget", "https://github.com/OWNER/twice-the-devices")
>>> "jupyter lab notebooks/02_time_budget.ipynb" in note, 'href="https://github.com/OWNER/twice-the-devices"' in note
(True, True)
>>> after_title("<section><h1>T</h1><p>x</p></section>", "<aside>n</aside>")
'<section><h1>T</h1><aside>n</aside><p>x</p></section>'
"""

from __future__ import annotations

import html
from typing import Any

__all__ = ["CHAPTERS", "INSTALL", "run_note", "after_title", "setup"]

#: Docnames that get the note: the chapter notebooks.
CHAPTERS = "notebooks/"

#: The first command, run in a copy of the repository or bundle (see the README, "Running the notebooks yourself").
INSTALL = "pip install --no-deps -r requirements-participant.txt -e ."


def run_note(pagename: str, repository_url: str) -> str:
    """The note's HTML for chapter ``pagename`` (a docname like ``notebooks/02_time_budget``)."""
    notebook = html.escape(pagename + ".ipynb")
    where = (f'<a href="{html.escape(repository_url)}">the book\'s repository</a>' if repository_url
             else "the book's repository")
    return (
        '<details class="run-chapter"><summary>Run this chapter yourself</summary>'
        "<p>The <code>.ipynb</code> download (the arrow at the top of the page) imports the book's library "
        f"<code>lib</code>. Get {where} (or a workshop bundle), then, in its folder, in a Python 3.11+ "
        "virtual environment:</p>"
        f'<div class="highlight"><pre>{html.escape(INSTALL)}\njupyter lab {notebook}</pre></div>'
        "<p>The README says more (“Running the notebooks yourself”), with what chapter 10’s live run needs.</p>"
        "</details>"
    )


def after_title(body: str, note: str) -> str:
    """``body`` with ``note`` inserted right after its first ``</h1>`` (unchanged without one)."""
    head, found, tail = body.partition("</h1>")
    return head + found + note + tail if found else body


def _add_note(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if app.builder.name != "html" or not pagename.startswith(CHAPTERS) or not isinstance(context.get("body"), str):
        return
    repository = app.config.html_theme_options.get("repository_url", "")
    context["body"] = after_title(context["body"], run_note(pagename, repository))


def setup(app: Any) -> dict:
    app.connect("html-page-context", _add_note)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
