// Charts drawn as SVG elements (no inline style, no library): a line chart of rates per
// second, and a stacked bar chart of counts per bucket.

const NS = "http://www.w3.org/2000/svg";

function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

const W = 720, H = 220, L = 48, R = 12, T = 12, B = 28;

function niceMax(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function axes(svg, max, start, end, fmtY, fmtX) {
  const ih = H - T - B, iw = W - L - R;
  for (let i = 0; i <= 4; i++) {
    const y = T + ih - (ih * i) / 4;
    svg.append(s("line", { x1: L, x2: W - R, y1: y, y2: y, class: i === 0 ? "axis" : "grid" }));
    svg.append(s("text", { x: L - 8, y: y + 4, "text-anchor": "end", class: "tick" }, fmtY((max * i) / 4)));
  }
  const span = end - start;
  for (let i = 0; i <= 5; i++) {
    const x = L + (iw * i) / 5;
    svg.append(s("text", { x, y: H - 8, "text-anchor": i === 0 ? "start" : i === 5 ? "end" : "middle", class: "tick" },
      fmtX(new Date(start + (span * i) / 5))));
  }
}

// lineChart draws series [{name, cls, values}] sampled over [start, end].
export function lineChart(label, series, start, end, fmtY, fmtX) {
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart", preserveAspectRatio: "none" });
  const n = Math.max(...series.map((x) => x.values.length), 1);
  const max = niceMax(Math.max(0, ...series.flatMap((x) => x.values)));
  axes(svg, max, start, end, fmtY, fmtX);
  const ih = H - T - B, iw = W - L - R;
  const px = (i) => L + (n === 1 ? iw : (iw * i) / (n - 1));
  const py = (v) => T + ih - (ih * v) / max;
  for (const x of series) {
    const pts = x.values.map((v, i) => `${px(i).toFixed(1)},${py(v).toFixed(1)}`);
    if (pts.length === 0) continue;
    svg.append(s("polygon", { points: `${px(0)},${py(0)} ${pts.join(" ")} ${px(x.values.length - 1)},${py(0)}`, class: "area " + x.cls }));
    svg.append(s("polyline", { points: pts.join(" "), class: "line " + x.cls }));
  }
  return svg;
}

// barChart draws stacked bars: groups [{name, cls, values}] share the buckets.
export function barChart(label, groups, start, end, fmtY, fmtX) {
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart", preserveAspectRatio: "none" });
  const n = Math.max(...groups.map((g) => g.values.length), 1);
  const totals = Array.from({ length: n }, (_, i) => groups.reduce((a, g) => a + (g.values[i] || 0), 0));
  const max = niceMax(Math.max(4, ...totals)); // counts: at least whole ticks
  axes(svg, max, start, end, fmtY, fmtX);
  const ih = H - T - B, iw = W - L - R;
  const bw = iw / n;
  for (let i = 0; i < n; i++) {
    let y = T + ih;
    for (const g of groups) {
      const v = g.values[i] || 0;
      if (!v) continue;
      const hh = (ih * v) / max;
      y -= hh;
      svg.append(s("rect", { x: (L + i * bw + 0.5).toFixed(1), y: y.toFixed(1), width: Math.max(bw - 1, 0.5).toFixed(1), height: hh.toFixed(1), class: "bar " + g.cls }));
    }
  }
  return svg;
}

// hbar is one horizontal proportion bar (0..1).
export function hbar(fraction, cls) {
  const svg = s("svg", { viewBox: "0 0 100 8", class: "hbar", preserveAspectRatio: "none", "aria-hidden": "true" });
  svg.append(s("rect", { x: 0, y: 0, width: 100, height: 8, rx: 2, class: "hbar-track" }));
  if (fraction > 0) svg.append(s("rect", { x: 0, y: 0, width: Math.max(1, fraction * 100).toFixed(2), height: 8, rx: 2, class: "hbar-fill " + cls }));
  return svg;
}
