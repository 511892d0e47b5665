#!/usr/bin/python3
"""Checks that a tool's options are the same in its --help, its man page and
its source, and that the option letters mean one thing across the tools.
Used by tests/options.bats.

  options.py check TOOL HELPFILE MANPAGE SOURCE CLI_H
      TOOL's --help output (HELPFILE), man page and cmd/ source agree:
        - the option list of --help and the .It Fl entries of the man page's
          DESCRIPTION and OPTIONS sections name the same options, with the
          same short/long pairs and the same arguments;
        - the usage lines of --help and the man page's SYNOPSIS name the
          same option spellings, and between them every option of the list
          but -h/--help and --version (which only print);
        - the source's cnt_cli_getopt (getopt_long) tables (cmd/TOOL.c, and CNT_CLI_SHORT /
          CNT_CLI_LONGOPTS of lib/cli/cli.h when it uses them) accept
          exactly the listed options, with the same arguments.  SOURCE '-'
          skips this (a tool written in sh, scripts/cnt-rebuild).
  In --help, an option line is "  -o, --output FILE   what it does": the
  names separated by ", ", an argument written in capitals (FILE, N) or as
  choices (json|csv).

  options.py vocabulary HELPFILE...
      across every tool's --help option list: a short letter stands for one
      long option, the one the vocabulary of cnt(7) gives it; a long option
      has the same letter (or none) everywhere; every tool has the shared
      options.

Prints one line per problem; exits 1 if there was any.

The man page is read as mdoc source (no mandoc needed): macro lines are
split into words, and after each Fl the words up to the next macro are
flags (delimiters such as | and , left out); a flag followed by Ar or Cm
takes an argument.
"""
import re
import sys

# The option vocabulary (brief of issue 7, cnt(7) "OPTIONS"): the only short
# letters, and what each stands for in every tool.
LETTERS = {
    'h': 'help', 'v': 'verbose', 'o': 'output', 'r': 'rejects', 'D': 'duplicates',
    'd': 'definitions', 'c': 'codec', 's': 'state', 'm': 'memory', 'T': 'tmpdir',
    'f': 'format', 'F': 'output-format', 'n': 'head', 't': 'iso-time', 'q': 'quiet',
    'b': 'board', 'w': 'views',
}
# Options every tool has: name -> takes an argument.
SHARED = {'help': False, 'version': False, 'verbose': False, 'stats': True,
          'progress': False, 'no-progress': False}
# Options that only print and exit: not needed in a SYNOPSIS.
INFO = {'help', 'version'}

problems = []


def problem(msg):
    problems.append(msg)


class Opt:
    """One option: its short letter and long name (either may be None) and
    whether it takes an argument."""

    def __init__(self, short, long, arg):
        self.short, self.long, self.arg = short, long, arg

    def key(self):
        return self.long or self.short

    def names(self):
        return [n for n in ('-' + self.short if self.short else None,
                            '--' + self.long if self.long else None) if n]

    def __repr__(self):
        s = ', '.join(self.names())
        return s + (' ARG' if self.arg else '')


def group(names, arg, where):
    """Options from one entry: one short and one long name are a pair;
    several long names (--freeze, --unfreeze) are options of their own."""
    shorts = [n[1:] for n in names if not n.startswith('--')]
    longs = [n[2:] for n in names if n.startswith('--')]
    if len(shorts) > 1 or (shorts and len(longs) > 1):
        problem('%s: cannot pair %s' % (where, ' '.join(names)))
        return []
    if shorts:
        return [Opt(shorts[0], longs[0] if longs else None, arg)]
    return [Opt(None, l, arg) for l in longs]


def add(table, opts, where):
    for o in opts:
        k = o.key()
        if k in table and repr(table[k]) != repr(o):
            problem('%s: %s described twice differently (%r, %r)' % (where, k, table[k], o))
        table[k] = o


# ---- --help -------------------------------------------------------------------

HELP_OPT = re.compile(r'^ {1,8}(-[A-Za-z0-9](?:[ ,]|$)|--[a-z])')


def parse_help(text, tool):
    """Returns (usage spellings {name: takes arg}, option list {key: Opt})."""
    lines = text.split('\n')
    usage, table = {}, {}
    i = 0
    while i < len(lines) and not lines[i].startswith('usage:'):
        i += 1
    if i == len(lines):
        problem('%s --help: no "usage:" line' % tool)
    # the usage lines: "usage: ..." and the indented lines after it
    while i < len(lines) and lines[i].strip() and (lines[i].startswith('usage:') or lines[i][0] == ' '):
        for m in re.finditer(r'(?<![\w-])(--?[A-Za-z][\w-]*)(?:[ =]([a-z][\w|-]*|[A-Z][\w-]*))?', lines[i]):
            name, arg = m.group(1), m.group(2)
            if name == '-' or name.startswith('-' + tool):
                continue
            usage[name] = usage.get(name, False) or bool(arg and not arg.startswith('-'))
        i += 1
    for line in lines[i:]:
        if not HELP_OPT.match(line):
            continue
        # "  -o, --output FILE   text": names separated by ", ", each
        # with an argument (a word in capitals, or choices a|b) or none;
        # the text starts at the first other word.
        names, arg = [], False
        for item in line.strip().split(', '):
            m = re.match(r'^(--?[A-Za-z0-9][\w-]*)(?:[ =]([A-Z][A-Z0-9_]*|\S*\|\S*)(?=\s|$))?', item)
            if not m:
                break
            names.append(m.group(1))
            arg = arg or bool(m.group(2))
            if item[m.end():].strip():
                break      # the description follows
        add(table, group(names, arg, tool + ' --help'), tool + ' --help')
    return usage, table


