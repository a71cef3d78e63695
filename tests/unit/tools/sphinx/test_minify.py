"""The interactive pages' scripts are minified in the built site (tools/sphinx/minify.py), and only those."""

from __future__ import annotations

from pathlib import Path

from tools.sphinx import minify
from tools.sphinx.html_tweaks import PAGE_ONLY

STATIC = Path(__file__).resolve().parents[4] / "_static"


def test_every_page_only_script_in_static_is_minified():
    scripts = {path.name for path in STATIC.glob("*.js")} & set(PAGE_ONLY)
    assert scripts and scripts <= set(minify.SCRIPTS)
    assert all(name.endswith(".js") for name in minify.SCRIPTS)
    # Found on disk, not through PAGE_ONLY: every script of the planner and the calculator.
    assert {path.name for path in STATIC.glob("*.js") if path.name.startswith(("planner", "calculator"))} <= set(
        minify.SCRIPTS
    )


def test_minified_scripts_keep_their_strings_and_lose_their_comments(tmp_path):
    (tmp_path / "_static").mkdir()
    source = (
        "var words = 'a  // not a comment';  // a comment\nvar t = `x  ${words}  y`;\n/* block */ var n = 1 /\n 2;\n"
    )
    (tmp_path / "_static" / "planner.js").write_text(source)
    (tmp_path / "_static" / "navigation.js").write_text(source)  # not page-only: left alone
    assert minify.minify_scripts(tmp_path) == ["planner.js"]
    out = (tmp_path / "_static" / "planner.js").read_text()
    assert out.startswith(minify.HEADER.format(name="planner.js"))
    body = out[len(minify.HEADER.format(name="planner.js")) :]
    assert "'a  // not a comment'" in body and "`x  ${words}  y`" in body
    assert "a comment" not in body.replace("not a comment", "") and "block" not in body
    assert (tmp_path / "_static" / "navigation.js").read_text() == source


def test_the_planner_scripts_shrink_by_a_quarter_at_least():
    for name in ("planner.js", "planner-model.js", "planner-capacity.js"):
        source = (STATIC / name).read_text(encoding="utf-8")
        assert len(minify.minified(source, name)) < 0.75 * len(source), name
