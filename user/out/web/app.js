// SPDX-License-Identifier: GPL-2.0
// mevitop's web view (doc/web.md): the process list and one process's heatmap, drawn on a
// canvas from /api/process's page runs.  Live, what changed comes as server-sent events
// (/api/events, one after each snapshot that changed something); a replay, or a page whose
// stream failed, polls once a second instead.  Plain JavaScript, no framework, nothing
// fetched but from mevitop itself.
'use strict';

const POLL_MS = 1000;
const BUSY_RETRY_MS = 100;

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const TOKEN = query.get('token');
const FORCE_POLL = query.get('poll') === '1';	// ?poll=1: never the stream (tests, bench)
let info = { replay: false, span: 0 };
let at = 0;				// a replay's time, seconds from its start

function apiUrl(path, params) {
	const q = new URLSearchParams(params || {});
	if (TOKEN)
		q.set('token', TOKEN);
	if (info.replay)
		q.set('at', at.toFixed(6));
	return path + '?' + q;
}

function api(path, params) {
	return fetch(apiUrl(path, params)).then((r) => {
		if (!r.ok)
			throw Object.assign(new Error(`${path}: ${r.status} ${r.statusText}`),
				{ status: r.status });
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
	return key === 'comm' ? p.comm : p[key] === undefined ? -1 : p[key];
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
	// --sharing: USS and PSS columns once any process has them ('-' before its first pass)
	const sharing = list.procs.some((p) => 'uss' in p);
	for (const th of document.querySelectorAll('th[data-key=uss], th[data-key=pss]'))
		th.hidden = !sharing;
	const share = (p, k) => (k in p ? bytes(p[k]) : '-');
	for (const [p, depth] of rows) {
		const tr = document.createElement('tr');
		tr.dataset.pid = p.pid;
		if (p.state === 'exited')
			tr.className = 'exited';
		const cells = [p.pid, p.ppid, (depth ? '  '.repeat(depth - 1) + '└ ' : '') + p.comm,
			bytes(p.resident), bytes(p.swapped), bytes(p.mapped),
			...(sharing ? [share(p, 'uss'), share(p, 'pss')] : []), p.mappings,
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
	for (const th of document.querySelectorAll('#procs th'))
		th.className = (th.dataset.key === list.key ? 'sorted ' : '') +
			(th.dataset.key === 'comm' ? '' : 'num');

	window.mevitop.listOrder = rows.map(([p]) => p.pid);
}

const showTime = (r) => status(`${r.mode} mode, ${new Date(r.time * 1000).toLocaleTimeString()}`);

function showList(r) {
	list.procs = r.processes;
	list.seq = r.seq;	// a stream's whole list: its diffs follow from it (a poll: none)
	listShown(r);
}

function listShown(r) {
	renderList();
	showTime(r);
	window.mevitop.listFrames++;
	window.mevitop.listTime = r.monotonic;
}

// A list stream's diff (doc/web.md): the rows new or sent whole, the changed fields of the
// others, the pids gone, from the event seq `base`.  false: it is not from what the page
// has (start the stream over).
function applyListDiff(r) {
	if (list.seq === undefined || r.base !== list.seq)
		return false;
	const byPid = new Map(list.procs.map((p) => [p.pid, p]));
	const mv = window.mevitop;
	for (const pid of r.removed)
		mv.listGone += byPid.delete(pid);
	for (const p of r.changed) {
		mv.listChanged += byPid.has(p.pid);
		byPid.set(p.pid, p);
	}
	for (const u of r.updated || []) {	// only the fields that changed
		const p = byPid.get(u.pid);
		if (!p)
			return false;
		mv.listChanged++;
		mv.listUpdated++;
		byPid.set(u.pid, Object.assign({}, p, u));
	}
	list.procs = [...byPid.values()].sort((a, b) => a.pid - b.pid);
	list.seq = r.seq;
	if (list.procs.length !== r.rows)
		return false;
	listShown(r);
	return true;
}

const pollList = () => api('/api/list').then(showList);

// ---- the files list (the terminal's Files view) ----------------------------------------

const files = { key: 'cached', desc: true, gen: 0 };
const FILE_TEXT = ['kind', 'name'];	// the columns that are not numbers (the last two)

// The server sorts and filters (a machine caches 100,000 files; the page gets the first
// thousand of the order asked for), so each column's order is the whole table's.
function pollFiles() {
	return api('/api/files', { sort: files.key, desc: files.desc ? 1 : 0,
		filter: $('ffilter').value }).then(showFiles);
}

function showFiles(r) {
	const body = document.createElement('tbody');
	for (const f of r.rows) {
		const tr = document.createElement('tr');
		tr.dataset.file = `${f.dev}:${f.ino}`;
		const cells = [bytes(f.cached), bytes(f.dirty), bytes(f.writeback), bytes(f.evicted),
			f.adds.toFixed(0), f.evicts.toFixed(0), bytes(f.size / PAGE), f.mapped, f.kind,
			f.name];
		cells.forEach((v, i) => {
			const td = document.createElement('td');
			td.textContent = v;
			if (i < cells.length - FILE_TEXT.length)
				td.className = 'num';
			tr.appendChild(td);
		});
		tr.onclick = () => { location.hash = `file=${f.dev}:${f.ino}`; };
		body.appendChild(tr);
	}
	$('files').replaceChild(body, $('files').tBodies[0]);
	$('fcount').textContent = r.have ? `${r.rows.length} of ${r.matched} files shown (${r.files} cached)`
		: info.replay ? 'a recording carries no page cache files' : 'the page cache is not watched (--no-files)';
	for (const th of document.querySelectorAll('#files th'))
		th.className = (th.dataset.key === files.key ? 'sorted ' : '') +
			(FILE_TEXT.includes(th.dataset.key) ? '' : 'num');
	const mv = window.mevitop;
	mv.fileRows = r.rows;
	mv.filesFrames++;
}

// ---- one file's heatmap ---------------------------------------------------------------

function pollFile() {
	const f = view.fileKeyOf;
	return api('/api/file', { dev: f[0], ino: f[1] }).then((r) => {
		if (view.fileKeyOf !== f)
			return;
		if (!r.found || !r.have_sets) {	// the engine keeps its sets from the next refresh
			$('title').textContent = r.found ? `file ${r.name}: waiting for its pages (the next refresh)`
				: 'this file has no pages in the page cache (or the engine does not watch it)';
			if (!r.found)
				applyFile(Object.assign(r, { runs: [], heat: [], size: 0, name: '' }));
			return;
		}
		applyFile(r);
		$('title').textContent = `file ${r.name}: ${bytes(r.size / PAGE)}, ${bytes(r.cached)} cached ` +
			`(${r.size ? Math.round(100 * r.cached * PAGE / r.size) : 0}%), ${bytes(r.dirty)} dirty, ` +
			`${bytes(r.writeback)} writeback, adds ${r.adds.toFixed(0)}/s, evictions ` +
			`${r.evicts.toFixed(0)}/s, mapped by ${r.mapped} (${r.kind})`;
		const mv = window.mevitop;
		mv.frames++;
		mv.ready = true;
	});
}

// ---- the heatmap ----------------------------------------------------------------------

// --sharing, live: the hovered shared page's other watched mappers, which the server reads
// when asked (/api/who), as the terminal's cursor line has the engine read them.  One
// question a page and a version of the data; the hover is written again when it answers.
const who = { key: '', answer: null, cell: null };

function whoFor(cell) {
	const { m, a, b } = cell, page = m.start + a;
	if (view.file || info.replay || b - a !== 1 || !shareClassOf(m, a))
		return null;
	const key = `${view.pid}:${page}:${view.version}`;
	if (who.key !== key) {
		who.key = key;
		who.answer = null;
		api('/api/who', { pid: view.pid, page }).then((r) => {
			if (who.key !== key)
				return;
			who.answer = r;
			window.mevitop.whoAnswers++;
			if (who.cell && who.cell.m === m && who.cell.a === a)
				$('hover').textContent = describe(who.cell, r);
		}).catch(() => {});	// gone, or the engine busy: the hover without it
	}
	return who.answer;
}

function showHover(x, y) {
	const canvas = $('map'), rect = canvas.getBoundingClientRect();
	const cell = cellAt(Math.floor(x * canvas.width / rect.width),
		Math.floor(y * canvas.height / rect.height));
	who.cell = cell;
	$('hover').textContent = cell ? describe(cell, whoFor(cell)) : '\u00a0';
}

// --stacks: who first touched the process's pages (/api/touch), for the "who touched"
// layer and the hover; asked again when the data changed and every 2 s (a stack can come
// a tick after its pages), one question at a time; 404 (no --stacks): not again.
const touch = { pid: -1, version: -1, got: 0, busy: false, none: false };
const TOUCH_EVERY_MS = 2000;

function setTouchLayer(ok) {
	$('touch-layer').disabled = !ok;
	$('touch-layer').textContent = ok ? 'who touched' : 'who touched (needs --stacks)';
}

function pollTouch() {
	if (!view.on || view.file || view.fileKeyOf || touch.busy)
		return;
	if (touch.pid !== view.pid) {
		Object.assign(touch, { pid: view.pid, version: -1, got: 0, none: false });
		view.touch = null;
		view.touchKey = '';
		setTouchLayer(false);
	}
	if (touch.none || (touch.version === view.version &&
		performance.now() - touch.got < TOUCH_EVERY_MS))
		return;
	const pid = view.pid;
	touch.busy = true;
	api('/api/touch', { pid }).then((r) => {
		if (pid !== view.pid)
			return;
		applyTouch(r);
		touch.version = view.version;
		touch.got = performance.now();
		setTouchLayer(true);
		if ($('layer').value === 'touch')
			legend();
		window.mevitop.touchFrames++;
	}).catch((err) => {
		touch.got = performance.now();
		if (err.status === 404 && pid === view.pid) {
			touch.none = true;
			if ($('layer').value === 'touch') {	// a process without: back to residency
				$('layer').value = 'res';
				view.dirty = true;
				legend();
			}
		}
	}).finally(() => { touch.busy = false; });
}

function showProcess(r) {
	applyProcess(r);
	pollTouch();
	// The sharing layer needs --sharing (a process a pass has read has uss and pss).
	$('share-layer').disabled = !('uss' in r);
	$('share-layer').hidden = false;
	$('share-layer').textContent = 'uss' in r ? 'sharing' : 'sharing (needs --sharing)';
	$('title').textContent = `pid ${r.pid} ${r.comm}: ${bytes(r.resident)} resident, ` +
		`${bytes(r.swapped)} swapped, ${bytes(r.mapped)} mapped, ${r.layout.length} mappings` +
		('uss' in r ? `, USS ${bytes(r.uss)}, PSS ${bytes(r.pss)}` : '');
	const mv = window.mevitop;
	mv.frames++;
	mv.lastSent = r.mappings.length;
	mv.ready = true;
}

function pollProcess() {
	const pid = view.pid, t = window.mevitop.times;
	t.asked = t.asked || performance.now();
	return api('/api/process', { pid, since: view.gen }).then((r) => {
		t.answered = t.answered || performance.now();
		if (pid === view.pid)
			showProcess(r);
		showTime(r);
	});
}

function resize() {
	const canvas = $('map');
	const rect = canvas.getBoundingClientRect();
	const w = Math.max(1, Math.floor(rect.width)), h = Math.max(1, Math.floor(rect.height));
	if (w === canvas.width && h === canvas.height)
		return;			// setting either clears the canvas
	canvas.width = w;
	canvas.height = h;
	layout();
}

function wireHeatmap() {
	const canvas = $('map');
	let drag = null;
	canvas.addEventListener('mousedown', (e) => {
		drag = { y: e.offsetY, top: view.top };
		e.preventDefault();
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
		if (!view.on || e.target.tagName === 'INPUT')
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
			location.hash = view.file ? 'files' : '';
		}
	});
	// The bar above can wrap when the title changes: follow the canvas' own size, so one
	// canvas pixel stays one CSS pixel (and the mouse's offsets are the canvas' pixels).
	new ResizeObserver(() => { if (view.on) resize(); }).observe(canvas);
	const frame = () => {
		pollTouch();
		if (view.on && view.dirty)
			draw();
		requestAnimationFrame(frame);
	};
	requestAnimationFrame(frame);
}

function swatch(rgb, text) {
	return `<span class="sw" style="background:rgb(${rgb.join(',')})"></span>${text}`;
}

function legend() {
	const layer = $('layer').value;
	if (view.fileKeyOf) {
		$('legend').innerHTML = layer === 'heat'
			? HEAT_LEVELS.map((l, i) => swatch(HEAT_RGB[i], `≥${l}`)).join('') +
				' adds/block, ' + swatch(EVICT_RGB, 'evictions') + ' (decaying)'
			: FILE_STATE.map((s, i) => swatch(FILE_RGB[i], s)).join('');
		return;
	}
	$('legend').innerHTML = layer === 'heat'
		? HEAT_LEVELS.map((l, i) => swatch(HEAT_RGB[i], `≥${l}`)).join('') + ' faults/block (decaying)'
		: layer === 'share'
			? swatch(STATE_RGB[0], 'not resident') + swatch(STATE_RGB[1], 'private') +
				['by 2', 'by 3-8', 'by 9+'].map((t, i) => swatch(HEAT_RGB[i + 1], t)).join('')
			: layer === 'touch' ? touchLegend()
			: STATE.map((s, i) => swatch(STATE_RGB[i], s)).join('') + swatch(MIXED_RGB, 'mixed');
}

// The "who touched" layer's key: each colour's stack (its innermost function) and its
// resident pages, as the terminal's 'w' pane lists them; the rest alike, unattributed.
function touchLegend() {
	const st = view.touch ? view.touch.stacks : [];
	const esc = (t) => t.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
	return swatch(STATE_RGB[0], 'not resident') + swatch(TOUCH_NONE, 'no stack') +
		st.slice(0, TOUCH_RGB.length).map((s, i) => swatch(TOUCH_RGB[i],
			esc(`${s.frames.split(' \u2190 ')[0]} (${bytes(s.pages)})`))).join('') +
		(st.length > TOUCH_RGB.length ? swatch(TOUCH_OTHER, `${st.length - TOUCH_RGB.length} more`) : '');
}

// ---- the page -------------------------------------------------------------------------

let timer = 0;
let stream = null;			// the EventSource while the page is pushed to
let streamFailed = false;		// refused or broken on this view: poll

function setTransport(how) {
	window.mevitop.transport = how;
	document.body.dataset.transport = how;
}

function closeStream() {
	if (stream)
		stream.close();
	stream = null;
}

// Live: the server pushes what changed after each snapshot (/api/events), each event what
// a poll would have brought.  false: poll instead (a replay, ?poll=1, no EventSource, or
// the stream was refused: 503 past the server's bound, or broke).
function openStream() {
	if (info.replay || FORCE_POLL || !window.EventSource || streamFailed || view.fileKeyOf ||
	    view.filesList)
		return false;	// the page cache's answers are polled (one a refresh at most)
	const pid = view.pid, mv = window.mevitop;
	const es = new EventSource(apiUrl('/api/events', pid ? { pid } : {}));
	stream = es;
	mv.times.asked = mv.times.asked || performance.now();
	const each = (show) => (e) => {
		if (stream !== es)
			return;
		const r = JSON.parse(e.data);
		mv.times.answered = mv.times.answered || performance.now();
		mv.streamEvents++;
		setTransport('stream');
		show(r);
		showTime(r);
	};
	es.addEventListener('list', each(showList));
	es.addEventListener('listdiff', each((r) => {
		window.mevitop.listDiffs++;
		if (!applyListDiff(r)) {	// the stream's first event is the whole list
			window.mevitop.listResyncs++;
			list.seq = undefined;
			closeStream();
			openStream();
		}
	}));
	es.addEventListener('process', each((r) => {
		showProcess(r);
		if (view.full) {	// a gap the stream cannot fill: start it over
			closeStream();
			openStream();
		}
	}));
	es.addEventListener('gone', () => {	// the process went: the poll says so
		closeStream();
		streamFailed = true;
		poll();
	});
	es.onerror = () => {
		if (stream !== es)
			return;
		if (es.readyState === EventSource.CLOSED) {	// refused: poll instead
			closeStream();
			streamFailed = true;
			poll();
		} else {					// the browser reconnects by itself
			status('stream lost, reconnecting', true);
		}
	};
	return true;
}

function route() {
	window.mevitop.times.route = window.mevitop.times.route || performance.now();
	const m = /^#pid=(\d+)$/.exec(location.hash);
	const fm = /^#file=(\d+):(\d+)$/.exec(location.hash);
	clearTimeout(timer);
	view.filesList = location.hash === '#files';
	view.on = !!(m || fm);
	$('list').hidden = view.on || view.filesList;
	$('filelist').hidden = !view.filesList;
	$('heat').hidden = !view.on;
	$('back').textContent = fm ? '\u2190 files' : '\u2190 processes';
	$('share-layer').hidden = !!fm;
	$('touch-layer').hidden = !!fm;
	if (($('layer').value === 'share' || $('layer').value === 'touch') && fm)
		$('layer').value = 'res';
	if (view.on) {
		Object.assign(view, { pid: m ? +m[1] : 0, file: null, fileKey: '',
			fileKeyOf: fm ? [fm[1], fm[2]] : null, epoch: 0, gen: 0, maps: new Map(), order: [],
			first: [], cells: 0, rows: 0, fitted: false, top: 0, cache: null, cacheKey: "" });
		window.mevitop.ready = false;
		resize();
	} else {
		view.pid = 0;
		view.file = null;
		view.fileKeyOf = null;
	}
	legend();
	closeStream();
	streamFailed = false;
	if (!openStream())
		poll();
}

function poll() {
	clearTimeout(timer);
	if (stream)		// a poll scheduled before the stream opened
		return;
	setTransport('poll');
	let again = POLL_MS;
	(view.fileKeyOf ? pollFile() : view.pid ? pollProcess() : view.filesList ? pollFiles()
		: pollList())
		.catch((err) => {
			status(String(err.message || err), true);
			if (err.status === 503)	// the engine held its lock: ask again soon
				again = BUSY_RETRY_MS;
		})
		.finally(() => { timer = setTimeout(poll, again); });
}

// What the tests read (tests/integration/test_web.py): where a page is drawn, what the
// canvas holds there, and the state the data says.
window.mevitop = {
	ready: false, frames: 0, listFrames: 0, listDiffs: 0, listResyncs: 0, listGone: 0, listChanged: 0, listUpdated: 0, listTime: 0,
	listRows: () => list.procs, filesFrames: 0, fileRows: [], streamEvents: 0, transport: '', draws: 0, firstDraw: 0, times: {}, drawMs: [], lastSent: 0, listOrder: [], whoAnswers: 0, touchFrames: 0,
	// Where page addr is drawn: its cell's top-left canvas pixel, and the cell's size.
	pixelOf(addr) {
		const c = cellOfPage(Math.floor(addr / PAGE)), cp = cellPx();
		if (c < 0)
			return null;
		const r = Math.floor(c / view.cols) - view.top;
		return { x: (c % view.cols) * cp, y: r * cp, size: cp,
			inView: r >= 0 && r < visibleRows() };
	},
	// {page number: what its colour says} of every page drawn (one page a cell), read off
	// the canvas: its state, or with the sharing layer its class.
	canvasPages() {
		const canvas = $('map'), cp = cellPx(), out = {};
		if (view.dirty)		// a resize since the last frame clears the canvas
			draw();
		const share = $('layer').value === 'share', touched = $('layer').value === 'touch';
		const palette = share ? [STATE_RGB[0], STATE_RGB[1], ...HEAT_RGB.slice(1)]
			: touched ? [STATE_RGB[0], TOUCH_NONE, TOUCH_OTHER, ...TOUCH_RGB]
				: view.file ? FILE_RGB : STATE_RGB;
		const names = share ? ['not resident', 'private', '2', '3-8', '9+']
			: touched ? ['not resident', 'no stack', 'other', ...TOUCH_RGB.map((_, i) => 'stack ' + i)]
				: view.file ? FILE_STATE : STATE;
		const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
		for (let mi = 0; mi < view.order.length; mi++) {
			const m = view.maps.get(view.order[mi]);
			for (let k = 0; k < m.end - m.start; k++) {
				const c = view.first[mi] + k, r = Math.floor(c / view.cols) - view.top;
				if (r < 0 || (r + 1) * cp > canvas.height)
					continue;
				const o = (r * cp * canvas.width + (c % view.cols) * cp) * 4;
				const i = palette.findIndex((x) => x[0] === d[o] && x[1] === d[o + 1] &&
					x[2] === d[o + 2]);
				out[m.start + k] = i < 0 ? 'other' : names[i];
			}
		}
		return out;
	},
	hoverText: () => $('hover').textContent,
	filesDesc: () => files.desc,
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
	for (const th of document.querySelectorAll('#files th'))
		th.onclick = () => {
			files.desc = files.key === th.dataset.key ? !files.desc
				: !FILE_TEXT.includes(th.dataset.key);
			files.key = th.dataset.key;
			poll();
		};
	$('ffilter').oninput = () => poll();
	for (const th of document.querySelectorAll('#procs th'))
		th.onclick = () => {
			list.desc = list.key === th.dataset.key ? !list.desc : th.dataset.key !== 'comm' &&
				th.dataset.key !== 'pid' && th.dataset.key !== 'ppid';
			list.key = th.dataset.key;
			renderList();
		};
	$('filter').oninput = renderList;
	$('tree').onchange = renderList;
	$('back').onclick = (e) => { e.preventDefault(); location.hash = view.file || view.fileKeyOf ? 'files' : ''; };
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
