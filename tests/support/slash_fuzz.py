"""The space of prompts that may read as a built-in command, for fuzzing claude-print's
slash rule against the real TUI (issue 41): every built-in name of a release x a sample
of every Unicode general category, both ends of every default-ignorable range and the
characters a name is built from or split on, placed before the slash, before, inside and
after the name, with the name in other cases; plus the seed corpus
(tests/data/slash_fuzz/corpus.json: the prompts that signed users out, and the ones a
fuzzing run found worth keeping).

Shared by tests/turns/test_slash.py (the rule over the whole space, no TUI),
tests/e2e/test_e2e_slash_fuzz.py (a sample of every class through the real TUI, beside
`claude -p`) and scripts/fuzz-slash (the whole space through the real TUI).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from fake_api import FakeApiServer, seed_home
from harness import Sandbox
from held_session import HeldSession
from held_session import results as results_of
from prompt_forms import model_forms
from slash_space import side_effects, snapshot

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "slash_fuzz" / "corpus.json"
STREAMED = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
CREDENTIALS = {
    "claudeAiOauth": {
        "accessToken": "sk-ant-oat01-e2e-slash",
        "refreshToken": "sk-ant-ort01-e2e-slash",
        "expiresAt": 4102444800000,
        "scopes": ["user:inference"],
        "subscriptionType": "max",
    }
}
# A session's last message: the TUI still takes a prompt after the space (no panel left
# open), and the exit code is that answer's.
LAST = "what is 2+2"

# A sample of every Unicode general category.
CATEGORY_SAMPLES = {
    "Lu": "A\u00c9", "Ll": "a\u00e9", "Lt": "\u01c5", "Lm": "\u02b0", "Lo": "\u05d0\u3164",
    "Mn": "\u0301\u034f\ufe0f", "Mc": "\u0903", "Me": "\u20dd", "Nd": "0\u0660",
    "Nl": "\u2160", "No": "\u00b2", "Pc": "_\u203f", "Pd": "-\u2010", "Ps": "(", "Pe": ")",
    "Pi": "\u00ab", "Pf": "\u00bb", "Po": ".:!\u00b7", "Sm": "+\u2212", "Sc": "$",
    "Sk": "^\u02c2", "So": "\u00a9\U0001f980", "Zs": " \u00a0\u3000", "Zl": "\u2028",
    "Zp": "\u2029", "Cc": "\x00\x07\x1b\x7f\x85", "Cf": "\u200b\u200d\u2060\ufeff",
    "Co": "\ue000", "Cn": "\u0378", "Cs": "\ud800",
}  # fmt: skip
# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt, Unicode 15),
# written out here rather than read from the rule under test (claude_print.turns.slash).
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)  # fmt: skip
IGNORABLE_ENDS = "".join(chr(c) for pair in DEFAULT_IGNORABLE for c in pair)
# What a name is built from or split on: `:` (a namespace), `/` and `.` (a path), and
# whitespace kinds.
NAME_PARTS = ":/.\t\n"
CHARS = "".join(CATEGORY_SAMPLES.values()) + IGNORABLE_ENDS + NAME_PARTS
# Where a character goes, as a template over the name's two halves.
PLACES = (
    ("before-slash", "{c}/{a}{b}"),
    ("before-name", "/{c}{a}{b}"),
    ("inside-name", "/{a}{c}{b}"),
    ("after-name", "/{a}{b}{c}"),
    ("after-name-args", "/{a}{b}{c} now"),
)


class Case(NamedTuple):
    label: str  # the class: where and which character (or the case form), name aside
    name: str
    prompt: str


def cases_of(name: str) -> List[Case]:
    """Every prompt of the space built on the command `name`."""
    middle = len(name) // 2
    out = [
        Case("upper", name, f"/{name.upper()}"),
        Case("capitalized", name, f"/{name.capitalize()}"),
        Case("space-before", name, f" /{name}"),
    ]
    for ch in CHARS:
        for place, template in PLACES:
            prompt = template.format(c=ch, a=name[:middle], b=name[middle:])
            out.append(Case(f"{place} U+{ord(ch):04X}", name, prompt))
    return out


def space(names: Iterable[str]) -> List[Case]:
    """The whole space over `names`."""
    return [case for name in sorted(set(names)) for case in cases_of(name)]


def one_per_class(names: Iterable[str]) -> List[Case]:
    """One prompt of each class, its name chosen by the class (stable from run to run,
    different names for different classes)."""
    ordered = sorted(set(names))
    chosen: Dict[str, Case] = {}
    for case in space(ordered):
        pick = int(hashlib.sha256(case.label.encode()).hexdigest()[:8], 16) % len(ordered)
        if case.name == ordered[pick]:
            chosen[case.label] = case
    return list(chosen.values())


def corpus() -> List[Dict[str, str]]:
    """The seed corpus: [{"prompt": ..., "why": ...}]."""
    entries: List[Dict[str, str]] = json.loads(CORPUS.read_text(encoding="utf-8"))
    return entries


def keep(prompts: Iterable[str], why: str) -> int:
    """Add prompts a fuzzing run found to the corpus (those not in it yet); how many."""
    entries = corpus()
    known = {entry["prompt"] for entry in entries}
    new = [{"prompt": p, "why": why} for p in prompts if p not in known]
    if new:
        text = json.dumps(entries + new, indent=1, ensure_ascii=True) + "\n"
        CORPUS.write_text(text, encoding="utf-8")
    return len(new)


def ack(text: str) -> str:
    """The fake API's answer to a turn whose prompt is `text` (tests/support/fake_api)."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"ACK {len(text)} {digest}"


