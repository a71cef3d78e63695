/*
 * Layout names such as tp8-pp1-dp1 or tp2·pp2·dp2 never break across lines.
 *
 * A browser may break a line after any hyphen, so a narrow table cell showed
 * "tp1- / pp1- / dp8". This wraps each name in the page (prose, tables, code
 * and outputs alike, but not maths, nor SVG text, which never wraps and where
 * a span would show nothing) in <span class="layout-name">, which fit.css
 * keeps on one line, also in what a script adds to the page later.
 * tests/browser/test_layout.py checks every page.
 */
(function () {
  "use strict";

  // Two or more parts of a parallelism (adp, tp, pp, dp, ep) with their degree, joined by - or ·.
  var NAME = /\b(?:adp|tp|pp|dp|ep)\d+(?:[-·](?:tp|pp|dp|ep)\d+)+\b/g;
  var SKIP = "script, style, textarea, svg, mjx-container, .math, .layout-name";

  function wrap(node) {
    var text = node.data;
    NAME.lastIndex = 0;
    if (!NAME.test(text)) { return; }
    NAME.lastIndex = 0;
    var fragment = document.createDocumentFragment();
    var last = 0;
    var match;
    while ((match = NAME.exec(text)) !== null) {
      fragment.appendChild(document.createTextNode(text.slice(last, match.index)));
      var span = document.createElement("span");
      span.className = "layout-name";
      span.textContent = match[0];
      fragment.appendChild(span);
      last = match.index + match[0].length;
    }
    fragment.appendChild(document.createTextNode(text.slice(last)));
    node.parentNode.replaceChild(fragment, node);
  }

  /* Every text node under root that holds a layout name, outside maths and scripts. */
  function mark(root) {
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        var parent = node.parentElement;
        return parent && !parent.closest(SKIP) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT;
      }
    });
    var found = [];
    for (var node = walker.nextNode(); node; node = walker.nextNode()) { found.push(node); }
    found.forEach(wrap);
  }

  /* Mark the page, then whatever a script adds to it later (the layout planner's tables). */
  function start() {
    var root = document.querySelector("main") || document.body;
    mark(root);
    new MutationObserver(function (records) {
      records.forEach(function (record) {
        Array.prototype.forEach.call(record.addedNodes, function (added) {
          if (added.nodeType === Node.ELEMENT_NODE) { mark(added); }
          else if (added.nodeType === Node.TEXT_NODE && added.parentElement && !added.parentElement.closest(SKIP)) { wrap(added); }
        });
      });
    }).observe(root, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
