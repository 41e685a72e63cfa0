// The TypeScript client test's program (TestGeneratedClientTypeScript,
// make client-test): every operation of the document called through the
// generated client (calls.ts, written by the test), then the typed calls
// (typed.ts), the event-stream reader and the live stream (stream.ts). It prints "ok ..." per check,
// what went wrong otherwise.
import { newClient, report } from "./client.js";
import { everyOperation } from "./calls.js";
import { typedCalls } from "./typed.js";
import { selfTest } from "./sse.js";
import { streamSession } from "./stream.js";

// What the program uses of Node's process (its types, @types/node, are
// not needed for more).
declare const process: { env: Record<string, string | undefined>; exitCode: number | undefined };

async function main(): Promise<void> {
  const url = process.env["PREGAO_URL"] ?? "";
  const key = process.env["PREGAO_KEY"] ?? "";
  if (url === "" || key === "") {
    throw new Error("PREGAO_URL and PREGAO_KEY must be set");
  }
  const c = newClient(url, key);
  await everyOperation(c, report);
  await typedCalls(c, report);

  const problem = selfTest();
  report("sse: parser", 200, 200, problem === "", problem);

  // The live stream, from a second server that replayed a session (its
  // key and three tickers that trade in it given).
  const streamUrl = process.env["PREGAO_STREAM_URL"] ?? "";
  if (streamUrl !== "") {
    const live = newClient(streamUrl, process.env["PREGAO_STREAM_KEY"] ?? "");
    const tickers = (process.env["PREGAO_STREAM_TICKERS"] ?? "").split(",");
    await streamSession(live, report, tickers, process.env["PREGAO_STREAM_SESSION"] ?? "");
  }
}

main().catch((err: unknown) => {
  console.log(`main: ${err instanceof Error ? err.stack : String(err)}`);
  process.exitCode = 1;
});
