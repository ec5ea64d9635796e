import { runTool } from './run-tool.js';

/**
 * Demangles C++ symbol names (`_ZN4node6crypto6PBKDF2...`) with one run of c++filt, names on stdin
 * one per line (never as arguments). On any failure the names come back unchanged with an error.
 */
export async function demangle(
  names: string[],
  tool: string,
  timeoutMs: number,
): Promise<{ names: string[]; error?: string }> {
  if (names.length === 0) return { names };
  const result = await runTool(tool, [], timeoutMs, Buffer.from(`${names.join('\n')}\n`, 'utf8'));
  if (result.error) {
    const why = result.missing ? `${tool} is not available (${result.error})` : result.error;
    return { names, error: `${why}: C++ names stay mangled; install binutils` };
  }
  const lines = result.stdout.toString('utf8').split('\n');
  if (lines.length < names.length) {
    return {
      names,
      error: `${tool} printed ${lines.length} lines for ${names.length} names; C++ names stay mangled`,
    };
  }
  return { names: names.map((name, i) => lines[i] || name) };
}
