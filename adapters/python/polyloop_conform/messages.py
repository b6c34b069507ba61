"""The protocol's messages as typed dictionaries, one per message shape.

docs/protocol.schema.json in the polyloop-conform repository is the
published contract; tests/test_messages.py holds each TypedDict here to
the schema's shape of the same name (the same keys, the same required
ones), so a type checker sees what the runner validates.
"""


from typing import Any, Literal, NotRequired, TypedDict, Union

BlockType = Literal["run_fragment", "injection", "goal_fragment", "model_output", "observation"]
RecordType = Literal["run_started", "model_output", "action_intent", "action_result", "run_end"]


class ChatMessage(TypedDict):
    """One message of a model input (schema: message)."""
    role: Literal["user", "assistant", "system"]
    content: str


class NamedError(TypedDict):
    """An error a runner's answer asks you to raise: its type name and text."""
    type: str
    message: str


class Hello(TypedDict):
    """Both directions (schema: hello)."""
    type: Literal["hello"]
    protocol: int
    suite: NotRequired[str]
    suite_version: NotRequired[str]
    name: NotRequired[str]
    version: NotRequired[str]
    spec_version: NotRequired[str]
    capabilities: NotRequired[list[str]]


class Definition(TypedDict):
    run_fragment: NotRequired[str]
    observation_template: NotRequired[str]


class JournalError(TypedDict):
    record: RecordType
    step: NotRequired[int]
    errno: Literal["ENOSPC", "EACCES", "EIO"]


class Faults(TypedDict):
    sink: NotRequired[Literal["error", "panic"]]
    journal_error: NotRequired[JournalError | None]


class Tool(TypedDict):
    """One ToolSpec (schema: tool)."""
    name: str
    description: NotRequired[str]
    parameters: NotRequired[dict[str, Any]]
    replay: NotRequired[Literal["SAFE", "NEVER", ""]]
    completes_run: NotRequired[bool]
    has_handler: bool


class Budget(TypedDict):
    max_effective_steps: int
    max_total_steps: int


class Synthetic(TypedDict):
    not_executed: NotRequired[str]
    env_error: NotRequired[str]


class Injection(TypedDict):
    channel: str
    text: str


class Request(TypedDict):
    """One run request, or one phase (schema: request)."""
    name: NotRequired[str]
    goal_fragment: NotRequired[str]
    budget: Budget
    visible_tools: list[str] | None
    executor: NotRequired[Literal["registry", "full_registry", "project", ""]]
    synthetic: NotRequired[Synthetic]
    injections: NotRequired[list[Injection]]
    language: NotRequired[Literal["json", "code", ""]]
    measure_unknown: NotRequired[list[BlockType]]


class Spec(TypedDict):
    """What to build for one run (schema: spec)."""
    scenario: str
    tools: list[Tool]
    definition: Definition
    requests: list[Request]
    phased: NotRequired[bool]
    faults: NotRequired[Faults]


class Run(TypedDict):
    type: Literal["run"]
    id: str
    spec: Spec
    journal_dir: NotRequired[str]
    report_journal_points: NotRequired[bool]
    wire_sink: NotRequired[bool]
    wire_measure: NotRequired[bool]


class Resume(TypedDict):
    type: Literal["resume"]
    id: str
    spec: Spec
    journal_dir: str
    phase: NotRequired[int]
    tear_tail: NotRequired[bool]
    damage: NotRequired[Literal["last_checksum", "middle"]]
    wire_sink: NotRequired[bool]
    wire_measure: NotRequired[bool]
    report_journal_points: NotRequired[bool]


class ModelCall(TypedDict):
    type: Literal["model_call"]
    call: int
    phase: int
    input: list[ChatMessage]


class ModelResult(TypedDict):
    type: Literal["model_result"]
    call: int
    output: NotRequired[str]
    error: NotRequired[NamedError]


class HandlerCall(TypedDict):
    type: Literal["handler_call"]
    call: int
    phase: int
    tool: str
    arguments: NotRequired[dict[str, Any]]


class HandlerResult(TypedDict):
    type: Literal["handler_result"]
    call: int
    output: NotRequired[str]
    error: NotRequired[NamedError]
    env_error: NotRequired[str]


class Action(TypedDict):
    kind: Literal["tool_call", "code", "none"]
    tool: NotRequired[str]
    arguments: NotRequired[dict[str, Any]]
    code: NotRequired[str]


class ExecuteCall(TypedDict):
    type: Literal["execute_call"]
    call: int
    phase: int
    action: Action


