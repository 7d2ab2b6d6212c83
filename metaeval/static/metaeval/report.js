/* The report page's interaction. Every figure is built in Python (metaeval/core/perseval/figures.py: one definition
   for the page, the offline HTML and a notebook) and given here as plotly JSON by element id
   (<script type="application/json" id="report-figures">); this script only draws them with plotly.js (served from
   static/ or inlined in the downloaded HTML report; nothing from elsewhere). Served, plotly.js loads async from the
   head while the page is read (this script, async too, waits for its load event); offline, it is inline before this
   script. Figures are drawn:

   - the first screen first: the figures near the window as soon as plotly.js has run, then the others one per task
     once the one before is painted, top to bottom; a figure comes at once when it comes near the window (scrolled
     to, a link to its section, the keyboard moving focus into its section), and every figure before printing;
   - the tables after the figures (fetched, or offline sent as text: see putTables);
   - the switches: the correlation coefficient (#method-switch: heatmap, beta curves, their warnings and the grid
     table) and the pairwise criterion (#criterion-switch: forest plot, win-fraction heatmap, consistency curves and
     the win/tie/loss table) pick the figure built for that option (id@option);
   - the fit to the screen: a figure narrower than 640 px takes the changes in its layout.meta.narrow (legend in rows
     under the plot), a heatmap the changes for its cells' width (layout.meta.cells) or its transposed variant
     (id@option@narrow); again when the window changes size. The win-fraction heatmap's opponents are turned
     upright when their drawn labels overlap. */
