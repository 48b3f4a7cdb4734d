#!/usr/bin/env python3
"""What scripts/lint runs to keep comments true to the tree: every file, line and
function a comment names must still exist.

Checked in the comments of C/C++, Python, shell and CMake sources, and in every
README.md and docs/ page:
- `dir/file.ext` names a file of the repository (`.{h,cpp}` and `.*` forms too),
  `dir/file.ext:N` (or `:N-M`) a file with at least that many lines, and
  `dir/file.md, "Heading"` a heading of that file;
- a qualified name, for the project's namespaces and types (gov::plan_for,
  Sampler::stop), a name that a file declaring that scope still has;
- `name()` in backticks, and `name(` in prose, a name that the sources still use.
A path counts as the project's when its first folder is one of the repository's
(a TensorFlow path such as tensorflow/core/... is not); names outside the project's
scopes (std::, at::, a library's function never called here) are not checked.

Usage: scripts/lint_refs.py [--self-test]. Prints each broken reference as
file:line: what, and exits 1 if there is one.
"""
import io
import os
import re
import subprocess
import sys
import tempfile
import tokenize
from pathlib import Path

EXTS = ("cpp|h|c|S|py|md|sh|txt|map|lua|tcl|in|toml|cmake|json|onnx|pb|xml|fdef")
# A path: at least one folder, a file name with one of the extensions above, a
# brace list or `*` in place of the extension, an optional :line or :first-last.
PATH_RE = re.compile(
    r"(?<![\w./~$-])((?:[A-Za-z0-9_][\w.-]*/)+[\w.-]*?)"
    r"\.(\{[\w,]+\}|\*|(?:" + EXTS + r"))\b(?![\w/])"
    r"(?::(\d+)(?:-(\d+))?)?"
    r"(?:(?:,| \(| in) \"([^\"]+)\")?")
# A file of the referring folder or the root, by its bare name, with a heading.
BARE_MD_RE = re.compile(r'(?<![\w./-])([A-Za-z_][\w-]*\.md)(?:,| \(| in) "([^"]+)"')
# A bare Markdown file name (no folder): it must be the referring folder's, the root's
# or docs/'s; and nothing may point outside the repository.
BARE_FILE_RE = re.compile(r"(?<![\w./-])([A-Za-z][\w-]*\.md)\b")
OUTSIDE_RE = re.compile(r"(?:\.\./)+shared\b|/work/[\w.-]+")
QUAL_RE = re.compile(r"(?<![\w:.])((?:[A-Za-z_]\w*::)+)(~?[A-Za-z_]\w*)")
CALL_BT_RE = re.compile(r"`([A-Za-z_]\w*)\(\)?[^`]*`")
CALL_RE = re.compile(r"(?<![\w.:>$/-])([a-z][a-z0-9]*_[a-z0-9_]+)\(")

# Names a comment may call that no source of ours uses: C library, POSIX and the
# frameworks' own functions, and words that read like calls in prose.
EXTERNAL = set("""
pthread_setaffinity_np sched_setaffinity sched_getaffinity getauxval dl_iterate_phdr
posix_spawnp clone3 set_num_threads set_num_interop_threads get_num_threads
omp_get_max_threads omp_set_num_threads omp_get_num_threads omp_get_thread_num
hardware_concurrency init_num_threads openblas_set_num_threads threadpool_info
set_providers io_binding run_with_iobinding intraop_default_num_threads check_permissions
""".split())


def git_files(root):
    out = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True,
                         check=True).stdout
    return [f for f in out.splitlines() if (root / f).is_file()]


