"""The user docs stay in step with the code: every flag of `--help` is in docs/usage.md,
and every relative link of the docs leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, Optional, Set

from harness import ROOT

from claude_print import flags
from claude_print.command.parser import build_parser

README = (ROOT / "README.md").read_text(encoding="utf-8")
USAGE = (ROOT / "docs" / "usage.md").read_text(encoding="utf-8")  # the README's reference
AGENT_SDK = (ROOT / "docs" / "agent-sdk.md").read_text(encoding="utf-8")


def parser_flags() -> Set[str]:
    flags: Set[str] = set()
    for action in build_parser()._actions:
        flags.update(action.option_strings)
    return flags


def readme_flag_table() -> str:
    """The flag tables: docs/usage.md, "Flags" (the README links there)."""
    assert "(docs/usage.md#flags)" in README
    start = USAGE.index("\n## Flags\n")
    end = USAGE.index("\n## ", start + 1)
    return USAGE[start:end]


def test_every_flag_is_documented() -> None:
    table = readme_flag_table()
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    documented = {flag for row in rows for flag in re.findall(r"`(-[-\w]+)", row.split("|")[1])}
    assert documented == parser_flags()


def test_each_flag_is_under_its_kind() -> None:
    """docs/usage.md's four flag tables hold the rows of flags.FLAGS of their kind."""
    table = readme_flag_table()
    headings = {
        flags.OWN: "### claude-print's own",
        flags.FORWARDED: "### Forwarded",
        flags.EMULATED: "### Emulated",
        flags.REFUSED: "### Refused",
    }
    for kind, heading in headings.items():
        start = table.index(heading)
        end = min(
            [table.index(h) for h in headings.values() if table.index(h) > start] or [len(table)]
        )
        rows = [line for line in table[start:end].splitlines() if line.startswith("| `")]
        documented = {f for row in rows for f in re.findall(r"`(-[-\w]+)", row.split("|")[1])}
        wanted = {name for flag in flags.of_kind(kind) for name in flag.names}
        if kind == flags.OWN:
            wanted |= {"-h", "--help"}
        assert documented == wanted, kind


def test_readme_opens_with_the_demo_and_the_test_command() -> None:
    head = README[: README.index("\n## ")]
    assert "./scripts/demo" in head
    assert "scripts/test" in head and "./.ci/run" in head
    assert "python3 -m venv .venv && .venv/bin/pip install -r requirements-dev.txt" in head


# The docs moved out of the README (issue 44) are checked as the README was.
MOVED = (
    "docs/usage.md",
    "docs/install.md",
    "docs/agent-sdk.md",
    "docs/warm-start.md",
    "docs/needle.md",
    "docs/slash-prompts.md",
    "docs/troubleshooting.md",
    "docs/performance.md",
)
DOCS = {
    name: (ROOT / name).read_text(encoding="utf-8")
    for name in ("README.md", "AGENTS.md", "docs/compatibility.md", "docs/contract.md", *MOVED)
}


def test_docs_name_the_tested_range_the_code_has() -> None:
    """A doc saying which releases are tested names contract's range, not an older one."""
    from claude_print import contract

    wanted = f"{contract.OLDEST_SUPPORTED} to {contract.NEWEST_TESTED}"
    for name, text in DOCS.items():
        for found in re.findall(
            r"(?:tested|supports Claude Code \*\*)[^\n]*?(2\.1\.\d+ to 2\.1\.\d+)", text
        ):
            assert found == wanted, f"{name} says {found!r}; the code tests {wanted}"


def test_cache_paths_in_the_docs_are_releases_the_tests_install() -> None:
    matrix = (ROOT / "tests" / "matrix.txt").read_text().split()
    for name, text in DOCS.items():
        for release in re.findall(r"claude-print-test/cc-(\d+\.\d+\.\d+)/", text):
            assert release in matrix, f"{name} names cc-{release}, not in tests/matrix.txt"


