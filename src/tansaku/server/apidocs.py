"""``/docs``: the API reference rendered on the server from the OpenAPI schema.

FastAPI's Swagger UI loads scripts from a CDN and runs inline scripts: neither works offline nor
under our CSP. This page is plain HTML (Jinja2, autoescaped, no script): every route with its
summary, description, parameters, request body fields and responses (each status with its body
model — the success body's fields — and what it means; ``tansaku.server.responses``);
``/openapi.json`` stays the machine version.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, select_autoescape

_TEMPLATE = """<!doctype html>
<html lang="ja"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{ title }} — API</title></head>
<body>
<h1>{{ title }} API <small>{{ version }}</small></h1>
<p>機械向けの定義: <a href="/openapi.json">/openapi.json</a>。
認証: <code>Authorization: Bearer &lt;APIキー&gt;</code> または <code>X-API-Key</code>。
エラーは <code>{"error": {"code", "message"}}</code>。</p>
{% for op in ops %}
<section id="{{ op.id }}">
<h2><code>{{ op.method }} {{ op.path }}</code> {{ op.summary }}</h2>
{% if op.description %}<pre>{{ op.description }}</pre>{% endif %}
{% if op.params %}<h3>パラメータ</h3><ul>
{% for p in op.params %}<li><code>{{ p.name }}</code> ({{ p.where }}
{%- if p.required %}, 必須{% endif %}) {{ p.type }}</li>{% endfor %}
</ul>{% endif %}
{% if op.body %}<h3>本文 ({{ op.body_type }})</h3><ul>
{% for f in op.body %}<li><code>{{ f.name }}</code> {{ f.type }}
{%- if f.required %} 必須{% endif %}</li>{% endfor %}
</ul>{% endif %}
{% if op.responses %}<h3>応答</h3><ul>
{% for r in op.responses %}<li><code>{{ r.status }}</code> {{ r.type }} — {{ r.description }}
{%- if r.fields %}<br>{% for f in r.fields %}<code>{{ f.name }}</code> {{ f.type }}
{%- if not f.required %}(省略あり){% endif %}{% if not loop.last %}, {% endif %}{% endfor %}
{%- endif %}</li>{% endfor %}
</ul>{% endif %}
</section>
{% endfor %}
</body></html>
"""

_env = Environment(autoescape=select_autoescape(default=True, default_for_string=True))


def _type(schema: dict[str, Any], components: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(_type(s, components) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"{_type(schema.get('items', {}), components)}[]"
    if "enum" in schema:
        return " | ".join(map(str, schema["enum"]))
    if "const" in schema:
        return str(schema["const"])
    return str(schema.get("type", "any"))


def _body(op: dict[str, Any], components: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    content = (op.get("requestBody") or {}).get("content") or {}
    for media, spec in content.items():
        schema = spec.get("schema", {})
        if "$ref" in schema:
            schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
        required = set(schema.get("required", []))
        fields = [
            {"name": n, "type": _type(s, components), "required": n in required}
            for n, s in (schema.get("properties") or {}).items()
        ]
        return media, fields
    return "", []


def _fields(schema: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    if "$ref" in schema:
        schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
    required = set(schema.get("required", []))
    return [
        {"name": n, "type": _type(s, components), "required": n in required}
        for n, s in (schema.get("properties") or {}).items()
    ]


def _responses(op: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    """Each status: its body's type (per media type) and, for a success, the body's fields."""
    out = []
    for status, spec in (op.get("responses") or {}).items():
        content = spec.get("content") or {}
        types = [
            _type(c.get("schema") or {}, components)
            + ("" if media == "application/json" else f" ({media})")
            for media, c in content.items()
        ]
        success = str(status).startswith("2")
        json_schema = (content.get("application/json") or {}).get("schema") or {}
        out.append(
            {
                "status": status,
                "type": " / ".join(types),
                "description": spec.get("description", ""),
                "fields": _fields(json_schema, components) if success else [],
            }
        )
    return out


def render_docs(schema: dict[str, Any]) -> str:
    components = (schema.get("components") or {}).get("schemas") or {}
    ops = []
    for path, methods in (schema.get("paths") or {}).items():
        for method, op in methods.items():
            body_type, body = _body(op, components)
            ops.append(
                {
                    "id": op.get("operationId", f"{method}-{path}"),
                    "method": method.upper(),
                    "path": path,
                    "summary": op.get("summary", ""),
                    "description": op.get("description", ""),
                    "params": [
                        {
                            "name": p.get("name"),
                            "where": p.get("in"),
                            "required": p.get("required", False),
                            "type": _type(p.get("schema", {}), components),
                        }
                        for p in op.get("parameters", [])
                    ],
                    "body_type": body_type,
                    "body": body,
                    "responses": _responses(op, components),
                }
            )
    info = schema.get("info") or {}
    return _env.from_string(_TEMPLATE).render(
        title=info.get("title", "tansaku"), version=info.get("version", ""), ops=ops
    )
