/* Report figures drawn with plotly.js from the report document embedded in the page
   (<script type="application/json" id="report-data">) and the words the page adds to it (id="report-display":
   measure and coefficient names, the correlation warnings and flags, made by metaeval/core/display.py).
   No network access: plotly.js is served from static/ or inlined in the downloaded HTML report. Each figure is
   skipped when its section is absent.

   Readability rules (issue 13): every axis has a title; system names sit on a y axis with an automatic margin
   (long names wrapped); one colour-blind-safe palette (Okabe & Ito) everywhere, a diverging orange-white-blue scale
   centred at 0 for correlations with the number written in each cell; lines differ in colour, dash, width and
   marker so none hides another; numbers in one format (fmt, fmtP: the same as display.fmt_number / fmt_p).
   Names are text, never markup: plotly.js reads <a href>, <b>, <br> ... in the strings it draws, so every name from
   the data (systems, measures, criteria, raters, models, prompt styles) goes through esc (or wrap, which escapes)
   before it reaches a label, a legend, a title or a hover, and never into a hovertemplate itself (a "%{...}" in a
   name would be read as a placeholder): names reach the hover through customdata.

   The pairwise section (when the run had a judgment set) has its own criterion switch (#criterion-switch): the
   forest plot of Elo and Bradley-Terry, the win-fraction heatmap (diverging scale centred at 0.5) and the
   consistency curves are redrawn for the chosen criterion, and its win/tie/loss table is shown. */
