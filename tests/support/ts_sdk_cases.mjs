// The TypeScript Agent SDK's cases, run once with the real Claude Code and once with
// claude-print as `pathToClaudeCodeExecutable`; tests/e2e/test_e2e_ts_sdk.py compares them.
//
//   NODE_PATH=<dir with @anthropic-ai/claude-agent-sdk> node tests/support/ts_sdk_cases.mjs \
//       --cli-path PATH --case NAME --workdir DIR
//
// Prints ONE JSON line: the messages the program saw, normalised (type/subtype, text,
// tool_use names, tool results, result fields) plus facts of the case; an exception is
// reported as {"exception": ...} with what was seen so far (exit status 0 either way).

import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.env.NODE_PATH || process.cwd(), "x.js"));
const sdk = await import(require.resolve("@anthropic-ai/claude-agent-sdk"));
const { z } = await import(require.resolve("zod"));

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, word, i, all) => {
    if (word.startsWith("--")) pairs.push([word.slice(2), all[i + 1]]);
    return pairs;
  }, []),
);
const CASE_TIMEOUT_MS = 60_000;

function summarise(message) {
  const out = { type: message.type, keys: Object.keys(message).sort() };
  if (message.subtype !== undefined) out.subtype = message.subtype;
  const content = message.message?.content;
  if (message.type === "assistant") {
    out.text = content.filter((b) => b.type === "text").map((b) => b.text).join("\n");
    out.tool_uses = content.filter((b) => b.type === "tool_use").map((b) => b.name);
  } else if (message.type === "user" && Array.isArray(content)) {
    const results = content.filter((b) => b.type === "tool_result");
    if (results.length) {
      out.tool_results = results.map((b) => ({
        is_error: b.is_error ?? null,
        content: typeof b.content === "string" ? b.content : (b.content || []).map((c) => c.text).join("\n"),
      }));
    }
  } else if (message.type === "result") {
    for (const key of ["is_error", "result", "num_turns", "session_id", "stop_reason"]) {
      out[key] = message[key] ?? null;
    }
  } else if (message.type === "system" && message.subtype === "init") {
    out.session_id = message.session_id;
    out.tools = message.tools;
  }
  return out;
}

// The SDK keeps the CLI's stderr to itself unless given `stderr`: passed on, claude-print's
// trace (CLAUDE_PRINT_TRACE=1) reaches the test's failure message (it was empty when the
// set_permission_mode case failed in CI).
const stderr = (data) => process.stderr.write(data);

function options(extra = {}) {
  return { pathToClaudeCodeExecutable: args["cli-path"], cwd: args.workdir, stderr, ...extra };
}

async function collect(seen, iterator, onResult) {
  for await (const message of iterator) {
    seen.messages.push(summarise(message));
    if (message.type === "result" && onResult && !(await onResult())) break;
  }
}

// A streaming prompt: the next user message only after the previous turn's result.
function streamingPrompt(texts) {
  const waiting = [];
  let next = 0;
  const prompt = (async function* () {
    for (const text of texts) {
      if (next++ > 0) await new Promise((resolve) => waiting.push(resolve));
      yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
    }
  })();
  const advance = () => {
    const resolve = waiting.shift();
    if (resolve) resolve();
    return next < texts.length || waiting.length > 0;
  };
  return { prompt, advance };
}

