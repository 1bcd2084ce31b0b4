"""What the test scripts share: a free loopback port, psql, a scratch database per run, a
database URL with driver options,
assertions that set the exit status, and the conformance app started on a port of its own.
Python standard library only (psql for PostgreSQL)."""
import os
import socket
import subprocess
import threading
import time
import urllib.parse
import uuid

FAILURES = []


def check(ok, message):
    """One assertion: a failure is printed at once, and the run goes on with exit status 1."""
    if not ok:
        FAILURES.append(message)
        print("    FAIL: " + message, flush=True)
    return ok


_GIVEN_PORTS = set()
_PORTS_LOCK = threading.Lock()


def free_port():
    """A loopback port nothing listens on, never the same one twice in this process (apps
    started from two threads at once must not be handed one port)."""
    with _PORTS_LOCK:
        while True:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            if port not in _GIVEN_PORTS:
                _GIVEN_PORTS.add(port)
                return port


def psql(url, sql):
    out = subprocess.run(["psql", url, "-v", "ON_ERROR_STOP=1", "-tAq", "-c", sql],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


class Scratch:
    """A database of one run's own: with `pg` (a PostgreSQL admin URL), a new database on that
    server, `drop()`ped at the end; without, the SQLite file `<stem>.db` in `workdir`.
    `url` is the database URL for the app; `path` the SQLite file (None on PostgreSQL)."""

    def __init__(self, pg, workdir, stem):
        self.pg = pg
        self.name = None
        self.path = None
        if pg:
            self.name = "plover_%s_%s" % (stem, uuid.uuid4().hex[:10])
            parts = urllib.parse.urlsplit(pg)
            self.url = urllib.parse.urlunsplit(parts._replace(path="/" + self.name))
            psql(pg, 'CREATE DATABASE "%s"' % self.name)
        else:
            self.path = os.path.join(workdir, stem + ".db")
            self.url = "sqlite://" + self.path

    def drop(self):
        """Drops the PostgreSQL database (a SQLite file goes with its folder)."""
        if self.name:
            subprocess.run(["psql", self.pg, "-qc",
                            'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % self.name],
                           capture_output=True)


def with_options(url, **options):
    """`url` with these driver options added to its query string."""
    if not options:
        return url
    return url + ("&" if "?" in url else "?") + urllib.parse.urlencode(options)


class App:
    """The conformance app (or any binary taking --bind and --database) on a free loopback
    port, answering TCP connections; its stdout and stderr go to `log_path`. A port that another
    process takes between `free_port()` and the app's bind is retried on a new port; any other
    start failure raises SystemExit with the end of the log."""

    def __init__(self, binary, db_url, log_path, *extra):
        self.log_path = log_path
        self.log = open(log_path, "ab")
        for attempt in range(3):
            self.port = free_port()
            self.base = "http://127.0.0.1:%d" % self.port
            self.proc = subprocess.Popen(
                [binary, "--bind", "127.0.0.1:%d" % self.port, "--database", db_url]
                + list(extra),
                stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            self.pid = self.proc.pid
            if self._answers(deadline=time.monotonic() + 60):
                return
            if self.proc.poll() is None:
                self.kill()
                raise SystemExit("the app did not answer within 60 s; log %s:\n%s"
                                 % (log_path, self.log_tail()))
            if attempt < 2 and self.log_lines("Address already in use"):
                continue
            self.log.close()
            raise SystemExit("the app exited with %s; log %s:\n%s"
                             % (self.proc.returncode, log_path, self.log_tail()))

    def _answers(self, deadline):
        """Whether the app accepts a TCP connection before `deadline` (False once it exits)."""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                time.sleep(0.05)
        return False

    def log_tail(self, lines=20):
        """The last `lines` lines of the log, for failure messages (CI keeps no temp files)."""
        with open(self.log_path, "rb") as f:
            return b"".join(f.readlines()[-lines:]).decode("utf-8", "replace")

    def alive(self):
        return self.proc.poll() is None

    def log_lines(self, needle):
        """Lines of the log holding `needle`."""
        with open(self.log_path, "rb") as f:
            return sum(needle.encode() in line for line in f)

    def kill(self):
        """SIGKILL: the crash a power cut or the OOM killer would be."""
        self.proc.kill()
        self.proc.wait()
        self.log.close()

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s."""
        stop_process(self.proc)
        self.log.close()


def stop_process(proc):
    """Stops a child process: SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def read_response(sock, buf=b""):
    """One HTTP/1.1 response read off a keep-alive socket by its Content-Length, `buf` being
    what was received after the previous one: (head without its blank line, body, the bytes
    received after the body). ConnectionError if the server closes the connection first."""
    def more(data):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        return data + chunk

    while b"\r\n\r\n" not in buf:
        buf = more(buf)
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest = more(rest)
    return head, rest[:length], rest[length:]


def proc_status(pid, key):
    """An integer field of /proc/PID/status (`VmRSS` in KiB, `Threads`), 0 if absent."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0



class EventStream:
    """One Server-Sent Events request on a raw socket (a change feed): `head()` reads the
    status and headers, `next_event()` the events one at a time, each a dict of its fields
    (`id`, `event`, `data`) and `at`, the monotonic time it arrived. `source` is the loopback
    address to connect from; `rcvbuf` a small receive buffer for a subscriber that never
    reads (set before the connection, so that the window it announces stays small)."""

    def __init__(self, port, path, source=None, headers=None, rcvbuf=None, timeout=10):
        self.sock = socket.socket()
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        if source:
            self.sock.bind((source, 0))
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        lines = ["GET %s HTTP/1.1" % path, "Host: 127.0.0.1:%d" % port,
                 "Accept: text/event-stream"]
        lines += ["%s: %s" % kv for kv in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        self.raw = b""  # received, not yet de-chunked
        self.text = b""  # de-chunked, not yet split into events
        self.chunked = False
        self.ended = False  # the body ended or the connection closed
        self.status, self.headers, self.body = None, {}, b""

    def _recv(self, deadline):
        """More bytes into `raw`; False at the deadline or when the server closed."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            return False
        except OSError:
            data = b""
        if not data:
            self.ended = True
            return False
        self.raw += data
        return True

    def head(self, timeout=10):
        """(status, headers with lower-case names); a response with a Content-Length is read
        whole into `body`. Status None when nothing arrived in time."""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.raw:
            if not self._recv(deadline):
                return None, {}
        head, _, self.raw = self.raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1])
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self.chunked = self.headers.get("transfer-encoding", "").lower() == "chunked"
        if not self.chunked:
            length = int(self.headers.get("content-length", "0"))
            while len(self.raw) < length and self._recv(deadline):
                pass
            self.body, self.raw = self.raw[:length], self.raw[length:]
            self.ended = True
        return self.status, self.headers

    def _dechunk(self):
        while self.chunked and not self.ended:
            line_end = self.raw.find(b"\r\n")
            if line_end < 0:
                return
            size = int(self.raw[:line_end].split(b";")[0], 16)
            if size == 0:
                self.ended = True
                return
            if len(self.raw) < line_end + 4 + size:
                return
            self.text += self.raw[line_end + 2:line_end + 2 + size]
            self.raw = self.raw[line_end + 4 + size:]

    def next_event(self, timeout=10):
        """The next event (comments skipped), or None at the timeout or the stream's end."""
        deadline = time.monotonic() + timeout
        while True:
            self._dechunk()
            block, sep, rest = self.text.partition(b"\n\n")
            if sep:
                self.text = rest
                event = {"at": time.monotonic()}
                for line in block.decode("utf-8").split("\n"):
                    name, _, value = line.partition(":")
                    if name:
                        event[name] = value[1:] if value.startswith(" ") else value
                if len(event) > 1:
                    return event
                continue
            if self.ended or not self._recv(deadline):
                return None

    def close(self):
        self.sock.close()
