"""Every option of every config group composes with Hydra's compose API and instantiates."""

from __future__ import annotations

import pytest
from hydra.utils import instantiate

from bench.config.arms import build_policy
from bench.config.checks import dataset_source
from bench.sources import Source
from bench.text.tokens import TokenCounter

from jobs import compose_with
from paths import CONF_DIR

GROUPS = sorted(p.name for p in CONF_DIR.iterdir() if p.is_dir() and p.name not in ("hydra", "experiment"))
OPTIONS = [(group, option.stem) for group in GROUPS for option in sorted((CONF_DIR / group).glob("*.yaml"))]
# Options whose required values a user must give on the command line.
REQUIRED = {("dataset", "local"): ["dataset.path=/tmp/rows.parquet"], ("dataset", "chat"): ["dataset.path=/tmp/log.jsonl"], ("arm", "nlatest"): ["arm.n=10"],
            ("arm", "custom"): ["arm.policy=custom_policies:last_ten"],
            # the provider arms build their views with the answering model: one of their provider
            ("arm", "openai_compact"): ["model=openai", "model.api=responses"],
            ("arm", "anthropic_compact"): ["model=anthropic"], ("arm", "anthropic_clear"): ["model=anthropic"]}


def test_groups_are_the_spec_groups():
    assert {"dataset", "arm", "prompt", "mechanism", "model", "judge"} <= set(GROUPS)


@pytest.mark.parametrize("group,option", OPTIONS, ids=[f"{g}={o}" for g, o in OPTIONS])
def test_option_composes_and_instantiates(group, option, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-config-only")  # instantiating must not call out
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-config-only")
    cfg = compose_with(f"{group}={option}", *REQUIRED.get((group, option), []))
    assert cfg[group] is not None
    if group == "arm":
        policy = build_policy(cfg, TokenCounter())
        assert callable(policy)
    elif group == "dataset":  # a source class, built as the runner builds it
        source = dataset_source(cfg.dataset)
        assert isinstance(source, Source) and type(source).__name__ == cfg.dataset._target_.rsplit(".", 1)[1]
    elif "_target_" in cfg[group]:
        assert instantiate(cfg[group], _convert_="object") is not None


def test_every_key_in_group_files_has_a_comment():
    """A value line carries a comment, inline or on the line above."""
    for path in CONF_DIR.rglob("*.yaml"):
        previous = ""
        for number, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.strip()
            if (":" in stripped and not stripped.startswith(("#", "-")) and "#" not in stripped
                    and not stripped.endswith(":") and not stripped.startswith("_target_")
                    and not previous.startswith("#")):
                pytest.fail(f"{path.relative_to(CONF_DIR)}:{number} has no comment: {stripped}")
            previous = stripped or previous


def test_bad_override_fails_at_compose_time():
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException):
        compose_with("arm=nope")
