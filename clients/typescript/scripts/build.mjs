// Builds the two module formats the package ships, each with its type declarations:
//   dist/esm: ES modules (import), from tsconfig.json;
//   dist/cjs: CommonJS (require), from tsconfig.cjs.json, with a package.json saying "type": "commonjs" so that
//             Node and TypeScript read its .js and .d.ts files as CommonJS although the package is "type": "module".
// package.json's "exports" map sends `import` to dist/esm and `require` to dist/cjs.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
rmSync(join(root, "dist"), { recursive: true, force: true });
for (const project of ["tsconfig.json", "tsconfig.cjs.json"]) {
  execFileSync(process.execPath, [tsc, "-p", join(root, project)], { stdio: "inherit" });
}
mkdirSync(join(root, "dist", "cjs"), { recursive: true });
writeFileSync(join(root, "dist", "cjs", "package.json"), JSON.stringify({ type: "commonjs" }) + "\n");
