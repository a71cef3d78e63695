/*
 * The layout planner's reader of a Hugging Face config.json (book/planner.md), a mirror of
 * lib/transformer/hf.py: from_hf_config, with its fields, Hugging Face's defaults where a field is
 * absent and its refusals, word for word (each names the field). The page's custom model has no field for
 * a head width other than hidden_size / num_attention_heads or for latent attention, so this reader refuses
 * an explicit head_dim that differs (lib reads it) and the architectures planner_data.PAGE_REFUSES. The
 * context length is not read: a custom model's is unknown (0), and the page does not refuse long requests
 * for it. The architectures it prices come
 * from window.PLANNER_DATA (tools/sphinx/planner_data.py); the parameter count is planner-model.js's
 * parameterCount (lib/transformer/models.py, parameter_count). Sets window.PlannerConfig.
 */
(function () {
  "use strict";

  // _REQUIRED: each required field and what it is.
  var REQUIRED = [["num_hidden_layers", "the number of transformer layers"],
    ["hidden_size", "the width of the residual stream"], ["num_attention_heads", "the query heads"],
    ["vocab_size", "the vocabulary"]];

  function has(raw, name) { return Object.prototype.hasOwnProperty.call(raw, name); }

  /* Python's truth of a JSON value (an empty list or object is false). */
  function truthy(x) {
    if (x !== null && typeof x === "object") { return Object.keys(x).length > 0; }
    return !!x;
  }

  /* Python's repr of a JSON value, for the messages. */
  function repr(x) {
    if (x === null || x === undefined) { return "None"; }
    if (typeof x === "boolean") { return x ? "True" : "False"; }
    if (typeof x === "string") { return "'" + x.replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'"; }
    if (Array.isArray(x)) { return "[" + x.map(repr).join(", ") + "]"; }
    if (typeof x === "object") {
      return "{" + Object.keys(x).map(function (k) { return repr(k) + ": " + repr(x[k]); }).join(", ") + "}";
    }
    return String(x);
  }

  /* type(x).__name__ of a parsed JSON value. */
  function typeName(x) {
    if (x === null) { return "NoneType"; }
    if (Array.isArray(x)) { return "list"; }
    return { string: "str", boolean: "bool", number: Number.isInteger(x) ? "int" : "float" }[typeof x] || "dict";
  }

  function fail(message) { throw new Error(message); }

  // mirrors lib.transformer.hf._field
  function field(raw, name, why) {
    if (!has(raw, name)) { fail("config.json must have " + name + " (" + why + "); it is missing"); }
    return raw[name];
  }

  // mirrors lib.transformer.hf._whole
  function whole(name, value) {
    if (typeof value !== "number" || !Number.isInteger(value)) {
      fail(name + " must be a whole number, got " + repr(value));
    }
    return value;
  }

  /* from_hf_config: the page's model (ModelConfig's fields) of a parsed config.json; name labels it. */
  // mirrors lib.transformer.hf.from_hf_config
  function fromHfConfig(raw, name) {
    var known = window.PLANNER_DATA.hf_architectures;
    if (typeName(raw) !== "dict") { fail("config.json must hold a JSON object, got " + typeName(raw)); }
    var refused = window.PLANNER_DATA.hf_refused;
    var architectures = truthy(raw.architectures) ? raw.architectures : [];
    var listed = Array.isArray(architectures) ? architectures : [];
    var arch = listed.filter(function (a) { return has(known, a) || refused.indexOf(a) >= 0; })[0];
    if (arch === undefined) {  // lib's message, which names every architecture lib reads
      fail("architectures must name one of " + repr(Object.keys(known).concat(refused).sort()) + ", got " +
        repr(architectures));
    }
    if (!has(known, arch)) {
      fail("architectures " + repr(arch) + " uses latent attention, which this page's custom model cannot hold " +
        "(lib.transformer.from_hf_config reads it)");
    }
    var f = {};
    REQUIRED.forEach(function (r) { f[r[0]] = whole(r[0], field(raw, r[0], r[1])); });
    var heads = f.num_attention_heads, hidden = f.hidden_size;
    if (raw.head_dim !== undefined && raw.head_dim !== null && whole("head_dim", raw.head_dim) * heads !== hidden) {
      fail("head_dim must equal hidden_size / num_attention_heads (" + Math.floor(hidden / heads) + ") for this " +
        "page's custom model, got " + raw.head_dim + " (lib.transformer.from_hf_config reads it)");
    }
    if (truthy(raw.shared_expert_intermediate_size) || truthy(raw.n_shared_experts)) {
      fail("shared_expert_intermediate_size: shared experts are not priced by this model; remove the field only " +
        "if the model has none");
    }
    var expertsKey = has(raw, "num_local_experts") ? "num_local_experts" : "num_experts";
    var experts = whole(expertsKey, truthy(raw[expertsKey]) ? raw[expertsKey] : 1), ffn, topK = 1;
    if (experts > 1) {
      var ffnKey = has(raw, "moe_intermediate_size") ? "moe_intermediate_size" : "intermediate_size";
      ffn = whole(ffnKey, field(raw, ffnKey, "the width of each expert's MLP"));
      topK = whole("num_experts_per_tok", field(raw, "num_experts_per_tok", "the experts each token is routed to"));
    } else {
      ffn = whole("intermediate_size", field(raw, "intermediate_size", "the width of the MLP"));
    }
    return {
      name: String(name || raw._name_or_path || arch), architecture: arch,
      layers: f.num_hidden_layers, hidden: hidden, heads: heads,
      kv_heads: whole("num_key_value_heads", truthy(raw.num_key_value_heads) ? raw.num_key_value_heads : heads),
      ffn_hidden: ffn, vocab: f.vocab_size, experts: experts, experts_per_token: topK, gated_mlp: true,
      qkv_bias: known[arch] || truthy(raw.attention_bias), tied_embeddings: truthy(raw.tie_word_embeddings)
    };
  }

  /* The text of a config.json, parsed and read (read_hf_config without the file). */
  function read(text, name) {
    var raw;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      fail("config.json must be valid JSON: " + error.message);
    }
    return fromHfConfig(raw, name);
  }

  /* The functions tagged `// mirrors`, by name, for tests/browser/test_planner_functions.py. */
  var mirrors = {
    field: field, whole: whole, fromHfConfig: fromHfConfig
  };

  window.PlannerConfig = { read: read, fromHfConfig: fromHfConfig,
    _mirrors: mirrors };
}());
