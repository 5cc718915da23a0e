"""The command line, checked before Hydra writes anything (``.hydra/``, ``main.log``): a secret or
a key given literally, a ``resume=`` path that is not a job, an output directory that holds
something, a sweep directory in use, a ``+KEY`` that is a typo; and Hydra's own multi-line
errors as one line with the fix. Each problem is a :class:`UserError`: one line, exit 2."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from bench.config.checks import flat_keys, is_info, is_sweep, quote_override
from bench.core import redact
from bench.core.errors import BenchError, program
from bench.store.jobdir import GIVEN_DIRS, JobDirError, check_new, check_resume_path

__all__ = ["UserError", "config_error_line", "check_added_keys", "check_groups", "check_habits", "check_stack", "hydra_error_line", "lock_sweep_dir",
           "preflight_args"]


class UserError(BenchError, RuntimeError):
    """A problem with the user's input or environment: reported in one line, no traceback."""



def _key(item: str) -> str | None:
    """The config key an override sets (``+a.b=1`` -> ``a.b``); None for a flag or a bare word."""
    return item.partition("=")[0].lstrip("+~") if "=" in item and not item.startswith("-") else None


def _value(item: str) -> str:
    value = item.partition("=")[2]
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def preflight_args(args: list[str]) -> list[str]:
    """Check the command line before Hydra writes anything; return it with ``resume=`` quoted for Hydra.

    Raises UserError (one line) for a key on the command line, a ``resume`` path that is not a
    job or is running, and a new job's ``hydra.run.dir`` / ``output_dir`` that is not empty.
    """
    refusal = redact.literal_secret(args)  # also before --cfg/--help: --cfg prints the composed config
    if refusal:
        raise UserError(refusal)
    if is_info(args):
        return args
    check_groups(args)
    sweep = is_sweep(args)
    out: list[str] = []
    resume = None
    for item in args:
        if _key(item) == "resume":
            resume = _value(item)
            if resume in ("", "null"):
                out.append(item)
                continue
            try:
                check_resume_path(resume)
            except JobDirError as err:
                raise UserError(str(err)) from None
            item = f"{item.partition('=')[0]}={quote_override(resume)}"
        out.append(item)
    for item in args:
        if sweep and _key(item) == "hydra.sweep.dir" and Path(_value(item)).is_dir():
            if any(Path(_value(item)).rglob("run.json")):
                raise UserError(f"hydra.sweep.dir={_value(item)} already holds jobs: a sweep needs a directory "
                                "of its own (resume its jobs one by one with resume=JOB_DIR)")
    if not resume and not sweep:
        for item in args:
            if _key(item) in ("hydra.run.dir", "output_dir") and _value(item) not in ("", "null"):
                try:
                    check_new(_value(item))
                except JobDirError as err:
                    raise UserError(str(err)) from None
                if Path(_value(item)).is_dir():  # a refused job leaves it as it found it (bench.cli.job_failure)
                    GIVEN_DIRS.add(str(Path(_value(item)).resolve()))
    return out


# The config groups a job cannot run without (the others are read by some arms only: ~summarizer is fine)
REQUIRED_GROUPS = ("dataset", "arm", "model", "judge")


def _options(group: str) -> list[str]:
    from bench.config.checks import CONF_DIR

    return sorted(p.stem for p in (CONF_DIR / group).glob("*.yaml"))


def check_groups(args: list[str]) -> None:
    """A group left out (``~arm``) or set to null (``arm=null``): one line saying what a job needs,
    not Hydra's ValueError or a missing interpolation key."""
    from bench.config.checks import CONF_DIR

    for item in args:
        if item.startswith("-"):
            continue
        key, _, value = item.partition("=")
        group = key.lstrip("+~")
        if "." in group or "@" in group or not (CONF_DIR / group).is_dir() or group in ("hydra", "experiment"):
            continue
        dropped = key.startswith("~")
        if not dropped and value.strip("'\"") not in ("null", "None", "~", ""):
            continue
        options = ", ".join(_options(group))
        if group in REQUIRED_GROUPS:
            article = "an" if group[0] in "aeiou" else "a"
            raise UserError(f"{item}: a job needs {article} {group} (choose one with {group}=OPTION; options: {options})")
        if not dropped:
            raise UserError(f"{item}: a group is left out with ~{group}, or choose one with {group}=OPTION "
                            f"(options: {options})")


