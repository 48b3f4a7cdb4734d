"""README.md and docs/ against the build: what the documentation shows is what a user gets.

- Every fenced block marked ```sh run is run (bash -e -o pipefail) in a temporary
  directory that links the repository's tests/, examples/ and bench/ and the build as
  build/, with the built `parwidth` and this Python (`python`) first on PATH; it must exit
  0, and a ```text output block right after it lists lines its stdout must contain, in
  order (`...` stands for lines left out).
- The README's options table lists exactly the options the build knows (`parwidth run
  --help`, from core/options.cpp), with the same defaults; the README has at most 250 lines.
- Links between documents resolve to existing files and headings; nothing points outside
  the repository.
- Every table of measurements names the command and the commit that produced it.
- The fixtures' width table gives what `parwidth width` prints today.

The conventions are in docs/developing.md ("Documentation that is tested").
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_core import BIN, BUILD, ROOT, clean_env

DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
README_MAX_LINES = 250
# A table's provenance may be this many lines above its first row.
PROVENANCE_WINDOW = 15


def rel(p):
    return str(p.relative_to(ROOT))


# ---------------------------------------------------------------- parsing


def fenced_blocks(path):
    """(first line number, info string, body lines) of every fenced block in a file."""
    blocks, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(`{3,})(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
        body, j = [], i + 1
        while j < len(lines) and not re.match(r"^\s*" + fence + r"\s*$", lines[j]):
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j])
            j += 1
        blocks.append((i + 1, info, body, j + 1))
        i = j + 1
    return blocks


def runnable_blocks():
    """(doc, line, script, expected lines or None) for every ```sh run block."""
    out = []
    for doc in DOCS:
        blocks = fenced_blocks(doc)
        lines = doc.read_text().splitlines()
        for k, (line, info, body, end) in enumerate(blocks):
            if info.split() != ["sh", "run"]:
                continue
            expected = None
            if k + 1 < len(blocks):
                nline, ninfo, nbody, _ = blocks[k + 1]
                between = lines[end:nline - 1]
                if ninfo.split() == ["text", "output"] and all(not b.strip() for b in between):
                    expected = nbody
            out.append((doc, line, "\n".join(body) + "\n", expected))
    return out


def tables(path):
    """(first line number, header cells, data rows as cell lists) of every table."""
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        if (lines[i].lstrip().startswith("|") and i + 1 < len(lines)
                and re.match(r"^\s*\|[\s:|-]*-[\s:|-]*$", lines[i + 1])):
            start = i
            header = [c.strip() for c in lines[i].strip().strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            out.append((start + 1, header, rows))
        else:
            i += 1
    return out


def headings_slugs(path):
    """GitHub's anchors for a Markdown file's headings."""
    slugs = set()
    in_code = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m and not in_code:
            text = re.sub(r"[`*]|\[([^]]*)\]\([^)]*\)", lambda x: x.group(1) or "", m.group(1))
            slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
            slugs.add(slug)
    return slugs


# ---------------------------------------------------------------- runnable blocks


@pytest.fixture(scope="module")
def doc_cache(tmp_path_factory):
    """One cache for every block of a run: the machine is calibrated once."""
    return tmp_path_factory.mktemp("doc-cache")


RUNNABLE = runnable_blocks()


def test_there_are_runnable_blocks_in_the_readme_and_docs():
    docs = {doc for doc, _, _, _ in RUNNABLE}
    assert ROOT / "README.md" in docs
    assert len(docs) >= 5, sorted(map(rel, docs))


@pytest.mark.parametrize("doc,line,script,expected", RUNNABLE,
                         ids=[f"{rel(d)}:{n}" for d, n, _, _ in RUNNABLE])
def test_runnable_block(tmp_path, doc_cache, doc, line, script, expected):
    for name in ("tests", "examples", "bench"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "build").symlink_to(BUILD)
    env = clean_env(
        PATH=os.pathsep.join([str(BIN), str(Path(sys.executable).parent), os.environ["PATH"]]),
        XDG_CACHE_HOME=str(doc_cache),
        PARWIDTH_NODE_DIR=str(tmp_path / "node"),
    )
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    where = f"{rel(doc)}:{line}"
    assert p.returncode == 0, f"{where} exited {p.returncode}\n{script}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    if expected is None:
        return
    got = [l.rstrip() for l in p.stdout.splitlines()]
    at = 0
    for want in (l.rstrip() for l in expected):
        if not want or want == "...":
            continue
        while at < len(got) and got[at] != want:
            at += 1
        assert at < len(got), f"{where}: {want!r} not in the output (in order)\n{p.stdout}"
        at += 1


# ---------------------------------------------------------------- the README


