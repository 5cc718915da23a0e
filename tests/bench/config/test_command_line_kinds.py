"""What kind of command line it is, decided in one place (``bench.config.checks``): the entry point, the
command-line checks and the sweep's prerequisite check all ask ``is_sweep`` / ``is_info``, so a flag added
to one list cannot make them disagree (before, five copies of the flag tuples, one without ``-sc``)."""

from __future__ import annotations

import pytest

from bench.cli import argv
from bench.config.checks import INFO_FLAGS, SWEEP_FLAGS, is_info, is_sweep


@pytest.mark.parametrize("flag", SWEEP_FLAGS)
def test_either_sweep_flag_anywhere_makes_a_sweep(flag):
    assert is_sweep(["arm=full", flag, "dataset=ops"])
    assert not is_sweep(["arm=full", "dataset=ops", "multirun=1"])  # a value, not the flag


@pytest.mark.parametrize("flag", INFO_FLAGS)
def test_an_info_flag_skips_the_job_checks_but_not_the_secret_check(flag, tmp_path):
    assert is_info([flag])
    # no job runs: an output directory that holds something is no reason to refuse --help
    (tmp_path / "kept.txt").write_text("x")
    args = [flag, f"output_dir={tmp_path}"]
    assert argv.preflight_args(args) == args
    # but --cfg prints the composed config: a password in a URL is refused before it can be printed
    with pytest.raises(argv.UserError, match="credentials"):
        argv.preflight_args([flag, "model=openai", "model.base_url=https://u:pw123secret@host.example/v1"])


def test_a_plain_job_is_neither():
    assert not is_sweep(["arm=nlatest", "arm.n=10"]) and not is_info(["arm=nlatest", "arm.n=10"])
