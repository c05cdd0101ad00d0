#!/usr/bin/env python3
"""bench/viz/idle.py LUMEN — CPU use of the REPL waiting for input (a pseudo-terminal, so the
REPL ticks every 16 ms), without a window and with an open, idle window (needs DISPLAY: run.sh
starts Xvfb). Prints 'none PCT' and 'window PCT': percent of one core over SECONDS (default 5)."""
import os, pty, sys, time

def cpu(pid):
    with open(f'/proc/{pid}/stat') as f:
        parts = f.read().rsplit(')', 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf('SC_CLK_TCK')

def run(lumen, code, seconds):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(lumen, [lumen])
    def drain(t):
        end = time.time() + t
        while time.time() < end:
            try:
                import select
                r, _, _ = select.select([fd], [], [], 0.05)
                if r: os.read(fd, 65536)
            except OSError:
                return
    drain(1.0)
    if code:
        os.write(fd, code.encode() + b'\n')
    drain(1.5)
    c0, t0 = cpu(pid), time.time()
    drain(seconds)
    c1, t1 = cpu(pid), time.time()
    os.write(fd, b':quit\n')
    drain(0.5)
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    return 100.0 * (c1 - c0) / (t1 - t0)

lumen = sys.argv[1]
secs = float(os.environ.get('SECONDS_IDLE', '5'))
print('none %.2f' % run(lumen, '', secs))
print('window %.2f' % run(lumen, "viz.scene('scan')", secs))
