"""Row 005: retry chains and a second user turn."""

from __future__ import annotations

from samplegen.expected import Accepted, Counts, FirstEdit, FirstError, SampleRow, synthetic_row
from samplegen.openhands import CONTINUE, SYSTEM_PROMPT, TOOLS_NEW, finish, user_prompt
from samplegen.runners import lineno
from samplegen.trajectory import PYTHON, Repo, Traj

SLUG_CORE = '''"""URL slug helpers."""

import re

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def slugify(text: str, separator: str = "-", max_length: int | None = None) -> str:
    """Turn ``text`` into a lowercase ASCII slug."""
    text = text.lower()
    text = text.encode("ascii", "ignore").decode("ascii")
    slug = _SEPARATORS.sub(separator, text).strip(separator)
    if max_length is not None:
        slug = slug[:max_length].rstrip(separator)
    return slug
'''

SLUG_TEST = '''import unittest

from slugify import slugify


class SlugifyTests(unittest.TestCase):
    def test_simple(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_separator(self):
        self.assertEqual(slugify("a b c", separator="_"), "a_b_c")

    def test_strips_edges(self):
        self.assertEqual(slugify("  --Hi!--  "), "hi")

    def test_collapses_runs(self):
        self.assertEqual(slugify("a   &&  b"), "a-b")

    def test_digits(self):
        self.assertEqual(slugify("Version 2.0"), "version-2-0")

    def test_max_length(self):
        self.assertEqual(slugify("abc def ghi", max_length=5), "abc-d")

    def test_max_length_no_trailing_separator(self):
        self.assertEqual(slugify("abc def", max_length=4), "abc")

    def test_empty(self):
        self.assertEqual(slugify(""), "")

    def test_only_symbols(self):
        self.assertEqual(slugify("!!!"), "")
'''


def build() -> SampleRow:
    tid = "synthetic-005"
    root = "/workspace/acme__slugify__3.1"
    repo = Repo(root, {"slugify/core.py": SLUG_CORE, "tests/test_slugify.py": SLUG_TEST})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
Accented letters are dropped instead of transliterated

