// The gamefeature console: renders the snapshots the server streams (Server-Sent Events on /api/events) and
// sends the operator's actions (POST /api/actions, with the token typed in this page, kept in memory only).
// Every text from the world is set as text, never as markup: plugin and player names are data.
"use strict";

const $ = (selector) => document.querySelector(selector);
let latest = null;
const openActors = new Set();

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("data-")) node.setAttribute(key, value);
    else node[key] = value;
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function bytes(perSecond) {
  if (perSecond >= 1024 * 1024) return (perSecond / 1024 / 1024).toFixed(1) + " MiB";
  if (perSecond >= 1024) return (perSecond / 1024).toFixed(1) + " KiB";
  return perSecond.toFixed(0) + " B";
}

// CPU per frame against the frame budget (or the frame's length when no budget is set).
function sparkline(samples, limitMs) {
  const canvas = el("canvas", { class: "spark", width: 180, height: 28 });
  const context = canvas.getContext("2d");
  const limitUs = Math.max(1, (limitMs || 1) * 1000);
  const top = Math.max(limitUs, ...samples);
  const x = (i) => (i / Math.max(1, samples.length - 1)) * canvas.width;
  const y = (us) => canvas.height - 1 - (us / top) * (canvas.height - 2);
  context.strokeStyle = "#6b3434";
  context.beginPath();
  context.moveTo(0, y(limitUs));
  context.lineTo(canvas.width, y(limitUs));
  context.stroke();
  context.strokeStyle = samples.some((us) => us > limitUs) ? "#f06a6a" : "#5fcf80";
  context.beginPath();
  samples.forEach((us, i) => (i === 0 ? context.moveTo(x(i), y(us)) : context.lineTo(x(i), y(us))));
  context.stroke();
  const peak = samples.length ? Math.max(...samples) : 0;
  canvas.title = `peak ${(peak / 1000).toFixed(3)} ms of ${(limitUs / 1000).toFixed(1)} ms`;
  return canvas;
}

function actionButton(label, body, danger) {
  const button = el("button", { type: "button", class: danger ? "danger" : "", "data-action": body.action }, label);
  if (body.plugin) button.setAttribute("data-plugin", body.plugin);
  if (body.client !== undefined) button.setAttribute("data-client", String(body.client));
  button.addEventListener("click", () => act(body));
  return button;
}

// Rows are kept from one snapshot to the next and updated in place, their buttons replaced only when what
// they do changes: a click is never lost to a re-render between pressing and releasing.
function keyedRows(tbody, rows, items, key, cells, actions) {
  const wanted = [];
  for (const item of items) {
    const id = key(item);
    let row = rows.get(id);
    if (!row) {
      row = el("tr");
      row.actions = el("td");
      rows.set(id, row);
    }
    const [attributes, signature, content] = [cells(item)[0], actions(item)[0], cells(item)[1]];
    for (const [name, value] of Object.entries(attributes)) row.setAttribute(name, value);
    if (row.signature !== signature) {
      row.signature = signature;
      row.actions.replaceChildren(...actions(item)[1]);
    }
    row.replaceChildren(...content, row.actions);
    wanted.push(row);
  }
  for (const [id, row] of rows) if (!wanted.includes(row)) rows.delete(id);
  const current = [...tbody.children];
  if (current.length !== wanted.length || current.some((row, i) => row !== wanted[i])) tbody.replaceChildren(...wanted);
}

const pluginRows = new Map();

