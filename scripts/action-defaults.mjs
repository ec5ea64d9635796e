// action.yml's inputs with their declared defaults, as GitHub reads them: it sets INPUT_<NAME> to
// these for every input a step leaves out. Quoted literals only; an expression such as
// `${{ github.token }}` is GitHub's to fill and left out. Used by the Action's end-to-end test
// helper and compare's bench/via-action.mjs, which both run the Action as GitHub does.
import { readFileSync } from 'node:fs';

/** @returns {Record<string, string>} */
export function actionDefaults(file = new URL('../action.yml', import.meta.url)) {
  const text = readFileSync(file, 'utf8');
  const inputs = text.slice(text.indexOf('\ninputs:\n'), text.indexOf('\noutputs:\n'));
  const defaults = {};
  for (const [, name, value] of inputs.matchAll(
    /^ {2}([a-z0-9-]+):\n(?: {4}.*\n)*? {4}default: '((?:[^']|'')*)'$/gm,
  ))
    defaults[name] = value.replace(/''/g, "'");
  return defaults;
}
