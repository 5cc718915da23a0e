"""Row 006: Gradle; ends with a `finish` call without reply (dropped, not rejected)."""

from __future__ import annotations

from samplegen.expected import Accepted, FirstEdit, FirstError, SampleRow, synthetic_row
from samplegen.openhands import SYSTEM_PROMPT, TOOLS_NEW, finish, think, user_prompt
from samplegen.runners import lineno
from samplegen.trajectory import Call, Repo, Traj, bash_out

QUANTITY = '''package com.acme.units;

import java.util.Objects;

public final class Quantity {

    private final double value;
    private final String unit;

    public Quantity(double value, String unit) {
        this.value = value;
        this.unit = Objects.requireNonNull(unit, "unit");
    }

    /** Parses strings such as {@code "12 kg"}, {@code "3m"} or {@code "-4 C"}. */
    public static Quantity parse(String text) {
        String trimmed = text.trim();
        int i = 0;
        while (i < trimmed.length() && (Character.isDigit(trimmed.charAt(i))
                || trimmed.charAt(i) == '-' || trimmed.charAt(i) == '.')) {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException("No number in: " + text);
        }
        int value = Integer.parseInt(trimmed.substring(0, i));
        return new Quantity(value, trimmed.substring(i).trim());
    }

    public double value() {
        return value;
    }

    public String unit() {
        return unit;
    }

    @Override
    public String toString() {
        String number = value == Math.rint(value) ? String.valueOf((long) value) : String.valueOf(value);
        return number + " " + unit;
    }
}
'''

GRADLE_HEAD = """> Task :compileJava
> Task :processResources NO-SOURCE
> Task :classes
> Task :compileTestJava
> Task :processTestResources NO-SOURCE
> Task :testClasses
"""


def build() -> SampleRow:
    tid = "synthetic-006"
    root = "/workspace/acme__units__2.0"
    q = "src/main/java/com/acme/units/Quantity.java"
    repo = Repo(root, {q: QUANTITY})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
Quantity.parse fails on decimal values

`Quantity.parse("12.5 kg")` throws `NumberFormatException: For input string: "12.5"`.
Decimal values should be supported; `toString()` must keep printing whole numbers without
a decimal part (`"12 kg"`).
""", language="Java"))
    t.act("", repo.sh(
        f"cd {root} && find src -name '*.java'",
        f"{q}\nsrc/main/java/com/acme/units/Units.java\n"
        "src/test/java/com/acme/units/QuantityTest.java",
    ))
    t.act("", repo.view(q))
    repro_src = (
        "import com.acme.units.Quantity;\n\n"
        "public class Repro {\n"
        "    public static void main(String[] args) {\n"
        '        System.out.println(Quantity.parse("12.5 kg"));\n'
        "    }\n"
        "}\n"
    )
    # a shell redirect OUTSIDE the repository: must not count as a repository edit
    t.act("", Call("execute_bash",
                   {"command": f"cat > /tmp/Repro.java <<'EOF'\n{repro_src}EOF"},
                   bash_out("", 0, root)))
    cp = f"{root}/build/classes/java/main"
    repro = f"cd /tmp && javac -cp {cp} Repro.java && java -cp {cp}:. Repro"
    exc = 'java.lang.NumberFormatException: For input string: "12.5"'
    t.act("", repo.sh(
        repro,
        f'Exception in thread "main" {exc}\n'
        "\tat java.base/java.lang.NumberFormatException.forInputString"
        "(NumberFormatException.java:67)\n"
        "\tat java.base/java.lang.Integer.parseInt(Integer.java:668)\n"
        "\tat java.base/java.lang.Integer.parseInt(Integer.java:786)\n"
        f"\tat com.acme.units.Quantity.parse(Quantity.java:{lineno(QUANTITY, 'Integer.parseInt')})\n"
        "\tat Repro.main(Repro.java:5)",
        code=1, cwd="/tmp",
    ))
    old = QUANTITY[QUANTITY.index("        String trimmed = text.trim();"):
                   QUANTITY.index("        return new Quantity(value, trimmed.substring(i).trim());")]
    old += "        return new Quantity(value, trimmed.substring(i).trim());"
    first_new = (
        "        String[] parts = text.trim().split(\"\\\\s+\", 2);\n"
        "        if (parts.length < 2) {\n"
        "            throw new IllegalArgumentException(\"No unit in: \" + text);\n"
        "        }\n"
        "        return new Quantity(Double.parseDouble(parts[0]), parts[1]);"
    )
    first_edit_idx = t.index()
    t.act("Splitting number and unit is simpler.", repo.replace(q, old, first_new))
    gradle = f"cd {root} && ./gradlew test --offline"
    body = GRADLE_HEAD + "\n".join([
        "",
        "> Task :test",
        "",
        "QuantityTest > parsesCompactForm() FAILED",
        "    java.lang.IllegalArgumentException at QuantityTest.java:24",
        "",
        "5 tests completed, 1 failed",
        "",
        "> Task :test FAILED",
        "",
        "FAILURE: Build failed with an exception.",
        "",
        "* What went wrong:",
        "Execution failed for task ':test'.",
        f"> There were failing tests. See the report at: file://{root}/build/reports/tests/test/index.html",
        "",
        "* Try:",
        "> Run with --scan to get full insights.",
        "",
        "BUILD FAILED in 4s",
        "4 actionable tasks: 4 executed",
    ])
    t.act("", repo.sh(gradle, body, code=1))
    t.act("", think(
        "Splitting on whitespace breaks the compact form '3m'. Keep the original scanning loop "
        "(it already accepts '.') and only replace Integer.parseInt with Double.parseDouble."
    ))
    t.act("", repo.replace(q, first_new, old.replace(
        "        int value = Integer.parseInt(trimmed.substring(0, i));",
        "        double value = Double.parseDouble(trimmed.substring(0, i));")))
    t.act("", repo.sh(gradle, GRADLE_HEAD + "> Task :test\n\nBUILD SUCCESSFUL in 3s\n"
                      "4 actionable tasks: 4 executed"))
    t.act("", repo.sh(repro, "12.5 kg", cwd="/tmp"))
    t.act("", finish("Quantity.parse now accepts decimal values; whole numbers still print "
                     "without a decimal part."))
    expected = Accepted(
        conversion="final `finish` call without reply dropped (row is not rejected)",
        trailing=("finish",),
        files_changed=[q],
        first_edit=FirstEdit(path=q, code=first_new, message_index=first_edit_idx,
                             note="a later edit reverts most of it; the first edit is still the reference"),
        test_counts=None,
        first_error=FirstError(command=repro, k=1, exception=exc),
        dropped=[("test_counts", "Gradle's `5 tests completed, 1 failed` prints no passed count (4 would be "
                                 "arithmetic) and run 2 (all pass) prints no count")],
    )
    return synthetic_row(
        tid, "acme__units-31", "acme/units", None, "submit", repo.diff(), TOOLS_NEW, t.messages,
        "Gradle row ending with a `finish` call that has no reply (dropped, not rejected), with "
        "a heredoc shell redirect to /tmp that is not a repository edit; test_counts dropped (Gradle "
        "prints no passed count).",
        expected,
    )
