/** The first field of V8 log lines this reader acts on, as bytes (compared without decoding). */
const word = (text: string) => Buffer.from(text, 'latin1');
export const TICK = word('tick');
export const CODE_CREATION = word('code-creation');
export const CODE_MOVE = word('code-move');
export const CODE_DELETE = word('code-delete');
export const SFI_MOVE = word('sfi-move');
export const SHARED_LIBRARY = word('shared-library');
export const V8_VERSION = word('v8-version');
export const NEW = word('new');
export const CODE_RANGE = word('CodeRange');
/** The two kinds that make most of a log's bytes and carry nothing for a CPU profile. */
export const SCRIPT_SOURCE = word('script-source');
export const CODE_SOURCE_INFO = word('code-source-info');

/** Line kinds V8 writes that carry nothing for a CPU profile. */
export const IGNORED_KINDS: ReadonlySet<string> = new Set([
  'code-source-info',
  'script-source',
  'script-details',
  'script',
  'shared-library-end',
  'v8-platform',
  'profiler',
  'new',
  'delete',
  'heap-capacity',
  'heap-available',
  'code-deopt',
  'code-disable-optimization',
  'timer-event-start',
  'timer-event-end',
  'current-time',
  'heap-sample-begin',
  'heap-sample-end',
  'heap-sample-item',
  'function-creation',
  'function-move',
  'function-delete',
  'code-allocate',
  'begin-code-region',
  'end-code-region',
  'active-runtime-timer',
  'snapshot-code-name',
  'compilation-cache',
  'tick-timestamp',
  'map-create',
  'map-details',
  'map',
  'ic',
  'LoadIC',
  'StoreIC',
  'KeyedLoadIC',
  'KeyedStoreIC',
  'LoadGlobalIC',
  'StoreGlobalIC',
  'StoreInArrayLiteralIC',
  'suspect-read',
  'api',
  'cpp',
  'wasm-code-creation',
  'code-creation-with-source',
  'sharedlibrary',
  'jit-code',
  'code-move-wasm',
]);