def kind_of(path, root):
    name = Path(path).name
    if path.startswith("tests/fixtures/") and not path.startswith("tests/fixtures/gen/"):
        return None
    if re.search(r"\.(cpp|h|c|cc)$", name):
        return "c"
    if name.endswith(".py"):
        return "py"
    if name == "README.md" or path.startswith("docs/"):
        return "md"
    if name == "CMakeLists.txt" or name.endswith(".cmake") or name.endswith(".sh"):
        return "sh"
    try:
        with open(root / path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return None
    if first.startswith(b"#!") and re.search(rb"\b(ba)?sh\b", first):
        return "sh"
    if first.startswith(b"#!") and b"python" in first:
        return "py"
    return None


def c_split(text):
    """C/C++ text -> (comments as (line, text), code with comments blanked)."""
    comments, code = [], []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments.append((line, text[i + 2:j]))
            i = j
        elif c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j
            comments.append((line, text[i + 2:j]))
            line += text.count("\n", i, j)
            code.append("\n" * text.count("\n", i, j))
            i = j + 2
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                code.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            code.append(text[i:j])
            line += text.count("\n", i, j)
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            code.append(text[i:j + 1])
            i = j + 1
        else:
            if c == "\n":
                line += 1
            code.append(c)
            i += 1
    return comments, "".join(code)


def py_split(text):
    """Python text -> (comments and docstrings as (line, text), code without them)."""
    comments, code_parts = [], []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return [(1, text)], ""
    prev = tokenize.NEWLINE
    for t in toks:
        if t.type == tokenize.COMMENT:
            comments.append((t.start[0], t.string[1:]))
        elif t.type == tokenize.STRING and prev in (tokenize.NEWLINE, tokenize.INDENT,
                                                    tokenize.DEDENT, tokenize.NL):
            comments.append((t.start[0], t.string))
        else:
            code_parts.append(t.string)
        if t.type not in (tokenize.COMMENT, tokenize.NL):
            prev = t.type
    return comments, " ".join(code_parts)


def sh_split(text):
    """Shell or CMake text -> (whole-line # comments, the other lines)."""
    comments, code = [], []
    for no, l in enumerate(text.splitlines(), 1):
        s = l.lstrip()
        if s.startswith("#") and not (no == 1 and s.startswith("#!")):
            comments.append((no, s[1:]))
        else:
            code.append(l)
    return comments, "\n".join(code)


def md_split(text):
    """Markdown: the whole text is prose; fenced code blocks count as code."""
    return [(no, l) for no, l in enumerate(text.splitlines(), 1)], ""


SPLIT = {"c": c_split, "py": py_split, "sh": sh_split, "md": md_split}


def headings(path):
    out = []
    try:
        for l in path.read_text(errors="replace").splitlines():
            m = re.match(r"#+\s+(.*)", l)
            if m:
                out.append(m.group(1).strip().strip("`"))
    except OSError:
        pass
    return out


class Index:
    """What exists: files, their line counts, identifiers used in code, scopes."""

    def __init__(self, root, files):
        self.root = root
        self.files = set(files)
        self.top = {f.split("/", 1)[0] for f in files if "/" in f}
        self.dirs_all = {str(p) for f in files for p in Path(f).parents if str(p) != "."}
        self.idents = set()
        self.qualified = set()
        self.scope_idents = {}  # namespace or type name -> identifiers of files declaring it
        self.comments = {}
        for f in files:
            k = kind_of(f, root)
            if not k:
                continue
            text = (root / f).read_text(errors="replace")
            comments, code = SPLIT[k](text)
            self.comments[f] = comments
            if k == "md":
                continue
            ids = set(re.findall(r"[A-Za-z_]\w*", code))
            self.idents |= ids
            self.qualified |= set(re.findall(r"\b\w+::~?\w+", code))
            scopes = set()
            for m in re.finditer(r"\bnamespace\s+([\w:]+)\s*\{", code):
                scopes.update(m.group(1).split("::"))
            scopes.update(re.findall(r"\b(?:class|struct|enum class|enum)\s+([A-Z]\w*)", code))
            for s in scopes:
                self.scope_idents.setdefault(s, set()).update(ids)

    def lines(self, f):
        with open(self.root / f, "rb") as fh:
            return sum(1 for _ in fh)


def resolve(index, src, stem, ext):
    """The repository files a path reference names, relative to the root (its first
    folder one of the repository's) or to the referring file's folder (its first
    folder one there); None when neither applies: not the project's path."""
    exts = ext[1:-1].split(",") if ext.startswith("{") else [ext]
    here = str(Path(src).parent)
    first = stem.split("/", 1)[0]
    bases = []
    if first in index.top:
        bases.append("")
    if here != "." and here + "/" + first in index.dirs_all:
        bases.append(here + "/")
    if not bases:
        return None
    tried = []
    for base in bases:
        cand = base + stem
        if ext == "*":
            names = [f for f in index.files if f.startswith(cand + ".")]
        else:
            names = [cand + "." + e for e in exts]
        if names and all(n in index.files or (index.root / n).is_dir() for n in names):
            return names
        tried.append(names)
    return tried[0]


def check_file(index, src):
    errors = []
    for line, text in index.comments.get(src, []):
        for m in PATH_RE.finditer(text):
            stem, ext, first, last, heading = m.groups()
            if stem.startswith(("http", "www.")) or "://" in text[max(0, m.start() - 8):m.start()]:
                continue
            targets = resolve(index, src, stem.rstrip("/"), ext)
            if targets is None:
                continue
            shown = m.group(0)
            if not targets:
                errors.append((src, line, "%s: no such file" % shown))
                continue
            for t in targets:
                if t not in index.files and not (index.root / t).is_dir():
                    errors.append((src, line, "%s: no such file %s" % (shown, t)))
                    continue
                if first:
                    need = int(last or first)
                    have = index.lines(t)
                    if have < need:
                        errors.append((src, line, "%s: %s has %d lines" % (shown, t, have)))
                if heading and t.endswith(".md"):
                    hs = headings(index.root / t)
                    if not any(h.startswith(heading) or heading in h for h in hs):
                        errors.append((src, line, '%s: %s has no heading "%s"' % (shown, t, heading)))
        for m in OUTSIDE_RE.finditer(text):
            errors.append((src, line, "%s: points outside the repository" % m.group(0)))
        for m in BARE_FILE_RE.finditer(text):
            here = str(Path(src).parent)
            cands = ([here + "/" + m.group(1)] if here != "." else []) + [m.group(1), "docs/" + m.group(1)]
            if not any(c in index.files for c in cands):
                errors.append((src, line, "%s: no such file here, at the root or in docs/" % m.group(1)))
        for m in BARE_MD_RE.finditer(text):
            here = str(Path(src).parent)
            cands = [here + "/" + m.group(1)] if here != "." else []
            t = next((c for c in cands + [m.group(1)] if c in index.files), None)
            if t and not any(h.startswith(m.group(2)) or m.group(2) in h
                             for h in headings(index.root / t)):
                errors.append((src, line, '%s: %s has no heading "%s"' % (m.group(0), t, m.group(2))))
        for m in QUAL_RE.finditer(text):
            scopes = m.group(1).rstrip(":").split("::")
            name = m.group(2).lstrip("~")
            scope = scopes[-1]
            if scope not in index.scope_idents:
                continue  # std::, at::, tensorflow::: not ours
            if "%s::%s" % (scope, name) in index.qualified:
                continue
            if name in index.scope_idents[scope]:
                continue
            errors.append((src, line, "%s%s: no such name in %s" % (m.group(1), name, scope)))
        names = set(CALL_BT_RE.findall(text)) | set(CALL_RE.findall(text))
        for name in sorted(names):
            if name in index.idents or name in EXTERNAL or len(name) < 3:
                continue
            errors.append((src, line, "%s(): no such function in the sources" % name))
    return errors


def run(root):
    files = git_files(root)
    index = Index(root, files)
    errors = []
    for f in sorted(index.comments):
        for e in check_file(index, f):
            if e not in errors:  # one line naming a file twice is one finding
                errors.append(e)
    for src, line, what in errors:
        print("scripts/lint: %s:%d: %s" % (src, line, what), file=sys.stderr)
    return errors


def self_test():
    """A small repository with one good and one broken reference of each kind."""
    cases = {
        "a/real.cpp": "// Real file.\nnamespace pw::gov {\nint plan_for(int x) { return x; }\n"
                      "struct Plan { int pools; };\n}  // namespace pw::gov\n",
        "a/README.md": "# a\n\n## Files\n\nsub/x.py is here, b/good.cpp:2 there.\n",
        "a/sub/x.py": "# Read by a/README.md.\n",
        "b/good.cpp": "// Uses a/real.cpp:3, a/real.{cpp}, a/real.* and gov::plan_for(), "
                      "`plan_for()`, Plan::pools,\n// a/README.md, \"Files\" and std::gone, "
                      "tensorflow/core/x.cc, at::gone().\nint main() { return 0; }\n",
        "b/bad_line.cpp": "// See a/real.cpp:40.\n",
        "b/bad_file.py": "# See a/missing.py.\n",
        "b/bad_name.c": "/* gov::plan_gone decides; */\n",
        "b/bad_call.sh": "#!/bin/sh\n# calls `plan_gone()` first\n",
        "b/bad_head.h": "// a/README.md, \"Layout\" says why.\n",
        "b/bad_root_head.h": "// README.md, \"Layout\" says why; README.md, \"Top\" too.\n",
        "README.md": "# Top\n",
        "b/bad_member.h": "// Plan::threads is the count.\n",
        "b/bad_outside.py": "# As ../shared/NOTES.md says.\n",
        "b/bad_bare.cpp": "// DESIGN.md's rule.\n",
    }
    want = {"b/bad_line.cpp", "b/bad_file.py", "b/bad_name.c", "b/bad_call.sh", "b/bad_head.h",
            "b/bad_member.h", "b/bad_root_head.h", "b/bad_outside.py", "b/bad_bare.cpp"}
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for f, text in cases.items():
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_text(text)
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        subprocess.run(["git", "add", "."], cwd=root, check=True)
        devnull = open(os.devnull, "w")
        saved, sys.stderr = sys.stderr, devnull
        try:
            errors = run(root)
        finally:
            sys.stderr = saved
        got = {e[0] for e in errors}
    if got != want:
        print("scripts/lint --self-test: references: flagged %s, expected %s"
              % (sorted(got), sorted(want)), file=sys.stderr)
        for e in errors:
            print("  %s:%d: %s" % e, file=sys.stderr)
        return 1
    print("scripts/lint: self-test: %d reference cases judged as expected" % len(cases))
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    root = Path(__file__).resolve().parent.parent
    sys.exit(1 if run(root) else 0)