# ---- mdoc ----------------------------------------------------------------------

MACRO = re.compile(r'^[A-Z][a-z][a-z]?$')
DELIM = {'|', ',', '.', ';', ':', '(', ')', '[', ']'}


def words(line):
    """Splits a macro line as mdoc does (double quotes group words)."""
    out, cur, q, i = [], '', False, 0
    while i < len(line):
        c = line[i]
        if c == '"':
            if q and i + 1 < len(line) and line[i + 1] == '"':
                cur += '"'
                i += 1
            else:
                q = not q
        elif c == ' ' and not q:
            if cur:
                out.append(cur)
            cur = ''
        else:
            cur += c
        i += 1
    if cur:
        out.append(cur)
    return out


def unescape(w):
    return w.replace('\\-', '-').replace('\\&', '').replace('\\e', '\\')


def flags(ws):
    """[(flag names of one Fl run, takes an argument)] of a macro line."""
    runs, i = [], 0
    while i < len(ws):
        if ws[i] != 'Fl':
            i += 1
            continue
        names = []
        i += 1
        while i < len(ws) and not MACRO.match(ws[i]):
            w = unescape(ws[i])
            if w not in DELIM and w:
                names.append('-' + w)
            i += 1
        arg = i < len(ws) and ws[i] in ('Ar', 'Cm')
        runs.append((names, arg))
    return runs


def sections(src):
    """{section name: [macro lines]}"""
    out, cur = {}, None
    for line in src.split('\n'):
        if line.startswith('.Sh '):
            cur = ' '.join(words(line[4:]))
            out.setdefault(cur, [])
        elif cur is not None:
            out[cur].append(line)
    return out


def parse_man(src, name):
    """Returns (SYNOPSIS spellings {name: takes arg}, option list {key: Opt})."""
    secs = sections(src)
    syn = {}
    for line in secs.get('SYNOPSIS', []):
        if not line.startswith('.'):
            continue
        for names, arg in flags(words(line[1:])):
            for j, n in enumerate(names):
                # in "Fl a | b Ar x" only the last flag takes x
                syn[n] = syn.get(n, False) or (arg and j == len(names) - 1)
    table = {}
    for sec in ('DESCRIPTION', 'OPTIONS'):
        for line in secs.get(sec, []):
            if not line.startswith('.It Fl'):
                continue
            ws = words(line[1:])
            names, arg = [], False
            for ns, a in flags(ws):
                names += ns
                arg = arg or a
            add(table, group(names, arg, name), name)
    if 'SYNOPSIS' not in secs:
        problem('%s: no SYNOPSIS section' % name)
    return syn, table


# ---- source -----------------------------------------------------------------------

LONGOPT = re.compile(r'\{\s*"([a-z][a-z0-9-]*)"\s*,\s*(no_argument|required_argument|optional_argument)'
                     r'\s*,\s*[^,{}]+,\s*([^{}]+?)\s*\}')


def parse_source(src, cli_h, name):
    """{key: Opt} of what the tool's cnt_cli_getopt accepts."""
    m = re.search(r'#define\s+CNT_CLI_SHORT\s+"([^"]*)"', cli_h)
    cli_short = m.group(1) if m else ''
    m = re.search(r'#define\s+CNT_CLI_LONGOPTS((?:[^\n]*\\\n)*[^\n]*)', cli_h)
    cli_long = m.group(1) if m else ''
    calls = re.findall(r'cnt_cli_getopt\s*\(\s*\w+\s*,\s*\w+\s*,\s*((?:"[^"]*"\s*|CNT_CLI_SHORT\s*)+),', src)
    if len(calls) != 1:
        problem('%s: found %d cnt_cli_getopt calls with a literal option string, not 1' % (name, len(calls)))
        return {}
    shortstr = ''.join(cli_short if p == 'CNT_CLI_SHORT' else p.strip('"')
                       for p in re.findall(r'"[^"]*"|CNT_CLI_SHORT', calls[0])).lstrip('+-:')
    shorts = {}
    for m in re.finditer(r'([A-Za-z0-9])(:?)', shortstr):
        shorts[m.group(1)] = bool(m.group(2))
    longs = LONGOPT.findall(src)
    if 'CNT_CLI_LONGOPTS' in src:
        longs += LONGOPT.findall(cli_long)
    table, paired = {}, set()
    for lname, arity, val in longs:
        arg = arity != 'no_argument'
        m = re.match(r"^'(.)'$", val)
        s = m.group(1) if m and m.group(1) in shorts else None
        if s:
            paired.add(s)
            if shorts[s] != arg:
                problem('%s: -%s and --%s differ in taking an argument' % (name, s, lname))
        add(table, [Opt(s, lname, arg)], name)
    for s, arg in shorts.items():
        if s not in paired:
            add(table, [Opt(s, None, arg)], name)
    return table


