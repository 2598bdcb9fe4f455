// Search-as-you-type plumbing: wait until the input rests (debounce), then run
// one request, cancelling the one before it, and report only the answer to the
// latest input. Generic over the token source so it runs without `vscode`
// (VS Code's CancellationTokenSource fits the interface as is).

export interface CancellationTokenLike {
  readonly isCancellationRequested: boolean;
}

export interface TokenSourceLike<T extends CancellationTokenLike> {
  readonly token: T;
  cancel(): void;
  dispose(): void;
}

/** setTimeout/clearTimeout, injectable so tests can drive time. */
export interface Scheduler {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realScheduler: Scheduler = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface LatestRequestOptions<Q, R, T extends CancellationTokenLike> {
  /** quiet time after the last schedule() before the request starts */
  delayMs: number;
  newTokenSource: () => TokenSourceLike<T>;
  run: (input: Q, token: T) => Promise<R>;
  /** the answer to the latest input only */
  onResult: (result: R, input: Q) => void;
  /** a failure of the latest request (never one that was superseded) */
  onError: (error: unknown, input: Q) => void;
  /** true from schedule() until the latest request settles or is cancelled */
  onBusy?: (busy: boolean) => void;
  scheduler?: Scheduler;
}

export class LatestRequest<Q, R, T extends CancellationTokenLike> {
  private timer: unknown = undefined;
  private source: TokenSourceLike<T> | undefined;
  private generation = 0;
  private busy = false;
  private disposed = false;
  private readonly scheduler: Scheduler;

  constructor(private readonly options: LatestRequestOptions<Q, R, T>) {
    this.scheduler = options.scheduler ?? realScheduler;
  }

  get isBusy(): boolean {
    return this.busy;
  }

  /** Starts the request for `input` after the quiet time; supersedes anything before. */
  schedule(input: Q): void {
    this.supersede();
    if (this.disposed) {
      return;
    }
    this.setBusy(true);
    const generation = this.generation;
    this.timer = this.scheduler.setTimeout(() => {
      this.timer = undefined;
      if (generation === this.generation) {
        this.start(input, generation);
      }
    }, this.options.delayMs);
  }

  /** Starts the request for `input` now; supersedes anything before. */
  runNow(input: Q): void {
    this.supersede();
    if (this.disposed) {
      return;
    }
    this.setBusy(true);
    this.start(input, this.generation);
  }

  /** Drops the pending timer and cancels the request in flight. */
  cancel(): void {
    this.supersede();
    this.setBusy(false);
  }

  dispose(): void {
    this.cancel();
    this.disposed = true;
  }

  private supersede(): void {
    this.generation++;
    if (this.timer !== undefined) {
      this.scheduler.clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.source !== undefined) {
      this.source.cancel();
      this.source.dispose();
      this.source = undefined;
    }
  }

  private start(input: Q, generation: number): void {
    const source = this.options.newTokenSource();
    this.source = source;
    let promise: Promise<R>;
    try {
      promise = this.options.run(input, source.token);
    } catch (error) {
      promise = Promise.reject(error);
    }
    promise.then(
      (result) => {
        if (this.settle(generation, source)) {
          this.options.onResult(result, input);
        }
      },
      (error: unknown) => {
        if (this.settle(generation, source)) {
          this.options.onError(error, input);
        }
      },
    );
  }

  /** True when the request of `generation` is still the latest one. */
  private settle(generation: number, source: TokenSourceLike<T>): boolean {
    if (generation !== this.generation || source.token.isCancellationRequested) {
      return false;
    }
    source.dispose();
    this.source = undefined;
    this.setBusy(false);
    return true;
  }

  private setBusy(busy: boolean): void {
    if (this.busy !== busy) {
      this.busy = busy;
      this.options.onBusy?.(busy);
    }
  }
}
