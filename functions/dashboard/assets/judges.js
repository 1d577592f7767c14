// Judges: the criteria preview of the judge form follows the template as it is typed, from
// the dashboard's fragment of the criteria the API would infer. Without this script, the
// form's "Preview criteria" button shows them.
(function () {
  "use strict";
  var area = document.querySelector("textarea[data-preview]");
  if (!area) return;
  var box = document.querySelector('[data-testid="criteria-preview"]');
  var timer = 0, seq = 0;
  function refresh() {
    var mine = ++seq;
    var url = area.dataset.preview + "?template=" + encodeURIComponent(area.value);
    fetch(url, { headers: { "X-Plume-Fragment": "1" }, credentials: "same-origin" })
      .then(function (res) {
        if (!res.ok) throw new Error("status " + res.status);
        return res.text();
      })
      .then(function (html) {
        if (mine !== seq) return; // a newer request is on its way
        // Rendered by html/template on this origin (every value escaped); parsed inert.
        var doc = new DOMParser().parseFromString(html, "text/html");
        box.replaceChildren.apply(box, Array.from(doc.body.childNodes));
      })
      .catch(function () {
        // Say the preview is out of date rather than leave an older template's criteria; the
        // form's "Preview criteria" button still works (a template too long for a URL).
        if (mine !== seq) return;
        var p = document.createElement("p");
        p.className = "help";
        p.textContent = "The preview could not follow your typing: use the Preview criteria button.";
        box.replaceChildren(p);
      });
  }
  area.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(refresh, 250);
  });
})();
