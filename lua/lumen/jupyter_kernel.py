"""lumen_kernel.py -- Lumen's Jupyter kernel: a wrapper kernel on ipykernel (Debian's
python3-ipykernel) that runs `lumen --kernel IN_FD OUT_FD` and relays.

ipykernel owns the wire protocol (ZeroMQ sockets, HMAC-signed messages, heartbeat, control
channel, kernel_info); this file turns Jupyter's requests into framed requests on a pipe to Lumen
("KIND LENGTH\\n" and the body) and Lumen's framed JSON replies (src/app/kernel.c,
lua/lumen/kernel.lua) into Jupyter messages. Lumen's stdout and stderr are pipes relayed as
stream messages as they come; before a reply is handled the pipes are drained, so text printed
before a result shows before it.

Interrupt: the notebook's stop button sends SIGINT to this process (interrupt_mode "signal");
ipykernel turns it into KeyboardInterrupt while a request is handled, and it is passed on to
Lumen (in its own session, so it gets exactly one), whose Ctrl-C stops Lua and C work alike.
Lumen dying (killed, crashed) ends this process too, so the client sees the kernel die and can
restart it. A cell's printed output is capped (LUMEN_KERNEL_OUTPUT_CAP bytes, 1 MiB by default;
the rest is dropped and the cell says how much).

Installed by `lumen --install-jupyter-kernel`, which copies it beside kernel.json.
"""
import base64
import errno
import json
import os
import select
import signal
import subprocess
import sys
import time

from ipykernel.kernelbase import Kernel

LUMEN = None  # set from --lumen before the app starts
CAP = int(os.environ.get("LUMEN_KERNEL_OUTPUT_CAP", str(1 << 20)))


def _cp_to_byte(code, cursor):
    """Jupyter counts the cursor in code points; Lumen in UTF-8 bytes."""
    return len(code[:cursor].encode("utf-8"))


def _byte_to_cp(code, pos):
    return len(code.encode("utf-8")[:pos].decode("utf-8", errors="ignore"))


