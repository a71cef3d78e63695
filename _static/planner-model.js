/*
 * The layout planner's serving model (book/planner.md), a mirror of lib.serving.plan at fixed
 * concurrency, operation by operation, in SI units:
 *   lib/transformer/models.py, parallel.py  parameter_breakdown, kv_cache_bytes_per_token, kv_heads_per_device
 *   lib/formats.py                         compute_peak
 *   lib/kernels.py                         gemm_efficiency, gemm_flops (the tables come from PLANNER_DATA.kernels)
 *   lib/serving/matmul.py                  layer_products, product_flops, linear_compute_time
 *   lib/experts.py                         expert_imbalance (expected_max_normal comes as a table)
 *   lib/serving/engine.py                  Engine.resolved, replica_limits, usable_bytes, scheduler_limits
 *   lib/serving/layout.py                  layouts, Layout.name, .splits, .simplicity, Cluster.holds_group,
 *                                          stage_layers
 *   lib/serving/memory.py                  memory_fit, kv_token_capacity and their helpers
 *   lib/serving/operators.py               pass_work, tp_allreduce, _communication, expert_exchange
 *   lib/serving/step.py                    decode_step, prefill_lumps, prefill_time, hop_time
 *   lib/serving/plan.py                    plan, leader, best, tie_note, frontier
 * With a latency target, plan's capacity fields come from window.PlannerCapacity (planner-capacity.js,
 * lib/serving/capacity.py). Attention run data-parallel (expert_parallel="all", Layout.attention_dp) is
 * priced with vLLM's default exchange only (Engine.expert_exchange "allgather_reducescatter").
 * Collectives are window.PlannerCollectives (planner-collectives.js); every number comes from
 * window.PLANNER_DATA (tools/sphinx/planner_data.py), read when plan() runs. Sets window.PlannerModel.
 */
