/*
 * The layout planner's sizing (book/planner.md), a mirror of lib/serving/sizing.py: replica_shapes and
 * size, the fewest devices (copies of one tensor x pipeline shape) that carry a request rate within the
 * targets; and of lib/serving/trust.py: a capacity's range and a confident sizing from chapter 11's
 * held-out errors (PLANNER_DATA.serving.trust). Shapes come from planner-model.js (lib.serving.layouts),
 * capacities from planner-capacity.js (lib.serving.capacity). Sets window.PlannerSizing.
 */
(function () {
  "use strict";

  function trust() { return window.PLANNER_DATA.serving.trust; }  // read when called, as planner-model.js does

  /* regime: "load" under a latency target, "decode" (the largest batch) without. */
  // mirrors lib.serving.trust.regime
  function regime(ttftLimit, tpotLimit) {
    return ttftLimit === null && tpotLimit === null ? "decode" : "load";
  }

  /* The ratio at quantile `level` of the regime, interpolated as lib does (numpy.interp). */
  function ratioAt(level, name) {
    return window.PlannerCapacity.interp(level, trust().levels, trust().ratios[name]);
  }

  /* check_confidence: a probability within the levels of the quantile table, read as a percentile (0.9 or 90). */
  // mirrors lib.serving.trust.check_confidence
  function checkConfidence(value, name) {
    var p = window.PlannerCapacity.percentileFraction(value, name);
    var levels = trust().levels, low = levels[0], high = levels[levels.length - 1];
    if (!(p >= low - 1e-12 && p <= high + 1e-12)) {
      throw new Error(name + " must be from " + low + " to " + high + " (5 to 95 %): chapter 11's held-out " +
        "errors say nothing of rarer tails, got " + value);
    }
    return p;
  }

  /* capacity_ratio: the share of a predicted capacity delivered with probability `confidence`. */
  // mirrors lib.serving.trust.capacity_ratio
  function capacityRatio(confidence, name) {
    return ratioAt(1 - checkConfidence(confidence, "confidence"), name);
  }

  /* capacity_interval: the range holding the delivered capacity with probability `level` (90 % by default). */
  // mirrors lib.serving.trust.capacity_interval
  function capacityInterval(value, name, level) {
    var width = level === undefined ? trust().interval_level : level;
    return [value * ratioAt((1 - width) / 2, name), value * ratioAt((1 + width) / 2, name)];
  }

  /* replica_shapes: every shape (dp = 1) of at most `devices` devices that packs servers evenly. */
  // mirrors lib.serving.sizing.replica_shapes
  function replicaShapes(config, devices, perNode, expertParallel) {
    var shapes = [];
    for (var n = 1; n <= devices; n++) {
      if (perNode % n && n % perNode) { continue; }
      window.PlannerModel.layouts(config, n, expertParallel).forEach(function (l) {
        if (l.dp === 1 && !(perNode % l.tp && l.tp % perNode)) { shapes.push(l); }
      });
    }
    return shapes.sort(function (a, b) { return a.tp - b.tp || a.pp - b.pp || a.ep - b.ep; });
  }

  /* size: the fewest devices, and the layout on them, that carry `rate` requests/s within the targets of
     scenario s (its model, device, cluster, engine and workload); ties go to the most capacity to spare.
     With a confidence (checkConfidence, or null) it carries the rate with that probability. null when no
     shape of at most maxDevices devices carries it. */
  // mirrors lib.serving.sizing.size
  function size(s, rate, maxDevices, confidence) {
    var sure = confidence === undefined ? null : confidence;
    if (sure !== null) { rate /= capacityRatio(sure, regime(s.ttftLimit, s.tpotLimit)); }
    var refused = window.PlannerModel.contextRefusal(s);
    if (refused) { throw new Error(refused); }
    var capacity = window.PlannerCapacity.capacity, found = null;
    var fewest = function (r, n) { return Math.ceil(rate / r * (1 - 1e-12)) * n; };
    // Without targets a replica carries the most it ever can: a floor on the devices each shape needs.
    var shapes = replicaShapes(s.config, maxDevices, s.cluster.devicesPerNode, s.expertParallel).map(function (shape, i) {
      var n = shape.tp * shape.pp, ceiling = window.PlannerCapacity.ceiling(s, shape);
      return { shape: shape, n: n, index: i, floor: ceiling > 0 ? fewest(ceiling, n) : Infinity };
    });
    // lib tries the shapes in order and keeps the first of the best; trying those of the lowest floor first
    // skips more of the rest, and their order breaks ties as lib's does.
    shapes.sort(function (a, b) { return a.floor - b.floor || a.index - b.index; }).forEach(function (c) {
      if (c.floor === Infinity || (found && c.floor > found.devices)) { return; }
      var replica = capacity(s, c.shape);
      if (replica.rate <= 0) { return; }
      var devices = fewest(replica.rate, c.n), replicas = devices / c.n;
      if (devices > maxDevices) { return; }
      var carries = replicas * replica.rate;
      if (!found || devices < found.devices || (devices === found.devices &&
          (carries > found.carries || (carries === found.carries && c.index < found.index)))) {
        found = { shape: c.shape, index: c.index, replica: replica, devices: devices, replicas: replicas, carries: carries };
      }
    });
    if (!found) { return null; }
    var layout = Object.assign({}, found.shape, { dp: found.replicas });
    return { layout: layout, name: window.PlannerModel.layoutName(layout), devices: found.devices,
      capacity: capacity(s, layout), replica: found.replica, spare: 0, confidence: sure };
  }

  /* The functions tagged `// mirrors`, by name, for tests/browser/test_planner_functions.py. */
  var mirrors = {
    replicaShapes: replicaShapes, size: size, regime: regime, checkConfidence: checkConfidence,
    capacityRatio: capacityRatio, capacityInterval: capacityInterval
  };

  window.PlannerSizing = { size: size, replicaShapes: replicaShapes, regime: regime,
    checkConfidence: checkConfidence, capacityRatio: capacityRatio, capacityInterval: capacityInterval,
    _mirrors: mirrors };
}());
