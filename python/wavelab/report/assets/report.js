/* wavelab report: builds the page from the JSON in #report-data with plotly.js.
   No network: everything this script uses is in the same file. */
(function () {
  "use strict";

  var D = JSON.parse(document.getElementById("report-data").textContent);
  var app = document.getElementById("app");
  var PAGE = 25; // table rows per page
  /* a phone's screen: narrower margins, legends below, no mode bar (it
     would cover the titles; zoom by touch) */
  var NARROW = window.matchMedia("(max-width: 600px)").matches;
  var CONFIG = { responsive: true, displaylogo: false, displayModeBar: NARROW ? false : "hover" };
  var plotted = 0;

  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "cls") node.className = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }

  function fmt(v) {
    if (v === null || v === undefined) return "\u2013";
    if (typeof v === "number") {
      if (Number.isInteger(v)) return String(v);
      var a = Math.abs(v);
      if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(3);
      return String(Number(v.toPrecision(4)));
    }
    return String(v);
  }

  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined) return 1;
    if (b === null || b === undefined) return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  /* A sortable, filterable, paged table. opts: visible(col) -> bool,
     onRow(row), rowKey(row) for selection. */
  function Table(spec, opts) {
    opts = opts || {};
    var self = this;
    var sortCol = -1, sortDir = 1, page = 0, filter = "", selected = null;
    var wrap = el("div", { cls: "table-wrap" });
    var pager = el("div", { cls: "pager" });
    var search = el("input", { type: "search", placeholder: "filter rows" });
    search.addEventListener("input", function () { filter = search.value.toLowerCase(); page = 0; draw(); });
    this.node = el("div", {}, el("div", { cls: "controls" }, search), wrap, pager);
    this.select = function (key) { selected = key; draw(); };
    this.redraw = function () { draw(); };

    function rows() {
      var r = spec.rows;
      if (filter) {
        r = r.filter(function (row) {
          return row.some(function (v) { return v !== null && String(v).toLowerCase().indexOf(filter) >= 0; });
        });
      }
      if (sortCol >= 0) {
        r = r.slice().sort(function (a, b) { return sortDir * compare(a[sortCol], b[sortCol]); });
      }
      return r;
    }

    function draw() {
      var cols = spec.columns.map(function (c, i) { return i; })
        .filter(function (i) { return !opts.visible || opts.visible(spec.columns[i]); });
      var all = rows();
      var pages = Math.max(1, Math.ceil(all.length / PAGE));
      page = Math.min(page, pages - 1);
      var shown = all.slice(page * PAGE, (page + 1) * PAGE);
      var text = cols.map(function (i) {
        return spec.rows.some(function (r) { return typeof r[i] === "string"; });
      });
      var head = el("tr");
      cols.forEach(function (i, k) {
        var th = el("th", { text: spec.columns[i] });
        if (text[k]) th.classList.add("text");
        if (i === sortCol) th.classList.add(sortDir > 0 ? "sorted-asc" : "sorted-desc");
        th.addEventListener("click", function () {
          if (sortCol === i) sortDir = -sortDir; else { sortCol = i; sortDir = 1; }
          draw();
        });
        head.appendChild(th);
      });
      var body = el("tbody");
      shown.forEach(function (row) {
        var tr = el("tr");
        cols.forEach(function (i, k) {
          var td = el("td", { text: fmt(row[i]) });
          if (text[k]) td.classList.add("text");
          if (spec.columns[i] === "status" && typeof row[i] === "string") {
            td.classList.add("status-" + row[i].split(" ")[0]);
          }
          tr.appendChild(td);
        });
        if (opts.onRow && (!opts.clickable || opts.clickable(row))) {
          tr.classList.add("clickable");
          tr.addEventListener("click", function () { opts.onRow(row); });
        }
        if (opts.rowKey && selected !== null && opts.rowKey(row) === selected) tr.classList.add("selected");
        body.appendChild(tr);
      });
      wrap.replaceChildren(el("table", {}, el("thead", {}, head), body));
      var prev = el("button", { text: "\u2039 previous" });
      var next = el("button", { text: "next \u203A" });
      prev.disabled = page === 0;
      next.disabled = page >= pages - 1;
      prev.addEventListener("click", function () { page--; draw(); });
      next.addEventListener("click", function () { page++; draw(); });
      pager.replaceChildren(
        prev, el("span", { text: "page " + (page + 1) + " of " + pages + " (" + all.length + " rows)" }), next
      );
    }
    draw();
    return self;
  }

  /* ----- time series of one run ------------------------------------------------ */

  /* Titles, labels, colours and markers: wavelab.plot.spec and
     wavelab.plot.style, the same the PNGs are drawn with. */
  var SPEC = D.spec;
  var FIG = SPEC.figures, TR = SPEC.traces, COLORS = SPEC.palette;

  /* The colour and marker of group g (the i-th) of a plot coloured by
     parameter param: its algorithm's when param chooses the algorithm. */
  function groupStyle(param, g, i) {
    var algo = (D.sweep && D.sweep.algorithm_params) || [];
    var a = algo.indexOf(param) >= 0 ? SPEC.algorithms[g] : null;
    return a ? { color: a.color, symbol: a.symbol } : { color: COLORS[i % COLORS.length], symbol: "circle" };
  }

  /* The rules every sweep plot follows, as the PNGs (wavelab.plot.spec):
     colour by the algorithm first; an axis of delays ("_ms") logarithmic
     when its values span more than SPEC.log_span; an interval only from
     SPEC.min_seeds seeds or more, never below zero for a metric that is. */
  function defaultColour(sw, others) {
    var algo = sw.algorithm_params || [];
    return algo.length ? algo[0] : (others.length ? others[0] : "");
  }

  function isDelay(metric) { return /_ms(:|$)/.test(metric || ""); }

  function axisType(metric, values) {
    if (!isDelay(metric)) return "-";
    var v = values.filter(function (x) { return typeof x === "number" && isFinite(x); });
    if (!v.length) return "-";
    var lo = Math.min.apply(null, v), hi = Math.max.apply(null, v);
    return lo > 0 && hi > SPEC.log_span * lo ? "log" : "-";
  }

  /* The half-widths below and above mean of a seeds row's interval; the
     lower one stops at zero where the metric cannot go below it. */
  function interval(mean, low, high, nonNegative) {
    var down = low === null ? 0 : Math.abs(mean - low), up = high === null ? 0 : Math.abs(high - mean);
    if (nonNegative && mean >= 0) down = Math.min(down, mean);
    return [down, up];
  }

  /* The runs' markers (one trace per group, in the order of groups) are
     drawn faint where their group's means are drawn over them, full where
     they are all there is. */
  function fadeRuns(traces, groups, means) {
    groups.forEach(function (g, i) { if (means && means[g]) traces[i].marker.opacity = 0.35; });
  }

  function allNonNegative(sw, ci) {
    return ci >= 0 && sw.rows.every(function (r) { return r[ci] === null || typeof r[ci] !== "number" || r[ci] >= 0; });
  }

  function line(flow, i, y, key, extra) {
    var name = TR[key];
    var t = {
      type: "scatter", mode: "lines", x: flow.t, y: flow[y], name: flow.name + " " + name,
      legendgroup: flow.name, line: { color: flow.color, width: 1.4, dash: flow.dash },
      hovertemplate: "%{x:.3f} s: %{y}<extra>" + flow.name + " " + name + "</extra>"
    };
    Object.keys(extra || {}).forEach(function (k) { t[k] = extra[k]; });
    return t;
  }

  function shapes(run) {
    return (run.events || []).map(function (e) {
      return { type: "rect", xref: "x", yref: "paper", x0: e.start, x1: e.end, y0: 0, y1: 1,
        fillcolor: SPEC.outage, opacity: 0.2, line: { width: 0 }, layer: "below" };
    });
  }

  function layout(title, ytitle, run, extra) {
    var l = {
      title: { text: title, font: { size: 14 }, x: 0.01, xanchor: "left" }, height: NARROW ? 420 : 360,
      margin: NARROW ? { l: 44, r: 8, t: 36, b: 150 } : { l: 60, r: 20, t: 36, b: 96 },
      xaxis: { title: { text: FIG.rate.x }, zeroline: false },
      yaxis: { title: { text: ytitle }, rangemode: "tozero" },
      legend: { orientation: "h", x: 0, y: -0.3, yanchor: "top", font: { size: 11 } },
      shapes: shapes(run), hovermode: "closest"
    };
    Object.keys(extra || {}).forEach(function (k) { l[k] = extra[k]; });
    return l;
  }

  function figures(run) {
    var rate = [], win = [], rtt = [], seq = [], cdf = [];
    var y2 = false;
    run.flows.forEach(function (f, i) {
      rate.push(line(f, i, "goodput", "goodput"));
      rate.push(line(f, i, "send_rate", "send_rate", { line: { color: f.color, width: 1, dash: "dot" } }));
      if (f.burst) {
        win.push(line(f, i, "burst", "burst", { mode: "lines+markers", marker: { size: 3, symbol: f.symbol } }));
      }
      if (f.tx_time) {
        y2 = true;
        win.push(line(f, i, "tx_time", "tx_time", { yaxis: "y2", line: { color: f.color, width: 1, dash: "dash" } }));
      }
      if (f.cwnd.some(function (v) { return v !== null; })) {
        win.push(line(f, i, "cwnd", "cwnd"));
        win.push(line(f, i, "ssthresh", "ssthresh", { line: { color: f.color, width: 1, dash: "dash" } }));
      }
      rtt.push(line(f, i, "srtt", "srtt"));
      rtt.push(line(f, i, "rtt", "rtt", { mode: "markers", marker: { size: 3, color: f.color, symbol: f.symbol } }));
      rtt.push(line(f, i, "rto", "rto", { visible: "legendonly", line: { color: f.color, width: 1, dash: "dot" } }));
      if (f.rtt_cdf) {
        cdf.push({ type: "scatter", mode: "lines", x: f.rtt_cdf_ms, y: f.rtt_cdf, name: f.name, line: { shape: "hv", color: f.color, width: 1.4, dash: f.dash },
          hovertemplate: "%{y:.3f} of the samples below %{x} ms<extra>" + f.name + "</extra>" });
      }
      seq.push(line(f, i, "seq_sent", "seq_sent"));
      seq.push(line(f, i, "seq_acked", "seq_acked", { line: { color: SPEC.grey, width: 1, dash: "dash" } }));
      if (f.rtx_t && f.rtx_t.length) {
        seq.push({ type: "scatter", mode: "markers", x: f.rtx_t, y: f.rtx_seq, name: f.name + " " + TR.rtx,
          legendgroup: f.name, marker: { symbol: "circle-open", size: 6, color: SPEC.total },
          hovertemplate: "%{x:.4f} s: segment %{y}<extra>retransmission</extra>" });
      }
    });
    var winExtra = y2 ? { yaxis2: { title: { text: TR.tx_time }, overlaying: "y", side: "right", rangemode: "tozero" },
      margin: NARROW ? { l: 44, r: 44, t: 36, b: 150 } : { l: 60, r: 60, t: 36, b: 96 } } : {};
    if (run.capacity) {
      rate.push({ type: "scatter", mode: "lines", x: run.capacity.t, y: run.capacity.y, name: TR.capacity + " (" + run.capacity.name + ")",
        line: { color: SPEC.grey, width: 1.2, dash: "dash" }, hovertemplate: "%{x:.3f} s: %{y} Mbit/s<extra>" + TR.capacity + "</extra>" });
    }
    var rateExtra = run.rate_ceiling ? { yaxis: { title: { text: FIG.rate.y }, range: [0, run.rate_ceiling] } } : {};
    var rateTitle = FIG.rate.title + (run.rate_window ? " (averaged over " + run.rate_window + " s)" : "") +
      (run.rate_ceiling ? "; " + TR.off_scale + " above " + run.rate_ceiling + " Mbit/s" : "");
    return [
      { id: "rate", data: rate, layout: layout(rateTitle, FIG.rate.y, run, rateExtra) },
      { id: "window", data: win, layout: layout(FIG.window.title, FIG.window.y, run, winExtra) },
      { id: "rtt", data: rtt, layout: layout(FIG.rtt.title, FIG.rtt.y, run) },
      { id: "sequence", data: seq, layout: layout(FIG.sequence.title, FIG.sequence.y, run) },
      { id: "rtt-cdf", data: cdf, layout: layout(FIG["rtt-cdf"].title, FIG["rtt-cdf"].y, { events: [] },
        { xaxis: { title: { text: FIG["rtt-cdf"].x }, zeroline: false }, yaxis: { title: { text: FIG["rtt-cdf"].y }, range: [0, 1.02] } }) }
    ];
  }

  /* A run's data is gzip-compressed JSON in base64; inflate it on first use. */
  var unpacked = {};
  function unpack(key) {
    if (unpacked[key]) return unpacked[key];
    var bin = atob(D.runs[key].packed);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    unpacked[key] = new Response(stream).text().then(JSON.parse);
    return unpacked[key];
  }

  function RunViewer(runs, labels) {
    var keys = Object.keys(runs);
    var select = el("select", { id: "run-select" });
    keys.forEach(function (k) {
      select.appendChild(el("option", { value: k, text: k + (labels && labels[k] ? ": " + labels[k] : "") }));
    });
    var status = el("p", { cls: "note" });
    var grid = el("div", { cls: "plots" });
    var divs = {};
    var TIME = ["rate", "window", "rtt", "sequence"];
    TIME.concat(["rtt-cdf"]).forEach(function (id) {
      divs[id] = el("div", { cls: "plot", id: "plot-" + id });
      grid.appendChild(divs[id]);
    });
    var syncing = false;
    var current = null;
    var pending = Promise.resolve();
    function show(key) {
      if (!runs[key]) return pending;
      current = key;
      select.value = key;
      pending = unpack(key).then(function (run) {
        if (current !== key) return;
        draw(key, run);
      }).catch(function (e) {
        status.textContent = "cannot show run " + key + ": " + e;
        console.error(e);
      });
      return pending;
    }
    function draw(key, run) {
      status.textContent = run.label + " \u2014 " + run.flows.length + " flow(s)" +
        (run.complete ? "" : " \u2014 interrupted run (partial)") +
        ". Click a legend entry to hide a trace, double-click to isolate a flow; drag to zoom (the four plots against time follow).";
      figures(run).forEach(function (fig) {
        Plotly.react(divs[fig.id], fig.data, fig.layout, CONFIG);
      });
      plotted = Object.keys(divs).length;
      document.body.setAttribute("data-plotted-run", key);
    }
    function link(id) {
      var div = divs[id];
      return Plotly.newPlot(div, [], layout("", "", { events: [] }), CONFIG).then(function () {
        div.on("plotly_relayout", function (ev) {
          if (syncing) return;
          var r = {};
          if (ev["xaxis.range[0]"] !== undefined) {
            r["xaxis.range"] = [ev["xaxis.range[0]"], ev["xaxis.range[1]"]];
          } else if (ev["xaxis.autorange"]) {
            r["xaxis.autorange"] = true;
          } else return;
          syncing = true;
          Promise.all(TIME.filter(function (o) { return o !== id; }).map(function (o) {
            return Plotly.relayout(divs[o], r);
          })).then(function () { syncing = false; }, function () { syncing = false; });
        });
      });
    }
    select.addEventListener("change", function () { show(select.value); if (this.onSelect) this.onSelect(select.value); }.bind(this));
    this.node = el("div", {}, el("div", { cls: "controls" }, el("label", { text: "run" }), select), status, grid);
    this.show = show;
    this.current = function () { return current; };
    /* once the node is in the page (plotly sizes a plot from its container) */
    this.start = function () {
      TIME.forEach(link);
      Plotly.newPlot(divs["rtt-cdf"], [], layout("", "", { events: [] }), CONFIG);
      if (keys.length) show(keys[0]);
    };
  }

  /* ----- several runs overlaid ---------------------------------------------------- */

  /* The runs chosen in the list drawn together: one palette colour per run
     in the order chosen (as `wavelab compare` draws its PNGs), the flows of
     a run told apart by their line style. */
  function overlay() {
    var keys = Object.keys(D.runs || {});
    if (keys.length < 2) return;
    var s = section("Runs overlaid");
    s.appendChild(el("p", { cls: "note", text: "Choose the runs to overlay (Ctrl- or Shift-click to choose several): " +
      "one colour per run, one line style per flow." }));
    var select = el("select", { id: "overlay-select", multiple: "multiple", size: String(Math.min(keys.length, 6)) });
    var chosen = D.kind === "compare" ? keys : keys.slice(0, 2);
    keys.forEach(function (k) {
      var o = el("option", { value: k, text: D.runs[k].label || k });
      o.selected = chosen.indexOf(k) >= 0;
      select.appendChild(o);
    });
    var grid = el("div", { cls: "plots" });
    var IDS = ["rate", "window", "rtt", "rtt-cdf"];
    var divs = {};
    IDS.forEach(function (id) { divs[id] = el("div", { cls: "plot", id: "overlay-" + id }); grid.appendChild(divs[id]); });
    s.appendChild(el("div", { cls: "controls" }, el("label", { text: "runs" }), select));
    s.appendChild(grid);
    function draw() {
      var picked = Array.prototype.filter.call(select.options, function (o) { return o.selected; })
        .map(function (o) { return o.value; });
      return Promise.all(picked.map(unpack)).then(function (rs) {
        var tr = { rate: [], window: [], rtt: [], "rtt-cdf": [] };
        rs.forEach(function (run, i) {
          var label = D.runs[picked[i]].label || picked[i];
          run.flows.forEach(function (f0, n) {
            var f = {};
            Object.keys(f0).forEach(function (k) { f[k] = f0[k]; });
            f.color = COLORS[i % COLORS.length];
            f.dash = SPEC.dashes[n % SPEC.dashes.length];
            f.name = label + (run.flows.length > 1 ? " " + f0.name : "");
            tr.rate.push(line(f, n, "goodput", "goodput"));
            if (f.cwnd.some(function (v) { return v !== null; })) tr.window.push(line(f, n, "cwnd", "cwnd"));
            tr.rtt.push(line(f, n, "srtt", "srtt"));
            if (f.rtt_cdf) {
              tr["rtt-cdf"].push({ type: "scatter", mode: "lines", x: f.rtt_cdf_ms, y: f.rtt_cdf, name: f.name,
                line: { shape: "hv", color: f.color, width: 1.4, dash: f.dash },
                hovertemplate: "%{y:.3f} of the samples below %{x} ms<extra>" + f.name + "</extra>" });
            }
          });
        });
        var none = { events: [] };
        Plotly.react(divs.rate, tr.rate, layout(FIG.rate.title, FIG.rate.y, none), CONFIG);
        Plotly.react(divs.window, tr.window, layout(FIG.window.title, FIG.window.y, none), CONFIG);
        Plotly.react(divs.rtt, tr.rtt, layout(FIG.rtt.title, FIG.rtt.y, none), CONFIG);
        Plotly.react(divs["rtt-cdf"], tr["rtt-cdf"], layout(FIG["rtt-cdf"].title, FIG["rtt-cdf"].y, none,
          { xaxis: { title: { text: FIG["rtt-cdf"].x }, zeroline: false }, yaxis: { title: { text: FIG["rtt-cdf"].y }, range: [0, 1.02] } }), CONFIG);
        document.body.setAttribute("data-overlaid", picked.join(","));
      }).catch(function (e) {
        s.appendChild(el("p", { cls: "error", text: "cannot overlay the runs: " + e }));
        console.error(e);
      });
    }
    select.addEventListener("change", draw);
    draw();
  }

  /* ----- sections ---------------------------------------------------------------- */

  function section(title) {
    var s = el("section", {}, el("h2", { text: title }));
    app.appendChild(s);
    return s;
  }

  function header() {
    var h = el("header", {},
      el("h1", { text: D.title }),
      el("p", { text: D.subtitle }),
      el("p", { cls: "note", text: "generated " + D.generated + " by wavelab " + D.version }));
    app.appendChild(h);
    var main = el("main");
    app.appendChild(main);
    app = main;
  }

  function staticTables() {
    (D.tables || []).forEach(function (t) {
      var s = section(t.title);
      if (t.note) s.appendChild(el("p", { cls: "note", text: t.note }));
      s.appendChild(new Table(t).node);
    });
  }

  function images() {
    if (!D.images || !D.images.length) return;
    var s = section("Figures");
    var g = el("div", { cls: "figures" });
    D.images.forEach(function (im) {
      g.appendChild(el("figure", {}, el("img", { src: im.src, alt: im.title }), el("figcaption", { text: im.title })));
    });
    s.appendChild(g);
  }

  function sweep(getViewer) {
    var sw = D.sweep;
    var runCol = sw.columns.indexOf("run");
    var statusCol = sw.columns.indexOf("status");
    var perFlow = false;
    var s = section("Runs");
    if (sw.note) s.appendChild(el("p", { cls: "note", text: sw.note }));
    var toggle = el("input", { type: "checkbox", id: "per-flow" });
    s.appendChild(el("div", { cls: "controls" }, toggle, el("label", { "for": "per-flow", text: "show per-flow columns (metric:flow)" })));
    var table = new Table(sw, {
      visible: function (c) { return perFlow || c.indexOf(":") < 0 || sw.params.indexOf(c) >= 0; },
      onRow: function (row) {
        var viewer = getViewer();
        if (viewer) { viewer.show(row[runCol]); table.select(row[runCol]); }
      },
      clickable: function (row) { return D.runs && D.runs[row[runCol]] !== undefined; },
      rowKey: function (row) { return row[runCol]; }
    });
    toggle.addEventListener("change", function () { perFlow = toggle.checked; table.redraw(); });
    s.appendChild(table.node);
    s.appendChild(el("p", { cls: "note", text: "Click a row to show its run's time series below." }));

    /* a metric against a parameter */
    var p = section("Metric against parameter");
    var xs = el("select", { id: "scatter-x" }), ys = el("select", { id: "scatter-y" }), cs = el("select", { id: "scatter-color" });
    sw.params.concat(sw.metrics).forEach(function (c) { xs.appendChild(el("option", { value: c, text: c })); });
    sw.metrics.forEach(function (c) { ys.appendChild(el("option", { value: c, text: c })); });
    cs.appendChild(el("option", { value: "", text: "(none)" }));
    sw.params.forEach(function (c) { cs.appendChild(el("option", { value: c, text: c })); });
    var pick = ["recovery_s", "goodput_mbps"].filter(function (m) { return sw.metrics.indexOf(m) >= 0; });
    if (pick.length) ys.value = pick[0];
    /* colour by the algorithm, else by a second parameter, never by the
       seed (the seeds' means are drawn instead) */
    var colourable = sw.params.filter(function (c) { return c !== "seed"; });
    cs.value = defaultColour(sw, colourable.slice(1));
    var div = el("div", { cls: "plot", id: "plot-scatter" });
    p.appendChild(el("div", { cls: "controls" }, el("label", { text: "x" }), xs, el("label", { text: "y" }), ys,
      el("label", { text: "colour" }), cs));
    p.appendChild(div);
    function scatter() {
      var xi = sw.columns.indexOf(xs.value), yi = sw.columns.indexOf(ys.value), ci = sw.columns.indexOf(cs.value);
      var groups = {};
      sw.rows.forEach(function (r) {
        if (statusCol >= 0 && String(r[statusCol]).indexOf("ok") !== 0) return;
        var g = ci >= 0 ? fmt(r[ci]) : "runs";
        (groups[g] = groups[g] || { x: [], y: [], key: [] });
        groups[g].x.push(r[xi]); groups[g].y.push(r[yi]); groups[g].key.push(r[runCol]);
      });
      var names = Object.keys(groups);
      var traces = names.map(function (g, i) {
        return { type: "scatter", mode: "markers", name: cs.value ? cs.value + "=" + g : g, x: groups[g].x, y: groups[g].y,
          customdata: groups[g].key, marker: { size: 8, color: groupStyle(cs.value, g, i).color, symbol: groupStyle(cs.value, g, i).symbol, opacity: 0.8 },
          hovertemplate: "%{x}: %{y}<br>run %{customdata}<extra></extra>" };
      });
      var runTraces = traces.length, clip = allNonNegative(sw, yi);
      /* the seeds' mean and 95 % interval per parameter point with
         SPEC.min_seeds seeds or more, as error bars (fewer: its runs alone) */
      var sd = sw.seeds;
      var sx = sd ? sd.columns.indexOf(xs.value) : -1, sc = sd && cs.value ? sd.columns.indexOf(cs.value) : -1;
      if (sd && sx >= 0 && (!cs.value || sc >= 0)) {
        var mi = sd.columns.indexOf("metric"), mean = sd.columns.indexOf("mean");
        var lo = sd.columns.indexOf("ci95_low"), hi = sd.columns.indexOf("ci95_high"), n = sd.columns.indexOf("n");
        var means = {};
        sd.rows.forEach(function (r) {
          if (r[mi] !== ys.value || r[mean] === null || !(r[n] >= SPEC.min_seeds)) return;
          var g = sc >= 0 ? fmt(r[sc]) : "runs";
          var m = (means[g] = means[g] || { x: [], y: [], up: [], down: [], n: [] });
          var e = interval(r[mean], r[lo], r[hi], clip);
          m.x.push(r[sx]); m.y.push(r[mean]); m.n.push(r[n]);
          m.up.push(e[1]); m.down.push(e[0]);
        });
        Object.keys(means).forEach(function (g) {
          var i = names.indexOf(g), m = means[g];
          traces.push({ type: "scatter", mode: "markers", name: (cs.value ? cs.value + "=" + g : "") + " mean, 95 % CI",
            x: m.x, y: m.y, customdata: m.n, marker: { size: 11, symbol: groupStyle(cs.value, g, i < 0 ? 0 : i).symbol, color: groupStyle(cs.value, g, i < 0 ? 0 : i).color },
            error_y: { type: "data", symmetric: false, array: m.up, arrayminus: m.down, thickness: 1.5, width: 6 },
            hovertemplate: "%{x}: mean %{y} over %{customdata} seeds<extra>95 % CI</extra>" });
        });
      }
      fadeRuns(traces, names, means);
      var all = function (axis) { return [].concat.apply([], traces.slice(0, runTraces).map(function (t) { return t[axis]; })); };
      Plotly.react(div, traces, { height: 360, margin: NARROW ? { l: 44, r: 8, t: 20, b: 50 } : { l: 60, r: 20, t: 20, b: 50 },
        legend: NARROW ? { orientation: "h", x: 0, y: -0.25, yanchor: "top" } : {},
        xaxis: { title: { text: xs.value }, type: axisType(xs.value, all("x")) },
        yaxis: { title: { text: ys.value }, type: axisType(ys.value, all("y")) }, hovermode: "closest" }, CONFIG);
    }
    [xs, ys, cs].forEach(function (sel) { sel.addEventListener("change", scatter); });
    scatter();
    throughputDelay(sw, getViewer, function () { return table; });
    div.on("plotly_click", function (ev) {
      var key = ev.points && ev.points[0] && ev.points[0].customdata;
      var viewer = getViewer();
      if (key && viewer && D.runs[key]) { viewer.show(key); table.select(key); }
    });
    return table;
  }

  /* Pantheon's throughput-delay plot: mean goodput against a delay, the
     delay axis reversed (better is up and to the right); with seeds, each
     parameter point's mean with its 95 % intervals both ways */
  function throughputDelay(sw, getViewer, getTable) {
    var G = "goodput_mbps";
    var delays = sw.metrics.filter(function (m) { return /_ms$/.test(m) && m.indexOf(":") < 0 && m !== "min_rtt_ms"; });
    if (sw.columns.indexOf(G) < 0 || !delays.length) return;
    var p = section("Throughput against delay");
    var ds = el("select", { id: "td-delay" }), cs = el("select", { id: "td-color" });
    delays.forEach(function (c) { ds.appendChild(el("option", { value: c, text: c })); });
    if (delays.indexOf("rtt_p95_ms") >= 0) ds.value = "rtt_p95_ms";
    var params = sw.params.filter(function (c) { return c !== "seed"; });
    cs.appendChild(el("option", { value: "", text: "(none)" }));
    params.forEach(function (c) { cs.appendChild(el("option", { value: c, text: c })); });
    cs.value = defaultColour(sw, params);
    var div = el("div", { cls: "plot", id: "plot-throughput-delay" });
    p.appendChild(el("div", { cls: "controls" }, el("label", { text: "delay" }), ds, el("label", { text: "colour" }), cs));
    p.appendChild(div);
    p.appendChild(el("p", { cls: "note", text: "The delay axis is reversed, as Pantheon draws it: better is up and to the right." +
      (sw.seeds ? " Large markers: each parameter point's mean over its seeds with its 95 % confidence intervals, where it has " +
        SPEC.min_seeds + " seeds or more; small markers: single runs (faint where a mean is drawn)." : "") +
      " The delay axis is logarithmic when the delays span more than a factor of " + SPEC.log_span + "." }));
    function draw() {
      var runCol = sw.columns.indexOf("run"), st = sw.columns.indexOf("status");
      var xi = sw.columns.indexOf(ds.value), yi = sw.columns.indexOf(G), ci = sw.columns.indexOf(cs.value);
      var groups = {}, order = [];
      sw.rows.forEach(function (r) {
        if (st >= 0 && String(r[st]).indexOf("ok") !== 0) return;
        var g = ci >= 0 ? fmt(r[ci]) : "runs";
        if (!groups[g]) { groups[g] = { x: [], y: [], key: [] }; order.push(g); }
        groups[g].x.push(r[xi]); groups[g].y.push(r[yi]); groups[g].key.push(r[runCol]);
      });
      var traces = order.map(function (g, i) {
        return { type: "scatter", mode: "markers", name: cs.value ? cs.value + "=" + g : g, x: groups[g].x, y: groups[g].y,
          customdata: groups[g].key, marker: { size: 7, color: groupStyle(cs.value, g, i).color, symbol: groupStyle(cs.value, g, i).symbol, opacity: 0.85 },
          hovertemplate: "%{x} ms, %{y} Mbit/s<br>run %{customdata}<extra></extra>" };
      });
      var runTraces = traces.length, clipX = allNonNegative(sw, xi), clipY = allNonNegative(sw, yi);
      var sd = sw.seeds;
      if (sd) {
        var mi = sd.columns.indexOf("metric");
        var fixed = ["metric", "unit", "n", "mean", "std", "ci95_low", "ci95_high"];
        var keyCols = sd.columns.map(function (c, i) { return i; }).filter(function (i) { return fixed.indexOf(sd.columns[i]) < 0; });
        var col = function (name) { return sd.columns.indexOf(name); };
        var byKey = {};
        sd.rows.forEach(function (r) {
          if (r[mi] !== ds.value && r[mi] !== G) return;
          var k = JSON.stringify(keyCols.map(function (i) { return r[i]; }));
          (byKey[k] = byKey[k] || {})[r[mi] === G ? "y" : "x"] = r;
        });
        var sc = cs.value ? col(cs.value) : -1;
        var means = {};
        Object.keys(byKey).forEach(function (k) {
          var b = byKey[k];
          if (!b.x || !b.y || b.x[col("mean")] === null || b.y[col("mean")] === null) return;
          if (!(b.x[col("n")] >= SPEC.min_seeds && b.y[col("n")] >= SPEC.min_seeds)) return;
          var g = sc >= 0 ? fmt(b.x[sc]) : "runs";
          var m = (means[g] = means[g] || { x: [], y: [], xu: [], xd: [], yu: [], yd: [], n: [] });
          var half = function (r, clip) { return interval(r[col("mean")], r[col("ci95_low")], r[col("ci95_high")], clip); };
          var ex = half(b.x, clipX), ey = half(b.y, clipY);
          m.x.push(b.x[col("mean")]); m.y.push(b.y[col("mean")]); m.n.push(b.y[col("n")]);
          m.xu.push(ex[1]); m.xd.push(ex[0]); m.yu.push(ey[1]); m.yd.push(ey[0]);
        });
        Object.keys(means).forEach(function (g) {
          var i = order.indexOf(g), m = means[g];
          traces.push({ type: "scatter", mode: "markers", name: (cs.value ? cs.value + "=" + g + " " : "") + "mean, 95 % CI",
            x: m.x, y: m.y, customdata: m.n, marker: { size: 11, symbol: groupStyle(cs.value, g, i < 0 ? 0 : i).symbol, color: groupStyle(cs.value, g, i < 0 ? 0 : i).color },
            error_x: { type: "data", symmetric: false, array: m.xu, arrayminus: m.xd, thickness: 1.2, width: 4 },
            error_y: { type: "data", symmetric: false, array: m.yu, arrayminus: m.yd, thickness: 1.2, width: 4 },
            hovertemplate: "%{x} ms, %{y} Mbit/s: mean over %{customdata} seeds<extra>95 % CI</extra>" });
        });
      }
      fadeRuns(traces, order, means);
      var shown = [].concat.apply([], traces.slice(0, runTraces).map(function (t) { return t.x; }));
      var type = axisType(ds.value, shown);
      Plotly.react(div, traces, { height: 420, margin: NARROW ? { l: 44, r: 8, t: 20, b: 50 } : { l: 60, r: 20, t: 20, b: 50 },
        legend: NARROW ? { orientation: "h", x: 0, y: -0.25, yanchor: "top" } : {},
        xaxis: { title: { text: ds.value + (type === "log" ? " (log, reversed)" : " (reversed)") }, autorange: "reversed", type: type },
        yaxis: { title: { text: "goodput (Mbit/s)" }, rangemode: "tozero" }, hovermode: "closest" }, CONFIG);
    }
    [ds, cs].forEach(function (sel) { sel.addEventListener("change", draw); });
    draw();
    div.on("plotly_click", function (ev) {
      var key = ev.points && ev.points[0] && ev.points[0].customdata;
      var viewer = getViewer();
      if (typeof key === "string" && viewer && D.runs[key]) { viewer.show(key); getTable().select(key); }
    });
  }

  function runs() {
    var keys = Object.keys(D.runs || {});
    if (!keys.length) return null;
    var s = section(keys.length === 1 ? "Time series" : "Time series of a run");
    if (D.omitted_runs) {
      s.appendChild(el("p", { cls: "note", text: D.omitted_runs +
        " more runs are in the results but their series are not embedded (wavelab report --max-runs)." }));
    }
    var labels = {};
    keys.forEach(function (k) { labels[k] = D.runs[k].label; });
    var v = new RunViewer(D.runs, labels);
    s.appendChild(v.node);
    v.start();
    return v;
  }

  try {
    header();
    var viewer = null;
    var table = null;
    if (D.kind === "sweep") {
      // the table and the scatter select runs of the viewer built below them
      table = sweep(function () { return viewer; });
    } else {
      staticTables();
      images();
    }
    viewer = runs();
    overlay();
    if (viewer && table) {
      viewer.onSelect = function (k) { table.select(k); };
      table.select(viewer.current());
    }
    window.wavelabReport = { ready: true, runs: Object.keys(D.runs || {}).length, plots: function () { return plotted; } };
    document.body.setAttribute("data-ready", "1");
  } catch (e) {
    app.appendChild(el("p", { cls: "error", text: "This report failed to render: " + e }));
    console.error(e);
    throw e;
  }
})();
