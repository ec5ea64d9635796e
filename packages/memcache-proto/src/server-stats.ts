/** Counters a server reports through `stats`, named as memcached names them. */
export class ServerStats {
  readonly startedAt = Date.now();
  currConnections = 0;
  totalConnections = 0;
  rejectedConnections = 0;
  cmdGet = 0;
  cmdSet = 0;
  cmdFlush = 0;
  cmdTouch = 0;
  cmdMeta = 0;
  getHits = 0;
  getMisses = 0;
  getExpired = 0;
  getFlushed = 0;
  deleteHits = 0;
  deleteMisses = 0;
  incrHits = 0;
  incrMisses = 0;
  decrHits = 0;
  decrMisses = 0;
  casHits = 0;
  casMisses = 0;
  casBadval = 0;
  touchHits = 0;
  touchMisses = 0;
  authCmds = 0;
  authErrors = 0;
  bytesRead = 0;
  bytesWritten = 0;

  /** `stats reset`: zero the counters that memcached resets. */
  reset(): void {
    this.totalConnections = 0;
    this.rejectedConnections = 0;
    this.cmdGet = this.cmdSet = this.cmdFlush = this.cmdTouch = this.cmdMeta = 0;
    this.getHits = this.getMisses = this.getExpired = this.getFlushed = 0;
    this.deleteHits = this.deleteMisses = this.incrHits = this.incrMisses = 0;
    this.decrHits = this.decrMisses = this.casHits = this.casMisses = this.casBadval = 0;
    this.touchHits = this.touchMisses = this.authCmds = this.authErrors = 0;
    this.bytesRead = this.bytesWritten = 0;
  }
}
