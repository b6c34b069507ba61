"""JSON numbers kept as the model wrote them.

The runner compares arguments as written: `2.0` is not `2`, and `1e0` is
not `1.0` (docs/protocol.md; 0006.D6.no-coercion: a handler receives exactly
what the model sent). Python's json module decodes `1e0` to the float 1.0
and encodes it back as `1.0`, an unnamed repair. Decode model output with
``parse_float=Number`` and encode with ``dumps`` (the kit's protocol lines
are written with it) and the number travels with its text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class Number(float):
    """A JSON number written with a fraction or an exponent: a float for
    arithmetic and comparison, with the text it was written as."""

    text: str

    def __new__(cls, text: str) -> Number:
        n = super().__new__(cls, text)
        n.text = text
        return n


def dumps(value: Any) -> str:
    """Compact JSON, UTF-8 text unescaped, a Number written as its text."""
    if isinstance(value, Number):
        return value.text
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{" + ",".join(json.dumps(str(k), ensure_ascii=False) + ":" + dumps(v) for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
