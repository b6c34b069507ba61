"""Deciding an action from model output (0003 decisions five to seven).

JSON actions are parsed tolerantly and every repair is named: one code
fence around the whole output is removed (``unfence``), arguments written
beside the tool name are collected (``collapse_flattened_arguments``, only
when there are some), keys beside a present arguments object are dropped
(``drop_keys_beside_arguments``). Anything else that is not an action is a
decision failure with a reason.
"""

from __future__ import annotations

import json
import re

from polyloop_conform import Number

from .tools import Action

MAX_OUTPUT_BYTES = 1 << 20
MAX_DEPTH = 64

_FENCE = re.compile(r"\A```([^\n]*)\n(.*?)\n?```\Z", re.S)


def _tag_ok(tag: str) -> bool:
    """A fence's language tag: any characters but white space (Unicode's
    White_Space), the backtick and the braces; it is never read
    (0003.D6.fence-tag)."""
    return not any(_white(c) or c in "`{}" for c in tag)


def _white(c: str) -> bool:
    # str.isspace also holds for the four information separators
    # U+001C..U+001F, which Unicode does not count as white space.
    return c.isspace() and not "\x1c" <= c <= "\x1f"

# JSON's own white space, the only padding a JSON action may carry
# (0003.D6.unfence-whitespace.set): str.strip() would also take U+00A0,
# U+0085, U+3000 and the separators U+001C to U+001F.
_JSON_SPACE = " \t\n\r"


def _depth(v: object, d: int = 0) -> int:
    if isinstance(v, dict):
        return max([_depth(x, d + 1) for x in v.values()], default=d + 1)
    if isinstance(v, list):
        return max([_depth(x, d + 1) for x in v], default=d + 1)
    return d


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    """Refuse a key written twice: readers disagree on which copy counts
    (0003.D6.duplicate-keys)."""
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _has_lone_surrogate(v: object) -> bool:
    if isinstance(v, str):
        return any("\ud800" <= c <= "\udfff" for c in v)
    if isinstance(v, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(x) for k, x in v.items())
    if isinstance(v, list):
        return any(_has_lone_surrogate(x) for x in v)
    return False


def _failed(why: str, repairs: list[str]) -> Action:
    # A failed decision names no repairs, not even an unfence tried
    # before JSON that does not parse (0003.D7).
    del repairs
    return Action(kind="none", repairs=(), error=why)


def parse_json(raw: str) -> Action:
    repairs: list[str] = []
    if len(raw.encode("utf-8")) > MAX_OUTPUT_BYTES:
        return _failed("the output is too long to be an action", repairs)
    text = raw.strip(_JSON_SPACE)
    m = _FENCE.match(text)
    if m and _tag_ok(m.group(1).strip(_JSON_SPACE)):
        text = m.group(2).strip(_JSON_SPACE)
        repairs.append("unfence")
    try:
        # Numbers keep their written form (2.0, 1e0) up to the handler.
        doc, end = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_float=Number).raw_decode(text)
    except _DuplicateKey as err:
        return _failed(f"the key {err.key!r} appears twice in one object", repairs)
    except ValueError as err:
        return _failed(f"the output is not JSON ({getattr(err, 'msg', err)})", repairs)
    if text[end:].strip(_JSON_SPACE):
        return _failed("something follows the JSON object", repairs)
    if _has_lone_surrogate(doc):
        # json.loads keeps half a surrogate pair as a character no UTF-8
        # text can hold (0003.D7.lone-surrogate).
        return _failed("a string escape is half of a UTF-16 surrogate pair", repairs)
    if _depth(doc) > MAX_DEPTH:
        return _failed("the JSON is nested too deeply", repairs)
    if not isinstance(doc, dict):
        return _failed("the JSON is not an object", repairs)
    # The reflection and the plan may be any JSON value (0003.D5.parts).
    if "actions" in doc:  # the batch form, whatever it holds (0003.D7.several.actions-key)
        return _failed("an actions field holds several calls; an action is one", repairs)
    act = doc.get("action")
    if not isinstance(act, dict):
        return _failed("there is no action object", repairs)
    tool = act.get("tool")
    if not isinstance(tool, str) or not tool:
        return _failed("the action names no tool", repairs)
    others = {k: v for k, v in act.items() if k not in ("tool", "arguments")}
    if "arguments" in act:
        args = act["arguments"]
        if not isinstance(args, dict):
            return _failed("the action's arguments are not an object", repairs)
        if others:
            repairs.append("drop_keys_beside_arguments")
        return Action(kind="tool_call", tool=tool, arguments=args, repairs=tuple(repairs))
    if others:
        repairs.append("collapse_flattened_arguments")
        return Action(kind="tool_call", tool=tool, arguments=others, repairs=tuple(repairs))
    return Action(kind="tool_call", tool=tool, arguments=None, repairs=tuple(repairs))


def _fenced_blocks(text: str) -> list[str]:
    """The bodies of the complete fenced blocks in text: an opening line of
    three backticks and an optional tag (0003.D6.fence-tag), up to a line that is
    three backticks. A body is the lines between, as written (0003.D5.fence)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        opening = lines[i].strip()
        if opening.startswith("```") and _tag_ok(opening[3:]):
            for j in range(i + 1, len(lines)):
                if lines[j].strip() == "```":
                    out.append("\n".join(lines[i + 1 : j]))
                    i = j
                    break
        i += 1
    return out


def parse_code(raw: str) -> Action:
    """A code action is the text of the one fenced block, wherever it stands,
    or the whole output; several blocks are no action (0003.D5.fence). The
    code is taken verbatim: nothing is trimmed, since trimming would be a
    repair no record names and indentation is syntax."""
    blocks = _fenced_blocks(raw)
    if len(blocks) > 1:
        return _failed(f"{len(blocks)} fenced blocks in one output; a code action is one", [])
    if blocks:
        if not blocks[0].strip():
            return _failed("the code block is empty", [])
        return Action(kind="code", code=blocks[0], repairs=("unfence",))
    if not raw.strip():
        return _failed("the output is empty: no code to run", [])
    return Action(kind="code", code=raw)
