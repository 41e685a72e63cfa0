// An EventSource-style reader of a text/event-stream answer: the event
// stream format of the HTML standard (fields event, data, id and retry,
// comment lines, CR, LF or CRLF line ends, the Last-Event-ID a
// reconnection sends). It reads the body of a fetch (openapi-fetch's
// parseAs: "stream") rather than using EventSource, which cannot send
// the Authorization header and which Node before 22 lacks.

// StreamEvent is one dispatched event: its type ("message" when the
// stream names none), its data (the data lines joined by "\n") and the
// last event id seen (the one a reconnection sends as Last-Event-ID).
export interface StreamEvent {
  event: string;
  data: string;
  id: string;
}

// EventStreamParser turns the text of an event stream, given in chunks
// cut anywhere, into events.
export class EventStreamParser {
  private buf = "";
  private data: string[] = [];
  private event = "";
  // lastEventId is the id of the last event with one (kept across events).
  lastEventId = "";
  // retry is the reconnection time the stream asked for, in milliseconds.
  retry: number | undefined;

  constructor(private readonly onEvent: (e: StreamEvent) => void) {}

  // push parses chunk; a line cut at the chunk's end waits for the rest.
  push(chunk: string): void {
    this.buf += chunk;
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (m === null) {
        return;
      }
      if (m[0] === "\r" && m.index === this.buf.length - 1) {
        return; // maybe the CR of a CRLF cut in two
      }
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === "") {
      this.dispatch();
      return;
    }
    if (line.startsWith(":")) {
      return; // a comment: the server's heartbeat
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) {
      value = value.slice(1);
    }
    switch (field) {
      case "event":
        this.event = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) {
          this.lastEventId = value;
        }
        break;
      case "retry":
        if (/^\d+$/.test(value)) {
          this.retry = Number(value);
        }
        break;
    }
  }

  private dispatch(): void {
    const event = this.event === "" ? "message" : this.event;
    this.event = "";
    if (this.data.length === 0) {
      return;
    }
    const data = this.data.join("\n");
    this.data = [];
    this.onEvent({ event, data, id: this.lastEventId });
  }
}

// readEventStream reads body to its end (or until onEvent returns false),
// passing each event to onEvent; it returns the parser, whose
// lastEventId a reconnection sends.
export async function readEventStream(
  body: ReadableStream<Uint8Array>,
  onEvent: (e: StreamEvent) => boolean,
): Promise<EventStreamParser> {
  let more = true;
  const parser = new EventStreamParser((e) => {
    if (more) {
      more = onEvent(e);
    }
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    while (more) {
      const { done, value } = await reader.read();
      if (done) {
        break;
      }
      parser.push(decoder.decode(value, { stream: true }));
    }
  } finally {
    await reader.cancel();
  }
  return parser;
}

// selfTest parses a stream written as the standard's examples write one,
// cut into every pair of chunks, and returns what is wrong ("" when
// nothing).
export function selfTest(): string {
  const text =
    ": heartbeat\r\nretry: 3000\r\n\r\n" +
    "event: bar\nid: 41\ndata: {\"ticker\":\"LITA3\",\n" +
    "data: \"close\":95.95}\n\n" +
    "data:no space\r" +
    "\r" +
    "event: session\ndata: {\"state\":\"closed\"}\nid\n\n" +
    "id: 42\n\n" +
    "data: kept until the end\n";
  const want: StreamEvent[] = [
    { event: "bar", data: '{"ticker":"LITA3",\n"close":95.95}', id: "41" },
    { event: "message", data: "no space", id: "41" },
    { event: "session", data: '{"state":"closed"}', id: "" },
  ];
  for (let cut = 0; cut <= text.length; cut++) {
    const got: StreamEvent[] = [];
    const p = new EventStreamParser((e) => got.push(e));
    p.push(text.slice(0, cut));
    p.push(text.slice(cut));
    if (JSON.stringify(got) !== JSON.stringify(want) || p.retry !== 3000 || p.lastEventId !== "42") {
      return `cut at ${cut}: ${JSON.stringify(got)} retry ${p.retry} last id ${p.lastEventId}`;
    }
  }
  return "";
}
