"""A small JSON Schema checker: the keywords tool parameters use here.

PolyLoop validates a call's arguments against its tool's parameter schema,
without coercion (a string "3" is not an integer). Only the standard
library is available, so this covers type, properties, required,
additionalProperties, enum, const, items, minimum/maximum, minLength/
maxLength and pattern; a schema using a type name that does not exist is
refused when the registry is built.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}


class SchemaError(Exception):
    """The schema itself is broken."""


def resolve(root: dict, ref: str) -> Any:
    """The subschema a local $ref points at, or None when it does not
    resolve inside root (nothing is fetched: 0006.D6.compile)."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in [p for p in ref[1:].split("/") if p]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, (dict, bool)) else None


def check_schema(schema: Any, where: str = "", root: Any = None) -> None:
    """Refuse a schema that does not compile (0006.D6.compile): invalid
    for the keywords checked here, or a $ref that does not resolve."""
    if root is None:
        root = schema
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"{where or 'schema'} is not an object")
    t = schema.get("type")
    names = t if isinstance(t, list) else [t] if t is not None else []
    for n in names:
        if n not in _TYPES:
            raise SchemaError(f"{where or 'schema'}: unknown type {n!r}")
    req = schema.get("required")
    if req is not None and not (isinstance(req, list) and all(isinstance(r, str) for r in req)):
        raise SchemaError(f"{where}/required is not a list of names")
    if "$ref" in schema and resolve(root, str(schema["$ref"])) is None:
        raise SchemaError(f"{where}/$ref {schema['$ref']!r} does not resolve inside the schema")
    for name, sub in (schema.get("properties") or {}).items():
        check_schema(sub, f"{where}/properties/{name}", root)
    for name, sub in (schema.get("$defs") or {}).items():
        check_schema(sub, f"{where}/$defs/{name}", root)
    if isinstance(schema.get("items"), dict):
        check_schema(schema["items"], f"{where}/items", root)
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except re.error as err:
            raise SchemaError(f"{where}/pattern: {err}") from err


def _is(value: Any, t: str) -> bool:
    if t == "object":
        return isinstance(value, dict)
    if t == "array":
        return isinstance(value, list)
    if t == "string":
        return isinstance(value, str)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "null":
        return value is None
    if isinstance(value, bool):
        return False
    if t == "integer":
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    return isinstance(value, (int, float))


def problems(schema: dict, value: Any, where: str = "", root: Any = None) -> list[str]:
    """Every way value breaks schema, each naming where. A schema's
    default is an annotation: nothing is filled in (0006.D6.no-defaults)."""
    out: list[str] = []
    here = where or "the arguments"
    if root is None:
        root = schema
    if "$ref" in schema:
        target = resolve(root, str(schema["$ref"]))
        if isinstance(target, dict):
            out.extend(problems(target, value, where, root))
    t = schema.get("type")
    if t is not None:
        names = t if isinstance(t, list) else [t]
        if not any(_is(value, n) for n in names):
            return [f"{here} should be {' or '.join(names)}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{here} is not one of the allowed values")
    if "const" in schema and value != schema["const"]:
        out.append(f"{here} is not the required value")
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name in schema.get("required") or []:
            if name not in value:
                out.append(f"{where}/{name} is required but missing")
        for name, sub in value.items():
            if name in props:
                out.extend(problems(props[name], sub, f"{where}/{name}", root))
            elif schema.get("additionalProperties") is False:
                out.append(f"{where}/{name} is not allowed")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            out.extend(problems(schema["items"], item, f"{where}/{i}", root))
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            out.append(f"{here} is too short")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            out.append(f"{here} is too long")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{here} does not match its pattern")
    if _is(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{here} is below its minimum")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{here} is above its maximum")
    return out