def test_the_pyz_size_in_the_docs_is_the_built_one(built_pyz: Path) -> None:
    size_kib = built_pyz.stat().st_size / 1024
    for name in ("README.md", "docs/install.md", "docs/shiv.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        for said in re.findall(r"(?:reproducible, |it is )about (\d+) KiB", text):
            assert abs(int(said) - size_kib) <= 0.15 * size_kib, (name, said, size_kib)


NOT_CODE = {"permissions.defaultMode", "options.stderr"}


def test_code_the_docs_name_exists() -> None:
    """`module.name` (and `module.Class.method`) in the docs and AGENTS.md must name
    something in claude_print: a split or a rename leaves no dead pointer behind."""
    import importlib
    import re

    package = ROOT / "claude_print"
    module_path = {
        p.stem: ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in package.rglob("*.py")
        if p.stem not in ("__init__", "__main__")
    }
    modules = set(module_path)
    missing = []
    for doc in [ROOT / "AGENTS.md", ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for dotted in re.findall(r"`([a-z_]+(?:\.[A-Za-z_]+)+)(?:\(\))?`", doc.read_text()):
            module, *names = dotted.split(".")
            # settings keys (permissions.defaultMode) and the SDK's options are not ours
            if module not in modules or names == ["py"] or dotted in NOT_CODE:
                continue
            obj: object = importlib.import_module(module_path[module])
            for name in names:
                if not hasattr(obj, name):
                    missing.append(f"{doc.name}: {dotted}")
                    break
                obj = getattr(obj, name)
    assert missing == []


# --- claims that drift: the control requests, --verbose, the config keys --------------


def control_table() -> Dict[str, str]:
    """docs/agent-sdk.md's control request table: subtype (with "@configured" / "@unknown" where
    the row names which servers) -> what claude-print does."""
    start = AGENT_SDK.index("| control request | claude-print |")
    rows = AGENT_SDK[start:].split("\n\n", 1)[0].splitlines()[2:]
    table: Dict[str, str] = {}
    for row in rows:
        _, names, answer, _ = row.split("|")
        where = "@configured" if "configured server" in names else ""
        where = "@unknown" if "unknown server" in names else where
        for name in re.findall(r"`(\w+)`", names):
            qualified = name + (where if name in ("mcp_reconnect", "mcp_toggle") else "")
            table[qualified] = answer.strip()
    return table


def refused_always() -> Set[str]:
    """The control requests stream_input answers with an error whatever they ask."""
    from claude_print.sdk import stream_input

    special = {"set_permission_mode", "mcp_message"}  # answered / sent by claude-print
    return set(stream_input.UNSUPPORTED_WHY) - set(stream_input.ANSWERED_AS_THE_CLI) - special


def test_the_control_request_table_says_what_the_code_does() -> None:
    from claude_print.sdk import stream_input

    table = control_table()
    for name in refused_always():
        assert table.get(name, "").startswith("error"), (name, table.get(name))
    answered = {"initialize", "interrupt", "set_permission_mode", "stop_task", "mcp_status"}
    answered |= {"rewind_files"}  # the CLI's own error text, as the CLI answers it
    assert answered <= set(stream_input.ANSWERED_AS_THE_CLI) | {
        "initialize",
        "interrupt",
        "set_permission_mode",
    }
    for name in answered:
        assert name in table and not table[name].startswith("error"), (name, table.get(name))
    for name in ("mcp_reconnect", "mcp_toggle"):
        assert table[name + "@configured"].startswith("error")
        assert not table[name + "@unknown"].startswith("error")


CLAIM_DOCS = (
    "README.md",
    "AGENTS.md",
    "docs/compatibility.md",
    "docs/how-a-run-works.md",
    *MOVED,
)


def test_no_doc_says_a_request_the_code_answers_gets_an_error() -> None:
    """Outside the table, a sentence that names control requests and says "error" or
    "refused" names only requests the code always refuses (AGENTS.md once said
    set_permission_mode and mcp_status got an error after they had started working)."""
    from claude_print.sdk import stream_input

    known = set(stream_input.UNSUPPORTED_WHY) | set(stream_input.ANSWERED_AS_THE_CLI)
    known |= {"initialize", "interrupt", "set_permission_mode"}
    refused = refused_always()
    for name in CLAIM_DOCS:
        text = (ROOT / name).read_text(encoding="utf-8")
        if name == "docs/agent-sdk.md":
            start = text.index("| control request | claude-print |")
            end = text.index("\n\n", start)
            text = text[:start] + text[end:]
        for sentence in re.split(r"(?<=[.;])\s+", text):
            named = set(re.findall(r"`(\w+)`", sentence)) & known
            if named and re.search(r"\berror answer|\bget an error|\brefused\b", sentence):
                assert named <= refused, f"{name}: {sentence!r}"
    agents = (ROOT / "AGENTS.md").read_text(encoding="utf-8")
    assert "the\n  table in [docs/agent-sdk.md](docs/agent-sdk.md)" in agents
    assert "(docs/agent-sdk.md)" in README


def test_help_and_readme_say_the_same_of_verbose_and_the_config_keys() -> None:
    """stream-json runs without --verbose (claude -p requires it): --help, the README and
    docs/usage.md say so; --help's footer names every key the config file takes, as the
    README's example does (--help points at the README's "Config file")."""
    from claude_print.command.config import _FIELDS

    help_text = build_parser().format_help()
    flat = " ".join(help_text.split())
    assert "stream-json works with or without it (claude -p requires it)" in flat
    assert "does not require `--verbose` for stream-json" in README
    assert "does not require `--verbose` for stream-json" in USAGE
    for text in (flat, README, USAGE):
        assert "stream-json needs it" not in text
    footer = flat[flat.index("Defaults can be set") :]
    keys = re.search(r"its keys: ([\w, ]+) \(README", footer)
    assert keys is not None, footer
    assert set(keys.group(1).split(", ")) == set(_FIELDS)
    assert '(README, "Config file")' in flat
    config = README[README.index("\n### Config file\n") :]
    example = config.split("```toml\n", 1)[1].split("```", 1)[0]
    assert set(re.findall(r"^(\w+) =", example, re.M)) == set(_FIELDS)


# --- links: the README's sections moved to docs/ (issue 44); no link may dangle ---------


def github_anchors(text: str) -> Set[str]:
    """The anchors GitHub gives the headings of a Markdown text (outside code fences)."""
    anchors: Set[str] = set()
    seen: Dict[str, int] = {}
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"#{1,6} (.+)", line)
        if fenced or match is None:
            continue
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1).strip())
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_every_relative_link_in_the_docs_leads_somewhere() -> None:
    """A relative link in README.md, AGENTS.md or docs/ names a file that exists and, with
    `#anchor`, a heading of that Markdown file (GitHub's anchors)."""
    pages = [ROOT / "README.md", ROOT / "AGENTS.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", prose):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
                continue
            markdown = linked.read_text("utf-8") if linked.suffix == ".md" else None
            if anchor and markdown is not None and anchor not in github_anchors(markdown):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