(function () {
  "use strict";
  mark("report-js");  // benchmarks/report_page_bench.py
  var node = document.getElementById("report-figures");
  if (!node) { return; }
  // plotly.js: inline before this script (offline HTML), or loading async from the head (served): draw once it ran
  var loader = document.getElementById("plotly-js");
  if (typeof Plotly !== "undefined") { start(); } else if (loader) { loader.addEventListener("load", start); }

  function mark(name) { if (window.performance && performance.mark) { performance.mark(name); } }
  function idle(callback) {
    if (window.requestIdleCallback) { window.requestIdleCallback(callback, { timeout: 1000 }); }
    else { setTimeout(callback, 50); }
  }
  /* A task of its own once the next frame is out (what was just drawn is painted), or after 100 ms without frames
     (a hidden tab): the next figure sooner than at an idle moment, which a page that keeps making frames (a reader
     scrolling) may not get for a while; input still comes first between tasks. */
  function afterPaint(callback) {
    var called = false;
    var go = function () { if (!called) { called = true; setTimeout(callback, 0); } };
    if (window.requestAnimationFrame) { requestAnimationFrame(go); }
    setTimeout(go, 100);
  }

  /* The tables' HTML (tens of thousands of cells): offline it comes as text (<script type="text/html"
     id="report-tables">: the browser does not build the cells while the page loads); served, the page stays small
     and the element's data-src is fetched once the page has loaded (its scripts run) or as soon as it is needed.
     It is put in place one table at a time (the fragment's <!--report-table--> markers), at idle moments after the
     figures, a little sooner (one per task) when the reader comes near the tables, all at once for a link to a
     table (#table-<name>) and before printing. */
  var tables = { text: null, loading: null, parts: null, placing: false, done: false, hash: false };
  function tablesSource() { return document.getElementById("report-tables"); }
  function tablesUrl(source) { return source.getAttribute("data-src"); }
  function loadTables() {
    var source = tablesSource();
    if (tables.text !== null || !source) { return Promise.resolve(tables.text); }
    if (!tablesUrl(source)) { tables.text = source.textContent; return Promise.resolve(tables.text); }
    if (!tables.loading) {
      tables.loading = fetch(tablesUrl(source), { credentials: "same-origin" }).then(function (response) {
        if (!response.ok || response.redirected) { throw new Error("tables: " + response.status); }
        return response.text();
      }).then(function (text) { tables.text = text; return text; }, function (error) {
        tables.loading = null;
        source.textContent = "The tables could not be loaded: reload the page (report.json above has them all).";
        throw error;
      });
    }
    return tables.loading;
  }
  /* Printing cannot wait: the text now (a synchronous request if the fetch has not brought it yet). */
  function loadTablesNow() {
    var source = tablesSource();
    if (tables.text === null && source && !tablesUrl(source)) { tables.text = source.textContent; }
    if (tables.text === null && source) {
      var url = new URL(tablesUrl(source), location.href).href, request = new XMLHttpRequest();
      try {
        request.open("GET", url, false);
        request.send();
        if (request.status === 200 && request.responseURL === url) { tables.text = request.responseText; }
      } catch (error) { return null; }
    }
    return tables.text;
  }
  /* Puts the next table in place; false once all are. */
  function placeOne() {
    var source = tablesSource();
    if (tables.done || !source || tables.text === null) { return false; }
    // the marker; offline "<\!--" (an inline script's text may not hold "<!--": report_page._inline_script)
    if (tables.parts === null) { tables.parts = tables.text.split(/<\\?!--report-table-->/); }
    if (tables.parts.length) { source.insertAdjacentHTML("beforebegin", tables.parts.shift()); }
    if (tables.parts.length) { return true; }
    source.parentNode.removeChild(source);
    tables.done = true;
    mark("report-tables");
    var target = tables.hash && location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target && target.closest && target.closest("#section-tables")) {
      if (target.tagName === "DETAILS") { target.open = true; }
      target.scrollIntoView();
    }
    return false;
  }
  /* how: "idle" (a table per idle moment), "soon" (a table per task), "all" (at once, once the text is here) */
  function putTables(how) {
    if (document.readyState === "loading") {  // the tables' element is below this script: once the page is parsed
      document.addEventListener("DOMContentLoaded", function () { putTables(how); });
      return;
    }
    if (tables.done || !tablesSource()) { return; }
    loadTables().then(function () {
      if (how === "all") { while (placeOne()) { /* the next */ } return; }
      if (tables.placing) { if (how === "soon") { tables.placing = how; } return; }  // under way: sooner if asked
      tables.placing = how;
      // from the next task on (a figure that came near with the tables is drawn first)
      var later = function (step) { if (tables.placing === "idle") { idle(step); } else { setTimeout(step, 0); } };
      var next = function () { if (placeOne()) { later(next); } };
      later(next);
    }, function () { /* the message is in place */ });
  }
  function tablesForLink() {
    if (/^#table-/.test(location.hash)) { tables.hash = true; putTables("all"); return true; }
    return false;
  }
  function watchTables() {
    var source = tablesSource();
    if (!source || tablesForLink()) { return; }
    if ("IntersectionObserver" in window) {
      var tablesWatcher = new IntersectionObserver(function (entries) {
        if (entries.some(function (entry) { return entry.isIntersecting; })) {
          tablesWatcher.disconnect();
          putTables("soon");
        }
      }, { rootMargin: "600px 0px" });
      tablesWatcher.observe(source.parentNode);
    }
    // fetched once the page has loaded (served); put in place all the same without plotly.js (should it never load)
    function loaded() {
      loadTables().catch(function () { /* the message is in place */ });
      setTimeout(function () { putTables("idle"); }, 3000);
    }
    if (document.readyState === "complete") { loaded(); } else { window.addEventListener("load", loaded); }
  }
  window.addEventListener("beforeprint", function () {
    if (!tables.done && loadTablesNow() !== null) { while (placeOne()) { /* the next */ } }
  });
  window.addEventListener("hashchange", tablesForLink);
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", watchTables); }
  else { watchTables(); }

  function start() {
    mark("plotly-ready");
    var figures = JSON.parse(node.textContent) || {};
    var config = { displaylogo: false, responsive: true, toImageButtonOptions: { format: "svg" } };
    var NARROW = 640;
    var SWITCHED = { "fig-heatmap": "method", "fig-beta": "method", "fig-pairwise-forest": "criterion",
                     "fig-pairwise-heatmap": "criterion", "fig-pairwise-consistency": "criterion" };
    var chosen = { method: checked("method"), criterion: checked("criterion") };
    var drawn = {};  // element id -> the key and fit it was drawn with

    function checked(name) {
      var input = document.querySelector("input[name=" + name + "]:checked");
      return input ? input.value : null;
    }
    function keyOf(id) {
      var option = SWITCHED[id] && chosen[SWITCHED[id]];
      return option && figures[id + "@" + option] ? id + "@" + option : id;
    }
    function copy(value) { return JSON.parse(JSON.stringify(value)); }
    function merge(base, extra) {
      Object.keys(extra || {}).forEach(function (k) {
        var v = extra[k];
        if (v && typeof v === "object" && !Array.isArray(v) && base[k] && typeof base[k] === "object") {
          merge(base[k], v);
        } else { base[k] = copy(v); }
      });
      return base;
    }
    function apply(figure, change) {
      merge(figure.layout, change.layout);
      (change.data || []).forEach(function (d, i) { if (figure.data[i]) { merge(figure.data[i], d); } });
    }
    /* The figure to draw in `el` now: its option's, fitted to the element's width. */
    function fitted(el) {
      var key = keyOf(el.id), width = el.clientWidth, small = width > 0 && width < NARROW;
      if (small && figures[key + "@narrow"]) { key += "@narrow"; }
      var figure = figures[key];
      if (!figure) { return null; }
      var meta = figure.layout.meta || {}, cells = meta.cells, step = -1;
      if (cells && width > 0) {
        var reserve = small && cells.reserve_narrow ? cells.reserve_narrow : cells.reserve;
        var cell = (width - reserve) / Math.max(1, cells.across);
        cells.steps.some(function (s, i) { if (cell < s.below) { step = i; return true; } return false; });
      }
      var fit = key + "|" + small + "|" + step;
      figure = { data: copy(figure.data), layout: copy(figure.layout) };
      if (small && meta.narrow) { apply(figure, meta.narrow); }
      if (step >= 0) { apply(figure, cells.steps[step]); }
      return { key: key, fit: fit, figure: figure };
    }
    function draw(el, force) {
      var made = fitted(el);
      if (!made || (!force && drawn[el.id] === made.fit)) { return null; }
      drawn[el.id] = made.fit;
      var meta = made.figure.layout.meta || {};
      if (meta.empty) { Plotly.purge(el); el.textContent = meta.empty; return null; }
      return Plotly.react(el, made.figure.data, made.figure.layout, config).then(function () {
        if (meta.cells && meta.cells.upright) { upright(el, meta.cells.upright); }
      });
    }
    /* The heatmap's opponent labels as drawn: when two overlap (the columns came out narrower than their width step
       allowed for), each name on one line, upright; columns too narrow for their number leave it to the hover. */
    function upright(el, names) {
      var axis = el._fullLayout && el._fullLayout.xaxis;
      if (!axis) { return; }
      var column = axis._length / Math.max(1, names.length);
      var boxes = Array.prototype.map.call(el.querySelectorAll(".xaxislayer-above .xtick text"), function (t) {
        return t.getBoundingClientRect();
      }).sort(function (a, b) { return a.left - b.left; });
      var overlap = boxes.length < names.length || boxes.some(function (b, i) {
        return b.width > column || (i > 0 && b.left < boxes[i - 1].right + 2);
      });
      if (overlap && axis.tickangle !== -90) {
        Plotly.relayout(el, { "xaxis.tickangle": -90, "xaxis.ticktext": names });
      }
      if (column < 30) { Plotly.restyle(el, { texttemplate: "" }); }
    }

    var elements = Object.keys(figures).map(function (key) { return key.split("@")[0]; })
      .filter(function (id, i, all) { return all.indexOf(id) === i; })
      .map(function (id) { return document.getElementById(id); }).filter(Boolean)
      .sort(function (a, b) { return a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1; });
    var seen = {};  // element id -> has come near the window (or its section was entered)
    function show(el) { seen[el.id] = true; return draw(el); }
    /* The rest, once the first screen is drawn: one figure per task, each once the one before is painted, top to
       bottom, so that the reader finds them drawn; then the tables. */
    function rest() {
      var next = elements.filter(function (el) { return !seen[el.id]; })[0];
      if (!next) { putTables("idle"); return; }
      Promise.resolve(show(next)).then(function () { afterPaint(rest); }, function () { afterPaint(rest); });
    }
    if ("IntersectionObserver" in window) {
      var firstScreen = true;
      /* the figures that came near, top to bottom, one per task: each is painted before the next is drawn */
      var inTurn = function (near) {
        return near.reduce(function (before, el, i) {
          return before.then(function () { return i && new Promise(function (go) { setTimeout(go, 0); }); })
            .then(function () { return show(el); });
        }, Promise.resolve());
      };
      var watcher = new IntersectionObserver(function (entries) {
        var drawing = inTurn(entries.filter(function (entry) { return entry.isIntersecting; })
          .map(function (entry) { return entry.target; }));
        if (firstScreen) {
          firstScreen = false;
          drawing.then(function () { afterPaint(rest); }, function () { afterPaint(rest); });
        }
      }, { rootMargin: "300px 0px" });
      elements.forEach(function (el) { watcher.observe(el); });
    } else { elements.forEach(show); putTables("idle"); }
    // the keyboard: focus moving into a section (a switch, a table's summary) draws the section's figures
    document.addEventListener("focusin", function (event) {
      var section = event.target.closest && event.target.closest("section");
      if (section) { elements.forEach(function (el) { if (section.contains(el)) { show(el); } }); }
    });
    window.addEventListener("beforeprint", function () { elements.forEach(show); });

    /* A switch: the figures it drives show the chosen option (drawn now when already seen), the blocks marked with
       `attribute` show only the chosen option's. */
    function switchTo(kind, value, blocks, attribute) {
      chosen[kind] = value;
      elements.forEach(function (el) { if (SWITCHED[el.id] === kind && seen[el.id]) { draw(el); } });
      Array.prototype.forEach.call(document.querySelectorAll(blocks), function (el) {
        el.hidden = el.getAttribute(attribute) !== value;
      });
    }
    function select(method) { switchTo("method", method, ".corr-warnings, .corr-grid, .beta-warnings", "data-method"); }
    function selectCriterion(criterion) {
      switchTo("criterion", criterion, ".pairwise-wtl, .pairwise-ranking", "data-criterion");
    }
    [["method", select], ["criterion", selectCriterion]].forEach(function (pair) {
      Array.prototype.forEach.call(document.querySelectorAll("input[name=" + pair[0] + "]"), function (input) {
        input.addEventListener("change", function () { if (input.checked) { pair[1](input.value); } });
      });
    });
    // a new width may change what a figure shows (a phone's legend, a heatmap's cells): redrawn where it does
    var refit = null;
    window.addEventListener("resize", function () {
      clearTimeout(refit);
      refit = setTimeout(function () {
        elements.forEach(function (el) {
          var made = seen[el.id] && fitted(el);
          if (made && drawn[el.id] !== made.fit) { Plotly.purge(el); draw(el, true); }
        });
      }, 300);
    });
    window.PerSEvalReport = { select: select, selectCriterion: selectCriterion,
                              drawAll: function () { elements.forEach(show); } };
  }
})();
