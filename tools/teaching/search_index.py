"""The participant book's search index: only what its pages still show can be found.

Sphinx's ``searchindex.js`` maps each search term (a stemmed word) to the
pages whose text held it when the book was built, solutions and the
teacher's pages included. :func:`restrict` rewrites it for the participant
bundle (:mod:`tools.teaching.participant_html`): removed pages leave no trace (name, file, title, term), and
a term stays on a page only if the text that page still shows has it
(:func:`terms`, Sphinx's own English splitting and Porter stemming), so a word
that only a cut solution used finds nothing.

>>> sorted(terms("Splitting splits"))
['split', 'splits', 'splitting']
"""

from __future__ import annotations

import json
import posixpath
import re
from functools import cache

__all__ = ["terms", "parse", "restrict"]


@cache
def _english():
    from sphinx.search.en import SearchEnglish

    return SearchEnglish({})


def terms(text: str) -> set[str]:
    """Every term Sphinx's English index could make of a word in ``text``: the word and its stem, lower case."""
    language = _english()
    found = set()
    for word in language.split(text):
        found.add(word.lower())
        found.add(language.stem(word).lower())
    return found


def parse(text: str) -> tuple[str, dict, str] | None:
    """``searchindex.js`` split into its prefix, the index itself and its suffix; None if it is not one.

    >>> parse('Search.setIndex({"terms": {}})')
    ('Search.setIndex(', {'terms': {}}, ')')
    """
    match = re.fullmatch(r"(?s)(\s*Search\.setIndex\()(.*)(\)\s*;?\s*)", text)
    return (match.group(1), json.loads(match.group(2)), match.group(3)) if match else None


def _keep(docs, keep) -> list[int] | int | None:
    """The documents of one index entry (an int or a list of them) that ``keep(doc)`` admits; None if none."""
    kept = [doc for doc in (docs if isinstance(docs, list) else [docs]) if keep(doc)]
    if not kept:
        return None
    return kept if isinstance(docs, list) else kept[0]


def _renumber(index: dict, keep: list[bool]) -> None:
    """Drop the documents not in ``keep`` from ``index`` (in place) and number the others from 0 again.

    Every place Sphinx 7's index names a document by its number is rewritten:
    the per-document lists (``docnames``, ``filenames``, ``titles``), the
    terms (an int or a list), and the entries that start with one
    (``alltitles``, ``indexentries``, ``objects``); entries left with no
    document go.
    """
    new, count = {}, 0
    for old, kept in enumerate(keep):
        if kept:
            new[old] = count
            count += 1
    for key in ("docnames", "filenames", "titles"):
        if key in index:
            index[key] = [value for old, value in enumerate(index[key]) if keep[old]]
    for key in ("terms", "titleterms"):
        for term, docs in list(index.get(key, {}).items()):
            kept = _keep(docs, lambda doc: doc in new)
            if kept is None:
                del index[key][term]
            else:
                index[key][term] = [new[doc] for doc in kept] if isinstance(kept, list) else new[kept]
    for key in ("alltitles", "indexentries", "objects"):
        for name, places in list(index.get(key, {}).items()):
            kept = [[new[place[0]], *place[1:]] for place in places if place[0] in new]
            if kept:
                index[key][name] = kept
            else:
                del index[key][name]


def restrict(text: str, removed: set[str], shown: dict[str, set[str]]) -> str:
    """``searchindex.js`` without the pages ``removed`` and without terms a page no longer shows.

    A removed page leaves no trace: not its name, file or title, not one of
    its terms or headings, and the remaining pages are numbered anew.
    ``shown`` maps a page (``book/intro.html``) to the :func:`terms` of the
    text it still shows; a page missing from it keeps its terms.

    >>> index = ('Search.setIndex({"docnames":["a","b","c"],"filenames":["a.md","b.md","c.md"],'
    ...          '"titles":["A","B","C"],"terms":{"secret":0,"split":[0,1,2],"only":1},"titleterms":{"c":2},'
    ...          '"alltitles":{"B":[[1,null]],"C":[[2,null]]},"indexentries":{"x":[[2,"term-x",true]]}})')
    >>> out = parse(restrict(index, {"b.html"}, {"a.html": {"split"}}))[1]
    >>> out["docnames"], out["filenames"], out["titles"], out["terms"], out["titleterms"]
    (['a', 'c'], ['a.md', 'c.md'], ['A', 'C'], {'split': [0, 1]}, {'c': 1})
    >>> out["alltitles"], out["indexentries"]
    ({'C': [[1, None]]}, {'x': [[1, 'term-x', True]]})
    """
    parsed = parse(text)
    if parsed is None:
        return text
    prefix, index, suffix = parsed
    names = index.get("docnames", [])
    pages = [posixpath.splitext(name)[0] + ".html" for name in names]
    files = index.get("filenames", [])
    gone = {doc for doc, page in enumerate(pages) if page in removed}
    gone |= {doc for doc, name in enumerate(files) if posixpath.splitext(name)[0] + ".html" in removed}
    for key in ("terms", "titleterms"):
        for term, docs in list(index.get(key, {}).items()):
            kept = _keep(docs, lambda doc, term=term: pages[doc] not in shown or term in shown[pages[doc]])
            if kept is None:
                del index[key][term]
            else:
                index[key][term] = kept
    _renumber(index, [doc not in gone for doc in range(len(names))])
    return prefix + json.dumps(index, separators=(",", ":")) + suffix
