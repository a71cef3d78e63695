/*
 * The layout planner's device map (book/planner.md): which GPU holds which replica, stage, tensor
 * rank and layers, and which link each collective crosses. A mirror of the placement part of
 * lib/diagrams/data.py device_map_data (ranks numbered tensor rank first, then stage, then replica,
 * filling servers in order; a group that spans servers all-reduces, or with attention run data-parallel
 * exchanges tokens around the experts, over the network; a pipeline hop between servers crosses it), drawn
 * as SVG with the same facts in words below it. tests/browser/test_planner_map.py compares the placement
 * with lib's. Sets window.PlannerMap.
 */
(function () {
  "use strict";

  var REPLICA_FILLS = ["#D6E9F8", "#FBE3CC", "#D4F0E5", "#F3DDE9", "#EDEDC9", "#E4E0F5"];
  var STROKE = { "all-reduce": "#D55E00", "expert exchange": "#CC79A7", "send": "#009E73" };

  /* lib.serving.layout.stage_layers (planner-model.js) as [start, stop) ranges. */
  function layerRanges(layers, stages) {
    var start = 0;
    return window.PlannerModel.stageLayers(layers, stages).map(function (count) {
      start += count;
      return [start - count, start];
    });
  }

  /* device_map_data's gpus and collectives (placement and links; no timings). */
  // mirrors lib.diagrams.data.device_map_data
  function data(layers, layout, perNode, link, interLink) {
    var tp = layout.tp, pp = layout.pp, dp = layout.dp, ranges = layerRanges(layers, pp);
    var node = function (g) { return Math.floor(g / perNode); };
    var group = function (r, s) { var first = (r * pp + s) * tp, out = []; for (var i = 0; i < tp; i++) { out.push(first + i); } return out; };
    var gpus = [], collectives = [];
    for (var g = 0; g < tp * pp * dp; g++) {
      var stage = Math.floor(g / tp) % pp;
      gpus.push({ gpu: g, server: node(g), slot: g % perNode, replica: Math.floor(g / (tp * pp)), stage: stage,
                  tp_rank: g % tp, layers: ranges[stage] });
    }
    for (var r = 0; r < dp; r++) {
      for (var s = 0; s < pp; s++) {
        var members = group(r, s), across = node(members[0]) !== node(members[members.length - 1]);
        if (tp > 1) {
          collectives.push({ kind: layout.adp ? "expert exchange" : "all-reduce", replica: r, stage: s, gpus: members,
                             across_servers: across, link: across ? interLink : link });
        }
      }
      for (var b = 0; b + 1 < pp; b++) {
        var from = group(r, b), to = group(r, b + 1), apart = node(from[from.length - 1]) !== node(to[0]);
        collectives.push({ kind: "send", replica: r, from_stage: b, to_stage: b + 1, from_gpus: from, to_gpus: to,
                           across_servers: apart, link: apart ? interLink : link });
      }
    }
    return { layout: layout.name, servers: Math.ceil(gpus.length / perNode), devices_per_node: perNode,
             gpus: gpus, collectives: collectives };
  }

  /* An SVG element: planner-chart.js's. */
  function el(name, attrs, text) { return window.PlannerChart.el(name, attrs, text); }

  function span(list) { return list.length === 1 ? "GPU " + list[0] : "GPUs " + list[0] + "–" + list[list.length - 1]; }

  /* One sentence per collective, as the figure's words. */
  function words(c) {
    if (c.kind !== "send") {
      return "Replica " + c.replica + ", stage " + c.stage + ": " + span(c.gpus) +
        (c.kind === "all-reduce" ? " all-reduce" : " run attention data-parallel and exchange tokens for the experts") +
        " over " + c.link.name + (c.across_servers ? " (across servers)" : "") + ".";
    }
    return "Replica " + c.replica + ": stage " + c.from_stage + " sends to stage " + c.to_stage + " (" +
      span(c.from_gpus) + " to " + span(c.to_gpus) + ") over " + c.link.name + ".";
  }

  /* The map in ``figure`` (an element with an <svg> and a <ul>): servers one under another, four or eight
     GPUs a row (four on a narrow screen), an all-reduce as a bar under its group, a hop as a path from the
     sender's last GPU to the receiver's first. */
  function draw(figure, map) {
    var svg = figure.querySelector("svg"), list = figure.querySelector("ul");
    var cols = Math.min(map.devices_per_node, figure.clientWidth && figure.clientWidth < 600 ? 4 : 8);
    var rowsPerServer = Math.ceil(map.devices_per_node / cols);
    var w = 104, h = 62, gap = 10, under = 20, pad = 8, band = 24;
    var serverH = band + rowsPerServer * (h + under), width = pad * 2 + cols * (w + gap) - gap + 8;
    svg.setAttribute("viewBox", "0 0 " + width + " " + (map.servers * (serverH + gap) + pad));
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var at = {};
    for (var s = 0; s < map.servers; s++) {
      var top = pad / 2 + s * (serverH + gap);
      svg.appendChild(el("rect", { x: pad / 2, y: top, width: width - pad, height: serverH, rx: 8, fill: "#FAFAFA",
                                   stroke: "#999" }));
      svg.appendChild(el("text", { x: pad + 4, y: top + 17, "font-size": 13, "font-weight": "bold" }, "server " + s));
    }
    map.gpus.forEach(function (g) {
      var x = pad + 4 + (g.slot % cols) * (w + gap);
      var y = pad / 2 + g.server * (serverH + gap) + band + Math.floor(g.slot / cols) * (h + under);
      at[g.gpu] = { x: x, y: y };
      svg.appendChild(el("rect", { x: x, y: y, width: w, height: h, rx: 5, stroke: "#333",
                                   fill: REPLICA_FILLS[g.replica % REPLICA_FILLS.length] }));
      [["GPU " + g.gpu, "bold"], ["replica " + g.replica, "normal"], ["stage " + g.stage + ", rank " + g.tp_rank, "normal"],
       ["layers " + g.layers[0] + "–" + (g.layers[1] - 1), "normal"]].forEach(function (line, i) {
        svg.appendChild(el("text", { x: x + 5, y: y + 14 + 14 * i, "font-size": 11, "font-weight": line[1] }, line[0]));
      });
    });
    map.collectives.forEach(function (c) {
      var dash = c.across_servers ? "6 4" : "none";
      if (c.kind !== "send") {
        c.gpus.forEach(function (g) {
          svg.appendChild(el("line", { x1: at[g].x, y1: at[g].y + h + 5, x2: at[g].x + w, y2: at[g].y + h + 5,
                                       stroke: STROKE[c.kind], "stroke-width": 4, "stroke-dasharray": dash }));
        });
        return;
      }
      var a = at[c.from_gpus[c.from_gpus.length - 1]], b = at[c.to_gpus[0]], lane = a.y + h + 13;
      var path = "M" + (a.x + w / 2) + "," + (a.y + h) + " V" + lane + " H" + (b.x + w / 2) +
        (b.y > a.y ? " V" + b.y : " V" + (b.y + h));
      svg.appendChild(el("path", { d: path, "class": "pl-map-hop", stroke: STROKE[c.kind], "stroke-dasharray": dash }));
    });
    while (list.firstChild) { list.removeChild(list.firstChild); }
    var sentences = map.collectives.length ? map.collectives.map(words)
      : ["Every GPU holds the whole model; replicas exchange nothing."];
    sentences.forEach(function (text) { var li = document.createElement("li"); li.textContent = text; list.appendChild(li); });
    svg.setAttribute("aria-label", "Device map of " + map.layout + " on " + map.servers + " server" +
                     (map.servers > 1 ? "s" : "") + " of " + map.devices_per_node + " GPUs. " + sentences.join(" "));
    figure.setAttribute("data-layout", map.layout);
    figure.setAttribute("data-map", JSON.stringify(map));
  }

  /* The functions tagged `// mirrors`, by name, for tests/browser/test_planner_functions.py. */
  var mirrors = {
    data: data
  };

  window.PlannerMap = { data: data, draw: draw, layerRanges: layerRanges,
    _mirrors: mirrors };
}());
