/*
 * Deliberately empty: replaces the theme's 1.5 MB fontawesome.js.
 *
 * pydata-sphinx-theme loads Font Awesome twice: as this script (which swaps
 * every <i class="fa-..."> for an inline SVG) and as a web font declared in
 * its own stylesheet. The web font alone draws the same icons, so the script
 * only added weight to every page of the book. Sphinx copies files from the
 * book's _static folder after the theme's, so this file takes its place;
 * tools/sphinx/html_tweaks.py keeps Jupyter Book from listing it a second time.
 * tests/browser checks that the pages still pass axe-core and screenshots show
 * the header icons.
 */
