"""The participant book's search index: only what its pages still show can be found.

Sphinx's ``searchindex.js`` maps each search term (a stemmed word) to the
pages whose text held it when the book was built, solutions and the
teacher's pages included. :func:`restrict` rewrites it for the participant
bundle (:mod:`tools.teaching.participant_html`): removed pages become unreachable, and
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


def restrict(text: str, removed: set[str], shown: dict[str, set[str]]) -> str:
    """``searchindex.js`` without the pages ``removed`` and without terms a page no longer shows.

    ``shown`` maps a page (``book/intro.html``) to the :func:`terms` of the
    text it still shows; a page missing from it keeps its terms.

    >>> index = ('Search.setIndex({"docnames":["a","b"],"filenames":["a.md","b.md"],'
    ...          '"terms":{"secret":0,"split":[0,1]},"titleterms":{},"alltitles":{"B":[[1,null]]}})')
    >>> restrict(index, {"b.html"}, {"a.html": {"split"}})
    'Search.setIndex({"docnames":["a","b"],"filenames":["a.md","b.md"],"terms":{"split":[0]},"titleterms":{},"alltitles":{}})'
    """
    parsed = parse(text)
    if parsed is None:
        return text
    prefix, index, suffix = parsed
    pages = [posixpath.splitext(name)[0] + ".html" for name in index.get("docnames", [])]
    gone = {doc for doc, page in enumerate(pages) if page in removed}
    for name in index.get("filenames", []):
        if posixpath.splitext(name)[0] + ".html" in removed:
            gone.add(index["filenames"].index(name))
    for key in ("terms", "titleterms"):
        for term, docs in list(index.get(key, {}).items()):
            kept = _keep(docs, lambda doc: doc not in gone and (pages[doc] not in shown or term in shown[pages[doc]]))
            if kept is None:
                del index[key][term]
            else:
                index[key][term] = kept
    for title, places in list(index.get("alltitles", {}).items()):
        kept = [place for place in places if place[0] not in gone]
        if kept:
            index["alltitles"][title] = kept
        else:
            del index["alltitles"][title]
    return prefix + json.dumps(index, separators=(",", ":")) + suffix
