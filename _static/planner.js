/*
 * Layout planner of "Twice the Devices, Half the Wait?" (book/planner.md).
 *
 * Plain JavaScript, no library, nothing fetched: the page works offline.
 * Every number comes from window.PLANNER_DATA, which tools/planner_data.py
 * writes from lib at build time (presets, hardware catalogue, NCCL's
 * constants, the planner's defaults). The formulas mirror lib.serving
 * (layout.py, memory.py, step.py, plan.py) and lib.collectives.nccl
 * (tune_allreduce, send_time) operation by operation, in SI units, so both
 * give the same numbers; tests/browser/test_planner.py holds them to it.
 */
(function () {
  "use strict";

  var D = window.PLANNER_DATA;
  var NC = D ? D.nccl : null;
  // lib.units. Without the data file init() says so and stops, so nothing reads them undefined.
  var U = D ? D.units : {};
  var GB = U.GB, GIB = U.GiB, TB = U.TB, TFLOPS = U.TFLOPS, MS = U.ms;

  // ------------------------------------------------------------ lib.transformer

  function headDim(c) { return Math.floor(c.hidden / c.heads); }

  function breakdown(c) {  // parameter_breakdown
    var d = c.hidden, hd = headDim(c);
    var q = c.heads * hd, kv = c.kv_heads * hd;
    var embedding = c.vocab * d;
    return {
      qo: 2 * d * q + (c.qkv_bias ? q : 0),
      kv: 2 * d * kv + (c.qkv_bias ? 2 * kv : 0),
      mlp: (c.gated_mlp ? 3 : 2) * d * c.ffn_hidden,
      router: c.experts > 1 ? d * c.experts : 0,
      norms: 2 * d,
      embedding: embedding,
      head: c.tied_embeddings ? 0 : embedding,
      final_norm: d
    };
  }

  /* k is in valid_tp_degrees(config, k, replicate_kv=True). */
  function tpAllowed(c, k) {
    if (c.heads % k || c.ffn_hidden % k) { return false; }
    return k <= c.kv_heads ? c.kv_heads % k === 0 : k % c.kv_heads === 0;
  }

  function kvHeadsPerDevice(c, tp) { return Math.max(c.kv_heads / tp, 1.0); }

  function kvPerToken(c, b) { return 2 * c.layers * c.kv_heads * headDim(c) * b; }  // kv_cache_bytes_per_token

  // ------------------------------------------------------------ lib.serving.layout

  function stageLayers(layers, stages) {
    var out = [];
    for (var i = 0; i < stages; i++) { out.push(Math.floor(layers / stages) + (i < layers % stages ? 1 : 0)); }
    return out;
  }

  function maxOf(values) { return values.reduce(function (a, b) { return b > a ? b : a; }, -Infinity); }

  function layoutName(l) { return "tp" + l.tp + "-pp" + l.pp + "-dp" + l.dp; }

  function layouts(c, n, expertParallel) {
    var found = [];
    var ep = !!expertParallel && c.experts > 1;
    for (var tp = 1; tp <= n; tp++) {
      if (n % tp) { continue; }
      for (var pp = 1; pp <= n / tp; pp++) {
        if ((n / tp) % pp || pp > c.layers) { continue; }
        if (ep && c.experts % tp) { continue; }
        if (!tpAllowed(c, tp)) { continue; }
        found.push({ tp: tp, pp: pp, dp: n / (tp * pp), ep: ep });
      }
    }
    return found;
  }

  // ------------------------------------------------------------ lib.serving.memory

  function kvPerTokenPerDevice(c, l, b) {
    var share = kvHeadsPerDevice(c, l.tp) / c.kv_heads;
    var layers = maxOf(stageLayers(c.layers, l.pp)) / c.layers;
    return kvPerToken(c, b) * share * layers;
  }

  function perDeviceLayer(c, l, experts, parts) {
    var kv = parts.kv * kvHeadsPerDevice(c, l.tp) / c.kv_heads;
    return parts.qo / l.tp + kv + experts * parts.mlp / l.tp + parts.router + parts.norms;
  }

  function stageWeightBytes(c, l, b) {
    var parts = breakdown(c);
    var layer = perDeviceLayer(c, l, c.experts, parts);
    var counts = stageLayers(c.layers, l.pp);
    return counts.map(function (n, i) {
      var params = n * layer;
      if (i === 0) { params += parts.embedding / l.tp; }
      if (i === counts.length - 1) {
        params += parts.final_norm + (parts.head ? parts.head : (l.pp > 1 ? parts.embedding : 0)) / l.tp;
      }
      return params * b;
    });
  }

  function activationBytes(c, tokens, tp, b) {
    var d = c.hidden, hd = headDim(c);
    var qkv = (c.heads + 2 * c.kv_heads) * hd / tp;
    var perToken = b * (4 * d + qkv + 3 * c.ffn_hidden / tp) + 4 * c.vocab / tp;
    return tokens * perToken;
  }

  function percent(share) { return (share * 100).toFixed(0) + "%"; }

  function memoryFit(c, memory, l, seqs, ctx, b, kvb, reserve, stepTokens) {
    var usable = memory * (1 - reserve);
    var weights = maxOf(stageWeightBytes(c, l, b));
    var activations = activationBytes(c, Math.max(stepTokens, seqs), l.tp, b);
    var perSequence = ctx * kvPerTokenPerDevice(c, l, kvb);
    var room = usable - weights - activations;
    var most = room > 0 ? Math.max(0, Math.floor(room / perSequence)) : 0;
    var kv = seqs * perSequence;
    var where = (usable / GB).toFixed(1) + " GB usable (" + (memory / GB).toFixed(1) + " GB less a " +
      percent(reserve) + " reserve)";
    var reason = "";
    if (weights > usable) {
      reason = "weights alone need " + (weights / GB).toFixed(1) + " GB per device, more than the " + where;
    } else if (room <= 0) {
      reason = "weights (" + (weights / GB).toFixed(1) + " GB) and activations (" + (activations / GB).toFixed(1) +
        " GB) need more than the " + where;
    } else if (seqs > most) {
      reason = "the KV cache of " + seqs + " sequences of " + ctx + " tokens needs " + (kv / GB).toFixed(1) +
        " GB per device, but only " + (room / GB).toFixed(1) + " GB remain after weights and activations (room for " +
        most + ")";
    }
    var total = weights + kv + activations;
    return { weights: weights, kv: kv, activations: activations, usable: usable, most: most, reason: reason,
      total: total, free: usable - total, fits: total <= usable };
  }

  // ------------------------------------------------------------ lib.collectives.nccl

  function hop(link, algorithm, protocol) { return D.hop_latency[link.kind][algorithm][protocol]; }

  function ncclBandwidth(link) { return link.bandwidth * link.nccl_share; }

  function llCap(intra, nodes) {
    if (nodes > 1 || intra.kind === "net") { return NC.ll_cap_multinode; }
    return Object.prototype.hasOwnProperty.call(NC.ll_cap, intra.slug) ? NC.ll_cap[intra.slug] : NC.ll_cap_one_node_other;
  }

  function floorLog2(n) { var levels = 0; while (Math.pow(2, levels + 1) <= n) { levels++; } return levels; }

  /* _bus_bandwidth: the intra-node link, or all of a node's NICs if they are slower. */
  function busBandwidth(intra, inter, nodes, nics) {
    return nodes === 1 ? ncclBandwidth(intra) : Math.min(ncclBandwidth(intra), nics * ncclBandwidth(inter));
  }

  /* _ring_latency: base + steps x hop of a ring over k ranks, stepsPerRank x (k - 1) steps,
     of which stepsPerRank x (nodes - 1) cross the network. */
  function ringLatency(stepsPerRank, protocol, k, nodes, intra, inter) {
    var interSteps = stepsPerRank * (nodes - 1);
    var overhead = nodes === 1 ? 0.0 : NC.net_overhead * (protocol === "Simple" ? 3 : 1);
    var intraHop = Math.max(hop(intra, "ring", protocol), overhead);
    var interHop = nodes > 1 ? hop(inter, "ring", protocol) : 0.0;
    return NC.base_latency.ring[protocol] + (stepsPerRank * (k - 1) - interSteps) * intraHop + interSteps * interHop;
  }

  /* _ring_bus: a ring's bus bandwidth with this protocol, its share of the link, LL under NCCL's cap. */
  function ringBus(protocol, intra, inter, nodes, nics) {
    var bus = busBandwidth(intra, inter, nodes, nics) * NC.protocol_share.ring[protocol];
    return protocol === "LL" ? Math.min(bus, llCap(intra, nodes)) : bus;
  }

  function allreduceLatency(algorithm, protocol, k, nodes, intra, inter) {
    if (algorithm === "ring") { return ringLatency(2, protocol, k, nodes, intra, inter); }
    var base = NC.base_latency[algorithm][protocol];
    var perNode = Math.floor(k / nodes);
    var levels = floorLog2(nodes);
    var interHop = nodes > 1 ? hop(inter, perNode > 1 ? algorithm : "tree", protocol) : 0.0;
    if (algorithm === "tree") { return base + 2 * ((perNode - 1) * hop(intra, "tree", protocol) + levels * interHop); }
    if (algorithm === "nvls") { return hop(intra, "nvls", protocol); }
    return base + hop(intra, "nvls_tree", protocol) + 2 * levels * interHop;
  }

  function allreduceBandwidth(algorithm, protocol, k, nodes, intra, inter, nics) {
    var bus;
    if (algorithm === "nvls" || algorithm === "nvls_tree") {
      if (protocol !== "Simple" || intra.in_network_efficiency === 0 || k === 1) { return 0.0; }
      if ((algorithm === "nvls") !== (nodes === 1)) { return 0.0; }
      var c = NC.nvls_channels;
      bus = 2 * intra.in_network_efficiency * (c - 1) * ncclBandwidth(intra) / (c + 1);
      if (nodes > 1) { bus = Math.min(bus, (nodes <= 2 ? 2 : 1) * nics * ncclBandwidth(inter)); }
      return bus * k / (2 * (k - 1));
    }
    if (algorithm === "ring") {
      return k > 1 ? ringBus(protocol, intra, inter, nodes, nics) * k / (2 * (k - 1)) : Infinity;
    }
    var share = (protocol === "LL128" && nodes > 1) ? NC.tree_ll128_multinode : NC.protocol_share.tree[protocol];
    bus = busBandwidth(intra, inter, nodes, nics) * share;
    if (protocol === "LL") { bus = Math.min(bus, llCap(intra, nodes)); }
    return 0.5 * bus;
  }

  /* tune_allreduce(...).time: the least estimated time over every algorithm and protocol. */
  function tuneAllreduce(bytes, k, intra, nodes, inter, nics) {
    if (k === 1) { return 0.0; }
    var best = Infinity;
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
  function sendTime(bytes, link) {
    var best = Infinity;
    NC.protocols.forEach(function (protocol) {
      var time = ringLatency(1, protocol, 2, 1, link, null) + bytes / ringBus(protocol, link, null, 1, 1);
      if (time < best) { best = time; }
    });
    return best;
  }

  // ------------------------------------------------------------ lib.serving.step

  function expertsTouched(experts, topK, tokens) { return experts * (1 - Math.pow(1 - topK / experts, tokens)); }

  function tpAllreduce(cluster, tp, bytes) {
    if (tp === 1) { return 0.0; }
    var nodes = Math.max(1, Math.ceil(tp / cluster.devicesPerNode));
    if (nodes === 1) { return tuneAllreduce(bytes, tp, cluster.link, 1, null, tp); }
    return tuneAllreduce(bytes, tp, cluster.link, nodes, cluster.interLink, cluster.nics);
  }

  /* lib.serving.step._experts_read: MLPs' worth of weights the busiest device reads per layer. */
  function expertsRead(c, l, n) {
    if (c.experts === 1) { return 1.0 / l.tp; }
    var touched = expertsTouched(c.experts, c.experts_per_token, n);
    if (!l.ep) { return touched / l.tp; }
    return Math.min(c.experts / l.tp, Math.max(1.0, Math.ceil(touched / l.tp)));
  }

  function stageWork(s, l, stage, n, ctx, prefill) {
    var c = s.config, device = s.device;
    var counts = stageLayers(c.layers, l.pp);
    var parts = breakdown(c);
    var tp = l.tp, layers = counts[stage], last = stage === counts.length - 1;
    var kvWeights = parts.kv * kvHeadsPerDevice(c, tp) / c.kv_heads;
    var dense = parts.qo / tp + kvWeights + parts.router + parts.norms;
    var head = last ? (parts.head || parts.embedding) / tp : 0.0;
    var weightsRead = (layers * (dense + expertsRead(c, l, n) * parts.mlp) + head) * s.bytesPerElement;
    var kvToken = kvPerTokenPerDevice(c, { tp: tp, pp: 1 }, s.kvBytesPerElement) * layers / c.layers;
    var qWidth = c.heads * headDim(c) / tp;
    var activeLinear = dense + c.experts_per_token * parts.mlp / tp;
    var kvTraffic, attention, headTokens;
    if (prefill) {
      kvTraffic = n * kvToken;
      attention = 4 * qWidth * n * (n + 1) / 2 * layers;
      headTokens = 1.0;
    } else {
      kvTraffic = n * ctx * kvToken;
      attention = 4 * qWidth * n * ctx * layers;
      headTokens = n;
    }
    var flops = 2 * n * layers * activeLinear + attention + 2 * headTokens * head;
    var read = weightsRead + kvTraffic;
    var communication = 2 * layers * tpAllreduce(s.cluster, tp, n * c.hidden * D.serving.activation_bytes);
    var memoryTime = read / (s.memoryEfficiency * device.memory_bandwidth);
    var computeTime = flops / (s.computeEfficiency * device.peak_flops);
    return { read: read, flops: flops, memoryTime: memoryTime, computeTime: computeTime, communication: communication,
      time: Math.max(memoryTime, computeTime) + communication };
  }

  function hopLinks(cluster, l, replica) {
    var first = replica * l.tp * l.pp, links = [];
    for (var boundary = 0; boundary < l.pp - 1; boundary++) {
      var sender = first + (boundary + 1) * l.tp - 1, receiver = first + (boundary + 1) * l.tp;
      var same = Math.floor(sender / cluster.devicesPerNode) === Math.floor(receiver / cluster.devicesPerNode);
      links.push(same ? cluster.link : cluster.interLink);
    }
    return links;
  }

  /* The slowest replica's pipeline hops for one message (max over replicas of the sum over boundaries). */
  function hopTime(s, l, bytes) {
    var worst = -Infinity, cluster = s.cluster;
    var inside = sendTime(bytes, cluster.link), across = sendTime(bytes, cluster.interLink);  // each link once
    for (var r = 0; r < l.dp; r++) {
      var total = 0.0;
      hopLinks(cluster, l, r).forEach(function (link) { total += link === cluster.link ? inside : across; });
      if (total > worst) { worst = total; }
    }
    return worst;
  }

  function decodeStep(s, l, batch, ctx) {
    var m = Math.min(l.pp, batch), micro = Math.ceil(batch / m);
    var works = [], times = [];
    for (var stage = 0; stage < l.pp; stage++) {
      works.push(stageWork(s, l, stage, micro, ctx, false));
      times.push(works[stage].time);
    }
    var hops = hopTime(s, l, micro * s.config.hidden * D.serving.activation_bytes);
    var sum = 0.0;
    times.forEach(function (t) { sum += t; });
    var slowest = maxOf(times);
    var tpot = Math.max(sum + hops, m * slowest);
    var w = works[times.indexOf(slowest)];
    return { stageTimes: times, hops: hops, microbatches: m, tpot: tpot, tokensPerS: batch / tpot,
      bound: w.computeTime > w.memoryTime ? "compute" : "memory",
      communicationShare: w.communication / w.time };
  }

  function prefillTime(s, l, prompt) {
    var total = 0;
    for (var stage = 0; stage < l.pp; stage++) { total += stageWork(s, l, stage, prompt, 0, true).time; }
    return total + hopTime(s, l, prompt * s.config.hidden * D.serving.activation_bytes);
  }

  // ------------------------------------------------------------ lib.serving.plan

  /* One row per layout, the fields of lib.serving.PlanRow (SI units). */
  function plan(s) {
    var n = s.devices, c = s.config;
    var rows = [];
    layouts(c, n, s.expertParallel).forEach(function (l) {
      // A tensor-parallel group sits inside one server or fills whole servers (lib.serving.Cluster.holds_group).
      var perNode = s.cluster.devicesPerNode;
      if (perNode % l.tp && l.tp % perNode) { return; }
      var perReplica = Math.ceil(s.batch / l.dp);
      var fit = memoryFit(c, s.device.memory_bytes, l, perReplica, s.promptTokens + s.outputTokens,
        s.bytesPerElement, s.kvBytesPerElement, s.reserve, s.stepTokens);
      var row = { name: layoutName(l), tp: l.tp, pp: l.pp, dp: l.dp, devices: n, expertParallel: l.ep, fits: fit.fits,
        weights: fit.weights, kv: fit.kv, activations: fit.activations, memory: fit.total, usable: fit.usable,
        free: fit.free, batch: perReplica, maxBatch: fit.most, maxSequences: fit.most * l.dp };
      var step = decodeStep(s, l, perReplica, s.promptTokens + s.outputTokens / 2);
      var ttft = prefillTime(s, l, s.promptTokens);
      var tokensPerS = s.batch / step.tpot;
      var misses = [];
      if (s.ttftLimit !== null && ttft > s.ttftLimit) {
        misses.push("time to first token " + (ttft * 1e3).toFixed(0) + " ms is over the " +
          (s.ttftLimit * 1e3).toFixed(0) + " ms target");
      }
      if (s.tpotLimit !== null && step.tpot > s.tpotLimit) {
        misses.push("time per output token " + (step.tpot * 1e3).toFixed(1) + " ms is over the " +
          (s.tpotLimit * 1e3).toFixed(1) + " ms target");
      }
      row.meetsSlo = misses.length === 0;
      row.reason = fit.reason || misses.join("; ");
      row.ttft = ttft;
      row.tpot = step.tpot;
      row.bound = step.bound;
      row.communicationShare = step.communicationShare;
      row.tokensPerS = tokensPerS;
      row.tokensPerSPerDevice = tokensPerS / n;
      row.tokensPerSPerUser = 1 / step.tpot;
      row.costPerMillionTokens = s.price === null ? null : s.price * n / 3600 / tokensPerS * 1e6;
      rows.push(row);
    });
    return rows;
  }

  /* lib.serving.best: most tokens/s per device among rows that fit and meet the targets; ties to lower TPOT. */
  function best(rows) {
    var chosen = null;
    rows.forEach(function (row) {
      if (!row.fits || !row.meetsSlo) { return; }
      if (chosen === null || row.tokensPerSPerDevice > chosen.tokensPerSPerDevice ||
          (row.tokensPerSPerDevice === chosen.tokensPerSPerDevice && row.tpot < chosen.tpot)) { chosen = row; }
    });
    return chosen;
  }

  /* lib.serving.frontier: every fitting (layout, batch) point, and the Pareto front sorted by tokens/s per user. */
  function frontier(s, batches) {
    var points = [];
    (batches || D.serving.frontier_batches).forEach(function (batch) {
      var at = Object.assign({}, s, { batch: batch });
      plan(at).forEach(function (row) {
        if (row.fits && row.meetsSlo) {
          points.push({ name: row.name, batch: batch, user: row.tokensPerSPerUser, device: row.tokensPerSPerDevice });
        }
      });
    });
    function dominates(q, p) {
      return q.user >= p.user && q.device >= p.device && (q.user > p.user || q.device > p.device);
    }
    var front = points.filter(function (p) { return !points.some(function (q) { return dominates(q, p); }); });
    front.sort(function (a, b) { return a.user - b.user; });
    return { points: points, front: front };
  }

  // ------------------------------------------------------------ inputs

  var MODEL_FIELDS = ["layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts", "top_k"];
  var MODEL_KEYS = { layers: "layers", hidden: "hidden", heads: "heads", kv_heads: "kv_heads", ffn_hidden: "ffn_hidden",
    vocab: "vocab", experts: "experts", top_k: "experts_per_token" };
  var DEVICE_FIELDS = ["memory_GiB", "bandwidth_TBps", "flops_TFLOPS"];

  // name -> rule. "count": whole number >= min (<= max); "positive"/"nonnegative"/"fraction"/"share": numbers;
  // optional: empty means "none". Selects and the checkbox are read directly.
  var RULES = {
    layers: { rule: "count", min: 1, max: 1e6 }, hidden: { rule: "count", min: 1, max: 1e7 },
    heads: { rule: "count", min: 1, max: 1e6 }, kv_heads: { rule: "count", min: 1, max: 1e6 },
    ffn_hidden: { rule: "count", min: 1, max: 1e8 }, vocab: { rule: "count", min: 1, max: 1e8 },
    experts: { rule: "count", min: 1, max: 1e5 }, top_k: { rule: "count", min: 1, max: 1e5 },
    memory_GiB: { rule: "positive", max: 1e7 }, bandwidth_TBps: { rule: "positive", max: 1e6 },
    flops_TFLOPS: { rule: "positive", max: 1e9 },
    devices_per_node: { rule: "count", min: 1, max: 4096 }, nodes: { rule: "count", min: 1, max: 4096 },
    devices: { rule: "count", min: 1, max: 4096 },
    prompt_tokens: { rule: "count", min: 1, max: 1e8 }, output_tokens: { rule: "count", min: 1, max: 1e8 },
    batch: { rule: "count", min: 1, max: 1e8 },
    ttft_limit_ms: { rule: "positive", optional: true, max: 1e12 },
    tpot_limit_ms: { rule: "positive", optional: true, max: 1e12 },
    price_per_device_hour: { rule: "nonnegative", optional: true, max: 1e12 },
    memory_efficiency: { rule: "fraction" }, compute_efficiency: { rule: "fraction" },
    reserve: { rule: "share" }, step_tokens: { rule: "count", min: 0, max: 1e8 },
    nics_per_node: { rule: "count", min: 1, max: 4096, optional: true }
  };
  var SELECTS = ["model", "device", "link", "inter_link", "weight_bits", "kv_bits"];

  /* A model or device field counts only when its select says "custom": otherwise the preset's numbers stand. */
  function inactive(name, values) {
    return (MODEL_FIELDS.indexOf(name) >= 0 && values.model !== "custom") ||
      (DEVICE_FIELDS.indexOf(name) >= 0 && values.device !== "custom");
  }

  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

  function check(name, text) {
    var r = RULES[name], t = String(text).trim();
    if (t === "") {
      return r.optional ? { value: null } : { error: name + " must be a number; the field is empty" };
    }
    if (!NUMBER.test(t)) { return { error: name + " must be a number (like 64 or 2.5e3), got “" + t + "”" }; }
    var v = Number(t);
    if (!isFinite(v)) { return { error: name + " must be finite, got " + t }; }
    switch (r.rule) {
      case "count":
        if (v !== Math.round(v)) { return { error: name + " must be a whole number, got " + t }; }
        if (v < r.min) { return { error: name + " must be ≥ " + r.min + ", got " + t }; }
        break;
      case "positive":
        if (v <= 0) { return { error: name + " must be > 0, got " + t }; }
        break;
      case "nonnegative":
        if (v < 0) { return { error: name + " must be ≥ 0, got " + t }; }
        break;
      case "fraction":
        if (v <= 0 || v > 1) { return { error: name + " must be in (0, 1], got " + t }; }
        break;
      case "share":
        if (v < 0 || v >= 1) { return { error: name + " must be at least 0 and below 1 (a share of the memory), got " + t }; }
        break;
    }
    if (r.max !== undefined && v > r.max) {
      return { error: name + " must be at most " + r.max + " on this page, got " + t };
    }
    return { value: v };
  }

  /* Read a dict of strings (the form or a query string) into a scenario; errors by field name. */
  function scenario(values) {
    var errors = {}, v = {};
    Object.keys(RULES).forEach(function (name) {
      if (name === "nodes" || inactive(name, values)) { return; }  // nodes follows devices and devices_per_node
      var got = check(name, values[name] === undefined ? "" : values[name]);
      if (got.error) { errors[name] = got.error; } else { v[name] = got.value; }
    });
    function pick(name, table, extra) {
      if (Object.prototype.hasOwnProperty.call(table, values[name]) || values[name] === extra) { return values[name]; }
      errors[name] = name + " must be one of " + Object.keys(table).concat(extra ? [extra] : []).join(", ") +
        ", got “" + values[name] + "”";
      return null;
    }
    var model = pick("model", D.presets, "custom");
    var device = pick("device", D.devices, "custom");
    var link = pick("link", D.links), interLink = pick("inter_link", D.links);
    var bits = { "16": 2, "8": 1 };
    var weightBits = pick("weight_bits", bits), kvBits = pick("kv_bits", bits);

    var config = null;
    if (model === "custom") {
      if (v.hidden !== undefined && v.heads !== undefined && v.hidden % v.heads) {
        errors.hidden = "hidden must be a multiple of heads, got hidden=" + v.hidden + ", heads=" + v.heads;
      }
      if (v.heads !== undefined && v.kv_heads !== undefined && v.heads % v.kv_heads) {
        errors.kv_heads = "heads must be a multiple of kv_heads, got heads=" + v.heads + ", kv_heads=" + v.kv_heads;
      }
      if (v.experts !== undefined && v.top_k !== undefined && v.top_k > v.experts) {
        errors.top_k = "top_k (experts per token) must be at most experts, got top_k=" + v.top_k + ", experts=" + v.experts;
      }
      config = { name: "custom model", gated_mlp: true, qkv_bias: false, tied_embeddings: false };
      MODEL_FIELDS.forEach(function (f) { config[MODEL_KEYS[f]] = v[f]; });
    } else if (model) {
      config = D.presets[model];
    }
    var deviceSpec = null;
    if (device === "custom") {
      deviceSpec = { name: "custom device", memory_bytes: v.memory_GiB * GIB, memory_bandwidth: v.bandwidth_TBps * TB,
        peak_flops: v.flops_TFLOPS * TFLOPS, link: link };
    } else if (device) {
      deviceSpec = D.devices[device];
    }
    if (v.devices !== undefined && v.devices_per_node !== undefined && v.devices > v.devices_per_node &&
        v.devices % v.devices_per_node) {
      errors.devices = "devices must fill whole servers of " + v.devices_per_node + " devices, got " + v.devices;
    }
    if (Object.keys(errors).length) { return { errors: errors }; }
    var linkOf = function (slug) { return Object.assign({ slug: slug }, D.links[slug]); };
    return {
      errors: {},
      s: {
        config: config, device: deviceSpec, devices: v.devices,
        cluster: { devicesPerNode: v.devices_per_node, link: linkOf(link), interLink: linkOf(interLink),
          nics: v.nics_per_node === null ? v.devices_per_node : v.nics_per_node },
        bytesPerElement: bits[weightBits], kvBytesPerElement: bits[kvBits],
        promptTokens: v.prompt_tokens, outputTokens: v.output_tokens, batch: v.batch,
        ttftLimit: v.ttft_limit_ms === null ? null : v.ttft_limit_ms * MS,
        tpotLimit: v.tpot_limit_ms === null ? null : v.tpot_limit_ms * MS,
        price: v.price_per_device_hour,
        memoryEfficiency: v.memory_efficiency, computeEfficiency: v.compute_efficiency,
        reserve: v.reserve, stepTokens: v.step_tokens,
        expertParallel: values.expert_parallel === "on" || values.expert_parallel === true
      }
    };
  }

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
    var M = { left: 62, right: 16, top: 14, legend: W < 480 ? 40 : 22 };
    M.bottom = 46 + M.legend;
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    var title = svg.querySelector("title");
    while (svg.lastChild && svg.lastChild !== title) { svg.removeChild(svg.lastChild); }
    function message(text) {
      svg.appendChild(el("text", { x: W / 2, y: H / 2, "text-anchor": "middle", "class": "pl-axis-label" }, text));
      caption.textContent = text;
    }
    if (!result) { return message("No chart until the marked inputs are fixed."); }
    var targets = s.ttftLimit !== null || s.tpotLimit !== null;
    var batches = D.serving.frontier_batches;
    var range = "from " + batches[0] + " to " + batches[batches.length - 1] + " sequences";
    var points = result.frontier.points, front = result.frontier.front;
    var current = result.rows.filter(function (r) { return r.fits && r.meetsSlo; });
    var all = points.map(function (p) { return [p.user, p.device]; })
      .concat(current.map(function (r) { return [r.tokensPerSPerUser, r.tokensPerSPerDevice]; }));
    if (!all.length) {
      return message("No layout fits " + (targets ? "and meets the targets " : "") + "at any batch " + range +
        ", so there is nothing to plot.");
    }
    var xs = all.map(function (p) { return p[0]; }), ys = all.map(function (p) { return p[1]; });
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

    var marks = el("g", { "aria-hidden": "true" });
    points.forEach(function (p) { marks.appendChild(el("circle", { cx: px(p.user), cy: py(p.device), r: 3, "class": "pl-point" })); });
    if (front.length) {
      marks.appendChild(el("polyline", { points: front.map(function (p) { return px(p.user) + "," + py(p.device); }).join(" "),
        "class": "pl-front" }));
      front.forEach(function (p) { marks.appendChild(el("circle", { cx: px(p.user), cy: py(p.device), r: 4, "class": "pl-front-point" })); });
    }
    current.forEach(function (r) {
      marks.appendChild(el("circle", { cx: px(r.tokensPerSPerUser), cy: py(r.tokensPerSPerDevice), r: 6, "class": "pl-now" }));
    });
    var chosen = result.best;
    if (chosen) {
      var bx = px(chosen.tokensPerSPerUser), by = py(chosen.tokensPerSPerDevice);
      marks.appendChild(el("path", { d: "M" + bx + "," + (by - 8) + " l8,8 l-8,8 l-8,-8 z", "class": "pl-best-mark" }));
      var right = bx < W * 0.6;
      marks.appendChild(el("text", { x: bx + (right ? 12 : -12), y: by - 10, "text-anchor": right ? "start" : "end",
        "class": "pl-note" }, "best at batch " + s.batch + ": " + chosen.name));
    }
    svg.appendChild(marks);

    // The legend: one row under the axis label (two on a narrow screen), clear of the points.
    var legend = el("g", { "aria-hidden": "true", "class": "pl-legend" });
    var items = [
      function (g, x, y) { g.appendChild(el("circle", { cx: x + 6, cy: y - 4, r: 3, "class": "pl-point" })); return "a layout at one batch"; },
      function (g, x, y) { g.appendChild(el("line", { x1: x, x2: x + 14, y1: y - 4, y2: y - 4, "class": "pl-front" })); return "Pareto frontier"; },
      function (g, x, y) { g.appendChild(el("circle", { cx: x + 6, cy: y - 4, r: 5, "class": "pl-now" })); return "batch " + s.batch; },
      function (g, x, y) { g.appendChild(el("path", { d: "M" + (x + 6) + "," + (y - 11) + " l7,7 l-7,7 l-7,-7 z", "class": "pl-best-mark" })); return "best"; }
    ];
    var perRow = W < 480 ? 2 : 4, start = W < 480 ? 8 : M.left, step = (W - start) / perRow;
    items.forEach(function (draw, i) {
      var x = start + (i % perRow) * step, y = H - M.legend + 16 + Math.floor(i / perRow) * 18;
      legend.appendChild(el("text", { x: x + 20, y: y }, draw(legend, x, y)));
    });
    svg.appendChild(legend);

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

  // ------------------------------------------------------------ the page

  function option(select, value, text) {
    var o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    select.appendChild(o);
  }

  function init() {
    var form = document.getElementById("pl-form");
    if (!form) { return; }
    var status = document.getElementById("pl-status");
    if (!D) {
      status.textContent = "The planner's data file (_static/planner-data.js) is missing from this copy of the book; " +
        "rebuild it with make book.";
      return;
    }
    var E = form.elements;
    var tbody = document.getElementById("pl-rows");
    var summary = document.getElementById("pl-summary");
    var svg = document.getElementById("pl-chart");
    var caption = document.getElementById("pl-chart-desc");
    var frontBody = document.getElementById("pl-front-rows");
    var table = document.getElementById("pl-table");
    var last = null;

    Object.keys(D.presets).forEach(function (k) { option(E.model, k, D.presets[k].name); });
    option(E.model, "custom", "custom (the numbers below)");
    Object.keys(D.devices).forEach(function (k) {
      var d = D.devices[k];
      option(E.device, k, d.name + " (" + short(d.memory_bytes / GIB) + " GiB, " + short(d.memory_bandwidth / TB) + " TB/s)");
    });
    option(E.device, "custom", "custom (the numbers below)");
    Object.keys(D.links).forEach(function (k) {
      var text = D.links[k].name + ", " + short(D.links[k].bandwidth / GB) + " GB/s each way";
      option(E.link, k, text);
      option(E.inter_link, k, text);
    });

    // The defaults: lib.serving.plan's keyword defaults, the book's device, Llama-3 70B on one server.
    var P = D.serving.plan_defaults;
    var BASE = {
      model: "llama-3-70b", device: D.book_device, devices_per_node: String(P.devices_per_node), devices: "8",
      link: D.devices[D.book_device].link, inter_link: P.inter_link, weight_bits: String(8 * P.bytes_per_element),
      kv_bits: String(8 * (P.kv_bytes_per_element === null ? P.bytes_per_element : P.kv_bytes_per_element)),
      prompt_tokens: "1024", output_tokens: "256", batch: "64", ttft_limit_ms: "", tpot_limit_ms: "",
      price_per_device_hour: "", memory_efficiency: String(P.memory_efficiency),
      compute_efficiency: String(P.compute_efficiency), reserve: String(P.reserve), step_tokens: String(P.step_tokens),
      nics_per_node: P.nics_per_node === null ? "" : String(P.nics_per_node), expert_parallel: P.expert_parallel
    };
    var NAMES = Object.keys(RULES).concat(SELECTS, ["expert_parallel"]).filter(function (n) { return n !== "nodes"; });

    function fillModel() {  // show the preset's numbers in the model fields
      var c = D.presets[E.model.value];
      if (!c) { return; }
      MODEL_FIELDS.forEach(function (f) { E[f].value = String(c[MODEL_KEYS[f]]); });
    }
    function fillDevice() {
      var d = D.devices[E.device.value];
      if (!d) { return; }
      E.memory_GiB.value = short(d.memory_bytes / GIB);
      E.bandwidth_TBps.value = String(d.memory_bandwidth / TB);
      E.flops_TFLOPS.value = String(d.peak_flops / TFLOPS);
    }
    function syncNodes() {  // nodes follow devices (the input the contract names) and devices per node
      var n = check("devices", E.devices.value), k = check("devices_per_node", E.devices_per_node.value);
      if (n.error || k.error) { return; }
      var nodes = n.value <= k.value ? 1 : n.value / k.value;
      if (nodes === Math.round(nodes)) { E.nodes.value = String(nodes); }
    }

    function setAll(values) {
      NAMES.forEach(function (name) {
        if (!(name in values)) { return; }
        if (name === "expert_parallel") { E[name].checked = values[name] === true || values[name] === "on"; return; }
        var input = E[name];
        input.value = values[name];
        if (input.tagName === "SELECT" && input.value !== String(values[name])) {
          input.setAttribute("data-bad", String(values[name]));  // an unknown name from a link: marked below
        } else {
          input.removeAttribute("data-bad");
        }
      });
    }

    function read() {
      var values = {};
      NAMES.forEach(function (name) {
        var input = E[name];
        if (name === "expert_parallel") { values[name] = input.checked ? "on" : "off"; return; }
        values[name] = input.getAttribute("data-bad") !== null ? input.getAttribute("data-bad") : input.value.trim();
      });
      return values;
    }

    /* The scenario as a link that travels (see scenario-link.js). */
    function updateUrl(values) {
      var params = new URLSearchParams();
      NAMES.forEach(function (name) {
        if (inactive(name, values)) { return; }
        if (name === "expert_parallel" && values[name] !== "on") { return; }
        if (RULES[name] && RULES[name].optional && values[name] === "") { return; }
        params.set(name, values[name]);
      });
      link.publish(params.toString());
    }

    function mark(name, message) {
      var input = E[name], error = document.getElementById("pl-" + name + "-error");
      if (message) {
        input.setAttribute("aria-invalid", "true");
        error.textContent = message + ".";
        error.hidden = false;
      } else {
        input.removeAttribute("aria-invalid");
        error.textContent = "";
        error.hidden = true;
      }
    }

    function cell(row, output, value, text, extra) {
      var td = document.createElement("td");
      td.setAttribute("data-output", output);
      td.setAttribute("data-label", table.querySelector('th[data-col="' + output + '"]').getAttribute("data-short"));
      if (value !== null) { td.setAttribute("data-value", String(value)); }
      td.textContent = text;
      if (extra) { td.appendChild(extra); }
      row.appendChild(td);
      return td;
    }

    function memoryDetail(r) {
      var box = document.createElement("span");
      box.className = "pl-mem";
      var bar = document.createElement("span");
      bar.className = "pl-bar";
      bar.setAttribute("aria-hidden", "true");
      var scale = Math.max(r.usable, r.memory);
      [["pl-w", r.weights], ["pl-kv", r.kv], ["pl-act", r.activations]].forEach(function (part) {
        var piece = document.createElement("span");
        piece.className = part[0];
        piece.style.width = (100 * part[1] / scale).toFixed(2) + "%";
        bar.appendChild(piece);
      });
      box.appendChild(bar);
      var words = document.createElement("span");
      words.className = "pl-mem-words";
      words.textContent = fmt(r.weights / GB) + " / " + fmt(r.kv / GB) + " / " +
        (r.free >= 0 ? fmt(r.free / GB) : "over by " + fmt(-r.free / GB));
      box.appendChild(words);
      return box;
    }

    function renderRows(s, rows, chosen) {
      tbody.textContent = "";
      var showCost = s.price !== null;
      table.classList.toggle("pl-with-cost", showCost);
      rows.forEach(function (r) {
        var tr = document.createElement("tr");
        tr.setAttribute("data-layout", r.name);
        tr.setAttribute("data-fits", r.fits ? "true" : "false");
        tr.className = !r.fits ? "pl-nofit" : (!r.meetsSlo ? "pl-miss" : "");
        if (r === chosen) { tr.classList.add("pl-best"); tr.setAttribute("data-best", "true"); }
        var th = document.createElement("th");
        th.scope = "row";
        th.setAttribute("data-output", "layout");
        th.innerHTML = "<span class=\"pl-layout\">tp" + r.tp + " · pp" + r.pp + " · dp" + r.dp + "</span>";
        if (r === chosen) { th.insertAdjacentHTML("beforeend", " <strong class=\"pl-badge\">best</strong>"); }
        tr.appendChild(th);
        cell(tr, "fits", r.fits, r.fits ? "yes" : "no");
        cell(tr, "memory_per_device_GB", r.memory / GB, fmt(r.memory / GB));
        cell(tr, "memory_split_GB", null, "", memoryDetail(r));
        cell(tr, "max_sequences", r.maxSequences, String(r.maxSequences));
        cell(tr, "ttft_ms", r.ttft / MS, fmt(r.ttft / MS));
        cell(tr, "tpot_ms", r.tpot / MS, fmt(r.tpot / MS));
        cell(tr, "tokens_per_s_per_device", r.tokensPerSPerDevice, fmt(r.tokensPerSPerDevice));
        cell(tr, "tokens_per_s_per_user", r.tokensPerSPerUser, fmt(r.tokensPerSPerUser));
        if (showCost) { cell(tr, "cost_per_million_tokens", r.costPerMillionTokens, fmt(r.costPerMillionTokens)); }
        var note = r.reason ? r.reason.charAt(0).toUpperCase() + r.reason.slice(1) + "." :
          "Fits; each decode step is " + r.bound + "-bound" +
          (r.tp > 1 ? ", all-reduces " + (100 * r.communicationShare).toFixed(0) + " % of the slowest stage" : "") + ".";
        cell(tr, "note", null, note).classList.add("pl-note-cell");
        tbody.appendChild(tr);
      });
    }

    function describeBest(s, rows, chosen) {
      if (chosen) {
        return "Best layout: " + chosen.name + " (tensor " + chosen.tp + " × pipeline " + chosen.pp + " × data " +
          chosen.dp + "): " + short(chosen.tokensPerSPerDevice) + " tokens/s per device, " +
          short(chosen.tokensPerSPerUser) + " per user, time to first token " + short(chosen.ttft / MS) +
          " ms, time per output token " + short(chosen.tpot / MS) + " ms" +
          (chosen.costPerMillionTokens !== null ? ", " + short(chosen.costPerMillionTokens) + " per million tokens" : "") + ".";
      }
      var fitting = rows.filter(function (r) { return r.fits; });
      if (!fitting.length) {
        return "No layout of " + s.devices + " devices fits: " + rows.length + " layouts tried; each row says why.";
      }
      return "No layout meets the targets: " + fitting.length + " of " + rows.length +
        " layouts fit in memory, but each misses a latency target (see the notes).";
    }

    function renderFront(front) {
      frontBody.textContent = "";
      front.slice().reverse().forEach(function (p) {
        var tr = document.createElement("tr");
        [p.name, String(p.batch), fmt(p.user), fmt(p.device)].forEach(function (text, i) {
          var td = document.createElement(i === 0 ? "th" : "td");
          if (i === 0) { td.scope = "row"; }
          td.textContent = text;
          tr.appendChild(td);
        });
        frontBody.appendChild(tr);
      });
      if (!front.length) {
        var tr = document.createElement("tr"), td = document.createElement("td");
        td.colSpan = 4;
        td.textContent = "No point: nothing fits at any batch of the sweep.";
        tr.appendChild(td);
        frontBody.appendChild(tr);
      }
    }

    function update(event) {
      var target = event && event.target ? event.target.name : null;
      if (target === "model") { fillModel(); }
      if (target === "device") {
        fillDevice();
        if (D.devices[E.device.value]) { E.link.value = D.devices[E.device.value].link; }
      }
      if (MODEL_FIELDS.indexOf(target) >= 0) { E.model.value = "custom"; E.model.removeAttribute("data-bad"); }
      if (DEVICE_FIELDS.indexOf(target) >= 0) { E.device.value = "custom"; E.device.removeAttribute("data-bad"); }
      if (target && E[target] && E[target].tagName === "SELECT") { E[target].removeAttribute("data-bad"); }
      if (target === "nodes") {
        var nodes = check("nodes", E.nodes.value), k = check("devices_per_node", E.devices_per_node.value);
        mark("nodes", nodes.error);
        if (!nodes.error && !k.error) { E.devices.value = String(nodes.value * k.value); }
      } else {
        syncNodes();
        mark("nodes", null);
      }
      var values = read();
      var got = scenario(values);
      NAMES.forEach(function (name) { if (name !== "expert_parallel") { mark(name, got.errors[name]); } });
      updateUrl(values);
      var bad = Object.keys(got.errors);
      if (bad.length) {
        tbody.innerHTML = "";
        var tr = document.createElement("tr"), td = document.createElement("td");
        td.colSpan = table.tHead.rows[0].cells.length;
        td.className = "pl-waiting";
        td.textContent = "No table until the marked input" + (bad.length > 1 ? "s are" : " is") + " fixed: " + bad.join(", ") + ".";
        tr.appendChild(td);
        tbody.appendChild(tr);
        summary.textContent = "Fix the marked input" + (bad.length > 1 ? "s" : "") + " (" + bad.join(", ") +
          "); the message under each says why.";
        last = null;
        drawChart(svg, caption, null, null);
        renderFront([]);
        return;
      }
      var s = got.s;
      var rows = plan(s), chosen = best(rows);
      var result = { rows: rows, best: chosen, frontier: frontier(s) };
      renderRows(s, rows, chosen);
      summary.textContent = describeBest(s, rows, chosen);
      last = { s: s, result: result };
      drawChart(svg, caption, s, result);
      renderFront(result.frontier.front);
    }

    // Each column's header links to its definition below and, cloned from there, to the chapter's equation.
    table.querySelectorAll("th[data-col]").forEach(function (th) {
      var section = document.getElementById("planner-col-" + th.getAttribute("data-col").replace(/_/g, "-").toLowerCase());
      var where = section ? (section.closest("section") || section.parentNode) : null;
      var eq = where ? where.querySelector('a.reference[href*="#equation-"]') || where.querySelector("a.reference.internal") : null;
      var slot = th.querySelector(".pl-eq");
      if (eq && slot) {
        var copy = eq.cloneNode(true);
        copy.removeAttribute("title");
        slot.appendChild(copy);
      }
    });

    /* The starting scenario (setAll also clears the marks of unknown names). */
    function reset() {
      setAll(BASE);
      fillModel();
      fillDevice();
    }

    /* Fill the form from a scenario's query. What the query leaves out is the start, as in
       the link updateUrl writes. True if it held any input. */
    function openQuery(query) {
      var fromLink = {};
      new URLSearchParams(query).forEach(function (value, key) { if (NAMES.indexOf(key) >= 0 || key === "nodes") { fromLink[key] = value; } });
      if (!Object.keys(fromLink).length) { return false; }
      if ("nodes" in fromLink && !("devices" in fromLink)) {
        var k = Number(fromLink.devices_per_node || BASE.devices_per_node);
        fromLink.devices = String(Number(fromLink.nodes) * k);
      }
      if ("device" in fromLink && !("link" in fromLink) && D.devices[fromLink.device]) { fromLink.link = D.devices[fromLink.device].link; }
      if (!("expert_parallel" in fromLink)) { fromLink.expert_parallel = "off"; }
      reset();
      setAll(fromLink);
      if (fromLink.model !== "custom") { fillModel(); }
      if (fromLink.device !== "custom") { fillDevice(); }
      return true;
    }

    var link = window.ScenarioLink.wire({
      ids: { link: "pl-share", help: "pl-share-help", open: "pl-open", openButton: "pl-open-button",
             copy: "pl-copy", status: "pl-copy-status" },
      page: "planner.html", tool: "planner", open: openQuery, update: update
    });
    reset();
    openQuery(link.start);  // a shared link fills the form

    form.addEventListener("input", function (event) {
      if (event.target !== link.openEl) { update(event); }
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    document.getElementById("pl-reset").addEventListener("click", function () {
      reset();
      update();
    });
    var pending = false;
    window.addEventListener("resize", function () {
      if (pending) { return; }
      pending = true;
      window.requestAnimationFrame(function () {
        pending = false;
        if (last) { drawChart(svg, caption, last.s, last.result); }
      });
    });
    status.textContent = "";
    update();
  }

  // For curious readers: the formulas, to call from the browser's console (no test reads this).
  window.layoutPlanner = { plan: plan, best: best, frontier: frontier, scenario: scenario, check: check, format: fmt,
    layouts: layouts, tuneAllreduce: tuneAllreduce, sendTime: sendTime };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
}());
