/*
 * What-if calculator of "Twice the Devices, Half the Wait?" (book/calculator.md).
 *
 * Plain JavaScript, no library, nothing fetched: the page works offline.
 * The formulas mirror lib/budget.py (Phase) and lib/breakeven.py operation by
 * operation, in SI units like the library (seconds, bytes, bytes per second).
 * The input rules mirror lib/_checks.py. tests/browser/test_calculator.py
 * holds the page to the library.
 *
 * Two modes. In the model mode (the default) V and l follow K as in chapter
 * 2's sweep: V_K is what each device sends in a ring collective of an n-byte
 * message (lib.collectives.bytes_sent) and l_K = l0 + steps(K) delta its
 * startup (lib.collectives.startup_time); the constants per collective, link
 * and protocol, and the presets, come from lib through
 * _static/calculator-data.js (tools/sphinx/calculator_data.py). In the what-if mode
 * Q, l and V are typed and stay fixed whatever K is.
 */
(function () {
  "use strict";

  // lib.units
  var MS = 1e-3;
  var US = 1e-6;
  var GB = 1e9;

  // Set by calculator-data.js, which may load after this file: read again when the page starts.
  var DATA = window.CALCULATOR_DATA || { collectives: {}, links: {}, presets: {}, max_devices: 4096 };
  var MAX_DEVICES = DATA.max_devices;

  // One entry per typed input: name attribute, words for messages, rule, modes that use it, base value.
  var FIELDS = [
    { name: "serial_ms", label: "Serial time S", rule: "nonnegative" },
    { name: "divisible_ms", label: "Divisible time C", rule: "nonnegative" },
    { name: "efficiency", label: "Efficiency η", rule: "fraction" },
    { name: "devices", label: "Devices K", rule: "count1" },
    { name: "transfers", label: "Transfers Q", rule: "count0" },
    { name: "bandwidth_GBps", label: "Bandwidth B", rule: "positive" },
    { name: "collective", label: "Collective", rule: "collective", mode: "model" },
    { name: "message_bytes", label: "Message n", rule: "nonnegative", mode: "model" },
    { name: "l0_us", label: "Base latency ℓ₀", rule: "nonnegative", mode: "model" },
    { name: "delta_us", label: "Latency per step δ", rule: "nonnegative", mode: "model" },
    { name: "startup_ms", label: "Startup ℓ", rule: "nonnegative", mode: "fixed", base: "0.03" },
    { name: "transfer_bytes", label: "Bytes per transfer V", rule: "nonnegative", mode: "fixed", base: "2000000" }
  ];
  var MODES = ["model", "fixed"];

  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
  var INFINITE = /^[+]?(inf|infinity|∞)$/i;
  var DIGITS = /^\d+$/;

  /* Parse one field's text; return {value} or {error} in the words of lib/_checks.py. */
  function check(field, text) {
    var t = String(text).trim();
    var who = field.label + " (" + field.name + ")";
    var value;
    if (field.rule === "collective") {
      return DATA.collectives[t] ? { value: t } : { error: who + " must be one of " + Object.keys(DATA.collectives).join(", ") + ", got “" + t + "”." };
    }
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
        var minimum = field.rule === "count1" ? 1 : 0;
        if (value < minimum) { return { error: who + " must be ≥ " + minimum + ", got " + t + "." }; }
        if (!isFinite(value) || value !== Math.round(value)) { return { error: who + " must be a whole number, got " + t + "." }; }
        if (field.name === "devices" && value > MAX_DEVICES) {
          return { error: who + " must be at most " + MAX_DEVICES + ": the ring model of chapter 5 prices one group of devices, got " + t + "." };
        }
        if (!DIGITS.test(t)) { return { error: who + " must be a whole number written in digits, like 8, got " + t + "." }; }
        break;
    }
    return { value: value };
  }

  /* V_K and l_K of the model mode (seconds, bytes), as lib.collectives.bytes_sent and startup_time give them. */
  function modelTerms(v) {
    var c = DATA.collectives[v.collective];
    var K = v.devices;
    return {
      transfer_bytes: (K > 1 ? c.share * (K - 1) / K : 0) * v.message_bytes,
      startup: K > 1 ? (v.l0_us + c.per_rank * (K - 1) * v.delta_us) * US : 0
    };
  }

  /* The lib.budget.Phase of one set of checked inputs, in SI units. In the model mode one device
     runs the whole job, so its efficiency is 1 (chapter 2's reference point). */
  function phaseOf(v, mode) {
    var phase = { serial: v.serial_ms * MS, divisible: v.divisible_ms * MS, efficiency: v.efficiency,
                  transfers: v.transfers, bandwidth: v.bandwidth_GBps * GB / 1.0, devices: v.devices };  // 1.0: lib.units.s
    if (mode === "model") {
      var terms = modelTerms(v);
      phase.startup = terms.startup;
      phase.transfer_bytes = terms.transfer_bytes;
      if (v.devices === 1) { phase.efficiency = 1; }
    } else {
      phase.startup = v.startup_ms * MS;
      phase.transfer_bytes = v.transfer_bytes;
    }
    return phase;
  }

  /* The quantities of lib.budget.Phase and lib.breakeven, in SI units. */
  function compute(p) {
    var S = p.serial, C = p.divisible, eta = p.efficiency, Q = p.transfers;
    var l = p.startup, V = p.transfer_bytes, B = p.bandwidth, K = p.devices;

    var r = { K: K, eta: eta, S: S, C: C, startup: l, transfer_bytes: V };
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
    r.volume = volume;
    r.min_bandwidth = bwMargin > 0 ? (volume > 0 ? volume / bwMargin : 0) : Infinity;

    var effMargin = C - r.communication_time;
    r.efficiency_margin = effMargin;
    r.min_efficiency = effMargin > 0 ? C / (K * effMargin) : Infinity;
    return r;
  }

  /* The K from 1 to MAX_DEVICES with the highest speedup under the model mode (the first, if tied). */
  function bestDevices(v) {
    var best = { devices: 1, speedup: -Infinity };
    for (var K = 1; K <= MAX_DEVICES; K++) {
      var s = compute(phaseOf(Object.assign({}, v, { devices: K }), "model")).speedup;
      if (s !== null && s > best.speedup) { best = { devices: K, speedup: s }; }
    }
    return best;
  }

  var SUPERSCRIPT = { "-": "⁻", "+": "", "0": "⁰", "1": "¹", "2": "²", "3": "³", "4": "⁴",
    "5": "⁵", "6": "⁶", "7": "⁷", "8": "⁸", "9": "⁹" };

  /* Four significant digits; plain decimals between 0.001 and a million, else a power of ten. */
  function fmt(x) {
    if (x === 0) { return "0"; }
    if (!isFinite(x)) { return x > 0 ? "∞" : "−∞"; }
    var a = Math.abs(x);
    if (a >= 1e-3 && a < 1e6) {
      var decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
      return x.toFixed(decimals);
    }
    var parts = x.toExponential(3).split("e");
    var exponent = parts[1].split("").map(function (c) { return SUPERSCRIPT[c]; }).join("");
    return parts[0] + " × 10" + exponent;
  }

  /* A number the page writes into a field (a preset's, a link's): at most four significant digits, whole
     numbers as they are, "inf" for an unlimited bandwidth. */
  function fieldText(x) {
    if (!isFinite(x)) { return x > 0 ? "inf" : String(x); }
    if (x === Math.round(x) && Math.abs(x) < 1e15) { return String(x); }
    return String(Number(x.toPrecision(4)));
  }

  function isNumber(x) { return typeof x === "number" && isFinite(x); }

  var TOO_LARGE = "too large to represent (over 1.8 × 10³⁰⁸ in SI units)";

  /* Text for every output: a number with its unit, or words where no finite value exists. */
  function describe(r) {
    var out = {};
    function time(x) { return isNumber(x) ? fmt(x / MS) + " ms" : TOO_LARGE; }
    out.one_device_time = time(r.one_device_time);
    out.split_time = time(r.split_time);
    out.communication_time = time(r.communication_time);
    out.overlap_bound = time(r.overlap_bound);
    out.model_startup = time(r.startup);
    out.model_transfer_bytes = isNumber(r.transfer_bytes) ? fmt(r.transfer_bytes) + " bytes" : TOO_LARGE;

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

    // Each threshold is "none" only where no value works; an infinity from overflow is said as such.
    if (isNumber(r.break_even_divisible)) {
      out.break_even_divisible = fmt(r.break_even_divisible / MS) + " ms";
    } else if (r.saving <= 0) {
      out.break_even_divisible = "none: with K·η ≤ 1 the devices together are no faster than one, so no amount of work pays";
    } else {
      out.break_even_divisible = TOO_LARGE + ": the communication H is that large";
    }

    if (isNumber(r.min_bandwidth)) {
      out.min_bandwidth = r.min_bandwidth === 0
        ? "0 GB/s: no bytes travel, so any link will do"
        : fmt(r.min_bandwidth / (GB / 1.0)) + " GB/s";
    } else if (r.saving <= 0) {
      out.min_bandwidth = "none: with K·η ≤ 1 no link is fast enough";
    } else if (r.bandwidth_margin <= 0) {
      out.min_bandwidth = "none: the startup cost Q·ℓ alone eats the time the split saves, so no link is fast enough";
    } else {
      out.min_bandwidth = TOO_LARGE + ": the bytes Q·V are that many for the time the split saves";
    }

    if (isNumber(r.min_efficiency)) {
      out.min_efficiency = r.min_efficiency > 1
        ? fmt(r.min_efficiency) + ": impossible even at perfect efficiency (η cannot exceed 1)"
        : fmt(r.min_efficiency);
    } else if (!isNumber(r.communication_time)) {
      out.min_efficiency = "none: the communication H is " + TOO_LARGE + ", longer than any divisible work C";
    } else {
      out.min_efficiency = "none: the communication H takes at least as long as the divisible work C, so no efficiency pays";
    }
    return out;
  }

  /* Each output in the unit the page shows (ms for times, GB/s for bandwidth); null if undefined. */
  function inDisplayUnits(r) {
    return {
      one_device_time: r.one_device_time / MS, split_time: r.split_time / MS,
      communication_time: r.communication_time / MS, overlap_bound: r.overlap_bound / MS,
      break_even_divisible: r.break_even_divisible / MS, model_startup: r.startup / MS,
      model_transfer_bytes: r.transfer_bytes, min_bandwidth: r.min_bandwidth / (GB / 1.0),
      speedup: r.speedup, parallel_efficiency: r.parallel_efficiency, min_efficiency: r.min_efficiency
    };
  }

  function devicesWord(K) { return K === 1 ? "1 device" : K + " devices"; }

  function verdict(r) {
    if (r.speedup === null || !isNumber(r.speedup)) { return "Nothing to compare: both times are zero."; }
    var K = r.K;
    if (K === 1) {
      return r.split_time > r.one_device_time
        ? "With 1 device nothing is split, and this efficiency and communication only add time."
        : "With 1 device nothing is split: the phase takes as long as it does on one device.";
    }
    if (r.split_time < r.one_device_time) {
      return "With " + devicesWord(K) + " the phase finishes sooner: " + fmt(r.speedup) + " times as fast as on one device.";
    }
    if (r.split_time > r.one_device_time) {
      return "With " + devicesWord(K) + " the phase takes longer than on one device: communication and lost efficiency eat the gain.";
    }
    return "With " + devicesWord(K) + " the phase takes exactly as long as on one device: this is the break-even point.";
  }

  /* Words for the best device count, and its value for tests (data-value). */
  function describeBest(best) {
    if (best.devices === MAX_DEVICES) {
      return { text: MAX_DEVICES + " or more: the speedup still rises at the largest K this calculator takes (" +
               fmt(best.speedup) + "×)", value: best.devices };
    }
    if (best.devices === 1) { return { text: "1: no number of devices beats one device here", value: 1 }; }
    return { text: best.devices + " devices, " + fmt(best.speedup) + "× (more devices make the phase slower again)",
             value: best.devices };
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
    if (!r || !isNumber(r.split_time)) {
      svg.appendChild(el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "class": "calc-axis-label" },
        r ? "No chart: the split time is too large to draw." : "Fix the marked input to see the chart."));
      caption.textContent = r ? "No chart: the split time is too large to represent." : "No chart: an input is not valid.";
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
    DATA = window.CALCULATOR_DATA || DATA;
    MAX_DEVICES = DATA.max_devices;
    var svg = document.getElementById("calc-chart");
    var caption = document.getElementById("calc-chart-desc");
    var verdictEl = document.getElementById("calc-verdict");
    var presetEl = document.getElementById("calc-preset");
    var linkEl = document.getElementById("calc-link-preset");
    var protocolEl = document.getElementById("calc-protocol");
    var lastResult = null;

    function option(select, value, text) {
      var o = document.createElement("option");
      o.value = value;
      o.textContent = text;
      select.appendChild(o);
    }
    Object.keys(DATA.presets).forEach(function (key) { option(presetEl, key, DATA.presets[key].label); });
    option(presetEl, "", "your own numbers");
    Object.keys(DATA.links).forEach(function (slug) { option(linkEl, slug, DATA.links[slug].name); });
    option(linkEl, "", "your own numbers");
    Object.keys(DATA.collectives).forEach(function (kind) { option(form.elements.collective, kind, DATA.collectives[kind].label); });

    /* What the page wrote into each field: the rounded text shown and the full number it stands for. While a
       field still shows that text the page computes, compares and shares the full number (a base case that
       matches chapter 2 to the last digit); once the reader types, the field holds what was typed. */
    var written = {};
    function put(name, full) {
      var number = typeof full === "number" ? full : INFINITE.test(full.trim()) ? Infinity : Number(full);
      var shown = fieldText(number);
      form.elements[name].value = shown;
      written[name] = { shown: shown, full: typeof full === "number" ? String(full) : full.trim() };
    }
    function full(name) {
      var text = form.elements[name].value.trim();
      return written[name] && written[name].shown === text ? written[name].full : text;
    }

    function mode() { return form.elements.mode.value === "fixed" ? "fixed" : "model"; }
    function active(f) { return !f.mode || f.mode === mode(); }

    function showMode() {
      MODES.forEach(function (m) {
        form.querySelectorAll(".calc-" + m + "-only").forEach(function (node) { node.hidden = m !== mode(); });
      });
      document.querySelectorAll(".calc-results .calc-model-only").forEach(function (node) { node.hidden = mode() !== "model"; });
    }

    function setProtocols(slug, chosen) {
      protocolEl.textContent = "";
      var protocols = slug ? Object.keys(DATA.links[slug].protocols) : [];
      protocols.forEach(function (p) { option(protocolEl, p, p); });
      protocolEl.disabled = protocols.length === 0;
      if (chosen && protocols.indexOf(chosen) >= 0) { protocolEl.value = chosen; }
    }

    /* Fill B, l0 and delta from the chosen link and protocol (lib's numbers, see calculator_data.py). */
    function fillLink() {
      var terms = linkEl.value && DATA.links[linkEl.value].protocols[protocolEl.value];
      if (!terms) { return; }
      put("bandwidth_GBps", Number((terms.bandwidth / GB).toPrecision(12)));
      put("l0_us", Number((terms.l0 / US).toPrecision(12)));
      put("delta_us", Number((terms.delta / US).toPrecision(12)));
    }

    /* Name the link and preset the numbers belong to, or "your own numbers". */
    function nameTheNumbers() {
      var value = full;
      var matches = function (preset) {
        return preset.mode === mode() && FIELDS.every(function (f) {
          return !active(f) || Number(preset[f.name]) === Number(value(f.name)) || preset[f.name] === value(f.name);
        });
      };
      presetEl.value = Object.keys(DATA.presets).filter(function (k) { return matches(DATA.presets[k]); })[0] || "";
      var found = "";
      Object.keys(DATA.links).forEach(function (slug) {
        Object.keys(DATA.links[slug].protocols).forEach(function (p) {
          var t = DATA.links[slug].protocols[p];
          var same = function (name, x, unit) { return Math.abs(Number(value(name)) - x / unit) <= 1e-9 * Math.abs(x / unit); };
          if (!found && same("bandwidth_GBps", t.bandwidth, GB) && same("l0_us", t.l0, US) && same("delta_us", t.delta, US)) {
            found = slug + "|" + p;
          }
        });
      });
      linkEl.value = found ? found.split("|")[0] : "";
      setProtocols(linkEl.value, found ? found.split("|")[1] : "");
    }

    function applyPreset(key) {
      var preset = DATA.presets[key];
      if (!preset) { return; }
      form.elements.mode.value = preset.mode;
      FIELDS.forEach(function (f) {
        if (preset[f.name] === undefined) { return f.base !== undefined && put(f.name, f.base); }
        if (f.rule === "collective") { form.elements[f.name].value = preset[f.name]; } else { put(f.name, preset[f.name]); }
      });
    }

    /* Fill the fields from a scenario's query; true if any field was set. An old link without a mode
       that holds l or V is a what-if scenario. */
    function openScenario(query) {
      var given = new URLSearchParams(query);
      var found = false;
      FIELDS.forEach(function (f) {
        if (given.has(f.name)) { form.elements[f.name].value = given.get(f.name); delete written[f.name]; found = true; }
      });
      var chosen = given.get("mode") || (given.has("startup_ms") || given.has("transfer_bytes") ? "fixed" : "");
      if (MODES.indexOf(chosen) >= 0) { form.elements.mode.value = chosen; found = true; }
      return found;
    }

    applyPreset("base");
    var link = window.ScenarioLink.wire({
      ids: { link: "calc-link", help: "calc-link-help", open: "calc-open", openButton: "calc-open-button",
             copy: "calc-copy", status: "calc-copy-status" },
      page: "calculator.html", tool: "calculator", open: openScenario, update: update
    });
    openScenario(link.start);  // a shared link fills the fields

    /* The scenario as a link that travels (see scenario-link.js): the mode and its inputs. */
    function updateUrl() {
      var params = new URLSearchParams();
      params.set("mode", mode());
      FIELDS.forEach(function (f) { if (active(f)) { params.set(f.name, full(f.name)); } });
      link.publish(params.toString());
    }

    function showOutputs(text, raw) {
      document.querySelectorAll("[data-output]").forEach(function (node) {
        var name = node.getAttribute("data-output");
        node.textContent = text[name];
        node.classList.toggle("calc-words", !/^-?\d/.test(text[name]));
        node.setAttribute("data-value", raw[name] === null || raw[name] === undefined ? "" : String(raw[name]));
      });
    }

    function update() {
      showMode();
      nameTheNumbers();
      var values = {};
      var valid = true;
      FIELDS.forEach(function (f) {
        var input = form.elements[f.name];
        var error = document.getElementById("calc-" + f.name + "-error");
        var got = active(f) ? check(f, f.rule === "collective" ? input.value : full(f.name)) : { value: null };
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
      if (!valid) {
        var waiting = {};
        document.querySelectorAll("[data-output]").forEach(function (node) {
          waiting[node.getAttribute("data-output")] = "waiting for valid input";
        });
        showOutputs(waiting, {});
        verdictEl.textContent = "One or more inputs are not valid; the message under the field says why.";
        lastResult = null;
        drawChart(svg, caption, null);
        return;
      }
      var r = compute(phaseOf(values, mode()));
      var text = describe(r);
      var raw = inDisplayUnits(r);
      if (mode() === "model") {
        var best = describeBest(bestDevices(values));
        text.best_devices = best.text;
        raw.best_devices = best.value;
      } else {
        text.best_devices = "";
        raw.best_devices = null;
      }
      showOutputs(text, raw);
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
      if (event.target === link.openEl) { return; }
      if (event.target === presetEl) { applyPreset(presetEl.value); }
      if (event.target === linkEl) { setProtocols(linkEl.value, protocolEl.value); fillLink(); }
      if (event.target === protocolEl) { fillLink(); }
      update();
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
      applyPreset("base");
      update();
    });
    update();
    if (window.location.hash === "#projector") { project(true); }
  }

  // For curious readers: the formulas, to call from the browser's console (no test reads this).
  window.whatIfCalculator = { compute: compute, phaseOf: phaseOf, check: check, bestDevices: bestDevices,
                              format: fmt, fields: FIELDS, data: DATA };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
}());
