/* Report figures drawn with plotly.js from the report document embedded in the page
   (<script type="application/json" id="report-data">). No network access: plotly.js is served from static/
   or inlined in the downloaded HTML report. Each figure is skipped when its section is absent. */
(function () {
  "use strict";
  var node = document.getElementById("report-data");
  if (!node || typeof Plotly === "undefined") { return; }
  var report = JSON.parse(node.textContent);
  var config = { displaylogo: false, responsive: true, toImageButtonOptions: { format: "svg" } };
  var font = { family: "system-ui, sans-serif", size: 13 };

  function draw(id, traces, layout) {
    var el = document.getElementById(id);
    if (!el) { return; }
    if (!traces.length) { el.textContent = "No data for this figure."; return; }
    layout.font = font;
    layout.margin = layout.margin || { l: 60, r: 20, t: 40, b: 60 };
    Plotly.newPlot(el, traces, layout, config);
  }

  function unique(values) {
    var seen = {}, out = [];
    values.forEach(function (v) { if (!seen[v]) { seen[v] = true; out.push(v); } });
    return out;
  }

  function num(v) { return (v === null || v === undefined) ? NaN : Number(v); }

  // 1. Leaderboard: PerSEval per system for each measure, with bootstrap CIs where present.
  var board = report.leaderboard || [];
  var boardMeasures = unique(board.map(function (r) { return r.measure; }));
  draw("fig-leaderboard", boardMeasures.map(function (measure) {
    var rows = board.filter(function (r) { return r.measure === measure; });
    var hasCi = rows.some(function (r) { return r.low !== null && r.low !== undefined; });
    var trace = {
      type: "bar", name: measure,
      x: rows.map(function (r) { return r.system; }),
      y: rows.map(function (r) { return num(r.value); }),
      hovertemplate: "%{x}<br>" + measure + ": %{y:.4f}<extra></extra>"
    };
    if (hasCi) {
      trace.error_y = {
        type: "data", symmetric: false,
        array: rows.map(function (r) { return num(r.high) - num(r.value); }),
        arrayminus: rows.map(function (r) { return num(r.value) - num(r.low); })
      };
    }
    return trace;
  }), { barmode: "group", title: { text: (report.leaderboard_label || "PerSEval") + " per system" },
        yaxis: { title: { text: report.leaderboard_label || "PerSEval" } } });

  // 2. Correlation heatmap: automatic measure x HJ measure, one method.
  var cells = (report.correlations || []).filter(function (c) { return c.method === (report.heatmap_method || "pearson"); });
  var autos = unique(cells.map(function (c) { return c.auto_measure; }));
  var humans = unique(cells.map(function (c) { return c.hj_measure; }));
  if (cells.length) {
    var z = humans.map(function (h) {
      return autos.map(function (a) {
        var c = cells.find(function (x) { return x.auto_measure === a && x.hj_measure === h; });
        return c ? num(c.r) : NaN;
      });
    });
    var text = humans.map(function (h) {
      return autos.map(function (a) {
        var c = cells.find(function (x) { return x.auto_measure === a && x.hj_measure === h; });
        if (!c) { return ""; }
        var ci = (c.low !== null && c.low !== undefined) ? " [" + num(c.low).toFixed(2) + ", " + num(c.high).toFixed(2) + "]" : "";
        return num(c.r).toFixed(2) + ci;
      });
    });
    draw("fig-heatmap", [{
      type: "heatmap", x: autos, y: humans, z: z, text: text, texttemplate: "%{text}",
      zmin: -1, zmax: 1, colorscale: "RdBu", reversescale: true,
      hovertemplate: "%{x} vs %{y}<br>r = %{z:.3f}<extra></extra>"
    }], { title: { text: "Correlation with human judgment (" + (report.heatmap_method || "pearson") + ")" },
          margin: { l: 130, r: 20, t: 40, b: 90 } });
  } else {
    draw("fig-heatmap", [], {});
  }

  // 3. beta ablation: correlation against beta, one line per (automatic, HJ) pair.
  var beta = report.beta_ablation || [];
  var betaMethod = report.beta_method || "pearson";
  var keys = unique(beta.map(function (r) { return r.auto_measure + " vs " + r.hj_measure; }));
  draw("fig-beta", keys.map(function (key) {
    var rows = beta.filter(function (r) { return r.auto_measure + " vs " + r.hj_measure === key; });
    return { type: "scatter", mode: "lines+markers", name: key,
             x: rows.map(function (r) { return num(r.beta); }), y: rows.map(function (r) { return num(r[betaMethod]); }) };
  }), { title: { text: "beta ablation (" + betaMethod + ")" }, xaxis: { title: { text: "beta" } },
        yaxis: { title: { text: betaMethod } } });

  // 4. Stability: epsilon-rank stability (Spearman) per sampling level, one line per measure and definition.
  var stab = report.stability || [];
  var stabKeys = unique(stab.map(function (r) { return r.measure + " (" + r.definition + ")"; }));
  draw("fig-stability", stabKeys.map(function (key) {
    var rows = stab.filter(function (r) { return r.measure + " (" + r.definition + ")" === key && r.stability !== null && r.stability !== undefined; });
    return { type: "scatter", mode: "lines+markers", name: key,
             x: rows.map(function (r) { return num(r.level); }), y: rows.map(function (r) { return num(r.stability); }) };
  }).filter(function (t) { return t.x.length; }), {
    title: { text: report.stability_label || "Rank stability per sampling level" },
    xaxis: { title: { text: "% of the data" }, autorange: "reversed" }, yaxis: { title: { text: report.stability_axis || "stability" } }
  });

  // 5. Rater agreement: each rater's agreement with the others, and alpha without that rater.
  var raters = (report.raters && report.raters.per_rater) || [];
  draw("fig-raters", raters.length ? [
    { type: "bar", name: "Spearman with the others' mean", x: raters.map(function (r) { return r.rater; }),
      y: raters.map(function (r) { return num(r.agreement); }) },
    { type: "scatter", mode: "markers", name: "alpha without this rater", x: raters.map(function (r) { return r.rater; }),
      y: raters.map(function (r) { return num(r.alpha_without); }), marker: { size: 9, symbol: "diamond" } }
  ] : [], { title: { text: "Rater agreement" + (report.raters && report.raters.alpha !== undefined && report.raters.alpha !== null
            ? " (Krippendorff's alpha, ordinal: " + num(report.raters.alpha).toFixed(3) + ")" : "") },
            yaxis: { title: { text: "agreement" } } });
})();