function renderPlugins(snapshot) {
  const limit = snapshot.world.frame_budget_ms || snapshot.world.frame_period_ms;
  const cells = (p) => {
    const incidents = el("div");
    for (const text of p.incidents) incidents.append(el("div", { class: "incident" }, text));
    const counts = `${p.quarantines} quarantined, ${p.restarts} restarted`;
    const granted = "granted: " + p.granted + (p.limited_by ? " (limited by " + p.limited_by + ")" : "");
    return [
      { "data-plugin": p.name, "data-state": p.in_world },
      [
        el("td", {}, el("strong", {}, p.name), " ", el("span", { class: "version" }, p.version + " · api " + p.api)),
        el("td", { class: "state-" + p.in_world }, p.in_world, el("div", { class: "dim" }, p.state)),
        el("td", {}, p.publisher || el("span", { class: "dim" }, "unsigned folder")),
        el("td", {}, p.asked, el("div", { class: "dim" }, granted)),
        el("td", {}, sparkline(p.cpu_us, limit)),
        el("td", { class: "calls" }, String(p.calls)),
        el("td", {}, el("div", { class: "dim" }, counts), incidents),
      ],
    ];
  };
  const actions = (p) => [
    p.in_world,
    [
      actionButton("Reload", { action: "reload", plugin: p.name }),
      " ",
      p.in_world === "running"
        ? actionButton("Deactivate", { action: "deactivate", plugin: p.name }, true)
        : actionButton("Activate", { action: "activate", plugin: p.name }),
    ],
  ];
  keyedRows($("#plugins tbody"), pluginRows, snapshot.plugins, (p) => p.name, cells, actions);
}

function renderActors(snapshot) {
  $("#actor-count").textContent = `(${snapshot.actors_total} actors)`;
  $("#classes").textContent = Object.entries(snapshot.classes)
    .map(([name, count]) => `${count} × ${name}`)
    .join(", ");
  const shown = snapshot.actors.map((a) => {
    const details = el("details", { "data-actor": a.id, "data-class": a.class });
    details.open = openActors.has(a.id);
    details.addEventListener("toggle", () => (details.open ? openActors.add(a.id) : openActors.delete(a.id)));
    const who = [a.role, a.player ? "player " + a.player : null, a.spawned_by ? "spawned by " + a.spawned_by : null];
    details.append(el("summary", {}, a.name, " ", el("span", { class: "dim" }, who.filter(Boolean).join(" · "))));
    const list = el("dl");
    for (const c of a.components) {
      list.append(el("dt", {}, c.class), el("dd", { class: "dim" }, "by " + c.by + (c.replicated ? ", replicated" : "")));
      for (const [name, value, writer] of c.properties) {
        list.append(el("dt", {}, "  " + name), el("dd", {}, value, writer ? el("span", { class: "dim" }, "  (" + writer + ")") : null));
      }
      if (c.more_properties) list.append(el("dt", {}, ""), el("dd", { class: "dim" }, `${c.more_properties} more properties`));
    }
    if (a.more_components) list.append(el("dt", {}, ""), el("dd", { class: "dim" }, `${a.more_components} more components`));
    for (const [feature, state] of a.features) list.append(el("dt", {}, "init " + feature), el("dd", {}, state));
    details.append(list);
    return details;
  });
  if (snapshot.actors.length < snapshot.actors_total) {
    shown.push(el("p", { class: "dim" }, `the first ${snapshot.actors.length} are listed`));
  }
  $("#actors").replaceChildren(...shown);
}

function renderMap(snapshot) {
  const placed = snapshot.actors.filter((a) => a.position);
  $("#map-section").hidden = placed.length === 0;
  if (placed.length === 0) return;
  const canvas = $("#map");
  const context = canvas.getContext("2d");
  const xs = placed.map((a) => a.position[0]);
  const ys = placed.map((a) => a.position[1]);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const span = Math.max(maxX - minX, maxY - minY, 1);
  const scale = (canvas.width - 24) / span;
  context.clearRect(0, 0, canvas.width, canvas.height);
  const palette = ["#6aa8f0", "#5fcf80", "#e3b341", "#f06a6a", "#c38cf0", "#5fd0d0"];
  const classes = [...new Set(placed.map((a) => a.class))];
  for (const a of placed) {
    context.fillStyle = palette[classes.indexOf(a.class) % palette.length];
    const px = 12 + (a.position[0] - minX) * scale;
    const py = canvas.height - 12 - (a.position[1] - minY) * scale;
    context.beginPath();
    context.arc(px, py, 4, 0, Math.PI * 2);
    context.fill();
  }
  canvas.title = classes.map((c, i) => `${palette[i % palette.length]} ${c}`).join(", ");
}

const clientRows = new Map();

