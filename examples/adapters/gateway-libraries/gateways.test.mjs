// Callbacks as the gateways sign them, posted to a real `switchboard serve`.
//
// TestGatewayLibrariesCallbacks (cmd/switchboard) starts serve with every bundled adapter that
// verifies signed callbacks, sends one message through each, and pipes in a JSON spec: the API,
// a sender token, and for each gateway its adapter folder, golden case, provider id, message id
// and status, and this run's secrets. For each gateway this script takes the golden case's
// delivered callback, signs it with the gateway's official library where the library signs
// (twilio, standardwebhooks, svix), or as the gateway documents with this run's fresh key and
// then has the official library accept it (SendGrid, Telnyx, Plivo, Vonage; Mailgun publishes
// no library that checks its signature, so only its documented scheme is followed). It posts
// copies with one byte changed, signed with a wrong key, with a stale timestamp or over the
// wrong URL, each of which must be refused and leave the message as it was, then the genuine
// callback, which must make the message delivered. It prints one JSON line per gateway and
// exits 1 on the first failure.

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

import twilio from "twilio";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import sendgrid from "@sendgrid/eventwebhook";
import { TelnyxWebhook } from "telnyx/lib/webhooks.js";
import plivo from "plivo";
import { SMS } from "@vonage/sms";

const spec = JSON.parse(fs.readFileSync(0, "utf8"));
const adaptersDir = path.resolve("..");

function fail(gateway, message) {
  console.log(JSON.stringify({ gateway, ok: false, error: message }));
  process.exit(1);
}

// readCase splits a golden case (txtar) into its sections.
function readCase(adapter, name) {
  const text = fs.readFileSync(path.join(adaptersDir, adapter, "testdata", name), "utf8");
  const sections = {};
  let current = null;
  for (const line of text.split("\n")) {
    const m = /^-- (.+) --$/.exec(line);
    if (m) {
      current = m[1];
      sections[current] = [];
    } else if (current) {
      sections[current].push(line);
    }
  }
  return Object.fromEntries(Object.entries(sections).map(([k, v]) => [k, v.join("\n")]));
}

// parseRequest reads a case's request.http: start line, headers, blank line, body (a form may
// be written one field per line).
function parseRequest(text) {
  const lines = text.replace(/\n$/, "").split("\n");
  const [method, target] = lines[0].trim().split(/\s+/);
  const headers = {};
  let i = 1;
  for (; i < lines.length && lines[i].trim() !== ""; i++) {
    const at = lines[i].indexOf(":");
    const name = lines[i].slice(0, at).trim();
    if (name.toLowerCase() !== "adaptertest-sign") headers[name.toLowerCase()] = lines[i].slice(at + 1).trim();
  }
  const rest = lines.slice(i + 1);
  const form = (headers["content-type"] || "").startsWith("application/x-www-form-urlencoded");
  const body = form ? rest.map((l) => l.trim()).filter((l) => l !== "").join("&") : rest.join("\n");
  return { method, target, headers, body };
}

// deliveredCallback is the case's first callback that reports the message delivered.
function deliveredCallback(c) {
  for (let n = 1; `callback${n}/request.http` in c; n++) {
    if (/report: delivered/.test(c[`callback${n}/receipts.yaml`] || "")) return parseRequest(c[`callback${n}/request.http`]);
  }
  throw new Error("no callback of the case reports delivered");
}

const now = () => Math.floor(Date.now() / 1000);
const stale = () => now() - 600;
const hmac = (alg, key, data, enc) => crypto.createHmac(alg, key).update(data).digest(enc);
const formParams = (body) => Object.fromEntries(new URLSearchParams(body));

// tamper changes one byte of the callback's content that the message does not depend on (a
// recipient's digit or domain letter), so that a copy wrongly accepted would still deliver.
function tamper(body) {
  const m = /447700900123|example\.(org|net)|0192f3a0/.exec(body);
  if (!m) throw new Error("nothing to tamper with in the body");
  const at = m.index + 2;
  const replaced = body[at] === "7" ? "8" : body[at] === "a" ? "b" : "7";
  return body.slice(0, at) + replaced + body.slice(at + 1);
}

