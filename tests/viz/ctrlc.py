#!/usr/bin/env python3
"""tests/viz/ctrlc.py LUMEN — run by x11.sh under Xvfb: the REPL in a pseudo-terminal with a real
window open and playing; a Lua loop that never ends; Ctrl-C must interrupt it ("interrupted!", the
prompt again) with the window still open, and the scene must have advanced while the loop ran (the
event pump from the Lua hook). Exit status 0 when all holds."""
import os, pty, select, sys, time

pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1]])

def read(seconds, until=None):
    """Output for `seconds`, or until the text `until` has arrived."""
    out, end = b'', time.time() + seconds
    while time.time() < end and not (until and until.encode() in out):
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out.decode(errors='replace')

def fail(msg):
    print('ctrlc: ' + msg)
    os.kill(pid, 9)
    sys.exit(1)

read(5, '>')
os.write(fd, b"viz.scene('scan'); viz.key('+'); viz.key('+'); viz.play()\n")
read(5, 'play()')
read(5, '>')
os.write(fd, b"while true do end\n")
read(1.0)
os.write(fd, b"\x03")
out = read(5, 'interrupted!')
if 'interrupted!' not in out:
    fail('Ctrl-C did not interrupt the loop: ' + repr(out))
os.write(fd, b"print('state', viz.is_open(), viz.state().step)\n")
out = read(5, 'state\t')
out += read(0.3)
line = [l for l in out.splitlines() if l.startswith('state')]
if not line or not line[0].split()[1] == 'true' or int(line[0].split()[2]) < 2:
    fail('the window did not stay open and play during the loop: ' + repr(out))
os.write(fd, b":quit\n")
read(2, 'never')
_, status = os.waitpid(pid, 0)
print('ctrlc: ok (' + line[0] + ')')