(function () {
  "use strict";
  var node = document.getElementById("report-data");
  if (!node) { return; }
  var report = JSON.parse(node.textContent);
  var shown = document.getElementById("report-display");
  var words = shown ? JSON.parse(shown.textContent) : {};
  var MISSING = "\u2013";
  var DECIMALS = words.decimals || 4;
  var P_DECIMALS = words.p_decimals || 3;

  /* One number as the report shows it: 4 decimals (toFixed: ties away from zero, on the exact value), "< 0.0001"
     for a tiny positive value ("> -0.0001" negative), the en dash for a missing one; `decimals` as
     display.fmt_number's keyword (the win-fraction cells use 2). */
  function fmt(v, decimals) {
    var d = (typeof decimals === "number") ? decimals : DECIMALS;
    if (v === null || v === undefined) { return MISSING; }
    if (typeof v === "boolean") { return v ? "yes" : "no"; }
    var x = Number(v);
    if (isNaN(x)) { return MISSING; }
    if (!isFinite(x)) { return x > 0 ? "inf" : "-inf"; }
    var smallest = Math.pow(10, -d);
    if (x !== 0 && Math.abs(x) < smallest / 2) {
      return x > 0 ? "< " + smallest.toFixed(d) : "> -" + smallest.toFixed(d);
    }
    return x.toFixed(d);
  }
  /* A p-value: "< 0.001" below 0.001, else 3 decimals. */
  function fmtP(v) {
    if (v === null || v === undefined) { return MISSING; }
    var x = Number(v);
    if (isNaN(x)) { return MISSING; }
    var smallest = Math.pow(10, -P_DECIMALS);
    return x < smallest ? "< " + smallest.toFixed(P_DECIMALS) : x.toFixed(P_DECIMALS);
  }
  function withP(p) { var t = fmtP(p); return t.charAt(0) === "<" ? "p " + t : "p = " + t; }

  window.PerSEvalReport = { fmt: fmt, fmtP: fmtP };
  if (typeof Plotly === "undefined") { return; }

  // Okabe & Ito (2008): distinguishable with every common colour-vision deficiency; yellow last (weak on white)
  var PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442"];
  var DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"];
  var SYMBOLS = ["circle", "square", "diamond", "triangle-up", "triangle-down", "star", "cross", "x"];
  // orange (negative) - white (0) - blue (positive), from the same palette
  var DIVERGING = [[0, "#D55E00"], [0.25, "#EBAE80"], [0.5, "#F7F7F7"], [0.75, "#7FB8D8"], [1, "#0072B2"]];
  var config = { displaylogo: false, responsive: true, toImageButtonOptions: { format: "svg" } };
  var font = { family: "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif", size: 13, color: "#1d2433" };
  var measureNames = words.measures || {};
  var methodNames = words.methods || { pearson: "Pearson r", spearman: "Spearman \u03c1", kendall: "Kendall \u03c4" };
  var allMeasures = Object.keys(measureNames);

  /* A name as plotly text: & < > as entities, so that plotly draws the characters instead of reading tags. */
  function esc(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function label(measure) { return esc(measureNames[measure] || measure); }
  function colour(measure) {
    var i = allMeasures.indexOf(measure);
    return PALETTE[(i < 0 ? 0 : i) % PALETTE.length];
  }
  function num(v) { return (v === null || v === undefined) ? NaN : Number(v); }
  function unique(values) {
    var seen = {}, out = [];
    values.forEach(function (v) { if (!seen[v]) { seen[v] = true; out.push(v); } });
    return out;
  }
  /* Text over lines of at most `width` characters, broken after spaces, _ - / or between camel-case words. */
  function lines(text, width) {
    if (text.length <= width) { return [text]; }
    var parts = text.split(/(?<=[\s_\-\/.])|(?<=[a-z0-9])(?=[A-Z])/), out = [], line = "";
    parts.forEach(function (part) {
      if (line && (line + part).length > width) { out.push(line); line = part; } else { line += part; }
    });
    if (line) { out.push(line); }
    return out.map(function (l) { return l.trim(); });
  }
  /* A name as plotly text (escaped), a long one over lines of at most `width` (24) characters. */
  function wrap(name, width) { return lines(String(name), width || 24).map(esc).join("<br>"); }

  /* A figure narrower than this (a phone) gets its legend in rows under the plot, not in a column beside it. */
  var NARROW = 640;
  function narrow(id) {
    var el = document.getElementById(id);
    return !!el && el.clientWidth > 0 && el.clientWidth < NARROW;
  }

  function layoutWith(layout, small, traces) {
    layout.font = font;
    layout.paper_bgcolor = "#ffffff";
    layout.plot_bgcolor = "#ffffff";
    layout.margin = layout.margin || { l: 10, r: 10, t: 60, b: 10, pad: 4 };
    layout.height = layout.height || 460;
    layout.hoverlabel = { font: { family: font.family, size: 12 } };
    if (layout.title && typeof layout.title === "object") {
      layout.title.x = 0; layout.title.xanchor = "left"; layout.title.xref = "container"; layout.title.pad = { l: 4 };
    }
    if (small) {
      var named = traces.filter(function (t) { return t.showlegend !== false && t.type !== "heatmap"; }).length;
      var title = layout.legend && layout.legend.title;
      layout.legend = { orientation: "h", x: 0, xanchor: "left", xref: "container", y: 0, yanchor: "bottom",
                        yref: "container", title: title ? { text: title.text, side: "top" } : undefined };
      layout.height = Math.max(layout.height || 0, 460) + 22 * named;
      if (layout.title && layout.title.text) { layout.title.text = lines(layout.title.text, 34).join("<br>"); }
      layout.margin.t = 40 + 22 * ((layout.title && layout.title.text) || "").split("<br>").length;
    }
    ["xaxis", "yaxis"].forEach(function (axis) {
      if (layout[axis]) {
        layout[axis].automargin = true;
        layout[axis].gridcolor = layout[axis].gridcolor || "#e6e9ef";
        layout[axis].linecolor = "#8a93a6";
        layout[axis].showline = true;
        layout[axis].title = layout[axis].title || {};
        layout[axis].title.standoff = 10;
      }
    });
    return layout;
  }

  // Figures built in Python (metaeval/core/perseval/pairs_figures.py): plotly JSON by element id, drawn as given.
  var built = document.getElementById("report-figures");
  var pythonFigures = built ? JSON.parse(built.textContent) || {} : {};
  Object.keys(pythonFigures).forEach(function (id) {
    var el = document.getElementById(id);
    if (el) { Plotly.newPlot(el, pythonFigures[id].data, pythonFigures[id].layout, config); }
  });

  function draw(id, traces, layout) {
    var el = document.getElementById(id);
    if (!el) { return; }
    if (!traces.length) { el.textContent = "No data for this figure."; return; }
    return Plotly.react(el, traces, layoutWith(layout, narrow(id), traces), config);
  }

  // 1. Leaderboard: PerSEval per system (rows, best first) and measure (markers), with bootstrap intervals.
  var board = report.leaderboard || [];
  (function () {
    var measures = unique(board.map(function (r) { return r.measure; }));
    var systems = unique(board.map(function (r) { return r.system; }));
    var first = {};
    board.forEach(function (r) { if (r.measure === measures[0]) { first[r.system] = num(r.value); } });
    var key = function (s) { return isNaN(first[s]) || first[s] === undefined ? -Infinity : first[s]; };
    systems.sort(function (a, b) { return key(b) - key(a); });
    var lo = 0, hi = 0;
    board.forEach(function (r) {
      [num(r.value), num(r.low), num(r.high)].forEach(function (v) {
        if (!isNaN(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      });
    });
    hi = Math.max(hi, lo + 0.05);
    var pad = 0.03 * (hi - lo);
    var names = systems.map(function (s) { return wrap(s); });
    var traces = measures.map(function (measure, i) {
      var rows = systems.map(function (s) {
        return board.find(function (r) { return r.system === s && r.measure === measure; }) || {};
      });
      var hasCi = rows.some(function (r) { return r.low !== null && r.low !== undefined; });
      var trace = {
        type: "scatter", mode: "markers", orientation: "h", name: label(measure), y: names,
        x: rows.map(function (r) { return num(r.value); }),
        marker: { color: colour(measure), symbol: SYMBOLS[i % SYMBOLS.length], size: 10,
                  line: { color: "#ffffff", width: 1 } },
        customdata: rows.map(function (r, k) { return [esc(systems[k]), fmt(r.value), fmt(r.low), fmt(r.high)]; }),
        hovertemplate: "<b>%{customdata[0]}</b><br>" + label(measure) + ": %{customdata[1]}" +
          (hasCi ? "<br>interval %{customdata[2]} to %{customdata[3]}" : "") + "<extra></extra>"
      };
      if (hasCi) {
        trace.error_x = {
          type: "data", symmetric: false, color: colour(measure), thickness: 1.6, width: 4,
          array: rows.map(function (r) { return num(r.high) - num(r.value); }),
          arrayminus: rows.map(function (r) { return num(r.value) - num(r.low); })
        };
      }
      return trace;
    });
    draw("fig-leaderboard", traces, {
      title: { text: (report.leaderboard_label || "PerSEval") + " per system" },
      scattermode: "group", scattergap: 0.35,
      height: Math.max(360, 150 + systems.length * Math.max(30, 12 * measures.length)),
      xaxis: { title: { text: (report.leaderboard_label || "PerSEval") +
                        (narrow("fig-leaderboard") ? "" : " (0 = not personalised; higher is better)") },
               range: [lo - pad, hi + pad], zeroline: true, zerolinecolor: "#8a93a6", zerolinewidth: 1.5 },
      yaxis: { title: { text: "System" }, type: "category", autorange: "reversed", categoryorder: "array",
               categoryarray: names, showgrid: true },
      legend: { title: { text: "Measure" }, traceorder: "normal" }
    });
  })();

  // 2. Correlation heatmap: automatic measure x HJ measure for the chosen coefficient, the number in each cell.
  var correlations = report.correlations || [];
  function drawHeatmap(method) {
    var cells = correlations.filter(function (c) { return c.method === method; });
    if (!cells.length) { draw("fig-heatmap", [], {}); return; }
    var autos = unique(cells.map(function (c) { return c.auto_measure; }));
    var humans = unique(cells.map(function (c) { return c.hj_measure; }));
    var flags = (words.flags || {})[method] || {};
    // on a narrow screen the longer list runs down the page; in narrow cells only the coefficient is written
    // (the interval and p-value stay in the hover and in the grid table)
    var small = narrow("fig-heatmap"), across = small && autos.length > humans.length ? humans : autos;
    var el = document.getElementById("fig-heatmap");
    var cellWidth = el && el.clientWidth > 0 ? (el.clientWidth - 260) / Math.max(1, across.length) : 200;
    var compact = cellWidth < 95;
    function cell(a, h) {
      return cells.find(function (x) { return x.auto_measure === a && x.hj_measure === h; });
    }
    var z = [], text = [], custom = [];
    humans.forEach(function (h) {
      var zr = [], tr = [], cr = [];
      autos.forEach(function (a) {
        var c = cell(a, h);
        var warn = c ? (flags[a + " | " + h] || []) : [];
        var r = c ? num(c.r) : NaN;
        zr.push(r);
        if (!c) { tr.push(""); cr.push(["", "", "", "", "", "", label(a), label(h)]); return; }
        var head = isNaN(r) ? "undefined" : "<b>" + fmt(r) + "</b>";
        var ci = (c.low !== null && c.low !== undefined) ? "[" + fmt(c.low) + ", " + fmt(c.high) + "]" : "";
        tr.push(head + (warn.length ? " \u26a0" : "") + (compact ? "" : (ci ? "<br>" + ci : "") + "<br>" + withP(c.p)));
        cr.push([fmt(r), ci || MISSING, withP(c.p), String(c.n), c.strength || MISSING,
                 warn.length ? "<br>\u26a0 " + warn.join(", ") : "", label(a), label(h)]);
      });
      z.push(zr); text.push(tr); custom.push(cr);
    });
    var name = methodNames[method] || method;
    var xTitle = "Automatic measure (PerSEval-X)", yTitle = "Human judgment (HJ-Y)", xs = autos, ys = humans;
    if (across !== autos) {  // transposed: automatic measures down, HJ measures across
      var flip = function (m) { return m[0].map(function (_, j) { return m.map(function (row) { return row[j]; }); }); };
      z = flip(z); text = flip(text); custom = flip(custom);
      xs = humans; ys = autos; xTitle = "Human judgment (HJ-Y)"; yTitle = "Automatic measure (X)";
    }
    draw("fig-heatmap", [{
      type: "heatmap", x: xs.map(label), y: ys.map(label), z: z, text: text, texttemplate: "%{text}",
      textfont: { size: compact ? 10 : (cellWidth < 130 ? 11 : 12) }, customdata: custom, zmin: -1, zmax: 1, colorscale: DIVERGING, xgap: 3,
      ygap: 3,
      colorbar: { title: { text: name }, tickvals: [-1, -0.5, 0, 0.5, 1], ticktext: ["-1", "-0.5", "0", "0.5", "1"],
                  outlinewidth: 0, thickness: 14 },
      hovertemplate: "<b>%{customdata[6]}</b> vs <b>%{customdata[7]}</b><br>" + name + " = %{customdata[0]} %{customdata[1]}<br>" +
        "%{customdata[2]}, n = %{customdata[3]} systems<br>strength: %{customdata[4]}%{customdata[5]}<extra></extra>"
    }], {
      title: { text: "Correlation with human judgment \u00b7 " + name },
      height: Math.max(300, 170 + (compact ? 60 : 95) * ys.length),
      xaxis: { title: { text: xTitle }, type: "category", showgrid: false },
      yaxis: { title: { text: yTitle }, type: "category", autorange: "reversed",
               showgrid: false }
    });
  }

  // 3. beta ablation: the chosen coefficient against beta, one line per (automatic, HJ) pair.
  var beta = report.beta_ablation || [];
  function drawBeta(method) {
    var pairs = unique(beta.map(function (r) { return r.auto_measure + "\u0000" + r.hj_measure; }));
    var humans = unique(beta.map(function (r) { return r.hj_measure; }));
    var name = methodNames[method] || method;
    draw("fig-beta", pairs.map(function (key, i) {
      var parts = key.split("\u0000");
      var rows = beta.filter(function (r) { return r.auto_measure === parts[0] && r.hj_measure === parts[1]; });
      // widest line and largest marker first, so lines on top of each other show as nested stripes
      var width = Math.max(5 - 0.7 * i, 1.5), size = Math.max(12 - 1.5 * i, 6);
      return {
        type: "scatter", mode: "lines+markers", name: label(parts[0]) + " vs " + label(parts[1]),
        x: rows.map(function (r) { return num(r.beta); }), y: rows.map(function (r) { return num(r[method]); }),
        line: { color: colour(parts[0]), dash: DASHES[(i + humans.indexOf(parts[1])) % DASHES.length], width: width },
        marker: { symbol: SYMBOLS[i % SYMBOLS.length], size: size, color: colour(parts[0]),
                  line: { color: "#ffffff", width: 1 } },
        customdata: rows.map(function (r) { return fmt(r[method]); }),
        hovertemplate: label(parts[0]) + " vs " + label(parts[1]) + "<br>\u03b2 = %{x}: " + name +
          " = %{customdata}<extra></extra>"
      };
    }), {
      title: { text: "\u03b2 ablation \u00b7 " + name },
      xaxis: { title: { text: "\u03b2 (exponent of the EDP penalty)" }, dtick: 0.1 },
      yaxis: { title: { text: name + " with HJ" } },
      legend: { title: { text: "Automatic vs HJ measure" } }
    });
  }

  // 4. Stability: epsilon-rank stability (Spearman) per share of the data, one line per measure and definition.
  (function () {
    var stab = report.stability || [];
    var keys = unique(stab.map(function (r) { return r.measure + "\u0000" + r.definition; }));
    var traces = keys.map(function (key) {
      var parts = key.split("\u0000"), paper = parts[1] === "paper";
      var rows = stab.filter(function (r) {
        return r.measure === parts[0] && r.definition === parts[1] && r.stability !== null && r.stability !== undefined;
      });
      var i = allMeasures.indexOf(parts[0]);
      return {
        type: "scatter", mode: "lines+markers", name: label(parts[0]) + " (" + (paper ? "paper" : "authors' code") + ")",
        x: rows.map(function (r) { return num(r.level); }), y: rows.map(function (r) { return num(r.stability); }),
        // the paper's: a wide pale band; the authors': a thin dashed line in full colour, drawn on top of it
        opacity: paper ? 0.45 : 1,
        line: { color: colour(parts[0]), dash: paper ? "solid" : "dash", width: paper ? 6 : 2 },
        marker: paper ? { symbol: SYMBOLS[(i < 0 ? 0 : i) % SYMBOLS.length], size: 13, color: colour(parts[0]) }
                      : { symbol: SYMBOLS[(i < 0 ? 0 : i) % SYMBOLS.length] + "-open", size: 9, color: colour(parts[0]),
                          line: { width: 2 } },
        customdata: rows.map(function (r) { return [fmt(r.stability), label(parts[0]) + " (" + esc(parts[1]) + ")"]; }),
        hovertemplate: "%{customdata[1]}<br>%{x} % of the data: %{customdata[0]}<extra></extra>"
      };
    }).filter(function (t) { return t.x.length; });
    draw("fig-stability", traces, {
      title: { text: report.stability_label || "Rank stability per sampling level" },
      xaxis: { title: { text: "Share of the data scored (%)" }, autorange: "reversed" },
      yaxis: { title: { text: "\u03b5-rank stability (" + (report.stability_axis || "Spearman") + ")" } },
      legend: { title: { text: "Measure (definition)" } }
    });
  })();

  // 5. Rater agreement: each rater's agreement with the others, and alpha without that rater.
  (function () {
    var raters = (report.raters && report.raters.per_rater) || [];
    var alpha = report.raters ? num(report.raters.alpha) : NaN;
    var ids = raters.map(function (r) { return esc(r.rater); });
    var layout = {
      title: { text: "Rater agreement" + (isNaN(alpha) ? "" : " (Krippendorff's \u03b1, ordinal: " + fmt(alpha) + ")") },
      xaxis: { title: { text: "Rater" }, type: "category", tickangle: ids.length > 16 ? -45 : 0 },
      yaxis: { title: { text: "Agreement (\u03c1 or \u03b1)" } },
      legend: { orientation: "h", x: 0, y: 1.0, yanchor: "bottom" }
    };
    if (!isNaN(alpha)) {
      layout.shapes = [{ type: "line", xref: "paper", x0: 0, x1: 1, y0: alpha, y1: alpha,
                         line: { color: PALETTE[3], width: 1.5, dash: "dot" } }];
    }
    draw("fig-raters", raters.length ? [
      { type: "bar", name: "Spearman \u03c1 with the others' mean", x: ids, marker: { color: PALETTE[0] },
        y: raters.map(function (r) { return num(r.agreement); }),
        customdata: raters.map(function (r) { return fmt(r.agreement); }),
        hovertemplate: "%{x}: \u03c1 = %{customdata}<extra></extra>" },
      { type: "scatter", mode: "markers", name: "\u03b1 without this rater (dotted: \u03b1 with everyone)", x: ids,
        y: raters.map(function (r) { return num(r.alpha_without); }),
        customdata: raters.map(function (r) { return fmt(r.alpha_without); }),
        hovertemplate: "%{x}: \u03b1 without = %{customdata}<extra></extra>",
        marker: { size: 11, symbol: "diamond", color: PALETTE[3], line: { color: "#ffffff", width: 1 } } }
    ] : [], layout);
  })();

  // The coefficient switch: heatmap, beta curve, warnings and the grid table follow it.
  function select(method) {
    drawHeatmap(method);
    drawBeta(method);
    Array.prototype.forEach.call(document.querySelectorAll(".corr-warnings, .corr-grid, .beta-warnings"),
      function (el) { el.hidden = el.getAttribute("data-method") !== method; });
  }
  var chosen = words.method || report.heatmap_method || "pearson";
  Array.prototype.forEach.call(document.querySelectorAll("#method-switch input[name=method]"), function (input) {
    if (input.checked) { chosen = input.value; }
    input.addEventListener("change", function () { if (input.checked) { select(input.value); } });
  });
  select(chosen);
  window.PerSEvalReport.select = select;

  // 6. Pairwise judgments: forest plot, win-fraction heatmap and consistency curves of the chosen criterion.
  var pairwise = report.pairwise || null;
  var pairwiseWords = words.pairwise || {};
  function criterionName(c) { return esc((pairwiseWords.criteria || {})[c] || c); }
  /* The criterion's systems, best Bradley-Terry rating first. */
  function pairwiseBoard(criterion) {
    return (pairwise.ratings || []).filter(function (r) { return r.criterion === criterion; })
      .sort(function (a, b) { return num(b.bt) - num(a.bt); });
  }
  function drawForest(criterion) {
    var rows = pairwiseBoard(criterion);
    var names = rows.map(function (r) { return wrap(r.system); });
    var series = [
      { name: "Elo (bootstrap median)", value: "elo_median", low: "elo_ci_low", high: "elo_ci_high", symbol: "circle",
        colour: PALETTE[0] },
      { name: "Bradley-Terry", value: "bt", low: "bt_ci_low", high: "bt_ci_high", symbol: "diamond", colour: PALETTE[3] }
    ];
    var traces = rows.length ? series.map(function (s) {
      return {
        type: "scatter", mode: "markers", orientation: "h", name: s.name, y: names,
        x: rows.map(function (r) { return num(r[s.value]); }),
        marker: { color: s.colour, symbol: s.symbol, size: 11, line: { color: "#ffffff", width: 1 } },
        error_x: { type: "data", symmetric: false, color: s.colour, thickness: 1.6, width: 4,
                   array: rows.map(function (r) { return num(r[s.high]) - num(r[s.value]); }),
                   arrayminus: rows.map(function (r) { return num(r[s.value]) - num(r[s.low]); }) },
        customdata: rows.map(function (r) {
          return [esc(r.system), fmt(r[s.value]), fmt(r[s.low]), fmt(r[s.high]), r.wins, r.ties, r.losses, r.games];
        }),
        hovertemplate: "<b>%{customdata[0]}</b><br>" + s.name + ": %{customdata[1]}<br>2.5th to 97.5th percentile: " +
          "%{customdata[2]} to %{customdata[3]}<br>games: %{customdata[7]} (won %{customdata[4]}, tied " +
          "%{customdata[5]}, lost %{customdata[6]})<extra></extra>"
      };
    }) : [];
    var init = pairwise.parameters ? num(pairwise.parameters.init) : NaN;
    var lo = Infinity, hi = -Infinity;
    rows.forEach(function (r) {
      ["elo_median", "elo_ci_low", "elo_ci_high", "bt", "bt_ci_low", "bt_ci_high"].forEach(function (key) {
        var v = num(r[key]);
        if (!isNaN(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
      });
    });
    if (!isNaN(init)) { lo = Math.min(lo, init); hi = Math.max(hi, init); }
    var pad = Math.max(5, 0.06 * (hi - lo));
    draw("fig-pairwise-forest", traces, {
      title: { text: "Ratings per system \u00b7 " + criterionName(criterion) },
      scattermode: "group", scattergap: 0.45,
      height: Math.max(320, 160 + rows.length * 46),
      xaxis: { title: { text: "Rating (Elo scale)" }, zeroline: false,
               range: isFinite(lo) ? [lo - pad, hi + pad] : undefined },
      yaxis: { title: { text: "System" }, type: "category", autorange: "reversed", categoryorder: "array",
               categoryarray: names, showgrid: true },
      shapes: isNaN(init) ? [] : [{ type: "line", xref: "x", yref: "paper", x0: init, x1: init, y0: 0, y1: 1,
                                    line: { color: "#8a93a6", width: 1, dash: "dot" } }],
      legend: { title: { text: "Whiskers: 2.5th to 97.5th percentile \u00b7" }, orientation: "h", x: 0, xanchor: "left",
                y: 1.0, yanchor: "bottom", traceorder: "normal" }
    });
  }
  function drawWinFraction(criterion) {
    var systems = pairwiseBoard(criterion).map(function (r) { return r.system; });
    var cells = (pairwise.win_fraction || []).filter(function (r) { return r.criterion === criterion; });
    var el = document.getElementById("fig-pairwise-heatmap");
    var small = narrow("fig-pairwise-heatmap");  // a phone: the colour bar goes under the plot
    var cellWidth = el && el.clientWidth > 0 ? (el.clientWidth - (small ? 180 : 280)) / Math.max(1, systems.length)
      : 120;
    var z = [], text = [], custom = [];
    systems.forEach(function (s) {
      var zr = [], tr = [], cr = [];
      systems.forEach(function (o) {
        var c = cells.find(function (x) { return x.system === s && x.opponent === o; });
        zr.push(c ? num(c.win_fraction) : null);
        tr.push(c ? fmt(c.win_fraction, 2) : "");
        cr.push(c ? [esc(s), esc(o), fmt(c.win_fraction), String(c.games)] : [esc(s), esc(o), "", ""]);
      });
      z.push(zr); text.push(tr); custom.push(cr);
    });
    // opponents across: names wrapped to the estimated cell width, then measured once drawn (fitOpponents)
    var across = Math.max(6, Math.floor(cellWidth / 8));
    var names = systems.map(function (s) { return wrap(s); });
    var drawn = draw("fig-pairwise-heatmap", cells.length ? [{
      type: "heatmap", x: systems, y: names, z: z, text: text, texttemplate: "%{text}", customdata: custom,
      textfont: { size: cellWidth < 60 ? 10 : 13 }, zmin: 0, zmax: 1, zmid: 0.5, colorscale: DIVERGING,
      xgap: 3, ygap: 3, hoverongaps: false,
      colorbar: small ? { title: { text: "Win fraction", side: "bottom" }, tickvals: [0, 0.25, 0.5, 0.75, 1],
                          ticktext: ["0", "0.25", "0.5", "0.75", "1"], outlinewidth: 0, thickness: 14,
                          orientation: "h", x: 0.5, xanchor: "center", y: 0, yanchor: "bottom", yref: "container" }
        : { title: { text: "Win fraction" }, tickvals: [0, 0.25, 0.5, 0.75, 1],
            ticktext: ["0", "0.25", "0.5 (even)", "0.75", "1"], outlinewidth: 0, thickness: 14 },
      hovertemplate: "<b>%{customdata[0]}</b> against <b>%{customdata[1]}</b><br>win fraction %{customdata[2]} " +
        "(ties half) over %{customdata[3]} games<extra></extra>"
    }] : [], {
      title: { text: "Win fraction of each system against each opponent \u00b7 " + criterionName(criterion) },
      height: Math.max(320, 190 + 52 * systems.length) + (small ? 90 : 0),
      margin: small ? { l: 10, r: 10, t: 60, b: 90, pad: 4 } : undefined,
      xaxis: { title: { text: "Opponent" }, type: "category", showgrid: false, tickmode: "array", tickvals: systems,
               ticktext: systems.map(function (s) { return wrap(s, across); }), tickangle: 0 },
      yaxis: { title: { text: "System" }, type: "category", autorange: "reversed", showgrid: false }
    });
    if (drawn && cells.length) { drawn.then(function () { fitOpponents(systems); }); }
  }
  /* The heatmap's opponent labels as drawn: when two overlap (the columns came out narrower than estimated), each
     name is written on one line, upright; columns too narrow for their number leave it to the hover. */
  function fitOpponents(systems) {
    var el = document.getElementById("fig-pairwise-heatmap");
    var axis = el && el._fullLayout && el._fullLayout.xaxis;
    if (!axis) { return; }
    var column = axis._length / Math.max(1, systems.length);
    var boxes = Array.prototype.map.call(el.querySelectorAll(".xaxislayer-above .xtick text"), function (t) {
      return t.getBoundingClientRect();
    }).sort(function (a, b) { return a.left - b.left; });
    var overlap = boxes.length < systems.length || boxes.some(function (b, i) {
      return b.width > column || (i > 0 && b.left < boxes[i - 1].right + 2);
    });
    if (overlap && axis.tickangle !== -90) {
      Plotly.relayout(el, { "xaxis.tickangle": -90,
                            "xaxis.ticktext": systems.map(function (s) { return wrap(s, 1000); }) });
    }
    if (column < 30) { Plotly.restyle(el, { texttemplate: "" }); }
  }
  function drawConsistency(criterion) {
    var rows = (pairwise.consistency || []).filter(function (r) { return r.criterion === criterion; });
    var pairs = unique(rows.map(function (r) { return r.model_a + "\u0000" + r.model_b; }));
    var traces = [];
    pairs.forEach(function (key, i) {
      var parts = key.split("\u0000");
      var mine = rows.filter(function (r) { return r.model_a === parts[0] && r.model_b === parts[1]; })
        .sort(function (a, b) { return num(a.n) - num(b.n); });
      var colour = PALETTE[i % PALETTE.length], a = esc(parts[0]), b = esc(parts[1]), pair = a + " vs " + b;
      [["consistency", "solid", SYMBOLS[0]], ["sensitivity", "dash", SYMBOLS[0] + "-open"]].forEach(function (kind) {
        traces.push({
          // one legend entry per pair (its solid line); clicking it hides or shows both lines of the pair
          type: "scatter", mode: "lines+markers", name: pair, legendgroup: key, showlegend: kind[1] === "solid",
          x: mine.map(function (r) { return num(r.n); }), y: mine.map(function (r) { return num(r[kind[0]]); }),
          line: { color: colour, dash: kind[1], width: kind[1] === "solid" ? 3 : 2 },
          marker: { color: colour, symbol: kind[2], size: 8, line: { color: colour, width: 1.5 } },
          customdata: mine.map(function (r) { return [fmt(r[kind[0]]), r.pool, r.wins_a, r.wins_b, r.ties, a, b]; }),
          hovertemplate: "%{customdata[5]} vs %{customdata[6]}<br>n = %{x} games: " + kind[0] +
            " %{customdata[0]}<br>pool: %{customdata[1]} games (%{customdata[5]} won %{customdata[2]}, " +
            "%{customdata[6]} won %{customdata[3]}, tied %{customdata[4]})<extra></extra>"
        });
      });
    });
    var sizes = unique(rows.map(function (r) { return num(r.n); })).sort(function (a, b) { return a - b; });
    draw("fig-pairwise-consistency", traces, {
      title: { text: "Consistency and sensitivity of neighbouring systems \u00b7 " + criterionName(criterion) },
      xaxis: { title: { text: "Games per sample (n, log scale)" }, type: "log", tickmode: "array", tickvals: sizes,
               ticktext: sizes.map(String) },
      yaxis: { title: { text: "Share of repetitions" }, range: [0, 1.04] },
      legend: { title: { text: "Pair of neighbours<br>solid: consistency<br>dashed: sensitivity" },
                traceorder: "normal" }
    });
  }
  var shownCriterion = null;
  function selectCriterion(criterion) {
    if (!pairwise) { return; }
    shownCriterion = criterion;
    drawForest(criterion);
    drawWinFraction(criterion);
    drawConsistency(criterion);
    Array.prototype.forEach.call(document.querySelectorAll(".pairwise-wtl, .pairwise-ranking"),
      function (el) { el.hidden = el.getAttribute("data-criterion") !== criterion; });
  }
  if (pairwise && document.getElementById("section-pairwise")) {
    var criterion = pairwiseWords.criterion || "overall";
    Array.prototype.forEach.call(document.querySelectorAll("#criterion-switch input[name=criterion]"), function (input) {
      if (input.checked) { criterion = input.value; }
      input.addEventListener("change", function () { if (input.checked) { selectCriterion(input.value); } });
    });
    selectCriterion(criterion);
    // the heatmap's opponent labels are fitted to the columns as drawn: again when the window changes size
    var refit = null;
    window.addEventListener("resize", function () {
      clearTimeout(refit);
      refit = setTimeout(function () {
        var el = document.getElementById("fig-pairwise-heatmap");
        if (!shownCriterion || !el || !el.data) { return; }
        Plotly.purge(el);  // drawn afresh: a react onto plotly's own resize of the old layout can mix the two
        drawWinFraction(shownCriterion);
      }, 300);
    });
  }
  window.PerSEvalReport.selectCriterion = selectCriterion;

  // e-DINS against gamma: one line per system (e-DINS is linear in gamma).
  var edins = report.edins;
  if (edins && document.getElementById("fig-edins-gamma")) {
    var curve = edins.curve || [];
    var names = unique(curve.map(function (r) { return r.system; }));
    draw("fig-edins-gamma", names.map(function (name, i) {
      var mine = curve.filter(function (r) { return r.system === name; });
      return { type: "scatter", mode: "lines+markers", name: esc(name),
               x: mine.map(function (r) { return num(r.gamma); }),
               y: mine.map(function (r) { return num(r.edins); }), line: { color: PALETTE[i % PALETTE.length] },
               marker: { symbol: SYMBOLS[i % SYMBOLS.length] }, customdata: mine.map(function () { return esc(name); }),
               hovertemplate: "<b>%{customdata}</b><br>\u03b3 %{x}: e-DINS %{y:.4f}<extra></extra>" };
    }), {
      title: { text: "e-DINS = DINS + \u03b3 \u00b7 PF against \u03b3 (lower is better)" },
      xaxis: { title: { text: "\u03b3" }, range: [-0.02, 1.02] },
      yaxis: { title: { text: "e-DINS" } }
    });
  }

  // Prompt probes: EGISES per model (rows) and prompt style (columns), lower = more personalised.
  var probes = report.probes;
  if (probes && document.getElementById("fig-probes-grid")) {
    var styles = probes.styles || [], models = probes.models || [];
    var gz = [], gt = [];
    models.forEach(function (m) {
      var zr = [], tr = [];
      styles.forEach(function (s) {
        var c = (probes.grid || []).find(function (x) { return x.model === m && x.style === s; });
        zr.push(c ? num(c.egises) : null);
        tr.push(c ? fmt(c.egises, 4) : "");
      });
      gz.push(zr); gt.push(tr);
    });
    draw("fig-probes-grid", models.length ? [{
      type: "heatmap", x: styles.map(esc), y: models.map(function (m) { return wrap(m); }), z: gz, text: gt,
      texttemplate: "%{text}", colorscale: "Blues", xgap: 3, ygap: 3, hoverongaps: false,  // Blues: low = dark
      colorbar: { title: { text: "EGISES" }, outlinewidth: 0, thickness: 14 },
      hovertemplate: "<b>%{y}</b> · %{x}<br>EGISES %{text}<extra></extra>"
    }] : [], {
      title: { text: "EGISES per model and prompt style \u00b7 " + esc(probes.measure) + " (darker: more personalised)" },
      height: Math.max(320, 190 + 44 * models.length),
      xaxis: { title: { text: "Prompt style" }, type: "category", showgrid: false },
      yaxis: { title: { text: "Model" }, type: "category", autorange: "reversed", showgrid: false }
    });
  }
})();
