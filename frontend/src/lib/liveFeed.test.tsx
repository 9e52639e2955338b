import { act, renderHook, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { FakeWebSocket } from "../test/fakes";
import { useLiveFeed } from "./liveFeed";

type Message = { type: "add"; value: number } | { type: "unknown" };

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

const apply = (current: number[] | null, message: Message) =>
  message.type === "add" ? [...(current ?? []), message.value] : current;

beforeEach(() => {
  FakeWebSocket.instances = [];
  vi.stubGlobal("WebSocket", FakeWebSocket);
});

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("useLiveFeed", () => {
  it("opens the websocket only after the first read, then applies its messages", async () => {
    const read = deferred<number[]>();
    const load = () => read.promise;
    const { result } = renderHook(() => useLiveFeed<number[], Message>({ load, socketUrl: "ws://feed/", apply }));
    expect(result.current.connection).toBe("connecting");
    await act(async () => undefined);
    expect(FakeWebSocket.instances).toHaveLength(0);

    await act(async () => read.resolve([1]));
    await waitFor(() => expect(FakeWebSocket.instances).toHaveLength(1));
    FakeWebSocket.latest().open();
    expect(result.current.connection).toBe("live");
    FakeWebSocket.latest().receive({ type: "add", value: 2 });
    FakeWebSocket.latest().receive({ type: "unknown" });
    act(() => FakeWebSocket.latest().onmessage?.({ data: "not json" }));
    expect(result.current.data).toEqual([1, 2]);
  });

  it("reads at once when the websocket drops, polls until it reconnects, and stops polling then", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let reads = 0;
    const load = async () => [++reads];
    const { result } = renderHook(() =>
      useLiveFeed<number[], Message>({ load, socketUrl: "ws://feed/", apply, pollMs: () => 2000 }),
    );
    await act(async () => undefined);
    FakeWebSocket.latest().open();
    expect(reads).toBe(1);

    FakeWebSocket.latest().drop();
    await act(async () => undefined);
    expect(result.current.connection).toBe("polling");
    expect(reads).toBe(2);
    await act(() => vi.advanceTimersByTimeAsync(1000)); // the first reconnect comes after 1 s
    expect(FakeWebSocket.instances).toHaveLength(2);
    await act(() => vi.advanceTimersByTimeAsync(1000)); // still down: the poll reads
    expect(reads).toBe(3);

    FakeWebSocket.latest().open();
    expect(result.current.connection).toBe("live");
    await act(() => vi.advanceTimersByTimeAsync(10_000));
    expect(reads).toBe(3);
    expect(result.current.data).toEqual([3]);
  });

  it("does not reconnect a websocket the server refused, but keeps polling", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let reads = 0;
    const load = async () => [++reads];
    renderHook(() => useLiveFeed<number[], Message>({ load, socketUrl: "ws://feed/", apply }));
    await act(async () => undefined);
    FakeWebSocket.latest().drop(4403);
    await act(() => vi.advanceTimersByTimeAsync(60_000));
    expect(FakeWebSocket.instances).toHaveLength(1);
    expect(reads).toBeGreaterThan(10);
  });

  it("reads again once after messages that settle something, and reports every change with the state before it", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let reads = 0;
    const changes: [number[] | null, number[]][] = [];
    const load = async () => [100 + ++reads];
    renderHook(() =>
      useLiveFeed<number[], Message>({
        load,
        socketUrl: "ws://feed/",
        apply,
        reloadAfter: (message) => message.type === "add" && message.value > 5,
        onChange: (before, after) => changes.push([before, after]),
      }),
    );
    await act(async () => undefined);
    FakeWebSocket.latest().open();
    FakeWebSocket.latest().receive({ type: "add", value: 9 });
    FakeWebSocket.latest().receive({ type: "add", value: 7 });
    await act(() => vi.advanceTimersByTimeAsync(600));
    expect(reads).toBe(2);
    expect(changes).toEqual([
      [null, [101]],
      [[101], [101, 9]],
      [[101, 9], [101, 9, 7]],
      [[101, 9, 7], [102]],
    ]);
  });

  it("watches nothing while there is no websocket to open", async () => {
    const load = async () => [1];
    const { result } = renderHook(() => useLiveFeed<number[], Message>({ load, socketUrl: null, apply }));
    await waitFor(() => expect(result.current.data).toEqual([1]));
    expect(result.current.connection).toBe("idle");
    expect(FakeWebSocket.instances).toHaveLength(0);
  });
});
