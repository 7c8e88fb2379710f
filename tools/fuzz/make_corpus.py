#!/usr/bin/env python3
"""Rebuilds tests/data/run-files: a small recorded run and broken variants of it.

   python3 tools/fuzz/make_corpus.py [--rerecord] [build/dev/app/nanscope]

bad-* files must be refused with one line, good-* files read (tst_run_file_failures checks both,
tst_run_window opens each in the window); they also seed the fuzzer (tools/fuzz/run.sh).
good-log-zero.nsrun was written by an earlier release (format 1, before update ratios): it stays as
committed, so that the readers keep reading that layout, unless --rerecord records it again.
"""
import os, shutil, sqlite3, subprocess, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
args = [a for a in sys.argv[1:] if a != '--rerecord']
rerecord = '--rerecord' in sys.argv[1:]
exe = args[0] if args else os.path.join(root, 'build', 'dev', 'app', 'nanscope')
out = os.path.join(root, 'tests', 'data', 'run-files')
os.makedirs(out, exist_ok=True)
for f in os.listdir(out):
    if rerecord or f != 'good-log-zero.nsrun':
        os.remove(os.path.join(out, f))
os.chdir(out)

if not os.path.exists('good-log-zero.nsrun'):
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
# Layers: 0 is the model, 1 (fc) and 2 (softmax) its children. Readers walk parents upward.
edited('bad-parent-self.nsrun', 'UPDATE layers SET parent = id WHERE id = 1')
edited('bad-parent-cycle.nsrun', 'UPDATE layers SET parent = 2 WHERE id = 1', 'UPDATE layers SET parent = 1 WHERE id = 2')
edited('bad-parent-after.nsrun', 'UPDATE layers SET parent = 2 WHERE id = 1')
edited('bad-parent-missing.nsrun', 'UPDATE layers SET parent = 7 WHERE id = 2')
edited('bad-parent-text.nsrun', "UPDATE layers SET parent = 'fc' WHERE id = 2")
edited('bad-negative-step.nsrun', 'UPDATE steps SET step = step - 2')
edited('bad-huge-step.nsrun', 'UPDATE steps SET step = 4294967296 WHERE step = 3')
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
# Layer ids and steps that point nowhere, in the tables that only refer to them.
edited('good-dangling-references.nsrun',
       'UPDATE steps SET origin_layer = 99, overflow_layers = \'[99, -1, 2]\' WHERE step = 2',
       'UPDATE events SET layer = 42, step = 99999',
       "INSERT INTO layer_nonfinite (step, layer, kind, nan, posinf, neginf) VALUES (1, 99, 'forward', 1, 0, 0), "
       "(77, 0, 'grad', 1, 0, 0), (1, 0, 'nowhere', 1, 0, 0)",
       'INSERT INTO layer_steps (key, input_finite) VALUES (-5, 1), (400000, 0)')
print('\n'.join(sorted(os.listdir('.'))))
