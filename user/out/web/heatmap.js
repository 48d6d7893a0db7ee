// SPDX-License-Identifier: GPL-2.0
// The web view's heatmap (doc/web.md): a process's mappings in address order, packed one
// after another into cells of the canvas, as the terminal's packed layout does.  A cell is
// 2^zoom pixels square holding one page (zoom >= 0), or one pixel holding 2^-zoom pages.
// The whole picture is drawn once into an offscreen canvas when it fits one (panning is
// then a copy of its rows); past that, only the rows in view are drawn.
'use strict';

// The terminal's states and colours (user/ui/ui_theme.c): green resident, blue swapped,
// yellow untracked, dark not resident (mapped, never touched or evicted).
const STATE = ['not resident', 'resident', 'swapped', 'untracked'];
const STATE_RGB = [[48, 48, 48], [46, 204, 64], [0, 116, 217], [255, 220, 0]];
const MIXED_RGB = [200, 60, 200];	// resident and swapped pages in one cell
const BG_RGB = [17, 17, 17];		// no page here
const HEAT_RGB = [[90, 20, 20], [200, 30, 30], [230, 160, 0], [255, 240, 60]];
const HEAT_COOL = [[48, 48, 48], [20, 80, 30]];	// heat layer: cold, not / resident
const HEAT_LEVELS = [0.05, 0.5, 2, 8];	// a block's decayed faults: where each colour starts
					// (the server sends the level: out/web_json.c heat_levels)
// A file's pages (the terminal's file heatmap, user/ui/ui_fileheat.c): cached green as a
// resident page, dirty orange, under writeback red; the heat layer's evictions blue.
const FILE_STATE = ['not cached', 'cached', 'dirty', 'writeback'];
const FILE_RGB = [STATE_RGB[0], STATE_RGB[1], [255, 175, 0], [255, 0, 0]];
const EVICT_RGB = [0, 175, 255];
// The "who touched" layer (--stacks): resident pages in their first toucher's colour, the
// stacks with most resident pages first; the rest alike; resident but unattributed grey.
const TOUCH_RGB = [[230, 25, 75], [0, 130, 200], [245, 130, 48], [145, 30, 180],
	[70, 240, 240], [240, 50, 230], [250, 190, 212], [170, 110, 40]];
const TOUCH_OTHER = [255, 255, 255], TOUCH_NONE = [128, 128, 128];
const HEAT_BLOCK = 16;			// pages per heat block (model.h HEAT_BLOCK_SHIFT)
const PAGE = 4096;
const CACHE_MAX_PX = 16 << 20;		// the offscreen picture's largest area (64 MiB)
const CACHE_MAX_H = 30000;		// and height (canvases stop a little beyond)

// RGBA bytes as one little-endian 32-bit pixel of an ImageData's buffer.
const px32 = (c) => (255 << 24 | c[2] << 16 | c[1] << 8 | c[0]) >>> 0;
const STATE_PX = STATE_RGB.map(px32), MIXED_PX = px32(MIXED_RGB), BG_PX = px32(BG_RGB);
const HEAT_PX = HEAT_RGB.map(px32), COOL_PX = HEAT_COOL.map(px32);
const FILE_PX = FILE_RGB.map(px32), EVICT_PX = px32(EVICT_RGB);
const TOUCH_PX = TOUCH_RGB.map(px32), TOUCH_OTHER_PX = px32(TOUCH_OTHER);
const TOUCH_NONE_PX = px32(TOUCH_NONE);
const RES_SHADES = [0, 1, 2, 3, 4].map((k) => px32([0, 1, 2].map((i) =>
	Math.round(STATE_RGB[0][i] + (STATE_RGB[1][i] - STATE_RGB[0][i]) * k / 4))));

const view = {
	on: false,			// a heatmap is shown: a process's (pid) or a file's
	pid: 0, file: null, epoch: 0, gen: 0, full: true,
	maps: new Map(), order: [],	// mappings by start page, and the address order
	first: [],			// per mapping in order: its first cell
	cells: 0, rows: 0, cols: 1,
	zoom: 0, top: 0,		// top: the first row shown
	fitted: false, dirty: true,
	cache: null, cacheKey: '',	// the offscreen picture and what it shows
	version: 0,			// one more each time the data changes
	touch: null,			// --stacks: /api/touch's answer (applyTouch), or null
};

