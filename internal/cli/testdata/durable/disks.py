"""Journals kept where the runner cannot guess a record's file (honest), and
durability lies only a recorder below the process sees (issue 51): the
Python example with its journal replaced, written from the public docs.

    PYTHONPATH=adapters/python:examples/python python3 -S disks.py MODE

Honest:
sqlite-rollback  records in SQLite (stdlib sqlite3), rollback journal,
                 synchronous=EXTRA: COMMIT returns once durable
sqlite-wal       the same in WAL mode, synchronous=FULL
marker           a scratch marker file touched before each append (never
                 read on resume); each record appended and fsynced
syncfs           each record appended, then syncfs on the journal's own
                 file (no fsync, no directory sync: syncfs covers names)
sync             each record appended, then sync(2) (no fsync at all)
Lies:
traced-only      fsyncs only while a tracer is attached (TracerPid)
resumed-nosync   a process that resumed a journal never syncs
points-only      syncs only when the runner asks for journal points
path-looks       syncs only when journal_dir looks like the runner's
syncfs-shm       syncfs on a file of /dev/shm, never on the journal's fs
mmap-nomsync     each record stored through a shared mapping, no msync
sendfile-nosync  each record moved in with sendfile, never synced
"""
import ctypes
import json
import mmap
import os
import sqlite3
import sys
import zlib

from polyloop_conform import CAPABILITIES, PROTOCOL_OPTIONS, dumps, serve
from polyloop_conform import protocol
from polyloop_example import adapter, kernel
from polyloop_example.tools import ToolEnvironmentError

MODE = sys.argv[1]
RESUMED = False
ASKED = False  # the message now served asked for journal points

_seams_init = protocol.Seams.__init__


def seams_init(self, conn, message, environment_error):
    global ASKED
    _seams_init(self, conn, message, environment_error)
    ASKED = self.report_journal_points


protocol.Seams.__init__ = seams_init


def traced():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("TracerPid:"):
                return line.split()[1] != "0"
    return False


def sync_dir(path):
    fd = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Lines(kernel.Journal):
    """The example's line journal with the way a record reaches the disk
    replaced, and the lies' conditions."""

    def read(self):
        global RESUMED
        records, torn = super().read()
        RESUMED = RESUMED or bool(records) or torn
        return records, torn

    def honest_sync(self):
        if MODE == "traced-only":
            return traced()
        if MODE == "resumed-nosync":
            return not RESUMED
        if MODE == "points-only":
            return ASKED
        if MODE == "path-looks":
            tmp = os.environ.get("TMPDIR", "/tmp")
            return self.path.startswith(("/tmp/", tmp)) or "polyloop" in self.path
        return MODE == "marker"

    async def write(self, record):
        seq = self.count + 1
        step = record.get("step", 0)
        if self.point:
            await self.point("before", seq, record["type"], step)
        body = dumps(record).encode("utf-8")
        line = b"%08x %s\n" % (zlib.crc32(body), body)
        new = not os.path.exists(self.path)
        self.persist(line)
        if new and MODE not in ("mmap-nomsync", "sendfile-nosync", "syncfs", "sync"):
            sync_dir(self.path)
        self.count = seq
        if self.point:
            await self.point("after", seq, record["type"], step)

    def persist(self, line):
        if MODE == "marker":
            marker = os.path.join(os.path.dirname(self.path), ".writing")
            os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
        if MODE == "mmap-nomsync":
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                start = os.fstat(fd).st_size
                os.ftruncate(fd, start + len(line))
                page = start - start % mmap.ALLOCATIONGRANULARITY
                m = mmap.mmap(fd, start + len(line) - page, offset=page)
                m[start - page:] = line
                m.close()
            finally:
                os.close(fd)
            return
        if MODE == "sendfile-nosync":
            src = os.open("/dev/shm", os.O_RDWR | os.O_TMPFILE, 0o600)
            # sendfile refuses an O_APPEND target: write at the end.
            dst = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                os.write(src, line)
                os.lseek(dst, 0, os.SEEK_END)
                os.sendfile(dst, src, 0, len(line))
            finally:
                os.close(src)
                os.close(dst)
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line)
            if MODE == "syncfs":
                if ctypes.CDLL(None, use_errno=True).syncfs(fd) != 0:
                    raise OSError(ctypes.get_errno(), "syncfs")
            elif MODE == "sync":
                os.sync()
            elif MODE == "syncfs-shm":
                shm = os.open("/dev/shm", os.O_RDONLY)
                ctypes.CDLL(None, use_errno=True).syncfs(shm)
                os.close(shm)
            elif self.honest_sync():
                os.fsync(fd)
        finally:
            os.close(fd)


class Database(kernel.Journal):
    """Records as rows of SQLite; COMMIT is the durable write."""

    NAME = "journal.db"

    def connect(self):
        con = sqlite3.connect(self.path, isolation_level=None)
        if MODE == "sqlite-wal":
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=FULL")
        else:
            con.execute("PRAGMA journal_mode=DELETE")
            con.execute("PRAGMA synchronous=EXTRA")
        con.execute("CREATE TABLE IF NOT EXISTS records (seq INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        return con

    def read(self):
        if not os.path.exists(self.path):
            return [], False
        con = self.connect()
        try:
            rows = con.execute("SELECT body FROM records ORDER BY seq").fetchall()
        finally:
            con.close()
        records = [json.loads(body, parse_float=kernel.Number) for (body,) in rows]
        self.count = len(records)
        return records, False

    async def write(self, record):
        seq = self.count + 1
        step = record.get("step", 0)
        if self.point:
            await self.point("before", seq, record["type"], step)
        con = self.connect()
        try:
            con.execute("BEGIN")
            con.execute("INSERT INTO records (seq, body) VALUES (?, ?)", (seq, dumps(record)))
            con.execute("COMMIT")
        finally:
            con.close()
        self.count = seq
        if self.point:
            await self.point("after", seq, record["type"], step)


adapter.Journal = kernel.Journal = Database if MODE.startswith("sqlite") else Lines
serve(adapter.run_scenario, name="polyloop-durable-disk", version="0.1.0", spec_version="polyloop-conform docs/design",
      capabilities=[c for c in CAPABILITIES + PROTOCOL_OPTIONS if c != "journal-lines" or not (MODE.startswith("sqlite") or MODE == "marker")],
      environment_error=ToolEnvironmentError)
