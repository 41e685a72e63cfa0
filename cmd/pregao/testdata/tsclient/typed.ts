// Calls written as a user of the generated client writes them: each
// answer used through its generated type, without a cast, a non-null
// assertion or any. tsc --strict fails here if the document stops typing
// an answer precisely (a union with string, a union of shapes, a
// request field with a default made required).
import type { PregaoClient, Report } from "./client.js";

export async function typedCalls(c: PregaoClient, report: Report): Promise<void> {
  {
    // A current quote: one Quote, its close a number or null.
    const op = "typed: GET /v2/quotes/{ticker}/current";
    const { data, response } = await c.GET("/v2/quotes/{ticker}/current", { params: { path: { ticker: "LITA3" } } });
    const close: number | null | undefined = data?.close_price;
    report(op, response.status, 200, typeof close === "number" && data?.currency === "BRL");
  }
  {
    // A historical series: an array of Quote, adjustment_factor on each.
    const op = "typed: GET /v2/quotes/{ticker}/historical";
    const { data, response } = await c.GET("/v2/quotes/{ticker}/historical", {
      params: { path: { ticker: "CAJT3" }, query: { start_date: "2025-02-10", end_date: "2025-02-17", adjusted: true } },
    });
    const factors: (number | undefined)[] = (data ?? []).map((q) => q.adjustment_factor);
    report(op, response.status, 200, factors.length === 6 && factors[0] === 3 && factors[5] === 1, JSON.stringify(factors));
  }
  {
    // The chart presets, by name.
    const op = "typed: GET /v2/quotes/{ticker}/chart";
    const { data, response } = await c.GET("/v2/quotes/{ticker}/chart", { params: { path: { ticker: "PLAE3" } } });
    const oneDay = data?.chart["1d"] ?? [];
    report(op, response.status, 200, oneDay.length > 0 && oneDay.every((q) => q.date.endsWith("Z")));
  }
  {
    // A batch: each ticker's quote or its error, told apart by "error".
    const op = "typed: POST /v2/quotes/current";
    const { data, response } = await c.POST("/v2/quotes/current", { body: { tickers: ["LITA3", "XXXX3"] } });
    let quotes = 0;
    let missing = 0;
    for (const answer of Object.values(data ?? {})) {
      if ("error" in answer) {
        missing += answer.error.status === 404 ? 1 : 0;
      } else if (typeof answer.close_price === "number") {
        quotes++;
      }
    }
    report(op, response.status, 200, quotes === 1 && missing === 1);
  }
  {
    // An unknown ticker: the error answer is typed too.
    const op = "typed: GET /v2/quotes/{ticker}/current (404)";
    const { error, response } = await c.GET("/v2/quotes/{ticker}/current", { params: { path: { ticker: "NOPE3" } } });
    report(op, response.status, 404, error?.error.message === "Ticker not found");
  }
  {
    // The screener by index membership, without limit or primaryOnly
    // (defaults: optional), then every member by pages of 20 (offset).
    const op = "typed: POST /v2/screener (index filter, offset)";
    const members = await c.GET("/v2/indexes/{symbol}", { params: { path: { symbol: "IBOV" } } });
    const inIndex = new Set((members.data?.members ?? []).map((m) => m.ticker));
    const first = await c.POST("/v2/screener", { body: { filters: [{ type: "index", in: ["IBOV"] }] } });
    const total = Number(first.response.headers.get("X-Total-Count"));
    const seen: string[] = [];
    for (let offset = 0; offset < total; offset += 20) {
      const page = await c.POST("/v2/screener", {
        body: { primaryOnly: true, limit: 20, offset, filters: [{ type: "index", in: ["IBOV"] }] },
      });
      for (const row of page.data?.data ?? []) {
        if (row.rank === seen.length + 1 && inIndex.has(row.ticker)) {
          seen.push(row.ticker);
        }
      }
    }
    const ok = total > 20 && seen.length === total && (first.data?.data ?? []).every((r) => inIndex.has(r.ticker));
    report(op, first.response.status, 200, ok, `X-Total-Count ${total}, ${seen.length} rows in order`);
  }
  {
    // Past the screener's first 500 rows.
    const op = "typed: POST /v2/screener (past 500 rows)";
    const { data, response } = await c.POST("/v2/screener", { body: { primaryOnly: false, limit: 500, offset: 500 } });
    const total = Number(response.headers.get("X-Total-Count"));
    const rows = data?.data ?? [];
    report(op, response.status, 200, total > 500 && rows.length === Math.min(500, total - 500) && rows[0]?.rank === 501, `X-Total-Count ${total}`);
  }
  {
    // CSV: its own operation, a string; the JSON one stays JSON.
    const op = "typed: GET /v2/quotes/{ticker}/historical.csv";
    const { data, response } = await c.GET("/v2/quotes/{ticker}/historical.csv", {
      params: { path: { ticker: "CAJT3" }, query: { start_date: "2025-02-10", end_date: "2025-02-17" } },
      parseAs: "text",
    });
    const csv: string = data ?? "";
    report(op, response.status, 200, csv.startsWith("date,open_price,") && csv.trim().split("\n").length === 7);
  }
}
