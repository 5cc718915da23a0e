"""Row 003: Java / Maven, repo root /testbed."""

from __future__ import annotations

from samplegen.expected import Accepted, Counts, FirstEdit, FirstError, SampleRow, synthetic_row
from samplegen.openhands import SYSTEM_PROMPT, TOOLS_NEW, finish, plan, think, user_prompt
from samplegen.runners import lineno
from samplegen.trajectory import Call, Repo, Traj

PATH_COMPILER = '''package com.acme.jsonpath;

import java.util.ArrayList;
import java.util.List;

/**
 * Compiles JSONPath expressions such as {@code $.store.items[0].name} into tokens.
 */
final class PathCompiler {

    private final String path;
    private int pos;

    PathCompiler(String path) {
        this.path = path;
    }

    List<Token> compile() {
        if (path.isEmpty() || path.charAt(0) != '$') {
            throw new IllegalArgumentException("Path must start with '$': " + path);
        }
        pos = 1;
        List<Token> tokens = new ArrayList<>();
        while (pos < path.length()) {
            char c = path.charAt(pos);
            if (c == '.') {
                pos++;
                tokens.add(Token.property(readName()));
            } else if (c == '[') {
                pos++;
                tokens.add(Token.index(readIndex()));
                expect(']');
            } else {
                throw new IllegalStateException("Unexpected character '" + c + "' at " + pos);
            }
        }
        return tokens;
    }

    private String readName() {
        int start = pos;
        while (pos < path.length() && Character.isJavaIdentifierPart(path.charAt(pos))) {
            pos++;
        }
        return path.substring(start, pos);
    }

    private int readIndex() {
        int start = pos;
        while (pos < path.length() && Character.isDigit(path.charAt(pos))) {
            pos++;
        }
        if (start == pos) {
            if (path.charAt(pos) == '-') {
                throw new IllegalStateException(
                        "Negative index not supported: " + path.substring(pos, path.indexOf(']', pos)));
            }
            throw new IllegalStateException("Expected index at " + start);
        }
        return Integer.parseInt(path.substring(start, pos));
    }

    private void expect(char c) {
        if (pos >= path.length() || path.charAt(pos) != c) {
            throw new IllegalStateException("Expected '" + c + "' at " + pos);
        }
        pos++;
    }
}
'''

EVALUATOR = '''package com.acme.jsonpath;

import java.util.List;
import java.util.Map;

final class Evaluator {

    private Evaluator() {
    }

    static Object read(Object root, List<Token> tokens) {
        Object current = root;
        for (Token token : tokens) {
            if (current == null) {
                return null;
            }
            if (token.isIndex()) {
                if (!(current instanceof List)) {
                    return null;
                }
                List<?> list = (List<?>) current;
                int index = token.index();
                if (index >= list.size()) {
                    return null;
                }
                current = list.get(index);
            } else {
                if (!(current instanceof Map)) {
                    return null;
                }
                current = ((Map<?, ?>) current).get(token.name());
            }
        }
        return current;
    }
}
'''

PATH_COMPILER_TEST = '''package com.acme.jsonpath;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class PathCompilerTest {

    @Test
    void compilesRoot() {
        assertEquals(List.of(), new PathCompiler("$").compile());
    }

    @Test
    void compilesProperties() {
        assertEquals(List.of(Token.property("a"), Token.property("b")), new PathCompiler("$.a.b").compile());
    }

    @Test
    void compilesIndex() {
        assertEquals(List.of(Token.property("items"), Token.index(2)), new PathCompiler("$.items[2]").compile());
    }

    @Test
    void rejectsMissingRoot() {
        assertThrows(IllegalArgumentException.class, () -> new PathCompiler("a.b").compile());
    }

    @Test
    void rejectsUnclosedBracket() {
        assertThrows(IllegalStateException.class, () -> new PathCompiler("$.a[1").compile());
    }

    @Test
    void rejectsEmptyIndex() {
        assertThrows(IllegalStateException.class, () -> new PathCompiler("$.a[]").compile());
    }

    @Test
    void rejectsGarbage() {
        assertThrows(IllegalStateException.class, () -> new PathCompiler("$.a#").compile());
    }

    @Test
    void rejectsNegativeIndex() {
        assertThrows(IllegalStateException.class, () -> new PathCompiler("$.items[-1]").compile());
    }
}
'''

