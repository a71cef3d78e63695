"""The built site in the system Chromium: opening it, screenshots, page weight."""
