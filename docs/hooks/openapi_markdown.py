"""The HTTP API reference page, rendered from the OpenAPI 3 document that ``manage.py spectacular`` writes (the one
``GET /api/schema/`` serves): every endpoint with its methods, parameters, request body and responses, then every
schema with its fields. Plain Markdown tables, no JavaScript.

Light: the standard library only."""
from __future__ import annotations

import html
import re
from typing import Any

__all__ = ["endpoints", "render_markdown"]

METHODS = ("get", "post", "put", "patch", "delete")

INTRO = """# HTTP API: every endpoint

Generated from the OpenAPI 3 document when the site is built (`manage.py spectacular`, the document that
`GET /api/schema/` serves), so it lists exactly what the server answers. How to authenticate and the common rules
(errors, limits, examples with `curl`): [HTTP API](http-api.md).
"""


def endpoints(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """Every ``(METHOD, path)`` of the document, in its order."""
    return [(method.upper(), path) for path, item in schema.get("paths", {}).items()
            for method in METHODS if method in item]


def _text(value: object) -> str:
    """One line of escaped text for a table cell (the schema's descriptions are Markdown: code spans stay)."""
    text = " ".join(str(value or "").split())
    return html.escape(text, quote=False).replace("|", "&#124;")


def _anchor(*parts: str) -> str:
    return "-".join(re.sub(r"[^a-z0-9]+", "-", part.lower()).strip("-") for part in parts if part)


def _type(schema: dict[str, Any]) -> str:
    """A schema as a short phrase: ``string``, ``array of [Run](#schema-run)``, ``one of a, b``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor('schema', name)})"
    for key in ("allOf", "oneOf", "anyOf"):
        if key in schema:
            parts = [_type(part) for part in schema[key] if part]
            joined = (" and " if key == "allOf" else " or ").join(parts)
            return joined + (" or null" if schema.get("nullable") else "")
    kind = schema.get("type", "object" if "properties" in schema else "any")
    if kind == "array":
        text = "array of " + _type(schema.get("items", {}))
    elif "enum" in schema:
        text = "one of " + ", ".join(f"`{value}`" for value in schema["enum"] if value is not None)
    else:
        text = str(kind) + (f" ({schema['format']})" if "format" in schema else "")
        if kind == "object" and schema.get("additionalProperties") not in (None, False, {}, True):
            text += " of " + _type(schema["additionalProperties"])
    limits = [f"{word} {schema[key]}" for key, word in (("minimum", "min"), ("maximum", "max"),
                                                         ("maxLength", "at most"), ("minLength", "at least"))
              if key in schema]
    if limits:
        text += " (" + ", ".join(limits) + (" characters" if "maxLength" in schema or "minLength" in schema
                                            else "") + ")"
    if schema.get("nullable"):
        text += " or null"
    return text


def _content(content: dict[str, Any]) -> str:
    return "; ".join(f"`{media}`: {_type(body.get('schema', {}))}" for media, body in content.items()) or "empty"


def _operation(method: str, path: str, operation: dict[str, Any], shared: list[dict[str, Any]]) -> list[str]:
    lines = [f"## {method} `{path}` {{#{_anchor(method, path)}}}", ""]
    if operation.get("summary"):
        lines += [f"**{_text(operation['summary'])}**", ""]
    if operation.get("description"):
        lines += [str(operation["description"]).strip(), ""]
    parameters = [*shared, *operation.get("parameters", [])]
    if parameters:
        lines += ["| parameter | in | type | required | meaning |", "|---|---|---|---|---|"]
        lines += [f"| `{item['name']}` | {item['in']} | {_type(item.get('schema', {}))} | "
                  f"{'yes' if item.get('required') else 'no'} | {_text(item.get('description'))} |"
                  for item in parameters]
        lines.append("")
    body = operation.get("requestBody")
    if body:
        required = "required" if body.get("required") else "optional"
        lines += [f"Request body ({required}): {_content(body.get('content', {}))}", ""]
    responses = operation.get("responses", {})
    if responses:
        lines += ["| status | answer |", "|---|---|"]
        for status, answer in responses.items():
            described = _text(answer.get("description"))
            content = _content(answer["content"]) if answer.get("content") else "no body"
            lines.append(f"| {status} | {content}{'; ' + described if described else ''} |")
        lines.append("")
    security = [name for option in operation.get("security", []) for name in option]
    if security:
        lines += ["Authentication: " + ", ".join(f"`{name}`" for name in security), ""]
    return lines


def _component(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name} {{#{_anchor('schema', name)}}}", ""]
    if schema.get("description"):
        lines += [str(schema["description"]).strip(), ""]
    properties = schema.get("properties")
    if properties:
        required = set(schema.get("required", []))
        lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
        for field, spec in properties.items():
            notes = [word for key, word in (("readOnly", "read-only"), ("writeOnly", "write-only")) if spec.get(key)]
            meaning = _text(spec.get("description")) + (f" ({', '.join(notes)})" if notes else "")
            lines.append(f"| `{field}` | {_type(spec)} | {'yes' if field in required else 'no'} | {meaning} |")
        lines.append("")
    elif "enum" in schema or "type" in schema:
        lines += [_type(schema), ""]
    return lines


def render_markdown(schema: dict[str, Any]) -> str:
    """The whole page: an index, one section per endpoint and method, the schemas."""
    info = schema.get("info", {})
    lines = [INTRO, f"*{_text(info.get('title'))}*, version {_text(info.get('version'))}.", ""]
    if info.get("description"):
        lines += [str(info["description"]).strip(), ""]
    lines += ["| method | path | what it does |", "|---|---|---|"]
    paths: dict[str, Any] = schema.get("paths", {})
    for method, path in endpoints(schema):
        summary = paths[path][method.lower()].get("summary", "")
        lines.append(f"| {method} | [`{path}`](#{_anchor(method, path)}) | {_text(summary)} |")
    lines.append("")
    for method, path in endpoints(schema):
        item = paths[path]
        lines += _operation(method, path, item[method.lower()], item.get("parameters", []))
    components = schema.get("components", {})
    if components.get("schemas"):
        lines += ["## Schemas {#schemas}", ""]
        for name, spec in components["schemas"].items():
            lines += _component(name, spec)
    schemes = components.get("securitySchemes", {})
    if schemes:
        lines += ["## Authentication {#authentication}", "", "| name | how |", "|---|---|"]
        for name, spec in schemes.items():
            how = " ".join(str(spec.get(key, "")) for key in ("type", "scheme", "in", "name") if spec.get(key))
            described = f" {_text(spec['description'])}" if spec.get("description") else ""
            lines.append(f"| `{name}` | {_text(how)}{described} |")
        lines.append("")
    return "\n".join(lines) + "\n"
