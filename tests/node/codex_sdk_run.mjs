// Drives agent-cli through OpenAI's Codex TypeScript SDK, as automation written for Codex would:
// node codex_sdk_run.mjs MODE AGENT_PATH WORKDIR. Prints one JSON document on stdout.
import { Codex } from "@openai/codex-sdk";

const [mode, agentPath, workingDirectory] = process.argv.slice(2);
// SDK_BASE_URL set: the server and key go through the SDK's own options (--config openai_base_url=...
// and CODEX_API_KEY), not the environment.
const sdkOptions = process.env.SDK_BASE_URL ? { baseUrl: process.env.SDK_BASE_URL, apiKey: "sdk-key" } : {};
const codex = new Codex({ codexPathOverride: agentPath, ...sdkOptions });
const options = { workingDirectory, skipGitRepoCheck: true, model: "test-model", sandboxMode: "workspace-write" };
const thread = codex.startThread(options);

if (mode === "two-runs") {
  const first = await thread.run("run the command");
  const firstId = thread.id;
  const second = await thread.run("and once more");
  console.log(JSON.stringify({ firstId, threadId: thread.id, first, second }));
} else if (mode === "resume-by-id") {
  const first = await thread.run("remember this");
  const resumed = codex.resumeThread(thread.id, options);
  const second = await resumed.run("what did I say?");
  console.log(JSON.stringify({ threadId: thread.id, resumedId: resumed.id, first, second }));
} else if (mode === "streamed") {
  const { events } = await thread.runStreamed("stream it");
  const seen = [];
  for await (const event of events) {
    seen.push({ event, at: Date.now() });
  }
  console.log(JSON.stringify(seen));
} else if (mode === "schema") {
  const outputSchema = {
    type: "object",
    properties: { summary: { type: "string" }, status: { type: "string", enum: ["ok", "action_required"] } },
    required: ["summary", "status"],
    additionalProperties: false,
  };
  const turn = await thread.run("summarize the status", { outputSchema });
  console.log(JSON.stringify(turn));
} else if (mode === "failure") {
  try {
    await thread.run("this fails");
    console.log(JSON.stringify({ threw: false }));
  } catch (error) {
    console.log(JSON.stringify({ threw: true, message: String(error.message) }));
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
