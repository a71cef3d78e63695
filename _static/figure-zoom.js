/*
 * Every figure of the book can be enlarged: click it, or tab to its
 * "Enlarge" button and press Enter. The image opens at the size it was drawn
 * (one image pixel per screen pixel; on a phone the overlay scrolls) in a
 * modal <dialog>, which Escape, the close button or a click closes; focus
 * then returns to the figure's button. No library, nothing fetched.
 *
 * On a narrow screen a figure is not shrunk below the width at which its
 * smallest text is LEGIBLE_PX pixels tall: lib.plotting draws no text
 * smaller than MIN_FONT_PT points at DPI pixels per inch, so that width is
 * the drawn width times LEGIBLE_PX / (MIN_FONT_PT / 72 * DPI). Such a figure
 * keeps that width in a box that scrolls sideways (scroll-cue.js says so above it);
 * the page itself never scrolls sideways.
 * Styles: figure-zoom.css. Tested by tests/browser/test_figures.py.
 */
(function () {
  "use strict";

  // The book's figures and diagrams: images in the article, not icons or hidden ones.
  var FIGURES = "article.bd-article img";
  var dialog = null;
  // lib.plotting.MIN_FONT_PT and DPI (tests/unit/tools/sphinx/test_html_tweaks.py checks them), and the smallest
  // text a phone reader is asked to read, CSS pixels.
  var MIN_FONT_PT = 10, DPI = 110, LEGIBLE_PX = 9;
  var LEGIBLE_SHARE = LEGIBLE_PX / (MIN_FONT_PT / 72 * DPI);

  function build() {
    dialog = document.createElement("dialog");
    dialog.className = "zoom-dialog";
    dialog.setAttribute("aria-label", "Enlarged figure");
    var close = document.createElement("button");
    close.type = "button";
    close.className = "zoom-close";
    close.textContent = "Close";
    close.addEventListener("click", function () { dialog.close(); });
    var frame = document.createElement("div");
    frame.className = "zoom-frame";
    var image = document.createElement("img");
    frame.appendChild(image);
    var caption = document.createElement("p");
    caption.className = "zoom-caption";
    dialog.append(close, frame, caption);
    // A click on the backdrop or the image closes; scrolling the frame does not.
    dialog.addEventListener("click", function (event) {
      if (event.target === dialog || event.target === image) { dialog.close(); }
    });
    dialog.addEventListener("close", function () { image.removeAttribute("src"); });
    document.body.appendChild(dialog);
  }

  function open(img) {
    if (!dialog) { build(); }
    var image = dialog.querySelector(".zoom-frame img");
    image.src = img.currentSrc || img.src;
    image.alt = img.alt;
    var figure = img.closest("figure");
    var parts = figure ? figure.querySelectorAll("figcaption .caption-number, figcaption .caption-text") : [];
    dialog.querySelector(".zoom-caption").textContent = Array.prototype.map.call(parts, function (part) {
      return part.textContent.trim();
    }).join(" ");
    dialog.showModal();
    dialog.querySelector(".zoom-close").focus();
  }

  function enhance(img) {
    if (img.closest("[aria-hidden='true'], a, .zoom-box")) { return; }
    var box = document.createElement("span");
    box.className = "zoom-box";
    img.parentNode.insertBefore(box, img);
    box.appendChild(img);
    var button = document.createElement("button");
    button.type = "button";
    button.className = "zoom-button";
    button.textContent = "Enlarge";
    var figure = img.closest("figure");
    var number = figure ? figure.querySelector(".caption-number") : null;
    button.setAttribute("aria-label", "Enlarge " + (number ? number.textContent.trim().replace(/\s+$/, "") : "figure"));
    button.addEventListener("click", function () { open(img); });
    box.appendChild(button);
    img.classList.add("zoomable");
    img.addEventListener("click", function () { open(img); });
    if (img.complete) { fit(img); } else { img.addEventListener("load", function () { fit(img); }); }
  }

  /* Keep the figure at its legible width where the column is narrower, in a box that scrolls sideways. */
  function fit(img) {
    var box = img.closest(".zoom-box");
    if (!box || !img.naturalWidth) { return; }
    var legible = Math.ceil(img.naturalWidth * LEGIBLE_SHARE);
    var wide = legible > box.parentNode.clientWidth && legible < img.naturalWidth;
    box.classList.toggle("zoom-wide", wide);
    img.style.width = wide ? legible + "px" : "";
  }

  function start() {
    Array.prototype.forEach.call(document.querySelectorAll(FIGURES), enhance);
    window.addEventListener("resize", function () {
      Array.prototype.forEach.call(document.querySelectorAll("img.zoomable"), fit);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
