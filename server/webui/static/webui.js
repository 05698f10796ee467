// minidoris web UI: plain JavaScript, no build step. Every value goes into the page through
// textContent (never innerHTML), so data cannot inject markup.
"use strict";

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

async function postJson(url, body) {
  const resp = await fetch(url, {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrfToken()},
    body: JSON.stringify(body || {}),
  });
  const reply = await resp.json().catch(() => ({msg: "HTTP " + resp.status, code: resp.status}));
  if (resp.status === 401) { window.location = "/login?next=" + encodeURIComponent(location.pathname); }
  return reply;
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function renderTable(columns, rows) {
  const table = el("table", null, "grid result");
  const head = table.createTHead().insertRow();
  columns.forEach((c) => head.appendChild(el("th", c)));
  const body = table.createTBody();
  rows.forEach((row) => {
    const tr = body.insertRow();
    row.forEach((v) => tr.appendChild(v === null ? el("td", "NULL", "null") : el("td", v)));
  });
  return table;
}

function setupPlayground() {
  const run = document.getElementById("run");
  if (!run) return;
  const cancel = document.getElementById("cancel");
  const status = document.getElementById("status");
  const error = document.getElementById("error");
  const result = document.getElementById("result");
  run.addEventListener("click", async () => {
    run.disabled = true; cancel.disabled = false;
    error.hidden = true; result.replaceChildren(); status.textContent = "running…";
    const reply = await postJson("/api/webui/query", {
      stmt: document.getElementById("sql").value, db: document.getElementById("db").value});
    run.disabled = false; cancel.disabled = true;
    const data = reply.data || {};
    if (reply.code !== 0 || data.error) {
      status.textContent = "failed";
      error.textContent = data.error || reply.msg; error.hidden = false;
      return;
    }
    if (data.type === "result_set") {
      result.appendChild(renderTable(data.columns, data.rows));
      status.textContent = data.total + " row(s) in " + data.time + " ms" +
        (data.truncated ? " (first " + data.rows.length + " shown)" : "");
    } else {
      status.textContent = "OK, " + data.affected + " row(s) affected in " + data.time + " ms";
    }
  });
  cancel.addEventListener("click", async () => {
    const reply = await postJson("/api/webui/cancel", {});
    if (reply.code !== 0) { error.textContent = reply.msg; error.hidden = false; }
    else { status.textContent = "cancelling…"; }
  });
}

function setupKillButtons() {
  document.querySelectorAll("button[data-kill]").forEach((button) => {
    button.addEventListener("click", async () => {
      const reply = await postJson("/api/webui/kill", {
        connection_id: Number(button.dataset.kill), query: button.dataset.query === "true"});
      const status = document.getElementById("kill-status");
      status.textContent = reply.code === 0 ? "killed " + button.dataset.kill : reply.msg;
      if (reply.code === 0) setTimeout(() => window.location.reload(), 500);
    });
  });
}

function setupLogout() {
  document.querySelectorAll("form[data-csrf]").forEach((form) => {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      await fetch(form.action, {method: "POST", credentials: "same-origin",
                                headers: {"X-CSRF-Token": csrfToken()}});
      window.location = "/login";
    });
  });
}

function setupFilter() {
  const input = document.querySelector("input[data-filter]");
  if (!input) return;
  input.addEventListener("input", () => {
    const needle = input.value.toLowerCase();
    document.querySelectorAll(input.dataset.filter + " tbody tr").forEach((tr) => {
      tr.hidden = needle !== "" && !tr.textContent.toLowerCase().includes(needle);
    });
  });
}

function progressList(items) {
  if (!items.length) return el("p", "(none running)", "empty");
  const columns = Object.keys(items[0]);
  const table = renderTable(columns.concat(["progress"]), []);
  const body = table.tBodies[0];
  items.forEach((item) => {
    const tr = body.insertRow();
    columns.forEach((c) => tr.appendChild(item[c] === null ? el("td", "-") : el("td", item[c])));
    const cell = el("td");
    const percent = item.Percent ?? item.ScanPercent;  // loads: of the body; queries: of the scans
    if (percent !== null && percent !== undefined) {
      const bar = el("progress"); bar.max = 100; bar.value = percent;
      cell.appendChild(bar); cell.appendChild(el("span", " " + percent + "%"));
    } else { cell.textContent = item.Progress || "-"; }
    tr.appendChild(cell);
  });
  return table;
}

function setupProgress() {
  const root = document.getElementById("progress");
  if (!root) return;
  const poll = async () => {
    const resp = await fetch(root.dataset.poll, {credentials: "same-origin"});
    if (resp.ok) {
      const data = (await resp.json()).data;
      ["queries", "stream_loads", "spark_loads"].forEach((key) => {
        document.getElementById(key).replaceChildren(progressList(data[key]));
      });
    }
    setTimeout(poll, 1000);
  };
  poll();
}

document.addEventListener("DOMContentLoaded", () => {
  setupPlayground(); setupKillButtons(); setupLogout(); setupFilter(); setupProgress();
});
