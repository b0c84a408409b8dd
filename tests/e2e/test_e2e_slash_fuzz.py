"""Never a command, fuzzed against the real TUI (issue 41).

The space (tests/support/slash_fuzz.py): every built-in name of the release x a sample of
every Unicode category, both ends of every default-ignorable range, `:`, `/`, `.` and
whitespace kinds, before the slash, before, inside and after the name, and the name's
case; plus the seed corpus (tests/data/slash_fuzz/corpus.json). CI takes one prompt of
each class of the space (its name chosen by the class) and the whole corpus on the
newest, the corpus on the older releases, in one stream-json session per way the TUI
reads text (the editor's load; `--full`: a paste too, and the classes everywhere), with
a stored login; `scripts/fuzz-slash` runs the whole space.

Each prompt is sent as a user message, the first and every later one. Each one's outcome
must be a clean refusal (an error result, nothing typed) or `claude -p`'s own: the
model got what `claude -p` sends (written-out normalisation, tests/support/prompt_forms),
with its answer as the result. And nothing under HOME or the work dir changed but the
session bookkeeping: a built-in that ran (a logout, a settings write, an export) would
show there, a panel would take the next prompt's keys and its answer would differ.

Which prompts are refused is read off claude-print's own output, not predicted: `claude
-p` then gets the others, each once the last one's answer is out (it folds messages that
arrive during a turn into one turn). The corpus says, as measured, which must
reach the model rather than be refused, so a rule that refused everything fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
import slash_fuzz
from checks import assert_exit
from fake_api import FakeApiServer
from harness import claude_release, run_claude_print
from prompt_forms import model_forms
from slash_space import side_effects, snapshot

pytestmark = [pytest.mark.e2e]


def session_prompts(release: str, classes: bool) -> List[str]:
    """The corpus, then (`classes`) one prompt of each class; the first message is one
    the model must get (the refused first message is test_e2e_slash's)."""
    corpus = [entry["prompt"] for entry in slash_fuzz.corpus()]
    sample: List[str] = []
    if classes:
        names = slash_fuzz.built_in_names(release)
        sample = [case.prompt for case in slash_fuzz.one_per_class(names)]
    prompts = list(dict.fromkeys(corpus + sample))
    first = next(e["prompt"] for e in slash_fuzz.corpus() if e.get("expect") == "model")
    prompts.remove(first)
    return [first, *prompts]


# The class sample (about 430 messages, 70 turns on each side: a minute of CI) on the
# newest; the corpus (32, 19 turns) on the older CI releases; --full: both ways, whole.
@pytest.mark.parametrize(
    "delivery, classes",
    [
        pytest.param("editor", True, marks=pytest.mark.slow),
        pytest.param(
            "editor", False, marks=[pytest.mark.matrix, pytest.mark.between, pytest.mark.slow]
        ),
        # --full: a paste reaches the same reading (the seeds go in pasted on every CI
        # release: test_e2e_slash.py)
        pytest.param("paste", True, marks=pytest.mark.newest_only),
    ],
    ids=["editor-classes", "editor-corpus", "paste-classes"],
)
def test_no_prompt_of_the_space_runs_a_built_in(
    tmp_path: Path,
    fake_api: FakeApiServer,
    oracle_api: FakeApiServer,
    real_claude: str,
    delivery: str,
    classes: bool,
) -> None:
    release = claude_release(real_claude)
    prompts = session_prompts(release, classes)
    session = slash_fuzz.run_session(
        tmp_path, real_claude, release, prompts, delivery, apis=(fake_api, oracle_api)
    )
    assert_exit(session.ours, 0)
    assert session.changes == []
    must_reach = {
        e["prompt"]
        for e in slash_fuzz.corpus()
        if e.get("expect") == "model" and delivery not in e.get("refused_by", [])
    }
    assert not session.refused & must_reach, sorted(map(repr, session.refused & must_reach))
    assert session.problems == []


# The argument is a way in of its own: the TUI reads its positional prompt at start. Each
# case is a TUI start, so CI takes two of the corpus on the newest, --full all of it.
IN_CI = ("\uff0flogout", "/logout/")


def entry_param(entry: Dict[str, str]) -> Any:
    marks = [] if entry["prompt"] in IN_CI else [pytest.mark.newest_only]
    return pytest.param(entry, id=repr(entry["prompt"]), marks=marks)


@pytest.mark.parametrize("entry", [entry_param(e) for e in slash_fuzz.corpus()])
def test_the_corpus_as_the_argument(
    tmp_path: Path, fake_api: FakeApiServer, real_claude: str, entry: Dict[str, Any]
) -> None:
    """Refused before anything starts (exit 2), or the model gets it as claude -p sends
    it; the login stays and nothing else changes."""
    release = claude_release(real_claude)
    sandbox = slash_fuzz.prepare(tmp_path, fake_api)
    before = snapshot(sandbox.home.parent)
    prompt = entry["prompt"]
    done = run_claude_print(sandbox, ["--output-format", "json", "--", prompt], binary=real_claude)
    assert side_effects(before, snapshot(sandbox.home.parent)) == []
    if entry.get("expect") != "model" and done.returncode == 2:
        return  # refused, nothing started
    assert_exit(done, 0)
    forms = [slash_fuzz.ack(form) for form in model_forms(prompt, release, "argv")]
    assert json.loads(done.stdout)["result"] in forms
