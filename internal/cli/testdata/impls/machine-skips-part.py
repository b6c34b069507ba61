"""The Python example whose fork server builds its children's machines
with one part left out, named by the first argument: the runner must see
the part missing from outside and start the resume from --impl.

network  the child keeps its server's network and UTS namespaces
proc     the child keeps its server's /proc (bound, not a fresh one)
memory   the server maps shared memory before it forks, which every child
         it forks shares
"""
import mmap
import runpy
import sys

from polyloop_conform import machine

PART = sys.argv.pop(1)
if PART == "network":
    machine.CLONE_NEWNET = 0
    machine.CLONE_NEWUTS = 0
elif PART == "proc":
    _mount = machine.mount

    def mount(source: str, target: str, fstype: str, flags: int, data: str = "") -> None:
        if fstype == "proc":
            _mount("/proc", target, "", machine.MS_BIND | machine.MS_REC)
            return
        _mount(source, target, fstype, flags, data)

    machine.mount = mount
elif PART == "memory":
    SHARED = mmap.mmap(-1, 4096)  # MAP_SHARED: one page for every child
else:
    sys.exit(f"machine-skips-part.py: unknown part {PART!r}")
runpy.run_module("polyloop_example", run_name="__main__")
