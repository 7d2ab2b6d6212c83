// Polls a JSON status URL for the researcher pages: every `every` ms, calls onState(state) with the answer and
// stops once it returns true; a failed request is retried at the next tick. The run page (1.5 s, stops when
// the run is finished) and the study page (5 s) use it.
window.pollJson = function (url, every, onState) {
  "use strict";
  function poll() {
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}, cache: "no-store"})
      .then(function (response) { if (!response.ok) { throw new Error(response.status); } return response.json(); })
      .then(function (state) { if (!onState(state)) { window.setTimeout(poll, every); } })
      .catch(function () { window.setTimeout(poll, every); });
  }
  window.setTimeout(poll, every);
};
