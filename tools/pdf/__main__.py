"""``python -m tools.pdf``: see :func:`tools.pdf.build.main`."""

from tools.pdf.build import main

main()
