"""The interactive pages' scripts are minified in the built site (tools/sphinx/minify.py), and only those."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools.sphinx import minify
from tools.sphinx.html_tweaks import PAGE_ONLY

STATIC = Path(__file__).resolve().parents[4] / "_static"


def test_every_page_only_script_in_static_is_minified():
    scripts = {path.name for path in STATIC.glob("*.js")} & set(PAGE_ONLY)
    assert scripts and scripts <= set(minify.SCRIPTS)
    assert all(name.endswith((".js", ".css")) for name in minify.SCRIPTS)
    assert {path.name for path in STATIC.glob("*.css")} & set(PAGE_ONLY) <= set(minify.SCRIPTS)
    # Found on disk, not through PAGE_ONLY: every script of the planner and the calculator.
    assert {path.name for path in STATIC.glob("*.js") if path.name.startswith(("planner", "calculator"))} <= set(
        minify.SCRIPTS
    )


def test_minified_scripts_keep_their_strings_and_lose_their_comments(tmp_path):
    (tmp_path / "_static").mkdir()
    source = (
        "var words = 'a  // not a comment';  // a comment\nvar t = \"x  /* kept */  y\";\n/* block */ var n = 1 /\n 2;\n"
        "function twice(value) { var result = value * 2; return words + result; }\n"
    )
    (tmp_path / "_static" / "planner.js").write_text(source)
    (tmp_path / "_static" / "navigation.js").write_text(source)  # not page-only: left alone
    assert minify.minify_scripts(tmp_path) == ["planner.js"]
    out = (tmp_path / "_static" / "planner.js").read_text()
    assert out.startswith(minify.HEADER.format(name="planner.js"))
    body = out[len(minify.HEADER.format(name="planner.js")) :]
    assert "'a  // not a comment'" in body and '"x  /* kept */  y"' in body
    # Globals keep their names (the pages call them); a function's own names are shortened.
    assert "var words=" in body and "function twice(" in body
    assert "value" not in body and "result" not in body
    assert "a comment" not in body.replace("not a comment", "") and "block" not in body
    assert (tmp_path / "_static" / "navigation.js").read_text() == source


def test_a_script_that_is_not_es5_stops_the_build_with_its_name(tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "planner.js").write_text("const t = `x`;\n")
    with pytest.raises(ValueError, match="planner.js must be ES5"):
        minify.minify_scripts(tmp_path)


def test_the_planner_scripts_shrink_by_a_quarter_at_least():
    for name in ("planner.js", "planner-model.js", "planner-capacity.js"):
        source = (STATIC / name).read_text(encoding="utf-8")
        assert len(minify.minified(source, name)) < 0.75 * len(source), name


def test_the_planner_style_sheet_keeps_every_rule_and_string():
    source = (STATIC / "planner.css").read_text(encoding="utf-8")
    out = minify.minified(source, "planner.css")
    assert len(out) < 0.85 * len(source)
    body = out[len(minify.HEADER.format(name="planner.css")) :]
    rules = re.sub(r"/\*.*?\*/", "", source, flags=re.S).count("{")
    assert body.count("{") == body.count("}") == rules and "/*" not in body
    assert 'content: "⚠ "' in source and 'content:"⚠ "' in out


def test_pages_lose_their_indentation_but_not_their_preformatted_text(tmp_path):
    (tmp_path / "book").mkdir()
    page = "<body>\n    <p>one\n      two</p>\n    <pre>  a\n    b</pre>\n    <script>\n  var x = `\n  y`;\n</script>\n</body>"
    (tmp_path / "book" / "planner.html").write_text(page)
    (tmp_path / "book" / "other.html").write_text(page)  # not a page of the interactive files: left alone
    assert "book/planner" in minify.minify_pages(tmp_path)
    out = (tmp_path / "book" / "planner.html").read_text()
    assert out == "<body>\n<p>one\ntwo</p>\n<pre>  a\n    b</pre>\n<script>\n  var x = `\n  y`;\n</script>\n</body>"
    assert (tmp_path / "book" / "other.html").read_text() == page
