"""claude_print.command.config: where the file is, what it may hold, and how errors read.

Every parsing test runs twice: with tomllib (Python 3.11+; skipped before) and
with the fallback subset parser used on Python 3.8 - 3.10.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Dict, Iterator

import pytest

from claude_print.command import config
from claude_print.command.config import Defaults, config_path, load_defaults
from claude_print.errors import ClaudePrintError


@pytest.fixture(params=["tomllib", "subset"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "tomllib":
        if sys.version_info < (3, 11):
            pytest.skip("tomllib needs Python 3.11+")
    else:
        monkeypatch.setattr(config, "_tomllib", lambda: None)
    yield request.param


def write_config(home: Path, text: str) -> Dict[str, str]:
    path = home / ".config" / "claude-print" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return {"HOME": str(home)}


def load_error(tmp_path: Path, text: str) -> ClaudePrintError:
    env = write_config(tmp_path, text)
    with pytest.raises(ClaudePrintError) as info:
        load_defaults(env)
    err = info.value
    assert err.exit_code == 2
    assert str(tmp_path / ".config" / "claude-print" / "config.toml") in err.message
    return err


# --- config_path ------------------------------------------------------------------------


def test_path_prefers_absolute_xdg_config_home() -> None:
    env = {"XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"}
    assert config_path(env) == os.path.join("/x/cfg", "claude-print", "config.toml")


def test_path_falls_back_to_home_dot_config() -> None:
    expected = os.path.join("/home/u", ".config", "claude-print", "config.toml")
    assert config_path({"HOME": "/home/u"}) == expected
    assert config_path({"HOME": "/home/u", "XDG_CONFIG_HOME": ""}) == expected
    # the XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored
    assert config_path({"HOME": "/home/u", "XDG_CONFIG_HOME": "rel/cfg"}) == expected


def test_no_path_without_home_or_xdg() -> None:
    assert config_path({}) is None
    assert config_path({"HOME": ""}) is None
    assert config_path({"XDG_CONFIG_HOME": "relative"}) is None
    assert load_defaults({}) == Defaults()


# --- files that are fine ----------------------------------------------------------------


def test_missing_file_gives_all_none_and_creates_nothing(tmp_path: Path) -> None:
    assert load_defaults({"HOME": str(tmp_path)}) == Defaults()
    assert load_defaults({"XDG_CONFIG_HOME": str(tmp_path / "nope")}) == Defaults()
    assert list(tmp_path.iterdir()) == []


def test_defaults_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Defaults().model = "x"  # type: ignore[misc]


def test_full_file(tmp_path: Path, parser: str) -> None:
    env = write_config(
        tmp_path,
        "# claude-print defaults\n"
        "\n"
        "  [ defaults ]   # the only section\n"
        'model = "claude-sonnet-4-5"  # trailing comment\n'
        "max_turns = 12\n"
        "timeout_secs = 90.5\n"
        "inherit_hooks = false\n"
        "claude_binary = '/opt/claude code/bin/claude'\n",
    )
    assert load_defaults(env) == Defaults(
        model="claude-sonnet-4-5",
        max_turns=12,
        timeout_secs=90.5,
        inherit_hooks=False,
        claude_binary="/opt/claude code/bin/claude",
    )


def test_xdg_config_home_is_used(tmp_path: Path, parser: str) -> None:
    path = tmp_path / "xdg" / "claude-print" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("[defaults]\nmodel = 'opus'\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    assert load_defaults(env) == Defaults(model="opus")


def test_warm_keys(tmp_path: Path, parser: str) -> None:
    text = "[defaults]\nwarm = true\nwarm_idle_secs = 2.5\nwarm_pool = 4\n"
    defaults = load_defaults(write_config(tmp_path, text))
    assert defaults == Defaults(warm=True, warm_idle_secs=2.5, warm_pool=4)


def test_timeout_may_be_an_integer(tmp_path: Path, parser: str) -> None:
    defaults = load_defaults(write_config(tmp_path, "[defaults]\ntimeout_secs = 1_800\n"))
    assert defaults.timeout_secs == 1800
    assert isinstance(defaults.timeout_secs, int)


@pytest.mark.parametrize("text", ["", "\n\n# only a comment\n", "[defaults]\n"])
def test_empty_files(tmp_path: Path, parser: str, text: str) -> None:
    assert load_defaults(write_config(tmp_path, text)) == Defaults()


def test_crlf_bom_and_tabs(tmp_path: Path, parser: str) -> None:
    text = '\ufeff[defaults]\r\n\tmodel\t=\t"m"\t# c\r\ninherit_hooks = true\r\n'
    assert load_defaults(write_config(tmp_path, text)) == Defaults(model="m", inherit_hooks=True)


def test_string_escapes(tmp_path: Path, parser: str) -> None:
    text = '[defaults]\nclaude_binary = "C:\\\\bin\\\\cl\\u00e4ude \\"x\\"\\t#"\nmodel = \'a\\b\'\n'
    defaults = load_defaults(write_config(tmp_path, text))
    assert defaults.claude_binary == 'C:\\bin\\cl\u00e4ude "x"\t#'
    assert defaults.model == "a\\b"  # literal strings have no escapes


NUMBERS = {
    "42": 42,
    "+42": 42,
    "-7": -7,
    "1_000": 1000,
    "0x2A": 42,
    "0o52": 42,
    "0b101010": 42,
    "4.2e1": 42.0,
    "42.0": 42.0,
    "-0.5": -0.5,
    "1e3": 1000.0,
    "1_0.2_5": 10.25,
    "inf": math.inf,
}


@pytest.mark.parametrize("literal", sorted(NUMBERS))
def test_subset_numbers_match_toml(literal: str) -> None:
    tables = config._parse_subset(f"[defaults]\ntimeout_secs = {literal}\n", "f.toml")
    value = tables["defaults"]["timeout_secs"][0]
    assert value == NUMBERS[literal]
    assert type(value) is type(NUMBERS[literal])
    if sys.version_info >= (3, 11):
        import tomllib  # novermin

        assert tomllib.loads(f"v = {literal}")["v"] == value


# --- errors name the file and the line --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[defaults]\nmodel = 'x'\nmodle = 'y'\n", 3, "unknown key 'modle'"),
        ("# c\n[default]\nmodel = 'x'\n", 2, "unknown section [default]"),
        ("model = 'x'\n[defaults]\n", 1, "inside a [defaults] section"),
        ("[defaults]\n\nmax_turns = '8'\n", 3, "max_turns must be an integer, not a string"),
        ("[defaults]\nmax_turns = true\n", 2, "max_turns must be an integer, not a boolean"),
        ("[defaults]\nmax_turns = 2.5\n", 2, "max_turns must be an integer, not a float"),
        ("[defaults]\nmax_turns = 0\n", 2, "greater than 0"),
        ("[defaults]\ntimeout_secs = -1.5\n", 2, "greater than 0"),
        ("[defaults]\ntimeout_secs = nan\n", 2, "greater than 0"),
        ("[defaults]\ntimeout_secs = 'soon'\n", 2, "timeout_secs must be a number"),
        ("[defaults]\ntimeout_secs = false\n", 2, "timeout_secs must be a number, not a boolean"),
        ("[defaults]\ninherit_hooks = 1\n", 2, "inherit_hooks must be true or false"),
        ("[defaults]\nmodel = 4\n", 2, "model must be a string, not an integer"),
        ("[defaults]\nmodel = '  '\n", 2, "must not be empty"),
        ("[defaults]\nclaude_binary = ''\n", 2, "must not be empty"),
        ("[defaults]\nwarm_pool = 0\n", 2, "warm_pool must be greater than 0, not 0"),
        ("[defaults]\nwarm_pool = 2.0\n", 2, "warm_pool must be an integer, not a float"),
        ("[defaults]\nwarm_pool = true\n", 2, "warm_pool must be an integer, not a boolean"),
    ],
)
def test_semantic_errors(tmp_path: Path, parser: str, text: str, line: int, words: str) -> None:
    err = load_error(tmp_path, text)
    assert f", line {line}: " in err.message
    assert words in err.message


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[defaults]\nmodel = 'x'\nmax_turns 8\n", 3),
        ('[defaults]\n\nmodel = "unterminated\n', 3),
        ("[defaults]\nmodel = sonnet\n", 2),
        ("[defaults]\nmodel = 'a' 'b'\n", 2),
        ("[defaults]\nmodel = 'a'\nmodel = 'b'\n", 3),
        ("[defaults]\nmodel = 'a'\n[defaults]\n", 3),
        ('[defaults]\nmodel = "bad \\q escape"\n', 2),
        ("[defaults]\nmax_turns = 007\n", 2),
        ("[defaults\nmodel = 'a'\n", 1),
        ("[defaults]\nmodel =\n", 2),
        ('[defaults]\nmodel = "a\x01b"\n', 2),
    ],
)
def test_syntax_errors(tmp_path: Path, parser: str, text: str, line: int) -> None:
    err = load_error(tmp_path, text)
    assert f", line {line}: " in err.message
    assert "invalid TOML" in err.message


def test_arrays_are_rejected_either_way(tmp_path: Path, parser: str) -> None:
    err = load_error(tmp_path, "[defaults]\n# c\nmodel = ['a', 'b']\n")
    assert ", line 3: " in err.message
    if parser == "tomllib":
        assert "model must be a string, not an array" in err.message
    else:
        assert "not supported" in err.message and "Python 3.11+" in err.message


def test_invalid_utf8_names_the_line(tmp_path: Path, parser: str) -> None:
    path = tmp_path / ".config" / "claude-print" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"[defaults]\nmodel = 'caf\xe9'\n")
    with pytest.raises(ClaudePrintError) as info:
        load_defaults({"HOME": str(tmp_path)})
    assert f"{path}, line 2: not valid UTF-8" in info.value.message


def test_unreadable_config_is_an_error(tmp_path: Path, parser: str) -> None:
    path = tmp_path / ".config" / "claude-print" / "config.toml"
    path.mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(ClaudePrintError) as info:
        load_defaults({"HOME": str(tmp_path)})
    assert info.value.exit_code == 2
    assert f"cannot read config file {path}" in info.value.message


def test_nan_is_not_accepted_silently(tmp_path: Path, parser: str) -> None:
    # -nan is a float that compares false with everything: only a check written as
    # `not value > 0` refuses it (`value <= 0` would let it through)
    err = load_error(tmp_path, "[defaults]\ntimeout_secs = -nan\n")
    assert ", line 2: timeout_secs must be greater than 0, not nan" in err.message
