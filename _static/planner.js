/*
 * Layout planner of "Twice the Devices, Half the Wait?" (book/planner.md): the page.
 *
 * Follows lib/serving/__main__.py's role for the browser: reads a scenario (the form or a
 * link), checks it as lib.serving.plan and lib.serving.Engine check their arguments, and shows
 * plan's rows, best and frontier. Plain JavaScript, no library, nothing fetched: the page works
 * offline. Every number comes from window.PLANNER_DATA, which tools/sphinx/planner_data.py writes from
 * lib at build time; the formulas are planner-model.js (lib.serving), planner-capacity.js
 * (lib.serving.capacity), planner-sizing.js (lib.serving.size), planner-collectives.js
 * (lib.collectives) and planner-config.js (lib.transformer.from_hf_config), which the tests in
 * tests/browser/test_planner*.py hold to lib; the chart, and numbers in words, are planner-chart.js.
 */
(function () {
  "use strict";

  var D = window.PLANNER_DATA;
  // lib.units. Without the data file init() says so and stops, so nothing reads them undefined.
  var U = D ? D.units : {};
  var GB = U.GB, GIB = U.GiB, TB = U.TB, TFLOPS = U.TFLOPS, MS = U.ms;

  // The formulas: planner-model.js (lib.serving; it calls planner-capacity.js and planner-collectives.js),
  // taken when the page starts (init), since the page lists its scripts in no fixed order.
  var Model = null;
  function plan(s) { return Model.plan(s); }
  function best(rows, devicesPerNode) { return Model.best(rows, devicesPerNode); }
  function frontier(s) { return Model.frontier(s); }

  // ------------------------------------------------------------ inputs

  var MODEL_FIELDS = ["layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts", "top_k"];
  var MODEL_KEYS = { layers: "layers", hidden: "hidden", heads: "heads", kv_heads: "kv_heads", ffn_hidden: "ffn_hidden",
    vocab: "vocab", experts: "experts", top_k: "experts_per_token" };
  // A custom model's switches (ModelConfig's qkv_bias and tied_embeddings), checkboxes.
  var MODEL_FLAGS = ["qkv_bias", "tied_embeddings"];
  var DEVICE_FIELDS = ["memory_GiB", "bandwidth_TBps", "flops_TFLOPS"];

  // lib.serving.layout.MAX_DEVICES: the most devices the planner lays out, here as on the command line.
  var MAX_DEVICES = D ? D.serving.max_devices : undefined;

  // name -> rule. "count": whole number >= min (<= max); "positive"/"nonnegative"/"fraction"/"share": numbers;
  // "percentile": a fraction or a percent, read as a fraction (percentileFraction); "confidence": the same, from
  // within the quantile table (PlannerSizing.checkConfidence); cap: max is the planner's cap;
  // "lengths": a sample of requests as text (lib.serving.lengths.parse_lengths);
  // optional: empty means "none". Selects and the checkbox are read directly.
  var RULES = {
    layers: { rule: "count", min: 1, max: 1e6 }, hidden: { rule: "count", min: 1, max: 1e7 },
    heads: { rule: "count", min: 1, max: 1e6 }, kv_heads: { rule: "count", min: 1, max: 1e6 },
    ffn_hidden: { rule: "count", min: 1, max: 1e8 }, vocab: { rule: "count", min: 1, max: 1e8 },
    experts: { rule: "count", min: 1, max: 1e5 }, top_k: { rule: "count", min: 1, max: 1e5 },
    memory_GiB: { rule: "positive", max: 1e7 }, bandwidth_TBps: { rule: "positive", max: 1e6 },
    flops_TFLOPS: { rule: "positive", max: 1e9 },
    devices_per_node: { rule: "count", min: 1, max: MAX_DEVICES, cap: true },
    nodes: { rule: "count", min: 1, max: MAX_DEVICES, cap: true },
    devices: { rule: "count", min: 1, max: MAX_DEVICES, cap: true },
    prompt_tokens: { rule: "count", min: 1, max: 1e8 }, output_tokens: { rule: "count", min: 1, max: 1e8 },
    lengths: { rule: "lengths", optional: true },
    batch: { rule: "count", min: 1, max: 1e8 },
    ttft_limit_ms: { rule: "positive", optional: true, max: 1e12 },
    tpot_limit_ms: { rule: "positive", optional: true, max: 1e12 },
    price_per_device_hour: { rule: "nonnegative", optional: true, max: 1e12 },
    rate: { rule: "positive", optional: true, max: 1e9 }, confidence: { rule: "confidence", optional: true },
    max_devices: { rule: "count", min: 1, max: MAX_DEVICES, cap: true },
    prefix_hit_rate: { rule: "share" }, percentile: { rule: "percentile" },
    memory_efficiency: { rule: "fraction" }, compute_efficiency: { rule: "fraction", optional: true },
    gpu_memory_utilization: { rule: "fraction" },
    max_num_seqs: { rule: "count", min: 1, max: 1e8, optional: true },
    max_num_batched_tokens: { rule: "count", min: 1, max: 1e8, optional: true },
    nics_per_node: { rule: "count", min: 1, max: MAX_DEVICES, cap: true, optional: true }
  };
  var SELECTS = ["model", "device", "link", "inter_link", "weight_format", "kv_format", "allreduce", "expert_parallel"];
  // Checkboxes: on or off. Their defaults (Engine's cuda_graphs) are set in init().
  var CHECKS = ["cuda_graphs"].concat(MODEL_FLAGS);
  // plan's expert_parallel as the page's select writes it, and in words.
  var EXPERT_MODES = { off: false, on: true, both: "both", all: "all" };
  var EXPERT_WORDS = { off: "no: every expert split over the group", on: "yes: whole experts on each device",
    both: "both, each layout beside its twin", all: "both, and attention data-parallel (adp) beside them" };
  // The all-reduce choices of lib.collectives.engine, in words.
  var ALLREDUCE_WORDS = { engine: "the engine's own kernels where vLLM runs them, else NCCL", nccl: "always NCCL" };

  /* A model or device field counts only when its select says "custom": otherwise the preset's numbers stand;
     prompt and output only without a sample of lengths. */
  function inactive(name, values) {
    return ((MODEL_FIELDS.indexOf(name) >= 0 || MODEL_FLAGS.indexOf(name) >= 0) && values.model !== "custom") ||
      (DEVICE_FIELDS.indexOf(name) >= 0 && values.device !== "custom") || (/^(prompt|output)_/.test(name) && !!values.lengths);
  }

  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

  function check(name, text) {
    var r = RULES[name], t = String(text).trim();
    if (t === "") {
      return r.optional ? { value: null } : { error: name + " must be a number; the field is empty" };
    }
    if (r.rule === "lengths") {
      try { return { value: Model.parseLengths(t, name) }; } catch (error) { return { error: error.message }; }
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
      case "percentile":  // 90 and 0.9 are both p90, as on the command line
      case "confidence":
        try {
          v = r.rule === "percentile" ? window.PlannerCapacity.percentileFraction(v, name)
            : window.PlannerSizing.checkConfidence(v, name);
        } catch (error) {
          return { error: error.message.replace(/got .*$/, "got " + t) };
        }
        break;
      case "share":
        if (v < 0 || v >= 1) { return { error: name + " must be at least 0 and below 1, got " + t }; }
        break;
    }
    if (r.max !== undefined && v > r.max) {
      return { error: name + " must be at most " + r.max + (r.cap ? " (the planner's cap)" : " on this page") +
        ", got " + t };
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
    var weightFormat = pick("weight_format", D.engine.weight_formats), kvFormat = pick("kv_format", D.engine.kv_formats);
    var allreduce = pick("allreduce", arrayKeys(D.engine_allreduce.choices));

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
      config = Object.assign({ name: "custom model", gated_mlp: true, qkv_bias: false, tied_embeddings: false },
        D.model_defaults);
      MODEL_FIELDS.forEach(function (f) { config[MODEL_KEYS[f]] = v[f]; });
      MODEL_FLAGS.forEach(function (f) { config[f] = values[f] === "on"; });
    } else if (model) {
      config = preset(model);
    }
    var deviceSpec = null;
    if (device === "custom") {
      deviceSpec = Object.assign({}, D.device_defaults, { name: "custom device", memory_bytes: v.memory_GiB * GIB,
        memory_bandwidth: v.bandwidth_TBps * TB, peak_flops: v.flops_TFLOPS * TFLOPS, link: link });
    } else if (device) {
      deviceSpec = D.devices[device];
    }
    if (v.devices !== undefined && v.devices_per_node !== undefined && v.devices > v.devices_per_node &&
        v.devices % v.devices_per_node) {
      errors.devices = "devices must fill whole servers of " + v.devices_per_node + " devices, got " + v.devices;
    }
    var mode = pick("expert_parallel", EXPERT_MODES), expertParallel = mode === null ? false : EXPERT_MODES[mode];
    if (!Object.keys(errors).length && expertParallel) {
      var missing = Model.missingGroups(config, v.devices, expertParallel);
      if (missing.length) {
        errors.expert_parallel = "expert_parallel: this page knows the busiest device's share of the experts for " +
          "groups of up to " + D.serving.expert_groups + " devices, not " + missing.join(", ") + " (use lib.serving.plan)";
      }
    }
    var P = v.lengths && v.lengths[0], O = v.lengths && v.lengths[1], mean = function (x) { return Model.pyRound(Model.sum(x) / x.length); };
    var lengths = P ? { prompts: P, outputs: O, promptTokens: mean(P), outputTokens: mean(O) }
      : { promptTokens: v.prompt_tokens, outputTokens: v.output_tokens };
    if (!Object.keys(errors).length) {  // lib.serving.plan refuses a request past the model's context
      var past = Model.contextRefusal(Object.assign({ config: config }, lengths));
      if (past) { errors[P ? "lengths" : "prompt_tokens"] = past; }
    }
    if (Object.keys(errors).length) { return { errors: errors }; }
    var linkOf = function (slug) { return Object.assign({ slug: slug }, D.links[slug]); };
    var engine = Model.resolveEngine(deviceSpec, {
      weight_format: weightFormat, kv_format: kvFormat, allreduce: allreduce,
      cuda_graphs: !(values.cuda_graphs === "off" || values.cuda_graphs === false),
      memory_efficiency: v.memory_efficiency, compute_efficiency: v.compute_efficiency,
      gpu_memory_utilization: v.gpu_memory_utilization, max_num_seqs: v.max_num_seqs,
      max_num_batched_tokens: v.max_num_batched_tokens
    });
    return {
      errors: {},
      s: Object.assign(lengths, {
        config: config, device: deviceSpec, devices: v.devices,
        cluster: { devicesPerNode: v.devices_per_node, link: linkOf(link), interLink: linkOf(interLink),
          nics: v.nics_per_node === null ? defaultNics(deviceSpec, v.devices_per_node) : v.nics_per_node },
        engine: engine, batch: v.batch,
        prefixHitRate: v.prefix_hit_rate,
        ttftLimit: v.ttft_limit_ms === null ? null : v.ttft_limit_ms * MS,
        tpotLimit: v.tpot_limit_ms === null ? null : v.tpot_limit_ms * MS,
        price: v.price_per_device_hour, expertParallel: expertParallel, percentile: v.percentile,
        rate: v.rate, maxDevices: v.max_devices, confidence: v.confidence
      })
    };
  }

  /* A model preset: the data leaves out the fields at ModelConfig's defaults (model_defaults). */
  function preset(key) { return Object.assign({}, D.model_defaults, D.presets[key]); }

  /* An object whose keys are the names of a list (for pick). */
  function arrayKeys(names) {
    var out = {};
    names.forEach(function (name) { out[name] = true; });
    return out;
  }

  /* lib.serving.Cluster's default network ports: max(1, round(nics_per_gpu x devices_per_node)). */
  function defaultNics(device, devicesPerNode) { return Math.max(1, Model.pyRound(device.nics_per_gpu * devicesPerNode)); }

  // Numbers in words and the chart: planner-chart.js, taken when the page starts, as the formulas are.
  var Chart = null;
  function fmt(x) { return Chart.fmt(x); }
  function short(x) { return Chart.short(x); }
  function drawChart(svg, caption, s, result) { return Chart.draw(svg, caption, s, result); }

  // ------------------------------------------------------------ the page

  function byId(id) { return document.getElementById(id); }
  function make(tag) { return document.createElement(tag); }

  function option(select, value, text) {
    var o = make("option");
    o.value = value;
    o.textContent = text;
    select.appendChild(o);
  }

  function init() {
    var form = byId("pl-form");
    if (!form) { return; }
    var status = byId("pl-status");
    Model = window.PlannerModel || null;
    Chart = window.PlannerChart || null;
    if (!D || !Model || !Chart || !window.PlannerCollectives || !window.PlannerCapacity || !window.PlannerSizing ||
        !window.PlannerConfig) {
      status.textContent = "The planner's data file or scripts (_static/planner-data.js, planner-model.js, " +
        "planner-collectives.js, planner-capacity.js, planner-sizing.js, planner-config.js, planner-chart.js) are " +
        "missing from this copy of the book; rebuild it with make book.";
      return;
    }
    var E = form.elements;
    // Each field's error line, hidden until a value is refused: the id its aria-describedby names, last in the field.
    form.querySelectorAll("[aria-describedby]").forEach(function (field) {
      field.getAttribute("aria-describedby").split(" ").forEach(function (id) {
        if (!/-error$/.test(id) || byId(id)) { return; }
        var line = make("span");
        line.className = "pl-error";
        line.id = id;
        line.hidden = true;
        field.parentNode.appendChild(line);
      });
    });
    var tbody = byId("pl-rows");
    var summary = byId("pl-summary");
    var svg = byId("pl-chart");
    var caption = byId("pl-chart-desc");
    var frontBody = byId("pl-front-rows");
    var table = byId("pl-table");
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
    Object.keys(D.engine.weight_formats).forEach(function (k) {
      option(E.weight_format, k, k + ": " + D.engine.weight_formats[k].description);
    });
    Object.keys(D.engine.kv_formats).forEach(function (k) {
      option(E.kv_format, k, k + ", " + short(D.engine.kv_formats[k]) + " byte" + (D.engine.kv_formats[k] === 1 ? "" : "s") +
        " per number");
    });
    D.engine_allreduce.choices.forEach(function (k) { option(E.allreduce, k, ALLREDUCE_WORDS[k] || k); });
    Object.keys(EXPERT_MODES).forEach(function (k) { option(E.expert_parallel, k, EXPERT_WORDS[k]); });

    // The defaults: lib.serving.plan's keywords and Engine's fields, the book's device, Llama-3 70B on one server.
    // plan's link and inter_link (None) follow the device, as its nics_per_node and Engine's scheduler limits do.
    var P = D.serving.plan_defaults, G = D.engine.defaults, book = D.devices[D.book_device];
    var text = function (x) { return x === null ? "" : String(x); };
    var BASE = {
      model: "llama-3-70b", device: D.book_device, devices_per_node: String(P.devices_per_node), devices: "8",
      link: P.link === null ? book.link : P.link, inter_link: P.inter_link === null ? book.network : P.inter_link,
      weight_format: G.weight_format, kv_format: G.kv_format, allreduce: G.allreduce,
      prompt_tokens: "1024", output_tokens: "256", lengths: "", batch: "64", prefix_hit_rate: String(P.prefix_hit_rate),
      ttft_limit_ms: "", tpot_limit_ms: "", percentile: String(P.percentile), price_per_device_hour: "",
      rate: "", confidence: "", max_devices: String(D.serving.size_defaults.max_devices),
      memory_efficiency: String(G.memory_efficiency), compute_efficiency: text(G.compute_efficiency),
      gpu_memory_utilization: String(G.gpu_memory_utilization), max_num_seqs: text(G.max_num_seqs),
      max_num_batched_tokens: text(G.max_num_batched_tokens), nics_per_node: text(P.nics_per_node),
      expert_parallel: Object.keys(EXPERT_MODES).filter(function (k) { return EXPERT_MODES[k] === P.expert_parallel; })[0],
      cuda_graphs: G.cuda_graphs ? "on" : "off", qkv_bias: "off", tied_embeddings: "off"
    };
    var NAMES = Object.keys(RULES).concat(SELECTS, CHECKS).filter(function (n) { return n !== "nodes"; });

    function showModel(c) {  // a model's numbers in the model fields
      MODEL_FIELDS.forEach(function (f) { E[f].value = String(c[MODEL_KEYS[f]]); });
      MODEL_FLAGS.forEach(function (f) { E[f].checked = !!c[f]; });
    }
    function fillModel() {  // show the preset's numbers in the model fields
      if (D.presets[E.model.value]) { showModel(preset(E.model.value)); }
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
        if (CHECKS.indexOf(name) >= 0) { E[name].checked = values[name] === true || values[name] === "on"; return; }
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
        if (CHECKS.indexOf(name) >= 0) { values[name] = input.checked ? "on" : "off"; return; }
        values[name] = input.getAttribute("data-bad") !== null ? input.getAttribute("data-bad") : input.value.trim();
      });
      return values;
    }

    /* The scenario as a link that travels (see scenario-link.js). */
    function updateUrl(values) {
      var params = new URLSearchParams();
      NAMES.forEach(function (name) {
        if (inactive(name, values)) { return; }
        if (CHECKS.indexOf(name) >= 0 && values[name] === BASE[name]) { return; }  // a checkbox at its default
        if (RULES[name] && RULES[name].optional && values[name] === "") { return; }
        params.set(name, values[name]);
      });
      link.publish(params.toString());
    }

    /* The scheduler's limits an empty field stands for: Engine.resolved's for the device, shown in the field. */
    function showDeviceDefaults(device) {
      var resolved = Model.resolveEngine(device, {});
      ["max_num_seqs", "max_num_batched_tokens"].forEach(function (name) {
        E[name].placeholder = "vLLM's: " + resolved[name];
      });
    }

    function mark(name, message) {
      var input = E[name], error = byId("pl-" + name + "-error");
      if (!error) { return; }
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
      var td = make("td");
      td.setAttribute("data-output", output);
      td.setAttribute("data-label", table.querySelector('th[data-col="' + output + '"]').getAttribute("data-short"));
      if (value !== null) { td.setAttribute("data-value", String(value)); }
      td.textContent = text;
      if (extra) { td.appendChild(extra); }
      row.appendChild(td);
      return td;
    }

    function memoryDetail(r) {
      var box = make("span");
      box.className = "pl-mem";
      var bar = make("span");
      bar.className = "pl-bar";
      bar.setAttribute("aria-hidden", "true");
      var scale = Math.max(r.usable, r.memory);
      [["pl-w", r.weights], ["pl-kv", r.kv], ["pl-act", r.activations]].forEach(function (part) {
        var piece = make("span");
        piece.className = part[0];
        piece.style.width = (100 * part[1] / scale).toFixed(2) + "%";
        bar.appendChild(piece);
      });
      box.appendChild(bar);
      var words = make("span");
      words.className = "pl-mem-words";
      words.textContent = fmt(r.weights / GB) + " / " + fmt(r.kv / GB) + " / " +
        (r.free >= 0 ? fmt(r.free / GB) : "over by " + fmt(-r.free / GB));
      box.appendChild(words);
      return box;
    }

    function renderRows(s, rows, chosen) {
      tbody.textContent = "";
      var showCost = s.price !== null, showCapacity = rows.some(function (r) { return r.capacity !== null; });
      table.classList.toggle("pl-with-cost", showCost);
      table.classList.toggle("pl-with-capacity", showCapacity);
      rows.forEach(function (r) {
        var tr = make("tr");
        tr.setAttribute("data-layout", r.name);
        tr.setAttribute("data-fits", r.fits ? "true" : "false");
        tr.className = !r.fits ? "pl-nofit" : (!r.meetsSlo ? "pl-miss" : "");
        if (r === chosen) { tr.classList.add("pl-best"); tr.setAttribute("data-best", "true"); }
        var th = make("th");
        th.scope = "row";
        th.setAttribute("data-output", "layout");
        th.innerHTML = "<span class=\"pl-layout\">" + (r.attentionDp ? "adp" + r.tp + " · " : "") +
          (r.expertParallel ? "ep" : "tp") + r.tp + " · pp" + r.pp + " · dp" + r.dp + "</span>";
        if (r === chosen) { th.insertAdjacentHTML("beforeend", " <strong class=\"pl-badge\">best</strong>"); }
        var mapButton = make("button");
        mapButton.type = "button";
        mapButton.className = "pl-map-link";
        mapButton.textContent = "map";
        mapButton.setAttribute("aria-label", "Show the device map of " + r.name);
        mapButton.addEventListener("click", function () { drawMap(s, r); });
        th.appendChild(document.createTextNode(" "));
        th.appendChild(mapButton);
        tr.appendChild(th);
        cell(tr, "fits", r.fits, r.fits ? "yes" : "no");
        cell(tr, "memory_per_device_GB", r.memory / GB, fmt(r.memory / GB));
        cell(tr, "memory_split_GB", null, "", memoryDetail(r));
        cell(tr, "max_sequences", r.maxSequences, String(r.maxSequences));
        cell(tr, "ttft_ms", r.ttft / MS, fmt(r.ttft / MS));
        cell(tr, "tpot_ms", r.tpot / MS, fmt(r.tpot / MS));
        cell(tr, "tokens_per_s_per_device", r.tokensPerSPerDevice, fmt(r.tokensPerSPerDevice));
        cell(tr, "tokens_per_s_per_user", r.tokensPerSPerUser, fmt(r.tokensPerSPerUser));
        if (showCapacity) {
          cell(tr, "requests_per_s_per_device", r.requestsPerSPerDevice, fmt(r.requestsPerSPerDevice));
          var range = window.PlannerSizing.capacityInterval(r.requestsPerSPerDevice, "load");
          cell(tr, "requests_per_s_range", null, fmt(range[0]) + "–" + fmt(range[1]));
          cell(tr, "binding", null, r.binding);
        }
        if (showCost) { cell(tr, "cost_per_million_tokens", r.costPerMillionTokens, fmt(r.costPerMillionTokens)); }
        var note = r.reason ? r.reason.charAt(0).toUpperCase() + r.reason.slice(1) + "." :
          "Fits; each decode step is " + r.bound + "-bound" +
          (r.tp > 1 ? (r.attentionDp ? ", expert exchanges " : ", all-reduces ") + (100 * r.communicationShare).toFixed(0) +
            " % of the slowest stage" : "") + ".";
        cell(tr, "note", null, note).classList.add("pl-note-cell");
        tbody.appendChild(tr);
      });
    }

    // lib.serving.command for a layout ({tp, pp, dp, ep, adp}): the vLLM (vllm_command) and SGLang (sglang_command)
    // lines, the copies to run behind a load balancer and the note; or {error} past the model's context. A model
    // without a Hugging Face id (a custom one) gets a placeholder.
    function checkpoint(model, weights) {  // lib.serving.command.quantized_checkpoint
      var suffix = D.serving.checkpoint_suffix[weights];
      return suffix ? "YOUR-ORG/" + model.replace(/\/+$/, "").split("/").pop() + "-" + suffix : model;
    }
    function placement(l, perNode, shared) {  // lib.serving.command._placement
      var group = l.tp * l.pp;
      if (group > perNode) {
        var servers = Math.ceil(group / perNode);
        if (group % servers) { return { error: "layout " + Model.layoutName(l) + " does not split evenly over " + servers + " servers" }; }
        return { lineDp: 1, servers: servers, copies: l.dp, why: "each copy on its own servers" };
      }
      if (l.adp) { return { lineDp: 1, servers: 1, copies: l.dp, why: "each attention-data-parallel group is one engine" }; }
      if (!shared) { return { lineDp: 1, servers: 1, copies: l.dp, why: "" }; }
      var fit = 1;
      for (var k = 1; k <= l.dp; k++) { if (l.dp % k === 0 && k * group <= perNode) { fit = k; } }
      return { lineDp: fit, servers: 1, copies: l.dp / fit, why: "one server's replicas per copy" };
    }
    function commandNote(place, e, model, reason, name) {  // lib.serving.command._note
      var parts = [], head = D.serving.head_address;
      if (place.copies > 1) {
        parts.push("Run " + place.copies + " copies of " + (place.servers > 1 ? "these lines" : "this line") +
          ", each on its own devices, behind a load balancer (" + (reason || place.why) + ").");
      }
      if (place.servers > 1) {
        parts.push("One copy spans " + place.servers + " servers: run line R on server R, with " + head +
          " the address of server 0.");
      }
      if (D.serving.checkpoint_suffix[e.weight_format]) {
        parts.push(e.weight_format.toUpperCase() + " weights need a quantized checkpoint of " + model +
          " (GPTQ or AWQ, W" + e.weight_format.slice(3) + "A16) in place of " + checkpoint(model, e.weight_format) +
          "; " + name + " reads the method from its quantization_config and picks the kernel (Marlin).");
      }
      return parts.join(" ");
    }
    function deployment(engineName, lines, copies, note) {  // lib.serving.command.Deployment and its text
      var out = [];
      lines.forEach(function (line, rank) {
        if (lines.length > 1) { out.push("# server " + rank + " of " + lines.length); }
        out.push(line);
      });
      if (note) { out.push("# " + note); }
      return { engine: engineName, version: D.serving.engine_versions[engineName], lines: lines, copies: copies,
        note: note, text: out.join("\n") };
    }
    function contextError(s) {  // lib.serving.command._check_context
      var length = Model.lengths(s).longest, context = s.config.context_length || 0;
      return context && length > context ? "max_model_len=" + length + " (the longest prompt plus output, in " +
        "tokens) exceeds the model's context_length=" + context : null;
    }
    function vllmCommand(s, l) {
      var e = s.engine, model = s.config.hf_id || "YOUR-ORG/YOUR-MODEL", quantization = D.serving.quantization[e.weight_format];
      var moe = s.config.experts > 1, place = placement(l, s.cluster.devicesPerNode, !moe), error = contextError(s);
      if (error || place.error) { return { error: error || place.error }; }
      var base = ["vllm", "serve", checkpoint(model, e.weight_format), "--tensor-parallel-size", l.adp ? 1 : l.tp,
        "--pipeline-parallel-size", l.pp, "--data-parallel-size", l.adp ? l.tp : place.lineDp];
      if (quantization) { base.push("--quantization", quantization); }
      base.push("--kv-cache-dtype", e.kv_format === "fp8" ? "fp8" : "auto", "--max-num-seqs", e.max_num_seqs,
        "--max-num-batched-tokens", e.max_num_batched_tokens, "--gpu-memory-utilization", e.gpu_memory_utilization,
        "--max-model-len", Model.lengths(s).longest);
      if (l.ep) { base.push("--enable-expert-parallel"); }
      if (l.adp) { base.push("--all2all-backend", D.serving.all2all_backend[e.expert_exchange]); }
      if (!e.cuda_graphs) { base.push("--enforce-eager"); }
      if (e.allreduce === "nccl") { base.push("--disable-custom-all-reduce"); }
      var lines = [], head = D.serving.head_address;
      for (var rank = 0; rank < place.servers; rank++) {
        var words = base.slice();
        if (place.servers > 1 && l.adp) {
          if (l.tp % place.servers) { return { error: "layout " + Model.layoutName(l) + ": its data-parallel ranks do not split evenly over " + place.servers + " servers" }; }
          var local = l.tp / place.servers;
          words.push("--data-parallel-size-local", local);
          if (rank) { words.push("--data-parallel-start-rank", rank * local); }
          words.push("--data-parallel-address", head, "--data-parallel-rpc-port", D.serving.data_parallel_rpc_port);
        } else if (place.servers > 1) {
          words.push("--nnodes", place.servers, "--node-rank", rank, "--master-addr", head);
        }
        if (rank) { words.push("--headless"); }
        lines.push(words.join(" "));
      }
      var reason = moe && !l.adp && l.dp > 1 && place.servers === 1 ? "vLLM's --data-parallel-size would make a " +
        "mixture's expert layers one group across the replicas, with forward passes in step" : "";
      return deployment("vllm", lines, place.copies, commandNote(place, e, model, reason, "vLLM"));
    }
    function sglangCommand(s, l) {
      var e = s.engine, model = s.config.hf_id || "YOUR-ORG/YOUR-MODEL", quantization = D.serving.quantization[e.weight_format];
      var place = placement(l, s.cluster.devicesPerNode, true), error = contextError(s), ranks = l.adp ? l.tp : 1;
      if (error || place.error) { return { error: error || place.error }; }
      var words = ["python", "-m", "sglang.launch_server", "--model-path", checkpoint(model, e.weight_format),
        "--tp-size", l.tp, "--pp-size", l.pp, "--dp-size", l.adp ? l.tp : place.lineDp];
      if (l.adp) { words.push("--enable-dp-attention"); }
      if (l.ep) { words.push("--ep-size", l.tp); }
      if (l.adp) { words.push("--moe-a2a-backend", D.serving.moe_a2a_backend[e.expert_exchange]); }
      if (quantization) { words.push("--quantization", quantization); }
      words.push("--kv-cache-dtype", D.serving.sglang_kv_cache_dtype[e.kv_format], "--max-running-requests",
        e.max_num_seqs * ranks, "--chunked-prefill-size", e.max_num_batched_tokens * ranks, "--mem-fraction-static",
        e.gpu_memory_utilization, "--context-length", Model.lengths(s).longest);
      if (!e.cuda_graphs) { words.push("--disable-cuda-graph"); }
      if (e.allreduce === "nccl") { words.push("--disable-custom-all-reduce"); }
      var lines = [];
      for (var rank = 0; rank < place.servers; rank++) {
        var more = place.servers > 1 ? ["--nnodes", place.servers, "--node-rank", rank, "--dist-init-addr",
          D.serving.head_address + ":" + D.serving.dist_init_port] : [];
        lines.push(words.concat(more).join(" "));
      }
      return deployment("sglang", lines, place.copies, commandNote(place, e, model, "", "SGLang"));
    }
    function rowLayout(row) { return { tp: row.tp, pp: row.pp, dp: row.dp, ep: row.expertParallel, adp: row.attentionDp }; }
    /* Both engines' lines for a layout into #pl-command and #pl-command-sglang, or `none` when there is none. */
    function showCommands(s, layout, none) {
      [["pl-command", vllmCommand], ["pl-command-sglang", sglangCommand]].forEach(function (pair) {
        var element = byId(pair[0]);
        if (!element) { return; }
        var got = layout ? pair[1](s, layout) : null;
        element.textContent = !got ? none : got.error ? "No line: " + got.error + "." : got.text;
      });
    }

    // The device map (planner-map.js, lib.diagrams.device_map_data) of one row's layout.
    function drawMap(s, row) {
      var figure = byId("pl-map");
      if (!figure || !row || !window.PlannerMap) { return; }
      var layout = { tp: row.tp, pp: row.pp, dp: row.dp, adp: row.attentionDp, name: row.name };
      window.PlannerMap.draw(figure, window.PlannerMap.data(s.config.layers, layout, s.cluster.devicesPerNode,
                                                            s.cluster.link, s.cluster.interLink));
    }

    /* The command line's first line: the model's parameters (lib.transformer.parameter_count). */
    function showParams(config) {
      var params = byId("pl-params"), count = config ? Model.parameterCount(config) : null;
      params.textContent = config ? config.name + ": " + (count / 1e9).toFixed(2) + " billion parameters." : "";
      params.setAttribute("data-value", config ? String(count) : "");
    }

    /* lib.serving.size for the rate (python -m lib.serving --rate), in the command line's words; the answer, or null. */
    function showSizing(s) {
      var out = byId("pl-sizing");
      out.hidden = !s || s.rate === null;
      var Sizing = window.PlannerSizing;
      var got = out.hidden ? null : Sizing.size(s, s.rate, s.maxDevices, s.confidence);
      ["layout", "devices", "rate", "replica-rate", "binding", "low", "high", "estimate"].forEach(function (k) {
        out.removeAttribute("data-" + k);
      });
      if (out.hidden) { out.textContent = ""; return null; }
      var within = s.ttftLimit !== null || s.tpotLimit !== null ? " within the targets" : "";
      var sure = s.confidence === null ? "" : " with " + short(100 * s.confidence) + " % confidence";
      if (!got) {
        out.textContent = "Sizing: no layout of at most " + s.maxDevices + " × " + s.device.name + " carries " +
          short(s.rate) + " requests per second" + within + sure + ".";
        return null;
      }
      var regime = Sizing.regime(s.ttftLimit, s.tpotLimit), range = Sizing.capacityInterval(got.capacity.rate, regime);
      var estimate = s.confidence === null ? got : Sizing.size(s, s.rate, s.maxDevices, null);
      var values = { layout: got.name, devices: got.devices, rate: got.capacity.rate, "replica-rate": got.replica.rate,
        binding: got.replica.binding, low: range[0], high: range[1], estimate: estimate ? estimate.devices : "" };
      Object.keys(values).forEach(function (k) { out.setAttribute("data-" + k, String(values[k])); });
      out.textContent = "Sizing: " + short(s.rate) + " requests/s" + within + sure + " need " + got.devices + " × " +
        s.device.name + " as " + got.name + ": " + got.layout.dp + (got.layout.dp === 1 ? " replica" : " replicas") +
        " of " + short(got.replica.rate) + " requests/s each, " + short(got.capacity.rate) + " in all (" +
        short(100 * D.serving.trust.interval_level) + " % range " + short(range[0]) + "–" + short(range[1]) +
        ", from chapter 11's held-out errors; binding: " + got.replica.binding + ")." +
        (s.confidence === null ? "" : " The model's own estimate needs " +
          (estimate ? estimate.devices + " × " + s.device.name : "more than " + s.maxDevices) + ".");
      return got;
    }

    /* The table as it shows: its columns (data-output) and rows, each cell at full precision (data-value) or as
       its text, the layout by name. */
    function tableData() {
      var trs = Array.prototype.slice.call(tbody.querySelectorAll("tr[data-layout]"));
      var cellsOf = function (tr) { return Array.prototype.slice.call(tr.querySelectorAll("[data-output]")); };
      return {
        columns: trs.length ? cellsOf(trs[0]).map(function (c) { return c.getAttribute("data-output"); }) : [],
        rows: trs.map(function (tr) {
          return cellsOf(tr).map(function (c) {
            var v = c.getAttribute("data-value");
            if (c.tagName === "TH") { return tr.getAttribute("data-layout"); }
            if (v === null) { return c.textContent.trim(); }
            return v === "true" || v === "false" ? v === "true" : Number(v);
          });
        })
      };
    }

    /* A file made in the page (no network): a Blob behind a link that downloads it. */
    function download(name, type, text) {
      var a = make("a");
      a.href = URL.createObjectURL(new Blob([text], { type: type }));
      a.download = name;
      document.body.appendChild(a);
      a.click();
      a.remove();
      window.setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
    }

    function csvCell(x) {
      var t = String(x);
      return /[",\r\n]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
    }

    byId("pl-csv").addEventListener("click", function () {
      var t = tableData();
      download("planner-layouts.csv", "text/csv", [t.columns].concat(t.rows).map(function (r) {
        return r.map(csvCell).join(",");
      }).join("\r\n") + "\r\n");
    });
    byId("pl-json").addEventListener("click", function () {
      var t = tableData();
      download("planner-layouts.json", "application/json", JSON.stringify(t.rows.map(function (r) {
        var row = {};
        t.columns.forEach(function (c, i) { row[c] = r[i]; });
        return row;
      }), null, 1) + "\n");
    });

    /* A pasted or picked config.json (planner-config.js, lib.transformer.from_hf_config) becomes the custom
       model's numbers; a refusal is marked at the box. */
    var configText = byId("pl-config-text"), configError = byId("pl-config-error");
    var configStatus = byId("pl-config-status");
    function readConfig(text) {
      var config = null;
      try {
        config = window.PlannerConfig.read(text);
      } catch (error) {
        configText.setAttribute("aria-invalid", "true");
        configError.textContent = error.message + ".";
        configError.hidden = false;
        configStatus.textContent = "";
        return;
      }
      configText.removeAttribute("aria-invalid");
      configError.textContent = "";
      configError.hidden = true;
      E.model.value = "custom";
      E.model.removeAttribute("data-bad");
      showModel(config);
      update();
      configStatus.textContent = "Read " + config.name + " (" + config.architecture + "): it is the custom model above now.";
    }
    byId("pl-config-read").addEventListener("click", function () { readConfig(configText.value); });
    byId("pl-config-file").addEventListener("change", function (event) {
      var file = event.target.files[0];
      if (file) { file.text().then(function (text) { configText.value = text; readConfig(text); }); }
    });

    function exportable(yes) {
      ["pl-csv", "pl-json"].forEach(function (id) { byId(id).disabled = !yes; });
    }

    /* A row's split in words: what its group of tp devices shares, then the pipeline and the replicas. */
    function splitWords(row) {
      var group = row.attentionDp ? "attention data-parallel and experts over " + row.tp
        : (row.expertParallel ? "tensor " + row.tp + " with whole experts" : "tensor " + row.tp);
      return group + " × pipeline " + row.pp + " × data " + row.dp;
    }

    function describeBest(s, rows, chosen) {
      var underTargets = rows.some(function (r) { return r.capacity !== null; });
      if (chosen && underTargets) {
        return "Best layout under the targets: " + chosen.name + " (" + splitWords(chosen) + "): it sustains " + short(chosen.requestsPerSPerDevice) + " requests/s per device (" +
          short(chosen.capacity) + " in all) before the " + chosen.binding + " binds; at your " + s.batch +
          " concurrent sequences, " + short(chosen.tokensPerSPerDevice) + " tokens/s per device.";
      }
      if (underTargets) {
        return "No layout carries requests under the targets: every row's capacity is 0 (the column “Binds” says why).";
      }
      if (chosen) {
        return "Best layout: " + chosen.name + " (" + splitWords(chosen) + "): " + short(chosen.tokensPerSPerDevice) + " tokens/s per device, " +
          short(chosen.tokensPerSPerUser) + " per user, time to first token " + short(chosen.ttft / MS) +
          " ms, time per output token " + short(chosen.tpot / MS) + " ms" +
          (chosen.costPerMillionTokens !== null ? ", " + short(chosen.costPerMillionTokens) + " per million tokens" : "") + ".";
      }
      var fitting = rows.filter(function (r) { return r.fits; });
      if (!fitting.length) {
        return "No layout of " + s.devices + " devices fits: " + rows.length + " layouts tried; each row says why.";
      }
      return "No layout meets the targets: " + fitting.length + " of " + rows.length +
        " layouts fit, but each misses a latency target (see the notes).";
    }

    function renderFront(front) {
      frontBody.textContent = "";
      front.slice().reverse().forEach(function (p) {
        var tr = make("tr");
        [p.name, String(p.batch), fmt(p.user), fmt(p.device)].forEach(function (text, i) {
          var td = make(i === 0 ? "th" : "td");
          if (i === 0) { td.scope = "row"; }
          td.textContent = text;
          tr.appendChild(td);
        });
        frontBody.appendChild(tr);
      });
      if (!front.length) {
        var tr = make("tr"), td = make("td");
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
        if (D.devices[E.device.value]) {  // plan's default links: the device's own and its reference network
          E.link.value = D.devices[E.device.value].link;
          E.inter_link.value = D.devices[E.device.value].network;
        }
      }
      if (MODEL_FIELDS.indexOf(target) >= 0 || MODEL_FLAGS.indexOf(target) >= 0) {
        E.model.value = "custom";
        E.model.removeAttribute("data-bad");
      }
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
      E.prompt_tokens.disabled = E.output_tokens.disabled = !!values.lengths;
      var got = scenario(values);
      NAMES.forEach(function (name) { mark(name, got.errors[name]); });
      updateUrl(values);
      var bad = Object.keys(got.errors);
      if (bad.length) {
        tbody.innerHTML = "";
        var tr = make("tr"), td = make("td");
        td.colSpan = table.tHead.rows[0].cells.length;
        td.className = "pl-waiting";
        td.textContent = "No table until the marked input" + (bad.length > 1 ? "s are" : " is") + " fixed: " + bad.join(", ") + ".";
        tr.appendChild(td);
        tbody.appendChild(tr);
        summary.textContent = "Fix the marked input" + (bad.length > 1 ? "s" : "") + " (" + bad.join(", ") +
          "); the message under each says why.";
        last = null;
        showParams(null);
        showSizing(null);
        showCommands(null, null, "");
        exportable(false);
        drawChart(svg, caption, null, null);
        renderFront([]);
        return;
      }
      var s = got.s;
      showDeviceDefaults(s.device);
      showParams(s.config);
      var sized = showSizing(s);
      var rows = plan(s), chosen = best(rows, s.cluster.devicesPerNode);
      var result = { rows: rows, best: chosen, frontier: frontier(s) };
      renderRows(s, rows, chosen);
      exportable(rows.length > 0);
      drawMap(s, chosen || rows[0]);
      byId("pl-command-label-text").textContent = s.rate === null ? "The best row" : "The sized layout";
      showCommands(s, s.rate === null ? (chosen ? rowLayout(chosen) : null) : (sized ? sized.layout : null),
        s.rate === null ? "No row fits and meets the targets: no line to deploy."
          : "No layout carries the rate: no line to deploy.");
      var note = Model.tieNote(rows, chosen, s.cluster.devicesPerNode);  // "" when the best is the leader
      summary.textContent = describeBest(s, rows, chosen) + (note ? " A tie: " + note + "." : "");
      last = { s: s, result: result };
      drawChart(svg, caption, s, result);
      renderFront(result.frontier.front);
    }

    // Each column's header links to its definition below and, cloned from there, to the chapter's equation.
    table.querySelectorAll("th[data-col]").forEach(function (th) {
      var section = byId("planner-col-" + th.getAttribute("data-col").replace(/_/g, "-").toLowerCase());
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
      if ("device" in fromLink && !("inter_link" in fromLink) && D.devices[fromLink.device]) {
        fromLink.inter_link = D.devices[fromLink.device].network;
      }
      CHECKS.forEach(function (name) { if (!(name in fromLink)) { fromLink[name] = BASE[name]; } });
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
      if (event.target !== link.openEl && !event.target.closest(".pl-config")) { update(event); }
    });
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    byId("pl-reset").addEventListener("click", function () {
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
    model: function () { return window.PlannerModel; }, collectives: function () { return window.PlannerCollectives; } };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
}());
