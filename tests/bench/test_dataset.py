"""bench.dataset (show or upload the job's cases as a Langfuse dataset): a bad override, an unknown option or
a key on its command line is one line, exit 2, as bench.main says it (it was Hydra's traceback, exit 1)."""

from __future__ import annotations

import pytest

from bench.dataset import main as dataset_main


@pytest.mark.parametrize("override, expected", [
    ("bogus.key=1", "error: unknown config key 'bogus.key'"),
    ("dataset=nope", "error: unknown option dataset=nope (options: "),
    ("dataset.limit=[1", "error: "),
    ("+model.api_key=sk-abcdefghijklmnopqrstuvwx", "error: model.api_key: do not put keys in the config"),
])
def test_a_bad_override_or_a_key_is_one_line_exit_2(capsys, override, expected):
    assert dataset_main([override]) == 2
    out = capsys.readouterr()
    assert out.err.startswith(expected) and out.err.count("\n") == 1 and "Traceback" not in out.err, out.err
    assert out.out == "" and "sk-abcdefghijklmnop" not in out.err
