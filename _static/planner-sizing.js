/*
 * The layout planner's sizing (book/planner.md), a mirror of lib/serving/sizing.py: replica_shapes and
 * size, the fewest devices (copies of one tensor x pipeline shape) that carry a request rate within the
 * targets. Shapes come from planner-model.js (lib.serving.layouts), capacities from planner-capacity.js
 * (lib.serving.capacity). Sets window.PlannerSizing.
 */
(function () {
  "use strict";

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
     null when no shape of at most maxDevices devices carries it. */
  // mirrors lib.serving.sizing.size
  function size(s, rate, maxDevices) {
    var refused = window.PlannerModel.contextRefusal(s.config, s.promptTokens, s.outputTokens);
    if (refused) { throw new Error(refused); }
    var capacity = window.PlannerCapacity.capacity, found = null;
    var untargeted = Object.assign({}, s, { ttftLimit: null, tpotLimit: null });
    var fewest = function (r, n) { return Math.ceil(rate / r * (1 - 1e-12)) * n; };
    replicaShapes(s.config, maxDevices, s.cluster.devicesPerNode, s.expertParallel).forEach(function (shape) {
      var n = shape.tp * shape.pp;
      // Without targets a replica carries the most it ever can: a floor on the devices this shape needs.
      var ceiling = capacity(untargeted, shape).rate;
      if (ceiling <= 0 || (found && fewest(ceiling, n) > found.devices)) { return; }
      var replica = capacity(s, shape);
      if (replica.rate <= 0) { return; }
      var devices = fewest(replica.rate, n), replicas = devices / n;
      if (devices > maxDevices) { return; }
      var carries = replicas * replica.rate;
      if (!found || devices < found.devices || (devices === found.devices && carries > found.carries)) {
        found = { shape: shape, replica: replica, devices: devices, replicas: replicas, carries: carries };
      }
    });
    if (!found) { return null; }
    var layout = Object.assign({}, found.shape, { dp: found.replicas });
    return { layout: layout, name: window.PlannerModel.layoutName(layout), devices: found.devices,
      capacity: capacity(s, layout), replica: found.replica, spare: 0 };
  }

  /* The functions tagged `// mirrors`, by name, for tests/browser/test_planner_functions.py. */
  var mirrors = {
    replicaShapes: replicaShapes, size: size
  };

  window.PlannerSizing = { size: size, replicaShapes: replicaShapes,
    _mirrors: mirrors };
}());