(function () {
  "use strict";

  var D = null;  // window.PLANNER_DATA, set by plan() and frontier()
  var C = null;  // window.PlannerCollectives

  function load() { D = window.PLANNER_DATA; C = window.PlannerCollectives; }

  function maxOf(values) { return values.reduce(function (a, b) { return b > a ? b : a; }, -Infinity); }

  function sum(values) { return values.reduce(function (a, b) { return a + b; }, 0); }

  /* Python's round(): halves go to the even neighbour. */
  function pyRound(x) { var r = Math.round(x); return (r - x === 0.5 && r % 2 !== 0) ? r - 1 : r; }

  // ------------------------------------------------------------ lib.transformer

  // mirrors lib.transformer.models.ModelConfig.head_dim
  function headDim(c) { return c.head_width || Math.floor(c.hidden / c.heads); }

  // mirrors lib.transformer.models.ModelConfig.value_dim
  function valueDim(c) { return c.v_head_dim || headDim(c); }

  // mirrors lib.transformer.models.ModelConfig.latent_attention
  function latent(c) { return c.kv_lora_rank > 0; }

  // mirrors lib.transformer.models.ModelConfig.moe_layers
  function moeLayers(c) { return c.layers - c.dense_layers; }

  // mirrors lib.transformer.models.ModelConfig.attention_flops
  function attentionFlops(c, decode) {
    if (!latent(c)) { return 4 * c.heads * headDim(c); }
    if (decode) { return c.heads * (2 * (c.kv_lora_rank + c.rope_head_dim) + 2 * c.kv_lora_rank); }
    return c.heads * (2 * (headDim(c) + c.rope_head_dim) + 2 * valueDim(c));
  }

  // mirrors lib.transformer.models.parameter_breakdown
  function breakdown(c) {
    var d = c.hidden, hd = headDim(c), qWidth = c.heads * hd, kvWidth = c.kv_heads * hd;
    var qo, kv, replicated = 0;
    if (latent(c)) {
      var rank = c.kv_lora_rank, rope = c.rope_head_dim, qIn = c.q_lora_rank || d;
      qo = qIn * (c.heads * (hd + rope)) + c.heads * valueDim(c) * d + rank * c.heads * (hd + valueDim(c));
      kv = 0;
      replicated = d * (rank + rope) + rank + (c.q_lora_rank ? d * c.q_lora_rank + c.q_lora_rank : 0);
    } else {
      qo = d * qWidth + qWidth * d + (c.qkv_bias ? qWidth : 0);
      kv = 2 * d * kvWidth + (c.qkv_bias ? 2 * kvWidth : 0);
    }
    var matrices = c.gated_mlp ? 3 : 2, embedding = c.vocab * d;
    return {
      attention_qo: qo, attention_kv: kv, attention_replicated: replicated,
      mlp: matrices * d * c.ffn_hidden,
      shared_mlp: c.shared_experts * matrices * d * (c.shared_ffn_hidden || c.ffn_hidden),
      dense_mlp: c.dense_layers ? matrices * d * (c.dense_ffn_hidden || c.ffn_hidden) : 0,
      router: c.experts > 1 ? d * c.experts : 0, norms: 2 * d, embedding: embedding,
      head: c.tied_embeddings ? 0 : embedding, final_norm: d
    };
  }

  /* parameter_count: ParameterBreakdown.total(), every expert counted */
  // mirrors lib.transformer.models.parameter_count
  function parameterCount(c) {
    var p = breakdown(c), attention = p.attention_qo + p.attention_kv + p.attention_replicated;
    return (c.layers - c.dense_layers) * (attention + c.experts * p.mlp + p.shared_mlp + p.router + p.norms) +
      c.dense_layers * (attention + p.dense_mlp + p.norms) + p.embedding + p.head + p.final_norm;
  }

  /* k in valid_tp_degrees(config, k, replicate_kv=True) (check_tp_degree). */
  // mirrors lib.transformer.parallel.check_tp_degree
  function tpAllowed(c, k) {
    if (c.heads % k || c.ffn_hidden % k) { return false; }
    return k <= c.kv_heads ? c.kv_heads % k === 0 : k % c.kv_heads === 0;
  }

  // mirrors lib.transformer.parallel.kv_heads_per_device
  function kvHeadsPerDevice(c, tp) { return Math.max(c.kv_heads / tp, 1.0); }

  // mirrors lib.transformer.models.kv_cache_bytes_per_token
  function kvPerToken(c, b) {
    if (latent(c)) { return c.layers * (c.kv_lora_rank + c.rope_head_dim) * b; }
    return 2 * c.layers * c.kv_heads * headDim(c) * b;
  }

  // ------------------------------------------------------------ lib.formats, lib.experts

  /* lib.formats.compute_peak: the FP8 peak for FP8 weights where the device has one, else the 16-bit peak. */
  // mirrors lib.formats.compute_peak
  function computePeak(device, format) {
    var fmt = D.engine.weight_formats[format];
    return fmt.compute === "fp8" && device.fp8_flops > 0 ? device.fp8_flops : device.peak_flops;
  }

  // ------------------------------------------------------------ lib.kernels, lib.serving.matmul

  /* kernels._grid_eval: trilinear interpolation of a table's grid in log2 size, held at its edges; with floor,
     proportional to the size below the smallest instead. */
  function gridEval(t, m, n, k, floor) {
    var logs = t.logs || (t.logs = t.axes.map(function (axis) { return axis.map(Math.log2); }));
    var q = [m, n, k], index = [0, 0, 0], weight = [0, 0, 0], scale = 1.0;
    for (var a = 0; a < 3; a++) {
      var axis = logs[a], last = axis.length - 1;
      var x = Math.min(Math.max(Math.log2(q[a]), axis[0]), axis[last]);
      if (floor) { scale = scale * Math.min(1.0, q[a] / t.axes[a][0]); }
      var i = 0;
      while (i < last - 1 && axis[i + 1] <= x) { i++; }
      index[a] = i;
      weight[a] = (x - axis[i]) / (axis[i + 1] - axis[i]);
    }
    var total = 0.0;
    for (var di = 0; di < 2; di++) {
      for (var dj = 0; dj < 2; dj++) {
        for (var dl = 0; dl < 2; dl++) {
          var w = (di ? weight[0] : 1 - weight[0]) * (dj ? weight[1] : 1 - weight[1]) * (dl ? weight[2] : 1 - weight[2]);
          total = total + w * t.grid[index[0] + di][index[1] + dj][index[2] + dl];
        }
      }
    }
    return total * scale;
  }

  /* kernels._points: each point's efficiency over its own grid value, and the rows held below. */
  function points(t) {
    if (!t.scaled) {
      var g = D.kernels.tables[t.shape_grid];
      t.scaled = t.shapes.map(function (p, i) { return t.efficiency[i] / gridEval(g, p[0], p[1], p[2], true); });
      t.hold = Math.min(g.axes[0][0], Math.min.apply(null, t.shapes.map(function (p) { return p[0]; })));
    }
    return t;
  }

  /* kernels._efficiency: a grid table interpolated, or measured points shaped by their architecture's grid. */
  function tableEfficiency(key, m, n, k) {
    var t = D.kernels.tables[key];
    if (t.rule === "grid") { return Math.min(1.0, gridEval(t, m, n, k, false)); }
    var g = D.kernels.tables[t.shape_grid], best = 0.0, ceiling = 1.0;
    m = Math.max(m, points(t).hold);
    t.shapes.forEach(function (p, i) {
      best = Math.max(best, t.scaled[i] * gridEval(g, Math.min(m, p[0]), Math.min(n, p[1]), Math.min(k, p[2]), true));
      if (m <= p[0] && n <= p[1] && k <= p[2]) { ceiling = Math.min(ceiling, t.efficiency[i]); }
    });
    return Math.min(ceiling, best);
  }

  /* tableEfficiency's answers, kept (by table, then m, n and k: no text to build per call; at most 100000): the
     serving model asks for the same few shapes many times. */
  var efficiencies = new Map(), stored = 0;
  function cachedEfficiency(key, m, n, k) {
    var level = efficiencies;
    level = level.get(key) || level.set(key, new Map()).get(key);
    level = level.get(m) || level.set(m, new Map()).get(m);
    level = level.get(n) || level.set(n, new Map()).get(n);
    var found = level.get(k);
    if (found === undefined) {
      if (++stored > 100000) { efficiencies.clear(); stored = 0; }
      found = tableEfficiency(key, m, n, k);
      level.set(k, found);
    }
    return found;
  }

  /* gemm_efficiency: the table of the device (a catalogue one by its name, else the stand-in's) and format. */
  // mirrors lib.kernels.gemm_efficiency
  function gemmEfficiency(device, format, m, n, k) {
    var named = D.kernels.by_name[device.name];
    var compute = D.engine.weight_formats[format].compute === "fp8" && device.fp8_flops > 0 ? "fp8" : "bf16";
    return cachedEfficiency(named ? named[format] : D.kernels.outside + "/" + compute, m, n, k);
  }

  // mirrors lib.kernels.gemm_flops
  function gemmFlops(device, format, m, n, k) { return gemmEfficiency(device, format, m, n, k) * computePeak(device, format); }

  /* layer_products: QKV, output, the dense MLP, the rest as one product with k = d, then one expert's gate-up and
     down (split by tp unless its experts are whole). */
  // mirrors lib.serving.matmul.layer_products
  function layerProducts(c, l) {
    var d = c.hidden, split = l.adp ? 1 : l.tp, moe = moeLayers(c) / c.layers, products = [];
    function mlp(prefix, width, by, share, routed) {
      return [
        { name: prefix + "gate-up", n: (c.gated_mlp ? 2 : 1) * width / by, k: d, share: share, routed: routed },
        { name: prefix + "down", n: d, k: width / by, share: share, routed: routed }
      ];
    }
    if (!latent(c)) {
      var kv = l.adp ? c.kv_heads : kvHeadsPerDevice(c, l.tp);
      products.push({ name: "qkv", n: (c.heads / split + 2 * kv) * headDim(c), k: d, share: 1.0, routed: false });
      products.push({ name: "output", n: d, k: c.heads * headDim(c) / split, share: 1.0, routed: false });
    }
    if (c.dense_layers) { products = products.concat(mlp("dense ", c.dense_ffn_hidden || c.ffn_hidden, split, 1 - moe, false)); }
    var shaped = sum(products.map(function (p) { return p.n * p.k * p.share; }));
    var rest = perDeviceLayer(c, l, 0, breakdown(c)) - breakdown(c).norms - shaped;
    if (rest >= d) { products.push({ name: "other", n: rest / d, k: d, share: 1.0, routed: false }); }
    return products.concat(mlp(c.experts > 1 ? "expert " : "", c.ffn_hidden, l.ep ? 1 : l.tp, moe, true));
  }

  /* product_flops: measured for the shape (at least one whole row), or one efficiency of the format's peak. */
  // mirrors lib.serving.matmul.product_flops
  function productFlops(device, format, rows, n, k, efficiency) {
    if (efficiency !== null) { return efficiency * computePeak(device, format); }
    return gemmFlops(device, format, Math.max(pyRound(rows), 1.0), Math.max(pyRound(n), 1), Math.max(pyRound(k), 1));
  }

  /* What passWork reads of the model and the layout alone, made once per pair (the page prices thousands of
     passes of one layout): breakdown(c), layerProducts(c, l) and the layer's weights per device. Neither object
     changes once a scenario is made. */
  var shapes = new WeakMap();  // layout -> Map(config -> its shape)
  function shapeOf(c, l) {
    var byConfig = shapes.get(l) || new Map();
    shapes.set(l, byConfig);
    var shape = byConfig.get(c);
    if (shape === undefined) {
      var parts = breakdown(c);
      shape = { parts: parts, products: layerProducts(c, l), dense: perDeviceLayer(c, l, 0, parts) };
      byConfig.set(c, shape);
    }
    return shape;
  }

  /* linear_compute_time: one average layer's products on the busiest device, each at its own rate. */
  // mirrors lib.serving.matmul.linear_compute_time
  function linearComputeTime(c, l, device, format, attended, expertRows, expertPairs, efficiency) {
    var total = 0.0, products = shapeOf(c, l).products;
    for (var i = 0; i < products.length; i++) {
      var p = products[i], rows = p.routed ? expertRows : attended, work = p.routed ? expertPairs : attended;
      var rate = productFlops(device, format, rows, p.n, p.k, efficiency);
      total = total + p.share * 2 * work * p.n * p.k / rate;
    }
    return total;
  }

  /* lib.experts.expected_max_normal, from the exported table (scenario() refuses group sizes beyond it). */
  // mirrors lib.experts.expected_max_normal
  function expectedMaxNormal(n) { return D.expected_max_normal[String(n)]; }

  /* lib.experts.expert_imbalance: slots on the busiest of d devices over the mean. */
  // mirrors lib.experts.expert_imbalance
  function expertImbalance(t, e, k, d) {
    var share = 1.0 / d;
    var variance = k * share * (1 - share) * (e > 1 ? (e - k) / Math.max(e - 1, 1) : 0.0);
    var above = t > 0 ? expectedMaxNormal(d) * Math.sqrt(variance / Math.max(t, 1e-300)) / (k * share) : 0.0;
    return Math.min(1 + above, d * Math.min(k, e / d) / k);
  }

  // ------------------------------------------------------------ lib.serving.engine

  /* scheduler_limits: vLLM's (max_num_seqs, max_num_batched_tokens) for the device. */
  // mirrors lib.serving.engine.scheduler_limits
  function schedulerLimits(device) {
    var tiers = D.engine.scheduler_tiers;
    for (var i = 0; i < tiers.length; i++) {
      var least = tiers[i][0], excluded = tiers[i][1];
      if (device.memory_bytes >= least && !(excluded && device.name.toLowerCase().indexOf(excluded) >= 0)) {
        return tiers[i][2];
      }
    }
    return tiers[tiers.length - 1][2];
  }

  /* Engine.resolved: the engine's fields (keyed as Engine's), every null filled in for the device. */
  // mirrors lib.serving.engine.Engine.resolved
  function resolveEngine(device, fields) {
    var e = Object.assign({}, D.engine.defaults, fields), limits = schedulerLimits(device);
    if (e.layer_overhead === null) {
      e.layer_overhead = D.engine.layer_overhead + (e.cuda_graphs ? 0.0 : D.engine.eager_layer_launch);
    }
    if (e.max_num_seqs === null) { e.max_num_seqs = limits[0]; }
    if (e.max_num_batched_tokens === null) { e.max_num_batched_tokens = limits[1]; }
    e.weight_bytes = D.engine.weight_formats[e.weight_format].bytes_per_weight;
    e.kv_bytes = D.engine.kv_formats[e.kv_format];
    return e;
  }

  /* Engine.replica_limits: [sequences, tokens per step] of one replica; attention-DP ranks schedule each. */
  // mirrors lib.serving.engine.Engine.replica_limits
  function replicaLimits(e, l) {
    var ranks = l.adp ? l.tp : 1;
    return [ranks * e.max_num_seqs, ranks * e.max_num_batched_tokens];
  }

  /* Engine.reserved_bytes: non-torch memory and the CUDA graphs. */
  // mirrors lib.serving.engine.Engine.reserved_bytes
  function reservedBytes(e, tp) {
    var nonTorch = tp === 1 ? D.engine.non_torch_bytes[0] : D.engine.non_torch_bytes[1];
    return nonTorch + (e.cuda_graphs ? D.engine.cuda_graph_bytes : 0.0);
  }

  // mirrors lib.serving.engine.Engine.usable_bytes
  function usableBytes(e, device, tp) {
    return Math.floor(device.memory_bytes * e.gpu_memory_utilization) - reservedBytes(e, tp);
  }

  // ------------------------------------------------------------ lib.serving.layout

  // mirrors lib.serving.layout.stage_layers
  function stageLayers(layers, stages) {
    var out = [];
    for (var i = 0; i < stages; i++) { out.push(Math.floor(layers / stages) + (i < layers % stages ? 1 : 0)); }
    return out;
  }

  // mirrors lib.serving.layout.Layout.name
  function layoutName(l) {
    return (l.adp ? "adp" + l.tp + "-" : "") + (l.ep ? "ep" : "tp") + l.tp + "-pp" + l.pp + "-dp" + l.dp;
  }

  /* The kinds of split a layout uses, in the order of PLANNER_DATA.serving.splits (lib.serving.layout.SPLITS):
     replicas, tensor, pipeline, a group across servers (only with devicesPerNode), experts, attention DP. */
  // mirrors lib.serving.layout.Layout.splits
  function layoutSplits(l, devicesPerNode) {
    var wide = devicesPerNode !== null && devicesPerNode !== undefined && l.tp > devicesPerNode;
    var used = [l.dp > 1, l.tp > 1 && !l.adp, l.pp > 1, wide, !!l.ep && l.tp > 1, !!l.adp];
    return D.serving.splits.filter(function (kind, i) { return used[i]; });
  }

  /* A sort key, smaller for the simpler layout: [how many kinds of split, the sum of 2^i of the kinds used]. */
  // mirrors lib.serving.layout.Layout.simplicity
  function layoutSimplicity(l, devicesPerNode) {
    var kinds = layoutSplits(l, devicesPerNode);
    return [kinds.length, sum(kinds.map(function (kind) { return Math.pow(2, D.serving.splits.indexOf(kind)); }))];
  }

  /* layouts with expert_parallel True, False, "both" (each expert-parallel layout after its twin) or "all"
     (then the attention-data-parallel one); check_layout decides what is valid. */
  // mirrors lib.serving.layout.layouts
  function layouts(c, n, expertParallel) {
    var found = [], variants = { both: [[false, false], [true, false]],
      all: [[false, false], [true, false], [true, true]] }[expertParallel] || [[!!expertParallel, false]];
    for (var tp = 1; tp <= n; tp++) {
      if (n % tp) { continue; }
      for (var pp = 1; pp <= n / tp; pp++) {
        if ((n / tp) % pp || pp > c.layers) { continue; }
        var names = {};
        variants.forEach(function (variant) {
          var moe = c.experts > 1 && tp > 1, ep = variant[0] && moe, adp = variant[1] && moe;
          if ((ep && c.experts % tp) || !tpAllowed(c, tp) || names[ep + "," + adp]) { return; }
          names[ep + "," + adp] = true;  // a dense model's twins are the same layout: listed once
          found.push({ tp: tp, pp: pp, dp: n / (tp * pp), ep: ep, adp: adp });
        });
      }
    }
    return found;
  }

  // mirrors lib.serving.layout.Cluster.holds_group
  function holdsGroup(cluster, tp) { return cluster.devicesPerNode % tp === 0 || tp % cluster.devicesPerNode === 0; }

  // ------------------------------------------------------------ lib.serving.memory

  /* _kv_bytes_per_layer: one token, one layer, one device of a group of tp (heads split unless attention-DP:
     each rank caches its own sequences whole; a latent cache is whole either way). */
  // mirrors lib.serving.memory._kv_bytes_per_layer
  function kvBytesPerLayer(c, l, b) {
    var share = latent(c) || l.adp ? 1.0 : kvHeadsPerDevice(c, l.tp) / c.kv_heads;
    return kvPerToken(c, b) * share / c.layers;
  }

  // mirrors lib.serving.memory.kv_bytes_per_token_per_device
  function kvPerTokenPerDevice(c, l, b) { return kvBytesPerLayer(c, l, b) * maxOf(stageLayers(c.layers, l.pp)); }

  /* _per_device_layer: attention split by heads, or whole with attention-DP (as its shared and dense MLPs). */
  // mirrors lib.serving.memory._per_device_layer
  function perDeviceLayer(c, l, experts, parts) {
    var tp = l.tp, moe = moeLayers(c) / c.layers, split = l.adp ? 1 : tp;
    var kv = l.adp ? parts.attention_kv : parts.attention_kv * kvHeadsPerDevice(c, tp) / c.kv_heads;
    var attention = parts.attention_qo / split + kv + parts.attention_replicated;
    var routed = moe * (experts * parts.mlp / tp + parts.shared_mlp / split + parts.router);
    return attention + routed + (1 - moe) * parts.dense_mlp / split + parts.norms;
  }

  /* memory._cache_sharers: ranks of a replica that cache different sequences. */
  // mirrors lib.serving.memory._cache_sharers
  function cacheSharers(l) { return l.adp ? l.tp : 1; }

  /* stage_weight_bytes: the linear layers in the weight format, the tables in 16 bits. */
  // mirrors lib.serving.memory.stage_weight_bytes
  function stageWeightBytes(c, l, e) {
    var parts = breakdown(c), layer = perDeviceLayer(c, l, c.experts, parts);
    var counts = stageLayers(c.layers, l.pp);
    return counts.map(function (n, i) {
      var table = i === 0 ? parts.embedding / l.tp : 0.0;
      if (i === counts.length - 1) {
        table += (parts.head ? parts.head : (l.pp > 1 ? parts.embedding : 0)) / l.tp;
        table += parts.final_norm;
      }
      return n * layer * e.weight_bytes + table * D.engine.unquantised_bytes;
    });
  }

  /* activation_bytes (16-bit activations, 32-bit logits for the sampled sequences). */
  // mirrors lib.serving.memory.activation_bytes
  function activationBytes(c, tokens, tp, sequences) {
    var b = D.serving.activation_bytes, d = c.hidden, hd = headDim(c);
    var qkv = (c.heads + 2 * c.kv_heads) * hd / tp;
    var perToken = b * (4 * d + qkv + 3 * c.ffn_hidden / tp);
    return tokens * perToken + sequences * 4 * c.vocab / tp;
  }

  /* Python's format(x, f".{digits}f") for x >= 0: as toFixed, but an exact tie goes to the even digit. */
  function pyFixed(x, digits) {
    var rounded = x.toFixed(digits), exact = x.toFixed(digits + 30), tail = exact.slice(-30);
    if (tail !== "5" + new Array(30).join("0") || Number(rounded.slice(-1)) % 2 === 0) { return rounded; }
    var down = exact.slice(0, exact.length - 30);
    return down.charAt(down.length - 1) === "." ? down.slice(0, -1) : down;
  }

  function gb(x) { return pyFixed(x / D.units.GB, 1); }

  /* memory._budget: [usable, weights, activations] of the busiest device, activations for one rank's step. */
  // mirrors lib.serving.memory._budget
  function budget(c, device, l, e, seqs) {
    var perRank = Math.ceil(seqs / cacheSharers(l));
    return [usableBytes(e, device, l.tp), maxOf(stageWeightBytes(c, l, e)),
      activationBytes(c, Math.max(e.max_num_batched_tokens, perRank), l.adp ? 1 : l.tp,
        Math.max(e.max_num_seqs, perRank))];
  }

  /* memory_fit: the busiest device's budget when each replica holds seqs sequences of ctx tokens. */
  // mirrors lib.serving.memory.memory_fit
  function memoryFit(c, device, l, seqs, ctx, e) {
    var got = budget(c, device, l, e, seqs), usable = got[0], weights = got[1], activations = got[2];
    var perSequence = ctx * kvPerTokenPerDevice(c, l, e.kv_bytes) / cacheSharers(l);
    var room = usable - weights - activations;
    var most = room > 0 ? Math.max(0, Math.floor(room / perSequence)) : 0;
    var kv = seqs * perSequence;
    var where = gb(usable) + " GB usable (" + gb(device.memory_bytes) + " GB, " +
      pyFixed(e.gpu_memory_utilization * 100, 0) + "% for the engine, less " + gb(reservedBytes(e, l.tp)) +
      " GB outside PyTorch and for CUDA graphs)";
    var reason = "";
    if (weights > usable) {
      reason = "weights alone need " + gb(weights) + " GB per device, more than the " + where;
    } else if (room <= 0) {
      reason = "weights (" + gb(weights) + " GB) and activations (" + gb(activations) + " GB) need more than the " + where;
    } else if (seqs > most) {
      reason = "the KV cache of " + seqs + " sequences of " + ctx + " tokens needs " + gb(kv) +
        " GB per device, but only " + gb(room) + " GB remain after weights and activations (room for " + most + ")";
    }
    var total = weights + kv + activations;
    return { weights: weights, kv: kv, activations: activations, usable: usable, most: most, reason: reason,
      total: total, free: usable - total, fits: total <= usable };
  }

  // ------------------------------------------------------------ lib.serving.operators

  // mirrors lib.serving.operators.expected_experts_touched
  function expertsTouched(experts, topK, tokens) { return experts * (1 - Math.pow(1 - topK / experts, tokens)); }

  /* _experts_read: MLPs' worth of weights the busiest device reads per layer. */
  // mirrors lib.serving.operators._experts_read
  function expertsRead(c, l, tokens) {
    if (c.experts === 1) { return 1.0 / l.tp; }
    var touched = expertsTouched(c.experts, c.experts_per_token, tokens);
    if (!l.ep) { return touched / l.tp; }
    return Math.min(c.experts / l.tp, Math.max(1.0, Math.ceil(touched / l.tp)));
  }

  // mirrors lib.serving.operators._roofline
  function roofline(bytes, flops, bandwidth, peak) {
    var m = bytes / bandwidth, f = flops / peak;
    return { memoryTime: m, computeTime: f, time: Math.max(m, f) };
  }

  /* tp_allreduce: one all-reduce of the group, inside or across servers. */
  // mirrors lib.serving.operators.tp_allreduce
  function tpAllreduce(cluster, tp, bytes, allreduce) {
    var nodes = Math.ceil(tp / cluster.devicesPerNode);
    return C.engineAllreduce(bytes, tp, cluster.link, nodes, cluster.interLink, cluster.nics, allreduce);
  }

  /* operators._busiest_prompts: the busiest rank's share of the prompt tokens (whole prompts on ranks). */
  // mirrors lib.serving.operators._busiest_prompts
  function busiestPrompts(l, prompts) {
    if (!l.adp) { return 1.0; }
    return prompts > 0 ? Math.ceil(prompts / l.tp - 1e-9) / prompts : 1.0 / l.tp;
  }

  /* expert_exchange(..., "allgather_reducescatter"): the bytes of the all-gather and the reduce-scatter around a
     routed layer (each the group's tokens' hidden states). */
  // mirrors lib.serving.operators.expert_exchange
  function expertExchange(c, e, tokens) {
    if (e.expert_exchange !== "allgather_reducescatter") {
      throw new Error("expert_exchange: this page prices allgather_reducescatter only, got " + e.expert_exchange);
    }
    var gathered = tokens * c.hidden * D.serving.activation_bytes;
    return [gathered, gathered];
  }

  /* _communication: a stage's collectives, two all-reduces per layer or, attention-DP, the expert exchanges. */
  // mirrors lib.serving.operators._communication
  function communication(s, l, layers, tokens) {
    var c = s.config, cluster = s.cluster, e = s.engine;
    if (!l.adp) {
      return 2 * layers * tpAllreduce(cluster, l.tp, tokens * c.hidden * D.serving.activation_bytes, e.allreduce);
    }
    var nodes = Math.ceil(l.tp / cluster.devicesPerNode), inter = nodes > 1 ? cluster.interLink : null, perLayer = 0.0;
    expertExchange(c, e, tokens).forEach(function (bytes) {
      perLayer += C.ringCollective(bytes, l.tp, cluster.link, nodes, inter, cluster.nics);
    });
    return layers * moeLayers(c) / c.layers * perLayer;
  }

  /* pass_work: the busiest device of one stage in one forward pass; w.prompts as pass_work's prompts. */
  // mirrors lib.serving.operators.pass_work
  function passWork(s, l, stage, w) {
    var c = s.config, device = s.device, e = s.engine;
    var counts = stageLayers(c.layers, l.pp), shape = shapeOf(c, l), parts = shape.parts;
    var tp = l.tp, layers = counts[stage], last = stage === counts.length - 1;
    var tokens = w.decode + w.prefill;
    var own = l.adp ? 1.0 / tp : 1.0, promptOwn = w.prompts === null ? own : busiestPrompts(l, w.prompts);
    var heads = l.adp ? 1 : tp;
    var bandwidth = e.memory_efficiency * device.memory_bandwidth;
    var flat = e.compute_efficiency;  // null: the measured GEMM tables
    var peak16 = (flat === null ? D.serving.attention_efficiency : flat) * device.peak_flops;
    var moe = moeLayers(c) / c.layers;
    var dense = shape.dense;
    var imbalance = l.ep ? expertImbalance(tokens, c.experts, c.experts_per_token, tp) : 1.0;
    var weights = layers * (dense + moe * expertsRead(c, l, tokens) * parts.mlp) * e.weight_bytes;
    var attended = w.decode * own + w.prefill * promptOwn;
    var excess = l.ep ? imbalance : 1.0;
    var rows = tokens * c.experts_per_token / c.experts * excess;
    var pairs = tokens * c.experts_per_token * (l.ep ? excess / tp : 1.0);
    var linearMemory = weights / bandwidth;
    var linearCompute = layers * linearComputeTime(c, l, device, e.weight_format, attended, rows, pairs, flat);
    var linear = { memoryTime: linearMemory, computeTime: linearCompute, time: Math.max(linearMemory, linearCompute) };
    var kvLayer = kvBytesPerLayer(c, l, e.kv_bytes);
    var cache = layers * kvLayer * (own * w.decode * (w.context + 1) + promptOwn * w.prefill);
    var scores = layers / heads * (own * attentionFlops(c, true) * w.decode * w.context +
      promptOwn * attentionFlops(c, false) * w.prefill * w.prefillContext);
    var attention = roofline(cache, scores, bandwidth, peak16);
    var headParams = last ? (parts.head || parts.embedding) / heads : 0.0, headSampled = w.sampled * own;
    var headRate = productFlops(device, "bf16", headSampled, headParams / c.hidden, c.hidden, flat);
    var head = roofline(w.sampled > 0 ? headParams * D.engine.unquantised_bytes : 0.0, 2 * headSampled * headParams,
      bandwidth, headRate);
    var comm = tokens > 0 ? communication(s, l, layers, tokens) : 0.0;
    var fixed = layers * e.layer_overhead + (last ? e.step_overhead : 0.0);
    var ops = [linear, attention, head];
    return {
      ops: ops, head: head, communication: comm, fixed: fixed,
      computeBound: sum(ops.map(function (op) { return op.computeTime > op.memoryTime ? op.time : 0.0; })),
      time: sum(ops.map(function (op) { return op.time; })) + comm + fixed
    };
  }

  // ------------------------------------------------------------ lib.serving.step

  /* _hop_links: the link each pipeline boundary of one replica crosses. */
  // mirrors lib.serving.step._hop_links
  function hopLinks(cluster, l, replica) {
    var first = replica * l.tp * l.pp, links = [];
    for (var boundary = 0; boundary < l.pp - 1; boundary++) {
      var sender = first + (boundary + 1) * l.tp - 1, receiver = first + (boundary + 1) * l.tp;
      var same = Math.floor(sender / cluster.devicesPerNode) === Math.floor(receiver / cluster.devicesPerNode);
      links.push(same ? cluster.link : cluster.interLink);
    }
    return links;
  }

  /* hop_time: the slowest replica's hops (max over replicas of the sum over boundaries). */
  // mirrors lib.serving.step.hop_time
  function hopTime(cluster, l, bytes) {
    if (l.pp === 1) { return 0.0; }
    var inside = C.sendTime(bytes, cluster.link), across = C.sendTime(bytes, cluster.interLink), worst = -Infinity;
    for (var r = 0; r < l.dp; r++) {
      var total = 0.0;
      hopLinks(cluster, l, r).forEach(function (link) { total += link === cluster.link ? inside : across; });
      if (total > worst) { worst = total; }
    }
    return worst;
  }

  /* _stage_works: every stage's work (stages alike in layers, first and last share one). */
  // mirrors lib.serving.step._stage_works
  function stageWorks(s, l, w) {
    var counts = stageLayers(s.config.layers, l.pp), cache = {}, works = [], last = counts.length - 1;
    for (var stage = 0; stage <= last; stage++) {  // alike: the same layers, and first and last or not
      var key = 4 * counts[stage] + (stage === 0 ? 2 : 0) + (stage === last ? 1 : 0);
      if (!(key in cache)) { cache[key] = passWork(s, l, stage, w); }
      works.push(cache[key]);
    }
    return works;
  }

  /* _pass and _loop: one trip round the pipeline, every microbatch carrying work w. */
  // mirrors lib.serving.step._pass
  function loop(s, l, m, w) {
    var hop = hopTime(s.cluster, l, (w.decode + w.prefill) * s.config.hidden * D.serving.activation_bytes);
    var works = stageWorks(s, l, w), times = works.map(function (x) { return x.time; });
    return { tpot: Math.max(sum(times) + hop, m * maxOf(times)), times: times, works: works, hop: hop };
  }

  /* A pass's work: the keyword arguments of pass_work (prompts: null unless given, as pass_work's None). */
  function work(decode, context, prefill, prefillContext, sampled, prompts) {
    return { decode: decode, context: context, prefill: prefill, prefillContext: prefillContext, sampled: sampled,
      prompts: prompts === undefined ? null : prompts };
  }

  /* prefill_lumps (scalar): the prompt tokens a step computes, as (tokens, weights). */
  // mirrors lib.serving.step.prefill_lumps
  function prefillLumps(d, mu, n, budget) {
    var K = D.serving.prefill_lumps, room = Math.max(1.0, budget - d), pmf = [], logFactorial = 0.0, i;
    for (i = 0; i <= K; i++) {
      logFactorial += Math.log(Math.max(i, 1));
      pmf.push(Math.exp(i * Math.log(Math.max(mu, 1e-300)) - mu - logFactorial));
    }
    pmf[0] = Math.exp(-mu);
    var head = 0.0, below = 0.0;
    for (i = 0; i < K; i++) { head += pmf[i]; below += i * pmf[i]; }
    pmf[K] = Math.max(0.0, 1 - head);
    var tail = pmf[K] > 1e-12 ? (mu - below) / Math.max(pmf[K], 1e-300) : K;
    var long = n >= room, busy = Math.min(1.0, mu * n / room), tokens = [], weights = [];
    var short = [], lowMass = 0.0, fullMass = 0.0, lowTokens = 0.0;
    for (i = 0; i <= K; i++) {
      short.push(Math.min((i === K ? Math.max(K, tail) : i) * n, room));
      if (short[i] < room) { lowMass += pmf[i]; lowTokens += pmf[i] * short[i]; } else { fullMass += pmf[i]; }
    }
    // what a full step cuts off runs in later steps: weight moves to full steps until the mean is the demand
    var gap = room * lowMass - lowTokens;
    var keep = gap > 0 && fullMass > 1e-12 ? Math.min(1.0, (room - Math.min(mu * n, room)) / Math.max(gap, 1e-300)) : 1.0;
    for (i = 0; i <= K; i++) {
      if (long) {
        weights.push(i === 0 ? 1 - busy : (i === K ? busy : 0.0));
        tokens.push(i === K ? room : 0.0);
      } else {
        weights.push(pmf[i] * (short[i] >= room ? 1 + (1 - keep) * lowMass / Math.max(fullMass, 1e-300) : keep));
        tokens.push(short[i]);
      }
    }
    return { tokens: tokens, weights: weights };
  }

  /* decode_step's tpot alone: the mean over the prefill lumps of one trip round the pipeline (the capacity's
     grid asks only this), with what decode_step prices beside it: the microbatches m of micro sequences, each
     decoding decode and carrying meanTokens prompt tokens on average. */
  function decodeTpot(s, l, batch, context) {
    var p = s.promptTokens, o = s.outputTokens, h = s.prefixHitRate;
    var m = Math.min(l.pp, Math.ceil(batch)), micro = batch / m;
    var decode = micro * (o - 1) / o, prefillContext = (h * p + p + 1) / 2;
    var perPrompt = Math.max(1.0, Math.ceil((1 - h) * p));
    var lumps = prefillLumps(decode, micro / o, perPrompt, replicaLimits(s.engine, l)[1]);
    var tpot = 0.0, meanTokens = 0.0, seen = {};  // lumps of a whole budget each carry the same tokens: priced once
    lumps.tokens.forEach(function (tokens, i) {
      var weight = lumps.weights[i];
      if (weight > 0) {
        if (!(tokens in seen)) {
          seen[tokens] = loop(s, l, m, work(decode, context, tokens, prefillContext, micro, tokens / perPrompt)).tpot;
        }
        tpot += weight * seen[tokens];
      }
      meanTokens += tokens * weight;
    });
    return { tpot: tpot, meanTokens: meanTokens, m: m, micro: micro, decode: decode, prefillContext: prefillContext,
      perPrompt: perPrompt };
  }

  /* decode_step with a prompt: the mean steady-state step of one replica of batch sequences. */
  // mirrors lib.serving.step.decode_step
  function decodeStep(s, l, batch, context) {
    var d = decodeTpot(s, l, batch, context), tpot = d.tpot;
    var mean = d.micro * (1 - s.prefixHitRate) * s.promptTokens / s.outputTokens;
    var alone = loop(s, l, d.m, work(d.decode, context, d.meanTokens, d.prefillContext, d.micro, d.meanTokens / d.perPrompt));
    var idle = loop(s, l, d.m, work(d.decode, context, 0.0, 0.0, d.micro));
    var slowest = alone.works[alone.times.indexOf(maxOf(alone.times))];
    var bound = 2 * slowest.computeBound > slowest.time - slowest.fixed - slowest.communication ? "compute" : "memory";
    return { tpot: tpot, prefillShare: 1 - idle.tpot / tpot, tokensPerStep: d.decode + mean, bound: bound,
      communicationShare: slowest.communication / slowest.time, stageTimes: alone.times, works: alone.works,
      hop: alone.hop };
  }

  /* loop_time: one step in which each microbatch decodes d sequences and computes prefill prompt tokens
     of prompts whole prompts (sampled: one per decoding sequence). */
  // mirrors lib.serving.step.loop_time
  function loopTime(s, l, d, context, prefill, prefillContext, prompts) {
    var m = Math.min(l.pp, Math.max(1.0, Math.ceil(d)));
    return loop(s, l, m, work(d, context, prefill || 0.0, prefillContext || 0.0, Math.max(d, 1.0), prompts)).tpot;
  }

  /* kv_token_capacity: tokens of KV cache one replica holds beside its weights and activations. */
  // mirrors lib.serving.memory.kv_token_capacity
  function kvTokenCapacity(s, l) {
    var e = s.engine, c = s.config, got = budget(c, s.device, l, e, 0);
    return Math.max(0.0, got[0] - got[1] - got[2]) / kvPerTokenPerDevice(c, l, e.kv_bytes) * cacheSharers(l);
  }

  /* prefill_time: one prompt on an idle replica, chunked by the token budget, then its first token sampled. */
  // mirrors lib.serving.step.prefill_time
  function prefillTime(s, l) {
    var p = s.promptTokens, h = s.prefixHitRate;
    var computed = Math.max(1.0, Math.ceil((1 - h) * p));
    var chunks = Math.ceil(computed / s.engine.max_num_batched_tokens), chunk = computed / chunks;
    var times = stageWorks(s, l, work(0.0, 0.0, chunk, (h * p + p + 1) / 2, 0.0, 1.0))
      .map(function (x) { return x.time; });
    var sample = passWork(s, l, l.pp - 1, work(0.0, 0.0, 0.0, 0.0, 1.0)).head.time;
    var slowest = maxOf(times);
    var total = chunks * slowest + sum(times) - slowest + sample;
    return total + hopTime(s.cluster, l, chunk * s.config.hidden * D.serving.activation_bytes);
  }

  // ------------------------------------------------------------ lib.serving.plan

  /* Thousands separated by commas, as Python's format(x, ",.0f"). */
  function grouped(x) { return pyFixed(x, 0).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

  /* _scheduler_reason: why the scheduler cannot hold the replica's sequences ("" if it can). */
  // mirrors lib.serving.plan._scheduler_reason
  function schedulerReason(perReplica, tokens, e, l) {
    var limits = replicaLimits(e, l), rank = l.adp ? " per rank" : "";
    if (perReplica > limits[0]) {
      return perReplica + " sequences per replica are more than the scheduler runs at once (max_num_seqs = " +
        e.max_num_seqs + rank + ")";
    }
    if (tokens > limits[1]) {
      return "each step needs " + grouped(tokens) + " tokens (decodes and the prompts that replace finished " +
        "sequences), more than the token budget (max_num_batched_tokens = " + grouped(e.max_num_batched_tokens) +
        rank + ")";
    }
    return "";
  }

  /* The targets a row misses, in words (plan's misses). */
  function misses(s, ttft, tpot) {
    var out = [];
    if (s.ttftLimit !== null && ttft > s.ttftLimit) {
      out.push("time to first token " + pyFixed(ttft * 1e3, 0) + " ms is over the " + pyFixed(s.ttftLimit * 1e3, 0) +
        " ms target");
    }
    if (s.tpotLimit !== null && tpot > s.tpotLimit) {
      out.push("time per output token " + pyFixed(tpot * 1e3, 1) + " ms is over the " + pyFixed(s.tpotLimit * 1e3, 1) +
        " ms target");
    }
    return out;
  }

  /* Python's repr of a text. */
  function pyRepr(t) {
    var q = /'/.test(t) && !/"/.test(t) ? '"' : "'";
    return q + t.replace(/[\\'\x00-\x1f\x7f]/g, function (c) {
      return c === "'" ? (q === c ? "\\'" : c) : c === "\\" ? "\\\\" : { "\t": "\\t", "\n": "\\n", "\r": "\\r" }[c] ||
        "\\x" + ("0" + c.charCodeAt(0).toString(16)).slice(-2);
    }) + q;
  }

  /* parse_lengths: [prompts, outputs] of the requests a text such as "1024:256*3,95:410" describes, in lib's
     words when it cannot (MAX_INLINE_TOKENS 10^9 a number, MAX_INLINE_REQUESTS 10,000 requests). */
  // mirrors lib.serving.lengths.parse_lengths
  function parseLengths(text, name) {
    var form = "prompt:output pairs, each optionally *count, joined by commas (1024:256*3,95:410)", P = [], O = [], total = 0;
    var most = D.serving.max_inline_tokens, requests = D.serving.max_inline_requests;  // lib.serving.lengths' limits
    if (!text.trim()) { throw new Error(name + " holds no request: it must be " + form + ", got " + pyRepr(text)); }
    text.split(",").forEach(function (group, i) {
      var found = /^[ \t]*([0-9]+)[ \t]*:[ \t]*([0-9]+)[ \t]*(?:\*[ \t]*([0-9]+)[ \t]*)?$/.exec(group);
      var where = name + " group " + (i + 1) + " " + pyRepr(group.trim());
      if (!found) { throw new Error(name + " must be " + form + "; group " + (i + 1) + " is " + pyRepr(group.trim())); }
      var v = ["prompt", "output", "count"].map(function (word, k) {
        var digits = found[k + 1] || "1", value = digits.replace(/^0+/, "").length <= String(most).length ? +digits : most + 1;
        if (!(value >= 1 && value <= most)) {
          throw new Error(where + ": " + word + " must be a whole number from 1 to " + most + ", got " + digits);
        }
        return value;
      });
      if ((total += v[2]) > requests) {
        throw new Error(name + " describes more than " + requests.toLocaleString("en-US") + " requests (at " + where +
          "): use a file (--lengths)");
      }
      for (var k = 0; k < v[2]; k++) { P.push(v[0]); O.push(v[1]); }
    });
    return [P, O];
  }

  /* The requests' lengths: the sample s.prompts, s.outputs (its means in s.promptTokens, s.outputTokens,
     rounded) or one of each; their mean output, the context a step reads (Workload.context) and the longest. */
  function lengths(s) {
    var P = s.prompts || [s.promptTokens], O = s.outputs || [s.outputTokens], o = sum(O);
    return { P: P, O: O, output: o / O.length, context: sum(O.map(function (x, i) { return x * (P[i] + x / 2); })) / o,
      longest: maxOf(P.map(function (x, i) { return x + O[i]; })) };
  }

  /* _held_context: the full context a running sequence holds, E[O (P + O)] / E[O] rounded up (P + O for one). */
  // mirrors lib.serving.plan._held_context
  function heldContext(s) {
    var w = lengths(s);
    return Math.ceil(sum(w.O.map(function (x, i) { return x * (w.P[i] + x); })) / sum(w.O));
  }

  /* One layout's row: the fields of lib.serving.PlanRow (SI units); with a target and withCapacity, the
     capacity fields from planner-capacity.js. */
  function planRow(s, l, withCapacity) {
    var c = s.config, n = s.devices, w = lengths(s);
    var perReplica = Math.ceil(s.batch / l.dp);
    var fit = memoryFit(c, s.device, l, perReplica, heldContext(s), s.engine);
    var step = decodeStep(s, l, perReplica, w.context);
    var ttft = prefillTime(s, l), tokensPerS = s.batch / step.tpot;
    var missed = misses(s, ttft, step.tpot);
    var scheduler = schedulerReason(perReplica, step.tokensPerStep, s.engine, l);
    var targets = s.ttftLimit !== null || s.tpotLimit !== null;
    var under = targets && withCapacity ? window.PlannerCapacity.capacity(s, l) : null;
    return {
      name: layoutName(l), tp: l.tp, pp: l.pp, dp: l.dp, devices: n, expertParallel: l.ep, attentionDp: l.adp,
      fits: fit.fits && !scheduler, meetsSlo: missed.length === 0, reason: fit.reason || scheduler || missed.join("; "),
      weights: fit.weights, kv: fit.kv, activations: fit.activations, memory: fit.total, usable: fit.usable,
      free: fit.free, batch: perReplica, maxBatch: fit.most, maxSequences: fit.most * l.dp,
      ttft: ttft, tpot: step.tpot, tokensPerS: tokensPerS, tokensPerSPerDevice: tokensPerS / n,
      tokensPerSPerUser: 1 / step.tpot, requestsPerS: tokensPerS / w.output, prefillShare: step.prefillShare,
      bound: step.bound, communicationShare: step.communicationShare,
      costPerMillionTokens: s.price === null ? null : s.price * n / 3600 / tokensPerS * 1e6,
      capacity: under ? under.rate : null, requestsPerSPerDevice: under ? under.ratePerDevice : null,
      binding: under ? under.binding : null,
      capacityTtft: under && under.load ? under.load.ttftQuantile : null,
      capacityTpot: under && under.load ? under.load.tpotQuantile : null
    };
  }

  /* check_context: why the longest request of s is past the model's context ("" if it is not, or if the
     context is unknown: context_length 0). */
  // as lib.serving.memory.check_context, word for word
  function contextRefusal(s) {
    var limit = s.config.context_length || 0, w = lengths(s);
    if (!limit || w.longest <= limit) { return ""; }
    return (w.P.length > 1 ? "the longest sample's " : "") + "prompt_tokens + output_tokens = " + w.longest +
      " exceeds " + s.config.name + "'s context of " + limit + " tokens";
  }

  /* plan: one row per layout whose tensor-parallel group sits well on the servers; with a target, each
     row's capacity under the targets too, unless withoutCapacity (the frontier, which does not use it). */
  // mirrors lib.serving.plan.plan
  function plan(s, withoutCapacity) {
    load();
    var refused = contextRefusal(s);
    if (refused) { throw new Error(refused); }
    var withCapacity = !withoutCapacity && !!window.PlannerCapacity;
    return layouts(s.config, s.devices, s.expertParallel).filter(function (l) { return holdsGroup(s.cluster, l.tp); })
      .map(function (l) { return planRow(s, l, withCapacity); });
  }

  /* The rows best chooses among and the figure it ranks them by: with capacities, requests/s per device above
     zero; without, tokens/s per device of the rows that fit and meet the targets. */
  function ranked(rows) {
    if (rows.some(function (row) { return row.capacity !== null; })) {
      return { rows: rows.filter(function (row) { return !!row.requestsPerSPerDevice; }),
        value: function (row) { return row.requestsPerSPerDevice; } };
    }
    return { rows: rows.filter(function (row) { return row.fits && row.meetsSlo; }),
      value: function (row) { return row.tokensPerSPerDevice; } };
  }

  function rowLayout(row) {
    return { tp: row.tp, pp: row.pp, dp: row.dp, ep: row.expertParallel, adp: row.attentionDp };
  }

  /* leader: the row that serves the most per device (ranked's figure); ties go to the lower TPOT. */
  // mirrors lib.serving.plan.leader
  function leader(rows) {
    var r = ranked(rows), chosen = null;
    r.rows.forEach(function (row) {
      if (chosen === null || r.value(row) > r.value(chosen) ||
          (r.value(row) === r.value(chosen) && row.tpot < chosen.tpot)) { chosen = row; }
    });
    return chosen;
  }

  /* best: among the rows the leader is at most tie_band ahead of, the simplest layout (layoutSimplicity on
     servers of devicesPerNode), then the most per device, then the lower TPOT. */
  // mirrors lib.serving.plan.best
  function best(rows, devicesPerNode) {
    var r = ranked(rows), chosen = null, chosenKey = null, band = D.serving.tie_band;
    if (devicesPerNode === undefined) { devicesPerNode = 8; }
    if (!r.rows.length) { return null; }
    var top = maxOf(r.rows.map(r.value));
    function before(a, b) {  // Python's tuple order: the first place they differ decides
      for (var i = 0; i < a.length; i++) { if (a[i] !== b[i]) { return a[i] < b[i]; } }
      return false;
    }
    r.rows.forEach(function (row) {
      if (top > (1 + band) * r.value(row)) { return; }
      var key = layoutSimplicity(rowLayout(row), devicesPerNode).concat([-r.value(row), row.tpot]);
      if (chosenKey === null || before(key, chosenKey)) { chosen = row; chosenKey = key; }
    });
    return chosen;
  }

  /* tieNote: one line on why chosen (best's answer) is not the leader, "" when it is. */
  // mirrors lib.serving.plan.tie_note
  function tieNote(rows, chosen, devicesPerNode) {
    var top = leader(rows);
    if (devicesPerNode === undefined) { devicesPerNode = 8; }
    if (chosen === null || top === null || top.name === chosen.name) { return ""; }
    var value = ranked(rows).value, ahead = 100 * (value(top) / value(chosen) - 1);
    function words(row) { return layoutSplits(rowLayout(row), devicesPerNode).join(" + ") || "one device"; }
    return top.name + " is " + ahead.toFixed(2) + " % ahead, inside the model's " +
      (100 * D.serving.tie_band).toFixed(0) + " % error (chapter 11); " + chosen.name + " is simpler: " +
      words(chosen) + ", not " + words(top);
  }

  /* frontier: every fitting (layout, batch) point, and the Pareto front sorted by tokens/s per user. */
  // mirrors lib.serving.plan.frontier
  function frontier(s, batches) {
    load();
    var points = [];
    (batches || D.serving.frontier_batches).forEach(function (batch) {
      plan(Object.assign({}, s, { batch: batch }), true).forEach(function (row) {
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

  /* The expert-parallel group sizes of a scenario that the exported expected_max_normal table lacks. */
  function missingGroups(config, devices, expertParallel) {
    load();
    return layouts(config, devices, expertParallel).filter(function (l) {
      return l.ep && !Object.prototype.hasOwnProperty.call(D.expected_max_normal, String(l.tp));
    }).map(function (l) { return l.tp; });
  }

  /* The functions tagged `// mirrors`, by name, each reading PLANNER_DATA first (as plan() does), for
     tests/browser/test_planner_functions.py. */
  var mirrors = {};
  Object.entries({
    headDim: headDim, valueDim: valueDim, latent: latent, moeLayers: moeLayers, attentionFlops: attentionFlops,
    breakdown: breakdown, parameterCount: parameterCount, tpAllowed: tpAllowed, kvHeadsPerDevice: kvHeadsPerDevice,
    kvPerToken: kvPerToken, heldContext: heldContext, parseLengths: parseLengths, computePeak: computePeak, expectedMaxNormal: expectedMaxNormal,
    expertImbalance: expertImbalance, schedulerLimits: schedulerLimits, resolveEngine: resolveEngine,
    replicaLimits: replicaLimits, reservedBytes: reservedBytes, usableBytes: usableBytes, stageLayers: stageLayers,
    layoutName: layoutName, layouts: layouts, holdsGroup: holdsGroup, kvBytesPerLayer: kvBytesPerLayer,
    kvPerTokenPerDevice: kvPerTokenPerDevice, perDeviceLayer: perDeviceLayer, cacheSharers: cacheSharers,
    stageWeightBytes: stageWeightBytes, activationBytes: activationBytes, budget: budget, memoryFit: memoryFit,
    expertsTouched: expertsTouched, expertsRead: expertsRead, roofline: roofline, tpAllreduce: tpAllreduce,
    busiestPrompts: busiestPrompts, expertExchange: expertExchange, communication: communication,
    passWork: passWork, hopLinks: hopLinks, hopTime: hopTime, stageWorks: stageWorks, loop: loop,
    prefillLumps: prefillLumps, decodeStep: decodeStep, loopTime: loopTime, kvTokenCapacity: kvTokenCapacity,
    prefillTime: prefillTime, schedulerReason: schedulerReason, plan: plan, best: best, frontier: frontier,
    layoutSplits: layoutSplits, layoutSimplicity: layoutSimplicity, leader: leader, tieNote: tieNote,
    gemmEfficiency: gemmEfficiency, gemmFlops: gemmFlops, layerProducts: layerProducts, productFlops: productFlops,
    linearComputeTime: linearComputeTime
  }).forEach(function (entry) {
    mirrors[entry[0]] = function () { load(); return entry[1].apply(null, arguments); };
  });

  window.PlannerModel = { plan: plan, frontier: frontier, layouts: layouts,
    best: function (rows, devicesPerNode) { load(); return best(rows, devicesPerNode); },
    tieNote: function (rows, chosen, devicesPerNode) { load(); return tieNote(rows, chosen, devicesPerNode); },
    resolveEngine: function (d, f) { load(); return resolveEngine(d, f); },
    missingGroups: missingGroups, contextRefusal: contextRefusal, lengths: lengths,
    parseLengths: function (text, name) { load(); return parseLengths(text, name); }, stageLayers: stageLayers, parameterCount: parameterCount,
    layoutName: layoutName,
    // For planner-capacity.js (lib.serving.capacity calls these of lib.serving.step and memory).
    decodeStep: decodeStep, decodeTpot: decodeTpot, loopTime: loopTime, kvTokenCapacity: kvTokenCapacity,
    replicaLimits: replicaLimits, hopLinks: hopLinks,
    // Python's sum() and round(), for the other scripts.
    sum: sum, pyRound: pyRound,
    _mirrors: mirrors };
}());
