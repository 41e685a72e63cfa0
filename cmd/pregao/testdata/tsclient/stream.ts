// The live stream read through the generated client, as an app reads it:
// GET /v2/stream/quotes called with openapi-fetch (its tickers array sent
// as the document's form, comma-separated), the body read with sse.ts,
// each event's data checked against the document's schema of its event
// type and used through that type.
import type { PregaoClient, Report } from "./client.js";
import type { components } from "./schema.js";
import { readEventStream } from "./sse.js";

type StreamBar = components["schemas"]["StreamBar"];
type StreamQuote = components["schemas"]["StreamQuote"];
type StreamSession = components["schemas"]["StreamSession"];
type Quote = components["schemas"]["Quote"];

// isObject says v is a JSON object (its fields then read as unknown).
function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const quoteNumbers = ["open_price", "close_price", "highest_price", "lowest_price", "variation", "variation_value", "volume"];

// isQuote checks v against the Quote schema: its required fields, each
// a number or null where the schema says so, nothing else.
function isQuote(v: unknown): v is Quote {
  if (!isObject(v) || typeof v["date"] !== "string" || !(typeof v["currency"] === "string" || v["currency"] === null)) {
    return false;
  }
  const known = new Set([...quoteNumbers, "date", "currency", "adjustment_factor"]);
  return (
    quoteNumbers.every((k) => typeof v[k] === "number" || v[k] === null) &&
    Object.keys(v).every((k) => known.has(k)) &&
    (v["adjustment_factor"] === undefined || typeof v["adjustment_factor"] === "number")
  );
}

function isStreamBar(v: unknown): v is StreamBar {
  return isObject(v) && typeof v["ticker"] === "string" && isQuote(v["bar"]) && Object.keys(v).length === 2;
}

function isStreamQuote(v: unknown): v is StreamQuote {
  return isObject(v) && typeof v["ticker"] === "string" && isQuote(v["quote"]) && Object.keys(v).length === 2;
}

function isStreamSession(v: unknown): v is StreamSession {
  const states = ["none", "open", "close", "handover"];
  return (
    isObject(v) &&
    (typeof v["session"] === "string" || v["session"] === null) &&
    typeof v["state"] === "string" &&
    states.includes(v["state"])
  );
}

// Want is what the server's session holds: per ticker, the closes of its
// 1-minute bars in time order.
export type Want = Map<string, number[]>;

// parseWant reads PREGAO_STREAM_WANT: "LITA3:10.01,10.02;PLAE3:20.5".
export function parseWant(text: string): Want {
  const want: Want = new Map();
  for (const part of text.split(";")) {
    const [ticker, closes] = part.split(":");
    if (ticker !== undefined && ticker !== "" && closes !== undefined) {
      want.set(ticker, closes.split(",").map(Number));
    }
  }
  return want;
}

// streamSession reads the stream of want's tickers from before the
// session (the Last-Event-ID of the state "none") until every bar of
// want and a quote of each ticker arrived, or 30 s passed.
export async function streamSession(c: PregaoClient, report: Report, want: Want, session: string): Promise<void> {
  const op = "stream: GET /v2/stream/quotes";
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 30_000);
  const bars = new Map<string, Quote[]>();
  const quotes = new Map<string, Quote>();
  const states: string[] = [];
  const problems: string[] = [];
  let wanted = 0;
  for (const closes of want.values()) {
    wanted += closes.length;
  }
  let got = 0;
  let status = 0;
  let lastId = "";
  try {
    const { data, response } = await c.GET("/v2/stream/quotes", {
      params: { query: { tickers: [...want.keys()] } },
      headers: { "Last-Event-ID": "0.0.0.0/0.0.0.0//s0" },
      parseAs: "stream",
      signal: abort.signal,
    });
    status = response.status;
    if (data === undefined || data === null) {
      report(op, status, 200, false, "no body");
      return;
    }
    const parser = await readEventStream(data, (e) => {
      const v: unknown = JSON.parse(e.data);
      switch (e.event) {
        case "session":
          if (isStreamSession(v)) {
            states.push(`${v.state} ${v.session ?? "null"}`);
          } else {
            problems.push(`session: ${e.data}`);
          }
          break;
        case "bar":
          if (isStreamBar(v)) {
            const list = bars.get(v.ticker) ?? [];
            list.push(v.bar);
            bars.set(v.ticker, list);
            got++;
          } else {
            problems.push(`bar: ${e.data}`);
          }
          break;
        case "quote":
          if (isStreamQuote(v)) {
            quotes.set(v.ticker, v.quote);
          } else {
            problems.push(`quote: ${e.data}`);
          }
          break;
        default:
          problems.push(`${e.event}: ${e.data}`);
      }
      return got < wanted || quotes.size < want.size;
    });
    lastId = parser.lastEventId;
  } catch (err: unknown) {
    problems.push(String(err));
  } finally {
    clearTimeout(timer);
  }
  for (const [ticker, closes] of want) {
    const list = bars.get(ticker) ?? [];
    const gotCloses = list.map((q) => q.close_price);
    const ordered = list.every((q, i) => i === 0 || (list[i - 1]?.date ?? "") < q.date);
    if (JSON.stringify(gotCloses) !== JSON.stringify(closes) || !ordered || !list.every((q) => q.date.startsWith(session))) {
      problems.push(`${ticker}: bars ${JSON.stringify(list)}, want closes ${JSON.stringify(closes)}`);
    }
    const last = closes[closes.length - 1];
    const q = quotes.get(ticker);
    if (q === undefined || q.close_price !== last || q.currency !== "BRL") {
      problems.push(`${ticker}: quote ${JSON.stringify(q)}, want close ${last}`);
    }
  }
  if (states[0] !== `open ${session}`) {
    problems.push(`states ${JSON.stringify(states)}, want open ${session} first`);
  }
  if (lastId === "") {
    problems.push("no event id");
  }
  report(op, status, 200, problems.length === 0, problems.join("; "));
  if (problems.length === 0) {
    console.log(`ok stream: ${got} bars of ${want.size} tickers, ${quotes.size} quotes, states ${states.join(", ")}, last id ${lastId}`);
  }
}
