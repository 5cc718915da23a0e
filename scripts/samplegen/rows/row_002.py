"""Row 002: first repo edit is `sed -i` -> first_edit dropped."""

from __future__ import annotations

from samplegen.expected import Accepted, Counts, FirstError, SampleRow, synthetic_row
from samplegen.openhands import SYSTEM_PROMPT, TOOLS_NEW, finish, think, user_prompt
from samplegen.runners import lineno, pytest_line, pytest_sep
from samplegen.trajectory import Repo, Traj

LEDGER_MONEY = '''"""Money helpers for acme-ledger."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENTS = Decimal("0.01")


def parse_amount(text: str) -> Decimal:
    """Parse a user-entered amount such as '12.50', '-3' or '1 200.00'."""
    cleaned = text.strip().replace(" ", "")
    return Decimal(cleaned).quantize(CENTS, rounding=ROUND_HALF_UP)


def format_amount(value: Decimal, currency: str = "EUR") -> str:
    return f"{value:.2f} {currency}"


def split_evenly(total: Decimal, parts: int) -> list[Decimal]:
    """Split an amount into `parts` shares whose sum is exactly `total`."""
    share = (total / parts).quantize(CENTS, rounding=ROUND_HALF_UP)
    shares = [share] * parts
    shares[-1] = total - share * (parts - 1)
    return shares
'''

LEDGER_NEW_TEST = '''from decimal import Decimal

import pytest

from ledger.money import parse_amount


@pytest.mark.parametrize(
    "text, expected",
    [
        ("1,50", "1.50"),
        ("-0,5", "-0.50"),
        ("1.234,50", "1234.50"),
        ("1 234,50", "1234.50"),
    ],
)
def test_decimal_comma(text, expected):
    assert parse_amount(text) == Decimal(expected)
'''


def build() -> SampleRow:
    tid = "synthetic-002"
    root = "/workspace/acme__ledger__2.3"
    repo = Repo(root, {"ledger/money.py": LEDGER_MONEY})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
parse_amount crashes on decimal commas