class LumenKernel(Kernel):
    implementation = "lumen"
    implementation_version = "0.1"
    language = "lua"
    language_version = "5.4"
    language_info = {
        "name": "lua",
        "version": "5.4",
        "mimetype": "text/x-lua",
        "file_extension": ".lua",
        "codemirror_mode": "lua",
        "pygments_lexer": "lua",
    }
    banner = "Lumen (Lua 5.4): tensors, autograd, kernels and scenes"
    help_links = []

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.silent = False
        self.out_bytes = self.dropped = 0
        self.interrupted = False
        self._start()

    # ------------------------------------------------------------ the Lumen process

    def _start(self):
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        env = dict(os.environ)
        self.proc = subprocess.Popen(
            [LUMEN, "--kernel", str(req_r), str(rep_w)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            pass_fds=(req_r, rep_w), start_new_session=True, env=env)
        os.close(req_r)
        os.close(rep_w)
        self.req = req_w
        self.rep = rep_r
        self.rep_buf = b""
        self.streams = {self.proc.stdout.fileno(): "stdout", self.proc.stderr.fileno(): "stderr"}
        for fd in self.streams:
            os.set_blocking(fd, False)
        os.set_blocking(self.rep, False)
        self.partial = {fd: b"" for fd in self.streams}

    def _died(self):
        """Lumen is gone: say so and end this kernel (the client then sees it die)."""
        code = self.proc.poll()
        if code is None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = "?"
        why = ("killed by signal %d" % -code) if isinstance(code, int) and code < 0 else "exit status %s" % code
        sys.stderr.write("lumen kernel: the Lumen process ended (%s)\n" % why)
        sys.stderr.flush()
        os._exit(1)

    def _request(self, kind, body):
        data = body.encode("utf-8")
        head = ("%s %d\n" % (kind, len(data))).encode()
        try:
            os.write(self.req, head)
            view = memoryview(data)
            while view:
                n = os.write(self.req, view)
                view = view[n:]
        except BrokenPipeError:
            self._died()

    def _emit_stream(self, fd, chunk, final=False):
        name = self.streams[fd]
        data = self.partial[fd] + chunk
        # whole UTF-8 characters only: keep an incomplete tail for the next read
        cut = len(data)
        if not final:
            for back in range(1, min(4, len(data)) + 1):
                b = data[-back]
                if b & 0xC0 == 0x80:
                    continue
                need = 1 if b < 0x80 else 2 if b >> 5 == 6 else 3 if b >> 4 == 14 else 4
                if need > back:
                    cut = len(data) - back
                break
        self.partial[fd] = data[cut:]
        text = data[:cut].decode("utf-8", errors="replace")
        if not text:
            return
        if self.silent:
            return
        room = CAP - self.out_bytes
        if room <= 0:
            self.dropped += len(text.encode("utf-8"))
            return
        enc = text.encode("utf-8")
        if len(enc) > room:
            self.dropped += len(enc) - room
            text = enc[:room].decode("utf-8", errors="ignore")
            enc = text.encode("utf-8")
        self.out_bytes += len(enc)
        self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

    def _drain(self):
        for fd in list(self.streams):
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    break
                except OSError as e:
                    if e.errno == errno.EAGAIN:
                        break
                    raise
                if not chunk:
                    break
                self._emit_stream(fd, chunk)

    def _next_reply(self):
        """Relays streams until Lumen's next reply (a dict); passes an interrupt on."""
        while True:
            nl = self.rep_buf.find(b"\n")
            if nl >= 0:
                n = int(self.rep_buf[:nl])
                if len(self.rep_buf) >= nl + 1 + n:
                    payload = self.rep_buf[nl + 1:nl + 1 + n]
                    self.rep_buf = self.rep_buf[nl + 1 + n:]
                    self._drain()  # what was printed before this reply goes first
                    return json.loads(payload.decode("utf-8"))
            try:
                fds = [self.rep] + list(self.streams)
                ready, _, _ = select.select(fds, [], [], 1.0)
                for fd in ready:
                    if fd == self.rep:
                        chunk = os.read(self.rep, 1 << 16)
                        if not chunk:
                            self._drain()
                            self._died()
                        self.rep_buf += chunk
                    else:
                        try:
                            chunk = os.read(fd, 65536)
                        except BlockingIOError:
                            continue
                        if chunk:
                            self._emit_stream(fd, chunk)
                if not ready and self.proc.poll() is not None:
                    self._drain()
                    self._died()
            except KeyboardInterrupt:
                self.interrupted = True
                try:
                    os.kill(self.proc.pid, signal.SIGINT)
                except ProcessLookupError:
                    self._died()

    # ------------------------------------------------------------ Jupyter's requests

    def _display(self, msg):
        data = {"text/plain": msg.get("text", "")}
        path = msg.get("png_file")
        if path:
            try:
                with open(path, "rb") as f:
                    data["image/png"] = base64.b64encode(f.read()).decode("ascii")
            finally:
                try:
                    os.remove(path)
                except OSError:
                    pass
        content = {"data": data, "metadata": {}, "transient": {"display_id": msg["display_id"]}}
        kind = "update_display_data" if msg.get("update") else "display_data"
        if not self.silent:
            self.send_response(self.iopub_socket, kind, content)

    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):
        self.silent = silent
        self.out_bytes = 0
        self.dropped = 0
        self.interrupted = False
        self._request("execute", "%d %d\n%s" % (self.execution_count, 1 if silent else 0, code))
        error = None
        while True:
            msg = self._next_reply()
            t = msg.get("type")
            if t == "result":
                if not silent:
                    self.send_response(self.iopub_socket, "execute_result",
                                       {"execution_count": self.execution_count, "data": msg["data"], "metadata": {}})
            elif t == "display":
                self._display(msg)
            elif t == "error":
                error = msg
                if not silent:
                    self.send_response(self.iopub_socket, "error", {
                        "ename": msg["ename"], "evalue": msg["evalue"], "traceback": msg["traceback"]})
            elif t == "done":
                break
        for fd in self.streams:  # an incomplete character at the very end
            if self.partial[fd]:
                self._emit_stream(fd, b"", final=True)
        if self.dropped and not silent:
            self.send_response(self.iopub_socket, "stream", {
                "name": "stderr",
                "text": "\n[lumen: this cell's output was capped at %d bytes; %d more bytes were not shown "
                        "(LUMEN_KERNEL_OUTPUT_CAP sets the cap)]\n" % (CAP, self.dropped)})
        if error is not None:
            return {"status": "error", "execution_count": self.execution_count, "ename": error["ename"],
                    "evalue": error["evalue"], "traceback": error["traceback"]}
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def _ask(self, kind, code, cursor):
        self.silent = True
        self.out_bytes = self.dropped = 0
        self._request(kind, "%d\n%s" % (cursor, code))
        while True:
            msg = self._next_reply()
            if msg.get("type") in (kind, "error"):
                return msg

    def do_complete(self, code, cursor_pos):
        cursor_pos = len(code) if cursor_pos is None else cursor_pos
        msg = self._ask("complete", code, _cp_to_byte(code, cursor_pos))
        if msg.get("type") != "complete":
            return {"status": "ok", "matches": [], "cursor_start": cursor_pos, "cursor_end": cursor_pos, "metadata": {}}
        return {"status": "ok", "matches": msg["matches"], "metadata": {},
                "cursor_start": _byte_to_cp(code, msg["cursor_start"]),
                "cursor_end": _byte_to_cp(code, msg["cursor_end"])}

    def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        msg = self._ask("inspect", code, _cp_to_byte(code, cursor_pos))
        found = bool(msg.get("found"))
        data = {"text/plain": msg.get("text", "")} if found else {}
        return {"status": "ok", "found": found, "data": data, "metadata": {}}

    def do_is_complete(self, code):
        msg = self._ask("is_complete", code, 0)
        reply = {"status": msg.get("status", "unknown")}
        if reply["status"] == "incomplete":
            reply["indent"] = msg.get("indent", "")
        return reply

    def do_shutdown(self, restart):
        try:
            self._request("shutdown", "")
            self.proc.wait(timeout=3)
        except Exception:
            self.proc.kill()
        return {"status": "ok", "restart": restart}


def main():
    global LUMEN
    argv = sys.argv[1:]
    if "--lumen" in argv:
        i = argv.index("--lumen")
        LUMEN = argv[i + 1]
        del argv[i:i + 2]
    if not LUMEN or not os.access(LUMEN, os.X_OK):
        sys.exit("lumen kernel: --lumen must name the lumen program (got %r); "
                 "reinstall with lumen --install-jupyter-kernel" % LUMEN)
    sys.argv = [sys.argv[0]] + argv
    from ipykernel.kernelapp import IPKernelApp
    IPKernelApp.launch_instance(kernel_class=LumenKernel)


if __name__ == "__main__":
    main()
