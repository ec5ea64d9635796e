// The last lines a process printed, for an error that quotes them (see formatTail).

/** Keeps the last `limit` lines a process printed (stdout and stderr interleaved). */
export class OutputTail {
  private readonly lines: string[] = [];
  private partial = '';
  constructor(private readonly limit = 40) {}

  push(chunk: Buffer | string): void {
    const text = this.partial + chunk.toString();
    const parts = text.split(/\r?\n/);
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.add(line);
    if (this.partial.length > 4096) {
      this.add(this.partial);
      this.partial = '';
    }
  }

  private add(line: string): void {
    this.lines.push(line.length > 500 ? `${line.slice(0, 500)}…` : line);
    if (this.lines.length > this.limit) this.lines.shift();
  }

  /** The last `n` lines, including an unterminated last line. */
  last(n = 20): string[] {
    const all = this.partial ? [...this.lines, this.partial] : [...this.lines];
    return all.slice(-n);
  }
}
