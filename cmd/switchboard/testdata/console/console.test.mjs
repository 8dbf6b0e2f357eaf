// Drives the operator console in headless Chromium against a running `switchboard dev` stack
// (started by TestConsoleInBrowser, which passes the addresses and seeded ids in the
// environment). It prints one JSON line per step and exits non-zero at the first failure.
// Screenshots of the main pages go to ARTIFACTS.

import { chromium } from "playwright-core";
import { mkdtempSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error("missing environment variable " + k);
  return v;
};
const consoleURL = env("CONSOLE_URL");
const artifacts = env("ARTIFACTS");
const heldID = env("HELD_ID");
const failedCount = Number(env("FAILED_COUNT"));
const heldCount = Number(env("HELD_COUNT"));
const expiredToken = env("EXPIRED_TOKEN");
const operatorClient = env("OPERATOR_CLIENT");
const senderClient = env("SENDER_CLIENT");

mkdirSync(artifacts, { recursive: true });
const profile = mkdtempSync(join(tmpdir(), "switchboard-chromium-"));
const step = (name, data) => console.log(JSON.stringify({ step: name, ...data }));

const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  viewport: { width: 1360, height: 900 },
  timeout: 60000,
});
const page = context.pages()[0] || (await context.newPage());
page.setDefaultTimeout(20000);
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
// Answers of 401 and 403 are expected in the refusal steps; the browser logs each as a failed load.
page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text()); });
const shot = async (name) => {
  await page.screenshot({ path: join(artifacts, name + ".png"), fullPage: true });
  step("screenshot", { file: name + ".png" });
};
const fail = (msg) => { throw new Error(msg); };

async function signInAs(client) {
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((u) => u.pathname.endsWith("/authorize"));
  return page.getByRole("button", { name: new RegExp("^" + client + "\\b") });
}

// checkAccessibility: every control has a name, and Tab reaches the navigation.
async function checkAccessibility(where) {
  const unnamed = await page.evaluate(() => {
    const name = (el) => (el.getAttribute("aria-label") || (el.labels && el.labels.length ? el.labels[0].textContent : "") ||
      el.textContent || el.getAttribute("title") || el.getAttribute("placeholder") || "").trim();
    return [...document.querySelectorAll("button, input:not([type=hidden]), select, a[href], progress")]
      .filter((el) => el.offsetParent !== null && !name(el)).map((el) => el.outerHTML.slice(0, 120));
  });
  if (unnamed.length) fail(where + ": controls without a label: " + unnamed.join(" | "));
  const reached = new Set();
  await page.locator("body").focus();
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press("Tab");
    const d = await page.evaluate(() => {
      const el = document.activeElement;
      const outline = el ? getComputedStyle(el).outlineStyle : "none";
      return el ? { tag: el.tagName, nav: el.dataset ? el.dataset.nav || "" : "", text: (el.textContent || "").trim().slice(0, 30), outline } : null;
    });
    if (d && d.nav) reached.add(d.nav);
    if (d && d.nav && d.outline === "none") fail(where + ": the focused link " + d.nav + " shows no focus ring");
  }
  for (const n of ["overview", "messages", "held", "failed", "providers", "inbox", "journal"]) {
    if (!reached.has(n)) fail(where + ": Tab never reached the " + n + " link");
  }
  step("accessibility", { where, navReached: [...reached].length });
}

