// Progressive enhancement for a questionnaire page (the form works fully without this script): a progress indicator,
// the active question highlighted, keys that answer it and move on.
// - Similarity pages (<form id="ratings-form">): one question per pair ([data-pair]); a digit key rates the active
//   pair with that point of the scale (the radio buttons the page has: 1-6).
// - A/B pages (<form id="ab-form" data-ab>): one question per pair and criterion ([data-question]); a / b
//   (or the left / right arrows) choose Text A / Text B, t "About the same" where offered.
// On both, j / k (or Shift+Down / Shift+Up) move between questions. The form says what its questions are
// (data-item) and how the progress reads (data-progress).
(function () {
  "use strict";
  var form = document.getElementById("ratings-form") || document.getElementById("ab-form");
  if (!form) return;
  var questions = Array.prototype.slice.call(form.querySelectorAll(form.getAttribute("data-item") || "[data-pair]"));
  var noun = form.getAttribute("data-progress") || "pairs rated";
  var AB = { a: "a", ArrowLeft: "a", b: "b", ArrowRight: "b", t: "tie" };
  var abKeys = form.hasAttribute("data-ab");
  var text = document.getElementById("progress-text");
  var fill = document.getElementById("progress-fill");
  var active = 0;

  function answered(q) { return !!q.querySelector("input[type=radio]:checked"); }

  function update() {
    var n = questions.filter(answered).length;
    questions.forEach(function (q, i) {
      q.classList.toggle("rated", answered(q));
      q.classList.toggle("active", i === active);
    });
    text.textContent = n + " of " + questions.length + " " + noun;
    fill.style.width = (100 * n / questions.length) + "%";
  }

  function activate(i, scroll) {
    active = Math.max(0, Math.min(questions.length - 1, i));
    update();
    if (scroll) questions[active].scrollIntoView({ behavior: "smooth", block: "center" });
  }

  questions.forEach(function (q, i) {
    q.addEventListener("focusin", function () { if (active !== i) activate(i, false); });
    q.addEventListener("click", function () { if (active !== i) activate(i, false); });
    q.addEventListener("change", function () {
      update();
      var next = questions.findIndex(function (other, j) { return j > i && !answered(other); });
      if (next >= 0) activate(next, true);
    });
  });

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = (e.target && e.target.tagName) || "";
    if (tag === "TEXTAREA" || (tag === "INPUT" && e.target.type === "text")) return;
    var k = e.key;
    var value = abKeys ? AB[k] : (/^[0-9]$/.test(k) ? k : undefined);
    var input = value ? questions[active].querySelector("input[type=radio][value='" + value + "']") : null;
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

  var firstOpen = questions.findIndex(function (q) { return !answered(q); });
  activate(firstOpen >= 0 ? firstOpen : 0, false);

  var submitted = false;
  form.addEventListener("submit", function (e) {
    if (submitted) { e.preventDefault(); return; }
    submitted = true;
    var button = document.getElementById("submit-ratings");
    if (button) { button.textContent = "Saving…"; }
  });
})();
