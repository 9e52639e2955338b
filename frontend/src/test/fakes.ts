import { act } from "@testing-library/react";

/**
 * A WebSocket the test drives: `open()`, `receive()` server messages, `drop()` the connection;
 * what the page sent is in `sent` (parsed).
 */
export class FakeWebSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 3;
  static instances: FakeWebSocket[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number }) => void) | null = null;
  readyState = FakeWebSocket.CONNECTING;
  closed = false;
  sent: unknown[] = [];

  constructor(readonly url: string) {
    FakeWebSocket.instances.push(this);
  }

  static latest(): FakeWebSocket {
    const socket = FakeWebSocket.instances[FakeWebSocket.instances.length - 1];
    if (!socket) throw new Error("no websocket was opened");
    return socket;
  }

  close() {
    this.closed = true;
    this.readyState = FakeWebSocket.CLOSED;
  }

  send(data: string) {
    if (this.readyState !== FakeWebSocket.OPEN) throw new Error("sent on a websocket that is not open");
    this.sent.push(JSON.parse(data));
  }

  open() {
    this.readyState = FakeWebSocket.OPEN;
    act(() => this.onopen?.());
  }

  receive(message: unknown) {
    act(() => this.onmessage?.({ data: JSON.stringify(message) }));
  }

  drop(code = 1006) {
    this.readyState = FakeWebSocket.CLOSED;
    act(() => this.onclose?.({ code }));
  }
}

/** An XMLHttpRequest the test answers: `progress()` then `respond()`. */
export class FakeXHR {
  static instances: FakeXHR[] = [];
  upload: { onprogress: ((event: { lengthComputable: boolean; loaded: number; total: number }) => void) | null } = { onprogress: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;
  withCredentials = false;
  status = 0;
  responseText = "";
  method = "";
  url = "";
  headers: Record<string, string> = {};
  body: FormData | null = null;

  constructor() {
    FakeXHR.instances.push(this);
  }

  open(method: string, url: string) {
    this.method = method;
    this.url = url;
  }

  setRequestHeader(name: string, value: string) {
    this.headers[name] = value;
  }

  send(body: FormData) {
    this.body = body;
  }

  abort() {
    this.onabort?.();
  }

  progress(fraction: number) {
    act(() => this.upload.onprogress?.({ lengthComputable: true, loaded: fraction * 100, total: 100 }));
  }

  async respond(status: number, body: unknown) {
    this.status = status;
    this.responseText = JSON.stringify(body);
    await act(async () => this.onload?.());
  }
}