const publicKeyPem = (b64) => `-----BEGIN PUBLIC KEY-----\n${b64.match(/.{1,64}/g).join("\n")}\n-----END PUBLIC KEY-----\n`;

// signStandard signs with a Standard Webhooks library (Webhook: its class; prefix: its header
// names), which verifies the genuine request first.
function signStandard(Webhook, prefix, g, cb) {
  const wh = new Webhook(g.secrets.secret);
  const other = new Webhook("whsec_" + crypto.randomBytes(32).toString("base64"));
  const req = (signer, ts) => {
    const id = `msg_${prefix}_${crypto.randomBytes(6).toString("hex")}`;
    return {
      headers: { ...cb.headers, [`${prefix}-id`]: id, [`${prefix}-timestamp`]: String(ts), [`${prefix}-signature`]: signer.sign(id, new Date(ts * 1000), cb.body) },
      body: cb.body,
    };
  };
  const ok = req(wh, now());
  wh.verify(ok.body, ok.headers); // throws when the library refuses its own signature
  const tampered = req(wh, now());
  return {
    genuine: [ok],
    refused: {
      "one byte changed": { ...tampered, body: tamper(tampered.body) },
      "wrong key": req(other, now()),
      "stale timestamp": req(wh, stale()),
    },
  };
}

