"""The book's configuration with notebook execution off: ``python -m tools.notebooks.stored_config SOURCE TARGET``.

``make test`` builds the book from the outputs stored in the notebooks
instead of executing every chapter a third time: strict nbval has just
re-executed each notebook (natively and on an emulated CPU) and shown that
its stored outputs equal a fresh run, so the pages are the same either way.
``make book``, for readers, still executes (``execute_notebooks: force`` in
``_config.yml``). This writes a copy of ``_config.yml`` that differs in that
one setting, so the two builds cannot drift apart in anything else.

>>> stored({"title": "T", "execute": {"execute_notebooks": "force", "timeout": 600}})["execute"]
{'execute_notebooks': 'off', 'timeout': 600}
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import yaml

__all__ = ["stored", "main"]


def stored(config: dict) -> dict:
    """``config`` with ``execute.execute_notebooks`` set to ``"off"`` (a copy; the input is unchanged)."""
    result = copy.deepcopy(config)
    result.setdefault("execute", {})["execute_notebooks"] = "off"
    return result


def main(argv: list[str]) -> None:
    """Read the YAML configuration ``argv[0]`` and write the stored-outputs copy to ``argv[1]``."""
    if len(argv) != 2:
        raise SystemExit("usage: python -m tools.notebooks.stored_config _config.yml TARGET.yml")
    source, target = (Path(arg) for arg in argv)
    config = yaml.safe_load(source.read_text(encoding="utf-8"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(
        "# Written by tools.notebooks.stored_config from "
        + source.as_posix()
        + "; do not edit.\n"
        + yaml.safe_dump(stored(config), sort_keys=False),
        encoding="utf-8",
    )


if __name__ == "__main__":
    main(sys.argv[1:])
