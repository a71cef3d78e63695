/* The link that carries a tool's scenario: one piece shared by the what-if calculator and
 * the layout planner (each page loads it beside its own script; tools/sphinx/html_tweaks.py).
 *
 * - The address bar belongs to a tool on its own page. The single-page book (the PDF's
 *   source, Sphinx's "singlehtml" builder) holds every tool on one page, so there no tool
 *   reads or writes the address. DOCUMENTATION_OPTIONS comes from Sphinx's
 *   documentation_options.js.
 * - From a file (file://) a full address names a folder of this disk, so the link is
 *   relative to the page; the "Open a shared scenario" box reads any copy's link.
 */
(function () {
  "use strict";

  var OWNS_ADDRESS = !(typeof DOCUMENTATION_OPTIONS !== "undefined" && DOCUMENTATION_OPTIONS.BUILDER === "singlehtml");
  var FROM_FILE = window.location.protocol === "file:";

  /* The query of a pasted link (absolute, relative, or just its "?…" part), without "?" and "#…". */
  function queryOf(text) {
    var t = String(text).trim().split("#")[0];
    return t.indexOf("?") >= 0 ? t.slice(t.indexOf("?") + 1) : t;
  }

  /* Wire one tool's link rows. Options:
       ids    {link, help, open, openButton, copy, status}: the element ids of the rows;
       page   the page's file name, for the relative link when the address has none;
       tool   the tool's name in messages;
       open   function (query): fills the form from a query, true if it held any input;
       update function (): recomputes the page after a scenario was opened.
     Returns the link: {openEl, start (the query the page opens with), publish(query)}. */
  function wire(o) {
    var linkEl = document.getElementById(o.ids.link);
    var status = document.getElementById(o.ids.status);
    var help = document.getElementById(o.ids.help);
    var openEl = document.getElementById(o.ids.open);
    var pageName = window.location.pathname.split("/").pop() || o.page;

    if (help) {
      help.textContent = FROM_FILE
        ? "This copy of the book is a file on your computer, so the link is relative to this page: " +
          "anyone pastes it into “Open a shared scenario” on their own copy."
        : "Anyone who can reach this server opens the same scenario with this link.";
    }
    if (openEl) {
      var openPasted = function () {
        if (o.open(queryOf(openEl.value))) {
          status.textContent = "Scenario opened.";
          o.update();
        } else {
          status.textContent = "That link holds no scenario of this " + o.tool + ".";
        }
      };
      document.getElementById(o.ids.openButton).addEventListener("click", openPasted);
      openEl.addEventListener("keydown", function (event) {
        if (event.key === "Enter") { event.preventDefault(); openPasted(); }
      });
    }
    document.getElementById(o.ids.copy).addEventListener("click", function () {
      var done = function () { status.textContent = "Link copied."; };
      var manual = function () {
        linkEl.focus();
        linkEl.select();
        status.textContent = "Press Ctrl+C (or ⌘C) to copy the selected link.";
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(linkEl.value).then(done, manual);
      } else {
        manual();
      }
    });

    return {
      openEl: openEl,
      start: OWNS_ADDRESS ? queryOf(window.location.search) : "",
      /* Show the scenario's query as a link that travels, and in the address bar where the tool owns it. */
      publish: function (query) {
        if (OWNS_ADDRESS) {
          try {
            window.history.replaceState(null, "", window.location.pathname + "?" + query + window.location.hash);
          } catch (e) { /* file:// in some browsers */ }
        }
        linkEl.value = FROM_FILE ? pageName + "?" + query : window.location.href.split("#")[0].split("?")[0] + "?" + query;
      }
    };
  }

  window.ScenarioLink = { wire: wire, queryOf: queryOf };
}());
