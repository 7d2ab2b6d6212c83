// The admin's study form (survey/admin_study_form.py): show only the fieldsets of the chosen kind (a fieldset with
// class "study-kind" lists its kinds as "kind-<value>" classes; the others are every kind's), and let the criteria
// table grow by a row. Without this script every fieldset shows and two blank criterion rows are offered.
(function () {
  "use strict";

  function showKind(select) {
    var kind = select.value;
    document.querySelectorAll("fieldset.study-kind").forEach(function (fieldset) {
      fieldset.hidden = !fieldset.classList.contains("kind-" + kind);
    });
  }

  function addCriterion(table) {
    var rows = table.tBodies[0].rows;
    var row = rows[rows.length - 1].cloneNode(true);
    var number = rows.length + 1;
    row.querySelectorAll("input").forEach(function (input) {
      var part = input.name.split("-").pop();  // "name" or "question"
      input.value = "";
      input.id = input.id.replace(/-\d+$/, "-" + number);
      input.setAttribute("aria-label", "Criterion " + number + ": " + part);
    });
    table.tBodies[0].appendChild(row);
    row.querySelector("input").focus();
  }

  function start() {
    var select = document.getElementById("id_kind");
    if (select) {
      showKind(select);
      select.addEventListener("change", function () { showKind(select); });
    }
    document.querySelectorAll("button.add-criterion").forEach(function (button) {
      var table = button.previousElementSibling;
      button.hidden = false;
      button.addEventListener("click", function () { addCriterion(table); });
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
