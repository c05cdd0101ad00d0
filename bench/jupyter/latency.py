"""bench/jupyter/latency.py LUMEN -- the Jupyter kernel's latencies on this machine, through
jupyter_client as a notebook talks to it (the kernelspec installed into a temporary prefix):
  start:  from starting the kernel to the first cell's result (targets < 1 s)
  cell:   a trivial cell's round trip, execute request to its reply and idle (target < 20 ms)
  scene:  a cell showing a scene, to its inline PNG (target < 200 ms)
Medians of several runs; prints one line per measure and the machine's load.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from jupyter_client.manager import KernelManager

lumen = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/lumen")
tmp = tempfile.mkdtemp(prefix="lumen-bench-jupyter-")
subprocess.run([lumen, "--install-jupyter-kernel", "--prefix", tmp], check=True, stdout=subprocess.DEVNULL)
os.environ["JUPYTER_PATH"] = os.path.join(tmp, "share/jupyter")
os.environ.pop("DISPLAY", None)


def cell(kc, code):
    mid = kc.execute(code)
    got = {}
    while True:
        m = kc.get_iopub_msg(timeout=60)
        if m["parent_header"].get("msg_id") != mid:
            continue
        got.setdefault(m["msg_type"], m["content"])
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return got


starts, cells, scenes = [], [], []
for rep in range(5):
    t0 = time.perf_counter()
    km = KernelManager(kernel_name="lumen")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    got = cell(kc, "1 + 1")
    starts.append(time.perf_counter() - t0)
    assert got["execute_result"]["data"]["text/plain"] == "2"
    if rep == 0:
        for _ in range(100):
            t = time.perf_counter()
            cell(kc, "1 + 1")
            cells.append(time.perf_counter() - t)
        for _ in range(12):
            t = time.perf_counter()
            got = cell(kc, "viz.scene('scan')")
            scenes.append(time.perf_counter() - t)
            assert "image/png" in got["display_data"]["data"]
    kc.stop_channels()
    km.shutdown_kernel(now=True)

load = open("/proc/loadavg").read().split()[:3]
print("bench/jupyter/latency.py: %s, jupyter_client, load %s" % (lumen, " ".join(load)))
print("start to first result  median %7.1f ms  (5 starts; target < 1000 ms)" % (1e3 * statistics.median(starts)))
print("trivial cell           median %7.1f ms  (100 cells; target < 20 ms)" % (1e3 * statistics.median(cells)))
print("inline scene (scan)    median %7.1f ms  (12 cells; target < 200 ms)" % (1e3 * statistics.median(scenes)))
