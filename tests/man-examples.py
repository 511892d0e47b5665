#!/usr/bin/python3
"""Runs the EXAMPLES of the man pages (see tests/man-examples.sh for the
convention).

  man-examples.py BASE PAGE...

BASE is a directory of example files; each page runs in a fresh copy of it.
Prints "ok N PAGE: COMMAND" or "not ok N PAGE: COMMAND" and what went wrong
for each command, then "man-examples: N passed, N failed"; exits 1 if any
failed.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ESCAPES = [('\\(dq', '"'), ('\\(aq', "'"), ('\\(ga', '`'), ('\\(ti', '~'), ('\\(ha', '^'),
           ('\\(em', '--'), ('\\(en', '-'), ('\\-', '-'), ('\\&', ''), ('\\e', '\\'), ('\\(->', '\u2192')]
STATUS = re.compile(r'\s+#\s*exit status (\d+)\s*$')


def unescape(line):
    # \e last but one: "\e-" is a backslash and a dash, not "\-"
    out, i = '', 0
    while i < len(line):
        for esc, rep in ESCAPES:
            if line.startswith(esc, i):
                out += rep
                i += len(esc)
                break
        else:
            out += line[i]
            i += 1
    return out


def complete(text):
    """Whether text is a whole shell command (bash -n accepts it)."""
    return subprocess.run(['bash', '-n'], input=text.encode(), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0 and not text.endswith('\\')


class Item:
    def __init__(self, kind, text, line, status=0, shown=None, name=None):
        self.kind, self.text, self.line = kind, text, line
        self.status, self.shown, self.name = status, shown or [], name


def displays(path):
    """The displays of the EXAMPLES section: [(first line number, mark, [lines])],
    mark being the man-examples comment before it ('file NAME', 'not run') or
    None."""
    out, in_ex, disp, mark, start = [], False, None, None, 0
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for no, line in enumerate(lines, 1):
        if line.startswith('.Sh '):
            in_ex = line.split(None, 1)[1].strip() == 'EXAMPLES'
            continue
        if not in_ex:
            continue
        if disp is not None:
            if line.startswith('.Ed'):
                out.append((start, mark, disp))
                disp, mark = None, None
            elif not line.startswith('.'):
                disp.append(unescape(line))
            continue
        m = re.match(r'^\.\\"\s*man-examples:\s*(.*?)\s*$', line)
        if m:
            mark = m.group(1)
        elif line.startswith('.Bd') and '-literal' in line:
            disp, start = [], no + 1
        elif line.startswith('.Dl '):
            out.append((no, mark, [unescape(line[4:])]))
            mark = None
    return out


def items(path, problems):
    """Commands and files of a page's EXAMPLES, in order."""
    result = []
    for start, mark, lines in displays(path):
        if mark and mark.startswith('file '):
            result.append(Item('file', '\n'.join(lines) + '\n', start, name=mark[5:].strip()))
            continue
        if mark == 'not run':
            continue
        if mark:
            problems.append('%s:%d: unknown man-examples mark %r' % (path, start, mark))
            continue
        if not any(l.startswith('$ ') for l in lines):
            problems.append('%s:%d: a display in EXAMPLES with no "$ " command and no '
                            '"man-examples: file NAME" or "not run" mark' % (path, start))
            continue
        i = 0
        while i < len(lines):
            if not lines[i].startswith('$ '):
                problems.append('%s:%d: a line before the first "$ " command: %s' % (path, start + i, lines[i]))
                i += 1
                continue
            cmd, first = lines[i][2:], start + i
            i += 1
            while not complete(cmd) and i < len(lines):
                cmd += '\n' + lines[i]
                i += 1
            if not complete(cmd):
                problems.append('%s:%d: not a complete shell command: %s' % (path, first, cmd))
            shown = []
            while i < len(lines) and not lines[i].startswith('$ '):
                shown.append(lines[i])
                i += 1
            status = 0
            m = STATUS.search(cmd.split('\n')[-1])
            if m:
                status = int(m.group(1))
            result.append(Item('cmd', cmd, first, status, shown))
    return result


