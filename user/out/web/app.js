// SPDX-License-Identifier: GPL-2.0
// mevitop's web view (doc/web.md): the process list and one process's heatmap, drawn on a
// canvas from /api/process's page runs, polled once a second for what changed.  Plain
// JavaScript, no framework, nothing fetched but from mevitop itself.
'use strict';

// The terminal's states and colours (user/ui/ui_theme.c): green resident, blue swapped,
// yellow untracked, dark not resident (mapped, never touched or evicted).
const STATE = ['not resident', 'resident', 'swapped', 'untracked'];
const STATE_RGB = [[48, 48, 48], [46, 204, 64], [0, 116, 217], [255, 220, 0]];
const MIXED_RGB = [200, 60, 200];	// resident and swapped pages in one cell
const BG_RGB = [17, 17, 17];		// no page here
const HEAT_RGB = [[90, 20, 20], [200, 30, 30], [230, 160, 0], [255, 240, 60]];
const HEAT_LEVELS = [0.05, 0.5, 2, 8];	// a block's decayed faults: where each colour starts
const HEAT_BLOCK = 16;			// pages per heat block (model.h HEAT_BLOCK_SHIFT)
const PAGE = 4096;
const POLL_MS = 1000;

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const TOKEN = query.get('token');
let info = { replay: false, span: 0 };
let at = 0;				// a replay's time, seconds from its start

function api(path, params) {
	const q = new URLSearchParams(params || {});
	if (TOKEN)
		q.set('token', TOKEN);
	if (info.replay)
		q.set('at', at.toFixed(6));
	return fetch(path + '?' + q).then((r) => {
		if (!r.ok)
			throw new Error(`${path}: ${r.status} ${r.statusText}`);
		return r.json();
	});
}

function bytes(pages) {
	let v = pages * PAGE, u = 0;
	const units = ['B', 'K', 'M', 'G', 'T'];
	while (v >= 1024 && u < units.length - 1) {
		v /= 1024;
		u++;
	}
	return (u && v < 10 ? v.toFixed(1) : Math.round(v)) + units[u];
}

const hex = (n) => '0x' + n.toString(16);

function status(text, bad) {
	$('status').textContent = text;
	$('status').style.color = bad ? '#a00' : '';
}

// ---- the process list -----------------------------------------------------------------

const list = { procs: [], key: 'resident', desc: true };

function value(p, key) {
	return key === 'comm' ? p.comm : p[key];
}

function compare(a, b) {
	const x = value(a, list.key), y = value(b, list.key);
	const c = typeof x === 'string' ? x.localeCompare(y) : x - y;
	return (list.desc ? -c : c) || a.pid - b.pid;
}

// Parents before children, siblings in the sort order; depth for the indent.
function treeOrder(procs) {
	const byPid = new Map(procs.map((p) => [p.pid, p]));
	const kids = new Map();
	const roots = [];
	for (const p of procs) {
		if (byPid.has(p.ppid) && p.ppid !== p.pid) {
			if (!kids.has(p.ppid))
				kids.set(p.ppid, []);
			kids.get(p.ppid).push(p);
		} else {
			roots.push(p);
		}
	}
	const out = [];
	const walk = (p, depth) => {
		out.push([p, depth]);
		for (const k of (kids.get(p.pid) || []).sort(compare))
			walk(k, depth + 1);
	};
	roots.sort(compare).forEach((p) => walk(p, 0));
	return out;
}

