// Progressive enhancement for a questionnaire page (the form works fully without this script): a progress indicator,
// the active question highlighted, keys that answer it and move on.
// - Similarity pages (<form id="ratings-form">): one question per pair ([data-pair]); a digit key rates the active
//   pair with that point of the scale (the radio buttons the page has: 1-6).
// - A/B pages (<form id="ab-form" data-ab>): one question per pair and criterion ([data-question]); a / b choose
//   Text A / Text B, t "About the same" where offered.
// The form says what its questions are (data-item) and how the progress reads (data-progress).
//
// The keyboard model (issue 29: an arrow key pressed to scroll once turned a 5 into a 6):
// - Keyboard focus and the highlight are always on the same question: the question itself holds the focus (it is
//   focusable; its radio buttons are not, and focus that lands on one, from a click, moves to its question). So
//   the browser's radio-group keys never apply: arrows, Page Up/Down, Home/End and Space scroll the page, Tab and
//   Shift+Tab go to the next / previous question, j / k and Shift+Down / Shift+Up too. A radio that still gets a
//   key (a screen reader's focus mode) has arrows, Page Up/Down, Home/End and Space taken from it: they scroll.
// - Only the answer keys and clicks change an answer. Answering (key or click) moves focus and highlight to the
//   next unanswered question and scrolls it into view.
// - A changed answer is always seen: an answer key whose question's options are off screen only brings them into
//   view; when scrolling takes the highlighted question off screen, the highlight (and focus) go to a question on
//   screen, the first unanswered one there if any.
(function () {
  "use strict";
  var form = document.getElementById("ratings-form") || document.getElementById("ab-form");
  if (!form) return;
  var questions = Array.prototype.slice.call(form.querySelectorAll(form.getAttribute("data-item") || "[data-pair]"));
  if (!questions.length) return;
  var noun = form.getAttribute("data-progress") || "pairs rated";
  var abKeys = form.hasAttribute("data-ab");
  var AB = { a: "a", b: "b", t: "tie" };
  var SCROLL_KEYS = ["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End", " "];
  var text = document.getElementById("progress-text");
  var fill = document.getElementById("progress-fill");
  var head = document.getElementById("progress-head");
  var help = document.getElementById("key-help");
  var smooth = !(window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
  var active = 0;
  var pending = -1;  // the question a scroll of ours is bringing into view
  var missing = false;  // the browser refused to submit: some question is unanswered

  questions.forEach(function (q) {
    q.tabIndex = 0;
    q.querySelectorAll("input[type=radio]").forEach(function (input) { input.tabIndex = -1; });
  });
  if (help) help.hidden = false;

  function answered(q) { return !!q.querySelector("input[type=radio]:checked"); }
  function indexOf(node) {
    for (var i = 0; i < questions.length; i++) { if (questions[i].contains(node)) return i; }
    return -1;
  }
  function options(q) { return q.querySelector("[role=radiogroup]") || q; }

  function update() {
    var n = questions.filter(answered).length;
    questions.forEach(function (q, i) {
      q.classList.toggle("rated", answered(q));
      q.classList.toggle("active", i === active);
      if (missing) q.classList.toggle("missing", !answered(q));
    });
    if (missing && n === questions.length) missing = false;
    text.textContent = n + " of " + questions.length + " " + noun +
      (missing ? " \u00b7 answer the highlighted question to submit" : "");
    fill.style.width = (100 * n / questions.length) + "%";
  }

  // The part of the window below the sticky progress bar (it scrolls away on a phone).
  function viewport() {
    var top = 0;
    if (head && window.getComputedStyle(head).position === "sticky") {
      top = Math.max(0, head.getBoundingClientRect().bottom);
    }
    return { top: top, bottom: window.innerHeight || document.documentElement.clientHeight };
  }
  // How much of `el` shows: the share of its height, or of the window when it is taller than the window.
  function shown(el) {
    var r = el.getBoundingClientRect(), v = viewport();
    var part = Math.min(r.bottom, v.bottom) - Math.max(r.top, v.top);
    return part <= 0 ? 0 : part / Math.max(1, Math.min(r.height, v.bottom - v.top));
  }

  function bringIntoView(i) {
    var q = questions[i], v = viewport();
    var target = q.getBoundingClientRect().height <= 0.9 * (v.bottom - v.top) ? q : options(q);
    pending = i;
    target.scrollIntoView({ behavior: smooth ? "smooth" : "auto", block: "center" });
  }

  // Highlight question i and give it the focus (unless the participant took the focus to a control outside the
  // questions, e.g. the submit button, and `keep` says to leave it there); `scroll` brings it into view.
  function activate(i, scroll, keep) {
    active = Math.max(0, Math.min(questions.length - 1, i));
    update();
    var focused = document.activeElement;
    var elsewhere = focused && focused !== document.body && indexOf(focused) < 0;
    if (!(keep && elsewhere) && focused !== questions[active]) questions[active].focus({ preventScroll: true });
    if (scroll) bringIntoView(active);
  }

  // The next unanswered question after i (wrapping round), or -1 when every one is answered.
  function nextOpen(i) {
    for (var step = 1; step <= questions.length; step++) {
      var j = (i + step) % questions.length;
      if (!answered(questions[j])) return j;
    }
    return -1;
  }

  function answeredAt(i) {
    var next = nextOpen(i);
    if (next >= 0) activate(next, true, false); else activate(i, false, false);
  }

  // After scrolling: a highlighted question no longer on screen hands the highlight (and the focus) to one that
  // is, the first unanswered one on screen if any, else the most visible.
  function follow() {
    pending = -1;
    if (shown(questions[active]) > 0) return;
    var best = -1, bestShare = 0;
    for (var i = 0; i < questions.length; i++) {
      var share = shown(questions[i]);
      if (share >= 0.5 && !answered(questions[i])) { best = i; break; }
      if (share > bestShare) { best = i; bestShare = share; }
    }
    if (best >= 0) activate(best, false, true);
  }
  var settle = null;
  window.addEventListener("scroll", function () {
    clearTimeout(settle);
    settle = setTimeout(follow, 150);
  }, { passive: true });

  form.addEventListener("focusin", function (e) {
    var i = indexOf(e.target);
    if (i < 0) return;
    if (e.target.type === "radio") { questions[i].focus({ preventScroll: true }); }
    if (i !== active) activate(i, false, false);
  });
  form.addEventListener("click", function (e) {
    clearTimeout(settle);  // a click is the participant's choice: a scroll just before it does not move the highlight
    var i = indexOf(e.target);
    if (i >= 0) {
      if (i !== active || document.activeElement !== questions[i]) activate(i, false, false);
      return;
    }
    // A/B: a click on a pair's texts goes to that pair's first unanswered question (else its first)
    var pair = e.target.closest && e.target.closest("[data-pair]");
    if (!pair) return;
    var own = questions.filter(function (q) { return pair.contains(q); });
    var pick = own.filter(function (q) { return !answered(q); })[0] || own[0];
    if (pick) activate(questions.indexOf(pick), false, false);
  });
  form.addEventListener("change", function (e) {
    var i = indexOf(e.target);
    if (i >= 0) answeredAt(i);
  });
  // The browser refuses to submit with a question unanswered: show that question, not a bubble on a radio.
  form.addEventListener("invalid", function (e) {
    e.preventDefault();
    var i = indexOf(e.target);
    if (i < 0 || missing && questions.slice(0, i).some(function (q) { return !answered(q); })) return;
    missing = true;
    activate(i, true, false);
  }, true);

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var target = e.target || {};
    var tag = target.tagName || "";
    if (tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && target.type !== "radio")) return;
    var k = e.key;
    var onRadio = tag === "INPUT" && target.type === "radio";
    var value = abKeys ? AB[String(k).toLowerCase()] : (/^[0-9]$/.test(k) ? k : undefined);
    if (value) {
      var q = questions[active];
      var input = q.querySelector("input[type=radio][value='" + value + "']");
      if (!input) return;
      e.preventDefault();
      if (pending !== active && shown(options(q)) < 0.99) {
        bringIntoView(active);  // see first what the key would change
        return;
      }
      if (!input.checked) {
        input.checked = true;
        input.dispatchEvent(new Event("change", { bubbles: true }));
      } else {
        answeredAt(active);
      }
    } else if (k === "j" || (k === "ArrowDown" && e.shiftKey)) {
      e.preventDefault();
      activate(active + 1, true, false);
    } else if (k === "k" || (k === "ArrowUp" && e.shiftKey)) {
      e.preventDefault();
      activate(active - 1, true, false);
    } else if (onRadio && SCROLL_KEYS.indexOf(k) >= 0) {
      // a radio would change its group's answer: move the focus to its question and scroll as the key means
      e.preventDefault();
      var i = indexOf(target);
      if (i >= 0) activate(i, false, false);
      var page = 0.85 * (viewport().bottom - viewport().top);
      var by = { ArrowUp: -40, ArrowDown: 40, PageUp: -page, PageDown: page, " ": e.shiftKey ? -page : page }[k];
      if (k === "Home") window.scrollTo(0, 0);
      else if (k === "End") window.scrollTo(0, document.documentElement.scrollHeight);
      else if (by) window.scrollBy(0, by);
    }
  }, true);
  // Space checks a focused radio when the key goes up: never one that had the key taken from it
  document.addEventListener("keyup", function (e) {
    var target = e.target || {};
    if (e.key === " " && target.tagName === "INPUT" && target.type === "radio") e.preventDefault();
  }, true);

  var firstOpen = questions.findIndex(function (q) { return !answered(q); });
  var start = firstOpen >= 0 ? firstOpen : 0;
  // a page sent back with some answers missing opens at the first missing one
  activate(start, firstOpen > 0, false);

  var submitted = false;
  form.addEventListener("submit", function (e) {
    if (submitted) { e.preventDefault(); return; }
    submitted = true;
    var button = document.getElementById("submit-ratings");
    if (button) { button.textContent = "Saving…"; }
  });
})();
