"""Row 007: trailing assistant message with 2 parallel calls, only 1 result (trailing drop)."""

from __future__ import annotations

from samplegen.expected import Accepted, Counts, FirstEdit, FirstError, SampleRow, synthetic_row
from samplegen.openhands import SYSTEM_PROMPT, TOOLS_NEW, think, user_prompt
from samplegen.runners import lineno, pytest_line, pytest_sep
from samplegen.trajectory import Call, Repo, Traj

GEO = '''"""Great-circle distances."""

from __future__ import annotations

import math

EARTH_RADIUS_KM = 6371.0088


class ProjectionError(ValueError):
    """Raised for coordinates outside the valid range."""


def _check(lat: float, lon: float) -> None:
    if not -90.0 <= lat <= 90.0:
        raise ProjectionError(f"latitude {lat} out of range")
    if not -180.0 <= lon <= 180.0:
        raise ProjectionError(f"longitude {lon} out of range")


def haversine(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance in kilometres between two (lat, lon) points."""
    (lat1, lon1), (lat2, lon2) = a, b
    _check(lat1, lon1)
    _check(lat2, lon2)
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp = p2 - p1
    dl = math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(h))


def normalize_lon(lon: float) -> float:
    """Wrap a longitude into [-180, 180)."""
    return (lon + 180.0) % 360.0 - 180.0
'''

GEO_TEST = '''import pytest

from geo.distance import ProjectionError, haversine, normalize_lon


def test_same_point():
    assert haversine((10.0, 20.0), (10.0, 20.0)) == 0.0


def test_berlin_paris():
    assert round(haversine((52.52, 13.405), (48.857, 2.352))) == 878


def test_rejects_bad_latitude():
    with pytest.raises(ProjectionError):
        haversine((91.0, 0.0), (0.0, 0.0))


def test_rejects_bad_longitude():
    with pytest.raises(ProjectionError):
        haversine((0.0, 190.0), (0.0, 0.0))


def test_normalize_lon():
    assert normalize_lon(190.0) == -170.0
'''


def _haversine(a, b):
    import math
    (lat1, lon1), (lat2, lon2) = a, b
    p1, p2 = math.radians(lat1), math.radians(lat2)
    h = (math.sin((p2 - p1) / 2) ** 2
         + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2)
    return 2 * 6371.0088 * math.asin(math.sqrt(h))