// Each signer returns the genuine request (after its library accepted it) and the refused copies.
const signers = {
  // Twilio's library signs: getExpectedTwilioSignature over the URL Twilio calls and the form's
  // parameters. Twilio signs some callbacks over the URL with :443 written out, which the
  // library's validateRequest takes for the configured URL; so must Switchboard.
  twilio(g, cb) {
    const token = g.secrets.secret;
    const params = formParams(cb.body);
    const withPort = g.publicUrl.replace("https://switchboard.example.org/", "https://switchboard.example.org:443/");
    const sign = (url, key = token) => twilio.getExpectedTwilioSignature(key, url, params);
    const genuine = [withPort, g.publicUrl].map((url) => {
      const sig = sign(url);
      if (!twilio.validateRequest(token, sig, g.publicUrl, params)) throw new Error(`twilio.validateRequest refused the signature over ${url}`);
      return { headers: { ...cb.headers, "x-twilio-signature": sig }, body: cb.body };
    });
    const refused = {
      "one byte changed": { headers: { ...cb.headers, "x-twilio-signature": sign(g.publicUrl) }, body: tamper(cb.body) },
      "wrong key": { headers: { ...cb.headers, "x-twilio-signature": sign(g.publicUrl, token + "x") }, body: cb.body },
      "wrong URL (another port)": { headers: { ...cb.headers, "x-twilio-signature": sign(g.publicUrl.replace(".org/", ".org:8443/")) }, body: cb.body },
      "wrong URL (another path)": { headers: { ...cb.headers, "x-twilio-signature": sign(g.publicUrl + "-other") }, body: cb.body },
    };
    return { genuine, refused };
  },

  // The Standard Webhooks reference library signs, with the webhook- headers.
  standardwebhooks: (g, cb) => signStandard(StandardWebhook, "webhook", g, cb),

  // Svix's library signs, with the svix- headers Svix-hosted senders use; a request carrying
  // both namings at once, which no sender sends, is refused.
  svix(g, cb) {
    const signed = signStandard(SvixWebhook, "svix", g, cb);
    const both = signStandard(SvixWebhook, "svix", g, cb).genuine[0];
    for (const name of ["id", "timestamp", "signature"]) both.headers[`webhook-${name}`] = both.headers[`svix-${name}`];
    signed.refused["svix- and webhook- headers together"] = both;
    return signed;
  },

  // SendGrid signs the timestamp followed by the body with ECDSA P-256 (SHA-256, DER, base64);
  // @sendgrid/eventwebhook checks it.
  sendgrid(g, cb) {
    const other = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
    const req = (key, ts, body = cb.body) => ({
      headers: {
        ...cb.headers,
        "x-twilio-email-event-webhook-timestamp": String(ts),
        "x-twilio-email-event-webhook-signature": crypto.sign("sha256", Buffer.from(String(ts) + body), { key, dsaEncoding: "der" }).toString("base64"),
      },
      body,
    });
    const ok = req(g.secrets.privateKey, now());
    const ew = new sendgrid.EventWebhook();
    const pub = ew.convertPublicKeyToECDSA(publicKeyPem(g.secrets.publicKey));
    if (!ew.verifySignature(pub, ok.body, ok.headers["x-twilio-email-event-webhook-signature"], ok.headers["x-twilio-email-event-webhook-timestamp"])) {
      throw new Error("@sendgrid/eventwebhook refused the signature");
    }
    const tampered = req(g.secrets.privateKey, now());
    return {
      genuine: [ok],
      refused: {
        "one byte changed": { ...tampered, body: tamper(tampered.body) },
        "wrong key": req(other, now()),
        "stale timestamp": req(g.secrets.privateKey, stale()),
      },
    };
  },

  // Telnyx signs "timestamp|body" with Ed25519 (base64); the telnyx library's TelnyxWebhook
  // checks it.
  async telnyx(g, cb) {
    const other = crypto.generateKeyPairSync("ed25519").privateKey;
    const req = (key, ts, body = cb.body) => ({
      headers: {
        ...cb.headers,
        "telnyx-timestamp": String(ts),
        "telnyx-signature-ed25519": crypto.sign(null, Buffer.from(`${ts}|${body}`), key).toString("base64"),
      },
      body,
    });
    const ok = req(g.secrets.privateKey, now());
    await new TelnyxWebhook(g.secrets.publicKey).verify(ok.body, ok.headers);
    const tampered = req(g.secrets.privateKey, now());
    return {
      genuine: [ok],
      refused: {
        "one byte changed": { ...tampered, body: tamper(tampered.body) },
        "wrong key": req(other, now()),
        "stale timestamp": req(g.secrets.privateKey, stale()),
      },
    };
  },

  // Plivo's signature V3 of a POST: HMAC-SHA256 (base64) of the URL, "?", every form
  // parameter sorted by name as name then value, "." and the nonce; plivo.validateV3Signature
  // checks it.
  plivo(g, cb) {
    const params = formParams(cb.body);
    const signed = (url) => url + "?" + Object.keys(params).sort().map((k) => k + params[k]).join("");
    const req = (url, key, nonce, body = cb.body) => ({
      headers: { ...cb.headers, "x-plivo-signature-v3-nonce": nonce, "x-plivo-signature-v3": hmac("sha256", key, `${signed(url)}.${nonce}`, "base64") },
      body,
    });
    const token = g.secrets.secret;
    const ok = req(g.publicUrl, token, "lib-nonce-1");
    if (!plivo.validateV3Signature("POST", g.publicUrl, "lib-nonce-1", token, ok.headers["x-plivo-signature-v3"], params)) {
      throw new Error("plivo.validateV3Signature refused the signature");
    }
    const tampered = req(g.publicUrl, token, "lib-nonce-2");
    return {
      genuine: [ok],
      refused: {
        "one byte changed": { ...tampered, body: tamper(tampered.body) },
        "wrong key": req(g.publicUrl, token + "x", "lib-nonce-3"),
        "wrong URL": req(g.publicUrl + "-other", token, "lib-nonce-4"),
      },
    };
  },

  // The Vonage SMS API signs its parameters and timestamp: sorted by name, "&name=value" with
  // "&" and "=" replaced by "_", HMAC-SHA256 (hex) with the signature secret, added as sig;
  // @vonage/sms's verifySignature checks it.
  vonage(g, cb) {
    const members = JSON.parse(cb.body);
    const req = (key, ts) => {
      const params = { ...Object.fromEntries(Object.entries(members).map(([k, v]) => [k, String(v)])), timestamp: String(ts) };
      const signedString = Object.keys(params).sort().map((k) => `&${k}=${params[k].replace(/[&=]/g, "_")}`).join("");
      const sig = hmac("sha256", key, signedString, "hex");
      return { params, sig, headers: { ...cb.headers }, body: JSON.stringify({ ...members, timestamp: String(ts), sig }) };
    };
    const secret = g.secrets.secret;
    const ok = req(secret, now());
    const sms = new SMS({ apiKey: "stand-in", apiSecret: "stand-in" });
    if (!sms.verifySignature(ok.sig, ok.params, secret, "SHA256HMAC" /* AlgorithmTypes.sha256hmac */)) {
      throw new Error("@vonage/sms verifySignature refused the signature");
    }
    const tampered = req(secret, now());
    return {
      genuine: [ok],
      refused: {
        "one byte changed": { ...tampered, body: tamper(tampered.body) },
        "wrong key": req(secret + "x", now()),
        "stale timestamp": req(secret, stale()),
      },
    };
  },

  // Mailgun signs timestamp followed by token with HMAC-SHA256 (hex), keyed with the webhook
  // signing key, in the body's signature member. The signature covers those two alone, not the
  // event data (Mailgun's scheme; a token is taken once), so the byte changed is the token's.
  // No official Mailgun library checks the signature: it follows Mailgun's documentation alone.
  mailgun(g, cb) {
    const req = (key, ts, token, sent = token) => {
      const signature = { timestamp: String(ts), token: sent, signature: hmac("sha256", key, String(ts) + token, "hex") };
      return { headers: { ...cb.headers }, body: `{"signature": ${JSON.stringify(signature)}, ` + cb.body.trim().slice(1) };
    };
    const key = g.secrets.secret;
    const token = () => crypto.randomBytes(25).toString("hex");
    const signedToken = token();
    return {
      genuine: [req(key, now(), token())],
      refused: {
        "one byte changed": req(key, now(), signedToken, (signedToken[0] === "a" ? "b" : "a") + signedToken.slice(1)),
        "wrong key": req(key + "x", now(), token()),
        "stale timestamp": req(key, stale(), token()),
      },
    };
  },
};

