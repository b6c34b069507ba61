"""Adapter kit for testing a PolyLoop implementation written in Python.

polyloop-conform runs its scenarios against any implementation over a
stdio protocol (docs/protocol.md). This package speaks that protocol, so a
team writes one coroutine: given a scenario's spec and the kit's seams
(the model, the tool handlers, the project executor, journal points), build
its kernel, run it and return a ``polyloop.trajectory/v1`` trajectory.

    from polyloop_conform import serve

    async def run_scenario(spec, seams):
        ...                       # build the registry and requests from spec
        return builder.build()    # a dict, see polyloop_conform.trajectory

    serve(run_scenario, name="my-polyloop", version="0.4.0",
          capabilities=["json-actions", "events"])

Only Python's standard library is used (3.11+).
"""

from .numbers import Number, dumps
from .protocol import (
    CAPABILITIES,
    PROTOCOL_OPTIONS,
    HandlerFailure,
    MeasureFailure,
    ModelCallError,
    ProtocolError,
    Seams,
    SinkFailure,
    serve,
    serve_async,
)
from .trajectory import FORMAT, TrajectoryBuilder, damage_record, event_record, tear_last_record

__all__ = [
    "CAPABILITIES",
    "FORMAT",
    "HandlerFailure",
    "MeasureFailure",
    "ModelCallError",
    "Number",
    "PROTOCOL_OPTIONS",
    "ProtocolError",
    "Seams",
    "SinkFailure",
    "TrajectoryBuilder",
    "serve",
    "serve_async",
    "damage_record",
    "dumps",
    "event_record",
    "tear_last_record",
]