def lock_sweep_dir(args: list[str]) -> Any:
    """A sweep into a given ``hydra.sweep.dir`` locks it: a second sweep started there at the same time
    is refused (their jobs and reports would mix). Returns the held lock (None: nothing to lock)."""
    from bench.store.jobdir import JobLock

    if not is_sweep(args):
        return None
    given = [_value(a) for a in args if _key(a) == "hydra.sweep.dir"]
    if not given or given[-1] in ("", "null"):
        return None  # a default sweep directory is made unique (bench.cli.callbacks.FreshDirCallback)
    path = Path(given[-1])
    if path.is_dir():  # it existed before the command: a refused sweep empties it, never removes it
        GIVEN_DIRS.add(str(path.resolve()))
    try:
        path.mkdir(parents=True, exist_ok=True)
        return JobLock(path).__enter__()
    except (OSError, JobDirError) as err:
        busy = "in use" in str(err)
        raise UserError(f"hydra.sweep.dir={path} is in use by another sweep running now: give this sweep a "
                        "directory of its own" if busy else f"hydra.sweep.dir={path}: {err}") from None


def _known_top_level() -> set[str]:
    """Top-level names an override may add with ``+``: the primary config's keys, its groups, ``hydra``."""
    from bench.config.checks import CONF_DIR

    keys = {str(k) for k in OmegaConf.load(CONF_DIR / "config.yaml") if k != "defaults"}
    return keys | {p.name for p in CONF_DIR.iterdir() if p.is_dir()} | {"hydra"}


# Hydra's own command-line flags (``--hydra-help``): anything else written ``--name`` is a habit from
# argparse tools, where bench takes ``name=value``
HYDRA_FLAGS = {"--help", "--hydra-help", "--version", "--cfg", "--resolve", "--package", "--run", "--multirun",
               "--shell-completion", "--config-path", "--config-name", "--config-dir", "--experimental-rerun",
               "--info"}


def _groups() -> dict[str, list[str]]:
    """Each config group (a directory of ``conf/``, ``hydra`` left out) and its options."""
    from bench.config.checks import CONF_DIR

    return {d.name: sorted(p.stem for p in d.glob("*.yaml")) for d in sorted(CONF_DIR.iterdir())
            if d.is_dir() and d.name != "hydra"}


def check_habits(args: list[str]) -> None:
    """Habits from other tools, each refused in one line with the likely fix before anything runs:
    ``--arm full`` (bench takes ``arm=full``) and a comma list without ``-m`` (a sweep: one job
    per value). The ones Hydra meets while composing (``experiment=smoke`` without ``+``,
    ``model=openai/gpt-4o``, ``n=10`` for ``arm.n``) are named by :func:`hydra_error_line`."""
    for position, item in enumerate(args):
        if not item.startswith("--") or item.partition("=")[0] in HYDRA_FLAGS or item == "--":
            continue
        name, has_value, value = item[2:].partition("=")
        following = args[position + 1] if position + 1 < len(args) else ""
        if not has_value and following and not following.startswith("-") and "=" not in following:
            value, shown = following, f"{item} {following}"
        else:
            shown = item
        key = name.replace("-", "_") if name.replace("-", "_") in _known_top_level() else name
        raise UserError(f"{shown}: bench takes key=value overrides, not --options: write {key}={value or 'VALUE'} "
                        "(--help lists the groups and keys)")
    if is_sweep(args):
        return
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    for item in args:
        if "=" not in item or item.startswith("-"):
            continue
        try:
            override = parser.parse_override(item)
        except Exception:  # noqa: BLE001 - Hydra reports the syntax error itself
            continue
        if override.is_sweep_override():
            key, _, value = item.partition("=")
            raise UserError(f"{item} is a sweep (one job per value): add -m to run it ({program('bench.main')} -m "
                            f"{item}); for one job whose value holds a comma, quote it: {key}='{value}'")


