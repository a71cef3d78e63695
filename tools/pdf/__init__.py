"""The book as one PDF, printed by the system Chromium (``python -m tools.pdf``)."""
