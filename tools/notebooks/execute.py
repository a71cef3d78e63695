"""Execute notebooks in place so that their stored outputs match the code.

Usage: ``python -m tools.notebooks.execute notebooks/*.ipynb`` (``make execute``).
Each notebook runs in a fresh ``python3`` kernel from its own folder, as the
book build and nbval run it.

>>> import nbformat
>>> notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
>>> execute(notebook, Path(".")).cells[0].outputs[0]["data"]["text/plain"]
'2'
>>> notebook.metadata.kernelspec == KERNELSPEC
True
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

__all__ = ["KERNELSPEC", "clean", "execute", "main"]

#: The kernel every notebook of the book names and runs in.
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def clean(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop each cell's ``execution`` metadata (timestamps) and name :data:`KERNELSPEC`, in place.

    >>> import nbformat
    >>> cell = nbformat.v4.new_code_cell("1", metadata={"execution": {"iopub.status.idle": "2026"}})
    >>> cleaned = clean(nbformat.v4.new_notebook(cells=[cell]))
    >>> cleaned.cells[0].metadata, cleaned.metadata.kernelspec.name
    ({}, 'python3')
    """
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    return notebook


def execute(notebook: nbformat.NotebookNode, folder: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Run every cell of ``notebook`` with ``folder`` as working directory.

    No timestamps are stored in the cells (see :func:`clean`), so re-running
    an unchanged notebook changes nothing but what the code really prints.
    """
    clean(notebook)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name=KERNELSPEC["name"],
        record_timing=False,
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute()
    return notebook


def main(paths: list[str]) -> None:
    """Execute each notebook in ``paths`` and write it back."""
    if not paths:
        raise SystemExit("usage: python -m tools.notebooks.execute NOTEBOOK.ipynb [...]")
    for name in paths:
        path = Path(name)
        start = time.perf_counter()
        notebook = execute(nbformat.read(path, as_version=4), path.parent)
        nbformat.write(notebook, path)
        print(f"executed {path} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
