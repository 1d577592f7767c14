// Optimization run page: while the run is not over, its live part is fetched again every 2 s
// (the page's own fragment, rendered and escaped by html/template on this origin) and swapped
// in; the polling stops when the fetched part says the run is over. Without this script the
// page has a refresh link.
(function () {
  "use strict";
  var interval = 2000;

  function poll(box) {
    function tick() {
      fetch(box.dataset.runLive, { headers: { "X-Plume-Fragment": "1" }, credentials: "same-origin" })
        .then(function (res) {
          if (res.status >= 400 && res.status < 500) { // signed out or gone: stop, and say so
            var note = box.querySelector('[data-testid="run-pending"]');
            if (note) note.replaceChildren("This part of the page no longer refreshes itself: reload the page.");
            return null;
          }
          if (!res.ok) throw new Error("status " + res.status);
          return res.text();
        })
        .then(function (html) {
          if (html === null) return;
          var doc = new DOMParser().parseFromString(html, "text/html");
          var root = doc.querySelector("[data-run-state]");
          if (!root) throw new Error("no run in the fragment");
          box.replaceChildren.apply(box, Array.from(doc.body.childNodes));
          box.dataset.over = root.dataset.over;
          if (root.dataset.over !== "true") setTimeout(tick, interval);
        })
        .catch(function () {
          // Try again later: a refresh link stays on the page meanwhile.
          setTimeout(tick, interval * 2);
        });
    }
    setTimeout(tick, interval);
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-run-live]").forEach(function (box) {
      if (box.dataset.over !== "true") poll(box);
    });
  });
})();
