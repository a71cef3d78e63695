"""Maintenance scripts of the book (execution, student notebooks, screenshots)."""
