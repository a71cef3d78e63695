"""Sphinx extensions of the book: page tweaks, the interactive pages' data, workshop pages, data downloads."""
