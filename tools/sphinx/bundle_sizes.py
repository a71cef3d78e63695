"""The workshop bundle's sizes in the guide, read from the files the release tools write: a Sphinx extension.

Set up by :mod:`tools.sphinx.html_tweaks`. ``python -m tools.release.dist``
measures the bundles it builds into ``_build/dist/sizes.json``
(:func:`tools.release.dist.write_sizes`), and ``python -m tools.release.wheels
_build/wheels`` the wheels it downloads into ``_build/wheels/sizes.json``
(:func:`tools.release.wheels.write_sizes`). When a page is read, the role::

    {bundle-size}`participant-zip`

becomes that figure in words (a key of :data:`FIGURES`), or "not measured"
when its file is missing, and the directive::

    ```{bundle-sizes}
    ```

becomes a paragraph that says where the figures come from and when they were
measured. ``make dist`` builds the book *before* the bundle, so the guide of
a bundle shows the figures of the bundle built before it; the paragraph says
so. The files' paths are the config value ``bundle_sizes_files``
(``{"dist": ..., "wheels": ...}``, relative to the book's folder).

The environment's own size is not in either file: it is :data:`ENVIRONMENT`,
measured once by hand.

>>> figure("participant-zip", {"dist": {"participant_zip_bytes": 18_600_000}, "wheels": None})
'18.6 MB'
>>> figure("disk", {"dist": None, "wheels": None})
'not measured'
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

__all__ = ["ENVIRONMENT", "FIGURES", "FILES", "figure", "load", "megabytes", "note", "setup"]

#: Where the release tools write their sizes, relative to the book's folder (the default of ``bundle_sizes_files``).
FILES = {"dist": "_build/dist/sizes.json", "wheels": "_build/wheels/sizes.json"}

#: Bytes a participant's environment takes: ``du -sb .venv`` after the offline install of the participant commands
#: (``--no-compile``, Python 3.11, Linux x86-64), without torch, and what torch 2.13.0+cpu with its pinned
#: dependencies adds (``du -sc`` over their folders in site-packages).
ENVIRONMENT = {"base": 367_000_000, "torch": 865_000_000}


def megabytes(count: float) -> str:
    """A byte count in words: one decimal below 100 MB, whole MB below 1 GB, then GB with one decimal.

    >>> megabytes(18_612_345), megabytes(516_400_000), megabytes(2_412_000_000)
    ('18.6 MB', '516 MB', '2.4 GB')
    """
    if count >= 1e9:
        return f"{count / 1e9:.1f} GB"
    return f"{count / 1e6:.1f} MB" if count < 1e8 else f"{count / 1e6:.0f} MB"


def _wheels(sizes: dict) -> int:
    return sizes["wheels"]["bytes"] - sizes["wheels"]["torch_bytes"]


def _disk(sizes: dict, torch: bool) -> float:
    total = sizes["dist"]["participant_unzipped_bytes"] + ENVIRONMENT["base"] + _wheels(sizes)
    if torch:
        total += ENVIRONMENT["torch"] + sizes["wheels"]["torch_bytes"]
    return total


#: Each figure the role knows: the files it needs, and how it is written from them.
FIGURES = {
    "participant-zip": (("dist",), lambda s: megabytes(s["dist"]["participant_zip_bytes"])),
    "participant-unzipped": (("dist",), lambda s: megabytes(s["dist"]["participant_unzipped_bytes"])),
    "participant-files": (("dist",), lambda s: f"{s['dist']['participant_files']:,}"),
    "teacher-zip": (("dist",), lambda s: megabytes(s["dist"]["teacher_zip_bytes"])),
    "pdf-pages": (("dist", "pdf"), lambda s: f"{s['dist']['pdf_pages']:,}"),
    "pdf-size": (("dist", "pdf"), lambda s: megabytes(s["dist"]["pdf_bytes"])),
    "wheels": (("wheels",), lambda s: megabytes(_wheels(s))),
    "wheels-count": (("wheels",), lambda s: f"{s['wheels']['wheels']:,}"),
    "torch-wheels": (("wheels", "torch"), lambda s: megabytes(s["wheels"]["torch_bytes"])),
    "environment": ((), lambda s: megabytes(ENVIRONMENT["base"])),
    "torch-environment": ((), lambda s: megabytes(ENVIRONMENT["torch"])),
    "disk": (("dist", "wheels"), lambda s: megabytes(_disk(s, torch=False))),
    "disk-torch": (("dist", "wheels", "torch"), lambda s: megabytes(_disk(s, torch=True))),
}


def _has(sizes: dict, need: str) -> bool:
    if need == "pdf":
        return bool(sizes["dist"]) and sizes["dist"].get("pdf_pages") is not None
    if need == "torch":
        return bool(sizes["wheels"]) and sizes["wheels"].get("torch_bytes", 0) > 0
    return bool(sizes[need])


def figure(key: str, sizes: dict) -> str:
    """The figure ``key`` of :data:`FIGURES` from ``sizes`` (:func:`load`'s result), or "not measured"."""
    needs, write = FIGURES[key]
    return write(sizes) if all(_has(sizes, need) for need in needs) else "not measured"


def load(root: Path, files: dict[str, str] | None = None) -> dict[str, dict | None]:
    """The sizes files under ``root`` (default :data:`FILES`), each read, or None where it is missing."""
    sizes: dict[str, dict | None] = {}
    for kind, relative in (files or FILES).items():
        path = Path(root) / relative
        sizes[kind] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    return sizes


def note(sizes: dict) -> str:
    """Where the figures of the page come from, in two sentences (MyST)."""
    if sizes["dist"]:
        bundle = (
            f"The bundle's figures on this page were measured by `make dist` (`python -m tools.release.dist`) "
            f"at {sizes['dist']['measured']}. `make dist` builds the book before the bundle, so in a bundle "
            "they describe the bundle built before it; `make dist` prints the new sizes when it ends."
        )
        if not _has(sizes, "pdf"):
            bundle += " That run had no PDF (or no `pdfinfo` to count its pages)."
    else:
        bundle = (
            'No bundle had been built when this book was, so its figures read "not measured": `make dist` '
            "prints them, and the book built after it shows them here."
        )
    if sizes["wheels"]:
        wheels = (
            f"The sizes of `wheels/` are those of `_build/wheels` when `python -m tools.release.wheels` "
            f"last filled it, at {sizes['wheels']['measured']}"
            + ("" if _has(sizes, "torch") else " (without `--torch`)")
            + "."
        )
    else:
        wheels = (
            "`wheels/` was not measured: `python -m tools.release.wheels _build/wheels` prints its size when it ends."
        )
    return f"{bundle} {wheels}"


def _sizes(env) -> dict:
    files = env.config.bundle_sizes_files or FILES
    for relative in files.values():
        env.note_dependency(str(Path(env.srcdir) / relative))
    return load(Path(env.srcdir), files)


def _role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    key = text.strip()
    if key not in FIGURES:
        message = inliner.reporter.error(
            f"bundle-size: unknown figure {key!r}; known: {', '.join(FIGURES)}", line=lineno
        )
        return [inliner.problematic(rawtext, rawtext, message)], [message]
    return [nodes.inline(rawtext, figure(key, _sizes(env)), classes=["bundle-size", key])], []


class BundleSizes(SphinxDirective):
    """``{bundle-sizes}``: the paragraph of :func:`note`."""

    def run(self) -> list[nodes.Node]:
        from docutils.statemachine import StringList

        container = nodes.container()
        self.state.nested_parse(
            StringList([note(_sizes(self.env))], source=self.get_source_info()[0]), self.content_offset, container
        )
        return container.children


def setup(app) -> dict:
    app.add_config_value("bundle_sizes_files", None, "env")
    app.add_role("bundle-size", _role)
    app.add_directive("bundle-sizes", BundleSizes)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
