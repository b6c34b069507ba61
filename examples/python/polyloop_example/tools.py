"""Tools: ToolSpec, ToolRegistry, RegistryExecutor, ActionOutcome (0006, 0008)."""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .schema import SchemaError, check_schema, problems


class ReplayPolicy(enum.Enum):
    SAFE = "SAFE"
    NEVER = "NEVER"


class Status(str, enum.Enum):
    EXECUTED = "EXECUTED"
    NOT_EXECUTED = "NOT_EXECUTED"
    ENV_ERROR = "ENV_ERROR"


ToolHandler = Callable[[Mapping[str, Any]], Awaitable[str]]


@dataclass(frozen=True)
class ToolSpec:
    # 0008 decision one: the handler is appended last, never inserted.
    name: str
    description: str = ""
    parameters: Mapping[str, object] | None = None
    replay_policy: ReplayPolicy = ReplayPolicy.NEVER
    completes_run: bool = False
    handler: ToolHandler | None = None


class ToolEnvironmentError(Exception):
    """Raised by a handler to say the environment is broken (0008)."""


@dataclass
class ActionOutcome:
    status: Status
    observation: str
    observation_is_synthetic: bool = False
    env_reported_completion: bool | None = False
    observation_truncated_chars: int = 0


@dataclass
class Action:
    """A decided action: a tool call, a code block, or none (not an action)."""
    kind: str  # tool_call, code, none
    tool: str = ""
    arguments: dict | None = None  # None: the call had no arguments object
    code: str = ""
    repairs: tuple[str, ...] = ()
    error: str = ""


class RegistryError(Exception):
    """A registry or request that cannot be built; kind names why."""

    def __init__(self, kind: str, message: str, tools: list[str] | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.tools = sorted(tools or [])


class ToolRegistry:
    def __init__(self, specs: list[ToolSpec]) -> None:
        # Names first: a duplicate makes "its schema" ambiguous
        # (0006.D6.construction.order). Each error names every tool it
        # concerns, once each (0006.D6.construction.all).
        seen: set[str] = set()
        dups: set[str] = set()
        for spec in specs:
            if spec.name in seen:
                dups.add(spec.name)
            seen.add(spec.name)
        if dups:
            raise RegistryError("duplicate_tool", "tools registered more than once: " + ", ".join(sorted(dups)), sorted(dups))
        broken: dict[str, str] = {}
        for spec in specs:
            try:
                check_schema(spec.parameters if spec.parameters is not None else {})
            except SchemaError as err:
                broken[spec.name] = str(err)
        if broken:
            why = "; ".join(f"{n!r}: {broken[n]}" for n in sorted(broken))
            raise RegistryError("invalid_schema", f"parameter schemas that do not compile: {why}", sorted(broken))
        self._specs = list(specs)
        self._by_name = {s.name: s for s in specs}

    def names(self) -> list[str]:
        return [s.name for s in self._specs]

    def lookup(self, name: str) -> ToolSpec | None:
        return self._by_name.get(name)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs)

    def validate(self, action: Action) -> str | None:
        """None when the call may run; otherwise why not, in our words."""
        spec = self.lookup(action.tool)
        if spec is None:
            return f"there is no tool named {action.tool!r} here"
        if action.arguments is None:
            # GovDoc 三: a bare name is the missing-arguments error, never
            # "empty but valid", whatever the schema allows.
            return f"{action.tool!r} needs an arguments object"
        params = dict(spec.parameters or {})
        found = problems(params, action.arguments, root=params)
        if found:
            return f"{action.tool!r} got unusable arguments: " + "; ".join(found)
        return None

    def restrict_to(self, names: list[str]) -> ToolRegistry:
        # Each unknown name once, sorted by code point, which is the byte
        # order of UTF-8 (0006.D6.restrict-unknown).
        unknown = sorted({n for n in names if n not in self._by_name})
        if unknown:
            raise RegistryError("unknown_tool", "cannot narrow to tools that are not registered: " + ", ".join(sorted(unknown)), unknown)
        keep = set(names)
        narrowed = ToolRegistry.__new__(ToolRegistry)
        narrowed._specs = [s for s in self._specs if s.name in keep]
        narrowed._by_name = {s.name: s for s in narrowed._specs}
        return narrowed

    def schema_for_model(self) -> list[dict]:
        return [{"name": s.name, "description": s.description, "parameters": s.parameters} for s in self._specs]

    def executor(self) -> RegistryExecutor:
        # 0008 decision two: every spec is checked now, all missing named.
        missing = [s.name for s in self._specs if s.handler is None]
        if missing:
            raise RegistryError("missing_handler", "these tools have no handler: " + ", ".join(sorted(missing)), missing)
        return RegistryExecutor(self)

    def same_as(self, other: ToolRegistry) -> bool:
        """Same registered specs under the same names (0006.D3.same)."""
        return set(self._by_name) == set(other._by_name) and all(self._by_name[n] is other._by_name[n] for n in self._by_name)


class ActionExecutor(Protocol):
    async def __call__(self, action: Action) -> ActionOutcome: ...


@dataclass
class Settled:
    outcome: ActionOutcome
    error_type: str = ""  # the class name of a handler's ordinary exception


class RegistryExecutor:
    """The executor a registry derives; it fills ActionOutcome by 0008's table."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    async def __call__(self, action: Action) -> ActionOutcome:
        return (await self.settle(action)).outcome

    async def settle(self, action: Action) -> Settled:
        if action.kind != "tool_call":
            return Settled(ActionOutcome(Status.NOT_EXECUTED, "only tool calls can run here, and this action is not one", True))
        why = self.registry.validate(action)
        if why is not None:
            return Settled(ActionOutcome(Status.NOT_EXECUTED, why, True))
        spec = self.registry.lookup(action.tool)
        assert spec is not None and spec.handler is not None
        try:
            text = await spec.handler(action.arguments or {})
        except asyncio.CancelledError:
            raise  # produces nothing, passes straight out
        except ToolEnvironmentError as err:
            return Settled(ActionOutcome(Status.ENV_ERROR, str(err)), error_type=type(err).__name__)
        except Exception as err:  # any other exception counts as executed
            name = type(err).__name__
            text = f"{name}: {err}" if str(err) else name  # as Python prints it
            return Settled(ActionOutcome(Status.EXECUTED, text), error_type=name)
        return Settled(ActionOutcome(Status.EXECUTED, text))
