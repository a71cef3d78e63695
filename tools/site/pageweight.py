"""How many bytes a first visit to each page of the built book downloads.

Usage (``make pageweight``)::

    python -m tools.site.pageweight _build/html [--toc _toc.yml] [--top 5] [--budget-mb 1.5] [--strict]

For every page of the table of contents it adds up the HTML file and the
scripts, stylesheets (with the files they ``@import``) and images the page
names, each counted once per page, at its size on disk (uncompressed: what a
``file://`` reader or a server without compression sends). Shared theme files
count on every page, since a first visit pays for them. A second column gives
the same total gzip-compressed, which is closer to what a web server that
compresses sends. Fonts are not counted:
MathJax fetches its fonts from script and the icon fonts are only named inside
stylesheets, so neither appears in the page itself. It prints one line per
page, then the heaviest pages, and marks each page above the budget (1.5 MB by
default). With ``--strict`` the exit status is 1 when a page is over budget.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import re
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from tools.site.browser import missing_book, resolve, start_tags, toc_pages

__all__ = ["PageWeight", "references", "css_imports", "weigh", "format_report", "main"]

MB = 1e6

_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*["']?([^"')\s;]+)""")


def references(page_html: str) -> list[tuple[str, str]]:
    """(kind, address) of every script, stylesheet and image a page names.

    >>> references('<script src="a.js"></script><link rel="stylesheet" href="s.css">'
    ...            '<img src="f.png" alt="x"><link rel="next" href="b.html">')
    [('scripts', 'a.js'), ('styles', 's.css'), ('images', 'f.png')]
    """
    found = []
    for tag, a in start_tags(page_html):
        rel = (a.get("rel") or "").split()
        if tag == "script" and a.get("src"):
            found.append(("scripts", a["src"]))
        elif tag == "link" and a.get("href") and "stylesheet" in rel:
            found.append(("styles", a["href"]))
        elif tag == "img" and a.get("src"):
            found.append(("images", a["src"]))
        elif tag == "link" and a.get("href") and "icon" in rel:
            found.append(("images", a["href"]))
    return found


def css_imports(css: str) -> list[str]:
    """Addresses a stylesheet pulls in with ``@import``.

    >>> css_imports('@import "../basic.css";\\n@import url(theme.css);\\nbody{}')
    ['../basic.css', 'theme.css']
    """
    return _IMPORT.findall(css)


@dataclass
class PageWeight:
    """Bytes of one page by kind; ``missing`` lists addresses with no file behind them."""

    page: str
    bytes: dict[str, int] = field(default_factory=lambda: {"html": 0, "scripts": 0, "styles": 0, "images": 0})
    missing: list[str] = field(default_factory=list)
    #: The same files gzip-compressed (level 6), all kinds together.
    compressed: int = 0

    @property
    def total(self) -> int:
        return sum(self.bytes.values())


@functools.cache
def gzipped_size(path: Path) -> int:
    """Bytes of the file gzip-compressed at level 6 (a common server setting)."""
    return len(gzip.compress(path.read_bytes(), compresslevel=6, mtime=0))


def weigh(site: Path, page: str) -> PageWeight:
    """Add up the bytes of ``page`` (a path relative to ``site``) and everything it names."""
    path = site / page
    weight = PageWeight(page=page)
    text = path.read_text(encoding="utf-8", errors="replace")
    weight.bytes["html"] = path.stat().st_size
    weight.compressed = gzipped_size(path)
    seen = {path}  # an address naming the page itself adds nothing
    queue = [(kind, address, path) for kind, address in references(text)]
    while queue:
        kind, address, base = queue.pop(0)
        if address.startswith("data:"):
            continue  # inline: already inside the HTML's bytes
        resolved = resolve(site, base, address)
        file = resolved[0] if resolved and resolved[0].is_file() else None
        if file is None:
            if not urllib.parse.urlsplit(address).scheme:
                weight.missing.append(address)
            continue
        if file in seen:
            continue
        seen.add(file)
        weight.bytes[kind] += file.stat().st_size
        weight.compressed += gzipped_size(file)
        if kind == "styles":
            css = file.read_text(encoding="utf-8", errors="replace")
            queue.extend(("styles", imported, file) for imported in css_imports(css))
    return weight


def format_report(weights: list[PageWeight], top: int = 5, budget: float = 1.5 * MB) -> str:
    """The table ``main`` prints: one row per page, then the heaviest, then the verdict.

    >>> w = PageWeight("a.html", {"html": 1000, "scripts": 2_000_000, "styles": 0, "images": 0}, [], 500_000)
    >>> print(format_report([w], top=1))  # doctest: +NORMALIZE_WHITESPACE
    page      html kB  scripts kB  styles kB  images kB  total kB  gzip kB
    a.html        1.0      2000.0        0.0        0.0    2001.0    500.0  over budget
    <BLANKLINE>
    Heaviest pages:
      a.html  2.00 MB (0.50 MB gzipped)
    <BLANKLINE>
    1 of 1 pages over the budget of 1.50 MB a page.
    """
    width = max([len("page")] + [len(w.page) for w in weights])
    kinds = ["html", "scripts", "styles", "images"]
    lines = [
        f"{'page':<{width}}  " + "  ".join(f"{k + ' kB':>10}" for k in kinds) + f"  {'total kB':>9}  {'gzip kB':>8}"
    ]
    for w in weights:
        row = f"{w.page:<{width}}  " + "  ".join(f"{w.bytes[k] / 1e3:>10.1f}" for k in kinds)
        row += f"  {w.total / 1e3:>9.1f}  {w.compressed / 1e3:>8.1f}"
        if w.total > budget:
            row += "  over budget"
        lines.append(row)
    lines += ["", "Heaviest pages:"]
    for w in sorted(weights, key=lambda w: w.total, reverse=True)[:top]:
        lines.append(f"  {w.page:<{width}}  {w.total / MB:.2f} MB ({w.compressed / MB:.2f} MB gzipped)")
    over = sum(w.total > budget for w in weights)
    lines += ["", f"{over} of {len(weights)} pages over the budget of {budget / MB:.2f} MB a page."]
    missing = sorted({m for w in weights for m in w.missing})
    if missing:
        lines.append(f"Named but not found in the site: {', '.join(missing)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("site", type=Path, help="the built HTML book, e.g. _build/html")
    parser.add_argument("--toc", type=Path, default=Path("_toc.yml"), help="table of contents (default: _toc.yml)")
    parser.add_argument("--top", type=int, default=5, help="how many heaviest pages to list")
    parser.add_argument("--budget-mb", type=float, default=1.5, help="budget per page in MB (10^6 bytes)")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a page is over budget")
    args = parser.parse_args(argv)
    problem = missing_book(args.site)
    if problem:
        parser.error(problem)
    weights = [weigh(args.site, page) for page in toc_pages(args.toc)]
    budget = args.budget_mb * MB
    print(format_report(weights, top=args.top, budget=budget))
    return 1 if args.strict and any(w.total > budget for w in weights) else 0


if __name__ == "__main__":
    sys.exit(main())
