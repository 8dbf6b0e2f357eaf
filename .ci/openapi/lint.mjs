// Lints engine/api/openapi.json with Redocly CLI's recommended rules (redocly.yaml) and fails
// on any error, warning or ignored problem: redocly itself exits 0 on warnings.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const redocly = join(here, "node_modules", ".bin", "redocly");
const doc = join(here, "..", "..", "engine", "api", "openapi.json");
// No telemetry and no update check: CI reaches no network but the package registries.
const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" };
const run = (format, stdio) =>
  spawnSync(redocly, ["lint", "--config", join(here, "redocly.yaml"), `--format=${format}`, doc], { env, stdio, encoding: "utf8" });

const report = run("json", ["ignore", "pipe", "inherit"]);
if (report.error) {
  console.error(`openapi lint: cannot run redocly: ${report.error.message}`);
  process.exit(2);
}
let totals;
try {
  totals = JSON.parse(report.stdout).totals;
} catch (err) {
  console.error(`openapi lint: unreadable redocly report: ${err.message}\n${report.stdout}`);
  process.exit(2);
}
const problems = totals.errors + totals.warnings + totals.ignored;
if (problems > 0) {
  run("stylish", "inherit"); // the same problems, for people
}
console.log(`openapi lint: ${totals.errors} error(s), ${totals.warnings} warning(s), ${totals.ignored} ignored`);
process.exit(problems > 0 ? 1 : 0);
