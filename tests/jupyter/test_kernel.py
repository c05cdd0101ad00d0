"""tests/jupyter/test_kernel.py LUMEN -- Lumen's Jupyter kernel with a real client.

Installs the kernelspec into a temporary prefix (lumen --install-jupyter-kernel --prefix), starts
the kernel through jupyter_client and runs cells: values (text/plain as the REPL prints them,
text/html for a tensor and a model), print streamed before the result, one chunk per cell (locals
reach the last line), `;` and `_`, Lua errors and syntax errors as Jupyter errors with the cell's
frames, :time and :help, completion (also after a Chinese character: cursors in code points),
inspection, is_complete, a scene as image/png, live curves as one display updated in place, an
interrupt during a Lua loop and during C work (the kernel and its globals live on), a cell printing
megabytes (capped, and it says so), a malformed message (ignored, the kernel answers the next one),
the Lumen process killed mid-cell (the client sees the kernel die; a restart works); then a lesson
written as a notebook (lumen --lesson-notebook) executed headless by nbconvert --execute: its
check cells print verdicts and hints, its scene cells pictures.
Exit 77 (skipped) when jupyter_client or ipykernel is missing.
"""
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import ipykernel  # noqa: F401
    from jupyter_client.manager import start_new_kernel
except ImportError as e:
    print("skipped: Jupyter is not installed (%s); tools/deps.sh installs python3-ipykernel and "
          "python3-jupyter-client" % e)
    sys.exit(77)

