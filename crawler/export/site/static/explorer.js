// The Compatibility Explorer's filters. The whole matrix is in the HTML; this script only
// hides and shows it, keeps the filter state in the URL hash (#platform=…&status=…), moves
// focus between cells with the arrow keys, and shows the old-data banner. It never writes
// markup, only properties and text: upstream text stays text. Plain ES2017, no library.
//
// It runs in <head>: the "js" class lets the stylesheet show only the first page of rows
// while the rest of a large matrix is parsed (without JavaScript every row is shown).
(function () {
  "use strict";
  document.documentElement.classList.add("js");
  var KEYS = ["platform", "project", "layer", "status", "q"];
  var DAY = 86400000;
  var doc = document;
  var form, matrix, count, nomatch, more, fold, pageRows, limit;
  var index = null;
  var hiddenColumns = [];
  var state = {};

  function staleBanner() {
    var banner = doc.getElementById("stale");
    var checked = Date.parse(doc.body.getAttribute("data-checked") + "T00:00:00Z");
    var days = Number(doc.body.getAttribute("data-stale-after-days"));
    if (!banner || isNaN(checked) || isNaN(days)) return;
    var age = Math.floor((Date.now() - checked) / DAY);
    banner.hidden = !(age > days);
    doc.getElementById("stale-age").textContent = age + (age === 1 ? " day" : " days");
  }

  // Rows, their records and the project cards, read once from the DOM on first use.
  function buildIndex() {
    var heads = matrix.tHead.rows[0].cells;
    var platforms = [];
    for (var h = 1; h < heads.length; h++) platforms.push(heads[h].getAttribute("data-platform"));
    var rows = [];
    var trs = matrix.tBodies[0].rows;
    for (var r = 0; r < trs.length; r++) {
      var tr = trs[r];
      var entries = [];
      for (var c = 1; c < tr.cells.length; c++) {
        var items = tr.cells[c].children;
        for (var i = 0; i < items.length; i++) {
          entries.push({
            el: items[i], column: c - 1, shown: true, text: null,
            status: items[i].getAttribute("data-status"),
            layer: items[i].getAttribute("data-layer")
          });
        }
      }
      rows.push({ el: tr, project: tr.getAttribute("data-project"), head: tr.cells[0],
                  headText: null, entries: entries, shown: r < pageRows });
    }
    var cards = [];
    var articles = doc.querySelectorAll("article.card, #changes li");
    for (var a = 0; a < articles.length; a++) {
      cards.push({ el: articles[a], project: articles[a].getAttribute("data-project"),
                   layer: articles[a].getAttribute("data-layer"),
                   text: null, shown: true, change: articles[a].tagName === "LI" });
    }
    var groups = Array.prototype.map.call(doc.querySelectorAll("section.layer"), function (el) {
      return { el: el, cards: el.querySelectorAll("article.card"), shown: true };
    });
    // From here on the script decides which rows show (the stylesheet's first page no longer)
    rows.forEach(function (row) { row.el.hidden = !row.shown; });
    matrix.classList.add("managed");
    return { platforms: platforms, rows: rows, cards: cards, groups: groups };
  }

  function lower(el) { return el ? el.textContent.toLowerCase() : ""; }

  // Which records match: platform, layer and status select records; the search matches the
  // project (name, latest version) or, failing that, the record's own text and platform.
  function apply() {
    if (!index) index = buildIndex();
    var q = (state.q || "").toLowerCase();
    var columns = index.platforms.map(function () { return false; });
    var matched = 0;
    var withRecords = {};  // projects with a record that matches
    index.rows.forEach(function (row) {
      var projectOk = !state.project || row.project === state.project;
      if (q && row.headText === null) row.headText = lower(row.head);
      var headMatch = !q || row.headText.indexOf(q) >= 0;
      var any = false;
      row.entries.forEach(function (e) {
        var ok = projectOk &&
          (!state.platform || index.platforms[e.column] === state.platform) &&
          (!state.layer || e.layer === state.layer) &&
          (!state.status || e.status === state.status);
        if (ok && !headMatch) {
          if (e.text === null) e.text = index.platforms[e.column].toLowerCase() + " " + lower(e.el);
          ok = e.text.indexOf(q) >= 0;
        }
        if (ok !== e.shown) { e.el.hidden = !ok; e.shown = ok; }
        if (ok) { any = true; columns[e.column] = true; }
      });
      var show = any && matched < limit;
      if (any) { matched++; withRecords[row.project] = true; }
      if (show !== row.shown) { row.el.hidden = !show; row.shown = show; }
    });
    var filtered = KEYS.some(function (k) { return state[k]; });
    columns.forEach(function (shown, i) {
      var hide = filtered && !shown;
      if (hide !== !!hiddenColumns[i]) {
        matrix.classList.toggle("h" + (i + 2), hide);
        hiddenColumns[i] = hide;
      }
    });
    // The cards and the last audit's changes follow the same filters: a platform, layer or
    // status keeps the projects with a matching record; a layer alone also keeps the items
    // the page lists in that layer (their cards say it); the search, their own text too.
    var byRecord = state.platform || state.layer || state.status;
    var layerOnly = state.layer && !state.platform && !state.status;
    var layers = {};  // the layer of each item, from its card
    index.cards.forEach(function (card) { if (!card.change) layers[card.project] = card.layer; });
    index.cards.forEach(function (card) {
      var ok = !state.project || card.project === state.project;
      if (ok && byRecord) {
        ok = !!withRecords[card.project] || (layerOnly && layers[card.project] === state.layer);
      }
      if (ok && q) {
        if (card.text === null) {
          card.text = card.change ? lower(card.el)
            : lower(card.el.querySelector("h4")) + " " + lower(card.el.querySelector("dl"));
        }
        ok = card.text.indexOf(q) >= 0 || !!withRecords[card.project];
      }
      if (ok !== card.shown) { card.el.hidden = !ok; card.shown = ok; }
    });
    index.groups.forEach(function (group) {  // a layer's heading goes with its last card
      var any = Array.prototype.some.call(group.cards, function (el) { return !el.hidden; });
      if (any !== group.shown) { group.el.hidden = !any; group.shown = any; }
    });
    report(Math.min(matched, limit), matched, index.rows.length);
  }

  function report(shown, matched, total) {
    var noun = matched === 1 ? " project" : " projects";
    var what = matched === total ? noun : " matching" + noun + " (" + total + " in all)";
    count.textContent = "Showing " + shown + " of " + matched + what;
    nomatch.hidden = matched > 0 || total === 0;
    more.hidden = shown >= matched;
  }

  function readForm() {
    var read = {};
    KEYS.forEach(function (key) {
      var value = form.elements.namedItem(key).value.trim();
      if (value) read[key] = value;
    });
    return read;
  }

  function hasOption(select, value) {
    for (var i = 0; i < select.options.length; i++) if (select.options[i].value === value) return true;
    return false;
  }

  // "#platform=Cambricon%20MLU&status=in%20progress" → the form; values no option has are
  // ignored. A hash without "=" is an anchor (#p-vllm) and leaves the filters alone.
  function restore() {
    var hash = location.hash.replace(/^#/, "");
    if (hash && hash.indexOf("=") < 0) return false;
    var params = new URLSearchParams(hash);
    KEYS.forEach(function (key) {
      var field = form.elements.namedItem(key);
      var value = params.get(key) || "";
      if (field.tagName === "SELECT" && !hasOption(field, value)) value = "";
      field.value = value;
    });
    return true;
  }

  function toHash(values) {
    return KEYS.filter(function (k) { return values[k]; }).map(function (k) {
      return k + "=" + encodeURIComponent(values[k]);
    }).join("&");
  }

  // On a narrow screen the filters fold behind one button (the stylesheet hides the fields
  // while the form is not "open"); the button says how many filters are on.
  function foldLabel() {
    var on = KEYS.filter(function (k) { return state[k]; }).length;
    fold.textContent = on ? "Filters (" + on + (on === 1 ? " filter on)" : " filters on)") : "Filters";
  }
  function toggleFold() {
    var open = !form.classList.contains("open");
    form.classList.toggle("open", open);
    fold.setAttribute("aria-expanded", open ? "true" : "false");
  }

  function update() {
    state = readForm();
    foldLabel();
    limit = pageRows;
    apply();
    var hash = toHash(state);
    if ("#" + hash === location.hash || (!hash && !location.hash)) return;
    try {
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    } catch (err) {
      location.hash = hash;
    }
  }

  // Arrow keys, Home and End move between the visible cells of the matrix.
  function visible(el) { return el.getClientRects().length > 0; }
  function onKey(ev) {
    var key = ev.key;
    if (["ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Home", "End"].indexOf(key) < 0) return;
    var cell = ev.target.closest("td, th");
    if (!cell || !matrix.contains(cell)) return;
    var row = cell.parentElement;
    var next = null;
    if (key === "ArrowUp" || key === "ArrowDown") {
      var rows = Array.prototype.filter.call(matrix.rows, visible);
      var other = rows[rows.indexOf(row) + (key === "ArrowUp" ? -1 : 1)];
      next = other ? other.cells[cell.cellIndex] : null;
    } else {
      var cells = Array.prototype.filter.call(row.cells, visible);
      var at = cells.indexOf(cell);
      next = key === "Home" ? cells[0] : key === "End" ? cells[cells.length - 1]
        : cells[at + (key === "ArrowLeft" ? -1 : 1)];
    }
    if (next) {
      ev.preventDefault();
      if (!next.hasAttribute("tabindex")) next.tabIndex = -1;
      next.focus();
    }
  }

  function start() {
    form = doc.getElementById("filters");
    matrix = doc.getElementById("matrix");
    count = doc.getElementById("count");
    nomatch = doc.getElementById("nomatch");
    more = doc.getElementById("more");
    fold = doc.getElementById("filters-toggle");
    fold.addEventListener("click", toggleFold);
    pageRows = Number(matrix.getAttribute("data-page-rows")) || Infinity;
    limit = pageRows;
    var typing = 0;
    form.addEventListener("change", update);
    form.addEventListener("input", function (ev) {
      if (ev.target.name !== "q") return;
      clearTimeout(typing);
      typing = setTimeout(update, 150);
    });
    form.addEventListener("reset", function () { setTimeout(update, 0); });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); update(); });
    doc.getElementById("more-rows").addEventListener("click", function () { limit += pageRows; apply(); });
    doc.getElementById("all-rows").addEventListener("click", function () { limit = Infinity; apply(); });
    window.addEventListener("hashchange", function () {
      if (restore()) { state = readForm(); foldLabel(); limit = pageRows; apply(); }
    });
    matrix.addEventListener("keydown", onKey);
    form.hidden = false;
    if (window.matchMedia && window.matchMedia("(max-width: 40rem)").matches) {
      ["changes", "errors"].forEach(function (id) {  // on a phone, folded: the cards come first
        var list = doc.getElementById(id);
        if (list) list.open = false;
      });
    }
    staleBanner();
    if (location.hash && restore()) {
      state = readForm();
      foldLabel();
      apply();
    } else {
      var total = matrix.tBodies[0].rows.length;
      report(Math.min(total, pageRows), total, total);
    }
  }

  if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", start);
  else start();
})();
