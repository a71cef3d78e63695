/*
 * What-if calculator of "Twice the Devices, Half the Wait?" (book/calculator.md).
 *
 * Plain JavaScript, no library, nothing fetched: the page works offline.
 * The formulas mirror lib/budget.py (Phase) and lib/breakeven.py operation by
 * operation, in SI units like the library (seconds, bytes, bytes per second),
 * so both give the same floating-point numbers. The input rules mirror
 * lib/_checks.py. tests/browser/test_calculator.py holds the two to each other.
 */
(function () {
  "use strict";

  // lib.units
  var MS = 1e-3;
  var GB = 1e9;

  // One entry per input: name attribute, words for messages, rule, base case.
  var FIELDS = [
    { name: "serial_ms", label: "Serial time S", rule: "nonnegative", base: "0.8" },
    { name: "divisible_ms", label: "Divisible time C", rule: "nonnegative", base: "12" },
    { name: "efficiency", label: "Efficiency η", rule: "fraction", base: "0.8" },
    { name: "transfers", label: "Transfers Q", rule: "count0", base: "4" },
    { name: "startup_ms", label: "Startup ℓ", rule: "nonnegative", base: "0.03" },
    { name: "transfer_bytes", label: "Bytes per transfer V", rule: "nonnegative", base: "2000000" },
    { name: "bandwidth_GBps", label: "Bandwidth B", rule: "positive", base: "10" },
    { name: "devices", label: "Devices K", rule: "count1", base: "2" }
  ];

  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
  var INFINITE = /^[+]?(inf|infinity|∞)$/i;

  /* Parse one field's text; return {value} or {error} in the words of lib/_checks.py. */
  function check(field, text) {
    var t = String(text).trim();
    var who = field.label + " (" + field.name + ")";
    var value;
    if (t === "") { return { error: who + " must be a number; the field is empty." }; }
    if (NUMBER.test(t)) { value = Number(t); }
    else if (INFINITE.test(t)) { value = Infinity; }
    else { return { error: who + " must be a number (like 0.8 or 2e6), got “" + t + "”." }; }
    switch (field.rule) {
      case "nonnegative":
        if (value < 0) { return { error: who + " must be ≥ 0, got " + t + "." }; }
        if (!isFinite(value)) { return { error: who + " must be finite, got " + t + "." }; }
        break;
      case "positive":
        if (value <= 0) { return { error: who + " must be > 0, got " + t + "." }; }
        break;
      case "fraction":
        if (value <= 0 || value > 1) { return { error: who + " must be in (0, 1]: above 0 and at most 1, got " + t + "." }; }
        break;
      case "count0":
      case "count1":
        if (!isFinite(value) || value !== Math.round(value)) { return { error: who + " must be a whole number, got " + t + "." }; }
        var minimum = field.rule === "count1" ? 1 : 0;
        if (value < minimum) { return { error: who + " must be ≥ " + minimum + ", got " + t + "." }; }
        break;
    }
    return { value: value };
  }

  /* The quantities of lib.budget.Phase and lib.breakeven, in SI units. */
  function compute(p) {
    var S = p.serial_ms * MS;
    var C = p.divisible_ms * MS;
    var eta = p.efficiency;
    var Q = p.transfers;
    var l = p.startup_ms * MS;
    var V = p.transfer_bytes;
    var B = p.bandwidth_GBps * GB / 1.0;  // 1.0: lib.units.s
    var K = p.devices;

    var r = { K: K, eta: eta, S: S, C: C };
    r.one_device_time = S + C;
    r.split_compute_time = C / (K * eta);
    r.communication_time = Q * (l + V / B);
    r.split_time = S + r.split_compute_time + r.communication_time;
    r.speedup = r.split_time === 0 ? null : r.one_device_time / r.split_time;
    r.parallel_efficiency = r.speedup === null ? null : r.speedup / K;
    r.overlap_bound = S + Math.max(r.split_compute_time, r.communication_time);

    var saving = 1 - 1 / (K * eta);  // breakeven.saving_fraction
    r.saving = saving;
    r.break_even_divisible = saving > 0 ? r.communication_time / saving : Infinity;

    var bwMargin = C * saving - Q * l;
    var volume = Q * V;
    r.bandwidth_margin = bwMargin;
    r.min_bandwidth = bwMargin > 0 ? (volume > 0 ? volume / bwMargin : 0) : Infinity;

    var effMargin = C - r.communication_time;
    r.min_efficiency = effMargin > 0 ? C / (K * effMargin) : Infinity;
    return r;
  }

  var SUPERSCRIPT = { "-": "⁻", "+": "", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴",
    "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹" };

  /* Four significant digits; plain decimals between 0.001 and a million, else a power of ten. */
  function fmt(x) {
    if (x === 0) { return "0"; }
    var a = Math.abs(x);
    if (a >= 1e-3 && a < 1e6) {
      var decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
      return x.toFixed(decimals);
    }
    var parts = x.toExponential(3).split("e");
    var exponent = parts[1].split("").map(function (c) { return SUPERSCRIPT[c]; }).join("");
    return parts[0] + " × 10" + exponent;
  }

  function isNumber(x) { return typeof x === "number" && isFinite(x); }

  /* Text for every output: a number with its unit, or words where no finite value exists. */
  function describe(r) {
    var out = {};
    function time(x) { return isNumber(x) ? fmt(x / MS) + " ms" : "too large to represent"; }
    out.one_device_time = time(r.one_device_time);
    out.split_time = time(r.split_time);
    out.communication_time = time(r.communication_time);
    out.overlap_bound = time(r.overlap_bound);

    if (r.speedup === null) {
      out.speedup = "undefined: both times are zero, so there is nothing to compare";
      out.parallel_efficiency = out.speedup;
    } else if (!isNumber(r.speedup)) {
      out.speedup = "not defined for these values";
      out.parallel_efficiency = out.speedup;
    } else {
      out.speedup = fmt(r.speedup) + "×";
      out.parallel_efficiency = fmt(r.parallel_efficiency);
    }

    if (isNumber(r.break_even_divisible)) {
      out.break_even_divisible = fmt(r.break_even_divisible / MS) + " ms";
    } else {
      out.break_even_divisible = "none: with K·η ≤ 1 the devices together are no faster than one, so no amount of work pays";
    }

    if (isNumber(r.min_bandwidth)) {
      out.min_bandwidth = r.min_bandwidth === 0
        ? "0 GB/s: no bytes travel, so any link will do"
        : fmt(r.min_bandwidth / (GB / 1.0)) + " GB/s";
    } else if (r.saving <= 0) {
      out.min_bandwidth = "none: with K·η ≤ 1 no link is fast enough";
    } else {
      out.min_bandwidth = "none: the startup cost Q·ℓ alone eats the time the split saves, so no link is fast enough";
    }

    if (isNumber(r.min_efficiency)) {
      out.min_efficiency = r.min_efficiency > 1
        ? fmt(r.min_efficiency) + ": impossible even at perfect efficiency (η cannot exceed 1)"
        : fmt(r.min_efficiency);
    } else {
      out.min_efficiency = "none: the communication H takes at least as long as the divisible work C, so no efficiency pays";
    }
    return out;
  }

  var TIMES = ["one_device_time", "split_time", "communication_time", "overlap_bound", "break_even_divisible"];

  /* Each output in the unit the page shows (ms for times, GB/s for bandwidth); null if undefined. */
  function inDisplayUnits(r) {
    var out = {};
    ["speedup", "parallel_efficiency", "min_efficiency"].forEach(function (k) { out[k] = r[k]; });
    TIMES.forEach(function (k) { out[k] = r[k] / MS; });
    out.min_bandwidth = r.min_bandwidth / (GB / 1.0);
    return out;
  }

  function verdict(r) {
    if (r.speedup === null || !isNumber(r.speedup)) { return "Nothing to compare: both times are zero."; }
    var K = r.K;
    if (r.split_time < r.one_device_time) {
      return "With " + K + " devices the phase finishes sooner: " + fmt(r.speedup) + " times as fast as on one device.";
    }
    if (r.split_time > r.one_device_time) {
      return "With " + K + " devices the phase takes longer than on one device: communication and lost efficiency eat the gain.";
    }
    return "With " + K + " devices the phase takes exactly as long as on one device: this is the break-even point.";
  }

  // ---------------------------------------------------------------- chart

  var SVG = "http://www.w3.org/2000/svg";
  // Drawing size in CSS pixels: the width the chart gets on screen, so text stays legible on a phone.
  var W = 640, H = 340, M = { left: 64, right: 20, top: 16, bottom: 52 };

  function fitToScreen(svg) {
    var room = svg.parentNode ? svg.parentNode.clientWidth : 0;
    W = Math.round(Math.max(320, Math.min(640, room || 640)));
    H = Math.round(Math.max(260, W * 0.53));
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  }

  /* Like fmt, without trailing zeros: for labels and sentences. */
  function short(x) {
    var s = fmt(x);
    if (s.indexOf(".") >= 0 && s.indexOf("×") < 0) { s = s.replace(/0+$/, "").replace(/\.$/, ""); }
    return s;
  }

  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  /* About five round tick values from 0 to top. */
  function ticks(top) {
    var raw = top / 5;
    var power = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * power; })
      .filter(function (s) { return s >= raw; })[0];
    var values = [];
    for (var i = 0; i * step <= top * (1 + 1e-9); i++) { values.push(i * step); }
    return values;
  }

  function drawChart(svg, caption, r) {
    fitToScreen(svg);
    var title = svg.querySelector("title");
    while (svg.lastChild && svg.lastChild !== title) { svg.removeChild(svg.lastChild); }
    if (!r) {
      svg.appendChild(el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "class": "calc-axis-label" },
        "Fix the marked input to see the chart."));
      caption.textContent = "No chart: an input is not valid.";
      return;
    }
    // Everything in milliseconds.
    var S = r.S / MS, C = r.C / MS, Hc = r.communication_time / MS;
    var slope2 = 1 / (r.K * r.eta);
    var Cstar = isNumber(r.break_even_divisible) ? r.break_even_divisible / MS : null;
    var xmax = Math.max(C * 1.25, Cstar !== null ? Cstar * 2 : 0);
    if (!(xmax > 0) || !isFinite(xmax)) { xmax = Math.max(1, Hc * 2); }
    var t1 = function (c) { return S + c; };
    var t2 = function (c) { return S + c * slope2 + Hc; };
    var ymax = Math.max(t1(xmax), t2(xmax), t2(0)) * 1.05;
    if (!(ymax > 0) || !isFinite(ymax)) { ymax = 1; }
    var px = function (c) { return M.left + (W - M.left - M.right) * c / xmax; };
    var py = function (t) { return H - M.bottom - (H - M.top - M.bottom) * t / ymax; };

    var axes = el("g", { "class": "calc-axes", "aria-hidden": "true" });
    ticks(xmax).forEach(function (v) {
      axes.appendChild(el("line", { x1: px(v), x2: px(v), y1: py(0), y2: py(0) + 5, "class": "calc-tick" }));
      axes.appendChild(el("text", { x: px(v), y: py(0) + 18, "text-anchor": "middle" }, short(v)));
    });
    ticks(ymax).forEach(function (v) {
      axes.appendChild(el("line", { x1: px(0), x2: W - M.right, y1: py(v), y2: py(v), "class": "calc-grid" }));
      axes.appendChild(el("text", { x: px(0) - 8, y: py(v) + 4, "text-anchor": "end" }, short(v)));
    });
    axes.appendChild(el("line", { x1: px(0), x2: W - M.right, y1: py(0), y2: py(0), "class": "calc-axis" }));
    axes.appendChild(el("line", { x1: px(0), x2: px(0), y1: M.top, y2: py(0), "class": "calc-axis" }));
    axes.appendChild(el("text", { x: (px(0) + W - M.right) / 2, y: H - 10, "text-anchor": "middle", "class": "calc-axis-label" },
      "divisible work C (ms on one device)"));
    axes.appendChild(el("text", { x: 16, y: (M.top + py(0)) / 2, "text-anchor": "middle", "class": "calc-axis-label",
      transform: "rotate(-90 16 " + (M.top + py(0)) / 2 + ")" }, "time (ms)"));
    svg.appendChild(axes);

    var lines = el("g", { "aria-hidden": "true" });
    lines.appendChild(el("line", { x1: px(0), y1: py(t1(0)), x2: px(xmax), y2: py(t1(xmax)), "class": "calc-t1" }));
    lines.appendChild(el("line", { x1: px(0), y1: py(t2(0)), x2: px(xmax), y2: py(t2(xmax)), "class": "calc-t2" }));
    // The current C.
    lines.appendChild(el("line", { x1: px(C), x2: px(C), y1: M.top, y2: py(0), "class": "calc-now" }));
    lines.appendChild(el("circle", { cx: px(C), cy: py(t1(C)), r: 4, "class": "calc-dot-t1" }));
    lines.appendChild(el("circle", { cx: px(C), cy: py(t2(C)), r: 4, "class": "calc-dot-t2" }));
    if (Cstar !== null) {
      lines.appendChild(el("circle", { cx: px(Cstar), cy: py(t1(Cstar)), r: 6, "class": "calc-breakeven" }));
      lines.appendChild(el("text", { x: px(Cstar) + 8, y: py(t1(Cstar)) + 18, "class": "calc-note" },
        "break-even C* = " + short(Cstar) + " ms"));
    }
    svg.appendChild(lines);

    var legend = el("g", { "aria-hidden": "true", transform: "translate(" + (M.left + 12) + "," + (M.top + 8) + ")" });
    legend.appendChild(el("rect", { x: -6, y: -6, width: 200, height: 62, "class": "calc-legend-box" }));
    legend.appendChild(el("line", { x1: 0, x2: 28, y1: 6, y2: 6, "class": "calc-t1" }));
    legend.appendChild(el("text", { x: 36, y: 10 }, "T₁, one device"));
    legend.appendChild(el("line", { x1: 0, x2: 28, y1: 26, y2: 26, "class": "calc-t2" }));
    legend.appendChild(el("text", { x: 36, y: 30 }, "T₂, split over " + r.K));
    legend.appendChild(el("line", { x1: 14, x2: 14, y1: 38, y2: 52, "class": "calc-now" }));
    legend.appendChild(el("text", { x: 36, y: 50 }, "your C = " + short(C) + " ms"));
    svg.appendChild(legend);

    var words = "Two straight lines against the divisible work C, from 0 to " + short(xmax) + " ms. " +
      "T₁, one device, starts at S = " + short(S) + " ms and rises one millisecond per millisecond of C. " +
      "T₂, split over " + r.K + " devices, starts at S + H = " + short(S + Hc) + " ms and rises " +
      short(slope2) + " ms per millisecond of C. ";
    if (Cstar !== null) {
      words += "They cross at the break-even point C* = " + short(Cstar) + " ms; for more work than that the split is faster. ";
    } else {
      words += "They never cross: with K·η ≤ 1 the split line is at least as steep, so the split never wins. ";
    }
    words += "At your C = " + short(C) + " ms, T₁ is " + short(t1(C)) + " ms and T₂ is " + short(t2(C)) + " ms.";
    caption.textContent = words;
  }

  // ------------------------------------------------------------ the page

  function init() {
    var form = document.getElementById("calc-form");
    if (!form) { return; }
    var svg = document.getElementById("calc-chart");
    var caption = document.getElementById("calc-chart-desc");
    var verdictEl = document.getElementById("calc-verdict");
    var lastResult = null;

    /* Fill the fields from a scenario's query; true if any field was set. */
    function openScenario(query) {
      var given = new URLSearchParams(query);
      var found = false;
      FIELDS.forEach(function (f) {
        if (given.has(f.name)) { form.elements[f.name].value = given.get(f.name); found = true; }
      });
      return found;
    }

    var link = window.ScenarioLink.wire({
      ids: { link: "calc-link", help: "calc-link-help", open: "calc-open", openButton: "calc-open-button",
             copy: "calc-copy", status: "calc-copy-status" },
      page: "calculator.html", tool: "calculator", open: openScenario, update: update
    });
    openScenario(link.start);  // a shared link fills the fields

    /* The scenario as a link that travels (see scenario-link.js). */
    function updateUrl() {
      var params = new URLSearchParams();
      FIELDS.forEach(function (f) { params.set(f.name, form.elements[f.name].value.trim()); });
      link.publish(params.toString());
    }

    function update() {
      var values = {};
      var valid = true;
      FIELDS.forEach(function (f) {
        var input = form.elements[f.name];
        var error = document.getElementById("calc-" + f.name + "-error");
        var got = check(f, input.value);
        if (got.error) {
          valid = false;
          input.setAttribute("aria-invalid", "true");
          error.textContent = got.error;
          error.hidden = false;
        } else {
          values[f.name] = got.value;
          input.removeAttribute("aria-invalid");
          error.textContent = "";
          error.hidden = true;
        }
      });
      updateUrl();
      var outputs = document.querySelectorAll("[data-output]");
      if (!valid) {
        outputs.forEach(function (node) {
          node.textContent = "waiting for valid input";
          node.classList.add("calc-words");
          node.setAttribute("data-value", "");
        });
        verdictEl.textContent = "One or more inputs are not valid; the message under the field says why.";
        lastResult = null;
        drawChart(svg, caption, null);
        return;
      }
      var r = compute(values);
      var text = describe(r);
      var raw = inDisplayUnits(r);
      outputs.forEach(function (node) {
        var name = node.getAttribute("data-output");
        node.textContent = text[name];
        node.classList.toggle("calc-words", !/^-?\d/.test(text[name]));
        node.setAttribute("data-value", raw[name] === null ? "" : String(raw[name]));
      });
      verdictEl.textContent = verdict(r);
      lastResult = r;
      drawChart(svg, caption, r);
    }

    var pending = false;
    window.addEventListener("resize", function () {
      if (pending) { return; }
      pending = true;
      window.requestAnimationFrame(function () { pending = false; drawChart(svg, caption, lastResult); });
    });
    form.addEventListener("input", function (event) {
      if (event.target !== link.openEl) { update(); }
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    /* Projector layout: inputs beside results, hints hidden (calculator.css); "#projector" opens it. */
    var calc = document.getElementById("calc");
    var projector = document.getElementById("calc-projector");
    function project(on) {
      calc.classList.toggle("calc-projector", on);
      projector.setAttribute("aria-pressed", on ? "true" : "false");
      var address = window.location.pathname + window.location.search + (on ? "#projector" : "");
      window.history.replaceState(null, "", address);
      if (on) { window.requestAnimationFrame(function () { calc.scrollIntoView(); }); }
      drawChart(svg, caption, lastResult);
    }
    projector.addEventListener("click", function () { project(!calc.classList.contains("calc-projector")); });
    document.getElementById("calc-reset").addEventListener("click", function () {
      FIELDS.forEach(function (f) { form.elements[f.name].value = f.base; });
      update();
    });
    update();
    if (window.location.hash === "#projector") { project(true); }
  }

  // For curious readers: the formulas, to call from the browser's console (no test reads this).
  window.whatIfCalculator = { compute: compute, check: check, format: fmt, fields: FIELDS };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
}());
