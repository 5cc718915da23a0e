"""Secrets: scrub configured keys from every log line, error text and record; refuse keys on the command line.

Keys come from the environment only. Every key the benchmark reads (the model, judge and
summarizer keys named by ``api_key_env``, the Langfuse keys) is :func:`register`-ed; from
then on :func:`scrub` replaces it, and the base64 form of a Basic-auth pair, by ``***``.
:func:`install_logging` scrubs every log record of the process (a log-record factory, so
records of third-party loggers with their own handlers are covered too), escapes lone
surrogates so a log line can always be written, and quiets httpx's one-INFO-line-per-request.

:func:`literal_secret` checks command-line overrides before Hydra writes anything
(``.hydra/``, ``main.log``) and returns a one-line refusal when one carries a key::

    register(os.environ["OPENAI_API_KEY"])
    scrub("401: key sk-abc... refused")          # -> "401: key *** refused"
    literal_secret(["+model.api_key=sk-..."])    # -> "model.api_key: ... use the environment"
"""

from __future__ import annotations

import base64
import logging
import os
import re
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["guard_command_line", "register", "register_basic_auth", "register_env", "register_url", "register_urls", "scrub", "scrub_file", "mask_urls", "install_logging",
           "console_once", "literal_secret", "secret_in_setting", "looks_like_key", "check_key_env", "FILE_ONLY"]

_LOCK = threading.Lock()
_SECRETS: tuple[str, ...] = ()  # longest first, so a key is replaced before any shorter key inside it
_MIN_LEN = 8  # shorter values are not keys (and replacing them would mangle ordinary text)

# log records with this attribute set are written to log files only (the console shows the error once)
FILE_ONLY = "bench_file_only"
# registered from a URL's query or userinfo: scrubbed, but not "a key" that a config value may not hold
_URL_PARTS: set[str] = set()
# userinfo of registered URLs, however short: replaced only where it stands in a URL (``://user@``)
_USERINFOS: set[str] = set()
# fragments of registered URLs, however short: replaced only where they stand (``#fragment``)
_FRAGMENTS: set[str] = set()


def register(*values: str | None) -> None:
    """Scrub these values from now on (empty and short values are ignored)."""
    global _SECRETS
    new = {v.strip() for v in values if v and len(v.strip()) >= _MIN_LEN}
    if not new - set(_SECRETS):
        return
    with _LOCK:
        _SECRETS = tuple(sorted(set(_SECRETS) | new, key=len, reverse=True))


def register_basic_auth(user: str | None, password: str | None) -> None:
    """Scrub the password and the base64 ``user:password`` of a Basic Authorization header."""
    if user and password:
        register(password, base64.b64encode(f"{user}:{password}".encode()).decode("ascii"))


def register_env(*names: str | None) -> None:
    """Register the values of these environment variables (names that are unset are skipped)."""
    register(*(os.environ.get(name) for name in names if name))


_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>]+")


def register_url(url: str) -> None:
    """Scrub a URL's userinfo, its query string (whole, and each value) and its fragment: secrets until
    proven otherwise.

    A key in ``?key=...`` or ``user:pass@`` need not look like one; the URL is still shown with
    them replaced by ``***`` (``http://host/v1?***``).
    """
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return
    if "@" in parts.netloc:  # whole and the password alone (shorter values would mangle ordinary text)
        userinfo = parts.netloc.rpartition("@")[0]
        if userinfo:
            with _LOCK:
                _USERINFOS.add(userinfo)
        _register_url_parts(userinfo, userinfo.partition(":")[2])
    if parts.query:
        _register_url_parts(parts.query, *(v for _, v in parse_qsl(parts.query, keep_blank_values=True)))
    if parts.fragment:  # never sent to a server, so nothing but a pasted key has a reason to be there
        with _LOCK:
            _FRAGMENTS.add(parts.fragment)
        _register_url_parts(parts.fragment)


def _register_url_parts(*values: str) -> None:
    known = set(_SECRETS)
    _URL_PARTS.update(v.strip() for v in values if v and v.strip() not in known)
    register(*values)


