// A vitest reporter that writes `.vitest-failures.json` beside the package's json report: every
// failure the json report leaves out, so that `pnpm test`'s closing lines (scripts/test.mjs)
// can name it. The json report counts failed tests; a package can fail with none of them
// failed: an error thrown outside every test (an unhandled rejection, an 'error' event after
// a test ended), or a failing beforeAll/afterAll hook of a file or a describe block.
import { writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { resultFiles } from './vitest-every-cpu.mjs';

const firstLines = (error) =>
  String(error?.stack ?? error?.message ?? error)
    .split('\n')
    .slice(0, 4)
    .join(' | ')
    .slice(0, 600);

export default class FailuresReporter {
  onInit(ctx) {
    this.root = ctx.config.root;
  }

  onFinished(files = [], errors = []) {
    const failures = [];
    const visit = (task, file) => {
      // Tests are in the json report; here only files and suites (their hooks) and the rest.
      if (task.type !== 'test' && task.result?.state === 'fail')
        for (const error of task.result.errors ?? [])
          failures.push({
            file,
            where: task.type === 'suite' && task.name !== file ? task.name : '(file)',
            error: firstLines(error),
          });
      for (const child of task.tasks ?? []) visit(child, file);
    };
    for (const file of files) visit(file, relative(this.root, file.filepath));
    for (const error of errors)
      failures.push({ file: '', where: 'unhandled error', error: firstLines(error) });
    writeFileSync(join(this.root, resultFiles.failures), `${JSON.stringify(failures, null, 2)}\n`);
  }
}
