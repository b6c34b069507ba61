"""Kernels that keep their journal durable in ways the reference does not
(honest), and two that only look durable (lies): the Python example with
the way a record reaches the disk replaced, written from the public docs.

    PYTHONPATH=adapters/python:examples/python python3 variants.py MODE

Honest:
o-dsync         the journal is opened O_DSYNC: every write is durable when
                it returns; no fsync of the file
o-sync          the same with O_SYNC
writev          one writev per record (checksum, body, newline), then fsync
rename          a new journal is made durable the textbook way: the first
                record in a temporary file, fsync, rename, directory fsync;
                later records appended and fsynced
Lies:
writev-nosync   one writev per record, never synced
phase-nosync    phase 0's journal is synced; a later phase's never is
"""
import os
import sys
import zlib

from polyloop_conform import CAPABILITIES, PROTOCOL_OPTIONS, dumps, serve
from polyloop_example import adapter, kernel
from polyloop_example.tools import ToolEnvironmentError

MODE = sys.argv[1]


def sync_dir(path):
    fd = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


class Variant(kernel.Journal):
    """The example's journal with persist, the one part that differs."""

    async def write(self, record):
        seq = self.count + 1
        step = record.get("step", 0)
        if self.point:
            await self.point("before", seq, record["type"], step)
        err = self.fault(record["type"], step) if self.fault else None
        if err is not None:
            raise kernel.JournalWriteError(record["type"], seq, err)
        body = dumps(record).encode("utf-8")
        self.persist(b"%08x " % zlib.crc32(body), body, not os.path.exists(self.path))
        self.count = seq
        if self.point:
            await self.point("after", seq, record["type"], step)

    def later_phase(self):
        phase = os.path.basename(os.path.dirname(self.path))
        return phase.isdigit() and int(phase) > 0

    def persist(self, crc, body, new):
        if MODE in ("o-dsync", "o-sync"):
            flag = os.O_DSYNC if MODE == "o-dsync" else os.O_SYNC
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | flag, 0o644)
            try:
                write_all(fd, crc + body + b"\n")
            finally:
                os.close(fd)
        elif MODE in ("writev", "writev-nosync"):
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                if os.writev(fd, [crc, body, b"\n"]) != len(crc) + len(body) + 1:
                    raise OSError("a short writev")
                if MODE == "writev":
                    os.fsync(fd)
            finally:
                os.close(fd)
        elif MODE == "rename" and new:
            tmp = self.path + ".tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                write_all(fd, crc + body + b"\n")
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(tmp, self.path)
        else:  # rename's later records, phase-nosync
            with open(self.path, "ab") as f:
                f.write(crc + body + b"\n")
                f.flush()
                if not (MODE == "phase-nosync" and self.later_phase()):
                    os.fsync(f.fileno())
            if MODE == "phase-nosync" and self.later_phase():
                return
        if new:
            # A new file's name is durable once its directory is synced.
            sync_dir(self.path)


adapter.Journal = kernel.Journal = Variant
serve(adapter.run_scenario, name="polyloop-durable-variant", version="0.1.0", spec_version="polyloop-conform docs/design",
      capabilities=CAPABILITIES + PROTOCOL_OPTIONS, environment_error=ToolEnvironmentError)
