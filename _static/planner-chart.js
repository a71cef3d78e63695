/*
 * The layout planner's chart (book/planner.md): lib.serving.frontier's points, tokens per second per
 * device against per user, every layout in a colour of its own with the Pareto frontier, the batch
 * asked for, the best row and the TPOT target, as chapter 9's figure draws them; and the page's numbers
 * in words (four significant digits). Plain SVG, nothing fetched. Sets window.PlannerChart
 * (draw, fmt, short), which planner.js calls.
 */
(function () {
  "use strict";

  // ------------------------------------------------------------ numbers in words

  /* Four significant digits (whole numbers from 1000 up); never NaN, never blank. */
  function fmt(x) {
    if (typeof x !== "number" || !isFinite(x)) { return "too large to show"; }
    if (x === 0) { return "0"; }
    var a = Math.abs(x);
    if (a >= 1000) { return x.toFixed(0); }
    if (a >= 1e-3) { return x.toFixed(Math.max(0, 3 - Math.floor(Math.log10(a)))); }
    return x.toExponential(3);
  }

  /* Like fmt, without trailing zeros: for labels and sentences. */
  function short(x) {
    var s = fmt(x);
    if (s.indexOf(".") >= 0 && s.indexOf("e") < 0) { s = s.replace(/0+$/, "").replace(/\.$/, ""); }
    return s;
  }

  // ------------------------------------------------------------ the chart

  var SVG = "http://www.w3.org/2000/svg";

  function el(name, attrs, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  // Colours of the layouts in the chart: classes pl-c0 to pl-c9 of planner.css.
  var PALETTE = 10;

  function overlaps(a, b) {
    return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  }

  function inside(a, b) {
    return a.x >= b.x && a.y >= b.y && a.x + a.width <= b.x + b.width && a.y + a.height <= b.y + b.height;
  }

  /* Log ticks at 1, 2 and 5 times powers of ten inside [lo, hi]. */
  function logTicks(lo, hi) {
    var out = [];
    for (var e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
      [1, 2, 5].forEach(function (m) { var v = m * Math.pow(10, e); if (v >= lo && v <= hi) { out.push(v); } });
    }
    if (out.length > 7) { out = out.filter(function (v) { return /^1/.test(v.toExponential()); }); }
    return out;
  }

  function drawChart(svg, caption, s, result) {
    var room = svg.parentNode ? svg.parentNode.clientWidth : 0;
    var W = Math.round(Math.max(300, Math.min(720, room || 720)));
    var H = Math.round(Math.max(320, W * 0.62));
    var M = { left: 62, right: 16, top: 14 };
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var title = svg.querySelector("title");
    while (svg.lastChild && svg.lastChild !== title) { svg.removeChild(svg.lastChild); }
    function message(text) {
      svg.appendChild(el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "class": "pl-axis-label" }, text));
      caption.textContent = text;
    }
    if (!result) { return message("No chart until the marked inputs are fixed."); }
    var targets = s.ttftLimit !== null || s.tpotLimit !== null;
    var D = window.PLANNER_DATA, MS = D.units.ms;
    var batches = D.serving.frontier_batches;
    var range = "from " + batches[0] + " to " + batches[batches.length - 1] + " sequences";
    var points = result.frontier.points, front = result.frontier.front;
    var current = result.rows.filter(function (r) { return r.fits && r.meetsSlo; });
    var all = points.map(function (p) { return [p.user, p.device]; })
      .concat(current.concat(result.best ? [result.best] : []).map(function (r) {
        return [r.tokensPerSPerUser, r.tokensPerSPerDevice];
      }));
    if (!all.length) {
      return message("No layout fits " + (targets ? "and meets the targets " : "") + "at any batch " + range +
        ", so there is nothing to plot.");
    }
    // The legend: rows under the axis label, as many as its items need, clear of the points.
    var legend = el("g", { "aria-hidden": "true", "class": "pl-legend" });
    var items = [
      function (g) { g.appendChild(el("circle", { cx: 6, cy: -4, r: 3.5, "class": "pl-point" })); return "a layout at one batch"; },
      function (g) { g.appendChild(el("line", { x1: 0, x2: 14, y1: -4, y2: -4, "class": "pl-front" })); return "Pareto frontier"; },
      function (g) { g.appendChild(el("circle", { cx: 6, cy: -4, r: 5, "class": "pl-now" })); return "batch " + s.batch; },
      function (g) { g.appendChild(el("path", { d: "M6,-11 l7,7 l-7,7 l-7,-7 z", "class": "pl-best-mark" })); return "best"; }
    ];
    if (s.tpotLimit !== null) {
      items.push(function (g) {
        g.appendChild(el("line", { x1: 6, x2: 6, y1: -11, y2: 3, "class": "pl-target" }));
        return "TPOT target";
      });
    }
    if (s.ttftLimit !== null) {  // no axis of this chart is a TTFT: the target only leaves points out
      items.push(function (g) {
        g.setAttribute("data-target", "ttft");
        return "TTFT over " + short(s.ttftLimit / MS) + " ms: left out";
      });
    }
    svg.appendChild(legend);
    var lx = W < 480 ? 8 : M.left, ly = 0;
    items.forEach(function (draw) {
      var g = el("g"), text = el("text", { x: 20, y: 0 }, draw(g));
      g.appendChild(text);
      legend.appendChild(g);
      var width = 38 + text.getComputedTextLength();
      if (lx + width > W && lx > 8) { lx = W < 480 ? 8 : M.left; ly += 18; }
      g.setAttribute("transform", "translate(" + lx + "," + ly + ")");
      lx += width;
    });
    M.legend = 22 + ly;
    M.bottom = 46 + M.legend;
    legend.setAttribute("transform", "translate(0," + (H - M.legend + 16) + ")");

    var xs = all.map(function (p) { return p[0]; }), ys = all.map(function (p) { return p[1]; });
    if (s.tpotLimit !== null) { xs.push(1 / s.tpotLimit); }
    var x0 = Math.min.apply(null, xs) / 1.3, x1 = Math.max.apply(null, xs) * 1.3;
    var y0 = Math.min.apply(null, ys) / 1.5, y1 = Math.max.apply(null, ys) * 1.5;
    var lx0 = Math.log10(x0), lx1 = Math.log10(x1), ly0 = Math.log10(y0), ly1 = Math.log10(y1);
    var px = function (x) { return M.left + (W - M.left - M.right) * (Math.log10(x) - lx0) / (lx1 - lx0); };
    var py = function (y) { return H - M.bottom - (H - M.top - M.bottom) * (Math.log10(y) - ly0) / (ly1 - ly0); };

    var axes = el("g", { "class": "pl-axes", "aria-hidden": "true" });
    logTicks(x0, x1).forEach(function (v) {
      axes.appendChild(el("line", { x1: px(v), x2: px(v), y1: M.top, y2: H - M.bottom, "class": "pl-grid" }));
      axes.appendChild(el("text", { x: px(v), y: H - M.bottom + 17, "text-anchor": "middle" }, short(v)));
    });
    logTicks(y0, y1).forEach(function (v) {
      axes.appendChild(el("line", { x1: M.left, x2: W - M.right, y1: py(v), y2: py(v), "class": "pl-grid" }));
      axes.appendChild(el("text", { x: M.left - 6, y: py(v) + 4, "text-anchor": "end" }, short(v)));
    });
    axes.appendChild(el("rect", { x: M.left, y: M.top, width: W - M.left - M.right, height: H - M.top - M.bottom,
      "class": "pl-frame" }));
    axes.appendChild(el("text", { x: (M.left + W - M.right) / 2, y: H - M.bottom + 38, "text-anchor": "middle",
      "class": "pl-axis-label" }, "tokens/s per user (1 / TPOT), log scale →"));
    var mid = (M.top + H - M.bottom) / 2;
    axes.appendChild(el("text", { x: 15, y: mid, "text-anchor": "middle", "class": "pl-axis-label",
      transform: "rotate(-90 15 " + mid + ")" }, "tokens/s per device, log →"));
    svg.appendChild(axes);

    // Each layout in a colour of its own (pl-c0 to pl-c9, then again), named in the key under the chart.
    var names = [];
    points.forEach(function (p) { if (names.indexOf(p.name) < 0) { names.push(p.name); } });
    var colour = function (name) { return "pl-c" + (names.indexOf(name) % PALETTE); };
    var marks = el("g", { "aria-hidden": "true" }), taken = [], labels = el("g", { "aria-hidden": "true" });
    var dot = function (x, y, r, cls, name, tip) {
      var c = el("circle", { cx: x, cy: y, r: r, "class": cls, "data-layout": name });
      c.appendChild(el("title", {}, tip));
      marks.appendChild(c);
      taken.push({ x: x - r, y: y - r, width: 2 * r, height: 2 * r });
    };
    if (s.tpotLimit !== null) {  // the TPOT target: points right of it meet it
      var tx = px(1 / s.tpotLimit);
      marks.appendChild(el("line", { x1: tx, x2: tx, y1: M.top, y2: H - M.bottom, "class": "pl-target",
        "data-target": "tpot" }));
      taken.push({ x: tx - 1, y: M.top, width: 2, height: H - M.top - M.bottom });
    }
    if (front.length) {
      marks.appendChild(el("polyline", { points: front.map(function (p) { return px(p.user) + "," + py(p.device); }).join(" "),
        "class": "pl-front" }));
    }
    points.forEach(function (p) {
      dot(px(p.user), py(p.device), front.indexOf(p) >= 0 ? 4.5 : 3.5, "pl-point " + colour(p.name), p.name,
        p.name + " at batch " + p.batch + ": " + short(p.user) + " tokens/s per user, " + short(p.device) + " per device" +
        (front.indexOf(p) >= 0 ? " (on the frontier)" : ""));
    });
    current.forEach(function (r) {
      dot(px(r.tokensPerSPerUser), py(r.tokensPerSPerDevice), 6, "pl-now", r.name, r.name + " at your batch of " + s.batch);
    });
    var chosen = result.best;
    if (chosen) {
      var bx = px(chosen.tokensPerSPerUser), by = py(chosen.tokensPerSPerDevice);
      marks.appendChild(el("path", { d: "M" + bx + "," + (by - 8) + " l8,8 l-8,8 l-8,-8 z", "class": "pl-best-mark" }));
      taken.push({ x: bx - 8, y: by - 8, width: 16, height: 16 });
    }
    svg.appendChild(marks);
    svg.appendChild(labels);

    // Labels go where they overlap no marker and no other label, inside the frame, or nowhere (the key and the
    // tooltips still name every point).
    var frame = { x: M.left, y: M.top, width: W - M.left - M.right, height: H - M.top - M.bottom };
    function place(text, cls, x, y, tries) {
      var label = el("text", { "class": cls }, text);
      labels.appendChild(label);
      for (var i = 0; i < tries.length; i++) {
        label.setAttribute("x", x + tries[i][0]);
        label.setAttribute("y", y + tries[i][1]);
        label.setAttribute("text-anchor", tries[i][2]);
        var box = label.getBBox();
        if (inside(box, frame) && !taken.some(function (t) { return overlaps(box, t); })) {
          taken.push(box);
          return label;
        }
      }
      labels.removeChild(label);
      return null;
    }
    var around = [];
    [12, 28, 48, 72].forEach(function (d) {
      around.push([d, -d + 2, "start"], [-d, -d + 2, "end"], [d, d + 8, "start"], [-d, d + 8, "end"], [0, -d, "middle"],
        [0, d + 12, "middle"]);
    });
    if (chosen) { place("best at batch " + s.batch + ": " + chosen.name, "pl-note", bx, by, around); }
    if (s.tpotLimit !== null) {
      place("TPOT ≤ " + short(s.tpotLimit / MS) + " ms", "pl-target-label", tx, M.top, [[4, 14, "start"], [-4, 14, "end"],
        [4, frame.height - 6, "start"], [-4, frame.height - 6, "end"]]);
    }
    names.forEach(function (name) {  // each layout's name beside its point of most tokens/s per device
      var top = points.filter(function (p) { return p.name === name; })
        .reduce(function (a, p) { return p.device > a.device ? p : a; });
      place(name, "pl-layout-label", px(top.user), py(top.device), around.slice(0, 6));
    });
    var key = document.getElementById("pl-chart-key");
    if (key) {
      key.textContent = "";
      names.forEach(function (name) {
        var li = document.createElement("li"), swatch = document.createElement("span");
        swatch.className = "pl-swatch " + colour(name);
        swatch.setAttribute("aria-hidden", "true");
        li.appendChild(swatch);
        li.appendChild(document.createTextNode(name));
        key.appendChild(li);
      });
    }


    var words = "Log-log scatter of " + points.length + " points: each layout at each batch " + range + " that fits" +
      (targets ? " and meets the targets" : "") + ". ";
    if (front.length) {
      var fast = front[front.length - 1], much = front[0];
      words += "The frontier has " + front.length + " points, from " + fast.name + " at batch " + fast.batch + " (" +
        short(fast.user) + " tokens/s per user, " + short(fast.device) + " per device) to " + much.name + " at batch " +
        much.batch + " (" + short(much.user) + " per user, " + short(much.device) + " per device). ";
    }
    words += chosen
      ? "At your batch of " + s.batch + " the best layout, " + chosen.name + ", gives " + short(chosen.tokensPerSPerUser) +
        " tokens/s per user and " + short(chosen.tokensPerSPerDevice) + " per device."
      : "At your batch of " + s.batch + " no layout fits" + (targets ? " and meets the targets." : ".");
    caption.textContent = words;
  }

  window.PlannerChart = { draw: drawChart, fmt: fmt, short: short, el: el };
}());
