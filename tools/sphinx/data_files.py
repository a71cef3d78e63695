"""The book's data, downloadable from the built site: a Sphinx extension (loaded by ``html_tweaks``).

When an HTML build starts, every file matching :data:`DATA_FILES` (the
published measurements of ``data/published`` and the book's own run) is
copied to the same path under the output folder, so ``_build/html/data/...``
can be downloaded from the published site and from a copy on disk. A page
lists them with the directive::

    ```{data-files}
    ```

which becomes a list of links, each with the file's size in rows (CSV) or
bytes, relative to the page in every builder.

>>> [path.as_posix() for path in data_files(Path(__file__).resolve().parents[2])][:1]
['data/measure_cpu_gloo.json']
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective
from sphinx.util.osutil import relative_uri

__all__ = ["DATA_FILES", "data_files", "copy_data", "describe", "setup"]

#: Glob patterns, relative to the book's folder, of the files offered for download.
DATA_FILES = ("data/*.json", "data/published/*.csv")


def data_files(root: Path) -> list[Path]:
    """The files of :data:`DATA_FILES` under ``root``, relative to it, in a stable order."""
    return [path.relative_to(root) for pattern in DATA_FILES for path in sorted(Path(root).glob(pattern))]


def copy_data(root: Path, outdir: Path) -> list[Path]:
    """Copy :func:`data_files` of ``root`` to the same paths under ``outdir``; return the copies."""
    copies = []
    for relative in data_files(root):
        target = Path(outdir) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(root) / relative, target)
        copies.append(target)
    return copies


def describe(path: Path) -> str:
    """How big a data file is, in words: rows for a CSV (header excluded), else kilobytes.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     table = Path(tmp, "t.csv")
    ...     _ = table.write_text("a,b\\n1,2\\n3,4\\n")
    ...     describe(table)
    '2 rows'
    """
    if path.suffix == ".csv":
        with path.open(encoding="utf-8") as handle:
            rows = sum(1 for line in handle if line.strip()) - 1
        return f"{rows:,} rows"
    return f"{path.stat().st_size / 1000:,.0f} kB"


class data_file_list(nodes.General, nodes.Element):
    """Placeholder for the list, filled in when the page's builder is known."""


class DataFiles(SphinxDirective):
    """``{data-files}``: a list of links to every file of :data:`DATA_FILES`."""

    has_content = False

    def run(self) -> list[nodes.Node]:
        for relative in data_files(Path(self.env.srcdir)):
            self.env.note_dependency(str(Path(self.env.srcdir) / relative))
        return [data_file_list()]


def _fill_lists(app: Any, doctree: nodes.document, docname: str) -> None:
    root = Path(app.srcdir)
    here = app.builder.get_target_uri(docname)
    for placeholder in doctree.findall(data_file_list):
        items = nodes.bullet_list()
        for relative in data_files(root):
            link = nodes.reference("", relative.name, refuri=relative_uri(here, relative.as_posix()), internal=False)
            paragraph = nodes.paragraph("", "", link, nodes.Text(f" ({describe(root / relative)})"))
            items += nodes.list_item("", paragraph)
        placeholder.replace_self(items)


def _copy_into_output(app: Any) -> None:
    if getattr(app.builder, "format", None) == "html":
        copy_data(Path(app.srcdir), Path(app.outdir))


def setup(app: Any) -> dict:
    app.add_node(data_file_list)
    app.add_directive("data-files", DataFiles)
    app.connect("builder-inited", _copy_into_output)
    app.connect("doctree-resolved", _fill_lists)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
