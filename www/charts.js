// Small hand-made SVG charts for the dashboard: bars for counts by key, a
// line for a series of latencies. No library: a few lines each.
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);

/** Bars of `entries` ([label, value]), with the values written on them. */
export function bars(title, entries) {
  const max = Math.max(1, ...entries.map(([, v]) => v));
  const w = 100 / Math.max(entries.length, 1);
  const rects = entries
    .map(([label, v], i) => {
      const h = (v / max) * 60;
      return `<rect x="${i * w + 1}%" y="${70 - h}" width="${w - 2}%" height="${h}" fill="#1a5fb4"><title>${esc(label)}: ${v}</title></rect>` +
        `<text x="${i * w + w / 2}%" y="${68 - h}" font-size="9" text-anchor="middle">${v}</text>` +
        `<text x="${i * w + w / 2}%" y="79" font-size="8" text-anchor="middle">${esc(String(label).slice(-10))}</text>`;
    })
    .join("");
  const body = entries.length ? rects : `<text x="50%" y="45" font-size="10" text-anchor="middle">no data yet</text>`;
  return `<figure class="chart"><h3>${esc(title)}</h3><svg viewBox="0 0 300 80" preserveAspectRatio="none" role="img" aria-label="${esc(title)}">${body}</svg></figure>`;
}

/** A line of `values` (ms), with its median in the title. */
export function line(title, values) {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted.length ? sorted[sorted.length >> 1] : 0;
  const max = Math.max(1, ...values);
  const points = values.map((v, i) => `${(i / Math.max(values.length - 1, 1)) * 300},${75 - (v / max) * 70}`).join(" ");
  const label = `${title}: median ${median.toFixed(1)} ms over ${values.length}`;
  const body = values.length ? `<polyline fill="none" stroke="#16a085" stroke-width="2" points="${points}"/>` : `<text x="150" y="45" font-size="10" text-anchor="middle">no data yet</text>`;
  return `<figure class="chart"><h3>${esc(label)}</h3><svg viewBox="0 0 300 80" preserveAspectRatio="none" role="img" aria-label="${esc(label)}">${body}</svg></figure>`;
}

export { esc };
