// Progressive enhancement for the questionnaire page: progress indicator, active pair, a digit key rates the
// active pair with that point of the scale (the scale is the radio buttons the page has: 1-6).
// The form works fully without this script.
(function () {
  "use strict";
  var form = document.getElementById("ratings-form");
  if (!form) return;
  var pairs = Array.prototype.slice.call(form.querySelectorAll("[data-pair]"));
  var text = document.getElementById("progress-text");
  var fill = document.getElementById("progress-fill");
  var active = 0;

  function rated(p) { return !!p.querySelector("input[type=radio]:checked"); }

  function update() {
    var n = pairs.filter(rated).length;
    pairs.forEach(function (p, i) {
      p.classList.toggle("rated", rated(p));
      p.classList.toggle("active", i === active);
    });
    text.textContent = n + " of " + pairs.length + " pairs rated";
    fill.style.width = (100 * n / pairs.length) + "%";
  }

  function activate(i, scroll) {
    active = Math.max(0, Math.min(pairs.length - 1, i));
    update();
    if (scroll) pairs[active].scrollIntoView({ behavior: "smooth", block: "center" });
  }

  pairs.forEach(function (p, i) {
    p.addEventListener("focusin", function () { if (active !== i) activate(i, false); });
    p.addEventListener("click", function () { if (active !== i) activate(i, false); });
    p.addEventListener("change", function () {
      update();
      var next = pairs.findIndex(function (q, j) { return j > i && !rated(q); });
      if (next >= 0) activate(next, true);
    });
  });

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = (e.target && e.target.tagName) || "";
    if (tag === "TEXTAREA" || (tag === "INPUT" && e.target.type === "text")) return;
    var k = e.key;
    var input = /^[0-9]$/.test(k) ? pairs[active].querySelector("input[type=radio][value='" + k + "']") : null;
    if (input) {
      input.checked = true;
      input.focus({ preventScroll: true });
      input.dispatchEvent(new Event("change", { bubbles: true }));
      e.preventDefault();
    } else if (k === "j" || k === "ArrowDown" && e.shiftKey) {
      activate(active + 1, true);
    } else if (k === "k" || k === "ArrowUp" && e.shiftKey) {
      activate(active - 1, true);
    }
  });

  var firstOpen = pairs.findIndex(function (p) { return !rated(p); });
  activate(firstOpen >= 0 ? firstOpen : 0, false);

  var submitted = false;
  form.addEventListener("submit", function (e) {
    if (submitted) { e.preventDefault(); return; }
    submitted = true;
    var button = document.getElementById("submit-ratings");
    if (button) { button.textContent = "Saving…"; }
  });
})();