class Outcome(TypedDict):
    """The five ActionOutcome fields; env_reported_completion None means
    the environment gives no completion signal."""
    status: Literal["EXECUTED", "NOT_EXECUTED", "ENV_ERROR"]
    observation: str
    observation_is_synthetic: bool
    env_reported_completion: bool | None
    observation_truncated_chars: int


class ExecuteResult(TypedDict):
    type: Literal["execute_result"]
    call: int
    outcome: Outcome


class Point(TypedDict):
    when: Literal["before", "after"]
    seq: int
    record: RecordType
    step: NotRequired[int]


class JournalPoint(TypedDict):
    type: Literal["journal_point"]
    call: int
    phase: NotRequired[int]
    point: Point


class AnswerOnly(TypedDict):
    """continue (runner) and released (you) (schema: answer_only)."""
    type: Literal["continue", "released"]
    call: int


class Cancel(TypedDict):
    type: Literal["cancel"]
    call: int
    deadline: NotRequired[bool]


class Event(TypedDict):
    type: Literal["event"]
    call: int
    phase: int
    event: dict[str, Any]


class EventResult(TypedDict):
    type: Literal["event_result"]
    call: int
    error: NotRequired[NamedError]
    panic: NotRequired[str]


class MeasureCall(TypedDict):
    type: Literal["measure_call"]
    call: int
    phase: int
    block: BlockType
    text: str


class MeasureResult(TypedDict):
    type: Literal["measure_result"]
    call: int
    size: NotRequired[int]
    error: NotRequired[NamedError]


class Result(TypedDict):
    type: Literal["result"]
    id: str
    trajectory: dict[str, Any]


class Error(TypedDict):
    type: Literal["error"]
    id: NotRequired[str]
    message: str


class MachineRequest(TypedDict):
    """A fork's machine: the journal directory bound through, the
    directories in ``mask`` hidden behind an empty tmpfs first."""
    journal_dir: str
    mask: NotRequired[list[str]]


class Fork(TypedDict):
    """Runner, to a fork server: fork a child on these named pipes (on a
    new machine of its own when ``machine`` is given)."""
    type: Literal["fork"]
    stdin: str
    stdout: str
    stderr: str
    machine: NotRequired[MachineRequest]


class Forked(TypedDict):
    """The fork server: the child's pid (and process group)."""
    type: Literal["forked"]
    pid: int


#: A call you send that the runner answers.
Call = Union[ModelCall, HandlerCall, ExecuteCall, JournalPoint, Event, MeasureCall]
#: An answer from the runner to one of your calls.
Answer = Union[ModelResult, HandlerResult, ExecuteResult, AnswerOnly, Cancel, EventResult, MeasureResult]

#: Each TypedDict and the schema shape it stands for, by JSON pointer
#: into docs/protocol.schema.json (tests/test_messages.py).
SCHEMA_SHAPES: dict[str, type] = {
    "/$defs/message": ChatMessage,
    "/$defs/hello": Hello,
    "/$defs/spec": Spec,
    "/$defs/spec/properties/definition": Definition,
    "/$defs/spec/properties/faults": Faults,
    "/$defs/spec/properties/faults/properties/journal_error": JournalError,
    "/$defs/tool": Tool,
    "/$defs/request": Request,
    "/$defs/request/properties/budget": Budget,
    "/$defs/request/properties/synthetic": Synthetic,
    "/$defs/request/properties/injections/items": Injection,
    "/$defs/run": Run,
    "/$defs/resume": Resume,
    "/$defs/model_call": ModelCall,
    "/$defs/model_result": ModelResult,
    "/$defs/model_result/properties/error": NamedError,
    "/$defs/handler_call": HandlerCall,
    "/$defs/handler_result": HandlerResult,
    "/$defs/execute_call": ExecuteCall,
    "/$defs/execute_call/properties/action": Action,
    "/$defs/execute_result": ExecuteResult,
    "/$defs/execute_result/properties/outcome": Outcome,
    "/$defs/journal_point": JournalPoint,
    "/$defs/journal_point/properties/point": Point,
    "/$defs/answer_only": AnswerOnly,
    "/$defs/cancel": Cancel,
    "/$defs/event": Event,
    "/$defs/event_result": EventResult,
    "/$defs/measure_call": MeasureCall,
    "/$defs/measure_result": MeasureResult,
    "/$defs/result": Result,
    "/$defs/error": Error,
    "/$defs/fork": Fork,
    "/$defs/fork/properties/machine": MachineRequest,
    "/$defs/forked": Forked,
}