`ledger.money.parse_amount("1,50")` raises `decimal.InvalidOperation`. Users in European
locales type amounts with a decimal comma, optionally with dots as thousands separators
(`1.234,50`). Both forms should parse to the same value as `1.50` / `1234.50`.
"""))
    listing = "README.md\nledger\npyproject.toml\ntests\n"
    t.act(
        "Let me look at the money module.",
        repo.sh(f"cd {root} && ls && cat ledger/money.py", listing + LEDGER_MONEY.rstrip("\n")),
    )
    repro = (
        f"cd {root} && python -c 'from ledger.money import parse_amount; "
        "print(parse_amount(\"1,50\"))'"
    )
    pline = lineno(LEDGER_MONEY, "return Decimal(cleaned)")
    exc = "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"
    t.act(
        "",
        repo.sh(
            repro,
            "Traceback (most recent call last):\n"
            '  File "<string>", line 1, in <module>\n'
            f'  File "{root}/ledger/money.py", line {pline}, in parse_amount\n'
            "    return Decimal(cleaned).quantize(CENTS, rounding=ROUND_HALF_UP)\n"
            "           ^^^^^^^^^^^^^^^^\n" + exc,
            code=1,
        ),
    )
    # first repo edit: a shell edit (sed -i)
    sed_cmd = (
        "sed -i 's/replace(\" \", \"\")$/replace(\" \", \"\").replace(\",\", \".\")/' "
        f"{root}/ledger/money.py"
    )
    sed_idx = t.index()
    t.act("A quick first fix: turn commas into dots.", repo.sh(sed_cmd, ""))
    repo.shell_edit(
        "ledger/money.py",
        '    cleaned = text.strip().replace(" ", "")\n',
        '    cleaned = text.strip().replace(" ", "").replace(",", ".")\n',
    )
    t.act("", repo.sh(repro, "1.50"))
    t.act("Now a test file for the different notations.",
          repo.create("tests/test_money_comma.py", LEDGER_NEW_TEST))
    test_cmd = f"cd {root} && python -m pytest tests -q"
    tline = lineno(LEDGER_NEW_TEST, "assert parse_amount(text)")
    body = "\n".join([
        pytest_line("...........F.", "[100%]"),
        pytest_sep("FAILURES"),
        pytest_sep("test_decimal_comma[1.234,50-1234.50]", "_"),
        "",
        "text = '1.234,50', expected = '1234.50'",
        "",
        "    @pytest.mark.parametrize(",
        '        "text, expected",',
        "        [",
        '            ("1,50", "1.50"),',
        '            ("-0,5", "-0.50"),',
        '            ("1.234,50", "1234.50"),',
        '            ("1 234,50", "1234.50"),',
        "        ],",
        "    )",
        "    def test_decimal_comma(text, expected):",
        ">       assert parse_amount(text) == Decimal(expected)",
        "",
        f"tests/test_money_comma.py:{tline}: ",
        "_ " * 39 + "_",
        "",
        "text = '1.234,50'",
        "",
        "    def parse_amount(text: str) -> Decimal:",
        '        """Parse a user-entered amount such as \'12.50\', \'-3\' or \'1 200.00\'."""',
        '        cleaned = text.strip().replace(" ", "").replace(",", ".")',
        ">       return Decimal(cleaned).quantize(CENTS, rounding=ROUND_HALF_UP)",
        "E       decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]",
        "",
        f"ledger/money.py:{pline}: InvalidOperation",
        pytest_sep("short test summary info"),
        ("FAILED tests/test_money_comma.py::test_decimal_comma[1.234,50-1234.50] - "
        "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"),
        "1 failed, 12 passed in 0.45s",
    ])
    run1_idx = t.index() + 1
    # interpreter marker glued to the last line (as in real OpenHands output)
    t.act("", repo.sh(test_cmd, body, code=1, glue="py"))
    t.act(
        "",
        think(
            "Replacing ',' with '.' breaks '1.234,50' (two dots). When a comma is present it is "
            "the decimal separator and any dots are thousands separators: drop the dots first, "
            "then turn the comma into a dot."
        ),
    )
    editor_new = (
        '    cleaned = text.strip().replace(" ", "")\n'
        '    if "," in cleaned:\n'
        "        # decimal comma, optionally with dots as thousands separators: 1.234,50\n"
        '        cleaned = cleaned.replace(".", "").replace(",", ".")'
    )
    t.act(
        "",
        repo.replace(
            "ledger/money.py",
            '    cleaned = text.strip().replace(" ", "").replace(",", ".")',
            editor_new,
        ),
    )
    t.act("", repo.sh(test_cmd, pytest_line("." * 13, "[100%]") + "\n13 passed in 0.41s"))
    t.act("", repo.sh(repro, "1.50"))
    t.act("", repo.sh(f"cd {root} && git diff", repo.diff(tracked_only=True).rstrip("\n")))
    t.act("", finish(
        "parse_amount now accepts decimal commas (`1,50`) and dot thousands separators "
        "(`1.234,50`); new tests in tests/test_money_comma.py pass."
    ))
    expected = Accepted(
        conversion="final `finish` call without reply dropped",
        trailing=("finish",),
        files_changed=["ledger/money.py", "tests/test_money_comma.py"],
        first_edit=None,
        test_counts=Counts(command=test_cmd, k=1, passed=12, failed=1, errors=0,
                           message_index=run1_idx,
                           note="pytest -q summary without '====', interpreter marker glued"),
        first_error=FirstError(command=repro, k=1, exception=exc),
        dropped=[("first_edit", (f"first repo edit is a shell edit (sed -i) at message {sed_idx}; "
                  "later editor edits must not replace it"))],
    )
    return synthetic_row(
        tid, "acme__ledger-57", "acme/ledger", True, "submit", repo.diff(), TOOLS_NEW, t.messages,
        "First edit of the repository is a `sed -i` (first_edit dropped, not replaced by the "
        "later editor create/str_replace); pytest -q summary with a glued interpreter marker.",
        expected,
    )