# A file of tests/ named in the docs: `tests/e2e/test_e2e_sdk.py`, `support/checks.py`, or
# by its name (`test_relay.py`, `fake_api.py`: the names are unique), maybe with
# `::function`; a `::function` alone goes on with the file before it on the line.
NAMED = re.compile(r"(?<![\w/.*<-])((?:[\w-]+/)*[\w-]+\.(?:py|mjs))(?:::(\w+))?|(?<![\w:])::(\w+)")


def test_the_tests_the_docs_name_exist() -> None:
    """A file of tests/ that README.md, AGENTS.md, tests/README.md or docs/ name exists,
    and so does each `::function` named with it: moving the tests into folders (issue 44)
    or renaming a test leaves no dead pointer behind."""
    tests = ROOT / "tests"
    by_name = {p.name: p for p in tests.rglob("*") if p.suffix in (".py", ".mjs")}
    pages = [ROOT / "README.md", ROOT / "AGENTS.md", tests / "README.md"]
    missing = []
    for page in [*pages, *sorted((ROOT / "docs").glob("*.md"))]:
        for line in page.read_text(encoding="utf-8").splitlines():
            current: Optional[Path] = None
            for file, function, more in NAMED.findall(line):
                if file:
                    if file.startswith("tests/"):
                        current = ROOT / file
                    elif file.startswith("support/"):
                        current = tests / file
                    elif "/" not in file and (file.startswith("test_") or file in by_name):
                        current = by_name.get(file, tests / file)
                    else:
                        current = None  # not a file of tests/ (claude_print/..., scripts)
                        continue
                    if not current.is_file():
                        missing.append(f"{page.name}: {file}")
                        current = None
                        continue
                function = function or more
                if function and current is not None:
                    code = current.read_text(encoding="utf-8")
                    if not re.search(rf"^(?:async def|def|class) {function}\b", code, re.M):
                        missing.append(f"{page.name}: {current.name}::{function}")
    assert missing == []


def test_the_readme_is_read_in_one_sitting() -> None:
    """Issue 44: quick start, install, usage, exit codes, limits, troubleshooting, in that
    order and about 300 lines; the rest lives in docs/, linked."""
    assert README.count("\n") <= 330
    order = [
        "## Quick start",
        "## Install",
        "### Uninstall",
        "## Usage",
        "## Exit codes",
        "## Limits and differences from `claude -p`",
        "## Troubleshooting",
        "## More",
    ]
    at = [README.index(f"\n{heading}\n") for heading in order]
    assert at == sorted(at)
    for name in MOVED:
        assert f"({name}" in README, f"the README does not link {name}"