const cellPx = () => view.zoom >= 0 ? 1 << view.zoom : 1;
const pagesPerCell = () => view.zoom >= 0 ? 1 : 2 ** -view.zoom;
const visibleRows = () => Math.floor(document.getElementById('map').height / cellPx());

function layout() {
	const ppc = pagesPerCell();
	view.cols = Math.max(1, Math.floor(document.getElementById('map').width / cellPx()));
	view.first = [];
	let cell = 0;
	for (const start of view.order) {
		const m = view.maps.get(start);
		view.first.push(cell);
		cell += Math.ceil((m.end - m.start) / ppc);
	}
	view.cells = cell;
	view.rows = Math.ceil(cell / view.cols);
	clampTop();
	view.dirty = true;
}

function clampTop() {
	view.top = Math.max(0, Math.min(view.top, view.rows - visibleRows()));
}

// The largest zoom that shows every page at once.
function fit() {
	let z = 5;
	for (; z > -40; z--) {
		view.zoom = z;
		layout();
		if (view.rows <= visibleRows())
			break;
	}
	view.top = 0;
	view.fitted = true;
	layout();
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

// The first run of flat [offset, length, state] triples that ends after page.
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

function heatOf(m, off) {
	if (!m.heatMap) {		// m.heat: flat [block offset from m's start, value] pairs
		m.heatMap = new Map();
		for (let i = 0; i < m.heat.length; i += 2)
			m.heatMap.set(m.heat[i], m.heat[i + 1]);
	}
	const lead = m.start % HEAT_BLOCK;
	return m.heatMap.get(Math.floor((off + lead) / HEAT_BLOCK) * HEAT_BLOCK - lead) || 0;
}

function heatPx(level, resident) {
	return level > 0 ? HEAT_PX[level - 1] : COOL_PX[resident ? 1 : 0];
}

// The pixel of a cell of n pages with these counts: the terminal's rules (a shade of green
// by the resident fraction; blue if any is swapped; magenta for both; yellow untracked).
function countsPx(res, swp, unt, n) {
	if (!res && !swp && !unt)
		return STATE_PX[0];
	if (unt >= n)
		return STATE_PX[3];
	if (swp && res)
		return MIXED_PX;
	if (swp)
		return STATE_PX[2];
	return res >= n ? STATE_PX[1] : RES_SHADES[Math.ceil(res / n * 4)];
}

// Colours of mapping m's cells [c0, c1) (cell indices within m) into out[0 .. c1 - c0).
// Pages of [a, b) in each class of m.share ([offset, length, class] triples, class 1 by 2,
// 2 by 3-8, 3 by 9+), into cls[(cell - c0) * 4 + class] for cells of ppc pages.
function shareCounts(m, a, b, c0, ppc, cls) {
	const sh = m.share || [];
	for (let i = 0; i < sh.length; i += 3) {
		const s = Math.max(a, sh[i]), e = Math.min(b, sh[i] + sh[i + 1]);
		for (let p = s; p < e;) {
			const cell = Math.floor(p / ppc), end = Math.min((cell + 1) * ppc, e);
			cls[(cell - c0) * 4 + sh[i + 2]] += end - p;
			p = end;
		}
	}
}

// The sharing layer's pixel: not resident dark; else the class most resident pages are in
// (the more shared on a tie), private in the residency green (the terminal's rule).
function sharePx(res, cls, k) {
	if (!res)
		return STATE_PX[0];
	let best = 0, most = res - cls[k * 4 + 1] - cls[k * 4 + 2] - cls[k * 4 + 3];
	for (let c = 1; c <= 3; c++)
		if (cls[k * 4 + c] >= most && cls[k * 4 + c] > 0) {
			best = c;
			most = cls[k * 4 + c];
		}
	return best ? HEAT_PX[best] : STATE_PX[1];
}

// A file's cell of n pages (c cached only, d dirty, w writeback): the terminal's rules,
// writeback over dirty over the cached shade; heat: evictions blue where they are the
// hotter, else the adds' heat colour.
function filePx(m, off, c, d, w, n, heat) {
	if (heat) {
		const add = heatOf(m, off), ev = evictOf(m, off);
		return ev > add ? EVICT_PX : heatPx(add, c + d + w > 0);
	}
	return w ? FILE_PX[3] : d ? FILE_PX[2] : countsPx(c, 0, 0, n);
}

// The evictions' level of the block holding off (m.evict: [block offset, level] pairs).
function evictOf(m, off) {
	if (!m.evictMap) {
		m.evictMap = new Map();
		for (let i = 0; i < m.evict.length; i += 2)
			m.evictMap.set(m.evict[i], m.evict[i + 1]);
	}
	return m.evictMap.get(Math.floor(off / HEAT_BLOCK) * HEAT_BLOCK) || 0;
}

// /api/touch's touch holding page (a page number): the first of its chunk's that holds
// it, as the engine finds it (stacks_touch_at); its index in the flat array, or -1.
function touchAt(page) {
	const t = view.touch.touches, cp = view.touch.chunk_pages;
	for (let i = touchFrom(page - page % cp); i < t.length / 5 && t[i * 5] <= page; i++)
		if (page < t[i * 5] + t[i * 5 + 1])
			return i * 5;
	return -1;
}

// The index (in fives) of /api/touch's first touch from page on.
function touchFrom(page) {
	const t = view.touch.touches;
	let lo = 0, hi = t.length / 5;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (t[mid * 5] < page)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

function touchStackPx(k) {
	return k < 0 ? TOUCH_NONE_PX : k < TOUCH_PX.length ? TOUCH_PX[k] : TOUCH_OTHER_PX;
}

// The resident pages of m in [a, b) (offsets) by first toucher, in order: fn(p, end, key)
// for each piece, key the stack's place in /api/touch's stacks or -1 (none known).
function touchPieces(m, a, b, fn) {
	const runs = m.runs, t = view.touch ? view.touch.touches : [];
	for (let i = runsIndex(runs, a); i < runs.length / 3 && runs[i * 3] < b; i++) {
		if (runs[i * 3 + 2] !== 1)
			continue;
		const e = Math.min(b, runs[i * 3] + runs[i * 3 + 1]);
		for (let p = Math.max(a, runs[i * 3]); p < e;) {
			const ti = view.touch ? touchAt(m.start + p) : -1;
			const next = ti < 0 && view.touch ? touchFrom(m.start + p + 1) : t.length / 5;
			// to the touch's end, or (none known) to the next touch's start
			const end = ti >= 0 ? Math.min(e, t[ti] + t[ti + 1] - m.start)
				: next < t.length / 5 ? Math.min(e, t[next * 5] - m.start) : e;
			fn(p, end, ti < 0 ? -1 : t[ti + 2]);
			p = end;
		}
	}
}

// The "who touched" layer's cells [c0, c0 + n) of m: not resident dark, else the stack that
// first touched most of the cell's resident pages (the one with more pages in all on a
// tie), unattributed pages counting as one more "stack".
function touchCells(m, c0, n, ppc, out) {
	const pages = m.end - m.start;
	out.fill(STATE_PX[0], 0, n);
	if (ppc === 1) {		// a page a cell: each piece its colour
		touchPieces(m, c0, Math.min(pages, c0 + n), (p, end, key) =>
			out.fill(touchStackPx(key), p - c0, end - c0));
		return;
	}
	const by = new Map();		// the cell's resident pages by stack
	let cell = -1;
	const settle = () => {		// the cell's colour once its pieces are in
		let best = null, most = 0;
		for (const [key, c] of by)
			if (c > most || (c === most && key >= 0 && (best < 0 || key < best))) {
				best = key;
				most = c;
			}
		if (best !== null)
			out[cell - c0] = touchStackPx(best);
		by.clear();
	};
	touchPieces(m, c0 * ppc, Math.min(pages, (c0 + n) * ppc), (p, end, key) => {
		for (; p < end;) {
			const k = Math.floor(p / ppc), e = Math.min(end, (k + 1) * ppc);
			if (k !== cell) {
				if (cell >= 0)
					settle();
				cell = k;
			}
			by.set(key, (by.get(key) || 0) + e - p);
			p = e;
		}
	});
	if (cell >= 0)
		settle();
}

function mappingCells(m, c0, c1, ppc, layer, out) {
	const pages = m.end - m.start, a = c0 * ppc, b = Math.min(pages, c1 * ppc);
	const runs = m.runs, n = c1 - c0, heat = layer === 'heat';
	const file = !!view.file, palette = file ? FILE_PX : STATE_PX;
	if (layer === 'touch' && !file) {
		touchCells(m, c0, n, ppc, out);
		return;
	}
	if (ppc === 1 && layer === 'res') {	// a page a cell: fill runs, the rest not resident
		out.fill(palette[0], 0, n);
		for (let i = runsIndex(runs, a); i < runs.length / 3 && runs[i * 3] < b; i++) {
			const s = Math.max(a, runs[i * 3]), e = Math.min(b, runs[i * 3] + runs[i * 3 + 1]);
			out.fill(palette[runs[i * 3 + 2]], s - a, e - a);
		}
		return;
	}
	const acc = new Float64Array(n * 3);
	for (let i = runsIndex(runs, a); i < runs.length / 3 && runs[i * 3] < b; i++) {
		const s = Math.max(a, runs[i * 3]), e = Math.min(b, runs[i * 3] + runs[i * 3 + 1]);
		const st = runs[i * 3 + 2] - 1;
		for (let p = s; p < e;) {
			const cell = Math.floor(p / ppc), end = Math.min((cell + 1) * ppc, e);
			acc[(cell - c0) * 3 + st] += end - p;
			p = end;
		}
	}
	let cls = null;
	if (layer === 'share') {
		cls = new Float64Array(n * 4);
		shareCounts(m, a, b, c0, ppc, cls);
	}
	for (let k = 0; k < n; k++) {
		const cells = Math.min(ppc, pages - (c0 + k) * ppc);
		if (file) {
			out[k] = filePx(m, (c0 + k) * ppc, acc[k * 3], acc[k * 3 + 1], acc[k * 3 + 2],
				cells, heat);
			continue;
		}
		out[k] = heat ? heatPx(heatOf(m, (c0 + k) * ppc), acc[k * 3] > 0)
			: cls ? sharePx(acc[k * 3], cls, k)
				: countsPx(acc[k * 3], acc[k * 3 + 1], acc[k * 3 + 2], cells);
	}
}

// Rows [r0, r1) of the picture into u32 (an ImageData's pixels, w wide, row r0 at its top).
function renderRows(u32, w, r0, r1) {
	const cp = cellPx(), ppc = pagesPerCell(), cols = view.cols;
	const layer = document.getElementById('layer').value;
	u32.fill(BG_PX);
	const c0 = r0 * cols, c1 = Math.min(view.cells, r1 * cols);
	const colours = new Uint32Array(cols);
	for (let mi = Math.max(0, upperBound(view.first, c0) - 1); mi < view.order.length &&
		view.first[mi] < c1; mi++) {
		const m = view.maps.get(view.order[mi]);
		const mc = Math.ceil((m.end - m.start) / ppc);
		// cell by cell along the rows this mapping covers, a row's piece at a time
		for (let c = Math.max(c0, view.first[mi]); c < Math.min(c1, view.first[mi] + mc);) {
			const row = Math.floor(c / cols), rowEnd = Math.min((row + 1) * cols,
				view.first[mi] + mc, c1);
			const k0 = c - view.first[mi], n = rowEnd - c;
			mappingCells(m, k0, k0 + n, ppc, layer, colours);
			const y0 = (row - r0) * cp, x0 = (c % cols) * cp;
			for (let y = y0; y < y0 + cp; y++) {
				const base = y * w + x0;
				if (cp === 1) {
					u32.set(colours.subarray(0, n), base);
				} else {
					for (let k = 0; k < n; k++)
						u32.fill(colours[k], base + k * cp, base + (k + 1) * cp);
				}
			}
			c = rowEnd;
		}
	}
}

function draw() {
	const t0 = performance.now();
	const canvas = document.getElementById('map'), ctx = canvas.getContext('2d');
	const w = canvas.width, h = canvas.height, cp = cellPx();
	const whole = view.rows * cp;
	const key = [view.version, view.zoom, w, document.getElementById('layer').value].join();
	if (whole * w <= CACHE_MAX_PX && whole <= CACHE_MAX_H) {
		if (view.cacheKey !== key) {	// the whole picture, once per change
			const off = document.createElement('canvas');
			off.width = w;
			off.height = Math.max(1, whole);
			const img = new ImageData(w, off.height);
			renderRows(new Uint32Array(img.data.buffer), w, 0, view.rows);
			off.getContext('2d').putImageData(img, 0, 0);
			view.cache = off;
			view.cacheKey = key;
		}
		ctx.fillStyle = `rgb(${BG_RGB.join(',')})`;
		ctx.fillRect(0, 0, w, h);
		const sh = Math.min(h, whole - view.top * cp);
		if (sh > 0)
			ctx.drawImage(view.cache, 0, view.top * cp, w, sh, 0, 0, w, sh);
	} else {			// too big to keep: the rows in view only
		view.cache = null;
		view.cacheKey = '';
		const img = ctx.createImageData(w, h);
		renderRows(new Uint32Array(img.data.buffer), w, view.top, view.top + Math.ceil(h / cp));
		ctx.putImageData(img, 0, 0);
	}
	view.dirty = false;
	const mv = window.mevitop, ms = performance.now() - t0;
	if (!mv.firstDraw && view.order.length)	// ms from the page's start: its first paint
		mv.firstDraw = performance.now();
	mv.draws++;
	mv.drawMs.push(ms);
	if (mv.drawMs.length > 240)
		mv.drawMs.shift();
	const ppc = pagesPerCell();
	document.getElementById('zoom').textContent = `${ppc > 1 ? ppc + ' pages a pixel'
		: cp + ' px a page'}, rows ${view.top}-${Math.min(view.rows, view.top + visibleRows())} of ${view.rows}`;
}

// The mapping index and page range of cell c, or null past the last.
function cellInfo(c) {
	if (c < 0 || c >= view.cells)
		return null;
	const mi = upperBound(view.first, c) - 1, ppc = pagesPerCell();
	const m = view.maps.get(view.order[mi]);
	const a = (c - view.first[mi]) * ppc;
	return { mi, m, a, b: Math.min(a + ppc, m.end - m.start) };
}

// What is under canvas pixel (x, y).
function cellAt(x, y) {
	const cp = cellPx(), col = Math.floor(x / cp);
	if (x < 0 || y < 0 || col >= view.cols)
		return null;
	return cellInfo((view.top + Math.floor(y / cp)) * view.cols + col);
}

// The cell holding page (a page number), or -1.
function cellOfPage(page) {
	const mi = view.order.findIndex((s) => page >= s && page < view.maps.get(s).end);
	return mi < 0 ? -1 : view.first[mi] + Math.floor((page - view.order[mi]) / pagesPerCell());
}

// A file's cell as the terminal's file heatmap's cursor line says it.
function describeFile(cell) {
	const { m, a, b } = cell, f = view.file;
	const acc = [0, 0, 0];
	for (let i = runsIndex(m.runs, a); i < m.runs.length / 3 && m.runs[i * 3] < b; i++) {
		const s = Math.max(a, m.runs[i * 3]), e = Math.min(b, m.runs[i * 3] + m.runs[i * 3 + 1]);
		if (e > s)
			acc[m.runs[i * 3 + 2] - 1] += e - s;
	}
	let t;
	if (b - a === 1) {
		const st = acc[2] ? 3 : acc[1] ? 2 : acc[0] ? 1 : 0;
		t = `page ${a}: ${FILE_STATE[st]}`;
	} else {
		const c = acc[0] + acc[1] + acc[2];
		t = `pages ${a}-${b - 1}: ${c} cached, ${acc[1]} dirty, ${acc[2]} writeback, ` +
			`${b - a - c} not cached`;
	}
	const add = heatOf(m, a), ev = evictOf(m, a);
	if (add || ev)
		t += ` \u00b7 heat: adds ${add ? '\u2265' + HEAT_LEVELS[add - 1] : '0'}, evictions ` +
			`${ev ? '\u2265' + HEAT_LEVELS[ev - 1] : '0'} pages a block (decaying)`;
	if (f.mapped_by.length)
		t += ' \u00b7 mapped by ' + f.mapped_by.map((p) => `${p.pid} ${p.comm}`).join(', ');
	return t + ' \u00b7 ' + f.name;
}

// Which other watched processes map a shared page (/api/who's answer), as the terminal's
// cursor line names them (user/ui/ui_heatmap_draw.c readout_who).
function whoText(w) {
	const cut = w.cut ? ' +?' : '';
	if (!w.n)
		return w.cut ? ' (no other watched process found)' : ' (no other watched process)';
	if (w.n === 1)
		return ` (also pid ${w.pids[0]} ${w.comm}${cut})`;
	return ` (also pids ${w.pids.join(' ')}${w.n > w.pids.length ? ' +' + (w.n - w.pids.length)
		: ''}${cut})`;
}

// The sharing class of page off of m (1 by 2, 2 by 3-8, 3 by 9+), 0: private or unknown.
function shareClassOf(m, off) {
	const sh = m.share || [];
	for (let i = 0; i < sh.length; i += 3)
		if (off >= sh[i] && off < sh[i] + sh[i + 1])
			return sh[i + 2];
	return 0;
}

// The first touch at flat index ti of /api/touch's answer, as the terminal's cursor line
// says it (user/ui/ui_heatmap.c fill_stacks), its age going on from the answer's.
function touchText(ti) {
	const r = view.touch, t = r.touches;
	const ago = (t[ti + 4] + performance.now() - r.got) / 1000;
	return `first touch: tid ${t[ti + 3]}, ${ago.toFixed(1)} s ago, ${r.stacks[t[ti + 2]].frames}`;
}

// --stacks' answer (/api/touch): kept for the layer and the hover.
function applyTouch(r) {
	r.got = performance.now();
	const key = JSON.stringify([r.stacks.map((s) => s.frames), r.touches.filter((x, i) => i % 5 !== 4)]);
	view.touch = r;
	if (key !== view.touchKey) {	// only another picture redraws it
		view.touchKey = key;
		view.version++;
	}
}

// The cursor line's text for a cell, as the terminal's says it; who: /api/who's answer
// for a shared page, once it has come.
function describe(cell, who) {
	const { m, a, b } = cell;
	if (view.file)
		return describeFile(cell);
	const where = `${'0x' + ((m.start + a) * PAGE).toString(16)} ${m.perms} ${m.path || `[${m.kind}]`}`;
	const acc = [0, 0, 0];
	const runs = m.runs;
	for (let i = runsIndex(runs, a); i < runs.length / 3 && runs[i * 3] < b; i++) {
		const s = Math.max(a, runs[i * 3]), e = Math.min(b, runs[i * 3] + runs[i * 3 + 1]);
		if (e > s)
			acc[runs[i * 3 + 2] - 1] += e - s;
	}
	const heat = heatOf(m, a);
	let hs = heat ? `, heat: at least ${HEAT_LEVELS[heat - 1]} faults (decaying)` : '';
	if (m.share && acc[0]) {	// --sharing: who else maps them, as the cursor line says
		const cls = [0, 0, 0, 0];
		for (let i = 0; i < m.share.length; i += 3)
			cls[m.share[i + 2]] += Math.max(0, Math.min(b, m.share[i] + m.share[i + 1]) -
				Math.max(a, m.share[i]));
		const by = ['', 'by 2', 'by 3-8', 'by 9+'];
		const shared = cls[1] + cls[2] + cls[3];
		hs += b - a === 1 ? (shared ? (who && who.count >= 2 ? `, mapped by ${who.count}`
			: `, mapped ${by[cls.findIndex((x, i) => i && x)]}`) +
			(who && who.known ? whoText(who) : '') : ', mapped once (private)')
			: `, ${acc[0] - shared} private, ${cls[1]} by 2, ${cls[2]} by 3-8, ${cls[3]} by 9+`;
	}
	let tail = `${hs}  (${m.kind}, ${m.tracker})`;
	const ti = view.touch ? touchAt(m.start + a) : -1;
	if (ti >= 0)			// --stacks: who first touched it, last as the terminal's
		tail += ' \u00b7 ' + touchText(ti);
	if (b - a === 1) {
		const st = acc[0] ? 1 : acc[1] ? 2 : acc[2] ? 3 : 0;
		return `${where}  page ${a + 1} of ${m.end - m.start}: ${STATE[st]}${tail}`;
	}
	return `${where}  pages ${a + 1}-${b} of ${m.end - m.start}: ${acc[0]} resident, ` +
		`${acc[1]} swapped, ${acc[2]} untracked${tail}`;
}

// Zoom to z keeping the page under canvas row y (the middle by default) where it is.
function setZoom(z, y) {
	const cp = cellPx(), anchorY = y === undefined ? document.getElementById('map').height / 2 : y;
	const info = cellInfo((view.top + Math.floor(anchorY / cp)) * view.cols);
	view.zoom = Math.max(-40, Math.min(5, z));
	layout();
	if (info) {
		const c = cellOfPage(view.order[info.mi] + info.a);
		view.top = Math.floor(c / view.cols) - Math.floor(anchorY / cellPx());
		clampTop();
	}
	view.dirty = true;
}

// A file's answer: its pages are one mapping of the picture, from page 0 to its size.
function applyFile(r) {
	const runs = r.runs, heat = [], evict = [];
	let end = Math.ceil(r.size / PAGE);
	for (let i = 0, at = 0; i < runs.length; i += 3) {
		at += runs[i];
		runs[i] = at;
		at += runs[i + 1];
		end = Math.max(end, at);	// pages past the size can be cached a moment
	}
	for (let i = 0; i < r.heat.length; i += 3) {
		if (r.heat[i + 1])
			heat.push(r.heat[i], r.heat[i + 1]);
		if (r.heat[i + 2])
			evict.push(r.heat[i], r.heat[i + 2]);
	}
	const key = JSON.stringify([end, runs, r.heat]);
	view.file = r;
	if (key !== view.fileKey) {
		view.fileKey = key;
		view.maps = new Map([[0, { start: 0, end: Math.max(end, 1), runs, heat, evict,
			perms: '', path: r.name, kind: 'file', tracker: '' }]]);
		view.order = [0];
		view.version++;
		if (!view.fitted)
			fit();
		else
			layout();
	}
}

// A poll's answer: changed mappings replace theirs, the layout drops the gone ones.
function applyProcess(r) {
	if (r.epoch !== view.epoch) {	// another server (restarted): start over
		view.epoch = r.epoch;
		view.maps.clear();
	}
	for (const m of r.mappings) {
		// [gap, length, state] as sent (out/web_json.c) to [offset from m's start, ...]
		const runs = m.runs;
		for (let i = 0, at = 0; i < runs.length; i += 3) {
			at += runs[i];
			runs[i] = at;
			at += runs[i + 1];
		}
		view.maps.set(m.start, m);
	}
	const keep = new Set(r.layout);
	for (const k of view.maps.keys())
		if (!keep.has(k))
			view.maps.delete(k);
	const changed = r.mappings.length || r.layout.length !== view.order.length;
	view.order = r.layout;
	view.full = !r.layout.every((s) => view.maps.has(s));	// a gap: ask for everything
	view.gen = view.full ? 0 : r.gen;
	if (changed)
		view.version++;
	if (!view.fitted)
		fit();
	else if (changed)
		layout();
}
