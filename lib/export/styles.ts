/** Inline stylesheet of the offline report (docs/views.md §9 sizes, light theme only). */
export const REPORT_CSS = `
*{box-sizing:border-box}
body{margin:0;font:13px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#2c2823;background:#faf8f4}
#app{max-width:1180px;margin:0 auto;padding:16px}
h1{font-size:20px;margin:0 0 8px}
h2{font-size:15px;margin:18px 0 8px}
h3{font-size:14px;margin:16px 0 6px}
h4{font-size:13px;margin:10px 0 4px}
.muted{color:#8a8377}.small{font-size:11px}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0 0 8px}
.facts dt{color:#8a8377}.facts dd{margin:0}
.args table{border-collapse:collapse;font-size:12px}
.args th{text-align:left;padding:1px 10px 1px 0;font-weight:500;color:#6b645a}
.incomplete{border:1px solid #e0a400;background:#fff6dc;border-radius:4px;padding:8px 12px;margin:8px 0}
.incomplete ul{margin:4px 0 0;padding-left:18px}
.tabs{display:flex;gap:4px;border-bottom:1px solid #ddd6ca;margin:14px 0 10px}
.tabs button{font:inherit;border:0;background:none;padding:6px 12px;cursor:pointer;color:#6b645a;border-bottom:2px solid transparent}
.tabs button.active{color:#2c2823;border-bottom-color:#2f6fb0;font-weight:600}
.absent{color:#8a8377;font-style:italic;margin:2px 0}
.chart-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(370px,1fr));gap:10px}
.card{background:#fff;border:1px solid #e7e2d8;border-radius:4px;padding:6px 8px}
.card-title{display:flex;justify-content:space-between;gap:8px;font-weight:600;font-size:12px;word-break:break-all}
.card-title .last{font-weight:400;color:#2f6fb0;white-space:nowrap}
canvas.chart{display:block;cursor:crosshair}
.legend{display:flex;flex-wrap:wrap;gap:10px;margin:4px 0;font-size:11px}
.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:-1px;border-radius:2px}
.advisories{list-style:none;padding:0}
.adv{padding:6px 10px;border-radius:4px;margin:4px 0;border-left:4px solid #8a8377;background:#fff}
.adv-critical{border-color:#c0392b}.adv-warning{border-color:#e0a400}.adv-info{border-color:#2f6fb0}
.stat-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:6px 0}
.tile{background:#fff;border:1px solid #e7e2d8;border-radius:4px;padding:6px 10px}
.tile.alert{border-color:#c0392b}
.tile-label{font-size:11px;color:#8a8377}.tile-value{font-size:16px;font-weight:600}
.table-wrap{max-height:420px;overflow:auto;border:1px solid #e7e2d8}
table.summary{border-collapse:collapse;font-size:11px;font-variant-numeric:tabular-nums}
table.summary th,table.summary td{padding:2px 6px;border-bottom:1px solid #f0ebe2;white-space:nowrap;text-align:right}
table.summary th{position:sticky;top:0;background:#f4f0e8}
.sample{background:#fff;border:1px solid #e7e2d8;border-radius:4px;padding:6px 10px;margin:6px 0}
.sample>summary{cursor:pointer;font-weight:600}
.card.role-user,.card.role-system,.card.role-assistant,.card.role-tool{margin:4px 0}
pre.block{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:12px/1.4 ui-monospace,monospace}
pre.thinking{color:#6b645a}pre.tool{color:#7a3e9d}
.tokens{font:12px/1.7 ui-monospace,monospace;max-height:480px;overflow:auto;border:1px solid #e7e2d8;padding:6px;word-break:break-all}
.tok{border-radius:2px}.tok.prompt{color:#8a8377}.tok.masked{text-decoration:line-through;opacity:.6}
`;
