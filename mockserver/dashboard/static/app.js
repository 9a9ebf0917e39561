// The mock's dashboard. It reads everything through the mock's control API
// (/__mock/...) and the API (/agent/...), as any client would, once a second
// (served by the validating proxy, through the proxy's control API only):
// runs, the selected run and its inbox, run events, schedules, agent
// identities, fault and fate rules, the request journal; behind the proxy,
// the violations, the client versions and the drift.
// Its API reads carry X-Mock-Observer, so they stay out of the request
// journal and no fault rule hits them. Everything the server sent is put on
// the page as text (textContent), never as markup.
(function () {
  "use strict";

  // Paths relative to this page, so it works at /__mock/ui/ and under the
  // API's version prefix alike. Served by the validating proxy (at
  // /__mock/proxy/ui/), the page shows the traffic it checked and what it
  // found instead of the mock's clock, sessions and rules.
  var PROXY = /\/__mock\/proxy\/ui\/$/.test(location.pathname);
  var CONTROL = new URL(PROXY ? "../../" : "../", location.href);
  var API = new URL(PROXY ? "../../../agent/" : "../../agent/", location.href);
  var PROGRESSION = ["QUEUED", "PENDING", "CLAIMED", "INPROGRESS"];
  var TERMINAL = { SUCCEEDED: 1, FAILED: 1, ERROR: 1, CANCELLED: 1 };
  var POLL_MS = 1000;
  // Each panel reads at most one page per refresh: the newest runs, one
  // page of events after the cursor, one page of a run's inbox.
  var RUNS_PAGE = 100;
  var EVENTS_PAGE = 200;
  var EVENTS_KEPT = 200;
  var INBOX_PAGE = 100;

  var state = {
    session: sessionStorage.getItem("agentruns.session") || "",
    key: localStorage.getItem("agentruns.key") || "wk-mock-alice",
    token: sessionStorage.getItem("agentruns.token") || "",
    selected: null,
    runs: [],
    clock: null,
    seen: {}, // run id -> {state -> ISO time it began, as far as seen}
    lastState: {}, // run id -> last state seen, to flash a row that moved
    events: null, // the event poll's cursor and what it has seen (newEventLog)
    busy: false,
  };
  // A token in the address's fragment (#token=...) never reaches a server log.
  var frag = new URLSearchParams(location.hash.slice(1));
  if (frag.get("token")) {
    state.token = frag.get("token");
    sessionStorage.setItem("agentruns.token", state.token);
    history.replaceState(null, "", location.pathname + location.search);
  }
  if (frag.get("session") !== null) state.session = frag.get("session");

  var $ = function (id) { return document.getElementById(id); };

  function el(tag, props, children) {
    var e = document.createElement(tag);
    if (props) Object.keys(props).forEach(function (k) {
      if (k === "text") e.textContent = props[k];
      else if (k === "class") e.className = props[k];
      else if (k === "title") e.title = props[k];
      else e.setAttribute(k, props[k]);
    });
    (children || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }

  function fill(tbody, rows, empty, cols) {
    tbody.replaceChildren.apply(tbody, rows.length ? rows : [el("tr", { class: "empty" }, [el("td", { colspan: String(cols), text: empty })])]);
  }

  // ---- talking to the mock

  function controlHeaders(extra) {
    var h = Object.assign({}, extra || {});
    if (state.session) h["X-Mock-Session"] = state.session;
    if (state.token) h["Authorization"] = "Bearer " + state.token;
    return h;
  }

  function control(method, path, body) {
    var extra = body ? { "Content-Type": "application/json" } : {};
    if (method === "GET") extra["X-Mock-Observer"] = "dashboard"; // a look: logged at debug level only
    var opts = { method: method, headers: controlHeaders(extra) };
    if (body) opts.body = JSON.stringify(body);
    return fetch(new URL(path, CONTROL), opts).then(answer);
  }

  function api(path) {
    // Behind the proxy the page asks the upstream for nothing.
    if (PROXY) return Promise.reject(new Error("the proxy's page reads the proxy's memory only, not " + path));
    var h = { Authorization: "Bearer " + state.key, "X-Mock-Observer": "dashboard" };
    if (state.session) h["X-Mock-Session"] = state.session;
    return fetch(new URL(path, API), { headers: h }).then(answer);
  }

  function answer(res) {
    return res.text().then(function (text) {
      var body = null;
      try { body = text ? JSON.parse(text) : null; } catch (e) { body = null; }
      if (!res.ok) {
        var err = new Error((body && (body.detail || body.error || body.title)) || res.status + " " + res.statusText);
        err.status = res.status;
        err.control = res.url.indexOf(CONTROL.href) === 0;
        throw err;
      }
      return body;
    });
  }

  // ---- time

  function fmtTime(iso) {
    if (!iso) return "";
    var d = new Date(iso);
    if (isNaN(d)) return iso;
    return d.toISOString().slice(11, 23);
  }

  // ago tells how long before the session's clock (or, for the journal,
  // which records wall time, before now) an instant was.
  function ago(iso, wall) {
    if (!iso || (!state.clock && !wall)) return "";
    var now = wall ? Date.now() : new Date(state.clock.now);
    var s = (now - new Date(iso)) / 1000;
    if (s < 0) return "in " + span(-s);
    return span(s) + " ago";
  }

  function span(s) {
    if (s < 1) return Math.round(s * 1000) + " ms";
    if (s < 90) return (Math.round(s * 10) / 10) + " s";
    if (s < 5400) return Math.round(s / 60) + " min";
    if (s < 172800) return Math.round(s / 3600) + " h";
    return Math.round(s / 86400) + " d";
  }

  // timeCell shows an instant's time of day, or its date when it is more
  // than a day from now (a fixture agent made 90 days ago); the cell's
  // title has the whole instant.
  function timeCell(iso, wall) {
    var text = fmtTime(iso);
    var now = wall ? Date.now() : state.clock && new Date(state.clock.now);
    var d = new Date(iso);
    if (iso && now && !isNaN(d) && Math.abs(now - d) > 864e5) text = d.toISOString().slice(0, 10);
    return el("td", { class: "time", title: iso || "" }, [text, el("span", { class: "ago", text: ago(iso, wall) })]);
  }

  // ---- panels

  function pill(s) { return el("span", { class: "pill pill-" + String(s || "").toLowerCase(), text: s || "?" }); }

  function renderClock(c) {
    state.clock = c;
    var mode = $("clock-mode");
    mode.textContent = c.mode === "virtual" ? "virtual" : "real";
    mode.className = "mode mode-" + c.mode;
    $("clock-now").textContent = c.now.replace("T", " ").replace("Z", " UTC");
    $("clock-now").setAttribute("datetime", c.now);
    $("freeze").disabled = c.mode === "virtual";
    $("resume").disabled = c.mode !== "virtual";
  }

  function renderSessions(list) {
    var sel = $("session");
    var names = list.map(function (s) { return s.name; });
    if (names.indexOf(state.session) < 0) names.push(state.session);
    var opts = names.map(function (n) {
      var info = list.filter(function (s) { return s.name === n; })[0];
      var label = (n === "" ? "default" : n) + (info ? " · " + info.runs + " runs" : "");
      var o = el("option", { value: n, text: label });
      if (n === state.session) o.selected = true;
      return o;
    });
    sel.replaceChildren.apply(sel, opts);
  }

  // remember notes when a run was seen in each state: created_at is when it
  // was queued, started_at when it went in progress, updated_at when it
  // entered the state it is in.
  function remember(run) {
    var seen = state.seen[run.run_id] || (state.seen[run.run_id] = {});
    if (run.created_at && !seen.QUEUED) seen.QUEUED = run.created_at;
    if (run.started_at && !seen.INPROGRESS) seen.INPROGRESS = run.started_at;
    if (run.state && run.updated_at && !seen[run.state]) seen[run.state] = run.updated_at;
  }

  function renderRuns(page) {
    var runs = (page && page.runs) || [];
    state.runs = runs;
    $("runs-count").textContent = runs.length ? "(" + runs.length + (page.page_info && page.page_info.has_next_page ? "+" : "") + ")" : "";
    $("runs-note").textContent = PROXY ? "as the traffic through the proxy showed them" : "as " + state.key + " sees them";
    var rows = runs.map(function (r) {
      remember(r);
      var moved = state.lastState[r.run_id] && state.lastState[r.run_id] !== r.state;
      state.lastState[r.run_id] = r.state;
      var creator = r.creator ? (r.creator.display_name || r.creator.uid || "") : "";
      var tr = el("tr", { class: "run-row" + (r.run_id === state.selected ? " selected" : "") + (moved ? " moved" : ""), "data-run": r.run_id, "data-state": r.state }, [
        el("td", null, [pill(r.state)]),
        el("td", { class: "title", title: r.prompt || "" , text: r.title || r.prompt || "" }),
        el("td", { class: "nowrap", text: creator }),
        el("td", { class: "mono", text: (r.agent_config && r.agent_config.name) || "" }),
        timeCell(r.created_at),
        timeCell(r.updated_at),
      ]);
      tr.addEventListener("click", function () { select(r.run_id); });
      return tr;
    });
    fill($("runs").tBodies[0], rows, PROXY ? "No answer through the proxy has shown a run yet." : "No runs in this session that " + state.key + " can see.", 6);
  }

  function select(id) {
    state.selected = id;
    Array.prototype.forEach.call(document.querySelectorAll(".run-row, .event-row"), function (tr) {
      tr.classList.toggle("selected", tr.dataset.run === id);
    });
    refresh();
  }

  function renderRun(run) {
    var box = $("run-detail");
    $("run-id").textContent = run ? run.run_id : "";
    if (!run) {
      box.replaceChildren(el("p", { class: "muted", text: "Select a run to follow it through its states." }));
      return;
    }
    remember(run);
    var seen = state.seen[run.run_id] || {};
    var final = TERMINAL[run.state] ? run.state : null;
    var steps = PROGRESSION.slice();
    if (run.state === "BLOCKED") steps.push("BLOCKED");
    steps.push(final || "SUCCEEDED / FAILED / ERROR");
    var reached = steps.indexOf(run.state);
    if (reached < 0 && final) reached = steps.length - 1;
    var timeline = el("ol", { class: "timeline" }, steps.map(function (s, i) {
      var at = seen[s];
      var cls = i < reached ? "done" : i === reached ? "current" : "future";
      if (final && s === final) cls = "current final-" + s.toLowerCase();
      // A state passed between two refreshes has no time; a cancelled run
      // may have skipped the states after the one it was cancelled in.
      var when = at ? fmtTime(at) : i > reached ? "not yet" : final === "CANCELLED" ? "—" : "between two looks";
      return el("li", { class: "tl " + cls, "data-state": s }, [
        el("span", { class: "tl-dot" }),
        el("span", { class: "tl-state", text: s }),
        el("span", { class: "tl-when", title: at || "", text: when }),
        at ? el("span", { class: "ago", text: ago(at) }) : null,
      ]);
    }));
    var dl = el("dl", { class: "facts" });
    function fact(k, v, cls) { if (v) dl.append(el("dt", { text: k }), el("dd", { class: cls || "", text: v })); }
    fact("Title", run.title);
    fact("Prompt", run.prompt, "prompt");
    fact("Creator", run.creator ? (run.creator.display_name || "") + " (" + run.creator.type + " " + run.creator.uid + ")" : "");
    fact("Config", run.agent_config && run.agent_config.name, "mono");
    fact("Model", run.agent_config && run.agent_config.model_id, "mono");
    fact("Source", run.source);
    fact("Session", run.session_link, "mono");
    var msg = null;
    if (run.status_message) {
      var sm = run.status_message;
      msg = el("div", { class: "status-message" + (final === "SUCCEEDED" ? "" : " bad") }, [
        el("b", { text: "Status message" }),
        el("p", { text: sm.message || "" }),
        sm.error_code ? el("code", { text: sm.error_code }) : null,
        sm.retryable !== undefined ? el("span", { class: "muted", text: sm.retryable ? " retryable" : " not retryable" }) : null,
      ]);
    }
    var parts = [el("div", { class: "run-head" }, [pill(run.state), el("span", { class: "run-title", text: run.title || "" })]), timeline, msg, dl];
    box.replaceChildren.apply(box, parts.filter(Boolean));
  }

  function faultText(f) {
    var parts = [];
    if (f.status) parts.push(String(f.status));
    if (f.error_code) parts.push(f.error_code);
    if (f.retry_after) parts.push("Retry-After " + f.retry_after);
    if (f.delay) parts.push("delay " + f.delay);
    if (f.drop) parts.push("drop");
    if (f.probability) parts.push("p=" + f.probability);
    if (f.header) parts.push(f.header + ": " + (f.value || "*"));
    return parts.join(", ");
  }

  function renderFaults(list) {
    fill($("faults").tBodies[0], (list || []).map(function (f) {
      return el("tr", null, [
        el("td", { class: "mono", text: f.id }), el("td", { text: f.method || "any" }), el("td", { class: "mono", text: f.path || "*" }),
        el("td", { text: faultText(f) }), el("td", { text: f.times ? String(f.times) : "every" }),
        el("td", { class: "num", text: String(f.matched || 0) }), el("td", { class: "num", text: String(f.injected || 0) }),
      ]);
    }), "No fault rules: every request is answered normally.", 7);
  }

  function renderFates(list) {
    fill($("fates").tBodies[0], (list || []).map(function (f) {
      var timing = ["step", "queued", "pending", "claimed", "inprogress"].filter(function (k) { return f[k]; })
        .map(function (k) { return k + " " + f[k]; }).join(", ");
      return el("tr", null, [
        el("td", { class: "mono", text: f.id }), el("td", { class: "mono", text: f.prompt_pattern || "any prompt" }),
        el("td", null, [pill(f.state || "SUCCEEDED"), f.error_code ? el("code", { text: " " + f.error_code }) : null]),
        el("td", { text: timing }), el("td", { text: f.times ? String(f.times) : "every" }),
        el("td", { class: "num", text: String(f.used || 0) }),
      ]);
    }), "No fate rules: runs end as the fixtures and X-Mock-Fate say.", 6);
  }

  function ruleLink(rule) {
    return el("span", { class: "pill pill-violation", title: "A rule of the contract this answer broke", text: rule });
  }

  function renderJournal(list) {
    list = (list || []).slice().reverse();
    $("journal-count").textContent = list.length ? "latest " + Math.min(list.length, 200) + " of " + list.length : "";
    fill($("journal").tBodies[0], list.slice(0, 200).map(function (a) {
      var tr = el("tr", { class: a.status >= 400 || (a.violations && a.violations.length) ? "bad" : "" }, [
        timeCell(a.at, true), el("td", { text: a.method }), el("td", { class: "mono", text: a.path }),
        el("td", { class: "num status-" + String(a.status).charAt(0), text: String(a.status) }),
        el("td", { class: "num", text: a.retry_count != null ? String(a.retry_count) : "" }),
        el("td", null, [a.injected ? el("span", { class: "pill pill-injected", text: "injected" }) : null]
          .concat((a.violations || []).map(ruleLink))
          .concat(a.unchecked ? [el("span", { class: "muted", title: a.unchecked, text: "unchecked" })] : [])),
      ]);
      return tr;
    }), "No requests yet in this session.", 6);
  }

  // renderViolations shows what the proxy found: the count per rule broken,
  // then each violation, newest first, with its request, rule, field,
  // expected and got.
  function renderViolations(s) {
    $("upstream").textContent = s.upstream;
    var broken = (s.rules || []).filter(function (r) { return r.violations > 0; });
    $("violations-count").textContent = s.violations + " violation" + (s.violations === 1 ? "" : "s") + " in " + s.checked + " checked" +
      (s.left_out && s.left_out.latest ? " (the newest " + (s.latest || []).length + " listed: the proxy's answer is bounded)" : "");
    $("rule-counts").replaceChildren.apply($("rule-counts"), broken.length ? broken.map(function (r) {
      return el("li", { title: r.title }, [ruleLink(r.id), el("b", { text: " ×" + r.violations }), el("span", { class: "muted", text: " " + r.title })]);
    }) : [el("li", { class: "muted", text: "No rule broken: every checked answer kept the contract." })]);
    var list = (s.latest || []).slice().reverse().slice(0, 200);
    fill($("violations").tBodies[0], list.map(function (f) {
      return el("tr", { class: "bad" }, [
        timeCell(f.at, true),
        el("td", { class: "mono request", text: f.request + " → " + f.status }),
        el("td", null, [ruleLink(f.rule)]),
        el("td", { class: "mono", text: f.field }),
        el("td", { class: "expected", text: f.expected }),
        el("td", { class: "got mono", text: f.got }),
      ]);
    }), "No violations yet.", 6);
  }

  // renderClients shows, per released client version, how many answers
  // of operations it calls were checked, how many break it, and the first
  // breaks: what a server's users on that version would meet.
  function renderClients(s) {
    var rows = (s.clients || []).map(function (c) {
      return el("tr", { class: c.broken > 0 ? "bad" : "", "data-client": c.version }, [
        el("td", { class: "mono", text: c.version }),
        el("td", { text: String(c.checked) }),
        el("td", { class: c.broken > 0 ? "got" : "", text: String(c.broken) }),
        el("td", { class: "breaks" }, (c.first || []).map(function (b) {
          return el("div", { class: "mono", text: b.operation + " " + (b.field || "(the body)") + ": expected " + b.expected + ", got " + b.got });
        })),
      ]);
    });
    fill($("clients").tBodies[0], rows, "No client versions known.", 4);
  }

  // renderDrift lists what the traffic showed that the document does not
  // say (the proxy's drift: an operation, a parameter, a field, an enum
  // value, a status or a content type it lacks), one row per fact, in the
  // proxy's order. Drift is not a violation: a server may send more than
  // the document lists, but a client cannot rely on it, nor the mock
  // imitate it, until the document says so.
  // The proxy's answer is bounded (left_out): the facts it did not list
  // are said, with where to read them all.
  function renderDrift(d, leftOut) {
    d = d || {};
    var facts = d.facts || [];
    $("drift-count").textContent = d.distinct ? "(" + d.distinct + " distinct" +
      (d.dropped ? ", " + d.dropped + " not kept: past the proxy's bound, counted but not listed" : "") +
      (leftOut && leftOut.drift_facts ? ", " + leftOut.drift_facts + " not listed here: GET /__mock/proxy/drift has them" : "") + ")" : "";
    fill($("drift").tBodies[0], facts.map(function (f) {
      return el("tr", { class: "drift-row", "data-kind": f.kind }, [
        el("td", null, [el("span", { class: "pill pill-drift", text: f.kind })]),
        breakable("mono operation", f.operation),
        el("td", { class: "num" + (f.status ? " status-" + String(f.status).charAt(0) : " muted"), text: f.status ? String(f.status) : "request",
          title: f.status ? "" : "seen in requests the server accepted" }),
        breakable("mono location", f.location),
        el("td", { class: "mono seen", text: driftSeen(f) }),
        el("td", { class: "num", text: String(f.count) }),
        timeCell(f.first_seen, true),
        timeCell(f.last_seen, true),
        cut("mono example", f.example || "", 80),
      ]);
    }), "Nothing undocumented seen yet: every answer, and every request the server accepted, kept to what the document says.", 9);
  }

  // driftSeen is a fact's value outside its enum, the content type a
  // content-type fact is about, and the JSON types seen, as one cell shows
  // them.
  function driftSeen(f) {
    return [f.value, f.kind === "content-type" ? f.content_type : "", (f.types || []).join(" | ")].filter(Boolean).join(" · ");
  }

  // breakable is a cell of a path or a location that may break after each
  // of its separators (/ . ]) rather than inside a name.
  function breakable(cls, text) {
    var parts = String(text || "").split(/(?<=[\/.\]])/);
    var children = [];
    parts.forEach(function (p, i) { if (i) children.push(el("wbr")); children.push(p); });
    return el("td", { class: cls, title: text }, children);
  }

  // cut is a cell of text at most max characters long; the whole text is
  // its title.
  function cut(cls, text, max) {
    var short = text.length > max ? text.slice(0, max - 1) + "…" : text;
    return el("td", { class: cls, title: text, text: short });
  }

  // downloadOverlay fetches the overlay with the control token the page
  // reads with (a plain link would go without it) and saves it.
  function downloadOverlay(e) {
    e.preventDefault();
    fetch(this.href, { headers: controlHeaders() }).then(function (res) {
      return res.ok ? res.blob() : answer(res);
    }).then(function (blob) {
      var url = URL.createObjectURL(blob);
      var a = el("a", { href: url, download: "drift-overlay.yaml", hidden: "" });
      document.body.appendChild(a);
      a.click();
      a.remove();
      // The download has taken the blob by the time the page next looks.
      setTimeout(function () { URL.revokeObjectURL(url); }, POLL_MS);
    }).catch(function (err) {
      if (err.status === 401 && err.control) { askToken(); return; }
      showError(err);
    });
  }

  // shortID is the start of a run id, enough to tell runs apart on a row.
  function shortID(id) { return String(id || "").slice(0, 8); }

  function runTitle(id) {
    var r = state.runs.filter(function (x) { return x.run_id === id; })[0];
    return r ? (r.title || r.prompt || "") : "";
  }

  // runCell names a run (its title when the runs panel has it, and the
  // start of its id) and selects it when clicked.
  function runCell(id, before) {
    var title = runTitle(id);
    var td = el("td", { class: "run-ref", "data-run": id, title: id }, [before || null,
      title ? el("span", { class: "run-ref-title", text: title }) : null,
      el("code", { text: shortID(id) })]);
    td.addEventListener("click", function (e) { e.stopPropagation(); select(id); });
    return td;
  }

  // ---- the event log, followed with the poll's cursor
  //
  // GET /agent/events answers the events of the named runs after a
  // sequence, oldest first. The page watches the runs the runs panel shows
  // and keeps the last sequence it saw, so each refresh asks only for what
  // is new. A run that appears later (just created, or started by a
  // schedule) may have events from before that cursor: it is caught up on
  // its own, from the start, before it joins the others.

  function newEventLog() {
    return { cursor: 0, watched: {}, pending: null, list: [], full: false };
  }

  function mergeEvents(log, events) {
    var bySeq = {};
    log.list.forEach(function (e) { bySeq[e.sequence] = e; });
    events.forEach(function (e) { bySeq[e.sequence] = e; });
    log.list = Object.keys(bySeq).map(function (k) { return bySeq[k]; })
      .sort(function (a, b) { return b.sequence - a.sequence; }).slice(0, EVENTS_KEPT);
  }

  function eventsQuery(ids, since) {
    var q = new URLSearchParams();
    ids.forEach(function (id) { q.append("run_ids", id); });
    q.set("since", String(since));
    q.set("limit", String(EVENTS_PAGE));
    return "events?" + q.toString();
  }

  function pollEvents() {
    var runs = state.runs;
    var log = state.events || (state.events = newEventLog());
    // A run id seen again with another created_at is a new run under a
    // fixture's id: the session was reset and its log started over.
    var reborn = runs.some(function (r) { return log.watched[r.run_id] && log.watched[r.run_id] !== r.created_at; });
    if (reborn) log = state.events = newEventLog();
    if (!runs.length) { renderEvents(log); return null; }
    var onPage = {};
    runs.forEach(function (r) { onPage[r.run_id] = r.created_at; });
    // Runs that fell off the runs page are no longer asked about.
    Object.keys(log.watched).forEach(function (id) { if (!onPage[id]) delete log.watched[id]; });
    if (!log.pending) {
      var fresh = runs.filter(function (r) { return !log.watched[r.run_id]; }).map(function (r) { return r.run_id; });
      if (fresh.length) log.pending = { ids: fresh, cursor: 0 };
    }
    if (log.pending) {
      var p = log.pending;
      p.ids = p.ids.filter(function (id) { return onPage[id]; });
      if (!p.ids.length) { log.pending = null; renderEvents(log); return null; }
      return api(eventsQuery(p.ids, p.cursor)).then(function (events) {
        if (state.events !== log) return;
        mergeEvents(log, events);
        log.full = events.length === EVENTS_PAGE;
        if (events.length) p.cursor = events[events.length - 1].sequence;
        if (!log.full) {
          // Caught up: the runs join the others. Before any run was
          // watched, the others' cursor is this one; otherwise it stays,
          // and what the two polls both return is kept once.
          if (!Object.keys(log.watched).length) log.cursor = p.cursor;
          p.ids.forEach(function (id) { log.watched[id] = onPage[id]; });
          log.pending = null;
        }
        renderEvents(log);
      }, forgetEvents);
    }
    var ids = Object.keys(log.watched);
    return api(eventsQuery(ids, log.cursor)).then(function (events) {
      if (state.events !== log) return;
      mergeEvents(log, events);
      log.full = events.length === EVENTS_PAGE;
      if (events.length) log.cursor = events[events.length - 1].sequence;
      renderEvents(log);
    }, forgetEvents);
  }

  // forgetEvents starts the log over when a watched run is gone (404) or
  // out of sight (403), as after a session's reset or a change of key.
  function forgetEvents(e) {
    if (e.status === 404 || e.status === 403) { state.events = null; return; }
    throw e;
  }

  function eventPill(type) {
    var kind = { run_in_progress: "inprogress", run_succeeded: "succeeded", run_failed: "failed", run_errored: "error", run_blocked: "blocked", run_cancelled: "cancelled" }[type] || "";
    return el("span", { class: "pill pill-" + kind, text: type });
  }

  function renderEvents(log) {
    var list = log.list;
    $("events-count").textContent = list.length ? "(" + list.length + (list.length === EVENTS_KEPT ? ", the latest" : "") + ")" : "";
    $("events-note").textContent = (log.pending || log.full ? "catching up · " : "") + "since " + log.cursor;
    $("events").dataset.cursor = String(log.cursor);
    fill($("events").tBodies[0], list.map(function (e) {
      var tr = el("tr", { class: "event-row" + (e.run_id === state.selected ? " selected" : ""), "data-seq": String(e.sequence), "data-run": e.run_id, "data-type": e.event_type }, [
        el("td", { class: "num mono", text: String(e.sequence) }),
        timeCell(e.occurred_at),
        el("td", null, [eventPill(e.event_type)]),
        runCell(e.run_id),
        el("td", { class: "mono ids", text: [e.execution_id, e.ref_id].filter(Boolean).join(" · ") }),
      ]);
      return tr;
    }), state.runs.length ? "No events yet for the runs above." : "No runs to watch.", 5);
  }

  // ---- schedules, with their next tick and the run each last started

  function readSchedules() {
    // The newest runs schedules started, one page, to name each schedule's
    // last one.
    return Promise.all([api("schedules"), api("runs?source=SCHEDULED_AGENT&limit=" + RUNS_PAGE)]);
  }

  function renderSchedules(both) {
    var list = (both[0] && both[0].schedules) || [];
    var spawned = (both[1] && both[1].runs) || [];
    $("schedules-count").textContent = list.length ? "(" + list.length + ")" : "";
    fill($("schedules").tBodies[0], list.map(function (sc) {
      var h = sc.history || {};
      var last = spawned.filter(function (r) { return r.schedule && r.schedule.schedule_id === sc.id; })[0];
      var lastCell;
      if (last) {
        lastCell = runCell(last.run_id, pill(last.state));
        lastCell.classList.add("last-run");
        lastCell.appendChild(el("span", { class: "ago", text: h.last_ran ? "started " + fmtTime(h.last_ran) + " · " + ago(h.last_ran) : "" }));
      } else {
        lastCell = el("td", { class: "last-run muted", title: h.last_ran || "" , text: h.last_ran ? fmtTime(h.last_ran) + " (" + ago(h.last_ran) + ")" : "none yet" });
      }
      if (sc.last_spawn_error) lastCell.appendChild(el("span", { class: "spawn-error", text: sc.last_spawn_error }));
      var next = h.next_run ? timeCell(h.next_run) : el("td", { class: "muted", text: sc.enabled ? "—" : "paused" });
      next.classList.add("next-tick");
      return el("tr", { "data-schedule": sc.id }, [
        el("td", { class: "title", title: sc.prompt || "", text: sc.name }),
        el("td", { class: "mono", text: sc.cron_schedule }),
        el("td", null, [el("span", { class: "pill " + (sc.enabled ? "pill-succeeded" : "pill-queued"), text: sc.enabled ? "enabled" : "paused" })]),
        next,
        lastCell,
      ]);
    }), "No schedules that " + state.key + " can see. POST /agent/schedules creates one.", 5);
  }

  // ---- the selected run's inbox

  function renderMessages(list, runID) {
    var unread = list.filter(function (m) { return !m.read_at; }).length;
    $("messages-count").textContent = list.length ? "(" + list.length + (list.length === INBOX_PAGE ? ", the first" : "") + (unread ? ", " + unread + " unread" : "") + ")" : "";
    $("messages-note").textContent = "sent to " + shortID(runID);
    fill($("messages").tBodies[0], list.map(function (m) {
      function when(iso) { return iso ? timeCell(iso) : el("td", { class: "muted", text: "not yet" }); }
      // The subject, and under it the run that sent it.
      var from = runCell(m.sender_run_id, el("span", { class: "muted", text: "from " }));
      from.prepend(el("span", { class: "subject", text: m.subject }));
      from.classList.add("message");
      return el("tr", { class: "message-row" + (m.read_at ? "" : " unread"), "data-message": m.message_id }, [
        from, when(m.sent_at), when(m.delivered_at), when(m.read_at),
      ]);
    }), "No messages sent to this run.", 4);
  }

  function clearMessages() {
    $("messages-count").textContent = "";
    $("messages-note").textContent = "the selected run's inbox";
    fill($("messages").tBodies[0], [], "Select a run to see the messages sent to it.", 4);
  }

  // ---- the team's agent identities

  function renderIdentities(page) {
    var list = (page && page.agents) || [];
    $("identities-count").textContent = list.length ? "(" + list.length + ")" : "";
    fill($("identities").tBodies[0], list.map(function (a) {
      return el("tr", { "data-agent": a.uid }, [
        el("td", { text: a.name }),
        el("td", { class: "mono", text: a.uid }),
        el("td", null, [a.available ? el("span", { class: "pill pill-succeeded", text: "available" })
          : el("span", { class: "pill pill-blocked", title: "Beyond the plan's number of agents: runs cannot use it", text: "beyond plan" })]),
        timeCell(a.created_at),
      ]);
    }), "No agent identities in " + state.key + "'s team.", 4);
  }

  // PANELS is what one refresh reads and where it goes: one page each.
  // The event poll follows the runs panel, whose runs it watches.
  var PANELS = [
    { read: function () { return control("GET", "sessions"); }, show: renderSessions },
    { read: function () { return api("runs?limit=" + RUNS_PAGE); }, show: function (page) { renderRuns(page); return pollEvents(); } },
    { read: readSchedules, show: renderSchedules },
    { read: function () { return api("identities"); }, show: renderIdentities },
    { read: function () { return control("GET", "faults"); }, show: renderFaults },
    { read: function () { return control("GET", "fates"); }, show: renderFates },
    { read: function () { return control("GET", "requests"); }, show: renderJournal },
  ];
  // Behind the proxy: the upstream's runs, the proxy's journal and what it
  // found.
  if (PROXY) {
    document.body.classList.add("proxy-mode");
    document.querySelector(".brand-sub").textContent = "proxy";
    document.title = "agentruns proxy";
    // Everything from the proxy's own memory of the traffic: the page
    // sends the upstream nothing, so no key of the page's reaches it and
    // none of its reads is counted among the checked exchanges.
    PANELS = [
      { read: function () { return control("GET", "proxy/runs?limit=" + RUNS_PAGE); }, show: renderRuns },
      { read: function () { return control("GET", "proxy/requests"); }, show: renderJournal },
      { read: function () { return control("GET", "proxy"); }, show: function (s) { renderViolations(s); renderClients(s); renderDrift(s.drift, s.left_out); } },
    ];
    $("drift-overlay").href = new URL("proxy/drift/overlay.yaml", CONTROL).href;
    $("drift-overlay").addEventListener("click", downloadOverlay);
  }

  function showError(err) {
    var box = $("error");
    if (!err) { box.hidden = true; return; }
    box.hidden = false;
    box.textContent = err.message;
  }

  function refresh() {
    // The clock first: the other panels show times relative to it. The
    // proxy has no clock of its own: the upstream's times are wall time.
    var clock = PROXY ? Promise.resolve({ now: new Date().toISOString(), mode: "real" }) : control("GET", "clock");
    return clock.then(function (c) {
      if (!PROXY) renderClock(c); else state.clock = c;
      var reads = PANELS.map(function (p) { return p.read().then(p.show); });
      var sel = state.selected;
      if (sel) {
        var detail = PROXY ? control("GET", "proxy/runs/" + encodeURIComponent(sel)) : api("runs/" + encodeURIComponent(sel));
        reads.push(detail.then(renderRun, function (e) {
          if (e.status === 404 || e.status === 403) { state.selected = null; renderRun(null); return; }
          throw e;
        }));
        if (!PROXY) {
          reads.push(api("messages/" + encodeURIComponent(sel) + "?limit=" + INBOX_PAGE).then(function (list) {
            if (state.selected === sel) renderMessages(list || [], sel);
          }, function (e) {
            if (e.status === 404 || e.status === 403) { clearMessages(); return; }
            throw e;
          }));
        }
      } else {
        renderRun(null);
        if (!PROXY) clearMessages();
      }
      return Promise.all(reads);
    }).then(function () {
      showError(null);
      $("live").className = "live ok";
    }, function (err) {
      $("live").className = "live down";
      if (err.status === 401 && err.control) { askToken(); return; }
      showError(err);
    });
  }

  function askToken() {
    var d = $("token-dialog");
    if (!d.open) d.showModal();
  }

  $("token-form").addEventListener("submit", function () {
    state.token = $("token").value.trim();
    sessionStorage.setItem("agentruns.token", state.token);
    refresh();
  });

  // ---- controls

  function act(p) {
    return p.then(refresh, function (err) { showError(err); });
  }

  $("freeze").addEventListener("click", function () { act(control("PUT", "clock", { mode: "virtual" })); });
  $("resume").addEventListener("click", function () { act(control("PUT", "clock", { mode: "real" })); });
  $("advance").addEventListener("click", function () {
    act(control("POST", "clock/advance", { by: $("advance-by").value.trim() || "2s" }));
  });
  $("advance-by").addEventListener("keydown", function (e) { if (e.key === "Enter") $("advance").click(); });

  $("session").addEventListener("change", function () {
    state.session = $("session").value;
    sessionStorage.setItem("agentruns.session", state.session);
    state.selected = null;
    state.seen = {};
    state.lastState = {};
    state.events = null;
    refresh();
  });
  var keyInput = $("key");
  keyInput.value = state.key;
  keyInput.addEventListener("change", function () {
    state.key = keyInput.value.trim() || "wk-mock-alice";
    localStorage.setItem("agentruns.key", state.key);
    state.selected = null;
    state.events = null;
    refresh();
  });

  // One refresh at a time; a slow mock is not asked twice at once.
  function tick() {
    if (document.hidden || state.busy) return;
    state.busy = true;
    refresh().then(function () { state.busy = false; }, function () { state.busy = false; });
  }
  setInterval(tick, POLL_MS);
  tick();
})();