def one_at_a_time(
    argv: Sequence[str], cwd: Path, env: Dict[str, str], prompts: Sequence[str], timeout: float
) -> Tuple[int, List[Dict[str, Any]], str]:
    """A stream-json session that sends the next prompt only once the last one's result
    is out, as an SDK client does (`claude -p` folds messages that arrive while a turn
    runs into its next turn); (exit code, result messages, stderr)."""
    with HeldSession(argv, cwd, env, timeout) as session:
        for count, prompt in enumerate(prompts, 1):
            session.send(prompt)
            session.until(functools.partial(has_results, count), f"result {count}")
    assert session.code is not None
    return session.code, results_of(session.events), session.stderr


def has_results(count: int, events: List[Dict[str, Any]]) -> bool:
    return len(results_of(events)) >= count


def built_in_names(release: str) -> List[str]:
    """The release's built-in command names as its capture measured them (the input
    space; the newest capture at or below the release)."""

    def key(path: Path) -> Tuple[int, ...]:
        return tuple(int(p) for p in path.parent.name[3:].split("."))

    wanted = tuple(int(p) for p in release.split("."))
    captures = sorted((ROOT / "tests" / "data").glob("cc-*/slash.json"), key=key)
    below = [path for path in captures if key(path) <= wanted] or captures[:1]
    names: List[str] = json.loads(below[-1].read_text())["names"]
    return names


def prepare(root: Path, api: FakeApiServer) -> Sandbox:
    """A sandbox with a stored login, which a /logout would delete."""
    home, project, tmp = root / "home", root / "project", root / "tmp"
    for folder in (home, project, tmp):
        folder.mkdir(parents=True)
    seed_home(home)
    (home / ".claude").mkdir()
    credentials = home / ".claude" / ".credentials.json"
    credentials.write_text(json.dumps(CREDENTIALS))
    credentials.chmod(0o600)
    return Sandbox(home, project, tmp, api.url)


def is_refusal(result: Dict[str, Any]) -> bool:
    """claude-print's error result for a message it does not send to the TUI: no turn,
    and the reason."""
    refused = result.get("is_error") and result.get("subtype") == "error_during_execution"
    return bool(refused) and result.get("num_turns") == 0 and bool(result.get("errors"))


def without_path(result: Any) -> str:
    """`ACK <length> <sha256-12>` as its length only."""
    return re.sub(r"^(ACK \d+) [0-9a-f]{12}$", r"\1", str(result))