def matches(shown, actual):
    """The shown output, white space ignored; a line "..." stands for any
    lines."""
    parts = [re.sub(r'\s+', '', p) for p in re.split(r'^\.\.\.$', '\n'.join(shown), flags=re.M)]
    act = re.sub(r'\s+', '', actual)
    pattern = '.*'.join(re.escape(p) for p in parts)
    return re.fullmatch(pattern, act, flags=re.S) is not None


def run_page(path, base, work, n, problems):
    its = items(path, problems)
    if not its:
        return n, 0, 0
    page = os.path.basename(path)
    scratch = os.path.join(work, page)
    meta = os.path.join(work, page + '.run')
    shutil.copytree(base, scratch, symlinks=True)
    os.mkdir(meta)
    script = ['set -o pipefail', 'exec </dev/null', 'cd %s' % shq(scratch)]
    for k, it in enumerate(its):
        if it.kind == 'file':
            with open(os.path.join(meta, 'file%d' % k), 'w', encoding='utf-8') as f:
                f.write(it.text)
            script.append('cp %s %s' % (shq(os.path.join(meta, 'file%d' % k)), shq(it.name)))
            continue
        out = shq(os.path.join(meta, '%d' % k))
        script.append('{\n%s\n} >%s.out 2>%s.err\n__rc=$?; echo $__rc >%s.rc; (exit $__rc)' % (it.text, out, out, out))
    try:
        subprocess.run(['bash', '-c', '\n'.join(script) + '\n'], cwd=scratch, timeout=300,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        problems.append('%s: the examples took over 300 s' % path)
    passed = failed = 0
    for k, it in enumerate(its):
        if it.kind != 'cmd':
            continue
        n += 1
        first = it.text.split('\n')[0]
        label = '%d %s:%d: %s%s' % (n, page, it.line, first, ' ...' if '\n' in it.text else '')
        base_ = os.path.join(meta, '%d' % k)
        why = []
        try:
            rc = int(open(base_ + '.rc').read())
        except (OSError, ValueError):
            rc = None
            why.append('did not run (an earlier command ended the page\'s shell?)')
        out = open(base_ + '.out', errors='replace').read() if os.path.exists(base_ + '.out') else ''
        err = open(base_ + '.err', errors='replace').read() if os.path.exists(base_ + '.err') else ''
        if rc is not None and rc != it.status:
            why.append('exit status %d, not %d' % (rc, it.status))
        if it.shown and rc is not None and not matches(it.shown, out):
            why.append('output differs from the page (white space ignored); it printed:\n' +
                       indent(out[:2000]))
        if why:
            failed += 1
            print('not ok ' + label)
            print(indent(it.text))
            for w in why:
                print('  ' + w)
            if err:
                print('  standard error:\n' + indent(err[:2000]))
        else:
            passed += 1
            print('ok ' + label)
    return n, passed, failed


def shq(s):
    return "'" + s.replace("'", "'\\''") + "'"


def indent(s):
    return '\n'.join('    ' + l for l in s.rstrip('\n').split('\n'))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base, pages = sys.argv[1], sys.argv[2:]
    # Pages whose unmarked displays are noted, not failed, until their
    # owner gives them "$ " prompts: space-separated names.
    pending = set(os.environ.get('MAN_EXAMPLES_PENDING', '').split())
    work = tempfile.mkdtemp(prefix='cnt-man-examples.')
    n = passed = failed = 0
    try:
        for p in pages:
            problems = []
            n, p_ok, p_bad = run_page(p, base, work, n, problems)
            passed += p_ok
            failed += p_bad
            for pr in problems:
                if os.path.basename(p) in pending and 'no "$ " command' in pr:
                    print('note: ' + pr + ' (pending)')
                    continue
                n += 1
                failed += 1
                print('not ok %d %s' % (n, pr))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print('man-examples: %d passed, %d failed' % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
