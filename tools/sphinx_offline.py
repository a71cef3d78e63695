"""Sphinx extension: keep built pages from referring to any internet script.

Jupyter Book 1.x always loads ``sphinx_thebe``, which writes the address of a
script on a public CDN into every page (used only to run code live, which this
book does not offer). Offline readers must never see a page that reaches out,
so this extension drops those script entries from every page before it is
written.
"""

from __future__ import annotations

from typing import Any


def _is_thebe(script: Any) -> bool:
    name = str(getattr(script, "filename", "") or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return "thebe" in name.lower() or "THEBE" in body


def _drop_thebe(app: Any, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if "script_files" in context:
        context["script_files"] = [s for s in context["script_files"] if not _is_thebe(s)]


def setup(app: Any) -> dict:
    app.connect("html-page-context", _drop_thebe, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
