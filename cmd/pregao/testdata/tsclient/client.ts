// The client of the test: openapi-fetch over the types openapi-typescript
// generated from the served document (schema.ts, written by the test).
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema.js";

export type PregaoClient = Client<paths>;

// newClient returns a client of the API at baseUrl that sends key.
export function newClient(baseUrl: string, key: string): PregaoClient {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${key}` } });
}

// Report records one checked operation: "ok OP" when it answered want
// and its answer decoded, else what went wrong (the Go test reads these
// lines).
export type Report = (op: string, status: number, want: number, decoded: boolean, detail?: string) => void;

export const report: Report = (op, status, want, decoded, detail = "") => {
  if (status !== want) {
    console.log(`${op}: status ${status}, want ${want} ${detail.slice(0, 200)}`);
  } else if (!decoded) {
    console.log(`${op}: not decoded ${detail.slice(0, 200)}`);
  } else {
    console.log(`ok ${op}`);
  }
};
