/*
 * The layout planner's collectives (book/planner.md), a mirror of:
 *   lib/collectives/nccl.py    tune_allreduce and its helpers (NCCL 2.30.7's tuner)
 *   lib/collectives/startup.py send_time (a pipeline hop), best_collective_time (all-gather, reduce-scatter)
 *   lib/collectives/engine.py  engine_allreduce (vLLM's one- and two-shot kernels, else NCCL)
 * Every constant comes from window.PLANNER_DATA (tools/sphinx/planner_data.py), read when a function
 * runs, so this file may load before the data. Sets window.PlannerCollectives.
 */
(function () {
  "use strict";

  function data() { return window.PLANNER_DATA; }

  // mirrors lib.collectives.nccl._hop
  function hop(link, algorithm, protocol) { return data().hop_latency[link.kind][algorithm][protocol]; }

  // mirrors lib.hardware.Link.nccl_bandwidth
  function ncclBandwidth(link) { return link.bandwidth * link.nccl_share; }

  // mirrors lib.collectives.nccl._ll_cap
  function llCap(intra, nodes) {
    var NC = data().nccl;
    if (nodes > 1 || intra.kind === "net") { return NC.ll_cap_multinode; }
    return Object.prototype.hasOwnProperty.call(NC.ll_cap, intra.slug) ? NC.ll_cap[intra.slug] : NC.ll_cap_one_node_other;
  }

  /* int(math.floor(math.log2(nodes))) */
  function floorLog2(n) { var levels = 0; while (Math.pow(2, levels + 1) <= n) { levels++; } return levels; }

  /* lib.collectives.nccl._bus_bandwidth: the intra-node link, or all of a node's NICs if they are slower. */
  // mirrors lib.collectives.nccl._bus_bandwidth
  function busBandwidth(intra, inter, nodes, nics) {
    return nodes === 1 ? ncclBandwidth(intra) : Math.min(ncclBandwidth(intra), nics * ncclBandwidth(inter));
  }

  /* lib.collectives.nccl._ring_latency: base + steps x hop of a ring over k ranks. */
  // mirrors lib.collectives.nccl._ring_latency
  function ringLatency(stepsPerRank, protocol, k, nodes, intra, inter) {
    var NC = data().nccl;
    var interSteps = stepsPerRank * (nodes - 1);
    var overhead = nodes === 1 ? 0.0 : NC.net_overhead * (protocol === "Simple" ? 3 : 1);
    var intraHop = Math.max(hop(intra, "ring", protocol), overhead);
    var interHop = nodes > 1 ? hop(inter, "ring", protocol) : 0.0;
    return NC.base_latency.ring[protocol] + (stepsPerRank * (k - 1) - interSteps) * intraHop + interSteps * interHop;
  }

  /* lib.collectives.nccl._ring_bus: a ring's bus bandwidth, LL under NCCL's cap. */
  // mirrors lib.collectives.nccl._ring_bus
  function ringBus(protocol, intra, inter, nodes, nics) {
    var bus = busBandwidth(intra, inter, nodes, nics) * data().nccl.protocol_share.ring[protocol];
    return protocol === "LL" ? Math.min(bus, llCap(intra, nodes)) : bus;
  }

  // mirrors lib.collectives.nccl._allreduce_latency
  function allreduceLatency(algorithm, protocol, k, nodes, intra, inter) {
    if (algorithm === "ring") { return ringLatency(2, protocol, k, nodes, intra, inter); }
    var base = data().nccl.base_latency[algorithm][protocol];
    var perNode = Math.floor(k / nodes);
    var levels = floorLog2(nodes);
    var interHop = nodes > 1 ? hop(inter, perNode > 1 ? algorithm : "tree", protocol) : 0.0;
    if (algorithm === "tree") { return base + 2 * ((perNode - 1) * hop(intra, "tree", protocol) + levels * interHop); }
    if (algorithm === "nvls") { return hop(intra, "nvls", protocol); }
    return base + hop(intra, "nvls_tree", protocol) + 2 * levels * interHop;
  }

  /* lib.collectives.nccl._allreduce_bandwidth: 0 where the pair cannot run; k > 1. */
  // mirrors lib.collectives.nccl._allreduce_bandwidth
  function allreduceBandwidth(algorithm, protocol, k, nodes, intra, inter, nics) {
    var NC = data().nccl, bus;
    if (algorithm === "nvls" || algorithm === "nvls_tree") {
      if (protocol !== "Simple" || intra.in_network_efficiency === 0) { return 0.0; }
      if ((algorithm === "nvls") !== (nodes === 1)) { return 0.0; }
      var c = NC.nvls_channels;
      bus = 2 * intra.in_network_efficiency * (c - 1) * ncclBandwidth(intra) / (c + 1);
      if (nodes > 1) { bus = Math.min(bus, (nodes <= 2 ? 2 : 1) * nics * ncclBandwidth(inter)); }
      return bus * k / (2 * (k - 1));
    }
    if (algorithm === "ring") { return ringBus(protocol, intra, inter, nodes, nics) * k / (2 * (k - 1)); }
    var share = (protocol === "LL128" && nodes > 1) ? NC.tree_ll128_multinode : NC.protocol_share.tree[protocol];
    bus = busBandwidth(intra, inter, nodes, nics) * share;
    if (protocol === "LL") { bus = Math.min(bus, llCap(intra, nodes)); }
    return 0.5 * bus;
  }

  /* lib.collectives.nccl.tune_allreduce(...).time: the least estimated time (ties to the earlier pair). */
  // mirrors lib.collectives.nccl.tune_allreduce
  function tuneAllreduce(bytes, k, intra, nodes, inter, nics) {
    if (k === 1) { return 0.0; }
    var NC = data().nccl, best = Infinity;
    NC.algorithms.forEach(function (algorithm) {
      NC.protocols.forEach(function (protocol) {
        var bandwidth = allreduceBandwidth(algorithm, protocol, k, nodes, intra, inter, nics);
        var time = bandwidth === 0 ? Infinity : allreduceLatency(algorithm, protocol, k, nodes, intra, inter) + bytes / bandwidth;
        if (time < best) { best = time; }
      });
    });
    return best;
  }

  /* lib.collectives.send_time: one pipeline hop, priced as the cheapest one-step ring over the link. */
  // mirrors lib.collectives.startup.send_time
  function sendTime(bytes, link) {
    var best = Infinity;
    data().nccl.protocols.forEach(function (protocol) {
      var time = ringLatency(1, protocol, 2, 1, link, null) + bytes / ringBus(protocol, link, null, 1, 1);
      if (time < best) { best = time; }
    });
    return best;
  }

  /* lib.collectives.best_collective_time for an all-gather or reduce-scatter (collective_cost's ring, the best
     protocol): base + (k - 1) steps + (k - 1) / k of the gathered bytes over the bus. */
  // mirrors lib.collectives.startup.best_collective_time
  function ringCollective(bytes, k, intra, nodes, inter, nics) {
    var best = Infinity;
    data().nccl.protocols.forEach(function (protocol) {
      var latency = k === 1 ? 0.0 : ringLatency(1, protocol, k, nodes, intra, inter);
      var time = latency + (k > 1 ? (k - 1) / k : 0.0) * bytes / ringBus(protocol, intra, inter, nodes, nics);
      if (time < best) { best = time; }
    });
    return best;
  }

  /* lib.collectives.engine._masks: which custom kernel vLLM runs ("one", "two"), or null for NCCL. */
  // mirrors lib.collectives.engine._masks
  function customKernel(bytes, k, intra, nodes) {
    var E = data().engine_allreduce;
    var fits = bytes < E.max_size;
    if (nodes > 1 || E.supported_groups.indexOf(k) < 0 || intra.kind === "net") { return null; }
    if (intra.kind === "pcie") { return fits && k === 2 ? "one" : null; }
    var small = k === 2 || (k <= 4 && bytes < E.one_shot_below_4) || bytes < E.one_shot_below_8;
    if (!fits) { return null; }
    return small ? "one" : "two";
  }

  /* lib.collectives.engine._kernel_time: alpha + moved / B of one kernel. */
  // mirrors lib.collectives.engine._kernel_time
  function kernelTime(kernel, bytes, k, intra) {
    var E = data().engine_allreduce;
    var constants = kernel === "one" ? E.one_shot : E.two_shot;
    var moved = kernel === "one" ? (k - 1) * bytes : 2 * (k - 1) / k * bytes;
    return constants.latency + moved / (constants.link_share * intra.bandwidth);
  }

  /* lib.collectives.engine.engine_allreduce(...).time: vLLM's kernel where it runs one, else NCCL's tuner. */
  // mirrors lib.collectives.engine.engine_allreduce
  function engineAllreduce(bytes, k, intra, nodes, inter, nics, allreduce) {
    if (k === 1) { return 0.0; }
    if (allreduce === "engine") {
      var kernel = customKernel(bytes, k, intra, nodes);
      if (kernel) { return kernelTime(kernel, bytes, k, intra); }
    }
    return tuneAllreduce(bytes, k, intra, nodes, inter, nics);
  }

  /* The functions tagged `// mirrors`, by name, for tests/browser/test_planner_functions.py. */
  var mirrors = {
    hop: hop, ncclBandwidth: ncclBandwidth, llCap: llCap, busBandwidth: busBandwidth, ringLatency: ringLatency,
    ringBus: ringBus, allreduceLatency: allreduceLatency, allreduceBandwidth: allreduceBandwidth,
    tuneAllreduce: tuneAllreduce, sendTime: sendTime, ringCollective: ringCollective, customKernel: customKernel,
    kernelTime: kernelTime, engineAllreduce: engineAllreduce
  };

  window.PlannerCollectives = { tuneAllreduce: tuneAllreduce, sendTime: sendTime, engineAllreduce: engineAllreduce,
    ringCollective: ringCollective,
    _mirrors: mirrors };
}());