def test_readme_is_short():
    n = len((ROOT / "README.md").read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; the rest belongs in docs/"


def options_help():
    p = subprocess.run([str(BIN / "parwidth"), "run", "--help"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    helped = {}
    for line in p.stdout.splitlines():
        if line.startswith("  PARWIDTH_"):
            name, rest = line.split(None, 1)
            helped[name[len("PARWIDTH_"):]] = rest.split(" default ", 1)[1].strip()
    assert len(helped) >= 20, p.stdout
    return helped


def test_readme_options_table_lists_exactly_the_options_the_build_knows():
    """core/options.cpp's table is the one source; `parwidth run --help` prints it."""
    helped = options_help()
    readme = (ROOT / "README.md").read_text().split("\n## Options", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for row in readme.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if not row.startswith("|") or len(cells) != 4 or cells[0] in ("option", "---"):
            continue
        names = [n.strip() for n in cells[0].split(",")]
        # "all / none" gives each of two names its default; "cores / pools" is one.
        defaults = [d.strip().strip("`") for d in
                    (cells[2].split(" / ") if len(names) > 1 else [cells[2]])]
        for i, n in enumerate(names):
            documented[n] = defaults[min(i, len(defaults) - 1)]
    assert sorted(documented) == sorted(helped), (
        f"only in README: {sorted(set(documented) - set(helped))}; "
        f"only in the build: {sorted(set(helped) - set(documented))}")
    assert documented == helped


# ---------------------------------------------------------------- links and pointers

LINK_RE = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", DOCS, ids=[rel(d) for d in DOCS])
def test_links_resolve_inside_the_repository(doc):
    text = doc.read_text()
    bad = []
    for pattern in (r"\.\./shared", r"/work/", r"shared/DESIGN", r"DESIGN\.md"):
        for m in re.finditer(pattern, text):
            bad.append(f"line {text.count(chr(10), 0, m.start()) + 1}: points outside: {m.group(0)}")
    for m in LINK_RE.finditer(text):
        target = m.group(1)
        line = text.count("\n", 0, m.start()) + 1
        if re.match(r"^[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if ROOT.resolve() not in dest.parents and dest != ROOT.resolve():
            bad.append(f"line {line}: {target} leaves the repository")
            continue
        if not dest.exists():
            bad.append(f"line {line}: {target}: no such file")
            continue
        if anchor and dest.suffix == ".md" and anchor not in headings_slugs(dest):
            bad.append(f"line {line}: {target}: no such heading in {rel(dest)}")
    assert not bad, f"{rel(doc)}:\n" + "\n".join(bad)


# ---------------------------------------------------------------- measurements

DECIMAL_RE = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.]*\d)")
COMMAND_RE = re.compile(r"`[^`]*\S\s+\S[^`]*`")
COMMIT_RE = re.compile(r"\bcommit (unknown|[0-9a-f]{7,40})\b")


def is_measurement(rows):
    """A table with a decimal number in a data cell (versions such as 2.21.0 are not)."""
    return any(DECIMAL_RE.search(c) for row in rows for c in row)


def known_commit(h):
    if not (ROOT / ".git").exists():
        return True
    shallow = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"],
                             capture_output=True, text=True).stdout.strip()
    if shallow != "false":
        return True  # a shallow clone cannot tell
    return subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", h + "^{commit}"],
                          capture_output=True).returncode == 0


@pytest.mark.parametrize("doc", DOCS, ids=[rel(d) for d in DOCS])
def test_measurement_tables_name_command_and_commit(doc):
    lines = doc.read_text().splitlines()
    head = "\n".join(lines[:5])
    generated = re.search(r"^Made by `", head, re.M) and COMMAND_RE.search(head) and COMMIT_RE.search(head)
    bad = []
    commits = set(COMMIT_RE.findall(head)) if generated else set()
    for line, header, rows in tables(doc):
        if not is_measurement(rows):
            continue
        if generated:
            continue
        before = "\n".join(lines[max(0, line - 1 - PROVENANCE_WINDOW):line - 1])
        # The paragraph may wrap: join lines so a command split across two lines counts.
        joined = " ".join(l.strip() for l in before.splitlines())
        if not COMMAND_RE.search(joined) or not COMMIT_RE.search(joined):
            bad.append(f"line {line} ({' | '.join(header)[:60]}): no command in backticks and "
                       f"`commit <hash>` (or `commit unknown`) in the {PROVENANCE_WINDOW} lines above")
        commits.update(COMMIT_RE.findall(joined))
    for h in sorted(commits - {"unknown"}):
        if not known_commit(h):
            bad.append(f"commit {h} is not in this repository's history")
    assert not bad, f"{rel(doc)}:\n" + "\n".join(bad)


def test_fixture_width_table_is_what_parwidth_width_prints():
    doc = ROOT / "docs" / "planning.md"
    found = [rows for _, header, rows in tables(doc) if header[:2] == ["model", "heavy H"]]
    assert len(found) == 1, "docs/planning.md's fixture table"
    for row in found[0]:
        name = row[0].split()[0]
        p = subprocess.run([str(BIN / "parwidth"), "width",
                            str(ROOT / "tests" / "fixtures" / "models" / name), "--json"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        d = json.loads(p.stdout)
        got = [str(d["heavy"]), str(d["layers"]), str(d["avg_width"]), str(d["max_level_width"]),
               "%.2f" % d["weighted_parallelism"], d["costs"]]
        assert row[1:7] == got, f"{name}: the table says {row[1:7]}, parwidth width {got}"