def register_urls(value: object) -> None:
    """:func:`register_url` for every URL inside ``value`` (strings, lists, dicts: plain data; a config
    node is turned into plain data by the caller, ``bench.config.checks.plain``)."""
    if isinstance(value, str):
        for match in _URL.finditer(value):
            register_url(match.group().rstrip("'\",);"))
    elif isinstance(value, dict):
        for item in value.values():
            register_urls(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            register_urls(item)


def scrub_file(path: str | os.PathLike[str]) -> None:
    """Rewrite a text file that another library wrote (Hydra's ``.hydra/*.yaml``) with secrets scrubbed."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return
    clean = scrub(text)
    if clean != text:
        tmp = f"{path}.scrub.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(clean)
        os.replace(tmp, path)


def scrub(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, "***")
    for userinfo in tuple(_USERINFOS):
        if userinfo in text:
            text = text.replace(f"//{userinfo}@", "//***@")
    for fragment in tuple(_FRAGMENTS):
        if fragment in text:
            text = text.replace(f"#{fragment}", "#***")
    return text


_URL_USERINFO = re.compile(r"(://)[^/@\s'\"<>,]+@")
_URL_QUERY = re.compile(r"(://[^\s'\"<>,?#]*)([?#])[^\s'\"<>,]*")


def mask_urls(text: str) -> str:
    """Every URL's userinfo, query string and fragment in ``text`` as ``***``, registered or not: for
    names made of overrides (a sweep job's directory), resolved where no secret may be registered yet."""
    return _URL_QUERY.sub(r"\1\2***", _URL_USERINFO.sub(r"\1***@", text))


# --------------------------------------------------------------------------- logging

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _printable(text: str) -> str:
    """Scrubbed, with lone surrogates (from model replies) as ``\\udxxx`` so the line can be encoded."""
    text = scrub(text)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _SURROGATE.search(text) else text


_INSTALLED = False


_CHATTY = ("httpx", "httpcore")  # HTTP clients that log one INFO line per request (also httpx2 ...)


def install_logging() -> None:
    """Scrub every log record of this process; HTTP clients log warnings only; idempotent.

    Call again after logging is configured (Hydra configures it when the job starts): the
    handlers of the root logger then also drop the HTTP clients' INFO lines.
    """
    global _INSTALLED
    for name in (*_CHATTY, "httpx2", "httpcore2"):  # one INFO line per request would flood the progress bar
        logging.getLogger(name).setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _Quiet) for f in handler.filters):
            handler.addFilter(_Quiet())
    with _LOCK:
        if _INSTALLED:
            return
        _INSTALLED = True
        previous = logging.getLogRecordFactory()

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string: let the handler report it as usual
            return record
        record.msg, record.args = _printable(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = _printable(logging.Formatter().formatException(record.exc_info))
        return record

    logging.setLogRecordFactory(factory)


def console_once() -> None:
    """Console handlers skip records marked :data:`FILE_ONLY` (the error line is printed once, by main)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            if not any(isinstance(f, _FileOnly) for f in handler.filters):
                handler.addFilter(_FileOnly())


class _Quiet(logging.Filter):
    """Drops the INFO/DEBUG lines of HTTP clients (whatever their package's exact name)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not record.name.startswith(_CHATTY)


class _FileOnly(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, FILE_ONLY, False)


# --------------------------------------------------------------------------- command line

# Shapes of API keys and tokens (OpenAI/Anthropic/Langfuse sk-..., Hugging Face, GitHub, Slack,
# AWS, Google, Groq, bearer tokens, JWTs).
_KEY_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{16,}|sk_[A-Za-z0-9]{20,}|gsk_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|xox[abpors]-[A-Za-z0-9\-]{10,}"
    r"|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}|eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})"
    r"|\bBearer\s+[A-Za-z0-9._\-]{12,}")
# config keys that would hold a key itself (api_key_env holds a variable NAME and is checked apart; Anthropic's
# header is x-api-key)
_SECRET_NAMES = re.compile(r"(?:^|[._-])(?:api[_-]?key|secret(?:_key)?|password|passwd|access_token|auth_token|token"
                           r"|authorization|bearer)$", re.IGNORECASE)
_USERINFO = re.compile(r"://[^/@\s'\"]+@")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PG_PASSWORD_PARAM = re.compile(r"[?&](?:ssl)?password=", re.IGNORECASE)
# libpq's keyword/value form (``host=db password=...``): the other way a connection string carries one
_PG_PASSWORD_KEYWORD = re.compile(r"(?:^|[\s'\"])(?:ssl)?password\s*=", re.IGNORECASE)
_PG_HINT = "give the password in PGPASSWORD or ~/.pgpass (postgresql://user@host:port/db)"
_ENV_HINT = ("export the key in an environment variable and name that variable with "
             "model.api_key_env / judge.api_key_env / summarizer.api_key_env (LANGFUSE_* for Langfuse)")


def looks_like_key(value: str) -> bool:
    """True when ``value`` has the shape of an API key or token, or holds a registered secret."""
    return bool(_KEY_SHAPES.search(value)) or any(s in value for s in _SECRETS if s not in _URL_PARTS)


def check_key_env(where: str, value: object) -> str | None:
    """A refusal when ``<role>.api_key_env`` holds something that is not a variable name but looks like a key."""
    if value is None:
        return None
    text = str(value).strip()
    if text in ("", "null", "None"):
        return None
    named = bool(_ENV_NAME.match(text)) and not looks_like_key(text)
    if named and (text in os.environ or not _random_looking(text)):
        return None
    return (f"{where} must be the NAME of an environment variable, and this looks like a key itself: "
            f"do not put keys in the config or on the command line; {_ENV_HINT}")


def _random_looking(text: str) -> bool:
    """Long, mixed case and digits: a key pasted where a variable name belongs (names are upper case)."""
    return (len(text) >= 24 and any(c.isdigit() for c in text) and any(c.islower() for c in text)
            and any(c.isupper() for c in text))


def _env_secrets() -> list[str]:
    """Values of environment variables whose names say they hold a key (a key pasted from the environment)."""
    return [v.strip() for k, v in os.environ.items()
            if re.search(r"KEY|SECRET|TOKEN|PASSWORD", k, re.IGNORECASE) and len(v.strip()) >= 16
            and not re.search(r"[\s/]", v.strip())]


def secret_in_setting(key: str, value: str, *, command_line: bool = True) -> str | None:
    """A one-line refusal when setting ``key`` to ``value`` would put a key in the config, else None.

    ``command_line``: ``value`` is an override's raw text, whose ``{api_key: ...}`` dict keys are checked too.
    """
    key = key.lstrip("+~").strip()
    if key.endswith("api_key_env"):
        return check_key_env(key, value.strip("'\""))
    dict_key = command_line and re.search(r"(?:^|[{,\s])['\"]?(?:x-)?(?:api[_-]?key|secret|password|token|authorization)"
                                          r"['\"]?\s*:", value, re.IGNORECASE)
    if _SECRET_NAMES.search(key) or dict_key:
        return f"{key}: do not put keys in the config or on the command line; {_ENV_HINT}"
    cache_url = key == "cache.url" or key.endswith(".cache_url")  # as given, and as a model group reads it
    userinfo = _USERINFO.search(value)
    if userinfo and not (cache_url and ":" not in userinfo.group()[3:]):
        # a database user alone is not a credential (cache.url=postgresql://bench@db/bench; scrubbed anyway);
        # a password is refused like everywhere: PGPASSWORD or ~/.pgpass hold it
        hint = _PG_HINT if cache_url else _ENV_HINT
        return (f"{key}: the URL carries credentials (user:password@); do not put keys in the config or "
                f"on the command line; {hint}")
    if cache_url and _PG_PASSWORD_PARAM.search(value):  # libpq also reads ?password=...
        return f"{key}: the URL carries a password (?password=); do not put keys in the config or on the command line; {_PG_HINT}"
    if cache_url and _PG_PASSWORD_KEYWORD.search(value):  # ... and password=... in its keyword form
        return (f"{key}: the connection string carries a password (password=...); do not put keys in the config "
                f"or on the command line; {_PG_HINT}")
    if looks_like_key(value) or any(v in value for v in _env_secrets()):
        return f"{key}: the value looks like an API key; do not put keys in the config or on the command line; {_ENV_HINT}"
    return None


def literal_secret(overrides: Iterable[str]) -> str | None:
    """A one-line refusal when a command-line override carries a key, else None.

    Refused: a key-named setting (``+model.api_key=...``, ``...extra_body.authorization=...``),
    any value shaped like a key (also inside ``extra_body``/``model_kwargs`` dicts), credentials
    in a URL (``https://user:pass@host``), an ``api_key_env`` that holds a key instead of a
    variable name, and any value holding a key that is set in the environment.
    """
    for item in overrides:
        if item.startswith("-") or "=" not in item:
            continue
        key, _, value = item.partition("=")
        refusal = secret_in_setting(key, value)
        if refusal:
            return refusal
    return None


def guard_command_line(overrides: Iterable[str]) -> str | None:
    """What every command does with its overrides before it prints anything: the one-line refusal of a
    key or password written on the command line (:func:`literal_secret`, as ``bench.main`` refuses it),
    else None once the URLs' userinfo, query and fragment are registered for scrubbing and logging
    scrubs every record (:func:`register_urls`, :func:`install_logging`)."""
    overrides = list(overrides)
    refusal = literal_secret(overrides)
    if refusal:
        return refusal
    register_urls(overrides)
    install_logging()
    return None