function renderClients(snapshot) {
  const cells = (c) => [
    { "data-client": c.id },
    [
      el("td", {}, c.id, c.playing ? "" : el("span", { class: "dim" }, " greeting")),
      el("td", {}, c.player || c.pawn || ""),
      el("td", {}, c.address || ""),
      el("td", {}, c.round_trip_ms === null ? "" : c.round_trip_ms.toFixed(1) + " ms"),
      el("td", {}, c.sent_bytes_per_s === null ? "" : bytes(c.sent_bytes_per_s)),
      el("td", {}, c.received_bytes_per_s === null ? "" : bytes(c.received_bytes_per_s)),
      el("td", {}, String(c.backlog)),
      el("td", {}, c.mods_fetched_bytes ? bytes(c.mods_fetched_bytes) : ""),
      el("td", {}, c.groups.join(", ")),
    ],
  ];
  const actions = (c) => ["kick", [actionButton("Kick", { action: "kick", client: Number(c.id.replace(/\D/g, "")) }, true)]];
  keyedRows($("#clients tbody"), clientRows, snapshot.clients, (c) => c.id, cells, actions);
  $("#no-clients").hidden = snapshot.clients.length > 0;
}

function renderStrip(selector, lines) {
  const list = $(selector);
  const atBottom = list.scrollTop + list.clientHeight >= list.scrollHeight - 4;
  list.replaceChildren(...lines);
  if (atBottom) list.scrollTop = list.scrollHeight;
}

function render(snapshot) {
  latest = snapshot;
  const w = snapshot.world;
  $("#world").textContent = `${w.name} · ${w.net_mode} · ${w.experience} · ${w.load_state}`;
  $("#frame").textContent = `frame ${w.frame_ms.toFixed(2)} ms of ${w.frame_period_ms.toFixed(1)} ms · ${w.frames} frames`;
  $("#read-only").hidden = snapshot.actions.allowed;
  $("#read-only").textContent = snapshot.actions.why_not || "";
  document.body.dataset.seq = String(snapshot.seq);
  renderPlugins(snapshot);
  renderActors(snapshot);
  renderMap(snapshot);
  renderClients(snapshot);
  renderStrip(
    "#calls",
    snapshot.calls.map((c) =>
      el("li", {}, `${(c.at_ms / 1000).toFixed(3)} ${c.track} ${c.text}`, c.took_us === null ? "" : el("span", { class: "dim" }, ` ${c.took_us} µs`)),
    ),
  );
  renderStrip("#log", snapshot.log.map((l) => el("li", {}, `${(l.at_ms / 1000).toFixed(3)} ${l.text}`)));
}

async function act(body) {
  const result = $("#action-result");
  result.dataset.status = "";
  result.textContent = "…";
  let response;
  try {
    response = await fetch("api/actions", {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: "Bearer " + $("#token").value },
      body: JSON.stringify(body),
    });
  } catch (e) {
    result.dataset.status = "refused";
    result.textContent = "the console cannot be reached";
    return;
  }
  const text = (await response.text()).trim();
  result.dataset.status = response.ok ? "ok" : "refused";
  result.dataset.code = String(response.status);
  result.textContent = response.ok ? text : `refused (${response.status}): ${text}`;
}

function connect() {
  const events = new EventSource("api/events");
  events.addEventListener("open", () => {
    $("#live").dataset.live = "yes";
    $("#live").textContent = "● live";
  });
  events.addEventListener("message", (message) => render(JSON.parse(message.data)));
  events.addEventListener("error", () => {
    $("#live").dataset.live = "no";
    $("#live").textContent = "○ reconnecting";
  });
}

document.addEventListener("DOMContentLoaded", async () => {
  $("#install").addEventListener("click", () => act({ action: "install", path: $("#install-path").value }));
  $("#end-match").addEventListener("click", () => {
    if (confirm("End the match for every player?")) act({ action: "end-match", reason: "ended from the console" });
  });
  const first = await fetch("api/snapshot");
  if (first.ok) {
    const text = await first.text();
    if (text.length > 2) render(JSON.parse(text));
  }
  connect();
});
