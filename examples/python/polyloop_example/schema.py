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


def check_schema(schema: Any, where: str = "") -> None:
    if not isinstance(schema, dict):
        raise SchemaError(f"{where or 'schema'} is not an object")
    t = schema.get("type")
    names = t if isinstance(t, list) else [t] if t is not None else []
    for n in names:
        if n not in _TYPES:
            raise SchemaError(f"{where or 'schema'}: unknown type {n!r}")
    for name, sub in (schema.get("properties") or {}).items():
        check_schema(sub, f"{where}/properties/{name}")
    if isinstance(schema.get("items"), dict):
        check_schema(schema["items"], f"{where}/items")
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


def problems(schema: dict, value: Any, where: str = "") -> list[str]:
    """Every way value breaks schema, each naming where."""
    out: list[str] = []
    here = where or "the arguments"
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
                out.extend(problems(props[name], sub, f"{where}/{name}"))
            elif schema.get("additionalProperties") is False:
                out.append(f"{where}/{name} is not allowed")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            out.extend(problems(schema["items"], item, f"{where}/{i}"))
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
