"""tools.sphinx.run_note: the note follows ``repository.url``, and the placeholder never becomes a link."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tools.release.bundle_files import PARTICIPANT_COMMANDS
from tools.sphinx import run_note

PLACEHOLDER_URL = "https://github.com/OWNER/twice-the-devices"


@pytest.mark.parametrize("url", [PLACEHOLDER_URL, "", None])
def test_unset_repository_points_to_the_download_and_the_bundle(url):
    note = run_note.run_note("notebooks/05_collectives", url)
    assert "OWNER" not in note and "href" not in note
    assert "download" in note and "bundle" in note
    for command in PARTICIPANT_COMMANDS[:-1]:
        assert command in note
    assert ".venv/bin/jupyter lab student/05_collectives.ipynb" in note and "notebooks/" not in note


def test_set_repository_is_linked_with_a_clones_commands():
    note = run_note.run_note("notebooks/05_collectives", "https://github.com/someone/twice-the-devices")
    assert 'href="https://github.com/someone/twice-the-devices"' in note
    assert f"{run_note.INSTALL}\njupyter lab notebooks/05_collectives.ipynb" in note


@pytest.mark.parametrize(("url", "button"), [(PLACEHOLDER_URL, False), ("https://github.com/someone/x", True)])
def test_theme_repository_button_is_off_while_the_url_is_the_placeholder(url, button):
    config = SimpleNamespace(html_theme_options={"repository_url": url, "use_repository_button": True})
    run_note._hide_placeholder(None, config)
    assert config.html_theme_options["use_repository_button"] is button
    assert "OWNER" not in config.html_theme_options["repository_url"]
