"""Tests for the package lib.validation (__main__.py): the command line's doctest runs."""

from __future__ import annotations

import doctest

import pytest

import lib.validation.__main__ as cli


@pytest.mark.slow
def test_the_command_line_doctest_runs():
    result = doctest.testmod(cli, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 1 and result.failed == 0