MVN_HEAD = """[INFO] Scanning for projects...
[INFO] 
[INFO] --------------------------< com.acme:jsonpath >--------------------------
[INFO] Building acme-jsonpath 0.7.1-SNAPSHOT
[INFO]   from pom.xml
[INFO] --------------------------------[ jar ]---------------------------------
[INFO] 
[INFO] --- resources:3.3.1:resources (default-resources) @ jsonpath ---
[INFO] skip non existing resourceDirectory /testbed/src/main/resources
[INFO] 
[INFO] --- compiler:3.11.0:compile (default-compile) @ jsonpath ---
[INFO] Changes detected - recompiling the module! :source
[INFO] Compiling 6 source files with javac [debug target 17] to target/classes
[INFO] 
[INFO] --- resources:3.3.1:testResources (default-testResources) @ jsonpath ---
[INFO] skip non existing resourceDirectory /testbed/src/test/resources
[INFO] 
[INFO] --- compiler:3.11.0:testCompile (default-testCompile) @ jsonpath ---
[INFO] Changes detected - recompiling the module! :dependency
[INFO] Compiling 2 source files with javac [debug target 17] to target/test-classes
[INFO] 
[INFO] --- surefire:3.2.2:test (default-test) @ jsonpath ---
[INFO] Using auto detected provider org.apache.maven.surefire.junitplatform.JUnitPlatformProvider
[INFO] 
[INFO] -------------------------------------------------------
[INFO]  T E S T S
[INFO] -------------------------------------------------------
[INFO] Running com.acme.jsonpath.JsonPathTest
[INFO] Tests run: 4, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.041 s -- in com.acme.jsonpath.JsonPathTest
[INFO] Running com.acme.jsonpath.PathCompilerTest"""


def build() -> SampleRow:
    tid = "synthetic-003"
    root = "/testbed"
    pc = "src/main/java/com/acme/jsonpath/PathCompiler.java"
    ev = "src/main/java/com/acme/jsonpath/Evaluator.java"
    pct = "src/test/java/com/acme/jsonpath/PathCompilerTest.java"
    repo = Repo(root, {pc: PATH_COMPILER, ev: EVALUATOR, pct: PATH_COMPILER_TEST})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
Support negative array indices in paths

`JsonPath.compile("$.items[-1]")` throws
`IllegalStateException: Negative index not supported: -1`. Negative indices should count
from the end of the array, like in most JSONPath implementations: `$.items[-1]` reads the
last element, and an index that is out of range in either direction reads `null`.
""", language="Java"))
    t.act(
        "",
        plan(tid, [
            ("Explore the compiler and evaluator", "in_progress", ""),
            ("Reproduce with a small Java class", "todo", "outside the repository"),
            ("Accept negative indices in PathCompiler", "todo", ""),
            ("Resolve negative indices in Evaluator", "todo", ""),
            ("Run PathCompilerTest and JsonPathTest", "todo", "mvn -o test"),
        ]),
    )
    t.act(
        "",
        repo.sh(
            f"cd {root} && find src -name '*.java' | sort",
            "\n".join([
                ev, "src/main/java/com/acme/jsonpath/JsonPath.java", pc,
                "src/main/java/com/acme/jsonpath/PathException.java",
                "src/main/java/com/acme/jsonpath/Token.java",
                "src/main/java/com/acme/jsonpath/package-info.java",
                "src/test/java/com/acme/jsonpath/JsonPathTest.java", pct,
            ]),
        ),
    )
    t.act("", repo.view(pc))
    repro_src = """import com.acme.jsonpath.JsonPath;
import java.util.List;
import java.util.Map;