def _option_data(group: str, option: str) -> object:
    from bench.config.checks import CONF_DIR

    try:
        return OmegaConf.to_container(OmegaConf.load(CONF_DIR / group / f"{option}.yaml"), resolve=False)
    except Exception:  # noqa: BLE001 - a hint only
        return None


def _leaf_keys(group: str, option: str) -> set[str]:
    data = _option_data(group, option)
    return set(flat_keys(data)) if isinstance(data, dict) else set()


def _provider_of(group: str, option: str) -> str | None:
    """The ``provider`` an option of a model group names literally (``anthropic``), None when interpolated."""
    data = _option_data(group, option)
    value = data.get("provider") if isinstance(data, dict) else None
    return value if isinstance(value, str) and "${" not in value else None


def _qualified(key: str) -> list[str]:
    """``group.key (group=option)`` for every group option that has ``key`` (``n`` -> ``arm.n (arm=nlatest)``)."""
    found = []
    for group, options in _groups().items():
        if group == "experiment":
            continue
        having = [o for o in options if key in _leaf_keys(group, o)]
        if having:
            found.append(f"{group}.{key}" + (f" ({group}={having[0]})" if len(having) < len(options) else ""))
    return found


def _bad_option_line(group: str, option: str, options: list[str]) -> str | None:
    """An option of a model group written as another tool writes it: ``model=openai/gpt-4o``
    (provider/model) or ``model=gpt-4o`` (a model's name where the group wants a client)."""
    clients = [o for o in options if "base_url" in _leaf_keys(group, o)]  # the options that call a model
    if not clients or option in options:
        return None
    provider, _, rest = option.partition("/")  # openai/gpt-4o: a provider prefix; Qwen/Qwen2.5-7B: a name
    # a bare name goes with the Anthropic-native option when it is a Claude model, else with an OpenAI-compatible one
    native = [o for o in clients if _provider_of(group, o) == "anthropic"]
    compatible = [o for o in clients if o not in native] or clients
    bare = native[0] if native and option.lower().startswith("claude") else compatible[0]
    client, name = (provider, rest) if rest and provider in clients else (bare, option)
    return (f"unknown option {group}={option}: {group} is one of {', '.join(options)} and a model's name goes in "
            f"{group}.name: write {group}={client} {group}.name={name}")


def check_added_keys(args: list[str]) -> None:
    """``+KEY=V`` adds a key: one whose top-level name the config does not know is a typo
    (``+datset.path=x``, Hydra's own hint for ``datset.path=x``), not a new setting to ignore."""
    known = None
    for item in args:
        if not item.startswith("+") or "=" not in item:
            continue
        key = item.partition("=")[0].lstrip("+")
        top = re.split(r"[./]", key, maxsplit=1)[0]
        known = known if known is not None else _known_top_level()
        if top not in known:
            close = difflib.get_close_matches(top, sorted(known), n=1)
            hint = f" (did you mean {close[0]}{key[len(top):]}?)" if close else ""
            raise UserError(f"unknown config key '{key}': '{top}' is not a key or group of the config{hint}")


def _provider_arm(name: str) -> bool:
    """Whether arm ``name``'s views come from a provider's server (its YAML names the ``provider``)."""
    from bench.config.checks import CONF_DIR

    path = CONF_DIR / "arm" / f"{name}.yaml"
    return path.is_file() and re.search(r"^provider:", path.read_text(encoding="utf-8"), re.MULTILINE) is not None


def check_stack(args: list[str]) -> None:
    """A single run with a real answering model whose arm would summarize with the offline stand-in
    (``summarizer`` not chosen), or with an arm whose views come from a provider the answering model
    is not of (``arm=anthropic_compact`` offline ...), is refused here, before Hydra writes anything (a
    sweep's jobs are refused one by one in ``bench.main``). Composed only when the command line picks a
    model other than the offline one, an experiment, or a provider's arm, so the default run pays nothing."""
    if is_sweep(args) or is_info(args):
        return
    picks = [a for a in args if (_key(a) in ("model", "experiment") and _value(a) != "offline")
             or (_key(a) == "arm" and _provider_arm(_value(a)))]
    if not picks:
        return
    from bench.config.arms import mixed_stack, provider_refusal
    from bench.config.checks import compose

    overrides = [a for a in args if not a.startswith("-") and not (_key(a) or "").startswith(("hydra.", "hydra/"))]
    try:
        cfg = compose(overrides)
    except Exception:  # noqa: BLE001 - Hydra reports a bad command line itself, in one line
        return
    refusal = mixed_stack(cfg, overrides) or provider_refusal(cfg)
    if refusal:
        raise UserError(refusal)


