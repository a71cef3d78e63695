""" "Run this chapter yourself": a note under each chapter's title (a Sphinx extension, loaded by ``html_tweaks``).

The theme's download button offers a chapter's ``.ipynb``, which imports the
book's library ``lib``: on its own it does not run. Each chapter page of the
HTML book therefore says, under its title, where ``lib`` is and gives the
commands that run the chapter from a copy of it (:func:`run_note`):

* with ``repository.url`` of ``_config.yml`` set, the repository, and the two
  commands of a clone (``notebooks/NN_slug.ipynb``);
* while it is unset or still the placeholder (:data:`PLACEHOLDER`), the
  download and the workshop bundle, with the bundle's own commands
  (:func:`bundle_commands`: ``student/NN_slug.ipynb``). The theme's repository
  button is switched off then too, so that no page links to the placeholder.

The participant copy of the book (:mod:`tools.teaching.participant_html`)
replaces each note with :func:`bundle_note`. The single-page build (the PDF)
leaves the note out.

>>> note = run_note("notebooks/02_time_budget", "https://github.com/someone/twice-the-devices")
>>> "jupyter lab notebooks/02_time_budget.ipynb" in note, 'href="https://github.com/someone/twice-the-devices"' in note
(True, True)
>>> note = run_note("notebooks/02_time_budget", "https://github.com/OWNER/twice-the-devices")
>>> "OWNER" in note, ".venv/bin/jupyter lab student/02_time_budget.ipynb" in note
(False, True)
>>> after_title("<section><h1>T</h1><p>x</p></section>", "<aside>n</aside>")
'<section><h1>T</h1><aside>n</aside><p>x</p></section>'
"""

from __future__ import annotations

import html
import posixpath
from typing import Any

from tools.release.bundle_files import PARTICIPANT_COMMANDS, STUDENT

__all__ = [
    "CHAPTERS",
    "INSTALL",
    "NOTE_CLASS",
    "PLACEHOLDER",
    "after_title",
    "bundle_commands",
    "bundle_note",
    "repository",
    "run_note",
    "setup",
]

#: Docnames that get the note: the chapter notebooks.
CHAPTERS = "notebooks/"

#: The first command, run in a clone of the repository (see the README, "Running the notebooks yourself").
INSTALL = "pip install --no-deps -r requirements-participant.txt -e ."

#: The word ``repository.url`` in ``_config.yml`` holds until the teacher or publisher sets it.
PLACEHOLDER = "OWNER"

#: The class of the note's ``<details>`` element (styled in ``_static/navigation.css``).
NOTE_CLASS = "run-chapter"


def repository(url: str | None) -> str:
    """``url`` if it names a repository, ``""`` if it is unset or still holds :data:`PLACEHOLDER`.

    >>> repository("https://github.com/OWNER/twice-the-devices"), repository(None), repository("https://x.org/r")
    ('', '', 'https://x.org/r')
    """
    return "" if not url or PLACEHOLDER in url else url


def bundle_commands(pagename: str) -> list[str]:
    """What a participant types in the unzipped bundle to run chapter ``pagename`` (a docname).

    >>> bundle_commands("notebooks/02_time_budget")[-1]
    '.venv/bin/jupyter lab student/02_time_budget.ipynb'
    """
    return [*PARTICIPANT_COMMANDS[:-1], f"{PARTICIPANT_COMMANDS[-1]}{posixpath.basename(pagename)}.ipynb"]


def _note(intro: str, commands: list[str], outro: str) -> str:
    """The note's HTML: a folded box with ``intro``, the ``commands`` as one code block, ``outro``."""
    return (
        f'<details class="{NOTE_CLASS}"><summary>Run this chapter yourself</summary><p>{intro}</p>'
        f'<div class="highlight"><pre>{html.escape(chr(10).join(commands))}</pre></div><p>{outro}</p></details>'
    )


def bundle_note(pagename: str) -> str:
    """The note as the participant bundle shows it: the bundle's own folders and files."""
    return _note(
        "In this bundle's folder (the one with <code>README-offline.txt</code>), once your teacher has copied "
        "the packages into <code>wheels/</code>, in a terminal:",
        bundle_commands(pagename),
        f"<code>{STUDENT}/</code> holds every chapter as a notebook. <code>README-offline.txt</code> says more, "
        "with Windows' commands and what chapter 10’s live run needs.",
    )


def run_note(pagename: str, repository_url: str) -> str:
    """The note's HTML for chapter ``pagename`` (a docname like ``notebooks/02_time_budget``) in the book."""
    url = repository(repository_url)
    if not url:
        return _note(
            "The <code>.ipynb</code> download (the arrow at the top of the page) imports the book's library "
            "<code>lib</code>, which it does not hold. A workshop bundle holds both, and the packages for a room "
            "without a network (ask your teacher). In the bundle's folder, with <code>wheels/</code> copied in:",
            bundle_commands(pagename),
            "The bundle's <code>README-offline.txt</code> says more, with Windows' commands and what chapter 10’s "
            "live run needs.",
        )
    return _note(
        "The <code>.ipynb</code> download (the arrow at the top of the page) imports the book's library "
        f'<code>lib</code>. Get <a href="{html.escape(url)}">the book\'s repository</a>, then, in its folder, '
        "in a Python 3.11+ virtual environment:",
        [INSTALL, f"jupyter lab {pagename}.ipynb"],
        "The README says more (“Running the notebooks yourself”), with what chapter 10’s live run needs.",
    )


def after_title(body: str, note: str) -> str:
    """``body`` with ``note`` inserted right after its first ``</h1>`` (unchanged without one)."""
    head, found, tail = body.partition("</h1>")
    return head + found + note + tail if found else body


def _add_note(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if app.builder.name != "html" or not pagename.startswith(CHAPTERS) or not isinstance(context.get("body"), str):
        return
    url = app.config.html_theme_options.get("repository_url", "")
    context["body"] = after_title(context["body"], run_note(pagename, url))


def _hide_placeholder(app: Any, config: Any) -> None:
    """Switch the theme's repository button off while ``repository.url`` is unset or the placeholder."""
    options = config.html_theme_options
    if not repository(options.get("repository_url")):
        options["use_repository_button"] = False
        options["repository_url"] = ""


def setup(app: Any) -> dict:
    app.connect("config-inited", _hide_placeholder)
    app.connect("html-page-context", _add_note)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
