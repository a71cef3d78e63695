/*
 * Site navigation that works with sphinx-book-theme 1.3.0 on pydata-sphinx-theme 0.17.1.
 *
 * pydata-sphinx-theme 0.17 draws its own header (#pst-header) with a sidebar
 * toggle, a "secondary" toggle and two search buttons. sphinx-book-theme hides
 * that header's toggles and shows its own in the article header. Both themes
 * then bind the *first* element with the class .primary-toggle (and
 * .secondary-toggle), which is the hidden header button (pydata-sphinx-theme
 * issue #2451): the drawer never opens on a phone and the sidebar never
 * collapses on a desktop.
 *
 * The fix: remove the hidden header's toggles before either theme looks for
 * them. That moment is the document's switch to readyState "interactive": the
 * page is parsed, but the deferred theme script (pydata-sphinx-theme.js) has
 * not run, and sphinx-book-theme's handlers wait for DOMContentLoaded, which
 * comes later still. The article header's toggles are then the first ones, and
 * the themes' own code drives them: a dialog (drawer) below 992 px, a
 * collapsed sidebar above. reading.css hides the empty header band itself.
 * tests/browser/test_navigation.py checks both, on every page.
 */
(function () {
  "use strict";

  var HEADER_TOGGLES = "#pst-header .sidebar-toggle";

  function dropHeaderToggles() {
    var toggles = document.querySelectorAll(HEADER_TOGGLES);
    Array.prototype.forEach.call(toggles, function (button) { button.remove(); });
  }

  if (document.readyState === "loading") {
    document.addEventListener("readystatechange", function once() {
      document.removeEventListener("readystatechange", once);
      dropHeaderToggles();
    });
  } else {
    dropHeaderToggles();
  }
}());
