/*
 * The layout planner's capacity under latency targets (book/planner.md), a mirror of
 * lib/serving/capacity.py: _Replica (the step time on a grid of concurrencies, the stationary law
 * of the requests in a replica, the TTFT's distribution), _ttft, _poisson, _weighted_quantile,
 * _meets, _binding and capacity(), for one prompt and one output length or samples of them
 * (Workload). The steps come from planner-model.js (lib.serving.step, memory), every
 * constant from window.PLANNER_DATA. Sets window.PlannerCapacity.
 */
(function () {
  "use strict";

  function data() { return window.PLANNER_DATA.capacity; }

  function sum(values) { return window.PlannerModel.sum(values); }

  /* numpy.interp: linear between the points of xs (increasing), flat beyond them. */
  function interp(x, xs, ys) {
    if (x <= xs[0]) { return ys[0]; }
    var last = xs.length - 1;
    if (x >= xs[last]) { return ys[last]; }
    var lo = 0, hi = last;
    while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (xs[mid] <= x) { lo = mid; } else { hi = mid; } }
    var slope = (ys[hi] - ys[lo]) / (xs[hi] - xs[lo]);
    return slope * (x - xs[lo]) + ys[lo];
  }

  /* numpy.unique(np.concatenate([[1], np.round(np.geomspace(1, top, n)), [top]])) */
  function grid(top, n) {
    var step = Math.log10(top) / (n - 1), values = [1.0, top];
    for (var i = 0; i < n; i++) {
      values.push(i === 0 ? 1.0 : (i === n - 1 ? top : window.PlannerModel.pyRound(Math.pow(10, i * step))));
    }
    values.sort(function (a, b) { return a - b; });
    return values.filter(function (v, i) { return i === 0 || v !== values[i - 1]; });
  }

  /* Workload(prompts, outputs, hit): the means, the context, the new tokens' mean and mean square. */
  // mirrors lib.serving.capacity.Workload
  function workload(s) {
    var w = window.PlannerModel.lengths(s), h = s.prefixHitRate, n = w.P.map(function (p) {
      return Math.max(1.0, Math.ceil((1 - h) * p));
    });
    return { prompt: sum(w.P) / n.length, output: w.output, hit: h, context: w.context, newTokens: sum(n) / n.length,
      square: sum(n.map(function (x) { return x * x; })) / n.length };
  }

  /* _Replica.__init__: the concurrency limit, and the step times on the grid (not with capsOnly: ceiling()). */
  // mirrors lib.serving.capacity._Replica
  function replica(s, l, capsOnly) {
    var M = window.PlannerModel, K = data();
    var w = workload(s), o = w.output, fresh = w.newTokens;
    var perRequest = (o - 1 + fresh) / o;
    var kvTokens = M.kvTokenCapacity(s, l);
    var limits = M.replicaLimits(s.engine, l), budget = limits[1];
    var caps = [["KV memory", kvTokens / w.context], ["sequences per replica", limits[0]],
      ["token budget", l.pp * budget / perRequest]];
    var limit = caps[0];
    caps.forEach(function (cap) { if (cap[1] < limit[1]) { limit = cap; } });
    var r = { s: s, l: l, w: w, limit: limit[0], maxBatch: limit[1], fits: kvTokens > 0 };
    if (!r.fits || r.maxBatch < 1 || capsOnly) { return r; }  // capacity() stops here (lib prices the grid all the same)
    var top = Math.max(1.0, Math.floor(r.maxBatch));
    r.grid = grid(top, K.grid);
    r.times = r.grid.map(function (b) { return M.decodeTpot(s, l, b, w.context).tpot; });
    var attended = (w.hit * w.prompt + w.prompt + 1) / 2;
    r.room = [];
    r.idle = [];
    r.busyK = [];
    r.grid.forEach(function (b) {
      var micro = Math.ceil(b / Math.min(l.pp, Math.ceil(b))), decodes = micro * (o - 1) / o;
      var room = Math.max(1.0, budget - decodes), busy = [];
      r.room.push(room);
      r.idle.push(M.loopTime(s, l, decodes, w.context));
      for (var k = 1; k <= K.together; k++) {
        busy.push(M.loopTime(s, l, decodes, w.context, Math.min(room, k * fresh), attended, k));
      }
      r.busyK.push(busy);
    });
    return r;
  }

  // mirrors lib.serving.capacity._Replica.step_time
  function stepTime(r, batch) { return interp(batch, r.grid, r.times); }

  /* _Replica.highest_rate: requests per second at the concurrency limit. */
  // mirrors lib.serving.capacity._Replica.highest_rate
  function highestRate(r) {
    var top = Math.max(1.0, Math.floor(r.maxBatch));
    return top / (r.w.output * stepTime(r, top));
  }

  /* _Replica.states: the stationary law of running requests, (running, weights, queued); null if unstable. */
  // mirrors lib.serving.capacity._Replica.states
  function states(r, rate) {
    var o = r.w.output, top = Math.max(1, Math.floor(r.maxBatch)), i, logRate = Math.log(rate * o);
    var ratio = rate * o * stepTime(r, top) / top;
    if (ratio >= 1) { return null; }
    if (!r.logSteps) {  // log t(B) and log B for B = 1..top, the same at every rate: kept on the replica
      var t = countTables(r).t;
      r.logSteps = new Float64Array(top + 1);
      r.logCounts = new Float64Array(top + 1);
      for (i = 1; i <= top; i++) { r.logSteps[i] = Math.log(t[i]); r.logCounts[i] = Math.log(i); }
    }
    var weights = new Float64Array(top + 1), most = 0.0, total = 0.0, heaviest = 0.0;  // log pi, then pi
    for (i = 1; i <= top; i++) {
      weights[i] = weights[i - 1] + (logRate + r.logSteps[i] - r.logCounts[i]);
      most = Math.max(most, weights[i]);
    }
    // Below e^-60 of the largest a weight adds nothing the total keeps; the top's is kept for the queue.
    for (i = 0; i <= top; i++) {
      weights[i] = weights[i] - most > -60 || i === top ? Math.exp(weights[i] - most) : 0.0;
      total += weights[i];
    }
    var tail = weights[top] * ratio / (1 - ratio), queued = weights[top] * ratio / ((1 - ratio) * (1 - ratio));
    total += tail;
    for (i = 0; i <= top; i++) {
      weights[i] = weights[i] / total + (i === top ? tail / total : 0.0);
      heaviest = Math.max(heaviest, weights[i]);
    }
    var running = [], kept = [], keptTotal = 0.0;
    for (i = 0; i <= top; i++) {
      if (weights[i] > 1e-9 * heaviest) { running.push(i); kept.push(weights[i]); keptTotal += weights[i]; }
    }
    return { running: running, weights: kept.map(function (x) { return x / keptTotal; }), queued: queued / total };
  }

  /* _weighted_quantile: the q quantile of values drawn with probabilities proportional to weights. Many values
     are selected (selectQuantile), few sorted: the same value either way. */
  // mirrors lib.serving.capacity._weighted_quantile
  function weightedQuantile(values, weights, q) {
    var picked = values.length > 64 ? selectQuantile(values, weights, q) : null;
    return picked === null ? sortedQuantile(values, weights, q) : picked;
  }

  /* The quantile as lib takes it: the first value, in sorted order, at which the running sum of the weights
     reaches q of their total. */
  function sortedQuantile(values, weights, q) {
    var order = argsort(values), n = order.length, cumulative = new Float64Array(n), t = 0.0, i;
    for (i = 0; i < n; i++) { t += weights[order[i]]; cumulative[i] = t; }
    var target = q * cumulative[n - 1], lo = 0, hi = n;
    while (lo < hi) { var mid = (lo + hi) >> 1; if (cumulative[mid] < target) { lo = mid + 1; } else { hi = mid; } }
    return values[order[Math.min(lo, n - 1)]];
  }

  /* The same quantile by selection, without sorting: three-way partitions about pseudo-random pivots keep the
     part holding the running sum's crossing (about 3 n steps against n log n). Its sums are added in another
     order than the sorted one, so it returns null, for the sort to decide, when the weight below the chosen
     value or up to it is within 1e-9 of q of the total. */
  function selectQuantile(values, weights, q) {
    var n = values.length, v = Float64Array.from(values), w = Float64Array.from(weights), total = 0.0, i, x;
    for (i = 0; i < n; i++) { total += w[i]; }
    var target = q * total, lo = 0, hi = n, below = 0.0, seed = 1, picked = NaN;
    while (lo < hi && isNaN(picked)) {
      seed = (seed * 16807) % 2147483647;  // Park and Miller's generator: the pivot's place
      var pivot = v[lo + seed % (hi - lo)], lt = lo, gt = hi, k = lo, less = 0.0, equal = 0.0;
      while (k < gt) {  // [lo, lt) < pivot, [lt, k) = pivot, [gt, hi) > pivot
        if (v[k] < pivot) {
          x = v[k]; v[k] = v[lt]; v[lt] = x; x = w[k]; w[k] = w[lt]; w[lt] = x;
          less += w[lt++];
          k++;
        } else if (v[k] > pivot) {
          gt--;
          x = v[k]; v[k] = v[gt]; v[gt] = x; x = w[k]; w[k] = w[gt]; w[gt] = x;
        } else {
          equal += w[k++];
        }
      }
      if (below + less >= target) { hi = lt; } else if (below + less + equal >= target) { picked = pivot; } else {
        below += less + equal;
        lo = gt;
      }
    }
    var under = 0.0, upTo = 0.0, tolerance = 1e-9 * total;
    for (i = 0; i < n; i++) {
      if (values[i] < picked) { under += weights[i]; }
      if (values[i] <= picked) { upTo += weights[i]; }
    }
    return under < target - tolerance && upTo >= target + tolerance ? picked : null;
  }

  /* numpy.argsort(values, kind="stable") for positive finite values, by the engine's own numeric sort: each
     value's lowest mantissa bits carry its index, so equal values keep their order. Values closer than
     those bits (a relative 2^-(52 - bits), below 1e-10 for a million values) may swap, which moves a
     quantile by no more than that. */
  function argsort(values) {
    var n = values.length, bits = Math.max(1, Math.ceil(Math.log2(n + 1))), mask = bits >= 32 ? 0xFFFFFFFF : (1 << bits) - 1;
    var keys = new Float64Array(n), words = new Uint32Array(keys.buffer), i;
    var low = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 0 : 1;  // the low word's place (little-endian: 0)
    for (i = 0; i < n; i++) {
      keys[i] = values[i];
      words[2 * i + low] = ((words[2 * i + low] & ~mask) | i) >>> 0;
    }
    keys.sort();
    var order = new Uint32Array(n);
    for (i = 0; i < n; i++) { order[i] = (words[2 * i + low] & mask) >>> 0; }
    return order;
  }

  /* _poisson: Poisson probabilities of 0..last at mean, the last count taking the tail, into out. One exp and
     then p(k) = p(k - 1) m / k: lib's exp(k log m - m - log k!) each, within a few ulps. */
  // mirrors lib.serving.capacity._poisson
  function poisson(mean, last, out) {
    var m = Math.max(mean, 1e-300), head = 0.0;
    for (var k = 0; k < last; k++) {
      out[k] = k === 0 ? Math.exp(-m) : out[k - 1] * m / k;
      head += out[k];
    }
    out[last] = Math.max(0.0, 1 - head);
    return out;
  }

  /* The mean of values[from + min(N, last)] for N Poisson at mean: poisson's probabilities summed into it as
     they are made, in the same order (the same number as poisson's then a sum, without the array). */
  function poissonMean(mean, last, values, from) {
    var m = Math.max(mean, 1e-300), p = Math.exp(-m), head = p, total = p * values[from];
    for (var k = 1; k < last; k++) {
      p = p * m / k;
      head += p;
      total += p * values[from + k];
    }
    return total + Math.max(0.0, 1 - head) * values[from + last];
  }

  /* _ttft's distribution as blocks. A prompt shorter than the budget's room, arriving in state st while a step
     of N = n prompts runs, waits u * lengths[n] + next (block st, n: scale, offset, and each draw's chance);
     the `draws` values of u make each block rise. A longer prompt queues as an M/G/1 (long: its draws).
     Given gate ([slot, limit]: ttftWithin's), a short prompt's state whose every draw + slot is within the
     limit, or none is, is not priced: next is a mean of lengths[1..together], so each draw of the state lies
     between u[0] min(lengths) + min(lengths[1..]) and u[last] max(lengths) + max(lengths[1..]) (compared with
     a margin for rounding). Its weight is added to decided, and to sure when it is within. */
  function ttftBlocks(rate, rho, idle, busyK, room, service, fresh, weights, spread, gate) {
    var K = data(), together = K.together, draws = K.draws, states = idle.length;
    var u = new Float64Array(draws), pm = new Float64Array(together + 1), current = new Float64Array(together + 1);
    var lengths = new Float64Array(together + 1), j, n, i, k, st, longs = 0;
    for (j = 0; j < draws; j++) { u[j] = (j + 0.5) / draws; }
    for (st = 0; st < states; st++) { if (fresh >= room[st]) { longs++; } }
    var size = (states - longs) * (together + 1), g = 0, f = 0;
    var b = { u: u, scale: new Float64Array(size), offset: new Float64Array(size), share: new Float64Array(size),
      long: new Float64Array(longs * draws), longChance: new Float64Array(longs * draws), sure: 0.0, decided: 0.0 };
    for (st = 0; st < states; st++) {
      if (fresh >= room[st]) {  // a long prompt: steps of its own, an M/G/1 queue
        var wait = rate * service[st] * service[st] * spread / (2 * (1 - rho));  // E[service^2]: spread = E[n^2]/E[n]^2
        for (k = 0; k < draws; k++) {
          var queue = u[k] < 1 - rho ? 0.0 :
            -(wait / Math.max(rho, 1e-300)) * Math.log(Math.max((1 - u[k]) / Math.max(rho, 1e-300), 1e-300));
          b.long[f] = busyK[st][0] * (0.5 + fresh / room[st] + 0.5) + queue;
          b.longChance[f++] = weights[st] / draws;
        }
        continue;
      }
      lengths[0] = idle[st];
      for (i = 0; i < together; i++) { lengths[i + 1] = busyK[st][i]; }
      if (gate !== undefined) {
        var shortest = lengths[0], longest = lengths[0], least = Infinity, most = -Infinity;
        for (i = 1; i <= together; i++) {
          shortest = Math.min(shortest, lengths[i]);
          longest = Math.max(longest, lengths[i]);
          least = Math.min(least, lengths[i]);
          most = Math.max(most, lengths[i]);
        }
        var surely = (u[draws - 1] * longest + most) * (1 + 1e-9) + gate[0] <= gate[1] * (1 - 1e-12);
        if (surely || (u[0] * shortest + least) * (1 - 1e-9) + gate[0] > gate[1] * (1 + 1e-12)) {
          b.decided += weights[st];  // priced or not, the same share within
          b.sure += surely ? weights[st] : 0.0;
          continue;
        }
      }
      var mean = idle[st], previous = NaN;
      for (var it = 0; it < K.fixed_point && mean !== previous; it++) {  // once exactly fixed, it stays
        previous = mean;
        mean = poissonMean(rate * mean, together, lengths, 0);
      }
      poisson(rate * mean, together, pm);
      var currentTotal = 0.0;
      for (i = 0; i <= together; i++) { current[i] = pm[i] * lengths[i]; currentTotal += current[i]; }
      for (n = 0; n <= together; n++, g++) {
        b.offset[g] = poissonMean(rate * lengths[n], together - 1, lengths, 1);
        b.scale[g] = lengths[n];
        b.share[g] = weights[st] * (current[n] / currentTotal) / draws;
      }
    }
    if (g < size) { ["scale", "offset", "share"].forEach(function (x) { b[x] = b[x].subarray(0, g); }); }
    return b;
  }

  /* _ttft: the mean TTFT and its distribution (draws, chances) over the states an arrival sees; in lib's
     order: the short prompts' blocks, then the long prompts' draws. service: each state's mean over the
     requests, fresh the mean new tokens, spread their E[n^2] / E[n]^2 (1 for one length). */
  // mirrors lib.serving.capacity._ttft
  function ttft(rate, rho, idle, busyK, room, service, fresh, weights, spread) {
    var b = ttftBlocks(rate, rho, idle, busyK, room, service, fresh, weights, spread);
    var draws = b.u.length, gated = b.scale.length * draws, size = gated + b.long.length;
    var all = new Float64Array(size), chance = new Float64Array(size), g = 0, weighted = 0.0, total = 0.0;
    for (var j = 0; j < b.scale.length; j++) {
      for (var k = 0; k < draws; k++, g++) { all[g] = b.u[k] * b.scale[j] + b.offset[j]; chance[g] = b.share[j]; }
    }
    all.set(b.long, gated);
    chance.set(b.longChance, gated);
    for (g = 0; g < size; g++) { weighted += all[g] * chance[g]; total += chance[g]; }
    return { mean: weighted / total, draws: all, chance: chance };
  }

  /* Whether the TTFT's quantile q (weightedQuantile of ttft's draws) + slot is within limit, without making or
     sorting the draws: it is when the draws within the limit (the first ones of each block, since adding and
     comparing keep the order) weigh q of the whole, the states ttftBlocks left unpriced counted whole (sure
     within, decided in all). lib adds the weights in sorted order, this in blocks: null where the two sums
     could disagree (the share within 1e-9 of q), for the sorted quantile to decide. */
  function ttftWithin(b, q, slot, limit) {
    var draws = b.u.length, passed = b.sure, total = b.decided, j;
    for (j = 0; j < b.scale.length; j++) {
      var lo = 0, hi = draws;  // how many of the block's draws are within the limit
      while (lo < hi) {
        var mid = (lo + hi) >> 1;
        if (b.u[mid] * b.scale[j] + b.offset[j] + slot <= limit) { lo = mid + 1; } else { hi = mid; }
      }
      passed += lo * b.share[j];
      total += draws * b.share[j];
    }
    for (j = 0; j < b.long.length; j++) {
      total += b.longChance[j];
      if (b.long[j] + slot <= limit) { passed += b.longChance[j]; }
    }
    var margin = passed - q * total;
    return Math.abs(margin) > 1e-9 * total ? margin > 0 : null;
  }

  /* interp(b, xs, ys) at every count b = 0..top, in one sweep: the same numbers. */
  function interpCounts(xs, ys, top) {
    var out = new Float64Array(top + 1), last = xs.length - 1, lo = 0;
    for (var b = 0; b <= top; b++) {
      if (b <= xs[0]) { out[b] = ys[0]; continue; }
      if (b >= xs[last]) { out[b] = ys[last]; continue; }
      while (xs[lo + 1] <= b) { lo++; }
      out[b] = (ys[lo + 1] - ys[lo]) / (xs[lo + 1] - xs[lo]) * (b - xs[lo]) + ys[lo];
    }
    return out;
  }

  /* The replica's step (stepTime), room, idle step and steps with 1..together prompts at every count of
     running requests 0..top (interpolated on its grid as lib does), made once and kept on it: the loads at
     every rate ask for nearly the same counts. */
  function countTables(r) {
    var top = Math.max(1, Math.floor(r.maxBatch));
    if (!r.at) {  // the grid starts at 1, so count 0 reads count 1's values, as stepTime(max(b, 1)) does
      r.at = { t: interpCounts(r.grid, r.times, top), room: interpCounts(r.grid, r.room, top),
        idle: interpCounts(r.grid, r.idle, top), busy: r.busyK[0].map(function (_, k) {
          return interpCounts(r.grid, r.busyK.map(function (row) { return row[k]; }), top);
        }) };
    }
    return r.at;
  }

  /* countTables at the counts of running requests. */
  function stepsAt(r, running) {
    var together = data().together, n = running.length, c = countTables(r), i;
    var out = { t: new Array(n), room: new Array(n), idle: new Array(n), busyK: new Array(n) };
    for (i = 0; i < n; i++) {
      var b = running[i], row = new Float64Array(together);
      out.t[i] = c.t[b];
      out.room[i] = c.room[b];
      out.idle[i] = c.idle[b];
      for (var k = 0; k < together; k++) { row[k] = c.busy[k][b]; }
      out.busyK[i] = row;
    }
    return out;
  }

  /* _Replica.load: the replica at rate: concurrency, TPOT and TTFT (means, quantiles), prefill utilisation.
     Given targets ([ttftLimit, tpotLimit]: capacity's bisection, which asks only meets()), the TTFT is left out
     once the TPOT misses, and its quantile is not taken but compared with its limit (ttftMet). */
  // mirrors lib.serving.capacity._Replica.load
  function loadAt(r, rate, q, withTtft, targets) {
    var chain = states(r, rate);
    if (chain === null) { return null; }
    var running = chain.running, weights = chain.weights;
    var steps = stepsAt(r, running), t = steps.t;
    var batch = sum(weights.map(function (x, i) { return x * running[i]; }));
    var tokens = weights.map(function (x, i) { return x * Math.max(running[i], 1e-30) / t[i]; });
    var tpot = sum(tokens.map(function (x, i) { return x * t[i]; })) / sum(tokens);
    var out = { rate: rate, batch: batch, tpot: tpot, tpotQuantile: weightedQuantile(t, tokens, q),
      ttft: NaN, ttftQuantile: NaN, rho: 0.0 };
    var room = steps.room, idle = steps.idle, busyK = steps.busyK;
    var service = busyK.map(function (row, i) { return row[0] * r.w.newTokens / room[i]; });
    out.rho = sum(weights.map(function (x, i) { return x * rate * service[i]; }));
    if (out.rho >= 1) { out.ttft = Infinity; out.ttftQuantile = Infinity; return out; }
    if (!withTtft || (targets && !meets(out, null, targets[1]))) { return out; }
    var slot = chain.queued / rate, w = r.w, spread = w.square / (w.newTokens * w.newTokens);
    // Given targets the TTFT's mean is left out: meets() asks only whether it is infinite (rho >= 1, above).
    var met = targets && ttftWithin(ttftBlocks(rate, out.rho, idle, busyK, room, service, w.newTokens, weights, spread,
      [slot, targets[0]]), q, slot, targets[0]);
    if (met === true || met === false) { out.ttftMet = met; return out; }
    var got = ttft(rate, out.rho, idle, busyK, room, service, w.newTokens, weights, spread);
    out.ttft = got.mean + slot;
    out.ttftQuantile = weightedQuantile(got.draws, got.chance, q) + slot;
    return out;
  }

  // mirrors lib.serving.capacity._meets
  function meets(load, ttftLimit, tpotLimit) {
    if (load === null || load.ttft === Infinity) { return false; }
    var ttftMet = load.ttftMet === undefined ? load.ttftQuantile <= ttftLimit : load.ttftMet;
    return (ttftLimit === null || ttftMet) && (tpotLimit === null || load.tpotQuantile <= tpotLimit);
  }

  /* _binding: what fails just above the capacity (beyond: the load past it), in lib's words. */
  // mirrors lib.serving.capacity._binding
  function binding(r, beyond, ttftLimit) {
    if (beyond === null) {
      return r.limit === "KV memory" ? "KV memory" : (r.limit === "token budget" ? "prefill compute" : "sequences per replica");
    }
    if (beyond.ttft === Infinity) { return "prefill compute"; }
    if (ttftLimit !== null && !meets(beyond, ttftLimit, null)) { return "TTFT target"; }
    var step = window.PlannerModel.decodeStep(r.s, r.l, Math.max(1.0, beyond.batch), r.w.context);
    var work = step.works[step.stageTimes.indexOf(Math.max.apply(null, step.stageTimes))];
    var memory = sum(work.ops.map(function (op) { return op.memoryTime >= op.computeTime ? op.time : 0.0; }));
    var shares = [["decode bandwidth", memory], ["communication", work.communication + step.hop / r.l.pp],
      ["TPOT target", work.computeBound + work.fixed]];
    var chosen = shares[0];
    shares.forEach(function (x) { if (x[1] > chosen[1]) { chosen = x; } });
    return chosen[0];
  }

  var known = new WeakMap();  // scenario -> {replicaKey: {r: its replica; rate, binding, load once searched}}

  /* One replica of l in scenario s, kept: sizing and the table ask for the same replicas. A replica depends
     on l's shape and, through hopTime's slowest replica, on which pipeline boundaries of each replica cross
     servers (none when pp is 1, whatever the dp), not on the targets. */
  function replicaOf(s, l) {
    var all = known.get(s) || {}, crossings = {};
    known.set(s, all);
    for (var i = 0; i < (l.pp > 1 ? l.dp : 0); i++) {
      crossings[window.PlannerModel.hopLinks(s.cluster, l, i).map(function (x) { return +(x === s.cluster.link); })] = 1;
    }
    var key = [l.tp, l.pp, l.ep, l.adp].concat(Object.keys(crossings).sort()).join(" ");
    return all[key] || (all[key] = { r: replica(s, l) });
  }

  /* capacity: the highest request rate the layout sustains within the targets, and what binds it; the
     load at capacity is priced when first read (sizing reads only the rate). */
  // mirrors lib.serving.capacity.capacity
  function capacity(s, l) {
    var one = replicaOf(s, l);
    if (one.rate === undefined) { Object.assign(one, search(s, one.r)); }
    var total = one.rate * l.dp;
    return { rate: total, ratePerDevice: total / (l.tp * l.pp * l.dp), binding: one.binding, get load() {
      return one.load === undefined ? (one.load = loadAt(one.r, one.rate * (1 - 1e-9), s.percentile, true)) : one.load;
    } };
  }

  /* size's floor on a shape's devices, from one step: highestRate, the rate at which the queue for a slot
     grows without bound (stepTime at the top of the grid is the step there). lib takes capacity(s, l).rate
     without targets, the same unless even a trickle is too much: then 0, and capacity(s, l) is 0 too. */
  function ceiling(s, l) {
    var r = replica(s, l, true), top = Math.max(1.0, Math.floor(r.maxBatch));
    if (!r.fits || r.maxBatch < 1) { return 0.0; }
    return top / (r.w.output * window.PlannerModel.decodeStep(s, l, top, r.w.context).tpot) * l.dp;
  }

  /* capacity's search for replica r: its rate (dp = 1), binding, and load when the rate is 0 (else left out). */
  function search(s, r) {
    var K = data(), q = s.percentile, ttftLimit = s.ttftLimit, tpotLimit = s.tpotLimit;
    if (!r.fits || r.maxBatch < 1) {
      var word = !r.fits ? "weights memory" : r.limit;
      return { rate: 0.0, binding: K.bindings.indexOf(word) >= 0 ? word : "sequences per replica", load: null };
    }
    var highest = highestRate(r);
    var idle = loadAt(r, highest * 1e-9, q, ttftLimit !== null);
    if (!meets(idle, ttftLimit, tpotLimit)) {
      return { rate: 0.0, load: idle,
        binding: idle !== null && ttftLimit !== null && idle.ttftQuantile > ttftLimit ? "TTFT target" : "TPOT target" };
    }
    var lo = 0.0, hi = highest;
    if (ttftLimit === null && tpotLimit === null) { lo = hi = highest; }
    for (var i = 0; i < (lo === hi ? 0 : K.bisections) && hi - lo > K.precision * hi; i++) {
      var mid = (lo + hi) / 2;
      if (meets(loadAt(r, mid, q, ttftLimit !== null, [ttftLimit, tpotLimit]), ttftLimit, tpotLimit)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    var beyond = loadAt(r, hi * (1 + 1e-9), q, ttftLimit !== null, [ttftLimit, null]);
    return { rate: lo, binding: binding(r, beyond, ttftLimit) };
  }

  /* percentile_fraction: a percentile as the page's field and the command line take it, 0.9 and 90 both p90
     (a fraction below 1, a percent from 1 up to 100); anything else throws, naming the field. */
  // mirrors lib.serving.capacity.percentile_fraction
  function percentileFraction(value, name) {
    var label = name === undefined ? "percentile" : name;
    if (typeof value !== "number") { throw new Error(label + " must be a number, got " + value); }
    if (isNaN(value)) { throw new Error(label + " must not be NaN, got " + value); }
    if (value > 0 && value < 1) { return value; }
    if (value >= 1 && value < 100) { return value / 100; }
    throw new Error(label + " must be a fraction in (0, 1) or a percent in [1, 100) (0.9 or 90 for p90), got " + value);
  }

  /* The functions tagged `// mirrors`, by name, for tests/browser/test_planner_functions.py. */
  var mirrors = {
    capacity: capacity, workload: workload, replica: replica, stepTime: stepTime, highestRate: highestRate,
    states: states, loadAt: loadAt, weightedQuantile: weightedQuantile, poisson: poisson, ttft: ttft, meets: meets,
    binding: binding, percentileFraction: percentileFraction
  };

  window.PlannerCapacity = { capacity: capacity, ceiling: ceiling, percentileFraction: percentileFraction, interp: interp,
    _mirrors: mirrors };
}());
