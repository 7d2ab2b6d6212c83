// Progressive enhancement for the A/B page: a progress indicator over every question, the active
// question highlighted; keys a / b (or the left / right arrows) answer it with Text A / Text B, t with
// "About the same" where offered; j / k (or Shift+Down / Shift+Up) move between questions.
// The form works fully without this script.
(function () {
  "use strict";
  var form = document.getElementById("preference-form");
  if (!form) return;
  var questions = Array.prototype.slice.call(form.querySelectorAll("[data-question]"));
  var text = document.getElementById("progress-text");
  var fill = document.getElementById("progress-fill");
  var active = 0;

  function answered(q) { return !!q.querySelector("input[type=radio]:checked"); }

  function update() {
    var n = questions.filter(answered).length;
    questions.forEach(function (q, i) {
      q.classList.toggle("answered", answered(q));
      q.classList.toggle("active", i === active);
    });
    text.textContent = n + " of " + questions.length + " questions answered";
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

  var KEYS = { a: "a", ArrowLeft: "a", b: "b", ArrowRight: "b", t: "tie" };
  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = (e.target && e.target.tagName) || "";
    if (tag === "TEXTAREA" || (tag === "INPUT" && e.target.type === "text")) return;
    var k = e.key;
    var value = KEYS[k];
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