class Session(NamedTuple):
    """One fuzzing session through claude-print, and what `claude -p` did with the
    prompts claude-print did not refuse."""

    ours: subprocess.CompletedProcess  # type: ignore[type-arg]
    changes: List[str]  # claude-print's side effects (slash_space.side_effects)
    refused: Set[str]
    # (prompt, how) for each prompt whose outcome is neither a refusal nor claude -p's;
    # ("", what) when a session itself failed
    problems: List[Tuple[str, str]]


def run_session(
    root: Path,
    binary: str,
    release: str,
    prompts: Sequence[str],
    delivery: str,
    timeout: float = 600,
    apis: Optional[Tuple[FakeApiServer, FakeApiServer]] = None,
) -> Session:
    """`prompts` (then LAST) as stream-json messages to claude-print on `binary`, by
    `delivery`, in a sandbox with a stored login; then `claude -p` of the same release, in
    a sandbox of its own, gets the ones claude-print did not refuse, one at a time."""
    own = apis is None
    ours_api, their_api = apis or (FakeApiServer().start(), FakeApiServer().start())
    try:
        prompts = [*prompts, LAST]
        box = prepare(root / "ours", ours_api)
        before = snapshot(box.home.parent)
        argv = [sys.executable, "-m", "claude_print", "--claude-binary", binary, *STREAMED]
        argv += ["--prompt-via", delivery, "--timeout", str(int(timeout - 60))]
        # One at a time, as for claude -p: messages that come during a turn fold into one.
        code, mine, err = one_at_a_time(argv, box.project, box.env(), prompts, timeout)
        ours = subprocess.CompletedProcess(argv, code, b"", err.encode())
        changes = side_effects(before, snapshot(box.home.parent))
        if code != 0 or len(mine) != len(prompts):
            return Session(ours, changes, set(), [("", "claude-print's session failed")])
        refused = {p for p, r in zip(prompts, mine) if is_refusal(r)}
        sent = [p for p in prompts if p not in refused]
        them = prepare(root / "them", their_api)  # as long a path as "ours"
        code, theirs, err = one_at_a_time(
            [binary, "-p", *STREAMED], them.project, them.env(), sent, timeout
        )
        if code != 0 or len(theirs) != len(sent):
            return Session(ours, changes, refused, [("", f"claude -p ended {code}: {err[-2000:]}")])
        by_prompt = dict(zip(prompts, mine))
        problems = [
            (prompt, why)
            for prompt, their in zip(sent, theirs)
            for why in [differs(prompt, by_prompt[prompt], their, release)]
            if why
        ]
        return Session(ours, changes, refused, problems)
    finally:
        if own:
            for api in (ours_api, their_api):
                api.shutdown()
                api.server_close()


def differs(prompt: str, mine: Dict[str, Any], theirs: Dict[str, Any], release: str) -> str:
    """How claude-print's outcome for a prompt it sent to the TUI differs from
    `claude -p`'s ("" for not at all)."""
    if mine.get("is_error") or (mine["num_turns"], mine["subtype"]) != (
        theirs["num_turns"],
        theirs["subtype"],
    ):
        return f"claude-print {mine.get('subtype')} in {mine.get('num_turns')} turns, " + (
            f"claude -p {theirs.get('subtype')} in {theirs.get('num_turns')}"
        )
    if theirs["result"] == ack(prompt):
        # claude -p sent it to the model as text: the TUI may send the input box's
        # documented normalisation of that text.
        forms = [ack(form) for form in model_forms(prompt, release, "stream-json")]
        if mine["result"] not in forms:
            return f"the model got other text: {mine['result']!r}, expected one of {forms}"
        return ""
    # claude -p answered it itself ("isn't available") or expanded a command (its text
    # may hold the work dir: both are as long, the hash differs).
    if without_path(mine["result"]) != without_path(theirs["result"]):
        return f"claude-print answered {mine['result']!r}, claude -p {theirs['result']!r}"
    return ""
