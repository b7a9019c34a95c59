#!/usr/bin/env python3
"""CTest docs_self_contained: the repository needs and cites nothing outside
itself.
  1. every Markdown link of README.md and docs/ resolves: relative links to an
     existing file, and #anchors to a heading or an <a id> in that file
     (http(s) links are not fetched: CI has no network);
  2. no tracked file cites the sibling spec directory or the old notes file
     (ambiguities are decided in docs/decisions.md, the catalog is
     conformance/requirements.tsv);
  3. every decision id cited as "decisions D-..." exists in docs/decisions.md.
Usage: check_docs.py SOURCE_DIR"""
import os
import re
import subprocess
import sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'
os.chdir(root)
try:
    tracked = subprocess.run(['git', 'ls-files', '-z'], capture_output=True, check=True).stdout.decode().split('\0')
    tracked = [f for f in tracked if f and os.path.isfile(f) and not os.path.islink(f)]
except (OSError, subprocess.CalledProcessError):  # an exported tree without .git
    tracked = []
    for d, dirs, files in os.walk('.'):
        dirs[:] = [x for x in dirs if not x.startswith(('.', 'build'))]
        tracked += [os.path.relpath(os.path.join(d, f)) for f in files]
problems = []


def read(path):
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None


def slug(heading):
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # links -> their text
    text = re.sub(r'[`*_]', '', text).strip().lower()
    return re.sub(r'[^\w\- ]', '', text).replace(' ', '-')


anchor_cache = {}


def anchors(path):
    if path not in anchor_cache:
        text = read(path) or ''
        found = set()
        in_code = False
        for line in text.splitlines():
            if line.startswith('```'):
                in_code = not in_code
            elif not in_code and (m := re.match(r'#{1,6}\s+(.*?)\s*#*\s*$', line)):
                found.add(slug(m.group(1)))
        found |= set(re.findall(r'<a\s+(?:id|name)="([^"]+)"', text))
        anchor_cache[path] = found
    return anchor_cache[path]


LINK = re.compile(r'(?<!\!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)|^\[[^\]]+\]:\s*(\S+)', re.M)
docs = [f for f in tracked if f.endswith('.md') and (f == 'README.md' or f.startswith('docs/'))]
for md in docs:
    text = read(md)
    text = re.sub(r'```.*?```', '', text, flags=re.S)  # code blocks hold no links
    text = re.sub(r'`[^`\n]*`', '', text)
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if re.match(r'[a-z]+:', target):
            if not target.startswith(('http://', 'https://', 'mailto:')):
                problems.append(f'{md}: link {target}: unknown scheme')
            continue
        path, _, frag = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(md), path)) if path else md
        if not os.path.exists(dest):
            problems.append(f'{md}: link {target}: {dest} does not exist')
        elif frag and dest.endswith('.md') and frag not in anchors(dest):
            problems.append(f'{md}: link {target}: no anchor #{frag} in {dest}')

NOTES_WORD = re.compile(r'\b' + 'NO' + 'TES' + r'\b')
SHARED = '../' + 'shared'
decision_ids = {a for a in anchors('docs/decisions.md') if a.startswith('d-')}
CITED = re.compile(r'decisions(?:\.md)?[ #]+(D-[A-Z]+[0-9]*)')
for f in tracked:
    if f == 'tools/check_docs.py':
        continue
    text = read(f)
    if text is None:
        continue
    for n, line in enumerate(text.splitlines(), 1):
        if SHARED in line:
            problems.append(f'{f}:{n}: cites {SHARED} (outside the repository)')
        if NOTES_WORD.search(line):
            problems.append(f'{f}:{n}: cites the old notes file; cite docs/decisions.md D-... instead')
        for cited in CITED.findall(line):
            if cited.lower() not in decision_ids:
                problems.append(f'{f}:{n}: {cited} is not a decision id of docs/decisions.md')

for p in problems[:int(os.environ.get("CHECK_DOCS_MAX", "200"))]:
    print(p)
if len(problems) > 200:
    print(f'... and {len(problems) - 200} more')
print(f'check_docs: {len(docs)} Markdown files, {len(tracked)} tracked files, {len(problems)} problem(s)')
sys.exit(1 if problems else 0)
