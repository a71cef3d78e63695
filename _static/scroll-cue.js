/*
 * A table wider than the column scrolls sideways in its own box (fit.css,
 * and the planner's results, planner.css), and so does a figure kept at its
 * legible width on a phone (figure-zoom.js); a line above the box says so,
 * since a phone shows no scroll bar until the reader touches it. The line is
 * added when the box overflows and removed when it fits again: a wider
 * window, a rotated phone, or a table a script has just filled.
 * tests/browser/test_layout.py checks every page at 1280 and 390 px.
 */
(function () {
  "use strict";

  var BOXES = "article.bd-article :is(.pst-scrollable-table-container, .pl-scroll, .zoom-box)";
  var FIGURE = "\u2194 Scroll the figure sideways, or tap it to enlarge.";
  var TABLE = "\u2194 The table is wider than the page: scroll it sideways.";

  function cue(box) {
    var line = box.previousElementSibling;
    var has = line !== null && line.classList.contains("scroll-cue");
    var overflows = box.scrollWidth > box.clientWidth + 1;
    if (overflows && !has) {
      line = document.createElement("p");
      line.className = "scroll-cue";
      line.textContent = box.classList.contains("zoom-box") ? FIGURE : TABLE;
      box.parentNode.insertBefore(line, box);
    } else if (!overflows && has) {
      line.remove();
    }
  }

  function all() { Array.prototype.forEach.call(document.querySelectorAll(BOXES), cue); }

  function start() {
    if (window.ResizeObserver) {  // also when a script fills a table after the page has loaded
      var watch = new ResizeObserver(function (entries) {
        entries.forEach(function (entry) { cue(entry.target); });
      });
      Array.prototype.forEach.call(document.querySelectorAll(BOXES), function (box) { watch.observe(box); });
    }
    all();
    window.addEventListener("resize", all);
  }

  if (document.readyState === "complete") {
    start();
  } else {
    window.addEventListener("load", start);
  }
}());
