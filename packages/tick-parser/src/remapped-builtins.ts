const MB = 1024 * 1024;
/** V8 reserves code ranges of these sizes on 64-bit targets (with and without pointer compression). */
const CODE_RANGE_SIZES = [128 * MB, 256 * MB, 512 * MB, 1024 * MB, 2048 * MB];
/** Allocation granularity of the code range (V8's memory chunk size). */
const CODE_RANGE_PAGE = 256 * 1024;

/**
 * V8 copies the builtins embedded in the binary into its code range ("short builtin calls") and
 * runs them from there, but logs their `code-creation` events at the binary's addresses. Samples
 * in the copy would be unaccounted. The copy sits at the end of the code range, rounded to the
 * range's page size (V8's CodeRange::RemapEmbeddedBuiltins); this maps copy addresses back.
 */
export class RemappedBuiltins {
  private rangeStart = -1;
  private rangeSize = 0;
  private blobStart = Number.POSITIVE_INFINITY;
  private blobEnd = 0;
  /** copy address - original address, once found; NaN before. */
  private shift = Number.NaN;

  setCodeRange(start: number, size: number): void {
    this.rangeStart = start;
    this.rangeSize = size;
    this.shift = Number.NaN;
  }

  addBuiltin(start: number, size: number): void {
    if (start < this.blobStart) this.blobStart = start;
    if (start + size > this.blobEnd) this.blobEnd = start + size;
    this.shift = Number.NaN;
  }

  /** Cheap test: could `addr` be in the copy? */
  mayContain(addr: number): boolean {
    return (
      this.rangeStart >= 0 &&
      this.blobEnd > this.blobStart &&
      addr >= this.rangeStart &&
      addr < this.rangeStart + 2048 * MB
    );
  }

  /** The binary address of copy address `addr`, or -1. */
  toOriginal(addr: number): number {
    if (Number.isNaN(this.shift)) {
      const shift = this.findShift(addr);
      if (shift === undefined) return -1; // not in the copy; try again with the next address
      this.shift = shift;
    }
    const original = addr - this.shift;
    return original >= this.blobStart && original < this.blobEnd ? original : -1;
  }

  private findShift(addr: number): number | undefined {
    const blobSize = this.blobEnd - this.blobStart;
    const allocated = Math.ceil(blobSize / CODE_RANGE_PAGE) * CODE_RANGE_PAGE;
    const sizes = this.rangeSize > 0 ? [this.rangeSize, ...CODE_RANGE_SIZES] : CODE_RANGE_SIZES;
    for (const size of sizes) {
      const copyStart = this.rangeStart + size - allocated;
      if (addr >= copyStart && addr < copyStart + blobSize) return copyStart - this.blobStart;
    }
    return undefined;
  }
}