try {
  // A missing session shows the sign-in screen.
  await page.goto(consoleURL + "#/held");
  await page.getByRole("heading", { name: "Operator console" }).waitFor();
  await shot("01-signin");

  // Sign in through the dev issuer, as the operator.
  const asOperator = await signInAs(operatorClient);
  await shot("02-issuer-signin");
  await asOperator.click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.locator(".stat-value").first().waitFor();
  await page.getByRole("heading", { name: "Accepted and sent per second" }).waitFor();
  const heldCard = await page.locator(".stat.tone-warn .stat-value").textContent();
  if (Number(heldCard.replace(/\D/g, "")) < 1) fail("the overview shows no held message: " + heldCard);
  step("signed-in", { held: heldCard });
  await shot("03-overview");
  await checkAccessibility("overview");

  // Find a held message and settle it as sent, previewed then confirmed.
  await page.locator("nav [data-nav=held]").click();
  await page.getByRole("heading", { name: "Held messages" }).waitFor();
  const link = page.getByRole("link", { name: "Message " + heldID });
  await link.waitFor();
  await shot("04-held");
  await link.click();
  await page.locator("#message-status .badge-unknown").waitFor();
  await page.getByRole("heading", { name: "Attempts" }).waitFor();
  const reason = await page.locator("#message-reason").textContent();
  if (!reason.includes("gateway.timeout") || !reason.includes("by provider")) fail("the held message's page does not show its reason: " + reason);
  await shot("05-message-held");
  await page.getByRole("button", { name: "Settle as sent…" }).click();
  const dialog = page.getByRole("dialog");
  await dialog.waitFor();
  const preview = await dialog.textContent();
  if (!preview.includes("Held") || !preview.includes("Submitted")) fail("the settle preview does not name the change: " + preview);
  await shot("06-settle-confirm");
  await dialog.getByRole("button", { name: "Settle as sent" }).click();
  await page.locator("#message-status .badge-submitted").waitFor();
  if (await page.locator("#message-reason").count() !== 0) fail("a message settled as sent still shows a reason");
  const events = await page.locator("table").last().textContent();
  if (!events.includes("message.settled")) fail("the journal of the settled message lacks message.settled");
  step("settled", { id: heldID });
  await shot("07-message-settled");

  // Bulk retry of the failed messages: preview count, confirm, progress to done.
  await page.locator("nav [data-nav=failed]").click();
  await page.getByRole("heading", { name: "Failed messages" }).waitFor();
  await page.getByRole("button", { name: "Preview" }).click();
  const count = page.locator(".preview-count strong");
  await count.waitFor();
  const previewed = Number((await count.textContent()).replace(/\D/g, ""));
  if (previewed !== failedCount) fail("the bulk retry previews " + previewed + " messages, want " + failedCount);
  await shot("08-failed-preview");
  await page.getByRole("button", { name: /^Apply to/ }).click();
  await page.getByRole("dialog").getByRole("button", { name: "Apply" }).click();
  const box = page.locator(".progress-box");
  await box.waitFor();
  const seen = [];
  for (let i = 0; i < 600; i++) {
    const v = await page.locator("#op-progress").evaluate((p) => ({ value: p.value, max: p.max }));
    if (!seen.length || seen[seen.length - 1].value !== v.value) seen.push(v);
    if ((await box.getAttribute("data-state")) === "done") break;
    await page.waitForTimeout(50);
  }
  if ((await box.getAttribute("data-state")) !== "done") fail("the bulk retry did not finish: " + (await box.textContent()));
  const final = await page.locator(".progress-text").textContent();
  const bar = await page.locator("#op-progress").evaluate((p) => ({ value: p.value, max: p.max }));
  if (!final.startsWith("Done") || bar.value !== failedCount || bar.max !== failedCount) {
    fail("the progress does not end at every message: " + final + " " + JSON.stringify(bar));
  }
  step("bulk-retry", { progress: seen, final });
  await shot("09-failed-done");

  await page.locator("nav [data-nav=messages]").click();
  await page.getByRole("heading", { name: "Messages" }).waitFor();
  await page.locator("table tbody tr").first().waitFor();
  await shot("10-messages");
  // The held messages left are the ones not settled.
  await page.getByLabel("Status").selectOption("unknown");
  await page.getByRole("button", { name: "Apply filters" }).click();
  await page.waitForURL((u) => u.hash.includes("status=unknown"));
  await page.locator("tbody .badge-unknown").first().waitFor();
  const heldLeft = await page.locator("tbody tr").count();
  if (heldLeft !== heldCount - 1 || (await page.getByRole("link", { name: "Message " + heldID }).count()) !== 0) {
    fail("the held filter lists " + heldLeft + " rows, want " + (heldCount - 1) + " without the settled one");
  }
  await checkAccessibility("messages");

  await page.locator("nav [data-nav=providers]").click();
  await page.locator(".provider").first().waitFor();
  await shot("11-providers");
  await page.locator("nav [data-nav=inbox]").click();
  await page.getByRole("heading", { name: "Inbox" }).waitFor();
  await page.locator("table").waitFor();
  await shot("12-inbox");
  await page.locator("nav [data-nav=journal]").click();
  await page.getByRole("button", { name: "Verify now" }).click();
  await page.locator(".journal-state.good").waitFor({ timeout: 60000 });
  await shot("13-journal");

  // A token the API refuses as expired sends the operator back to sign-in.
  await page.evaluate((t) => sessionStorage.setItem("sb.token", JSON.stringify({ token: t, exp: Date.now() + 3600000 })), expiredToken);
  await page.reload();
  await page.getByText("Your session has ended").waitFor();
  await shot("14-session-ended");

  // A sender's token is refused the console's operator calls, with a clear message.
  await (await signInAs(senderClient)).click();
  await page.getByRole("heading", { name: "This account may not use the operator console" }).waitFor();
  await shot("15-refused");
  step("refused", { client: senderClient });

  if (errors.length) fail("the page reported errors: " + errors.join(" | "));
  step("done", {});
} catch (e) {
  try { await shot("failure"); } catch (_) { /* the page may be gone */ }
  console.log(JSON.stringify({ step: "failed", error: String(e && e.stack || e), pageErrors: errors }));
  process.exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
