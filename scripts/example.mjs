// Installs one of examples/ as a user would: `npm pack` of the built package,
// the example copied to a temporary folder with the tarball in place of the
// workspace folder, then `npm install`. Tools the example lists as
// devDependencies (Vite, wrangler) are this repository's: not installed twice.
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("..", import.meta.url));

/** The packed tarball of pkg/ in a new temporary folder; its path. */
export function packTarball() {
  const dir = mkdtempSync(join(tmpdir(), "agent-memory-pack-"));
  execFileSync("npm", ["pack", "--pack-destination", dir, "--silent"], { cwd: join(root, "pkg") });
  return join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz")));
}

/** examples/<name> installed from the tarball (default: a new pack); its folder. */
export const installExample = (name, tarball) => installApp(`examples/${name}`, tarball);

/** An app folder of this repository installed from the tarball in a temporary copy; the copy's path. */
export function installApp(folder, tarball = packTarball()) {
  const name = basename(folder);
  const app = join(mkdtempSync(join(tmpdir(), `app-${name}-`)), name);
  cpSync(join(root, folder), app, { recursive: true, filter: (src) => !/node_modules|dist|\.wrangler/.test(src) });
  const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
  manifest.dependencies["agent-memory"] = `file:${tarball}`;
  delete manifest.devDependencies;
  writeFileSync(join(app, "package.json"), JSON.stringify(manifest, null, 2));
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: app });
  return app;
}
