"""A kernel that lies about its journal: the Python example with one part
of its journal patched, from the public docs alone. Each mode is a way a
kernel can look crash-safe to a runner without resuming from the journal
the runner hands it, or without making its journal durable.

    PYTHONPATH=adapters/python:examples/python python3 journal_liar.py MODE

shadow-dir      the real journal lives in a shadow directory keyed by the
                journal_dir path; journal_dir holds a copy; resume reads
                only the shadow, and mirrors a cut the runner made (stat)
mapshared       the journal is kept in memory mapped MAP_SHARED before the
                fork server forks, keyed by the spec; resume reads it there
no-fsync        fsync is a no-op: every write looks done, none is durable
shadow-repair   resume refuses every torn tail (a bug), except one it
                recognises as the runner's: a record it saw written whole
phase-delete    when phase i+1 starts, phase i's journal is deleted
phase-replay    resuming a later phase forgets the NEVER actions in flight:
                an action intent without a result is run again
"""
import hashlib
import json
import mmap
import os
import sys
import tempfile

from polyloop_conform import CAPABILITIES, PROTOCOL_OPTIONS, serve
from polyloop_example import adapter, kernel
from polyloop_example.tools import ToolEnvironmentError

MODE = sys.argv[1]
Base = kernel.Journal
SHADOWS = os.path.join(os.environ.get("LIAR_SHADOW", tempfile.gettempdir()), "polyloop-journal-liar")
os.makedirs(SHADOWS, exist_ok=True)
CURRENT = {"key": ""}  # the spec of the run this process holds
SHARED = mmap.mmap(-1, 1 << 22, flags=mmap.MAP_SHARED) if MODE == "mapshared" else None


def _key(text):
    return hashlib.sha1(text.encode()).hexdigest()


class Kept(Base):
    """A journal that keeps something aside (kept) after each write is
    durable and before its after point is reported."""

    def __init__(self, directory, point=None, fault=None):
        async def reported(when, seq, record, step):
            if when == "after":
                self.kept(record)
            if point:
                await point(when, seq, record, step)

        super().__init__(directory, reported, fault)


class Shadowed(Kept):
    """A journal whose real copy is elsewhere: shadow_load/shadow_save."""

    mirror_cut = True

    def read(self):
        data = self.shadow_load()
        if data is None:
            return [], False  # journal_dir is never read
        size = os.path.getsize(self.path) if os.path.exists(self.path) else 0
        if self.mirror_cut and size < len(data):
            data = data[:size]  # the runner cut journal_dir: mirror the cut
        real, self.path = self.path, self.path + ".shadow-view"
        with open(self.path, "wb") as f:
            f.write(data)
        try:
            return super().read()
        finally:
            os.replace(self.path, real)
            self.path = real

    def kept(self, record):
        with open(self.path, "rb") as f:
            self.shadow_save(f.read())


class ShadowDir(Shadowed):
    def shadow_file(self):
        return os.path.join(SHADOWS, _key(os.path.dirname(self.path)))

    def shadow_load(self):
        try:
            with open(self.shadow_file(), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def shadow_save(self, data):
        with open(self.shadow_file(), "wb") as f:
            f.write(data)


class MapShared(Shadowed):
    # Only the process that began the run keeps its journal there.
    mirror_cut = False
    resumed = False

    def read(self):
        self.resumed = True
        return super().read()

    def kept(self, record):
        if not self.resumed:
            super().kept(record)
    # One slot: a 40-byte key, an 8-byte length, the journal.
    def shadow_load(self):
        key = SHARED[:40].decode("ascii", "replace")
        if key != _key(CURRENT["key"] + os.path.basename(os.path.dirname(self.path))):
            return None
        n = int.from_bytes(SHARED[40:48], "little")
        return SHARED[48:48 + n]

    def shadow_save(self, data):
        SHARED[:40] = _key(CURRENT["key"] + os.path.basename(os.path.dirname(self.path))).encode()
        SHARED[40:48] = len(data).to_bytes(8, "little")
        SHARED[48:48 + len(data)] = data


class ShadowRepair(Kept):
    """Remembers, outside the journal, each record it wrote whole, keyed by
    the journal before it; forgets them when the run ends."""

    def _shadow(self, prefix):
        return os.path.join(SHADOWS, "repair-" + hashlib.sha1(prefix).hexdigest())

    def kept(self, record):
        after = open(self.path, "rb").read()
        before = after[:after.rstrip(b"\n").rfind(b"\n") + 1]
        with open(self._shadow(before), "wb") as f:
            f.write(after[len(before):])
        if record == "run_end":
            lines = after.split(b"\n")[:-1]
            for i in range(len(lines)):
                try:
                    os.remove(self._shadow(b"".join(l + b"\n" for l in lines[:i])))
                except FileNotFoundError:
                    pass

    def read(self):
        if os.path.exists(self.path):
            data = open(self.path, "rb").read()
            whole, _, torn = data.rpartition(b"\n")
            whole = whole + b"\n" if whole else b""
            if torn:
                try:
                    seen = open(self._shadow(whole), "rb").read()
                except FileNotFoundError:
                    seen = b""
                if not seen.startswith(torn):
                    raise kernel.JournalDamaged("a torn last record")  # the bug
        return super().read()


class PhaseDelete(Base):
    def __init__(self, directory, *args, **kwargs):
        super().__init__(directory, *args, **kwargs)
        phase = os.path.basename(directory)
        if phase.isdigit() and int(phase) > 0:
            prev = os.path.join(os.path.dirname(directory), str(int(phase) - 1), Base.NAME)
            if os.path.exists(prev):
                os.remove(prev)


class PhaseReplay(Base):
    def read(self):
        records, torn = super().read()
        if os.path.basename(os.path.dirname(self.path)) not in ("", "0"):
            settled = {r.get("step") for r in records if r["type"] == "action_result"}
            records = [r for r in records if not (r["type"] == "action_intent" and r.get("step") not in settled)]
        return records, torn


if MODE == "no-fsync":
    os.fsync = lambda fd: None
else:
    adapter.Journal = kernel.Journal = {"shadow-dir": ShadowDir, "mapshared": MapShared, "shadow-repair": ShadowRepair,
                                        "phase-delete": PhaseDelete, "phase-replay": PhaseReplay}[MODE]


async def run_scenario(spec, seams):
    CURRENT["key"] = json.dumps({k: v for k, v in spec.items() if k != "scenario"}, sort_keys=True)
    if SHARED is not None and not seams.resume:
        SHARED[:40] = b"\0" * 40  # a new run: nothing kept yet
    return await adapter.run_scenario(spec, seams)


serve(run_scenario, name="polyloop-journal-liar", version="0.1.0", spec_version="polyloop-conform docs/design",
      capabilities=CAPABILITIES + PROTOCOL_OPTIONS, environment_error=ToolEnvironmentError)