LUMEN = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp(prefix="lumen-jupyter-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    else:
        print("ok:", what.split("\n")[0][:110])


subprocess.run([LUMEN, "--install-jupyter-kernel", "--prefix", tmp], check=True, stdout=subprocess.DEVNULL)
spec = json.load(open(os.path.join(tmp, "share/jupyter/kernels/lumen/kernel.json")))
check(spec["display_name"] == "Lumen (Lua)" and spec["language"] == "lua", "the kernelspec: Lumen (Lua)")
os.environ["JUPYTER_PATH"] = os.path.join(tmp, "share/jupyter")
os.environ["XDG_STATE_HOME"] = tmp
os.environ.setdefault("SDL_VIDEODRIVER", "offscreen")
os.environ.pop("DISPLAY", None)

km, kc = start_new_kernel(kernel_name="lumen", startup_timeout=60)


def run(code, timeout=60):
    """Runs a cell; returns (reply content, [iopub messages of the cell]). stop_on_error=False, here
    and below: after a cell that fails, ipykernel aborts the execute requests that reach it in the
    next moments (a notebook's "run all" stops there), and on a loaded machine the test's next cell
    could be one of them (its reply 'aborted', none of its output)."""
    mid = kc.execute(code, stop_on_error=False)
    msgs = []
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != mid:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            break
        msgs.append(m)
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != mid:
        reply = kc.get_shell_msg(timeout=timeout)
    return reply["content"], msgs


def of(msgs, kind):
    return [m["content"] for m in msgs if m["msg_type"] == kind]


def stream(msgs):
    return "".join(c["text"] for c in of(msgs, "stream"))


def result(msgs):
    r = of(msgs, "execute_result")
    return r[0]["data"] if r else {}


try:
    r, ms = run("1 + 2")
    check(r["status"] == "ok" and result(ms).get("text/plain") == "3", "1 + 2 shows 3")
    r, ms = run("print('before')\nlocal a = lm.arange(1, 7):view(2, 3)\na * 2")
    kinds = [m["msg_type"] for m in ms if m["msg_type"] in ("stream", "execute_result")]
    check(kinds.index("stream") < kinds.index("execute_result"), "print streams before the result")
    d = result(ms)
    check("[int64 tensor of shape [2, 3] on cpu]" in d.get("text/plain", "") and "<table" in d.get("text/html", "")
          and "int64 [2, 3]" in d["text/html"] and ">12<" in d["text/html"],
          "a tensor: text/plain as the REPL, text/html a table with dtype and shape:\n%s" % d)
    r, ms = run("big = lm.arange(1, 401):view(20, 20)\nbig")
    html = result(ms).get("text/html", "")
    check(html.count("<tr>") == 8 and "…" in html and ">400<" in html, "a 20x20 tensor: 8 rows shown, an ellipsis")
    r, ms = run("y = 5;")
    check(not of(ms, "execute_result"), "a trailing ; shows nothing")
    r, ms = run("_ == nil and 'none' or _")
    check(r["status"] == "ok", "_ holds the first value")
    r, ms = run("nn.Sequential(nn.Linear(3, 4), nn.ReLU())")
    check("Linear" in result(ms).get("text/html", "") and "<pre>" in result(ms)["text/html"], "a model shows its tree")

    r, ms = run("local t = nil\nreturn t.x")
    err = of(ms, "error")
    check(r["status"] == "error" and r["ename"] == "LuaError" and "attempt to index" in r["evalue"]
          and any(line.strip().startswith("[%d]:" % r["execution_count"]) for line in r["traceback"][1:]),
          "a Lua error: ename, evalue, the cell's frame: %s" % r)
    check(err and err[0]["evalue"] == r["evalue"], "the error is also on iopub")
    r, ms = run("x = = 1")
    check(r["status"] == "error" and r["ename"] == "SyntaxError", "a syntax error")
    r, ms = run(":time lm.randn(200, 200):sum()")
    check("wall" in stream(ms) and "CPU" in stream(ms) and result(ms),
          ":time prints wall and CPU time and the value (status %s, stream %r, result %r, messages %s)"
          % (r.get("status"), stream(ms)[:300], result(ms), [m["msg_type"] for m in ms]))
    r, ms = run(":help lm.zeros")
    check("lm.zeros(" in stream(ms), ":help")
    r, ms = run("local p = nn.utils.Progress{total = 3, title = 'bar'}\nfor i = 1, 3 do p:update(1, 0.5) end\np:done()")
    check(r["status"] == "ok" and "bar" in stream(ms), "the progress bar in a cell: %r" % stream(ms)[:200])

    c = kc.complete("lm.ze", 5, reply=True, timeout=10)["content"]
    check("lm.zeros" in c["matches"] and c["cursor_start"] == 0 and c["cursor_end"] == 5, "completion: %s" % c)
    code = "s = '床' x = lm.ze"
    c = kc.complete(code, len(code), reply=True, timeout=10)["content"]
    check("lm.zeros" in c["matches"] and c["cursor_start"] == len(code) - 5, "completion after a Chinese character: %s" % c)
    c = kc.complete("big:ma", 6, reply=True, timeout=10)["content"]
    check("big:matmul" in c["matches"], "completion of a tensor's methods: %s" % c["matches"])
    i = kc.inspect("lm.zeros(2, 3)", 4, reply=True, timeout=10)["content"]
    check(i["found"] and "lm.zeros(" in i["data"]["text/plain"], "inspection shows :help")
    i = kc.inspect("nosuchname", 3, reply=True, timeout=10)["content"]
    check(not i["found"], "inspection of an unknown name: not found")
    for code, want in (("for i = 1, 3 do", "incomplete"), ("x = (1 +", "incomplete"), ("x = )", "invalid"),
                       ("print(1)", "complete"), (":help", "complete")):
        kc.is_complete(code)
        got = kc.get_shell_msg(timeout=10)["content"]["status"]
        check(got == want, "is_complete(%r) = %s" % (code, got))

    r, ms = run("viz.scene('scan')")
    disp = of(ms, "display_data")
    png = disp and base64.b64decode(disp[0]["data"].get("image/png", ""))
    check(png and png[:8] == b"\x89PNG\r\n\x1a\n", "a scene is an inline PNG")
    r, ms = run("viz.clear()\nfor s = 1, 40 do viz.plot('loss', s, 1 / s) local t = os.clock() + 0.04 "
                "while os.clock() < t do end end")
    news, ups = of(ms, "display_data"), of(ms, "update_display_data")
    ids = {d["transient"]["display_id"] for d in news + ups}
    check(len(news) == 1 and len(ups) >= 2 and len(ids) == 1,
          "live curves: one display updated in place (%d new, %d updates)" % (len(news), len(ups)))

    def interrupted(code):
        """Runs code, which prints 'started' first, and interrupts it once that line has come (a
        fixed sleep raced a loaded machine: the interrupt could land before the cell began, and a
        cell stopped before its first line is not what the test asks); the reply content and the
        seconds the interrupt took."""
        mid = kc.execute(code, stop_on_error=False)
        deadline = time.time() + 60
        while time.time() < deadline:
            m = kc.get_iopub_msg(timeout=60)
            if (m["parent_header"].get("msg_id") == mid and m["msg_type"] == "stream"
                    and "started" in m["content"]["text"]):
                break
        time.sleep(0.3)
        t0 = time.time()
        km.interrupt_kernel()
        reply = kc.get_shell_msg(timeout=30)
        while reply["parent_header"].get("msg_id") != mid:
            reply = kc.get_shell_msg(timeout=30)
        took = time.time() - t0
        while True:  # the cell's messages, to its idle
            m = kc.get_iopub_msg(timeout=30)
            if (m["parent_header"].get("msg_id") == mid and m["msg_type"] == "status"
                    and m["content"]["execution_state"] == "idle"):
                break
        return reply["content"], took

    rc, took = interrupted("kept = 7\nprint('started')\nlocal n = 0\nwhile true do n = n + 1 end")
    check(rc["status"] == "error" and rc["ename"] == "Interrupted", "an interrupt stops a Lua loop (%.2f s)" % took)
    rc, took = interrupted("print('started')\nfor i = 1, 100000 do lm.randn(600, 600):matmul(lm.randn(600, 600)) end")
    check(rc["status"] == "error" and "interrupted" in rc["evalue"], "an interrupt stops C work (%.2f s): %s" % (took, rc))
    r, ms = run("kept")
    check(result(ms).get("text/plain") == "7", "the kernel and its globals live on after interrupts")

    r, ms = run("for i = 1, 60000 do print(string.rep('x', 40)) end")
    out = stream(ms)
    check(r["status"] == "ok" and len(out) < (1 << 20) + 400 and "capped at 1048576 bytes" in out,
          "megabytes of output are capped and say so (%d bytes)" % len(out))

    # a malformed message on the shell channel: dropped, the kernel answers the next request
    kc.shell_channel.socket.send_multipart([b"<IDS|MSG>", b"not-a-signature", b"{", b"}", b"{}", b"{}"])
    r, ms = run("40 + 2")
    check(result(ms).get("text/plain") == "42", "after a malformed message the kernel answers")

    # the Lumen process killed mid-cell: the kernel dies where the client sees it; a restart works
    wrapper = km.provisioner.process.pid
    kc.execute("while true do end")
    time.sleep(1)
    children = open("/proc/%d/task/%d/children" % (wrapper, wrapper)).read().split()
    lumen_pid = [int(p) for p in children if "--kernel" in open("/proc/%s/cmdline" % p).read()]
    check(len(lumen_pid) == 1, "the wrapper runs one lumen --kernel")
    os.kill(lumen_pid[0], signal.SIGKILL)
    deadline = time.time() + 15
    while km.is_alive() and time.time() < deadline:
        time.sleep(0.1)
    check(not km.is_alive(), "Lumen killed mid-cell: the client sees the kernel die")
    km.restart_kernel(now=True)
    kc.wait_for_ready(timeout=60)
    r, ms = run("6 * 7")
    check(result(ms).get("text/plain") == "42", "a restart works")
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)