public class Repro {
    public static void main(String[] args) {
        Map<String, Object> doc = Map.of("items", List.of("a", "b", "c"));
        System.out.println(JsonPath.compile("$.items[-1]").read(doc));
    }
}
"""
    t.act(
        "",
        Call("str_replace_editor",
             {"command": "create", "path": "/tmp/Repro.java", "file_text": repro_src},
             "File created successfully at: /tmp/Repro.java"),
    )
    repro = ("cd /tmp && javac -cp /testbed/target/classes Repro.java && "
             "java -cp /testbed/target/classes:. Repro")
    # the `throw new ...(` line just above the message line
    throw_line = lineno(PATH_COMPILER, '"Negative index not supported: "') - 1
    exc = "java.lang.IllegalStateException: Negative index not supported: -1"
    t.act(
        "",
        repo.sh(
            repro,
            f'Exception in thread "main" {exc}\n'
            f"\tat com.acme.jsonpath.PathCompiler.readIndex(PathCompiler.java:{throw_line})\n"
            f"\tat com.acme.jsonpath.PathCompiler.compile(PathCompiler.java:"
            f"{lineno(PATH_COMPILER, 'Token.index(readIndex())')})\n"
            "\tat com.acme.jsonpath.JsonPath.compile(JsonPath.java:19)\n"
            "\tat Repro.main(Repro.java:8)",
            code=1, cwd="/tmp",
        ),
    )
    t.act(
        "",
        think(
            "readIndex only accepts digits. Accept an optional leading '-', keep the 'Expected "
            "index' error when no digits follow. Then Evaluator must map a negative index to "
            "size + index and return null when it is still out of range."
        ),
    )
    old = PATH_COMPILER[PATH_COMPILER.index("    private int readIndex() {"):
                        PATH_COMPILER.index('            throw new IllegalStateException("Expected index at " + start);\n        }\n')]
    old += '            throw new IllegalStateException("Expected index at " + start);\n        }'
    first_new = """    private int readIndex() {
        int start = pos;
        if (pos < path.length() && path.charAt(pos) == '-') {
            pos++;
        }
        int digits = pos;
        while (pos < path.length() && Character.isDigit(path.charAt(pos))) {
            pos++;
        }
        if (digits == pos) {
            throw new IllegalStateException("Expected index at " + start);
        }"""
    first_edit_idx = t.index()
    t.act("", repo.replace(pc, old, first_new))
    repro2 = f"cd {root} && mvn -q -o compile && {repro}"
    ev_line = lineno(EVALUATOR, "current = list.get(index);")
    t.act(
        "",
        repo.sh(
            repro2,
            'Exception in thread "main" java.lang.IndexOutOfBoundsException: '
            "Index -1 out of bounds for length 3\n"
            "\tat java.base/jdk.internal.util.Preconditions.outOfBounds(Preconditions.java:100)\n"
            "\tat java.base/jdk.internal.util.Preconditions.outOfBoundsCheckIndex"
            "(Preconditions.java:106)\n"
            "\tat java.base/jdk.internal.util.Preconditions.checkIndex(Preconditions.java:302)\n"
            "\tat java.base/java.util.Objects.checkIndex(Objects.java:385)\n"
            "\tat java.base/java.util.ImmutableCollections$ListN.get(ImmutableCollections.java:687)\n"
            f"\tat com.acme.jsonpath.Evaluator.read(Evaluator.java:{ev_line})\n"
            "\tat com.acme.jsonpath.JsonPath.read(JsonPath.java:27)\n"
            "\tat Repro.main(Repro.java:8)",
            code=1, cwd="/tmp",
        ),
    )
    t.act(
        "Now the evaluator.",
        repo.replace(
            ev,
            "                int index = token.index();\n"
            "                if (index >= list.size()) {",
            "                int index = token.index() < 0 ? list.size() + token.index() : token.index();\n"
            "                if (index < 0 || index >= list.size()) {",
        ),
    )
    t.act("", repo.sh(repro2, "c", cwd="/tmp"))
    mvn = f"cd {root} && mvn -o test -Dtest='PathCompilerTest,JsonPathTest'"
    neg_line = lineno(PATH_COMPILER_TEST, 'new PathCompiler("$.items[-1]")')
    fail_msg = "Expected java.lang.IllegalStateException to be thrown, but nothing was thrown."
    body = MVN_HEAD + "\n" + "\n".join([
        ("[ERROR] Tests run: 8, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.018 s "
        "<<< FAILURE! -- in com.acme.jsonpath.PathCompilerTest"),
        ("[ERROR] com.acme.jsonpath.PathCompilerTest.rejectsNegativeIndex -- Time elapsed: "
        "0.006 s <<< FAILURE!"),
        f"org.opentest4j.AssertionFailedError: {fail_msg}",
        "\tat org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:152)",
        "\tat org.junit.jupiter.api.AssertThrows.assertThrows(AssertThrows.java:73)",
        "\tat org.junit.jupiter.api.AssertThrows.assertThrows(AssertThrows.java:35)",
        "\tat org.junit.jupiter.api.Assertions.assertThrows(Assertions.java:3115)",
        f"\tat com.acme.jsonpath.PathCompilerTest.rejectsNegativeIndex(PathCompilerTest.java:{neg_line})",
        "\tat java.base/java.lang.reflect.Method.invoke(Method.java:568)",
        "\tat java.base/java.util.ArrayList.forEach(ArrayList.java:1511)",
        "",
        "[INFO] ",
        "[INFO] Results:",
        "[INFO] ",
        "[ERROR] Failures: ",
        f"[ERROR]   PathCompilerTest.rejectsNegativeIndex:{neg_line} {fail_msg}",
        "[INFO] ",
        "[ERROR] Tests run: 12, Failures: 1, Errors: 0, Skipped: 0",
        "[INFO] ",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] BUILD FAILURE",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Total time:  3.412 s",
        "[INFO] Finished at: 2025-03-14T10:22:31Z",
        "[INFO] ------------------------------------------------------------------------",
        ("[ERROR] Failed to execute goal org.apache.maven.plugins:maven-surefire-plugin:3.2.2:test "
        "(default-test) on project jsonpath: There are test failures."),
        "[ERROR] ",
        "[ERROR] Please refer to /testbed/target/surefire-reports for the individual test results.",
        ("[ERROR] Please refer to dump files (if any exist) [date].dump, [date]-jvmRun[N].dump and "
        "[date].dumpstream."),
        "[ERROR] -> [Help 1]",
    ])
    t.act("Let me run the relevant test classes.", repo.sh(mvn, body, code=1))
    t.act(
        "`rejectsNegativeIndex` asserted the old behaviour that the issue asks to change; "
        "I'll turn it into a test of the new behaviour.",
        repo.replace(
            pct,
            "    void rejectsNegativeIndex() {\n"
            "        assertThrows(IllegalStateException.class, () -> new PathCompiler(\"$.items[-1]\").compile());",
            "    void compilesNegativeIndex() {\n"
            "        assertEquals(List.of(Token.property(\"items\"), Token.index(-1)), "
            "new PathCompiler(\"$.items[-1]\").compile());",
        ),
    )
    ok = MVN_HEAD.replace("Compiling 2 source files", "Compiling 1 source file") + "\n" + "\n".join([
        ("[INFO] Tests run: 8, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.015 s -- in "
        "com.acme.jsonpath.PathCompilerTest"),
        "[INFO] ",
        "[INFO] Results:",
        "[INFO] ",
        "[INFO] Tests run: 12, Failures: 0, Errors: 0, Skipped: 0",
        "[INFO] ",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] BUILD SUCCESS",
        "[INFO] ------------------------------------------------------------------------",
        "[INFO] Total time:  3.107 s",
        "[INFO] Finished at: 2025-03-14T10:24:02Z",
        "[INFO] ------------------------------------------------------------------------",
    ])
    run2_idx = t.index() + 1
    t.act("", repo.sh(mvn, ok))
    t.act(
        "",
        plan(tid, [
            ("Explore the compiler and evaluator", "done", ""),
            ("Reproduce with a small Java class", "done", "/tmp/Repro.java"),
            ("Accept negative indices in PathCompiler", "done", ""),
            ("Resolve negative indices in Evaluator", "done", ""),
            ("Run PathCompilerTest and JsonPathTest", "done", "12 tests pass"),
        ]),
    )
    t.act("", finish("Negative indices are now compiled and resolved from the end of arrays."))
    expected = Accepted(
        conversion="final `finish` call without reply dropped",
        trailing=("finish",),
        files_changed=sorted([ev, pc, pct]),
        first_edit=FirstEdit(path=pc, code=first_new, message_index=first_edit_idx),
        test_counts=Counts(command=mvn, k=2, passed=12, failed=0, errors=0,
                           message_index=run2_idx,
                           note="run 1 (`Tests run: 12, Failures: 1`) prints no passed count (11 would be "
                                "arithmetic), so run 2 is asked: its aggregate line after `[INFO] Results:`, "
                                "not the per-class lines (4 and 8)"),
        first_error=FirstError(command=repro, k=1, exception=exc,
                               note="printed as `Exception in thread \"main\" ...`; a later "
                                    "IndexOutOfBoundsException belongs to another command"),
        dropped=[],
    )
    return synthetic_row(
        tid, "acme__jsonpath-212", "acme/jsonpath", None, "submit", repo.diff(), TOOLS_NEW, t.messages,
        "Java/Maven row with repo root /testbed: Maven per-class and aggregate `Tests run:` "
        "lines, a Java `Exception in thread \"main\"` error and an out-of-repo /tmp create; "
        "all four questions kept.",
        expected,
    )