`slugify("Crème brûlée")` returns `"crme-brle"`. Accented Latin letters should be
transliterated to their ASCII base letter: `"creme-brulee"`.
"""))
    t.act("", repo.view("slugify/core.py"))
    repro = f"cd {root} && python -c \"from slugify import slugify; print(slugify('Crème brûlée'))\""
    t.act("", repo.sh(repro, "crme-brle"))
    first_new = (
        '    text = unicodedata.normalize("NFKD", text)\n'
        '    text = text.encode("ascii", "ignore").decode("ascii")'
    )
    first_edit_idx = t.index()
    t.act(
        "Decompose accented letters before dropping non-ASCII characters.",
        repo.replace("slugify/core.py", '    text = text.encode("ascii", "ignore").decode("ascii")',
                     first_new),
    )
    enc_line = lineno(repo.files["slugify/core.py"], "unicodedata.normalize")
    exc = "NameError: name 'unicodedata' is not defined"
    run2_idx = t.index() + 1
    t.act(
        "",
        repo.sh(
            repro,
            "Traceback (most recent call last):\n"
            '  File "<string>", line 1, in <module>\n'
            f'  File "{root}/slugify/core.py", line {enc_line}, in slugify\n'
            '    text = unicodedata.normalize("NFKD", text)\n'
            "           ^^^^^^^^^^^\n" + exc,
            code=1,
        ),
    )
    # retry chain 1: three failed str_replace attempts, then success
    chain1 = [t.index()]
    t.act("I forgot the import.",
          repo.replace_fail("slugify/core.py", "import re\nimport string",
                            "import re\nimport string\nimport unicodedata"))
    chain1.append(t.index())
    t.act("",
          repo.replace_fail("slugify/core.py",
                            "import re\n\n_SEPARATORS = re.compile(r'[^a-z0-9]+')",
                            "import re\nimport unicodedata\n\n_SEPARATORS = re.compile(r'[^a-z0-9]+')"))
    chain1.append(t.index())
    t.act("",
          repo.replace_fail("slugify/core.py", '"""URL slug helpers"""\nimport re',
                            '"""URL slug helpers"""\nimport re\nimport unicodedata'))
    chain1.append(t.index())
    t.act("", repo.replace("slugify/core.py", "import re", "import re\nimport unicodedata"))
    t.act("", repo.sh(repro, "creme-brulee"))
    t.say("The slug is now transliterated: `creme-brulee`. Should I also run the test suite?")
    turn2 = t.index()
    t.user(CONTINUE)
    # retry chain 2: three failing commands, then a working one
    chain2 = [t.index()]
    t.act("", repo.sh(f"cd {root} && pytest tests -q", "bash: pytest: command not found", 127))
    chain2.append(t.index())
    t.act("", repo.sh(f"cd {root} && python -m pytest tests -q",
                      f"{PYTHON}: No module named pytest", 1))
    chain2.append(t.index())
    t.act("", repo.sh(
        "pip install -q pytest",
        "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
        "after connection broken by 'NewConnectionError': /simple/pytest/\n"
        "ERROR: Could not find a version that satisfies the requirement pytest (from versions: "
        "none)\nERROR: No matching distribution found for pytest",
        1,
    ))
    chain2.append(t.index())
    ut = f"cd {root} && python -m unittest discover -s tests -v"
    names = [line.split("def ")[1].split("(")[0] for line in SLUG_TEST.splitlines()
             if line.strip().startswith("def test_")]
    out = [f"{n} (test_slugify.SlugifyTests.{n}) ... ok" for n in names]
    out += ["", "-" * 70, f"Ran {len(names)} tests in 0.002s", "", "OK"]
    run_ut_idx = t.index() + 1
    t.act("No pytest and no network; the tests are unittest-based anyway.",
          repo.sh(ut, "\n".join(out)))
    n_lines = repo.files["tests/test_slugify.py"].rstrip("\n").count("\n") + 1
    t.act(
        "Adding a regression test.",
        repo.insert(
            "tests/test_slugify.py", n_lines,
            "\n    def test_transliterates_accents(self):\n"
            '        self.assertEqual(slugify("Crème brûlée"), "creme-brulee")',
        ),
    )
    names.append("test_transliterates_accents")
    out = [f"{n} (test_slugify.SlugifyTests.{n}) ... ok" for n in names]
    out += ["", "-" * 70, f"Ran {len(names)} tests in 0.002s", "", "OK"]
    t.act("", repo.sh(ut, "\n".join(out)))
    t.act("", finish("slugify now transliterates accented letters (NFKD) before dropping "
                     "non-ASCII characters; 10 tests pass."))
    expected = Accepted(
        conversion="final `finish` call without reply dropped",
        trailing=("finish",),
        files_changed=["slugify/core.py", "tests/test_slugify.py"],
        first_edit=FirstEdit(path="slugify/core.py", code=first_new, message_index=first_edit_idx),
        test_counts=Counts(command=ut, k=1, passed=9, failed=0, errors=0,
                           message_index=run_ut_idx, note="unittest `Ran 9 tests` + `OK`"),
        first_error=FirstError(command=repro, k=2, exception=exc, message_index=run2_idx,
                               note="run 1 of the same command printed no exception"),
        dropped=[],
        retry_chains=[
            f"turn 1: failed str_replace at messages {chain1[:3]}, success at {chain1[3]}",
            (f"turn 2 (user message {turn2}): failed commands at messages {chain2[:3]}, "
            f"success at {chain2[3]}"),
        ],
    )
    return synthetic_row(
        tid, "acme__slugify-19", "acme/slugify", True, "submit", repo.diff(), TOOLS_NEW, t.messages,
        "Two settled retry chains (three failed str_replace then success; after a 'Please "
        "continue' user turn, three failing commands then success) and first_error on the 2nd "
        "run of the same command; all four questions kept.",
        expected,
    )
