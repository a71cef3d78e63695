/* Search in a copy of the book opened from disk (file://), as the workshop
   bundles are. Sphinx's search (searchtools.js) fetches each page it finds to
   show a summary under its title, and a browser refuses fetch() on file://:
   every result logged "Failed to fetch". Read from disk, the results list the
   pages and headings without summaries; served over http(s), nothing changes.
   Loaded on the search page only (tools/sphinx/html_tweaks.py). */
if (window.location.protocol === "file:" && typeof DOCUMENTATION_OPTIONS !== "undefined") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