function renderList() {
	const f = $('filter').value.trim().toLowerCase();
	let procs = list.procs.filter((p) => !f || p.comm.toLowerCase().includes(f) ||
		String(p.pid) === f);
	const rows = $('tree').checked ? treeOrder(procs) : procs.sort(compare).map((p) => [p, 0]);
	const body = document.createElement('tbody');
	for (const [p, depth] of rows) {
		const tr = document.createElement('tr');
		tr.dataset.pid = p.pid;
		if (p.state === 'exited')
			tr.className = 'exited';
		const cells = [p.pid, p.ppid, (depth ? '  '.repeat(depth - 1) + '└ ' : '') + p.comm,
			bytes(p.resident), bytes(p.swapped), bytes(p.mapped), p.mappings,
			p.fault_rate.toFixed(0)];
		cells.forEach((v, i) => {
			const td = document.createElement('td');
			td.textContent = v;
			if (i !== 2)
				td.className = 'num';
			tr.appendChild(td);
		});
		tr.onclick = () => { location.hash = 'pid=' + p.pid; };
		body.appendChild(tr);
	}
	$('procs').replaceChild(body, $('procs').tBodies[0]);
	$('count').textContent = `${rows.length} of ${list.procs.length} processes`;
	for (const th of document.querySelectorAll('th'))
		th.className = (th.dataset.key === list.key ? 'sorted ' : '') +
			(th.dataset.key === 'comm' ? '' : 'num');
	window.mevitop.listOrder = rows.map(([p]) => p.pid);
}

function pollList() {
	return api('/api/list').then((r) => {
		list.procs = r.processes;
		renderList();
		status(`${r.mode} mode, ${new Date(r.time * 1000).toLocaleTimeString()}`);
		window.mevitop.listFrames++;
	});
}

// ---- the heatmap ----------------------------------------------------------------------

const view = {
	pid: 0, epoch: 0, gen: 0, full: true,
	maps: new Map(), order: [],	// mappings by start page, and the address order
	rows: [],			// per mapping in order: first row
	totalRows: 0, cols: 1,
	zoom: 0,			// >= 0: cells of 2^zoom px, one page each; < 0: 2^-zoom pages a pixel
	top: 0,				// first row shown
	fitted: false, dirty: true,
};

const cellPx = () => view.zoom >= 0 ? 1 << view.zoom : 1;
const pagesPerCell = () => view.zoom >= 0 ? 1 : 2 ** -view.zoom;

function layout() {
	const canvas = $('map');
	const ppc = pagesPerCell();
	view.cols = Math.max(1, Math.floor(canvas.width / cellPx()));
	view.rows = [];
	let row = 0;
	for (const start of view.order) {
		const m = view.maps.get(start);
		view.rows.push(row);
		row += Math.ceil(Math.ceil((m.end - m.start) / ppc) / view.cols);
	}
	view.totalRows = row;
	clampTop();
	view.dirty = true;
}

function visibleRows() {
	return Math.floor($('map').height / cellPx());
}

function clampTop() {
	view.top = Math.max(0, Math.min(view.top, view.totalRows - visibleRows()));
}

// The smallest zoom-out that shows every row, or the largest zoom-in that still does.
function fit() {
	const canvas = $('map');
	let total = 0;
	for (const m of view.maps.values())
		total += m.end - m.start;
	let z = 4;
	for (; z > -30; z--) {
		view.zoom = z;
		layout();
		if (view.totalRows <= visibleRows())
			break;
	}
	view.top = 0;
	view.fitted = true;
	void canvas, total;
	layout();
}