def _config_keys(args: list[str]) -> list[str]:
    """Every key (and key prefix) of the config the group choices in ``args`` select; [] if it cannot be built."""
    from bench.config.checks import compose

    groups = [a for a in args if "=" in a and not a.startswith(("+", "~", "-"))
              and "." not in a.partition("=")[0] and a.partition("=")[0] in _known_top_level()]
    for overrides in (groups, []):
        try:
            data = OmegaConf.to_container(compose(overrides), resolve=False)
        except Exception:  # noqa: BLE001 - a hint only: no hint rather than a second error
            continue
        from bench.config.checks import source_keys

        keys: set[str] = {f"dataset.{k}" for k in source_keys()}  # what some dataset takes
        for leaf in flat_keys(data):
            parts = leaf.split(".")
            keys.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        return sorted(keys)
    return []


def config_error_line(err: BaseException, args: list[str]) -> str:
    """The one line a command prints when its overrides do not compose or its config is refused: Hydra's
    own errors as :func:`hydra_error_line` says them, any other error's first line (``one_line``)."""
    from hydra.errors import HydraException

    from bench.core.failures import one_line

    return hydra_error_line(err, args) if isinstance(err, HydraException) else one_line(err)


def hydra_error_line(err: BaseException, args: list[str]) -> str:
    """Hydra's multi-line message for a bad group option, key or override as one line with the fix."""
    from hydra.errors import MissingConfigException

    text = str(err).strip()
    if isinstance(err, MissingConfigException) and (found := re.search(r"Could not find '([^']+)'", text)):
        first, _, rest = found.group(1).partition("/")
        if first in _groups() and (line := _bad_option_line(first, rest, _groups()[first])):
            return line
        group, _, option = found.group(1).rpartition("/")
        options = [o for o in (err.options or []) if "/" not in o]
        close = difflib.get_close_matches(option, options, n=1)
        if group and options:
            return (f"unknown option {group}={option} (options: {', '.join(options)}"
                    + (f"; did you mean {group}={close[0]}?)" if close else ")"))
    if found := re.search(r"Could not override '([^']+)'", text):
        key = found.group(1)
        groups = _groups()
        if key in groups and "No match in the defaults list" in text:  # a group without a default: added with +
            value = next((a.partition("=")[2] for a in args if a.partition("=")[0] == key), "NAME")
            return (f"{key}={value}: {key} has no default to override, add it with +: write +{key}={value} "
                    f"(options: {', '.join(groups[key])})")
        if "." not in key and (qualified := _qualified(key)):
            value = next((a.partition("=")[2] for a in args if a.partition("=")[0] == key), "VALUE")
            return (f"unknown config key '{key}': keys are written in full, e.g. {qualified[0].split(' ')[0]}={value}"
                    + (f" ({qualified[0].split(' ', 1)[1][1:-1]})" if " " in qualified[0] else "")
                    + (f"; also {', '.join(q.split(' ')[0] for q in qualified[1:])}" if len(qualified) > 1 else ""))
        if key.startswith("dataset.") and key.count(".") == 1:
            from bench.config.checks import unused_source_key

            value = next((a.partition("=")[2] for a in args if a.partition("=")[0] == key), "")
            chosen = next((a.partition("=")[2] for a in args if a.partition("=")[0] == "dataset"), "sample")
            if refusal := unused_source_key(key.split(".", 1)[1], value, chosen):
                return refusal
        close = difflib.get_close_matches(key, _config_keys(args), n=1, cutoff=0.6)
        return f"unknown config key '{key}'" + (f" (did you mean {close[0]}?)" if close else "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    cause = err.__cause__
    message = lines[0] if lines else type(err).__name__
    if cause is not None and str(cause).strip():
        message = f"{message} ({str(cause).strip().splitlines()[0]})"
    return redact.scrub(message)