# ---- checks ---------------------------------------------------------------------------


def same_tables(a, an, b, bn, tool):
    for k in sorted(set(a) | set(b)):
        if k not in b:
            problem('%s: %r is in %s, not in %s' % (tool, a[k], an, bn))
        elif k not in a:
            problem('%s: %r is in %s, not in %s' % (tool, b[k], bn, an))
        elif repr(a[k]) != repr(b[k]):
            problem('%s: %s says %r, %s says %r' % (tool, an, a[k], bn, b[k]))


def check(tool, helpfile, manpage, source, cli_h):
    help_text = open(helpfile, encoding='utf-8').read()
    man = open(manpage, encoding='utf-8').read()
    # a tool written in sh (scripts/) has no getopt_long table: '-' skips it
    src = open(source, encoding='utf-8').read() if source != '-' else ''
    cli = open(cli_h, encoding='utf-8').read()
    usage, hlist = parse_help(help_text, tool)
    syn, mlist = parse_man(man, manpage)
    slist = parse_source(src, cli, source) if source != '-' else None
    if not hlist:
        problem('%s --help: no option list' % tool)
    if not mlist:
        problem('%s: no .It Fl entries in DESCRIPTION or OPTIONS' % manpage)
    same_tables(hlist, 'the --help option list', mlist, 'the man page option list', tool)
    if slist is not None:
        same_tables(hlist, 'the --help option list', slist, 'the source (getopt_long)', tool)
    # SYNOPSIS and usage: the same spellings, each a listed option with the
    # same argument, and together every listed option but the info ones.
    for n in sorted(set(usage) | set(syn)):
        if n not in syn:
            problem('%s: %s is in the --help usage, not in the man page SYNOPSIS' % (tool, n))
        elif n not in usage:
            problem('%s: %s is in the man page SYNOPSIS, not in the --help usage' % (tool, n))
    byname = {}
    for o in hlist.values():
        for n in o.names():
            byname[n] = o
    seen = set()
    for n in sorted(syn):
        o = byname.get(n)
        if o is None:
            problem('%s: the SYNOPSIS names %s, which the option list does not have' % (tool, n))
            continue
        seen.add(o.key())
        if syn[n] != o.arg:
            problem('%s: the SYNOPSIS gives %s %s argument, the option list %s' % (
                tool, n, 'an' if syn[n] else 'no', 'does' if o.arg else 'does not'))
    for k, o in sorted(hlist.items()):
        if k not in seen and k not in INFO:
            problem('%s: %r is not in the SYNOPSIS' % (tool, o))


def vocabulary(helpfiles):
    by_letter, by_long = {}, {}
    for hf in helpfiles:
        tool = re.sub(r'\.help$', '', hf.split('/')[-1])
        _, table = parse_help(open(hf, encoding='utf-8').read(), tool)
        for k, want in SHARED.items():
            o = table.get(k)
            if o is None:
                problem('%s: lacks the shared option --%s' % (tool, k))
            elif o.arg != want:
                problem('%s: --%s %s an argument' % (tool, k, 'lacks' if want else 'takes'))
        if 'version' in table and table['version'].short:
            problem('%s: --version has the letter -%s; it is long only' % (tool, table['version'].short))
        for o in table.values():
            if o.short:
                by_letter.setdefault(o.short, {}).setdefault(o.long, []).append(tool)
                if LETTERS.get(o.short) != o.long:
                    problem('%s: -%s is --%s here; the vocabulary has %s' % (
                        tool, o.short, o.long,
                        '-%s for --%s' % (o.short, LETTERS[o.short]) if o.short in LETTERS else 'no -' + o.short))
            if o.long:
                by_long.setdefault(o.long, {}).setdefault(o.short, []).append(tool)
    for s, longs in sorted(by_letter.items()):
        if len(longs) > 1:
            problem('-%s means %s' % (s, '; '.join('--%s in %s' % (l, ' '.join(t)) for l, t in sorted(longs.items(), key=str))))
    for l, shorts in sorted(by_long.items()):
        if len(shorts) > 1:
            problem('--%s is %s' % (l, '; '.join('%s in %s' % ('-' + s if s else 'long only', ' '.join(t))
                                                 for s, t in sorted(shorts.items(), key=str))))


def main():
    if len(sys.argv) == 7 and sys.argv[1] == 'check':
        check(*sys.argv[2:])
    elif len(sys.argv) > 2 and sys.argv[1] == 'vocabulary':
        vocabulary(sys.argv[2:])
    else:
        sys.exit(__doc__)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == '__main__':
    main()
