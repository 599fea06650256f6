// FieldKit API reference: renders /api/schema/ as a readable page, with no library and
// nothing fetched from anywhere but this server.
"use strict";

(function () {
  var METHODS = ["get", "post", "put", "patch", "delete"];
  var doc;

  // el builds an element: el("td", {class: "x"}, "text", child, ...).
  function el(tag, attrs) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (attrs[k] != null) e.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c == null || c === false) continue;
      e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return e;
  }

  function refName(s) { return s && s.$ref ? s.$ref.split("/").pop() : null; }

  function resolve(r) {
    var name = refName(r);
    if (!name) return r;
    var parts = r.$ref.replace("#/", "").split("/");
    var v = doc;
    parts.forEach(function (p) { v = v && v[p]; });
    return v || {};
  }

  function anchor(s) { return s.replace(/[^A-Za-z0-9_-]+/g, "-"); }

  // typeOf is a short type label; references link to the schema section.
  function typeOf(s) {
    if (!s) return el("span", {class: "type"}, "any");
    var name = refName(s);
    if (name) return el("a", {class: "type", href: "#schema-" + anchor(name)}, name);
    if (s.allOf && s.allOf.length === 1) return typeOf(s.allOf[0]);
    if (s.oneOf) {
      var span = el("span", {class: "type"});
      s.oneOf.forEach(function (o, i) {
        if (i) span.appendChild(document.createTextNode(" | "));
        span.appendChild(typeOf(o));
      });
      return span;
    }
    if (s.type === "array") {
      return el("span", {class: "type"}, "array of ", typeOf(s.items));
    }
    var t = s.type || "any";
    if (s.format) t += " (" + s.format + ")";
    if (s.type === "object" && s.additionalProperties && typeof s.additionalProperties === "object" && !s.properties) {
      return el("span", {class: "type"}, "map of ", typeOf(s.additionalProperties));
    }
    return el("span", {class: "type"}, t);
  }

  function flags(s, required) {
    var out = el("span");
    var add = function (cls, text) { out.appendChild(el("span", {class: cls}, " " + text)); };
    if (required) add("req", "required");
    if (s.readOnly || (s.allOf && s.allOf[0] && s.allOf[0].readOnly)) add("flag", "read-only");
    if (s.writeOnly) add("flag", "write-only");
    if (s.nullable) add("flag", "nullable");
    if (s.maxLength) add("flag", "max " + s.maxLength + " chars");
    if (s.minimum != null || s.maximum != null) add("flag", s.maximum == null ? "≥ " + s.minimum : s.minimum == null ? "≤ " + s.maximum : s.minimum + "–" + s.maximum);
    if (s.default != null) add("flag", "default " + JSON.stringify(s.default));
    return out;
  }

  function describe(s) {
    var d = el("td");
    if (s.description) d.appendChild(document.createTextNode(s.description + " "));
    var enumv = s.enum || (s.items && s.items.enum);
    if (enumv) {
      d.appendChild(el("span", {class: "enum"}, "One of: ", el("code", null, enumv.map(function (v) { return JSON.stringify(v); }).join(", "))));
    }
    return d;
  }

  // propsTable renders an object schema's properties; inline objects nest, references link.
  function propsTable(s, depth) {
    s = s.allOf && s.allOf.length === 1 ? resolve(s.allOf[0]) : s;
    var props = s.properties || {};
    var req = s.required || [];
    var t = el("table", null, el("tr", null, el("th", null, "Field"), el("th", null, "Type"), el("th", null, "Description")));
    Object.keys(props).forEach(function (k) {
      var p = props[k];
      t.appendChild(el("tr", null,
        el("td", null, el("code", null, k), flags(p, req.indexOf(k) >= 0)),
        el("td", null, typeOf(p)), describe(p)));
      var inner = p.type === "array" ? p.items : p;
      if (inner && !refName(inner) && inner.properties && depth < 3) {
        t.appendChild(el("tr", null, el("td", {colspan: 3}, el("div", {class: "nested"}, propsTable(inner, depth + 1)))));
      }
    });
    return t;
  }

  function schemaBlock(s) {
    if (refName(s)) {
      var name = refName(s), r = resolve(s);
      var box = el("div", null, el("div", null, "Schema: ", typeOf(s)));
      if (r.properties) box.appendChild(el("details", null, el("summary", null, "fields"), propsTable(r, 0)));
      return box;
    }
    if (s.properties) return propsTable(s, 0);
    return el("div", null, typeOf(s));
  }

  function paramsTable(params) {
    var t = el("table", null, el("tr", null, el("th", null, "Name"), el("th", null, "In"), el("th", null, "Type"), el("th", null, "Description")));
    params.forEach(function (p) {
      p = resolve(p);
      t.appendChild(el("tr", {class: "param"},
        el("td", null, el("code", null, p.name), flags(p.schema || {}, p.required)),
        el("td", null, p.in), el("td", null, typeOf(p.schema)), describe(Object.assign({}, p.schema, {description: p.description}))));
    });
    return t;
  }

  function responses(rs) {
    var box = el("div");
    Object.keys(rs).sort().forEach(function (code) {
      var r = resolve(rs[code]);
      var line = el("div", {class: "resp"}, el("span", {class: "code " + (code < "400" ? "ok" : "err")}, code), el("span", null, r.description || ""));
      var types = Object.keys(r.content || {});
      types.forEach(function (ct) {
        var s = r.content[ct].schema;
        if (s) line.appendChild(el("span", null, " — ", types.length > 1 ? el("code", null, ct + " ") : null, typeOf(s)));
      });
      box.appendChild(line);
      if (code < "300" && r.content && r.content["application/json"] && r.content["application/json"].schema) {
        box.appendChild(el("details", null, el("summary", null, "response fields"), schemaBlock(r.content["application/json"].schema)));
      }
    });
    return box;
  }

  function operation(path, method, op, item) {
    var id = "op-" + anchor(op.operationId || method + path);
    var publicOp = op.security && op.security.length === 0;
    var box = el("section", {class: "op", id: id, "data-search": (method + " " + path + " " + (op.summary || "")).toLowerCase()},
      el("h4", null, el("span", {class: "m " + method}, method), el("span", {class: "path"}, path),
        el("span", {class: "summary"}, op.summary || ""), el("span", {class: "opid"}, op.operationId || "")),
      el("div", {class: "lock"}, publicOp ? "Public: no authentication." : "Authorization: Token <key>"));
    if (op.description) box.appendChild(el("p", null, op.description));
    var params = (item.parameters || []).concat(op.parameters || []);
    // Lookup variants (name__ic, created__gte, …) fold away: lists have dozens.
    var main = params.filter(function (p) { return (resolve(p).name || "").indexOf("__") < 0; });
    var lookups = params.filter(function (p) { return (resolve(p).name || "").indexOf("__") >= 0; });
    if (main.length) {
      box.appendChild(el("h5", null, "Parameters"));
      box.appendChild(paramsTable(main));
    }
    if (lookups.length) {
      box.appendChild(el("details", null, el("summary", null, lookups.length + " filter lookups (" +
        lookups.slice(0, 3).map(function (p) { return resolve(p).name; }).join(", ") + ", …)"), paramsTable(lookups)));
    }
    if (op.requestBody) {
      var c = op.requestBody.content || {};
      var s = (c["application/json"] || c[Object.keys(c)[0]] || {}).schema;
      box.appendChild(el("h5", null, "Request body"));
      if (s) box.appendChild(schemaBlock(s));
    }
    box.appendChild(el("h5", null, "Responses"));
    box.appendChild(responses(op.responses || {}));
    return box;
  }

  function render() {
    document.getElementById("title").textContent = doc.info.title + " " + (doc.info.version || "");
    document.title = doc.info.title + " reference";
    document.getElementById("desc").textContent = doc.info.description || "";
    var schemes = (doc.components && doc.components.securitySchemes) || {};
    var auth = document.getElementById("auth");
    Object.keys(schemes).forEach(function (k) {
      var s = schemes[k];
      auth.appendChild(el("p", null, el("strong", null, "Authentication: "), "header ", el("code", null, s.name || ""), " — " + (s.description || "")));
    });
    var groups = {}, order = [];
    (doc.tags || []).forEach(function (t) { groups[t.name] = {tag: t, ops: []}; order.push(t.name); });
    Object.keys(doc.paths).sort().forEach(function (p) {
      METHODS.forEach(function (m) {
        var op = doc.paths[p][m];
        if (!op) return;
        var tag = (op.tags && op.tags[0]) || "other";
        if (!groups[tag]) { groups[tag] = {tag: {name: tag}, ops: []}; order.push(tag); }
        groups[tag].ops.push([p, m, op]);
      });
    });
    var toc = document.getElementById("toc"), content = document.getElementById("content");
    order.forEach(function (name) {
      var g = groups[name];
      if (!g.ops.length) return;
      toc.appendChild(el("h3", null, name));
      content.appendChild(el("h2", {id: "tag-" + anchor(name)}, name));
      if (g.tag.description) content.appendChild(el("p", {class: "tagdesc"}, g.tag.description));
      g.ops.forEach(function (x) {
        var sec = operation(x[0], x[1], x[2], doc.paths[x[0]]);
        content.appendChild(sec);
        toc.appendChild(el("a", {href: "#" + sec.id, "data-for": sec.id, title: x[0]}, el("span", {class: "m " + x[1]}, x[1]), el("span", {class: "path"}, x[2].summary || x[0])));
      });
    });
    var schemas = (doc.components && doc.components.schemas) || {};
    toc.appendChild(el("h3", null, "schemas"));
    content.appendChild(el("h2", {id: "schemas"}, "Schemas"));
    Object.keys(schemas).sort().forEach(function (name) {
      var s = schemas[name];
      var box = el("section", {class: "schema", id: "schema-" + anchor(name)}, el("h4", null, name));
      if (s.description) box.appendChild(el("p", null, s.description));
      box.appendChild(s.properties ? propsTable(s, 0) : el("div", null, typeOf(s)));
      content.appendChild(box);
      toc.appendChild(el("a", {href: "#schema-" + anchor(name), "data-for": "schema-" + anchor(name)}, el("span", {class: "path"}, name)));
    });
    if (location.hash) {
      var target = document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    }
  }

  function filter(q) {
    q = q.trim().toLowerCase();
    document.querySelectorAll("section.op").forEach(function (s) {
      var hide = q !== "" && s.getAttribute("data-search").indexOf(q) < 0;
      s.classList.toggle("hidden", hide);
      var link = document.querySelector('#toc a[data-for="' + s.id + '"]');
      if (link) link.classList.toggle("hidden", hide);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.getElementById("filter").addEventListener("input", function (e) { filter(e.target.value); });
    fetch("/api/schema/?format=json", {headers: {Accept: "application/json"}})
      .then(function (r) {
        if (!r.ok) throw new Error("HTTP " + r.status);
        return r.json();
      })
      .then(function (d) { doc = d; render(); })
      .catch(function (err) {
        var p = document.getElementById("desc");
        p.textContent = "Could not load the schema: " + err.message;
        p.className = "err";
      });
  });
})();
