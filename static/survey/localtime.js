// Rewrites each <time data-local-time datetime="ISO"> (rendered as "HH:MM UTC") in the browser's own locale and
// time zone, e.g. "20:15 CET" or "8:15 PM EST". Without this script the UTC text stays, which is also correct.
(function () {
  "use strict";
  var nodes = document.querySelectorAll("time[data-local-time]");
  Array.prototype.forEach.call(nodes, function (node) {
    var when = new Date(node.getAttribute("datetime"));
    if (isNaN(when.getTime())) return;
    try {
      node.textContent = when.toLocaleTimeString([], { hour: "numeric", minute: "2-digit", timeZoneName: "short" });
      node.title = when.toISOString().slice(0, 16).replace("T", " ") + " UTC";
      node.setAttribute("data-localized", "");
    } catch (e) { /* an old browser: keep the UTC text */ }
  });
})();
