// Renders /openapi.json as a list of operations: method, path, summary, parameters, request body and
// responses, with schemas resolved one level ($ref -> the component's JSON). No other host is contacted.
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const c of children) node.append(c);
  return node;
}

function resolve(spec, schema) {
  if (schema && schema.$ref) {
    const name = schema.$ref.split("/").pop();
    return { name, schema: (spec.components && spec.components.schemas || {})[name] || {} };
  }
  return { name: schema && schema.type || "", schema: schema || {} };
}

function schemaBlock(spec, label, schema) {
  const r = resolve(spec, schema);
  return el("div", {}, el("strong", {}, `${label}${r.name ? " (" + r.name + ")" : ""}`),
            el("pre", {}, JSON.stringify(r.schema.properties || r.schema, null, 2)));
}

function render(spec) {
  document.getElementById("title").textContent = `${spec.info.title} (version ${spec.info.version})`;
  document.getElementById("description").textContent = spec.info.description || "";
  const ops = document.getElementById("ops");
  ops.textContent = "";
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const box = el("section", { class: "op" },
                     el("h3", {}, el("span", { class: "method" }, method.toUpperCase()), path));
      if (op.summary) box.append(el("div", {}, op.summary));
      if (op.description) box.append(el("p", { class: "muted" }, op.description));
      const params = (op.parameters || []).map(p => `${p.name} (${p.in}${p.required ? ", required" : ""})`);
      if (params.length) box.append(el("div", {}, "Parameters: " + params.join(", ")));
      const body = op.requestBody && op.requestBody.content && op.requestBody.content["application/json"];
      if (body) box.append(schemaBlock(spec, "Request body", body.schema));
      const codes = Object.keys(op.responses || {});
      if (codes.length) box.append(el("div", { class: "muted" }, "Responses: " + codes.join(", ")));
      ops.append(box);
    }
  }
}

fetch("/openapi.json")
  .then(r => r.json())
  .then(render)
  .catch(err => { document.getElementById("ops").textContent = "could not load /openapi.json: " + err; });
