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
type StreamCorrection = components["schemas"]["StreamCorrection"];
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

function isStreamCorrection(v: unknown): v is StreamCorrection {
  return (
    isObject(v) &&
    typeof v["ticker"] === "string" &&
    (isQuote(v["bar"]) || (v["bar"] === null && typeof v["date"] === "string"))
  );
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

// wantBars asks the server for the session's 1-minute bars of each
// ticker (the typed historical operation, interval 60 s): what the
// stream must come to hold.
async function wantBars(c: PregaoClient, tickers: string[], session: string): Promise<Map<string, Quote[]>> {
  const want = new Map<string, Quote[]>();
  for (const ticker of tickers) {
    const { data } = await c.GET("/v2/quotes/{ticker}/historical", {
      params: { path: { ticker }, query: { interval: 60, start_date: session, end_date: session } },
    });
    want.set(ticker, data ?? []);
  }
  return want;
}

// same says two quotes are the same JSON (the server writes fields in
// one order).
function same(a: Quote | undefined, b: Quote | undefined): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// streamSession reads the stream of tickers from before the session (the
// Last-Event-ID of the state "none"), the session being complete, until
// every bar the historical answer holds arrived, a quote of each ticker
// and the state "close" (or 30 s passed): each bar exactly once, in time
// order, equal to the historical answer's; a correction replaces its
// minute; each ticker's quote closes at its last bar's close.
export async function streamSession(c: PregaoClient, report: Report, tickers: string[], session: string): Promise<void> {
  const op = "stream: GET /v2/stream/quotes";
  const want = await wantBars(c, tickers, session);
  let wanted = 0;
  for (const bars of want.values()) {
    wanted += bars.length;
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 30_000);
  const held = new Map<string, Quote>(); // ticker + date: the bar as last sent
  const sent = new Map<string, number>(); // ticker + date: bar events
  const quotes = new Map<string, Quote>();
  const states: string[] = [];
  const problems: string[] = [];
  let status = 0;
  let lastId = "";
  let events = 0;
  try {
    const { data, response } = await c.GET("/v2/stream/quotes", {
      params: { query: { tickers } },
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
      events++;
      const v: unknown = JSON.parse(e.data);
      if (e.event === "session" && isStreamSession(v)) {
        states.push(`${v.state} ${v.session ?? "null"}`);
      } else if (e.event === "bar" && isStreamBar(v)) {
        const k = `${v.ticker} ${v.bar.date}`;
        held.set(k, v.bar);
        sent.set(k, (sent.get(k) ?? 0) + 1);
      } else if (e.event === "correction" && isStreamCorrection(v)) {
        if (v.bar !== null) {
          held.set(`${v.ticker} ${v.bar.date}`, v.bar);
        } else {
          held.delete(`${v.ticker} ${v.date ?? ""}`);
        }
      } else if (e.event === "quote" && isStreamQuote(v)) {
        quotes.set(v.ticker, v.quote);
      } else {
        problems.push(`${e.event}: not its schema: ${e.data.slice(0, 200)}`);
      }
      return held.size < wanted || quotes.size < tickers.length || !states.includes(`close ${session}`);
    });
    lastId = parser.lastEventId;
  } catch (err: unknown) {
    problems.push(String(err));
  } finally {
    clearTimeout(timer);
  }
  let bars = 0;
  for (const [ticker, list] of want) {
    if (list.length === 0) {
      problems.push(`${ticker}: no bars in the historical answer`);
    }
    for (const w of list) {
      const k = `${ticker} ${w.date}`;
      if (!same(held.get(k), w) || sent.get(k) !== 1) {
        problems.push(`${k}: sent ${sent.get(k) ?? 0} times, held ${JSON.stringify(held.get(k))}, want ${JSON.stringify(w)}`);
      }
      bars++;
    }
    const last = list[list.length - 1];
    const q = quotes.get(ticker);
    if (q === undefined || last === undefined || q.close_price !== last.close_price) {
      problems.push(`${ticker}: quote ${JSON.stringify(q)}, last bar ${JSON.stringify(last)}`);
    }
  }
  if (held.size !== wanted) {
    problems.push(`${held.size} bars held, ${wanted} in the historical answers`);
  }
  if (states[0] !== `open ${session}` || !states.includes(`close ${session}`)) {
    problems.push(`states ${JSON.stringify(states)}, want open ${session} first, then close`);
  }
  if (lastId === "") {
    problems.push("no event id");
  }
  report(op, status, 200, problems.length === 0, problems.slice(0, 5).join("; "));
  if (problems.length === 0) {
    console.log(`ok stream: ${events} events, ${bars} bars of ${tickers.join(", ")} as the historical answer, ${quotes.size} quotes, states ${states.join(", ")}`);
  }
}