const CASES = {
  async plain(seen) {
    await collect(seen, sdk.query({ prompt: "What is 2+2?", options: options() }));
  },
  async background_command(seen) {
    // The run goes on until the command ends and the model has answered its notification.
    const call = JSON.stringify({ command: "sleep 2; echo done > bg.txt", run_in_background: true, description: "bg" });
    await collect(seen, sdk.query({ prompt: `Run it [[tooljson:Bash:${call}]]`, options: options({ allowedTools: ["Bash"] }) }));
    seen.facts.result_texts = seen.messages.filter((m) => m.type === "result").map((m) => m.result);
    seen.facts.written = (await import("node:fs")).existsSync(path.join(args.workdir, "bg.txt"));
  },
  async client_three_turns(seen) {
    const { prompt, advance } = streamingPrompt(["turn one [[reply:ONE]]", "turn two [[reply:TWO]]", "turn three [[reply:THREE]]"]);
    let results = 0;
    await collect(seen, sdk.query({ prompt, options: options() }), async () => {
      results += 1;
      if (results === 3) return false;
      advance();
      return true;
    });
    seen.facts.result_texts = seen.messages.filter((m) => m.type === "result").map((m) => m.result);
  },
  async tool_allowed(seen) {
    const asked = [];
    const canUseTool = async (name, input) => {
      asked.push(name);
      return { behavior: "allow", updatedInput: input };
    };
    const target = path.join(args.workdir, "allowed.txt");
    const { prompt, advance } = streamingPrompt([`[[tool:Bash:touch ${target}]]`]);
    await collect(seen, sdk.query({ prompt, options: options({ canUseTool }) }), async () => advance() && false);
    seen.facts.asked = asked;
  },
  async hook_pretooluse_deny(seen) {
    const fired = [];
    const hook = async (input) => {
      fired.push(input.tool_name);
      return {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "denied by the program's hook",
        },
      };
    };
    const target = path.join(args.workdir, "hookdenied.txt");
    const { prompt, advance } = streamingPrompt([`[[tool:Bash:touch ${target}]]`]);
    const opts = options({ allowedTools: ["Bash"], hooks: { PreToolUse: [{ matcher: "Bash", hooks: [hook] }] } });
    await collect(seen, sdk.query({ prompt, options: opts }), async () => advance() && false);
    seen.facts.fired = fired;
  },
  async interrupt(seen) {
    const { prompt, advance } = streamingPrompt(["[[sleep:30]] slow", "after [[reply:AFTER]]"]);
    const q = sdk.query({ prompt, options: options() });
    let results = 0;
    let interrupted = false;
    for await (const message of q) {
      seen.messages.push(summarise(message));
      if (!interrupted && message.type === "system" && message.subtype === "init") {
        interrupted = true;
        await q.interrupt();
      }
      if (message.type === "result") {
        results += 1;
        if (results === 2) break;
        advance();
      }
    }
  },
  async set_permission_mode(seen) {
    const target = path.join(args.workdir, "edited.txt");
    const write = JSON.stringify({ file_path: target, content: "accepted" });
    const { prompt, advance } = streamingPrompt([`before [[tooljson:Write:${write}]]`, `after [[tooljson:Write:${write}]]`]);
    const q = sdk.query({ prompt, options: options() });
    let results = 0;
    for await (const message of q) {
      seen.messages.push(summarise(message));
      if (message.type === "result") {
        results += 1;
        if (results === 2) break;
        seen.facts.written_before = (await import("node:fs")).existsSync(target);
        await q.setPermissionMode("acceptEdits");
        advance();
      }
    }
    seen.facts.written_after = (await import("node:fs")).existsSync(target);
  },
  async sdk_mcp_tool(seen) {
    const calls = [];
    const add = sdk.tool("add", "Add two integers", { a: z.number(), b: z.number() }, async (input) => {
      calls.push(input);
      return { content: [{ type: "text", text: `sum=${input.a + input.b}` }] };
    });
    const server = sdk.createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
    const { prompt, advance } = streamingPrompt(['[[tooljson:mcp__calc__add:{"a": 2, "b": 40}]]']);
    const opts = options({ mcpServers: { calc: server }, allowedTools: ["mcp__calc__add"] });
    await collect(seen, sdk.query({ prompt, options: opts }), async () => advance() && false);
    seen.facts.tool_calls = calls;
  },
};

const seen = { case: args.case, messages: [], facts: {} };
const started = Date.now();
try {
  const timer = new Promise((_, reject) => setTimeout(() => reject(new Error("case timeout")), CASE_TIMEOUT_MS).unref());
  await Promise.race([CASES[args.case](seen), timer]);
} catch (error) {
  seen.exception = error?.constructor?.name || "Error";
  seen.message = String(error?.message || error).slice(0, 500);
}
seen.seconds = (Date.now() - started) / 1000;
process.stdout.write(JSON.stringify({ ...seen, ...seen.facts, facts: undefined }) + "\n");
process.exit(0);