// Counts of each state in pages [a, b) of mapping m, added into acc at cell positions.
// Runs are flat [offset, length, state] triples in address order.
function runsIndex(runs, page) {
	let lo = 0, hi = runs.length / 3;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (runs[mid * 3] + runs[mid * 3 + 1] <= page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

function rgbOfCounts(res, swp, unt, n) {
	if (!res && !swp && !unt)
		return STATE_RGB[0];
	if (unt >= n)
		return STATE_RGB[3];
	if (swp && res)
		return MIXED_RGB;
	if (swp)
		return STATE_RGB[2];
	if (n === 1 || res >= n)
		return STATE_RGB[1];
	const k = Math.ceil((res / n) * 4) / 4, a = STATE_RGB[0], b = STATE_RGB[1];
	return [0, 1, 2].map((i) => Math.round(a[i] + (b[i] - a[i]) * k));
}

function heatAt(m, off) {
	// m.heat: flat [block offset from the mapping's start, value] pairs
	if (!m.heatMap) {
		m.heatMap = new Map();
		for (let i = 0; i < m.heat.length; i += 2)
			m.heatMap.set(m.heat[i], m.heat[i + 1]);
	}
	const blockOff = Math.floor((off + (m.start % HEAT_BLOCK)) / HEAT_BLOCK) * HEAT_BLOCK -
		(m.start % HEAT_BLOCK);
	return m.heatMap.get(blockOff) || 0;
}

function heatRgb(v, resident) {
	let lvl = -1;
	for (let i = 0; i < HEAT_LEVELS.length; i++)
		if (v >= HEAT_LEVELS[i])
			lvl = i;
	if (lvl >= 0)
		return HEAT_RGB[lvl];
	return resident ? [20, 80, 30] : STATE_RGB[0];
}

// One row of cells of mapping m, cells [k0, k0 + cols), into the counts arrays.
function rowCounts(m, k0, cols, ppc, acc) {
	acc.fill(0);
	const pages = m.end - m.start, a = k0 * ppc, b = Math.min(pages, (k0 + cols) * ppc);
	const runs = m.runs;
	for (let i = runsIndex(runs, a); i < runs.length / 3; i++) {
		const s = runs[i * 3], e = s + runs[i * 3 + 1], st = runs[i * 3 + 2];
		if (s >= b)
			break;
		for (let p = Math.max(s, a); p < Math.min(e, b);) {
			const cell = Math.floor(p / ppc) - k0;
			const cellEnd = Math.min((cell + k0 + 1) * ppc, e, b);
			acc[cell * 3 + st - 1] += cellEnd - p;
			p = cellEnd;
		}
	}
}

function draw() {
	const t0 = performance.now();
	const canvas = $('map'), ctx = canvas.getContext('2d');
	const w = canvas.width, h = canvas.height;
	const img = ctx.createImageData(w, h), px = img.data;
	const cp = cellPx(), ppc = pagesPerCell(), cols = view.cols;
	const heatLayer = $('layer').value === 'heat';
	const acc = new Float64Array(cols * 3);
	for (let i = 0; i < w * h; i++) {
		px[i * 4] = BG_RGB[0];
		px[i * 4 + 1] = BG_RGB[1];
		px[i * 4 + 2] = BG_RGB[2];
		px[i * 4 + 3] = 255;
	}
	const first = view.top, last = view.top + Math.ceil(h / cp);
	let mi = upperBound(view.rows, first) - 1;
	for (mi = Math.max(mi, 0); mi < view.order.length && view.rows[mi] < last; mi++) {
		const m = view.maps.get(view.order[mi]), pages = m.end - m.start;
		const cells = Math.ceil(pages / ppc);
		const r0 = Math.max(first, view.rows[mi]);
		const r1 = Math.min(last, view.rows[mi] + Math.ceil(cells / cols));
		for (let r = r0; r < r1; r++) {
			const k0 = (r - view.rows[mi]) * cols;
			rowCounts(m, k0, cols, ppc, acc);
			for (let c = 0; c < cols && k0 + c < cells; c++) {
				const n = Math.min(ppc, pages - (k0 + c) * ppc);
				const res = acc[c * 3], swp = acc[c * 3 + 1], unt = acc[c * 3 + 2];
				const rgb = heatLayer ? heatRgb(heatAt(m, (k0 + c) * ppc), res > 0)
					: rgbOfCounts(res, swp, unt, n);
				const y0 = (r - first) * cp;
				// the last row of a mapping's block: a one-pixel gap shows where it ends
				const hh = cp > 2 && r === r1 - 1 ? cp - 1 : cp;
				for (let y = y0; y < Math.min(y0 + hh, h); y++)
					for (let x = c * cp; x < (c + 1) * cp && x < w; x++) {
						const o = (y * w + x) * 4;
						px[o] = rgb[0];
						px[o + 1] = rgb[1];
						px[o + 2] = rgb[2];
					}
			}
		}
	}
	ctx.putImageData(img, 0, 0);
	view.dirty = false;
	const ms = performance.now() - t0;
	const mv = window.mevitop;
	mv.draws++;
	mv.drawMs.push(ms);
	if (mv.drawMs.length > 120)
		mv.drawMs.shift();
	const z = ppc > 1 ? `${ppc} pages a pixel` : `${cp} px a page`;
	$('zoom').textContent = `${z}, rows ${view.top}-${Math.min(view.totalRows, last)} of ${view.totalRows}`;
}

function upperBound(arr, x) {
	let lo = 0, hi = arr.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (arr[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

// What is under canvas pixel (x, y): the mapping and its cell's pages, or null.
function cellAt(x, y) {
	const cp = cellPx(), ppc = pagesPerCell();
	const r = view.top + Math.floor(y / cp), c = Math.floor(x / cp);
	if (c >= view.cols || y < 0 || x < 0)
		return null;
	const mi = upperBound(view.rows, r) - 1;
	if (mi < 0)
		return null;
	const m = view.maps.get(view.order[mi]);
	const k = (r - view.rows[mi]) * view.cols + c;
	const a = k * ppc, b = Math.min(a + ppc, m.end - m.start);
	return a < m.end - m.start ? { m, a, b } : null;
}

// The cursor line's text for a cell, as the terminal's says it.
function describe(cell) {
	const { m, a, b } = cell;
	const name = m.path || `[${m.kind}]`;
	const where = `${hex((m.start + a) * PAGE)} ${m.perms} ${name}`;
	const acc = new Float64Array(3);
	const runs = m.runs;
	for (let i = runsIndex(runs, a); i < runs.length / 3 && runs[i * 3] < b; i++) {
		const s = Math.max(a, runs[i * 3]), e = Math.min(b, runs[i * 3] + runs[i * 3 + 1]);
		if (e > s)
			acc[runs[i * 3 + 2] - 1] += e - s;
	}
	const heat = heatAt(m, a);
	const hs = heat >= HEAT_LEVELS[0] ? `, heat ${heat.toFixed(2)}` : '';
	if (b - a === 1) {
		const st = acc[0] ? 1 : acc[1] ? 2 : acc[2] ? 3 : 0;
		return `${where}  page ${a + 1} of ${m.end - m.start}: ${STATE[st]}${hs}  (${m.kind}, ${m.tracker})`;
	}
	return `${where}  pages ${a + 1}-${b} of ${m.end - m.start}: ${acc[0]} resident, ` +
		`${acc[1]} swapped, ${acc[2]} untracked${hs}  (${m.kind}, ${m.tracker})`;
}

function showHover(x, y) {
	const canvas = $('map'), rect = canvas.getBoundingClientRect();
	const cell = cellAt(Math.floor(x * canvas.width / rect.width),
		Math.floor(y * canvas.height / rect.height));
	$('hover').textContent = cell ? describe(cell) : '\u00a0';
}

function applyProcess(r) {
	if (r.epoch !== view.epoch) {	// another server (restarted): start over
		view.epoch = r.epoch;
		view.maps.clear();
	}
	for (const m of r.mappings)
		view.maps.set(m.start, m);
	const keep = new Set(r.layout);
	for (const k of view.maps.keys())
		if (!keep.has(k))
			view.maps.delete(k);
	view.order = r.layout;
	view.full = !r.layout.every((s) => view.maps.has(s));	// a gap: ask for everything
	view.gen = view.full ? 0 : r.gen;
	$('title').textContent = `pid ${r.pid} ${r.comm}: ${bytes(r.resident)} resident, ` +
		`${bytes(r.swapped)} swapped, ${bytes(r.mapped)} mapped, ${r.layout.length} mappings`;
	const mv = window.mevitop;
	mv.frames++;
	mv.lastSent = r.mappings.length;
	if (!view.fitted)
		fit();
	else
		layout();
	mv.ready = true;
}

function pollProcess() {
	const pid = view.pid;
	return api('/api/process', { pid, since: view.gen }).then((r) => {
		if (pid === view.pid)
			applyProcess(r);
		status(`${r.mode} mode, ${new Date(r.time * 1000).toLocaleTimeString()}`);
	});
}

function resize() {
	const canvas = $('map');
	const rect = canvas.getBoundingClientRect();
	canvas.width = Math.max(1, Math.floor(rect.width));
	canvas.height = Math.max(1, Math.floor(rect.height));
	layout();
}

function setZoom(z, anchorY) {
	const cp = cellPx(), ppc = pagesPerCell();
	const y = anchorY === undefined ? $('map').height / 2 : anchorY;
	const r = view.top + y / cp;			// keep the page under the anchor in place
	const mi = Math.max(0, upperBound(view.rows, Math.floor(r)) - 1);
	const keepStart = view.order[mi];
	const within = (r - (view.rows[mi] || 0)) * view.cols * ppc;
	view.zoom = Math.max(-30, Math.min(5, z));
	layout();
	if (keepStart !== undefined) {
		const nmi = view.order.indexOf(keepStart);
		const nr = view.rows[nmi] + within / (view.cols * pagesPerCell());
		view.top = Math.round(nr - y / cellPx());
		clampTop();
	}
	view.dirty = true;
}

function wireHeatmap() {
	const canvas = $('map');
	let drag = null;
	canvas.addEventListener('mousedown', (e) => {
		drag = { y: e.offsetY, top: view.top };
		canvas.classList.add('drag');
	});
	window.addEventListener('mouseup', () => {
		drag = null;
		canvas.classList.remove('drag');
	});
	canvas.addEventListener('mousemove', (e) => {
		if (drag) {
			view.top = Math.round(drag.top - (e.offsetY - drag.y) / cellPx());
			clampTop();
			view.dirty = true;
		}
		showHover(e.offsetX, e.offsetY);
	});
	canvas.addEventListener('wheel', (e) => {
		e.preventDefault();
		setZoom(view.zoom + (e.deltaY < 0 ? 1 : -1), e.offsetY);
	}, { passive: false });
	$('zin').onclick = () => setZoom(view.zoom + 1);
	$('zout').onclick = () => setZoom(view.zoom - 1);
	$('zfit').onclick = () => fit();
	$('z1').onclick = () => setZoom(0);
	$('layer').onchange = () => { view.dirty = true; legend(); };
	window.addEventListener('keydown', (e) => {
		if (!view.pid || e.target.tagName === 'INPUT')
			return;
		const page = visibleRows();
		const moves = { ArrowDown: 1, ArrowUp: -1, PageDown: page, PageUp: -page,
			Home: -Infinity, End: Infinity };
		if (e.key in moves) {
			view.top = Math.round(Math.max(-1e15, Math.min(1e15, view.top + moves[e.key])));
			clampTop();
			view.dirty = true;
		} else if (e.key === '+') {
			setZoom(view.zoom + 1);
		} else if (e.key === '-') {
			setZoom(view.zoom - 1);
		} else if (e.key === 'Escape' || e.key === 'q') {
			location.hash = '';
		}
	});
	// The bar above can wrap when the title changes: follow the canvas' own size, so one
	// canvas pixel stays one CSS pixel (and the mouse's offsets are the canvas' pixels).
	new ResizeObserver(() => { if (view.pid) resize(); }).observe(canvas);
	const frame = () => {
		if (view.pid && view.dirty)
			draw();
		requestAnimationFrame(frame);
	};
	requestAnimationFrame(frame);
}

function swatch(rgb, text) {
	return `<span class="sw" style="background:rgb(${rgb.join(',')})"></span>${text}`;
}

function legend() {
	$('legend').innerHTML = $('layer').value === 'heat'
		? HEAT_LEVELS.map((l, i) => swatch(HEAT_RGB[i], `≥${l}`)).join('') + ' faults/block (decaying)'
		: STATE.map((s, i) => swatch(STATE_RGB[i], s)).join('') + swatch(MIXED_RGB, 'mixed');
}

// ---- the page -------------------------------------------------------------------------

let timer = 0;

function route() {
	const m = /^#pid=(\d+)$/.exec(location.hash);
	clearTimeout(timer);
	$('list').hidden = !!m;
	$('heat').hidden = !m;
	if (m) {
		Object.assign(view, { pid: +m[1], epoch: 0, gen: 0, maps: new Map(), order: [],
			rows: [], fitted: false, top: 0 });
		window.mevitop.ready = false;
		resize();
	} else {
		view.pid = 0;
	}
	poll();
}

function poll() {
	clearTimeout(timer);
	(view.pid ? pollProcess() : pollList())
		.catch((err) => status(String(err.message || err), true))
		.finally(() => { timer = setTimeout(poll, POLL_MS); });
}

// What the tests read (tests/integration/test_web.py): where a page is drawn, what the
// canvas holds there, and the state the data says.
window.mevitop = {
	ready: false, frames: 0, listFrames: 0, draws: 0, drawMs: [], lastSent: 0, listOrder: [],
	pixelOf(addr) {
		const page = Math.floor(addr / PAGE), ppc = pagesPerCell(), cp = cellPx();
		const mi = view.order.findIndex((s) => {
			const m = view.maps.get(s);
			return page >= m.start && page < m.end;
		});
		if (mi < 0)
			return null;
		const m = view.maps.get(view.order[mi]);
		const k = Math.floor((page - m.start) / ppc);
		const r = view.rows[mi] + Math.floor(k / view.cols) - view.top;
		return { x: (k % view.cols) * cp, y: r * cp, size: cp,
			inView: r >= 0 && r < visibleRows() };
	},
	// The state whose colour canvas pixel (x, y) has, or 'other'.
	colourAt(x, y) {
		const d = $('map').getContext('2d').getImageData(x, y, 1, 1).data;
		const i = STATE_RGB.findIndex((c) => c[0] === d[0] && c[1] === d[1] && c[2] === d[2]);
		return i < 0 ? 'other' : STATE[i];
	},
	// {page number: state} of every page drawn (one page a cell), read off the canvas.
	canvasPages() {
		const canvas = $('map'), cp = cellPx(), out = {};
		const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
		for (let mi = 0; mi < view.order.length; mi++) {
			const m = view.maps.get(view.order[mi]);
			for (let k = 0; k < m.end - m.start; k++) {
				const r = view.rows[mi] + Math.floor(k / view.cols) - view.top;
				if (r < 0 || (r + 1) * cp > canvas.height)
					continue;
				const o = (r * cp * canvas.width + (k % view.cols) * cp) * 4;
				const i = STATE_RGB.findIndex((c) => c[0] === d[o] && c[1] === d[o + 1] &&
					c[2] === d[o + 2]);
				out[m.start + k] = i < 0 ? 'other' : STATE[i];
			}
		}
		return out;
	},
	hoverText: () => $('hover').textContent,
	setZoom: (z) => { setZoom(z); draw(); },
	scrollTo(addr) {
		const p = this.pixelOf(addr);
		if (p) {
			view.top += Math.floor(p.y / cellPx());
			clampTop();
			draw();
		}
	},
	draw: () => draw(),
	view,
};

function init() {
	for (const th of document.querySelectorAll('th'))
		th.onclick = () => {
			list.desc = list.key === th.dataset.key ? !list.desc : th.dataset.key !== 'comm' &&
				th.dataset.key !== 'pid' && th.dataset.key !== 'ppid';
			list.key = th.dataset.key;
			renderList();
		};
	$('filter').oninput = renderList;
	$('tree').onchange = renderList;
	$('back').onclick = (e) => { e.preventDefault(); location.hash = ''; };
	$('slider').oninput = () => {
		at = +$('slider').value;
		$('at').textContent = at.toFixed(1) + ' s';
		poll();
	};
	wireHeatmap();
	legend();
	window.addEventListener('hashchange', route);
	api('/api/info').then((r) => {
		info = r;
		$('where').textContent = r.replay ? 'replay' : 'live';
		if (r.replay) {
			$('replay').hidden = false;
			$('slider').max = r.span;
			const t = +query.get('at');
			if (t > 0) {
				at = Math.min(t, r.span);
				$('slider').value = at;
				$('at').textContent = at.toFixed(1) + ' s';
			}
		}
		route();
	}).catch((err) => status(String(err.message || err), true));
}

init();
