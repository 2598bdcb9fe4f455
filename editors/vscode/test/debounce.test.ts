// Debounce + cancellation of the previous request (src/debounce.ts), on a fake clock.

import assert from "node:assert/strict";
import { describe, it } from "node:test";

import { LatestRequest, type Scheduler, type TokenSourceLike } from "../src/debounce";

class FakeClock implements Scheduler {
  now = 0;
  private next = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.now + ms, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  advance(ms: number): void {
    this.now += ms;
    for (const [id, timer] of [...this.timers].sort((a, b) => a[1].at - b[1].at)) {
      if (timer.at <= this.now) {
        this.timers.delete(id);
        timer.callback();
      }
    }
  }
  get pending(): number {
    return this.timers.size;
  }
}

interface Token {
  isCancellationRequested: boolean;
}

class Source implements TokenSourceLike<Token> {
  readonly token: Token = { isCancellationRequested: false };
  disposed = false;
  cancel(): void {
    this.token.isCancellationRequested = true;
  }
  dispose(): void {
    this.disposed = true;
  }
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup() {
  const clock = new FakeClock();
  const calls: { input: string; token: Token; answer: Deferred<string> }[] = [];
  const results: string[] = [];
  const errors: unknown[] = [];
  const busy: boolean[] = [];
  const sources: Source[] = [];
  const latest = new LatestRequest<string, string, Token>({
    delayMs: 200,
    scheduler: clock,
    newTokenSource: () => {
      const source = new Source();
      sources.push(source);
      return source;
    },
    run: (input, token) => {
      const answer = deferred<string>();
      calls.push({ input, token, answer });
      return answer.promise;
    },
    onResult: (result) => results.push(result),
    onError: (error) => errors.push(error),
    onBusy: (value) => busy.push(value),
  });
  return { clock, calls, results, errors, busy, sources, latest };
}

describe("LatestRequest", () => {
  it("waits for the quiet time and runs only the last input", () => {
    const { clock, calls, latest } = setup();
    latest.schedule("r");
    clock.advance(100);
    latest.schedule("re");
    clock.advance(100);
    latest.schedule("ret");
    clock.advance(199);
    assert.equal(calls.length, 0);
    clock.advance(1);
    assert.deepEqual(
      calls.map((c) => c.input),
      ["ret"],
    );
    assert.equal(clock.pending, 0);
  });

  it("cancels the request in flight when the input changes", async () => {
    const { clock, calls, results, sources, latest } = setup();
    latest.schedule("one");
    clock.advance(200);
    latest.schedule("two");
    assert.equal(calls[0].token.isCancellationRequested, true);
    assert.equal(sources[0].disposed, true);
    clock.advance(200);
    assert.equal(calls[1].token.isCancellationRequested, false);

    // the stale answer arrives late and must be ignored
    calls[0].answer.resolve("stale");
    calls[1].answer.resolve("fresh");
    await flush();
    assert.deepEqual(results, ["fresh"]);
  });

  it("drops the error of a superseded request but reports the latest one", async () => {
    const { clock, calls, errors, latest } = setup();
    latest.runNow("one");
    latest.runNow("two");
    calls[0].answer.reject(new Error("cancelled"));
    calls[1].answer.reject(new Error("bad query"));
    await flush();
    assert.equal(errors.length, 1);
    assert.equal((errors[0] as Error).message, "bad query");
    assert.equal(clock.pending, 0);
  });

  it("is busy from schedule() until the latest answer", async () => {
    const { clock, calls, busy, latest } = setup();
    latest.schedule("a");
    assert.equal(latest.isBusy, true);
    latest.schedule("ab");
    clock.advance(200);
    assert.deepEqual(busy, [true]);
    calls[0].answer.resolve("done");
    await flush();
    assert.deepEqual(busy, [true, false]);
    assert.equal(latest.isBusy, false);
  });

  it("runNow skips the quiet time and clears a pending timer", () => {
    const { clock, calls, latest } = setup();
    latest.schedule("typed");
    latest.runNow("now");
    assert.deepEqual(
      calls.map((c) => c.input),
      ["now"],
    );
    clock.advance(1000);
    assert.equal(calls.length, 1);
  });

  it("cancel() and dispose() stop everything", async () => {
    const { clock, calls, results, busy, latest } = setup();
    latest.runNow("a");
    latest.schedule("b");
    latest.dispose();
    assert.equal(calls[0].token.isCancellationRequested, true);
    assert.deepEqual(busy, [true, false]);
    clock.advance(1000);
    latest.schedule("after dispose");
    clock.advance(1000);
    assert.equal(calls.length, 1);
    calls[0].answer.resolve("late");
    await flush();
    assert.deepEqual(results, []);
  });

  it("reports a request that throws synchronously as an error", async () => {
    const errors: unknown[] = [];
    const latest = new LatestRequest<string, string, Token>({
      delayMs: 0,
      newTokenSource: () => new Source(),
      run: () => {
        throw new Error("not connected");
      },
      onResult: () => assert.fail("no result expected"),
      onError: (error) => errors.push(error),
    });
    latest.runNow("x");
    await flush();
    assert.equal((errors[0] as Error).message, "not connected");
  });

  it("uses real timers by default", async () => {
    const seen: string[] = [];
    const latest = new LatestRequest<string, string, Token>({
      delayMs: 20,
      newTokenSource: () => new Source(),
      run: async (input) => input,
      onResult: (result) => seen.push(result),
      onError: (error) => assert.fail(String(error)),
    });
    latest.schedule("a");
    latest.schedule("b");
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(seen, ["b"]);
  });
});
