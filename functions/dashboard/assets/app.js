// Plume dashboard: the page works without this script; it adds lazy loading of span details
// and collapsing of the span tree. No inline handlers: everything is bound here (CSP).
"use strict";
(function () {
  function rowsAfter(li) {
    var depth = Number(li.dataset.depth), out = [];
    for (var n = li.nextElementSibling; n && Number(n.dataset.depth) > depth; n = n.nextElementSibling) out.push(n);
    return out;
  }

  function toggleDetail(link) {
    var li = link.closest("li.span"), box = li.querySelector(".detail");
    var open = link.getAttribute("aria-expanded") === "true";
    link.setAttribute("aria-expanded", open ? "false" : "true");
    box.hidden = open;
    if (open || box.dataset.loaded) return;
    box.dataset.loaded = "1";
    box.textContent = "Loading…";
    fetch(link.dataset.detail, { headers: { "X-Plume-Fragment": "1" }, credentials: "same-origin" })
      .then(function (res) {
        if (!res.ok) throw new Error("status " + res.status);
        return res.text();
      })
      .then(function (html) {
        // The fragment is rendered by html/template on this origin (every value escaped);
        // parsed inert, then moved in.
        var doc = new DOMParser().parseFromString(html, "text/html");
        box.replaceChildren.apply(box, Array.from(doc.body.childNodes));
      })
      .catch(function () {
        delete box.dataset.loaded;
        box.textContent = "";
        var a = document.createElement("a");
        a.href = link.href;
        a.textContent = "The span could not be loaded here; open it on its own page.";
        box.appendChild(a);
      });
  }

  function toggleFold(btn) {
    var li = btn.closest("li.span");
    var expanded = btn.getAttribute("aria-expanded") === "true";
    btn.setAttribute("aria-expanded", expanded ? "false" : "true");
    btn.textContent = expanded ? "▸" : "▾";
    li.classList.toggle("folded", expanded);
    // Collapsing hides every descendant; expanding shows those not under a folded child.
    var rows = rowsAfter(li), hideBelow = Infinity;
    rows.forEach(function (n) {
      var d = Number(n.dataset.depth);
      if (expanded) { n.hidden = true; return; }
      if (d > hideBelow) { n.hidden = true; return; }
      hideBelow = Infinity;
      n.hidden = false;
      if (n.classList.contains("folded")) hideBelow = d;
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("li.span .fold").forEach(function (b) {
      if (!b.disabled) b.hidden = false;
    });
    document.addEventListener("click", function (ev) {
      if (ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
      var link = ev.target.closest("a.open[data-detail]");
      if (link) { ev.preventDefault(); toggleDetail(link); return; }
      var fold = ev.target.closest("button.fold");
      if (fold) toggleFold(fold);
    });
  });
})();