def build() -> SampleRow:
    tid = "synthetic-007"
    root = "/workspace/acme__geo__1.2"
    repo = Repo(root, {"geo/distance.py": GEO, "tests/test_distance.py": GEO_TEST})
    t = Traj(tid)
    t.system(SYSTEM_PROMPT)
    t.user(user_prompt(root, """
haversine rejects longitudes in the 0..360 convention

Some GPS receivers report longitudes in `[0, 360)`. `haversine((52.5, 13.4), (40.7, 286.0))`
raises `ProjectionError: longitude 286.0 out of range` although 286.0 is the same meridian
as -74.0. Longitudes should be wrapped with `normalize_lon` before the range check.
"""))
    t.act("", repo.sh(
        f"cd {root} && ls -R geo tests",
        "geo:\n__init__.py\ncache.py\ndistance.py\ntesting.py\n\n"
        "tests:\n__init__.py\ntest_cache.py\ntest_distance.py",
    ))
    t.act("", repo.view("geo/distance.py"))
    repro = (f"cd {root} && python -c \"from geo.distance import haversine; "
             "print(haversine((52.5, 13.4), (40.7, 286.0)))\"")
    chk = lineno(GEO, "_check(lat2, lon2)")
    lon_raise = lineno(GEO, 'raise ProjectionError(f"longitude')
    exc = "geo.distance.ProjectionError: longitude 286.0 out of range"
    t.act("", repo.sh(
        repro,
        "Traceback (most recent call last):\n"
        '  File "<string>", line 1, in <module>\n'
        f'  File "{root}/geo/distance.py", line {chk}, in haversine\n'
        "    _check(lat2, lon2)\n"
        f'  File "{root}/geo/distance.py", line {lon_raise}, in _check\n'
        '    raise ProjectionError(f"longitude {lon} out of range")\n' + exc,
        code=1,
    ))
    first_new = (
        "    (lat1, lon1), (lat2, lon2) = a, b\n"
        "    # GPS receivers may report longitudes in [0, 360); wrap them first.\n"
        "    lon1, lon2 = normalize_lon(lon1), normalize_lon(lon2)\n"
        "    _check(lat1, lon1)"
    )
    first_edit_idx = t.index()
    t.act("", repo.replace("geo/distance.py",
                           "    (lat1, lon1), (lat2, lon2) = a, b\n    _check(lat1, lon1)",
                           first_new))
    t.act("", repo.sh(repro, repr(_haversine((52.5, 13.4), (40.7, -74.0)))))
    test_cmd = f"cd {root} && python -m pytest tests"
    bad_lon_line = lineno(GEO_TEST, "haversine((0.0, 190.0), (0.0, 0.0))")
    cache_line = 17  # tests/test_cache.py is not shown; its third test starts here
    body = "\n".join([
        pytest_sep("test session starts"),
        "platform linux -- Python 3.11.9, pytest-8.3.3, pluggy-1.5.0",
        f"rootdir: {root}",
        "collected 8 items",
        "",
        pytest_line("tests/test_cache.py ..E", "[ 37%]"),
        pytest_line("tests/test_distance.py ...F.", "[100%]"),
        "",
        pytest_sep("ERRORS"),
        pytest_sep("ERROR at setup of test_cache_roundtrip", "_"),
        f"file {root}/tests/test_cache.py, line {cache_line}",
        "  def test_cache_roundtrip(tmp_geo_cache):",
        "E       fixture 'tmp_geo_cache' not found",
        (">       available fixtures: cache, capfd, capfdbinary, caplog, capsys, capsysbinary, "
        "doctest_namespace, monkeypatch, pytestconfig, record_property, record_testsuite_property, "
        "record_xml_attribute, recwarn, tmp_path, tmp_path_factory, tmpdir, tmpdir_factory"),
        ">       use 'pytest --fixtures [testpath]' for help on them.",
        "",
        f"{root}/tests/test_cache.py:{cache_line}",
        pytest_sep("FAILURES"),
        pytest_sep("test_rejects_bad_longitude", "_"),
        "",
        "    def test_rejects_bad_longitude():",
        ">       with pytest.raises(ProjectionError):",
        "E       Failed: DID NOT RAISE <class 'geo.distance.ProjectionError'>",
        "",
        f"tests/test_distance.py:{bad_lon_line - 1}: Failed",
        pytest_sep("short test summary info"),
        ("FAILED tests/test_distance.py::test_rejects_bad_longitude - Failed: DID NOT RAISE "
        "<class 'geo.distance.ProjectionError'>"),
        "ERROR tests/test_cache.py::test_cache_roundtrip",
        pytest_sep("1 failed, 6 passed, 1 error in 0.52s"),
    ])
    run1_idx = t.index() + 1
    t.act("", repo.sh(test_cmd, body, code=1))
    t.act("", think(
        "test_rejects_bad_longitude encodes the old behaviour: longitude 190 must now wrap to "
        "-170, not raise. The test_cache error is a missing fixture (tmp_geo_cache), unrelated "
        "to this change; probably provided by a plugin module."
    ))
    t.act("", repo.replace(
        "tests/test_distance.py",
        "def test_rejects_bad_longitude():\n"
        "    with pytest.raises(ProjectionError):\n"
        "        haversine((0.0, 190.0), (0.0, 0.0))",
        "def test_wraps_longitude():\n"
        "    assert haversine((0.0, 190.0), (0.0, -170.0)) == 0.0",
    ))
    t.act("", Call(
        "str_replace_editor",
        {"command": "view", "path": f"{root}/tests/conftest.py"},
        f"ERROR:\nInvalid `path` parameter: {root}/tests/conftest.py. The path "
        f"{root}/tests/conftest.py does not exist. Please provide a valid path.",
    ))
    t.act("", repo.sh(
        f"cd {root} && grep -rn \"tmp_geo_cache\" .",
        f"./tests/test_cache.py:{cache_line}:def test_cache_roundtrip(tmp_geo_cache):\n"
        "./docs/testing.md:8:Use the `tmp_geo_cache` fixture from `geo.testing` "
        "(enable it with `-p geo.testing`).",
    ))
    # trailing message: two parallel calls, only the first has a result (run out of steps)
    last_idx = t.index()
    t.act(
        "",
        repo.sh(f"cd {root} && git status --short",
                " M geo/distance.py\n M tests/test_distance.py"),
        Call("str_replace_editor", {"command": "view", "path": f"{root}/geo/testing.py"}, None),
    )
    expected = Accepted(
        conversion=(f"trailing assistant message {last_idx} (2 parallel calls, only the first "
                    f"has a result) dropped together with its result {last_idx + 1}"),
        trailing=("execute_bash", "str_replace_editor"),
        files_changed=["geo/distance.py", "tests/test_distance.py"],
        first_edit=FirstEdit(path="geo/distance.py", code=first_new, message_index=first_edit_idx),
        test_counts=Counts(command=test_cmd, k=1, passed=6, failed=1, errors=1,
                           message_index=run1_idx,
                           note="pytest `1 failed, 6 passed, 1 error` (setup error kept apart)"),
        first_error=FirstError(command=repro, k=1, exception=exc),
        dropped=[],
    )
    return synthetic_row(
        tid, "acme__geo-64", "acme/geo", False, "max_iterations", repo.diff(), TOOLS_NEW, t.messages,
        "max_iterations row whose last assistant message has two parallel calls with only one "
        "result (trailing drop, not rejected); pytest summary with a setup error; all four "
        "questions kept.",
        expected,
    )