async function post(g, r) {
  const res = await fetch(`${spec.api}/v1/provider-callbacks/${g.provider}`, { method: "POST", headers: r.headers, body: r.body });
  return { status: res.status, text: await res.text() };
}

async function status(g) {
  const res = await fetch(`${spec.api}/v1/messages/${g.messageId}`, { headers: { authorization: `Bearer ${spec.token}` } });
  const view = await res.json();
  return view.status;
}

for (const g of spec.gateways) {
  let signed;
  try {
    signed = await signers[g.name](g, deliveredCallback(readCase(g.adapter, g.case)));
  } catch (err) {
    fail(g.name, `signing: ${err.message}`);
  }
  for (const [name, r] of Object.entries(signed.refused)) {
    const res = await post(g, r);
    if (res.status !== 403) fail(g.name, `${name}: answered ${res.status} ${res.text}, want 403`);
    const now = await status(g);
    if (now !== g.before) fail(g.name, `${name}: the refused callback moved the message from ${g.before} to ${now}`);
  }
  for (const r of signed.genuine) {
    const res = await post(g, r);
    if (res.status < 200 || res.status > 299) fail(g.name, `genuine callback: answered ${res.status} ${res.text}`);
  }
  let last;
  for (let i = 0; i < 100 && (last = await status(g)) !== "delivered"; i++) await new Promise((r) => setTimeout(r, 100));
  if (last !== "delivered") fail(g.name, `after the genuine callback the message is ${last}, want delivered`);
  console.log(JSON.stringify({ gateway: g.name, ok: true, refused: Object.keys(signed.refused), genuine: signed.genuine.length }));
}
