// Runs the zeroeval TypeScript SDK's prompt helper (prompt() of src/prompt.ts) on every case of
// cases.json against stub.py and writes what it returns to typescript/<case>.txt (UTF-8, no
// newline added), or the error it throws to typescript/<case>.err. Usage:
// ZEROEVAL_API_URL=http://127.0.0.1:PORT ZEROEVAL_API_KEY=k npx tsx capture_typescript.mts SDK_DIR
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { prompt } = await import(pathToFileURL(join(process.argv[2], 'src', 'prompt.ts')).href);
mkdirSync(join(here, 'typescript'), { recursive: true });
const cases = JSON.parse(readFileSync(join(here, 'cases.json'), 'utf8'));
for (const c of cases) {
  const out = join(here, 'typescript', c.name);
  try {
    const text: string = await prompt({ name: c.task, content: c.content, from: c.from, variables: c.variables });
    writeFileSync(out + '.txt', Buffer.from(text, 'utf8'));
  } catch (e) {
    writeFileSync(out + '.err', `${(e as Error).name}: ${(e as Error).message}\n`);
  }
}