# ---------------------------------------------------------------- a lesson as a notebook
nb_path = os.path.join(tmp, "rnn.ipynb")
subprocess.run([LUMEN, "--lesson-notebook", "aics/03-rnn", nb_path, "--lang", "en"], check=True,
               stdout=subprocess.DEVNULL)
nb = json.load(open(nb_path))
sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"]]
check(nb["metadata"]["kernelspec"]["name"] == "lumen" and any("lesson.verdict(2)" in s for s in sources)
      and any("lesson.scene(" in s for s in sources), "the lesson notebook has check and scene cells")
bad = subprocess.run([LUMEN, "--lesson-notebook", "aics/03-rnnn", nb_path + "x"], capture_output=True, text=True)
check(bad.returncode == 1 and "aics/03-rnn" in bad.stderr, "an unknown lesson: the nearest names (%s)" % bad.stderr.strip())
runner = shutil.which("jupyter")
if runner and subprocess.run([runner, "nbconvert", "--version"], capture_output=True).returncode == 0:
    out = os.path.join(tmp, "rnn_out.ipynb")
    p = subprocess.run([runner, "nbconvert", "--to", "notebook", "--execute", nb_path, "--output", out,
                        "--ExecutePreprocessor.timeout=300"], capture_output=True, text=True)
    check(p.returncode == 0, "nbconvert --execute runs the lesson notebook\n" + p.stderr[-2000:])
    if p.returncode == 0:
        done = json.load(open(out))
        texts, pngs = [], 0
        for c in done["cells"]:
            for o in c.get("outputs", []):
                if o["output_type"] == "stream":
                    texts.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
                if "image/png" in o.get("data", {}):
                    pngs += 1
        text = "".join(texts)
        check("Not yet" in text and "Hint 1/" in text, "the check cells print the verdict and a hint")
        check(pngs >= 4, "the scene cells show pictures (%d)" % pngs)
else:
    print("skipped: nbconvert --execute (jupyter-nbconvert is not installed)")

shutil.rmtree(tmp, ignore_errors=True)
if failures:
    print("%d failed: %s" % (len(failures), "; ".join(f.split("\n")[0] for f in failures)))
    sys.exit(1)
print("all passed")
