#!/usr/bin/env python3
"""Rebuilds tests/data/run-files: a small recorded run and broken variants of it.

   python3 tools/fuzz/make_corpus.py [build/dev/app/nanscope]

Run it after a change to the run-file format. bad-* files must be refused with a message, good-*
files read (tst_run_file checks both); they also seed the fuzzer (tools/fuzz/run.sh).
"""
import os, shutil, sqlite3, subprocess, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, 'build', 'dev', 'app', 'nanscope')
out = os.path.join(root, 'tests', 'data', 'run-files')
os.makedirs(out, exist_ok=True)
for f in os.listdir(out):
    os.remove(os.path.join(out, f))
os.chdir(out)

subprocess.run([exe, 'run', '--scenario', 'log-zero', '--steps', '4', '--record', 'good-log-zero.nsrun'],
               check=True, stdout=subprocess.DEVNULL)
good = open('good-log-zero.nsrun', 'rb').read()


def edited(name, *statements):
    shutil.copy('good-log-zero.nsrun', name)
    c = sqlite3.connect(name)
    for s in statements:
        c.execute(s)
    c.commit()
    c.close()


open('bad-empty.nsrun', 'wb').write(b'')
open('bad-text.nsrun', 'wb').write(b'step,loss\n0,1.5\n')
open('bad-truncated.nsrun', 'wb').write(good[:len(good) // 2])
broken = bytearray(good)
for i in range(3 * 4096, len(broken)):
    broken[i] = (0xA5 ^ (i * 31)) & 0xff
open('bad-corrupted-pages.nsrun', 'wb').write(bytes(broken))
edited('bad-newer-version.nsrun', 'PRAGMA user_version = 99')
edited('bad-layer-ids.nsrun', 'UPDATE layers SET id = id + 5')
c = sqlite3.connect('bad-other-database.nsrun')
c.execute('CREATE TABLE t(x)')
c.execute('INSERT INTO t VALUES (1)')
c.commit()
c.close()
# Readable, with values no writer produces: the reader keeps what it can and never trusts them.
edited('good-odd-values.nsrun',
       "UPDATE steps SET loss = 'a word', bad_samples = '{not json', origin_phase = 'nowhere'",
       "UPDATE layer_steps SET forward_min = 'text', grad_max = x'00ff' WHERE key % 2 = 0",
       "UPDATE run SET config = '[1,2', summary = '{\"steps_run\": \"many\"}'",
       "UPDATE chunks SET first_origin_step = 12345, quarantined = '[1, \"x\"', steps = -3",
       "UPDATE chunk_series SET min = 'text', first_nonfinite_step = 7 WHERE series = 'loss'",
       "INSERT INTO chunk_layers (chunk, layer, nonfinite_steps) VALUES (0, 99, 1), (5, 0, 1)")
print('\n'.join(sorted(os.listdir('.'))))
