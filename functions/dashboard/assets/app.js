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

  // Keyboard navigation of the tree, on the rows' links: ArrowDown/ArrowUp move between the
  // visible rows, ArrowRight opens a folded span's children (or goes to the first child),
  // ArrowLeft folds them (or goes to the parent), Home/End go to the first/last row. Enter is
  // the link's own: it shows the span's detail.
  function visibleRows(tree) {
    return Array.from(tree.querySelectorAll(":scope > li.span")).filter(function (li) { return !li.hidden; });
  }

  function focusRow(li) {
    if (li) li.querySelector("a.open").focus();
  }

  function onTreeKey(ev) {
    var link = ev.target.closest && ev.target.closest(".tree a.open");
    if (!link || ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
    var li = link.closest("li.span"), tree = li.parentElement;
    var rows = visibleRows(tree), i = rows.indexOf(li), depth = Number(li.dataset.depth);
    var fold = li.querySelector(".line button.fold");
    var hasKids = fold && !fold.disabled, expanded = hasKids && fold.getAttribute("aria-expanded") === "true";
    switch (ev.key) {
      case "ArrowDown": focusRow(rows[i + 1]); break;
      case "ArrowUp": focusRow(rows[i - 1]); break;
      case "Home": focusRow(rows[0]); break;
      case "End": focusRow(rows[rows.length - 1]); break;
      case "ArrowRight":
        if (hasKids && !expanded) toggleFold(fold);
        else if (hasKids) focusRow(rows[i + 1]);
        break;
      case "ArrowLeft":
        if (hasKids && expanded) { toggleFold(fold); break; }
        for (var j = i - 1; j >= 0; j--) {
          if (Number(rows[j].dataset.depth) < depth) { focusRow(rows[j]); break; }
        }
        break;
      default: return;
    }
    ev.preventDefault();
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.addEventListener("keydown", onTreeKey);
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
