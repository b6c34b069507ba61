"""python3 -m polyloop_example: the example kernel over the stdio protocol."""

from polyloop_conform import CAPABILITIES, PROTOCOL_OPTIONS, serve

from .adapter import run_scenario
from .tools import ToolEnvironmentError

serve(run_scenario, name="polyloop-example", version="0.1.0", spec_version="polyloop-conform docs/design",
      capabilities=CAPABILITIES + PROTOCOL_OPTIONS, environment_error=ToolEnvironmentError)
