// Filters the page by status, tag and text, and opens the scenario a link
// points at. It reads only the page itself: no network, no storage.
(function () {
  "use strict";
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  var chips = $$(".status-filter .chip");
  var tagSelect = $("#tag");
  var search = $("#search");
  var scenarios = $$(".scenario");
  var features = $$(".feature");

  // Each scenario's searchable text, lower case, taken once.
  scenarios.forEach(function (s) { s._text = s.textContent.toLowerCase(); });

  function selectedStatuses() {
    if (!chips.length) return null; // a spec page has no outcomes
    var on = {};
    chips.forEach(function (c) { if (c.getAttribute("aria-pressed") === "true") on[c.dataset.status] = true; });
    return on;
  }

  function apply() {
    var statuses = selectedStatuses();
    var tag = tagSelect.value;
    var q = search.value.trim().toLowerCase();
    var shown = 0;
    scenarios.forEach(function (s) {
      var sts = (s.dataset.statuses || "").split(" ").filter(Boolean);
      var tags = (s.dataset.tags || "").split(" ");
      var ok = (!statuses || sts.some(function (x) { return statuses[x]; })) &&
        (!tag || tags.indexOf(tag) >= 0) &&
        (!q || s._text.indexOf(q) >= 0);
      s.hidden = !ok;
      if (ok) shown++;
      // In an outline, rows of a hidden status go too.
      $$("tr[data-status]", s).forEach(function (tr) {
        tr.hidden = !!statuses && !statuses[tr.dataset.status];
      });
      var toc = $('.toc-scenario[data-scenario="' + s.id + '"]');
      if (toc) toc.hidden = !ok;
    });
    features.forEach(function (f) {
      var any = $$(".scenario", f).some(function (s) { return !s.hidden; });
      f.hidden = !any;
      var toc = $('.toc-feature[data-feature="' + f.id + '"]');
      if (toc) toc.hidden = !any;
    });
    $("#shown").textContent = shown + " of " + scenarios.length + " scenarios shown";
    $("#empty").hidden = shown > 0;
  }

  chips.forEach(function (c) {
    c.addEventListener("click", function () {
      c.setAttribute("aria-pressed", c.getAttribute("aria-pressed") === "true" ? "false" : "true");
      apply();
    });
  });
  tagSelect.addEventListener("change", apply);
  search.addEventListener("input", apply);

  var toggle = $("#toggle-all");
  toggle.addEventListener("click", function () {
    var open = toggle.textContent === "Expand all";
    $$(".scenario > details").forEach(function (d) { d.open = open; });
    toggle.textContent = open ? "Collapse all" : "Expand all";
  });

  // A link to a scenario or an examples row shows it even when the filters
  // hid it, opens it and brings it into view.
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (!el) return;
    var sc = el.closest(".scenario");
    if (sc && sc.hidden || el.hidden) {
      chips.forEach(function (c) { c.setAttribute("aria-pressed", "true"); });
      tagSelect.value = "";
      search.value = "";
      apply();
    }
    if (sc) $("details", sc).open = true;
    el.scrollIntoView({ block: "start" });
  }
  window.addEventListener("hashchange", reveal);

  apply();
  reveal();
})();
