/**
 * The request path of this process as its background work sees it (the API's front middleware
 * enters and leaves). It is busy while a request is in flight and for `graceMs` after the last one
 * ended: under load, requests come in waves (those answered by one group commit end together, and
 * their clients' next requests arrive a moment later), and the gap between two waves is not a
 * quiet time. A process that serves no requests (ROLE worker) is never busy.
 */
export class Foreground {
  #inFlight = 0;
  #lastEnd = Number.NEGATIVE_INFINITY;
  constructor(
    private readonly graceMs = 50,
    private readonly now: () => number = () => performance.now(),
  ) {}
  enter(): void {
    this.#inFlight++;
  }
  leave(): void {
    this.#inFlight--;
    this.#lastEnd = this.now();
  }
  get busy(): boolean {
    return this.#inFlight > 0 || this.now() - this.#lastEnd < this.graceMs;
  }
}
